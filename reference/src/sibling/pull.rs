//! When memoria pulls a sibling: on its own wake and on each question (§6.1, §6.5), never on a timer, at most one pull of an app at a time.
//!
//! §6.1: "memoria pulls on its own wake and on each question. It runs no
//! timers." [`Puller`] is the one place that decides it, for every surface
//! that asks a question (the page, a document, a brief, MCP):
//!
//! - [`Puller::wake`] pulls every configured sibling at once, with nobody
//!   waiting (§6.5's warm-up);
//! - [`Puller::question`] starts, once a request is ruled and never on its
//!   wait, a pull of every sibling whose last pull started at least
//!   [`S1_PULL_INTERVAL_MIN_S`] ago; the page answers from what was held
//!   when it was asked, and the next question sees what the pull brought;
//! - [`Puller::follow_up`] starts the syncs a ruling asks for at once (the
//!   refetch STALE asks for, the re-announce AHEAD marked, §4.1).
//!
//! A pull of an app marked for re-announce is the re-announce ([`sync`]),
//! so a failed announce is retried on the same trigger. A pull that failed
//! (the feed, the announce, a fetch) is not retried on every question: the
//! wait before the next one doubles from [`S1_PULL_INTERVAL_MIN_S`] up to
//! [`S1_PULL_BACKOFF_MAX_S`], and one that succeeds resets it. A question
//! that arrives while its app's pull runs asks for one more pull after it
//! (at most one), so nothing a question asked for is lost to the guard.
//!
//! What the pulls found is kept for the page (§8.1): [`Puller::freshness`]
//! names each sibling whose last pull failed, or whose content is older
//! than [`S1_CURRENT_AS_OF_AFTER_S`], with the time its content is current
//! as of.
//!
//! Architecture Invariant: nothing in the reference pulls a sibling on a
//! timer; every S1 and S1a call starts here, from a wake, a question or a
//! ruling's follow-up.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::client::SiblingClient;
use super::sync::{ReannounceStatus, SyncReport, sync};
use crate::clock::Clock;
use crate::offload::SharedInstance;
use crate::page::Freshness;

/// The least time between two pulls of one sibling that questions start,
/// in seconds. A chosen figure: a person's questions come seconds apart, so
/// the second question after an item appears finds it; under load it
/// bounds the feed calls a busy page makes to one per sibling per 5 s,
/// whatever the searches per second (issue 28).
pub const S1_PULL_INTERVAL_MIN_S: i64 = 5;
/// The most a failing sibling waits between two pulls questions start, in
/// seconds: the backoff doubles from [`S1_PULL_INTERVAL_MIN_S`] up to this.
/// A chosen figure: a sibling back from an outage is pulled again within
/// five minutes of the first question after it returns.
pub const S1_PULL_BACKOFF_MAX_S: i64 = 300;
/// Content older than this, in seconds since its sibling's last S1 answer,
/// is named on the results page with the time it is current as of (§8.1:
/// "a failed or stale S1 → the page states the corpus is current as of a
/// time"). A chosen figure: a corpus a quarter of an hour behind is worth
/// a line; one a few seconds behind (every page between two pulls) is not.
pub const S1_CURRENT_AS_OF_AFTER_S: i64 = 900;

/// Why a pull is started; logged, and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    Wake,
    Question,
    FollowUp,
}

/// One sibling's pull bookkeeping, in memory: a restart forgets it, and the
/// wake's pull starts it again.
#[derive(Debug, Clone, Default)]
struct AppPull {
    /// A pull of this app is running.
    running: bool,
    /// A trigger came while it ran: pull once more after it.
    again: bool,
    /// Unix seconds when the last pull started; `None` before the first.
    started_at: Option<i64>,
    /// Pulls that failed in a row since the last one that succeeded.
    failures: u32,
    /// Unix seconds when the last pull that failed ended, while it is the
    /// latest.
    failed_at: Option<i64>,
}

impl AppPull {
    /// Whether a question may start a pull at `now`.
    fn due(&self, now: i64) -> bool {
        let Some(started) = self.started_at else {
            return true;
        };
        now.saturating_sub(started) >= backoff_s(self.failures)
    }
}

/// The wait before a question starts the next pull after `failures`
/// failed pulls in a row, in seconds.
fn backoff_s(failures: u32) -> i64 {
    let doubled = S1_PULL_INTERVAL_MIN_S.saturating_mul(1i64 << failures.min(16));
    doubled.min(S1_PULL_BACKOFF_MAX_S)
}

/// Whether `report` says the pull did all it set out to: the feed answered,
/// every fetch it needed succeeded, and a re-announce (if one was due)
/// completed.
fn succeeded(report: &SyncReport) -> bool {
    report.feed_error.is_none()
        && report.fetch_failed == 0
        && !matches!(
            report.reannounce,
            Some(ReannounceStatus::Failed(_) | ReannounceStatus::Unapplied(_))
        )
}

/// The one place that starts sibling pulls: on wake, on each question and
/// as a ruling's follow-up (module docs). Cheap to clone; clones share
/// their bookkeeping.
#[derive(Clone)]
pub struct Puller {
    instance: SharedInstance,
    client: Arc<SiblingClient>,
    clock: Arc<dyn Clock>,
    /// Run after every pull (the web state wakes its embedding loop).
    after: Option<Arc<dyn Fn() + Send + Sync>>,
    apps: Arc<Mutex<BTreeMap<String, AppPull>>>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<Vec<SyncReport>>>>>,
}

impl std::fmt::Debug for Puller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Puller").finish_non_exhaustive()
    }
}

impl Puller {
    /// A puller of `client`'s siblings into `instance`, reading time from
    /// `clock` (the instance's).
    pub fn new(
        instance: SharedInstance,
        client: Arc<SiblingClient>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Puller {
            instance,
            client,
            clock,
            after: None,
            apps: Arc::default(),
            tasks: Arc::default(),
        }
    }

    /// The same puller, running `after` once each pull has finished.
    pub fn with_after(mut self, after: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.after = Some(after);
        self
    }

    /// The sibling client the pulls use.
    pub fn client(&self) -> &Arc<SiblingClient> {
        &self.client
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, AppPull>> {
        self.apps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The wake's pull (§6.5): every configured sibling at once, with no
    /// query and no asker, awaited here. Spawn it to run beside the server.
    pub async fn wake(&self) -> Vec<SyncReport> {
        let now = self.clock.now_unix_s();
        let mine: Vec<String> = {
            let mut apps = self.lock();
            self.client
                .apps()
                .into_iter()
                .filter(|app| claim(apps.entry(app.clone()).or_default(), now, true))
                .collect()
        };
        let pulls = mine.iter().map(|app| self.pull(app, Trigger::Wake));
        futures::future::join_all(pulls)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// A question was asked (a search, a document, a brief, an MCP call):
    /// starts, beside it, a pull of every sibling that is due (module
    /// docs). Returns at once; never waits for a sibling.
    pub fn question(&self) {
        let now = self.clock.now_unix_s();
        let due: Vec<String> = {
            let mut apps = self.lock();
            self.client
                .apps()
                .into_iter()
                .filter(|app| {
                    let a = apps.entry(app.clone()).or_default();
                    a.due(now) && claim(a, now, true)
                })
                .collect()
        };
        for app in due {
            self.spawn(app, Trigger::Question);
        }
    }

    /// Starts the syncs a ruling asks for (§4.1: the refetch STALE asks
    /// for, the re-announce AHEAD marked), at once unless the app is failing
    /// and its backoff has not run out; one already running pulls again
    /// after it.
    pub fn follow_up(&self, apps: impl IntoIterator<Item = String>) {
        let now = self.clock.now_unix_s();
        let mine: Vec<String> = {
            let mut held = self.lock();
            apps.into_iter()
                .filter(|app| {
                    let a = held.entry(app.clone()).or_default();
                    (a.failures == 0 || a.due(now)) && claim(a, now, true)
                })
                .collect()
        };
        for app in mine {
            self.spawn(app, Trigger::FollowUp);
        }
    }

    /// Stops every pull this puller started that still runs: the server
    /// is stopping, and no pull of the instance it served may write to
    /// the store after it (a process that exits ends its pulls; a restart
    /// in one process must too, or two instances write one tombstone log).
    pub fn stop(&self) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        for h in tasks.drain(..) {
            h.abort();
        }
    }

    fn spawn(&self, app: String, trigger: Trigger) {
        let me = self.clone();
        let handle = tokio::spawn(async move { me.pull(&app, trigger).await });
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.retain(|h| !h.is_finished());
        tasks.push(handle);
    }

    /// Pulls `app` (already claimed), then again while triggers came during
    /// the pull; records each outcome and releases the claim.
    async fn pull(&self, app: &str, trigger: Trigger) -> Vec<SyncReport> {
        let mut reports = vec![];
        loop {
            tracing::debug!(app, trigger = ?trigger, "sibling pull");
            let report = sync(&self.instance, &self.client, app).await;
            if let Some(after) = &self.after {
                after();
            }
            let ok = succeeded(&report);
            reports.push(report);
            let now = self.clock.now_unix_s();
            let mut apps = self.lock();
            let a = apps.entry(app.to_string()).or_default();
            if ok {
                a.failures = 0;
                a.failed_at = None;
            } else {
                a.failures = a.failures.saturating_add(1);
                a.failed_at = Some(now);
            }
            if a.again && (ok || a.due(now)) {
                a.again = false;
                a.started_at = Some(now);
                continue;
            }
            a.again = false;
            a.running = false;
            return reports;
        }
    }

    /// Awaits every pull a question or a follow-up started so far, and any
    /// each led to, and returns their reports in start order. Pulls run on
    /// their own in production; this is how a caller that must report them
    /// (the CLI, a gate) waits for them to end, never a trigger.
    pub async fn settle(&self) -> Vec<SyncReport> {
        let mut reports = vec![];
        loop {
            let batch: Vec<_> =
                std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
            if batch.is_empty() {
                return reports;
            }
            for handle in batch {
                match handle.await {
                    Ok(r) => reports.extend(r),
                    Err(e) => tracing::error!(error = %e, "a sibling pull did not finish"),
                }
            }
        }
    }

    /// The siblings a results page names as behind (§8.1): each configured
    /// app whose last pull failed, or whose last S1 answer is older than
    /// [`S1_CURRENT_AS_OF_AFTER_S`] (or never came), with the time its
    /// content is current as of, in app order. An app marked for
    /// re-announce is left out: its reconciling line already says it is
    /// out of the search (§4.1 rule 1). A store that cannot be read names
    /// every app, current as of nothing known.
    pub async fn freshness(&self) -> Vec<Freshness> {
        let apps = self.client.apps();
        let names = apps.clone();
        // Per app: (marked for re-announce, unix seconds of its last S1 answer).
        let states: BTreeMap<String, (bool, Option<i64>)> = self
            .instance
            .run(move |i| {
                names
                    .into_iter()
                    .map(|a| {
                        let state = i.store().sibling_state(&a).ok();
                        let marked = state.as_ref().is_some_and(|s| s.reannounce);
                        (a, (marked, state.and_then(|s| s.polled_at)))
                    })
                    .collect()
            })
            .await
            .unwrap_or_default();
        let now = self.clock.now_unix_s();
        let held = self.lock();
        apps.into_iter()
            .filter_map(|app| {
                let (marked, current_as_of) = states.get(&app).copied().unwrap_or_default();
                if marked {
                    return None;
                }
                let last_pull_failed = held.get(&app).is_some_and(|a| a.failed_at.is_some());
                let old =
                    current_as_of.is_none_or(|t| now.saturating_sub(t) > S1_CURRENT_AS_OF_AFTER_S);
                (last_pull_failed || old).then_some(Freshness {
                    app,
                    current_as_of,
                    last_pull_failed,
                })
            })
            .collect()
    }
}

/// Claims `a` for a pull starting at `now`: `true` if none was running
/// (the caller starts it); else, if `again`, asks the running pull for one
/// more after it, and returns `false`.
fn claim(a: &mut AppPull, now: i64, again: bool) -> bool {
    if a.running {
        a.again |= again;
        return false;
    }
    a.running = true;
    a.started_at = Some(now);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_the_interval_and_stops_at_its_cap() {
        let table: Vec<(u32, i64)> = vec![(0, 5), (1, 10), (2, 20), (3, 40), (6, 300), (40, 300)];
        for (failures, wait) in table {
            assert_eq!(backoff_s(failures), wait, "after {failures} failures");
        }
    }

    #[test]
    fn a_question_is_due_once_the_interval_has_passed_since_the_last_start() {
        let mut a = AppPull::default();
        assert!(a.due(0), "never pulled: due");
        assert!(claim(&mut a, 100, false));
        assert!(!claim(&mut a, 101, false), "one pull of an app at a time");
        a.running = false;
        assert!(!a.due(104));
        assert!(a.due(105));
        a.failures = 2;
        assert!(!a.due(119), "failing: the backoff, not the interval");
        assert!(a.due(120));
    }

    #[test]
    fn a_trigger_during_a_pull_asks_for_one_more_after_it() {
        let mut a = AppPull::default();
        assert!(claim(&mut a, 0, true));
        assert!(!a.again);
        assert!(!claim(&mut a, 1, true));
        assert!(a.again);
    }
}
