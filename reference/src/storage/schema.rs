//! Every table memoria keeps at rest, written once: the store, the connector rows, the breaker counters, the roster coordinates and the derived artefacts' provenance (§3.2, §4.3, §5.1, §5.2, §8.1).
//!
//! What may be plaintext in these tables is exactly §3.2's coordinates:
//! ids, app names, revisions, ordinals, counts and timestamps. Every other
//! cell is a sealed blob (`*_sealed`, `counts`) or a keyed fingerprint
//! (`*_fp`). `Store::open` runs these batches in this order, then migrates
//! an older store's tables to [`SCHEMA_VERSION`](super::store::SCHEMA_VERSION)
//! ([`MIGRATIONS`]).

pub(crate) const SCHEMA: &str = r#"
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
    sibling_rev TEXT,                  -- sibling revision held (opaque); NULL if memoria-owned
    source_date BLOB                   -- sealed "{kind} {unix s}": the document's own date; NULL: none (schema 3)
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
    trail    BLOB NOT NULL,            -- sealed
    plain    BLOB                      -- sealed: a Markdown passage's plain text; NULL: plain form, or written before schema 4
);
-- Covers the live-chunk listing (doc_id, revision, and the rowid id), so a
-- wake lists the live chunks without reading one sealed body (issue 11);
-- ordinal orders a document's passages. It replaces chunks_by_doc.
CREATE INDEX IF NOT EXISTS chunks_by_doc_revision ON chunks(doc_id, revision, ordinal);
DROP INDEX IF EXISTS chunks_by_doc;
-- The home page's list of live memoria-owned documents, in its order
-- (issue 30): its page and its count read this partial index alone, not
-- every document row sorted. Its WHERE is the list's own, word for word
-- (`OWNED_DOCUMENTS_WHERE` in store/documents.rs; 'artefact' is
-- APP_ARTEFACT), or SQLite cannot use it; the WHERE's columns are in it too,
-- or SQLite reads each row to test them again (it covers, all coordinates).
CREATE INDEX IF NOT EXISTS documents_owned_by_update
    ON documents(updated_at DESC, id, deleted_at, item_id, sibling_rev, app)
    WHERE deleted_at IS NULL AND (item_id IS NULL OR sibling_rev IS NULL) AND app <> 'artefact';
-- One embedding per chunk (§3.1, §7.2): int8 at 512 dimensions, sealed
-- under the vector purpose key. A live chunk without a row here awaits its
-- vector: this table is also the durable embedding queue (issue 12). Its
-- rows go with their chunk, in the same transaction.
CREATE TABLE IF NOT EXISTS chunk_vectors (
    chunk_id INTEGER PRIMARY KEY,      -- = chunks.id
    vec      BLOB NOT NULL             -- sealed
);
-- The embedding canary (§8.2, gate 30): fixed public sentences' vectors as
-- the provider gave them at first configuration, sealed; re-embedded on
-- wake and compared.
CREATE TABLE IF NOT EXISTS canary (
    idx      INTEGER PRIMARY KEY,      -- the sentence's place in the fixed list
    model    TEXT NOT NULL,            -- the model id that embedded it (public)
    vec      BLOB NOT NULL             -- sealed: 512 f32, little-endian, unit L2
);
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
pub(crate) const CONNECTOR_SCHEMA: &str = r#"
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

/// The breaker counters' tables (§8.1; `store/breaker.rs` reads and writes them).
pub(crate) const BREAKER_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS breaker_s2 (
    app      TEXT NOT NULL,
    asker_fp BLOB NOT NULL,            -- HMAC(breaker-asker, address): no plaintext asker
    day      INTEGER NOT NULL,         -- UTC day number (unix seconds / 86400)
    counts   BLOB NOT NULL,            -- sealed "visible,not_visible"
    PRIMARY KEY (app, asker_fp, day)
);
CREATE TABLE IF NOT EXISTS breaker_s3 (
    app    TEXT NOT NULL,
    day    INTEGER NOT NULL,
    counts BLOB NOT NULL,              -- sealed "fetches,not_found,successes"
    PRIMARY KEY (app, day)
);
CREATE TABLE IF NOT EXISTS breaker_since (
    app   TEXT NOT NULL,
    kind  TEXT NOT NULL,               -- "s2" or "s3"
    day   INTEGER NOT NULL,            -- first UTC day counted
    PRIMARY KEY (app, kind)
);
"#;

/// The roster coordinates' table (§4.3; `store/roster.rs` reads and
/// writes it): per team, the generation and epoch last adopted. Both are
/// coordinates (an opaque generation compared for equality only, like a
/// revision, and a counter); no member address is stored.
pub(crate) const ROSTER_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS roster_held (
    team       TEXT PRIMARY KEY,       -- the team label the copy is for
    generation TEXT NOT NULL,          -- the home's roster generation last adopted
    epoch      INTEGER NOT NULL        -- its epoch when adopted
);
"#;

/// The derived artefacts' provenance (§5.2; `store/artefacts.rs` reads and
/// writes it). An artefact's text is a document of app `artefact` in
/// `documents` and `chunks`, sealed like any other; this row is what only
/// an artefact has: the producing model (decision 4), `roots` (the
/// flattened (owner, id, revision) triples, §5.2) and `built_from` (the
/// artefact ids it was written from). All three are §3.2 coordinates:
/// model ids, app names, document and item ids, revisions.
pub(crate) const ARTEFACT_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS artefacts (
    doc_id     TEXT PRIMARY KEY,       -- = documents.id of the artefact's text
    model      TEXT NOT NULL,          -- the model id that wrote this revision
    roots      TEXT NOT NULL,          -- JSON [{"owner","id","revision"}]: flattened, §5.2
    built_from TEXT NOT NULL           -- JSON ["doc id"]: the direct artefact inputs
);
"#;

/// The spreadsheets' tables (§8.7; `store/sheets.rs` reads and writes them):
/// one sealed structure catalogue per sheet document at its revision, and
/// the sheets marked for re-ingest after S6 returned a format code other
/// than the one indexed. Coordinates and a sealed blob only.
pub(crate) const SHEET_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS sheet_catalogues (
    doc_id    TEXT PRIMARY KEY,        -- = documents.id
    revision  INTEGER NOT NULL,        -- = documents.revision it was built from
    catalogue BLOB NOT NULL            -- sealed JSON: labels, headers, cells, format codes
);
CREATE TABLE IF NOT EXISTS sheet_reingest (
    doc_id    TEXT PRIMARY KEY         -- a sheet whose next announce refetches it
);
"#;

/// What turns a store of schema version `from` into `from + 1`, run by
/// `Store::open` in one transaction with the version's bump. `CREATE TABLE
/// IF NOT EXISTS` above leaves an existing table as it was, so a column a
/// later version added reaches an old store only here.
pub(crate) const MIGRATIONS: &[(i64, &str)] = &[
    // 2 → 3: a document's own date, sealed (issue 31). Old rows keep NULL:
    // their date is the import date, and the page says so.
    (2, "ALTER TABLE documents ADD COLUMN source_date BLOB;"),
    // 3 → 4: a Markdown passage's plain text, sealed beside its body at
    // ingest, so a search page cuts its snippets without parsing Markdown
    // (issue 30). Old rows keep NULL: opening one works its text out from
    // the body, by the same function, as every search did before.
    (3, "ALTER TABLE chunks ADD COLUMN plain BLOB;"),
];
