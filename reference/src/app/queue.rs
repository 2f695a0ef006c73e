//! The embedding queue, drained: live chunks without a vector are embedded in batches, with no lock held while the provider works (§7.2, issue 12).
//!
//! The queue itself is the store's (`store/vectors.rs`: a live chunk with
//! no vector row awaits one), so it is durable: an ingest whose embedding
//! failed keeps its lexical passages, stays queued, and is embedded by a
//! later drain, after a restart too. A drain takes one batch under the
//! instance (opening the chunks), releases it, sends the batch, and takes
//! the instance again to seal and store what came back. It stops at the
//! first failed batch and leaves the rest queued; the caller tries again
//! later. A snapshot is written once a drain stored something, so the
//! vectors reach the sealed dense snapshot too (§7.4).

use crate::ai::embed::{EmbedClient, EmbedErrorKind, EmbedPolicy};
use crate::offload::SharedInstance;

/// What one drain did; counts and a failure kind, never content.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DrainReport {
    /// Vectors sealed and stored.
    pub stored: u64,
    /// Batches sent to the provider.
    pub batches: u64,
    /// Chunks still awaiting a vector when the drain stopped.
    pub awaiting: u64,
    /// Why the drain stopped early, if it did: the failing call's kind.
    pub failure: Option<EmbedErrorKind>,
    /// True if a vector the provider returned was refused (wrong length,
    /// non-finite, all zero): those chunks stay queued.
    pub refused: bool,
}

/// Embeds every chunk awaiting a vector, batch by batch, until the queue is
/// empty or a batch fails (module doc). With AI off the instance hands out
/// no batch and nothing is sent.
pub async fn drain(instance: &SharedInstance, embedder: &EmbedClient) -> DrainReport {
    let mut report = DrainReport::default();
    // The cursor: each batch starts past the last chunk the one before it
    // sent, so a drain walks the queue once, and a chunk whose vector was
    // refused is left for the next drain, not retried in this one.
    let mut after = 0;
    loop {
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
        report.batches += 1;
        after = batch.last().map_or(after, |(id, _)| *id);
        let inputs: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
        let vectors = match embedder.embed(&inputs, &EmbedPolicy::INGEST).await {
            Ok(v) => v,
            Err(e) => {
                tracing::warn!(kind = ?e.kind(), chunks = batch.len(), "embedding failed; the chunks stay queued");
                report.failure = Some(e.kind());
                break;
            }
        };
        let pairs: Vec<(i64, Vec<f32>)> = batch
            .iter()
            .map(|(id, _)| *id)
            .zip(vectors.into_iter().map(|v| v.values().to_vec()))
            .collect();
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
                break;
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
    tracing::info!(
        stored = report.stored,
        batches = report.batches,
        awaiting = report.awaiting,
        "embedding drain finished"
    );
    report
}
