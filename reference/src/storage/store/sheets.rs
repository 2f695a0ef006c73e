//! A sheet's structure catalogue, sealed beside its chunks, and the sheets marked for re-ingest after a reformat (§8.7).
//!
//! [`Catalogue`], [`CatalogueCell`] and [`ChunkedSheet`] are defined here,
//! where they are sealed, and named by `crate::numeric::sheet`, which
//! makes them.

use rusqlite::{OptionalExtension, Transaction, params};
use serde::{Deserialize, Serialize};

use super::*;
use crate::search::chunk::Chunk;

/// One data cell of a header-plus-block region: the exact metadata the
/// numeric route looks slots up in (§8.7), sealed with the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogueCell {
    /// The tab's name.
    pub tab: String,
    /// 1-based row (A1 is row 1).
    pub row: u32,
    /// 1-based column.
    pub col: u32,
    /// The row label, as displayed.
    pub row_label: String,
    /// The column header, as displayed.
    pub column_header: String,
    /// The header's canonical period (`2024-06`, `2024`), if date-like.
    pub period: Option<String>,
    /// The cell's format code as indexed (`General` when none was given).
    pub format_code: String,
    /// The display string as indexed.
    pub display: String,
    /// The ordinal of the region-row chunk that states this cell.
    pub ordinal: u32,
}

/// The structure catalogue of one sheet at one revision (§8.7).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Catalogue {
    /// The sheet's title.
    pub title: String,
    /// Every data cell of every unambiguous region.
    pub cells: Vec<CatalogueCell>,
}

/// A sheet chunked: the passages and the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkedSheet {
    /// Structure chunks and region-row chunks, ordinals from 0.
    pub chunks: Vec<Chunk>,
    /// The catalogue.
    pub catalogue: Catalogue,
}

fn catalogue_row(doc_id: &str) -> String {
    format!("sheets/{doc_id}/catalogue")
}

impl Store {
    /// Writes (or, with `None`, removes) `doc_id`'s catalogue inside `tx`,
    /// sealed under the chunk purpose bound to its row. A write clears the
    /// document's re-ingest mark: this revision is what was fetched.
    pub(super) fn write_catalogue(
        sealer: &Sealer,
        tx: &Transaction<'_>,
        doc_id: &str,
        revision: i64,
        catalogue: Option<&Catalogue>,
    ) -> Result<(), Error> {
        execute_cached(
            tx,
            "DELETE FROM sheet_catalogues WHERE doc_id = ?1",
            params![doc_id],
        )?;
        execute_cached(
            tx,
            "DELETE FROM sheet_reingest WHERE doc_id = ?1",
            params![doc_id],
        )?;
        if let Some(c) = catalogue {
            let json = serde_json::to_vec(c).expect("a catalogue serialises");
            let sealed = sealer.seal(Purpose::Chunk, &catalogue_row(doc_id), &json);
            tx.execute(
                "INSERT INTO sheet_catalogues(doc_id, revision, catalogue) VALUES (?1, ?2, ?3)",
                params![doc_id, revision, sealed],
            )?;
        }
        Ok(())
    }

    /// The structure catalogue of live document `doc_id` at `revision`, or
    /// `None` (not a sheet, or another revision).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure; [`ErrorKind::Seal`] if the
    /// catalogue does not open or decode.
    pub fn sheet_catalogue(&self, doc_id: &str, revision: i64) -> Result<Option<Catalogue>, Error> {
        let sealed: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT catalogue FROM sheet_catalogues WHERE doc_id = ?1 AND revision = ?2",
                params![doc_id, revision],
                |r| r.get(0),
            )
            .optional()?;
        let Some(sealed) = sealed else {
            return Ok(None);
        };
        let json = self
            .sealer
            .open(Purpose::Chunk, &catalogue_row(doc_id), &sealed)?;
        serde_json::from_slice(&json)
            .map(Some)
            .map_err(|_| Error::new(ErrorKind::Seal, "sealed catalogue does not decode"))
    }

    /// The live sheet documents holding a catalogue, by id: what the numeric
    /// route looks slots up in (§8.7).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn sheet_document_ids(&self) -> Result<Vec<String>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT s.doc_id FROM sheet_catalogues s JOIN documents d ON d.id = s.doc_id \
             WHERE d.deleted_at IS NULL AND d.revision = s.revision ORDER BY s.doc_id",
        )?;
        let ids = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ids)
    }

    /// Marks `doc_id` (of `app`) for re-ingest (§8.7's re-certification
    /// arm): the app is marked for re-announce, and that announce refetches
    /// this item even at the revision memoria holds, since a format code
    /// can change without a new revision.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn mark_sheet_reingest(&self, app: &str, doc_id: &str) -> Result<(), Error> {
        self.conn.execute(
            "INSERT OR IGNORE INTO sheet_reingest(doc_id) VALUES (?1)",
            params![doc_id],
        )?;
        self.mark_reannounce(app)
    }

    /// Whether `doc_id` is marked for re-ingest.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn sheet_reingest_marked(&self, doc_id: &str) -> Result<bool, Error> {
        let n: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM sheet_reingest WHERE doc_id = ?1",
            params![doc_id],
            |r| r.get(0),
        )?;
        Ok(n > 0)
    }
}
