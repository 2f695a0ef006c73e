//! Recorded mutations: unified diffs under `mutants/` that a named gate must turn red.
//!
//! A recorded mutation is a real change to the code under test, never to a
//! gate. Each file is a header of `key: value` lines, then a unified diff in
//! `git diff` form (`--- a/path`, `+++ b/path`), so a reviewer can write one
//! by hand and cargo-mutants' `diff/` output has the same shape:
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
//! [`run`] copies the workspace once into `target/mutants/work`, checks that
//! the selected gates pass unmutated there (a gate already red kills
//! nothing), then for each mutation applies the diff, builds the harness in
//! one shared target directory (`target/mutants/target`), runs the named gate
//! or case, and restores the touched files.
//!
//! One mutation costs one rebuild of the crates it touches and of those
//! above them, a link, and a gate run, so the runner keeps each small:
//! the scratch build is always incremental and carries no debug info
//! ([`SCRATCH_BUILD_ENV`]), whatever the caller exported (CI exports
//! `CARGO_INCREMENTAL=0`, which made every mutation a full rebuild of
//! `memoria`, `memoria-simulator` and `memoria-gates`); mutations run grouped
//! by the crates and files they touch, so consecutive ones rebuild the same
//! crates; and gate runs keep their temporary directories on tmpfs
//! ([`GATE_TMP_PARENT`]), where the reference's fsyncs cost nothing. A
//! cold scratch target directory is first seeded with the dependency units
//! the caller's own target directory holds for the harness, so the cold
//! build compiles only the workspace's crates. `benches/RESULTS.md` records
//! what each of these saved.
//! Outcomes: `killed` (required), `survived`, `stale` (the diff no longer
//! applies), `unviable` (it does not compile), `timeout`, or `invalid` (the
//! header is incomplete, or the diff touches a gate or a mutation file).
//!
//! Size: over 700 lines: the runner's parts (parse, scratch copy, build,
//! judge, order, report) share one `Mutation` and one scratch; a split into a
//! `mutants/` folder is the next change here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use wait_timeout::ChildExt as _;

use crate::report::{JunitCase, JunitSuite, junit};

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
/// Hex digits of the metadata hash cargo appends to a unit's file and
/// directory names (`libtokio-c457ceb72c8bfb5d.rlib`): 64 bits.
const UNIT_HASH_HEX_LEN: usize = 16;
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

/// Who chose a mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Author {
    /// The gate's writer.
    Author,
    /// Someone who did not write the gate.
    Adversary,
}

/// A parsed mutation file.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// The file it came from.
    pub file: PathBuf,
    /// The gate that must kill it.
    pub gate: String,
    /// The case, if one is named.
    pub case: Option<String>,
    /// For `gate: conform`, the conformance case ids that must fail, exactly.
    pub conform: Vec<String>,
    /// For `gate: scenario`, the workspace-relative scenario file whose
    /// replay must fail (`scenarios/<name>.toml`).
    pub scenario: Option<String>,
    /// Who chose it.
    pub author: Author,
    /// One line on what it breaks.
    pub breaks: String,
    /// The unified diff.
    pub diff: String,
    /// Workspace-relative paths the diff touches.
    pub touches: Vec<String>,
}

/// What happened to one mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The gate went red: the required outcome.
    Killed,
    /// The gate stayed green.
    Survived,
    /// The diff no longer applies.
    Stale,
    /// The mutated code does not compile.
    Unviable,
    /// The gate did not finish in time.
    Timeout,
    /// The file is malformed or touches a gate.
    Invalid,
    /// A conformance mutation failed other cases than exactly the named ones.
    Imprecise,
}

/// One mutation's result.
#[derive(Debug, Clone, Serialize)]
pub struct MutantReport {
    /// The mutation file, workspace-relative.
    pub file: String,
    /// The gate that must kill it.
    pub gate: String,
    /// The case, if named.
    pub case: Option<String>,
    /// author or adversary.
    pub author: Option<Author>,
    /// What it breaks.
    pub breaks: String,
    /// The outcome.
    pub status: Outcome,
    /// Why, in a line (which case went red, the build error's first line...).
    pub detail: String,
    /// Wall time in milliseconds, build included.
    pub time_ms: u64,
    /// Of which the build, in milliseconds (0 if it never got that far).
    pub build_ms: u64,
    /// Of which the gate, kit or replay run, in milliseconds.
    pub run_ms: u64,
}

/// The whole mutation run.
#[derive(Debug, Clone, Serialize)]
pub struct MutantsRun {
    /// The seed passed to every gate run.
    pub seed: u64,
    /// Each mutation.
    pub mutants: Vec<MutantReport>,
    /// Counts by outcome.
    pub summary: std::collections::BTreeMap<String, usize>,
    /// Wall time of the whole run in seconds.
    pub wall_s: u64,
    /// Median wall time of one mutation in milliseconds, build and gate included.
    pub median_ms: u64,
}

impl MutantsRun {
    /// True if every mutation was killed (and there was at least one).
    pub fn all_killed(&self) -> bool {
        !self.mutants.is_empty() && self.mutants.iter().all(|m| m.status == Outcome::Killed)
    }

    /// A text table.
    pub fn to_text(&self) -> String {
        let mut s = format!("seed {}\n\n", self.seed);
        for m in &self.mutants {
            let who = match m.author {
                Some(Author::Author) => "author",
                Some(Author::Adversary) => "adversary",
                None => "?",
            };
            s.push_str(&format!(
                "  {:<9} gate {:<4} {:<10} {}  ({} s)\n      breaks: {}\n      {}\n",
                format!("{:?}", m.status).to_lowercase(),
                m.gate,
                who,
                m.file,
                m.time_ms / 1000,
                m.breaks,
                m.detail
            ));
        }
        let counts: Vec<String> = self
            .summary
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect();
        s.push_str(&format!("\n{} in {} s\n", counts.join(", "), self.wall_s));
        s
    }

    /// JUnit: one suite per gate, one case per mutation; anything but killed is a failure.
    pub fn to_junit(&self) -> String {
        let mut gates: Vec<String> = self.mutants.iter().map(|m| m.gate.clone()).collect();
        gates.sort();
        gates.dedup();
        let suites: Vec<JunitSuite> = gates
            .iter()
            .map(|g| JunitSuite {
                name: format!("mutations for gate {g}"),
                package: format!("gate{g}"),
                properties: vec![("seed".into(), self.seed.to_string())],
                cases: self
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
}

/// Parses a mutation file's text.
///
/// # Errors
/// A message for a missing `gate`, `author` or `breaks`, an unknown author,
/// an empty diff, or a diff touching a forbidden path.
pub fn parse(file: &Path, text: &str) -> Result<Mutation, String> {
    let mut gate = None;
    let mut case = None;
    let mut author = None;
    let mut breaks = None;
    let mut conform: Vec<String> = Vec::new();
    let mut scenario = None;
    let mut diff_start = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end();
        if l.starts_with("--- ") || l.starts_with("diff --git ") {
            diff_start = Some(offset);
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim().to_string();
            match k.trim() {
                "gate" => gate = Some(v),
                "case" => case = Some(v).filter(|c| !c.is_empty()),
                "author" => author = Some(v),
                "breaks" => breaks = Some(v),
                "conform" => conform = v.split_whitespace().map(str::to_owned).collect(),
                "scenario" => scenario = Some(v).filter(|s| !s.is_empty()),
                _ => {}
            }
        }
        offset += line.len();
    }
    let gate = gate.ok_or("no `gate:` line")?;
    let author = match author.as_deref() {
        Some("author") => Author::Author,
        Some("adversary") => Author::Adversary,
        Some(other) => {
            return Err(format!(
                "author must be `author` or `adversary`, not {other:?}"
            ));
        }
        None => return Err("no `author:` line".into()),
    };
    let breaks = breaks.ok_or("no `breaks:` line")?;
    let diff = text[diff_start.ok_or("no unified diff (no `--- a/…` line)")?..].to_string();
    let touches: Vec<String> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("+++ "))
        .map(|p| p.trim().trim_start_matches("b/").to_string())
        .collect();
    if touches.is_empty() {
        return Err("the diff touches no file".into());
    }
    if let Some(bad) = touches
        .iter()
        .find(|p| FORBIDDEN_PREFIXES.iter().any(|f| p.starts_with(f)))
    {
        return Err(format!(
            "a mutation changes the code under test, never a gate: it touches {bad}"
        ));
    }
    if gate == CONFORM_GATE {
        if conform.is_empty() {
            return Err(
                "a `gate: conform` mutation names its failing cases on a `conform:` line".into(),
            );
        }
        if let Some(bad) = conform.iter().find(|id| {
            !crate::conform::cases::all()
                .iter()
                .any(|c| c.id == id.as_str())
        }) {
            return Err(format!("conform: {bad} is no conformance case id"));
        }
    } else if !conform.is_empty() {
        return Err("`conform:` belongs to `gate: conform` mutations only".into());
    }
    if gate == SCENARIO_GATE {
        let Some(f) = &scenario else {
            return Err(
                "a `gate: scenario` mutation names its scenario on a `scenario:` line".into(),
            );
        };
        if !f.starts_with("scenarios/") || !f.ends_with(".toml") || f.contains("..") {
            return Err(format!(
                "scenario: {f} is not a file of the form scenarios/<name>.toml"
            ));
        }
        if case.is_some() {
            return Err("a `gate: scenario` mutation names no `case:`".into());
        }
    } else if scenario.is_some() {
        return Err("`scenario:` belongs to `gate: scenario` mutations only".into());
    }
    if let Some(c) = &case
        && gate != CONFORM_GATE
        && !c.starts_with(&format!("{gate}/"))
    {
        return Err(format!("case {c} is not a case of gate {gate}"));
    }
    Ok(Mutation {
        file: file.to_path_buf(),
        gate,
        case,
        conform,
        scenario,
        author,
        breaks,
        diff,
        touches,
    })
}

/// Every `*.diff` directly in `dir` (not in subfolders such as
/// `survivors/`, which hold attempts awaiting a stronger gate), sorted.
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .max_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "diff"))
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

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
}

fn copy_workspace(src: &Path, dst: &Path) -> Result<(), String> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(src)
        .output()
        .map_err(|e| format!("git ls-files: {e}"))?;
    if !out.status.success() {
        return Err("git ls-files failed: the workspace must be a git checkout".into());
    }
    std::fs::create_dir_all(dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    if !dst.join(".git").exists() {
        let init = Command::new("git")
            .args(["init", "--quiet"])
            .current_dir(dst)
            .status()
            .map_err(|e| format!("git init: {e}"))?;
        if !init.success() {
            return Err("git init in the scratch copy failed".into());
        }
    }
    let mut kept = std::collections::BTreeSet::new();
    for rel in out.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let rel = String::from_utf8_lossy(rel).into_owned();
        let from = src.join(&rel);
        if !from.is_file() {
            continue; // deleted in the work tree
        }
        kept.insert(rel.clone());
        let to = dst.join(&rel);
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        let same = std::fs::read(&to).ok() == std::fs::read(&from).ok();
        if !same {
            std::fs::copy(&from, &to).map_err(|e| format!("{rel}: {e}"))?;
        }
    }
    // A file the workspace no longer has (moved, deleted since the last
    // run) must not linger in the scratch: a stale `web.rs` beside a new
    // `web/mod.rs` does not build.
    for entry in walkdir::WalkDir::new(dst)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || (e.file_name() != ".git" && e.file_name() != "target"))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let rel = entry
            .path()
            .strip_prefix(dst)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        if !kept.contains(&rel) {
            std::fs::remove_file(entry.path()).map_err(|e| format!("removing {rel}: {e}"))?;
        }
    }
    Ok(())
}

/// `git apply` inside the scratch copy. The scratch lives under the
/// workspace's own `target/`, so without a repository of its own git would
/// resolve paths against the outer checkout and skip every hunk ("Skipped
/// patch"), exiting 0: [`copy_workspace`] makes the scratch its own
/// repository, and the ceiling stops discovery from climbing past it.
fn git_apply(dir: &Path, diff: &str, extra: &[&str]) -> Result<(), String> {
    use std::io::Write as _;
    let ceiling = dir.parent().unwrap_or(dir);
    let mut child = Command::new("git")
        .arg("apply")
        .arg("--verbose")
        .args(extra)
        .arg("-")
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", ceiling)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git apply: {e}"))?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(diff.as_bytes())
        .map_err(|e| format!("git apply stdin: {e}"))?;
    let out = child
        .wait_with_output()
        .map_err(|e| format!("git apply: {e}"))?;
    let said = String::from_utf8_lossy(&out.stderr);
    if let Some(skipped) = said.lines().find(|l| l.starts_with("Skipped patch")) {
        return Err(format!("git apply did not apply the diff: {skipped}"));
    }
    if out.status.success() {
        Ok(())
    } else {
        Err(said
            .lines()
            .find(|l| l.starts_with("error"))
            .unwrap_or("git apply failed")
            .to_string())
    }
}

/// How a child process ended.
#[derive(Debug)]
enum Ended {
    /// Exited with a code.
    Code(i32),
    /// Killed by a signal (a crash).
    Signal,
    /// Ran past its limit and was killed.
    TimedOut,
}

fn run_with_timeout(mut cmd: Command, limit: Duration) -> Result<(Ended, String), String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let err_t = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let status = child
        .wait_timeout(limit)
        .map_err(|e| format!("wait: {e}"))?;
    let ended = match status {
        Some(s) => s.code().map_or(Ended::Signal, Ended::Code),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return Ok((Ended::TimedOut, String::new()));
        }
    };
    let out = out_t.join().unwrap_or_default();
    let err = err_t.join().unwrap_or_default();
    Ok((ended, format!("{out}\n{err}")))
}

/// The scratch copy, the target directory its builds share, and where gate
/// runs keep their temporary directories.
struct Scratch {
    work: PathBuf,
    target: PathBuf,
    /// The parent of each gate run's `TMPDIR`; `None`: the system's.
    tmp: Option<PathBuf>,
}

impl Scratch {
    fn build(&self) -> Result<(), String> {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "memoria-gates",
            "--bin",
            "memoria-harness",
        ])
        .current_dir(&self.work)
        .env("CARGO_TARGET_DIR", &self.target)
        .envs(SCRATCH_BUILD_ENV.iter().copied());
        match run_with_timeout(cmd, Duration::from_secs(MUTANT_BUILD_TIMEOUT_S))? {
            (Ended::Code(0), _) => Ok(()),
            (Ended::TimedOut, _) => Err("the build timed out".into()),
            (_, log) => Err(log
                .lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or("the build failed")
                .to_string()),
        }
    }

    /// Runs the scratch harness with `args`, its temporary directories in a
    /// fresh directory under [`Scratch::tmp`] that is removed afterwards,
    /// whatever happened.
    fn harness(&self, args: &[&str], limit: Duration) -> Result<(Ended, String), String> {
        let mut cmd = Command::new(self.target.join("debug").join("memoria-harness"));
        cmd.args(args).current_dir(&self.work);
        let tmp = match &self.tmp {
            Some(parent) => Some(
                tempfile::Builder::new()
                    .prefix("memoria-mutant-")
                    .tempdir_in(parent)
                    .map_err(|e| format!("a temporary directory in {}: {e}", parent.display()))?,
            ),
            None => None,
        };
        if let Some(t) = &tmp {
            cmd.env("TMPDIR", t.path());
        }
        run_with_timeout(cmd, limit)
    }

    fn gate(&self, selector: &str, seed: u64, limit: Duration) -> Result<(Ended, String), String> {
        let seed = seed.to_string();
        self.harness(
            &["run", selector, "--seed", &seed, "--format", "json"],
            limit,
        )
    }

    fn conform(&self, limit: Duration) -> Result<(Ended, String), String> {
        self.harness(
            &["conform", "--fake", "--strict", "--format", "json"],
            limit,
        )
    }

    /// Replays one scenario file at the seed it records.
    fn replay(&self, file: &str, limit: Duration) -> Result<(Ended, String), String> {
        self.harness(&["replay", file, "--format", "json"], limit)
    }
}

/// The caller's own target directory: `CARGO_TARGET_DIR` (or
/// `CARGO_BUILD_TARGET_DIR`) if set, else `<workspace>/target`.
fn caller_target_dir(workspace: &Path) -> PathBuf {
    let set = std::env::var_os("CARGO_TARGET_DIR")
        .or_else(|| std::env::var_os("CARGO_BUILD_TARGET_DIR"))
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    match set {
        Some(p) if p.is_absolute() => p,
        Some(p) => std::env::current_dir().map(|d| d.join(&p)).unwrap_or(p),
        None => workspace.join("target"),
    }
}

/// The metadata hash of the build unit that owns `path` inside a profile
/// directory `debug`: `deps/libtokio-<hash>.rlib` or `build/<pkg>-<hash>/…`.
fn unit_hash(debug: &Path, path: &Path) -> Option<String> {
    let mut parts = path.strip_prefix(debug).ok()?.components();
    let dir = parts.next()?.as_os_str().to_str()?;
    let name = parts.next()?.as_os_str().to_str()?;
    if dir != "deps" && dir != "build" {
        return None;
    }
    let (_, hash) = name.split('.').next()?.rsplit_once('-')?;
    (hash.len() == UNIT_HASH_HEX_LEN && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hash.to_string())
}

/// Copies a file or a directory tree, keeping each file's modification time
/// (cargo judges freshness partly by output mtimes). Returns the bytes copied.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<u64> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.is_dir() {
        std::fs::create_dir_all(to)?;
        let mut bytes = 0;
        for e in std::fs::read_dir(from)? {
            let e = e?;
            bytes += copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
        Ok(bytes)
    } else if meta.is_file() {
        let bytes = std::fs::copy(from, to)?;
        std::fs::File::options()
            .write(true)
            .open(to)?
            .set_modified(meta.modified()?)?;
        Ok(bytes)
    } else {
        Ok(0)
    }
}

/// Seeds a cold scratch target directory with the dependency units that the
/// caller's target directory `from` already holds for the harness, so the
/// first scratch build compiles only the workspace's own crates. The units
/// are the ones `cargo build -p memoria-gates --bin memoria-harness` lists in
/// the caller's workspace, minus the workspace's own (path) packages; their
/// metadata hashes are the scratch build's too, because the scratch changes
/// only the workspace crates' profile ([`SCRATCH_BUILD_ENV`]). Copies, never
/// links, so no scratch build can write into the caller's files. Returns the
/// units and bytes copied; nothing if the scratch is warm, or the caller's
/// build fails or lists nothing (the cold build then compiles everything).
///
/// # Errors
/// A copy that fails; [`run`] then empties the scratch target and starts cold.
fn seed_dependencies(workspace: &Path, from: &Path, to: &Path) -> Result<(usize, u64), String> {
    let (src, dst) = (from.join("debug"), to.join("debug"));
    if dst.join(".fingerprint").is_dir() || !src.is_dir() {
        return Ok((0, 0));
    }
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "memoria-gates",
        "--bin",
        "memoria-harness",
        "--message-format=json",
    ])
    .current_dir(workspace)
    .env("CARGO_TARGET_DIR", from);
    let log = match run_with_timeout(cmd, Duration::from_secs(MUTANT_BUILD_TIMEOUT_S))? {
        (Ended::Code(0), log) => log,
        _ => return Ok((0, 0)),
    };
    let mut hashes = std::collections::BTreeSet::new();
    for line in log.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["package_id"]
            .as_str()
            .is_none_or(|id| id.starts_with("path+"))
        {
            continue;
        }
        let paths = v["filenames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f.as_str())
            .chain(v["out_dir"].as_str());
        hashes.extend(paths.filter_map(|p| unit_hash(&src, Path::new(p))));
    }
    let mut bytes = 0;
    for dir in ["deps", "build", ".fingerprint"] {
        let Ok(entries) = std::fs::read_dir(src.join(dir)) else {
            continue;
        };
        std::fs::create_dir_all(dst.join(dir))
            .map_err(|err| format!("{}: {err}", dst.join(dir).display()))?;
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let ours = name
                .split('.')
                .next()
                .and_then(|stem| stem.rsplit_once('-'))
                .is_some_and(|(_, h)| hashes.contains(h));
            if ours {
                bytes += copy_tree(&e.path(), &dst.join(dir).join(&*name))
                    .map_err(|err| format!("seeding {dir}/{name}: {err}"))?;
            }
        }
    }
    Ok((hashes.len(), bytes))
}

/// [`GATE_TMP_PARENT`] if a directory can be made in it, else `None`.
fn gate_tmp_parent() -> Option<PathBuf> {
    let parent = PathBuf::from(GATE_TMP_PARENT);
    tempfile::Builder::new()
        .prefix("memoria-mutant-probe-")
        .tempdir_in(&parent)
        .ok()
        .map(|_| parent)
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

/// The median of `ms`, 0 for none.
fn median_ms(mut ms: Vec<u64>) -> u64 {
    ms.sort_unstable();
    match ms.len() {
        0 => 0,
        n if n % 2 == 1 => ms[n / 2],
        n => (ms[n / 2 - 1] + ms[n / 2]) / 2,
    }
}

fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// The failed checks a `replay --format json` run reported, one line; a
/// note if it printed no report.
fn failed_checks(json_and_log: &str) -> String {
    let start = json_and_log.find('[');
    let parsed = start.and_then(|s| {
        serde_json::Deserializer::from_str(&json_and_log[s..])
            .into_iter::<serde_json::Value>()
            .next()
            .and_then(Result::ok)
    });
    let Some(v) = parsed else {
        return "the replay printed no report".into();
    };
    let mut red = Vec::new();
    for r in v.as_array().into_iter().flatten() {
        if let Some(e) = r["replay"]["error"].as_str() {
            red.push(format!("the simulation failed: {e}"));
        }
        for entry in r["replay"]["entries"].as_array().into_iter().flatten() {
            for c in entry["checks"].as_array().into_iter().flatten() {
                if c["ok"] == false {
                    red.push(format!(
                        "event #{} expected {}, saw {}",
                        entry["index"],
                        c["expected"].as_str().unwrap_or("?"),
                        c["actual"].as_str().unwrap_or("?")
                    ));
                }
            }
        }
    }
    if red.is_empty() {
        "the replay failed without a failed check".into()
    } else {
        format!("scenario red: {}", red.join("; "))
    }
}

fn judge_scenario(file: &str, ended: Ended, log: &str) -> (Outcome, String) {
    match ended {
        Ended::TimedOut => (Outcome::Timeout, format!("replay of {file} timed out")),
        Ended::Code(1) => (Outcome::Killed, failed_checks(log)),
        Ended::Code(0) => (Outcome::Survived, format!("every check of {file} held")),
        Ended::Signal => (
            Outcome::Killed,
            format!("replay of {file} crashed (killed by a signal)"),
        ),
        Ended::Code(c) => (
            Outcome::Invalid,
            format!("replay of {file} exited {c}, a harness error rather than a verdict"),
        ),
    }
}

/// The conformance case ids a `conform --format json` run failed, sorted;
/// `None` if it printed no report.
fn conform_failures(json_and_log: &str) -> Option<Vec<String>> {
    let start = json_and_log.find('{')?;
    let v: serde_json::Value = serde_json::Deserializer::from_str(&json_and_log[start..])
        .into_iter::<serde_json::Value>()
        .next()?
        .ok()?;
    let mut ids: Vec<String> = v["cases"]
        .as_array()?
        .iter()
        .filter(|c| c["status"] == "fail" || c["status"] == "fixed")
        .filter_map(|c| c["id"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    Some(ids)
}

fn judge_conform(m: &Mutation, ended: Ended, log: &str) -> (Outcome, String) {
    let mut want = m.conform.clone();
    want.sort();
    let got = conform_failures(log);
    match (ended, got) {
        (Ended::TimedOut, _) => (Outcome::Timeout, "the conformance run timed out".into()),
        (Ended::Code(1), Some(got)) if got == want => (
            Outcome::Killed,
            format!("conform red: exactly {}", got.join(" ")),
        ),
        (Ended::Code(1), Some(got)) => (
            Outcome::Imprecise,
            format!("conform failed {:?}, not exactly {:?}", got, want),
        ),
        (Ended::Code(0), _) => (
            Outcome::Survived,
            "every conformance case stayed green".into(),
        ),
        (Ended::Signal, _) => (Outcome::Invalid, "the conformance run crashed".into()),
        (Ended::Code(c), _) => (
            Outcome::Invalid,
            format!("conform exited {c}, a harness error rather than a verdict"),
        ),
    }
}

fn failed_cases(json_and_log: &str) -> String {
    let start = json_and_log.find('{');
    let parsed = start.and_then(|s| {
        serde_json::Deserializer::from_str(&json_and_log[s..])
            .into_iter::<serde_json::Value>()
            .next()
            .and_then(Result::ok)
    });
    let Some(v) = parsed else {
        return "the gate run printed no report".into();
    };
    let mut red = Vec::new();
    for g in v["gates"].as_array().into_iter().flatten() {
        for c in g["cases"].as_array().into_iter().flatten() {
            if c["status"] == "fail" {
                red.push(format!(
                    "{} red: {}",
                    c["id"].as_str().unwrap_or("?"),
                    c["actual"].as_str().unwrap_or("")
                ));
            }
        }
    }
    if red.is_empty() {
        "every selected case stayed green".into()
    } else {
        red.join("; ")
    }
}

/// Runs every mutation in `opts.files`, in [`run_order`]; the report lists
/// them in the order given.
///
/// # Errors
/// A message if the scratch copy cannot be made, the unmutated build fails,
/// or a selected gate is already red without any mutation.
pub fn run(opts: &Options) -> Result<MutantsRun, String> {
    let began = Instant::now();
    let root = opts.workspace.join("target").join("mutants");
    let tmp = gate_tmp_parent();
    let scratch = Scratch {
        work: root.join("work"),
        target: root.join("target"),
        tmp,
    };
    let say = |s: String| {
        if opts.progress {
            eprintln!("mutants: {s}");
        }
    };
    let caller_target = caller_target_dir(&opts.workspace);
    say(format!(
        "scratch copy {}, its own target directory {} (never the caller's {}: a mutant must not land there)",
        scratch.work.display(),
        scratch.target.display(),
        caller_target.display()
    ));
    say(match &scratch.tmp {
        Some(t) => format!(
            "gate runs keep their temporary directories in {}",
            t.display()
        ),
        None => format!(
            "{GATE_TMP_PARENT} is not writable: gate runs use the system's temporary directory, and every fsync reaches the disk"
        ),
    });
    copy_workspace(&opts.workspace, &scratch.work)?;
    let mut parsed = Vec::new();
    for f in &opts.files {
        let rel = f
            .strip_prefix(&opts.workspace)
            .unwrap_or(f)
            .display()
            .to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        parsed.push((rel, parse(f, &text)));
    }
    let t_seed = Instant::now();
    match seed_dependencies(&opts.workspace, &caller_target, &scratch.target) {
        Ok((0, _)) => {}
        Ok((units, bytes)) => say(format!(
            "seeded {units} dependency units ({} MB) from {} in {}",
            bytes / 1_000_000,
            caller_target.join("debug").display(),
            secs(t_seed.elapsed().as_millis() as u64)
        )),
        Err(e) => {
            // A half-copied unit could look fresh: start the scratch cold instead.
            let _ = std::fs::remove_dir_all(scratch.target.join("debug"));
            say(format!(
                "seeding failed ({e}); the cold build compiles everything"
            ));
        }
    }
    say(format!(
        "building the unmutated workspace in {} into {} (a cold build takes several minutes)",
        scratch.work.display(),
        scratch.target.display()
    ));
    let t_build = Instant::now();
    scratch
        .build()
        .map_err(|e| format!("the unmutated workspace does not build: {e}"))?;
    say(format!(
        "built in {}",
        secs(t_build.elapsed().as_millis() as u64)
    ));
    let mut baseline: Vec<String> = parsed
        .iter()
        .filter_map(|(_, m)| m.as_ref().ok())
        .map(|m| m.case.clone().unwrap_or_else(|| m.gate.clone()))
        .collect();
    baseline.sort();
    baseline.dedup();
    // A case whose whole gate is in the baseline already ran there.
    let whole: std::collections::BTreeSet<String> = baseline
        .iter()
        .filter(|s| !s.contains('/'))
        .cloned()
        .collect();
    baseline.retain(|s| {
        s.split_once('/')
            .is_none_or(|(gate, _)| !whole.contains(gate))
    });
    if baseline.iter().any(|s| s == CONFORM_GATE) {
        match scratch.conform(opts.run_timeout)? {
            (Ended::Code(0), _) => say("baseline conform passes against the unmutated fake".into()),
            (code, log) => {
                return Err(format!(
                    "conform fails against the unmutated fake (exit {code:?}): {:?}; a red kit kills nothing",
                    conform_failures(&log)
                ));
            }
        }
    }
    let mut scenarios: Vec<String> = parsed
        .iter()
        .filter_map(|(_, m)| m.as_ref().ok())
        .filter_map(|m| m.scenario.clone())
        .collect();
    scenarios.sort();
    scenarios.dedup();
    for file in &scenarios {
        if !scratch.work.join(file).is_file() {
            return Err(format!("{file}: no such scenario in the workspace"));
        }
        match scratch.replay(file, opts.run_timeout)? {
            (Ended::Code(0), _) => say(format!("baseline {file} replays green unmutated")),
            (code, log) => {
                return Err(format!(
                    "scenario {file} fails without any mutation (exit {code:?}): {}; a red scenario kills nothing",
                    failed_checks(&log)
                ));
            }
        }
    }
    for sel in baseline
        .iter()
        .filter(|s| *s != CONFORM_GATE && *s != SCENARIO_GATE)
    {
        match scratch.gate(sel, opts.seed, opts.run_timeout)? {
            (Ended::Code(0), _) => say(format!("baseline {sel} passes unmutated")),
            (code, log) => {
                return Err(format!(
                    "gate {sel} fails without any mutation (exit {code:?}): {}; a red gate kills nothing",
                    failed_cases(&log)
                ));
            }
        }
    }
    let order = run_order(&parsed);
    let total = order.len();
    let mut slots: Vec<Option<(String, Result<Mutation, String>)>> =
        parsed.into_iter().map(Some).collect();
    let mut reports: Vec<(usize, MutantReport)> = Vec::new();
    for (n, i) in order.into_iter().enumerate() {
        let (rel, m) = slots[i].take().expect("each mutation runs once");
        let n = n + 1;
        let t0 = Instant::now();
        let m = match m {
            Ok(m) => m,
            Err(why) => {
                if opts.progress {
                    eprintln!("[{n}/{total}] {rel}: invalid: {why}");
                }
                reports.push((
                    i,
                    MutantReport {
                        file: rel,
                        gate: String::new(),
                        case: None,
                        author: None,
                        breaks: String::new(),
                        status: Outcome::Invalid,
                        detail: why,
                        time_ms: 0,
                        build_ms: 0,
                        run_ms: 0,
                    },
                ));
                continue;
            }
        };
        if opts.progress {
            eprintln!("[{n}/{total}] {rel}: {}", m.breaks);
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
                Err(e) => (Outcome::Unviable, e),
                Ok(()) if m.gate == CONFORM_GATE => {
                    let (ended, log) = scratch.conform(opts.run_timeout)?;
                    judge_conform(&m, ended, &log)
                }
                Ok(()) if m.gate == SCENARIO_GATE => {
                    let file = m.scenario.as_deref().unwrap_or_default();
                    let (ended, log) = scratch.replay(file, opts.run_timeout)?;
                    judge_scenario(file, ended, &log)
                }
                Ok(()) => {
                    let sel = m.case.clone().unwrap_or_else(|| m.gate.clone());
                    match scratch.gate(&sel, opts.seed, opts.run_timeout)? {
                        (Ended::TimedOut, _) => (
                            Outcome::Timeout,
                            format!("gate {sel} ran past {:?}", opts.run_timeout),
                        ),
                        (Ended::Code(1), log) => (Outcome::Killed, failed_cases(&log)),
                        (Ended::Signal, _) => (
                            Outcome::Killed,
                            format!("gate {sel} crashed (killed by a signal)"),
                        ),
                        (Ended::Code(0), _) => {
                            (Outcome::Survived, format!("gate {sel} stayed green"))
                        }
                        (Ended::Code(c), log) => (
                            Outcome::Invalid,
                            format!(
                                "gate {sel} exited {c}, a harness error rather than a verdict: {}",
                                failed_cases(&log)
                            ),
                        ),
                    }
                }
            };
            if status_ran(&verdict.0) {
                run_ms = t_run.elapsed().as_millis() as u64;
            }
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
            eprintln!(
                "[{n}/{total}] {}: {} in {} (build {}, run {})",
                rel,
                format!("{status:?}").to_lowercase(),
                secs(time_ms),
                secs(build_ms),
                secs(run_ms)
            );
        }
        reports.push((
            i,
            MutantReport {
                file: rel,
                gate: m.gate,
                case: m
                    .case
                    .or_else(|| (!m.conform.is_empty()).then(|| m.conform.join(" ")))
                    .or(m.scenario),
                author: Some(m.author),
                breaks: m.breaks,
                status,
                detail,
                time_ms,
                build_ms,
                run_ms,
            },
        ));
    }
    reports.sort_by_key(|(i, _)| *i);
    let reports: Vec<MutantReport> = reports.into_iter().map(|(_, r)| r).collect();
    let mut summary = std::collections::BTreeMap::new();
    for r in &reports {
        *summary
            .entry(format!("{:?}", r.status).to_lowercase())
            .or_insert(0) += 1;
    }
    let ran: Vec<&MutantReport> = reports.iter().filter(|r| r.build_ms > 0).collect();
    let median = median_ms(ran.iter().map(|r| r.time_ms).collect());
    say(format!(
        "{} mutations in {} s; per mutation median {} (build {}, run {})",
        reports.len(),
        began.elapsed().as_secs(),
        secs(median),
        secs(median_ms(ran.iter().map(|r| r.build_ms).collect())),
        secs(median_ms(ran.iter().map(|r| r.run_ms).collect())),
    ));
    Ok(MutantsRun {
        seed: opts.seed,
        mutants: reports,
        summary,
        wall_s: began.elapsed().as_secs(),
        median_ms: median,
    })
}

/// False for the outcomes that ran no gate (the build failed).
fn status_ran(o: &Outcome) -> bool {
    *o != Outcome::Unviable
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "gate: 26\ncase: 26/second-dek-different-id\nauthor: adversary\nbreaks: bare sha\n\n--- a/reference/src/store.rs\n+++ b/reference/src/store.rs\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn a_well_formed_mutation_parses_with_its_header() {
        let m = parse(Path::new("x.diff"), GOOD).unwrap();
        assert_eq!(m.gate, "26");
        assert_eq!(m.author, Author::Adversary);
        assert_eq!(m.touches, vec!["reference/src/store.rs"]);
        assert!(m.diff.starts_with("--- a/"));
    }

    #[test]
    fn a_mutation_that_touches_a_gate_is_invalid() {
        let bad = GOOD.replace("reference/src/store.rs", "gates/src/lib.rs");
        assert!(
            parse(Path::new("x.diff"), &bad)
                .unwrap_err()
                .contains("never a gate")
        );
    }

    #[test]
    fn a_conform_mutation_names_existing_conformance_cases_and_only_it_may() {
        let c = GOOD.replace(
            "gate: 26\ncase: 26/second-dek-different-id\n",
            "gate: conform\nconform: s1/four-fields s1a/close-count\n",
        );
        let m = parse(Path::new("x.diff"), &c).unwrap();
        assert_eq!(m.conform, vec!["s1/four-fields", "s1a/close-count"]);
        assert!(
            parse(
                Path::new("x"),
                &c.replace("s1/four-fields", "s1/five-fields")
            )
            .is_err()
        );
        assert!(
            parse(
                Path::new("x"),
                &c.replace("conform: s1/four-fields s1a/close-count\n", "")
            )
            .is_err()
        );
        assert!(
            parse(
                Path::new("x"),
                &GOOD.replace("author:", "conform: s1/four-fields\nauthor:")
            )
            .is_err()
        );
    }

    #[test]
    fn a_scenario_mutation_names_a_scenario_file_and_only_it_may() {
        let s = GOOD.replace(
            "gate: 26\ncase: 26/second-dek-different-id\n",
            "gate: scenario\nscenario: scenarios/partial-restore.toml\n",
        );
        let m = parse(Path::new("x.diff"), &s).unwrap();
        assert_eq!(
            m.scenario.as_deref(),
            Some("scenarios/partial-restore.toml")
        );
        for bad in ["scenarios/../x.toml", "fixtures/a.toml", "scenarios/a.json"] {
            assert!(
                parse(
                    Path::new("x"),
                    &s.replace("scenarios/partial-restore.toml", bad)
                )
                .is_err(),
                "{bad} accepted"
            );
        }
        assert!(
            parse(
                Path::new("x"),
                &s.replace("scenario: scenarios/partial-restore.toml\n", "")
            )
            .is_err()
        );
        assert!(
            parse(
                Path::new("x"),
                &GOOD.replace("author:", "scenario: scenarios/a.toml\nauthor:")
            )
            .is_err()
        );
        let touches_scenario =
            s.replace("reference/src/store.rs", "scenarios/partial-restore.toml");
        assert!(parse(Path::new("x"), &touches_scenario).is_err());
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

    #[test]
    fn a_unit_hash_is_read_from_deps_and_build_paths_only() {
        let debug = Path::new("/t/debug");
        let at = |p: &str| unit_hash(debug, &debug.join(p));
        assert_eq!(
            at("deps/libtokio-c457ceb72c8bfb5d.rlib").as_deref(),
            Some("c457ceb72c8bfb5d")
        );
        assert_eq!(
            at("build/libsqlite3-sys-a72067a872936cea/out").as_deref(),
            Some("a72067a872936cea")
        );
        assert_eq!(at("memoria-harness"), None);
        assert_eq!(at("deps/libx-nothex0000000000.rlib"), None);
        assert_eq!(
            unit_hash(
                debug,
                Path::new("/elsewhere/deps/liba-c457ceb72c8bfb5d.rlib")
            ),
            None
        );
    }

    #[test]
    fn a_copied_tree_keeps_each_file_modification_time() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        std::fs::create_dir_all(from.join("out")).unwrap();
        std::fs::write(from.join("out").join("a"), b"abc").unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        std::fs::File::options()
            .write(true)
            .open(from.join("out").join("a"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let to = dir.path().join("to");
        assert_eq!(copy_tree(&from, &to).unwrap(), 3);
        let copied = to.join("out").join("a");
        assert_eq!(std::fs::read(&copied).unwrap(), b"abc");
        assert_eq!(std::fs::metadata(&copied).unwrap().modified().unwrap(), old);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median_ms(vec![]), 0);
        assert_eq!(median_ms(vec![9, 1, 5]), 5);
        assert_eq!(median_ms(vec![9, 1, 5, 3]), 4);
    }

    #[test]
    fn a_header_without_author_or_with_a_foreign_case_is_invalid() {
        assert!(parse(Path::new("x"), &GOOD.replace("author: adversary\n", "")).is_err());
        assert!(parse(Path::new("x"), &GOOD.replace("26/second", "27/second")).is_err());
        assert!(parse(Path::new("x"), "gate: 1\nauthor: author\nbreaks: x\n").is_err());
    }
}
