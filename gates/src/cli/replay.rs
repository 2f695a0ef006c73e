//! `memoria-harness replay`: incident scenarios replayed, each timeline printed and its expectations checked; `--shrink` finds a failure's minimal timeline.

use std::path::PathBuf;
use std::process::ExitCode;

use memoria_gates::progress::{Mode, Progress};

use super::{EXIT_FAIL, EXIT_USAGE, shell_quote};
use crate::Format;

/// Replays `files`; exit 0 if every expectation held, 1 if one failed, 2
/// on a file that cannot be read or parsed.
pub fn replay(files: &[PathBuf], seed: Option<u64>, format: Format, shrink: bool) -> ExitCode {
    use memoria_simulator::scenario;
    if format == Format::Junit {
        eprintln!("memoria-harness: replay prints text or json");
        return ExitCode::from(EXIT_USAGE);
    }
    let mut failed = false;
    let mut reports = vec![];
    let progress = Progress::start("replay", files.len() as u64, Mode::detect());
    for file in files {
        progress.running(&file.display().to_string());
        let parsed = std::fs::read_to_string(file)
            .map_err(|e| e.to_string())
            .and_then(|t| scenario::parse(&t).map_err(|e| e.to_string()));
        let s = match parsed {
            Ok(s) => s,
            Err(e) => {
                eprintln!("memoria-harness: {}: {e}", file.display());
                return ExitCode::from(EXIT_USAGE);
            }
        };
        let r = if shrink {
            let shrunk = match scenario::shrink(&s, seed) {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("memoria-harness: {}: {e}", file.display());
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            match shrunk {
                scenario::Shrunk::Passes(r) => {
                    let checks: usize = r.entries.iter().map(|e| e.checks.len()).sum();
                    match format {
                        Format::Text => outln!(
                            "{}: nothing to shrink: the scenario passes (all {checks} checks held at seed {})\n",
                            file.display(),
                            r.seed
                        ),
                        Format::Json | Format::Junit => reports.push(serde_json::json!({
                            "file": file.display().to_string(),
                            "passed": true,
                            "replay": r,
                            "nothing_to_shrink": true,
                            "minimal": null,
                        })),
                    }
                    r
                }
                scenario::Shrunk::Failing {
                    original,
                    minimal,
                    replay,
                    kept,
                } => {
                    let details: Vec<String> = minimal.events.iter().map(|e| e.details()).collect();
                    match format {
                        Format::Text => {
                            out!("{}", original.render_text());
                            outln!(
                                "shrunk timeline: {} of {} events (the same expectation still fails without the others)",
                                minimal.events.len(),
                                s.events.len()
                            );
                            for (i, d) in kept.iter().zip(&details) {
                                outln!("  #{i:<3} {d}");
                            }
                            outln!("replay of the shrunk timeline (seed {}):", replay.seed);
                            out!("{}", replay.render_timeline());
                            outln!();
                        }
                        Format::Json | Format::Junit => reports.push(serde_json::json!({
                            "file": file.display().to_string(),
                            "passed": false,
                            "replay": replay,
                            "original": original,
                            "nothing_to_shrink": false,
                            "minimal": details,
                            "kept": kept,
                        })),
                    }
                    replay
                }
            }
        } else {
            let r = match scenario::replay(&s, seed) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("memoria-harness: {}: {e}", file.display());
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            match format {
                Format::Text => {
                    out!("{}", r.render_text());
                    outln!();
                }
                Format::Json | Format::Junit => reports.push(serde_json::json!({
                    "file": file.display().to_string(),
                    "passed": r.passed(),
                    "replay": r,
                    "minimal": null,
                })),
            }
            r
        };
        let checks: usize = r.entries.iter().map(|e| e.checks.len()).sum();
        let verdict = if r.passed() { "pass" } else { "FAIL" };
        progress.finished(&format!(
            "{verdict} {} ({checks} checks, seed {})",
            file.display(),
            r.seed
        ));
        if !r.passed() {
            failed = true;
            eprintln!(
                "memoria-harness: {} failed at seed {}; replay with:\n  cargo run -p memoria-gates --bin memoria-harness -- replay {} --seed {}",
                file.display(),
                r.seed,
                shell_quote(&file.to_string_lossy()),
                r.seed
            );
        }
    }
    drop(progress);
    if format == Format::Json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&reports).unwrap_or_default()
        );
    }
    if failed {
        ExitCode::from(EXIT_FAIL)
    } else {
        ExitCode::SUCCESS
    }
}
