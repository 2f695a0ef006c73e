//! The embedding canary checked (§8.2, gate 30): [`CANARY_SENTENCES`] embedded now, compared with the vectors sealed at first configuration, or sealed if none are.
//!
//! What the canary is, its sentences, its bound and the comparison are
//! `ai/canary.rs`'s; this is the use-case that drives the instance with
//! them, above it: the store's recorded vectors read, the provider asked,
//! the vectors recorded on first configuration. `AppState::check_canary`
//! calls it at wake.

use crate::ai::canary::{
    CANARY_DRIFT_MAX, CANARY_SENTENCES, CanaryState, drift, from_bytes, to_bytes, unit_prefix,
};
use crate::ai::embed::{EmbedClient, EmbedPolicy};
use crate::ai::provider::EMBED_MODEL;
use crate::offload::SharedInstance;

/// Embeds [`CANARY_SENTENCES`] now and compares them with the recorded
/// vectors, recording them first if none are (module doc). An anomaly is
/// logged as a warning (content-free) as well as returned.
pub async fn check(instance: &SharedInstance, embedder: &EmbedClient) -> CanaryState {
    let recorded = match instance.run(|i| i.store().canary()).await {
        Ok(Ok(r)) => r,
        _ => return CanaryState::Unreadable,
    };
    let current = match embedder
        .embed(&CANARY_SENTENCES, &EmbedPolicy::INGEST)
        .await
    {
        Ok(v) => v.iter().map(unit_prefix).collect::<Vec<_>>(),
        Err(e) => {
            tracing::warn!(kind = ?e.kind(), "the embedding canary could not be checked");
            return CanaryState::Unavailable { kind: e.kind() };
        }
    };
    let stored: Option<Vec<Vec<f32>>> = (recorded.len() == CANARY_SENTENCES.len())
        .then(|| recorded.iter().map(|(_, b)| from_bytes(b)).collect())
        .flatten();
    let state = match stored {
        None => {
            let bytes: Vec<Vec<u8>> = current.iter().map(|v| to_bytes(v)).collect();
            match instance
                .run(move |i| i.record_canary(EMBED_MODEL, &bytes))
                .await
            {
                Ok(Ok(())) => CanaryState::Recorded {
                    sentences: CANARY_SENTENCES.len(),
                },
                _ => CanaryState::Unreadable,
            }
        }
        Some(_) if recorded.iter().any(|(model, _)| model != EMBED_MODEL) => {
            CanaryState::ModelChanged {
                recorded: recorded
                    .iter()
                    .map(|(m, _)| m.clone())
                    .find(|m| m != EMBED_MODEL)
                    .unwrap_or_default(),
            }
        }
        Some(stored) => {
            let drifts: Vec<f64> = stored
                .iter()
                .zip(&current)
                .map(|(a, b)| drift(a, b))
                .collect();
            let max_drift = drifts.iter().copied().fold(0.0, f64::max);
            let drifted = drifts.iter().filter(|d| **d > CANARY_DRIFT_MAX).count();
            if drifted > 0 {
                CanaryState::Drifted {
                    drifted,
                    sentences: drifts.len(),
                    max_drift,
                }
            } else {
                CanaryState::Steady { max_drift }
            }
        }
    };
    if state.is_anomaly() {
        tracing::warn!(state = ?state, "the embedding canary found an anomaly");
    } else {
        tracing::info!(state = ?state, "the embedding canary was checked");
    }
    state
}
