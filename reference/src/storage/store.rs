//! The sealed store: one embedded SQLite file holding documents, sealed chunks and tombstones (§3.2, §5.2, §7.4).
//!
//! What may be plaintext here is exactly §3.2's coordinates: row ids, the
//! app name, revisions, ordinals, counts and timestamps. Everything a person
//! wrote (titles, paths, chunk bodies, heading trails) is sealed by
//! [`crate::storage::seal`] with AAD binding it to its row. Identifiers derived from
//! content are keyed fingerprints. The FTS index is not here: it lives in
//! memory and in a sealed snapshot ([`crate::search::index`], [`crate::storage::snapshot`]).
//!
//! Each ingest and each deletion is one transaction, so a document is either
//! wholly in or absent, whatever kills the process. A deletion is written
//! to the durable tombstone log ([`crate::storage::tombstone`]) before it reaches
//! this file; the `tombstones` table records which log entries this
//! database has applied, so a restored database knows where to replay from. Every change bumps
//! `store_seq`; a snapshot records the `store_seq` it is current through, and
//! a snapshot behind the store is rebuilt on wake.
//!
//! SQLite is opened with `temp_store=MEMORY` (no spill files), WAL journaling,
//! `synchronous=FULL` and `secure_delete=ON`; the values it writes are sealed
//! either way.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::crashpoint::crashpoint;
use crate::error::{Error, ErrorKind};
use crate::ingest::chunk;
use crate::storage::seal::{Purpose, Sealer};
use crate::storage::tombstone::Tombstone;

/// The app name stored against memoria-owned content (§4.2).
pub const APP_MEMORIA: &str = "memoria";
/// The database file's name inside the data directory.
pub const DB_FILE_NAME: &str = "memoria.sqlite3";
/// Length of a public document id in bytes (rendered as 32 hex characters).
pub const DOCUMENT_ID_BYTES: usize = 16;
/// Schema version written to `meta`; a mismatch refuses to open.
pub const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    id          TEXT PRIMARY KEY,      -- random, public, 32 hex
    source_fp   BLOB NOT NULL UNIQUE,  -- HMAC(path-fingerprint, source key)
    external_id BLOB NOT NULL,         -- HMAC(external-id, body): gate 26
    app         TEXT NOT NULL,
    revision    INTEGER NOT NULL,      -- bumped on every re-ingest: §5.2
    title       BLOB NOT NULL,         -- sealed
    path        BLOB NOT NULL,         -- sealed
    chunk_count INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER,               -- NULL while live; set by a tombstone
    item_id     TEXT,                  -- sibling item id (opaque); NULL if memoria-owned
    sibling_rev TEXT                   -- sibling revision held (opaque); NULL if memoria-owned
);
CREATE TABLE IF NOT EXISTS siblings (
    app         TEXT PRIMARY KEY,      -- e.g. sheets
    cursor      TEXT,                  -- S1 cursor (opaque); NULL before the first poll
    reannounce  INTEGER NOT NULL DEFAULT 0, -- 1 once marked for re-announce (§4.1)
    polled_at   INTEGER                -- unix seconds of the last S1 answer
);
CREATE TABLE IF NOT EXISTS chunks (
    id       INTEGER PRIMARY KEY,      -- also the FTS rowid; never reused
    doc_id   TEXT NOT NULL REFERENCES documents(id),
    revision INTEGER NOT NULL,
    ordinal  INTEGER NOT NULL,
    body     BLOB NOT NULL,            -- sealed
    trail    BLOB NOT NULL             -- sealed
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks(doc_id, ordinal);
CREATE TABLE IF NOT EXISTS tombstones (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    doc_id   TEXT NOT NULL,
    revision INTEGER NOT NULL,
    at       INTEGER NOT NULL
);
"#;

/// The connector tables (§5.1, gate 7): what each connector's enumerations
/// have seen, and how its last attempt went. Keys, versions and connector
/// names are stored only as keyed fingerprints; the rest are timestamps and
/// a failure kind.
const CONNECTOR_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS connector_items (
    connector_fp BLOB NOT NULL,        -- HMAC(path-fingerprint, "connector\0" + name)
    key_fp       BLOB NOT NULL,        -- = documents.source_fp of the item's source key
    version_fp   BLOB,                 -- HMAC of (key, version) last ingested; NULL if never ingested
    last_seen_at INTEGER NOT NULL,     -- unix seconds: the last enumeration that listed it (§4.2)
    PRIMARY KEY (connector_fp, key_fp)
);
CREATE TABLE IF NOT EXISTS connector_sources (
    connector_fp     BLOB PRIMARY KEY,
    last_attempt_at  INTEGER NOT NULL, -- unix seconds of the last enumeration attempt
    last_complete_at INTEGER,          -- unix seconds of the last COMPLETE enumeration; NULL if none
    last_failure     TEXT              -- the last attempt's failure kind; NULL if it completed
);
"#;

/// What memoria holds for one connector item (§5.1): its key and the version last ingested.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldItem {
    /// Keyed fingerprint of the source key: the same as the document's `source_fp`.
    pub key_fp: Vec<u8>,
    /// Keyed fingerprint of (key, version) last ingested; `None` if never ingested.
    pub version_fp: Option<Vec<u8>>,
}

/// A connector's durable record of its enumerations (§5.1, §4.2, gate 7).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConnectorState {
    /// Unix seconds of the last attempt, complete or failed; `None` if never attempted.
    pub last_attempt_at: Option<i64>,
    /// Unix seconds of the last complete enumeration; `None` if none ever completed.
    pub last_complete_at: Option<i64>,
    /// The last attempt's failure kind (e.g. `timeout`); `None` if it completed.
    pub last_failure: Option<String>,
}

/// A document to ingest: plaintext in, sealed on the way to disk.
#[derive(Debug, Clone)]
pub struct NewDocument {
    /// What identifies this document across re-ingests, e.g. `import:/abs/path`
    /// or `upload:name.md`. Stored only as a keyed fingerprint.
    pub source_key: String,
    /// The title shown on results.
    pub title: String,
    /// The path or file name shown on the document page.
    pub path: String,
    /// The text to chunk and index.
    pub body: String,
}

/// Where a sibling document came from: every chunk of it carries this (§5.2, decision 8).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Provenance {
    /// The app of record, e.g. `sheets`.
    pub app: String,
    /// The sibling's item id (opaque).
    pub item_id: String,
    /// The sibling revision held (opaque, compared for equality only, §4.1).
    pub revision: String,
}

/// What memoria remembers about one sibling between polls.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SiblingState {
    /// The S1 cursor to poll from; `None` before the first poll.
    pub cursor: Option<String>,
    /// Marked for re-announce (§4.1): an AHEAD answer or a `410` feed.
    pub reannounce: bool,
    /// Unix seconds of the last S1 answer.
    pub polled_at: Option<i64>,
}

/// What an ingest did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IngestStatus {
    /// A new document.
    Created,
    /// Changed content: a new revision replaced the old chunks.
    Revised,
    /// Same content as the live revision: nothing was written.
    Unchanged,
    /// A deleted document was ingested again and is live at a new revision.
    Restored,
}

/// One chunk as the index needs it.
#[derive(Debug, Clone)]
pub struct IndexedChunk {
    /// Row id, which is also the FTS rowid.
    pub chunk_id: i64,
    /// The document title.
    pub title: String,
    /// The heading trail joined with " > ".
    pub trail: String,
    /// The passage text.
    pub body: String,
}

/// The result of [`Store::ingest`]: what changed, for the index to follow.
#[derive(Debug, Clone)]
pub struct IngestOutcome {
    /// The document's public id.
    pub id: String,
    /// The document's revision after the ingest.
    pub revision: i64,
    /// What happened.
    pub status: IngestStatus,
    /// Chunk ids the index must drop.
    pub removed: Vec<i64>,
    /// Chunks the index must add.
    pub added: Vec<IndexedChunk>,
}

/// The result of a deletion ([`crate::instance::Instance::delete`]).
#[derive(Debug, Clone)]
pub struct Deletion {
    /// The deleted document's id.
    pub id: String,
    /// Chunk ids the index must drop.
    pub removed: Vec<i64>,
    /// The tombstone's sequence number in the durable log ([`crate::storage::tombstone`]).
    pub tombstone_seq: i64,
    /// True once a superseding snapshot that includes this tombstone has been
    /// written: only then is the deletion complete (§7.4).
    pub complete: bool,
}

/// What applying one tombstone to the store did ([`Store::apply_tombstone`]).
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// True if a live document was deleted; false if the id was absent,
    /// already deleted, or live at a later revision than the tombstone's.
    pub deleted: bool,
    /// Chunk ids the index must drop.
    pub removed: Vec<i64>,
}

/// A document's coordinates and opened metadata.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DocumentSummary {
    /// Public id.
    pub id: String,
    /// App of record; `memoria` for uploads and imports.
    pub app: String,
    /// Current revision.
    pub revision: i64,
    /// Opened title.
    pub title: String,
    /// Opened path or file name.
    pub path: String,
    /// Number of chunks at this revision.
    pub chunk_count: i64,
    /// Unix seconds of first ingest.
    pub created_at: i64,
    /// Unix seconds of the latest revision.
    pub updated_at: i64,
    /// For a sibling's document, the item and revision held; `None` if memoria-owned.
    pub provenance: Option<Provenance>,
}

/// A passage opened for rendering.
#[derive(Debug, Clone)]
pub struct Passage {
    /// The chunk's row id.
    pub chunk_id: i64,
    /// 0-based position in the document.
    pub ordinal: i64,
    /// Heading trail, outermost first.
    pub trail: Vec<String>,
    /// The passage text.
    pub body: String,
}

/// A passage with the document it belongs to, for a result row.
#[derive(Debug, Clone)]
pub struct PassageHit {
    /// The passage.
    pub passage: Passage,
    /// Its document.
    pub document: DocumentSummary,
}

/// (id, revision, external_id, deleted_at, sibling revision) of a document row.
type ExistingRow = (String, i64, Vec<u8>, Option<i64>, Option<String>);

/// (chunk id, ordinal, sealed body, sealed trail, document id).
type PassageRow = (i64, i64, Vec<u8>, Vec<u8>, String);

/// The sealed store.
pub struct Store {
    conn: Connection,
    sealer: Sealer,
    path: PathBuf,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

fn new_document_id() -> String {
    let mut bytes = [0u8; DOCUMENT_ID_BYTES];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut bytes);
    hex::encode(bytes)
}

/// True if `id` has the shape of a public document id: 32 lowercase hex digits.
pub fn is_document_id(id: &str) -> bool {
    id.len() == DOCUMENT_ID_BYTES * 2 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn meta_get(conn: &Connection, key: &str) -> Result<i64, Error> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| {
            r.get(0)
        })
        .optional()?
        .unwrap_or(0))
}

fn meta_set(conn: &Connection, key: &str, value: i64) -> Result<(), Error> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) \
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// How many live titles [`Store::open`]'s DEK check tries to open before it
/// calls the key wrong: one that opens is enough, and a few rows tampered
/// with do not pass for a wrong key.
pub const DEK_CHECK_TITLES_MAX: usize = 8;

/// `path` as an SQLite `file:` URI, with the characters a URI reserves escaped.
fn sqlite_file_uri(path: &Path, query: &str) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    format!("{uri}?{query}")
}

/// Up to [`DEK_CHECK_TITLES_MAX`] live documents' (id, sealed title), read
/// through `uri` without writing.
fn live_titles_read_only(uri: &str) -> rusqlite::Result<Vec<(String, Vec<u8>)>> {
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
        | rusqlite::OpenFlags::SQLITE_OPEN_URI
        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(uri, flags)?;
    let mut stmt = conn
        .prepare("SELECT id, title FROM documents WHERE deleted_at IS NULL ORDER BY id LIMIT ?1")?;
    let rows = stmt.query_map(params![DEK_CHECK_TITLES_MAX as i64], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    rows.collect()
}

/// Refuses a DEK that opens none of an existing store's sealed titles,
/// before anything in the data directory is opened for writing (§3).
///
/// The database is read without creating or changing a file: as immutable
/// when it was closed cleanly (no `-wal` file), else read-only beside its
/// own WAL. A store with no live title, or that cannot be read here, is left
/// for [`Store::open`] to report.
fn check_dek(data_dir: &Path, sealer: &Sealer) -> Result<(), Error> {
    let path = data_dir.join(DB_FILE_NAME);
    if !path.is_file() {
        return Ok(());
    }
    let wal = data_dir.join(format!("{DB_FILE_NAME}-wal"));
    let query = if wal.exists() {
        "mode=ro"
    } else {
        "mode=ro&immutable=1"
    };
    let Ok(titles) = live_titles_read_only(&sqlite_file_uri(&path, query)) else {
        return Ok(());
    };
    let opens = |(id, title): &(String, Vec<u8>)| {
        sealer
            .open(Purpose::Title, &format!("documents/{id}/title"), title)
            .is_ok()
    };
    if titles.is_empty() || titles.iter().any(opens) {
        return Ok(());
    }
    Err(Error::new(
        ErrorKind::WrongDek,
        format!(
            "the DEK does not open the store in {}: it opens none of the {} sealed titles tried, so it is not the key this store was sealed with. Nothing was changed. Start with this store's own DEK ({} or {}).",
            data_dir.display(),
            titles.len(),
            crate::config::DEK_ENV,
            crate::config::DEK_FILE_ENV,
        ),
    ))
}

impl Store {
    /// Opens (creating if needed) the store in `data_dir`.
    ///
    /// An existing store is first checked against `sealer`'s DEK without
    /// writing anything: if none of up to [`DEK_CHECK_TITLES_MAX`] live
    /// titles opens, the DEK is refused and the data directory is left
    /// byte for byte as it was.
    ///
    /// # Errors
    /// [`ErrorKind::WrongDek`] if the DEK opens none of an existing store's
    /// titles; [`ErrorKind::Storage`] if SQLite cannot open or migrate the
    /// file; [`ErrorKind::Config`] if the file carries another schema version.
    pub fn open(data_dir: &Path, sealer: Sealer) -> Result<Store, Error> {
        check_dek(data_dir, &sealer)?;
        std::fs::create_dir_all(data_dir)?;
        let path = data_dir.join(DB_FILE_NAME);
        let conn = Connection::open(&path)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             PRAGMA temp_store = MEMORY;
             PRAGMA secure_delete = ON;
             PRAGMA foreign_keys = ON;",
        )?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(CONNECTOR_SCHEMA)?;
        conn.execute_batch(crate::policy::breaker::SCHEMA)?;
        let version = meta_get(&conn, "schema_version")?;
        if version == 0 {
            meta_set(&conn, "schema_version", SCHEMA_VERSION)?;
        } else if version != SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::Config,
                format!("store schema version {version}, this build reads {SCHEMA_VERSION}"),
            ));
        }
        Ok(Store { conn, sealer, path })
    }

    /// The database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sealer this store uses.
    pub fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    /// The change counter: bumped by every ingest that writes and every deletion.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn store_seq(&self) -> Result<i64, Error> {
        meta_get(&self.conn, "store_seq")
    }

    /// The generation of the snapshot the store last recorded as current (0: none).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn snapshot_generation(&self) -> Result<i64, Error> {
        meta_get(&self.conn, "snapshot_generation")
    }

    /// Records `generation` as the current snapshot.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn set_snapshot_generation(&self, generation: i64) -> Result<(), Error> {
        meta_set(&self.conn, "snapshot_generation", generation)
    }

    /// The highest tombstone sequence this database has applied (0: none):
    /// where a replay of the durable log starts (§7.4).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn tombstone_seq(&self) -> Result<i64, Error> {
        Ok(self
            .conn
            .query_row("SELECT coalesce(max(seq), 0) FROM tombstones", [], |r| {
                r.get(0)
            })?)
    }

    fn bump_seq(tx: &Transaction<'_>) -> Result<i64, Error> {
        let next = meta_get(tx, "store_seq")? + 1;
        meta_set(tx, "store_seq", next)?;
        Ok(next)
    }

    fn next_chunk_id(tx: &Transaction<'_>) -> Result<i64, Error> {
        let next = meta_get(tx, "next_chunk_id")?.max(1);
        meta_set(tx, "next_chunk_id", next + 1)?;
        Ok(next)
    }

    /// Ingests one document (§5.2): creates it, revises it, or leaves it as is.
    ///
    /// The document is chunked ([`crate::ingest::chunk`]), every chunk sealed, and the
    /// whole change committed in one transaction. Unchanged content (same
    /// keyed `external_id` as the live revision) writes nothing.
    ///
    /// # Errors
    /// [`ErrorKind::Empty`] if the body has no words; [`ErrorKind::Storage`] on a write failure.
    pub fn ingest(&mut self, doc: &NewDocument, now: i64) -> Result<IngestOutcome, Error> {
        self.ingest_from(doc, None, now)
    }

    /// Ingests one sibling item's body at one revision (§6.1 S3 → §5.2).
    /// `doc.source_key` is ignored: the item is keyed by app and item id.
    /// The same body at a new sibling revision is a revision too, because
    /// S2 is asked about the revision held.
    ///
    /// # Errors
    /// As [`Store::ingest`].
    pub fn ingest_sibling(
        &mut self,
        doc: &NewDocument,
        provenance: &Provenance,
        now: i64,
    ) -> Result<IngestOutcome, Error> {
        self.ingest_from(doc, Some(provenance), now)
    }

    /// The source key a sibling item is stored under.
    fn sibling_source_key(app: &str, item_id: &str) -> String {
        format!("sibling:{app}:{item_id}")
    }

    fn ingest_from(
        &mut self,
        doc: &NewDocument,
        provenance: Option<&Provenance>,
        now: i64,
    ) -> Result<IngestOutcome, Error> {
        let source_key = match provenance {
            Some(p) => Store::sibling_source_key(&p.app, &p.item_id),
            None => doc.source_key.clone(),
        };
        let (app, item_id, sibling_rev) = match provenance {
            Some(p) => (
                p.app.as_str(),
                Some(p.item_id.as_str()),
                Some(p.revision.as_str()),
            ),
            None => (APP_MEMORIA, None, None),
        };
        let chunks = chunk::chunk(&doc.body);
        if chunks.is_empty() {
            return Err(Error::new(ErrorKind::Empty, "the document holds no words"));
        }
        let source_fp = self
            .sealer
            .fingerprint(Purpose::PathFingerprint, source_key.as_bytes());
        let external_id = self
            .sealer
            .fingerprint(Purpose::ExternalId, doc.body.as_bytes());
        let tx = self.conn.transaction()?;
        let existing: Option<ExistingRow> = tx
            .query_row(
                "SELECT id, revision, external_id, deleted_at, sibling_rev FROM documents \
                 WHERE source_fp = ?1",
                params![&source_fp[..]],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let (id, revision, status) = match existing {
            Some((id, revision, ext, None, held))
                if ext == external_id && held.as_deref() == sibling_rev =>
            {
                return Ok(IngestOutcome {
                    id,
                    revision,
                    status: IngestStatus::Unchanged,
                    removed: vec![],
                    added: vec![],
                });
            }
            Some((id, revision, _, deleted, _)) => {
                let status = if deleted.is_some() {
                    IngestStatus::Restored
                } else {
                    IngestStatus::Revised
                };
                (id, revision + 1, status)
            }
            None => (new_document_id(), 1, IngestStatus::Created),
        };

        let mut removed = Vec::new();
        {
            let mut stmt = tx.prepare("SELECT id FROM chunks WHERE doc_id = ?1")?;
            for row in stmt.query_map(params![&id], |r| r.get::<_, i64>(0))? {
                removed.push(row?);
            }
        }
        tx.execute("DELETE FROM chunks WHERE doc_id = ?1", params![&id])?;

        let title = self.sealer.seal(
            Purpose::Title,
            &format!("documents/{id}/title"),
            doc.title.as_bytes(),
        );
        let path = self.sealer.seal(
            Purpose::Path,
            &format!("documents/{id}/path"),
            doc.path.as_bytes(),
        );
        if status == IngestStatus::Created {
            tx.execute(
                "INSERT INTO documents(id, source_fp, external_id, app, revision, title, path, \
                 chunk_count, created_at, updated_at, deleted_at, item_id, sibling_rev) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, NULL, ?10, ?11)",
                params![
                    &id,
                    &source_fp[..],
                    &external_id[..],
                    app,
                    revision,
                    title,
                    path,
                    chunks.len() as i64,
                    now,
                    item_id,
                    sibling_rev
                ],
            )?;
        } else {
            tx.execute(
                "UPDATE documents SET external_id = ?2, revision = ?3, title = ?4, path = ?5, \
                 chunk_count = ?6, updated_at = ?7, deleted_at = NULL, sibling_rev = ?8 \
                 WHERE id = ?1",
                params![
                    &id,
                    &external_id[..],
                    revision,
                    title,
                    path,
                    chunks.len() as i64,
                    now,
                    sibling_rev
                ],
            )?;
        }

        let mut added = Vec::with_capacity(chunks.len());
        for c in &chunks {
            let chunk_id = Store::next_chunk_id(&tx)?;
            let trail_json = serde_json::to_vec(&c.trail).expect("strings serialise");
            let body = self.sealer.seal(
                Purpose::Chunk,
                &format!("chunks/{chunk_id}/body"),
                c.text.as_bytes(),
            );
            let trail = self.sealer.seal(
                Purpose::Chunk,
                &format!("chunks/{chunk_id}/trail"),
                &trail_json,
            );
            tx.execute(
                "INSERT INTO chunks(id, doc_id, revision, ordinal, body, trail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![chunk_id, &id, revision, c.ordinal as i64, body, trail],
            )?;
            added.push(IndexedChunk {
                chunk_id,
                title: doc.title.clone(),
                trail: c.trail.join(" > "),
                body: c.text.clone(),
            });
        }
        Store::bump_seq(&tx)?;
        crashpoint("ingest:before-commit");
        tx.commit()?;
        crashpoint("ingest:after-commit");
        Ok(IngestOutcome {
            id,
            revision,
            status,
            removed,
            added,
        })
    }

    /// The revision of a live document, or `None` if unknown or deleted.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn live_revision(&self, id: &str) -> Result<Option<i64>, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT revision FROM documents WHERE id = ?1 AND deleted_at IS NULL",
                params![id],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Applies one tombstone from the durable log (§7.4) in one transaction:
    /// records it (so [`Store::tombstone_seq`] reaches `t.seq`), and if the
    /// document is live at `t.revision` or earlier, drops its chunks and
    /// marks the row deleted. A document re-ingested after the deletion (a
    /// later revision) is left alone. Bumps `store_seq`.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure, including a tombstone whose
    /// sequence this database already holds.
    pub fn apply_tombstone(&mut self, t: &Tombstone) -> Result<Applied, Error> {
        let tx = self.conn.transaction()?;
        let revision: Option<i64> = tx
            .query_row(
                "SELECT revision FROM documents WHERE id = ?1 AND deleted_at IS NULL",
                params![&t.doc_id],
                |r| r.get(0),
            )
            .optional()?;
        tx.execute(
            "INSERT INTO tombstones(seq, doc_id, revision, at) VALUES (?1, ?2, ?3, ?4)",
            params![t.seq, &t.doc_id, t.revision, t.at],
        )?;
        let mut applied = Applied::default();
        if revision.is_some_and(|r| r <= t.revision) {
            let mut stmt = tx.prepare("SELECT id FROM chunks WHERE doc_id = ?1")?;
            for row in stmt.query_map(params![&t.doc_id], |r| r.get::<_, i64>(0))? {
                applied.removed.push(row?);
            }
            drop(stmt);
            tx.execute("DELETE FROM chunks WHERE doc_id = ?1", params![&t.doc_id])?;
            tx.execute(
                "UPDATE documents SET deleted_at = ?2, chunk_count = 0, \
                 title = ?3, path = ?3 WHERE id = ?1",
                params![&t.doc_id, t.at, Vec::<u8>::new()],
            )?;
            applied.deleted = true;
        }
        Store::bump_seq(&tx)?;
        tx.commit()?;
        Ok(applied)
    }

    /// The tombstones this database holds with a sequence above `seq`, in
    /// order: what a log that lost its tail is backfilled from.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn tombstones_after(&self, seq: i64) -> Result<Vec<Tombstone>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT seq, doc_id, revision, at FROM tombstones WHERE seq > ?1 ORDER BY seq",
        )?;
        let rows = stmt
            .query_map(params![seq], |r| {
                Ok(Tombstone {
                    seq: r.get(0)?,
                    doc_id: r.get(1)?,
                    revision: r.get(2)?,
                    at: r.get(3)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    fn summary_from_row(&self, r: &rusqlite::Row<'_>) -> Result<DocumentSummary, Error> {
        let id: String = r.get(0)?;
        let title: Vec<u8> = r.get(3)?;
        let path: Vec<u8> = r.get(4)?;
        let app: String = r.get(1)?;
        let item_id: Option<String> = r.get(8)?;
        let sibling_rev: Option<String> = r.get(9)?;
        let provenance = match (item_id, sibling_rev) {
            (Some(item_id), Some(revision)) => Some(Provenance {
                app: app.clone(),
                item_id,
                revision,
            }),
            _ => None,
        };
        Ok(DocumentSummary {
            title: self.sealer.open_string(
                Purpose::Title,
                &format!("documents/{id}/title"),
                &title,
            )?,
            path: self
                .sealer
                .open_string(Purpose::Path, &format!("documents/{id}/path"), &path)?,
            app,
            provenance,
            revision: r.get(2)?,
            chunk_count: r.get(5)?,
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
            id,
        })
    }

    const SUMMARY_COLUMNS: &'static str =
        "id, app, revision, title, path, chunk_count, created_at, updated_at, item_id, sibling_rev";

    /// A live document's summary, or `None` if unknown or deleted (§4.2 fact 2).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] or [`ErrorKind::Seal`] if the row cannot be read or opened.
    pub fn document(&self, id: &str) -> Result<Option<DocumentSummary>, Error> {
        if !is_document_id(id) {
            return Ok(None);
        }
        let sql = format!(
            "SELECT {} FROM documents WHERE id = ?1 AND deleted_at IS NULL",
            Store::SUMMARY_COLUMNS
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(params![id])?;
        match rows.next()? {
            Some(r) => Ok(Some(self.summary_from_row(r)?)),
            None => Ok(None),
        }
    }

    /// Every live document, most recently updated first.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn documents(&self) -> Result<Vec<DocumentSummary>, Error> {
        let sql = format!(
            "SELECT {} FROM documents WHERE deleted_at IS NULL ORDER BY updated_at DESC, id",
            Store::SUMMARY_COLUMNS
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(self.summary_from_row(r)?);
        }
        Ok(out)
    }

    fn open_passage(
        &self,
        chunk_id: i64,
        ordinal: i64,
        body: &[u8],
        trail: &[u8],
    ) -> Result<Passage, Error> {
        let body =
            self.sealer
                .open_string(Purpose::Chunk, &format!("chunks/{chunk_id}/body"), body)?;
        let trail = self
            .sealer
            .open(Purpose::Chunk, &format!("chunks/{chunk_id}/trail"), trail)?;
        let trail: Vec<String> = serde_json::from_slice(&trail)
            .map_err(|_| Error::new(ErrorKind::Seal, "sealed trail is not a string list"))?;
        Ok(Passage {
            chunk_id,
            ordinal,
            trail,
            body,
        })
    }

    /// Every passage of a live document, in order.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn passages(&self, id: &str) -> Result<Vec<Passage>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.ordinal, c.body, c.trail FROM chunks c \
             JOIN documents d ON d.id = c.doc_id \
             WHERE c.doc_id = ?1 AND d.deleted_at IS NULL AND c.revision = d.revision \
             ORDER BY c.ordinal",
        )?;
        let mut rows = stmt.query(params![id])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let body: Vec<u8> = r.get(2)?;
            let trail: Vec<u8> = r.get(3)?;
            out.push(self.open_passage(r.get(0)?, r.get(1)?, &body, &trail)?);
        }
        Ok(out)
    }

    /// The passage behind an index hit, if its document is live and the chunk
    /// belongs to the current revision (§4.2 fact 2). A hit whose row is gone
    /// is `None`: the index can briefly lead or trail the store.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn passage_hit(&self, chunk_id: i64) -> Result<Option<PassageHit>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.ordinal, c.body, c.trail, c.doc_id FROM chunks c \
             JOIN documents d ON d.id = c.doc_id \
             WHERE c.id = ?1 AND d.deleted_at IS NULL AND c.revision = d.revision",
        )?;
        let row: Option<PassageRow> = stmt
            .query_row(params![chunk_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .optional()?;
        let Some((id, ordinal, body, trail, doc_id)) = row else {
            return Ok(None);
        };
        let Some(document) = self.document(&doc_id)? else {
            return Ok(None);
        };
        Ok(Some(PassageHit {
            passage: self.open_passage(id, ordinal, &body, &trail)?,
            document,
        }))
    }

    /// Every live chunk, opened, for rebuilding the index (§7.4).
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn live_chunks(&self) -> Result<Vec<IndexedChunk>, Error> {
        let mut out = Vec::new();
        for doc in self.documents()? {
            for p in self.passages(&doc.id)? {
                out.push(IndexedChunk {
                    chunk_id: p.chunk_id,
                    title: doc.title.clone(),
                    trail: p.trail.join(" > "),
                    body: p.body,
                });
            }
        }
        out.sort_by_key(|c| c.chunk_id);
        Ok(out)
    }

    /// Ids of every live chunk, ascending: what the index must hold.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn live_chunk_ids(&self) -> Result<Vec<i64>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id \
             WHERE d.deleted_at IS NULL AND c.revision = d.revision ORDER BY c.id",
        )?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(ids)
    }

    /// The live document holding `app`'s item `item_id`, if any.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn sibling_document(
        &self,
        app: &str,
        item_id: &str,
    ) -> Result<Option<DocumentSummary>, Error> {
        let fp = self.sealer.fingerprint(
            Purpose::PathFingerprint,
            Store::sibling_source_key(app, item_id).as_bytes(),
        );
        let id: Option<String> = self
            .conn
            .query_row(
                "SELECT id FROM documents WHERE source_fp = ?1 AND deleted_at IS NULL",
                params![&fp[..]],
                |r| r.get(0),
            )
            .optional()?;
        match id {
            Some(id) => self.document(&id),
            None => Ok(None),
        }
    }

    /// What memoria remembers about `app` (default: never polled).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn sibling_state(&self, app: &str) -> Result<SiblingState, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT cursor, reannounce, polled_at FROM siblings WHERE app = ?1",
                params![app],
                |r| {
                    Ok(SiblingState {
                        cursor: r.get(0)?,
                        reannounce: r.get::<_, i64>(1)? != 0,
                        polled_at: r.get(2)?,
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }

    /// Records the S1 cursor after applying a page polled at `now`.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn set_sibling_cursor(&self, app: &str, cursor: &str, now: i64) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO siblings(app, cursor, polled_at) VALUES (?1, ?2, ?3) \
             ON CONFLICT(app) DO UPDATE SET cursor = excluded.cursor, polled_at = excluded.polled_at",
            params![app, cursor, now],
        )?;
        Ok(())
    }

    /// Marks `app` for re-announce (§4.1). Durable; nothing is deleted.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn mark_reannounce(&self, app: &str) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO siblings(app, reannounce) VALUES (?1, 1) \
             ON CONFLICT(app) DO UPDATE SET reannounce = 1",
            params![app],
        )?;
        Ok(())
    }

    fn connector_fp(&self, connector: &str) -> Vec<u8> {
        self.sealer
            .fingerprint(
                Purpose::PathFingerprint,
                format!("connector\0{connector}").as_bytes(),
            )
            .to_vec()
    }

    /// The keyed fingerprint a source key is stored under (`documents.source_fp`).
    pub fn source_fp(&self, source_key: &str) -> Vec<u8> {
        self.sealer
            .fingerprint(Purpose::PathFingerprint, source_key.as_bytes())
            .to_vec()
    }

    /// The keyed fingerprint of one version of one source key (§5.1).
    pub fn version_fp(&self, source_key: &str, version: &str) -> Vec<u8> {
        self.sealer
            .fingerprint(
                Purpose::PathFingerprint,
                format!("version\0{source_key}\0{version}").as_bytes(),
            )
            .to_vec()
    }

    /// The live document stored under the source-key fingerprint `key_fp`, if any.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn live_document_by_source_fp(&self, key_fp: &[u8]) -> Result<Option<String>, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM documents WHERE source_fp = ?1 AND deleted_at IS NULL",
                params![key_fp],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Every item `connector`'s enumerations have recorded (§5.1).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn connector_items(&self, connector: &str) -> Result<Vec<HeldItem>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT key_fp, version_fp FROM connector_items WHERE connector_fp = ?1 ORDER BY key_fp",
        )?;
        let rows = stmt
            .query_map(params![self.connector_fp(connector)], |r| {
                Ok(HeldItem {
                    key_fp: r.get(0)?,
                    version_fp: r.get(1)?,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Records that an enumeration of `connector` listed `key_fp` at `now`
    /// (`last_seen_at`, §4.2), and the version ingested if `version_fp` is given.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn connector_seen(
        &self,
        connector: &str,
        key_fp: &[u8],
        version_fp: Option<&[u8]>,
        now: i64,
    ) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO connector_items(connector_fp, key_fp, version_fp, last_seen_at) \
             VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(connector_fp, key_fp) DO UPDATE SET \
             version_fp = coalesce(excluded.version_fp, connector_items.version_fp), \
             last_seen_at = excluded.last_seen_at",
            params![self.connector_fp(connector), key_fp, version_fp, now],
        )?;
        Ok(())
    }

    /// Completes a re-announce of `app` (§4.1 rules 2–4): stores the close
    /// marker's `cursor` as the S1 cursor and clears the mark, in one write.
    /// Call it only after every retirement and refetch has been applied.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure; the mark then stands.
    pub fn complete_reannounce(&self, app: &str, cursor: &str, now: i64) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO siblings(app, cursor, reannounce, polled_at) VALUES (?1, ?2, 0, ?3) \
             ON CONFLICT(app) DO UPDATE SET cursor = excluded.cursor, reannounce = 0, \
             polled_at = excluded.polled_at",
            params![app, cursor, now],
        )?;
        Ok(())
    }

    /// The `last_seen_at` of one item of `connector`, in unix seconds, if recorded.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn connector_item_seen_at(
        &self,
        connector: &str,
        key_fp: &[u8],
    ) -> Result<Option<i64>, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT last_seen_at FROM connector_items WHERE connector_fp = ?1 AND key_fp = ?2",
                params![self.connector_fp(connector), key_fp],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// Forgets one item of `connector` after a complete enumeration omitted it.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn connector_forget(&self, connector: &str, key_fp: &[u8]) -> Result<(), Error> {
        self.conn.execute(
            "DELETE FROM connector_items WHERE connector_fp = ?1 AND key_fp = ?2",
            params![self.connector_fp(connector), key_fp],
        )?;
        Ok(())
    }

    /// Records one enumeration attempt of `connector` at `now`: `failure`
    /// is `None` for a complete enumeration, else its kind (gate 7).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn connector_attempt(
        &self,
        connector: &str,
        now: i64,
        failure: Option<&str>,
    ) -> Result<(), Error> {
        let complete_at = if failure.is_none() { Some(now) } else { None };
        self.conn.execute(
            "INSERT INTO connector_sources(connector_fp, last_attempt_at, last_complete_at, last_failure) \
             VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(connector_fp) DO UPDATE SET \
             last_attempt_at = excluded.last_attempt_at, \
             last_complete_at = coalesce(excluded.last_complete_at, connector_sources.last_complete_at), \
             last_failure = excluded.last_failure",
            params![self.connector_fp(connector), now, complete_at, failure],
        )?;
        Ok(())
    }

    /// `connector`'s durable record (default: never attempted).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn connector_state(&self, connector: &str) -> Result<ConnectorState, Error> {
        Ok(self
            .conn
            .query_row(
                "SELECT last_attempt_at, last_complete_at, last_failure FROM connector_sources \
                 WHERE connector_fp = ?1",
                params![self.connector_fp(connector)],
                |r| {
                    Ok(ConnectorState {
                        last_attempt_at: r.get(0)?,
                        last_complete_at: r.get(1)?,
                        last_failure: r.get(2)?,
                    })
                },
            )
            .optional()?
            .unwrap_or_default())
    }

    /// Adds one S2 call's tally for `asker` at `app` to today's breaker
    /// counters (§8.1). Called on the S2 path only.
    ///
    /// # Errors
    /// As [`crate::policy::breaker::record_s2`].
    pub fn record_s2_tally(
        &self,
        app: &str,
        asker: &str,
        tally: crate::policy::breaker::S2Tally,
        now: i64,
    ) -> Result<(), Error> {
        crate::policy::breaker::record_s2(&self.conn, &self.sealer, app, asker, tally, now)
    }

    /// Adds one sync's S3 tally for `app` to today's breaker counters (§8.1).
    ///
    /// # Errors
    /// As [`crate::policy::breaker::record_s3`].
    pub fn record_s3_tally(
        &self,
        app: &str,
        tally: crate::policy::breaker::S3Tally,
        now: i64,
    ) -> Result<(), Error> {
        crate::policy::breaker::record_s3(&self.conn, &self.sealer, app, tally, now)
    }

    /// The refusal breaker's state for `app` at `now` (§8.1).
    ///
    /// # Errors
    /// As [`crate::policy::breaker::refusal_state`].
    pub fn refusal_breaker(
        &self,
        app: &str,
        now: i64,
    ) -> Result<crate::policy::breaker::BreakerState, Error> {
        crate::policy::breaker::refusal_state(&self.conn, &self.sealer, app, now)
    }

    /// The S3 breaker's state for `app` at `now` (§8.1).
    ///
    /// # Errors
    /// As [`crate::policy::breaker::s3_state`].
    pub fn s3_breaker(
        &self,
        app: &str,
        now: i64,
    ) -> Result<crate::policy::breaker::BreakerState, Error> {
        crate::policy::breaker::s3_state(&self.conn, &self.sealer, app, now)
    }

    /// The apps marked for re-announce, sorted: the sources out of the
    /// ranking until their re-announce completes (§4.1 rule 1).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn reannouncing_apps(&self) -> Result<Vec<String>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT app FROM siblings WHERE reannounce = 1 ORDER BY app")?;
        let apps = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(apps)
    }

    /// Ids of every live chunk of `app`'s sibling documents, ascending: what
    /// a search leaves out while `app` is reconciling (§4.1 rule 1). Reads
    /// no sealed cell.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn sibling_chunk_ids(&self, app: &str) -> Result<Vec<i64>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id \
             WHERE d.app = ?1 AND d.item_id IS NOT NULL AND d.deleted_at IS NULL \
             AND c.revision = d.revision ORDER BY c.id",
        )?;
        let ids = stmt
            .query_map(params![app], |r| r.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(ids)
    }

    /// Every live document held from `app`, each with its provenance: what a
    /// completed re-announce is compared against (§4.1 rules 3–4).
    ///
    /// # Errors
    /// As [`Store::documents`].
    pub fn sibling_documents(&self, app: &str) -> Result<Vec<DocumentSummary>, Error> {
        Ok(self
            .documents()?
            .into_iter()
            .filter(|d| d.provenance.as_ref().is_some_and(|p| p.app == app))
            .collect())
    }

    /// Counts of live documents and chunks. Coordinates, not content (§3.2).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn counts(&self) -> Result<(u64, u64), Error> {
        let docs: i64 = self.conn.query_row(
            "SELECT count(*) FROM documents WHERE deleted_at IS NULL",
            [],
            |r| r.get(0),
        )?;
        let chunks = self.live_chunk_ids()?.len() as u64;
        Ok((docs as u64, chunks))
    }

    /// Checkpoints the WAL into the main file, so its bytes can be inspected or copied.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on failure.
    pub fn checkpoint(&self) -> Result<(), Error> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }
}
