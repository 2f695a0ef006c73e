//! `wake-90k`: gate 20 at §7.2's 90,000 chunks: the store built from the real Debian corpus with AI on, every chunk embedded by the stub provider's embedder, then a wake measured in a child process: bytes read, CPU, peak memory, and the ceiling they imply (§7.3, issue 12).
//!
//! ```sh
//! fixtures/corpus/fetch-debian-docs     # once: fixtures/corpus/debian-docs
//! cargo run --release -p memoria-benches --bin wake-90k
//! ```
//!
//! In one throwaway data directory under a fresh random DEK:
//!
//! 1. **Import** the corpus with AI on (lexical passages; every chunk queued
//!    for its vector).
//! 2. **Embed** the queue in process with the stub's embedder (deterministic,
//!    NOT semantic: the figures are the pipeline's and the wake's, not
//!    retrieval quality), timing the pipeline (truncate, renormalise,
//!    quantise, seal, store) by CPU; one snapshot.
//! 3. **Wake** in a child process (this binary, `wake` mode), as gate 20
//!    measures it: `rchar` (every byte `read` returned), CPU (user +
//!    system), wall, and the rise of `VmHWM` over the RSS before.
//! 4. **The dense scan** on the woken matrix: top-25 for each bench query's
//!    stub vector, p50 and p90 of CPU.
//!
//! It prints the figures against gate 20's budget and issue 12's targets as
//! a Markdown table. Exit codes: 0 done; 2 usage, corpus missing or a step
//! failed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use memoria::{
    Admission, DENSE_TOP_K, Dek, EgressMode, Instance, InstanceConfig, Sealer, SystemClock,
    quantise_embedding,
};
use memoria_benches::{BENCH_OWNER, QUERIES_90K, io_bytes, rusage_cpu_s as cpu_s, status_bytes};

/// The environment variable the child reads the throwaway DEK from (base64).
const CHILD_DEK_ENV: &str = "MEMORIA_WAKE_90K_DEK";
/// §7.3: the wake budget, seconds.
const WAKE_BUDGET_S: f64 = 5.0;
/// §7.3: the bucket's conservative read bandwidth, bytes per second.
const BUCKET_READ_BYTES_PER_S: f64 = 50_000_000.0;
/// Issue 12's targets at 90k: the sealed snapshot, FTS + vectors, in bytes.
const TARGET_SNAPSHOT_BYTES: f64 = 95e6;
/// Issue 12: wake CPU (open, decrypt, load), seconds.
const TARGET_WAKE_CPU_S: f64 = 0.25;
/// Issue 12: the chunks a 5 s wake at 50 MB/s admits.
const TARGET_CEILING_CHUNKS: f64 = 165_000.0;
/// Issue 12: the dense top-25 at 90k, milliseconds.
const TARGET_DENSE_TOP_K_MS: f64 = 1.5;
/// Vectors stored per transaction while embedding.
const EMBED_BATCH: usize = 4_096;

/// Gate 20 at 90,000 chunks.
#[derive(Debug, Parser)]
#[command(name = "wake-90k")]
struct Args {
    #[command(subcommand)]
    mode: Option<Mode>,
    /// The corpus directory (default: fixtures/corpus/debian-docs).
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Timed runs of each query's dense scan.
    #[arg(long, default_value_t = 20)]
    repeats: usize,
    /// Keep the store in DIR (and its throwaway DEK, in plain base64, as
    /// DIR.dek) instead of a temporary directory; a later run with the same
    /// DIR reuses it and skips the import and the embedding. For profiling
    /// a wake (`wake-90k wake DIR` with the DEK in the environment), not for
    /// figures.
    #[arg(long)]
    keep: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Internal: wake the store in DIR with AI on (DEK from the environment) and print what it cost, as JSON.
    Wake {
        /// The data directory.
        dir: PathBuf,
    },
}

fn config(dir: &Path) -> anyhow::Result<InstanceConfig> {
    Ok(InstanceConfig {
        data_dir: dir.to_path_buf(),
        admission: Admission::parse(BENCH_OWNER)?,
        egress: EgressMode::AiOn,
    })
}

fn child_wake(dir: &Path) -> anyhow::Result<()> {
    let dek = Dek::from_base64(&std::env::var(CHILD_DEK_ENV).context("the DEK variable")?)?;
    let sealer = Sealer::new(&dek);
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_before = status_bytes("VmRSS");
    let rchar0 = io_bytes("rchar");
    let cpu0 = cpu_s();
    let t = Instant::now();
    let instance = Instance::wake(config(dir)?, sealer, Arc::new(SystemClock))?;
    let wall = t.elapsed().as_secs_f64();
    let cpu = cpu_s() - cpu0;
    let rchar = io_bytes("rchar") - rchar0;
    let hwm = status_bytes("VmHWM");
    let r = instance.wake_report();
    let fp = instance.snapshot_footprint();
    println!(
        "{}",
        serde_json::json!({
            "wall_s": wall, "cpu_s": cpu, "rchar": rchar, "rss_before": rss_before, "hwm": hwm,
            "kind": r.kind, "dense": r.dense, "chunks": r.chunks, "vectors": r.vectors,
            "lexical_bytes": fp.lexical_bytes, "dense_bytes": fp.dense_bytes,
        })
    );
    Ok(())
}

/// Imports `corpus` into `instance`, embeds every chunk with the stub's
/// embedder through memoria's own vector path and writes a snapshot.
/// Returns the import's CPU seconds and the vector pipeline's.
fn build(instance: &mut Instance, corpus: &Path) -> anyhow::Result<(f64, f64)> {
    eprintln!("wake-90k: importing {}", corpus.display());
    let c0 = cpu_s();
    memoria::import(instance, &[corpus.to_path_buf()])?;
    let import_cpu = cpu_s() - c0;
    let chunks = instance.store().counts()?.1;
    eprintln!("wake-90k: {chunks} chunks in {import_cpu:.1} s CPU; embedding with the stub");
    // The stub's vectors first (the provider's part, not timed), then the
    // pipeline memoria runs on what comes back (timed).
    let mut embed_cpu = 0.0;
    let queue = instance
        .store()
        .chunks_awaiting_vectors(0, usize::MAX >> 1)?;
    for ids in queue.chunks(EMBED_BATCH) {
        let mut vectors = Vec::with_capacity(ids.len());
        for id in ids {
            let text = instance
                .store()
                .embedding_text(*id)?
                .context("a queued chunk is live")?;
            vectors.push((*id, memoria_simulator::stub_embed_text(&text)));
        }
        let c = cpu_s();
        let (stored, refused) = instance.store_vectors(vectors)?;
        embed_cpu += cpu_s() - c;
        anyhow::ensure!(
            stored == ids.len() && refused == 0,
            "{refused} vectors refused"
        );
    }
    instance.write_snapshot()?;
    Ok((import_cpu, embed_cpu))
}

fn run(args: &Args) -> anyhow::Result<()> {
    let corpus = memoria_benches::corpus_90k(args.corpus.as_deref())?;
    let store = memoria_benches::StoreDir::open(args.keep.as_deref())?;
    let (data, dek, reused) = (store.path.clone(), store.dek.clone(), store.reused);
    let mut instance = Instance::wake(
        config(data.as_path())?,
        Sealer::new(&dek),
        Arc::new(SystemClock),
    )?;
    let (import_cpu, embed_cpu) = if reused {
        eprintln!("wake-90k: reusing the kept store");
        (0.0, 0.0)
    } else {
        build(&mut instance, &corpus)?
    };
    drop(instance);
    if !reused {
        eprintln!("wake-90k: import {import_cpu:.1} s CPU, vector pipeline {embed_cpu:.1} s CPU");
    }
    eprintln!("wake-90k: waking in a child process");
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("wake")
        .arg(data.as_path())
        .env(CHILD_DEK_ENV, dek.to_base64())
        .env("MEMORIA_LOG", "warn")
        .output()
        .context("running the wake child")?;
    anyhow::ensure!(
        out.status.success(),
        "the wake child failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wake: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let f = |k: &str| wake[k].as_f64().unwrap_or(0.0);

    let instance = Instance::wake(
        config(data.as_path())?,
        Sealer::new(&dek),
        Arc::new(SystemClock),
    )?;
    let mut scan_ms = Vec::new();
    for q in QUERIES_90K {
        let v = quantise_embedding(&memoria_simulator::stub_embed_text(q))?;
        let _ = instance.dense().top_k(&v, DENSE_TOP_K);
        for _ in 0..args.repeats {
            let c = Instant::now();
            let hits = instance.dense().top_k(&v, DENSE_TOP_K);
            scan_ms.push(c.elapsed().as_secs_f64() * 1e3);
            anyhow::ensure!(
                hits.len() == DENSE_TOP_K,
                "the scan returned {} hits",
                hits.len()
            );
        }
    }
    scan_ms.sort_by(f64::total_cmp);
    let p = |q: f64| scan_ms[((scan_ms.len() as f64 * q) as usize).min(scan_ms.len() - 1)];

    let per_chunk = (f("rchar") / BUCKET_READ_BYTES_PER_S + f("cpu_s")) / f("chunks");
    let snapshot = f("lexical_bytes") + f("dense_bytes");
    let ceiling = WAKE_BUDGET_S / per_chunk;
    let ok = |b: bool| if b { "met" } else { "NOT met" };
    println!(
        "wake-90k: {} chunks, {} vectors; {}; nproc {}",
        f("chunks"),
        wake["vectors"],
        wake["dense"]["how"],
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("| measure | memoria | target | |");
    println!("|---|---:|---:|---|");
    println!(
        "| sealed snapshot, FTS + vectors | {:.1} MB ({:.1} + {:.1}) | ≤ 95 MB | {} |",
        snapshot / 1e6,
        f("lexical_bytes") / 1e6,
        f("dense_bytes") / 1e6,
        ok(snapshot <= TARGET_SNAPSHOT_BYTES)
    );
    println!(
        "| bytes a wake read (`rchar`: both blobs, the database pages, the log) | {:.1} MB | | |",
        f("rchar") / 1e6
    );
    println!(
        "| wake CPU (open + decrypt + load), wall | {:.3} s ({:.3} s wall) | ≤ {TARGET_WAKE_CPU_S} s | {} |",
        f("cpu_s"),
        f("wall_s"),
        ok(f("cpu_s") <= TARGET_WAKE_CPU_S)
    );
    println!(
        "| a wake at this count, bytes at 50 MB/s + CPU | {:.2} s | ≤ {WAKE_BUDGET_S} s (gate 20) | {} |",
        per_chunk * f("chunks"),
        ok(per_chunk * f("chunks") <= WAKE_BUDGET_S)
    );
    println!(
        "| chunk ceiling in the 5 s budget at 50 MB/s | {:.0} | ≥ 165,000 | {} |",
        ceiling,
        ok(ceiling >= TARGET_CEILING_CHUNKS)
    );
    println!(
        "| peak memory at wake over the RSS before | {:.1} MB ({:.2}× the snapshots) | | |",
        (f("hwm") - f("rss_before")) / 1e6,
        (f("hwm") - f("rss_before")) / snapshot.max(1.0)
    );
    println!(
        "| dense top-{DENSE_TOP_K}, p50 / p90 wall ({} scans) | {:.3} / {:.3} ms | ≤ {TARGET_DENSE_TOP_K_MS} ms | {} |",
        scan_ms.len(),
        p(0.5),
        p(0.9),
        ok(p(0.5) <= TARGET_DENSE_TOP_K_MS)
    );
    if reused {
        println!(
            "| embedding pipeline CPU (truncate, renormalise, quantise, seal, store) | not measured: the store was kept from an earlier run | | |"
        );
    } else {
        println!(
            "| embedding pipeline CPU (truncate, renormalise, quantise, seal, store) | {:.2} s ({:.1} µs a vector) | | |",
            embed_cpu,
            embed_cpu / f("chunks") * 1e6
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match &args.mode {
        Some(Mode::Wake { dir }) => child_wake(dir),
        None => run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wake-90k: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
