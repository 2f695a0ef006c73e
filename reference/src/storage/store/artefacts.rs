//! A derived artefact's text and record (§5.2): the text stored as a document of app `artefact`, the record (model, roots, built_from) beside it.
//!
//! [`ArtefactRecord`] and its [`Root`]s are defined here, where they are
//! kept, and named by `crate::artefact`, which rules them.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::*;

/// One root of an artefact (§5.2): the app that owns the source
/// (`memoria` for memoria-owned content, otherwise the sibling's app
/// name), the source's id (a sibling's item id, or memoria's document id)
/// and the revision the artefact was written from (a sibling's opaque
/// revision, or memoria's revision number as decimal text).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Root {
    /// The source's owner: `memoria` or a sibling app.
    pub owner: String,
    /// The source's id at its owner.
    pub id: String,
    /// The source's revision when the artefact was written.
    pub revision: String,
}

impl Root {
    /// True for a memoria-owned source.
    pub fn is_memoria(&self) -> bool {
        self.owner == APP_MEMORIA
    }
}

/// What the store keeps beside an artefact's text (§5.2, decision 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtefactRecord {
    /// The model id that wrote the text now stored (decision 4): named on
    /// every page that shows it.
    pub model: String,
    /// The flattened roots, sorted: what authorizes.
    pub roots: Vec<Root>,
    /// The artefacts (document ids) it was written from: what propagates.
    pub built_from: Vec<String>,
}

impl Store {
    /// Stores an artefact's text under `doc.source_key` as a document of
    /// app [`APP_ARTEFACT`] (chunked, sealed, revised as any document is),
    /// then its `record` beside it (§5.2, decision 4). A crash between the
    /// two leaves text with an older record or none, which the ruling
    /// withholds as a defect or regenerates: never text with a record that
    /// would pass for it.
    ///
    /// # Errors
    /// As [`Store::ingest`]; [`ErrorKind::Storage`] on the record's write.
    pub fn ingest_artefact(
        &mut self,
        doc: &NewDocument,
        record: &ArtefactRecord,
        now: i64,
    ) -> Result<IngestOutcome, Error> {
        let outcome = self.ingest_from(
            doc,
            None,
            APP_ARTEFACT,
            crate::search::chunk::chunk(&doc.body),
            None,
            now,
        )?;
        let roots = serde_json::to_string(&record.roots).expect("roots serialise");
        let built_from = serde_json::to_string(&record.built_from).expect("ids serialise");
        self.conn.execute(
            "INSERT INTO artefacts(doc_id, model, roots, built_from) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT(doc_id) DO UPDATE SET model = ?2, roots = ?3, built_from = ?4",
            params![&outcome.id, &record.model, roots, built_from],
        )?;
        Ok(outcome)
    }

    /// The record of artefact `doc_id`, or `None` if it has none or the
    /// stored one does not decode (total: a bad row is no record).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn artefact_record(&self, doc_id: &str) -> Result<Option<ArtefactRecord>, Error> {
        let row: Option<(String, String, String)> = self
            .conn
            .prepare_cached("SELECT model, roots, built_from FROM artefacts WHERE doc_id = ?1")?
            .query_row(params![doc_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        Ok(row.and_then(|(model, roots, built_from)| {
            let decoded = (
                serde_json::from_str(&roots),
                serde_json::from_str(&built_from),
            );
            match decoded {
                (Ok(roots), Ok(built_from)) => Some(ArtefactRecord {
                    model,
                    roots,
                    built_from,
                }),
                _ => {
                    tracing::error!(artefact = %doc_id, "an artefact's record does not decode");
                    None
                }
            }
        }))
    }

    /// The live artefact whose text is stored under `source_key`, if any.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn artefact_by_key(&self, source_key: &str) -> Result<Option<String>, Error> {
        let fp = self.source_fp(source_key);
        self.live_document_by_source_fp(&fp)
    }
}
