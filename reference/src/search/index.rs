//! The lexical index: an in-memory, contentless FTS5 table ranked by BM25 (§3.1, §7.1, §7.2).
//!
//! FTS5 postings are plaintext terms, so this table never lives in the
//! database file (§3.1). It is an in-memory SQLite database that exists only
//! while memoria is awake, and it is persisted only as one sealed snapshot
//! blob (see [`crate::storage::snapshot`]). The table is contentless
//! (`content=''`, with `contentless_delete=1` so a deletion can remove a row):
//! it holds postings but no copy of the text, which §7.2 measured at a quarter
//! of the default table's size. The price is that FTS5's `snippet()` cannot
//! work, so highlights are built from the sealed chunk by [`crate::search::highlight`].
//!
//! Rows are keyed by the chunk's row id in the store. Three columns are
//! indexed: the document title, the chunk's heading trail, and its body.

use rusqlite::{Connection, MAIN_DB, params};

use crate::error::{Error, ErrorKind};

/// BM25 column weights: title, heading trail, body. A word in a title or a
/// heading says more about a passage than the same word in its body.
pub const BM25_WEIGHTS: (f64, f64, f64) = (4.0, 2.0, 1.0);

/// The FTS5 schema: contentless, porter over unicode61, deletable (§7.2).
const SCHEMA: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(\
    title, trail, body, \
    content='', contentless_delete=1, \
    tokenize='porter unicode61')";

/// One hit: a chunk row id and its BM25 score (lower is better, as FTS5 reports it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The chunk's row id in the store.
    pub chunk_id: i64,
    /// FTS5's `bm25()` value; more negative ranks higher.
    pub score: f64,
}

/// The in-memory FTS5 index.
pub struct LexicalIndex {
    conn: Connection,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex").finish_non_exhaustive()
    }
}

impl LexicalIndex {
    /// An empty index.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot create the in-memory table
    /// (for example, a build without FTS5).
    pub fn new() -> Result<LexicalIndex, Error> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch("PRAGMA temp_store = MEMORY;")?;
        conn.execute_batch(SCHEMA)?;
        Ok(LexicalIndex { conn })
    }

    /// Loads an index from bytes produced by [`LexicalIndex::serialize`].
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if the bytes are not a SQLite database holding the FTS table.
    pub fn deserialize(bytes: &[u8]) -> Result<LexicalIndex, Error> {
        let mut conn = Connection::open_in_memory()?;
        conn.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), false)
            .map_err(|e| Error::new(ErrorKind::Snapshot, format!("index image: {e}")))?;
        conn.execute_batch("PRAGMA temp_store = MEMORY;")?;
        let ok: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'fts' AND type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| Error::new(ErrorKind::Snapshot, format!("index image: {e}")))?;
        if ok != 1 {
            return Err(Error::new(
                ErrorKind::Snapshot,
                "index image holds no FTS table",
            ));
        }
        Ok(LexicalIndex { conn })
    }

    /// The whole index as one SQLite database image, for sealing.
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if SQLite cannot serialise the database.
    pub fn serialize(&self) -> Result<Vec<u8>, Error> {
        let data = self
            .conn
            .serialize(MAIN_DB)
            .map_err(|e| Error::new(ErrorKind::Snapshot, format!("serialise index: {e}")))?;
        Ok(data.to_vec())
    }

    /// Indexes one chunk under its row id, replacing any row with that id.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the insert.
    pub fn insert(&self, chunk_id: i64, title: &str, trail: &str, body: &str) -> Result<(), Error> {
        self.conn
            .execute("DELETE FROM fts WHERE rowid = ?1", params![chunk_id])?;
        self.conn.execute(
            "INSERT INTO fts(rowid, title, trail, body) VALUES (?1, ?2, ?3, ?4)",
            params![chunk_id, title, trail, body],
        )?;
        Ok(())
    }

    /// Removes one chunk. Removing an absent row is not an error.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the delete.
    pub fn delete(&self, chunk_id: i64) -> Result<(), Error> {
        self.conn
            .execute("DELETE FROM fts WHERE rowid = ?1", params![chunk_id])?;
        Ok(())
    }

    /// Runs an already-sanitised FTS5 `MATCH` expression (see [`crate::search::query`]).
    ///
    /// Returns at most `limit` hits after skipping `offset`, best first.
    ///
    /// # Errors
    /// [`ErrorKind::Query`] if FTS5 rejects the expression. The message names
    /// SQLite's error code and never echoes the query; SQLite's own message
    /// (which may quote it) is not kept as the cause.
    pub fn search(&self, fts_query: &str, limit: usize, offset: usize) -> Result<Vec<Hit>, Error> {
        self.search_excluding(fts_query, limit, offset, &[])
    }

    /// As [`LexicalIndex::search`], with the chunks in `excluded` left out
    /// before ranking is cut: they are not counted against `limit` or
    /// `offset`, so the remaining chunks fill the page (§4.1 rule 1).
    ///
    /// # Errors
    /// As [`LexicalIndex::search`].
    pub fn search_excluding(
        &self,
        fts_query: &str,
        limit: usize,
        offset: usize,
        excluded: &[i64],
    ) -> Result<Vec<Hit>, Error> {
        let (wt, wr, wb) = BM25_WEIGHTS;
        let sql = format!(
            "SELECT rowid, bm25(fts, {wt:.1}, {wr:.1}, {wb:.1}) AS score FROM fts \
             WHERE fts MATCH ?1 AND rowid NOT IN (SELECT value FROM json_each(?4)) \
             ORDER BY score, rowid LIMIT ?2 OFFSET ?3"
        );
        let excluded = serde_json::to_string(excluded).expect("ids serialise");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt
            .query_map(
                params![fts_query, limit as i64, offset as i64, excluded],
                |r| {
                    Ok(Hit {
                        chunk_id: r.get(0)?,
                        score: r.get(1)?,
                    })
                },
            )
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>());
        // The cause is not kept: SQLite's message for an FTS5 parse error
        // quotes the query (§3.2). Its error code is content-free.
        rows.map_err(|e| {
            let code = e
                .sqlite_error_code()
                .map_or_else(|| "no SQLite code".to_string(), |c| format!("{c:?}"));
            Error::new(
                ErrorKind::Query,
                format!("the search engine could not run this query ({code})"),
            )
        })
    }

    /// How many chunks the index holds.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot count.
    pub fn len(&self) -> Result<u64, Error> {
        // A contentless table has no content to count; its docsize shadow
        // table has exactly one row per indexed row.
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM fts_docsize", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// True if the index holds no chunks.
    ///
    /// # Errors
    /// As [`LexicalIndex::len`].
    pub fn is_empty(&self) -> Result<bool, Error> {
        Ok(self.len()? == 0)
    }

    /// Every indexed chunk id, ascending. Used to check the index against the store.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot read the shadow table.
    pub fn chunk_ids(&self) -> Result<Vec<i64>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM fts_docsize ORDER BY id")?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<i64>, _>>()?;
        Ok(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_indexed_chunk_is_found_by_a_stemmed_word() {
        let idx = LexicalIndex::new().unwrap();
        idx.insert(7, "Office", "Phones", "Reception answers calls")
            .unwrap();
        let hits = idx.search("\"calling\"", 10, 0).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].chunk_id, 7);
    }

    #[test]
    fn excluded_chunks_take_no_slot_so_the_rest_fill_the_page() {
        let idx = LexicalIndex::new().unwrap();
        for id in 1..=6 {
            let body = if id <= 3 {
                "kettle kettle kettle"
            } else {
                "kettle"
            };
            idx.insert(id, "t", "", body).unwrap();
        }
        let top: Vec<i64> = idx
            .search("\"kettle\"", 3, 0)
            .unwrap()
            .iter()
            .map(|h| h.chunk_id)
            .collect();
        assert_eq!(top, [1, 2, 3]);
        let rest: Vec<i64> = idx
            .search_excluding("\"kettle\"", 3, 0, &[1, 2, 3])
            .unwrap()
            .iter()
            .map(|h| h.chunk_id)
            .collect();
        assert_eq!(rest, [4, 5, 6]);
    }

    #[test]
    fn a_deleted_chunk_is_not_found() {
        let idx = LexicalIndex::new().unwrap();
        idx.insert(1, "t", "", "descaling the coffee machine")
            .unwrap();
        idx.delete(1).unwrap();
        assert!(idx.search("\"coffee\"", 10, 0).unwrap().is_empty());
        assert!(idx.is_empty().unwrap());
    }

    #[test]
    fn the_index_survives_serialise_and_deserialise() {
        let idx = LexicalIndex::new().unwrap();
        idx.insert(3, "Budget", "Q3", "travel line item").unwrap();
        let bytes = idx.serialize().unwrap();
        let back = LexicalIndex::deserialize(&bytes).unwrap();
        assert_eq!(back.chunk_ids().unwrap(), vec![3]);
        assert_eq!(back.search("\"travel\"", 10, 0).unwrap()[0].chunk_id, 3);
    }

    #[test]
    fn garbage_is_not_an_index_image() {
        assert!(LexicalIndex::deserialize(b"not a database").is_err());
        assert!(LexicalIndex::deserialize(&[]).is_err());
    }

    #[test]
    fn the_contentless_table_keeps_no_copy_of_the_text() {
        let idx = LexicalIndex::new().unwrap();
        idx.insert(1, "t", "", "zebraquokka sentence here").unwrap();
        let n: i64 = idx
            .conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'fts_content'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0, "a contentless table has no _content shadow table");
    }

    #[test]
    fn a_malformed_match_expression_is_a_query_error() {
        let idx = LexicalIndex::new().unwrap();
        let err = idx.search("\"unterminated", 10, 0).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Query);
    }
}
