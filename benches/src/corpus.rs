//! The corpus memoria's benches measure: the fetched public corpora if present, else the embedded fixtures, and always saying which.
//!
//! `fixtures/corpus/fetch` puts the Node.js API reference (Markdown) in
//! `fixtures/corpus/nodejs-doc` and the Rust book (HTML) in
//! `fixtures/corpus/rust-book`, each with a `SOURCE` file naming its version.
//! A source counts as present only if its `SOURCE` file is there (the fetch
//! script moves a source into place whole, so that marks a complete copy).
//! With neither present, the benches fall back to the embedded fixtures
//! ([`memoria::demo::FIXTURE_CORPUS`]), which are far smaller: numbers from
//! them are not comparable with real-corpus numbers, which is why
//! [`Corpus::load`] prints which corpus it used.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use memoria::Instance;

/// Where `fixtures/corpus/fetch` puts the fetched sources, relative to the workspace root.
pub const CORPUS_DIR_RELATIVE: &str = "fixtures/corpus";
/// The fetched sources the benches use, in load order.
pub const CORPUS_SOURCES: [&str; 2] = ["nodejs-doc", "rust-book"];
/// The file the fetch script writes into each complete source directory.
pub const SOURCE_FILE_NAME: &str = "SOURCE";
/// Set to `embedded` to bench the embedded fixtures even when the fetched corpora are present.
pub const CORPUS_ENV: &str = "MEMORIA_BENCH_CORPUS";

/// Where `fixtures/corpus/fetch-debian-docs` puts the 90k corpus, relative to the workspace root.
pub const DEBIAN_DOCS_DIR_RELATIVE: &str = "fixtures/corpus/debian-docs";
/// The file that script writes last into a complete 90k corpus.
pub const DEBIAN_DOCS_MANIFEST: &str = "MANIFEST";
/// The [`CORPUS_ENV`] value that makes the criterion benches load the 90k corpus.
pub const CORPUS_ENV_DEBIAN_DOCS: &str = "debian-docs";

/// Ten realistic queries over the fetched corpora: five aimed at the Node.js
/// reference, five at the Rust book. Over the embedded fixtures most of them
/// find little, which is itself a fair latency case.
pub const BENCH_QUERIES: [&str; 10] = [
    "readable stream backpressure",
    "ownership borrowing",
    "child process spawn",
    "lifetimes elision",
    "tls certificate",
    "buffer encoding base64",
    "trait objects dynamic dispatch",
    "worker threads message port",
    "recoverable errors with result",
    "http server request headers",
];

/// Fifteen fixed queries over the 90k corpus (issue 11 timed fifteen): one
/// to four words, aimed at its packages' subjects, a few with stop words
/// and a few that are common across all of them.
pub const QUERIES_90K: [&str; 15] = [
    "git rebase interactive",
    "python asyncio event loop",
    "postgresql vacuum analyze",
    "perl regular expression lookahead",
    "kernel module parameters",
    "debian package maintainer scripts",
    "readable stream backpressure",
    "rust borrow checker lifetimes",
    "how to configure a proxy server",
    "file system permissions",
    "network interface",
    "memory allocation",
    "error handling",
    "write ahead log",
    "unicode",
];

/// The 90k corpus directory, if `fixtures/corpus/fetch-debian-docs` has completed it.
pub fn debian_docs_dir() -> Option<PathBuf> {
    let dir = workspace_root().join(DEBIAN_DOCS_DIR_RELATIVE);
    dir.join(DEBIAN_DOCS_MANIFEST).is_file().then_some(dir)
}

/// The corpus a 90k bench reads: `given` (`--corpus DIR`), else the
/// fetched Debian corpus.
///
/// # Errors
/// Neither is there: the error names the command that fetches it.
pub fn corpus_90k(given: Option<&std::path::Path>) -> anyhow::Result<PathBuf> {
    match given {
        Some(c) => Ok(c.to_path_buf()),
        None => debian_docs_dir().ok_or_else(|| {
            anyhow::anyhow!(
                "no fixtures/corpus/debian-docs/MANIFEST; run fixtures/corpus/fetch-debian-docs first"
            )
        }),
    }
}

/// One fetched source found on disk.
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// The source's directory name, e.g. `nodejs-doc`.
    pub name: String,
    /// The `version:` line of its `SOURCE` file.
    pub version: String,
    /// Its directory.
    pub dir: PathBuf,
}

/// Which corpus was loaded.
#[derive(Debug, Clone)]
pub enum Origin {
    /// The fetched public corpora (one or both sources).
    Fetched(Vec<SourceInfo>),
    /// The embedded fixtures, because no fetched source was present (or [`CORPUS_ENV`] asked for them).
    Embedded {
        /// Why the fetched corpora were not used.
        reason: String,
    },
}

/// One input file, as bytes, with the source it came from.
#[derive(Debug, Clone)]
pub struct CorpusFile {
    /// `nodejs-doc`, `rust-book` or `embedded`.
    pub source: String,
    /// The name memoria decodes it under (its path; the extension picks the decoder).
    pub name: String,
    /// The raw file.
    pub bytes: Vec<u8>,
}

/// A file decoded to the text memoria chunks.
#[derive(Debug, Clone)]
pub struct DecodedFile {
    /// As [`CorpusFile::source`].
    pub source: String,
    /// The decoded title.
    pub title: String,
    /// The decoded body: Markdown or text (HTML is converted to Markdown).
    pub body: String,
}

/// The loaded corpus.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Fetched or embedded.
    pub origin: Origin,
    /// Every input file, in a stable order.
    pub files: Vec<CorpusFile>,
}

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// The `version:` line of a `SOURCE` file, if the file is there.
pub fn source_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join(SOURCE_FILE_NAME)).ok()?;
    let version = text
        .lines()
        .find_map(|l| l.strip_prefix("version:"))
        .map_or("unknown version", str::trim);
    Some(version.to_string())
}

/// The fetched sources present under `fixtures/corpus`.
pub fn fetched_sources() -> Vec<SourceInfo> {
    let base = workspace_root().join(CORPUS_DIR_RELATIVE);
    CORPUS_SOURCES
        .iter()
        .filter_map(|name| {
            let dir = base.join(name);
            source_version(&dir).map(|version| SourceInfo {
                name: (*name).to_string(),
                version,
                dir,
            })
        })
        .collect()
}

impl Corpus {
    /// Loads the corpus and prints on stderr which one it is.
    ///
    /// # Panics
    /// If a present fetched source cannot be read: a bench must not quietly
    /// measure something smaller than it claims.
    pub fn load() -> Corpus {
        let corpus = Corpus::load_quietly().expect("the fetched corpus is readable");
        eprintln!("{}", corpus.describe());
        corpus
    }

    /// Loads the corpus without printing.
    ///
    /// # Errors
    /// If a fetched source is present but a file in it cannot be listed or read.
    pub fn load_quietly() -> anyhow::Result<Corpus> {
        let wanted = std::env::var(CORPUS_ENV).unwrap_or_default();
        if wanted == CORPUS_ENV_DEBIAN_DOCS {
            let dir = debian_docs_dir().with_context(|| {
                format!("{CORPUS_ENV}={CORPUS_ENV_DEBIAN_DOCS}, but {DEBIAN_DOCS_DIR_RELATIVE}/{DEBIAN_DOCS_MANIFEST} is missing; run fixtures/corpus/fetch-debian-docs")
            })?;
            let version = std::fs::read_to_string(dir.join(DEBIAN_DOCS_MANIFEST))?
                .lines()
                .find_map(|l| l.strip_prefix("chunks: "))
                .map_or("unknown".to_string(), |c| format!("{c} chunks"));
            let sources = vec![SourceInfo {
                name: CORPUS_ENV_DEBIAN_DOCS.to_string(),
                version,
                dir,
            }];
            return Corpus::read_sources(sources);
        }
        let forced = wanted == "embedded";
        let sources = if forced { vec![] } else { fetched_sources() };
        if sources.is_empty() {
            let reason = if forced {
                format!("{CORPUS_ENV}=embedded")
            } else {
                format!(
                    "no {SOURCE_FILE_NAME} file under {CORPUS_DIR_RELATIVE}/{{{}}}; run fixtures/corpus/fetch",
                    CORPUS_SOURCES.join(",")
                )
            };
            let files = memoria::demo::FIXTURE_CORPUS
                .iter()
                .map(|(name, bytes)| CorpusFile {
                    source: "embedded".to_string(),
                    name: (*name).to_string(),
                    bytes: bytes.to_vec(),
                })
                .collect();
            return Ok(Corpus {
                origin: Origin::Embedded { reason },
                files,
            });
        }
        Corpus::read_sources(sources)
    }

    /// Reads every importable file of `sources`.
    fn read_sources(sources: Vec<SourceInfo>) -> anyhow::Result<Corpus> {
        let mut files = Vec::new();
        for s in &sources {
            let (paths, _skipped) = memoria::collect_import_paths(std::slice::from_ref(&s.dir))
                .with_context(|| format!("listing {}", s.dir.display()))?;
            for p in paths {
                let bytes =
                    std::fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
                files.push(CorpusFile {
                    source: s.name.clone(),
                    name: p.display().to_string(),
                    bytes,
                });
            }
        }
        Ok(Corpus {
            origin: Origin::Fetched(sources),
            files,
        })
    }

    /// One paragraph saying which corpus this is and how big.
    pub fn describe(&self) -> String {
        let mut out = String::from("memoria-benches corpus: ");
        match &self.origin {
            Origin::Fetched(sources) => {
                out.push_str("FETCHED public corpus");
                for s in sources {
                    let n = self.files.iter().filter(|f| f.source == s.name).count();
                    let _ = write!(out, "; {} ({}, {n} files)", s.name, s.version);
                }
            }
            Origin::Embedded { reason } => {
                let _ = write!(
                    out,
                    "EMBEDDED fixtures (memoria::demo::FIXTURE_CORPUS), because {reason}; not comparable with real-corpus numbers"
                );
            }
        }
        let _ = write!(
            out,
            "; {} files, {} bytes raw",
            self.files.len(),
            self.raw_bytes()
        );
        out
    }

    /// The queries the benches time over this corpus: [`QUERIES_90K`] for
    /// the 90k corpus, [`BENCH_QUERIES`] otherwise.
    pub fn queries(&self) -> &'static [&'static str] {
        match &self.origin {
            Origin::Fetched(s) if s.iter().any(|s| s.name == CORPUS_ENV_DEBIAN_DOCS) => {
                &QUERIES_90K
            }
            _ => &BENCH_QUERIES,
        }
    }

    /// Total raw bytes of every file.
    pub fn raw_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes.len() as u64).sum()
    }

    /// Every file decoded as memoria decodes it (HTML to Markdown); files
    /// memoria refuses are left out and counted in the second value.
    pub fn decoded(&self) -> (Vec<DecodedFile>, usize) {
        let mut out = Vec::with_capacity(self.files.len());
        let mut refused = 0;
        for f in &self.files {
            match memoria::decode(&f.name, &f.bytes) {
                Ok(d) => out.push(DecodedFile {
                    source: f.source.clone(),
                    title: d.title,
                    body: d.body,
                }),
                Err(_) => refused += 1,
            }
        }
        (out, refused)
    }

    /// Ingests every file into `instance` the way `memoria import` does
    /// (decode, chunk, seal, index), then writes one snapshot. Returns the
    /// number of files refused.
    ///
    /// # Errors
    /// Storage or snapshot failures.
    pub fn ingest_into(&self, instance: &mut Instance) -> anyhow::Result<usize> {
        let mut refused = 0;
        for f in &self.files {
            let key = format!("bench:{}:{}", f.source, f.name);
            match memoria::ingest_bytes(instance, &key, &f.name, &f.bytes, None) {
                Ok(_) => {}
                Err(e) if e.kind() == memoria::ErrorKind::Storage => return Err(e.into()),
                Err(_) => refused += 1,
            }
        }
        instance.write_snapshot()?;
        Ok(refused)
    }
}
