//! The embedding pipeline's arithmetic: keep the first 512 of the provider's 4,096 values, renormalise to unit L2, quantise to int8 with one scale per vector (§7.2).
//!
//! # One scale per vector, and why
//!
//! A vector is stored as 512 int8 values `q` and one f32 `scale`; its
//! dequantised form is `q_i · scale`. The scale is chosen per vector, as
//! `max_i |x_i| / 127` of the renormalised vector `x`, so the largest
//! component maps to ±127 and every vector uses the full int8 range:
//!
//! - **Precision.** A unit vector of 512 components has typical components
//!   near `1/√512 ≈ 0.044` and a peak near 0.15-0.2. A fixed per-matrix scale
//!   of `1/127` (the only one safe for every unit vector) would spend about
//!   5.6 levels on a typical component; a per-vector scale spends about 35.
//! - **A mutation that can go red.** With one fixed scale for every row the
//!   scale is a common factor, and dropping it changes no ranking: a gate
//!   could not see "quantisation without its scale" (issue 12, gate 29).
//!   With a per-vector scale, the score of a row is `(q·r) · scale_r ·
//!   scale_q`, and dropping `scale_r` reorders results.
//! - **Cost.** 4 bytes per row (360 KB at 90,000 rows) and one multiply per
//!   row after the integer dot product, outside the kernel.
//!
//! The scale is taken from the renormalised vector, never fitted to make the
//! stored norm come out at 1: a scale chosen as `1/‖q‖` would hold gate 28
//! green whether or not the renormalise ran, which is the shape of gate §7.2
//! warns about. Skip the renormalise here and the dequantised norm is the
//! truncated vector's (about `√(512/4096) ≈ 0.35` for a unit 4,096-vector).
//!
//! # The norm tolerance ([`NORM_EPSILON`], gate 28)
//!
//! Rounding moves each component by at most half a step, `scale / 2`, and
//! the peak component not at all (it is exactly ±127 steps). So the
//! dequantised vector is within `√511 · scale / 2` of `x` in L2, and by the
//! triangle inequality its norm is within that of `‖x‖ = 1`. A unit vector
//! has `peak ≤ 1`, so `scale ≤ 1/127` and the bound is at most
//! `√511 / 254 ≈ 0.08900`; [`NORM_EPSILON`] adds the f32 rounding of the
//! stored scale and of the input (below 10^-5) and is 0.0891. That is the
//! worst case, met only by a vector with one dominant component; the
//! per-vector bound [`QuantisedVector::norm_tolerance`] is the same
//! derivation with the vector's own scale, about 0.013 for a Gaussian unit
//! vector (peak near 0.15). Either holds for every vector [`quantise`] returns, and
//! either turns red when the renormalise is skipped on a vector whose first
//! 512 values carry less than about 91% of its norm.

/// Values in one response of the embedding provider: qwen/qwen3-embedding-8b
/// emits 4,096 and fails the request if `dimensions` is sent (§7.2, §8.3).
pub const EMBED_DIM_NATIVE: usize = 4096;

/// Values kept and stored per vector: the first 512, a client-side
/// Matryoshka truncation (§7.2).
pub const EMBED_DIM_STORED: usize = 512;

/// The largest int8 level a component is quantised to; the scale maps a
/// vector's peak to ± this. Symmetric, so -128 is never produced (§7.2).
pub const QUANT_LEVEL_MAX: i8 = 127;

/// Gate 28's tolerance: every stored vector's dequantised L2 norm is within
/// this of 1 (§7.2).
///
/// Derived from int8 rounding, not measured: `√(EMBED_DIM_STORED − 1) /
/// (2 · 127) ≈ 0.08900` bounds the rounding error of any unit vector (see
/// the module doc), plus 10^-4 for the f32 rounding of the scale and input.
pub const NORM_EPSILON: f64 = 0.0891;

/// The largest scale a stored vector may carry: a peak of 1 over 127 levels,
/// plus f32 rounding. A decoder refuses a larger one (§7.2).
pub const SCALE_MAX: f32 = 1.0 / 127.0 * (1.0 + 1e-6);

/// Why a provider vector was refused. Nothing is stored for a refused
/// vector (issue 12). The messages carry positions and counts, never values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VectorRefusal {
    /// The response did not have [`EMBED_DIM_NATIVE`] values.
    #[error("the embedding has {found} values, not {EMBED_DIM_NATIVE}")]
    WrongLength {
        /// How many values it had.
        found: usize,
    },
    /// A value is NaN or infinite.
    #[error("the embedding has a non-finite value at position {position}")]
    NonFinite {
        /// The first such value's position in the response, 0-based.
        position: usize,
    },
    /// The first [`EMBED_DIM_STORED`] values are all zero (so is an
    /// all-zero vector): there is no direction to renormalise.
    #[error("the embedding's first {EMBED_DIM_STORED} values are all zero")]
    Zero,
}

/// One stored vector: [`EMBED_DIM_STORED`] int8 levels and the scale that
/// turns them back into a unit vector (§7.2).
///
/// Built only by [`quantise`] (or read back from a matrix that checked the
/// same invariants): the peak level is ±[`QUANT_LEVEL_MAX`], no level is
/// -128, and the scale is finite, positive and at most [`SCALE_MAX`].
#[derive(Clone, PartialEq)]
pub struct QuantisedVector {
    pub(crate) levels: [i8; EMBED_DIM_STORED],
    pub(crate) scale: f32,
}

impl std::fmt::Debug for QuantisedVector {
    /// The levels are content (§3.1): only the shape is printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QuantisedVector({EMBED_DIM_STORED} levels)")
    }
}

impl QuantisedVector {
    /// The int8 levels, [`EMBED_DIM_STORED`] of them.
    pub fn levels(&self) -> &[i8; EMBED_DIM_STORED] {
        &self.levels
    }

    /// The value of one level: component `i` is `levels()[i] · scale()`.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// The dequantised vector, [`EMBED_DIM_STORED`] f32 values.
    pub fn dequantised(&self) -> Vec<f32> {
        self.levels
            .iter()
            .map(|&q| f32::from(q) * self.scale)
            .collect()
    }

    /// The dequantised vector's L2 norm, computed in f64: 1 ± the tolerance
    /// for every vector [`quantise`] returns (gate 28, §7.2).
    pub fn norm(&self) -> f64 {
        norm_of(&self.levels, self.scale)
    }

    /// This vector's own bound on `|norm() − 1|`: `√(EMBED_DIM_STORED − 1) ·
    /// scale / 2` plus 10^-4, at most [`NORM_EPSILON`] (module doc, gate 28).
    pub fn norm_tolerance(&self) -> f64 {
        norm_tolerance(self.scale)
    }
}

/// The dequantised L2 norm of `levels · scale`, in f64.
pub(crate) fn norm_of(levels: &[i8], scale: f32) -> f64 {
    let squares: i64 = levels.iter().map(|&q| i64::from(q) * i64::from(q)).sum();
    (squares as f64).sqrt() * f64::from(scale)
}

/// The per-vector bound on `|norm − 1|` for a vector stored at `scale`.
pub(crate) fn norm_tolerance(scale: f32) -> f64 {
    ((EMBED_DIM_STORED - 1) as f64).sqrt() * f64::from(scale) / 2.0 + ROUNDING_SLACK
}

/// f32 rounding of the input, the renormalise and the stored scale: each a
/// relative 2^-24 of a unit-sized quantity, far below this.
const ROUNDING_SLACK: f64 = 1e-4;

/// Truncates a provider vector to its first [`EMBED_DIM_STORED`] values,
/// renormalises them to unit L2 and quantises them to int8 with one scale
/// (§7.2; the module doc says why per vector).
///
/// `native` is the provider's response, [`EMBED_DIM_NATIVE`] f32 values. The
/// arithmetic runs in f64, so any finite input, subnormal or huge,
/// renormalises without overflow or underflow.
///
/// # Errors
///
/// [`VectorRefusal::WrongLength`] for any length but [`EMBED_DIM_NATIVE`];
/// [`VectorRefusal::NonFinite`] for a NaN or infinity anywhere in the
/// response, kept or not; [`VectorRefusal::Zero`] when the kept values are
/// all zero. Never panics.
pub fn quantise(native: &[f32]) -> Result<QuantisedVector, VectorRefusal> {
    if native.len() != EMBED_DIM_NATIVE {
        return Err(VectorRefusal::WrongLength {
            found: native.len(),
        });
    }
    if let Some(position) = native.iter().position(|v| !v.is_finite()) {
        return Err(VectorRefusal::NonFinite { position });
    }
    let mut kept = [0f64; EMBED_DIM_STORED];
    for (k, &v) in kept.iter_mut().zip(native) {
        *k = f64::from(v);
    }
    // Renormalise to unit L2 (§7.2; gate 28 turns red without it).
    let norm = kept.iter().map(|v| v * v).sum::<f64>().sqrt();
    if norm == 0.0 {
        return Err(VectorRefusal::Zero);
    }
    for k in &mut kept {
        *k /= norm;
    }
    // One scale per vector: the peak maps to ±QUANT_LEVEL_MAX.
    let peak = kept.iter().fold(0f64, |m, v| m.max(v.abs()));
    let step = peak / f64::from(QUANT_LEVEL_MAX);
    let mut levels = [0i8; EMBED_DIM_STORED];
    let top = f64::from(QUANT_LEVEL_MAX);
    for (q, &x) in levels.iter_mut().zip(&kept) {
        // In range by construction (|x| ≤ peak); the clamp keeps a rounding
        // ulp from reaching -128 or wrapping.
        *q = (x / step).round().clamp(-top, top) as i8;
    }
    Ok(QuantisedVector {
        levels,
        scale: step as f32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A provider-shaped vector whose first 512 values are `prefix` (cycled)
    /// and whose rest is `rest`.
    fn native(prefix: &[f32], rest: f32) -> Vec<f32> {
        let mut v = vec![rest; EMBED_DIM_NATIVE];
        for (i, x) in v.iter_mut().take(EMBED_DIM_STORED).enumerate() {
            *x = prefix[i % prefix.len()];
        }
        v
    }

    #[test]
    fn a_wrong_length_vector_is_refused() {
        for n in [
            0,
            1,
            EMBED_DIM_STORED,
            EMBED_DIM_NATIVE - 1,
            EMBED_DIM_NATIVE + 1,
        ] {
            assert_eq!(
                quantise(&vec![0.5; n]),
                Err(VectorRefusal::WrongLength { found: n })
            );
        }
    }

    #[test]
    fn a_non_finite_value_anywhere_is_refused_with_its_position() {
        for (position, bad) in [
            (0, f32::NAN),
            (511, f32::INFINITY),
            (4095, f32::NEG_INFINITY),
        ] {
            let mut v = native(&[0.1], 0.1);
            v[position] = bad;
            assert_eq!(quantise(&v), Err(VectorRefusal::NonFinite { position }));
        }
    }

    #[test]
    fn an_all_zero_vector_is_refused() {
        assert_eq!(quantise(&native(&[0.0], 0.0)), Err(VectorRefusal::Zero));
    }

    #[test]
    fn a_vector_whose_kept_prefix_is_zero_is_refused_though_the_rest_is_not() {
        assert_eq!(quantise(&native(&[0.0], 0.3)), Err(VectorRefusal::Zero));
        assert_eq!(quantise(&native(&[-0.0], 0.3)), Err(VectorRefusal::Zero));
    }

    #[test]
    fn only_the_first_512_values_decide_the_stored_vector() {
        let a = quantise(&native(&[0.3, -0.1, 0.02], 0.9)).unwrap();
        let b = quantise(&native(&[0.3, -0.1, 0.02], -7.0)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn the_peak_component_is_stored_at_the_top_level_and_minus_128_never_appears() {
        // 0.25 and 0.6 of the peak: 31.75 and 76.2 levels, rounded.
        let v = quantise(&native(&[0.25, -1.0, 0.6, 0.0], 0.0)).unwrap();
        assert_eq!(v.levels()[1], -QUANT_LEVEL_MAX);
        assert_eq!(v.levels()[0], 32);
        assert_eq!(v.levels()[2], 76);
        assert_eq!(v.levels()[3], 0);
        assert!(v.levels().iter().all(|&q| q != i8::MIN));
    }

    #[test]
    fn the_scale_is_the_renormalised_peak_over_127() {
        // 512 equal components: each is 1/√512 after the renormalise.
        let v = quantise(&native(&[3.0], 0.0)).unwrap();
        assert!(v.levels().iter().all(|&q| q == QUANT_LEVEL_MAX));
        let expected = 1.0 / 512f64.sqrt() / 127.0;
        assert!((f64::from(v.scale()) / expected - 1.0).abs() < 1e-6);
        assert!((v.norm() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_one_hot_vector_is_stored_exactly() {
        let mut raw = native(&[0.0], 0.0);
        raw[7] = -1e-30;
        let v = quantise(&raw).unwrap();
        assert_eq!(v.levels()[7], -QUANT_LEVEL_MAX);
        assert_eq!(v.levels().iter().filter(|&&q| q != 0).count(), 1);
        assert!((v.norm() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn the_worst_case_tolerance_is_the_derived_bound_and_covers_each_vector_bound() {
        let derived = ((EMBED_DIM_STORED - 1) as f64).sqrt() / (2.0 * 127.0);
        assert!(derived < NORM_EPSILON);
        assert!(NORM_EPSILON - derived < 2e-4);
        assert!(norm_tolerance(SCALE_MAX) <= NORM_EPSILON);
    }

    #[test]
    fn skipping_the_renormalise_would_put_a_unit_4096_vector_outside_the_tolerance() {
        // What gate 28's mutation produces: the truncated prefix of a unit
        // 4,096-vector quantised as it stands.
        let raw = native(&[1.0 / (EMBED_DIM_NATIVE as f32).sqrt()], 0.0);
        let peak = raw[0];
        let unrenormalised = QuantisedVector {
            levels: [QUANT_LEVEL_MAX; EMBED_DIM_STORED],
            scale: peak / 127.0,
        };
        assert!((unrenormalised.norm() - 1.0).abs() > NORM_EPSILON);
        assert!((unrenormalised.norm() - 1.0).abs() > unrenormalised.norm_tolerance());
    }

    fn finite() -> impl Strategy<Value = f32> {
        prop_oneof![
            8 => -1.0f32..1.0,
            1 => Just(0.0f32),
            1 => any::<f32>().prop_filter("finite", |v| v.is_finite()),
        ]
    }

    proptest! {
        #[test]
        fn every_quantised_vector_has_unit_norm_within_its_own_and_the_global_tolerance(
            prefix in proptest::collection::vec(finite(), EMBED_DIM_STORED),
        ) {
            let raw = native(&prefix, 0.0);
            match quantise(&raw) {
                Ok(v) => {
                    let error = (v.norm() - 1.0).abs();
                    prop_assert!(error <= v.norm_tolerance(), "{error} > {}", v.norm_tolerance());
                    prop_assert!(v.norm_tolerance() <= NORM_EPSILON);
                    prop_assert!(v.scale().is_finite() && v.scale() > 0.0 && v.scale() <= SCALE_MAX);
                    prop_assert_eq!(v.levels().iter().map(|q| q.unsigned_abs()).max(), Some(127));
                    prop_assert!(v.levels().iter().all(|&q| q != i8::MIN));
                }
                Err(e) => prop_assert_eq!(e, VectorRefusal::Zero),
            }
        }

        #[test]
        fn quantising_never_panics_on_any_input(raw in proptest::collection::vec(any::<f32>(), 0..5000)) {
            let _ = quantise(&raw);
        }
    }
}
