//! One memoria instance: the store, the awake index, admission, and the search path (§4.2, §7.4, §8.1).
//!
//! [`Instance::wake`] opens the store and the durable tombstone log
//! ([`crate::storage::tombstone`]), replays every tombstone after the sequence the
//! database stops at (a database restored from a backup stops early), and
//! only then loads the sealed snapshot into memory. It rebuilds only when the
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
//! [`Instance::search`] is the one path that speaks memoria-owned passages.
//! It applies §4.2's two facts and nothing else: the asker is admitted, and
//! the document is present and not deleted.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::access::admission::{Admission, Owner};
use crate::clock::{Clock, iso_date};
use crate::crashpoint::crashpoint;
use crate::error::{Error, ErrorKind};
use crate::policy::egress::EgressMode;
use crate::search::highlight::{Highlighter, Snippet};
use crate::search::index::LexicalIndex;
use crate::search::query::{self, Query, QueryRefusal};
use crate::sibling::{Pair, Verdict};
use crate::storage::seal::Sealer;
use crate::storage::snapshot::{self, SnapshotHeader};
use crate::storage::store::{
    Deletion, DocumentSummary, IngestOutcome, NewDocument, Passage, Provenance, Store,
};
use crate::storage::tombstone::{Tombstone, TombstoneLog};

/// Results per page of the search page and the CLI (§8.1).
pub const PAGE_SIZE_RESULTS: usize = 20;
/// The deepest page served; beyond it the page is empty. Bounds FTS5's OFFSET.
pub const PAGE_MAX: u32 = 50;
/// The marker for a passage a person wrote, as opposed to 🤖 for a model's (§8.1).
pub const MARKER_PERSON: &str = "👨";

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
    /// The last tombstone sequence in the log after waking (0: none).
    pub tombstone_seq: i64,
}

/// Everything an instance needs to wake.
#[derive(Debug, Clone)]
pub struct InstanceConfig {
    /// The data directory: database file and snapshot bucket.
    pub data_dir: PathBuf,
    /// Admission: the owners list.
    pub admission: Admission,
    /// The egress mode the footer states.
    pub egress: EgressMode,
}

/// One search result: a passage with its citation (§8.1).
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchResult {
    /// Rank on the page, from 1.
    pub rank: usize,
    /// The app of record: `memoria` for uploads and imports.
    pub app: String,
    /// The document's public id.
    pub document_id: String,
    /// The document title.
    pub title: String,
    /// Heading trail, outermost first.
    pub trail: Vec<String>,
    /// The passage's 0-based position; cited as `#p{ordinal}`.
    pub ordinal: i64,
    /// 👨 for a passage a person wrote.
    pub marker: &'static str,
    /// The document's revision.
    pub revision: i64,
    /// ISO date of the revision.
    pub date: String,
    /// Deep link: `/documents/{id}#p{ordinal}`.
    pub link: String,
    /// The highlighted window of the passage.
    pub snippet: Snippet,
    /// For a sibling's passage, the item and revision held; `None` if memoria-owned.
    pub provenance: Option<Provenance>,
}

impl SearchResult {
    /// The heading trail to show beside the title: the trail without a first
    /// entry that merely repeats the title (a document's own `# Title`).
    pub fn trail_below_title(&self) -> &[String] {
        match self.trail.first() {
            Some(first) if first.trim() == self.title.trim() => &self.trail[1..],
            _ => &self.trail,
        }
    }
}

/// One page of search results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchPage {
    /// How many words the query held (0: empty, nothing searched).
    pub query_words: usize,
    /// The page number, from 1.
    pub page: u32,
    /// Results on this page, best first.
    pub results: Vec<SearchResult>,
    /// True if another page follows.
    pub has_next: bool,
    /// Sibling passages withheld loudly, per app and reason (§8.1). Never
    /// NOT_VISIBLE: that value is omitted silently and counted nowhere.
    pub withheld: Vec<Withheld>,
    /// Sources out of the ranking while they reconcile after a restore, one
    /// line each (§4.1 rule 1, §8.1): the results page names them.
    pub reconciling: Vec<Reconciling>,
}

/// One source out of the search until its re-announce completes (§4.1 rule 1).
///
/// Its chunks were not scored and not counted against the page; the page
/// says so in one line instead of one per passage. It states the suite's
/// health, never a permission, so it goes on a reader's results page (§8.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reconciling {
    /// The app of record, e.g. `sheets`.
    pub app: String,
}

impl Reconciling {
    /// The sentence the page shows, e.g. "Sheets is reconciling after a
    /// restore; its results are out of the search until it re-announces."
    pub fn sentence(&self) -> String {
        format!(
            "{} is reconciling after a restore; its results are out of the search until it re-announces.",
            app_display_name(&self.app)
        )
    }
}

/// Why sibling passages were withheld loudly (§4.1, §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WithheldReason {
    /// The sibling did not answer usefully (UNKNOWN).
    NoAnswer,
    /// The sibling has moved past the revision held (STALE): refetching.
    Stale,
    /// The sibling's log stops short of the revision held (AHEAD): the
    /// source is marked for re-announce, and nothing is deleted.
    Ahead,
}

/// One line of loud withholding: `count` passages from `app`, for `reason`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Withheld {
    /// The app of record, e.g. `sheets`.
    pub app: String,
    /// Why.
    pub reason: WithheldReason,
    /// How many results on this page were withheld.
    pub count: usize,
}

impl Withheld {
    /// One withheld passage or document of `app`'s, for `reason`: what a
    /// document page withholds (§8.1).
    pub fn one(app: &str, reason: WithheldReason) -> Withheld {
        Withheld {
            app: app.to_string(),
            reason,
            count: 1,
        }
    }

    /// The sentence the page shows, e.g. "Sheets did not answer; 7 results withheld."
    pub fn sentence(&self) -> String {
        let app = app_display_name(&self.app);
        let n = self.count;
        let results = if n == 1 { "result" } else { "results" };
        match self.reason {
            WithheldReason::NoAnswer => format!("{app} did not answer; {n} {results} withheld."),
            WithheldReason::Stale => format!(
                "{app} has a newer version of {n} {results}; withheld while memoria fetches it."
            ),
            WithheldReason::Ahead => format!(
                "{app} is behind the version memoria holds of {n} {results}, as after a restore; \
                 withheld until {app} re-announces. Nothing was deleted."
            ),
        }
    }
}

/// An app's name as a reader sees it: `sheets` → `Sheets`.
pub fn app_display_name(app: &str) -> String {
    let mut chars = app.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The ranked candidates for one page, opened but not yet ruled (§8.1).
#[derive(Debug, Clone)]
pub struct Candidates {
    /// How many words the query held.
    pub query_words: usize,
    /// The page number, from 1.
    pub page: u32,
    /// Candidates best first; sibling ones carry provenance.
    pub results: Vec<SearchResult>,
    /// True if another page follows.
    pub has_next: bool,
    /// Apps marked for re-announce, left out of the ranking (§4.1 rule 1).
    pub reconciling: Vec<String>,
}

impl Candidates {
    /// The pairs to put to S2, per app: one per sibling item on the page,
    /// in first-ranked order (§4.1, §5.2).
    pub fn pairs_by_app(&self) -> std::collections::BTreeMap<String, Vec<Pair>> {
        let mut out: std::collections::BTreeMap<String, Vec<Pair>> = Default::default();
        for r in &self.results {
            if let Some(p) = &r.provenance {
                let pair = Pair {
                    item_id: p.item_id.clone(),
                    revision: p.revision.clone(),
                };
                let pairs = out.entry(p.app.clone()).or_default();
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
        out
    }

    /// Applies §8.1 to the candidates: memoria-owned passages render (their
    /// authority is §4.2, already applied); a sibling passage renders only
    /// on VISIBLE for its exact (item, revision) in `verdicts`; NOT_VISIBLE
    /// is omitted silently; STALE, AHEAD and UNKNOWN, and a pair missing
    /// from `verdicts`, are withheld and counted per app and reason.
    pub fn rule(self, verdicts: &Verdicts) -> SearchPage {
        let mut results = Vec::with_capacity(self.results.len());
        let mut withheld: std::collections::BTreeMap<(String, WithheldReason), usize> =
            Default::default();
        let offset = (self.page.max(1) as usize - 1) * PAGE_SIZE_RESULTS;
        for mut r in self.results {
            let reason = match &r.provenance {
                None => None,
                Some(p) => match verdicts.get(p) {
                    Verdict::Visible => None,
                    Verdict::NotVisible => continue,
                    Verdict::Stale => Some(WithheldReason::Stale),
                    Verdict::Ahead => Some(WithheldReason::Ahead),
                    Verdict::Unknown => Some(WithheldReason::NoAnswer),
                },
            };
            match reason {
                None => {
                    r.rank = offset + results.len() + 1;
                    results.push(r);
                }
                Some(reason) => {
                    *withheld.entry((r.app.clone(), reason)).or_insert(0) += 1;
                }
            }
        }
        SearchPage {
            query_words: self.query_words,
            page: self.page,
            results,
            has_next: self.has_next,
            withheld: withheld
                .into_iter()
                .map(|((app, reason), count)| Withheld { app, reason, count })
                .collect(),
            reconciling: self
                .reconciling
                .into_iter()
                .map(|app| Reconciling { app })
                .collect(),
        }
    }
}

/// S2's answers for one request, by (app, item, revision) (§4.1). A pair
/// not in here is UNKNOWN: the absence of an answer is never a VISIBLE.
#[derive(Debug, Clone, Default)]
pub struct Verdicts {
    by_pair: std::collections::BTreeMap<(String, Pair), Verdict>,
}

impl Verdicts {
    /// No answers at all: every sibling passage is UNKNOWN.
    pub fn none() -> Verdicts {
        Verdicts::default()
    }

    /// Records `app`'s answer for `pairs` (as asked, in order).
    pub fn record(&mut self, app: &str, pairs: &[Pair], verdicts: &[Verdict]) {
        for (pair, verdict) in pairs.iter().zip(verdicts) {
            self.by_pair
                .insert((app.to_string(), pair.clone()), *verdict);
        }
    }

    /// The verdict for a passage's provenance; UNKNOWN if never answered.
    pub fn get(&self, p: &Provenance) -> Verdict {
        let key = (
            p.app.clone(),
            Pair {
                item_id: p.item_id.clone(),
                revision: p.revision.clone(),
            },
        );
        self.by_pair.get(&key).copied().unwrap_or(Verdict::Unknown)
    }

    /// Apps with at least one pair answered `verdict`.
    pub fn apps_with(&self, verdict: Verdict) -> std::collections::BTreeSet<String> {
        self.by_pair
            .iter()
            .filter(|(_, v)| **v == verdict)
            .map(|((app, _), _)| app.clone())
            .collect()
    }
}

/// Why a search produced no page.
#[derive(Debug)]
pub enum SearchError {
    /// The asker is not admitted (§4.3).
    NotAdmitted,
    /// The query text is over [`query::QUERY_BYTES_MAX`].
    TooLong,
    /// The engine rejected the query: reported, never shown as "no results".
    Engine(Error),
    /// The store failed.
    Store(Error),
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::NotAdmitted => f.write_str("not admitted"),
            SearchError::TooLong => write!(
                f,
                "the query is longer than {} bytes",
                query::QUERY_BYTES_MAX
            ),
            SearchError::Engine(e) => write!(f, "the search engine failed: {e}"),
            SearchError::Store(e) => write!(f, "the store failed: {e}"),
        }
    }
}

impl std::error::Error for SearchError {}

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
    /// Opens the store and wakes the index (§7.3, §7.4).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`]/[`ErrorKind::Config`] if the store cannot open;
    /// [`ErrorKind::Seal`] if stored cells do not open under this DEK during a
    /// rebuild (a wrong DEK is refused, never served as an empty index).
    pub fn wake(
        config: InstanceConfig,
        sealer: Sealer,
        clock: Arc<dyn Clock>,
    ) -> Result<Instance, Error> {
        let mut store = Store::open(&config.data_dir, sealer)?;
        let data_dir = config.data_dir.clone();
        let mut log = TombstoneLog::open(&data_dir)?;
        // A log behind the database (lost, or an old store) is backfilled
        // from the database's own record, so the next append does not reuse a seq.
        for t in store.tombstones_after(log.last_seq())? {
            log.append_entry(&t)?;
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
        let live = store.live_chunk_ids()?;

        let mut rebuild_reason: Option<String> = None;
        let mut index: Option<LexicalIndex> = None;
        let mut snapshot_tombstone_seq = 0;
        if generation > 0 {
            match snapshot::read(&data_dir, store.sealer(), generation) {
                Ok(Some(loaded))
                    if loaded.header.store_seq != store_seq
                        && loaded.header.store_seq != seq_before_replay =>
                {
                    rebuild_reason = Some(format!(
                        "snapshot generation {generation} is behind the store (seq {} < {store_seq})",
                        loaded.header.store_seq
                    ));
                }
                Ok(Some(loaded)) => match LexicalIndex::deserialize(&loaded.image) {
                    Ok(idx) => {
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

        let (docs, chunks) = store.counts()?;
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
                tombstone_seq: log.last_seq(),
            },
            tombstones: log,
            snapshot_tombstone_seq,
        };
        if let Some(reason) = rebuild_reason {
            tracing::warn!(reason = %reason, chunks, "rebuilding the index from sealed chunks");
            for c in instance.store.live_chunks()? {
                instance
                    .index
                    .insert(c.chunk_id, &c.title, &c.trail, &c.body)?;
            }
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
        tracing::info!(
            documents = docs,
            chunks,
            generation = instance.wake.generation,
            how = ?instance.wake.kind_name(),
            "awake"
        );
        Ok(instance)
    }

    /// What waking did.
    pub fn wake_report(&self) -> &WakeReport {
        &self.wake
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The store, for inspection by tests and gates.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The in-memory index, for inspection by tests and gates.
    pub fn index(&self) -> &LexicalIndex {
        &self.index
    }

    /// Admission: the owners list.
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

    /// Ingests one document and follows the change into the index. Does not
    /// write a snapshot; call [`Instance::write_snapshot`] after a batch.
    ///
    /// # Errors
    /// As [`Store::ingest`].
    pub fn ingest(&mut self, doc: &NewDocument) -> Result<IngestOutcome, Error> {
        let outcome = self.store.ingest(doc, self.clock.now_unix_s())?;
        for id in &outcome.removed {
            self.index.delete(*id)?;
        }
        for c in &outcome.added {
            self.index.insert(c.chunk_id, &c.title, &c.trail, &c.body)?;
        }
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
        for id in &outcome.removed {
            self.index.delete(*id)?;
        }
        for c in &outcome.added {
            self.index.insert(c.chunk_id, &c.title, &c.trail, &c.body)?;
        }
        tracing::info!(
            app = %provenance.app,
            document = %outcome.id,
            status = ?outcome.status,
            chunks = outcome.added.len(),
            "ingested from a sibling"
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
        crashpoint("tombstone:after-append");
        let applied = self.store.apply_tombstone(&t)?;
        for c in &applied.removed {
            self.index.delete(*c)?;
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

    /// Seals the index as the next generation and records it in the store.
    /// The generation is above both the one the database records and every
    /// one on disk (a restored database can record an older one). Then
    /// retires what §7.4's backup window allows ([`snapshot::retire`]).
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] or [`ErrorKind::Io`] if the blob cannot be written.
    pub fn write_snapshot(&mut self) -> Result<SnapshotHeader, Error> {
        let recorded = self.store.snapshot_generation()?;
        let header = SnapshotHeader {
            generation: recorded.max(snapshot::latest_generation(&self.data_dir)?) + 1,
            store_seq: self.store.store_seq()?,
            tombstone_seq: self.store.tombstone_seq()?,
        };
        let now = self.clock.now_unix_s();
        let image = self.index.serialize()?;
        let bytes = snapshot::write_at(&self.data_dir, self.store.sealer(), header, &image, now)?;
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

    /// The admitted owner for `asker`, or `None`.
    pub fn admit(&self, asker: &str) -> Option<&Owner> {
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
        // §4.2 fact 1: the asker is admitted.
        if self.admission.admit(asker).is_none() {
            return Err(SearchError::NotAdmitted);
        }
        let q = query::parse(text).map_err(|r| match r {
            QueryRefusal::TooLong => SearchError::TooLong,
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
        };
        let (Some(fts), Query::Words(words)) = (q.to_fts(), &q) else {
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
        let hits = self
            .index
            .search_excluding(&fts, PAGE_SIZE_RESULTS + 1, offset, &excluded)
            .map_err(SearchError::Engine)?;
        let has_next = hits.len() > PAGE_SIZE_RESULTS && page < PAGE_MAX;
        let highlighter = Highlighter::new(words);
        let mut results = Vec::with_capacity(PAGE_SIZE_RESULTS);
        for hit in hits.iter().take(PAGE_SIZE_RESULTS) {
            // §4.2 fact 2: present and not deleted. A hit whose row is gone is skipped.
            let Some(ph) = self
                .store
                .passage_hit(hit.chunk_id)
                .map_err(SearchError::Store)?
            else {
                continue;
            };
            results.push(SearchResult {
                rank: offset + results.len() + 1,
                app: ph.document.app.clone(),
                link: format!("/documents/{}#p{}", ph.document.id, ph.passage.ordinal),
                document_id: ph.document.id,
                title: ph.document.title,
                trail: ph.passage.trail,
                ordinal: ph.passage.ordinal,
                marker: MARKER_PERSON,
                revision: ph.document.revision,
                date: iso_date(ph.document.updated_at),
                snippet: highlighter.snippet(&ph.passage.body),
                provenance: ph.document.provenance,
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
        })
    }

    /// A live document and its passages, for `asker` (§4.2).
    ///
    /// # Errors
    /// [`ErrorKind::NotAdmitted`] if the asker is not an owner; store errors otherwise.
    pub fn document(
        &self,
        asker: &str,
        id: &str,
    ) -> Result<Option<(DocumentSummary, Vec<Passage>)>, Error> {
        if self.admission.admit(asker).is_none() {
            return Err(Error::new(ErrorKind::NotAdmitted, "not admitted"));
        }
        let Some(doc) = self.store.document(id)? else {
            return Ok(None);
        };
        let passages = self.store.passages(id)?;
        Ok(Some((doc, passages)))
    }

    /// Every live memoria-owned document, for `asker`. Sibling documents are
    /// not listed: a title is content, and only S2 may let it be spoken.
    ///
    /// # Errors
    /// As [`Instance::document`].
    pub fn documents(&self, asker: &str) -> Result<Vec<DocumentSummary>, Error> {
        if self.admission.admit(asker).is_none() {
            return Err(Error::new(ErrorKind::NotAdmitted, "not admitted"));
        }
        Ok(self
            .store
            .documents()?
            .into_iter()
            .filter(|d| d.provenance.is_none())
            .collect())
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
