//! Connectors for memoria-owned content: enumerate a source, diff it against what memoria holds, and never read a failure as an empty list (§5.1, §4.2, gate 7).
//!
//! A [`Source`] is enumerated page by page. Each [`Page`] carries entries of
//! (source key, version, modified time) and ends in one of three ways
//! ([`PageEnd`]): a token for the next page, the explicit **complete**
//! marker, or nothing at all. Only a run of pages that reaches the complete
//! marker is an [`Enumeration::Complete`]; anything else (a timeout, a rate
//! limit, a page missing its end marker, an expired credential, a permission
//! error on a sub-collection) is an [`Enumeration::Failed`], which "returns
//! no information, not no documents" (§5.1).
//!
//! The use-case above the instance, `sync` in `app/connector.rs`, applies
//! the diff:
//!
//! - an entry that is new, or whose version differs from the one last
//!   ingested, is fetched and ingested (`app/import.rs`'s `ingest_bytes`);
//! - on a **complete** enumeration, every item this connector holds that the
//!   enumeration omitted is deleted through a tombstone
//!   (`Instance::delete`). A complete enumeration with zero entries is
//!   authoritative: it deletes everything the connector held;
//! - on a **failed** enumeration nothing is deleted. Entries on pages that
//!   were read whole (a page with its end marker) are still ingested.
//!
//! Either way the attempt is recorded durably ([`Store::connector_attempt`]):
//! when it happened, when the last complete enumeration happened, and how the
//! last attempt failed; and every listed item gets its `last_seen_at`
//! (§4.2's amendment: "no longer in the source" stays answerable).
//!
//! [`FolderSource`] keeps a local directory in sync: `memoria sync-folder`
//! (`app/connector.rs`'s `sync_folder`).
//! The simulator's paginated fake connector is the other [`Source`].
//!
//! [`Store::connector_attempt`]: crate::storage::store::Store::connector_attempt

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;

use crate::ingest::decode;
use crate::ingest::import::IMPORT_FILES_MAX;

/// How long one page of an enumeration, or one fetch, may take before the
/// attempt is a timeout, in ms. Our choice: §5.1 names a timed-out
/// enumeration as a failure and states no figure.
pub const CONNECTOR_CALL_DEADLINE_MS: u64 = 30_000;
/// The most pages one enumeration may take; past it the enumeration has
/// failed (a source that never ends is not complete). Our bound.
pub const CONNECTOR_PAGES_MAX: usize = 10_000;
/// The most entries one enumeration may list; past it the enumeration has
/// failed. The same bound as one import run ([`IMPORT_FILES_MAX`]).
pub const CONNECTOR_ENTRIES_MAX: usize = IMPORT_FILES_MAX;

/// One item a source lists: its key, version and modification time (§5.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The stable source key the document is stored under, e.g.
    /// `import:/abs/path`. Content: stored only as a keyed fingerprint.
    pub key: String,
    /// The source's version or etag, opaque, compared for equality only.
    pub version: String,
    /// When the source says the item last changed, in Unix seconds.
    pub modified_unix_s: i64,
}

/// How a page ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageEnd {
    /// Another page follows; ask for it with this opaque token.
    Next(String),
    /// The explicit end marker: this page closes a complete enumeration.
    Complete,
    /// Neither: the page was cut short. The enumeration has failed.
    Missing,
}

/// One page of an enumeration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The entries on this page.
    pub entries: Vec<Entry>,
    /// How the page ends.
    pub end: PageEnd,
}

/// One item's bytes, as fetched.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The name shown on the document page and used to pick a decoder
    /// (its extension). Content: sealed at rest, never logged.
    pub name: String,
    /// The raw bytes.
    pub bytes: Vec<u8>,
}

/// Why an enumeration (or a fetch) failed. Every one of them deletes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FailureKind {
    /// A page or fetch took longer than [`CONNECTOR_CALL_DEADLINE_MS`].
    Timeout,
    /// The source refused for now (HTTP 429).
    RateLimited,
    /// A page arrived without its end marker ([`PageEnd::Missing`]).
    PartialPage,
    /// The credential is expired or revoked (HTTP 401).
    CredentialExpired,
    /// A sub-collection (a subfolder) could not be read (HTTP 403, `EACCES`).
    PermissionDenied,
    /// The item or collection is not there (HTTP 404, a missing root).
    NotFound,
    /// The enumeration went past [`CONNECTOR_PAGES_MAX`] or [`CONNECTOR_ENTRIES_MAX`].
    TooLarge,
    /// Any other failure of the source or its transport.
    Unavailable,
}

impl FailureKind {
    /// The kind as recorded in the store and printed: `timeout`, `rate_limited` …
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Timeout => "timeout",
            FailureKind::RateLimited => "rate_limited",
            FailureKind::PartialPage => "partial_page",
            FailureKind::CredentialExpired => "credential_expired",
            FailureKind::PermissionDenied => "permission_denied",
            FailureKind::NotFound => "not_found",
            FailureKind::TooLarge => "too_large",
            FailureKind::Unavailable => "unavailable",
        }
    }
}

/// A source of memoria-owned content that can be enumerated and fetched (§5.1).
///
/// The transport is the implementor's: the folder connector reads the file
/// system; the simulator's fake connector answers in process, in simulated time.
pub trait Source: Send + Sync {
    /// The connector's durable name, e.g. `folder:/abs/root`. Content: stored
    /// only as a keyed fingerprint, never logged.
    fn name(&self) -> &str;

    /// One page of the enumeration: the first when `token` is `None`.
    fn list<'a>(&'a self, token: Option<&'a str>) -> BoxFuture<'a, Result<Page, FailureKind>>;

    /// The bytes of one listed entry.
    fn fetch<'a>(&'a self, entry: &'a Entry) -> BoxFuture<'a, Result<Fetched, FailureKind>>;
}

/// The result of enumerating a source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enumeration {
    /// Every page was read and the last carried the complete marker. An empty
    /// list here is authoritative: the source holds nothing.
    Complete {
        /// Every entry, deduplicated by key (a later page wins).
        entries: Vec<Entry>,
        /// Pages read.
        pages: usize,
    },
    /// The enumeration failed: no information about absence.
    Failed {
        /// Why.
        kind: FailureKind,
        /// Entries from the pages that were read whole before the failure.
        read: Vec<Entry>,
        /// Pages read whole.
        pages: usize,
    },
}

/// Enumerates `source` to its complete marker, or to its first failure.
/// Each page gets [`CONNECTOR_CALL_DEADLINE_MS`] of (tokio) time.
pub async fn enumerate(source: &dyn Source) -> Enumeration {
    let mut read: Vec<Entry> = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    let failed = |kind, read: Vec<Entry>, pages| Enumeration::Failed {
        kind,
        read: dedup(read),
        pages,
    };
    loop {
        if pages >= CONNECTOR_PAGES_MAX || read.len() > CONNECTOR_ENTRIES_MAX {
            return failed(FailureKind::TooLarge, read, pages);
        }
        let deadline = Duration::from_millis(CONNECTOR_CALL_DEADLINE_MS);
        let page = match tokio::time::timeout(deadline, source.list(token.as_deref())).await {
            Err(_) => return failed(FailureKind::Timeout, read, pages),
            Ok(Err(kind)) => return failed(kind, read, pages),
            Ok(Ok(page)) => page,
        };
        match page.end {
            PageEnd::Complete => {
                read.extend(page.entries);
                return Enumeration::Complete {
                    entries: dedup(read),
                    pages: pages + 1,
                };
            }
            PageEnd::Next(next) => {
                read.extend(page.entries);
                pages += 1;
                token = Some(next);
            }
            // A page cut short was not read whole: its entries are not trusted.
            PageEnd::Missing => return failed(FailureKind::PartialPage, read, pages),
        }
    }
}

fn dedup(entries: Vec<Entry>) -> Vec<Entry> {
    let mut by_key: BTreeMap<String, Entry> = BTreeMap::new();
    for e in entries {
        by_key.insert(e.key.clone(), e);
    }
    by_key.into_values().collect()
}

/// What one sync did: counts and kinds only, never keys, names or content.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SyncReport {
    /// `None` if the enumeration was complete; else why it failed (nothing was deleted).
    pub failure: Option<FailureKind>,
    /// Pages read whole.
    pub pages: usize,
    /// Entries listed (on pages read whole).
    pub listed: usize,
    /// Documents created.
    pub created: usize,
    /// Documents revised or restored.
    pub revised: usize,
    /// Entries whose version or content had not changed.
    pub unchanged: usize,
    /// Entries that could not be fetched or decoded; never deleted for it.
    pub refused: usize,
    /// Documents deleted because a complete enumeration omitted them.
    pub deleted: usize,
    /// The snapshot generation written, if anything changed.
    pub snapshot_generation: Option<i64>,
}

impl SyncReport {
    /// True if the enumeration reached its complete marker.
    pub fn is_complete(&self) -> bool {
        self.failure.is_none()
    }
}

/// A local directory kept in sync (§5.1, §4.2: memoria is the app of record).
///
/// The tree is walked in sorted order for `.md`, `.markdown`, `.txt`,
/// `.html` and `.htm` files (hidden files and symbolic links skipped), as
/// `memoria import` walks it, and each file is keyed `import:<path>` under
/// the canonical root, so a folder imported before is recognised. The whole
/// tree is one page ending in the complete marker, which is only sent when
/// every directory in it was read: a subfolder that cannot be read makes the
/// enumeration [`FailureKind::PermissionDenied`], and nothing is deleted.
#[derive(Debug, Clone)]
pub struct FolderSource {
    root: PathBuf,
    name: String,
    denied: Option<PathBuf>,
}

impl FolderSource {
    /// A connector for the directory `root` (canonicalised if it exists).
    pub fn new(root: &Path) -> FolderSource {
        let root = std::fs::canonicalize(root)
            .or_else(|_| std::path::absolute(root))
            .unwrap_or_else(|_| root.to_path_buf());
        FolderSource {
            name: format!("folder:{}", root.display()),
            root,
            denied: None,
        }
    }

    /// Makes reading the directory `subdir` fail with `EACCES`, through the
    /// same path a real permission error takes. For tests running as root,
    /// where `chmod 000` does not stop a read.
    pub fn with_injected_denial(mut self, subdir: &Path) -> FolderSource {
        self.denied = Some(std::fs::canonicalize(subdir).unwrap_or_else(|_| subdir.to_path_buf()));
        self
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn read_dir(&self, dir: &Path) -> std::io::Result<Vec<std::fs::DirEntry>> {
        if self.denied.as_deref() == Some(dir) {
            return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        }
        let mut entries = std::fs::read_dir(dir)?.collect::<std::io::Result<Vec<_>>>()?;
        entries.sort_by_key(|e| e.file_name());
        Ok(entries)
    }

    /// Walks the tree. Any directory that cannot be read fails the whole walk.
    fn walk(&self) -> Result<Vec<Entry>, FailureKind> {
        let io_kind = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::PermissionDenied => FailureKind::PermissionDenied,
            std::io::ErrorKind::NotFound => FailureKind::NotFound,
            _ => FailureKind::Unavailable,
        };
        let mut out = Vec::new();
        let mut stack = vec![self.root.clone()];
        while let Some(dir) = stack.pop() {
            let mut subdirs = Vec::new();
            for entry in self.read_dir(&dir).map_err(io_kind)? {
                let file_type = entry.file_type().map_err(io_kind)?;
                let path = entry.path();
                if file_type.is_dir() {
                    subdirs.push(path);
                    continue;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                if !file_type.is_file()
                    || name.starts_with('.')
                    || !decode::is_importable_name(&name)
                {
                    continue;
                }
                let meta = entry.metadata().map_err(io_kind)?;
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
                    .unwrap_or_default();
                out.push(Entry {
                    key: format!("import:{}", path.display()),
                    version: format!("{}-{}", meta.len(), modified.as_nanos()),
                    modified_unix_s: i64::try_from(modified.as_secs()).unwrap_or(i64::MAX),
                });
                if out.len() > CONNECTOR_ENTRIES_MAX {
                    return Err(FailureKind::TooLarge);
                }
            }
            // Depth first, in sorted order.
            stack.extend(subdirs.into_iter().rev());
        }
        Ok(out)
    }
}

impl Source for FolderSource {
    fn name(&self) -> &str {
        &self.name
    }

    fn list<'a>(&'a self, token: Option<&'a str>) -> BoxFuture<'a, Result<Page, FailureKind>> {
        Box::pin(async move {
            // The folder is one page; it never issues a token to come back with.
            if token.is_some() {
                return Err(FailureKind::Unavailable);
            }
            Ok(Page {
                entries: self.walk()?,
                end: PageEnd::Complete,
            })
        })
    }

    fn fetch<'a>(&'a self, entry: &'a Entry) -> BoxFuture<'a, Result<Fetched, FailureKind>> {
        Box::pin(async move {
            let path = entry
                .key
                .strip_prefix("import:")
                .ok_or(FailureKind::NotFound)?;
            let bytes = std::fs::read(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::PermissionDenied => FailureKind::PermissionDenied,
                std::io::ErrorKind::NotFound => FailureKind::NotFound,
                _ => FailureKind::Unavailable,
            })?;
            Ok(Fetched {
                name: path.to_string(),
                bytes,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_kind_is_recorded_under_its_snake_case_name() {
        assert_eq!(FailureKind::PartialPage.as_str(), "partial_page");
        assert_eq!(
            serde_json::to_string(&FailureKind::CredentialExpired).unwrap(),
            "\"credential_expired\""
        );
    }

    #[test]
    fn dedup_keeps_one_entry_per_key_and_the_later_one_wins() {
        let e = |k: &str, v: &str| Entry {
            key: k.into(),
            version: v.into(),
            modified_unix_s: 0,
        };
        let out = dedup(vec![e("a", "1"), e("b", "1"), e("a", "2")]);
        assert_eq!(out, vec![e("a", "2"), e("b", "1")]);
    }
}
