//! Progress on stderr for the harness's long commands: one line as each unit (case, seed, scenario, mutation) finishes, a bar on a terminal, and a note for a step that takes a while.
//!
//! A command makes one [`Progress`] for its run and calls
//! [`Progress::finished`] as each unit ends. Code deep inside a unit (gate
//! 29 embedding a corpus, a model loading) calls the free [`note`], which
//! reaches the run's reporter if one is installed and does nothing
//! otherwise: under `cargo test` nothing is printed.
//!
//! Everything goes to stderr. stdout, where the JSON and JUnit reports are
//! printed, is never written here, so a report piped to a file is the same
//! byte for byte with progress on or off (`gates/tests/harness/cli.rs` checks it).
//!
//! ```
//! use memoria_gates::progress::{Mode, Progress};
//! let p = Progress::start("run", 2, Mode::Quiet);
//! p.running("1/database-and-wal");
//! p.finished("pass 1/database-and-wal (0.3 s)");
//! memoria_gates::progress::note("embedding 820 passages");
//! p.finished("pass 1/snapshot (0.1 s)");
//! ```

use std::io::{IsTerminal as _, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often a bar redraws on its own, so its elapsed time moves while one
/// long unit runs, in milliseconds.
pub const BAR_TICK_MS: u64 = 500;

/// Where progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A bar redrawn in place, with finished units printed above it: for a terminal.
    Bar,
    /// One plain line per finished unit and per note: for a pipe or a CI log.
    Lines,
    /// Nothing at all.
    Quiet,
}

impl Mode {
    /// [`Mode::Bar`] when stderr is a terminal, else [`Mode::Lines`].
    pub fn detect() -> Mode {
        if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// The one sink a run's lines go to.
enum Out {
    Bar(ProgressBar),
    Lines(Mutex<Box<dyn Write + Send>>),
    Quiet,
}

struct Shared {
    /// The command's name, first on every plain line (`run`, `sweep`, …).
    what: String,
    total: u64,
    done: AtomicU64,
    started: Instant,
    out: Out,
}

impl Shared {
    fn line(&self, text: &str) {
        match &self.out {
            Out::Bar(bar) => bar.println(text),
            Out::Lines(w) => {
                let mut w = w.lock().unwrap_or_else(PoisonError::into_inner);
                // Progress is best effort: a closed stderr stops no run.
                let _ = writeln!(w, "{text}");
                let _ = w.flush();
            }
            Out::Quiet => {}
        }
    }
}

/// The reporter [`note`] reaches: the newest [`Progress`] still alive.
static CURRENT: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

/// One command's progress over `total` units. Dropping it clears the bar
/// and stops [`note`] from reaching it.
pub struct Progress {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("what", &self.shared.what)
            .field("total", &self.shared.total)
            .field("done", &self.shared.done.load(Ordering::Relaxed))
            .finish()
    }
}

impl Progress {
    /// Starts reporting `total` units of the command `what` (`"run"`,
    /// `"sweep"`, `"replay"`) to stderr in `mode`, and installs it as the
    /// reporter [`note`] reaches.
    pub fn start(what: &str, total: u64, mode: Mode) -> Progress {
        let out = match mode {
            Mode::Bar => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
                    )
                    .expect("the template is valid"),
                );
                bar.set_prefix(what.to_owned());
                bar.enable_steady_tick(Duration::from_millis(BAR_TICK_MS));
                Out::Bar(bar)
            }
            Mode::Lines => Out::Lines(Mutex::new(Box::new(std::io::stderr()))),
            Mode::Quiet => Out::Quiet,
        };
        Progress::install(what, total, out)
    }

    /// As [`Progress::start`] in [`Mode::Lines`], writing to `w` instead
    /// of stderr (for tests of the lines themselves).
    pub fn lines_to(what: &str, total: u64, w: Box<dyn Write + Send>) -> Progress {
        Progress::install(what, total, Out::Lines(Mutex::new(w)))
    }

    fn install(what: &str, total: u64, out: Out) -> Progress {
        let shared = Arc::new(Shared {
            what: what.to_owned(),
            total,
            done: AtomicU64::new(0),
            started: Instant::now(),
            out,
        });
        *CURRENT.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&shared));
        Progress { shared }
    }

    /// Says which unit is running now: the bar's message. Plain lines
    /// print nothing until it finishes.
    pub fn running(&self, unit: &str) {
        if let Out::Bar(bar) = &self.shared.out {
            bar.set_message(unit.to_owned());
        }
    }

    /// One unit finished: prints `{what} [n/total] {line}` (above the bar on
    /// a terminal) and advances the count.
    pub fn finished(&self, line: &str) {
        let s = &self.shared;
        let n = s.done.fetch_add(1, Ordering::Relaxed) + 1;
        let width = s.total.to_string().len();
        s.line(&format!("{} [{n:>width$}/{}] {line}", s.what, s.total));
        if let Out::Bar(bar) = &s.out {
            bar.set_position(n);
        }
    }

    /// How many units have finished.
    pub fn done(&self) -> u64 {
        self.shared.done.load(Ordering::Relaxed)
    }

    /// Time since the run started.
    pub fn elapsed(&self) -> Duration {
        self.shared.started.elapsed()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let mut current = CURRENT.lock().unwrap_or_else(PoisonError::into_inner);
        if current
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, &self.shared))
        {
            *current = None;
        }
        if let Out::Bar(bar) = &self.shared.out {
            bar.finish_and_clear();
        }
    }
}

/// A step inside a unit that takes more than a few seconds says what it is
/// doing and how far it has got (`gate 29: embedding 820 passages with
/// all-MiniLM-L6-v2`): a plain line `{what}: {msg}`, or the bar's message.
/// With no [`Progress`] alive (a library call, `cargo test`) it prints
/// nothing. `msg` names work, never content (no document text, no query).
pub fn note(msg: &str) {
    let current = CURRENT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let Some(s) = current else { return };
    match &s.out {
        Out::Bar(bar) => bar.set_message(msg.to_owned()),
        Out::Lines(_) => s.line(&format!("{}: {msg}", s.what)),
        Out::Quiet => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn plain_lines_count_each_finished_unit_and_carry_notes_only_while_a_run_is_alive() {
        let out = Captured::default();
        {
            let p = Progress::lines_to("run", 12, Box::new(out.clone()));
            p.running("1/a");
            p.finished("pass 1/a (0.1 s)");
            note("embedding 3 texts");
            p.finished("FAIL 1/b (2.0 s)");
            assert_eq!(p.done(), 2);
        }
        note("after the run: printed nowhere");
        let text = String::from_utf8(out.0.lock().expect("not poisoned").clone()).expect("utf-8");
        expect_test::expect![[r#"
            run [ 1/12] pass 1/a (0.1 s)
            run: embedding 3 texts
            run [ 2/12] FAIL 1/b (2.0 s)
        "#]]
        .assert_eq(&text);
    }
}
