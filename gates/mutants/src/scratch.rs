//! The scratch copies a mutation is applied in: copying the workspace, seeding and running builds, running the harness.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use wait_timeout::ChildExt as _;

use super::{
    GATE_TMP_PARENT, MUTANT_BUILD_TIMEOUT_S, SCRATCH_BUILD_ENV, SCRATCH_BUILD_ENV_REMOVED,
    UNIT_HASH_HEX_LEN,
};

/// Copies the workspace's tracked and untracked-but-not-ignored files into
/// `dst` (only those that differ), and removes what the workspace no longer has.
///
/// # Errors
/// `git ls-files` fails, or a copy or removal does.
pub(super) fn copy_workspace(src: &Path, dst: &Path) -> Result<(), String> {
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
    link_fetched_corpora(src, dst)
}

/// Where the fetch scripts put public corpora: never committed, so `git
/// ls-files` does not list them, yet gate 20 builds its store from one.
pub(super) const FETCHED_CORPORA_DIR: &str = "fixtures/corpus";

/// Links each fetched corpus (a directory under [`FETCHED_CORPORA_DIR`])
/// into the scratch copy, read in place: a mutation never touches them, and
/// copying megabytes of third-party text per worker would be waste.
fn link_fetched_corpora(src: &Path, dst: &Path) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(src.join(FETCHED_CORPORA_DIR)) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let from = entry.path();
        let to = dst.join(FETCHED_CORPORA_DIR).join(entry.file_name());
        if !from.is_dir() || to.exists() || to.is_symlink() {
            continue;
        }
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        std::os::unix::fs::symlink(&from, &to)
            .map_err(|e| format!("linking {}: {e}", to.display()))?;
    }
    Ok(())
}

/// `git apply` inside the scratch copy. The scratch lives under the
/// workspace's own `target/`, so without a repository of its own git would
/// resolve paths against the outer checkout and skip every hunk ("Skipped
/// patch"), exiting 0: [`copy_workspace`] makes the scratch its own
/// repository, and the ceiling stops discovery from climbing past it.
pub(super) fn git_apply(dir: &Path, diff: &str, extra: &[&str]) -> Result<(), String> {
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
#[derive(Debug, Clone, Copy)]
pub(super) enum Ended {
    /// Exited with a code.
    Code(i32),
    /// Killed by a signal (a crash).
    Signal,
    /// Ran past its limit and was killed.
    TimedOut,
}

/// What a child process printed, and how it ended.
pub(super) struct Ran {
    pub ended: Ended,
    /// Its standard output: the report, for a harness run.
    pub stdout: String,
    /// Its standard error: progress, seeds, the build's errors.
    pub stderr: String,
}

/// Runs `cmd` to its end or to `limit`, whichever comes first; a child past
/// its limit is killed and reported as [`Ended::TimedOut`].
///
/// # Errors
/// The child could not be spawned or waited for.
pub(super) fn run_with_timeout(mut cmd: Command, limit: Duration) -> Result<Ran, String> {
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
            return Ok(Ran {
                ended: Ended::TimedOut,
                stdout: String::new(),
                stderr: String::new(),
            });
        }
    };
    Ok(Ran {
        ended,
        stdout: out_t.join().unwrap_or_default(),
        stderr: err_t.join().unwrap_or_default(),
    })
}

/// The scratch copy, the target directory its builds share, and where gate
/// runs keep their temporary directories.
pub(super) struct Scratch {
    /// The copy of the workspace a mutation is applied in.
    pub work: PathBuf,
    /// Its own target directory.
    pub target: PathBuf,
    /// The parent of each gate run's `TMPDIR`; `None`: the system's.
    pub tmp: Option<PathBuf>,
}

/// What stopped a scratch build, by what the runner makes of it: a
/// mutation that does not compile is `unviable`, a build past its limit a
/// `timeout`, and a build that never ran says nothing of the mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildErrorKind {
    /// Cargo ran and the code did not compile.
    DoesNotCompile,
    /// The build ran past [`super::MUTANT_BUILD_TIMEOUT_S`].
    TimedOut,
    /// Cargo could not be started or waited for, or its thread panicked.
    NotRun,
}

/// A scratch build that gave no harness.
#[derive(Debug, thiserror::Error)]
#[error("{first}")]
pub struct BuildError {
    /// What stopped it.
    pub kind: BuildErrorKind,
    /// The build's first `error` line, or what stopped it, in a line.
    pub first: String,
    /// Cargo's standard output: with `--message-format=json`, its compiler
    /// messages as JSON lines; empty if it never ran.
    pub messages: String,
}

impl BuildError {
    /// A build that never ran, for `why`.
    pub fn not_run(why: impl Into<String>) -> BuildError {
        BuildError {
            kind: BuildErrorKind::NotRun,
            first: why.into(),
            messages: String::new(),
        }
    }
}

impl Scratch {
    /// Builds the scratch harness.
    ///
    /// # Errors
    /// The build's first `error` line, or that it timed out or never ran.
    pub fn build(&self) -> Result<(), BuildError> {
        self.build_diagnosed(false)
    }

    /// Builds the scratch harness; with `json`, cargo prints its compiler
    /// messages as JSON lines (`--message-format=json`), and a failure
    /// carries them.
    ///
    /// # Errors
    /// The build's first `error` line and its standard output, or that it
    /// timed out or never ran.
    pub fn build_diagnosed(&self, json: bool) -> Result<(), BuildError> {
        let mut cmd = harness_build(&self.work, &self.target);
        if json {
            cmd.arg("--message-format=json");
        }
        cmd.envs(SCRATCH_BUILD_ENV.iter().copied());
        for var in SCRATCH_BUILD_ENV_REMOVED {
            cmd.env_remove(var);
        }
        let ran = run_with_timeout(cmd, Duration::from_secs(MUTANT_BUILD_TIMEOUT_S))
            .map_err(BuildError::not_run)?;
        match ran.ended {
            Ended::Code(0) => Ok(()),
            Ended::TimedOut => Err(BuildError {
                kind: BuildErrorKind::TimedOut,
                first: "the build timed out".into(),
                messages: String::new(),
            }),
            _ => {
                let said = if json { &ran.stdout } else { &ran.stderr };
                let first = said
                    .lines()
                    .find(|l| l.starts_with("error"))
                    .or_else(|| ran.stderr.lines().find(|l| l.starts_with("error")))
                    .unwrap_or("the build failed")
                    .to_string();
                Err(BuildError {
                    kind: BuildErrorKind::DoesNotCompile,
                    first,
                    messages: ran.stdout,
                })
            }
        }
    }

    /// Runs the scratch harness with `args`, its temporary directories in a
    /// fresh directory under [`Scratch::tmp`] that is removed afterwards,
    /// whatever happened.
    /// With `schema`, the run selects that mutation of a schema build
    /// ([`super::schema::SCHEMA_ENV`]).
    fn harness(&self, args: &[&str], limit: Duration, schema: Option<u32>) -> Result<Ran, String> {
        let mut cmd = Command::new(self.target.join("debug").join("memoria-harness"));
        cmd.args(args).current_dir(&self.work);
        match schema {
            Some(k) => cmd.env(super::schema::SCHEMA_ENV, k.to_string()),
            None => cmd.env_remove(super::schema::SCHEMA_ENV),
        };
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

    /// `run SELECTOR --seed SEED --format json`.
    pub fn gate(
        &self,
        selector: &str,
        seed: u64,
        limit: Duration,
        schema: Option<u32>,
    ) -> Result<Ran, String> {
        let seed = seed.to_string();
        self.harness(
            &["run", selector, "--seed", &seed, "--format", "json"],
            limit,
            schema,
        )
    }

    /// `conform --fake --strict --format json`.
    pub fn conform(&self, limit: Duration, schema: Option<u32>) -> Result<Ran, String> {
        self.harness(
            &["conform", "--fake", "--strict", "--format", "json"],
            limit,
            schema,
        )
    }

    /// `explore --seeds 1 --from SEED --no-shrink`: one seed of the explorer.
    pub fn explore(&self, seed: u64, limit: Duration, schema: Option<u32>) -> Result<Ran, String> {
        let seed = seed.to_string();
        self.harness(
            &["explore", "--seeds", "1", "--from", &seed, "--no-shrink"],
            limit,
            schema,
        )
    }

    /// Replays one scenario file at the seed it records.
    pub fn replay(&self, file: &str, limit: Duration, schema: Option<u32>) -> Result<Ran, String> {
        self.harness(&["replay", file, "--format", "json"], limit, schema)
    }
}

/// `cargo build --quiet -p memoria-gates --bin memoria-harness` in the
/// workspace `dir`, into the target directory `target`: the one build both
/// the scratch copies and the seeding read.
fn harness_build(dir: &Path, target: &Path) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "build",
        "--quiet",
        "-p",
        "memoria-gates",
        "--bin",
        "memoria-harness",
    ])
    .current_dir(dir)
    .env("CARGO_TARGET_DIR", target);
    cmd
}

/// The caller's own target directory: `CARGO_TARGET_DIR` (or
/// `CARGO_BUILD_TARGET_DIR`) if set, else `<workspace>/target`.
pub(super) fn caller_target_dir(workspace: &Path) -> PathBuf {
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

/// One line of `cargo build --message-format=json`: the fields read here.
#[derive(serde::Deserialize)]
struct CargoArtifact {
    #[serde(default)]
    package_id: Option<String>,
    #[serde(default)]
    filenames: Vec<String>,
    #[serde(default)]
    out_dir: Option<String>,
}

/// The dependency units that the caller's target directory `from` already
/// holds for the harness, by metadata hash: the ones `cargo build -p
/// memoria-gates --bin memoria-harness` lists in the caller's workspace,
/// minus the workspace's own (path) packages. Their metadata hashes are the
/// scratch build's too, because the scratch changes only the workspace
/// crates' profile ([`SCRATCH_BUILD_ENV`]). Empty if the caller's build fails
/// or lists nothing (a cold scratch then compiles everything).
///
/// # Errors
/// The build could not be spawned.
pub(super) fn dependency_units(
    workspace: &Path,
    from: &Path,
) -> Result<std::collections::BTreeSet<String>, String> {
    let src = from.join("debug");
    let mut hashes = std::collections::BTreeSet::new();
    if !src.is_dir() {
        return Ok(hashes);
    }
    let mut cmd = harness_build(workspace, from);
    cmd.arg("--message-format=json");
    let ran = run_with_timeout(cmd, Duration::from_secs(MUTANT_BUILD_TIMEOUT_S))?;
    if !matches!(ran.ended, Ended::Code(0)) {
        return Ok(hashes);
    }
    for line in ran.stdout.lines() {
        let Ok(a) = serde_json::from_str::<CargoArtifact>(line) else {
            continue;
        };
        if a.package_id
            .as_deref()
            .is_none_or(|id| id.starts_with("path+"))
        {
            continue;
        }
        let paths = a
            .filenames
            .iter()
            .map(String::as_str)
            .chain(a.out_dir.as_deref());
        hashes.extend(paths.filter_map(|p| unit_hash(&src, Path::new(p))));
    }
    Ok(hashes)
}

/// Seeds a cold scratch target directory `to` with the units `hashes` names
/// from the caller's target directory `from`, so that its first build
/// compiles only the workspace's own crates. Copies, never links, so no
/// scratch build can write into the caller's files. Returns the bytes
/// copied; nothing if the scratch is warm already.
///
/// # Errors
/// A copy that fails; the caller then empties the scratch target and starts cold.
pub(super) fn seed_units(
    from: &Path,
    to: &Path,
    hashes: &std::collections::BTreeSet<String>,
    step: &super::progress::Step,
) -> Result<u64, String> {
    let (src, dst) = (from.join("debug"), to.join("debug"));
    if dst.join(".fingerprint").is_dir() || hashes.is_empty() {
        return Ok(0);
    }
    // What to copy first, so that the progress can say how far it got.
    let mut todo: Vec<(&str, String, PathBuf)> = Vec::new();
    for dir in ["deps", "build", ".fingerprint"] {
        let Ok(entries) = std::fs::read_dir(src.join(dir)) else {
            continue;
        };
        std::fs::create_dir_all(dst.join(dir))
            .map_err(|err| format!("{}: {err}", dst.join(dir).display()))?;
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = name
                .split('.')
                .next()
                .and_then(|stem| stem.rsplit_once('-'))
                .is_some_and(|(_, h)| hashes.contains(h));
            if ours {
                todo.push((dir, name, e.path()));
            }
        }
    }
    step.set_total(todo.len() as u64);
    let mut bytes = 0;
    for (k, (dir, name, path)) in todo.iter().enumerate() {
        bytes += copy_tree(path, &dst.join(dir).join(name))
            .map_err(|err| format!("seeding {dir}/{name}: {err}"))?;
        step.at(k as u64 + 1, &format!("{} MB copied", bytes / 1_000_000));
    }
    Ok(bytes)
}

/// [`GATE_TMP_PARENT`] if a directory can be made in it, else `None`.
pub(super) fn gate_tmp_parent() -> Option<PathBuf> {
    let parent = PathBuf::from(GATE_TMP_PARENT);
    tempfile::Builder::new()
        .prefix("memoria-mutant-probe-")
        .tempdir_in(&parent)
        .ok()
        .map(|_| parent)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
