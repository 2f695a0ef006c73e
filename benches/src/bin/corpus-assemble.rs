//! `corpus-assemble`: chooses files from unpacked Debian documentation until memoria's own chunker yields the target number of chunks (§7.2's 90,000).
//!
//! ```sh
//! cargo run --release -p memoria-benches --bin corpus-assemble -- \
//!     --from STAGING/raw --to STAGING/out --chunks 90000
//! ```
//!
//! `--from` holds one directory per package (what
//! `fixtures/corpus/fetch-debian-docs` copied out of each `.deb`). Each
//! package's files are taken in sorted path order, one file from each
//! package in turn (so every package is represented, and the large ones fill
//! the rest), decoded with [`memoria::decode`] and chunked with
//! [`memoria::chunk`] exactly as `memoria import` does, until the total
//! reaches `--chunks`. A file memoria refuses, or that yields no chunk, is
//! counted and passed over. The chosen files are copied to `--to` at the
//! same relative path, with a `FILES` list (path, chunks, words, bytes).
//!
//! On stdout it prints `key: value` lines for the fetch script's `MANIFEST`:
//! counts, the mean words and bytes per chunk beside the spec's 202 / 1,325,
//! and each package's share. Words are whitespace tokens, bytes the chunk
//! text's UTF-8 length, as `corpus-report` measures stored passages.
//!
//! Exit codes: 0 the target was reached; 1 the files ran out first (the
//! output is still written, and says how many chunks it holds); 2 usage or
//! I/O failure.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;

/// The mean chunk memoria-design.md §7.2 measured, in words.
const SPEC_MEAN_CHUNK_WORDS: u32 = 202;
/// The mean chunk memoria-design.md §7.2 measured, in bytes.
const SPEC_MEAN_CHUNK_BYTES: u32 = 1325;
/// Files decoded side by side before the running total is checked: enough
/// to keep two cores busy, few enough that little is decoded past the target.
const DECODE_BATCH_FILES: usize = 64;
/// The file listing every chosen file, written into `--to`.
const FILES_LIST_NAME: &str = "FILES";

/// Choose files until memoria's chunker yields the target number of chunks.
#[derive(Debug, Parser)]
#[command(name = "corpus-assemble")]
struct Args {
    /// One directory per package, holding its documentation files.
    #[arg(long)]
    from: PathBuf,
    /// Where the chosen files go (created; must not exist yet).
    #[arg(long)]
    to: PathBuf,
    /// The number of chunks to reach.
    #[arg(long, default_value_t = 90_000)]
    chunks: usize,
}

/// One file's measure.
#[derive(Debug, Clone, Copy, Default)]
struct Measure {
    chunks: usize,
    words: usize,
    bytes: usize,
}

/// Every regular file under `dir`, sorted by relative path.
fn files_under(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What memoria's import would make of one file: `None` if it is refused or yields nothing.
fn measure(path: &Path) -> Option<Measure> {
    let bytes = std::fs::read(path).ok()?;
    let name = path.to_string_lossy();
    let decoded = memoria::decode(&name, &bytes).ok()?;
    let chunks = memoria::chunk(&decoded.body);
    if chunks.is_empty() {
        return None;
    }
    Some(Measure {
        chunks: chunks.len(),
        words: chunks
            .iter()
            .map(|c| c.text.split_whitespace().count())
            .sum(),
        bytes: chunks.iter().map(|c| c.text.len()).sum(),
    })
}

/// Measures a batch on every core.
fn measure_all(paths: &[&Path]) -> Vec<Option<Measure>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = paths.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .chunks(per)
            .map(|part| s.spawn(move || part.iter().map(|p| measure(p)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a measuring thread does not panic"))
            .collect()
    })
}

fn run(args: &Args) -> anyhow::Result<bool> {
    anyhow::ensure!(
        !args.to.exists(),
        "{} exists; corpus-assemble writes a new directory",
        args.to.display()
    );
    let mut packages: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for e in
        std::fs::read_dir(&args.from).with_context(|| format!("listing {}", args.from.display()))?
    {
        let e = e?;
        if e.file_type()?.is_dir() {
            let name = e.file_name().to_string_lossy().into_owned();
            packages.push((name, files_under(&e.path())?));
        }
    }
    packages.sort();
    anyhow::ensure!(
        !packages.is_empty(),
        "no package directory in {}",
        args.from.display()
    );

    // One file from each package in turn.
    let longest = packages.iter().map(|(_, f)| f.len()).max().unwrap_or(0);
    let mut order: Vec<(usize, &Path)> = Vec::new();
    for i in 0..longest {
        for (p, (_, files)) in packages.iter().enumerate() {
            if let Some(f) = files.get(i) {
                order.push((p, f));
            }
        }
    }

    let mut total = Measure::default();
    let mut per_package = vec![(0usize, Measure::default()); packages.len()];
    let mut chosen: Vec<(&Path, Measure)> = Vec::new();
    let mut passed_over = 0usize;
    'batches: for batch in order.chunks(DECODE_BATCH_FILES) {
        let paths: Vec<&Path> = batch.iter().map(|(_, f)| *f).collect();
        for ((p, f), m) in batch.iter().zip(measure_all(&paths)) {
            if total.chunks >= args.chunks {
                break 'batches;
            }
            let Some(m) = m else {
                passed_over += 1;
                continue;
            };
            total.chunks += m.chunks;
            total.words += m.words;
            total.bytes += m.bytes;
            per_package[*p].0 += 1;
            per_package[*p].1.chunks += m.chunks;
            chosen.push((f, m));
        }
    }

    let mut list = String::new();
    for (f, m) in &chosen {
        let rel = f.strip_prefix(&args.from).unwrap_or(f);
        let dest = args.to.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(f, &dest).with_context(|| format!("copying {}", f.display()))?;
        let _ = writeln!(
            list,
            "{}\t{}\t{}\t{}",
            rel.display(),
            m.chunks,
            m.words,
            m.bytes
        );
    }
    std::fs::create_dir_all(&args.to)?;
    std::fs::write(args.to.join(FILES_LIST_NAME), list)?;

    let mean = |x: usize| x as f64 / total.chunks.max(1) as f64;
    println!("chunks: {}", total.chunks);
    println!("documents: {}", chosen.len());
    println!("files-passed-over: {passed_over} (refused by memoria's decoder, or no chunk)");
    println!("text-bytes: {}", total.bytes);
    println!("mean-words-per-chunk: {:.1}", mean(total.words));
    println!("mean-bytes-per-chunk: {:.1}", mean(total.bytes));
    println!(
        "spec-mean-per-chunk: {SPEC_MEAN_CHUNK_WORDS} words / {SPEC_MEAN_CHUNK_BYTES} bytes (memoria-design.md §7.2)"
    );
    let shares: Vec<String> = packages
        .iter()
        .zip(&per_package)
        .map(|((name, files), (n, m))| {
            format!("{name}={}/{} files,{} chunks", n, files.len(), m.chunks)
        })
        .collect();
    println!("package-shares: {}", shares.join(" "));
    eprintln!(
        "corpus-assemble: {} chunks from {} files; mean {:.1} words / {:.1} bytes per chunk (spec §7.2: {SPEC_MEAN_CHUNK_WORDS} / {SPEC_MEAN_CHUNK_BYTES})",
        total.chunks,
        chosen.len(),
        mean(total.words),
        mean(total.bytes)
    );
    Ok(total.chunks >= args.chunks)
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!(
                "corpus-assemble: the files ran out before {} chunks",
                args.chunks
            );
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("corpus-assemble: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
