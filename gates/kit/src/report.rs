//! A conformance run's report: text with expected vs actual, stable JSON, and JUnit XML through [`crate::junit::junit`].
//!
//! Statuses: `pass`, `fail`, `skip` (never counted as passed),
//! `known-fail` (listed in `--known-failing` and failed: does not fail the
//! run), `fixed` (listed and passed: fails the run, so the list cannot go
//! stale quietly).

use serde::{Deserialize, Serialize};

use crate::junit::{JunitCase, JunitSuite, junit};

use super::{ConformCase, Level, NotPassed};

/// One case's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// The requirement held.
    Pass,
    /// It did not.
    Fail,
    /// Not run here: no hook, hook cannot, no second token.
    Skip,
    /// Failed, and listed as known-failing.
    KnownFail,
    /// Passed, though listed as known-failing: fails the run.
    Fixed,
}

/// One case's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    /// Stable id.
    pub id: String,
    /// MUST or SHOULD.
    pub level: Level,
    /// Spec sections.
    pub section: String,
    /// The requirement.
    pub requirement: String,
    /// Status.
    pub status: Status,
    /// What was required (failures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What was seen (failures).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// Wall time, milliseconds.
    pub time_ms: u64,
}

impl CaseResult {
    /// A result from a case's outcome; `known` if the known-failing list names it.
    #[must_use]
    pub fn new(
        case: &ConformCase,
        outcome: Result<(), NotPassed>,
        known: bool,
        time_ms: u64,
    ) -> CaseResult {
        let mut r = CaseResult {
            id: case.id.to_owned(),
            level: case.level,
            section: case.section.to_owned(),
            requirement: case.requirement.to_owned(),
            status: Status::Pass,
            expected: None,
            actual: None,
            skipped: None,
            time_ms,
        };
        match outcome {
            Ok(()) if known => {
                r.status = Status::Fixed;
                r.expected = Some("a failure (the case is listed as known-failing)".into());
                r.actual = Some("it passed: remove it from the known-failing list".into());
            }
            Ok(()) => {}
            Err(NotPassed::Skip(why)) => {
                r.status = Status::Skip;
                r.skipped = Some(why);
            }
            Err(NotPassed::Fail(f)) => {
                r.status = if known {
                    Status::KnownFail
                } else {
                    Status::Fail
                };
                r.expected = Some(f.expected);
                r.actual = Some(f.actual);
            }
        }
        r
    }

    /// Whether this result fails the run.
    #[must_use]
    pub fn fails_run(&self) -> bool {
        matches!(self.status, Status::Fail | Status::Fixed)
    }
}

/// Counts over a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Cases run or skipped.
    pub cases: usize,
    /// Passed.
    pub passed: usize,
    /// Failed (not listed).
    pub failed: usize,
    /// Skipped.
    pub skipped: usize,
    /// Failed and listed.
    pub known_failing: usize,
    /// Passed though listed.
    pub fixed: usize,
}

/// A whole conformance run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ConformReport {
    /// Every selected case, in list order.
    pub cases: Vec<CaseResult>,
    /// Counts.
    pub summary: Summary,
    /// Wall time of the run, milliseconds.
    pub wall_ms: u64,
}

impl ConformReport {
    /// Builds the summary.
    #[must_use]
    pub fn new(cases: Vec<CaseResult>, wall_ms: u64) -> ConformReport {
        let mut s = Summary {
            cases: cases.len(),
            ..Summary::default()
        };
        for c in &cases {
            match c.status {
                Status::Pass => s.passed += 1,
                Status::Fail => s.failed += 1,
                Status::Skip => s.skipped += 1,
                Status::KnownFail => s.known_failing += 1,
                Status::Fixed => s.fixed += 1,
            }
        }
        ConformReport {
            cases,
            summary: s,
            wall_ms,
        }
    }

    /// Whether the run failed (exit 1).
    #[must_use]
    pub fn failed(&self) -> bool {
        self.cases.iter().any(CaseResult::fails_run)
    }

    /// The ids of cases that fail the run.
    #[must_use]
    pub fn failing_ids(&self) -> Vec<&str> {
        self.cases
            .iter()
            .filter(|c| c.fails_run())
            .map(|c| c.id.as_str())
            .collect()
    }

    /// A text table grouped by section, expected and actual under each failure.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let mut group = "";
        for c in &self.cases {
            let g = c.id.split('/').next().unwrap_or("");
            if g != group {
                group = g;
                s.push_str(&format!("\n{g}\n"));
            }
            let mark = match c.status {
                Status::Pass => "pass",
                Status::Fail => "FAIL",
                Status::Skip => "skip",
                Status::KnownFail => "xfail",
                Status::Fixed => "FIXED",
            };
            s.push_str(&format!(
                "  {mark:<5} {:<6} {:<44} {:>6} ms  {}\n",
                c.level.as_str(),
                c.id,
                c.time_ms,
                c.section
            ));
            if let (Some(e), Some(a)) = (&c.expected, &c.actual) {
                s.push_str(&format!(
                    "        requirement: {}\n           expected: {e}\n             actual: {a}\n",
                    c.requirement
                ));
            }
            if let Some(why) = &c.skipped {
                s.push_str(&format!("        skipped: {why}\n"));
            }
        }
        let m = &self.summary;
        s.push_str(&format!(
            "\n{} passed, {} failed, {} skipped, {} known-failing, {} fixed ({} cases, {} ms)\n",
            m.passed, m.failed, m.skipped, m.known_failing, m.fixed, m.cases, self.wall_ms
        ));
        s
    }

    /// Pretty JSON in a stable schema (fields added, never renamed).
    ///
    /// # Panics
    /// Never in practice: the report holds only strings and numbers.
    #[must_use]
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serialises")
    }

    /// JUnit XML: one suite per section group (`s1`, `s2`, `suite3`…), one
    /// case per id. Skipped and known-failing cases are `<skipped/>`; failed
    /// and fixed ones are `<failure/>`.
    #[must_use]
    pub fn to_junit(&self) -> String {
        let mut groups: Vec<&str> = Vec::new();
        for c in &self.cases {
            let g = c.id.split('/').next().unwrap_or("");
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let suites: Vec<JunitSuite> = groups
            .iter()
            .map(|g| JunitSuite {
                name: format!("conform {g}"),
                package: format!("conform.{g}"),
                properties: vec![("kit".into(), "memoria-harness conform".into())],
                cases: self
                    .cases
                    .iter()
                    .filter(|c| c.id.split('/').next() == Some(g))
                    .map(|c| JunitCase {
                        name: c.id.clone(),
                        classname: format!("conform.{g}"),
                        time_ms: c.time_ms,
                        failure: c.fails_run().then(|| {
                            let e = c.expected.clone().unwrap_or_default();
                            let a = c.actual.clone().unwrap_or_default();
                            (
                                format!("{} {}: {}", c.level.as_str(), c.section, c.requirement),
                                format!("expected: {e}\nactual: {a}"),
                            )
                        }),
                        skipped: match c.status {
                            Status::Skip => c.skipped.clone(),
                            Status::KnownFail => Some(format!(
                                "known failing: {}",
                                c.actual.clone().unwrap_or_default()
                            )),
                            _ => None,
                        },
                    })
                    .collect(),
            })
            .collect();
        junit("memoria-harness conform", &suites)
    }
}
