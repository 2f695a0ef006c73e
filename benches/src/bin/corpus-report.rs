//! `corpus-report`: imports real files into a throwaway memoria and reports chunk sizes, import time, snapshot size, top results, and a canary check at rest.
//!
//! ```sh
//! cargo run --release -p memoria-benches --bin corpus-report -- \
//!     fixtures/corpus/nodejs-doc fixtures/corpus/rust-book \
//!     --query "readable stream backpressure" --query "ownership borrowing" \
//!     --canary "some distinctive phrase"
//! ```
//!
//! The import is memoria's own (`memoria::import`) on an instance
//! woken with a fresh random DEK over a temporary data directory, which is
//! deleted at exit. Chunk sizes are measured on the passages as stored:
//! each document's passages are opened through `Store::passages`.
//!
//! The canary check is gate 1's claim on real text: a distinctive phrase that
//! is in the source files, and that search finds, must be absent from every
//! byte of every file in the data directory, in its own case and lowercased.
//! Presence is checked first, since an absence proves nothing about a phrase
//! that was never imported. Titles and trails are printed: this report is
//! the operator's own view of a public corpus, not a log.
//!
//! Exit codes: 0 report complete (and canary absent, if asked); 1 the canary
//! was not in the sources, not found by search, or FOUND at rest; 2 usage or
//! import failure.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use memoria::CHUNK_WORDS_MAX;
use memoria::Instance;
use memoria::snapshot;
use memoria_benches::{BENCH_OWNER, wake_throwaway};

/// Results shown per query.
const TOP_RESULTS: usize = 3;
/// Percentiles of chunk words reported besides min, mean and max, in percent.
const WORD_PERCENTILES_PCT: [usize; 3] = [10, 50, 90];
/// Characters of each passage printed by `--show`.
const SHOW_PASSAGE_CHARS: usize = 100;
/// The mean chunk memoria-design.md §7.2 measured, in words.
const SPEC_MEAN_CHUNK_WORDS: f64 = 202.0;
/// The mean chunk memoria-design.md §7.2 measured, in bytes.
const SPEC_MEAN_CHUNK_BYTES: f64 = 1325.0;

/// Import real files into a throwaway memoria and report on them.
#[derive(Debug, Parser)]
#[command(name = "corpus-report")]
struct Args {
    /// Files or directories to import (as `memoria import` takes them).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// A query to run after import; repeatable. The top results are printed.
    #[arg(long = "query")]
    queries: Vec<String>,
    /// A distinctive phrase from the sources: check it is imported and searchable, then absent at rest.
    #[arg(long)]
    canary: Option<String>,
    /// Print the passages (trail, words, opening characters) of every document whose path ends with this; repeatable.
    #[arg(long = "show")]
    show: Vec<String>,
}

/// Chunk-size figures over a set of passages.
#[derive(Debug, Default)]
struct Sizes {
    documents: usize,
    words: Vec<usize>,
    bytes: Vec<usize>,
    /// Parallel to `words`: the passage's exact text is in more than one document.
    repeated: Vec<bool>,
    empty_trail: usize,
}

impl Sizes {
    fn chunks(&self) -> usize {
        self.words.len()
    }

    fn mean(v: &[usize]) -> f64 {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<usize>() as f64 / v.len() as f64
        }
    }

    fn percentile(sorted: &[usize], pct: usize) -> usize {
        if sorted.is_empty() {
            return 0;
        }
        let rank = (pct * sorted.len()).div_ceil(100).max(1);
        sorted[rank - 1]
    }

    fn line(&self, label: &str) -> String {
        let mut sorted = self.words.clone();
        sorted.sort_unstable();
        let pcts: Vec<String> = WORD_PERCENTILES_PCT
            .iter()
            .map(|p| format!("p{p} {}", Sizes::percentile(&sorted, *p)))
            .collect();
        let at_ceiling = self.words.iter().filter(|w| **w >= CHUNK_WORDS_MAX).count();
        let mut out = format!(
            "{label}: {} documents, {} chunks; mean {:.1} words / {:.1} bytes per chunk \
             (spec §7.2 measured {SPEC_MEAN_CHUNK_WORDS} / {SPEC_MEAN_CHUNK_BYTES}); \
             words min {} / {} / max {}; {at_ceiling} chunks at the {CHUNK_WORDS_MAX}-word ceiling; \
             {} chunks with an empty heading trail",
            self.documents,
            self.chunks(),
            Sizes::mean(&self.words),
            Sizes::mean(&self.bytes),
            sorted.first().copied().unwrap_or(0),
            pcts.join(" / "),
            sorted.last().copied().unwrap_or(0),
            self.empty_trail,
        );
        let unique = |v: &[usize]| -> Vec<usize> {
            v.iter()
                .zip(&self.repeated)
                .filter(|(_, r)| !**r)
                .map(|(x, _)| *x)
                .collect()
        };
        let (uw, ub) = (unique(&self.words), unique(&self.bytes));
        let _ = write!(
            out,
            "; {} chunks repeated verbatim in more than one document; without them {} chunks, mean {:.1} words / {:.1} bytes",
            self.chunks() - uw.len(),
            uw.len(),
            Sizes::mean(&uw),
            Sizes::mean(&ub),
        );
        out
    }
}

/// Every regular file under `dir`, sorted, as (path relative to `dir`, path).
fn files_under(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => todo.push(p),
                Ok(t) if t.is_file() => {
                    let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
                    out.push((rel, p));
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(hay, needle).is_some()
}

/// Greps every file of the data directory for each needle; prints one line
/// per file and returns how many files held any needle.
fn grep_at_rest(data_dir: &Path, needles: &[&str], when: &str) -> usize {
    let files = files_under(data_dir);
    let mut found_files = 0;
    println!("  at rest, {when}: {} files", files.len());
    for (rel, path) in &files {
        let bytes = std::fs::read(path).unwrap_or_default();
        let verdicts: Vec<String> = needles
            .iter()
            .map(|n| {
                let hit = contains(&bytes, n.as_bytes());
                format!("{n:?} {}", if hit { "FOUND" } else { "ABSENT" })
            })
            .collect();
        if needles.iter().any(|n| contains(&bytes, n.as_bytes())) {
            found_files += 1;
        }
        println!("    {rel} ({} bytes): {}", bytes.len(), verdicts.join(", "));
    }
    println!(
        "  at rest, {when}: FOUND in {found_files} of {} files, ABSENT from {}",
        files.len(),
        files.len() - found_files
    );
    found_files
}

/// Checks the canary is in the sources and found by search. Returns false if
/// either fails, so an absence at rest would prove nothing.
fn canary_presence(instance: &Instance, sources: &[PathBuf], phrase: &str) -> anyhow::Result<bool> {
    let (files, _) = memoria::collect_import_paths(sources)?;
    let mut in_sources = 0;
    for f in &files {
        let bytes = std::fs::read(f).with_context(|| format!("reading {}", f.display()))?;
        if contains(&bytes, phrase.as_bytes()) {
            in_sources += 1;
        }
    }
    println!(
        "  presence in sources: {in_sources} of {} files hold the phrase",
        files.len()
    );
    let page = instance
        .search(BENCH_OWNER, phrase, 1)
        .map_err(|e| anyhow::anyhow!("search failed: {e}"))?;
    let mut found_at = None;
    for r in &page.results {
        let passages = instance.store().passages(&r.document_id)?;
        let holds = passages
            .iter()
            .find(|p| p.ordinal == r.ordinal)
            .is_some_and(|p| p.body.contains(phrase));
        if holds {
            found_at = Some(r);
            break;
        }
    }
    match found_at {
        Some(r) => println!(
            "  presence by search: FOUND; result {} of page 1 ({} results) is the passage holding it: {} [{}] #p{}",
            r.rank,
            page.results.len(),
            r.title,
            r.trail.join(" > "),
            r.ordinal
        ),
        None => println!(
            "  presence by search: NOT FOUND in page 1 ({} results): no result's passage holds the phrase",
            page.results.len()
        ),
    }
    Ok(in_sources > 0 && found_at.is_some())
}

fn run(args: &Args) -> anyhow::Result<bool> {
    let data = tempfile::tempdir().context("a throwaway data directory")?;
    let mut instance = wake_throwaway(data.path())?;
    println!(
        "corpus-report: importing {} path(s) into a throwaway data directory with a random DEK",
        args.paths.len()
    );

    let started = Instant::now();
    let report = memoria::import(&mut instance, &args.paths)?;
    let elapsed = started.elapsed();
    println!(
        "import: {} files considered, {} refused, {} skipped by extension, {:.2} s wall",
        report.files.len(),
        report.refused(),
        report.skipped_by_extension,
        elapsed.as_secs_f64()
    );
    for f in report.files.iter().filter(|f| f.refused.is_some()) {
        println!(
            "  refused: {} ({})",
            f.path,
            f.refused.as_deref().unwrap_or("")
        );
    }

    // Chunk sizes from the passages as stored, overall and per input path.
    let docs = instance.store().documents()?;
    let mut overall = Sizes::default();
    let mut per_path: Vec<(String, Sizes)> = args
        .paths
        .iter()
        .map(|p| (p.display().to_string(), Sizes::default()))
        .collect();
    let mut titles: Vec<&str> = Vec::with_capacity(docs.len());
    let mut opened = Vec::with_capacity(docs.len());
    for d in &docs {
        titles.push(&d.title);
        opened.push(instance.store().passages(&d.id)?);
    }
    // How many documents hold each exact passage text: boilerplate shows up
    // as the same passage in many documents.
    let mut holders: HashMap<&str, usize> = HashMap::new();
    for passages in &opened {
        let mut seen = HashSet::new();
        for p in passages {
            if seen.insert(p.body.as_str()) {
                *holders.entry(p.body.as_str()).or_default() += 1;
            }
        }
    }
    for (d, passages) in docs.iter().zip(&opened) {
        let bucket = per_path
            .iter_mut()
            .find(|(p, _)| d.path.starts_with(p.as_str()));
        overall.documents += 1;
        let mut targets = vec![&mut overall];
        if let Some((_, s)) = bucket {
            s.documents += 1;
            targets.push(s);
        }
        for t in targets {
            for p in passages {
                t.words.push(p.body.split_whitespace().count());
                t.bytes.push(p.body.len());
                t.repeated
                    .push(holders.get(p.body.as_str()).copied().unwrap_or(0) > 1);
                t.empty_trail += usize::from(p.trail.is_empty());
            }
        }
    }
    titles.sort_unstable();
    titles.dedup();
    println!("{}", overall.line("chunks (all)"));
    if per_path.len() > 1 {
        for (p, s) in &per_path {
            println!("{}", s.line(&format!("chunks ({p})")));
        }
    }
    println!(
        "titles: {} distinct among {} documents",
        titles.len(),
        docs.len()
    );

    for suffix in &args.show {
        for d in docs.iter().filter(|d| d.path.ends_with(suffix.as_str())) {
            println!(
                "document {} ({:?}), revision {}:",
                d.path, d.title, d.revision
            );
            for p in instance.store().passages(&d.id)? {
                let head: String = p.body.chars().take(SHOW_PASSAGE_CHARS).collect();
                println!(
                    "  #p{} [{}] {}w {head:?}",
                    p.ordinal,
                    p.trail.join(" > "),
                    p.body.split_whitespace().count()
                );
            }
        }
    }

    let generation = report
        .snapshot_generation
        .unwrap_or(instance.store().snapshot_generation()?);
    let blob = snapshot::blob_path(data.path(), generation);
    let sealed = std::fs::metadata(&blob).map(|m| m.len()).unwrap_or(0);
    let image = instance.index().serialize()?.len();
    println!(
        "snapshot: generation {generation}, sealed {sealed} bytes ({:.1} MB), index image {image} bytes",
        sealed as f64 / 1e6
    );

    for q in &args.queries {
        let page = instance
            .search(BENCH_OWNER, q, 1)
            .map_err(|e| anyhow::anyhow!("search failed: {e}"))?;
        println!(
            "query {q:?}: {} results on page 1{}",
            page.results.len(),
            if page.has_next { ", more follow" } else { "" }
        );
        for r in page.results.iter().take(TOP_RESULTS) {
            println!(
                "  {}. {} [{}] #p{}",
                r.rank,
                r.title,
                r.trail.join(" > "),
                r.ordinal
            );
        }
    }

    let Some(phrase) = &args.canary else {
        return Ok(true);
    };
    println!("canary {phrase:?}:");
    let present = canary_presence(&instance, &args.paths, phrase)?;
    let lower = phrase.to_lowercase();
    let mut needles = vec![phrase.as_str()];
    if lower != *phrase {
        needles.push(&lower);
    }
    let awake = grep_at_rest(data.path(), &needles, "instance awake");
    drop(instance);
    let closed = grep_at_rest(data.path(), &needles, "instance closed");
    let absent = awake == 0 && closed == 0;
    println!(
        "canary verdict: {}",
        match (present, absent) {
            (true, true) =>
                "PASS: present in the sources and in search, absent from every byte at rest",
            (false, _) =>
                "INCONCLUSIVE: the phrase was not both in the sources and found by search",
            (true, false) => "FAIL: the phrase is readable at rest",
        }
    );
    Ok(present && absent)
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("corpus-report: {e:#}");
            ExitCode::from(2)
        }
    }
}
