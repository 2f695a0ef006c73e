//! The embedding queue, drained: live chunks without a vector are embedded in batches, with no lock held while the provider works, and a passage the provider refuses is set aside so it never blocks the rest (§7.2, §8.1, issue 12, issue 26).
//!
//! The queue itself is the store's (`store/vectors.rs`: a live chunk with
//! no vector row awaits one), so it is durable: an ingest whose embedding
//! failed keeps its lexical passages, stays queued, and is embedded by a
//! later drain, after a restart too. A drain takes one batch under the
//! instance (opening the chunks), releases it, sends the batch, and takes
//! the instance again to seal and store what came back. It stops at the
//! first batch that fails for the provider's sake (unreachable, past its
//! deadline, rate-limited, 5xx, a bad response) and leaves the rest queued;
//! the caller tries again later. A snapshot is written once a drain stored
//! something, so the vectors reach the sealed dense snapshot too (§7.4).
//!
//! **A passage the provider refuses.** The provider rejects a whole batch
//! for one input it will not embed (a 400, 413 or 422: the request's
//! content, not the provider's state), so one such passage would stop
//! every drain at the same batch and block everything queued behind it.
//! A batch refused for its content is split in halves, and each half sent
//! again, until the refused input is alone; that passage is **set aside**
//! ([`SetAside`]), everything else in the batch is embedded, and the drain
//! goes on. The spec's floor is what such a passage keeps: "Lexical only,
//! since embeddings need a provider" (§8.1) — it is found by its words, as
//! every passage is with AI off. And §8.1's loud rule is what the owner is
//! owed: "a count that fails is not a count of zero", so the sources page
//! counts the set-aside passages (never their text) and never says every
//! passage has its vector while one is set aside. A set-aside passage is
//! tried again alone, after [`EMBED_SET_ASIDE_RETRY_BASE_S`], doubling to
//! at most [`EMBED_SET_ASIDE_RETRY_MAX_S`]: a provider that changes its
//! mind embeds it, and one that does not is asked once a day at most.
//! Nothing here logs an input: a refusal logs a chunk id and a status.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use crate::ai::embed::{EmbedClient, EmbedErrorKind, EmbedPolicy};
use crate::offload::SharedInstance;

/// The first wait before a set-aside passage is tried again, in seconds:
/// ten of the embedding loop's intervals (`EMBED_DRAIN_INTERVAL_S`, 60 s),
/// each later wait doubled. This project's figure: the provider's reasons
/// for a refusal are written down nowhere (§13).
pub const EMBED_SET_ASIDE_RETRY_BASE_S: i64 = 10 * 60;

/// The longest wait between two tries of a set-aside passage, in seconds:
/// a day. This project's figure: a passage refused for good costs one call
/// a day, not one a minute.
pub const EMBED_SET_ASIDE_RETRY_MAX_S: i64 = 24 * 60 * 60;

/// One set-aside passage: which text was refused (a fingerprint, in memory
/// only, so a chunk id that comes to hold other text is not held aside),
/// how often, and when it is tried again.
#[derive(Debug, Clone, Copy)]
struct Aside {
    fingerprint: u64,
    refusals: u32,
    retry_at_s: i64,
}

/// Where a queued chunk stands with the set-aside passages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// Never refused: sent with the batch.
    Queued,
    /// Refused, and its next try is due: sent alone.
    Due,
    /// Refused, and waiting for its next try: not sent.
    Held,
}

/// The passages the provider refused to embed, by chunk id (module doc).
/// In memory, beside the embedding loop, so an evicted index keeps them; a
/// restart forgets them and the next drain finds each again, at the cost
/// of one split batch. Clones share one set.
#[derive(Debug, Clone, Default)]
pub struct SetAside(Arc<Mutex<BTreeMap<i64, Aside>>>);

impl SetAside {
    fn with<R>(&self, f: impl FnOnce(&mut BTreeMap<i64, Aside>) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The chunk ids set aside, ascending (some may have been deleted
    /// since: [`crate::Instance::still_awaiting_vectors`] says which are live).
    pub fn ids(&self) -> Vec<i64> {
        self.with(|m| m.keys().copied().collect())
    }

    fn standing(&self, id: i64, text: &str, now_s: i64) -> Standing {
        let fingerprint = fingerprint(text);
        self.with(|m| match m.get(&id) {
            Some(a) if a.fingerprint != fingerprint => {
                m.remove(&id);
                Standing::Queued
            }
            Some(a) if a.retry_at_s > now_s => Standing::Held,
            Some(_) => Standing::Due,
            None => Standing::Queued,
        })
    }

    fn refused(&self, id: i64, text: &str, now_s: i64) {
        let fingerprint = fingerprint(text);
        self.with(|m| {
            let refusals = m
                .get(&id)
                .filter(|a| a.fingerprint == fingerprint)
                .map_or(1, |a| a.refusals.saturating_add(1));
            let wait = EMBED_SET_ASIDE_RETRY_BASE_S
                .saturating_mul(1_i64 << (refusals - 1).min(16))
                .min(EMBED_SET_ASIDE_RETRY_MAX_S);
            m.insert(
                id,
                Aside {
                    fingerprint,
                    refusals,
                    retry_at_s: now_s.saturating_add(wait),
                },
            );
        });
    }

    fn embedded(&self, id: i64) {
        self.with(|m| m.remove(&id));
    }

    /// Keeps only the chunk ids in `live` (those still awaiting a vector).
    fn retain(&self, live: &[i64]) {
        self.with(|m| m.retain(|id, _| live.binary_search(id).is_ok()));
    }
}

/// FNV-1a over a passage's text: tells one text from another in memory,
/// never stored or logged.
fn fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What one drain did; counts and a failure kind, never content.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DrainReport {
    /// Vectors sealed and stored.
    pub stored: u64,
    /// Calls sent to the provider (a batch split to find a refused
    /// passage is several).
    pub batches: u64,
    /// Chunks still awaiting a vector when the drain stopped, the
    /// set-aside ones included.
    pub awaiting: u64,
    /// Live passages set aside when the drain stopped: the provider
    /// refuses to embed them (module doc).
    pub set_aside: u64,
    /// Why the drain stopped early, if it did: the failing call's kind.
    pub failure: Option<EmbedErrorKind>,
    /// True if a vector the provider returned was refused (wrong length,
    /// non-finite, all zero): those chunks stay queued.
    pub refused: bool,
}

/// Embeds every chunk awaiting a vector, batch by batch, until the queue is
/// empty or a batch fails for the provider's sake; a batch refused for its
/// content is split until the refused passage is alone, and that passage
/// is set aside in `aside` (module doc). `now_s` is the clock's Unix
/// seconds, for the set-aside passages' retries. With AI off the instance
/// hands out no batch and nothing is sent.
pub async fn drain(
    instance: &SharedInstance,
    embedder: &EmbedClient,
    aside: &SetAside,
    now_s: i64,
) -> DrainReport {
    let mut report = DrainReport::default();
    // The cursor: each batch starts past the last chunk the one before it
    // sent, so a drain walks the queue once, and a chunk whose vector was
    // refused is left for the next drain, not retried in this one.
    let mut after = 0;
    'drain: loop {
        let batch = match instance.run(move |i| i.embedding_batch(after)).await {
            Ok(Ok(b)) => b,
            Ok(Err(e)) | Err(e) => {
                tracing::error!(error = %e, "could not read the embedding queue");
                break;
            }
        };
        if batch.is_empty() {
            break;
        }
        after = batch.last().map_or(after, |(id, _)| *id);
        // The calls to make: the batch's never-refused chunks together, and
        // each set-aside chunk whose try is due alone; one still held waits.
        let mut calls: VecDeque<Vec<(i64, String)>> = VecDeque::new();
        let mut queued = Vec::with_capacity(batch.len());
        for (id, text) in batch {
            match aside.standing(id, &text, now_s) {
                Standing::Queued => queued.push((id, text)),
                Standing::Due => calls.push_back(vec![(id, text)]),
                Standing::Held => {}
            }
        }
        if !queued.is_empty() {
            calls.push_front(queued);
        }
        while let Some(call) = calls.pop_front() {
            report.batches += 1;
            let inputs: Vec<&str> = call.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = match embedder.embed(&inputs, &EmbedPolicy::INGEST).await {
                Ok(v) => v,
                Err(e) if e.refuses_content() => {
                    if let [(id, text)] = call.as_slice() {
                        aside.refused(*id, text, now_s);
                        tracing::warn!(chunk = id, kind = ?e.kind(), "the provider refuses to embed a passage; it is set aside and found by its words alone");
                    } else {
                        // Halve it: the refused input ends alone, and
                        // every other is embedded on the way.
                        let mut left = call;
                        let right = left.split_off(left.len() / 2);
                        calls.push_front(right);
                        calls.push_front(left);
                    }
                    continue;
                }
                Err(e) => {
                    tracing::warn!(kind = ?e.kind(), chunks = call.len(), "embedding failed; the chunks stay queued");
                    report.failure = Some(e.kind());
                    break 'drain;
                }
            };
            let pairs: Vec<(i64, Vec<f32>)> = call
                .iter()
                .map(|(id, _)| *id)
                .zip(vectors.into_iter().map(|v| v.values().to_vec()))
                .collect();
            for (id, _) in &call {
                aside.embedded(*id);
            }
            match instance.run(move |i| i.store_vectors(pairs)).await {
                Ok(Ok((stored, refused))) => {
                    report.stored += stored as u64;
                    if refused > 0 {
                        // The refused chunks stay queued for a later drain.
                        report.refused = true;
                    }
                }
                Ok(Err(e)) | Err(e) => {
                    tracing::error!(error = %e, "could not store vectors");
                    break 'drain;
                }
            }
        }
    }
    if report.stored > 0 {
        match instance.run(|i| i.write_snapshot()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) | Err(e) => {
                tracing::error!(error = %e, "could not write a snapshot after embedding")
            }
        }
    }
    report.awaiting = match instance.run(|i| i.vectors_awaiting()).await {
        Ok(Ok(n)) => n,
        _ => report.awaiting,
    };
    // A set-aside passage deleted, superseded or embedded meanwhile is
    // no longer counted.
    let ids = aside.ids();
    if let Ok(Ok(live)) = instance.run(move |i| i.still_awaiting_vectors(&ids)).await {
        aside.retain(&live);
        report.set_aside = live.len() as u64;
    }
    tracing::info!(
        stored = report.stored,
        batches = report.batches,
        awaiting = report.awaiting,
        set_aside = report.set_aside,
        "embedding drain finished"
    );
    report
}
