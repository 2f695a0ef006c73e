//! Gate 2's inversion probe over bytes at rest: contiguous-matrix parses correlated against the true corpus, and a sentinel vector grepped in every dtype, endianness and decimal text form (§10 gate 2, §3.1).
//!
//! **The matrix parse.** Each file is read as a contiguous row-major matrix
//! at every plausible width ([`PROBE_DIMS`]) and dtype ([`ProbeDtype`]: int8,
//! f32 and f64, each endianness), starting at every offset from 0 to
//! [`PROBE_START_OFFSET_MAX_BYTES`] that the dtype's alignment allows: an
//! object that *is* a matrix, or a matrix behind a short header. A parse
//! runs as far as its rows are well-formed (every value finite, no row all
//! zero) and is judged when at least [`PROBE_ROWS_MIN`] rows are. Its
//! pairwise cosine matrix over those rows (up to the corpus size) is
//! correlated (Pearson) with the true
//! corpus's, in the order the corpus gives; a correlation above
//! [`PROBE_CORRELATION_MAX`] (r = 0.20, §10) is a finding. A cheap screen on
//! the first [`PROBE_SCREEN_ROWS`] rows comes first; only a parse that
//! passes it is correlated in full, so the probe's cost is the screen's.
//!
//! **What it does not see**, stated as §10 states it: a matrix at an offset
//! past [`PROBE_START_OFFSET_MAX_BYTES`] inside a larger object, a matrix in
//! another row order, a row-framed layout, and any transform applied before
//! writing. The sentinel grep is what sees the framed and text encodings.
//! Nor can it tell a leak from a coincidence of periods: a corpus whose
//! rows repeat a pattern in store order, parsed from a file whose layout
//! repeats too (SQLite's page), correlates by layout alone, so the corpus a
//! gate probes with must not be periodic in its order.

use std::path::Path;

/// The widths a matrix is parsed at (§10 gate 2: 256/512/768/1024/1536).
pub const PROBE_DIMS: [usize; 5] = [256, 512, 768, 1024, 1536];
/// A parse must start within this many bytes of its object's start: room
/// for any header a writer might put before a matrix (this project's own
/// dense snapshot puts 52 bytes before its levels).
pub const PROBE_START_OFFSET_MAX_BYTES: usize = 128;
/// The correlation above which a parse is a finding (§10 gate 2: "far below
/// what a real embedding scores against itself, far above what noise
/// reaches over 200 chunks").
pub const PROBE_CORRELATION_MAX: f64 = 0.20;
/// Rows the screen correlates: 32 rows are 496 pairs, over which noise
/// has a standard deviation near 0.045, so a real leak (r near 1) always
/// passes the screen and noise rarely does; a parse passing it is then
/// judged on every row.
pub const PROBE_SCREEN_ROWS: usize = 32;
/// The fewest rows a parse must yield to be judged: fewer pairs than this
/// many rows give cannot tell a leak from noise.
pub const PROBE_ROWS_MIN: usize = PROBE_SCREEN_ROWS;

/// One element type and byte order a matrix is parsed as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeDtype {
    /// Signed bytes.
    I8,
    /// IEEE 754 binary32, little-endian.
    F32Le,
    /// IEEE 754 binary32, big-endian.
    F32Be,
    /// IEEE 754 binary64, little-endian.
    F64Le,
    /// IEEE 754 binary64, big-endian.
    F64Be,
}

impl ProbeDtype {
    /// Every dtype the probe tries.
    pub const ALL: [ProbeDtype; 5] = [
        ProbeDtype::I8,
        ProbeDtype::F32Le,
        ProbeDtype::F32Be,
        ProbeDtype::F64Le,
        ProbeDtype::F64Be,
    ];

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ProbeDtype::I8 => 1,
            ProbeDtype::F32Le | ProbeDtype::F32Be => 4,
            ProbeDtype::F64Le | ProbeDtype::F64Be => 8,
        }
    }

    fn value(self, b: &[u8]) -> f64 {
        match self {
            ProbeDtype::I8 => f64::from(b[0] as i8),
            ProbeDtype::F32Le => f64::from(f32::from_le_bytes(b[..4].try_into().expect("4"))),
            ProbeDtype::F32Be => f64::from(f32::from_be_bytes(b[..4].try_into().expect("4"))),
            ProbeDtype::F64Le => f64::from_le_bytes(b[..8].try_into().expect("8")),
            ProbeDtype::F64Be => f64::from_be_bytes(b[..8].try_into().expect("8")),
        }
    }

    /// `v` encoded in this dtype (int8 rounds and saturates).
    pub fn encode(self, v: f64) -> Vec<u8> {
        match self {
            ProbeDtype::I8 => vec![v.round().clamp(-128.0, 127.0) as i8 as u8],
            ProbeDtype::F32Le => (v as f32).to_le_bytes().to_vec(),
            ProbeDtype::F32Be => (v as f32).to_be_bytes().to_vec(),
            ProbeDtype::F64Le => v.to_le_bytes().to_vec(),
            ProbeDtype::F64Be => v.to_be_bytes().to_vec(),
        }
    }
}

/// A parse that correlated with the true corpus: where, how, and how much.
#[derive(Debug, Clone, PartialEq)]
pub struct MatrixFinding {
    /// The file, relative to the probed root.
    pub file: String,
    /// The offset the parse started at, in bytes.
    pub offset: usize,
    /// Its width.
    pub dim: usize,
    /// Its dtype.
    pub dtype: ProbeDtype,
    /// The rows correlated.
    pub rows: usize,
    /// Pearson's r of the two pairwise cosine matrices.
    pub r: f64,
}

/// What one probe of a tree did: how many parses were judged (a probe that
/// judged none proved nothing), and the findings.
#[derive(Debug, Clone, Default)]
pub struct MatrixProbe {
    /// Files read.
    pub files: usize,
    /// Well-formed parses judged.
    pub parses: usize,
    /// Parses above [`PROBE_CORRELATION_MAX`].
    pub findings: Vec<MatrixFinding>,
}

/// The upper triangle of the pairwise cosine matrix of `rows` (each
/// normalised here), in row-major order of pairs.
pub fn pairwise_cosines(rows: &[Vec<f64>]) -> Vec<f64> {
    let unit: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| {
            let n = r.iter().map(|v| v * v).sum::<f64>().sqrt();
            r.iter().map(|v| v / n).collect()
        })
        .collect();
    let mut out = Vec::with_capacity(rows.len() * rows.len().saturating_sub(1) / 2);
    for i in 0..unit.len() {
        for j in i + 1..unit.len() {
            out.push(unit[i].iter().zip(&unit[j]).map(|(a, b)| a * b).sum());
        }
    }
    out
}

/// Pearson's correlation of two equal-length series; 0 when either is constant.
pub fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    if n < 2 {
        return 0.0;
    }
    let (ma, mb) = (
        a[..n].iter().sum::<f64>() / n as f64,
        b[..n].iter().sum::<f64>() / n as f64,
    );
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a[..n].iter().zip(&b[..n]) {
        let (dx, dy) = (x - ma, y - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    if saa == 0.0 || sbb == 0.0 {
        return 0.0;
    }
    sab / (saa * sbb).sqrt()
}

/// Up to `rows` rows of width `dim` parsed from `bytes` at `offset`, as far
/// as they are well-formed (every value finite, the row not all zero);
/// `None` if fewer than [`PROBE_ROWS_MIN`] are.
fn parse_rows(
    bytes: &[u8],
    offset: usize,
    dim: usize,
    dtype: ProbeDtype,
    rows: usize,
) -> Option<Vec<Vec<f64>>> {
    let s = dtype.size();
    let available = bytes.len().saturating_sub(offset) / (dim * s);
    if available < PROBE_ROWS_MIN {
        return None;
    }
    let mut out = Vec::with_capacity(rows.min(available));
    for k in 0..rows.min(available) {
        let start = offset + k * dim * s;
        let row: Vec<f64> = bytes[start..start + dim * s]
            .chunks_exact(s)
            .map(|b| dtype.value(b))
            .collect();
        if row.iter().any(|v| !v.is_finite()) || row.iter().all(|v| *v == 0.0) {
            break;
        }
        out.push(row);
    }
    (out.len() >= PROBE_ROWS_MIN).then_some(out)
}

/// Probes every file under `root` (module doc) against `truth`, the true
/// corpus's vectors in the order the store holds them (any width: only
/// their pairwise cosines are used).
pub fn probe_matrices(root: &Path, truth: &[Vec<f64>]) -> MatrixProbe {
    let true_screen = pairwise_cosines(&truth[..truth.len().min(PROBE_SCREEN_ROWS)]);
    let true_full = pairwise_cosines(truth);
    let mut probe = MatrixProbe::default();
    let mut files: Vec<std::path::PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    files.sort();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        probe.files += 1;
        let rel = f.strip_prefix(root).unwrap_or(&f).display().to_string();
        for dtype in ProbeDtype::ALL {
            for dim in PROBE_DIMS {
                for offset in (0..=PROBE_START_OFFSET_MAX_BYTES).step_by(dtype.size()) {
                    let Some(screen) = parse_rows(&bytes, offset, dim, dtype, PROBE_SCREEN_ROWS)
                    else {
                        continue;
                    };
                    probe.parses += 1;
                    let r = pearson(&pairwise_cosines(&screen), &true_screen);
                    if r <= PROBE_CORRELATION_MAX {
                        continue;
                    }
                    let Some(full) = parse_rows(&bytes, offset, dim, dtype, truth.len()) else {
                        continue;
                    };
                    let n = full.len();
                    let true_pairs = if n == truth.len() {
                        true_full.clone()
                    } else {
                        pairwise_cosines(&truth[..n])
                    };
                    let r = pearson(&pairwise_cosines(&full), &true_pairs);
                    if r > PROBE_CORRELATION_MAX {
                        probe.findings.push(MatrixFinding {
                            file: rel.clone(),
                            offset,
                            dim,
                            dtype,
                            rows: full.len(),
                            r,
                        });
                    }
                }
            }
        }
    }
    probe
}

/// The byte forms the sentinel's leading components would take at rest:
/// each dtype and endianness over each of the value sequences given (the
/// provider's values, the stored unit vector, the dequantised one; int8
/// over the stored levels, raw and as decimal text), and their decimal text
/// renderings: Rust's
/// shortest round-trip form in f32 and f64, and fixed precisions, joined as
/// a JSON array or a list would join them. Named for the failure message.
pub fn sentinel_forms(levels: &[i8], sequences: &[(&str, Vec<f64>)]) -> Vec<(String, Vec<u8>)> {
    let mut forms = vec![(
        "int8 levels".to_string(),
        levels.iter().map(|&q| q as u8).collect::<Vec<u8>>(),
    )];
    // The levels as decimal text too: a JSON or CSV row of int8 levels is a
    // vector in the clear that neither the byte form nor the floats show.
    let level_texts: Vec<String> = levels.iter().map(|q| q.to_string()).collect();
    for sep in [",", ", ", " "] {
        forms.push((
            format!("int8 levels as text ({sep:?})"),
            level_texts.join(sep).into_bytes(),
        ));
    }
    for (name, values) in sequences {
        for dtype in ProbeDtype::ALL.into_iter().skip(1) {
            let bytes: Vec<u8> = values.iter().flat_map(|v| dtype.encode(*v)).collect();
            forms.push((format!("{name} as {dtype:?}"), bytes));
        }
        let texts: [(&str, Vec<String>); 5] = [
            (
                "f32 shortest",
                values.iter().map(|v| format!("{}", *v as f32)).collect(),
            ),
            (
                "f64 shortest",
                values.iter().map(|v| format!("{v}")).collect(),
            ),
            (
                "4 decimals",
                values.iter().map(|v| format!("{v:.4}")).collect(),
            ),
            (
                "6 decimals",
                values.iter().map(|v| format!("{v:.6}")).collect(),
            ),
            (
                "exponent",
                values.iter().map(|v| format!("{:e}", *v as f32)).collect(),
            ),
        ];
        for (how, parts) in texts {
            for sep in [",", ", ", " "] {
                forms.push((
                    format!("{name} as text ({how}, {sep:?})"),
                    parts.join(sep).into_bytes(),
                ));
            }
        }
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeded_rows(n: usize, dim: usize, seed: u64) -> Vec<Vec<f64>> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        // A shared direction plus noise, as embeddings of one corpus have.
        let common: Vec<f64> = (0..dim).map(|_| rng.r#gen::<f64>() - 0.5).collect();
        (0..n)
            .map(|_| {
                let w = rng.r#gen::<f64>();
                common
                    .iter()
                    .map(|c| w * c + rng.r#gen::<f64>() - 0.5)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_matrix_written_plain_behind_a_header_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let truth = seeded_rows(200, 512, 7);
        let mut bytes = b"HEADER-OF-52-BYTES..............................!!!!".to_vec();
        assert_eq!(bytes.len(), 52);
        for row in &truth {
            for v in row {
                bytes.extend_from_slice(&(*v as f32).to_le_bytes());
            }
        }
        std::fs::write(dir.path().join("leak"), &bytes).unwrap();
        let probe = probe_matrices(dir.path(), &truth);
        assert!(probe.parses > 0);
        let hit = probe
            .findings
            .iter()
            .find(|f| f.dtype == ProbeDtype::F32Le && f.dim == 512 && f.offset == 52)
            .expect("the plain f32 matrix is found");
        assert!(hit.r > 0.99, "r = {}", hit.r);
    }

    #[test]
    fn random_bytes_correlate_with_nothing() {
        use rand::{RngCore, SeedableRng};
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = vec![0u8; 300_000];
        rand::rngs::StdRng::seed_from_u64(9).fill_bytes(&mut bytes);
        std::fs::write(dir.path().join("sealed"), &bytes).unwrap();
        let probe = probe_matrices(dir.path(), &seeded_rows(200, 512, 8));
        assert!(probe.parses > 100, "{} parses", probe.parses);
        assert!(probe.findings.is_empty(), "{:?}", probe.findings);
    }

    #[test]
    fn the_sentinel_forms_include_each_dtype_and_a_json_array() {
        let forms = sentinel_forms(&[127, -3], &[("unit", vec![0.5, -0.25])]);
        let find = |name: &str| forms.iter().find(|(n, _)| n == name).unwrap().1.clone();
        assert_eq!(find("int8 levels"), vec![127u8, 253]);
        assert_eq!(find("unit as text (f64 shortest, \",\")"), b"0.5,-0.25");
        let mut le = 0.5f32.to_le_bytes().to_vec();
        le.extend_from_slice(&(-0.25f32).to_le_bytes());
        assert_eq!(find("unit as F32Le"), le);
    }
}
