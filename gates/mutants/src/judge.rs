//! Reading back what a mutated harness reported, by the report's shape, and judging it: killed, survived, or a harness error.
//!
//! The harness writes its reports as JSON on standard output (`run`,
//! `conform`, `replay` with `--format json`; the README documents their
//! schema). The runner reads each back into a view of the fields it judges
//! ([`RunView`], [`ConformView`], [`ReplayFile`]), which serde fills while
//! ignoring the rest: it depends on the reports' shape, never on the
//! harness that writes them (`memoria-gates` holds a test that its own
//! reports read back through these views). A report that does not parse is
//! a [`ReportError`], never read as "nothing failed".

use serde::Deserialize;

use super::parse::Mutation;
use super::report::Outcome;
use super::scratch::{Ended, Ran};

/// A case's status as both reports spell it: the runner judges `fail`
/// (and a conformance run's `fixed`); every other status is one it does
/// not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseStatus {
    /// The claim did not hold.
    Fail,
    /// Listed as known-failing, yet passed: fails a conformance run.
    Fixed,
    /// Any other status (`pass`, `skip`, `known-fail`).
    #[serde(other)]
    Other,
}

/// `run --format json`'s report: the fields judged here.
#[derive(Debug, Deserialize)]
pub struct RunView {
    /// Each gate run.
    pub gates: Vec<RunGateView>,
}

/// One gate of a [`RunView`].
#[derive(Debug, Deserialize)]
pub struct RunGateView {
    /// Its cases.
    pub cases: Vec<RunCaseView>,
}

/// One case of a [`RunGateView`].
#[derive(Debug, Deserialize)]
pub struct RunCaseView {
    /// Its stable id (`6/b`).
    pub id: String,
    /// Its verdict.
    pub status: CaseStatus,
    /// What it saw, if it failed.
    #[serde(default)]
    pub actual: Option<String>,
}

/// `conform --format json`'s report: the fields judged here.
#[derive(Debug, Deserialize)]
pub struct ConformView {
    /// Each case.
    pub cases: Vec<ConformCaseView>,
}

/// One case of a [`ConformView`].
#[derive(Debug, Deserialize)]
pub struct ConformCaseView {
    /// Its stable id (`s1/four-fields`).
    pub id: String,
    /// Its status.
    pub status: CaseStatus,
}

/// A harness run's standard output held no report that parses.
#[derive(Debug, thiserror::Error)]
#[error("its report does not parse: {0}")]
pub struct ReportError(#[from] serde_json::Error);

/// One file of `replay --format json`'s array: the fields judged here.
#[derive(Debug, Deserialize)]
pub(super) struct ReplayFile {
    replay: ReplayBody,
}

/// The replay of one scenario: its error, if the simulation failed, and its
/// timeline's entries.
#[derive(Debug, Deserialize)]
struct ReplayBody {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    entries: Vec<ReplayEntry>,
}

#[derive(Debug, Deserialize)]
struct ReplayEntry {
    index: usize,
    #[serde(default)]
    checks: Vec<ReplayCheck>,
}

#[derive(Debug, Deserialize)]
struct ReplayCheck {
    ok: bool,
    expected: String,
    actual: String,
}

/// Parses a report from a harness run's standard output.
///
/// # Errors
/// It holds no JSON of `T`'s shape.
pub fn report<T: serde::de::DeserializeOwned>(stdout: &str) -> Result<T, ReportError> {
    Ok(serde_json::from_str(stdout.trim())?)
}

/// The failed checks a `replay --format json` run reported, one line; or why
/// there was nothing to read.
fn failed_checks(stdout: &str) -> String {
    let files: Vec<ReplayFile> = match report(stdout) {
        Ok(v) => v,
        Err(e) => return format!("the replay printed no report: {e}"),
    };
    let mut red = Vec::new();
    for f in &files {
        if let Some(e) = &f.replay.error {
            red.push(format!("the simulation failed: {e}"));
        }
        for entry in &f.replay.entries {
            for c in entry.checks.iter().filter(|c| !c.ok) {
                red.push(format!(
                    "event #{} expected {}, saw {}",
                    entry.index, c.expected, c.actual
                ));
            }
        }
    }
    if red.is_empty() {
        "the replay failed without a failed check".into()
    } else {
        format!("scenario red: {}", red.join("; "))
    }
}

/// A scenario mutation's verdict: killed if one of `file`'s checks failed.
pub(super) fn judge_scenario(file: &str, ran: &Ran) -> (Outcome, String) {
    match ran.ended {
        Ended::TimedOut => (Outcome::Timeout, format!("replay of {file} timed out")),
        Ended::Code(1) => (Outcome::Killed, failed_checks(&ran.stdout)),
        Ended::Code(0) => (Outcome::Survived, format!("every check of {file} held")),
        Ended::Signal => (
            Outcome::Killed,
            format!("replay of {file} crashed (killed by a signal)"),
        ),
        Ended::Code(c) => (
            Outcome::Invalid,
            format!("replay of {file} exited {c}, a harness error rather than a verdict"),
        ),
    }
}

/// The conformance case ids a `conform --format json` run failed (or
/// listed as known-failing and passed), sorted.
///
/// # Errors
/// The run printed no report that parses.
pub(super) fn conform_failures(stdout: &str) -> Result<Vec<String>, ReportError> {
    let r: ConformView = report(stdout)?;
    let mut ids: Vec<String> = r
        .cases
        .into_iter()
        .filter(|c| matches!(c.status, CaseStatus::Fail | CaseStatus::Fixed))
        .map(|c| c.id)
        .collect();
    ids.sort();
    Ok(ids)
}

/// A conformance mutation's verdict: killed only if exactly its named cases failed.
pub(super) fn judge_conform(m: &Mutation, ran: &Ran) -> (Outcome, String) {
    let mut want = m.conform.clone();
    want.sort();
    let got = conform_failures(&ran.stdout);
    match (ran.ended, got) {
        (Ended::TimedOut, _) => (Outcome::Timeout, "the conformance run timed out".into()),
        (Ended::Code(1), Ok(got)) if got == want => (
            Outcome::Killed,
            format!("conform red: exactly {}", got.join(" ")),
        ),
        (Ended::Code(1), Ok(got)) => (
            Outcome::Imprecise,
            format!("conform failed {got:?}, not exactly {want:?}"),
        ),
        (Ended::Code(1), Err(e)) => (
            Outcome::Invalid,
            format!("conform exited 1 but {e}: a harness error rather than a verdict"),
        ),
        (Ended::Code(0), _) => (
            Outcome::Survived,
            "every conformance case stayed green".into(),
        ),
        (Ended::Signal, _) => (Outcome::Invalid, "the conformance run crashed".into()),
        (Ended::Code(c), _) => (
            Outcome::Invalid,
            format!("conform exited {c}, a harness error rather than a verdict"),
        ),
    }
}

/// The cases a `run --format json` run failed, with what each saw, one line.
pub(super) fn failed_cases(stdout: &str) -> String {
    let r: RunView = match report(stdout) {
        Ok(r) => r,
        Err(e) => return format!("the gate run printed no report: {e}"),
    };
    let red: Vec<String> = r
        .gates
        .iter()
        .flat_map(|g| &g.cases)
        .filter(|c| c.status == CaseStatus::Fail)
        .map(|c| format!("{} red: {}", c.id, c.actual.as_deref().unwrap_or("")))
        .collect();
    if red.is_empty() {
        "every selected case stayed green".into()
    } else {
        red.join("; ")
    }
}

/// The ids of the cases a `run --format json` run failed, and how many
/// cases it ran.
///
/// # Errors
/// The run printed no report that parses.
pub(super) fn failed_case_ids(
    stdout: &str,
) -> Result<(std::collections::BTreeSet<String>, usize), ReportError> {
    let r: RunView = report(stdout)?;
    let cases: Vec<_> = r.gates.iter().flat_map(|g| &g.cases).collect();
    let red = cases
        .iter()
        .filter(|c| c.status == CaseStatus::Fail)
        .map(|c| c.id.clone())
        .collect();
    Ok((red, cases.len()))
}

/// A gate mutation's verdict: killed if the selected gate or case `sel`
/// went red (or crashed).
pub(super) fn judge_gate(sel: &str, ran: &Ran, limit: std::time::Duration) -> (Outcome, String) {
    match ran.ended {
        Ended::TimedOut => (Outcome::Timeout, format!("gate {sel} ran past {limit:?}")),
        Ended::Code(1) => (Outcome::Killed, failed_cases(&ran.stdout)),
        Ended::Signal => (
            Outcome::Killed,
            format!("gate {sel} crashed (killed by a signal)"),
        ),
        Ended::Code(0) => (Outcome::Survived, format!("gate {sel} stayed green")),
        Ended::Code(c) => (
            Outcome::Invalid,
            format!(
                "gate {sel} exited {c}, a harness error rather than a verdict: {}",
                failed_cases(&ran.stdout)
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(code: i32, stdout: &str) -> Ran {
        Ran {
            ended: Ended::Code(code),
            stdout: stdout.into(),
            stderr: String::new(),
        }
    }

    #[test]
    fn a_failed_gate_case_is_read_back_from_the_typed_report() {
        let json = r#"{"seed":7,"gates":[{"id":"6","title":"t","sections":["§4.1"],"requirement":"r","status":"fail",
            "cases":[{"id":"6/a","desc":"d","status":"pass","time_ms":1},
                     {"id":"6/b","desc":"d","status":"fail","expected":"x","actual":"the title leaked","time_ms":2}]}],
            "summary":{"cases":2,"passed":1,"failed":1}}"#;
        let (outcome, detail) = judge_gate("6", &ran(1, json), std::time::Duration::from_secs(1));
        assert_eq!(outcome, Outcome::Killed);
        assert_eq!(detail, "6/b red: the title leaked");
    }

    #[test]
    fn a_report_that_does_not_parse_is_said_so_and_never_read_as_green() {
        let detail = failed_cases("memoria-harness: seed 7\nthread panicked");
        assert!(
            detail.starts_with("the gate run printed no report"),
            "{detail}"
        );
        let m = Mutation {
            file: "m.diff".into(),
            gate: super::super::CONFORM_GATE.into(),
            case: None,
            conform: vec!["a-case".into()],
            scenario: None,
            author: super::super::Author::Author,
            breaks: "x".into(),
            diff: String::new(),
            touches: vec![],
            edits: vec![],
            kept_as_diff: None,
        };
        let (outcome, detail) = judge_conform(&m, &ran(1, "not json"));
        assert_eq!(outcome, Outcome::Invalid, "{detail}");
    }

    #[test]
    fn a_scenario_check_that_failed_is_named_with_its_event() {
        let json = r#"[{"file":"scenarios/a.toml","passed":false,"replay":{"title":"t","seed":3,"settings":[],
            "entries":[{"index":2,"at_ms":0,"event":"e","calls":[],"page":null,
                        "checks":[{"expected":"withheld","actual":"shown","ok":false},{"expected":"a","actual":"a","ok":true}]}],
            "error":null},"minimal":null}]"#;
        let (outcome, detail) = judge_scenario("scenarios/a.toml", &ran(1, json));
        assert_eq!(outcome, Outcome::Killed);
        assert_eq!(
            detail,
            "scenario red: event #2 expected withheld, saw shown"
        );
    }
}
