//! The recorded-mutation runner: applies each recorded mutation under `mutants/` to a scratch copy of the workspace, builds the harness there and judges whether its named gate turned red.
//!
//! Size: over 800 lines because the runner's order, its scratch
//! workspaces, its baselines and its judging of one mutation share the
//! `Options` and the report they fill; the schema build and the scratch
//! copy are already apart (`schema_run.rs`, `scratch.rs`).
//!
//! Its own crate (issue 29, "One job per crate"): it depends on no crate of
//! the workspace. It runs `memoria-harness` as a child and reads the JSON
//! reports it prints by their shape ([`judge`]); the conformance kit's case
//! ids come from the caller ([`Options::conform_cases`]). `memoria-gates`
//! depends on it and keeps the `mutants` and `guards` subcommands
//! (`gates/src/cli/mutants.rs`), the JUnit rendering and the check of a
//! `conform:` line when a file is parsed (`gates/src/mutants.rs`).
//!
//! Size: about 850 lines: the runner's options, the driver both modes (a
//! gate as the killer, and the explorer's `--explore-seeds`) share, and the
//! report types; the schema pass, the scratch copies, the explorer mode and
//! the judging each have their own file.
//!
//! A recorded mutation is a real change to the code under test, never to a
//! gate. Most are item-anchored TOML in their gate's folder
//! (`mutants/<gNN>/*.toml`): edits named by file and item, made into a diff
//! at run time, so code motion does not re-record them (the format is in
//! `edits.rs`). The rest, which add an item or change a signature, stay raw
//! diffs: a header of `key: value` lines, then a unified diff in `git diff`
//! form (`--- a/path`, `+++ b/path`), the shape cargo-mutants' `diff/`
//! output has:
//!
//! ```text
//! gate: 26
//! case: 26/second-dek-different-id
//! author: adversary
//! breaks: external_id reverts to a bare SHA-256 of the body
//!
//! --- a/reference/src/store.rs
//! +++ b/reference/src/store.rs
//! @@ ...
//! ```
//!
//! A mutation of the conformance kit's fake sibling says `gate: conform`
//! and names, on a `conform:` line, the case ids that must fail (space
//! separated). The runner then runs `memoria-harness conform --fake
//! --strict` against the mutated fake and requires EXACTLY those cases to
//! fail: more or fewer is `imprecise`.
//!
//! A mutation that an incident scenario must catch says `gate: scenario`
//! and names the file on a `scenario:` line (`scenarios/<name>.toml`). The
//! runner replays that scenario (`memoria-harness replay FILE`, at the seed
//! the file records) against the mutated build and requires one of its
//! checks to fail.
//!
//! [`run`] makes one scratch copy of the workspace per worker
//! (`target/mutants/work`, `work-2`, …, each with its own target directory
//! `target/mutants/target`, `target-2`, …), checks that the selected gates
//! pass unmutated there (a gate already red kills nothing), then hands the
//! mutations out to the workers one at a time: a worker applies the diff in
//! its copy, builds the harness, runs the named gate or case, and reverses
//! the diff.
//!
//! One mutation costs one rebuild of the crates it touches and of those
//! above them, a link, and a gate run. A rebuild is mostly one crate after
//! another (`memoria`, `memoria-simulator`, `memoria-gates`, the binary),
//! about one core's work, so on a machine of N cores N workers build side by
//! side ([`default_jobs`]). The runner keeps each build small: the scratch
//! build is always incremental and carries no debug info
//! ([`SCRATCH_BUILD_ENV`]), whatever the caller exported (CI exports
//! `CARGO_INCREMENTAL=0`, which made every mutation a full rebuild of
//! `memoria`, `memoria-simulator` and `memoria-gates`); mutations are handed
//! out grouped by the crates and files they touch, so a worker's consecutive
//! ones rebuild the same crates; and gate runs keep their temporary
//! directories on tmpfs ([`GATE_TMP_PARENT`]), where the reference's fsyncs
//! cost nothing. A cold scratch target directory is first seeded with the
//! dependency units the caller's own target directory holds for the
//! harness, so the cold build compiles only the workspace's crates.
//! `benches/RESULTS.md` records what each of these saved.
//!
//! Outcomes: `killed` (required), `survived`, `stale` (the diff no longer
//! applies), `unviable` (it does not compile), `timeout`, `imprecise` (a
//! conformance mutation failed other cases than the named ones), or
//! `invalid` (the header is incomplete, the diff touches a gate or a
//! mutation file, or the harness errored instead of giving a verdict).
//!
//! The parts: [`parse`] reads a file, `scratch` makes and drives the copies,
//! [`judge`] reads a run's report back by its shape and gives the verdict, and
//! [`report`] renders the run.

#![deny(missing_docs)]

pub mod anchor;
pub mod change;
pub mod consts;
pub mod convert;
pub mod edits;
pub mod explore_kill;
pub mod guards;
pub mod judge;
pub mod parse;
mod progress;
pub mod report;
pub mod schema;
mod schema_run;
mod scratch;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub use parse::{Author, Mutation, discover, parse};
pub use report::{MutantReport, MutantsRun, Outcome};

use judge::{conform_failures, failed_cases, judge_conform, judge_gate, judge_scenario};
use report::{median_ms, secs};
use scratch::{
    BuildError, BuildErrorKind, Ended, Scratch, caller_target_dir, copy_workspace,
    dependency_units, gate_tmp_parent, git_apply, seed_units,
};

/// Wall-time limit for one gate run inside a mutation, in seconds.
pub const MUTANT_RUN_TIMEOUT_S: u64 = 300;
/// Wall-time limit for one build, in seconds (the first, cold build included).
pub const MUTANT_BUILD_TIMEOUT_S: u64 = 1800;
/// Environment of every scratch build, over the caller's. Incremental
/// compilation, because each mutation rebuilds the same few workspace crates
/// again (CI's `CARGO_INCREMENTAL=0` made that a full rebuild: 36 s against
/// 7 s, `benches/RESULTS.md`); no debug info in the workspace's crates (the
/// dependencies have none in the dev profile already), because nothing reads
/// a mutant's backtrace and it halves the binary the linker writes.
pub const SCRATCH_BUILD_ENV: &[(&str, &str)] =
    &[("CARGO_INCREMENTAL", "1"), ("CARGO_PROFILE_DEV_DEBUG", "0")];
/// Variables every scratch build runs without, whatever the caller
/// exported: a rustc wrapper for the workspace's crates. CI builds the
/// workspace once with `clippy-driver` as that wrapper, so the lints and the
/// test build are one compile (`.ci/run`); a mutation is not linted, and a
/// lint (an unreachable line after an early `return`) must not make it
/// `unviable`. The dependencies' units do not see the wrapper, so seeding
/// from the caller's target directory still matches them.
pub const SCRATCH_BUILD_ENV_REMOVED: &[&str] = &["RUSTC_WORKSPACE_WRAPPER", "CLIPPY_ARGS"];
/// The most workers [`default_jobs`] picks, whatever the core count: each
/// holds a scratch target directory of about 2 GB and a rustc of up to
/// about 1.5 GB resident.
pub const MUTANT_JOBS_MAX: usize = 4;
/// Hex digits of the metadata hash cargo appends to a unit's file and
/// directory names (`libtokio-c457ceb72c8bfb5d.rlib`): 64 bits.
pub(crate) const UNIT_HASH_HEX_LEN: usize = 16;
/// Where gate runs inside a mutation keep their temporary directories:
/// Linux's tmpfs, so the reference's fsyncs return at once. On this VM's disk
/// they made gates 7, 8 and 27 take 4 to 6 s against under 0.5 s here
/// (`benches/RESULTS.md`). If it is not a writable directory, the system's
/// temporary directory is used and the runner says so.
pub const GATE_TMP_PARENT: &str = "/dev/shm";
/// The `gate:` value of a conformance-kit mutation: it runs `conform --fake --strict`.
pub const CONFORM_GATE: &str = "conform";
/// The `gate:` value of a scenario mutation: it replays the `scenario:` file.
pub const SCENARIO_GATE: &str = "scenario";
/// Paths a mutation may never touch: the gates, the incident scenarios (which
/// are gates too) and the recorded set.
pub const FORBIDDEN_PREFIXES: &[&str] = &["gates/", "mutants/", "scenarios/"];

/// Options for [`run`].
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Mutation files to run.
    pub files: Vec<PathBuf>,
    /// Seed passed to every gate run.
    pub seed: u64,
    /// Per-run timeout.
    pub run_timeout: Duration,
    /// Print progress lines to stderr.
    pub progress: bool,
    /// Workers, each with its own scratch copy, building side by side (at
    /// least one; never more than there are mutations).
    pub jobs: usize,
    /// Fold the mutations that rewrite only function bodies into one schema
    /// build first (`schema.rs`); false builds every mutation on its own.
    pub schema: bool,
    /// The conformance kit's case ids, which a `conform:` line names from
    /// ([`Mutation::check_conform_cases`]); the caller's, since the runner
    /// does not build the kit.
    pub conform_cases: Vec<String>,
}

/// Every mutation file of a run, workspace-relative, with its parse (or why
/// it does not parse or resolve).
type Read = Vec<(String, Result<Mutation, String>)>;

/// Workers for a machine: one per core the process may use, at most
/// [`MUTANT_JOBS_MAX`]; one if the count cannot be read.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(MUTANT_JOBS_MAX)
}

/// Shard `k` of `n` (`--shard K/N`, K from 0) of a run's mutation files:
/// sorted by path, every Nth from the Kth, so the N shards are disjoint and
/// together hold every file, whatever order they were given in (as
/// cargo-mutants' `--shard` and nextest's `--partition`).
///
/// # Panics
/// `k >= n`: the caller checks the shard first.
pub fn shard(mut files: Vec<PathBuf>, k: usize, n: usize) -> Vec<PathBuf> {
    assert!(k < n, "shard {k}/{n}");
    files.sort();
    files.dedup();
    files
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % n == k)
        .map(|(_, f)| f)
        .collect()
}

/// Groups mutations so that consecutive ones rebuild the same crates: by the
/// top-level folders (crates) they touch, then by the files, then by name.
/// A restored file is newer than the last build, so the build after a
/// mutation of `simulator/` that follows one of `reference/` rebuilds
/// `memoria` too.
fn run_order(parsed: &[(String, Result<Mutation, String>)]) -> Vec<usize> {
    let key = |i: usize| {
        let touches = parsed[i]
            .1
            .as_ref()
            .map(|m| m.touches.clone())
            .unwrap_or_default();
        let mut crates: Vec<String> = touches
            .iter()
            .map(|t| t.split('/').next().unwrap_or_default().to_string())
            .collect();
        crates.sort();
        crates.dedup();
        let mut files = touches;
        files.sort();
        (crates, files, parsed[i].0.clone())
    };
    let mut order: Vec<usize> = (0..parsed.len()).collect();
    order.sort_by_cached_key(|&i| key(i));
    order
}

/// The scratch directory name of worker `k` (0-based): `work`, `work-2`, …
fn worker_dir(base: &str, k: usize) -> String {
    if k == 0 {
        base.to_string()
    } else {
        format!("{base}-{}", k + 1)
    }
}

/// What a run says as it goes, as `mutants: …` progress lines, if
/// [`Options::progress`] asks for them.
fn sayer(opts: &Options) -> impl Fn(String) + Sync + '_ {
    move |s: String| {
        if opts.progress {
            progress::line(&format!("mutants: {s}"));
        }
    }
}

/// The scratch copies (one per worker, each with a seeded target
/// directory), every mutation file of `opts` read and resolved against
/// the first copy, with its workspace-relative name, and the progress bar
/// over them (none unless [`Options::progress`]).
///
/// # Errors
/// A scratch copy cannot be made or a mutation file cannot be read.
fn prepare(
    opts: &Options,
    say: &(dyn Fn(String) + Sync),
) -> Result<(Vec<Scratch>, Read, Option<progress::BarGuard>), String> {
    let root = opts.workspace.join("target").join("mutants");
    let tmp = gate_tmp_parent();
    let jobs = opts.jobs.clamp(1, opts.files.len().max(1));
    let scratches: Vec<Scratch> = (0..jobs)
        .map(|k| Scratch {
            work: root.join(worker_dir("work", k)),
            target: root.join(worker_dir("target", k)),
            tmp: tmp.clone(),
        })
        .collect();
    let caller_target = caller_target_dir(&opts.workspace);
    say(format!(
        "{jobs} worker{}, scratch copies {} (each with its own target directory beside it, never the caller's {}: a mutant must not land there)",
        if jobs == 1 { "" } else { "s" },
        scratches
            .iter()
            .map(|s| s.work.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        caller_target.display()
    ));
    say(match &tmp {
        Some(t) => format!(
            "gate runs keep their temporary directories in {}",
            t.display()
        ),
        None => format!(
            "{GATE_TMP_PARENT} is not writable: gate runs use the system's temporary directory, and every fsync reaches the disk"
        ),
    });
    for s in &scratches {
        copy_workspace(&opts.workspace, &s.work)?;
    }
    let mut parsed = Vec::new();
    for f in &opts.files {
        let rel = f
            .strip_prefix(&opts.workspace)
            .unwrap_or(f)
            .display()
            .to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        // An item-anchored mutation becomes a diff against the scratch
        // copy just made: the tree as it is now, wherever its items moved.
        let m = parse(f, &text).and_then(|mut m| {
            m.check_conform_cases(&opts.conform_cases)?;
            m.resolve(&scratches[0].work)?;
            Ok(m)
        });
        parsed.push((rel, m));
    }
    if scratches
        .iter()
        .any(|s| !s.target.join("debug").join(".fingerprint").is_dir())
    {
        let t_seed = Instant::now();
        say(format!(
            "a scratch target directory is cold: listing the dependency units {} holds for the harness, to copy them (cargo build --message-format=json there, which first builds the harness there if it is not fresh)",
            caller_target.display()
        ));
        let units = dependency_units(&opts.workspace, &caller_target)?;
        say(format!(
            "{} dependency units to copy into each cold scratch target directory (listed in {})",
            units.len(),
            secs(t_seed.elapsed().as_millis() as u64)
        ));
        for s in &scratches {
            let step =
                progress::Step::new(&format!("seeding {}", s.target.display()), 0, "entries");
            let seeded = seed_units(&caller_target, &s.target, &units, &step);
            step.done();
            match seeded {
                Ok(0) => {}
                Ok(bytes) => say(format!(
                    "seeded {} with {} dependency units ({} MB) from {} in {}",
                    s.target.display(),
                    units.len(),
                    bytes / 1_000_000,
                    caller_target.join("debug").display(),
                    secs(t_seed.elapsed().as_millis() as u64)
                )),
                Err(e) => {
                    // A half-copied unit could look fresh: start this scratch cold instead.
                    let _ = std::fs::remove_dir_all(s.target.join("debug"));
                    say(format!(
                        "seeding {} failed ({e}); its cold build compiles everything",
                        s.target.display()
                    ));
                }
            }
        }
    }
    let bar = opts.progress.then(|| progress::start(parsed.len()));
    Ok((scratches, parsed, bar))
}

/// Runs every mutation in `opts.files` on [`Options::jobs`] workers, handed
/// out in [`run_order`]; the report lists them in the order given.
///
/// # Errors
/// A message if a scratch copy cannot be made, the unmutated build fails,
/// a selected gate is already red without any mutation, or a diff cannot
/// be reversed in its scratch copy (every later mutation there would meet
/// a mixed tree).
pub fn run(opts: &Options) -> Result<MutantsRun, String> {
    let began = Instant::now();
    let say = sayer(opts);
    let (scratches, parsed, _bar) = prepare(opts, &say)?;
    let jobs = scratches.len();
    let t_schema = Instant::now();
    let (schema_reports, leftover) = if opts.schema {
        schema_run::pass(&scratches, &parsed, opts, &say)?
    } else {
        (Vec::new(), (0..parsed.len()).collect())
    };
    let schema_ms = if opts.schema {
        t_schema.elapsed().as_millis() as u64
    } else {
        0
    };
    let schema_killed = schema_reports.len();
    let t_mutants = Instant::now();
    let mut reports: Vec<(usize, MutantReport)> = schema_reports;
    if !leftover.is_empty() {
        reports.extend(build_each(&scratches, &parsed, &leftover, opts, &say)?);
    }
    let mutation_wall_ms = t_mutants.elapsed().as_millis() as u64;
    reports.sort_by_key(|(i, _)| *i);
    let reports: Vec<MutantReport> = reports.into_iter().map(|(_, r)| r).collect();
    let mut summary = std::collections::BTreeMap::new();
    for r in &reports {
        *summary
            .entry(format!("{:?}", r.status).to_lowercase())
            .or_insert(0) += 1;
    }
    let ran: Vec<&MutantReport> = reports
        .iter()
        .filter(|r| r.build_ms > 0 || r.schema)
        .collect();
    let median = median_ms(ran.iter().map(|r| r.time_ms).collect());
    let throughput_ms = mutation_wall_ms
        .checked_div(ran.len() as u64)
        .unwrap_or_default();
    say(format!(
        "{} mutations in {} s on {jobs} worker{}; per mutation median {} (build {}, run {}), {} of the run's wall time each",
        reports.len(),
        began.elapsed().as_secs(),
        if jobs == 1 { "" } else { "s" },
        secs(median),
        secs(median_ms(
            ran.iter()
                .filter(|r| !r.schema)
                .map(|r| r.build_ms)
                .collect()
        )),
        secs(median_ms(ran.iter().map(|r| r.run_ms).collect())),
        secs(throughput_ms),
    ));
    Ok(MutantsRun {
        seed: opts.seed,
        mutants: reports,
        summary,
        wall_s: began.elapsed().as_secs(),
        median_ms: median,
        jobs,
        throughput_ms,
        schema_killed,
        schema_ms,
    })
}

/// The plain way: builds the unmutated workspace in every scratch copy,
/// runs the baselines the mutations at `todo` (indices into `parsed`) stand
/// on, then hands those mutations out to the workers, each applied, built on
/// its own, run and reversed. Returns each one's report with its index.
///
/// # Errors
/// The unmutated build fails, a baseline is red, or a diff cannot be
/// reversed in its scratch copy.
fn build_each(
    scratches: &[Scratch],
    parsed: &[(String, Result<Mutation, String>)],
    todo: &[usize],
    opts: &Options,
    say: &(dyn Fn(String) + Sync),
) -> Result<Vec<(usize, MutantReport)>, String> {
    let jobs = scratches.len();
    say(format!(
        "building the unmutated workspace in {jobs} scratch cop{} side by side for {} mutation{} built one by one (a cold build takes several minutes)",
        if jobs == 1 { "y" } else { "ies" },
        todo.len(),
        if todo.len() == 1 { "" } else { "s" },
    ));
    let t_build = Instant::now();
    let built: Vec<Result<(), BuildError>> = std::thread::scope(|sc| {
        let handles: Vec<_> = scratches.iter().map(|s| sc.spawn(|| s.build())).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(BuildError::not_run("the build thread panicked")))
            })
            .collect()
    });
    for (s, b) in scratches.iter().zip(built) {
        b.map_err(|e| {
            format!(
                "the unmutated workspace does not build in {}: {e}",
                s.work.display()
            )
        })?;
    }
    say(format!(
        "built in {}",
        secs(t_build.elapsed().as_millis() as u64)
    ));
    let wanted: std::collections::BTreeSet<usize> = todo.iter().copied().collect();
    let mutations: Vec<&Mutation> = todo
        .iter()
        .filter_map(|&i| parsed[i].1.as_ref().ok())
        .collect();
    baselines(scratches, &mutations, opts, say)?;

    let order: Vec<usize> = run_order(parsed)
        .into_iter()
        .filter(|i| wanted.contains(i))
        .collect();
    let total = order.len();
    let queue = Mutex::new(VecDeque::from(order));
    let started = AtomicUsize::new(0);
    let reports: Mutex<Vec<(usize, MutantReport)>> = Mutex::new(Vec::new());
    let fatal: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|sc| {
        for s in scratches {
            let (queue, started, reports, fatal) = (&queue, &started, &reports, &fatal);
            sc.spawn(move || {
                loop {
                    if fatal.lock().is_ok_and(|f| f.is_some()) {
                        return;
                    }
                    let Some(i) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                        return;
                    };
                    let n = started.fetch_add(1, Ordering::SeqCst) + 1;
                    let (rel, m) = &parsed[i];
                    match run_one(s, rel, m, opts, (n, total)) {
                        Ok(r) => {
                            if let Ok(mut v) = reports.lock() {
                                v.push((i, r));
                            }
                        }
                        Err(e) => {
                            if let Ok(mut f) = fatal.lock() {
                                f.get_or_insert(e);
                            }
                            return;
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = fatal.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(reports.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// One unmutated run the mutations stand on: a gate or case, the kit, or a
/// scenario replay.
enum Baseline {
    Conform,
    Scenario(String),
    Gate(String),
}

/// Runs every gate, case, kit run and scenario the mutations name, once
/// each and unmutated, shared out among the scratch copies (which are
/// otherwise idle until the mutations start): a red baseline kills nothing.
///
/// # Errors
/// The first baseline that fails or cannot be run, naming what failed.
fn baselines(
    scratches: &[Scratch],
    mutations: &[&Mutation],
    opts: &Options,
    say: &(dyn Fn(String) + Sync),
) -> Result<(), String> {
    let mut selectors: Vec<String> = mutations
        .iter()
        .map(|m| m.case.clone().unwrap_or_else(|| m.gate.clone()))
        .collect();
    selectors.sort();
    selectors.dedup();
    // A case whose whole gate is in the baseline already ran there.
    let whole: std::collections::BTreeSet<String> = selectors
        .iter()
        .filter(|s| !s.contains('/'))
        .cloned()
        .collect();
    selectors.retain(|s| {
        s.split_once('/')
            .is_none_or(|(gate, _)| !whole.contains(gate))
    });
    let mut scenarios: Vec<String> = mutations
        .iter()
        .filter_map(|m| m.scenario.clone())
        .collect();
    scenarios.sort();
    scenarios.dedup();
    let mut todo: Vec<Baseline> = Vec::new();
    if selectors.iter().any(|s| s == CONFORM_GATE) {
        todo.push(Baseline::Conform);
    }
    for file in scenarios {
        if !scratches[0].work.join(&file).is_file() {
            return Err(format!("{file}: no such scenario in the workspace"));
        }
        todo.push(Baseline::Scenario(file));
    }
    todo.extend(
        selectors
            .into_iter()
            .filter(|s| s != CONFORM_GATE && s != SCENARIO_GATE)
            .map(Baseline::Gate),
    );
    let queue = Mutex::new(VecDeque::from(todo));
    let failed: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|sc| {
        for scratch in scratches {
            let (queue, failed) = (&queue, &failed);
            sc.spawn(move || {
                loop {
                    if failed.lock().is_ok_and(|f| f.is_some()) {
                        return;
                    }
                    let Some(next) = queue.lock().ok().and_then(|mut q| q.pop_front()) else {
                        return;
                    };
                    if let Err(e) = baseline(scratch, &next, opts, say) {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(e);
                        }
                        return;
                    }
                }
            });
        }
    });
    match failed.into_inner() {
        Ok(None) => Ok(()),
        Ok(Some(e)) => Err(e),
        Err(_) => Err("a baseline thread panicked".into()),
    }
}

/// Runs one [`Baseline`] in `scratch`.
///
/// # Errors
/// It fails (a red gate, kit or scenario kills nothing) or cannot be run.
fn baseline(
    scratch: &Scratch,
    which: &Baseline,
    opts: &Options,
    say: &(dyn Fn(String) + Sync),
) -> Result<(), String> {
    match which {
        Baseline::Conform => {
            let ran = scratch.conform(opts.run_timeout, None)?;
            match ran.ended {
                Ended::Code(0) => {
                    say("baseline conform passes against the unmutated fake".into());
                    Ok(())
                }
                code => Err(format!(
                    "conform fails against the unmutated fake (exit {code:?}): {:?}; a red kit kills nothing",
                    conform_failures(&ran.stdout)
                )),
            }
        }
        Baseline::Scenario(file) => {
            let ran = scratch.replay(file, opts.run_timeout, None)?;
            match ran.ended {
                Ended::Code(0) => {
                    say(format!("baseline {file} replays green unmutated"));
                    Ok(())
                }
                code => Err(format!(
                    "scenario {file} fails without any mutation (exit {code:?}): {}; a red scenario kills nothing",
                    judge_scenario(file, &ran).1
                )),
            }
        }
        Baseline::Gate(sel) => {
            let ran = scratch.gate(sel, opts.seed, opts.run_timeout, None)?;
            match ran.ended {
                Ended::Code(0) => {
                    say(format!("baseline {sel} passes unmutated"));
                    Ok(())
                }
                code => Err(format!(
                    "gate {sel} fails without any mutation (exit {code:?}): {}; a red gate kills nothing",
                    failed_cases(&ran.stdout)
                )),
            }
        }
    }
}

/// One mutation in `scratch`: apply, build, run, judge, reverse. `n` of
/// `total` is its place in the run, for the progress lines.
///
/// # Errors
/// The diff cannot be applied after its check passed, or cannot be
/// reversed: the scratch copy is no longer the workspace.
fn run_one(
    scratch: &Scratch,
    rel: &str,
    m: &Result<Mutation, String>,
    opts: &Options,
    (n, total): (usize, usize),
) -> Result<MutantReport, String> {
    let t0 = Instant::now();
    let m = match m {
        Ok(m) => m,
        Err(why) => {
            if opts.progress {
                progress::line(&format!("[{n}/{total}] {rel}: invalid: {why}"));
                progress::finished(&format!("{rel}: invalid"));
            }
            return Ok(MutantReport {
                file: rel.to_string(),
                gate: String::new(),
                case: None,
                author: None,
                breaks: String::new(),
                status: Outcome::Invalid,
                detail: why.clone(),
                time_ms: 0,
                build_ms: 0,
                run_ms: 0,
                schema: false,
            });
        }
    };
    if opts.progress {
        progress::line(&format!("[{n}/{total}] {rel}: {}", m.breaks));
    }
    let mut build_ms = 0;
    let mut run_ms = 0;
    let (status, detail) = if let Err(e) = git_apply(&scratch.work, &m.diff, &["--check"]) {
        (Outcome::Stale, format!("the diff no longer applies: {e}"))
    } else {
        git_apply(&scratch.work, &m.diff, &[])?;
        let t_build = Instant::now();
        let built = scratch.build();
        build_ms = t_build.elapsed().as_millis() as u64;
        let t_run = Instant::now();
        let verdict = match built {
            Err(e) => built_nothing(e),
            Ok(()) => {
                let verdict = judged_run(scratch, m, opts, None);
                run_ms = t_run.elapsed().as_millis() as u64;
                verdict
            }
        };
        // Undo the diff in the scratch, whatever happened. Never copy
        // back from the workspace: it may have changed since the
        // scratch was made (an engineer editing while the run goes on),
        // and every later mutation would then meet a mixed tree.
        git_apply(&scratch.work, &m.diff, &["-R"])
            .map_err(|e| format!("undoing {rel} in the scratch copy: {e}"))?;
        verdict
    };
    let time_ms = t0.elapsed().as_millis() as u64;
    if opts.progress {
        let verdict = format!("{status:?}").to_lowercase();
        progress::line(&format!(
            "[{n}/{total}] {}: {verdict} in {} (build {}, run {})",
            rel,
            secs(time_ms),
            secs(build_ms),
            secs(run_ms)
        ));
        progress::finished(&format!("{rel}: {verdict}"));
    }
    Ok(report_of(
        rel,
        m,
        (status, detail),
        (time_ms, build_ms, run_ms),
        false,
    ))
}

/// The report of mutation `m` from file `rel`: its verdict, its wall, build
/// and run times in milliseconds, and whether the schema build judged it.
fn report_of(
    rel: &str,
    m: &Mutation,
    (status, detail): (Outcome, String),
    (time_ms, build_ms, run_ms): (u64, u64, u64),
    schema: bool,
) -> MutantReport {
    MutantReport {
        file: rel.to_string(),
        gate: m.gate.clone(),
        case: m
            .case
            .clone()
            .or_else(|| (!m.conform.is_empty()).then(|| m.conform.join(" ")))
            .or_else(|| m.scenario.clone()),
        author: Some(m.author),
        breaks: m.breaks.clone(),
        status,
        detail,
        time_ms,
        build_ms,
        run_ms,
        schema,
    }
}

/// Runs what judges `m` in `scratch` (its gate or case, the kit, or its
/// scenario replay) and judges it; with `schema`, selecting that mutation of
/// a schema build. A harness that did not run is `invalid`.
fn judged_run(
    scratch: &Scratch,
    m: &Mutation,
    opts: &Options,
    schema: Option<u32>,
) -> (Outcome, String) {
    let judged = if m.gate == CONFORM_GATE {
        scratch
            .conform(opts.run_timeout, schema)
            .map(|ran| judge_conform(m, &ran))
    } else if m.gate == SCENARIO_GATE {
        let file = m.scenario.as_deref().unwrap_or_default();
        scratch
            .replay(file, opts.run_timeout, schema)
            .map(|ran| judge_scenario(file, &ran))
    } else {
        let sel = m.case.clone().unwrap_or_else(|| m.gate.clone());
        scratch
            .gate(&sel, opts.seed, opts.run_timeout, schema)
            .map(|ran| judge_gate(&sel, &ran, opts.run_timeout))
    };
    judged.unwrap_or_else(|e| (Outcome::Invalid, format!("the harness did not run: {e}")))
}

/// The verdict on a mutation whose scratch build gave no harness, by the
/// build's kind of failure: only code that does not compile is `unviable`.
fn built_nothing(e: BuildError) -> (Outcome, String) {
    match e.kind {
        BuildErrorKind::DoesNotCompile => (Outcome::Unviable, e.first),
        BuildErrorKind::TimedOut => (
            Outcome::Timeout,
            format!("the build ran past {MUTANT_BUILD_TIMEOUT_S} s"),
        ),
        BuildErrorKind::NotRun => (
            Outcome::Invalid,
            format!("the build did not run: {}", e.first),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const GOOD: &str = "gate: 26\ncase: 26/second-dek-different-id\nauthor: adversary\nbreaks: bare sha\n\n--- a/reference/src/store.rs\n+++ b/reference/src/store.rs\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn the_shards_of_a_mutation_set_are_disjoint_and_cover_it() {
        let files: Vec<PathBuf> = (0..23)
            .map(|i| PathBuf::from(format!("mutants/g{:02}/m{}.toml", i % 7, i)))
            .rev()
            .collect();
        let mut sorted = files.clone();
        sorted.sort();
        for n in 1..6 {
            let shards: Vec<Vec<PathBuf>> = (0..n).map(|k| shard(files.clone(), k, n)).collect();
            let mut all: Vec<PathBuf> = shards.concat();
            let count = all.len();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), count, "n = {n}: a file in two shards");
            assert_eq!(all, sorted, "n = {n}: a file in no shard");
            let sizes: Vec<usize> = shards.iter().map(Vec::len).collect();
            assert!(
                sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1,
                "n = {n}: unbalanced {sizes:?}"
            );
        }
    }

    #[test]
    fn mutations_of_the_same_crate_run_one_after_another() {
        let touching = |name: &str, path: &str| {
            let text = GOOD.replace("reference/src/store.rs", path);
            (name.to_string(), parse(Path::new(name), &text))
        };
        let parsed = vec![
            touching("g01-a.diff", "reference/src/store.rs"),
            touching("g02-b.diff", "simulator/src/fake/model.rs"),
            touching("g03-c.diff", "reference/src/seal.rs"),
            (
                "g04-bad.diff".to_string(),
                Err("no `gate:` line".to_string()),
            ),
            touching("g05-d.diff", "reference/src/store.rs"),
        ];
        let names: Vec<&str> = run_order(&parsed)
            .into_iter()
            .map(|i| parsed[i].0.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "g04-bad.diff",
                "g03-c.diff",
                "g01-a.diff",
                "g05-d.diff",
                "g02-b.diff"
            ]
        );
    }
}
