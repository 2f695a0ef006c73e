//! One sealed embedding per live chunk, the chunks still awaiting theirs, and the embedding canary's sealed vectors (§3.1, §7.2, §8.2, issue 12).
//!
//! A vector is stored as the dense index's own row encoding
//! ([`crate::dense::StoredVector::to_bytes`]), sealed under
//! [`Purpose::Vector`] with the chunk's row in the AAD, so a vector moved to
//! another chunk's row fails to open. The table is also the durable
//! embedding queue: a live chunk with no row here awaits its vector, so an
//! ingest whose embedding failed keeps its lexical passages and is embedded
//! later, and nothing is lost across a restart. A chunk's vector is deleted
//! in the same transaction as the chunk (`store/documents.rs`).

use rusqlite::params;

use super::*;

/// Live chunks with no vector after a chunk id, ascending: the embedding
/// queue, read from a cursor so a drain walks the chunks once.
const AWAITING_AFTER_SQL: &str = "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id \
     WHERE c.id > ?1 AND c.revision = d.revision AND d.deleted_at IS NULL \
     AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id) \
     ORDER BY c.id LIMIT ?2";

/// Whether one chunk is live and has no vector.
const AWAITING_ONE_SQL: &str = "SELECT 1 FROM chunks c JOIN documents d ON d.id = c.doc_id \
     WHERE c.id = ?1 AND c.revision = d.revision AND d.deleted_at IS NULL \
     AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)";

/// How many live chunks have no vector.
const AWAITING_COUNT_SQL: &str = "SELECT count(*) FROM documents d \
     CROSS JOIN chunks c INDEXED BY chunks_by_doc_revision \
     WHERE c.doc_id = d.id AND c.revision = d.revision AND d.deleted_at IS NULL \
     AND NOT EXISTS (SELECT 1 FROM chunk_vectors v WHERE v.chunk_id = c.id)";

/// Every live chunk's sealed vector.
const LIVE_VECTORS_SQL: &str = "SELECT v.chunk_id, v.vec FROM chunk_vectors v \
     JOIN chunks c ON c.id = v.chunk_id JOIN documents d ON d.id = c.doc_id \
     WHERE c.revision = d.revision AND d.deleted_at IS NULL ORDER BY v.chunk_id";

fn vector_row(chunk_id: i64) -> String {
    format!("chunks/{chunk_id}/vector")
}

impl Store {
    /// Seals and stores chunks' vectors, each given as the dense index's row
    /// encoding, in one transaction. A chunk that is gone (deleted or
    /// superseded while its vector was being computed) stores nothing.
    /// Replaces a vector a chunk already has. Returns, per input, whether
    /// it was stored. Bumps [`Store::vector_seq`] once per vector stored.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure (nothing is stored).
    pub fn put_vectors(&mut self, vectors: &[(i64, Vec<u8>)]) -> Result<Vec<bool>, Error> {
        let tx = self.conn.transaction()?;
        let mut stored = Vec::with_capacity(vectors.len());
        {
            let mut insert = tx.prepare(
                "INSERT OR REPLACE INTO chunk_vectors(chunk_id, vec) \
                 SELECT c.id, ?2 FROM chunks c JOIN documents d ON d.id = c.doc_id \
                 WHERE c.id = ?1 AND c.revision = d.revision AND d.deleted_at IS NULL",
            )?;
            for (chunk_id, encoded) in vectors {
                let sealed = self
                    .sealer
                    .seal(Purpose::Vector, &vector_row(*chunk_id), encoded);
                stored.push(insert.execute(params![chunk_id, sealed])? == 1);
            }
        }
        let n = stored.iter().filter(|s| **s).count() as i64;
        if n > 0 {
            let next = meta_get(&tx, "vector_seq")? + n;
            meta_set(&tx, "vector_seq", next)?;
        }
        tx.commit()?;
        Ok(stored)
    }

    /// The vector counter: bumped by every vector stored. A dense snapshot
    /// records the value it is current through; deletions bump `store_seq`
    /// instead, as they do for the lexical snapshot.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn vector_seq(&self) -> Result<i64, Error> {
        meta_get(&self.conn, "vector_seq")
    }

    /// Up to `limit` live chunks with an id above `after` that have no
    /// vector yet, ascending by id: the embedding queue from a cursor.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn chunks_awaiting_vectors(&self, after: i64, limit: usize) -> Result<Vec<i64>, Error> {
        let mut stmt = self.conn.prepare_cached(AWAITING_AFTER_SQL)?;
        let rows = stmt.query_map(params![after, limit as i64], |r| r.get(0))?;
        Ok(rows.collect::<Result<Vec<i64>, _>>()?)
    }

    /// Which of `ids` are live chunks still awaiting a vector, ascending.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn still_awaiting_vectors(&self, ids: &[i64]) -> Result<Vec<i64>, Error> {
        let mut stmt = self.conn.prepare_cached(AWAITING_ONE_SQL)?;
        let mut out = Vec::new();
        for id in ids {
            if stmt.exists(params![id])? {
                out.push(*id);
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// How many live chunks await a vector (the sources page says it).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn count_awaiting_vectors(&self) -> Result<u64, Error> {
        let n: i64 = self.conn.query_row(AWAITING_COUNT_SQL, [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Every live chunk's vector, opened, ascending by chunk id: what the
    /// dense index is rebuilt from when its snapshot is missing or behind.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure; [`ErrorKind::Seal`] if a
    /// vector does not open under this DEK at its row.
    pub fn live_vectors(&self) -> Result<Vec<(i64, Vec<u8>)>, Error> {
        let mut stmt = self.conn.prepare(LIVE_VECTORS_SQL)?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let sealed: Vec<u8> = r.get(1)?;
            let plain = self
                .sealer
                .open(Purpose::Vector, &vector_row(id), &sealed)?;
            out.push((id, plain));
        }
        Ok(out)
    }

    /// The text a chunk is embedded from: its document's title, its heading
    /// trail and its body, one per line (the same three fields the lexical
    /// index holds). `None` if the chunk is no longer live.
    ///
    /// # Errors
    /// As [`Store::passage_hit`].
    pub fn embedding_text(&self, chunk_id: i64) -> Result<Option<String>, Error> {
        Ok(self.passage_hit(chunk_id)?.map(|hit| {
            let trail = hit.passage.trail.join(" > ");
            format!("{}\n{}\n{}", hit.document.title, trail, hit.passage.body)
        }))
    }
}

fn canary_row(idx: usize) -> String {
    format!("canary/{idx}")
}

impl Store {
    /// Records the canary's vectors (§8.2): `vectors[i]` is sentence `i`'s,
    /// as little-endian f32 bytes, embedded by `model`; sealed under
    /// [`Purpose::Canary`]. Replaces any recorded before, in one transaction.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a write failure.
    pub fn put_canary(&mut self, model: &str, vectors: &[Vec<u8>]) -> Result<(), Error> {
        let tx = self.conn.transaction()?;
        tx.execute("DELETE FROM canary", [])?;
        for (idx, v) in vectors.iter().enumerate() {
            let sealed = self.sealer.seal(Purpose::Canary, &canary_row(idx), v);
            tx.execute(
                "INSERT INTO canary(idx, model, vec) VALUES (?1, ?2, ?3)",
                params![idx as i64, model, sealed],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The canary's recorded vectors, in sentence order, with the model id
    /// that embedded them; empty if none was recorded.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure; [`ErrorKind::Seal`] if a
    /// vector does not open at its row.
    pub fn canary(&self) -> Result<Vec<(String, Vec<u8>)>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT idx, model, vec FROM canary ORDER BY idx")?;
        let mut rows = stmt.query([])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let idx: i64 = r.get(0)?;
            let sealed: Vec<u8> = r.get(2)?;
            let plain = self
                .sealer
                .open(Purpose::Canary, &canary_row(idx as usize), &sealed)?;
            out.push((r.get(1)?, plain));
        }
        Ok(out)
    }
}
