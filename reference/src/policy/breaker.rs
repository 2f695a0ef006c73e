//! When a breaker fires: the refusal and S3 breakers' predicates over per-day tallies, and "cannot determine" (§8.1, gate 8).
//!
//! Everything here is a pure function over UTC days and tallies. The
//! counters themselves (sealed per-day rows, pruned on write) are
//! `storage/store/breaker.rs`'s, which reads them and hands the rows here;
//! the owner's sentence for a state is `web/sentences.rs`'s.
//!
//! **History.** Each sibling has a plaintext `since` day per counter kind:
//! the first UTC day memoria counted for it (a day number, no person). It
//! is what tells a quiet day (counted, zero) from a day nobody counted
//! ([`history`]).
//!
//! **Refusal breaker.** The window is the current UTC day W, the baseline
//! the [`BASELINE_DAYS`] UTC days `[W-7, W)`, disjoint from it. The
//! baseline askers are those with VISIBLE >= 1 in the baseline. It fires
//! when at least [`REFUSAL_BREAKER_ASKERS_MIN`] baseline askers each have
//! VISIBLE = 0 and NOT_VISIBLE >= 1 in the window.
//!
//! **S3 breaker.** Fires when the window holds at least
//! [`S3_BREAKER_FETCHES_MIN`] fetches, all 404, and the baseline holds at
//! least one success.
//!
//! **Cannot determine.** A breaker whose counters are missing, unreadable
//! or short of a full baseline says so and names what it lacks:
//! - no `since` day for the sibling (never counted, or the counters were
//!   deleted): it lacks the window and the baseline;
//! - a `since` day later than `W-7` (fewer than 7 full UTC days counted
//!   before today): it lacks the baseline;
//! - a row that fails to open (seal failure) lacks the window if it is
//!   today's, the baseline otherwise.
//!
//! It never reports "no anomaly" in any of these: a count that fails is not
//! a count of zero.

use std::collections::BTreeMap;

use crate::error::ErrorKind;

/// How long counters are kept, in UTC days: the window plus the baseline
/// (§3.2: "Retained 8 days"; `limits.rs` checks the sum).
pub const BREAKER_COUNTERS_RETAINED_DAYS: i64 = 8;
/// The baseline's length in UTC days, ending where the window begins (§8.1).
pub const BASELINE_DAYS: i64 = 7;
/// The fewest baseline askers refused in the window that fire the refusal
/// breaker (§8.1: "at least 3 askers in the baseline set").
pub const REFUSAL_BREAKER_ASKERS_MIN: usize = 3;
/// The fewest S3 fetches in the window that can fire the S3 breaker (§8.1:
/// "at least 20 fetches in the window, all 404").
pub const S3_BREAKER_FETCHES_MIN: u64 = 20;
/// Seconds in one UTC day.
pub const SECONDS_PER_DAY: i64 = 86_400;
/// The window's length in UTC days: today, W (§8.1).
pub const WINDOW_DAYS: i64 = 1;

/// The UTC day number of `unix_s`: whole days since 1970-01-01.
pub fn utc_day(unix_s: i64) -> i64 {
    unix_s.div_euclid(SECONDS_PER_DAY)
}

/// One S2 call's tally for one asker: how many pairs came back VISIBLE and
/// how many NOT_VISIBLE. Other values are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct S2Tally {
    /// Pairs answered VISIBLE.
    pub visible: u64,
    /// Pairs answered NOT_VISIBLE.
    pub not_visible: u64,
}

/// One sync's S3 tally for one sibling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct S3Tally {
    /// S3 fetches made (any outcome).
    pub fetches: u64,
    /// Fetches answered 404.
    pub not_found: u64,
    /// Fetches that returned a body.
    pub successes: u64,
}

/// What a breaker could not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lacking {
    /// Today's counters.
    Window,
    /// The 7 days before today.
    Baseline,
    /// Both: nothing is held for this sibling.
    WindowAndBaseline,
}

impl Lacking {
    fn join(a: Option<Lacking>, b: Lacking) -> Lacking {
        match (a, b) {
            (None, b) => b,
            (Some(a), b) if a == b => a,
            _ => Lacking::WindowAndBaseline,
        }
    }
}

/// One breaker's state for one sibling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakerState {
    /// The predicate holds; `count` is the askers refused (refusal) or the
    /// fetches that all answered 404 (S3).
    Fires {
        /// Askers or fetches, per breaker.
        count: u64,
    },
    /// The counters were read whole and the predicate does not hold.
    Silent,
    /// The counters are missing, unreadable or short of a full baseline.
    CannotDetermine {
        /// What the breaker lacks.
        lacking: Lacking,
        /// Why: no content, no person (`web/sentences.rs` says it).
        why: Undetermined,
    },
}

/// Why a breaker cannot determine its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undetermined {
    /// No `since` day: the source was never counted, or its counters were deleted.
    NoCounters,
    /// Counting began on UTC day `since` (a day number), later than `W-7`.
    CountingBegan {
        /// The first UTC day counted.
        since: i64,
    },
    /// A counter row failed to open (a seal failure).
    Unopenable,
    /// The counters could not be read at all: a storage error of this kind.
    Unreadable(ErrorKind),
}

/// One S2 counter row as the store read it: an asker's tallies on one UTC
/// day, `None` if the sealed cell failed to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S2Row {
    /// The asker's fingerprint (never the address).
    pub asker_fp: Vec<u8>,
    /// The UTC day number.
    pub day: i64,
    /// VISIBLE and NOT_VISIBLE that day, or `None` if unreadable.
    pub counts: Option<S2Tally>,
}

/// One S3 counter row as the store read it: a sibling's tallies on one
/// UTC day, `None` if the sealed cell failed to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S3Row {
    /// The UTC day number.
    pub day: i64,
    /// Fetches, 404s and successes that day, or `None` if unreadable.
    pub counts: Option<S3Tally>,
}

/// Whether the history behind a breaker covers a full baseline before
/// `today`: `since` is the first UTC day counted for it, if any. `None`
/// when it does; otherwise the state the breaker is in for want of it.
pub fn history(since: Option<i64>, today: i64) -> Option<BreakerState> {
    match since {
        None => Some(BreakerState::CannotDetermine {
            lacking: Lacking::WindowAndBaseline,
            why: Undetermined::NoCounters,
        }),
        Some(since) if since > today - BASELINE_DAYS => Some(BreakerState::CannotDetermine {
            lacking: Lacking::Baseline,
            why: Undetermined::CountingBegan { since },
        }),
        Some(_) => None,
    }
}

/// The refusal breaker's state on UTC day `today` over `rows`, every S2
/// counter row of one sibling from the baseline's first day to `today`
/// (§8.1). Call it only when [`history`] is `None`. A row that failed to
/// open makes the state [`BreakerState::CannotDetermine`].
pub fn refusal_state(today: i64, rows: impl IntoIterator<Item = S2Row>) -> BreakerState {
    // asker fingerprint -> (baseline VISIBLE, window VISIBLE, window NOT_VISIBLE)
    let mut per_asker: BTreeMap<Vec<u8>, (u64, u64, u64)> = BTreeMap::new();
    let mut lacking = None;
    for S2Row {
        asker_fp: fp,
        day,
        counts,
    } in rows
    {
        let Some(S2Tally {
            visible: v,
            not_visible: nv,
        }) = counts
        else {
            let part = if day == today {
                Lacking::Window
            } else {
                Lacking::Baseline
            };
            lacking = Some(Lacking::join(lacking, part));
            continue;
        };
        let e = per_asker.entry(fp).or_default();
        if day < today {
            e.0 += v;
        } else {
            e.1 += v;
            e.2 += nv;
        }
    }
    if let Some(lacking) = lacking {
        return BreakerState::CannotDetermine {
            lacking,
            why: Undetermined::Unopenable,
        };
    }
    let refused = per_asker
        .values()
        .filter(|(baseline_v, window_v, window_nv)| {
            *baseline_v >= 1 && *window_v == 0 && *window_nv >= 1
        })
        .count();
    if refused >= REFUSAL_BREAKER_ASKERS_MIN {
        BreakerState::Fires {
            count: refused as u64,
        }
    } else {
        BreakerState::Silent
    }
}

/// The S3 breaker's state on UTC day `today` over `rows`, every S3 counter
/// row of one sibling from the baseline's first day to `today` (§8.1).
/// Call it only when [`history`] is `None`.
pub fn s3_state(today: i64, rows: impl IntoIterator<Item = S3Row>) -> BreakerState {
    let (mut window_fetches, mut window_404, mut baseline_ok) = (0u64, 0u64, 0u64);
    let mut lacking = None;
    for S3Row { day, counts } in rows {
        let Some(S3Tally {
            fetches: f,
            not_found: nf,
            successes: ok,
        }) = counts
        else {
            let part = if day == today {
                Lacking::Window
            } else {
                Lacking::Baseline
            };
            lacking = Some(Lacking::join(lacking, part));
            continue;
        };
        if day == today {
            window_fetches += f;
            window_404 += nf;
        } else {
            baseline_ok += ok;
        }
    }
    if let Some(lacking) = lacking {
        return BreakerState::CannotDetermine {
            lacking,
            why: Undetermined::Unopenable,
        };
    }
    if window_fetches >= S3_BREAKER_FETCHES_MIN && window_404 == window_fetches && baseline_ok >= 1
    {
        BreakerState::Fires {
            count: window_fetches,
        }
    } else {
        BreakerState::Silent
    }
}
