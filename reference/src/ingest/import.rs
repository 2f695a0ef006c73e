//! `memoria import`: files and directory trees into the store, one transaction per document (§5, §4.2).
//!
//! A directory is walked recursively for `.md`, `.markdown`, `.txt`, `.html`
//! and `.htm` files, in sorted order so runs are repeatable. A file named
//! explicitly is read whatever its extension. A symbolic link found inside
//! a walked directory is not followed (it may lead out of the tree, or
//! round in a loop) and an entry the walk cannot read is not read: each is
//! reported by path and reason in [`ImportReport::skipped`], never dropped
//! silently. A link named on the command line is followed. Each file is decoded
//! ([`crate::ingest::decode`]) and ingested on its own: a file that cannot be read or
//! decoded is reported by name and the others still go in. One snapshot is
//! written at the end if anything changed.
//!
//! A document's identity across imports is its canonical path, so
//! re-importing unchanged content is a no-op and changed content becomes a
//! new revision (§5.2).
//!
//! This file is the walk and the report: what is read and how each file
//! fared. Putting what was read into the instance (`import`,
//! `ingest_bytes`, `ingest_read`) is the use-case above it, in
//! `app/import.rs`.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};
use crate::ingest::decode::{self, SourceKind};
use crate::storage::store::IngestStatus;

/// The most files one import run takes; the rest are reported as skipped.
pub const IMPORT_FILES_MAX: usize = 100_000;

/// What happened to one file.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileOutcome {
    /// The path as found (the operator's own input, shown back to them).
    pub path: String,
    /// Created, revised, unchanged or restored; `None` if refused.
    pub status: Option<IngestStatus>,
    /// How it was read, if it was.
    pub kind: Option<SourceKind>,
    /// Why it was refused, if it was.
    pub refused: Option<String>,
    /// The document id, if ingested.
    pub document_id: Option<String>,
    /// Chunks written (0 if unchanged or refused).
    pub chunks: usize,
}

/// The report of one import run.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ImportReport {
    /// Every file considered, in order.
    pub files: Vec<FileOutcome>,
    /// Files in a walked directory skipped for their extension.
    pub skipped_by_extension: usize,
    /// Entries of a walked directory left unread, each with its path and
    /// why (a symbolic link, or a walk error); at most
    /// [`IMPORT_SKIPS_LISTED_MAX`] are listed, [`ImportReport::skipped_total`]
    /// counts them all.
    pub skipped: Vec<Skipped>,
    /// Every entry left unread, listed or not.
    pub skipped_total: usize,
    /// The snapshot generation written at the end, if any change was made.
    pub snapshot_generation: Option<i64>,
}

impl ImportReport {
    /// Files refused.
    pub fn refused(&self) -> usize {
        self.files.iter().filter(|f| f.refused.is_some()).count()
    }

    /// Files whose status is `status`.
    pub fn count(&self, status: IngestStatus) -> usize {
        self.files
            .iter()
            .filter(|f| f.status == Some(status))
            .count()
    }
}

/// The most skipped entries one import lists by path; the rest are counted.
pub const IMPORT_SKIPS_LISTED_MAX: usize = 1_000;

/// Why an entry of a walked directory was left unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// A symbolic link: not followed inside a walked directory.
    Symlink,
    /// The walk could not read the entry (a directory it may not list, an
    /// entry gone while it walked).
    Unreadable,
}

impl SkipReason {
    /// The reason as the import's text output and JSON spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Symlink => "symlink",
            SkipReason::Unreadable => "unreadable",
        }
    }
}

/// One entry of a walked directory that was left unread.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Skipped {
    /// The entry's path as the walk found it.
    pub path: String,
    /// Why it was left unread.
    pub reason: SkipReason,
    /// The I/O error's kind, for a walk error (`permission denied`).
    pub detail: Option<String>,
}

/// What [`collect_reporting`] found to import, and what it left unread.
#[derive(Debug, Default)]
pub struct Collected {
    /// The files to read, sorted within each directory.
    pub files: Vec<PathBuf>,
    /// Files skipped for their extension (or past [`IMPORT_FILES_MAX`]).
    pub skipped_by_extension: usize,
    /// Entries left unread, at most [`IMPORT_SKIPS_LISTED_MAX`].
    pub skipped: Vec<Skipped>,
    /// Every entry left unread.
    pub skipped_total: usize,
}

impl Collected {
    fn skip(&mut self, path: &Path, reason: SkipReason, detail: Option<String>) {
        self.skipped_total += 1;
        if self.skipped.len() < IMPORT_SKIPS_LISTED_MAX {
            self.skipped.push(Skipped {
                path: path.display().to_string(),
                reason,
                detail,
            });
        }
    }
}

/// Checks that every named path exists, before anything is opened or written.
///
/// # Errors
/// [`ErrorKind::Usage`] naming the first path that cannot be read (a path
/// the operator typed; the I/O error is its source).
pub fn check_paths(paths: &[PathBuf]) -> Result<(), Error> {
    for p in paths {
        path_metadata(p)?;
    }
    Ok(())
}

fn path_metadata(p: &Path) -> Result<std::fs::Metadata, Error> {
    std::fs::metadata(p).map_err(|e| {
        Error::with_source(
            ErrorKind::Usage,
            format!("{} cannot be imported", p.display()),
            e,
        )
    })
}

/// Expands `paths` into the files an import reads, sorted within each directory.
///
/// # Errors
/// [`ErrorKind::Usage`] if a named path does not exist or cannot be read.
pub fn collect(paths: &[PathBuf]) -> Result<(Vec<PathBuf>, usize), Error> {
    let c = collect_reporting(paths)?;
    Ok((c.files, c.skipped_by_extension))
}

/// [`collect`], with every entry of a walked directory that was left
/// unread (a symbolic link, a walk error) reported by path and reason.
///
/// # Errors
/// [`ErrorKind::Usage`] if a named path does not exist or cannot be read.
pub fn collect_reporting(paths: &[PathBuf]) -> Result<Collected, Error> {
    let mut c = Collected::default();
    for p in paths {
        let meta = path_metadata(p)?;
        if !meta.is_dir() {
            c.files.push(p.clone());
            continue;
        }
        for entry in walkdir::WalkDir::new(p).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let at = e.path().unwrap_or(p).to_path_buf();
                    let detail = e.io_error().map(|io| io.kind().to_string());
                    c.skip(&at, SkipReason::Unreadable, detail);
                    continue;
                }
            };
            if entry.path_is_symlink() && entry.depth() > 0 {
                c.skip(entry.path(), SkipReason::Symlink, None);
                continue;
            }
            if !entry.file_type().is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy();
            if decode::is_importable_name(&name) && !name.starts_with('.') {
                c.files.push(entry.into_path());
            } else {
                c.skipped_by_extension += 1;
            }
        }
    }
    if c.files.len() > IMPORT_FILES_MAX {
        c.skipped_by_extension += c.files.len() - IMPORT_FILES_MAX;
        c.files.truncate(IMPORT_FILES_MAX);
    }
    Ok(c)
}

/// The source key `memoria import` files `path` under: its canonical path
/// (the path as given when it cannot be resolved), so importing one file
/// twice, from `memoria import` or from `memoria demo`, is one document (§5.2).
pub fn source_key(path: &Path) -> String {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    format!("import:{}", canonical.display())
}

/// `path`'s modification time as Unix seconds; `None` where the platform
/// or the file system keeps none, or it is before 1970.
pub fn modified_unix_s(path: &Path) -> Option<i64> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(since.as_secs()).ok()
}

/// One file's line in an [`ImportReport`]: its outcome, or its refusal with
/// the reason (logged by kind only, never by content).
pub fn file_outcome(
    path: &Path,
    ingested: Result<(crate::storage::store::IngestOutcome, SourceKind), Error>,
) -> FileOutcome {
    let shown = path.display().to_string();
    match ingested {
        Ok((o, kind)) => FileOutcome {
            path: shown,
            status: Some(o.status),
            kind: Some(kind),
            refused: None,
            document_id: Some(o.id),
            chunks: o.added.len(),
        },
        Err(e) => {
            tracing::warn!(kind = ?e.kind(), "a file was refused");
            FileOutcome {
                path: shown,
                status: None,
                kind: None,
                refused: Some(e.message().to_string()),
                document_id: None,
                chunks: 0,
            }
        }
    }
}
