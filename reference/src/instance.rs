//! One memoria instance: the store, the awake index, admission, and the search path (§4.2, §7.4, §8.1).
//!
//! Size: over 800 lines because wake, replay and every operation that
//! must keep the store and the awake index in step live together.
//!
//! [`Instance::wake_with_tombstones`] opens the store and the durable
//! tombstone log ([`crate::storage::tombstone`]) in its own directory, asks
//! the log to vouch for the database (a log that went backwards refuses the
//! wake), replays every tombstone after the sequence the database stops at
//! (a database restored from a backup stops early), marks every sibling the
//! database knows for re-announce when it finds a restore, and only then
//! loads the sealed snapshot into memory. It rebuilds only when the
//! snapshot is missing, unreadable, or behind the store, and the
//! [`WakeReport`] says which and how many tombstones it replayed. Every
//! change to the store is followed into the index at once; a snapshot is
//! written after a batch of ingests and after every deletion, because §7.4
//! makes a deletion complete only when a superseding snapshot exists.
//!
//! A deletion ([`Instance::delete`]) is written in this order: the log
//! append, fsynced; the database transaction; the index; the superseding
//! snapshot. A crash after the append is finished by the next wake's replay.
//!
//! [`Instance::candidates`] opens one page of ranked passages and applies
//! §4.2's two facts and nothing else: the asker is admitted, and the
//! document is present and not deleted. What the page may then show of a
//! sibling's passages is `sibling::ruled`'s to decide; the page's shapes
//! are `page.rs`.

mod brief;
mod listing;
mod semantic;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use listing::{DocumentsPage, HOME_DOCUMENTS_PER_PAGE};
pub use semantic::{DenseWake, EMBED_QUEUE_BATCH_CHUNKS, EMBED_TEXT_BYTES_MAX, SnapshotFootprint};

use crate::access::admission::{Admission, Owner};
use crate::clock::Clock;
use crate::config::Config;
use crate::crashpoint::crashpoint;
use crate::dense::{DenseMatrix, QuantisedVector};
use crate::error::{Error, ErrorKind};
use crate::page::{
    Candidates, MARKER_PERSON, PAGE_MAX, PAGE_SIZE_RESULTS, SearchError, SearchPage, SearchResult,
    SemanticRanking, Verdicts,
};
use crate::policy::egress::EgressMode;
use crate::search::facts::FactQuery;
use crate::search::highlight::Highlighter;
use crate::search::index::{Hit, ImageSlot, LexicalIndex};
use crate::search::query::{self, Plan, Query, QueryRefusal};
use crate::storage::seal::Sealer;
use crate::storage::snapshot::{self, SnapshotHeader};
use crate::storage::store::{
    Deletion, DocumentSummary, IngestOutcome, NewDocument, Provenance, Store,
};
use crate::storage::tombstone::{Tombstone, TombstoneLog};

/// How the index came to be in memory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum WakeKind {
    /// A new, empty store: nothing to load.
    Fresh,
    /// The recorded snapshot loaded and agreed with the store.
    Loaded {
        /// Its generation.
        generation: i64,
    },
    /// The index was rebuilt from the sealed chunks, for the stated reason.
    Rebuilt {
        /// Why: content-free, e.g. "snapshot generation 3 is missing".
        reason: String,
    },
}

/// What waking did; printed by `serve` and kept for the sources of truth.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WakeReport {
    /// How the index was obtained.
    pub kind: WakeKind,
    /// Live documents.
    pub documents: u64,
    /// Live chunks, which the index now holds exactly.
    pub chunks: u64,
    /// The snapshot generation current after waking (0 for a fresh, empty store).
    pub generation: i64,
    /// Tombstones replayed from the durable log because the database stopped
    /// short of it, as after a restore from backup (§7.4). 0 normally.
    pub tombstones_replayed: u64,
    /// The restore this wake found, content-free (`None` normally): the
    /// database stops before the tombstone log, or records a snapshot
    /// generation older than one on disk. Every sibling the database knows
    /// was then marked for re-announce (§7.4, §4.1).
    pub restore: Option<String>,
    /// The last tombstone sequence in the log after waking (0: none).
    pub tombstone_seq: i64,
    /// How the dense matrix was obtained ([`DenseWake::Off`] with AI off).
    pub dense: DenseWake,
    /// Vectors the dense matrix holds after waking (0 with AI off).
    pub vectors: u64,
}

/// What the dense half brings to one search (§7, §8.1).
#[derive(Debug, Clone)]
pub enum QuerySemantic {
    /// AI is off: BM25 alone, and nothing to say about it.
    Off,
    /// AI is on but the query has no vector (the provider was down, slow or
    /// refused): BM25 alone, and the page says so.
    Unavailable,
    /// The query's vector: BM25 and the dense scan, fused.
    Vector(Box<QuantisedVector>),
}

impl QuerySemantic {
    /// What the page says of its ranking.
    pub fn ranking(&self) -> SemanticRanking {
        match self {
            QuerySemantic::Off => SemanticRanking::Off,
            QuerySemantic::Unavailable => SemanticRanking::Unavailable,
            QuerySemantic::Vector(_) => SemanticRanking::Fused,
        }
    }
}

/// Everything an instance needs to wake.
#[derive(Debug, Clone)]
pub struct InstanceConfig {
    /// The data directory: database file and snapshot bucket.
    pub data_dir: PathBuf,
    /// Admission: the owners list's source, read on every question (§4.3).
    pub admission: Admission,
    /// The egress mode the footer states.
    pub egress: EgressMode,
}

/// A memoria instance, awake.
pub struct Instance {
    data_dir: PathBuf,
    store: Store,
    index: LexicalIndex,
    admission: Admission,
    egress: EgressMode,
    clock: Arc<dyn Clock>,
    wake: WakeReport,
    tombstones: TombstoneLog,
    /// The tombstone sequence the current snapshot includes (§7.4's deletion cursor).
    snapshot_tombstone_seq: i64,
    /// Every live chunk's vector, with AI on (§7.2; empty with AI off).
    dense: DenseMatrix,
    /// Where the durable tombstone log lives, for a re-wake (§7.4).
    tombstone_dir: PathBuf,
    /// The decrypted index and vectors were dropped after an idle spell
    /// (§3.5); the next use wakes them again ([`Instance::evict`]).
    evicted: bool,
    /// Every live document filed under its scope, kept between briefs
    /// while the store does not change (issue 30); dropped at eviction.
    filing: brief::FilingCache,
    /// Where the index publishes its image for the read handles
    /// ([`Instance::share_index`], issue 30); kept across an eviction.
    readers: Option<Arc<ImageSlot>>,
}

/// What a search reads, and nothing it could write: admission, the store
/// and the lexical index (issue 30). The writer's own
/// ([`Instance::view`]) or a read handle's, which has its own store
/// connection and its own connection over the published index image
/// ([`crate::SharedInstance::read`]), so searches run side by side while
/// every write stays under the instance lock.
#[derive(Debug, Clone, Copy)]
pub struct ReadView<'a> {
    /// Admission: the owners list's source, read on every question (§4.3).
    pub admission: &'a Admission,
    /// The store, read in one read transaction a request.
    pub store: &'a Store,
    /// The lexical index.
    pub index: &'a LexicalIndex,
    /// The clock the instance reads.
    pub clock: &'a Arc<dyn Clock>,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("data_dir", &self.data_dir)
            .field("wake", &self.wake)
            .finish_non_exhaustive()
    }
}

impl Instance {
    /// Opens the store and wakes the index (§7.3, §7.4), with the tombstone
    /// log in the data directory, which a restore of the data directory
    /// rewinds with the data: for tests and the throwaway demo, which restore
    /// nothing. The `memoria` command wakes through [`Instance::wake_from`],
    /// with the log in its own directory.
    ///
    /// # Errors
    /// As [`Instance::wake_with_tombstones`].
    pub fn wake(
        config: InstanceConfig,
        sealer: Sealer,
        clock: Arc<dyn Clock>,
    ) -> Result<Instance, Error> {
        let tombstone_dir = config.data_dir.clone();
        Instance::wake_with_tombstones(config, &tombstone_dir, sealer, clock)
    }

    /// Wakes the instance `config` describes, as the `memoria` command does:
    /// its data directory, owners and AI choice, with the tombstone log in
    /// [`Config::tombstone_dir`] (§7.4).
    ///
    /// # Errors
    /// As [`Instance::wake_with_tombstones`].
    pub fn wake_from(config: &Config, clock: Arc<dyn Clock>) -> Result<Instance, Error> {
        Instance::wake_with_tombstones(
            InstanceConfig {
                data_dir: config.data_dir.clone(),
                admission: config.admission.clone(),
                egress: config.egress(),
            },
            &config.tombstone_dir,
            Sealer::new(&config.dek),
            clock,
        )
    }

    /// Opens the store and wakes the index (§7.3, §7.4), with the durable
    /// tombstone log in `tombstone_dir`, a directory the operator keeps
    /// apart from the data directory so that restoring the data does not
    /// rewind it.
    ///
    /// # Errors
    /// [`ErrorKind::TombstonesBehind`] if the log stops before the
    /// database's record of deletions (it went backwards: restored, replaced
    /// or lost), before anything is replayed, loaded or served;
    /// [`ErrorKind::Io`] if the log cannot be opened (naming its path);
    /// [`ErrorKind::Storage`]/[`ErrorKind::Config`] if the store cannot open;
    /// [`ErrorKind::Seal`] if stored cells do not open under this DEK during a
    /// rebuild (a wrong DEK is refused, never served as an empty index).
    pub fn wake_with_tombstones(
        config: InstanceConfig,
        tombstone_dir: &Path,
        sealer: Sealer,
        clock: Arc<dyn Clock>,
    ) -> Result<Instance, Error> {
        let mut store = Store::open(&config.data_dir, sealer).map_err(|e| {
            // The store knows its key, not where a key comes from.
            if e.kind() == ErrorKind::WrongDek {
                Error::new(
                    ErrorKind::WrongDek,
                    format!(
                        "{} Start with this store's own DEK ({} or {}).",
                        e.message(),
                        crate::config::DEK_ENV,
                        crate::config::DEK_FILE_ENV
                    ),
                )
            } else {
                e
            }
        })?;
        let data_dir = config.data_dir.clone();
        let log = TombstoneLog::open(tombstone_dir)?;
        // §7.4: the log must reach the sequence the database stops at. A log
        // behind it went backwards, and replaying it would replay nothing.
        let database_seq = store.tombstone_seq()?;
        let database_last = store.tombstones_after(database_seq - 1)?;
        log.vouch_for(database_seq, database_last.first())
            .map_err(|e| {
                // A store from before the log had a directory of its own.
                let earlier = TombstoneLog::path_in(&data_dir);
                if tombstone_dir != data_dir && earlier.exists() {
                    Error::with_source(
                        e.kind(),
                        format!(
                            "{} holds this store's earlier tombstone log: move it into {}",
                            earlier.display(),
                            tombstone_dir.display()
                        ),
                        e,
                    )
                } else {
                    e
                }
            })?;
        let restore = restore_found(&store, &log, &data_dir)?;
        if let Some(why) = &restore {
            // §7.4: a restore takes the re-announce path. Marked before the
            // replay, so a crash in between finds the restore again.
            let apps = store.known_sibling_apps()?;
            for app in &apps {
                store.mark_reannounce(app)?;
            }
            tracing::warn!(
                restore = %why,
                siblings = apps.len(),
                "a restore was found at wake; every known sibling is marked for re-announce"
            );
        }
        // §7.4: replay every tombstone after the sequence the database stops
        // at, before anything is loaded or served.
        let seq_before_replay = store.store_seq()?;
        let pending: Vec<Tombstone> = log.after(store.tombstone_seq()?).to_vec();
        let mut replay_removed: Vec<i64> = Vec::new();
        for t in &pending {
            let applied = store.apply_tombstone(t)?;
            replay_removed.extend(applied.removed);
        }
        if !pending.is_empty() {
            tracing::warn!(
                tombstones = pending.len(),
                "replayed tombstones the database did not hold"
            );
        }
        let generation = store.snapshot_generation()?;
        let store_seq = store.store_seq()?;
        // One pass over the documents, chunks read from a covering index: no
        // sealed body is read to learn what the index must hold (issue 11).
        let (live, docs) = store.live_chunk_listing()?;

        let mut rebuild_reason: Option<String> = None;
        let mut index: Option<LexicalIndex> = None;
        let mut snapshot_tombstone_seq = 0;
        if generation > 0 {
            match snapshot::read_image(&data_dir, store.sealer(), generation) {
                Ok(Some(loaded))
                    if loaded.header.store_seq != store_seq
                        && loaded.header.store_seq != seq_before_replay =>
                {
                    rebuild_reason = Some(format!(
                        "snapshot generation {generation} is behind the store (seq {} < {store_seq})",
                        loaded.header.store_seq
                    ));
                }
                Ok(Some(mut loaded)) => match loaded.take_index() {
                    Ok(mut idx) => {
                        // A snapshot current up to the replay: apply the replayed deletions.
                        let adjusted = if loaded.header.store_seq == store_seq {
                            Ok(())
                        } else {
                            replay_removed.iter().try_for_each(|c| idx.delete(*c))
                        };
                        // An image whose ids cannot be read is treated like one that disagrees.
                        if adjusted.is_ok() && idx.chunk_ids().is_ok_and(|ids| ids == live) {
                            snapshot_tombstone_seq = loaded.header.tombstone_seq;
                            index = Some(idx);
                        } else {
                            rebuild_reason = Some(format!(
                                "snapshot generation {generation} disagrees with the store's chunks"
                            ))
                        }
                    }
                    Err(e) => {
                        rebuild_reason = Some(format!(
                            "snapshot generation {generation} does not load: {e}"
                        ))
                    }
                },
                Ok(None) => {
                    rebuild_reason = Some(format!("snapshot generation {generation} is missing"))
                }
                Err(e) => {
                    rebuild_reason = Some(format!(
                        "snapshot generation {generation} cannot be opened: {e}"
                    ))
                }
            }
        } else if !live.is_empty() {
            rebuild_reason = Some("no snapshot has been recorded".to_string());
        }

        let chunks = live.len() as u64;
        let mut instance = Instance {
            data_dir,
            store,
            index: match index {
                Some(i) => i,
                None => LexicalIndex::new()?,
            },
            admission: config.admission,
            egress: config.egress,
            clock,
            wake: WakeReport {
                kind: WakeKind::Fresh,
                documents: docs,
                chunks,
                generation,
                tombstones_replayed: pending.len() as u64,
                restore: restore.clone(),
                tombstone_seq: log.last_seq(),
                dense: DenseWake::Off,
                vectors: 0,
            },
            tombstones: log,
            snapshot_tombstone_seq,
            dense: DenseMatrix::new(),
            tombstone_dir: tombstone_dir.to_path_buf(),
            evicted: false,
            filing: brief::FilingCache::default(),
            readers: None,
        };
        // The dense matrix wakes before any snapshot below is written, so
        // that snapshot seals the matrix, not an empty one.
        if instance.embeds() {
            let loaded = (rebuild_reason.is_none() && generation > 0).then_some(generation);
            instance.wake_dense(loaded, seq_before_replay, &replay_removed, &live)?;
        }
        if let Some(reason) = rebuild_reason {
            tracing::warn!(reason = %reason, chunks, "rebuilding the index from sealed chunks");
            // One index transaction and one merge for the whole rebuild (issue 11).
            for c in instance.store.live_chunks()? {
                instance
                    .index
                    .insert_new(c.chunk_id, &c.title, &c.trail, &c.body)?;
            }
            instance.index.optimize()?;
            let header = instance.write_snapshot()?;
            instance.wake.kind = WakeKind::Rebuilt { reason };
            instance.wake.generation = header.generation;
        } else if generation > 0 {
            instance.wake.kind = WakeKind::Loaded { generation };
            if !pending.is_empty() {
                // The replayed deletions are complete only once a snapshot includes them.
                let header = instance.write_snapshot()?;
                instance.wake.generation = header.generation;
            }
        } else if !pending.is_empty() {
            // Nothing live and no snapshot: record one that includes the tombstones.
            instance.write_snapshot()?;
        }
        if restore.is_some()
            && instance.wake.generation < snapshot::latest_generation(&instance.data_dir)?
        {
            // A restore is recorded by a generation above every one on disk,
            // so the next wake does not find it again.
            instance.write_snapshot()?;
        }
        tracing::info!(
            documents = docs,
            chunks,
            generation = instance.wake.generation,
            how = ?instance.wake.kind_name(),
            "awake"
        );
        Ok(instance)
    }

    /// Drops the decrypted index and dense vectors from memory after an idle
    /// spell (§3.5: "idle eviction of the decrypted handle"), with the
    /// documents' paths a brief keeps filed by scope, having first
    /// sealed a snapshot that holds them, so the next wake loads rather than
    /// rebuilds. The sealed store and its key stay open; nothing readable
    /// of the corpus stays in memory but what the store's cache holds.
    /// [`crate::SharedInstance::run`] wakes an evicted instance before any
    /// work ([`Instance::rewake`]). Evicting twice is a no-op.
    ///
    /// # Errors
    /// As [`Instance::write_snapshot`]; nothing is dropped then.
    pub fn evict(&mut self) -> Result<(), Error> {
        if self.evicted {
            return Ok(());
        }
        self.write_snapshot()?;
        // The read handles lose the image first (issue 30).
        self.index.detach();
        self.index = LexicalIndex::new()?;
        self.dense = DenseMatrix::new();
        self.filing.clear();
        self.evicted = true;
        tracing::info!("idle: the decrypted index is evicted until the next question");
        Ok(())
    }

    /// True while the index is evicted ([`Instance::evict`]).
    pub fn is_evicted(&self) -> bool {
        self.evicted
    }

    /// Wakes an evicted instance again, as a start does (§7.3, §7.4): the
    /// same data directory, tombstone log, key, admission and clock. A
    /// no-op when not evicted.
    ///
    /// # Errors
    /// As [`Instance::wake_with_tombstones`]; the instance stays evicted.
    pub fn rewake(&mut self) -> Result<(), Error> {
        if !self.evicted {
            return Ok(());
        }
        let woken = Instance::wake_with_tombstones(
            InstanceConfig {
                data_dir: self.data_dir.clone(),
                admission: self.admission.clone(),
                egress: self.egress,
            },
            &self.tombstone_dir.clone(),
            self.store.sealer().clone(),
            self.clock.clone(),
        )?;
        let readers = self.readers.take();
        *self = woken;
        if let Some(slot) = readers {
            self.share_index(slot);
        }
        Ok(())
    }

    /// Publishes the index's image to `slot` for the read handles, now and
    /// after every snapshot (issue 30; [`LexicalIndex::attach`]). The slot
    /// is emptied by the index's first write after each publication and by
    /// an eviction, and kept across a re-wake.
    pub fn share_index(&mut self, slot: Arc<ImageSlot>) {
        self.readers = Some(Arc::clone(&slot));
        self.index.attach(slot);
    }

    /// What a search reads: this instance's own admission, store and index.
    pub fn view(&self) -> ReadView<'_> {
        ReadView {
            admission: &self.admission,
            store: &self.store,
            index: &self.index,
            clock: &self.clock,
        }
    }

    /// What waking did.
    pub fn wake_report(&self) -> &WakeReport {
        &self.wake
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The tombstone directory: the durable tombstone log and the roster
    /// mark, backed up apart and never restored with the data (§7.4).
    pub fn tombstone_dir(&self) -> &Path {
        &self.tombstone_dir
    }

    /// The store, for inspection by tests and gates.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The store, writable, for unit tests that change it behind the index.
    #[cfg(test)]
    pub(crate) fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// The in-memory index, for inspection by tests and gates.
    pub fn index(&self) -> &LexicalIndex {
        &self.index
    }

    /// Admission: the owners list's source, read on every question (§4.3).
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// The egress mode the footer states.
    pub fn egress(&self) -> EgressMode {
        self.egress
    }

    /// The clock this instance reads.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Follows a stored ingest into the index: the replaced chunks leave the
    /// lexical and the dense index, the new ones join the lexical index's
    /// open batch (committed with the next snapshot; chunk ids are never
    /// reused, so nothing is deleted first). Their vectors come later, from
    /// the embedding queue (§7.2).
    ///
    /// # Errors
    /// As [`LexicalIndex::delete`] and [`LexicalIndex::insert_new`].
    fn follow(&mut self, outcome: &IngestOutcome) -> Result<(), Error> {
        for id in &outcome.removed {
            self.index.delete(*id)?;
            self.dense.remove(*id);
        }
        for c in &outcome.added {
            self.index
                .insert_new(c.chunk_id, &c.title, &c.trail, &c.body)?;
        }
        Ok(())
    }

    /// Starts a bulk load of the index for an import of many documents
    /// ([`LexicalIndex::begin_bulk_load`]: FTS5 merges nothing until it
    /// ends); [`Instance::end_bulk_load`] or the next
    /// [`Instance::write_snapshot`] ends it.
    ///
    /// # Errors
    /// As [`LexicalIndex::begin_bulk_load`].
    pub fn begin_bulk_load(&mut self) -> Result<(), Error> {
        self.index.begin_bulk_load()
    }

    /// Ends a bulk load, if one is open ([`LexicalIndex::end_bulk_load`]).
    ///
    /// # Errors
    /// As [`LexicalIndex::end_bulk_load`].
    pub fn end_bulk_load(&mut self) -> Result<(), Error> {
        self.index.end_bulk_load()
    }

    /// Ingests one document and follows the change into the index. Does not
    /// write a snapshot; call [`Instance::write_snapshot`] after a batch.
    ///
    /// # Errors
    /// As [`Store::ingest`].
    pub fn ingest(&mut self, doc: &NewDocument) -> Result<IngestOutcome, Error> {
        self.ingest_chunked(doc, crate::search::chunk::chunk(&doc.body))
    }

    /// [`Instance::ingest`] of a document already chunked, as decoding
    /// leaves it ([`crate::ingest::decode::Decoded::chunks`]): `chunks`
    /// must be `chunk::chunk(&doc.body)`, so the body is chunked once
    /// (issue 30).
    ///
    /// # Errors
    /// As [`Store::ingest`].
    pub fn ingest_chunked(
        &mut self,
        doc: &NewDocument,
        chunks: Vec<crate::search::chunk::Chunk>,
    ) -> Result<IngestOutcome, Error> {
        let outcome = self
            .store
            .ingest_chunked(doc, chunks, self.clock.now_unix_s())?;
        self.follow(&outcome)?;
        tracing::info!(
            document = %outcome.id,
            revision = outcome.revision,
            status = ?outcome.status,
            chunks = outcome.added.len(),
            "ingested"
        );
        Ok(outcome)
    }

    /// Ingests one sibling item's body at one revision (§6.1 S3) and follows
    /// the change into the index. Does not write a snapshot.
    ///
    /// # Errors
    /// As [`Store::ingest_sibling`].
    pub fn ingest_sibling(
        &mut self,
        doc: &NewDocument,
        provenance: &Provenance,
    ) -> Result<IngestOutcome, Error> {
        let outcome = self
            .store
            .ingest_sibling(doc, provenance, self.clock.now_unix_s())?;
        self.follow(&outcome)?;
        tracing::info!(
            app = %provenance.app,
            document = %outcome.id,
            status = ?outcome.status,
            chunks = outcome.added.len(),
            "ingested from a sibling"
        );
        Ok(outcome)
    }

    /// Stores a derived artefact's text and record (§5.2,
    /// [`Store::ingest_artefact`]) and follows the change into the index.
    /// Does not write a snapshot.
    ///
    /// # Errors
    /// As [`Store::ingest_artefact`].
    pub fn ingest_artefact(
        &mut self,
        doc: &NewDocument,
        record: &crate::artefact::ArtefactRecord,
    ) -> Result<IngestOutcome, Error> {
        let outcome = self
            .store
            .ingest_artefact(doc, record, self.clock.now_unix_s())?;
        self.follow(&outcome)?;
        tracing::info!(
            artefact = %outcome.id,
            revision = outcome.revision,
            status = ?outcome.status,
            roots = record.roots.len(),
            "derived artefact written"
        );
        Ok(outcome)
    }

    /// A search's hit on artefact `doc` read for ruling (§5.2): its record,
    /// or the defect standing for it (no record, a root that is an
    /// artefact or has no owner, a cycle in `built_from`), and the
    /// standing of each memoria-owned root now (present, at its recorded
    /// revision).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn artefact_candidate(
        &self,
        doc: &DocumentSummary,
        text: &str,
    ) -> Result<crate::artefact::ArtefactCandidate, Error> {
        self.view().artefact_candidate(doc, text)
    }

    /// Ingests one sibling spreadsheet at one revision (§8.7): its chunks
    /// into the index, its structure catalogue sealed beside them.
    ///
    /// # Errors
    /// As [`Store::ingest_sheet`].
    pub fn ingest_sheet(
        &mut self,
        doc: &NewDocument,
        provenance: &Provenance,
        sheet: crate::numeric::sheet::ChunkedSheet,
    ) -> Result<IngestOutcome, Error> {
        let outcome = self
            .store
            .ingest_sheet(doc, provenance, sheet, self.clock.now_unix_s())?;
        self.follow(&outcome)?;
        tracing::info!(
            app = %provenance.app,
            document = %outcome.id,
            status = ?outcome.status,
            chunks = outcome.added.len(),
            "ingested a sheet from a sibling"
        );
        Ok(outcome)
    }

    /// Deletes a document (§7.4): appends a tombstone to the durable log
    /// (fsynced), applies it to the database, removes the chunks from the
    /// index, and writes a superseding snapshot. The returned
    /// [`Deletion::complete`] is true only once that snapshot is written.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] for an unknown or deleted id; [`ErrorKind::Io`]
    /// if the log append fails (nothing is deleted then); storage and snapshot
    /// errors otherwise. If anything after the append fails, the tombstone
    /// stands in the log, [`Instance::incomplete_deletions`] lists it, and the
    /// next wake replays it.
    pub fn delete(&mut self, id: &str) -> Result<Deletion, Error> {
        let Some(revision) = self.store.live_revision(id)? else {
            return Err(Error::new(ErrorKind::NotFound, "no such document"));
        };
        let t = self
            .tombstones
            .append(id, revision, self.clock.now_unix_s())?;
        crashpoint("tombstone:after-append", self.tombstones.path());
        let applied = self.store.apply_tombstone(&t)?;
        for c in &applied.removed {
            self.index.delete(*c)?;
            self.dense.remove(*c);
        }
        self.wake.tombstone_seq = self.tombstones.last_seq();
        self.write_snapshot()?;
        let deletion = Deletion {
            id: id.to_string(),
            removed: applied.removed,
            tombstone_seq: t.seq,
            complete: self.deletion_complete(t.seq),
        };
        tracing::info!(
            document = %deletion.id,
            tombstone = deletion.tombstone_seq,
            complete = deletion.complete,
            "deleted"
        );
        Ok(deletion)
    }

    /// True once the current snapshot includes tombstone `seq` (§7.4).
    pub fn deletion_complete(&self, seq: i64) -> bool {
        seq <= self.snapshot_tombstone_seq
    }

    /// Tombstones in the durable log that no written snapshot includes yet:
    /// deletions that are not complete (§7.4). Empty normally.
    pub fn incomplete_deletions(&self) -> &[Tombstone] {
        self.tombstones.after(self.snapshot_tombstone_seq)
    }

    /// The durable tombstone log, for inspection by tests and gates.
    pub fn tombstone_log(&self) -> &TombstoneLog {
        &self.tombstones
    }

    /// Seals the index as the next generation and records it in the store,
    /// after settling it ([`LexicalIndex::settle`]: the open batch committed,
    /// and merged into one segment after a bulk load). The generation is above both the one the database records and every
    /// one on disk (a restored database can record an older one). Then
    /// retires what §7.4's backup window allows ([`snapshot::retire`]).
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] or [`ErrorKind::Io`] if the blob cannot be written.
    pub fn write_snapshot(&mut self) -> Result<SnapshotHeader, Error> {
        // A bulk load (an import, a sync) is merged before it is sealed.
        self.index.settle()?;
        let recorded = self.store.snapshot_generation()?;
        let header = SnapshotHeader {
            generation: recorded.max(snapshot::latest_generation(&self.data_dir)?) + 1,
            store_seq: self.store.store_seq()?,
            tombstone_seq: self.store.tombstone_seq()?,
        };
        let now = self.clock.now_unix_s();
        // The dense matrix first: a lexical blob of a generation implies
        // its dense blob was written (a crash between the two leaves a dense
        // blob of a generation no lexical blob names; the next snapshot
        // takes that number again and overwrites it).
        if self.embeds() {
            self.write_dense_snapshot(header.generation, now)?;
        }
        // The image is also what the read handles search from now on.
        let image = self.index.share()?;
        let bytes = snapshot::write_at(
            &self.data_dir,
            self.store.sealer(),
            header,
            image.as_slice(),
            now,
        )?;
        self.store.set_snapshot_generation(header.generation)?;
        self.snapshot_tombstone_seq = header.tombstone_seq;
        let retired = snapshot::retire(&self.data_dir, header.generation, now)?;
        self.wake.generation = header.generation;
        tracing::info!(
            generation = header.generation,
            sealed_bytes = bytes,
            retired,
            "snapshot written"
        );
        Ok(header)
    }

    /// The admitted owner for `asker` now, or `None`: the owners list is
    /// read from its source on every call (§4.3), and while the source
    /// cannot be read nobody is admitted.
    pub fn admit(&self, asker: &str) -> Option<Owner> {
        self.admission.admit(asker)
    }

    /// Searches as `asker` (§8.1): lexical, BM25, one page of
    /// [`PAGE_SIZE_RESULTS`]. Pages are numbered from 1.
    ///
    /// # Errors
    /// See [`SearchError`]. An empty or punctuation-only query is not an
    /// error: it returns an empty page with `query_words == 0`.
    pub fn search(&self, asker: &str, text: &str, page: u32) -> Result<SearchPage, SearchError> {
        // No sibling client here: every sibling passage is UNKNOWN and
        // withheld loudly. Nothing from a sibling renders without S2.
        Ok(self.candidates(asker, text, page)?.rule(&Verdicts::none()))
    }

    /// Whether a search by `asker` for `text` on `page` may send its text to
    /// the provider to be embedded (§8.3): AI is on, the asker is admitted,
    /// and the query is one the search would run (not refused, not empty,
    /// within the pages served). Nothing leaves for anything else.
    pub fn may_embed_query(&self, asker: &str, text: &str, page: u32) -> bool {
        self.embeds()
            && self.admission.admit(asker).is_some()
            && (1..=PAGE_MAX).contains(&page.max(1))
            && query::parse(text).is_ok()
            && query::plan(text).is_some()
    }

    /// The ranked, opened candidates for one page, before any sibling is
    /// asked (§8.1). Render only what [`Candidates::rule`] returns.
    ///
    /// # Errors
    /// As [`Instance::search`].
    pub fn candidates(
        &self,
        asker: &str,
        text: &str,
        page: u32,
    ) -> Result<Candidates, SearchError> {
        self.candidates_with(asker, text, page, &QuerySemantic::Off)
    }

    /// As [`Instance::candidates`], with what the dense half brings to this
    /// search: with a query vector the page is ranked by BM25 and the dense
    /// scan fused by reciprocal rank (§7); with AI on and no vector (the
    /// provider did not answer) it is lexical and says so
    /// ([`SemanticRanking::Unavailable`]), never silently.
    ///
    /// # Errors
    /// As [`Instance::search`].
    pub fn candidates_with(
        &self,
        asker: &str,
        text: &str,
        page: u32,
        semantic: &QuerySemantic,
    ) -> Result<Candidates, SearchError> {
        match semantic {
            QuerySemantic::Vector(v) => self.view().candidates_by(
                asker,
                text,
                page,
                semantic.ranking(),
                &|plan, limit, offset, excluded| self.hybrid_hits(plan, v, limit, offset, excluded),
            ),
            QuerySemantic::Off | QuerySemantic::Unavailable => {
                self.view()
                    .lexical_candidates(asker, text, page, semantic.ranking())
            }
        }
    }
}

/// The ranking a page is cut from: `(plan, limit, offset, excluded)` to
/// at most `limit` hits after `offset`, best first (BM25 alone, or fused).
type Ranker<'a> = dyn Fn(&Plan, usize, usize, &[i64]) -> Result<Vec<Hit>, Error> + 'a;

impl ReadView<'_> {
    /// As [`Instance::candidates_with`] with no query vector (AI off, or
    /// the provider did not answer): one page ranked by BM25 alone, read
    /// from this view, with `ranking` saying which of the two it was.
    ///
    /// # Errors
    /// As [`Instance::search`].
    pub fn lexical_candidates(
        &self,
        asker: &str,
        text: &str,
        page: u32,
        ranking: SemanticRanking,
    ) -> Result<Candidates, SearchError> {
        let index = self.index;
        self.candidates_by(
            asker,
            text,
            page,
            ranking,
            &|plan, limit, offset, excluded| index.ranked(plan, limit, offset, excluded),
        )
    }

    /// As [`Instance::artefact_candidate`], read from this view.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a read failure.
    pub fn artefact_candidate(
        &self,
        doc: &DocumentSummary,
        text: &str,
    ) -> Result<crate::artefact::ArtefactCandidate, Error> {
        use crate::artefact::{ArtefactCandidate, Defect, MemoriaRoot, on_cycle, roots_defect};
        let is_artefact = |id: &str| matches!(self.store.document(id), Ok(Some(d)) if d.app == crate::storage::store::APP_ARTEFACT);
        let record = match self.store.artefact_record(&doc.id)? {
            None => Err(Defect::NoRecord),
            Some(r) => match roots_defect(&r, is_artefact) {
                Some(d) => Err(d),
                None if on_cycle(&doc.id, |id| {
                    self.store
                        .artefact_record(id)
                        .ok()
                        .flatten()
                        .map(|r| r.built_from)
                        .unwrap_or_default()
                }) =>
                {
                    Err(Defect::Cycle)
                }
                None => Ok(r),
            },
        };
        let mut memoria = Vec::new();
        if let Ok(r) = &record {
            for root in r.roots.iter().filter(|r| r.is_memoria()) {
                let standing = match self.store.document(&root.id)? {
                    Some(d) if d.revision.to_string() == root.revision => MemoriaRoot::Current,
                    Some(_) => MemoriaRoot::Superseded,
                    None => MemoriaRoot::Gone,
                };
                memoria.push((root.clone(), standing));
            }
        }
        Ok(ArtefactCandidate {
            id: doc.id.clone(),
            title: doc.title.clone(),
            text: text.to_string(),
            record,
            memoria,
        })
    }

    /// One page's candidates with the hits `ranked(plan, limit, offset,
    /// excluded)` gives (§8.1): admission, one read transaction, the
    /// ranking, and each hit opened, or skipped if its row is gone.
    fn candidates_by(
        &self,
        asker: &str,
        text: &str,
        page: u32,
        ranking: SemanticRanking,
        ranked: &Ranker<'_>,
    ) -> Result<Candidates, SearchError> {
        // §4.2 fact 1: the asker is admitted.
        if self.admission.admit(asker).is_none() {
            return Err(SearchError::NotAdmitted);
        }
        // One read transaction for the whole page (issue 30).
        let _read = self.store.read_together().map_err(SearchError::Store)?;
        let q = query::parse(text).map_err(|r| match r {
            QueryRefusal::TooLong { bytes, chars } => SearchError::TooLong { bytes, chars },
            QueryRefusal::TooManyWords { words } => SearchError::TooManyWords { words },
        })?;
        let page = page.clamp(1, PAGE_MAX + 1);
        // §4.1 rule 1: a source marked for re-announce leaves the ranking.
        let reconciling = self.store.reannouncing_apps().map_err(SearchError::Store)?;
        let empty = Candidates {
            query_words: q.word_count(),
            page,
            results: vec![],
            has_next: false,
            reconciling: reconciling.clone(),
            facts: FactQuery::default(),
            semantic: ranking,
            artefacts: vec![],
        };
        let (Some(plan), Query::Words(words)) = (query::plan(text), &q) else {
            return Ok(empty);
        };
        if page > PAGE_MAX {
            return Ok(empty);
        }
        let offset = (page as usize - 1) * PAGE_SIZE_RESULTS;
        let mut excluded = Vec::new();
        for app in &reconciling {
            excluded.extend(
                self.store
                    .sibling_chunk_ids(app)
                    .map_err(SearchError::Store)?,
            );
        }
        let hits =
            ranked(&plan, PAGE_SIZE_RESULTS + 1, offset, &excluded).map_err(SearchError::Engine)?;
        let has_next = hits.len() > PAGE_SIZE_RESULTS && page < PAGE_MAX;
        let highlighter = Highlighter::new(words);
        let mut results = Vec::with_capacity(PAGE_SIZE_RESULTS);
        let mut artefacts: Vec<crate::artefact::ArtefactCandidate> = Vec::new();
        for hit in hits.iter().take(PAGE_SIZE_RESULTS) {
            // §4.2 fact 2: present and not deleted. A hit whose row is gone is skipped.
            let Some(ph) = self
                .store
                .passage_hit(hit.chunk_id)
                .map_err(SearchError::Store)?
            else {
                continue;
            };
            // A derived artefact is ruled by its roots (§5.2), apart from
            // the passages: once per artefact, by its best-ranked passage.
            if ph.document.app == crate::storage::store::APP_ARTEFACT {
                if !artefacts.iter().any(|a| a.id == ph.document.id) {
                    artefacts.push(
                        self.artefact_candidate(&ph.document, &ph.passage.body)
                            .map_err(SearchError::Store)?,
                    );
                }
                continue;
            }
            // The snippet is cut from what the page would show of the
            // passage: a Markdown passage's text without its markup.
            let snippet = highlighter.snippet(ph.snippet_text());
            results.push(SearchResult {
                rank: offset + results.len() + 1,
                app: ph.document.app.clone(),
                link: crate::page::passage_link(&ph.document.id, ph.passage.ordinal),
                document_id: ph.document.id,
                title: ph.document.title,
                trail: ph.passage.trail,
                ordinal: ph.passage.ordinal,
                marker: MARKER_PERSON,
                revision: ph.document.revision,
                date: ph.document.date.iso(),
                date_kind: ph.document.date.kind,
                date_at: ph.document.date.at,
                snippet,
                provenance: ph.document.provenance,
                text: ph.passage.body,
            });
        }
        tracing::info!(
            words = q.word_count(),
            page,
            results = results.len(),
            "searched"
        );
        Ok(Candidates {
            query_words: q.word_count(),
            page,
            results,
            has_next,
            reconciling,
            facts: FactQuery::parse(text),
            semantic: ranking,
            artefacts,
        })
    }
}

impl WakeReport {
    fn kind_name(&self) -> &'static str {
        match self.kind {
            WakeKind::Fresh => "fresh",
            WakeKind::Loaded { .. } => "loaded",
            WakeKind::Rebuilt { .. } => "rebuilt",
        }
    }
}

/// An AI-off instance woken in `dir` for one admitted owner
/// (`ana@example.org`), with a fresh DEK and a fixed clock at 1,000 s: the
/// unit tests' one way to make a plain instance.
///
/// # Panics
/// The instance cannot wake in `dir`.
#[cfg(test)]
pub(crate) fn instance_for_tests(dir: &Path) -> Instance {
    Instance::wake(
        InstanceConfig {
            data_dir: dir.to_path_buf(),
            admission: crate::access::admission::Admission::parse("ana@example.org")
                .expect("the test owner parses"),
            egress: crate::policy::egress::EgressMode::AiOff,
        },
        crate::storage::seal::Sealer::new(&crate::storage::seal::Dek::generate()),
        Arc::new(crate::clock::FixedClock(1_000)),
    )
    .expect("a test instance wakes")
}

/// What says the database was restored from a backup, if anything (§7.4):
/// its deletion sequence stops before the durable log's, or it records a
/// snapshot generation older than the newest blob in the bucket. A crash
/// between a deletion's log append and its database transaction, or between
/// a blob's rename and its generation's record, reads the same: the
/// siblings are then re-announced once more than needed, which costs an
/// announce and loses nothing.
///
/// Departure from §7.4 ("a restore from backup takes the re-announce
/// path"): a backup restored with no deletion and no snapshot since it was
/// taken leaves no trace outside the data directory, so it is not found and
/// nothing is marked. Nothing is lost by that: the restored sibling cursors
/// are as old as the content they came with, so the next pulls bring every
/// change since, and a feed that no longer reaches that far answers 410,
/// which marks the sibling anyway; meanwhile a revision the backup holds
/// behind its sibling's answers STALE at S2 and is withheld, loudly.
fn restore_found(
    store: &Store,
    log: &TombstoneLog,
    data_dir: &Path,
) -> Result<Option<String>, Error> {
    let (database, logged) = (store.tombstone_seq()?, log.last_seq());
    if database < logged {
        return Ok(Some(format!(
            "the database stops at tombstone {database} and the durable log at {logged}"
        )));
    }
    let (recorded, on_disk) = (
        store.snapshot_generation()?,
        snapshot::latest_generation(data_dir)?,
    );
    if recorded < on_disk {
        return Ok(Some(format!(
            "the database records snapshot generation {recorded} and the bucket holds {on_disk}"
        )));
    }
    Ok(None)
}
