//! Run reports and their three renderings: a text table, a stable JSON schema, and JUnit XML.
//!
//! The JSON schema (documented in the README) is stable: fields are added,
//! never renamed or removed. JUnit output puts `name` on every element and
//! `tests`/`failures`/`errors`/`skipped`/`time` on every suite, which is what
//! the Jenkins/Surefire JUnit XSD requires.

use std::io::Cursor;

use quick_xml::Writer;
use quick_xml::events::{BytesCData, BytesDecl, BytesEnd, BytesStart, Event};
use serde::{Deserialize, Serialize};

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

/// A JUnit suite to render.
#[derive(Debug, Clone)]
pub struct JunitSuite {
    /// Suite name.
    pub name: String,
    /// Package attribute.
    pub package: String,
    /// name/value properties.
    pub properties: Vec<(String, String)>,
    /// Cases.
    pub cases: Vec<JunitCase>,
}

/// A JUnit case to render.
#[derive(Debug, Clone)]
pub struct JunitCase {
    /// Case name (the stable id).
    pub name: String,
    /// Class name (the gate).
    pub classname: String,
    /// Wall time in milliseconds.
    pub time_ms: u64,
    /// (message, body) if it failed.
    pub failure: Option<(String, String)>,
    /// Reason if it was skipped.
    pub skipped: Option<String>,
}

fn secs(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Renders suites as JUnit XML, valid against the Jenkins/Surefire XSD.
///
/// # Panics
/// Never in practice: writing XML to memory cannot fail.
pub fn junit(name: &str, suites: &[JunitSuite]) -> String {
    let mut w = Writer::new_with_indent(Cursor::new(Vec::new()), b' ', 2);
    let tests: usize = suites.iter().map(|s| s.cases.len()).sum();
    let failures: usize = suites
        .iter()
        .flat_map(|s| s.cases.iter())
        .filter(|c| c.failure.is_some())
        .count();
    let total_ms: u64 = suites
        .iter()
        .flat_map(|s| s.cases.iter())
        .map(|c| c.time_ms)
        .sum();
    let ok = "writing XML to memory";
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
        .expect(ok);
    let mut root = BytesStart::new("testsuites");
    root.push_attribute(("name", name));
    root.push_attribute(("tests", tests.to_string().as_str()));
    root.push_attribute(("failures", failures.to_string().as_str()));
    root.push_attribute(("errors", "0"));
    root.push_attribute(("time", secs(total_ms).as_str()));
    w.write_event(Event::Start(root)).expect(ok);
    for (i, s) in suites.iter().enumerate() {
        let f = s.cases.iter().filter(|c| c.failure.is_some()).count();
        let sk = s.cases.iter().filter(|c| c.skipped.is_some()).count();
        let ms: u64 = s.cases.iter().map(|c| c.time_ms).sum();
        let mut e = BytesStart::new("testsuite");
        e.push_attribute(("name", s.name.as_str()));
        e.push_attribute(("tests", s.cases.len().to_string().as_str()));
        e.push_attribute(("failures", f.to_string().as_str()));
        e.push_attribute(("errors", "0"));
        e.push_attribute(("skipped", sk.to_string().as_str()));
        e.push_attribute(("time", secs(ms).as_str()));
        e.push_attribute(("id", i.to_string().as_str()));
        e.push_attribute(("package", s.package.as_str()));
        w.write_event(Event::Start(e)).expect(ok);
        w.write_event(Event::Start(BytesStart::new("properties")))
            .expect(ok);
        for (k, v) in &s.properties {
            let mut p = BytesStart::new("property");
            p.push_attribute(("name", k.as_str()));
            p.push_attribute(("value", v.as_str()));
            w.write_event(Event::Empty(p)).expect(ok);
        }
        w.write_event(Event::End(BytesEnd::new("properties")))
            .expect(ok);
        for c in &s.cases {
            let mut e = BytesStart::new("testcase");
            e.push_attribute(("name", c.name.as_str()));
            e.push_attribute(("classname", c.classname.as_str()));
            e.push_attribute(("time", secs(c.time_ms).as_str()));
            if c.failure.is_none() && c.skipped.is_none() {
                w.write_event(Event::Empty(e)).expect(ok);
                continue;
            }
            w.write_event(Event::Start(e)).expect(ok);
            if let Some((msg, body)) = &c.failure {
                let mut f = BytesStart::new("failure");
                f.push_attribute(("message", msg.as_str()));
                f.push_attribute(("type", "assertion"));
                w.write_event(Event::Start(f)).expect(ok);
                w.write_event(Event::CData(BytesCData::new(
                    body.replace("]]>", "]]]]><![CDATA[>"),
                )))
                .expect(ok);
                w.write_event(Event::End(BytesEnd::new("failure")))
                    .expect(ok);
            }
            if let Some(why) = &c.skipped {
                let mut sk = BytesStart::new("skipped");
                sk.push_attribute(("message", why.as_str()));
                w.write_event(Event::Empty(sk)).expect(ok);
            }
            w.write_event(Event::End(BytesEnd::new("testcase")))
                .expect(ok);
        }
        w.write_event(Event::End(BytesEnd::new("testsuite")))
            .expect(ok);
    }
    w.write_event(Event::End(BytesEnd::new("testsuites")))
        .expect(ok);
    let mut out = String::from_utf8(w.into_inner().into_inner()).expect("UTF-8 XML");
    out.push('\n');
    out
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
