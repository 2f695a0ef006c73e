//! Named fault knobs for a fake sibling, all off by default and switchable at any time through a [`FaultsHandle`] (§6.5, §4.1 gate 6).
//!
//! Delays are `tokio::time::sleep`, which turmoil and paused tokio tests
//! simulate; nothing here reads the wall clock.

use std::sync::{Arc, Mutex, PoisonError};

use crate::fake::trace::CallKind;

/// A sibling that hibernates: the first call after `idle_ms` without calls
/// waits `wake_ms` before it is answered (§6.5's cold sibling). A sibling
/// that has never been called counts as idle. Calls arriving while it wakes
/// wait for the same wake to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cold {
    /// Quiet period after which the sibling is asleep, in ms.
    pub idle_ms: u64,
    /// How long a wake takes, in ms.
    pub wake_ms: u64,
}

/// Latency added to every answer, or only to one call kind's (§6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slow {
    /// Added latency, in ms.
    pub latency_ms: u64,
    /// `None`: every call; `Some(kind)`: only that call.
    pub only: Option<CallKind>,
}

/// The sibling is down (§6.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outage {
    /// Accept the request and never answer.
    Hang,
    /// Answer this status with `{"error":"unavailable"}`.
    Status(u16),
    /// Drop the connection without answering. In-process (`oneshot`) the
    /// router answers 503 with an empty body and a [`RefuseConnection`]
    /// extension; `crate::net`'s servers drop the connection on seeing it.
    Refuse,
}

/// Marker extension on a response whose connection must be dropped unanswered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefuseConnection;

/// The sibling lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lie {
    /// S2 answers `VISIBLE` for every pair, whoever asks.
    VisibleForAnyone,
    /// S3 serves a made-up body for any id and revision.
    FabricatedS3,
}

/// One malformed S2 answer per decoder case (gate 6, `s2-decoder-cases.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MalformedS2 {
    /// 200 with a body that is not JSON.
    NotJson,
    /// 200 with an empty body.
    Empty,
    /// 200 with the first half of the real body.
    Truncated,
    /// 200 with the real body followed by extra bytes.
    TrailingBytes,
    /// The last result is dropped.
    MissingItem,
    /// Only the first result is sent.
    ShortResponse,
    /// The first result is repeated with a different value.
    DuplicateItem,
    /// The first result's value becomes `PERHAPS`.
    UnknownValue,
    /// `subject_kind` echoes the other kind.
    KindMismatch,
    /// This status with `{"error":"unavailable"}`.
    Non2xx(u16),
    /// Every result gains `"visible_to_team":true`.
    ExtraField,
    /// This 2xx status other than 200, with the well-formed body.
    Not200(u16),
    /// `subject_kind` is the kind asked, in capitals (`ADDRESS`).
    KindInCapitals,
    /// The first result is repeated with the same value.
    DuplicateSameValue,
}

/// One malformed S6 answer per kind of decoder case (`s6-decoder-cases.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MalformedS6 {
    /// 200 with a body that is not JSON.
    NotJson,
    /// 200 with an empty body.
    Empty,
    /// 200 with the first half of the real body.
    Truncated,
    /// 200 with the real body followed by extra bytes.
    TrailingBytes,
    /// The result's `type` becomes `PERHAPS`.
    UnknownType,
    /// `subject_kind` echoes the other kind.
    KindMismatch,
    /// A VALUE's `value` is sent as a JSON number, not a decimal string.
    ValueAsNumber,
    /// The result gains `"formula":"=SUM()"`.
    ExtraField,
    /// This status with `{"error":"unavailable"}`.
    Non2xx(u16),
}

/// S6 forced to an answer naming the first cell asked, whatever the cells
/// hold, but only where the true answer is a VALUE: a forced answer never
/// overrides custody (`NOT_VISIBLE`) or a real STALE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForcedS6 {
    /// `STALE(first cell)`.
    Stale,
    /// `NON_NUMERIC(first cell)`.
    NonNumeric,
}

/// A broken S1a announce (§4.1 rule 2): the consumer must authorise nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncateAnnounce {
    /// The last page has `next_page: null` and no close record.
    NoClose,
    /// The close record's `count` is off by this many (saturating at 0).
    WrongCount(i64),
    /// The first page answers; every continuation page (a `page` token) is
    /// accepted and never answered, so the consumer's deadline cuts the
    /// announce off midway: a timed-out announce, no information (§6.5).
    HangAfterFirstPage,
}

/// Every call answers `307` with this `Location` (§6.3: never followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The `Location` header value.
    pub location: String,
}

/// The knobs, all `None` (off) by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// See [`Cold`].
    pub cold: Option<Cold>,
    /// See [`Slow`].
    pub slow: Option<Slow>,
    /// See [`Outage`].
    pub outage: Option<Outage>,
    /// `None`: the outage takes every call; `Some(kind)`: only that call
    /// (S3's content store down while S1, S1a and S2 answer, say).
    pub outage_only: Option<CallKind>,
    /// See [`Lie`].
    pub lie: Option<Lie>,
    /// See [`MalformedS2`].
    pub malformed_s2: Option<MalformedS2>,
    /// See [`TruncateAnnounce`].
    pub truncate_announce: Option<TruncateAnnounce>,
    /// See [`Redirect`].
    pub redirect: Option<Redirect>,
    /// See [`MalformedS6`].
    pub malformed_s6: Option<MalformedS6>,
    /// See [`ForcedS6`].
    pub forced_s6: Option<ForcedS6>,
}

#[derive(Debug, Default)]
struct FaultState {
    faults: Faults,
    /// An armed one-shot: the first S1 page asked from this log position or
    /// later answers 503 (a feed failing mid-read, after the page that
    /// named a revision; gate 27).
    feed_fails_from: Option<usize>,
    /// An armed one-shot: S3's first answer for this pair (item, revision)
    /// is 503 (a refetch failing during a re-announce, §4.1 rule 4).
    s3_fails_for: Option<(String, String)>,
    last_call_ms: Option<u64>,
    awake_at_ms: u64,
}

/// A cloneable handle on one fake's knobs; every clone switches the same fake.
#[derive(Debug, Clone, Default)]
pub struct FaultsHandle(Arc<Mutex<FaultState>>);

impl FaultsHandle {
    /// A handle with every knob off.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut FaultState) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The knobs as they are now.
    #[must_use]
    pub fn get(&self) -> Faults {
        self.with(|s| s.faults.clone())
    }

    /// Replaces every knob at once.
    pub fn set(&self, faults: Faults) {
        self.with(|s| s.faults = faults);
    }

    /// Turns every knob off.
    pub fn clear(&self) {
        self.set(Faults::default());
    }

    /// Sets or clears [`Cold`].
    pub fn set_cold(&self, cold: Option<Cold>) {
        self.with(|s| s.faults.cold = cold);
    }

    /// Sets or clears [`Slow`].
    pub fn set_slow(&self, slow: Option<Slow>) {
        self.with(|s| s.faults.slow = slow);
    }

    /// Sets or clears [`Outage`].
    pub fn set_outage(&self, outage: Option<Outage>) {
        self.set_outage_for(outage, None);
    }

    /// Switches the outage knob for one call kind only (`None`: every call).
    pub fn set_outage_for(&self, outage: Option<Outage>, only: Option<CallKind>) {
        self.with(|s| {
            s.faults.outage = outage;
            s.faults.outage_only = only;
        });
    }

    /// Sets or clears [`Lie`].
    pub fn set_lie(&self, lie: Option<Lie>) {
        self.with(|s| s.faults.lie = lie);
    }

    /// Sets or clears [`MalformedS2`].
    pub fn set_malformed_s2(&self, malformed: Option<MalformedS2>) {
        self.with(|s| s.faults.malformed_s2 = malformed);
    }

    /// Sets or clears [`TruncateAnnounce`].
    pub fn set_truncate_announce(&self, truncate: Option<TruncateAnnounce>) {
        self.with(|s| s.faults.truncate_announce = truncate);
    }

    /// Sets or clears [`MalformedS6`].
    pub fn set_malformed_s6(&self, malformed: Option<MalformedS6>) {
        self.with(|s| s.faults.malformed_s6 = malformed);
    }

    /// Sets or clears [`ForcedS6`].
    pub fn set_forced_s6(&self, forced: Option<ForcedS6>) {
        self.with(|s| s.faults.forced_s6 = forced);
    }

    /// Arms a one-shot: the first S1 page asked from log position `from`
    /// or later answers 503. Unlike the knobs, [`FaultsHandle::clear`]
    /// leaves it armed: it fires once, when the feed is next read past
    /// `from`, the convergence rounds' pulls included (gate 27).
    pub fn arm_feed_failure(&self, from: usize) {
        self.with(|s| s.feed_fails_from = Some(from));
    }

    /// Whether an S1 page asked from log `position` fails (the one-shot
    /// [`FaultsHandle::arm_feed_failure`] armed), disarming it if so.
    pub(crate) fn feed_fails(&self, position: usize) -> bool {
        self.with(|s| {
            let hit = s.feed_fails_from.is_some_and(|from| position >= from);
            if hit {
                s.feed_fails_from = None;
            }
            hit
        })
    }

    /// Arms a one-shot: S3's first answer for `item_id` at `revision` is
    /// 503. [`FaultsHandle::clear`] leaves it armed, as
    /// [`FaultsHandle::arm_feed_failure`].
    pub fn arm_s3_failure(&self, item_id: &str, revision: &str) {
        self.with(|s| s.s3_fails_for = Some((item_id.to_owned(), revision.to_owned())));
    }

    /// Whether S3's answer for `item_id` at `revision` fails (the one-shot
    /// [`FaultsHandle::arm_s3_failure`] armed), disarming it if so.
    pub(crate) fn s3_fails(&self, item_id: &str, revision: &str) -> bool {
        self.with(|s| {
            let hit = s
                .s3_fails_for
                .as_ref()
                .is_some_and(|(i, r)| i == item_id && r == revision);
            if hit {
                s.s3_fails_for = None;
            }
            hit
        })
    }

    /// Sets or clears [`Redirect`].
    pub fn set_redirect(&self, redirect: Option<Redirect>) {
        self.with(|s| s.faults.redirect = redirect);
    }

    /// Registers a call arriving at `now_ms` of kind `call`; returns the
    /// knobs in force and how long to wait before answering, in ms, with the
    /// names of the delay knobs that applied.
    pub(crate) fn arrive(&self, now_ms: u64, call: CallKind) -> (Faults, u64, Vec<String>) {
        self.with(|s| {
            let mut delay = 0;
            let mut names = Vec::new();
            if let Some(cold) = s.faults.cold {
                let asleep = s
                    .last_call_ms
                    .is_none_or(|last| now_ms.saturating_sub(last) >= cold.idle_ms);
                if asleep && now_ms >= s.awake_at_ms {
                    s.awake_at_ms = now_ms + cold.wake_ms;
                }
                if now_ms < s.awake_at_ms {
                    delay += s.awake_at_ms - now_ms;
                    names.push("cold".to_owned());
                }
            }
            s.last_call_ms = Some(now_ms);
            if let Some(slow) = s.faults.slow
                && slow.only.is_none_or(|only| only == call)
            {
                delay += slow.latency_ms;
                names.push("slow".to_owned());
            }
            let mut faults = s.faults.clone();
            if faults.outage_only.is_some_and(|only| only != call) {
                faults.outage = None;
            }
            (faults, delay, names)
        })
    }
}
