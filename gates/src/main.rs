//! `memoria-harness`: run the gates, list them, and prove each can fail with its recorded mutations.
//!
//! Size: over 800 lines because every subcommand's arguments and exit
//! codes are read here in one place; splitting it is issue 29's.
//!
//! Exit codes are fixed: 0 every selected case passed (or every mutation was
//! killed, every expectation held), 1 a gate failed (or a mutation was not
//! killed, an expectation failed), 2 a usage or harness error — including a
//! run of nothing (`sweep --seeds 0`, a selection every case of which is
//! skipped). `conform` (the sibling conformance kit) adds exit 3: the target
//! cannot be reached, printed with its URL and the cause; `fake-control`
//! exits 3 when the fake cannot drive the action; `serve-fake`,
//! `serve-provider` and `demo` exit 0 on Ctrl-C and 2 when they cannot serve. Every run prints its seed;
//! a failure prints the exact command that replays it.
//!
//! Size: over 700 lines: the CLI's subcommands, each with its arguments and
//! exit codes; the logic lives in the library, and what is here is argument
//! handling and printing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};

use memoria_gates::progress::{Mode, Progress};
use memoria_gates::report::{CaseReport, GateReport, RunReport};
use memoria_gates::{Status, conform, mutants, registry, run_case, select};

mod explore_cli;

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

/// `list`'s output formats.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ListFormat {
    Text,
    Json,
    Markdown,
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
        /// Also write the JSON report to this file (one run, two renderings:
        /// CI keeps JUnit for its test view and JSON for the record).
        #[arg(long, value_name = "FILE")]
        json_report: Option<PathBuf>,
    },
    /// List every gate and case with its requirement and spec sections; `--format markdown` prints the gate table the README holds.
    List {
        /// Output format: text, json, or markdown (number, title, case count).
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
        /// Rewrite the generated blocks (`<!-- generated: NAME -->`) of
        /// these Markdown files in place, from the registry, and print nothing else.
        #[arg(long, value_name = "FILE", num_args = 1..)]
        refresh: Vec<PathBuf>,
    },
    /// Replay incident scenarios (`scenarios/*.toml`): print each timeline and check its expectations.
    Replay {
        /// Scenario files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The seed; default the file's own, else 1.
        #[arg(long)]
        seed: Option<u64>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// On a failure, drop events while it persists and print the minimal failing timeline.
        #[arg(long)]
        shrink: bool,
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
    /// Explore: one seed draws a world, a random workload and a swarm of faults, judged by the truth oracle; a failure is shrunk to a scenario file `replay` runs.
    Explore {
        /// One seed (the same as `--seeds 1 --from SEED`).
        #[arg(long, conflicts_with_all = ["seeds", "from"])]
        seed: Option<u64>,
        /// How many seeds.
        #[arg(long, default_value_t = 1)]
        seeds: u64,
        /// The first seed; the run covers `from .. from + seeds`.
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Run only shard K of N (`K/N`, K from 0): every Nth seed of the range from `from + K`.
        #[arg(long, value_name = "K/N")]
        shard: Option<String>,
        /// Where a failing seed's shrunk scenario is written.
        #[arg(long, default_value = "target/explore")]
        out: PathBuf,
        /// Report a failure without shrinking it.
        #[arg(long)]
        no_shrink: bool,
        /// Print each seed's whole timeline.
        #[arg(long)]
        timeline: bool,
    },
    /// Prove a sibling server's S1, S1a, S2 and S3 conform: exit 0 pass, 1 a case failed, 2 usage, 3 the target cannot be reached.
    Conform(Box<ConformArgs>),
    /// Serve the simulator's fake sibling over loopback, seeded from a manifest, with a `/_control` route; prints its URL, tokens and control command.
    ServeFake {
        /// The fixture manifest (default: the shipped one).
        #[arg(long)]
        manifest: Option<PathBuf>,
        /// Where to listen.
        #[arg(long, default_value = "127.0.0.1:0")]
        addr: std::net::SocketAddr,
    },
    /// Serve the stub embedding provider (`POST /v1/embeddings`; deterministic hashed-word vectors, NOT semantic, unless `--model minilm`) over loopback with a `/_control` route for its fault knobs; prints its URL, the sentinel marker and the `fake-control` commands.
    ServeProvider {
        /// Where to listen (loopback only).
        #[arg(long, default_value = "127.0.0.1:0")]
        addr: std::net::SocketAddr,
        /// Answer a real model's vectors instead of hashed words: `minilm`
        /// (all-MiniLM-L6-v2, after `fixtures/corpus/fetch-minilm`).
        #[arg(long, value_enum)]
        model: Option<ModelChoice>,
    },
    /// Measure gate 29's retrieval quality (the Rust book, all-MiniLM-L6-v2, the labelled queries) and print recall@10 and nDCG@10 for lexical, dense and fused, and each query's first relevant rank; exit 1 if it cannot be measured.
    Quality,
    /// Serve memoria with the embedded corpus beside four fake siblings on loopback, left in faults so the page shows every withheld line; prints the URL, the sign-in link and the `fake-control` commands.
    Demo {
        /// Where memoria listens (loopback).
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: std::net::SocketAddr,
        /// AI on, against the stub embedding provider on loopback (NOT
        /// semantic): hybrid ranking, and the loud line when it is down.
        #[arg(long)]
        ai: bool,
        /// With `--ai`: the stub answers a real model's vectors, so the
        /// dense half ranks by meaning: `minilm` (all-MiniLM-L6-v2, after
        /// `fixtures/corpus/fetch-minilm`).
        #[arg(long, value_enum, requires = "ai")]
        model: Option<ModelChoice>,
    },
    /// The control hook for a fake served by `serve-fake`, `serve-provider` or `demo`: `fake-control --url URL <action> [args...]`.
    FakeControl {
        /// The fake's URL, as `serve-fake` printed it.
        #[arg(long)]
        url: String,
        /// For an `https://` fake: a PEM file of a private CA to trust beside Mozilla's roots.
        #[arg(long)]
        ca_file: Option<PathBuf>,
        /// The action and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        action: Vec<String>,
    },
    /// Apply each recorded mutation in a scratch copy, build, run its gate, and require it killed; `mutants convert` turns recorded diffs into item-anchored TOML.
    Mutants(Box<MutantsArgs>),
    /// The gates and recorded mutations that stand on a file (or on any file under a folder), with the items they are anchored to.
    Guards {
        /// A file or folder, relative to the workspace or the current directory.
        path: PathBuf,
        /// The workspace root (default: this binary's own workspace).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Output format (text or json).
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
struct MutantsArgs {
    #[command(subcommand)]
    action: Option<MutantsAction>,
    /// Only mutations that name this gate.
    #[arg(long)]
    gate: Option<String>,
    /// Mutation files; default every `mutants/**/*.toml` and `*.diff`.
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
    /// Workers building side by side, each in its own scratch copy
    /// (default: one per core, at most 4).
    #[arg(long)]
    jobs: Option<usize>,
    /// Build every mutation on its own, skipping the schema build that
    /// holds all the mutations of function bodies at once.
    #[arg(long)]
    no_schema: bool,
    /// Run only shard K of N (`K/N`, K from 0) of the selected mutation
    /// files, sorted by path: the N shards are disjoint and cover them.
    #[arg(long)]
    shard: Option<String>,
    /// No gate: the explorer is the killer. Each mutation of the schema
    /// build runs `explore` on up to this many seeds (from `--seed`, else
    /// 0) and stops at the first that fails; prints a table per gate. A
    /// measurement: exit 0 once it ran, whatever survived.
    #[arg(long, conflicts_with = "no_schema")]
    explore_seeds: Option<u64>,
    /// Output format (text or json with --explore-seeds).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Debug, Subcommand)]
enum MutantsAction {
    /// Convert recorded `*.diff` mutations into item-anchored `*.toml` in their gate's folder, proving each makes the same files as `git apply` of its diff; one that cannot be converted stays a diff with a `kept-as-diff:` line.
    Convert {
        /// Diff files; default every `mutants/**/*.diff` without a `kept-as-diff:` line.
        files: Vec<PathBuf>,
        /// The workspace root (default: this binary's own workspace).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// Convert and prove, but write nothing.
        #[arg(long)]
        check: bool,
    },
    /// Print the diff each mutation makes against the tree as it is now (an item-anchored one's edits made), or why it does not resolve.
    Show {
        /// Mutation files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The workspace root (default: this binary's own workspace).
        #[arg(long)]
        workspace: Option<PathBuf>,
    },
}

// `conform`: the kit's flags (`memoria-kit`'s, exactly), and `--fake`.
#[derive(Debug, clap::Args)]
struct ConformArgs {
    #[command(flatten)]
    kit: conform::cli::Args,
    /// Run against the built-in fake served on loopback, with its control hook and both tokens.
    #[arg(long, conflicts_with_all = ["target", "token", "second_token", "control"])]
    fake: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Conform(args) => conform(*args),
        Cmd::ServeFake { manifest, addr } => serve_fake(manifest.as_deref(), addr),
        Cmd::FakeControl {
            url,
            ca_file,
            action,
        } => fake_control(&url, ca_file.as_deref(), &action),
        Cmd::ServeProvider { addr, model } => serve_provider(addr, model),
        Cmd::Demo { addr, ai, model } => demo(addr, ai, model),
        Cmd::Quality => quality(),
        Cmd::Run {
            selectors,
            skip,
            seed,
            format,
            json_report,
        } => run(
            &selectors,
            &skip,
            seed.unwrap_or_else(rand::random),
            format,
            json_report.as_deref(),
        ),
        Cmd::List { refresh, .. } if !refresh.is_empty() => refresh_docs(&refresh),
        Cmd::List { format, .. } => list(format),
        Cmd::Replay {
            files,
            seed,
            format,
            shrink,
        } => replay(&files, seed, format, shrink),
        Cmd::Sweep {
            selectors,
            skip,
            seeds,
            from,
        } => sweep(&selectors, &skip, from, seeds),
        Cmd::Explore {
            seed,
            seeds,
            from,
            shard,
            out,
            no_shrink,
            timeline,
        } => explore_cli::explore(explore_cli::Args {
            from: seed.unwrap_or(from),
            seeds: if seed.is_some() { 1 } else { seeds },
            shard: shard.as_deref(),
            out: &out,
            shrink: !no_shrink,
            timeline,
        }),
        Cmd::Mutants(mut a) => match a.action.take() {
            Some(MutantsAction::Convert {
                files,
                workspace,
                check,
            }) => convert_mutants(files, workspace, check),
            Some(MutantsAction::Show { files, workspace }) => show_mutants(&files, workspace),
            None => run_mutants(*a),
        },
        Cmd::Guards {
            path,
            workspace,
            format,
        } => guards(&path, workspace, format),
    }
}

/// The workspace a command works on: `--workspace`, else this binary's own,
/// canonical.
///
/// # Errors
/// It does not exist (the message names it).
fn workspace_root(workspace: Option<PathBuf>) -> Result<PathBuf, String> {
    let w = workspace.unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")));
    w.canonicalize()
        .map_err(|e| format!("workspace {}: {e}", w.display()))
}

fn guards(path: &Path, workspace: Option<PathBuf>, format: Format) -> ExitCode {
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let rel = mutants::guards::relative(&workspace, path);
    if !workspace.join(&rel).exists() {
        eprintln!(
            "memoria-harness: {} is no file or folder of the workspace {}",
            rel.display(),
            workspace.display()
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let mut on: Vec<(String, Vec<mutants::guards::Standing>)> =
        mutants::guards::guarding(&mutants::guards::by_gate(&workspace), &rel)
            .into_iter()
            .collect();
    // Gates in their numeric order, then suite 5, the kit and the scenarios.
    on.sort_by_key(|(gate, _)| (gate.parse::<u32>().unwrap_or(u32::MAX), gate.clone()));
    let title = |gate: &str| {
        registry().iter().find(|g| g.id == gate).map_or_else(
            || match gate {
                mutants::CONFORM_GATE => "the conformance kit against a broken fake".to_string(),
                mutants::SCENARIO_GATE => "incident scenarios".to_string(),
                _ => String::new(),
            },
            |g| g.title.to_string(),
        )
    };
    match format {
        Format::Json => {
            let v: Vec<serde_json::Value> = on
                .iter()
                .map(|(gate, ms)| serde_json::json!({"gate": gate, "title": title(gate), "mutations": ms}))
                .collect();
            println!("{}", serde_json::to_string_pretty(&v).expect("serialises"));
        }
        Format::Text | Format::Junit => {
            let n: usize = on.iter().map(|(_, ms)| ms.len()).sum();
            println!(
                "{}: {n} recorded mutation{} of {} gate{} stand on it",
                rel.display(),
                if n == 1 { "" } else { "s" },
                on.len(),
                if on.len() == 1 { "" } else { "s" }
            );
            for (gate, ms) in &on {
                println!(
                    "\ngate {gate} · {} · {} mutation{}",
                    title(gate),
                    ms.len(),
                    if ms.len() == 1 { "" } else { "s" }
                );
                for m in ms {
                    let mut anchors: Vec<&str> = m
                        .anchors
                        .iter()
                        .map(|a| a.split_once(": ").map_or(a.as_str(), |(_, i)| i))
                        .collect();
                    anchors.dedup();
                    if anchors.is_empty() {
                        println!("  {}  (a diff)", m.file);
                    } else {
                        println!("  {}  ({})", m.file, anchors.join("; "));
                    }
                }
            }
        }
    }
    ExitCode::SUCCESS
}

fn show_mutants(files: &[PathBuf], workspace: Option<PathBuf>) -> ExitCode {
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut failed = false;
    for f in files {
        let made = std::fs::read_to_string(f)
            .map_err(|e| format!("{}: {e}", f.display()))
            .and_then(|t| mutants::parse(f, &t))
            .and_then(|mut m| m.resolve(&workspace).map(|()| m));
        match made {
            Ok(m) => print!("# {}: {}\n{}", f.display(), m.breaks, m.diff),
            Err(e) => {
                failed = true;
                eprintln!("memoria-harness: {}: {e}", f.display());
            }
        }
    }
    if failed {
        ExitCode::from(EXIT_FAIL)
    } else {
        ExitCode::SUCCESS
    }
}

fn convert_mutants(files: Vec<PathBuf>, workspace: Option<PathBuf>, check: bool) -> ExitCode {
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let dir = workspace.join("mutants");
    let files: Vec<PathBuf> = if files.is_empty() {
        mutants::discover(&dir)
            .into_iter()
            .filter(|f| f.extension().is_some_and(|x| x == "diff"))
            .filter(|f| {
                std::fs::read_to_string(f)
                    .is_ok_and(|t| !t.lines().any(|l| l.starts_with("kept-as-diff:")))
            })
            .collect()
    } else {
        files
    };
    let (mut converted, mut kept, mut failed) = (0, 0, 0);
    let mut why_kept: std::collections::BTreeMap<String, usize> = Default::default();
    for f in &files {
        match mutants::convert::convert(&workspace, &dir, f) {
            Ok(c) => {
                let to =
                    c.to.strip_prefix(&workspace)
                        .unwrap_or(&c.to)
                        .display()
                        .to_string();
                match &c.kept {
                    None => {
                        converted += 1;
                        println!(
                            "{} -> {to}: the same files as its diff ({})",
                            f.display(),
                            c.anchors.join("; ")
                        );
                    }
                    Some(why) => {
                        kept += 1;
                        *why_kept.entry(why.clone()).or_default() += 1;
                        println!("{} -> {to}: kept as a diff: {why}", f.display());
                    }
                }
                if !check {
                    let written =
                        c.to.parent()
                            .map_or(Ok(()), std::fs::create_dir_all)
                            .and_then(|()| std::fs::write(&c.to, &c.text))
                            .and_then(|()| {
                                let same = std::fs::canonicalize(f).ok()
                                    == std::fs::canonicalize(&c.to).ok();
                                if same {
                                    Ok(())
                                } else {
                                    std::fs::remove_file(f)
                                }
                            });
                    if let Err(e) = written {
                        eprintln!("memoria-harness: writing {to}: {e}");
                        return ExitCode::from(EXIT_USAGE);
                    }
                }
            }
            Err(e) => {
                failed += 1;
                println!("{}: not converted: {e}", f.display());
            }
        }
    }
    println!(
        "{converted} converted to item-anchored TOML, {kept} kept as diffs, {failed} not converted{}",
        if check {
            " (--check: nothing written)"
        } else {
            ""
        }
    );
    for (why, n) in why_kept {
        println!("  kept: {n} × {why}");
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAIL)
    }
}

/// `s` as one POSIX shell word (`shlex`), for the replay commands a failure
/// prints: a glob (`g05/*`), a space or a quote comes back quoted. A NUL,
/// which no argument or path can hold, is the one thing shlex refuses; such
/// a string is printed as it is.
fn shell_quote(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| s.to_owned(), std::borrow::Cow::into_owned)
}

fn replay(files: &[PathBuf], seed: Option<u64>, format: Format, shrink: bool) -> ExitCode {
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
                        Format::Text => println!(
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
                            print!("{}", original.render_text());
                            println!(
                                "shrunk timeline: {} of {} events (the same expectation still fails without the others)",
                                minimal.events.len(),
                                s.events.len()
                            );
                            for (i, d) in kept.iter().zip(&details) {
                                println!("  #{i:<3} {d}");
                            }
                            println!("replay of the shrunk timeline (seed {}):", replay.seed);
                            print!("{}", replay.render_timeline());
                            println!();
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
                    print!("{}", r.render_text());
                    println!();
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
        println!(
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

fn sweep(selectors: &[String], skip: &[String], from: u64, seeds: u64) -> ExitCode {
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
                println!(
                    "FAIL  {} seed {seed}\n  {f}\n  replay: cargo run -p memoria-gates --bin memoria-harness -- run {} --seed {seed}",
                    c.id, c.id
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

fn run(
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

/// A finished case's progress line: `pass 1/database-and-wal (0.3 s)`.
fn unit_line(status: &Status, id: &str, ms: u64) -> String {
    let verdict = match status {
        Status::Pass => "pass",
        Status::Fail(_) => "FAIL",
    };
    format!("{verdict} {id} ({:.1} s)", ms as f64 / 1000.0)
}

/// `list --refresh`: each file's generated blocks rewritten from the
/// registry; exit 2 naming the file on an I/O error or a malformed block.
fn refresh_docs(files: &[PathBuf]) -> ExitCode {
    for f in files {
        let refreshed = std::fs::read_to_string(f)
            .map_err(|e| format!("reading {}: {e}", f.display()))
            .and_then(|t| {
                memoria_gates::listing::refresh(&t)
                    .map(|r| (t, r))
                    .map_err(|e| format!("{}: {e}", f.display()))
            })
            .and_then(|(before, after)| {
                if before == after {
                    return Ok(false);
                }
                std::fs::write(f, after)
                    .map(|()| true)
                    .map_err(|e| format!("writing {}: {e}", f.display()))
            });
        match refreshed {
            Ok(changed) => eprintln!(
                "memoria-harness: {} {}",
                f.display(),
                if changed {
                    "refreshed"
                } else {
                    "already current"
                }
            ),
            Err(e) => {
                eprintln!("memoria-harness: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    ExitCode::SUCCESS
}

fn list(format: ListFormat) -> ExitCode {
    let recorded = workspace_root(None)
        .map(|w| mutants::guards::by_gate(&w))
        .unwrap_or_default();
    let of = |id: &str| recorded.get(id).map(Vec::as_slice).unwrap_or_default();
    match format {
        ListFormat::Markdown => print!("{}", memoria_gates::listing::gates_markdown()),
        ListFormat::Json => {
            let v: Vec<serde_json::Value> = registry()
                .iter()
                .map(|g| {
                    serde_json::json!({
                        "id": g.id,
                        "title": g.title,
                        "gates_md": g.gates_md,
                        "sections": g.sections,
                        "requirement": g.requirement,
                        "cases": g.cases.iter().map(|c| serde_json::json!({"id": c.id, "desc": c.desc})).collect::<Vec<_>>(),
                        "mutations": of(g.id).len(),
                        "guards": mutants::guards::files_of(of(g.id)),
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&v).expect("list serialises")
            );
        }
        ListFormat::Text => {
            for g in registry() {
                println!("gate {} · {} · {}", g.id, g.title, g.sections.join(" "));
                for row in g.gates_md {
                    println!("  GATES.md: {row}");
                }
                println!("  requirement: {}", g.requirement);
                let ms = of(g.id);
                println!(
                    "  mutations: {} touching {}",
                    ms.len(),
                    mutants::guards::files_of(ms).join(", ")
                );
                for c in g.cases {
                    println!("  {:<36} {}", c.id, c.desc);
                }
                println!();
            }
            for (gate, what) in [
                (mutants::CONFORM_GATE, "the conformance kit's broken fakes"),
                (mutants::SCENARIO_GATE, "the incident scenarios"),
            ] {
                let ms = of(gate);
                println!(
                    "{what} ({gate}): {} mutations touching {}",
                    ms.len(),
                    mutants::guards::files_of(ms).join(", ")
                );
            }
        }
    }
    ExitCode::SUCCESS
}

fn run_mutants(a: MutantsArgs) -> ExitCode {
    let MutantsArgs {
        gate,
        files,
        workspace,
        seed,
        timeout,
        jobs,
        no_schema,
        shard,
        explore_seeds,
        format,
        ..
    } = a;
    if jobs == Some(0) {
        eprintln!("memoria-harness: --jobs 0 runs nothing; give at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    if explore_seeds == Some(0) {
        eprintln!("memoria-harness: --explore-seeds 0 runs nothing; give at least 1");
        return ExitCode::from(EXIT_USAGE);
    }
    let shard = match shard.as_deref().map(parse_shard) {
        None => None,
        Some(Some(kn)) => Some(kn),
        Some(None) => {
            eprintln!("memoria-harness: --shard takes K/N with K < N, e.g. 0/4");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
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
    if let Some((k, n)) = shard {
        files = mutants::shard(files, k, n);
    }
    if files.is_empty() {
        eprintln!("memoria-harness: no recorded mutation selected");
        return ExitCode::from(EXIT_USAGE);
    }
    let opts = mutants::Options {
        workspace,
        files,
        seed: seed.unwrap_or_default(),
        run_timeout: Duration::from_secs(timeout),
        progress: true,
        jobs: jobs.unwrap_or_else(mutants::default_jobs),
        schema: !no_schema,
    };
    if let Some(k) = explore_seeds {
        return explore_mutants(&opts, seed.unwrap_or(0), k, format);
    }
    let seed = seed.unwrap_or_else(rand::random);
    let opts = mutants::Options { seed, ..opts };
    let files = &opts.files;
    eprintln!("memoria-harness: seed {seed}, {} mutations", files.len());
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
                m.file,
                m.status,
                shell_quote(&m.file)
            );
        }
        ExitCode::from(EXIT_FAIL)
    }
}

/// `K/N` with K < N.
fn parse_shard(s: &str) -> Option<(usize, usize)> {
    let (k, n) = s.split_once('/')?;
    let (k, n): (usize, usize) = (k.parse().ok()?, n.parse().ok()?);
    (n > 0 && k < n).then_some((k, n))
}

/// `mutants --explore-seeds K`: the explorer as the killer, `k` seeds from
/// `from`; a table per gate as text (JUnit reads as text) or JSON.
fn explore_mutants(opts: &mutants::Options, from: u64, k: u64, format: Format) -> ExitCode {
    eprintln!(
        "memoria-harness: explorer seeds {from}..{} over {} mutations, no gate",
        from + k,
        opts.files.len()
    );
    let run = match mutants::explore_kill::run(opts, from, k) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    match format {
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&run).expect("serialises")
        ),
        Format::Text | Format::Junit => print!("{}", run.to_text()),
    }
    ExitCode::SUCCESS
}

/// `conform`: the kit's own command line, with `--fake` serving the
/// simulator's fake sibling on loopback for the run's duration.
fn conform(args: ConformArgs) -> ExitCode {
    let fake = conform::cli::Fake {
        asked: args.fake,
        start: &serve_fake_for_conform,
    };
    conform::cli::main("memoria-harness conform", args.kit, Some(fake))
}

/// The fake seeded from `manifest` on an ephemeral loopback port, its
/// control hook this executable's `fake-control`, and both its tokens.
fn serve_fake_for_conform(
    manifest: &conform::manifest::Manifest,
) -> Result<conform::cli::StandIn, String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("a runtime for the fake: {e}"))?;
    let served = rt.block_on(conform::fake::serve(manifest, ([127, 0, 0, 1], 0).into()))?;
    let exe = std::env::current_exe()
        .map_err(|e| format!("this executable's path: {e}"))?
        .display()
        .to_string();
    let hook = conform::control::Hook::from_argv(vec![
        exe,
        "fake-control".into(),
        "--url".into(),
        served.url.clone(),
    ]);
    Ok(conform::cli::StandIn {
        url: served.url,
        token: conform::fake::FAKE_TOKEN.to_owned(),
        second_token: Some(conform::fake::FAKE_SECOND_TOKEN.to_owned()),
        hook,
        keep: Box::new(rt),
    })
}

fn serve_fake(manifest: Option<&std::path::Path>, addr: std::net::SocketAddr) -> ExitCode {
    let manifest = match conform::cli::load_manifest(manifest) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("memoria-harness serve-fake: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("memoria-harness serve-fake: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    rt.block_on(async move {
        let served = match conform::fake::serve(&manifest, addr).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("memoria-harness serve-fake: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "memoria-harness".into());
        println!("url {}", served.url);
        println!("token {}", conform::fake::FAKE_TOKEN);
        println!("second-token {}", conform::fake::FAKE_SECOND_TOKEN);
        println!("control {exe} fake-control --url {}", served.url);
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}

/// `memoria-harness quality`: gate 29's measurement, printed whole.
fn quality() -> ExitCode {
    match memoria_gates::quality::measure() {
        Ok(q) => {
            print!("{}", q.table());
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("memoria-harness: gate 29 cannot measure: {f}");
            ExitCode::from(1)
        }
    }
}

/// A real model the stub can answer with (`--model`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ModelChoice {
    /// all-MiniLM-L6-v2, as `fixtures/corpus/fetch-minilm` brings it.
    Minilm,
}

/// Starts `choice`'s model from this workspace's fixtures.
fn start_model(
    choice: Option<ModelChoice>,
) -> Result<Option<memoria_simulator::ModelEmbedder>, String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match choice {
        None => Ok(None),
        Some(ModelChoice::Minilm) => memoria_simulator::ModelEmbedder::start(&root)
            .map(Some)
            .map_err(|e| e.to_string()),
    }
}

fn serve_provider(addr: std::net::SocketAddr, model: Option<ModelChoice>) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("memoria-harness serve-provider: {msg}");
        ExitCode::from(EXIT_USAGE)
    };
    let model = match start_model(model) {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    if !addr.ip().is_loopback() {
        return usage(format!(
            "{addr} is not a loopback address; the stub provider binds loopback only"
        ));
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return usage(format!("a runtime: {e}")),
    };
    rt.block_on(async move {
        let stub = match model {
            Some(m) => memoria_simulator::StubProvider::new().with_model(m),
            None => memoria_simulator::StubProvider::new(),
        };
        let (local, _served) = match memoria_simulator::serve_loopback(stub.router(), addr).await
        {
            Ok(s) => s,
            Err(e) => return usage(format!("cannot listen on {addr}: {e}")),
        };
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "memoria-harness".into());
        let url = format!("http://{local}");
        println!("url {url}");
        println!("path {}", memoria_simulator::STUB_EMBED_PATH);
        println!("model {}", memoria::EMBED_MODEL);
        println!("chat-path {}", memoria_simulator::STUB_CHAT_PATH);
        println!(
            "chat-models {} {}",
            memoria::MODEL_CHEAP,
            memoria::MODEL_FRONTIER
        );
        println!("sentinel-marker {}", memoria_simulator::SENTINEL_MARKER);
        println!(
            "note: vectors are deterministic hashed word features (texts sharing words score higher); they are NOT semantic"
        );
        for (action, what) in memoria_simulator::PROVIDER_ACTIONS {
            println!("control {exe} fake-control --url {url} {action}    # {what}");
        }
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}

fn demo(addr: std::net::SocketAddr, ai: bool, model: Option<ModelChoice>) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("memoria-harness demo: {msg}");
        ExitCode::from(EXIT_USAGE)
    };
    let model = match start_model(model) {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    if !addr.ip().is_loopback() {
        return usage(format!(
            "{addr} is not a loopback address; the demo binds loopback only"
        ));
    }
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => return usage(format!("a runtime: {e}")),
    };
    rt.block_on(async move {
        let demo = match memoria_gates::demo::start_with_model(addr, true, ai, model).await {
            Ok(d) => d,
            Err(e) => return usage(e),
        };
        let exe = std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| "memoria-harness".into());
        println!(
            "demo: memoria with the embedded Almendra Studio corpus and {} fake siblings, on {}",
            demo.siblings.len(),
            demo.url
        );
        let egress = if ai {
            memoria::EgressMode::AiOn
        } else {
            memoria::EgressMode::AiOff
        };
        println!("demo: egress: {}", egress.footer());
        demo.deliver_sign_in_links();
        print!("{}", demo.instructions(&exe));
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}

fn fake_control(url: &str, ca_file: Option<&Path>, action: &[String]) -> ExitCode {
    let cannot = ExitCode::from(conform::control::CONTROL_EXIT_CANNOT as u8);
    let target = match conform::client::Target::parse(url) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("memoria-harness fake-control: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let (name, args) = action.split_first().expect("clap requires an action");
    let body = serde_json::to_vec(&serde_json::json!({"action": name, "args": args}))
        .expect("JSON serialises");
    let trust = match ca_file.map(conform::TlsTrust::from_ca_file) {
        None => conform::TlsTrust::public(),
        Some(Ok(trust)) => trust,
        Some(Err(e)) => {
            eprintln!("memoria-harness fake-control: --ca-file: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let client = conform::client::Client::new(target, false).with_trust(trust);
    match client.post(
        memoria_simulator::CONTROL_PATH,
        body,
        conform::client::Auth::Missing,
    ) {
        Ok(r) if r.status == 200 => {
            let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
            if let Some(value) = v["value"].as_str() {
                println!("{value}");
            }
            ExitCode::SUCCESS
        }
        Ok(r) if r.status == 404 => {
            eprintln!("memoria-harness fake-control: the fake cannot drive {name}");
            cannot
        }
        Ok(r) => {
            eprintln!(
                "memoria-harness fake-control: {name} refused with status {}",
                r.status
            );
            ExitCode::from(EXIT_FAIL)
        }
        Err(e) => {
            eprintln!("memoria-harness fake-control: {e}");
            ExitCode::from(EXIT_FAIL)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replay_selector_is_quoted_only_when_the_shell_would_change_it() {
        assert_eq!(shell_quote("g05"), "g05");
        assert_eq!(shell_quote("mutants/g05-a.diff"), "mutants/g05-a.diff");
        assert_eq!(shell_quote("g05/*"), "'g05/*'");
        assert_eq!(shell_quote("g05/?"), "'g05/?'", "? globs too");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote(""), "''");
        let quoted = shell_quote("it's $HOME");
        assert_eq!(shlex::split(&quoted), Some(vec!["it's $HOME".to_owned()]));
    }
}
