//! `memoria-harness sweep`: the selected cases under many seeds, with seeds per minute and each failing seed's replay command.

use std::process::ExitCode;
use std::time::Instant;

use memoria_gates::progress::{Mode, Progress};
use memoria_gates::{Status, run_case, select};

use super::{EXIT_FAIL, EXIT_USAGE};

/// Runs the cases `selectors` choose at seeds `from .. from + seeds`; exit 0
/// if none failed, 1 if one did, 2 on a usage error.
pub fn sweep(selectors: &[String], skip: &[String], from: u64, seeds: u64) -> ExitCode {
    if seeds == 0 {
        eprintln!("memoria-harness: --seeds 0 runs nothing; give at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    let Some(end) = from.checked_add(seeds) else {
        eprintln!("memoria-harness: --from {from} --seeds {seeds} runs past the last seed");
        return ExitCode::from(EXIT_USAGE);
    };
    let chosen = match select::select(selectors, skip) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cases: Vec<_> = chosen.into_iter().flat_map(|(_, cs)| cs).collect();
    let t0 = Instant::now();
    let mut failures = 0u64;
    let progress = Progress::start("sweep", seeds, Mode::detect());
    for seed in from..end {
        let (seed_t0, failures_before) = (Instant::now(), failures);
        for c in &cases {
            progress.running(&format!("seed {seed}: {}", c.id));
            if let Status::Fail(f) = run_case(c, seed) {
                failures += 1;
                outln!(
                    "FAIL  {} seed {seed}\n  {f}\n  replay: cargo run -p memoria-gates --bin memoria-harness -- run {} --seed {seed}",
                    c.id,
                    c.id
                );
            }
        }
        progress.finished(&format!(
            "seed {seed}: {} cases, {} failed ({:.1} s)",
            cases.len(),
            failures - failures_before,
            seed_t0.elapsed().as_secs_f64()
        ));
    }
    drop(progress);
    let secs = t0.elapsed().as_secs_f64().max(f64::EPSILON);
    outln!(
        "{seeds} seeds x {} cases in {secs:.1} s: {:.1} seeds per minute, {failures} failures",
        cases.len(),
        seeds as f64 * 60.0 / secs
    );
    if failures == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAIL)
    }
}
