//! A content-free record of every S-call a fake sibling receives, and the simulated clock that stamps it (§4.1, §6.1, gate 25).
//!
//! A [`TraceEvent`] holds ids, revisions, values, statuses, counts, subject
//! *kinds* and short person labels: never a title, a body, a query or an
//! address. [`Trace::render`] is deterministic: JSON lines in event order.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

/// Milliseconds since the run started, from whichever clock the run uses.
///
/// Never the wall clock inside a simulation: [`Clock::turmoil`] reads
/// turmoil's simulated time, [`Clock::manual`] a counter the test moves.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> u64 + Send + Sync>);

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Clock").field(&self.now_ms()).finish()
    }
}

impl Clock {
    /// A clock from any function returning milliseconds since start.
    pub fn from_fn(f: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Turmoil's simulated time since the simulation started
    /// (`turmoil::sim_elapsed`), 0 outside a simulation.
    #[must_use]
    pub fn turmoil() -> Self {
        Self::from_fn(|| {
            turmoil::sim_elapsed()
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                .unwrap_or(0)
        })
    }

    /// tokio's clock since this call: simulated when tokio's time is paused
    /// (tests with `start_paused`), monotonic real time otherwise (loopback
    /// serving only, never inside a simulation).
    #[must_use]
    pub fn tokio() -> Self {
        let start = tokio::time::Instant::now();
        Self::from_fn(move || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX))
    }

    /// A clock a test moves by hand, starting at 0 ms.
    #[must_use]
    pub fn manual() -> (Self, ManualClock) {
        let ms = Arc::new(AtomicU64::new(0));
        let read = Arc::clone(&ms);
        (
            Self::from_fn(move || read.load(Ordering::SeqCst)),
            ManualClock(ms),
        )
    }

    /// Milliseconds since start.
    #[must_use]
    pub fn now_ms(&self) -> u64 {
        (self.0)()
    }
}

/// The hand of a [`Clock::manual`] clock.
#[derive(Debug, Clone)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// Moves the clock forward by `ms` milliseconds.
    pub fn advance_ms(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }

    /// Sets the clock to `ms` milliseconds since start.
    pub fn set_ms(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
}

/// Which sibling call (§6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum CallKind {
    /// `GET /s1/feed`: the change feed.
    S1,
    /// `GET /s1a/announce`: the re-announce.
    S1a,
    /// `POST /s2/check`: the authorization re-check.
    S2,
    /// `POST /s3/fetch`: the content fetch.
    S3,
    /// `POST /s6/aggregate`: Sheets' aggregate (§6.1, §8.7).
    S6,
}

/// One S2 pair as asked and as answered (the answer actually sent, after
/// any `lie` fault; malformations are named in [`TraceEvent::faults`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracedPair {
    /// Opaque item id.
    pub item_id: String,
    /// Asked revision.
    pub revision: String,
    /// Wire value, e.g. `NOT_VISIBLE`.
    pub result: String,
}

/// One S1 row or S1a item record as sent: ids and revisions only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracedRow {
    /// Opaque item id.
    pub item_id: String,
    /// Revision.
    pub revision: String,
    /// S1 `gone` (always false for S1a items).
    pub gone: bool,
}

/// One S6 cell as asked: the sheet's id, row, column and revision. The
/// tab's name is left out: it is a title, and titles are content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracedCell {
    /// The sheet's item id.
    pub sheet: String,
    /// 1-based row.
    pub row: u32,
    /// 1-based column.
    pub col: u32,
    /// The revision asked.
    pub revision: String,
}

/// What one call carried and what it got, without content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallDetail {
    /// The call was answered before its body was looked at (auth failure,
    /// outage, redirect, hang, refusal).
    NotServed,
    /// S1: whether a cursor was passed, rows sent, `more`.
    S1 {
        /// True when the request carried `?cursor=`.
        cursor_given: bool,
        /// Rows sent.
        rows: Vec<TracedRow>,
        /// The `more` flag sent.
        more: bool,
    },
    /// S1a: which page, item records sent, whether it opened/closed.
    S1a {
        /// True for the first page (no `?page=`).
        first_page: bool,
        /// Item records sent on this page.
        items: Vec<TracedRow>,
        /// The close record's `count`, when this page carried one.
        close_count: Option<u64>,
    },
    /// S2: the subject's kind and label, and every pair with its answer.
    S2 {
        /// The kind asked (`address`/`person_ref`), when the body decoded.
        subject_kind: Option<String>,
        /// A stable short label for the asker (`member-1`, `guest-1`,
        /// `stranger`), never the address or person ref itself.
        subject: Option<String>,
        /// Pairs asked with the value answered.
        pairs: Vec<TracedPair>,
    },
    /// S3: the pair asked, and any field the request carried that the
    /// contract does not allow (gate 25).
    S3 {
        /// Item id asked, when the body held one.
        item_id: Option<String>,
        /// Revision asked, when the body held one.
        revision: Option<String>,
        /// Names (not values) of fields other than `item_id` and `revision`.
        unexpected_fields: Vec<String>,
        /// True when the answer carried a body (200).
        served: bool,
    },
    /// S6: the subject's kind and label, the function, every cell asked,
    /// and the result's type (never its value or display: content).
    S6 {
        /// The kind asked (`address`/`person_ref`), when the body decoded.
        subject_kind: Option<String>,
        /// The asker's label as for S2, when the body decoded.
        subject: Option<String>,
        /// `SUM`, `AVERAGE`, `MIN`, `MAX` or `COUNT`, when the body decoded.
        function: Option<String>,
        /// The cells asked, in order.
        cells: Vec<TracedCell>,
        /// The result's `type` as sent (`VALUE`, `STALE`, `NON_NUMERIC`,
        /// `NOT_VISIBLE`, `UNKNOWN`); `None` for a refused request.
        result: Option<String>,
    },
}

/// One S-call received by a fake sibling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceEvent {
    /// Simulated ms since the run started, at arrival.
    pub at_ms: u64,
    /// The consumer by token name (e.g. `memoria`), or `unauthenticated`.
    pub caller: String,
    /// The epoch at this sibling of the token the call carried (a
    /// consumer's first token is 1, each token added for it the next,
    /// §6.2); `None` for a missing or wrong token. The token itself is
    /// never recorded.
    pub epoch: Option<u32>,
    /// The sibling host, e.g. `acme.sheets.oficina.works` (§6.3).
    pub callee: String,
    /// Which call.
    pub call: CallKind,
    /// HTTP status answered; `None` when the fake hung or dropped the connection.
    pub status: Option<u16>,
    /// Names of fault knobs that shaped this answer, e.g. `slow`, `lie`.
    pub faults: Vec<String>,
    /// What the call carried.
    pub detail: CallDetail,
}

/// A shared, append-only trace; clone it into several fakes.
#[derive(Debug, Clone, Default)]
pub struct Trace(Arc<Mutex<Vec<TraceEvent>>>);

impl Trace {
    /// An empty trace.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one event.
    pub fn record(&self, event: TraceEvent) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }

    /// A copy of every event so far, in arrival order.
    #[must_use]
    pub fn events(&self) -> Vec<TraceEvent> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many events so far: an index [`Trace::since`] and
    /// [`Trace::with`] take, without copying the events
    /// ([`Trace::events`] copies them all).
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// True if no event has arrived yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy of the events from index `from` on (none if `from` is past
    /// the end), in arrival order: the calls since [`Trace::len`] was read.
    #[must_use]
    pub fn since(&self, from: usize) -> Vec<TraceEvent> {
        let all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        all.get(from..)
            .map(<[TraceEvent]>::to_vec)
            .unwrap_or_default()
    }

    /// Runs `f` over every event so far, in arrival order, without copying
    /// them; the trace is locked meanwhile, so `f` must not reach it.
    pub fn with<R>(&self, f: impl FnOnce(&[TraceEvent]) -> R) -> R {
        f(&self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Forgets every event.
    pub fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Deterministic JSON lines, one event per line, each ending in `\n`.
    #[must_use]
    pub fn render(&self) -> String {
        let mut out = String::new();
        for event in self.events() {
            out.push_str(&serde_json::to_string(&event).expect("trace events always serialise"));
            out.push('\n');
        }
        out
    }
}
