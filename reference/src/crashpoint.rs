//! Named crash points: a test hook that stops memoria at a chosen step as a SIGKILL there would, in a child process or in one simulated host.
//!
//! Two ways to arm one, both only with the `testkit` feature:
//!
//! - **A child process.** Set `MEMORIA_CRASHPOINT=<name>` (for example
//!   `ingest:before-commit`) and the first time execution reaches
//!   [`crashpoint`] with that name, the process prints `crashpoint <name>
//!   reached` on stdout and parks forever. The crash test reads that line
//!   and kills the child with SIGKILL, so the kill lands at an exact, named
//!   step without any wall-clock sleep. Unset (the normal case) it costs
//!   one cached environment lookup.
//! - **A simulated host** (issue 26). Several memorias share one process
//!   and one thread in a turmoil world, and gates run worlds on parallel
//!   threads, so a parked thread or the environment would stop them all.
//!   [`aim_crash`] aims a point at one data directory instead: the first
//!   time execution reaches it for a file under that directory, the point
//!   panics with a [`CrashLanded`] payload, and from then on that
//!   directory's instance is dead ([`landed_under`]): every store access
//!   to it through `offload.rs`, the one that reached the point included,
//!   waits forever instead of returning, so no caller writes, answers or
//!   calls anything after it.
//!   The world then drops the host's every task, as the kernel drops a
//!   killed process, and wakes a new memoria from the same directory.
//!
//! What the unwinding does that a SIGKILL does not, and why what is left
//! on disk is the same: the panic runs the destructors between the point
//! and the `catch_unwind` in `offload.rs`, and the world's drop of the
//! host runs the rest. An open rusqlite transaction
//! rolls back, which in WAL mode is what recovery does with frames no
//! commit frame closes; a [`std::fs::File`] has no buffer of its own, so
//! closing one writes nothing the kill would not have left in the page
//! cache (the tombstone log and the snapshot's temporary file are plain
//! files); the instance's mutex is poisoned, but nobody uses that instance
//! again. One difference stays: the store's last connection, closed when
//! the host is dropped, checkpoints the write-ahead log into the database
//! file where a kill leaves it beside it. The pages are the same, and the
//! next open reads the same committed state either way.
//!
//! Without the `testkit` feature [`crashpoint`] is an empty inline
//! function, the environment is never read, and a release build of
//! `memoria` has no crash point (`reference/ship/tests/no_crash_point.rs`
//! checks the binary).

#[cfg(feature = "testkit")]
use std::io::Write as _;
#[cfg(feature = "testkit")]
use std::path::{Path, PathBuf};
#[cfg(feature = "testkit")]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(feature = "testkit")]
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// The environment variable naming the crash point to park at.
#[cfg(feature = "testkit")]
pub const CRASHPOINT_ENV: &str = "MEMORIA_CRASHPOINT";

/// Every crash point the code defines, for tests to iterate.
#[cfg(feature = "testkit")]
pub const CRASHPOINTS: &[&str] = &[
    "ingest:before-commit",
    "ingest:after-commit",
    "snapshot:before-rename",
    "import:after-first-document",
    "tombstone:mid-append",
    "tombstone:after-append",
];

#[cfg(feature = "testkit")]
fn armed() -> Option<&'static str> {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED
        .get_or_init(|| std::env::var(CRASHPOINT_ENV).ok())
        .as_deref()
}

/// The panic payload of a simulated crash that landed: the point's name.
#[cfg(feature = "testkit")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrashLanded(pub &'static str);

/// One crash aimed at one data directory ([`aim_crash`]).
#[cfg(feature = "testkit")]
#[derive(Debug, Clone)]
pub struct AimedCrash {
    dir: PathBuf,
    point: &'static str,
    landed: Arc<AtomicBool>,
}

/// Every crash aimed now, at most one a directory.
#[cfg(feature = "testkit")]
static AIMS: Mutex<Vec<AimedCrash>> = Mutex::new(Vec::new());
/// How many are aimed: a crash point checks nothing more while none is.
#[cfg(feature = "testkit")]
static AIMS_HELD: AtomicUsize = AtomicUsize::new(0);

#[cfg(feature = "testkit")]
fn aims() -> MutexGuard<'static, Vec<AimedCrash>> {
    // The list holds whole entries; a panic cannot leave one half made.
    AIMS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Aims crash point `point` at the instance whose files are under `dir`
/// (its data directory): the first time execution reaches the point for a
/// file under `dir`, the point panics with [`CrashLanded`] and the
/// directory's instance is dead from then on ([`landed_under`]). Replaces
/// any crash aimed at `dir` before. `None` if `point` is not in
/// [`CRASHPOINTS`].
#[cfg(feature = "testkit")]
pub fn aim_crash(dir: &Path, point: &str) -> Option<AimedCrash> {
    let point = *CRASHPOINTS.iter().find(|p| **p == point)?;
    quiet_landings();
    let aim = AimedCrash {
        dir: dir.to_path_buf(),
        point,
        landed: Arc::default(),
    };
    let mut aims = aims();
    aims.retain(|a| a.dir != aim.dir);
    aims.push(aim.clone());
    AIMS_HELD.store(aims.len(), Ordering::SeqCst);
    Some(aim)
}

#[cfg(feature = "testkit")]
impl AimedCrash {
    /// The crash point aimed at.
    pub fn point(&self) -> &'static str {
        self.point
    }

    /// True once execution reached the point: the instance is dead.
    pub fn landed(&self) -> bool {
        self.landed.load(Ordering::SeqCst)
    }

    /// Takes the aim away, landed or not: the point no longer fires, and
    /// an instance woken next from the directory is alive. Call it once
    /// the dead instance's host has been dropped.
    pub fn disarm(&self) {
        let mut aims = aims();
        aims.retain(|a| !Arc::ptr_eq(&a.landed, &self.landed));
        AIMS_HELD.store(aims.len(), Ordering::SeqCst);
    }
}

/// True once a crash aimed at a directory holding `path` has landed and
/// is not yet disarmed: that directory's instance is dead.
#[cfg(feature = "testkit")]
pub fn landed_under(path: &Path) -> bool {
    AIMS_HELD.load(Ordering::SeqCst) > 0
        && aims()
            .iter()
            .any(|a| a.landed.load(Ordering::SeqCst) && path.starts_with(&a.dir))
}

/// Never returns once a crash aimed at `dir`, an instance's data
/// directory, has landed: that instance is dead (`offload.rs` awaits
/// this before any store work).
#[cfg(feature = "testkit")]
pub(crate) async fn unless_dead(dir: &Path) {
    if landed_under(dir) {
        std::future::pending::<()>().await;
    }
}

/// Never returns if `payload`, a caught panic's, is a crash that landed
/// ([`CrashLanded`]): the work that reached the point, and its caller,
/// do nothing more. Any other payload is handed back.
#[cfg(feature = "testkit")]
pub(crate) async fn unless_crash_landed(
    payload: Box<dyn std::any::Any + Send>,
) -> Box<dyn std::any::Any + Send> {
    if payload.is::<CrashLanded>() {
        std::future::pending::<()>().await;
    }
    payload
}

/// The default panic hook prints every panic, caught or not; a landed
/// crash is a fault the world asked for, not a bug, so its panic is not
/// printed. Installed once, in front of whatever hook was there.
#[cfg(feature = "testkit")]
fn quiet_landings() {
    static QUIET: OnceLock<()> = OnceLock::new();
    QUIET.get_or_init(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<CrashLanded>() {
                before(info);
            }
        }));
    });
}

/// Parks the process forever if `name` is the crash point the environment
/// armed; panics with [`CrashLanded`] if it is the point a crash aimed at
/// a directory holding `at` (the file this step writes), the first time.
#[cfg(feature = "testkit")]
pub fn crashpoint(name: &'static str, at: &Path) {
    debug_assert!(CRASHPOINTS.contains(&name), "undeclared crash point");
    if armed() == Some(name) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "crashpoint {name} reached");
        let _ = out.flush();
        drop(out);
        loop {
            std::thread::park();
        }
    }
    if AIMS_HELD.load(Ordering::SeqCst) == 0 {
        return;
    }
    let landed = aims().iter().any(|a| {
        a.point == name
            && at.starts_with(&a.dir)
            && a.landed
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
    });
    if landed {
        std::panic::panic_any(CrashLanded(name));
    }
}

/// Without the `testkit` feature a crash point is nothing at all.
#[cfg(not(feature = "testkit"))]
#[inline(always)]
pub fn crashpoint(_name: &'static str, _at: &std::path::Path) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aimed_crash_lands_once_only_under_its_directory_and_marks_it_dead_until_disarmed() {
        let here = tempfile::tempdir().unwrap();
        let there = tempfile::tempdir().unwrap();
        let aim = aim_crash(here.path(), "tombstone:mid-append").expect("declared");
        assert!(aim_crash(here.path(), "nowhere:at-all").is_none());
        let aim = aim_crash(here.path(), aim.point()).expect("re-aimed");
        crashpoint("tombstone:mid-append", &there.path().join("log"));
        crashpoint("ingest:after-commit", &here.path().join("db"));
        assert!(!aim.landed(), "another directory, another point");
        let log = here.path().join("log");
        let caught = std::panic::catch_unwind(|| crashpoint("tombstone:mid-append", &log))
            .expect_err("it lands");
        assert_eq!(
            caught.downcast_ref::<CrashLanded>(),
            Some(&CrashLanded("tombstone:mid-append"))
        );
        assert!(aim.landed());
        assert!(landed_under(&here.path().join("db")));
        assert!(!landed_under(&there.path().join("db")));
        crashpoint("tombstone:mid-append", &log);
        aim.disarm();
        assert!(!landed_under(&here.path().join("db")), "disarmed");
    }
}
