//! The dense half of §7: provider vectors truncated, renormalised and quantised to int8, held in one matrix, scanned by an exact SIMD dot product, and fused with BM25 by reciprocal rank.
//!
//! - [`quantise`]: the embedding pipeline's arithmetic (§7.2): 4,096 f32
//!   values in, the first 512 kept, renormalised to unit L2, int8 with one
//!   scale per vector out; refusals typed; gate 28's [`NORM_EPSILON`].
//! - [`matrix`]: every stored vector, contiguous, with removal, the
//!   top-k (a 4-bit coarse pass over every row, the best candidates
//!   rescored exactly in int8) and the self-describing byte form the caller
//!   seals.
//! - [`kernel`]: the exact int8 dot product on the widest SIMD path this CPU
//!   has (AVX-512 VNNI, AVX2, NEON), chosen once at run time, with a scalar
//!   reference, and the coarse pass's 4-bit product.
//! - [`fusion`]: reciprocal rank fusion with [`RRF_K`].
//!
//! Nothing here seals, logs or talks to a provider: the caller seals the
//! byte form under its own purpose key (§3.1) and owns the provider client.

mod fusion;
mod kernel;
mod matrix;
mod quantise;

pub use fusion::{FUSION_DEPTH_CHUNKS, FusedHit, RRF_K, fuse_reciprocal_rank};
pub use kernel::{COARSE_LEVEL_MAX, DOT_LEN_MAX, DenseKernel};
pub use matrix::{
    DENSE_COARSE_CANDIDATES, DENSE_COARSE_CANDIDATES_PER_HIT, DENSE_FORMAT_VERSION, DENSE_ROWS_MAX,
    DENSE_TOP_K, DenseDecodeError, DenseHit, DenseMatrix, DenseMatrixError, SCAN_BLOCK_ROWS,
    dense_candidates,
};
pub use quantise::{
    EMBED_DIM_NATIVE, EMBED_DIM_STORED, NORM_EPSILON, QUANT_LEVEL_MAX, QuantisedVector, SCALE_MAX,
    VectorRefusal, quantise as quantise_embedding,
};
