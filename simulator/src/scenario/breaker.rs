//! The oracle's judge of §8.1's two breakers on the owner's sources page: what each sibling's refusal and S3 lines must say, computed from the fakes' own trace and memoria's calendar, never from memoria's store.
//!
//! Size: just over 700 lines, a third of them this doc and the tables of
//! the tests: the two breakers share one truth of what was counted, which
//! splitting would have to pass between files whole.
//!
//! §8.1 (as corrected 2026-09-07): the window is the current UTC day W, the
//! baseline the 7 UTC days `[W-7, W)`. The refusal breaker fires when at
//! least 3 askers who were answered VISIBLE by the sibling in the baseline
//! were each answered VISIBLE = 0 and NOT_VISIBLE >= 1 in the window; the
//! S3 breaker when the window holds at least 20 fetches, all 404, and the
//! baseline at least one success. Counters are kept per (sibling, asker,
//! UTC day) and durable; missing counters, or counters short of a full
//! baseline, say "cannot determine" and name what they lack.
//!
//! **The truth.** Every S2 answer a fake sent memoria (status 200), per
//! sibling and asker subject, is one call's tally (its VISIBLE and
//! NOT_VISIBLE pairs); every S3 fetch memoria made is one fetch, a success
//! (200), a 404, or a failure. Its UTC day is memoria's calendar when the
//! call arrived: the run's epoch, plus what the scenario skipped
//! (`advance-days`, `advance-hours`), plus the simulation's elapsed time,
//! read from [`crate::world::SimClock`] after each event and divided by
//! 86,400 here ([`utc_day`]), never with the reference's function.
//! "Counted since" is the first UTC day a counter row was written: a day
//! with a tally of at least one VISIBLE or NOT_VISIBLE (S2) or one fetch
//! (S3). A sibling with nothing counted lacks the window and the
//! baseline; one counted only since a day later than W-7 lacks the
//! baseline (the reference's reading of "short of a full baseline",
//! `reference/src/policy/breaker.rs`'s `history`; the spec names the cases,
//! not the day, and this is the one reading that never judges on fewer
//! than 7 counted days).
//!
//! **Bounds, where the truth cannot be exact.** Each call is surely
//! counted, possibly counted, or lost:
//! - An S2 answer shaped by a fault knob other than a lie (slow, cold:
//!   possibly past memoria's deadline; malformed: possibly refused whole
//!   by the decoder) is possibly counted, its pairs as traced an upper
//!   bound and nothing the lower. An answer other than 200 counts nothing.
//! - S2 answers in an event in which a crash landed, and S3 fetches up to
//!   [`SYNC_SPAN_MS`] before a restart, a crash, a backup or a restore of
//!   memoria's data (a sync writes its tally when it ends, and may be cut
//!   off first), are possibly counted. An S2 tally is written before its
//!   page returns, so a restart between events costs none.
//! - Calls between a backup of memoria's data and a restore from it are
//!   lost: the restore brings the counters back as the backup held them
//!   (and their "since" with them), its losses included. A call an earlier
//!   restore took away comes back with a backup taken after it (seed 166:
//!   restored from `m0`, then from `m3`, taken between the two).
//! - An S3 fetch up to [`SYNC_SPAN_MS`] before the calendar skips may be
//!   tallied on the day after; an S2 call is tallied before its page
//!   returns, inside its event.
//! - An S3 fetch shaped by latency (slow, cold) may have failed past the
//!   deadline whatever it answered; one up to [`SYNC_SPAN_MS`] before the
//!   render may not be tallied yet (its sync still running). Both are
//!   possibly counted.
//! - While memoria's token file for the sibling cannot be read (a fetch may
//!   fail before it is sent), or the fake hangs or drops connections, the
//!   S3 counts that day have no upper bound.
//!
//! A refusal asker is then surely refused (VISIBLE >= 1 surely in the
//! baseline, VISIBLE = 0 possibly in the window, NOT_VISIBLE >= 1 surely
//! in it) or possibly refused (each clause possibly). The line must say
//! fired, naming between the surely and the possibly refused, when at least
//! 3 are surely refused; no refusal anomaly when fewer than 3 possibly are;
//! and the sibling is skipped for that render otherwise, or when the
//! counting's first day is not certainly on one side of W-7. The S3 line
//! likewise. No fault damages a sealed counter row, so "cannot determine"
//! for an unreadable row is never expected, and never accepted.
//!
//! `[safety:breaker]` names every failure. The judge reads the sentences
//! by their words: `fired` (with the count as the first number after it),
//! `no refusal anomaly` / `no S3 anomaly`, and `cannot determine` naming
//! `window` and `baseline`.

use std::collections::{BTreeMap, BTreeSet};

use memoria_page::Page;

use super::checks::Check;
use super::oracle::app_of;
use crate::fake::server::FakeSibling;
use crate::fake::trace::{CallDetail, CallKind, TraceEvent};
use crate::world::{EPOCH_UNIX_S, MEMORIA_CONSUMER};

/// The invariant's name, first in each failed check's text.
pub const SAFETY_BREAKER: &str = "[safety:breaker]";
/// Seconds in a UTC day: POSIX time has no leap seconds (§8.1's windows
/// are UTC days).
pub const DAY_S: i64 = 86_400;
/// The baseline's length in UTC days, ending where the window begins (§8.1).
pub const BASELINE_DAYS: i64 = 7;
/// The fewest baseline askers refused in the window that fire the refusal
/// breaker (§8.1: "at least 3 askers in the baseline set").
pub const REFUSED_ASKERS_MIN: u64 = 3;
/// The fewest S3 fetches in the window that fire the S3 breaker (§8.1:
/// "at least 20 fetches in the window, all 404").
pub const S3_FETCHES_MIN: u64 = 20;
/// How long after an S3 fetch its sync may still be running, in simulated
/// ms: the tally is written when the sync ends. Four times the oracle's
/// `PULL_SETTLE_MS` (15 s), which covers a feed, a page of fetches and an
/// announce, each inside §6.5's per-call deadline.
pub const SYNC_SPAN_MS: u64 = 60_000;

/// The UTC day of `unix_s`: whole days since 1970-01-01.
pub fn utc_day(unix_s: i64) -> i64 {
    unix_s.div_euclid(DAY_S)
}

/// What the oracle knows of memoria's calendar and of the events that may
/// have cost it counter writes, recorded by the replay after each event.
#[derive(Debug, Clone, Default)]
pub(super) struct BreakerTruth {
    /// `(from simulated ms, seconds skipped)`: memoria's calendar is
    /// the epoch, plus the seconds skipped, plus the elapsed seconds.
    skipped: Vec<(u64, i64)>,
    /// Simulated ms ranges in which an S3 tally may have been lost.
    doubtful: Vec<(u64, u64)>,
    /// Simulated ms ranges in which an S2 tally may have been lost: the
    /// events a crash landed in (an S2 tally is written before its page
    /// returns, so a restart between events costs none).
    doubtful_s2: Vec<(u64, u64)>,
    /// Simulated ms ranges whose counter writes the restores took away,
    /// as memoria's data now stands: a restore puts back its backup's own
    /// losses, so a call one restore took away comes back with a later
    /// restore of a backup taken after it.
    lost: Vec<(u64, u64)>,
    /// memoria's backups by name: when each was taken, in simulated ms,
    /// and the ranges lost as the data stood then.
    backups: BTreeMap<String, (u64, Vec<(u64, u64)>)>,
    /// Per app, `(from simulated ms, a fetch may fail untraced)`.
    unclean: BTreeMap<String, Vec<(u64, bool)>>,
}

/// What happened in one event, as the breaker's truth needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Happened {
    /// Nothing that costs a counter write.
    Nothing,
    /// memoria restarted.
    Restart,
    /// A crash landed, and memoria woke again.
    Crash,
}

impl BreakerTruth {
    /// Records one event that ended at `now_ms`, applied at `applied_ms`,
    /// the one before it having ended at `previous_ms`: memoria's calendar
    /// now (`calendar_s`), what happened, and for each app whether a fetch
    /// may fail there untraced (`unclean`).
    pub(super) fn record(
        &mut self,
        previous_ms: u64,
        applied_ms: u64,
        now_ms: u64,
        calendar_s: i64,
        happened: Happened,
        unclean: &BTreeMap<String, bool>,
    ) {
        let skipped = calendar_s - EPOCH_UNIX_S - (now_ms / 1_000) as i64;
        if self.skipped.last().map(|(_, s)| *s) != Some(skipped) {
            self.skipped.push((applied_ms, skipped));
        }
        match happened {
            Happened::Nothing => {}
            Happened::Restart => self
                .doubtful
                .push((applied_ms.saturating_sub(SYNC_SPAN_MS), now_ms)),
            Happened::Crash => {
                self.doubtful
                    .push((previous_ms.saturating_sub(SYNC_SPAN_MS), now_ms));
                self.doubtful_s2.push((previous_ms, now_ms));
            }
        }
        for (app, on) in unclean {
            let v = self.unclean.entry(app.clone()).or_default();
            if v.last().map(|(_, u)| u) != Some(on) {
                v.push((applied_ms, *on));
            }
        }
    }

    /// memoria's data backed up as `name` at `at_ms`.
    pub(super) fn backed_up(&mut self, name: &str, at_ms: u64) {
        self.backups
            .insert(name.to_string(), (at_ms, self.lost.clone()));
    }

    /// memoria's data restored from backup `name`, from `applied_ms` to `now_ms`.
    pub(super) fn restored(&mut self, name: &str, applied_ms: u64, now_ms: u64) {
        if let Some((at, lost_then)) = self.backups.get(name) {
            let at = *at;
            self.lost = lost_then.clone();
            self.lost.push((at, now_ms));
            self.doubtful.push((at.saturating_sub(SYNC_SPAN_MS), at));
        }
        self.doubtful
            .push((applied_ms.saturating_sub(SYNC_SPAN_MS), now_ms));
    }

    /// Seconds skipped at simulated `ms`.
    fn skipped_at(&self, ms: u64) -> i64 {
        self.skipped
            .iter()
            .rev()
            .find(|(from, _)| *from <= ms)
            .or(self.skipped.first())
            .map_or(0, |(_, s)| *s)
    }

    /// memoria's UTC day at simulated `ms`.
    fn day_at(&self, ms: u64) -> i64 {
        utc_day(EPOCH_UNIX_S + self.skipped_at(ms) + (ms / 1_000) as i64)
    }

    /// The first and last UTC day a write for a call arriving at `ms` may
    /// land on, when the write follows it by up to `span_ms`.
    fn days(&self, ms: u64, span_ms: u64) -> (i64, i64) {
        let (a, b) = (self.day_at(ms), self.day_at(ms + span_ms));
        (a.min(b), a.max(b))
    }

    fn within(ranges: &[(u64, u64)], ms: u64) -> bool {
        ranges.iter().any(|(a, b)| *a <= ms && ms <= *b)
    }

    /// The UTC days on which a fetch at `app` may have failed untraced.
    fn unclean_days(&self, app: &str, now_ms: u64) -> BTreeSet<i64> {
        let mut out = BTreeSet::new();
        let Some(v) = self.unclean.get(app) else {
            return out;
        };
        for (i, (from, on)) in v.iter().enumerate() {
            if !on {
                continue;
            }
            let to = v.get(i + 1).map_or(now_ms, |(t, _)| *t);
            let (a, _) = self.days(*from, 0);
            let (_, b) = self.days(to, 0);
            out.extend(a..=b);
        }
        out
    }
}

/// How surely a call's tally reached memoria's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counted {
    Surely,
    Possibly,
}

/// One tally as the truth holds it: the days it may be on, how surely.
#[derive(Debug, Clone, Copy)]
struct Tally {
    days: (i64, i64),
    counted: Counted,
}

impl Tally {
    /// Surely on day range `[a, b]` (and surely counted).
    fn surely_in(&self, a: i64, b: i64) -> bool {
        self.counted == Counted::Surely && a <= self.days.0 && self.days.1 <= b
    }

    /// Possibly on day range `[a, b]`.
    fn possibly_in(&self, a: i64, b: i64) -> bool {
        self.days.0 <= b && a <= self.days.1
    }
}

/// What a breaker's line must say, or `None` when the truth cannot tell.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expected {
    /// Fired, naming between `lo` and `hi` (askers or fetches).
    Fires { lo: u64, hi: u64 },
    /// No anomaly.
    Silent,
    /// Cannot determine, lacking the baseline (and, if `both`, the window).
    Cannot { both: Option<bool> },
}

impl Expected {
    /// A few words for the timeline.
    fn words(&self) -> String {
        match self {
            Expected::Fires { lo, hi } if lo == hi => format!("fired ({lo})"),
            Expected::Fires { lo, hi } => format!("fired ({lo} to {hi})"),
            Expected::Silent => "silent".into(),
            Expected::Cannot { both: Some(true) } => "cannot determine (both)".into(),
            Expected::Cannot { .. } => "cannot determine (baseline)".into(),
        }
    }
}

/// The counting's first day and the predicate's bounds, to one expectation.
fn expect(
    today: i64,
    since_possibly: Option<i64>,
    since_surely: Option<i64>,
    predicate: Option<Expected>,
) -> Option<Expected> {
    let full = today - BASELINE_DAYS;
    let Some(lo) = since_possibly else {
        return Some(Expected::Cannot { both: Some(true) });
    };
    if lo > full {
        // Counted (if at all) only since after W-7.
        return Some(Expected::Cannot {
            both: since_surely.map(|_| false),
        });
    }
    match since_surely {
        Some(s) if s <= full => predicate,
        _ => None,
    }
}

/// The refusal line's expectation for `app` at UTC day `today`, from the
/// memoria S2 calls in `trace` up to now.
fn refusal(truth: &BreakerTruth, trace: &[TraceEvent], app: &str, today: i64) -> Option<Expected> {
    // asker -> tallies (visible, not visible, how surely)
    let mut per: BTreeMap<String, Vec<(Tally, u64, u64)>> = BTreeMap::new();
    let (mut since_possibly, mut since_surely): (Option<i64>, Option<i64>) = (None, None);
    for e in trace.iter().filter(|e| {
        e.call == CallKind::S2 && e.caller == MEMORIA_CONSUMER && app_of(&e.callee) == app
    }) {
        let CallDetail::S2 { subject, pairs, .. } = &e.detail else {
            continue;
        };
        if e.status != Some(200) || BreakerTruth::within(&truth.lost, e.at_ms) {
            continue;
        }
        let v = pairs.iter().filter(|p| p.result == "VISIBLE").count() as u64;
        let nv = pairs.iter().filter(|p| p.result == "NOT_VISIBLE").count() as u64;
        if v + nv == 0 {
            continue;
        }
        let clean = e.faults.iter().all(|f| f == "lie");
        let counted = if clean && !BreakerTruth::within(&truth.doubtful_s2, e.at_ms) {
            Counted::Surely
        } else {
            Counted::Possibly
        };
        let t = Tally {
            days: truth.days(e.at_ms, 0),
            counted,
        };
        since_possibly = Some(since_possibly.map_or(t.days.0, |s| s.min(t.days.0)));
        if counted == Counted::Surely {
            since_surely = Some(since_surely.map_or(t.days.1, |s| s.min(t.days.1)));
        }
        per.entry(subject.clone().unwrap_or_default())
            .or_default()
            .push((t, v, nv));
    }
    let (b0, b1) = (today - BASELINE_DAYS, today - 1);
    let (mut surely, mut possibly) = (0u64, 0u64);
    for tallies in per.values() {
        let sum = |f: &dyn Fn(&Tally) -> bool, of: &dyn Fn(u64, u64) -> u64| -> u64 {
            tallies
                .iter()
                .filter(|(t, _, _)| f(t))
                .map(|(_, v, nv)| of(*v, *nv))
                .sum()
        };
        let visible = |v: u64, _: u64| v;
        let refused = |_: u64, nv: u64| nv;
        let base_lo = sum(&|t| t.surely_in(b0, b1), &visible);
        let base_hi = sum(&|t| t.possibly_in(b0, b1), &visible);
        let win_v_lo = sum(&|t| t.surely_in(today, today), &visible);
        let win_v_hi = sum(&|t| t.possibly_in(today, today), &visible);
        let win_nv_lo = sum(&|t| t.surely_in(today, today), &refused);
        let win_nv_hi = sum(&|t| t.possibly_in(today, today), &refused);
        if base_lo >= 1 && win_v_hi == 0 && win_nv_lo >= 1 {
            surely += 1;
        }
        if base_hi >= 1 && win_v_lo == 0 && win_nv_hi >= 1 {
            possibly += 1;
        }
    }
    let predicate = if surely >= REFUSED_ASKERS_MIN {
        Some(Expected::Fires {
            lo: surely,
            hi: possibly,
        })
    } else if possibly < REFUSED_ASKERS_MIN {
        Some(Expected::Silent)
    } else {
        None
    };
    expect(today, since_possibly, since_surely, predicate)
}

/// What one S3 fetch told memoria, as far as the truth knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fetched {
    Success,
    NotFound,
    Failed,
    /// A fault shaped it: a success or 404 answered, possibly past the deadline.
    Shaped {
        success: bool,
        not_found: bool,
    },
}

/// The S3 line's expectation for `app` at UTC day `today`.
fn s3(
    truth: &BreakerTruth,
    trace: &[TraceEvent],
    app: &str,
    today: i64,
    now_ms: u64,
) -> Option<Expected> {
    let unclean = truth.unclean_days(app, now_ms);
    let mut since_possibly: Option<i64> = unclean.iter().next().copied();
    let mut since_surely: Option<i64> = None;
    let mut fetches: Vec<(Tally, Fetched)> = vec![];
    for e in trace.iter().filter(|e| {
        e.call == CallKind::S3 && e.caller == MEMORIA_CONSUMER && app_of(&e.callee) == app
    }) {
        if BreakerTruth::within(&truth.lost, e.at_ms) {
            continue;
        }
        // Latency may have taken it past memoria's deadline; any other
        // knob (an outage's status, a hang, a redirect) answers what the
        // trace says, or nothing memoria can read (a failure).
        let clean = !e.faults.iter().any(|f| f == "slow" || f == "cold");
        let fetched = match (clean, e.status) {
            (true, Some(200)) => Fetched::Success,
            (true, Some(404)) => Fetched::NotFound,
            (true, _) => Fetched::Failed,
            (false, s) => Fetched::Shaped {
                success: s == Some(200),
                not_found: s == Some(404),
            },
        };
        // A sync still running at the render has not written its tally.
        let running = e.at_ms + SYNC_SPAN_MS > now_ms;
        let counted = if clean && !running && !BreakerTruth::within(&truth.doubtful, e.at_ms) {
            Counted::Surely
        } else {
            Counted::Possibly
        };
        let t = Tally {
            days: truth.days(e.at_ms, SYNC_SPAN_MS),
            counted,
        };
        since_possibly = Some(since_possibly.map_or(t.days.0, |s| s.min(t.days.0)));
        if counted == Counted::Surely {
            since_surely = Some(since_surely.map_or(t.days.1, |s| s.min(t.days.1)));
        }
        fetches.push((t, fetched));
    }
    let (b0, b1) = (today - BASELINE_DAYS, today - 1);
    let in_window_lo = fetches
        .iter()
        .filter(|(t, _)| t.surely_in(today, today))
        .count() as u64;
    let in_window_hi = fetches
        .iter()
        .filter(|(t, _)| t.possibly_in(today, today))
        .count() as u64;
    // A fetch surely counted today that was not a 404.
    let surely_other = fetches
        .iter()
        .any(|(t, f)| t.surely_in(today, today) && matches!(f, Fetched::Success | Fetched::Failed));
    // One possibly counted today that was possibly not a 404 (a shaped
    // 404 may have come past the deadline: a failure), or a day on which a
    // fetch may have failed untraced.
    let possibly_other = unclean.contains(&today)
        || fetches
            .iter()
            .any(|(t, f)| t.possibly_in(today, today) && *f != Fetched::NotFound);
    let success_lo = fetches
        .iter()
        .filter(|(t, f)| t.surely_in(b0, b1) && *f == Fetched::Success)
        .count();
    let success_hi = fetches
        .iter()
        .filter(|(t, f)| {
            t.possibly_in(b0, b1)
                && matches!(f, Fetched::Success | Fetched::Shaped { success: true, .. })
        })
        .count();
    let window_unbounded = unclean.contains(&today);
    let predicate = if in_window_lo >= S3_FETCHES_MIN && !possibly_other && success_lo >= 1 {
        Some(Expected::Fires {
            lo: in_window_lo,
            hi: in_window_hi,
        })
    } else if (!window_unbounded && in_window_hi < S3_FETCHES_MIN)
        || surely_other
        || success_hi == 0
    {
        Some(Expected::Silent)
    } else {
        None
    };
    expect(today, since_possibly, since_surely, predicate)
}

/// Whether `line` says what `want` expects; the failure's words if not.
fn says(line: &str, want: &Expected) -> Result<(), String> {
    let fired = line.contains("fired");
    let silent = line.contains("no refusal anomaly") || line.contains("no S3 anomaly");
    let cannot = line.contains("cannot determine");
    match want {
        Expected::Fires { lo, hi } => {
            let count = line
                .split_once("fired")
                .and_then(|(_, rest)| {
                    rest.split(|c: char| !c.is_ascii_digit())
                        .find(|w| !w.is_empty())
                })
                .and_then(|n| n.parse::<u64>().ok());
            match count {
                Some(n) if fired && (*lo..=*hi).contains(&n) => Ok(()),
                _ if lo == hi => Err(format!("fired, naming {lo}")),
                _ => Err(format!("fired, naming {lo} to {hi}")),
            }
        }
        Expected::Silent if silent && !fired && !cannot => Ok(()),
        Expected::Silent => Err("no anomaly".into()),
        Expected::Cannot { both } => {
            let window = line.contains("window");
            let ok = cannot
                && line.contains("baseline")
                && match both {
                    Some(true) => window,
                    Some(false) => !window,
                    None => true,
                };
            if ok {
                Ok(())
            } else {
                Err(match both {
                    Some(true) => "cannot determine, naming the window and the baseline",
                    Some(false) => "cannot determine, naming the baseline alone",
                    None => "cannot determine, naming the baseline",
                }
                .into())
            }
        }
    }
}

/// Judges the owner's sources page `body` (shown, status 200) at
/// simulated `now_ms`, memoria's calendar then being `calendar_s`: each
/// sibling's refusal and S3 lines against what the trace says they must
/// say (module docs). Returns the failed checks, plus one passing summary.
pub(super) fn judge_breakers(
    truth: &BreakerTruth,
    body: &str,
    trace: &[TraceEvent],
    fakes: &BTreeMap<String, FakeSibling>,
    now_ms: u64,
    calendar_s: i64,
) -> Vec<Check> {
    let today = utc_day(calendar_s);
    let page = Page::parse(body);
    let mut out = vec![];
    let mut judged: Vec<String> = vec![];
    for app in fakes.keys() {
        let name = memoria::app_display_name(app);
        for (kind, want) in [
            ("refusal", refusal(truth, trace, app, today)),
            ("s3", s3(truth, trace, app, today, now_ms)),
        ] {
            let Some(want) = want else {
                judged.push(format!("{app} {kind} not judged"));
                continue;
            };
            judged.push(format!("{app} {kind} {}", want.words()));
            let css = format!("section.source[data-app=\"{name}\"] p.{kind}-breaker");
            let line = page.texts(&css).join(" ");
            if let Err(what) = says(&line, &want) {
                let what_breaker = if kind == "s3" { "S3" } else { "refusal" };
                out.push(Check {
                    expected: format!(
                        "{SAFETY_BREAKER} on UTC day {today}, {app}'s {what_breaker} breaker says {what} (§8.1, from the fakes' trace)"
                    ),
                    actual: if line.is_empty() {
                        "no such line".into()
                    } else {
                        line
                    },
                    ok: false,
                });
            }
        }
    }
    if out.is_empty() {
        out.push(Check {
            expected: format!(
                "oracle: the breaker lines say what the trace says on UTC day {today} ({})",
                judged.join(", ")
            ),
            actual: "held".into(),
            ok: true,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what, today, since possibly, since surely, the predicate, expected).
    type Row<'a> = (
        &'a str,
        i64,
        Option<i64>,
        Option<i64>,
        Option<Expected>,
        Option<Expected>,
    );

    #[test]
    fn each_row_of_the_counting_history_table_expects_what_it_says() {
        let fires = Some(Expected::Fires { lo: 3, hi: 3 });
        let rows: &[Row] = &[
            (
                "nothing counted",
                20,
                None,
                None,
                fires.clone(),
                Some(Expected::Cannot { both: Some(true) }),
            ),
            (
                "counted since W-6",
                20,
                Some(14),
                Some(14),
                fires.clone(),
                Some(Expected::Cannot { both: Some(false) }),
            ),
            (
                "possibly counted since W-6 only",
                20,
                Some(14),
                None,
                fires.clone(),
                Some(Expected::Cannot { both: None }),
            ),
            (
                "counted since W-7",
                20,
                Some(13),
                Some(13),
                fires.clone(),
                fires.clone(),
            ),
            (
                "counted since W-7 or W-6",
                20,
                Some(13),
                Some(14),
                fires.clone(),
                None,
            ),
        ];
        for (what, today, lo, hi, predicate, want) in rows {
            assert_eq!(&expect(*today, *lo, *hi, predicate.clone()), want, "{what}");
        }
    }

    #[test]
    fn each_line_is_read_by_its_words() {
        let fired = "Refusal breaker: fired. 3 people who were shown Sheets passages in the 7 days before today were refused.";
        let cannot_both = "Refusal breaker: cannot determine. The counters lack both the window (today) and the baseline (the 7 UTC days before today): no counters.";
        let cannot_base = "S3 breaker: cannot determine. The counters lack the baseline (the 7 UTC days before today): counting began on 2026-11-30.";
        let rows: &[(&str, Expected, bool)] = &[
            (fired, Expected::Fires { lo: 3, hi: 4 }, true),
            (fired, Expected::Fires { lo: 4, hi: 4 }, false),
            (fired, Expected::Silent, false),
            (
                "Refusal breaker: no refusal anomaly.",
                Expected::Silent,
                true,
            ),
            (
                "S3 breaker: no S3 anomaly.",
                Expected::Fires { lo: 20, hi: 20 },
                false,
            ),
            (cannot_both, Expected::Cannot { both: Some(true) }, true),
            (cannot_both, Expected::Cannot { both: Some(false) }, false),
            (cannot_base, Expected::Cannot { both: Some(false) }, true),
            (cannot_base, Expected::Cannot { both: None }, true),
            (
                "Refusal breaker: no refusal anomaly.",
                Expected::Cannot { both: None },
                false,
            ),
        ];
        for (line, want, ok) in rows {
            assert_eq!(says(line, want).is_ok(), *ok, "{line} / {want:?}");
        }
    }

    #[test]
    fn a_restore_puts_back_what_its_backup_held_and_loses_only_what_came_after() {
        let mut truth = BreakerTruth::default();
        truth.backed_up("m0", 0);
        truth.restored("m0", 20_000, 20_490);
        // A call at 40 s, then a backup of it, then a restore from before it.
        truth.backed_up("m3", 72_920);
        truth.restored("m0", 112_000, 112_080);
        assert!(BreakerTruth::within(&truth.lost, 40_000), "m0 lost it");
        truth.restored("m3", 140_300, 140_370);
        assert!(
            !BreakerTruth::within(&truth.lost, 40_000),
            "m3 held the call at 40 s, so restoring it puts the call back"
        );
        assert!(
            BreakerTruth::within(&truth.lost, 10_000),
            "m3 held m0's loss"
        );
        assert!(BreakerTruth::within(&truth.lost, 100_000), "after m3: lost");
    }

    #[test]
    fn a_utc_day_is_unix_seconds_over_86400() {
        assert_eq!(utc_day(EPOCH_UNIX_S), 20_787);
        assert_eq!(utc_day(20_788 * DAY_S - 1), 20_787);
        assert_eq!(utc_day(20_788 * DAY_S), 20_788);
    }
}
