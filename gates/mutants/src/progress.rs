//! A mutation run's progress on stderr: a line per step and per mutation that finishes, and on a terminal a bar (`indicatif`) that the lines print above.
//!
//! Piped (CI, `--format json > file`), stderr gets the lines alone and no
//! escape sequence; the JSON on stdout is untouched either way.

use std::io::IsTerminal as _;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar of the run in progress, if stderr is a terminal.
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// Seconds between two plain progress lines of a long step (seeding a
/// scratch target directory), when no bar shows it.
pub const PROGRESS_LINE_EVERY_S: u64 = 10;

/// Removes the run's bar when dropped, however the run ends.
pub(super) struct BarGuard;

impl Drop for BarGuard {
    fn drop(&mut self) {
        stop();
    }
}

/// Starts the run's bar over `total` mutations, on a terminal only; the
/// bar goes when the guard is dropped.
pub(super) fn start(total: usize) -> BarGuard {
    if !std::io::stderr().is_terminal() {
        return BarGuard;
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:32}] {pos}/{len} mutations judged  {wide_msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(500));
    if let Ok(mut b) = BAR.lock() {
        *b = Some(bar);
    }
    BarGuard
}

/// Prints `line` on stderr, above the bar if there is one.
pub(super) fn line(line: &str) {
    let bar = BAR.lock().ok().and_then(|b| b.clone());
    match bar {
        Some(b) => b.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}

/// One mutation has its verdict: the bar moves on and shows `last`.
pub(super) fn finished(last: &str) {
    if let Some(b) = BAR.lock().ok().and_then(|b| b.clone()) {
        b.inc(1);
        b.set_message(last.to_string());
    }
}

/// Removes the bar at the end of the run.
fn stop() {
    if let Some(b) = BAR.lock().ok().and_then(|mut b| b.take()) {
        b.finish_and_clear();
    }
}

/// Reports a long step's progress, `done` of `total` units: on a terminal
/// as a bar of its own, else as a line every [`PROGRESS_LINE_EVERY_S`].
pub(super) struct Step {
    what: String,
    total: std::sync::atomic::AtomicU64,
    bar: Option<ProgressBar>,
    last_line: Mutex<Instant>,
    began: Instant,
}

impl Step {
    /// A step called `what` (`seeding target/mutants/target`) of `total` units.
    pub(super) fn new(what: &str, total: u64, unit: &str) -> Step {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(&format!(
                    "{{elapsed_precise}} {what} [{{bar:32}}] {{pos}}/{{len}} {unit} {{msg}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b
        });
        Step {
            what: what.to_string(),
            total: total.into(),
            bar,
            last_line: Mutex::new(Instant::now()),
            began: Instant::now(),
        }
    }

    /// The step turns out to be `total` units.
    pub(super) fn set_total(&self, total: u64) {
        self.total
            .store(total, std::sync::atomic::Ordering::Relaxed);
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
    }

    /// `done` units of the total are done; `note` says what that amounts to
    /// (`1.2 GB copied`).
    pub(super) fn at(&self, done: u64, note: &str) {
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(note.to_string());
            return;
        }
        let Ok(mut last) = self.last_line.lock() else {
            return;
        };
        if last.elapsed() >= Duration::from_secs(PROGRESS_LINE_EVERY_S) {
            *last = Instant::now();
            eprintln!(
                "mutants: {}: {done} of {} units, {note}, {} s so far",
                self.what,
                self.total.load(std::sync::atomic::Ordering::Relaxed),
                self.began.elapsed().as_secs()
            );
        }
    }

    /// Ends the step's bar (the caller prints the step's last line).
    pub(super) fn done(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
