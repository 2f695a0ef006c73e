//! Documents, their chunks and the tombstones applied: one transaction per ingest and per deletion (§5.2, §7.4).
//!
//! Size: about 740 lines of code and 270 of unit tests, kept inline because
//! the tests reach the ingest and demo rooms, which a separate `tests.rs`
//! in `storage/` would import up the layer order (`gates/tests/tidy.rs`).

use std::borrow::Cow;

use rusqlite::{OptionalExtension, params};

use super::*;
use crate::crashpoint::crashpoint;
use crate::search::chunk;
use crate::search::markdown::{TextForm, plain_text};
use crate::storage::tombstone::Tombstone;

/// [`Store::passage_hit`]'s one statement: the chunk's id, ordinal, sealed
/// body and trail, then its live document's [`Store::SUMMARY_COLUMNS`],
/// then the chunk's sealed plain text (NULL: none stored).
const PASSAGE_HIT_SQL: &str = "SELECT c.id, c.ordinal, c.body, c.trail, \
     d.id, d.app, d.revision, d.title, d.path, d.chunk_count, d.created_at, d.updated_at, \
     d.item_id, d.sibling_rev, d.source_date, c.plain FROM chunks c \
     JOIN documents d ON d.id = c.doc_id \
     WHERE c.id = ?1 AND d.deleted_at IS NULL AND c.revision = d.revision";
/// Where [`PASSAGE_HIT_SQL`]'s sealed plain text is.
const PASSAGE_HIT_PLAIN_COLUMN: usize = 15;

/// The live-chunk listing ([`Store::live_chunk_listing`]): documents scanned
/// once (`CROSS JOIN` keeps them the outer loop whatever the statistics),
/// each one's chunks found in the covering index.
const LIVE_DOCUMENTS_SQL: &str = "SELECT id, revision FROM documents WHERE deleted_at IS NULL";
/// Every chunk's document, revision and id, in the index's own order
/// (covering: no chunk row is read).
const CHUNKS_BY_DOC_REVISION_SQL: &str =
    "SELECT doc_id, revision, id FROM chunks INDEXED BY chunks_by_doc_revision";

/// A live memoria-owned document, in SQL (the home page's list, issue 30):
/// not deleted, no sibling provenance (a row with both `item_id` and
/// `sibling_rev` is a sibling's, [`Store::summary_from_row`]), and not a
/// derived artefact (`'artefact'` is [`APP_ARTEFACT`]: an artefact's
/// authority is its roots, §5.2). The list and its count share it, so the
/// count is what the pages list. It is the WHERE of the partial index
/// `documents_owned_by_update` (storage/schema.rs), word for word and with
/// no parameter, so SQLite reads the page and the count from that index.
pub(crate) const OWNED_DOCUMENTS_WHERE: &str =
    "deleted_at IS NULL AND (item_id IS NULL OR sibling_rev IS NULL) AND app <> 'artefact'";

/// The count of [`OWNED_DOCUMENTS_WHERE`]'s documents.
fn owned_documents_count_sql() -> String {
    format!("SELECT count(*) FROM documents WHERE {OWNED_DOCUMENTS_WHERE}")
}

/// A page (`?1` rows after the first `?2`) of [`OWNED_DOCUMENTS_WHERE`]'s
/// documents, most recently updated first: the order and the cut read the
/// partial index alone, the sealed columns are read for the page's rows only.
fn owned_documents_sql() -> String {
    format!(
        "SELECT {} FROM documents WHERE id IN ({}) ORDER BY updated_at DESC, id",
        Store::SUMMARY_COLUMNS,
        owned_document_ids_sql()
    )
}

/// The ids of [`owned_documents_sql`]'s page, in its order.
fn owned_document_ids_sql() -> String {
    format!(
        "SELECT id FROM documents WHERE {OWNED_DOCUMENTS_WHERE} \
         ORDER BY updated_at DESC, id LIMIT ?1 OFFSET ?2"
    )
}

/// A document's chunks' vectors go with its chunks, in the same
/// transaction (§7.4: a deletion or retirement removes the vector too).
const VECTORS_OF_DOCUMENT_DELETE_SQL: &str =
    "DELETE FROM chunk_vectors WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id = ?1)";

impl Store {
    /// Ingests one document (§5.2): creates it, revises it, or leaves it as is.
    ///
    /// The document is chunked ([`crate::search::chunk`]), every chunk sealed, and the
    /// whole change committed in one transaction. Unchanged content (same
    /// keyed `external_id` as the live revision) writes nothing.
    ///
    /// # Errors
    /// [`ErrorKind::Empty`] if the body has no words; [`ErrorKind::Storage`] on a write failure.
    pub fn ingest(&mut self, doc: &NewDocument, now: i64) -> Result<IngestOutcome, Error> {
        self.ingest_chunked(doc, chunk::chunk(&doc.body), now)
    }

    /// [`Store::ingest`] of a document already chunked: `chunks` must be
    /// `chunk::chunk(&doc.body)` (decoding chunks a document for its title,
    /// [`crate::ingest::decode::Decoded::chunks`], and an import stores
    /// those rather than chunking the body again, issue 30).
    ///
    /// # Errors
    /// As [`Store::ingest`].
    pub fn ingest_chunked(
        &mut self,
        doc: &NewDocument,
        chunks: Vec<chunk::Chunk>,
        now: i64,
    ) -> Result<IngestOutcome, Error> {
        self.ingest_from(doc, None, APP_MEMORIA, chunks, None, now)
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
        self.ingest_from(
            doc,
            Some(provenance),
            APP_MEMORIA,
            chunk::chunk(&doc.body),
            None,
            now,
        )
    }

    /// The source key a sibling item is stored under.
    pub(super) fn sibling_source_key(app: &str, item_id: &str) -> String {
        format!("sibling:{app}:{item_id}")
    }

    /// Ingests one sibling spreadsheet at one revision (§8.7): its
    /// structure and region-row chunks, and its structure catalogue sealed
    /// beside them in the same transaction. `doc.body` is the S3 body text
    /// (what `external_id` is keyed on).
    ///
    /// # Errors
    /// As [`Store::ingest`].
    pub fn ingest_sheet(
        &mut self,
        doc: &NewDocument,
        provenance: &Provenance,
        sheet: crate::storage::store::ChunkedSheet,
        now: i64,
    ) -> Result<IngestOutcome, Error> {
        self.ingest_from(
            doc,
            Some(provenance),
            APP_MEMORIA,
            sheet.chunks,
            Some(&sheet.catalogue),
            now,
        )
    }

    /// Ingests `doc` as [`Store::ingest`] does, as `chunks` (and, for a
    /// sheet, its structure `catalogue`, §8.7); a document with no
    /// `provenance` is stored under `owner` (`memoria`, or `artefact` for a
    /// derived artefact's text, §5.2).
    pub(super) fn ingest_from(
        &mut self,
        doc: &NewDocument,
        provenance: Option<&Provenance>,
        owner: &str,
        chunks: Vec<chunk::Chunk>,
        catalogue: Option<&crate::storage::store::Catalogue>,
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
            None => (owner, None, None),
        };
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
            .prepare_cached(
                "SELECT id, revision, external_id, deleted_at, sibling_rev FROM documents \
                 WHERE source_fp = ?1",
            )?
            .query_row(params![&source_fp[..]], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
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
            let mut stmt = tx.prepare_cached("SELECT id FROM chunks WHERE doc_id = ?1")?;
            for row in stmt.query_map(params![&id], |r| r.get::<_, i64>(0))? {
                removed.push(row?);
            }
        }
        execute_cached(&tx, VECTORS_OF_DOCUMENT_DELETE_SQL, params![&id])?;
        execute_cached(&tx, "DELETE FROM chunks WHERE doc_id = ?1", params![&id])?;

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
        let source_date = own_date(doc, provenance.is_some(), owner).map(|d| {
            self.sealer.seal(
                Purpose::DocumentDate,
                &format!("documents/{id}/date"),
                d.to_cell().as_bytes(),
            )
        });
        if status == IngestStatus::Created {
            execute_cached(
                &tx,
                "INSERT INTO documents(id, source_fp, external_id, app, revision, title, path, \
                 chunk_count, created_at, updated_at, deleted_at, item_id, sibling_rev, \
                 source_date) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, NULL, ?10, ?11, ?12)",
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
                    sibling_rev,
                    source_date
                ],
            )?;
        } else {
            execute_cached(
                &tx,
                "UPDATE documents SET external_id = ?2, revision = ?3, title = ?4, path = ?5, \
                 chunk_count = ?6, updated_at = ?7, deleted_at = NULL, sibling_rev = ?8, \
                 source_date = ?9 WHERE id = ?1",
                params![
                    &id,
                    &external_id[..],
                    revision,
                    title,
                    path,
                    chunks.len() as i64,
                    now,
                    sibling_rev,
                    source_date
                ],
            )?;
        }

        Store::write_catalogue(&self.sealer, &tx, &id, revision, catalogue)?;
        let mut added = Vec::with_capacity(chunks.len());
        let form = TextForm::of_source(&doc.path, provenance.is_some());
        for (c, chunk_id) in chunks.iter().zip(Store::next_chunk_ids(&tx, chunks.len())?) {
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
            // What the index reads, and what a snippet is cut from, worked
            // out once here rather than on every search page that shows the
            // passage (issue 30), from one parse of the passage where
            // nothing in it is hidden (`visible_and_plain`).
            let (index_text, snippet_text) = form.index_and_plain_text(&c.text, c.ordinal == 0);
            let plain = snippet_text.map(|plain| {
                self.sealer.seal(
                    Purpose::Chunk,
                    &format!("chunks/{chunk_id}/plain"),
                    plain.as_bytes(),
                )
            });
            execute_cached(
                &tx,
                "INSERT INTO chunks(id, doc_id, revision, ordinal, body, trail, plain) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    chunk_id,
                    &id,
                    revision,
                    c.ordinal as i64,
                    body,
                    trail,
                    plain
                ],
            )?;
            added.push(IndexedChunk {
                chunk_id,
                title: doc.title.clone(),
                trail: c.trail.join(" > "),
                body: index_text.into_owned(),
            });
        }
        Store::bump_seq(&tx)?;
        crashpoint("ingest:before-commit", &self.path);
        tx.commit()?;
        crashpoint("ingest:after-commit", &self.path);
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
            tx.execute(VECTORS_OF_DOCUMENT_DELETE_SQL, params![&t.doc_id])?;
            tx.execute("DELETE FROM chunks WHERE doc_id = ?1", params![&t.doc_id])?;
            Store::write_catalogue(&self.sealer, &tx, &t.doc_id, t.revision, None)?;
            tx.execute(
                "UPDATE documents SET deleted_at = ?2, chunk_count = 0, \
                 title = ?3, path = ?3, source_date = NULL WHERE id = ?1",
                params![&t.doc_id, t.at, Vec::<u8>::new()],
            )?;
            applied.deleted = true;
        }
        Store::bump_seq(&tx)?;
        tx.commit()?;
        Ok(applied)
    }

    /// The tombstones this database holds with a sequence above `seq`, in
    /// order: what the durable log must vouch for at wake (§7.4).
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

    pub(super) fn summary_from_row(&self, r: &rusqlite::Row<'_>) -> Result<DocumentSummary, Error> {
        self.summary_from_row_at(r, 0)
    }

    /// As [`Store::summary_from_row`], with [`Store::SUMMARY_COLUMNS`]
    /// starting at column `at` of the row.
    fn summary_from_row_at(
        &self,
        r: &rusqlite::Row<'_>,
        at: usize,
    ) -> Result<DocumentSummary, Error> {
        let id: String = r.get(at)?;
        let title: Vec<u8> = r.get(at + 3)?;
        let path: Vec<u8> = r.get(at + 4)?;
        let app: String = r.get(at + 1)?;
        let item_id: Option<String> = r.get(at + 8)?;
        let sibling_rev: Option<String> = r.get(at + 9)?;
        let source_date: Option<Vec<u8>> = r.get(at + 10)?;
        let updated_at: i64 = r.get(at + 7)?;
        let date = self.open_date(&id, source_date.as_deref(), updated_at)?;
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
            revision: r.get(at + 2)?,
            chunk_count: r.get(at + 5)?,
            created_at: r.get(at + 6)?,
            updated_at,
            date,
            id,
        })
    }

    const SUMMARY_COLUMNS: &'static str = "id, app, revision, title, path, chunk_count, created_at, updated_at, item_id, sibling_rev, \
         source_date";

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

    /// How many live memoria-owned documents the store holds
    /// ([`OWNED_DOCUMENTS_WHERE`]): a count, nothing opened (issue 30).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn owned_documents_count(&self) -> Result<u64, Error> {
        let sql = owned_documents_count_sql();
        let n: i64 = self
            .conn
            .prepare_cached(&sql)?
            .query_row([], |r| r.get(0))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// At most `limit` live memoria-owned documents after the first
    /// `offset`, in [`Store::documents`]' order (most recently updated
    /// first, then by id): only these rows' titles and paths are opened
    /// (issue 30: the home page opened every title of the store).
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn owned_documents(
        &self,
        limit: usize,
        offset: u64,
    ) -> Result<Vec<DocumentSummary>, Error> {
        let sql = owned_documents_sql();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(params![limit, offset])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(self.summary_from_row(r)?);
        }
        Ok(out)
    }

    pub(super) fn open_passage(
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

    /// Every live chunk's row id with its document's id, in chunk order:
    /// what a brief files under scopes (`brief-organisation-read.md` §1).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot read.
    pub fn live_chunk_documents(&self) -> Result<Vec<(i64, String)>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.doc_id FROM chunks c JOIN documents d ON d.id = c.doc_id \
             WHERE d.deleted_at IS NULL AND c.revision = d.revision ORDER BY c.id",
        )?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<(i64, String)>, _>>()?;
        Ok(rows)
    }

    /// The document chunk `chunk_id` belongs to, live or not, or `None` if
    /// no such chunk is stored: one indexed row, nothing opened. What a
    /// brief asks of each ranked row to file it under a scope
    /// (`brief-organisation-read.md` §1); the passage itself is then opened
    /// by [`Store::passage_hit`], which applies §4.2 fact 2.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if the row cannot be read.
    pub fn chunk_document(&self, chunk_id: i64) -> Result<Option<String>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT doc_id FROM chunks WHERE id = ?1")?;
        Ok(stmt.query_row(params![chunk_id], |r| r.get(0)).optional()?)
    }

    /// A live document's first passage (ordinal 0), opened, or `None`: the
    /// one row [`Store::passages`] would give first, without opening the rest.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn first_passage(&self, id: &str) -> Result<Option<Passage>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.ordinal, c.body, c.trail FROM chunks c \
             JOIN documents d ON d.id = c.doc_id \
             WHERE c.doc_id = ?1 AND d.deleted_at IS NULL AND c.revision = d.revision \
             AND c.ordinal = 0",
        )?;
        let row: Option<(i64, i64, Vec<u8>, Vec<u8>)> = stmt
            .query_row(params![id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()?;
        row.map(|(c, o, body, trail)| self.open_passage(c, o, &body, &trail))
            .transpose()
    }

    /// Every live document's id and recorded path, opened, and whether it
    /// is a sibling's item: what a brief files documents under scopes by
    /// (`brief-organisation-read.md` §1), without opening every title as
    /// [`Store::documents`] does (issue 30). A derived artefact is not
    /// listed: it is in no brief, its authority being its roots (§5.2),
    /// which only the search page rules.
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn document_paths(&self) -> Result<Vec<(String, String, bool)>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, path, item_id IS NOT NULL AND sibling_rev IS NOT NULL \
             FROM documents WHERE deleted_at IS NULL AND app != ?1",
        )?;
        let mut rows = stmt.query(params![super::APP_ARTEFACT])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id: String = r.get(0)?;
            let sealed: Vec<u8> = r.get(1)?;
            let path =
                self.sealer
                    .open_string(Purpose::Path, &format!("documents/{id}/path"), &sealed)?;
            out.push((id, path, r.get(2)?));
        }
        Ok(out)
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
        // One statement for the chunk and its document (issue 30: a page
        // of 20 ran 40).
        let mut stmt = self.conn.prepare_cached(PASSAGE_HIT_SQL)?;
        let mut rows = stmt.query(params![chunk_id])?;
        let Some(r) = rows.next()? else {
            return Ok(None);
        };
        // The sealed cells are opened where the row holds them, not copied out first.
        let body = r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
        let trail = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        let passage = self.open_passage(r.get(0)?, r.get(1)?, body, trail)?;
        let document = self.summary_from_row_at(r, 4)?;
        let plain = match document.text_form() {
            TextForm::Plain => None,
            TextForm::Markdown => Some(
                match r
                    .get_ref(PASSAGE_HIT_PLAIN_COLUMN)?
                    .as_blob_or_null()
                    .map_err(rusqlite::Error::from)?
                {
                    Some(sealed) => self.sealer.open_string(
                        Purpose::Chunk,
                        &format!("chunks/{}/plain", passage.chunk_id),
                        sealed,
                    )?,
                    // A row written before schema 4: worked out here, by
                    // the function its cell would have been written with.
                    None => plain_text(&passage.body, passage.ordinal == 0),
                },
            ),
        };
        Ok(Some(PassageHit {
            passage,
            document,
            plain,
        }))
    }

    /// Every live chunk, opened, for rebuilding the index (§7.4).
    ///
    /// # Errors
    /// As [`Store::document`].
    pub fn live_chunks(&self) -> Result<Vec<IndexedChunk>, Error> {
        let mut out = Vec::new();
        for doc in self.documents()? {
            let form = doc.text_form();
            for p in self.passages(&doc.id)? {
                let body = match form.index_text(&p.body, p.ordinal == 0) {
                    Cow::Borrowed(_) => p.body,
                    Cow::Owned(visible) => visible,
                };
                out.push(IndexedChunk {
                    chunk_id: p.chunk_id,
                    title: doc.title.clone(),
                    trail: p.trail.join(" > "),
                    body,
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
        Ok(self.live_chunk_listing()?.0)
    }

    /// Ids of every live chunk, ascending, and how many live documents hold
    /// them: the documents table is read once, then the
    /// `chunks_by_doc_revision` index once, in its own order, and the two
    /// merged here. The index covers the query, so no chunk row (no sealed body)
    /// is read. What a wake needs (issue 11). Probing the index once per
    /// document, as this once did, visits its leaves in the documents'
    /// order, not theirs: at 90,000 chunks the 4.6 MB index was read
    /// from disk five times over (22.9 MB of a wake's 25.6 MB from the
    /// database). A live document always has a chunk (an ingest with none
    /// is refused), so the document count is exact.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn live_chunk_listing(&self) -> Result<(Vec<i64>, u64), Error> {
        let mut live: Vec<(String, i64)> = Vec::new();
        let mut docs = self.conn.prepare(LIVE_DOCUMENTS_SQL)?;
        let mut rows = docs.query([])?;
        while let Some(r) = rows.next()? {
            live.push((r.get(0)?, r.get(1)?));
        }
        // The index is in `doc_id` order (SQLite's BINARY collation, byte
        // order, as `str`'s own): a merge join, no hashing per chunk.
        live.sort_unstable();
        let (mut ids, mut held, mut at) = (Vec::new(), 0u64, 0usize);
        let mut last_held: Option<usize> = None;
        let mut chunks = self.conn.prepare(CHUNKS_BY_DOC_REVISION_SQL)?;
        let mut rows = chunks.query([])?;
        while let Some(r) = rows.next()? {
            let doc_id = r.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?;
            while live.get(at).is_some_and(|(id, _)| id.as_str() < doc_id) {
                at += 1;
            }
            let Some((id, revision)) = live.get(at) else {
                break;
            };
            if id == doc_id && *revision == r.get::<_, i64>(1)? {
                ids.push(r.get(2)?);
                if last_held != Some(at) {
                    last_held = Some(at);
                    held += 1;
                }
            }
        }
        ids.sort_unstable();
        Ok((ids, held))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::seal::Dek;

    fn store(dir: &std::path::Path) -> Store {
        Store::open(dir, Sealer::new(&Dek::from_bytes([5; 32]))).unwrap()
    }

    fn doc(key: &str, body: &str) -> NewDocument {
        NewDocument {
            source_key: key.to_string(),
            title: "t".to_string(),
            path: key.to_string(),
            body: body.to_string(),
            date: None,
        }
    }

    #[test]
    fn the_live_chunk_listing_scans_the_documents_once_and_the_index_once_and_no_chunk_row() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        let plan = |sql: &str| -> Vec<String> {
            let mut stmt = s
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            stmt.query_map([], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(plan(LIVE_DOCUMENTS_SQL), ["SCAN documents"]);
        let chunks = plan(CHUNKS_BY_DOC_REVISION_SQL);
        assert_eq!(
            chunks,
            ["SCAN chunks USING COVERING INDEX chunks_by_doc_revision"],
            "the chunks come from one scan of the index, never their rows (sealed bodies)"
        );
    }

    #[test]
    fn the_home_pages_count_and_page_read_the_owned_documents_partial_index_and_sort_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path());
        assert!(
            OWNED_DOCUMENTS_WHERE.contains(&format!("app <> '{APP_ARTEFACT}'")),
            "the index's WHERE names the artefact app as the store does"
        );
        assert!(
            crate::storage::schema::SCHEMA.contains(&format!("WHERE {OWNED_DOCUMENTS_WHERE};")),
            "the partial index's WHERE is the list's, word for word"
        );
        let plan = |sql: &str| -> Vec<String> {
            let mut stmt = s
                .conn
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
                .unwrap();
            let page: [&dyn rusqlite::ToSql; 2] = [&50, &0];
            stmt.query_map(&page[..stmt.parameter_count()], |r| r.get::<_, String>(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        let count = plan(&owned_documents_count_sql());
        assert_eq!(
            count,
            ["SCAN documents USING COVERING INDEX documents_owned_by_update"]
        );
        let ids = plan(&owned_document_ids_sql());
        assert_eq!(
            ids,
            ["SCAN documents USING COVERING INDEX documents_owned_by_update"],
            "the page's ids are read in the index's order: no document row read, nothing sorted"
        );
        let page = plan(&owned_documents_sql());
        assert!(
            page.iter()
                .any(|step| step == "SCAN documents USING COVERING INDEX documents_owned_by_update"),
            "{page:?}"
        );
        assert!(
            page.iter()
                .any(|step| step.contains("USING INDEX sqlite_autoindex_documents_1 (id=?)")),
            "only the page's rows are read, by id: {page:?}"
        );
    }

    #[test]
    fn the_live_chunk_listing_counts_live_documents_and_their_current_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let a = s.ingest(&doc("a", "# A\n\none\n\n# B\n\ntwo"), 1).unwrap();
        let b = s.ingest(&doc("b", "three"), 1).unwrap();
        let b2 = s.ingest(&doc("b", "three, revised"), 2).unwrap();
        let (ids, docs) = s.live_chunk_listing().unwrap();
        let mut want: Vec<i64> = a
            .added
            .iter()
            .chain(&b2.added)
            .map(|c| c.chunk_id)
            .collect();
        want.sort_unstable();
        assert_eq!((ids.clone(), docs), (want, 2));
        assert!(
            !ids.contains(&b.added[0].chunk_id),
            "the old revision's chunk is gone"
        );
        assert_eq!(s.counts().unwrap(), (2, 3));
    }

    /// Every fixture of the embedded corpus ingested as an import would
    /// (decoded, then stored under its file name); the outcomes.
    fn fixture_store(s: &mut Store) -> Vec<IngestOutcome> {
        crate::demo::FIXTURE_CORPUS
            .iter()
            .map(|(name, bytes)| {
                let read = crate::ingest::decode::decode(name, bytes).unwrap();
                let doc = NewDocument {
                    source_key: format!("fixture:{name}"),
                    title: read.title,
                    path: (*name).to_string(),
                    body: read.body,
                    date: None,
                };
                s.ingest(&doc, 1).unwrap()
            })
            .collect()
    }

    /// Each live chunk's snippet text as a search page cuts it now (the
    /// sealed cell) and as it did before (`plain_text` of the body on every
    /// request), then a snippet of each for every query in `queries` and
    /// for one word of the passage itself: the rows that differ.
    fn old_and_new_snippets_differ(s: &Store, ids: &[i64], queries: &[&str]) -> Vec<String> {
        let mut differ = Vec::new();
        for &id in ids {
            let ph = s.passage_hit(id).unwrap().expect("a live chunk opens");
            let old = ph
                .document
                .text_form()
                .snippet_text(&ph.passage.body, ph.passage.ordinal == 0);
            if ph.snippet_text() != old {
                differ.push(format!("chunk {id}: the text"));
            }
            let own = old.split_whitespace().nth(2).unwrap_or("x").to_string();
            for q in queries.iter().copied().chain([own.as_str()]) {
                let Ok(crate::search::query::Query::Words(words)) = crate::search::query::parse(q)
                else {
                    continue;
                };
                let h = crate::search::highlight::Highlighter::new(&words);
                if h.snippet(ph.snippet_text()) != h.snippet(&old) {
                    differ.push(format!("chunk {id}: the snippet for {q:?}"));
                }
            }
        }
        differ
    }

    const FIXTURE_QUERIES: [&str; 6] = [
        "kettle",
        "deploy rollback",
        "budget 2026",
        "office phone number",
        "incident",
        "the",
    ];

    #[test]
    fn every_fixture_snippet_cut_from_the_stored_plain_text_is_byte_identical_to_the_parsed_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let outcomes = fixture_store(&mut s);
        let ids = s.live_chunk_ids().unwrap();
        assert!(ids.len() > 20, "only {} chunks", ids.len());
        let stored: i64 = s
            .conn
            .query_row(
                "SELECT count(*) FROM chunks WHERE plain IS NOT NULL",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let markdown = outcomes
            .iter()
            .zip(crate::demo::FIXTURE_CORPUS)
            .filter(|(_, (name, _))| TextForm::of_source(name, false) == TextForm::Markdown)
            .map(|(o, _)| o.added.len() as i64)
            .sum::<i64>();
        assert_eq!(
            stored, markdown,
            "every Markdown passage has its plain text sealed, a plain one none"
        );
        assert!(
            markdown < ids.len() as i64,
            "the corpus holds a plain text file"
        );
        assert_eq!(
            old_and_new_snippets_differ(&s, &ids, &FIXTURE_QUERIES),
            Vec::<String>::new()
        );
    }

    /// The text each of `ids`' snippets is cut from, in order.
    fn snippet_texts(s: &Store, ids: &[i64]) -> Vec<String> {
        ids.iter()
            .map(|&id| {
                s.passage_hit(id)
                    .unwrap()
                    .unwrap()
                    .snippet_text()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_passage_stored_before_schema_four_gives_the_same_snippet_text_worked_out_as_it_opens() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        fixture_store(&mut s);
        let ids = s.live_chunk_ids().unwrap();
        let new = snippet_texts(&s, &ids);
        drop(s);
        // The store as schema 3 wrote it, then opened by this build.
        let conn = Connection::open(dir.path().join(DB_FILE_NAME)).unwrap();
        conn.execute_batch(
            "ALTER TABLE chunks DROP COLUMN plain;
             UPDATE meta SET value = 3 WHERE key = 'schema_version';",
        )
        .unwrap();
        drop(conn);
        let s = store(dir.path());
        assert_eq!(meta_get(&s.conn, "schema_version").unwrap(), SCHEMA_VERSION);
        let old = snippet_texts(&s, &ids);
        assert_eq!(old, new);
        assert_eq!(
            old_and_new_snippets_differ(&s, &ids, &FIXTURE_QUERIES),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_plain_text_cell_moved_to_another_chunk_or_column_fails_to_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = store(dir.path());
        let a = s
            .ingest(&doc("a.md", "# A\n\nThe *kettle* is on."), 1)
            .unwrap();
        let b = s
            .ingest(&doc("b.md", "# B\n\nThe `oven` is off."), 1)
            .unwrap();
        let (a, b) = (a.added[0].chunk_id, b.added[0].chunk_id);
        let shown = s
            .passage_hit(a)
            .unwrap()
            .unwrap()
            .snippet_text()
            .to_string();
        assert!(shown.ends_with("The kettle is on."), "{shown}");
        let sealed: Vec<u8> = s
            .conn
            .query_row("SELECT plain FROM chunks WHERE id = ?1", params![a], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(!sealed.windows(6).any(|w| w == b"kettle"), "sealed at rest");
        s.conn
            .execute(
                "UPDATE chunks SET plain = ?1 WHERE id = ?2",
                params![&sealed, b],
            )
            .unwrap();
        assert_eq!(s.passage_hit(b).unwrap_err().kind(), ErrorKind::Seal);
        s.conn
            .execute("UPDATE chunks SET body = plain WHERE id = ?1", params![a])
            .unwrap();
        assert_eq!(s.passage_hit(a).unwrap_err().kind(), ErrorKind::Seal);
    }

    #[test]
    fn a_store_with_the_old_chunk_index_is_given_the_covering_one_on_open() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = store(dir.path());
            s.conn
                .execute_batch(
                    "DROP INDEX chunks_by_doc_revision; \
                     CREATE INDEX chunks_by_doc ON chunks(doc_id, ordinal);",
                )
                .unwrap();
        }
        let s = store(dir.path());
        let names: Vec<String> = s
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'chunks'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(names, ["chunks_by_doc_revision"]);
    }
}
