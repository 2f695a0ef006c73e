//! Run reports and their three renderings: a text table, a stable JSON schema, and JUnit XML.
//!
//! The JSON schema (documented in the README) is stable: fields are added,
//! never renamed or removed. JUnit output puts `name` on every element and
//! `tests`/`failures`/`errors`/`skipped`/`time` on every suite, which is what
//! the Jenkins/Surefire JUnit XSD requires.

use serde::{Deserialize, Serialize};

/// The one JUnit writer, the kit's (it renders the conformance kit's runs
/// too, and the kit builds without the harness).
pub use memoria_kit::junit::{JunitCase, JunitSuite, junit};

use super::gate::{Case, Gate, Status};

/// Pass or fail, as the JSON and text renderings spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The claim held.
    Pass,
    /// The claim did not hold.
    Fail,
}

/// One case's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseReport {
    /// Stable case id.
    pub id: String,
    /// What the harness did.
    pub desc: String,
    /// pass or fail.
    pub status: Verdict,
    /// What the claim required (failures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What was observed (failures only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// Wall time of the case, in milliseconds.
    pub time_ms: u64,
}

/// One gate's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateReport {
    /// Gate id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Spec sections.
    pub sections: Vec<String>,
    /// The requirement.
    pub requirement: String,
    /// fail if any selected case failed.
    pub status: Verdict,
    /// The selected cases.
    pub cases: Vec<CaseReport>,
}

/// Counts over a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Cases run.
    pub cases: usize,
    /// Cases passed.
    pub passed: usize,
    /// Cases failed.
    pub failed: usize,
}

/// A whole run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// The seed that drove every random choice.
    pub seed: u64,
    /// Gates with at least one selected case, in id order.
    pub gates: Vec<GateReport>,
    /// Counts.
    pub summary: Summary,
}

impl CaseReport {
    /// The report of `case`, which ended in `status` after `time_ms`
    /// milliseconds of wall time.
    pub fn of(case: &Case, status: Status, time_ms: u64) -> CaseReport {
        let (status, expected, actual) = match status {
            Status::Pass => (Verdict::Pass, None, None),
            Status::Fail(f) => (Verdict::Fail, Some(f.expected), Some(f.actual)),
        };
        CaseReport {
            id: case.id.to_string(),
            desc: case.desc.to_string(),
            status,
            expected,
            actual,
            time_ms,
        }
    }
}

impl GateReport {
    /// The report of `gate` over the `cases` that ran, in the order given:
    /// it fails if any of them failed.
    pub fn of(gate: &Gate, cases: Vec<CaseReport>) -> GateReport {
        let status = if cases.iter().any(|r| r.status == Verdict::Fail) {
            Verdict::Fail
        } else {
            Verdict::Pass
        };
        GateReport {
            id: gate.id.to_string(),
            title: gate.title.to_string(),
            sections: gate.sections.iter().map(|s| s.to_string()).collect(),
            requirement: gate.requirement.to_string(),
            status,
            cases,
        }
    }
}

impl RunReport {
    /// Builds the summary from the gates.
    pub fn new(seed: u64, gates: Vec<GateReport>) -> RunReport {
        let cases = gates.iter().map(|g| g.cases.len()).sum();
        let failed = gates
            .iter()
            .flat_map(|g| g.cases.iter())
            .filter(|c| c.status == Verdict::Fail)
            .count();
        RunReport {
            seed,
            gates,
            summary: Summary {
                cases,
                passed: cases - failed,
                failed,
            },
        }
    }

    /// The failed case ids.
    pub fn failed_ids(&self) -> Vec<&str> {
        self.gates
            .iter()
            .flat_map(|g| g.cases.iter())
            .filter(|c| c.status == Verdict::Fail)
            .map(|c| c.id.as_str())
            .collect()
    }

    /// The text table: one line per case, expected/actual under each failure.
    pub fn to_text(&self) -> String {
        let mut s = format!("seed {}\n", self.seed);
        for g in &self.gates {
            s.push_str(&format!(
                "\ngate {} · {} · {}\n",
                g.id,
                g.title,
                g.sections.join(" ")
            ));
            for c in &g.cases {
                let mark = match c.status {
                    Verdict::Pass => "pass",
                    Verdict::Fail => "FAIL",
                };
                s.push_str(&format!("  {mark}  {:<40} {:>6} ms\n", c.id, c.time_ms));
                if let (Some(e), Some(a)) = (&c.expected, &c.actual) {
                    s.push_str(&format!("        expected: {e}\n          actual: {a}\n"));
                }
            }
        }
        s.push_str(&format!(
            "\n{} passed, {} failed\n",
            self.summary.passed, self.summary.failed
        ));
        s
    }

    /// Pretty JSON in the stable schema.
    ///
    /// # Panics
    /// Never in practice: the report holds only strings and numbers.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serialises")
    }

    /// JUnit XML: `testsuites` › one `testsuite` per gate › one `testcase` per case.
    pub fn to_junit(&self, suite_name: &str) -> String {
        let suites: Vec<JunitSuite> = self
            .gates
            .iter()
            .map(|g| JunitSuite {
                name: format!("gate {}: {}", g.id, g.title),
                package: format!("gate{}", g.id),
                properties: vec![
                    ("sections".into(), g.sections.join(" ")),
                    ("requirement".into(), g.requirement.clone()),
                    ("seed".into(), self.seed.to_string()),
                ],
                cases: g
                    .cases
                    .iter()
                    .map(|c| JunitCase {
                        name: c.id.clone(),
                        classname: format!("gate{}", g.id),
                        time_ms: c.time_ms,
                        failure: match (&c.expected, &c.actual) {
                            (Some(e), Some(a)) => Some((
                                format!("expected: {e}"),
                                format!("expected: {e}\nactual: {a}"),
                            )),
                            _ => None,
                        },
                        skipped: None,
                    })
                    .collect(),
            })
            .collect();
        junit(suite_name, &suites)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunReport {
        RunReport::new(
            7,
            vec![GateReport {
                id: "1".into(),
                title: "T <&>".into(),
                sections: vec!["§10".into()],
                requirement: "R \"quoted\"".into(),
                status: Verdict::Fail,
                cases: vec![
                    CaseReport {
                        id: "1/a".into(),
                        desc: "d".into(),
                        status: Verdict::Pass,
                        expected: None,
                        actual: None,
                        time_ms: 12,
                    },
                    CaseReport {
                        id: "1/b".into(),
                        desc: "d".into(),
                        status: Verdict::Fail,
                        expected: Some("x ]]> y".into()),
                        actual: Some("z".into()),
                        time_ms: 1234,
                    },
                ],
            }],
        )
    }

    #[test]
    fn the_json_schema_is_stable() {
        let v: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
        expect_test::expect![[r#"
            {"gates":[{"cases":[{"desc":"d","id":"1/a","status":"pass","time_ms":12},{"actual":"z","desc":"d","expected":"x ]]> y","id":"1/b","status":"fail","time_ms":1234}],"id":"1","requirement":"R \"quoted\"","sections":["§10"],"status":"fail","title":"T <&>"}],"seed":7,"summary":{"cases":2,"failed":1,"passed":1}}"#]]
        .assert_eq(&v.to_string());
    }

    #[test]
    fn junit_names_every_element_and_escapes_what_it_must() {
        let x = sample().to_junit("memoria-harness");
        expect_test::expect![[r#"
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="memoria-harness" tests="2" failures="1" errors="0" time="1.246">
              <testsuite name="gate 1: T &lt;&amp;&gt;" tests="2" failures="1" errors="0" skipped="0" time="1.246" id="0" package="gate1">
                <properties>
                  <property name="sections" value="§10"/>
                  <property name="requirement" value="R &quot;quoted&quot;"/>
                  <property name="seed" value="7"/>
                </properties>
                <testcase name="1/a" classname="gate1" time="0.012"/>
                <testcase name="1/b" classname="gate1" time="1.234">
                  <failure message="expected: x ]]&gt; y" type="assertion"><![CDATA[expected: x ]]]]><![CDATA[> y
            actual: z]]></failure>
                </testcase>
              </testsuite>
            </testsuites>
        "#]]
        .assert_eq(&x);
    }
}
