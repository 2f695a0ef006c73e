//! The sealed store: one embedded SQLite file holding documents, sealed chunks and tombstones (§3.2, §5.2, §7.4).
//!
//! Size: over 800 lines with its tests because opening, migrating and the
//! handles every table shares (the writer's and a read handle's) live
//! here; each table's reads and writes already have their own file under
//! `store/`.
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
//!
//! The `impl Store` is one type in seven files: this one opens the file and
//! keeps the sequence numbers; `store/documents.rs` holds documents,
//! chunks and tombstones; `store/vectors.rs` each chunk's sealed embedding
//! and the chunks awaiting one; `store/siblings.rs` a sibling's cursor and
//! mark; `store/sheets.rs` a sheet's sealed structure catalogue (§8.7);
//! `store/breaker.rs` the breakers' sealed counters;
//! `store/connector.rs` a connector's item rows. The tables themselves are written once, in
//! `storage/schema.rs`.

mod artefacts;
mod breaker;
mod connector;
mod documents;
mod roster;
mod sheets;
mod siblings;
mod vectors;

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::schema::{
    ARTEFACT_SCHEMA, BREAKER_SCHEMA, CONNECTOR_SCHEMA, MIGRATIONS, ROSTER_SCHEMA, SCHEMA,
    SHEET_SCHEMA,
};
use crate::date::{DateKind, DocumentDate, front_matter_date};
use crate::error::{Error, ErrorKind};
use crate::storage::seal::{Purpose, Sealer};

pub use artefacts::{ArtefactRecord, Root};
// A result carries its provenance, so the type lives with the result, below the store.
pub use crate::search::result::Provenance;
pub use sheets::{Catalogue, CatalogueCell, ChunkedSheet};

/// The app name stored against memoria-owned content (§4.2).
pub const APP_MEMORIA: &str = "memoria";
/// The `app` of a derived artefact's document (§5.2): memoria wrote it,
/// and it is authorized through its roots, never as memoria-owned content.
pub const APP_ARTEFACT: &str = "artefact";
/// The database file's name inside the data directory.
pub const DB_FILE_NAME: &str = "memoria.sqlite3";
/// Length of a public document id in bytes (rendered as 32 hex characters).
pub const DOCUMENT_ID_BYTES: usize = 16;
/// Schema version written to `meta`. An older store is migrated on open
/// (`storage/schema.rs`'s `MIGRATIONS`: 2 → 3 added the document's own
/// date, 3 → 4 a Markdown passage's sealed plain text); a newer one, or one
/// no migration reaches, refuses to open.
pub const SCHEMA_VERSION: i64 = 4;
/// Prepared statements a store's connection keeps for reuse, in
/// statements: rusqlite's default is 16, and the store prepares more than
/// 20 distinct ones with `prepare_cached` (searches, syncs, the breakers'
/// counters), so at 16 they evicted each other and were prepared again.
pub const STATEMENT_CACHE_STATEMENTS: usize = 64;

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
    /// The date its source gives: a sibling's revision time, or an imported
    /// file's modification time; `None` if the source gives none. A
    /// memoria-owned document's front matter `date:` comes before it
    /// ([`crate::date::front_matter_date`]); with neither, the
    /// document's date is its import date.
    pub date: Option<DocumentDate>,
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
    /// The passage text as the index reads it
    /// ([`TextForm::index_text`](crate::search::markdown::TextForm::index_text)):
    /// a Markdown passage less its HTML comments and hidden elements.
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
    /// The document's own date and where it came from; the import date
    /// (`updated_at`, [`DateKind::Imported`](crate::date::DateKind::Imported))
    /// when its source gave none.
    pub date: DocumentDate,
}

impl DocumentSummary {
    /// How this document's passages read
    /// ([`TextForm::of_source`](crate::search::markdown::TextForm::of_source)):
    /// a memoria-owned document by its path's extension, a sibling's body
    /// as Markdown.
    pub fn text_form(&self) -> crate::search::markdown::TextForm {
        crate::search::markdown::TextForm::of_source(&self.path, self.provenance.is_some())
    }
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
    /// The passage text as the index reads it
    /// ([`TextForm::index_text`](crate::search::markdown::TextForm::index_text)):
    /// a Markdown passage less its HTML comments and hidden elements.
    pub body: String,
}

/// A passage with the document it belongs to, for a result row.
#[derive(Debug, Clone)]
pub struct PassageHit {
    /// The passage.
    pub passage: Passage,
    /// Its document.
    pub document: DocumentSummary,
    /// A Markdown passage's plain text
    /// ([`plain_text`](crate::search::markdown::plain_text)), what its
    /// snippet is cut from: the sealed cell written beside the body at
    /// ingest, or, for a row written before schema 4, worked out from the
    /// body as the passage is opened. `None` for a passage of plain text,
    /// whose body is its own ([`PassageHit::snippet_text`]).
    pub plain: Option<String>,
}

impl PassageHit {
    /// The text a snippet of this passage is cut from, as
    /// [`TextForm::snippet_text`](crate::search::markdown::TextForm::snippet_text)
    /// gives it, without parsing or copying anything (issue 30).
    pub fn snippet_text(&self) -> &str {
        self.plain.as_deref().unwrap_or(&self.passage.body)
    }
}

/// (id, revision, external_id, deleted_at, sibling revision) of a document row.
type ExistingRow = (String, i64, Vec<u8>, Option<i64>, Option<String>);

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
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row(params![key], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// `conn.execute(sql, params)` through the connection's statement cache
/// ([`STATEMENT_CACHE_STATEMENTS`]): a statement an ingest runs once a
/// document or once a chunk is parsed once, not on every run (issue 30:
/// SQLite's parser was about 3% of an import's instructions).
fn execute_cached<P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

fn meta_set(conn: &Connection, key: &str, value: i64) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO meta(key, value) VALUES (?1, ?2) \
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    )?
    .execute(params![key, value])?;
    Ok(())
}

/// Runs one migration's `sql` and records schema version `to`, in one
/// transaction: a crash leaves the store at the version before or after.
fn migrate(conn: &Connection, sql: &str, to: i64) -> rusqlite::Result<()> {
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(sql)?;
    tx.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
        params![to],
    )?;
    tx.commit()
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
            "the DEK does not open the store in {}: it opens none of the {} sealed titles tried, so it is not the key this store was sealed with. Nothing was changed.",
            data_dir.display(),
            titles.len(),
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
        std::fs::create_dir_all(data_dir).map_err(|e| {
            Error::with_source(
                ErrorKind::Io,
                format!(
                    "the data directory {} cannot be created",
                    data_dir.display()
                ),
                e,
            )
        })?;
        let path = data_dir.join(DB_FILE_NAME);
        let conn = Connection::open(&path).map_err(|e| {
            Error::with_source(
                ErrorKind::Storage,
                format!("the database {} cannot be opened", path.display()),
                e,
            )
        })?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_STATEMENTS);
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = FULL;
             PRAGMA temp_store = MEMORY;
             PRAGMA secure_delete = ON;
             PRAGMA foreign_keys = ON;",
        )?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(CONNECTOR_SCHEMA)?;
        conn.execute_batch(BREAKER_SCHEMA)?;
        conn.execute_batch(ROSTER_SCHEMA)?;
        conn.execute_batch(ARTEFACT_SCHEMA)?;
        conn.execute_batch(SHEET_SCHEMA)?;
        let mut version = meta_get(&conn, "schema_version")?;
        if version == 0 {
            meta_set(&conn, "schema_version", SCHEMA_VERSION)?;
            version = SCHEMA_VERSION;
        }
        while let Some((_, sql)) = MIGRATIONS.iter().find(|(from, _)| *from == version) {
            migrate(&conn, sql, version + 1).map_err(|e| {
                Error::with_source(
                    ErrorKind::Storage,
                    format!(
                        "the database {} cannot be migrated from schema version {version}",
                        path.display()
                    ),
                    e,
                )
            })?;
            tracing::info!(from = version, to = version + 1, "store schema migrated");
            version += 1;
        }
        if version != SCHEMA_VERSION {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the database {} has store schema version {version}, and this build reads {SCHEMA_VERSION}",
                    path.display()
                ),
            ));
        }
        Ok(Store { conn, sealer, path })
    }

    /// A second handle on this store that only reads, with its own SQLite
    /// connection (issue 30: a read handle's). The store is in WAL mode, so
    /// its reads never wait for the writer's transaction nor it for them;
    /// each read transaction sees the store as of its first read, so a
    /// request that opens one after a write returned sees that write
    /// ([`Store::read_together`]). Every write through it fails
    /// (`query_only`).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot open the file.
    pub fn open_reader(&self) -> Result<Store, Error> {
        let flags =
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&self.path, flags).map_err(|e| {
            Error::with_source(
                ErrorKind::Storage,
                format!(
                    "the database {} cannot be opened to read",
                    self.path.display()
                ),
                e,
            )
        })?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE_STATEMENTS);
        conn.execute_batch(
            "PRAGMA temp_store = MEMORY;
             PRAGMA query_only = ON;",
        )?;
        Ok(Store {
            conn,
            sealer: self.sealer.clone(),
            path: self.path.clone(),
        })
    }

    /// The database file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens one read transaction for the reads that follow, until the
    /// returned guard drops: a request's statements then take SQLite's
    /// shared lock and read the WAL index once, not once each (issue 30:
    /// a search ran about 45 statements, a brief hundreds, each locking and
    /// unlocking the file). Every read inside sees one state of the store.
    /// Nothing may be written through the store while the guard lives.
    /// Inside a transaction already open, `None`: the reads share that one.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot begin the transaction.
    pub fn read_together(&self) -> Result<Option<rusqlite::Transaction<'_>>, Error> {
        if !self.conn.is_autocommit() {
            return Ok(None);
        }
        Ok(Some(self.conn.unchecked_transaction()?))
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

    /// Reserves `count` consecutive chunk ids, the first the counter's
    /// next (at least 1), and moves the counter past them: the ids one id
    /// at a time would give, with the counter read and written once a
    /// document rather than once a chunk (issue 30).
    fn next_chunk_ids(tx: &Transaction<'_>, count: usize) -> Result<std::ops::Range<i64>, Error> {
        let first = meta_get(tx, "next_chunk_id")?.max(1);
        let end = first + count as i64;
        if count > 0 {
            meta_set(tx, "next_chunk_id", end)?;
        }
        Ok(first..end)
    }

    /// Counts of live documents and chunks. Coordinates, not content (§3.2).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn counts(&self) -> Result<(u64, u64), Error> {
        let (ids, docs) = self.live_chunk_listing()?;
        Ok((docs, ids.len() as u64))
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

/// The date `doc` is stored with (issue 31): a sibling's is the one its
/// sync gives (the revision's `touched_at`); a memoria-owned document's is
/// its front matter `date:`, else the one its source gives (a file's
/// modification time); an artefact's only the one given. `None`: the
/// import date stands.
fn own_date(doc: &NewDocument, sibling: bool, owner: &str) -> Option<DocumentDate> {
    if sibling || owner != APP_MEMORIA {
        return doc.date;
    }
    front_matter_date(&doc.body)
        .map(|at| DocumentDate {
            kind: DateKind::FrontMatter,
            at,
        })
        .or(doc.date)
}

impl Store {
    /// Document `id`'s date: its sealed `source_date` opened, or with none
    /// (the source gave none, or the row predates schema 3) its import,
    /// `updated_at`.
    ///
    /// # Errors
    /// [`ErrorKind::Seal`] if the cell does not open under this DEK;
    /// [`ErrorKind::Storage`] if it opens to something not a kind and a time.
    fn open_date(
        &self,
        id: &str,
        source_date: Option<&[u8]>,
        updated_at: i64,
    ) -> Result<DocumentDate, Error> {
        let Some(sealed) = source_date else {
            return Ok(DocumentDate {
                kind: DateKind::Imported,
                at: updated_at,
            });
        };
        let cell = self.sealer.open_string(
            Purpose::DocumentDate,
            &format!("documents/{id}/date"),
            sealed,
        )?;
        DocumentDate::from_cell(&cell).ok_or_else(|| {
            Error::new(
                ErrorKind::Storage,
                format!("document {id}'s sealed date is not a kind and a time"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::seal::Dek;

    /// 2026-03-03T00:00:00Z.
    const MARCH_3: i64 = 1_772_496_000;
    /// When the tests' ingests happen: 2026-11-30T09:00:00Z.
    const NOW: i64 = 1_796_029_200;

    fn sealer() -> Sealer {
        Sealer::new(&Dek::from_bytes([7; 32]))
    }

    fn doc(key: &str, body: &str, date: Option<DocumentDate>) -> NewDocument {
        NewDocument {
            source_key: key.to_string(),
            title: "Standup".to_string(),
            path: format!("{key}.md"),
            body: body.to_string(),
            date,
        }
    }

    fn meta(dir: &Path, key: &str) -> i64 {
        let conn = Connection::open(dir.join(DB_FILE_NAME)).unwrap();
        meta_get(&conn, key).unwrap()
    }

    /// Rewrites a store of this build as schema version 2 wrote it: the
    /// `documents` table without `source_date`, `chunks` without `plain`,
    /// and version 2 in `meta`.
    fn as_schema_two(dir: &Path) {
        let conn = Connection::open(dir.join(DB_FILE_NAME)).unwrap();
        conn.execute_batch(
            "ALTER TABLE documents DROP COLUMN source_date;
             ALTER TABLE chunks DROP COLUMN plain;
             UPDATE meta SET value = 2 WHERE key = 'schema_version';",
        )
        .unwrap();
    }

    #[test]
    fn a_store_written_by_schema_two_opens_migrated_its_documents_dated_by_their_import() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let mut s = Store::open(dir.path(), sealer()).unwrap();
            s.ingest(&doc("old", "Notes of the standup.", None), NOW)
                .unwrap()
                .id
        };
        as_schema_two(dir.path());
        assert_eq!(meta(dir.path(), "schema_version"), 2);
        let mut s = Store::open(dir.path(), sealer()).unwrap();
        assert_eq!(meta(dir.path(), "schema_version"), SCHEMA_VERSION);
        let old = s.document(&id).unwrap().expect("the old document is live");
        assert_eq!(
            (old.title.as_str(), old.date),
            (
                "Standup",
                DocumentDate {
                    kind: DateKind::Imported,
                    at: NOW
                }
            ),
            "a row from before the migration is dated by its import, and says so"
        );
        let dated = DocumentDate {
            kind: DateKind::FileModified,
            at: MARCH_3,
        };
        let new = s
            .ingest(&doc("new", "Notes of the retro.", Some(dated)), NOW)
            .unwrap();
        assert_eq!(s.document(&new.id).unwrap().unwrap().date, dated);
        drop(s);
        Store::open(dir.path(), sealer()).expect("a migrated store opens again");
    }

    #[test]
    fn a_store_of_a_schema_no_migration_reaches_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path(), sealer()).unwrap());
        let conn = Connection::open(dir.path().join(DB_FILE_NAME)).unwrap();
        conn.execute("UPDATE meta SET value = 9 WHERE key = 'schema_version'", [])
            .unwrap();
        drop(conn);
        let err = Store::open(dir.path(), sealer()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        let said = err.to_string();
        assert!(
            said.contains(DB_FILE_NAME) && said.contains("schema version 9"),
            "{said}"
        );
    }

    #[test]
    fn a_document_is_dated_by_its_front_matter_then_its_source_then_its_import() {
        let front = "---\ntitle: Standup\ndate: 2026-03-03\n---\n# Standup\n\nNotes.\n";
        let plain = "# Standup\n\nNotes.\n";
        let modified = DocumentDate {
            kind: DateKind::FileModified,
            at: MARCH_3 + 86_400,
        };
        let rows: [(&str, Option<DocumentDate>, DateKind, i64); 4] = [
            (front, Some(modified), DateKind::FrontMatter, MARCH_3),
            (front, None, DateKind::FrontMatter, MARCH_3),
            (
                plain,
                Some(modified),
                DateKind::FileModified,
                MARCH_3 + 86_400,
            ),
            (plain, None, DateKind::Imported, NOW),
        ];
        for (n, (body, given, kind, at)) in rows.into_iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            let mut s = Store::open(dir.path(), sealer()).unwrap();
            let id = s
                .ingest(&doc(&format!("d{n}"), body, given), NOW)
                .unwrap()
                .id;
            let got = s.document(&id).unwrap().unwrap().date;
            assert_eq!(got, DocumentDate { kind, at }, "row {n}");
        }
    }

    #[test]
    fn a_sibling_item_is_dated_by_the_revision_time_it_was_given_not_its_front_matter() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(dir.path(), sealer()).unwrap();
        let edited = DocumentDate {
            kind: DateKind::Edited,
            at: MARCH_3,
        };
        let provenance = Provenance {
            app: "docs".into(),
            item_id: "dc-1".into(),
            revision: "r1".into(),
        };
        let body = "---\ndate: 2020-01-01\n---\nNotes.\n";
        let id = s
            .ingest_sibling(&doc("", body, Some(edited)), &provenance, NOW)
            .unwrap()
            .id;
        assert_eq!(s.document(&id).unwrap().unwrap().date, edited);
    }

    #[test]
    fn the_date_is_sealed_in_the_file_and_gone_with_its_document() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(dir.path(), sealer()).unwrap();
        let body = "---\ndate: 2026-03-03\n---\nNotes.\n";
        let id = s.ingest(&doc("d", body, None), NOW).unwrap().id;
        let raw = |s: &Store| -> Option<Vec<u8>> {
            s.conn
                .query_row(
                    "SELECT source_date FROM documents WHERE id = ?1",
                    params![&id],
                    |r| r.get(0),
                )
                .unwrap()
        };
        let sealed = raw(&s).expect("a dated document has a sealed date (presence)");
        for plain in [&b"front_matter"[..], MARCH_3.to_string().as_bytes()] {
            assert!(
                !sealed.windows(plain.len()).any(|w| w == plain),
                "the cell holds {:?} in the clear",
                String::from_utf8_lossy(plain)
            );
        }
        let t = crate::storage::tombstone::Tombstone {
            seq: 1,
            doc_id: id.clone(),
            revision: 1,
            at: NOW,
        };
        assert!(s.apply_tombstone(&t).unwrap().deleted);
        assert_eq!(raw(&s), None, "a deleted document keeps no date");
    }
}
