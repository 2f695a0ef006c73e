//! The embedding canary (§8.2, gate 30): fixed public sentences embedded at first configuration, sealed, re-embedded on wake, and drift past [`CANARY_DRIFT_MAX`] stated, never silent.
//!
//! The sentences are public and carry no team content (§3.2 is untouched):
//! what they measure is the provider, not the corpus. A model id that can
//! change behaviour under a team without the team changing it is what the
//! canary exists to catch (§8.2: "the only thing standing between a stable
//! id and a silent swap"). The vectors are compared as the corpus's are
//! stored: the first 512 values, renormalised to unit L2 (§7.2), in f32
//! (no quantisation, so int8 rounding never reads as drift).
//!
//! This is what the canary is and how two of its vectors compare; the
//! check that drives the instance with it (read the recorded vectors, ask
//! the provider, record on first configuration) is `app/canary.rs`'s.

use super::embed::{EmbedErrorKind, Embedding};
use super::provider::EMBED_MODEL;
use crate::dense::EMBED_DIM_STORED;

/// The canary's sentences: public, fixed, about nothing a team writes.
/// Changing this list re-records the canary (the count no longer matches).
pub const CANARY_SENTENCES: [&str; 8] = [
    "The quick brown fox jumps over the lazy dog.",
    "Water boils at one hundred degrees Celsius at sea level.",
    "A week has seven days, and a leap year has three hundred and sixty-six.",
    "The river flows north past the old mill and under the stone bridge.",
    "Please remember to bring an umbrella if the forecast says rain.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
    "She tuned the violin before the evening concert began.",
    "Prime numbers have exactly two divisors: one and themselves.",
];

/// The most drift allowed between a sentence's recorded and current
/// vector, as 1 − cosine: 0.01, a cosine of 0.99. A provider serving the
/// same weights returns the same vector up to float noise (under 1e-5 in
/// cosine); a changed model, quantisation or template moves a sentence
/// much further. A chosen figure, stated here because §8.2 asks for "a
/// stated ε" and gives none.
pub const CANARY_DRIFT_MAX: f64 = 0.01;

/// What the canary found on this wake. Content-free: counts, drifts, model
/// ids and failure kinds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum CanaryState {
    /// Not checked yet (AI on, before the first check) or AI off.
    Unchecked,
    /// First configuration: the sentences were embedded and their vectors
    /// sealed; later wakes compare against them.
    Recorded {
        /// Sentences recorded.
        sentences: usize,
    },
    /// Every sentence embeds as it did: the largest drift is within bounds.
    Steady {
        /// The largest 1 − cosine seen.
        max_drift: f64,
    },
    /// At least one sentence drifted past [`CANARY_DRIFT_MAX`].
    Drifted {
        /// Sentences past the bound.
        drifted: usize,
        /// Sentences compared.
        sentences: usize,
        /// The largest 1 − cosine seen.
        max_drift: f64,
    },
    /// The canary was recorded under another model id (configuration
    /// changed the model): the corpus's vectors are another model's too.
    ModelChanged {
        /// The id the canary was recorded under.
        recorded: String,
    },
    /// The provider did not answer the canary's call; nothing is known.
    Unavailable {
        /// The failure's kind.
        kind: EmbedErrorKind,
    },
    /// The recorded vectors could not be read or stored (a store error).
    Unreadable,
}

impl CanaryState {
    /// The owner's sentence for the sources page (§8.2: stated, never silent).
    pub fn sentence(&self) -> String {
        match self {
            CanaryState::Unchecked => {
                "The embedding canary has not been checked since this start.".into()
            }
            CanaryState::Recorded { sentences } => format!(
                "The embedding canary was recorded: {sentences} public sentences embedded by {EMBED_MODEL}; each start compares them again."
            ),
            CanaryState::Steady { max_drift } => format!(
                "The embedding canary is steady: {EMBED_MODEL} embeds its sentences as it did (largest drift {max_drift:.4}, at most {CANARY_DRIFT_MAX} allowed)."
            ),
            CanaryState::Drifted {
                drifted,
                sentences,
                max_drift,
            } => format!(
                "The embedding canary drifted: {drifted} of {sentences} public sentences now embed differently (largest drift {max_drift:.4}, more than the {CANARY_DRIFT_MAX} allowed). The provider may have changed what runs behind {EMBED_MODEL}; rankings may shift, and the corpus may need embedding again."
            ),
            CanaryState::ModelChanged { recorded } => format!(
                "The embedding canary was recorded under {recorded}, not {EMBED_MODEL}: the stored vectors come from another model."
            ),
            CanaryState::Unavailable { kind } => format!(
                "The embedding canary could not be checked: the provider did not answer ({kind:?})."
            ),
            CanaryState::Unreadable => {
                "The embedding canary's recorded vectors could not be read.".into()
            }
        }
    }

    /// True when the state is an anomaly an owner must see.
    pub fn is_anomaly(&self) -> bool {
        matches!(
            self,
            CanaryState::Drifted { .. } | CanaryState::ModelChanged { .. }
        )
    }
}

/// The first [`EMBED_DIM_STORED`] values of `e`, renormalised to unit L2.
pub(crate) fn unit_prefix(e: &Embedding) -> Vec<f32> {
    let kept = &e.values()[..EMBED_DIM_STORED];
    let norm = kept
        .iter()
        .map(|v| f64::from(*v).powi(2))
        .sum::<f64>()
        .sqrt();
    kept.iter()
        .map(|v| (f64::from(*v) / norm.max(f64::MIN_POSITIVE)) as f32)
        .collect()
}

/// `v` as the bytes the store seals: each value little-endian.
pub(crate) fn to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// What [`to_bytes`] wrote, read back; `None` unless it is [`EMBED_DIM_STORED`] values.
pub(crate) fn from_bytes(b: &[u8]) -> Option<Vec<f32>> {
    (b.len() == EMBED_DIM_STORED * 4).then(|| {
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect()
    })
}

/// 1 − cosine of two vectors, in f64.
pub(crate) fn drift(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    1.0 - dot / (na * nb).max(f64::MIN_POSITIVE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_zero_for_the_same_vector_and_one_for_an_orthogonal_one() {
        let a = vec![1.0f32, 0.0, 0.0];
        assert!(drift(&a, &a).abs() < 1e-12);
        assert!((drift(&a, &[0.0, 1.0, 0.0]) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_drifted_canary_is_an_anomaly_and_its_sentence_says_so() {
        let s = CanaryState::Drifted {
            drifted: 2,
            sentences: 8,
            max_drift: 0.03,
        };
        assert!(s.is_anomaly());
        assert!(s.sentence().contains("2 of 8"));
        assert!(!CanaryState::Steady { max_drift: 0.0 }.is_anomaly());
    }
}
