//! The stub provider's embedder: hashed word features, deterministic and NOT semantic, the sentinel's fixed vector, and the seeded drift the canary looks for (§7.2, gates 2 and 30).
//!
//! What [`embed_text`] does, and all it does, is the provider module's doc;
//! every vector here is the same on every machine, from a fixed generator.

use super::{Drift, STUB_FEATURES_PER_WORD, STUB_PREFIX_VALUES, STUB_VECTOR_VALUES};

/// An input containing this string is embedded as [`sentinel_vector`].
/// Distinctive enough that no real passage holds it by accident.
pub const SENTINEL_MARKER: &str = "memoria-sentinel-q7x4-inversion-probe";

/// The seed [`sentinel_vector`] is drawn from.
const SENTINEL_SEED: u64 = 0x5e47_1e1b_0b5e_c0de;

/// The sentinel's vector: [`STUB_VECTOR_VALUES`] values drawn uniformly
/// from a fixed seed, unit L2. Its leading values are irregular decimals,
/// so a gate can grep for them at rest in any dtype or text form (gate 2).
#[must_use]
pub fn sentinel_vector() -> Vec<f32> {
    let mut rng = SplitMix(SENTINEL_SEED);
    let v: Vec<f32> = (0..STUB_VECTOR_VALUES)
        .map(|_| rng.unit_interval())
        .collect();
    normalise(v)
}

/// The stub's embedding of `text`, without knobs: [`sentinel_vector`] if
/// `text` contains [`SENTINEL_MARKER`], else the unit-normalised sum of its
/// words' hashed features. Deterministic, and NOT semantic (module doc).
#[must_use]
pub fn embed_text(text: &str) -> Vec<f32> {
    if text.contains(SENTINEL_MARKER) {
        return sentinel_vector();
    }
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.sort();
    words.dedup();
    if words.is_empty() {
        // No word: the text's own bytes are its one feature, so no input
        // is ever the zero vector.
        words.push(text.to_owned());
    }
    let mut v = vec![0.0f32; STUB_VECTOR_VALUES];
    for word in &words {
        let mut rng = SplitMix(fnv1a(word.as_bytes()));
        for k in 0..STUB_FEATURES_PER_WORD {
            let span = if k % 2 == 0 {
                STUB_PREFIX_VALUES
            } else {
                STUB_VECTOR_VALUES
            };
            let draw = rng.next();
            let at = usize::try_from(draw % span as u64).expect("under the span");
            let sign = if draw >> 63 == 0 { 1.0 } else { -1.0 };
            v[at] += sign;
        }
    }
    if v.iter().all(|x| *x == 0.0) {
        // Features that cancelled exactly: keep one, so the vector is not zero.
        v[usize::try_from(fnv1a(text.as_bytes()) % STUB_PREFIX_VALUES as u64).expect("small")] =
            1.0;
    }
    normalise(v)
}

/// The dot product of two vectors (unit vectors: their cosine).
#[must_use]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

pub(super) fn normalise(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x /= norm;
        }
    }
    v
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64: a small, fixed, seedable generator, so every vector is the
/// same on every machine and in every version of `rand`.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    fn unit_interval(&mut self) -> f32 {
        let top = u32::try_from(self.next() >> 40).expect("24 bits");
        (top as f32 / (1u32 << 23) as f32) - 1.0
    }
}

/// `v` moved by `drift` (a seeded unit perturbation scaled by its delta,
/// drawn per text), unit again; `v` itself without one.
pub(super) fn drifted(v: Vec<f32>, text: &str, drift: Option<Drift>) -> Vec<f32> {
    let Some(Drift { seed, delta }) = drift else {
        return v;
    };
    let mut rng = SplitMix(seed ^ fnv1a(text.as_bytes()));
    let noise = normalise((0..v.len()).map(|_| rng.unit_interval()).collect());
    normalise(v.iter().zip(&noise).map(|(x, n)| x + delta * n).collect())
}
