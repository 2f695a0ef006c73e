//! Real text for fake siblings' items: the fetched Node.js API docs, else the fetched Rust book, else the team fixtures (§7).
//!
//! `fixtures/corpus/nodejs-doc/` and `fixtures/corpus/rust-book/` are
//! fetched, never committed (`fixtures/corpus/README.md`); CI fetches the
//! Rust book from its toolchain. `fixtures/team/*.md` always exists.
//! Files are read in path order, so a run is deterministic.

use std::path::{Path, PathBuf};

/// Which collection [`load_items`] read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorpusSource {
    /// `fixtures/corpus/nodejs-doc/**/*.md` (fetched).
    NodejsDoc,
    /// `fixtures/corpus/rust-book/**/*.html` (fetched), decoded by memoria's importer.
    RustBook,
    /// `fixtures/team/*.md` (the fallback).
    Team,
}

/// Items loaded for fakes, and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corpus {
    /// Which collection was read.
    pub source: CorpusSource,
    /// `(title, body)` pairs: title from the first `# ` heading, else the file stem.
    pub items: Vec<(String, String)>,
}

/// The workspace's `fixtures/` directory.
#[must_use]
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}

fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

fn html_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n != "print.html" && n != "toc.html")
        })
        .collect();
    files.sort();
    files
}

fn title_of(path: &Path, body: &str) -> String {
    body.lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// Up to `limit` `(title, body)` items: from `fixtures/corpus/nodejs-doc/`
/// if it holds Markdown, else from `fixtures/team/*.md`. Unreadable files
/// are skipped.
#[must_use]
pub fn load_items(limit: usize) -> Corpus {
    let fixtures = fixtures_dir();
    let fetched = markdown_files(&fixtures.join("corpus").join("nodejs-doc"));
    if fetched.is_empty() {
        let book = html_files(&fixtures.join("corpus").join("rust-book"));
        if !book.is_empty() {
            let items = book
                .iter()
                .filter_map(|p| {
                    let bytes = std::fs::read(p).ok()?;
                    let name = p.file_name()?.to_string_lossy().into_owned();
                    let d = memoria::decode(&name, &bytes).ok()?;
                    Some((d.title, d.body))
                })
                .take(limit)
                .collect();
            return Corpus {
                source: CorpusSource::RustBook,
                items,
            };
        }
    }
    let (source, files) = if fetched.is_empty() {
        (CorpusSource::Team, markdown_files(&fixtures.join("team")))
    } else {
        (CorpusSource::NodejsDoc, fetched)
    };
    let items = files
        .iter()
        .filter_map(|p| {
            let body = std::fs::read_to_string(p).ok()?;
            Some((title_of(p, &body), body))
        })
        .take(limit)
        .collect();
    Corpus { source, items }
}
