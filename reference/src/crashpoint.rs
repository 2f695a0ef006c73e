//! Named crash points: a test hook that parks the process at a chosen step so a test can SIGKILL it there.
//!
//! Set `MEMORIA_CRASHPOINT=<name>` (for example `ingest:before-commit`) and
//! the first time execution reaches [`crashpoint`] with that name, the
//! process prints `crashpoint <name> reached` on stdout and parks forever.
//! The crash test reads that line and kills the child with SIGKILL, so the
//! kill lands at an exact, named step without any wall-clock sleep. Unset (the
//! normal case) it costs one cached environment lookup.
//!
//! Only with the `testkit` feature: without it [`crashpoint`] is an empty
//! inline function, the environment is never read, and a release build of
//! `memoria` has no crash point (`gates/tests/tidy.rs` checks the binary).

#[cfg(feature = "testkit")]
use std::io::Write as _;
#[cfg(feature = "testkit")]
use std::sync::OnceLock;

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

/// Parks the process forever if `name` is the armed crash point.
#[cfg(feature = "testkit")]
pub fn crashpoint(name: &str) {
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
}

/// Without the `testkit` feature a crash point is nothing at all.
#[cfg(not(feature = "testkit"))]
#[inline(always)]
pub fn crashpoint(_name: &str) {}
