//! Every registered gate case as one `cargo test` trial, read from the registry: the same body the `memoria-harness` CLI runs.
//!
//! This target has `harness = false`: `libtest-mimic` gives it libtest's
//! command line and output, and the trials are built from
//! [`memoria_gates::registry`] at run time, so a case registered in
//! `src/gates/mod.rs` is a test with no second list to keep in step.
//!
//! **Names.** A trial is named by its case id, `6/document-page-values`:
//! the one name the CLI (`memoria-harness run 6/document-page-values`),
//! the replay line, JUnit reports and the mutations' `case:` headers already
//! use, so a name read in one place can be pasted into any other. The id's
//! slug is a phrase of the claim ("27/docs-fill-the-page"); the sentence is
//! the case's description, which `memoria-harness list` prints.
//!
//! **Filtering.** `cargo test -p memoria-gates --test gates -- 6/` runs gate
//! 6's cases and not gate 26's: a filter matches where it starts the id or
//! follows a `/` or `-` in it ([`memoria_gates::filter_picks`]), so
//! `-- document-page` picks every document-page case. `--exact ID` runs one
//! case, `--skip` and `--list` behave as libtest's do.
//!
//! **Seeds.** One seed drives the whole run: `MEMORIA_SEED=N` fixes it,
//! else it is random. Each case draws its own stream from the seed and its
//! id, so the subset a filter picks never changes a case's choices. A
//! failure prints the seed and the exact replay command, for the CLI and
//! for this target.
//!
//! **Reports.** With `MEMORIA_GATE_REPORTS=DIR` set, the run also writes
//! `DIR/gates.json` and `DIR/gates.xml`, the JSON and JUnit reports
//! `memoria-harness run --format junit --json-report FILE` writes, over the
//! cases this run picked. CI reads them from the README's test command, so
//! the gates run once, here, in parallel, and not a second time one case
//! after another through the CLI.

use std::path::PathBuf;
use std::sync::Mutex;

use libtest_mimic::{Arguments, Failed, Trial};
use memoria_gates::report::{CaseReport, GateReport, RunReport};
use memoria_gates::{check_case_reported, filter_picks, registry, seed_from_env};

/// Where the run writes `gates.json` and `gates.xml`, when set.
const REPORTS_ENV: &str = "MEMORIA_GATE_REPORTS";

/// Every trial's report, in the order the trials ended.
static REPORTS: Mutex<Vec<CaseReport>> = Mutex::new(Vec::new());

fn main() {
    let mut args = Arguments::from_args();
    // libtest-mimic matches substrings; `--exact` it may keep, the rest is ours.
    let filter = if args.exact { None } else { args.filter.take() };
    let seed = seed_from_env();
    let cases: Vec<&'static str> = registry()
        .iter()
        .flat_map(|g| g.cases.iter().map(|c| c.id))
        .collect();
    assert!(!cases.is_empty(), "the registry holds no case");
    let picked: Vec<&'static str> = cases
        .iter()
        .copied()
        .filter(|id| filter.as_deref().is_none_or(|f| filter_picks(f, id)))
        .collect();
    if let Some(f) = &filter
        && !args.list
    {
        eprintln!(
            "filter {f:?} picks {} of {} gate cases",
            picked.len(),
            cases.len()
        );
    }
    let trials = picked
        .into_iter()
        .map(|id| {
            Trial::test(id, move || {
                let (report, verdict) = check_case_reported(id, seed);
                if let (Some(r), Ok(mut all)) = (report, REPORTS.lock()) {
                    all.push(r);
                }
                verdict.map_err(|report| {
                    Failed::from(format!(
                        "{report}\n    or: MEMORIA_SEED={seed} cargo test -p memoria-gates --test gates -- --exact {id}"
                    ))
                })
            })
        })
        .collect();
    let listing = args.list;
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(dir) = std::env::var_os(REPORTS_ENV).filter(|d| !d.is_empty())
        && !listing
    {
        write_reports(&PathBuf::from(dir), seed);
    }
    conclusion.exit();
}

/// Writes `gates.json` and `gates.xml` into `dir`: the cases that ran,
/// grouped by gate in the registry's order.
///
/// # Panics
/// If `dir` cannot be created or a report cannot be written: the run was
/// asked for its reports, and a CI step reading a missing file would say
/// less than this.
fn write_reports(dir: &std::path::Path, seed: u64) {
    let mut ran = REPORTS.lock().map(|r| r.clone()).unwrap_or_default();
    let mut gates = Vec::new();
    for g in registry() {
        let cases: Vec<CaseReport> = g
            .cases
            .iter()
            .filter_map(|c| {
                let at = ran.iter().position(|r| r.id == c.id)?;
                Some(ran.swap_remove(at))
            })
            .collect();
        if !cases.is_empty() {
            gates.push(GateReport::of(g, cases));
        }
    }
    let report = RunReport::new(seed, gates);
    std::fs::create_dir_all(dir)
        .unwrap_or_else(|e| panic!("{REPORTS_ENV}: creating {}: {e}", dir.display()));
    for (name, text) in [
        ("gates.json", report.to_json() + "\n"),
        ("gates.xml", report.to_junit("memoria-harness")),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .unwrap_or_else(|e| panic!("{REPORTS_ENV}: writing {}: {e}", path.display()));
    }
    eprintln!(
        "gate reports: {} cases of {} gates in {}",
        report.summary.cases,
        report.gates.len(),
        dir.display()
    );
}
