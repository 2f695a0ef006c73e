//! `memoria-harness`: run the gates, list them, and prove each can fail with its recorded mutations.
//!
//! This file is the arguments and the dispatch; each subcommand's body is
//! its own module under `cli/`.
//!
//! Exit codes are fixed: 0 every selected case passed (or every mutation was
//! killed, every expectation held), 1 a gate failed (or a mutation was not
//! killed, an expectation failed), 2 a usage or harness error — including a
//! run of nothing (`sweep --seeds 0`, a selection every case of which is
//! skipped). `conform` (the sibling conformance kit) adds exit 3: the target
//! cannot be reached, printed with its URL and the cause; `fake-control`
//! exits 3 when the fake cannot drive the action; `serve-fake`,
//! `serve-provider` and `demo` exit 0 on Ctrl-C and 2 when they cannot serve. Every run prints its seed;
//! a failure prints the exact command that replays it. A closed stdout
//! (`memoria-harness guards PATH | head`) ends any of them quietly with
//! exit 0.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use memoria_gates::{conform, mutants};

mod cli;

use cli::ModelChoice;

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
    match Cli::parse().command {
        Cmd::Conform(args) => cli::conform::conform(*args),
        Cmd::ServeFake { manifest, addr } => cli::serve_fake::serve_fake(manifest.as_deref(), addr),
        Cmd::FakeControl {
            url,
            ca_file,
            action,
        } => cli::fake_control::fake_control(&url, ca_file.as_deref(), &action),
        Cmd::ServeProvider { addr, model } => cli::serve_provider::serve_provider(addr, model),
        Cmd::Demo { addr, ai, model } => cli::demo::demo(addr, ai, model),
        Cmd::Quality => cli::quality::quality(),
        Cmd::Run {
            selectors,
            skip,
            seed,
            format,
            json_report,
        } => cli::run::run(
            &selectors,
            &skip,
            seed.unwrap_or_else(rand::random),
            format,
            json_report.as_deref(),
        ),
        Cmd::List { refresh, .. } if !refresh.is_empty() => cli::list::refresh_docs(&refresh),
        Cmd::List { format, .. } => cli::list::list(format),
        Cmd::Replay {
            files,
            seed,
            format,
            shrink,
        } => cli::replay::replay(&files, seed, format, shrink),
        Cmd::Sweep {
            selectors,
            skip,
            seeds,
            from,
        } => cli::sweep::sweep(&selectors, &skip, from, seeds),
        Cmd::Explore {
            seed,
            seeds,
            from,
            shard,
            out,
            no_shrink,
            timeline,
        } => cli::explore::explore(cli::explore::Args {
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
            }) => cli::mutants::convert_mutants(files, workspace, check),
            Some(MutantsAction::Show { files, workspace }) => {
                cli::mutants::show_mutants(&files, workspace)
            }
            None => cli::mutants::run_mutants(*a),
        },
        Cmd::Guards {
            path,
            workspace,
            format,
        } => cli::guards::guards(&path, workspace, format),
    }
}
