//! The dense matrix: every stored vector as one contiguous int8 block with its scale and chunk id, its brute-force top-k scan, and its self-describing byte form (§3.1, §7.2, §7.3).
//!
//! Size: over 1,100 lines because the matrix's byte form, its decoder (total, every refusal typed) and its two scans (exact, and coarse then exact) are one format, kept in one place with their tests.
//!
//! # Layout
//!
//! N rows of [`EMBED_DIM_STORED`] int8 levels, contiguous (46 MB at 90,000
//! rows), beside N f32 scales and N chunk ids (the store's `i64` row ids, as
//! [`crate::Hit::chunk_id`] carries them), and two things derived from the
//! levels, never encoded: each row's level sum and its 4-bit coarse codes
//! (256 bytes a row, 23 MB at 90,000 rows; the kernel's module doc). Row order is not meaningful:
//! [`DenseMatrix::remove`] moves the last row into the gap, and nothing
//! depends on order because ties are broken by chunk id, not by row.
//!
//! # The scan
//!
//! [`DenseMatrix::top_k_exact_with`] computes the exact integer dot product
//! of the query's levels with every row on a [`DenseKernel`], in blocks of
//! [`SCAN_BLOCK_ROWS`] so the products stay in L1, turns each into a score
//! `(q·r) · scale_r · scale_q` (a raw dot product of the dequantised
//! vectors, never a cosine: §7.2), and keeps the best `k`. Order: higher
//! score first, then the lower chunk id, so the result equals the first `k`
//! of a full sort and does not depend on row order or on the kernel.
//!
//! [`DenseMatrix::top_k`] reads half the bytes (issue 30): when the matrix
//! holds more rows than [`dense_candidates`]`(k)`, a first pass scores every
//! row's 4-bit coarse codes against the int8 query (`(q·l) · scale_r`, the
//! same order as the int8 score up to the codes' rounding), keeps the best
//! [`dense_candidates`]`(k)` by that score (then the lower chunk id), and
//! rescores only those with the exact int8 product, as faiss's refinement
//! (`IndexRefine`) does. Its result is the exact scan's top `k` among the
//! candidates, with the exact scan's scores, so it equals the exact top
//! `k` whenever the candidates hold them: always when they cover every row,
//! and on every one of 50 queries at 10,000, 90,000 and 250,000 Gaussian
//! rows (`benches/RESULTS.md`, issue 30). It too is independent of row order
//! and kernel: the coarse products are exact integers on every path.
//!
//! # Byte form
//!
//! What the caller seals under the vectors' own purpose key and writes with
//! the snapshot (§3.1, §7.4). Little-endian throughout:
//!
//! | bytes | field |
//! |---|---|
//! | 4 | magic `MVEC` |
//! | 4 | format version, u32 ([`DENSE_FORMAT_VERSION`]) |
//! | 4 | levels per row, u32 (512) |
//! | 8 | rows N, u64 (at most [`DENSE_ROWS_MAX`]) |
//! | 512 N | levels, i8, row after row |
//! | 4 N | scales, f32 |
//! | 8 N | chunk ids, i64 |
//!
//! The levels come first, straight after the header, so the matrix in the
//! byte form is a contiguous int8 matrix at a fixed small offset: if it ever
//! reached the disk unsealed, gate 2's matrix parse (which reads an object
//! from its first bytes) would find it. 20 + 524 N bytes: 47.2 MB at 90,000 rows. [`DenseMatrix::decode`] is
//! total: it accepts exactly what [`DenseMatrix::encode`] can produce and
//! refuses anything else with a [`DenseDecodeError`], never a panic.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::kernel::{DenseKernel, coarse_codes, row_sum};
use super::quantise::{EMBED_DIM_STORED, QUANT_LEVEL_MAX, QuantisedVector, SCALE_MAX, norm_of};

/// Results the dense list contributes to fusion: the k of the top-k scan
/// (issue 12's target, "top-25 over 90,000 × 512 int8"). At least a page,
/// so a page can be filled from the dense list alone (§8.1).
pub const DENSE_TOP_K: usize = 25;

/// The most rows a matrix holds: 1,000,000, the largest corpus §7.2's
/// latency table prices (1M × 512). A decoder refuses a larger count before
/// it allocates; the wake budget binds long before (§7.3).
pub const DENSE_ROWS_MAX: usize = 1_000_000;

/// The byte form's version ([`DenseMatrix::encode`]); a decoder refuses any
/// other, and the caller rebuilds from the sealed chunks (§7.4).
pub const DENSE_FORMAT_VERSION: u32 = 1;

/// Rows per kernel call in a scan: 1,024 rows' products (4 KiB) stay in L1
/// beside the query while the block's 512 KiB of levels stream past.
pub const SCAN_BLOCK_ROWS: usize = 1024;

/// Coarse candidates the two-pass scan keeps and rescores, at least: 256,
/// a little over 10 for each of [`DENSE_TOP_K`]'s 25 (issue 30).
///
/// Source: measured on seeded Gaussian unit vectors (the hardest case: their
/// nearest rows stand barely apart from the rest), 50 queries each: the
/// best 128 by coarse score already held every one of the exact int8 top 25
/// at 10,000 and 90,000 rows and 99.8% of them at 250,000; the best 256
/// held all of them at each size. Twice the smallest count that sufficed.
pub const DENSE_COARSE_CANDIDATES: usize = 256;

/// Coarse candidates kept for each result asked for, when `k` is larger
/// than [`DENSE_TOP_K`]: the same ratio as [`DENSE_COARSE_CANDIDATES`] to
/// 25, rounded down.
pub const DENSE_COARSE_CANDIDATES_PER_HIT: usize = 10;

/// How many coarse candidates [`DenseMatrix::top_k`] rescores for a top
/// `k`: [`DENSE_COARSE_CANDIDATES`], or [`DENSE_COARSE_CANDIDATES_PER_HIT`]
/// for each of `k` when that is more. A matrix of at most this many rows is
/// scanned exactly.
pub fn dense_candidates(k: usize) -> usize {
    DENSE_COARSE_CANDIDATES.max(k.saturating_mul(DENSE_COARSE_CANDIDATES_PER_HIT))
}

/// Rows whose scores are tested against the kept floor together, before
/// any one is looked at: 16 f32 scores, one 64-byte line.
const FLOOR_TEST_ROWS: usize = 16;

const MAGIC: &[u8; 4] = b"MVEC";
/// Magic, version, width, row count.
const HEADER_BYTES: usize = 4 + 4 + 4 + 8;
/// Chunk id, scale, levels.
const ROW_BYTES: usize = 8 + 4 + EMBED_DIM_STORED;
/// Bytes of coarse codes a row: two 4-bit codes a byte.
const COARSE_ROW_BYTES: usize = EMBED_DIM_STORED / 2;

/// One row of a dense top-k: the chunk and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DenseHit {
    /// The chunk's row id in the store.
    pub chunk_id: i64,
    /// The dot product of the dequantised query and row vectors, about
    /// `[-1, 1]` for unit vectors; higher is nearer (§7.2).
    pub score: f32,
}

/// Why a vector could not be added to a [`DenseMatrix`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DenseMatrixError {
    /// The chunk already has a vector; remove it first to replace it.
    #[error("chunk {chunk_id} already has a vector")]
    DuplicateChunk {
        /// The chunk's row id.
        chunk_id: i64,
    },
    /// The matrix holds [`DENSE_ROWS_MAX`] rows.
    #[error("the dense matrix is full ({DENSE_ROWS_MAX} rows)")]
    Full,
}

/// Why bytes are not a dense matrix ([`DenseMatrix::decode`]). The messages
/// carry counts and row positions, never levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DenseDecodeError {
    /// Shorter than the 20-byte header.
    #[error("{found} bytes is shorter than the dense matrix header")]
    Truncated {
        /// The length given.
        found: usize,
    },
    /// The first four bytes are not `MVEC`.
    #[error("not a dense matrix (bad magic)")]
    BadMagic,
    /// A format version this build does not read.
    #[error("dense matrix format version {found}, expected {DENSE_FORMAT_VERSION}")]
    UnsupportedVersion {
        /// The version in the header.
        found: u32,
    },
    /// Rows of another width than [`EMBED_DIM_STORED`].
    #[error("dense matrix rows of {found} levels, expected {EMBED_DIM_STORED}")]
    WrongWidth {
        /// The width in the header.
        found: u32,
    },
    /// More rows than [`DENSE_ROWS_MAX`].
    #[error("dense matrix of {found} rows, more than {DENSE_ROWS_MAX}")]
    TooManyRows {
        /// The row count in the header.
        found: u64,
    },
    /// The length does not match the header's row count.
    #[error("dense matrix of {expected} bytes by its header, {found} given")]
    WrongLength {
        /// What the header implies.
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// A chunk id appears twice.
    #[error("dense matrix row {row} repeats a chunk id")]
    DuplicateChunk {
        /// The later row's position.
        row: usize,
    },
    /// A scale that is not finite, positive and at most [`SCALE_MAX`].
    #[error("dense matrix row {row} has an impossible scale")]
    BadScale {
        /// The row's position.
        row: usize,
    },
    /// Levels [`crate::quantise_embedding`] cannot produce: a -128, or a peak
    /// other than ±[`QUANT_LEVEL_MAX`].
    #[error("dense matrix row {row} has impossible levels")]
    BadLevels {
        /// The row's position.
        row: usize,
    },
}

/// Every stored vector, resident in memory while awake (§3.1, §7.2).
#[derive(Clone, Default, PartialEq)]
pub struct DenseMatrix {
    chunk_ids: Vec<i64>,
    scales: Vec<f32>,
    levels: Vec<i8>,
    /// Each row's level sum, derived (never encoded): the AVX-512 kernel's
    /// correction term.
    row_sums: Vec<i32>,
    /// Each row's 4-bit codes ([`COARSE_ROW_BYTES`] a row), derived (never
    /// encoded): the two-pass scan's first pass reads these.
    coarse: Vec<u8>,
    rows_by_chunk: HashMap<i64, usize>,
}

impl fmt::Debug for DenseMatrix {
    /// The levels are content (§3.1): only the shape is printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DenseMatrix({} rows × {EMBED_DIM_STORED})",
            self.chunk_ids.len()
        )
    }
}

impl DenseMatrix {
    /// An empty matrix.
    pub fn new() -> DenseMatrix {
        DenseMatrix::default()
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.chunk_ids.len()
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.chunk_ids.is_empty()
    }

    /// Whether `chunk_id` has a vector.
    pub fn contains(&self, chunk_id: i64) -> bool {
        self.rows_by_chunk.contains_key(&chunk_id)
    }

    /// The chunk ids held, in row order (which is not meaningful).
    pub fn chunk_ids(&self) -> &[i64] {
        &self.chunk_ids
    }

    /// Appends `vector` as the vector of `chunk_id`.
    ///
    /// # Errors
    ///
    /// [`DenseMatrixError::DuplicateChunk`] if the chunk has a vector
    /// already (nothing changes); [`DenseMatrixError::Full`] at
    /// [`DENSE_ROWS_MAX`] rows.
    pub fn push(
        &mut self,
        chunk_id: i64,
        vector: &QuantisedVector,
    ) -> Result<(), DenseMatrixError> {
        if self.contains(chunk_id) {
            return Err(DenseMatrixError::DuplicateChunk { chunk_id });
        }
        if self.len() >= DENSE_ROWS_MAX {
            return Err(DenseMatrixError::Full);
        }
        self.rows_by_chunk.insert(chunk_id, self.len());
        self.chunk_ids.push(chunk_id);
        self.scales.push(vector.scale);
        self.levels.extend_from_slice(&vector.levels);
        self.row_sums.push(row_sum(&vector.levels));
        coarse_codes(&vector.levels, &mut self.coarse);
        Ok(())
    }

    /// Removes the vector of `chunk_id`, if it has one: what a deletion or a
    /// retirement does before a superseding snapshot is written (§7.4).
    /// Returns whether a row was removed. The last row moves into the gap.
    pub fn remove(&mut self, chunk_id: i64) -> bool {
        let Some(row) = self.rows_by_chunk.remove(&chunk_id) else {
            return false;
        };
        let last = self.len() - 1;
        if row != last {
            let moved = self.chunk_ids[last];
            self.levels.copy_within(
                last * EMBED_DIM_STORED..(last + 1) * EMBED_DIM_STORED,
                row * EMBED_DIM_STORED,
            );
            self.coarse.copy_within(
                last * COARSE_ROW_BYTES..(last + 1) * COARSE_ROW_BYTES,
                row * COARSE_ROW_BYTES,
            );
            self.rows_by_chunk.insert(moved, row);
        }
        self.chunk_ids.swap_remove(row);
        self.scales.swap_remove(row);
        self.row_sums.swap_remove(row);
        self.levels.truncate(last * EMBED_DIM_STORED);
        self.coarse.truncate(last * COARSE_ROW_BYTES);
        true
    }

    /// Keeps only the rows whose chunk id `keep` accepts, in their order;
    /// returns how many were removed (a retirement of many, §7.4).
    pub fn retain(&mut self, mut keep: impl FnMut(i64) -> bool) -> usize {
        let before = self.len();
        let mut kept = 0;
        for row in 0..before {
            let chunk_id = self.chunk_ids[row];
            if !keep(chunk_id) {
                continue;
            }
            if kept != row {
                self.chunk_ids[kept] = chunk_id;
                self.scales[kept] = self.scales[row];
                self.row_sums[kept] = self.row_sums[row];
                self.levels.copy_within(
                    row * EMBED_DIM_STORED..(row + 1) * EMBED_DIM_STORED,
                    kept * EMBED_DIM_STORED,
                );
                self.coarse.copy_within(
                    row * COARSE_ROW_BYTES..(row + 1) * COARSE_ROW_BYTES,
                    kept * COARSE_ROW_BYTES,
                );
            }
            kept += 1;
        }
        self.chunk_ids.truncate(kept);
        self.scales.truncate(kept);
        self.row_sums.truncate(kept);
        self.levels.truncate(kept * EMBED_DIM_STORED);
        self.coarse.truncate(kept * COARSE_ROW_BYTES);
        self.rows_by_chunk = index_rows(&self.chunk_ids);
        before - kept
    }

    /// The vector of `chunk_id`, copied out, if it has one.
    pub fn get(&self, chunk_id: i64) -> Option<QuantisedVector> {
        self.rows_by_chunk
            .get(&chunk_id)
            .and_then(|&row| self.vector_at(row))
    }

    /// Every `(chunk_id, vector)`, in row order: what gate 2's presence half
    /// and gate 28 read back.
    pub fn vectors(&self) -> impl Iterator<Item = (i64, QuantisedVector)> + '_ {
        (0..self.len()).filter_map(|row| Some((self.chunk_ids[row], self.vector_at(row)?)))
    }

    /// The dequantised L2 norm of `chunk_id`'s vector (gate 28: 1 ±
    /// [`crate::NORM_EPSILON`]), if it has one.
    pub fn norm(&self, chunk_id: i64) -> Option<f64> {
        let row = *self.rows_by_chunk.get(&chunk_id)?;
        Some(norm_of(self.row_levels(row)?, *self.scales.get(row)?))
    }

    fn row_levels(&self, row: usize) -> Option<&[i8]> {
        self.levels
            .get(row * EMBED_DIM_STORED..(row + 1) * EMBED_DIM_STORED)
    }

    fn vector_at(&self, row: usize) -> Option<QuantisedVector> {
        let mut levels = [0i8; EMBED_DIM_STORED];
        levels.copy_from_slice(self.row_levels(row)?);
        Some(QuantisedVector {
            levels,
            scale: *self.scales.get(row)?,
        })
    }

    /// The `k` rows with the highest dot product with `query`, best first,
    /// on the kernel detected for this CPU (§7.2). Ties go to the lower
    /// chunk id. Fewer than `k` when fewer rows are held.
    ///
    /// `k` is normally [`DENSE_TOP_K`]. Above [`dense_candidates`]`(k)`
    /// rows this is the two-pass scan (module doc): the exact top `k` among
    /// the best [`dense_candidates`]`(k)` rows by 4-bit coarse score. Cost:
    /// one pass over `len() × 256` bytes of codes (23 MB at 90,000 rows),
    /// then [`dense_candidates`]`(k)` rows of 512 bytes.
    pub fn top_k(&self, query: &QuantisedVector, k: usize) -> Vec<DenseHit> {
        self.top_k_with(DenseKernel::detected(), query, k)
    }

    /// [`DenseMatrix::top_k`] on a given kernel: every kernel gives the same
    /// result (tests and benches compare them).
    pub fn top_k_with(
        &self,
        kernel: DenseKernel,
        query: &QuantisedVector,
        k: usize,
    ) -> Vec<DenseHit> {
        self.scan(kernel, query, k, &HashSet::new())
    }

    /// The exact scan on a given kernel: every row's int8 product, the best
    /// `k` kept, equal to the first `k` of a full sort. The reference the
    /// two-pass [`DenseMatrix::top_k`] is held to; one pass over `len() ×
    /// 512` bytes, 46 MB at 90,000 rows.
    pub fn top_k_exact_with(
        &self,
        kernel: DenseKernel,
        query: &QuantisedVector,
        k: usize,
    ) -> Vec<DenseHit> {
        self.scan_exact(kernel, query, k, &HashSet::new())
    }

    /// [`DenseMatrix::top_k`] with the chunks in `excluded` left out before
    /// the cut, so they are not counted against `k`: §4.1 rule 1's
    /// reconciling source leaves the dense list before fusion, as it leaves
    /// the BM25 list, and the other chunks fill its place.
    pub fn top_k_excluding(
        &self,
        query: &QuantisedVector,
        k: usize,
        excluded: &HashSet<i64>,
    ) -> Vec<DenseHit> {
        self.scan(DenseKernel::detected(), query, k, excluded)
    }

    fn scan(
        &self,
        kernel: DenseKernel,
        query: &QuantisedVector,
        k: usize,
        excluded: &HashSet<i64>,
    ) -> Vec<DenseHit> {
        let candidates = dense_candidates(k);
        if self.len() <= candidates {
            return self.scan_exact(kernel, query, k, excluded);
        }
        self.scan_two_pass(kernel, query, k, candidates, excluded)
    }

    /// The two-pass scan (module doc): the exact top `k` among the best
    /// `candidates` rows by coarse score.
    fn scan_two_pass(
        &self,
        kernel: DenseKernel,
        query: &QuantisedVector,
        k: usize,
        candidates: usize,
        excluded: &HashSet<i64>,
    ) -> Vec<DenseHit> {
        let rows = self.coarse_candidates(kernel, query, candidates, excluded);
        // The candidates' levels gathered, so one kernel call rescores them.
        let mut levels = Vec::with_capacity(rows.len() * EMBED_DIM_STORED);
        let mut sums = Vec::with_capacity(rows.len());
        for &row in &rows {
            levels.extend_from_slice(self.row_levels(row).unwrap_or_default());
            sums.push(self.row_sums.get(row).copied().unwrap_or_default());
        }
        let mut dots = vec![0i32; rows.len()];
        kernel.dots(&query.levels, &levels, &sums, &mut dots);
        let mut hits: Vec<DenseHit> = rows
            .iter()
            .zip(dots)
            .map(|(&row, dot)| DenseHit {
                chunk_id: self.chunk_ids[row],
                score: score(dot, self.scales[row], query.scale),
            })
            .collect();
        hits.sort_unstable_by(rank);
        hits.truncate(k);
        hits
    }

    /// The first pass: the rows of the best `candidates` coarse scores
    /// (`(q·l) · scale_r`; then the lower chunk id), those in `excluded`
    /// left out. Rows at or above the floor are collected until twice
    /// `candidates` are held, then cut to the best `candidates`, whose worst
    /// score becomes the floor: linear in the rows, whatever their order.
    fn coarse_candidates(
        &self,
        kernel: DenseKernel,
        query: &QuantisedVector,
        candidates: usize,
        excluded: &HashSet<i64>,
    ) -> Vec<usize> {
        let mut dots = [0i32; SCAN_BLOCK_ROWS];
        let mut scores = [0f32; SCAN_BLOCK_ROWS];
        let mut kept: Vec<(DenseHit, usize)> = Vec::with_capacity(2 * candidates);
        let mut floor = f32::NEG_INFINITY;
        let blocks = self
            .coarse
            .chunks(SCAN_BLOCK_ROWS * COARSE_ROW_BYTES)
            .zip(self.chunk_ids.chunks(SCAN_BLOCK_ROWS))
            .zip(self.scales.chunks(SCAN_BLOCK_ROWS));
        for (block, ((codes, chunk_ids), scales)) in blocks.enumerate() {
            let dots = &mut dots[..chunk_ids.len()];
            let scores = &mut scores[..chunk_ids.len()];
            kernel.coarse_dots(&query.levels, codes, dots);
            for ((s, &dot), &scale) in scores.iter_mut().zip(dots.iter()).zip(scales) {
                // Exact: `|q·l| ≤ 512 · 128 · 7 < 2^24`.
                *s = dot as f32 * scale;
            }
            let runs = scores
                .chunks(FLOOR_TEST_ROWS)
                .zip(chunk_ids.chunks(FLOOR_TEST_ROWS));
            for (run, (scores, chunk_ids)) in runs.enumerate() {
                if !scores.iter().fold(false, |any, &s| any | (s >= floor)) {
                    continue;
                }
                let first = block * SCAN_BLOCK_ROWS + run * FLOOR_TEST_ROWS;
                for (i, (&score, &chunk_id)) in scores.iter().zip(chunk_ids).enumerate() {
                    if score < floor || (!excluded.is_empty() && excluded.contains(&chunk_id)) {
                        continue;
                    }
                    kept.push((DenseHit { chunk_id, score }, first + i));
                    if kept.len() == 2 * candidates {
                        floor = keep_best(&mut kept, candidates);
                    }
                }
            }
        }
        keep_best(&mut kept, candidates);
        kept.into_iter().map(|(_, row)| row).collect()
    }

    fn scan_exact(
        &self,
        kernel: DenseKernel,
        query: &QuantisedVector,
        k: usize,
        excluded: &HashSet<i64>,
    ) -> Vec<DenseHit> {
        let k = k.min(self.len());
        let mut best: Vec<DenseHit> = Vec::with_capacity(k + 1);
        if k == 0 {
            return best;
        }
        let mut dots = [0i32; SCAN_BLOCK_ROWS];
        let mut scores = [0f32; SCAN_BLOCK_ROWS];
        // Once `best` is full, the score of its last: a row scoring below
        // it cannot enter, which one comparison decides.
        let mut floor = f32::NEG_INFINITY;
        let blocks = self
            .levels
            .chunks(SCAN_BLOCK_ROWS * EMBED_DIM_STORED)
            .zip(self.chunk_ids.chunks(SCAN_BLOCK_ROWS))
            .zip(self.scales.chunks(SCAN_BLOCK_ROWS))
            .zip(self.row_sums.chunks(SCAN_BLOCK_ROWS));
        for (((levels, chunk_ids), scales), sums) in blocks {
            let dots = &mut dots[..chunk_ids.len()];
            let scores = &mut scores[..chunk_ids.len()];
            kernel.dots(&query.levels, levels, sums, dots);
            for ((s, &dot), &scale) in scores.iter_mut().zip(dots.iter()).zip(scales) {
                *s = score(dot, scale, query.scale);
            }
            for (scores, chunk_ids) in scores
                .chunks(FLOOR_TEST_ROWS)
                .zip(chunk_ids.chunks(FLOOR_TEST_ROWS))
            {
                // One vectorised test for a run of rows: most runs hold no
                // row at or above the floor once `best` has filled.
                if !scores.iter().fold(false, |any, &s| any | (s >= floor)) {
                    continue;
                }
                for (&score, &chunk_id) in scores.iter().zip(chunk_ids) {
                    // Scores are finite (finite scales, exact dots), so `<`
                    // is the total order here.
                    if score < floor || (!excluded.is_empty() && excluded.contains(&chunk_id)) {
                        continue;
                    }
                    let hit = DenseHit { chunk_id, score };
                    if best.len() == k && !best.last().is_some_and(|worst| precedes(&hit, worst)) {
                        continue;
                    }
                    let at = best.partition_point(|b| precedes(b, &hit));
                    best.insert(at, hit);
                    best.truncate(k);
                    if best.len() == k {
                        floor = best.last().map_or(floor, |worst| worst.score);
                    }
                }
            }
        }
        best
    }

    /// The length of [`DenseMatrix::encode`]'s output: `20 + 524 · len()`.
    pub fn encoded_len(&self) -> usize {
        HEADER_BYTES + ROW_BYTES * self.len()
    }

    /// The self-describing byte form (module doc's table), to be sealed by
    /// the caller. Holds every level: it is content (§3.1).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&DENSE_FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(EMBED_DIM_STORED as u32).to_le_bytes());
        out.extend_from_slice(&(self.len() as u64).to_le_bytes());
        out.extend(self.levels.iter().map(|&q| q as u8));
        for scale in &self.scales {
            out.extend_from_slice(&scale.to_le_bytes());
        }
        for id in &self.chunk_ids {
            out.extend_from_slice(&id.to_le_bytes());
        }
        out
    }

    /// Reads [`DenseMatrix::encode`]'s byte form back.
    ///
    /// # Errors
    ///
    /// A [`DenseDecodeError`] for anything `encode` could not have produced:
    /// short or bad header, another version or width, too many rows, a
    /// length that does not match, a repeated chunk id, an impossible scale
    /// or impossible levels. Total: never panics, and allocates only after
    /// the length is checked.
    pub fn decode(bytes: &[u8]) -> Result<DenseMatrix, DenseDecodeError> {
        DenseMatrix::decode_owned(bytes.to_vec())
    }

    /// As [`DenseMatrix::decode`], from an owned buffer whose allocation
    /// becomes the matrix's levels: the wake's path, so 47 MB of levels at
    /// 90,000 rows are moved down over the header in place, not copied
    /// into a second allocation (issue 12: wake CPU and peak memory).
    ///
    /// # Errors
    /// As [`DenseMatrix::decode`].
    pub fn decode_owned(mut bytes: Vec<u8>) -> Result<DenseMatrix, DenseDecodeError> {
        let found = bytes.len();
        let header = bytes
            .get(..HEADER_BYTES)
            .ok_or(DenseDecodeError::Truncated { found })?;
        let (magic, header) = header.split_at(4);
        if magic != MAGIC {
            return Err(DenseDecodeError::BadMagic);
        }
        let (version, header) = header.split_at(4);
        let version = u32::from_le_bytes(array(version));
        if version != DENSE_FORMAT_VERSION {
            return Err(DenseDecodeError::UnsupportedVersion { found: version });
        }
        let (width, rows) = header.split_at(4);
        let width = u32::from_le_bytes(array(width));
        if usize::try_from(width).ok() != Some(EMBED_DIM_STORED) {
            return Err(DenseDecodeError::WrongWidth { found: width });
        }
        let rows_found = u64::from_le_bytes(array(rows));
        let rows = usize::try_from(rows_found)
            .ok()
            .filter(|&n| n <= DENSE_ROWS_MAX)
            .ok_or(DenseDecodeError::TooManyRows { found: rows_found })?;
        let expected = HEADER_BYTES + ROW_BYTES * rows;
        if found != expected {
            return Err(DenseDecodeError::WrongLength { expected, found });
        }
        let levels_end = HEADER_BYTES + EMBED_DIM_STORED * rows;
        let (scales, ids) = bytes[levels_end..].split_at(4 * rows);

        let chunk_ids: Vec<i64> = ids
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(array(c)))
            .collect();
        let mut rows_by_chunk = HashMap::with_capacity(rows);
        for (row, &id) in chunk_ids.iter().enumerate() {
            if rows_by_chunk.insert(id, row).is_some() {
                return Err(DenseDecodeError::DuplicateChunk { row });
            }
        }
        let scales: Vec<f32> = scales
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(array(c)))
            .collect();
        if let Some(row) = scales
            .iter()
            .position(|s| !(s.is_finite() && *s > 0.0 && *s <= SCALE_MAX))
        {
            return Err(DenseDecodeError::BadScale { row });
        }
        bytes.truncate(levels_end);
        bytes.drain(..HEADER_BYTES);
        let levels: Vec<i8> = bytemuck::allocation::cast_vec(bytes);
        let mut row_sums = Vec::with_capacity(rows);
        let mut coarse = Vec::with_capacity(rows * COARSE_ROW_BYTES);
        for (row, r) in levels.chunks_exact(EMBED_DIM_STORED).enumerate() {
            let (peak, sum) = peak_and_sum(r);
            if peak != QUANT_LEVEL_MAX.unsigned_abs() {
                return Err(DenseDecodeError::BadLevels { row });
            }
            row_sums.push(sum);
            coarse_codes(r, &mut coarse);
        }
        Ok(DenseMatrix {
            chunk_ids,
            scales,
            levels,
            row_sums,
            coarse,
            rows_by_chunk,
        })
    }
}

/// One pass over a row: its largest `|level|` (128 for a -128, which no
/// quantisation writes; a row that could come from
/// [`crate::quantise_embedding`] peaks at exactly ±[`QUANT_LEVEL_MAX`]) and its sum, as [`row_sum`] gives it. Branch-free,
/// so it vectorises: the wake checks 46 MB of levels at 90,000 rows.
fn peak_and_sum(levels: &[i8]) -> (u8, i32) {
    let (mut peak, mut sum) = (0u8, 0i32);
    for &q in levels {
        peak = peak.max(q.unsigned_abs());
        sum = sum.wrapping_add(i32::from(q));
    }
    (peak, sum)
}

fn index_rows(chunk_ids: &[i64]) -> HashMap<i64, usize> {
    chunk_ids
        .iter()
        .enumerate()
        .map(|(row, &id)| (id, row))
        .collect()
}

/// Copies up to `N` bytes into an array; the callers pass exactly `N`.
fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    for (o, b) in out.iter_mut().zip(bytes) {
        *o = *b;
    }
    out
}

/// A row's score: the integer dot product of the levels times both scales,
/// the raw dot product of the dequantised vectors (§7.2). `dot as f32` is
/// exact: `|dot| ≤ 512 · 127² < 2^24`.
pub(crate) fn score(dot: i32, row_scale: f32, query_scale: f32) -> f32 {
    dot as f32 * row_scale * query_scale
}

/// Whether `a` ranks before `b`: higher score, then lower chunk id.
fn precedes(a: &DenseHit, b: &DenseHit) -> bool {
    rank(a, b).is_lt()
}

/// The order of hits: higher score first, then the lower chunk id.
fn rank(a: &DenseHit, b: &DenseHit) -> std::cmp::Ordering {
    b.score
        .total_cmp(&a.score)
        .then(a.chunk_id.cmp(&b.chunk_id))
}

/// Cuts `kept` to its best `n` by [`rank`] (in no order) and returns the
/// score of the worst kept, the floor below which no row can enter; `kept`
/// is left as it is if it holds `n` or fewer.
fn keep_best(kept: &mut Vec<(DenseHit, usize)>, n: usize) -> f32 {
    if kept.len() <= n || n == 0 {
        kept.truncate(n);
        return f32::NEG_INFINITY;
    }
    kept.select_nth_unstable_by(n - 1, |a, b| rank(&a.0, &b.0));
    kept.truncate(n);
    kept.last()
        .map_or(f32::NEG_INFINITY, |(worst, _)| worst.score)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::quantise::{EMBED_DIM_NATIVE, quantise};
    use proptest::prelude::*;

    /// A provider-shaped vector from a seed: the first 512 values from a
    /// small xorshift, the rest zero.
    fn vector(seed: u64) -> QuantisedVector {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut raw = vec![0f32; EMBED_DIM_NATIVE];
        for x in raw.iter_mut().take(EMBED_DIM_STORED) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            *x = (s % 2001) as f32 / 1000.0 - 1.0;
        }
        quantise(&raw).expect("a non-zero vector")
    }

    fn matrix(ids: impl IntoIterator<Item = i64>) -> DenseMatrix {
        let mut m = DenseMatrix::new();
        for id in ids {
            m.push(id, &vector(id as u64)).unwrap();
        }
        m
    }

    #[test]
    fn an_excluded_chunk_leaves_the_dense_list_and_the_next_fills_its_place() {
        let m = matrix(1..=40);
        let q = vector(7);
        let all = m.top_k(&q, 5);
        let first = all[0].chunk_id;
        let without = m.top_k_excluding(&q, 5, &HashSet::from([first]));
        assert_eq!(
            without.len(),
            5,
            "the excluded chunk is not counted against k"
        );
        assert!(without.iter().all(|h| h.chunk_id != first));
        assert_eq!(without[..4], all[1..5]);
        assert_eq!(m.top_k_excluding(&q, 5, &HashSet::new()), all);
    }

    #[test]
    fn the_byte_form_puts_the_levels_first_after_the_header() {
        let m = matrix([3, 9]);
        let bytes = m.encode();
        let first = m.get(m.chunk_ids()[0]).unwrap();
        let levels: Vec<u8> = first.levels().iter().map(|&q| q as u8).collect();
        assert_eq!(
            bytes[HEADER_BYTES..HEADER_BYTES + EMBED_DIM_STORED],
            levels[..]
        );
    }

    /// The reference: every row scored, sorted by the same order, cut at k.
    fn full_sort(m: &DenseMatrix, query: &QuantisedVector, k: usize) -> Vec<DenseHit> {
        let mut all: Vec<DenseHit> = m
            .vectors()
            .map(|(chunk_id, v)| {
                let dot = v
                    .levels()
                    .iter()
                    .zip(query.levels())
                    .map(|(&a, &b)| i32::from(a) * i32::from(b))
                    .sum::<i32>();
                DenseHit {
                    chunk_id,
                    score: score(dot, v.scale(), query.scale()),
                }
            })
            .collect();
        all.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.chunk_id.cmp(&b.chunk_id))
        });
        all.truncate(k);
        all
    }

    #[test]
    fn a_vector_scores_highest_against_itself_at_about_one() {
        let m = matrix(0..300);
        let hits = m.top_k(&vector(123), DENSE_TOP_K);
        assert_eq!(hits.len(), DENSE_TOP_K);
        assert_eq!(hits[0].chunk_id, 123);
        assert!((hits[0].score - 1.0).abs() < 0.01, "{}", hits[0].score);
    }

    #[test]
    fn ties_go_to_the_lower_chunk_id_whatever_the_row_order() {
        let mut m = DenseMatrix::new();
        let same = vector(5);
        for id in [40, 7, 19, 3, 88] {
            m.push(id, &same).unwrap();
        }
        let ids: Vec<i64> = m.top_k(&same, 3).iter().map(|h| h.chunk_id).collect();
        assert_eq!(ids, [3, 7, 19]);
    }

    #[test]
    fn k_larger_than_the_matrix_returns_every_row_and_zero_returns_none() {
        let m = matrix(0..4);
        assert_eq!(m.top_k(&vector(1), 10).len(), 4);
        assert!(m.top_k(&vector(1), 0).is_empty());
        assert!(DenseMatrix::new().top_k(&vector(1), 5).is_empty());
    }

    #[test]
    fn a_removed_vector_is_never_returned_and_the_moved_row_still_is() {
        let mut m = matrix(0..10);
        assert!(m.remove(3));
        assert!(!m.remove(3));
        assert_eq!(m.len(), 9);
        assert!(!m.contains(3));
        assert!(m.top_k(&vector(3), 10).iter().all(|h| h.chunk_id != 3));
        // Row 9 moved into row 3's place and is still found as itself.
        assert_eq!(m.get(9), Some(vector(9)));
        assert_eq!(m.top_k(&vector(9), 1)[0].chunk_id, 9);
        m.push(3, &vector(3)).unwrap();
        assert_eq!(m.top_k(&vector(3), 1)[0].chunk_id, 3);
    }

    #[test]
    fn retain_removes_what_is_retired_and_keeps_the_rest_findable() {
        let mut m = matrix(0..20);
        assert_eq!(m.retain(|id| id % 3 != 0), 7);
        assert_eq!(m.len(), 13);
        for id in 0..20 {
            assert_eq!(m.contains(id), id % 3 != 0, "{id}");
            assert_eq!(m.get(id).is_some(), id % 3 != 0, "{id}");
        }
        assert_eq!(m.top_k(&vector(10), 1)[0].chunk_id, 10);
    }

    #[test]
    fn a_chunk_with_a_vector_is_refused_a_second() {
        let mut m = matrix(0..2);
        assert_eq!(
            m.push(1, &vector(9)),
            Err(DenseMatrixError::DuplicateChunk { chunk_id: 1 })
        );
        assert_eq!(m.get(1), Some(vector(1)));
    }

    #[test]
    fn every_stored_vector_has_unit_norm_within_epsilon() {
        let m = matrix(0..50);
        for id in 0..50 {
            let norm = m.norm(id).unwrap();
            assert!(
                (norm - 1.0).abs() <= crate::dense::NORM_EPSILON,
                "{id}: {norm}"
            );
        }
        assert_eq!(m.norm(99), None);
    }

    #[test]
    fn the_byte_form_round_trips_and_says_what_it_is() {
        let mut m = matrix([-5, 0, 7, i64::MAX, i64::MIN]);
        m.remove(0);
        let bytes = m.encode();
        assert_eq!(bytes.len(), m.encoded_len());
        assert_eq!(bytes.len(), 20 + 524 * 4);
        assert_eq!(&bytes[..4], b"MVEC");
        assert_eq!(bytes[4..8], 1u32.to_le_bytes());
        assert_eq!(bytes[8..12], 512u32.to_le_bytes());
        assert_eq!(bytes[12..20], 4u64.to_le_bytes());
        let back = DenseMatrix::decode(&bytes).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.encode(), bytes);
        assert_eq!(
            DenseMatrix::decode(&DenseMatrix::new().encode()),
            Ok(DenseMatrix::new())
        );
    }

    #[test]
    fn each_malformed_blob_is_refused_with_its_reason() {
        let good = matrix(0..3).encode();
        let with = |at: usize, bytes: &[u8]| {
            let mut b = good.clone();
            b[at..at + bytes.len()].copy_from_slice(bytes);
            DenseMatrix::decode(&b)
        };
        assert_eq!(
            DenseMatrix::decode(&good[..19]),
            Err(DenseDecodeError::Truncated { found: 19 })
        );
        assert_eq!(with(0, b"MIDX"), Err(DenseDecodeError::BadMagic));
        assert_eq!(
            with(4, &2u32.to_le_bytes()),
            Err(DenseDecodeError::UnsupportedVersion { found: 2 })
        );
        assert_eq!(
            with(8, &768u32.to_le_bytes()),
            Err(DenseDecodeError::WrongWidth { found: 768 })
        );
        assert_eq!(
            with(12, &u64::MAX.to_le_bytes()),
            Err(DenseDecodeError::TooManyRows { found: u64::MAX })
        );
        assert_eq!(
            with(12, &2u64.to_le_bytes()),
            Err(DenseDecodeError::WrongLength {
                expected: 20 + 524 * 2,
                found: good.len()
            })
        );
        assert_eq!(
            DenseMatrix::decode(&good[..good.len() - 1]),
            Err(DenseDecodeError::WrongLength {
                expected: good.len(),
                found: good.len() - 1
            })
        );
        // The layout: header, levels, scales, chunk ids.
        let levels = 20;
        let scales = levels + 512 * 3;
        let ids = scales + 4 * 3;
        assert_eq!(
            with(ids + 16, &0i64.to_le_bytes()),
            Err(DenseDecodeError::DuplicateChunk { row: 2 })
        );
        for bad in [f32::NAN, f32::INFINITY, 0.0, -0.001, 0.5] {
            assert_eq!(
                with(scales + 4, &bad.to_le_bytes()),
                Err(DenseDecodeError::BadScale { row: 1 }),
                "{bad}"
            );
        }
        assert_eq!(
            with(levels + 512 * 2 + 9, &[0x80]),
            Err(DenseDecodeError::BadLevels { row: 2 })
        );
        assert_eq!(
            with(levels, &[0u8; 512]),
            Err(DenseDecodeError::BadLevels { row: 0 })
        );
    }

    fn small_matrix() -> impl Strategy<Value = (DenseMatrix, QuantisedVector, usize)> {
        (
            proptest::collection::vec((0i64..40, 0u64..12), 0..80),
            0u64..12,
            0usize..30,
        )
            .prop_map(|(rows, query, k)| {
                let mut m = DenseMatrix::new();
                // Seeds repeat, so equal scores (ties) are common.
                for (id, seed) in rows {
                    let _ = m.push(id, &vector(seed));
                }
                (m, vector(query), k)
            })
    }

    proptest! {
        #[test]
        fn top_k_equals_the_first_k_of_a_full_sort_on_every_kernel((m, query, k) in small_matrix()) {
            let expected = full_sort(&m, &query, k);
            for kernel in DenseKernel::available() {
                prop_assert_eq!(&m.top_k_with(kernel, &query, k), &expected, "{}", kernel.name());
            }
        }

        #[test]
        fn the_two_pass_scan_equals_the_exact_scan_when_every_row_is_a_candidate(
            (m, query, k) in small_matrix(),
            extra in 0usize..4,
            skip in 0i64..40,
        ) {
            let candidates = m.len().max(1) + extra;
            let none = HashSet::new();
            let skipped = HashSet::from([skip]);
            for kernel in DenseKernel::available() {
                prop_assert_eq!(
                    m.scan_two_pass(kernel, &query, k, candidates, &none),
                    full_sort(&m, &query, k),
                    "{}", kernel.name()
                );
                prop_assert_eq!(
                    m.scan_two_pass(kernel, &query, k, candidates, &skipped),
                    m.scan_exact(kernel, &query, k, &skipped),
                    "{}", kernel.name()
                );
            }
        }

        #[test]
        fn with_fewer_candidates_than_rows_the_result_is_exact_scores_in_order_on_every_kernel(
            (m, query, k) in small_matrix(),
            candidates in 1usize..30,
        ) {
            let exact = full_sort(&m, &query, m.len());
            let reference = m.scan_two_pass(DenseKernel::scalar(), &query, k, candidates, &HashSet::new());
            prop_assert_eq!(reference.len(), k.min(candidates).min(m.len()));
            for hit in &reference {
                prop_assert!(exact.contains(hit), "{:?} is not an exact hit", hit);
            }
            for pair in reference.windows(2) {
                prop_assert!(precedes(&pair[0], &pair[1]));
            }
            for kernel in DenseKernel::available() {
                prop_assert_eq!(
                    &m.scan_two_pass(kernel, &query, k, candidates, &HashSet::new()),
                    &reference,
                    "{}", kernel.name()
                );
            }
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let _ = DenseMatrix::decode(&bytes);
        }

        #[test]
        fn decoding_a_damaged_blob_refuses_or_reencodes_to_the_same_bytes(
            (m, _, _) in small_matrix(),
            at in any::<proptest::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut bytes = m.encode();
            let i = at.index(bytes.len());
            bytes[i] = byte;
            if let Ok(back) = DenseMatrix::decode(&bytes) {
                prop_assert_eq!(back.encode(), bytes);
            }
        }
    }

    #[test]
    fn a_scan_spanning_several_blocks_equals_the_full_sort() {
        let m = matrix(0..(SCAN_BLOCK_ROWS as i64 * 2 + 37));
        for q in [1, 200, 600] {
            let query = vector(q);
            let expected = full_sort(&m, &query, DENSE_TOP_K);
            for kernel in DenseKernel::available() {
                assert_eq!(m.top_k_exact_with(kernel, &query, DENSE_TOP_K), expected);
                // Every row a candidate: the coarse pass over several
                // blocks drops none, and the rescoring is the exact scan.
                let all = m.scan_two_pass(kernel, &query, DENSE_TOP_K, m.len(), &HashSet::new());
                assert_eq!(all, expected, "{}", kernel.name());
            }
        }
    }

    #[test]
    fn a_matrix_of_at_most_the_candidate_count_is_scanned_exactly() {
        assert_eq!(dense_candidates(DENSE_TOP_K), DENSE_COARSE_CANDIDATES);
        assert_eq!(dense_candidates(0), DENSE_COARSE_CANDIDATES);
        assert_eq!(dense_candidates(200), 2000);
        let m = matrix(0..DENSE_COARSE_CANDIDATES as i64);
        let query = vector(3);
        assert_eq!(
            m.top_k(&query, DENSE_TOP_K),
            full_sort(&m, &query, DENSE_TOP_K)
        );
    }

    /// Recall of the two-pass top-25 against the exact int8 top-25 over
    /// `rows` rows of the test vectors (uniform, not Gaussian), 8 queries.
    fn two_pass_recall(rows: i64) -> f64 {
        let m = matrix(0..rows);
        let mut found = 0u32;
        let queries = 8;
        for q in 0..queries {
            let query = vector(1_000_003 + q);
            let exact = m.top_k_exact_with(DenseKernel::detected(), &query, DENSE_TOP_K);
            let two = m.top_k(&query, DENSE_TOP_K);
            assert_eq!(two.len(), DENSE_TOP_K);
            // Whatever it found carries the exact score, in the exact order.
            for pair in two.windows(2) {
                assert!(precedes(&pair[0], &pair[1]));
            }
            for hit in &two {
                let Some(same) = exact.iter().find(|h| h.chunk_id == hit.chunk_id) else {
                    continue;
                };
                assert_eq!(same, hit);
                found += 1;
            }
        }
        f64::from(found) / (queries as f64 * DENSE_TOP_K as f64)
    }

    #[test]
    fn the_two_pass_top_25_finds_the_exact_top_25_on_random_rows() {
        // 3,000 rows: the coarse pass keeps 256, under a tenth of them.
        let recall = two_pass_recall(3000);
        assert!(recall >= 0.99, "recall@25 {recall}");
    }
}
