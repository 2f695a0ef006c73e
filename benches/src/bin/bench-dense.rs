//! `bench-dense`: the dense top-25 scan over seeded vectors written to files, so `benches/run-dense` can time faiss and numpy on exactly the same vectors (issue 12, §7.2).
//!
//! ```sh
//! bench-dense write --dir D --rows 90000 --queries 50   # base.f32, queries.f32, matrix.bin
//! bench-dense scan --dir D --repeats 20                 # one JSON line per kernel
//! ```
//!
//! `write` draws `rows` Gaussian unit vectors of 512 values (seed
//! [`DENSE_SEED`]) and `queries` more (another stream of the same seed),
//! writes both as raw little-endian f32 (`base.f32`, `queries.f32`, row
//! after row) and writes memoria's quantised matrix of the base vectors in
//! its byte form (`matrix.bin`, [`memoria::DenseMatrix::encode`]).
//!
//! `scan` decodes `matrix.bin`, quantises each query through the same
//! pipeline, and on every kernel this CPU has times each query once to warm
//! up and then `repeats` times, one `top_k` (k = 25) per sample: the two-pass
//! scan (4-bit coarse pass, int8 rescoring of the candidates; issue 30) on
//! every kernel, then the exact int8 scan (`top_k_exact_with`, the scan
//! before issue 30) on the detected one. p50 (nearest rank) and min of the
//! wall time, and p50 of the thread's CPU time, are over all samples. It
//! prints one JSON object per run, the detected kernel's two-pass first,
//! and writes the detected kernel's top-25 chunk ids per query to
//! `memoria-top.i64` (two-pass) and `memoria-exact-top.i64` (exact) for the
//! script's recall check against the exact f32 ranking.
//!
//! Exit codes: 0 done; 1 a file is missing or malformed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use memoria::{DENSE_TOP_K, DenseKernel, DenseMatrix, EMBED_DIM_STORED, dense_candidates};
use memoria_benches::{DENSE_SEED, Gaussian, quantised};

/// The query stream's seed: the base seed with a fixed tweak, as the
/// criterion bench draws its queries.
const QUERY_SEED_XOR: u64 = 0x51;

#[derive(Parser)]
#[command(about = "The dense top-25 scan over seeded vectors, for benches/run-dense")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Draw the vectors and write base.f32, queries.f32 and matrix.bin.
    Write {
        /// Directory to write into (must exist).
        #[arg(long)]
        dir: PathBuf,
        /// Base vectors (rows of the matrix).
        #[arg(long)]
        rows: usize,
        /// Query vectors.
        #[arg(long)]
        queries: usize,
    },
    /// Time memoria's top-25 over the written vectors.
    Scan {
        /// Directory `write` wrote.
        #[arg(long)]
        dir: PathBuf,
        /// Timed runs of each query after one warm-up run.
        #[arg(long, default_value_t = 20)]
        repeats: usize,
    },
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Write { dir, rows, queries } => write(&dir, rows, queries),
        Command::Scan { dir, repeats } => scan(&dir, repeats),
    }
}

fn write(dir: &Path, rows: usize, queries: usize) -> anyhow::Result<()> {
    let mut base_f32 = Vec::with_capacity(rows * EMBED_DIM_STORED * 4);
    let mut matrix = DenseMatrix::new();
    let mut g = Gaussian::new(DENSE_SEED);
    for id in 0..rows {
        let v = g.unit_vector(EMBED_DIM_STORED);
        base_f32.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        matrix
            .push(id as i64, &quantised(&v))
            .context("adding a row")?;
    }
    let mut g = Gaussian::new(DENSE_SEED ^ QUERY_SEED_XOR);
    let queries_f32: Vec<u8> = (0..queries)
        .flat_map(|_| g.unit_vector(EMBED_DIM_STORED))
        .flat_map(|x| x.to_le_bytes())
        .collect();
    std::fs::write(dir.join("base.f32"), base_f32).context("writing base.f32")?;
    std::fs::write(dir.join("queries.f32"), queries_f32).context("writing queries.f32")?;
    std::fs::write(dir.join("matrix.bin"), matrix.encode()).context("writing matrix.bin")?;
    println!(
        "{{\"rows\": {rows}, \"queries\": {queries}, \"dim\": {EMBED_DIM_STORED}, \"seed\": {DENSE_SEED}, \"matrix_bytes\": {}}}",
        matrix.encoded_len()
    );
    Ok(())
}

fn scan(dir: &Path, repeats: usize) -> anyhow::Result<()> {
    let blob = std::fs::read(dir.join("matrix.bin")).context("reading matrix.bin")?;
    let matrix = DenseMatrix::decode(&blob).context("decoding matrix.bin")?;
    drop(blob);
    let raw = std::fs::read(dir.join("queries.f32")).context("reading queries.f32")?;
    if raw.len() % (4 * EMBED_DIM_STORED) != 0 {
        bail!("queries.f32 is not whole 512-value rows");
    }
    let queries: Vec<_> = raw
        .chunks_exact(4 * EMBED_DIM_STORED)
        .map(|row| {
            let v: Vec<f32> = row
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            quantised(&v)
        })
        .collect();
    let detected = DenseKernel::detected();
    let mut kernels = vec![detected];
    kernels.extend(
        DenseKernel::available()
            .into_iter()
            .filter(|k| *k != detected),
    );
    // The two-pass scan on every kernel, then the exact scan (the scan
    // before issue 30) on the detected one, in the same sitting.
    let mut runs: Vec<(DenseKernel, Pass)> = kernels.iter().map(|&k| (k, Pass::TwoPass)).collect();
    runs.push((detected, Pass::Exact));
    for (kernel, pass) in runs {
        let top = |q: &memoria::QuantisedVector| match pass {
            Pass::TwoPass => matrix.top_k_with(kernel, q, DENSE_TOP_K),
            Pass::Exact => matrix.top_k_exact_with(kernel, q, DENSE_TOP_K),
        };
        let mut samples_ms = Vec::with_capacity(queries.len() * repeats);
        let mut cpu_ms = Vec::with_capacity(queries.len() * repeats);
        let mut tops: Vec<u8> = Vec::new();
        for q in &queries {
            let warm = top(q);
            for _ in 0..repeats {
                let cpu = thread_cpu_ms();
                let t = Instant::now();
                let hits = top(q);
                samples_ms.push(t.elapsed().as_secs_f64() * 1e3);
                cpu_ms.push(thread_cpu_ms() - cpu);
                std::hint::black_box(hits);
            }
            tops.extend(warm.iter().flat_map(|h| h.chunk_id.to_le_bytes()));
        }
        if kernel == detected {
            std::fs::write(dir.join(pass.tops_file()), &tops)
                .with_context(|| format!("writing {}", pass.tops_file()))?;
        }
        let (p50, min) = p50_min(&mut samples_ms);
        let (cpu_p50, _) = p50_min(&mut cpu_ms);
        println!(
            "{{\"tool\": \"{}\", \"kernel\": \"{}\", \"detected\": {}, \"rows\": {}, \"candidates\": {}, \"samples\": {}, \"p50_ms\": {p50:.4}, \"min_ms\": {min:.4}, \"cpu_p50_ms\": {cpu_p50:.4}}}",
            pass.tool(),
            kernel.name(),
            kernel == detected && pass == Pass::TwoPass,
            matrix.len(),
            match pass {
                Pass::TwoPass => dense_candidates(DENSE_TOP_K),
                Pass::Exact => matrix.len(),
            },
            samples_ms.len(),
        );
    }
    Ok(())
}

/// Which scan a run times.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// `DenseMatrix::top_k_with`: 4-bit coarse pass, int8 rescoring.
    TwoPass,
    /// `DenseMatrix::top_k_exact_with`: every row's int8 product.
    Exact,
}

impl Pass {
    fn tool(self) -> &'static str {
        match self {
            Pass::TwoPass => "memoria",
            Pass::Exact => "memoria exact int8",
        }
    }

    /// Where the detected kernel's top-25 ids go, for the recall check.
    fn tops_file(self) -> &'static str {
        match self {
            Pass::TwoPass => "memoria-top.i64",
            Pass::Exact => "memoria-exact-top.i64",
        }
    }
}

/// The p50 (nearest rank) and the minimum of `samples`, which it sorts.
fn p50_min(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let p50 = samples
        .get(samples.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(f64::NAN);
    (p50, samples.first().copied().unwrap_or(f64::NAN))
}

/// This thread's CPU time in milliseconds (`CLOCK_THREAD_CPUTIME_ID`): what
/// a scan costs, whatever else the shared machine runs meanwhile.
fn thread_cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to write.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}
