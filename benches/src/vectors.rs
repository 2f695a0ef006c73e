//! Seeded Gaussian vectors for the dense benches: unit vectors whose scan cost is the same as real embeddings', since a brute-force scan reads every row whatever its values (§7.2).
//!
//! The generator is splitmix64 feeding Box-Muller, written out so the
//! sequence is fixed by this file alone and the peer script's Python reads
//! exactly the same floats from the files `bench-dense write` leaves, never
//! a re-derivation of them.

use memoria::{
    DenseMatrix, EMBED_DIM_NATIVE, EMBED_DIM_STORED, QuantisedVector, quantise_embedding,
};

/// The seed every dense bench and `benches/run-dense` start from (issue 12).
pub const DENSE_SEED: u64 = 12;

/// Standard normal samples from one seed: splitmix64, then Box-Muller.
#[derive(Debug, Clone)]
pub struct Gaussian {
    state: u64,
    spare: Option<f64>,
}

impl Gaussian {
    /// A generator starting at `seed`.
    pub fn new(seed: u64) -> Gaussian {
        Gaussian {
            state: seed,
            spare: None,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform sample in (0, 1]: never 0, so its logarithm is finite.
    fn unit_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// The next standard normal sample.
    pub fn sample(&mut self) -> f64 {
        if let Some(s) = self.spare.take() {
            return s;
        }
        let r = (-2.0 * self.unit_open().ln()).sqrt();
        let theta = std::f64::consts::TAU * self.unit_open();
        self.spare = Some(r * theta.sin());
        r * theta.cos()
    }

    /// A unit-L2 vector of `dim` f32 values with Gaussian direction.
    pub fn unit_vector(&mut self, dim: usize) -> Vec<f32> {
        let v: Vec<f64> = (0..dim).map(|_| self.sample()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.iter().map(|x| (x / norm) as f32).collect()
    }
}

/// A provider-shaped response ([`EMBED_DIM_NATIVE`] values) whose first
/// [`EMBED_DIM_STORED`] are `kept` and whose rest are zero. The pipeline
/// reads only the first 512 (after checking all 4,096 are finite), so the
/// stored vector is the one a full Gaussian response with this prefix
/// would give, at an eighth of the generation cost.
pub fn padded(kept: &[f32]) -> Vec<f32> {
    let mut v = vec![0f32; EMBED_DIM_NATIVE];
    for (o, x) in v.iter_mut().zip(kept.iter().take(EMBED_DIM_STORED)) {
        *o = *x;
    }
    v
}

/// `kept` through memoria's pipeline ([`quantise_embedding`]).
///
/// # Panics
///
/// If `kept` is all zero or not finite, which [`Gaussian::unit_vector`]
/// never returns.
pub fn quantised(kept: &[f32]) -> QuantisedVector {
    quantise_embedding(&padded(kept)).expect("a Gaussian unit vector quantises")
}

/// `rows` seeded unit vectors, quantised into a matrix with chunk ids
/// `0..rows`.
///
/// # Panics
///
/// Beyond [`memoria::DENSE_ROWS_MAX`] rows.
pub fn dense_matrix(seed: u64, rows: usize) -> DenseMatrix {
    let mut g = Gaussian::new(seed);
    let mut m = DenseMatrix::new();
    for id in 0..rows {
        let v = quantised(&g.unit_vector(EMBED_DIM_STORED));
        m.push(id as i64, &v).expect("within DENSE_ROWS_MAX");
    }
    m
}
