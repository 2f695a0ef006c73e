//! The dense half of an instance, with AI on: the matrix woken beside the lexical index, the embedding queue, and hybrid ranking (§3.1, §7, §7.4, issue 12).
//!
//! With AI off none of this runs: no matrix is loaded, nothing is queued
//! for a provider, and the ranking is BM25 alone (§8.1).
//!
//! - **At rest.** Each chunk's vector is sealed in the store
//!   ([`Store::put_vectors`], one row per chunk, deleted with the chunk), and
//!   the whole matrix is sealed beside each lexical snapshot under its own
//!   purpose key ([`snapshot::write_vectors_at`]), written before the
//!   lexical blob of the same generation and retired with it.
//! - **Wake.** The generation's matrix loads when it is current through
//!   both the store's change counter and its vector counter; a matrix that
//!   is missing, unreadable or behind is rebuilt from the sealed rows, never
//!   re-embedded. Replayed deletions are applied, and only live chunks kept.
//! - **The queue.** A live chunk with no vector row awaits one
//!   ([`Instance::embedding_batch`]); the caller embeds a batch with no lock
//!   held and hands the results to [`Instance::store_vectors`].
//! - **Ranking.** [`Instance::hybrid_hits`] fuses the BM25 list and the
//!   dense top-k by reciprocal rank ([`crate::dense::RRF_K`]); §4.1 rule 1's
//!   reconciling sources are left out of both lists before fusion.

use std::collections::HashSet;

use super::Instance;
use crate::dense::{
    DenseMatrix, FUSION_DEPTH_CHUNKS, QuantisedVector, fuse_reciprocal_rank, quantise_embedding,
};
use crate::error::{Error, ErrorKind};
use crate::search::index::Hit;
use crate::search::query::Plan;
use crate::storage::snapshot;
#[cfg(doc)]
use crate::storage::store::Store;

/// Inputs the embedding queue hands out at once: one provider call's worth
/// ([`crate::ai::embed::EMBED_INPUTS_PER_CALL_MAX`]).
pub const EMBED_QUEUE_BATCH_CHUNKS: usize = crate::ai::embed::EMBED_INPUTS_PER_CALL_MAX;

/// The most bytes of one chunk's text sent to be embedded: the provider
/// client's per-input ceiling ([`crate::ai::embed::EMBED_INPUT_BYTES_MAX`]).
/// A chunk is at most `CHUNK_BYTES_MAX` (32 KiB) plus its title and trail, so
/// the rare longest lose their tail, cut at a character boundary.
pub const EMBED_TEXT_BYTES_MAX: usize = crate::ai::embed::EMBED_INPUT_BYTES_MAX;

/// How the dense matrix came to be in memory at wake.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum DenseWake {
    /// AI is off: no matrix was loaded.
    Off,
    /// The generation's sealed matrix loaded and was current.
    Loaded,
    /// Rebuilt from the sealed per-chunk vectors, for the stated reason
    /// (content-free).
    Rebuilt {
        /// Why, e.g. "the dense snapshot of generation 3 is missing".
        reason: String,
    },
}

/// One chunk's vector as the store keeps it: a one-row matrix in the dense
/// index's own encoding, so the store's bytes are decoded by the same total
/// decoder as a snapshot's.
pub(crate) fn encode_row(chunk_id: i64, v: &QuantisedVector) -> Vec<u8> {
    let mut one = DenseMatrix::new();
    one.push(chunk_id, v)
        .expect("an empty matrix takes one row");
    one.encode()
}

/// The text a chunk is embedded from, cut to [`EMBED_TEXT_BYTES_MAX`].
pub(crate) fn embedding_input(mut text: String) -> String {
    if text.len() > EMBED_TEXT_BYTES_MAX {
        let mut cut = EMBED_TEXT_BYTES_MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

/// The sealed bytes a wake loads into memory, by part (§7.3, gate 20): the
/// current generation's lexical snapshot and, with AI on, its dense one.
/// What a wake reads from the database beside them is measured by gate 20
/// as it happens, not listed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct SnapshotFootprint {
    /// The lexical (FTS5) snapshot blob, in bytes.
    pub lexical_bytes: u64,
    /// The dense snapshot blob, in bytes (0 with AI off).
    pub dense_bytes: u64,
}

impl Instance {
    /// The sizes of the current generation's snapshot blobs (a missing blob
    /// counts 0).
    pub fn snapshot_footprint(&self) -> SnapshotFootprint {
        let g = self.wake.generation;
        let size = |p: std::path::PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
        SnapshotFootprint {
            lexical_bytes: size(snapshot::blob_path(&self.data_dir, g)),
            dense_bytes: size(snapshot::vectors_blob_path(&self.data_dir, g)),
        }
    }

    /// Whether this instance embeds: AI is on (§8.3).
    pub fn embeds(&self) -> bool {
        self.egress.embeds()
    }

    /// The dense matrix, for inspection by tests and gates (empty with AI off).
    pub fn dense(&self) -> &DenseMatrix {
        &self.dense
    }

    /// Wakes the dense matrix (module doc). `loaded_generation` is the
    /// lexical snapshot that loaded (`None`: it was rebuilt or is fresh);
    /// `seq_before_replay` and `replay_removed` are the wake's replay, as
    /// the lexical index applied them; `live` is every live chunk id,
    /// ascending.
    pub(super) fn wake_dense(
        &mut self,
        loaded_generation: Option<i64>,
        seq_before_replay: i64,
        replay_removed: &[i64],
        live: &[i64],
    ) -> Result<(), Error> {
        let store_seq = self.store.store_seq()?;
        let vector_seq = self.store.vector_seq()?;
        let mut reason = match loaded_generation {
            None => Some("the lexical index was rebuilt or is new".to_string()),
            Some(_) => None,
        };
        if let Some(g) = loaded_generation {
            match snapshot::read_vectors(&self.data_dir, self.store.sealer(), g) {
                Ok(Some(loaded))
                    if loaded.vector_seq == vector_seq
                        && (loaded.store_seq == store_seq
                            || loaded.store_seq == seq_before_replay) =>
                {
                    match DenseMatrix::decode_owned(loaded.matrix) {
                        Ok(mut m) => {
                            for c in replay_removed {
                                m.remove(*c);
                            }
                            m.retain(|id| live.binary_search(&id).is_ok());
                            self.dense = m;
                        }
                        Err(e) => {
                            reason = Some(format!(
                                "the dense snapshot of generation {g} does not decode: {e}"
                            ))
                        }
                    }
                }
                Ok(Some(_)) => {
                    reason = Some(format!(
                        "the dense snapshot of generation {g} is behind the store"
                    ))
                }
                Ok(None) => {
                    reason = Some(format!("the dense snapshot of generation {g} is missing"))
                }
                Err(e) => {
                    reason = Some(format!(
                        "the dense snapshot of generation {g} cannot be opened: {e}"
                    ))
                }
            }
        }
        self.wake.dense = match reason {
            None => DenseWake::Loaded,
            Some(reason) => {
                self.dense = self.rebuild_dense()?;
                if !self.dense.is_empty() {
                    tracing::warn!(reason = %reason, vectors = self.dense.len(), "rebuilt the dense index from sealed vectors");
                }
                DenseWake::Rebuilt { reason }
            }
        };
        self.wake.vectors = self.dense.len() as u64;
        Ok(())
    }

    /// The matrix from every live chunk's sealed vector.
    fn rebuild_dense(&self) -> Result<DenseMatrix, Error> {
        let mut m = DenseMatrix::new();
        for (id, bytes) in self.store.live_vectors()? {
            let one = DenseMatrix::decode(&bytes).map_err(|e| {
                Error::new(
                    ErrorKind::Storage,
                    format!("the stored vector of chunk {id} does not decode: {e}"),
                )
            })?;
            let v = one.get(id).ok_or_else(|| {
                Error::new(
                    ErrorKind::Storage,
                    format!("the stored vector of chunk {id} names another chunk"),
                )
            })?;
            m.push(id, &v).map_err(|e| {
                Error::new(
                    ErrorKind::Storage,
                    format!("the dense index refused a vector: {e}"),
                )
            })?;
        }
        Ok(m)
    }

    /// Writes the dense matrix of generation `generation` (with AI on), before
    /// the lexical blob of the same generation.
    pub(super) fn write_dense_snapshot(&self, generation: i64, now: i64) -> Result<u64, Error> {
        snapshot::write_vectors_at(
            &self.data_dir,
            self.store.sealer(),
            generation,
            self.store.store_seq()?,
            self.store.vector_seq()?,
            &self.dense.encode(),
            now,
        )
    }

    /// Up to [`EMBED_QUEUE_BATCH_CHUNKS`] live chunks awaiting a vector with
    /// an id above `after` (a drain's cursor: 0 to start), with the text
    /// each is embedded from (title, trail and body; cut to
    /// [`EMBED_TEXT_BYTES_MAX`]). Empty when the queue is, past `after`, or
    /// AI is off.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] or [`ErrorKind::Seal`] reading the chunks.
    pub fn embedding_batch(&self, after: i64) -> Result<Vec<(i64, String)>, Error> {
        if !self.embeds() {
            return Ok(vec![]);
        }
        let mut out = Vec::new();
        for id in self
            .store
            .chunks_awaiting_vectors(after, EMBED_QUEUE_BATCH_CHUNKS)?
        {
            if let Some(text) = self.store.embedding_text(id)? {
                out.push((id, embedding_input(text)));
            }
        }
        Ok(out)
    }

    /// Records the embedding canary's vectors (§8.2; [`Store::put_canary`]).
    ///
    /// # Errors
    /// As [`Store::put_canary`].
    pub fn record_canary(&mut self, model: &str, vectors: &[Vec<u8>]) -> Result<(), Error> {
        self.store.put_canary(model, vectors)
    }

    /// How many live chunks await a vector (0 with AI off).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn vectors_awaiting(&self) -> Result<u64, Error> {
        if !self.embeds() {
            return Ok(0);
        }
        self.store.count_awaiting_vectors()
    }

    /// Which of `ids` are live chunks still awaiting a vector, ascending
    /// (none with AI off): the set-aside passages that still count
    /// (`app/queue.rs`).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn still_awaiting_vectors(&self, ids: &[i64]) -> Result<Vec<i64>, Error> {
        if !self.embeds() || ids.is_empty() {
            return Ok(vec![]);
        }
        self.store.still_awaiting_vectors(ids)
    }

    /// Quantises and stores the provider's vectors for the chunks named,
    /// sealed in the store and added to the matrix (§7.2). A chunk gone
    /// meanwhile stores nothing. A vector the pipeline refuses (wrong
    /// length, a non-finite value, all zero) stores nothing for its chunk,
    /// which stays queued. Returns (stored, refused).
    ///
    /// # Errors
    /// Storage errors.
    pub fn store_vectors(
        &mut self,
        vectors: Vec<(i64, Vec<f32>)>,
    ) -> Result<(usize, usize), Error> {
        let mut quantised = Vec::with_capacity(vectors.len());
        let mut refused = 0;
        for (id, native) in vectors {
            match quantise_embedding(&native) {
                Ok(v) => quantised.push((id, v)),
                Err(e) => {
                    tracing::warn!(chunk = id, refusal = %e, "a vector from the provider was refused");
                    refused += 1;
                }
            }
        }
        let rows: Vec<(i64, Vec<u8>)> = quantised
            .iter()
            .map(|(id, v)| (*id, encode_row(*id, v)))
            .collect();
        let stored = self.store.put_vectors(&rows)?;
        let mut n = 0;
        for ((id, v), ok) in quantised.iter().zip(stored) {
            if ok {
                self.dense.remove(*id);
                self.dense.push(*id, v).map_err(|e| {
                    Error::new(
                        ErrorKind::Storage,
                        format!("the dense index refused a vector: {e}"),
                    )
                })?;
                n += 1;
            }
        }
        Ok((n, refused))
    }

    /// One page of hits ranked by BM25 and the dense scan, fused by
    /// reciprocal rank (§7), `excluded` chunks (a reconciling source's, §4.1
    /// rule 1) out of both lists before fusion. Returns up to `limit` hits
    /// after `offset`.
    ///
    /// Every page is a slice of one ranking: each list enters the fusion at
    /// [`FUSION_DEPTH_CHUNKS`], whatever the page, and past the fused
    /// chunks the ranking goes on in BM25's order, leaving out what it
    /// already showed. A depth that grew with the page fused different
    /// lists for page 1 and page 2, so a passage could be on both and
    /// another on neither (gate 29 found it).
    ///
    /// # Errors
    /// As [`crate::search::index::LexicalIndex::ranked`].
    pub(super) fn hybrid_hits(
        &self,
        plan: &Plan,
        query: &QuantisedVector,
        limit: usize,
        offset: usize,
        excluded: &[i64],
    ) -> Result<Vec<Hit>, Error> {
        let lexical = self.index.ranked(plan, FUSION_DEPTH_CHUNKS, 0, excluded)?;
        let skip: HashSet<i64> = excluded.iter().copied().collect();
        let dense = self
            .dense
            .top_k_excluding(query, FUSION_DEPTH_CHUNKS, &skip);
        let lexical_ids: Vec<i64> = lexical.iter().map(|h| h.chunk_id).collect();
        let dense_ids: Vec<i64> = dense.iter().map(|h| h.chunk_id).collect();
        // `Hit::score` ranks more negative first, as BM25's does.
        let mut hits: Vec<Hit> = fuse_reciprocal_rank(&lexical_ids, &dense_ids)
            .into_iter()
            .map(|f| Hit {
                chunk_id: f.chunk_id,
                score: -f.score,
            })
            .collect();
        if offset + limit > hits.len() && lexical.len() == FUSION_DEPTH_CHUNKS {
            // BM25 holds more than was fused: the ranking goes on in its
            // order, after every fused chunk (score 0, past every fused
            // score), without repeating one.
            let shown: HashSet<i64> = hits.iter().map(|h| h.chunk_id).collect();
            let more = self
                .index
                .ranked(plan, offset + limit + hits.len(), 0, excluded)?;
            hits.extend(
                more.into_iter()
                    .filter(|h| !shown.contains(&h.chunk_id))
                    .map(|h| Hit {
                        chunk_id: h.chunk_id,
                        score: 0.0,
                    }),
            );
        }
        Ok(hits.into_iter().skip(offset).take(limit).collect())
    }
}
