//! `memoria-harness explore`: seeds in, one simulated run each, judged by the truth oracle; a failure prints its seed, swarm, invariant, event and replay command, and is shrunk to a scenario file.
//!
//! The logic is `memoria_simulator::explore`; this is argument handling,
//! progress (one line per seed on stderr) and printing.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use memoria_simulator::explore::{self, failure};

use super::{EXIT_FAIL, EXIT_USAGE};

/// What `explore` was asked.
pub struct Args<'a> {
    /// The first seed.
    pub from: u64,
    /// How many seeds from `from`.
    pub seeds: u64,
    /// `K/N`: only every Nth seed from `from + K`.
    pub shard: Option<&'a str>,
    /// Where shrunk scenarios are written.
    pub out: &'a Path,
    /// Shrink a failure.
    pub shrink: bool,
    /// Print every seed's timeline.
    pub timeline: bool,
}

/// `K/N` with K < N.
fn parse_shard(s: &str) -> Option<(u64, u64)> {
    let (k, n) = s.split_once('/')?;
    let (k, n): (u64, u64) = (k.parse().ok()?, n.parse().ok()?);
    (n > 0 && k < n).then_some((k, n))
}

/// Runs the seeds `a` names; exit 0 if every one held, 1 if one failed, 2 on a usage error.
pub fn explore(a: Args<'_>) -> ExitCode {
    if a.seeds == 0 {
        eprintln!("memoria-harness: --seeds 0 runs nothing; give at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    let (k, n) = match a.shard.map(parse_shard) {
        None => (0, 1),
        Some(Some(kn)) => kn,
        Some(None) => {
            eprintln!("memoria-harness: --shard takes K/N with K < N, e.g. 0/4");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let seeds = explore::shard(a.from, a.seeds, k, n);
    let t0 = Instant::now();
    let mut failed = 0usize;
    for (i, seed) in seeds.iter().enumerate() {
        let x = explore::generate(*seed);
        let t = Instant::now();
        let r = match explore::explore(&x) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("memoria-harness: seed {seed}: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        if a.timeline {
            out!("{}", r.render_text());
        }
        let f = failure(&x.scenario, &r);
        eprintln!(
            "[{}/{}] seed {seed} swarm {}{} {} events: {} in {:.2} s",
            i + 1,
            seeds.len(),
            x.swarm,
            ai_on(&x.scenario),
            x.scenario.events.len(),
            f.as_ref()
                .map_or("ok".to_string(), |f| format!("FAIL {}", f.invariant)),
            t.elapsed().as_secs_f64()
        );
        let Some(f) = f else { continue };
        failed += 1;
        outln!("FAIL  seed {seed}  swarm {}{}", x.swarm, ai_on(&x.scenario));
        outln!("  invariant {}", f.invariant);
        outln!("  at event #{} ({}): {}", f.event, f.described, f.detail);
        outln!(
            "  replay: cargo run -p memoria-gates --bin memoria-harness -- explore --seed {seed}"
        );
        if !a.shrink {
            continue;
        }
        let t = Instant::now();
        let (mut minimal, runs) = explore::shrink(&x.scenario, *seed, &f.invariant);
        minimal.title = format!("explore seed {seed}: {} (shrunk)", f.invariant);
        minimal.about = format!(
            "Found by `memoria-harness explore --seed {seed}` (swarm {}) and shrunk from {} events to {} in {runs} replays: {}",
            x.swarm,
            x.scenario.events.len(),
            minimal.events.len(),
            f.detail
        );
        let path = a.out.join(format!("explore-seed-{seed}.toml"));
        let written = explore::to_toml(&minimal).and_then(|text| {
            std::fs::create_dir_all(a.out)
                .and_then(|()| std::fs::write(&path, text))
                .map_err(|e| format!("{}: {e}", path.display()))
        });
        match written {
            Ok(()) => outln!(
                "  shrunk to {} events in {runs} replays ({:.1} s): {}\n  replay: cargo run -p memoria-gates --bin memoria-harness -- replay {}",
                minimal.events.len(),
                t.elapsed().as_secs_f64(),
                path.display(),
                path.display()
            ),
            Err(e) => eprintln!("memoria-harness: writing the shrunk scenario: {e}"),
        }
    }
    let secs = t0.elapsed().as_secs_f64().max(f64::EPSILON);
    outln!(
        "{} seeds in {secs:.1} s: {:.1} seeds per minute, {failed} failed",
        seeds.len(),
        seeds.len() as f64 * 60.0 / secs
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAIL)
    }
}

/// How a progress line says a world runs with AI on (the stub provider
/// embedding and answering): a word after the swarm, empty with AI off.
fn ai_on(s: &memoria_simulator::scenario::Scenario) -> &'static str {
    if s.ai { " ai-on" } else { "" }
}
