//! The harness's side of the mutation runner: the runner is the `memoria-mutants` crate (`gates/mutants/`), re-exported here whole; [`parse`] adds the one check the runner cannot make alone, that a `conform:` line names cases the conformance kit has.
//!
//! `memoria_gates::mutants::…` names what it always named, so the CLI, the
//! tests and the tidy checks read mutation files through this module. The
//! runner reads the harness's reports by their shape and never builds the
//! harness or the kit; [`conform_case_ids`] is what the CLI hands it
//! ([`Options::conform_cases`]), and [`to_junit`] renders its run with the
//! kit's JUnit writer.

use std::path::Path;

pub use memoria_mutants::*;

use crate::conform::junit::{JunitCase, JunitSuite, junit};

/// Every conformance case id the kit has, in its order: what a `conform:`
/// line names from.
pub fn conform_case_ids() -> Vec<String> {
    crate::conform::cases::all()
        .iter()
        .map(|c| c.id.to_string())
        .collect()
}

/// Reads a mutation file, as [`memoria_mutants::parse`] does, and checks
/// its `conform:` line against the kit's cases.
///
/// # Errors
/// The file is malformed ([`memoria_mutants::parse`]), or its `conform:`
/// line names an id that is no conformance case.
pub fn parse(file: &Path, text: &str) -> Result<Mutation, String> {
    let m = memoria_mutants::parse(file, text)?;
    m.check_conform_cases(&conform_case_ids())?;
    Ok(m)
}

/// A mutation run as JUnit: one suite per gate, one case per mutation;
/// anything but killed is a failure.
pub fn to_junit(run: &MutantsRun) -> String {
    let mut gates: Vec<String> = run.mutants.iter().map(|m| m.gate.clone()).collect();
    gates.sort();
    gates.dedup();
    let suites: Vec<JunitSuite> = gates
        .iter()
        .map(|g| JunitSuite {
            name: format!("mutations for gate {g}"),
            package: format!("gate{g}"),
            properties: vec![("seed".into(), run.seed.to_string())],
            cases: run
                .mutants
                .iter()
                .filter(|m| &m.gate == g)
                .map(|m| JunitCase {
                    name: m.file.clone(),
                    classname: format!("gate{g}.mutations"),
                    time_ms: m.time_ms,
                    failure: (m.status != Outcome::Killed).then(|| {
                        (
                            format!("{:?}: {}", m.status, m.breaks),
                            format!("expected: killed\nactual: {:?}\n{}", m.status, m.detail),
                        )
                    }),
                    skipped: None,
                })
                .collect(),
        })
        .collect();
    junit("memoria-harness mutants", &suites)
}

#[cfg(test)]
mod tests {
    use memoria_mutants::judge::{CaseStatus, ConformView, RunView, report};

    use crate::conform::Level;
    use crate::conform::report::{CaseResult, ConformReport, Status};
    use crate::report::{CaseReport, GateReport, RunReport, Verdict};

    #[test]
    fn the_runner_reads_the_harness_s_own_gate_report_through_its_view() {
        let case = |id: &str, status| CaseReport {
            id: id.into(),
            desc: "d".into(),
            status,
            expected: (status == Verdict::Fail).then(|| "x".into()),
            actual: (status == Verdict::Fail).then(|| "the title leaked".into()),
            time_ms: 1,
        };
        let written = RunReport::new(
            7,
            vec![GateReport {
                id: "6".into(),
                title: "t".into(),
                sections: vec!["§4.1".into()],
                requirement: "r".into(),
                status: Verdict::Fail,
                cases: vec![case("6/a", Verdict::Pass), case("6/b", Verdict::Fail)],
            }],
        );
        let read: RunView = report(&written.to_json()).expect("the view reads the report");
        let seen: Vec<(&str, CaseStatus, Option<&str>)> = read
            .gates
            .iter()
            .flat_map(|g| &g.cases)
            .map(|c| (c.id.as_str(), c.status, c.actual.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                ("6/a", CaseStatus::Other, None),
                ("6/b", CaseStatus::Fail, Some("the title leaked")),
            ]
        );
    }

    #[test]
    fn the_runner_reads_every_status_of_the_kit_s_own_report_through_its_view() {
        // (status written, status the runner reads)
        const ROWS: &[(Status, CaseStatus)] = &[
            (Status::Pass, CaseStatus::Other),
            (Status::Fail, CaseStatus::Fail),
            (Status::Skip, CaseStatus::Other),
            (Status::KnownFail, CaseStatus::Other),
            (Status::Fixed, CaseStatus::Fixed),
        ];
        let cases = ROWS
            .iter()
            .enumerate()
            .map(|(i, (status, _))| CaseResult {
                id: format!("c/{i}"),
                level: Level::Must,
                section: "§4.1".into(),
                requirement: "r".into(),
                status: *status,
                expected: None,
                actual: None,
                skipped: None,
                time_ms: 1,
            })
            .collect();
        let written = ConformReport::new(cases, 3);
        let read: ConformView = report(&written.to_json()).expect("the view reads the report");
        let seen: Vec<CaseStatus> = read.cases.iter().map(|c| c.status).collect();
        let want: Vec<CaseStatus> = ROWS.iter().map(|(_, s)| *s).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn a_conform_line_parses_only_if_the_kit_has_every_case_it_names() {
        let id = &super::conform_case_ids()[0];
        let file = |named: &str| {
            format!(
                "gate: conform\nconform: {named}\nauthor: adversary\nbreaks: x\n\n--- a/reference/src/store.rs\n+++ b/reference/src/store.rs\n@@ -1 +1 @@\n-a\n+b\n"
            )
        };
        let path = std::path::Path::new("x.diff");
        let m = super::parse(path, &file(id)).expect("a case the kit has");
        assert_eq!(m.conform, [id.as_str()]);
        let e = super::parse(path, &file("s1/five-fields")).expect_err("no case of the kit");
        assert_eq!(e, "conform: s1/five-fields is no conformance case id");
    }
}
