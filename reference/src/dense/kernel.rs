//! The int8 dot-product kernel: one exact integer dot product per row, on the widest SIMD path this CPU has, chosen once at run time (§7.2).
//!
//! Size: over 800 lines because each product (the int8 one and the coarse pass's 4-bit one) has a path per instruction set, and every path is held equal to the scalar one by the tests here.
//!
//! Search is a raw dot product over stored unit vectors, never a cosine
//! (§7.2), so the whole scan is `Σ q_i · r_i` over int8 values, summed in
//! i32. Every path computes exactly the same integer: the SIMD paths are an
//! implementation of the scalar one, not an approximation of it, and a
//! property test holds them equal over random lengths and the edge values
//! ±127 and -128.
//!
//! # The paths
//!
//! - **x86_64, AVX-512 VNNI** (`avx512f`, `avx512bw`, `avx512vnni`):
//!   `vpdpbusd` multiplies unsigned by signed bytes, so the query is biased
//!   in a register to `q + 128` (an XOR with `0x80`) and each row's own sum,
//!   kept beside the matrix ([`row_sum`]), is removed: `Σ q·r = Σ (q+128)·r
//!   − 128 · Σ r`. One `vpdpbusd` per 64 bytes of row, four rows at a time
//!   sharing each query load and reduced together, the rows ahead
//!   prefetched; exact in i32 for any length up to [`DOT_LEN_MAX`]; the tail
//!   is a masked load, zero-filled.
//! - **x86_64, AVX2**: bytes are sign-extended to i16 (`vpmovsxbw`) and
//!   multiplied pairwise into i32 (`vpmaddwd`); `(-128)·(-128)·2 = 32768`
//!   fits in the i32 pair sum, so nothing saturates. (`vpmaddubsw` would be
//!   faster and saturates; it is not used.)
//! - **aarch64, NEON**: `vmull_s8` widens products to i16 (at most 16384)
//!   and `vpadalq_s16` accumulates pairs into i32. CI runs on x86_64 only;
//!   this module's tests, NEON against scalar included, passed under
//!   `qemu-aarch64` on 2026-12-02 and are not re-run on every change.
//! - **Scalar**: the reference, on every target.
//!
//! # The coarse pass
//!
//! [`DenseKernel::coarse_dots`] is the scan's first pass (the matrix's
//! module doc): the same int8 query against 4-bit codes of each row,
//! [`coarse_codes`], two per byte, so a row is half the bytes. A code is
//! the level rounded to one of ±[`COARSE_LEVEL_MAX`] steps, stored as
//! `l + 8` in a nibble (1..=15, unsigned): byte `j` holds dimension `j` in
//! its low nibble and dimension `j + dim/2` in its high one, so each half of
//! a row's codes lines up with a contiguous half of the query and no
//! shuffle is needed. The product is exact integer arithmetic too, equal
//! on every path: `Σ l·q = Σ (l+8)·q − 8·Σ q`. AVX-512 VNNI multiplies the
//! unsigned nibbles by the signed query with `vpdpbusd` (no bias needed);
//! AVX2 with `vpmaddubsw`, whose pair sums are at most `2 · 15 · 128 = 3840`
//! and never saturate, summed in i16 a few steps at a time; other targets,
//! NEON included, use the scalar path.
//!
//! [`DenseKernel::detected`] picks the first available path, in that order,
//! once per process (`is_x86_feature_detected!`), so one binary runs
//! everywhere. A [`DenseKernel`] can only be obtained for a path this CPU
//! has, which is what makes calling its `unsafe` `#[target_feature]`
//! functions sound.
//!
//! # Why not a crate
//!
//! The project prefers a maintained library to its own code. `simsimd`
//! 6.5.16 (a runtime-dispatched C library, the maintained i8 dot product on
//! crates.io; its successor `numkong` keeps the same one-pair API) was
//! measured on this machine on 2026-12-02 over a 90,000 × 512 int8 top-25
//! scan, one `i8::dot` call per row: 6.9 ms at best at a load of 2.3, five
//! times the 1.5 ms target; run alternately with this kernel at a load of
//! 5, 12.5 ms at best against this kernel's 4.3 ms. Each call computes one
//! 512-byte pair and returns an `f64` through a dispatch pointer; the
//! kernel here streams four rows at a time past a query held in L1, in a
//! few dozen lines per path (`benches/RESULTS.md`, "The dense scan").

use std::sync::OnceLock;

/// The longest vector [`DenseKernel::dot`] accepts, in elements.
///
/// Source: exactness. A product of two int8 values is at most
/// `(-128)·(-128) = 16384 = 2^14` in magnitude, so a dot product of `2^16`
/// of them is at most `2^30` and fits in i32 with room; the AVX-512 path's
/// biased sum `Σ (q+128)·r` is at most `255 · 128 · 2^16 < 2^31`. The stored
/// width is 512 ([`crate::EMBED_DIM_STORED`], §7.2), far below.
pub const DOT_LEN_MAX: usize = 1 << 16;

/// The largest 4-bit level of a coarse code ([`coarse_codes`]): levels are
/// `-7..=7`, symmetric like [`crate::QUANT_LEVEL_MAX`]'s, stored as `l + 8`.
///
/// Source: the widest symmetric range a nibble holds (`l + 8` in 1..=15).
pub const COARSE_LEVEL_MAX: i8 = 7;

/// What a coarse code's nibble holds for level 0: codes are `l + 8`.
const COARSE_CODE_ZERO: i32 = 8;

/// One way of computing int8 dot products, available on this CPU.
///
/// Obtained only from [`DenseKernel::detected`], [`DenseKernel::scalar`] or
/// [`DenseKernel::available`], so a value of this type is proof that its
/// instructions exist here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DenseKernel(Path);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Path {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512Vnni,
    #[cfg(target_arch = "aarch64")]
    Neon,
}

impl DenseKernel {
    /// The portable scalar path, on every target: the reference the SIMD
    /// paths are tested against.
    pub fn scalar() -> DenseKernel {
        DenseKernel(Path::Scalar)
    }

    /// The fastest path this CPU supports, detected once per process.
    pub fn detected() -> DenseKernel {
        static DETECTED: OnceLock<DenseKernel> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            DenseKernel::available()
                .into_iter()
                .next()
                .unwrap_or(DenseKernel(Path::Scalar))
        })
    }

    /// Every path this CPU supports, fastest first; the scalar path is
    /// always last. Tests compare each with the scalar one; benches time
    /// each.
    pub fn available() -> Vec<DenseKernel> {
        #[allow(unused_mut)]
        let mut paths = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vnni")
            {
                paths.push(DenseKernel(Path::Avx512Vnni));
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                paths.push(DenseKernel(Path::Avx2));
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if std::arch::is_aarch64_feature_detected!("neon") {
                paths.push(DenseKernel(Path::Neon));
            }
        }
        paths.push(DenseKernel(Path::Scalar));
        paths
    }

    /// The path's name, for bench labels and reports: `scalar`, `avx2`,
    /// `avx512vnni` or `neon`.
    pub fn name(self) -> &'static str {
        match self.0 {
            Path::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Path::Avx512Vnni => "avx512vnni",
            #[cfg(target_arch = "aarch64")]
            Path::Neon => "neon",
        }
    }

    /// The exact dot product `Σ a_i · b_i` of two int8 vectors, in i32.
    ///
    /// Returns `None` when the lengths differ or exceed [`DOT_LEN_MAX`];
    /// every path returns the same value for the same input.
    pub fn dot(self, a: &[i8], b: &[i8]) -> Option<i32> {
        if a.len() != b.len() || a.len() > DOT_LEN_MAX {
            return None;
        }
        let mut out = [0i32; 1];
        self.dots(a, b, &[row_sum(b)], &mut out);
        Some(out[0])
    }

    /// Writes `query · row` for each `query.len()`-wide row of `rows` into
    /// `out`, one i32 per row, in row order. `row_sums[i]` is the sum of row
    /// `i`'s levels ([`row_sum`]), which the AVX-512 path needs.
    ///
    /// The caller guarantees `query.len() <= DOT_LEN_MAX`, `query.len() > 0`,
    /// `rows.len() == out.len() * query.len()` and `row_sums.len() ==
    /// out.len()`; a mismatch writes only the rows that are whole and in
    /// `out` (debug builds assert).
    pub(crate) fn dots(self, query: &[i8], rows: &[i8], row_sums: &[i32], out: &mut [i32]) {
        debug_assert!(query.len() <= DOT_LEN_MAX);
        debug_assert_eq!(rows.len(), out.len() * query.len());
        debug_assert_eq!(row_sums.len(), out.len());
        if query.is_empty() {
            out.fill(0);
            return;
        }
        match self.0 {
            Path::Scalar => dots_scalar(query, rows, out),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `DenseKernel(Path::Avx2)` is only built by
            // `available` after `is_x86_feature_detected!("avx2")`.
            Path::Avx2 => unsafe { x86::dots_avx2(query, rows, out) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `DenseKernel(Path::Avx512Vnni)` is only built by
            // `available` after detecting avx512f, avx512bw and avx512vnni.
            Path::Avx512Vnni => unsafe { x86::dots_avx512vnni(query, rows, row_sums, out) },
            #[cfg(target_arch = "aarch64")]
            // SAFETY: a `DenseKernel(Path::Neon)` is only built by
            // `available` after `is_aarch64_feature_detected!("neon")`.
            Path::Neon => unsafe { arm::dots_neon(query, rows, out) },
        }
    }
}

impl DenseKernel {
    /// Writes `Σ l·q` for each row's 4-bit codes in `codes` ([`coarse_codes`],
    /// `query.len() / 2` bytes a row) against the int8 `query`, one i32 per
    /// row, in row order: the scan's coarse first pass. Exact; every path
    /// gives the same integers.
    ///
    /// The caller guarantees an even `query.len() <= DOT_LEN_MAX` and
    /// `codes.len() == out.len() * query.len() / 2`; a mismatch writes only
    /// the rows that are whole and in `out` (debug builds assert).
    pub(crate) fn coarse_dots(self, query: &[i8], codes: &[u8], out: &mut [i32]) {
        let half = query.len() / 2;
        debug_assert!(query.len() <= DOT_LEN_MAX && query.len().is_multiple_of(2));
        debug_assert_eq!(codes.len(), out.len() * half);
        if half == 0 {
            out.fill(0);
            return;
        }
        let bias = COARSE_CODE_ZERO.wrapping_mul(row_sum(query));
        match self.0 {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `DenseKernel(Path::Avx512Vnni)` is only built by
            // `available` after detecting avx512f, avx512bw and avx512vnni;
            // the path needs whole 64-byte steps, which `half` is.
            Path::Avx512Vnni if half.is_multiple_of(x86::ZMM_BYTES) => unsafe {
                x86::coarse_dots_avx512vnni(query, codes, out);
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `DenseKernel(Path::Avx2)` is only built by `available`
            // after `is_x86_feature_detected!("avx2")`; whole 32-byte steps.
            Path::Avx2 if half.is_multiple_of(x86::YMM_BYTES) => unsafe {
                x86::coarse_dots_avx2(query, codes, out);
            },
            _ => coarse_dots_scalar(query, codes, out),
        }
        for o in out.iter_mut() {
            *o = o.wrapping_sub(bias);
        }
    }
}

/// Appends `levels.len() / 2` bytes of 4-bit codes of one row's int8
/// levels to `out` ([`DenseKernel::coarse_dots`]'s layout, module doc):
/// each level `q` becomes `round(q · 7 / 127)`, halves away from zero,
/// plus 8. Derived, never encoded: the matrix rebuilds them at load.
pub(crate) fn coarse_codes(levels: &[i8], out: &mut Vec<u8>) {
    let (low, high) = levels.split_at(levels.len() / 2);
    out.extend(low.iter().zip(high).map(|(&lo, &hi)| {
        COARSE_CODES[usize::from(lo as u8)] | COARSE_CODES[usize::from(hi as u8)] << 4
    }));
}

/// Each int8 level's coarse code (`l + 8`, in 1..=15), indexed by the
/// level's byte: one table look-up a level at load.
const COARSE_CODES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let q = i as u8 as i8 as i32;
        let max = QUANT_MAX_I32;
        let steps = COARSE_LEVEL_MAX as i32;
        // round(|q| · 7 / 127), halves away from zero, capped at 7 (a -128,
        // which no quantisation writes, rounds to 7 as well).
        let mut l = (q.abs() * steps + max / 2) / max;
        if l > steps {
            l = steps;
        }
        if q < 0 {
            l = -l;
        }
        table[i] = (l + COARSE_CODE_ZERO) as u8;
        i += 1;
    }
    table
};

/// [`crate::QUANT_LEVEL_MAX`] as an i32, for the table's arithmetic.
const QUANT_MAX_I32: i32 = crate::dense::QUANT_LEVEL_MAX as i32;

/// The coarse reference: `Σ (l+8)·q` over both nibbles of every byte.
fn coarse_dots_scalar(query: &[i8], codes: &[u8], out: &mut [i32]) {
    let (low, high) = query.split_at(query.len() / 2);
    for (row, o) in codes.chunks_exact(low.len()).zip(out.iter_mut()) {
        *o = row
            .iter()
            .zip(low)
            .zip(high)
            .fold(0i32, |s, ((&c, &lo), &hi)| {
                s.wrapping_add(i32::from(c & 0x0F) * i32::from(lo))
                    .wrapping_add(i32::from(c >> 4) * i32::from(hi))
            });
    }
}

/// The sum of a row's levels, which the AVX-512 path subtracts (128 times)
/// from its biased product; a matrix keeps one per row.
pub(crate) fn row_sum(levels: &[i8]) -> i32 {
    levels
        .iter()
        .fold(0i32, |s, &q| s.wrapping_add(i32::from(q)))
}

/// The reference: one multiply-add per element, wrapping (never reached
/// within [`DOT_LEN_MAX`]) so it cannot panic.
fn dot_scalar(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).fold(0i32, |s, (&x, &y)| {
        s.wrapping_add(i32::from(x) * i32::from(y))
    })
}

fn dots_scalar(query: &[i8], rows: &[i8], out: &mut [i32]) {
    for (row, o) in rows.chunks_exact(query.len()).zip(out.iter_mut()) {
        *o = dot_scalar(query, row);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The x86_64 paths: AVX2 (widen to i16, `vpmaddwd`) and AVX-512 VNNI (`vpdpbusd`).

    use std::arch::x86_64::*;

    use super::dot_scalar;

    /// Bytes per AVX-512 register, and per cache line.
    pub(super) const ZMM_BYTES: usize = 64;
    /// Bytes per AVX2 register.
    pub(super) const YMM_BYTES: usize = 32;
    /// How far ahead of the rows being scored the x86 paths ask for rows
    /// to be fetched into L1, in rows: 16 rows, 8 KiB at 512 levels.
    ///
    /// Source: measured on this machine (2026-12-02, 90,000 × 512, under a
    /// load of 5-6 from other builds): the hardware prefetcher alone left
    /// the AVX-512 scan at 5.5-6.2 ms (min of 60), prefetching 4 to 32
    /// rows ahead brought it to 2.3-2.8 ms, with no clear best within
    /// that range.
    const PREFETCH_ROWS: usize = 16;
    /// Bytes the AVX2 path widens per step (16 i8 → 16 i16).
    const AVX2_STEP_BYTES: usize = 16;

    /// Asks for the `bytes` bytes at `at` to be brought into L1, one cache
    /// line at a time. A prefetch never faults, so `at` may be past the
    /// end of the rows (`wrapping_add`, never dereferenced).
    #[inline]
    fn prefetch(at: *const i8, bytes: usize) {
        let mut off = 0;
        while off < bytes {
            // SAFETY: a prefetch is a hint; it reads nothing the program
            // sees and does not fault on any address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at.wrapping_add(off)) };
            off += ZMM_BYTES;
        }
    }

    /// # Safety
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn dots_avx2(query: &[i8], rows: &[i8], out: &mut [i32]) {
        let dim = query.len();
        let body = dim - dim % (2 * AVX2_STEP_BYTES);
        // The query widened once per scan; rows are widened as they stream.
        let mut wide: Vec<__m256i> = Vec::with_capacity(body / AVX2_STEP_BYTES);
        for c in query[..body].chunks_exact(AVX2_STEP_BYTES) {
            // SAFETY: `c` is 16 readable bytes; loadu has no alignment need.
            let q = unsafe { _mm_loadu_si128(c.as_ptr().cast()) };
            wide.push(_mm256_cvtepi8_epi16(q));
        }
        for (row, o) in rows.chunks_exact(dim).zip(out.iter_mut()) {
            prefetch(row.as_ptr().wrapping_add(PREFETCH_ROWS * dim), dim);
            let mut acc0 = _mm256_setzero_si256();
            let mut acc1 = _mm256_setzero_si256();
            for (pair, w) in row[..body]
                .chunks_exact(2 * AVX2_STEP_BYTES)
                .zip(wide.chunks_exact(2))
            {
                // SAFETY: `pair` is 32 readable bytes, read as two 16-byte halves.
                let (r0, r1) = unsafe {
                    (
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(pair.as_ptr().cast())),
                        _mm256_cvtepi8_epi16(_mm_loadu_si128(
                            pair.as_ptr().add(AVX2_STEP_BYTES).cast(),
                        )),
                    )
                };
                acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(r0, w[0]));
                acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(r1, w[1]));
            }
            let acc = _mm256_add_epi32(acc0, acc1);
            let sum = hsum256(acc);
            *o = sum.wrapping_add(dot_scalar(&query[body..], &row[body..]));
        }
    }

    #[target_feature(enable = "avx2")]
    fn hsum256(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b01_00_11_10));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0b10_11_00_01));
        _mm_cvtsi128_si32(s)
    }

    /// Rows the AVX-512 path scores together, sharing each query load,
    /// giving the core four independent accumulator chains, and reduced to
    /// four sums together.
    const ROWS_PER_STEP: usize = 4;

    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn dots_avx512vnni(
        query: &[i8],
        rows: &[i8],
        row_sums: &[i32],
        out: &mut [i32],
    ) {
        let dim = query.len();
        let body = dim - dim % ZMM_BYTES;
        let tail = dim - body;
        // Lanes past the tail are masked off the load (and so read as 0).
        let tail_mask: __mmask64 = if tail == 0 { 0 } else { (1u64 << tail) - 1 };
        let step = ROWS_PER_STEP * dim;
        let whole = rows.len() - rows.len() % step;
        let steps = rows[..whole]
            .chunks_exact(step)
            .zip(out.chunks_exact_mut(ROWS_PER_STEP))
            .zip(row_sums.chunks_exact(ROWS_PER_STEP));
        for ((quad, o), sums) in steps {
            prefetch(quad.as_ptr().wrapping_add(PREFETCH_ROWS * dim), step);
            // SAFETY: `quad` is four rows of `dim` bytes; `query` is `dim`.
            let biased = unsafe { dot4(query.as_ptr(), quad.as_ptr(), dim, body, tail_mask) };
            for ((o, b), s) in o.iter_mut().zip(biased).zip(sums) {
                *o = b.wrapping_sub(s.wrapping_mul(128));
            }
        }
        let done = whole / dim;
        let rest = rows[whole..]
            .chunks_exact(dim)
            .zip(out.iter_mut().skip(done))
            .zip(row_sums.iter().skip(done));
        for ((row, o), s) in rest {
            // SAFETY: `row` and `query` are `dim` bytes each.
            let b = unsafe { dot1(query.as_ptr(), row.as_ptr(), body, tail_mask) };
            *o = b.wrapping_sub(s.wrapping_mul(128));
        }
    }

    /// `Σ (q+128)·r` for the four consecutive `dim`-byte rows at `rows`: the
    /// query is biased in a register (`q ^ 0x80` is `q + 128` as u8), and
    /// `vpdpbusd` multiplies it, unsigned, by the signed row.
    ///
    /// # Safety
    /// AVX-512 F, BW, VNNI; `query` is readable for `dim` bytes and `rows`
    /// for `4 · dim`; `body` is `dim` rounded down to 64 and `tail_mask`
    /// covers the `dim − body` bytes after it.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot4(
        query: *const i8,
        rows: *const i8,
        dim: usize,
        body: usize,
        tail_mask: __mmask64,
    ) -> [i32; ROWS_PER_STEP] {
        let flip = _mm512_set1_epi8(i8::MIN);
        let (r0, r1, r2, r3) = (
            rows,
            rows.wrapping_add(dim),
            rows.wrapping_add(2 * dim),
            rows.wrapping_add(3 * dim),
        );
        let mut a0 = _mm512_setzero_si512();
        let mut a1 = _mm512_setzero_si512();
        let mut a2 = _mm512_setzero_si512();
        let mut a3 = _mm512_setzero_si512();
        let mut at = 0;
        while at < body {
            // SAFETY: at + 64 <= body <= dim, inside the query and each row.
            unsafe {
                let q = _mm512_xor_si512(_mm512_loadu_si512(query.add(at).cast()), flip);
                a0 = _mm512_dpbusd_epi32(a0, q, _mm512_loadu_si512(r0.add(at).cast()));
                a1 = _mm512_dpbusd_epi32(a1, q, _mm512_loadu_si512(r1.add(at).cast()));
                a2 = _mm512_dpbusd_epi32(a2, q, _mm512_loadu_si512(r2.add(at).cast()));
                a3 = _mm512_dpbusd_epi32(a3, q, _mm512_loadu_si512(r3.add(at).cast()));
            }
            at += ZMM_BYTES;
        }
        if tail_mask != 0 {
            // SAFETY: the masked loads read only the tail's bytes, which
            // exist; masked-off row lanes are 0, so add 0.
            unsafe {
                let q = _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail_mask, query.add(body)), flip);
                a0 = _mm512_dpbusd_epi32(a0, q, _mm512_maskz_loadu_epi8(tail_mask, r0.add(body)));
                a1 = _mm512_dpbusd_epi32(a1, q, _mm512_maskz_loadu_epi8(tail_mask, r1.add(body)));
                a2 = _mm512_dpbusd_epi32(a2, q, _mm512_maskz_loadu_epi8(tail_mask, r2.add(body)));
                a3 = _mm512_dpbusd_epi32(a3, q, _mm512_maskz_loadu_epi8(tail_mask, r3.add(body)));
            }
        }
        sum4(a0, a1, a2, a3)
    }

    /// The four horizontal sums of four accumulators at once: interleave
    /// and add pairs until each 128-bit lane holds [a0, a1, a2, a3], then
    /// add the lanes.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn sum4(a0: __m512i, a1: __m512i, a2: __m512i, a3: __m512i) -> [i32; ROWS_PER_STEP] {
        let t01 = _mm512_add_epi32(_mm512_unpacklo_epi32(a0, a1), _mm512_unpackhi_epi32(a0, a1));
        let t23 = _mm512_add_epi32(_mm512_unpacklo_epi32(a2, a3), _mm512_unpackhi_epi32(a2, a3));
        let t = _mm512_add_epi32(
            _mm512_unpacklo_epi64(t01, t23),
            _mm512_unpackhi_epi64(t01, t23),
        );
        let h = _mm256_add_epi32(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64::<1>(t));
        let x = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256::<1>(h));
        let mut sums = [0i32; ROWS_PER_STEP];
        // SAFETY: `sums` is 16 writable bytes; storeu has no alignment need.
        unsafe { _mm_storeu_si128(sums.as_mut_ptr().cast(), x) };
        sums
    }

    /// `Σ (l+8)·q` for each row of coarse codes (the module doc's layout):
    /// four rows at a time share each query load, as [`dot4`] does, with
    /// the low and high nibbles of each 64 bytes of codes multiplied
    /// unsigned by the two halves of the query.
    ///
    /// # Safety
    /// AVX-512 F, BW, VNNI; `query.len() / 2` is a whole number of 64-byte
    /// steps.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn coarse_dots_avx512vnni(query: &[i8], codes: &[u8], out: &mut [i32]) {
        let half = query.len() / 2;
        let step = ROWS_PER_STEP * half;
        let whole = codes.len() - codes.len() % step;
        let steps = codes[..whole]
            .chunks_exact(step)
            .zip(out.chunks_exact_mut(ROWS_PER_STEP));
        for (quad, o) in steps {
            prefetch(
                quad.as_ptr().wrapping_add(2 * PREFETCH_ROWS * half).cast(),
                step,
            );
            // SAFETY: `quad` is four rows of `half` bytes; `query` is `2 · half`.
            let sums = unsafe { coarse4(query.as_ptr(), quad.as_ptr(), half) };
            o.copy_from_slice(&sums);
        }
        let done = whole / half;
        for (row, o) in codes[whole..]
            .chunks_exact(half)
            .zip(out.iter_mut().skip(done))
        {
            // SAFETY: `row` is `half` bytes; `query` is `2 · half`.
            *o = unsafe { coarse1(query.as_ptr(), row.as_ptr(), half) };
        }
    }

    /// The low and high nibbles of 64 bytes of codes, each a byte in 0..=15.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn nibbles(v: __m512i) -> (__m512i, __m512i) {
        let mask = _mm512_set1_epi8(0x0F);
        (
            _mm512_and_si512(v, mask),
            _mm512_and_si512(_mm512_srli_epi16::<4>(v), mask),
        )
    }

    /// `Σ (l+8)·q` for the four consecutive `half`-byte rows of codes at
    /// `rows`.
    ///
    /// # Safety
    /// AVX-512 F, BW, VNNI; `query` is readable for `2 · half` bytes and
    /// `rows` for `4 · half`; `half` is a multiple of 64.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn coarse4(query: *const i8, rows: *const u8, half: usize) -> [i32; ROWS_PER_STEP] {
        let mut acc = [_mm512_setzero_si512(); ROWS_PER_STEP];
        let mut at = 0;
        while at < half {
            // SAFETY: at + 64 <= half: inside both query halves and each row.
            unsafe {
                let lo_q = _mm512_loadu_si512(query.add(at).cast());
                let hi_q = _mm512_loadu_si512(query.add(half + at).cast());
                for (r, a) in acc.iter_mut().enumerate() {
                    let (lo, hi) = nibbles(_mm512_loadu_si512(rows.add(r * half + at).cast()));
                    *a = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(*a, lo, lo_q), hi, hi_q);
                }
            }
            at += ZMM_BYTES;
        }
        sum4(acc[0], acc[1], acc[2], acc[3])
    }

    /// `Σ (l+8)·q` for the one `half`-byte row of codes at `row`.
    ///
    /// # Safety
    /// As [`coarse4`], for one row.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn coarse1(query: *const i8, row: *const u8, half: usize) -> i32 {
        let mut acc = _mm512_setzero_si512();
        let mut at = 0;
        while at < half {
            // SAFETY: at + 64 <= half: inside both query halves and the row.
            unsafe {
                let (lo, hi) = nibbles(_mm512_loadu_si512(row.add(at).cast()));
                acc = _mm512_dpbusd_epi32(acc, lo, _mm512_loadu_si512(query.add(at).cast()));
                acc = _mm512_dpbusd_epi32(acc, hi, _mm512_loadu_si512(query.add(half + at).cast()));
            }
            at += ZMM_BYTES;
        }
        _mm512_reduce_add_epi32(acc)
    }

    /// Steps of 32 code bytes the AVX2 coarse path sums in i16 before
    /// widening to i32: a step adds two `vpmaddubsw` pair sums, at most `2 ·
    /// 2 · 15 · 128 = 7680` to a lane, so four steps stay within ±30,720,
    /// inside i16.
    const COARSE_I16_STEPS: usize = 4;

    /// `Σ (l+8)·q` for each row of coarse codes: `vpmaddubsw` multiplies the
    /// unsigned nibbles by the signed query into i16 pairs (at most `2 · 15
    /// · 128`, never saturating), summed in i16 for [`COARSE_I16_STEPS`]
    /// steps, then `vpmaddwd` by ones widens them to i32.
    ///
    /// # Safety
    /// The CPU has AVX2; `query.len() / 2` is a whole number of 32-byte
    /// steps.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn coarse_dots_avx2(query: &[i8], codes: &[u8], out: &mut [i32]) {
        let half = query.len() / 2;
        let mask = _mm256_set1_epi8(0x0F);
        let ones = _mm256_set1_epi16(1);
        for (row, o) in codes.chunks_exact(half).zip(out.iter_mut()) {
            prefetch(
                row.as_ptr().wrapping_add(2 * PREFETCH_ROWS * half).cast(),
                half,
            );
            let mut acc = _mm256_setzero_si256();
            let mut at = 0;
            while at < half {
                let end = half.min(at + COARSE_I16_STEPS * YMM_BYTES);
                let mut acc16 = _mm256_setzero_si256();
                while at < end {
                    // SAFETY: at + 32 <= half: inside both query halves and the row.
                    let (v, lo_q, hi_q) = unsafe {
                        (
                            _mm256_loadu_si256(row.as_ptr().add(at).cast()),
                            _mm256_loadu_si256(query.as_ptr().add(at).cast()),
                            _mm256_loadu_si256(query.as_ptr().add(half + at).cast()),
                        )
                    };
                    let lo = _mm256_and_si256(v, mask);
                    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), mask);
                    let pairs = _mm256_add_epi16(
                        _mm256_maddubs_epi16(lo, lo_q),
                        _mm256_maddubs_epi16(hi, hi_q),
                    );
                    acc16 = _mm256_add_epi16(acc16, pairs);
                    at += YMM_BYTES;
                }
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(acc16, ones));
            }
            *o = hsum256(acc);
        }
    }

    /// `Σ (q+128)·r` for the one `dim`-byte row at `row`.
    ///
    /// # Safety
    /// As [`dot4`], for one row.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot1(query: *const i8, row: *const i8, body: usize, tail_mask: __mmask64) -> i32 {
        let flip = _mm512_set1_epi8(i8::MIN);
        let mut acc = _mm512_setzero_si512();
        let mut at = 0;
        while at < body {
            // SAFETY: at + 64 <= body, inside the query and the row.
            unsafe {
                let q = _mm512_xor_si512(_mm512_loadu_si512(query.add(at).cast()), flip);
                acc = _mm512_dpbusd_epi32(acc, q, _mm512_loadu_si512(row.add(at).cast()));
            }
            at += ZMM_BYTES;
        }
        if tail_mask != 0 {
            // SAFETY: the masked loads read only the tail's bytes.
            unsafe {
                let q = _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail_mask, query.add(body)), flip);
                acc =
                    _mm512_dpbusd_epi32(acc, q, _mm512_maskz_loadu_epi8(tail_mask, row.add(body)));
            }
        }
        _mm512_reduce_add_epi32(acc)
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    //! The aarch64 path: NEON widening multiplies (`vmull_s8`) accumulated pairwise into i32.

    use std::arch::aarch64::*;

    use super::dot_scalar;

    /// Bytes per NEON register.
    const Q_BYTES: usize = 16;

    /// # Safety
    /// The CPU has NEON.
    #[target_feature(enable = "neon")]
    pub(super) unsafe fn dots_neon(query: &[i8], rows: &[i8], out: &mut [i32]) {
        let dim = query.len();
        let body = dim - dim % Q_BYTES;
        for (row, o) in rows.chunks_exact(dim).zip(out.iter_mut()) {
            let mut acc0 = vdupq_n_s32(0);
            let mut acc1 = vdupq_n_s32(0);
            for (r, q) in row[..body]
                .chunks_exact(Q_BYTES)
                .zip(query[..body].chunks_exact(Q_BYTES))
            {
                // SAFETY: `r` and `q` are 16 readable bytes each.
                let (vr, vq) = unsafe { (vld1q_s8(r.as_ptr()), vld1q_s8(q.as_ptr())) };
                acc0 = vpadalq_s16(acc0, vmull_s8(vget_low_s8(vr), vget_low_s8(vq)));
                acc1 = vpadalq_s16(acc1, vmull_high_s8(vr, vq));
            }
            let sum = vaddvq_s32(vaddq_s32(acc0, acc1));
            *o = sum.wrapping_add(dot_scalar(&query[body..], &row[body..]));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// int8 values with the edges (±127, -128, 0) drawn often.
    fn int8() -> impl Strategy<Value = i8> {
        prop_oneof![
            1 => Just(i8::MIN),
            1 => Just(-127i8),
            1 => Just(127i8),
            1 => Just(0i8),
            4 => any::<i8>(),
        ]
    }

    fn pair() -> impl Strategy<Value = (Vec<i8>, Vec<i8>)> {
        (0usize..700).prop_flat_map(|n| {
            (
                proptest::collection::vec(int8(), n),
                proptest::collection::vec(int8(), n),
            )
        })
    }

    proptest! {
        #[test]
        fn every_path_on_this_cpu_equals_the_scalar_path_exactly((a, b) in pair()) {
            let reference = DenseKernel::scalar().dot(&a, &b);
            for kernel in DenseKernel::available() {
                prop_assert_eq!(kernel.dot(&a, &b), reference, "{}", kernel.name());
            }
        }

        #[test]
        fn a_scan_equals_one_dot_per_row_on_every_path(
            dim in 1usize..200,
            rows in 0usize..9,
            seed in proptest::collection::vec(int8(), 200 * 10),
        ) {
            let query = &seed[..dim];
            let matrix = &seed[dim..dim + rows * dim];
            let expected: Vec<i32> = matrix.chunks_exact(dim).map(|r| dot_scalar(query, r)).collect();
            for kernel in DenseKernel::available() {
                let mut out = vec![i32::MAX; rows];
                let sums: Vec<i32> = matrix.chunks_exact(dim).map(row_sum).collect();
                kernel.dots(query, matrix, &sums, &mut out);
                prop_assert_eq!(&out, &expected, "{}", kernel.name());
            }
        }
    }

    /// The coarse level of an int8 level, from its definition in f64.
    fn coarse_level(q: i8) -> i32 {
        let l = (f64::from(q) * 7.0 / 127.0).round() as i32;
        l.clamp(-7, 7)
    }

    proptest! {
        #[test]
        fn every_coarse_path_equals_the_sum_of_coarse_levels_times_the_query(
            half_steps in 0usize..5,
            rows in 0usize..11,
            seed in proptest::collection::vec(int8(), 512 * 12),
        ) {
            // Widths the SIMD paths take (whole 64-byte halves) and one they
            // leave to the scalar path (a 32-byte half on AVX-512, 16 on AVX2).
            let dim = if half_steps == 4 { 48 } else { 128 * half_steps };
            let query = &seed[..dim];
            let matrix = &seed[dim..dim + rows * dim];
            let mut codes = Vec::new();
            for row in matrix.chunks_exact(dim.max(1)) {
                coarse_codes(row, &mut codes);
            }
            prop_assert_eq!(codes.len(), rows * dim / 2);
            let expected: Vec<i32> = matrix
                .chunks_exact(dim.max(1))
                .map(|r| r.iter().zip(query).map(|(&x, &q)| coarse_level(x) * i32::from(q)).sum())
                .collect();
            for kernel in DenseKernel::available() {
                let mut out = vec![i32::MAX; expected.len()];
                kernel.coarse_dots(query, &codes, &mut out);
                prop_assert_eq!(&out, &expected, "{}", kernel.name());
            }
        }
    }

    #[test]
    fn a_coarse_code_is_the_level_rounded_to_seven_steps_plus_eight() {
        for q in i8::MIN..=i8::MAX {
            let mut codes = Vec::new();
            coarse_codes(&[q, 0], &mut codes);
            assert_eq!(codes, [(coarse_level(q) + 8) as u8 | 8 << 4], "{q}");
        }
        let mut codes = Vec::new();
        coarse_codes(&[127, -127, 64, -64, 9, 10], &mut codes);
        // Low nibbles: the first half (127, -127, 64); high: the second
        // (-64, 9, 10), each `round(q · 7 / 127) + 8`.
        assert_eq!(codes, [15 | 4 << 4, 1 | 8 << 4, 12 | 9 << 4]);
    }

    #[test]
    fn the_extreme_codes_give_the_extreme_coarse_sums_on_every_path() {
        let n = crate::dense::EMBED_DIM_STORED;
        for (level, q, sum) in [
            (127i8, i8::MIN, -7 * 128 * 512),
            (-127, i8::MIN, 7 * 128 * 512),
            (127, 127, 7 * 127 * 512),
            (-127, 127, -7 * 127 * 512),
        ] {
            let mut codes = Vec::new();
            coarse_codes(&vec![level; n], &mut codes);
            for kernel in DenseKernel::available() {
                let mut out = [0i32; 1];
                kernel.coarse_dots(&vec![q; n], &codes, &mut out);
                assert_eq!(out[0], sum, "{} {level} {q}", kernel.name());
            }
        }
    }

    #[test]
    fn the_extreme_values_give_the_extreme_sums_on_every_path() {
        let n = crate::dense::EMBED_DIM_STORED;
        let min = vec![i8::MIN; n];
        let max = vec![i8::MAX; n];
        for kernel in DenseKernel::available() {
            assert_eq!(
                kernel.dot(&min, &min),
                Some(16384 * 512),
                "{}",
                kernel.name()
            );
            assert_eq!(
                kernel.dot(&min, &max),
                Some(-16256 * 512),
                "{}",
                kernel.name()
            );
            assert_eq!(
                kernel.dot(&max, &max),
                Some(16129 * 512),
                "{}",
                kernel.name()
            );
        }
    }

    #[test]
    fn the_longest_accepted_vector_of_extremes_is_exact_on_every_path() {
        let min = vec![i8::MIN; DOT_LEN_MAX];
        let max = vec![i8::MAX; DOT_LEN_MAX];
        for kernel in DenseKernel::available() {
            assert_eq!(kernel.dot(&min, &min), Some(1 << 30), "{}", kernel.name());
            assert_eq!(
                kernel.dot(&max, &min),
                Some(-127 * 128 * (1 << 16)),
                "{}",
                kernel.name()
            );
        }
    }

    #[test]
    fn mismatched_or_overlong_vectors_are_refused_not_truncated() {
        let k = DenseKernel::detected();
        assert_eq!(k.dot(&[1, 2], &[1]), None);
        let long = vec![1i8; DOT_LEN_MAX + 1];
        assert_eq!(k.dot(&long, &long), None);
        assert_eq!(k.dot(&[], &[]), Some(0));
    }

    #[test]
    fn the_detected_path_is_the_first_available_and_scalar_is_always_there() {
        let available = DenseKernel::available();
        assert_eq!(available.first(), Some(&DenseKernel::detected()));
        assert_eq!(available.last(), Some(&DenseKernel::scalar()));
    }
}
