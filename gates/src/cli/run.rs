//! `memoria-harness run`: the selected gates' cases at one seed, reported as text, JSON or JUnit, with a failure's replay command.

use std::process::ExitCode;
use std::time::Instant;

use memoria_gates::progress::{Mode, Progress};
use memoria_gates::report::{CaseReport, GateReport, RunReport};
use memoria_gates::{Status, run_case, select};

use super::{EXIT_FAIL, EXIT_USAGE, shell_quote};
use crate::Format;

/// Runs the cases `selectors` choose at `seed`; exit 0 if every one passed,
/// 1 if one failed, 2 on a usage error or a report that cannot be written.
pub fn run(
    selectors: &[String],
    skip: &[String],
    seed: u64,
    format: Format,
    json_report: Option<&std::path::Path>,
) -> ExitCode {
    let chosen = match select::select(selectors, skip) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    eprintln!("memoria-harness: seed {seed}");
    let total = chosen.iter().map(|(_, cs)| cs.len() as u64).sum();
    let progress = Progress::start("run", total, Mode::detect());
    let mut gates = Vec::new();
    for (g, cases) in chosen {
        let mut reports = Vec::new();
        for c in cases {
            progress.running(c.id);
            let t0 = Instant::now();
            let status = run_case(c, seed);
            let ms = t0.elapsed().as_millis() as u64;
            progress.finished(&unit_line(&status, c.id, ms));
            reports.push(CaseReport::of(c, status, ms));
        }
        gates.push(GateReport::of(g, reports));
    }
    drop(progress);
    let report = RunReport::new(seed, gates);
    if let Some(path) = json_report
        && let Err(e) = std::fs::write(path, report.to_json() + "\n")
    {
        eprintln!("memoria-harness: writing {}: {e}", path.display());
        return ExitCode::from(EXIT_USAGE);
    }
    match format {
        Format::Text => out!("{}", report.to_text()),
        Format::Json => outln!("{}", report.to_json()),
        Format::Junit => out!("{}", report.to_junit("memoria-harness")),
    }
    let failed = report.failed_ids();
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        let sel: Vec<String> = failed.iter().map(|s| shell_quote(s)).collect();
        eprintln!(
            "memoria-harness: {} failed; replay with:\n  cargo run -p memoria-gates --bin memoria-harness -- run {} --seed {seed}",
            failed.len(),
            sel.join(" ")
        );
        ExitCode::from(EXIT_FAIL)
    }
}

/// A finished case's progress line: `pass 1/database-and-wal (0.3 s)`.
fn unit_line(status: &Status, id: &str, ms: u64) -> String {
    let verdict = match status {
        Status::Pass => "pass",
        Status::Fail(_) => "FAIL",
    };
    format!("{verdict} {id} ({:.1} s)", ms as f64 / 1000.0)
}
