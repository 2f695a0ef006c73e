//! One search, ruled: rank, ask every sibling at once, render only what passed (§8.1, §4.1, §6.5).
//!
//! The instance lock is never held across a sibling call: candidates are
//! taken under it, the siblings are asked without it, and AHEAD's mark is
//! written under it again.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use super::client::{SiblingClient, unknown_for};
use super::wire::{S2Fault, Subject, Verdict};
use crate::breaker::S2Tally;
use crate::instance::{Instance, SearchError, SearchPage, Verdicts};

/// A ruled page and the follow-ups it asks for.
#[derive(Debug, Clone)]
pub struct RuledSearch {
    /// The page to render.
    pub page: SearchPage,
    /// Apps that answered STALE for some pair: refetch them (§4.1).
    pub refetch: BTreeSet<String>,
    /// Apps that answered AHEAD for some pair: now marked for re-announce.
    pub reannounce: BTreeSet<String>,
}

fn lock(instance: &Mutex<Instance>) -> std::sync::MutexGuard<'_, Instance> {
    instance.lock().unwrap_or_else(|p| p.into_inner())
}

/// Adds this call's VISIBLE and NOT_VISIBLE counts per app to the refusal
/// breaker's durable counters (§8.1), after the verdicts are in. Written
/// here, on the path that made the call, and never read at query time. An
/// app that answered neither (an outage's UNKNOWNs) writes nothing.
fn record_breaker_counters(
    instance: &Mutex<Instance>,
    asker: &str,
    decoded: &std::collections::BTreeMap<String, super::wire::S2Decoded>,
) {
    let guard = lock(instance);
    let now = guard.clock().now_unix_s();
    for (app, d) in decoded {
        let tally = S2Tally {
            visible: d
                .verdicts
                .iter()
                .filter(|v| **v == Verdict::Visible)
                .count() as u64,
            not_visible: d
                .verdicts
                .iter()
                .filter(|v| **v == Verdict::NotVisible)
                .count() as u64,
        };
        if let Err(e) = guard.store().record_s2_tally(app, asker, tally, now) {
            tracing::error!(app, error = %e, "could not write the refusal breaker's counters");
        }
    }
}

/// Searches as `asker` and rules every sibling passage through S2 in this
/// request (§8.1). Without a client, every sibling passage is UNKNOWN.
/// AHEAD marks its app for re-announce in the store and deletes nothing.
///
/// # Errors
/// As [`Instance::candidates`].
pub async fn ruled_search(
    instance: &Arc<Mutex<Instance>>,
    client: Option<&SiblingClient>,
    asker: &str,
    text: &str,
    page: u32,
) -> Result<RuledSearch, SearchError> {
    let candidates = lock(instance).candidates(asker, text, page)?;
    let by_app = candidates.pairs_by_app();
    let subject = Subject::address(asker);
    let mut verdicts = Verdicts::none();
    if !by_app.is_empty() {
        let decoded = match client {
            Some(c) => c.check_all(&subject, &by_app).await,
            None => by_app
                .iter()
                .map(|(app, pairs)| (app.clone(), unknown_for(pairs, S2Fault::NoAnswer)))
                .collect(),
        };
        for (app, d) in &decoded {
            verdicts.record(app, &by_app[app], &d.verdicts);
        }
        record_breaker_counters(instance, asker, &decoded);
    }
    let refetch = verdicts.apps_with(Verdict::Stale);
    let reannounce = verdicts.apps_with(Verdict::Ahead);
    if !reannounce.is_empty() {
        let guard = lock(instance);
        for app in &reannounce {
            if let Err(e) = guard.store().mark_reannounce(app) {
                tracing::error!(app, error = %e, "could not mark a sibling for re-announce");
            } else {
                tracing::warn!(app, "sibling answered AHEAD: marked for re-announce");
            }
        }
    }
    Ok(RuledSearch {
        page: candidates.rule(&verdicts),
        refetch,
        reannounce,
    })
}
