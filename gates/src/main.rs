//! `memoria-harness`: run the gates, list them, and prove each can fail with its recorded mutations.
//!
//! Exit codes are fixed: 0 every selected case passed (or every mutation was
//! killed), 1 a gate failed (or a mutation was not killed), 2 a usage or
//! harness error. Every run prints its seed; a failure prints the exact
//! command that replays it.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};

use memoria_gates::report::{CaseReport, GateReport, RunReport, Verdict};
use memoria_gates::{Status, mutants, registry, run_case, select};

const EXIT_FAIL: u8 = 1;
const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "memoria-harness",
    version,
    about = "Runs memoria-design.md's numbered gates against the reference memoria, and proves each can fail."
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Junit,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run gates: every one, or those named by id, case id or glob (`6`, `27/empty-page`, `1/*`).
    Run {
        /// Gate ids, case ids or globs over case ids. None means all.
        selectors: Vec<String>,
        /// Skip cases matching this gate id, case id or glob (repeatable).
        #[arg(long)]
        skip: Vec<String>,
        /// The seed that drives every random choice; random if omitted.
        #[arg(long)]
        seed: Option<u64>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// List every gate and case with its requirement and spec sections.
    List {
        /// Output format (text or json).
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Run the selected cases under many seeds; report seeds per minute and every failing seed's replay command.
    Sweep {
        /// Gate ids, case ids or globs, as for `run`.
        selectors: Vec<String>,
        /// Cases to leave out.
        #[arg(long)]
        skip: Vec<String>,
        /// How many seeds.
        #[arg(long, default_value_t = 100)]
        seeds: u64,
        /// The first seed; the sweep runs `from`, `from + 1`, ….
        #[arg(long, default_value_t = 0)]
        from: u64,
    },
    /// Apply each recorded mutation in a scratch copy, build, run its gate, and require it killed.
    Mutants {
        /// Only mutations that name this gate.
        #[arg(long)]
        gate: Option<String>,
        /// Mutation files; default every `mutants/**/*.diff`.
        files: Vec<PathBuf>,
        /// The workspace root (default: this binary's own workspace).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Seed passed to every gate run; random if omitted.
        #[arg(long)]
        seed: Option<u64>,
        /// Per-run timeout in seconds.
        #[arg(long, default_value_t = mutants::MUTANT_RUN_TIMEOUT_S)]
        timeout: u64,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Run {
            selectors,
            skip,
            seed,
            format,
        } => run(&selectors, &skip, seed.unwrap_or_else(rand::random), format),
        Cmd::List { format } => list(format),
        Cmd::Sweep {
            selectors,
            skip,
            seeds,
            from,
        } => sweep(&selectors, &skip, from, seeds),
        Cmd::Mutants {
            gate,
            files,
            workspace,
            seed,
            timeout,
            format,
        } => run_mutants(
            gate,
            files,
            workspace,
            seed.unwrap_or_else(rand::random),
            timeout,
            format,
        ),
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-_.*?".contains(c))
        && !s.contains('*')
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn sweep(selectors: &[String], skip: &[String], from: u64, seeds: u64) -> ExitCode {
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
    for seed in from..from.saturating_add(seeds) {
        for c in &cases {
            if let Status::Fail(f) = run_case(c, seed) {
                failures += 1;
                println!(
                    "FAIL  {} seed {seed}\n  {f}\n  replay: cargo run -p memoria-gates --bin memoria-harness -- run {} --seed {seed}",
                    c.id, c.id
                );
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64().max(f64::EPSILON);
    println!(
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

fn run(selectors: &[String], skip: &[String], seed: u64, format: Format) -> ExitCode {
    let chosen = match select::select(selectors, skip) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    eprintln!("memoria-harness: seed {seed}");
    let mut gates = Vec::new();
    for (g, cases) in chosen {
        let mut reports = Vec::new();
        for c in cases {
            let t0 = Instant::now();
            let status = run_case(c, seed);
            let time_ms = t0.elapsed().as_millis() as u64;
            let (verdict, expected, actual) = match status {
                Status::Pass => (Verdict::Pass, None, None),
                Status::Fail(f) => (Verdict::Fail, Some(f.expected), Some(f.actual)),
            };
            reports.push(CaseReport {
                id: c.id.to_string(),
                desc: c.desc.to_string(),
                status: verdict,
                expected,
                actual,
                time_ms,
            });
        }
        let status = if reports.iter().any(|r| r.status == Verdict::Fail) {
            Verdict::Fail
        } else {
            Verdict::Pass
        };
        gates.push(GateReport {
            id: g.id.to_string(),
            title: g.title.to_string(),
            sections: g.sections.iter().map(|s| s.to_string()).collect(),
            requirement: g.requirement.to_string(),
            status,
            cases: reports,
        });
    }
    let report = RunReport::new(seed, gates);
    match format {
        Format::Text => print!("{}", report.to_text()),
        Format::Json => println!("{}", report.to_json()),
        Format::Junit => print!("{}", report.to_junit("memoria-harness")),
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

fn list(format: Format) -> ExitCode {
    match format {
        Format::Json => {
            let v: Vec<serde_json::Value> = registry()
                .iter()
                .map(|g| {
                    serde_json::json!({
                        "id": g.id,
                        "title": g.title,
                        "sections": g.sections,
                        "requirement": g.requirement,
                        "cases": g.cases.iter().map(|c| serde_json::json!({"id": c.id, "desc": c.desc})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&v).expect("list serialises")
            );
        }
        Format::Text | Format::Junit => {
            for g in registry() {
                println!("gate {} · {} · {}", g.id, g.title, g.sections.join(" "));
                println!("  requirement: {}", g.requirement);
                for c in g.cases {
                    println!("  {:<36} {}", c.id, c.desc);
                }
                println!();
            }
        }
    }
    ExitCode::SUCCESS
}

fn run_mutants(
    gate: Option<String>,
    files: Vec<PathBuf>,
    workspace: Option<PathBuf>,
    seed: u64,
    timeout: u64,
    format: Format,
) -> ExitCode {
    let workspace =
        workspace.unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
    let workspace = match workspace.canonicalize() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: workspace {}: {e}", workspace.display());
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut files: Vec<PathBuf> = if files.is_empty() {
        mutants::discover(&workspace.join("mutants"))
    } else {
        files
            .into_iter()
            .map(|f| std::fs::canonicalize(&f).unwrap_or(f))
            .collect()
    };
    if let Some(g) = &gate {
        files.retain(|f| {
            std::fs::read_to_string(f)
                .ok()
                .and_then(|t| mutants::parse(f, &t).ok())
                .is_some_and(|m| &m.gate == g)
        });
    }
    if files.is_empty() {
        eprintln!("memoria-harness: no recorded mutation selected");
        return ExitCode::from(EXIT_USAGE);
    }
    eprintln!("memoria-harness: seed {seed}, {} mutations", files.len());
    let opts = mutants::Options {
        workspace,
        files,
        seed,
        run_timeout: Duration::from_secs(timeout),
        progress: true,
    };
    let run = match mutants::run(&opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match format {
        Format::Text => print!("{}", run.to_text()),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&run).expect("serialises")
        ),
        Format::Junit => print!("{}", run.to_junit()),
    }
    if run.all_killed() {
        ExitCode::SUCCESS
    } else {
        for m in run
            .mutants
            .iter()
            .filter(|m| m.status != mutants::Outcome::Killed)
        {
            eprintln!(
                "memoria-harness: {} was {:?}; replay with:\n  cargo run -p memoria-gates --bin memoria-harness -- mutants {} --seed {seed}",
                m.file, m.status, m.file
            );
        }
        ExitCode::from(EXIT_FAIL)
    }
}
