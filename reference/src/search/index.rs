//! The lexical index: an in-memory, contentless FTS5 table ranked by BM25 (§3.1, §7.1, §7.2).
//!
//! Size: over 800 lines because the FTS5 schema, the query plan and
//! the ranking over both scripts' tokens must agree, and are tested together.
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
//!
//! Writes are batched: the first insert or delete opens a transaction that
//! stays open until [`LexicalIndex::commit`] (which [`LexicalIndex::serialize`]
//! calls first), so an import or a rebuild is one FTS5 transaction, not one
//! per chunk (issue 11 measured the per-chunk commits at 40% of an import and
//! 65% of a rebuild). Searches on the same connection see the pending rows.
//! [`LexicalIndex::ranked`] runs a [`Plan`]'s tiers (`search/query.rs`).
//!
//! This file is over 700 lines because its tests are half of it: the
//! ranking cases (adjacency, tiers, fills, pages across tiers) pin the
//! query semantics next to the code that runs them.

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use rusqlite::{Connection, MAIN_DB, OptionalExtension, ffi, params};

use crate::error::{Error, ErrorKind};
use crate::search::bm25;
use crate::search::phrase::{self, Position, StopPhrase};
use crate::search::query::{FILL_ROWS_MAX, Plan};
use crate::search::text;

/// BM25 column weights: title, heading trail, body. A word in a title or a
/// heading says more about a passage than the same word in its body.
pub const BM25_WEIGHTS: (f64, f64, f64) = (4.0, 2.0, 1.0);

/// The FTS5 schema: contentless, porter over unicode61, deletable (§7.2).
/// `remove_diacritics 2` folds every accent `unicode61` knows, so `polska`
/// finds `Polską`; the text it sees is [`text::index_form`]'s.
const SCHEMA: &str = "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(\
    title, trail, body, \
    content='', contentless_delete=1, \
    tokenize='porter unicode61 remove_diacritics 2')";

/// The indexed columns of [`SCHEMA`]: title, trail, body.
const COLUMNS: usize = 3;

/// The longest leave-out list [`LexicalIndex::ranked`] scans per row; a
/// longer one is made a set first (a page's 21 hits are scanned).
const EXCLUDED_SCAN_MAX: usize = 64;

/// The most rows in which a phrase's stop words are sought one row at a
/// time ([`LexicalIndex::stop_phrase_parts`]); where its content runs
/// line up in more, FTS5 matches the whole phrase in one pass, and the
/// content pass stops at the row past this. A seek is one FTS5 statement
/// (the stop words' postings opened and walked by their doclist index to
/// the row). Chosen, not tuned per seek: at 90,000 chunks (issue 30) the
/// whole split path of "how to configure a proxy server" cost about 0.2
/// ms a search over HTTP where FTS5's one pass cost about 0.8 ms.
const PHRASE_SEEK_ROWS_MAX: usize = 64;

/// The rows one phrase matches, each with its own part of the score
/// ([`bm25::part`]), and the table's row count (`bm25()`'s `N`).
type PhraseRows = (Vec<(i64, f64)>, i64);

/// Each phrase's count of rows, read once per ranking
/// ([`LexicalIndex::ranked`]) and kept for its tiers: never across
/// rankings, so a write between two searches is always seen.
#[derive(Debug, Default)]
struct PhraseHits {
    counted: Vec<(String, usize)>,
}

impl PhraseHits {
    /// The rows of `index` holding `phrase`, counted on first asking.
    fn of(&mut self, index: &LexicalIndex, phrase: &str) -> Result<usize, Error> {
        if let Some((_, n)) = self.counted.iter().find(|(p, _)| p == phrase) {
            return Ok(*n);
        }
        let n = index.rows_holding(phrase)?;
        self.counted.push((phrase.to_owned(), n));
        Ok(n)
    }
}

/// One hit: a chunk row id and its BM25 score (lower is better, as FTS5 reports it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The chunk's row id in the store.
    pub chunk_id: i64,
    /// FTS5's `bm25()` value; more negative ranks higher.
    pub score: f64,
}

/// A buffer SQLite allocated, for reading a sealed snapshot into and
/// opening it in place (see [`LexicalIndex::from_image`]): at wake the
/// index image then exists once in memory, not three times (the sealed
/// bytes, the opened bytes, SQLite's copy; issue 11's peak-memory target).
pub struct ImageBuffer {
    ptr: NonNull<u8>,
    len: usize,
}

impl std::fmt::Debug for ImageBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageBuffer")
            .field("len", &self.len)
            .finish()
    }
}

impl ImageBuffer {
    /// `len` zeroed bytes from `sqlite3_malloc64`.
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if SQLite cannot allocate them.
    pub fn zeroed(len: usize) -> Result<ImageBuffer, Error> {
        // SAFETY: sqlite3_malloc64 has no preconditions; it returns NULL or
        // an allocation of at least the requested size (never 0 bytes: a
        // request of 0 is NULL, so at least 1 is asked for).
        let raw = unsafe { ffi::sqlite3_malloc64(len.max(1) as u64) }.cast::<u8>();
        let Some(ptr) = NonNull::new(raw) else {
            return Err(Error::new(
                ErrorKind::Snapshot,
                format!("SQLite could not allocate {len} bytes for the index image"),
            ));
        };
        // SAFETY: `ptr` points to at least `len.max(1)` writable bytes.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
        Ok(ImageBuffer { ptr, len })
    }

    /// The whole buffer.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` holds `len` initialised bytes (zeroed in `zeroed`),
        // owned by this value, and `&mut self` makes this borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// The whole buffer.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: as in `as_mut_slice`, shared.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for ImageBuffer {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(self.as_mut_slice());
        // SAFETY: `ptr` came from sqlite3_malloc64 and is freed once, here.
        unsafe { ffi::sqlite3_free(self.ptr.as_ptr().cast()) };
    }
}

// SAFETY: the buffer is plain bytes owned by this value alone.
unsafe impl Send for ImageBuffer {}

/// A query's failure, without SQLite's message: for an FTS5 parse error it
/// quotes the query (§3.2). Its error code is content-free.
fn query_error(e: rusqlite::Error) -> Error {
    let code = e
        .sqlite_error_code()
        .map_or_else(|| "no SQLite code".to_string(), |c| format!("{c:?}"));
    Error::new(
        ErrorKind::Query,
        format!("the search engine could not run this query ({code})"),
    )
}

/// One index image that several connections read at once, in place
/// (issue 30: searches on both cores). Immutable once made: every
/// connection over it opens it read-only (`SQLITE_DESERIALIZE_READONLY`, so
/// SQLite refuses any write to it), and none takes it over, so it lives
/// until the last [`LexicalIndex`] over it and the [`ImageSlot`] that
/// published it drop their handles; it is zeroed then, as any image is.
pub struct SharedImage {
    buffer: ImageBuffer,
    len: usize,
}

impl std::fmt::Debug for SharedImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedImage")
            .field("len", &self.len)
            .finish()
    }
}

// SAFETY: the bytes are never written after construction (every connection
// over them is read-only), so shared references from many threads only read.
unsafe impl Sync for SharedImage {}

impl SharedImage {
    /// The image's bytes: a whole SQLite database holding the FTS table.
    pub fn as_slice(&self) -> &[u8] {
        &self.buffer.as_slice()[..self.len]
    }

    /// A copy of `bytes` in SQLite's memory.
    fn copied(bytes: &[u8]) -> Result<SharedImage, Error> {
        let mut buffer = ImageBuffer::zeroed(bytes.len())?;
        buffer.as_mut_slice()[..bytes.len()].copy_from_slice(bytes);
        Ok(SharedImage {
            buffer,
            len: bytes.len(),
        })
    }
}

/// Where the awake index's current image is published for the read handles
/// (issue 30, [`crate::SharedInstance`]): holding an image means it is the
/// index exactly as the writer holds it. The writer's first write after a
/// publication empties the slot before it changes anything
/// ([`LexicalIndex::attach`]); the next snapshot publishes again. An empty
/// slot sends a search to the writer's own index, under the instance lock.
#[derive(Debug, Default)]
pub struct ImageSlot {
    current: std::sync::Mutex<Option<Arc<SharedImage>>>,
}

impl ImageSlot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<SharedImage>>> {
        // The slot holds one handle; a panic cannot leave it half written.
        self.current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The published image, if the writer's index is that image now.
    pub fn current(&self) -> Option<Arc<SharedImage>> {
        self.lock().clone()
    }

    /// True while `image` is the published one.
    pub fn holds(&self, image: &Arc<SharedImage>) -> bool {
        self.lock().as_ref().is_some_and(|i| Arc::ptr_eq(i, image))
    }

    fn set(&self, image: Option<Arc<SharedImage>>) {
        *self.lock() = image;
    }

    /// Empties the slot: the writer's index is about to change, or is
    /// being dropped (idle eviction, §3.5).
    pub fn clear(&self) {
        self.set(None);
    }
}

/// The in-memory FTS5 index.
///
/// Two shapes, one behaviour. A new or rebuilt index is an ordinary
/// in-memory database (its pages are SQLite's page cache). An index loaded
/// from an image ([`LexicalIndex::deserialize`], [`LexicalIndex::from_image`])
/// is *mapped*: SQLite reads the image's pages where they lie (a fixed-size
/// `memdb` with `mmap_size` over it), with no copy per page read, so a woken
/// index costs the image once and searches it at full speed. A mapped image
/// cannot grow, so the first write copies it into an ordinary in-memory
/// database page by page (the backup API) and frees it: the one moment the
/// image is in memory twice, after waking, not during it.
pub struct LexicalIndex {
    conn: Connection,
    mapped: bool,
    /// Rows inserted or deleted since the index was last merged into one segment.
    writes_since_optimize: usize,
    /// Every row's length, for the one-phrase scorer (see [`bm25::RowLengths`]).
    lengths: Arc<bm25::RowLengths>,
    /// The image a mapped index reads in place; declared after `conn`, so
    /// the connection closes before the image can be freed.
    image: Option<Arc<SharedImage>>,
    /// Where this index publishes its image for the read handles, and
    /// which its first write empties ([`LexicalIndex::attach`]).
    slot: Option<Arc<ImageSlot>>,
    /// True between [`LexicalIndex::begin_bulk_load`] and its end: FTS5
    /// merges nothing as rows are written.
    bulk_load: bool,
}

/// FTS5's `automerge` during a bulk load ([`LexicalIndex::begin_bulk_load`]):
/// 0, no incremental merge as segments are written (sqlite.org/fts5.html,
/// "The automerge Configuration Option").
const BULK_LOAD_AUTOMERGE_SEGMENTS: i64 = 0;
/// FTS5's `crisismerge` during a bulk load: a level is merged only once it
/// holds this many segments, one below FTS5's most (`FTS5_MAX_SEGMENT`,
/// 2,000, in SQLite's fts5_index.c), so a load's segments are merged once,
/// by the `optimize` after it, not level by level as they are written
/// (sqlite.org/fts5.html, "The crisismerge Configuration Option").
const BULK_LOAD_CRISISMERGE_SEGMENTS: i64 = 1_999;
/// FTS5's own default `automerge` (sqlite.org/fts5.html), restored when a
/// bulk load ends.
const FTS5_DEFAULT_AUTOMERGE_SEGMENTS: i64 = 4;
/// FTS5's own default `crisismerge` (sqlite.org/fts5.html), restored when
/// a bulk load ends.
const FTS5_DEFAULT_CRISISMERGE_SEGMENTS: i64 = 16;

/// How many rows written since the last merge make [`LexicalIndex::settle`]
/// merge the index into one segment (FTS5 `optimize`): a bulk load (an
/// import, a rebuild, a sibling's first sync) leaves it in many segments,
/// each of which a search must read, while an upload or a deletion writes a
/// few rows and is not worth rewriting the index for. Measured at 90,000
/// chunks (issue 11): a merge costs about a second of CPU there.
pub const OPTIMIZE_AFTER_WRITES: usize = 1_000;

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
        let lengths = Arc::default();
        bm25::register(&conn, &lengths)?;
        Ok(LexicalIndex {
            conn,
            mapped: false,
            writes_since_optimize: 0,
            lengths,
            image: None,
            slot: None,
            bulk_load: false,
        })
    }

    /// Loads an index from bytes produced by [`LexicalIndex::serialize`].
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if the bytes are not a SQLite database holding the FTS table.
    pub fn deserialize(bytes: &[u8]) -> Result<LexicalIndex, Error> {
        let mut buffer = ImageBuffer::zeroed(bytes.len())?;
        buffer.as_mut_slice().copy_from_slice(bytes);
        LexicalIndex::from_image(buffer, 0..bytes.len())
    }

    /// Loads an index from the bytes `image` of `buffer`, in place: the image
    /// is moved to the buffer's start and becomes a [`SharedImage`] that
    /// SQLite reads where it lies, so no copy is made (see [`ImageBuffer`]).
    ///
    /// # Errors
    /// As [`LexicalIndex::deserialize`].
    ///
    /// # Panics
    /// If `image` is not inside `buffer`.
    pub fn from_image(mut buffer: ImageBuffer, image: Range<usize>) -> Result<LexicalIndex, Error> {
        assert!(image.end <= buffer.len, "the image lies inside its buffer");
        let len = image.len();
        buffer.as_mut_slice().copy_within(image, 0);
        LexicalIndex::over(Arc::new(SharedImage { buffer, len }))
    }

    /// A read-only index over `image`, in place: what a read handle
    /// searches (issue 30), and what a loaded or published index is until
    /// its first write copies it out ([`LexicalIndex::is_mapped`]). Every
    /// connection over one image reads the same bytes; none can write them.
    ///
    /// # Errors
    /// As [`LexicalIndex::deserialize`].
    pub fn over(image: Arc<SharedImage>) -> Result<LexicalIndex, Error> {
        LexicalIndex::over_with(image, Arc::default())
    }

    /// As [`LexicalIndex::over`], with the row lengths kept so far for
    /// this same content.
    fn over_with(
        image: Arc<SharedImage>,
        lengths: Arc<bm25::RowLengths>,
    ) -> Result<LexicalIndex, Error> {
        let conn = Connection::open_in_memory()?;
        let snapshot_error =
            |e: rusqlite::Error| Error::new(ErrorKind::Snapshot, format!("index image: {e}"));
        let schema = c"main";
        let len = image.len;
        // SAFETY: the image's `len` bytes stay allocated and unchanged while
        // this connection lives: the returned index holds `image` and
        // closes its connection first (field order). READONLY makes SQLite
        // refuse every write, so the `*mut` is never written through;
        // without FREEONCLOSE SQLite never frees it; without RESIZEABLE it
        // keeps its address, which is what lets `mmap_size` below read its
        // pages where they lie.
        let rc = unsafe {
            ffi::sqlite3_deserialize(
                conn.handle(),
                schema.as_ptr(),
                image.buffer.ptr.as_ptr(),
                len as ffi::sqlite3_int64,
                len as ffi::sqlite3_int64,
                ffi::SQLITE_DESERIALIZE_READONLY,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(snapshot_error(rusqlite::Error::SqliteFailure(
                ffi::Error::new(rc),
                None,
            )));
        }
        conn.execute_batch(&format!("PRAGMA mmap_size = {len};"))
            .map_err(snapshot_error)?;
        let mut index = LexicalIndex::checked(conn, true, lengths)?;
        index.image = Some(image);
        Ok(index)
    }

    /// The index over `conn`, if it holds the FTS table.
    fn checked(
        conn: Connection,
        mapped: bool,
        lengths: Arc<bm25::RowLengths>,
    ) -> Result<LexicalIndex, Error> {
        conn.execute_batch("PRAGMA temp_store = MEMORY;")?;
        bm25::register(&conn, &lengths)?;
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
        Ok(LexicalIndex {
            conn,
            mapped,
            writes_since_optimize: 0,
            lengths,
            image: None,
            slot: None,
            bulk_load: false,
        })
    }

    /// The whole index as one SQLite database image, for sealing.
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if SQLite cannot serialise the database.
    pub fn serialize(&self) -> Result<Vec<u8>, Error> {
        self.commit()?;
        let data = self
            .conn
            .serialize(MAIN_DB)
            .map_err(|e| Error::new(ErrorKind::Snapshot, format!("serialise index: {e}")))?;
        Ok(data.to_vec())
    }

    /// Makes a mapped index writable: copies it page by page into an
    /// ordinary in-memory database and drops the image.
    fn unmap(&mut self) -> Result<(), Error> {
        if !self.mapped {
            return Ok(());
        }
        // The published image stops being this index before anything
        // changes: a search from here on takes the writer's index.
        if let Some(slot) = &self.slot {
            slot.clear();
        }
        let mut copy = Connection::open_in_memory()?;
        copy.execute_batch("PRAGMA temp_store = MEMORY;")?;
        bm25::register(&copy, &self.lengths)?;
        {
            let backup = rusqlite::backup::Backup::new(&self.conn, &mut copy)?;
            backup.run_to_completion(i32::MAX, std::time::Duration::ZERO, None)?;
        }
        self.conn = copy;
        self.mapped = false;
        self.image = None;
        Ok(())
    }

    /// The index as one image shared with the read handles (issue 30): the
    /// image it reads in place if nothing was written since it was loaded
    /// or published, else the open batch committed and the whole database
    /// copied into a new image, which this index then reads in place (its
    /// own pages are dropped, so the image is in memory once). Published to
    /// the attached [`ImageSlot`], if any. What a snapshot seals.
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if SQLite cannot serialise the database or
    /// the image does not open again.
    pub fn share(&mut self) -> Result<Arc<SharedImage>, Error> {
        let image = match (&self.image, self.mapped) {
            (Some(image), true) => Arc::clone(image),
            _ => {
                self.commit()?;
                let data = self.conn.serialize(MAIN_DB).map_err(|e| {
                    Error::new(ErrorKind::Snapshot, format!("serialise index: {e}"))
                })?;
                let image = Arc::new(SharedImage::copied(&data)?);
                drop(data);
                // The lengths kept are this same content's.
                let over = LexicalIndex::over_with(Arc::clone(&image), Arc::clone(&self.lengths))?;
                self.conn = over.conn;
                self.image = over.image;
                self.mapped = true;
                image
            }
        };
        if let Some(slot) = &self.slot {
            slot.set(Some(Arc::clone(&image)));
        }
        Ok(image)
    }

    /// Publishes this index's image to `slot` from now on: at once if it
    /// reads a shared image in place, else at its next
    /// [`LexicalIndex::share`]. Its first write empties the slot again.
    pub fn attach(&mut self, slot: Arc<ImageSlot>) {
        slot.set(if self.mapped {
            self.image.clone()
        } else {
            None
        });
        self.slot = Some(slot);
    }

    /// Stops publishing to the attached slot, and empties it: the index
    /// is being dropped (idle eviction, §3.5).
    pub fn detach(&mut self) -> Option<Arc<ImageSlot>> {
        let slot = self.slot.take();
        if let Some(s) = &slot {
            s.clear();
        }
        slot
    }

    /// Opens the batch transaction if none is open (unmapping first).
    fn begin(&mut self) -> Result<(), Error> {
        self.unmap()?;
        if self.conn.is_autocommit() {
            self.conn.execute_batch("BEGIN")?;
        }
        Ok(())
    }

    /// True while the index reads a loaded image in place (see [`LexicalIndex`]).
    pub fn is_mapped(&self) -> bool {
        self.mapped
    }

    /// Commits the open batch, if any: the rows written since become part
    /// of the database image.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot commit.
    pub fn commit(&self) -> Result<(), Error> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// Indexes one chunk under its row id, replacing any row with that id.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the insert.
    pub fn insert(
        &mut self,
        chunk_id: i64,
        title: &str,
        trail: &str,
        body: &str,
    ) -> Result<(), Error> {
        self.delete(chunk_id)?;
        self.insert_new(chunk_id, title, trail, body)
    }

    /// Indexes one chunk whose row id the index has never held, as every
    /// chunk the store writes is (its ids are never reused): no delete is
    /// tried first. Inserting an id already held leaves two rows under it.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the insert.
    pub fn insert_new(
        &mut self,
        chunk_id: i64,
        title: &str,
        trail: &str,
        body: &str,
    ) -> Result<(), Error> {
        self.begin()?;
        self.lengths.forget(chunk_id);
        self.conn
            .prepare_cached("INSERT INTO fts(rowid, title, trail, body) VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![
                chunk_id,
                text::index_form(title),
                text::index_form(trail),
                text::index_form(body)
            ])?;
        self.writes_since_optimize += 1;
        Ok(())
    }

    /// Removes one chunk. Removing an absent row is not an error.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the delete.
    pub fn delete(&mut self, chunk_id: i64) -> Result<(), Error> {
        self.begin()?;
        self.lengths.forget(chunk_id);
        self.conn
            .prepare_cached("DELETE FROM fts WHERE rowid = ?1")?
            .execute(params![chunk_id])?;
        self.writes_since_optimize += 1;
        Ok(())
    }

    /// Starts a bulk load (an import, issue 30): until
    /// [`LexicalIndex::end_bulk_load`] (or [`LexicalIndex::settle`], which
    /// ends it) FTS5 merges no segment as rows are written
    /// ([`BULK_LOAD_AUTOMERGE_SEGMENTS`], [`BULK_LOAD_CRISISMERGE_SEGMENTS`]),
    /// so the rows are merged once, by the `optimize` that settles the load,
    /// rather than level by level and then once more. What the index holds
    /// is the same; only when its segments are merged changes.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the setting.
    pub fn begin_bulk_load(&mut self) -> Result<(), Error> {
        self.begin()?;
        self.set_merge_config(BULK_LOAD_AUTOMERGE_SEGMENTS, BULK_LOAD_CRISISMERGE_SEGMENTS)?;
        self.bulk_load = true;
        Ok(())
    }

    /// Ends a bulk load, if one is open: the rows pending in FTS5's memory
    /// are written out as one more segment while merging is still off (so
    /// restoring the defaults does not set off a crisis merge of every
    /// segment just before `optimize` merges them all again), then FTS5's
    /// defaults are restored and their rows removed from `fts_config`,
    /// which holds what it held before the load.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot commit or refuses the setting.
    pub fn end_bulk_load(&mut self) -> Result<(), Error> {
        if !self.bulk_load {
            return Ok(());
        }
        self.commit()?;
        self.begin()?;
        self.set_merge_config(
            FTS5_DEFAULT_AUTOMERGE_SEGMENTS,
            FTS5_DEFAULT_CRISISMERGE_SEGMENTS,
        )?;
        self.conn
            .execute_batch("DELETE FROM fts_config WHERE k IN ('automerge', 'crisismerge')")?;
        self.commit()?;
        self.bulk_load = false;
        Ok(())
    }

    /// Sets FTS5's `automerge` and `crisismerge` (sqlite.org/fts5.html).
    fn set_merge_config(&self, automerge: i64, crisismerge: i64) -> Result<(), Error> {
        let mut set = self
            .conn
            .prepare_cached("INSERT INTO fts(fts, rank) VALUES (?1, ?2)")?;
        set.execute(params!["automerge", automerge])?;
        set.execute(params!["crisismerge", crisismerge])?;
        Ok(())
    }

    /// Commits, then merges the whole index into one segment (FTS5's
    /// `optimize`), so a search reads each word's postings once instead of
    /// once per segment. Worth its cost after a bulk load (a rebuild, an
    /// import); not after every small change. Ends a bulk load first
    /// ([`LexicalIndex::end_bulk_load`]).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite refuses the merge.
    pub fn optimize(&mut self) -> Result<(), Error> {
        self.end_bulk_load()?;
        self.unmap()?;
        self.commit()?;
        self.conn
            .execute_batch("INSERT INTO fts(fts) VALUES('optimize')")?;
        self.writes_since_optimize = 0;
        Ok(())
    }

    /// Commits the open batch, and merges the index into one segment if at
    /// least [`OPTIMIZE_AFTER_WRITES`] rows were written since the last
    /// merge. What a snapshot write calls first.
    ///
    /// # Errors
    /// As [`LexicalIndex::optimize`].
    pub fn settle(&mut self) -> Result<(), Error> {
        self.end_bulk_load()?;
        if self.writes_since_optimize >= OPTIMIZE_AFTER_WRITES {
            self.optimize()
        } else {
            self.commit()
        }
    }

    /// Runs a [`Plan`]'s tiers in order: one ranked page of at most `limit`
    /// hits after skipping `offset`, best first, with the chunks in
    /// `excluded` left out before ranking is cut (§4.1 rule 1). Each tier
    /// leaves out what the tiers above returned, and a tier runs only while
    /// `offset + limit` hits are not yet found. The fill tiers score at most
    /// [`FILL_ROWS_MAX`] passages each (see `search/query.rs`).
    ///
    /// # Errors
    /// As [`LexicalIndex::search`].
    pub fn ranked(
        &self,
        plan: &Plan,
        limit: usize,
        offset: usize,
        excluded: &[i64],
    ) -> Result<Vec<Hit>, Error> {
        // A long list (a reconciling sibling's chunks) is asked as a set.
        let set: Option<std::collections::HashSet<i64>> =
            (excluded.len() > EXCLUDED_SCAN_MAX).then(|| excluded.iter().copied().collect());
        let left_out = |c: i64| match &set {
            Some(set) => set.contains(&c),
            None => excluded.contains(&c),
        };
        self.ranked_by(plan, limit, offset, |expr, cap, wanted, found, hits| {
            // At most every left-out chunk ranks above the rows wanted, so
            // that many more rows, read best first, always fill the tier.
            let rows = wanted + excluded.len() + found.len();
            let mut kept = Vec::with_capacity(wanted);
            self.each_ranked(expr, Some(rows), cap, hits, &mut |hit| {
                let c = hit.chunk_id;
                if !left_out(c) && found.iter().all(|h| h.chunk_id != c) {
                    kept.push(hit);
                }
                Ok(kept.len() < wanted)
            })?;
            Ok(kept)
        })
    }

    /// As [`LexicalIndex::ranked`], with the chunks `keep` refuses left out
    /// before ranking is cut, asked lazily: each tier's rows are read best
    /// first and `keep` is asked of each until the page is full, so a
    /// filter that passes most chunks is asked of a few more than the page,
    /// and nothing is listed up front (issue 30: a brief's scope listed
    /// every chunk outside it, 90,000 rows, on every request). The same
    /// hits as `ranked` with `excluded` holding every chunk `keep` refuses.
    ///
    /// # Errors
    /// As [`LexicalIndex::search`], and whatever `keep` returns.
    pub fn ranked_where(
        &self,
        plan: &Plan,
        limit: usize,
        offset: usize,
        keep: &mut dyn FnMut(i64) -> Result<bool, Error>,
    ) -> Result<Vec<Hit>, Error> {
        self.ranked_by(plan, limit, offset, |expr, cap, wanted, found, hits| {
            let mut kept = Vec::with_capacity(wanted);
            self.each_ranked(expr, None, cap, hits, &mut |hit| {
                if found.iter().all(|h| h.chunk_id != hit.chunk_id) && keep(hit.chunk_id)? {
                    kept.push(hit);
                }
                Ok(kept.len() < wanted)
            })?;
            Ok(kept)
        })
    }

    /// The tiers of `plan` in order (see [`LexicalIndex::ranked`]), each run
    /// by `run(expression, the most rows it may match, hits still wanted,
    /// hits found so far, phrase counts)`, which leaves out what was found
    /// and skips a tier matching more rows than it may.
    ///
    /// Each phrase's count of rows is read once per ranking
    /// ([`PhraseHits`]): the all-words tier counts every content word for
    /// its IDFs, and the fill tiers after it take their IDFs and the
    /// any-word tier its choice of words from those counts, where FTS5's
    /// `bm25()` ran every phrase of every tier over the index again
    /// (issue 30). The most-words tier is counted only when the counts
    /// cannot bound it by [`FILL_ROWS_MAX`].
    fn ranked_by(
        &self,
        plan: &Plan,
        limit: usize,
        offset: usize,
        mut run: impl FnMut(
            &str,
            Option<usize>,
            usize,
            &[Hit],
            &mut PhraseHits,
        ) -> Result<Vec<Hit>, Error>,
    ) -> Result<Vec<Hit>, Error> {
        let wanted = offset + limit;
        let mut hits: Vec<Hit> = Vec::with_capacity(wanted);
        let mut counts = PhraseHits::default();
        let mut tier = |expr: &str,
                        cap: Option<usize>,
                        hits: &mut Vec<Hit>,
                        counts: &mut PhraseHits|
         -> Result<(), Error> {
            let found = run(expr, cap, wanted - hits.len(), hits, counts)?;
            hits.extend(found);
            Ok(())
        };
        for t in plan.tiers() {
            if hits.len() >= wanted {
                break;
            }
            tier(t, None, &mut hits, &mut counts)?;
        }
        if hits.len() < wanted && !plan.any.is_empty() {
            // Tiers 3 and 4 come after tier 2, which counted every content
            // word (the words of `plan.any`); a word it did not count is
            // counted here.
            let mut words: Vec<(usize, &str)> = Vec::with_capacity(plan.any.len());
            for w in &plan.any {
                words.push((counts.of(self, w)?, w.as_str()));
            }
            if let Some(most) = &plan.most {
                // The passages holding all words but one hold that many of
                // the rarest of them, at most, for each one left out.
                let bound: usize = (0..words.len())
                    .map(|left_out| {
                        words
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| *i != left_out)
                            .map(|(_, (n, _))| *n)
                            .min()
                            .unwrap_or(0)
                    })
                    .sum();
                // Skipped if it matches more than a fill may score: unless
                // the counts bound it, the one pass that scores it counts
                // it too, and stops past the cap.
                let cap = (bound > FILL_ROWS_MAX).then_some(FILL_ROWS_MAX);
                tier(most, cap, &mut hits, &mut counts)?;
            }
            if hits.len() < wanted {
                words.sort_unstable();
                let mut total = 0;
                let mut chosen: Vec<&str> = Vec::new();
                for (n, w) in words {
                    if total + n > FILL_ROWS_MAX {
                        break;
                    }
                    total += n;
                    chosen.push(w);
                }
                if !chosen.is_empty() {
                    tier(&chosen.join(" OR "), None, &mut hits, &mut counts)?;
                }
            }
        }
        Ok(hits.into_iter().skip(offset).take(limit).collect())
    }

    /// The first `rows` rows `fts_query` matches (all of them with `None`),
    /// best first (the order of [`LexicalIndex::search`]), handed to `each`
    /// until it returns false. FTS5 scores every match either way; a bound
    /// lets SQLite keep only that many in its sort. An expression of more
    /// than one phrase is scored with each phrase's count of rows from
    /// `counts` ([`bm25::GIVEN_FUNCTION`]), the same scores as `bm25()`.
    ///
    /// With a `cap`, nothing is handed to `each` if `fts_query` matches
    /// more than `cap` rows: its matches are scored in one pass, in rowid
    /// order, which stops one row past the cap, and ranked after (issue
    /// 30: the most-words tier was counted by [`LexicalIndex::matches_at_most`],
    /// then run again to be scored).
    ///
    /// # Errors
    /// As [`LexicalIndex::search`], and whatever `each` returns.
    fn each_ranked(
        &self,
        fts_query: &str,
        rows: Option<usize>,
        cap: Option<usize>,
        counts: &mut PhraseHits,
        each: &mut dyn FnMut(Hit) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        if let Some(cap) = cap {
            return self.each_ranked_at_most(fts_query, rows, cap, counts, each);
        }
        if bm25::is_one_phrase(fts_query) {
            return self.each_ranked_one_phrase(fts_query, rows, each);
        }
        self.lengths.fill(&self.conn, COLUMNS)?;
        let mut hits = Vec::new();
        for p in bm25::phrases(fts_query) {
            hits.push(i64::try_from(counts.of(self, p)?).unwrap_or(i64::MAX));
        }
        let (wt, wr, wb) = BM25_WEIGHTS;
        let sql = format!(
            "SELECT rowid, {}(fts, {wt:.1}, {wr:.1}, {wb:.1}, ?3) AS score FROM fts \
             WHERE fts MATCH ?1 ORDER BY score, rowid LIMIT ?2",
            bm25::GIVEN_FUNCTION
        );
        let limit = rows.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt
            .query(params![fts_query, limit, bm25::hits_blob(&hits)])
            .map_err(query_error)?;
        while let Some(r) = rows.next().map_err(query_error)? {
            let hit = Hit {
                chunk_id: r.get(0).map_err(query_error)?,
                score: r.get(1).map_err(query_error)?,
            };
            if !each(hit)? {
                break;
            }
        }
        Ok(())
    }

    /// As [`LexicalIndex::each_ranked`] with a cap: every match scored by
    /// `bm25()`'s arithmetic ([`bm25::GIVEN_FUNCTION`], or one phrase's
    /// part) in rowid order, nothing handed on if there are more than
    /// `cap`, else ranked as `ORDER BY score, rowid` ranks them (SQLite
    /// compares the scores as numbers: equal scores go by rowid).
    ///
    /// # Errors
    /// As [`LexicalIndex::each_ranked`].
    fn each_ranked_at_most(
        &self,
        fts_query: &str,
        rows: Option<usize>,
        cap: usize,
        counts: &mut PhraseHits,
        each: &mut dyn FnMut(Hit) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        if bm25::is_one_phrase(fts_query) {
            if self.matches_at_most(fts_query, cap)?.is_some() {
                self.each_ranked_one_phrase(fts_query, rows, each)?;
            }
            return Ok(());
        }
        self.lengths.fill(&self.conn, COLUMNS)?;
        let mut hits = Vec::new();
        for p in bm25::phrases(fts_query) {
            hits.push(i64::try_from(counts.of(self, p)?).unwrap_or(i64::MAX));
        }
        let (wt, wr, wb) = BM25_WEIGHTS;
        let sql = format!(
            "SELECT rowid, {}(fts, {wt:.1}, {wr:.1}, {wb:.1}, ?2) FROM fts WHERE fts MATCH ?1",
            bm25::GIVEN_FUNCTION
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut matched = stmt
            .query(params![fts_query, bm25::hits_blob(&hits)])
            .map_err(query_error)?;
        let mut scored: Vec<Hit> = Vec::new();
        while let Some(r) = matched.next().map_err(query_error)? {
            if scored.len() == cap {
                return Ok(());
            }
            scored.push(Hit {
                chunk_id: r.get(0).map_err(query_error)?,
                score: r.get(1).map_err(query_error)?,
            });
        }
        drop(matched);
        scored.sort_by(|a, b| {
            a.score
                .partial_cmp(&b.score)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.chunk_id.cmp(&b.chunk_id))
        });
        for hit in scored.into_iter().take(rows.unwrap_or(usize::MAX)) {
            if !each(hit)? {
                break;
            }
        }
        Ok(())
    }

    /// How many rows hold `phrase` (one quoted phrase, [`bm25::phrases`]):
    /// its IDF's `nHit`, counted as FTS5's `bm25()` counts it.
    ///
    /// # Errors
    /// As [`LexicalIndex::search`].
    fn rows_holding(&self, phrase: &str) -> Result<usize, Error> {
        // Asked of the first row the phrase matches: `bm25()`'s own count
        // (`xQueryPhrase`), in one C loop; no row, no count.
        let sql = format!(
            "SELECT {}(fts) FROM fts WHERE fts MATCH ?1 LIMIT 1",
            bm25::PHRASE_ROWS_FUNCTION
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let n: i64 = stmt
            .query_row(params![phrase], |r| r.get(0))
            .optional()
            .map_err(query_error)?
            .unwrap_or(0);
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// As [`LexicalIndex::each_ranked`] for an expression of one phrase
    /// ([`bm25::is_one_phrase`]): every match is read once with its own
    /// part of the score, and the IDF, whose `nHit` is their count, is
    /// multiplied in after ([`bm25::score`]), so FTS5 never runs the phrase
    /// a second time to count it (issue 30). The same hits, scores and
    /// order as `bm25()` under `ORDER BY score, rowid`.
    ///
    /// # Errors
    /// As [`LexicalIndex::each_ranked`].
    fn each_ranked_one_phrase(
        &self,
        fts_query: &str,
        rows: Option<usize>,
        each: &mut dyn FnMut(Hit) -> Result<bool, Error>,
    ) -> Result<(), Error> {
        self.lengths.fill(&self.conn, COLUMNS)?;
        let split = match StopPhrase::of(fts_query) {
            Some(split) => self.stop_phrase_parts(&split)?,
            None => None,
        };
        let (parts, table_rows) = match split {
            Some(found) => found,
            None => self.phrase_parts(fts_query)?,
        };
        let hits_n = parts.len() as i64;
        let mut hits: Vec<Hit> = parts
            .into_iter()
            .map(|(chunk_id, part)| Hit {
                chunk_id,
                score: bm25::score(part, hits_n, table_rows),
            })
            .collect();
        hits.sort_unstable_by(|a, b| {
            a.score
                .total_cmp(&b.score)
                .then(a.chunk_id.cmp(&b.chunk_id))
        });
        for hit in hits.into_iter().take(rows.unwrap_or(usize::MAX)) {
            if !each(hit)? {
                break;
            }
        }
        Ok(())
    }

    /// Every row one phrase (`fts_query`, [`bm25::is_one_phrase`])
    /// matches, with its own part of the score ([`bm25::PART_FUNCTION`]),
    /// and the table's row count: FTS5 matches the phrase in one pass.
    ///
    /// # Errors
    /// As [`LexicalIndex::each_ranked`].
    fn phrase_parts(&self, fts_query: &str) -> Result<PhraseRows, Error> {
        let (wt, wr, wb) = BM25_WEIGHTS;
        let sql = format!(
            "SELECT rowid, {}(fts, {wt:.1}, {wr:.1}, {wb:.1}), {}(fts) FROM fts WHERE fts MATCH ?1",
            bm25::PART_FUNCTION,
            bm25::ROWS_FUNCTION
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut matched = stmt.query(params![fts_query]).map_err(query_error)?;
        let mut parts: Vec<(i64, f64)> = Vec::new();
        let mut table_rows = 0i64;
        while let Some(r) = matched.next().map_err(query_error)? {
            parts.push((
                r.get(0).map_err(query_error)?,
                r.get(1).map_err(query_error)?,
            ));
            table_rows = r.get(2).map_err(query_error)?;
        }
        Ok((parts, table_rows))
    }

    /// As [`LexicalIndex::phrase_parts`] for a phrase holding stop words
    /// ([`StopPhrase`]), matched from its content runs first: the rows
    /// holding every run are read with the starts at which the runs line
    /// up ([`bm25::STARTS_FUNCTION`]), and the stop words' positions are
    /// sought only in those rows, one row at a time
    /// ([`bm25::POSITIONS_FUNCTION`]). The same rows and parts as FTS5's
    /// one pass, bit for bit; `None` if the runs line up in more than
    /// [`PHRASE_SEEK_ROWS_MAX`] rows, where that one pass costs less.
    ///
    /// # Errors
    /// As [`LexicalIndex::each_ranked`].
    fn stop_phrase_parts(&self, split: &StopPhrase) -> Result<Option<PhraseRows>, Error> {
        let sql = format!(
            "SELECT rowid, {}(fts, ?2) FROM fts WHERE fts MATCH ?1",
            bm25::STARTS_FUNCTION
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let runs = bm25::runs_blob(&split.run_offsets());
        let mut rows = stmt
            .query(params![split.content_expression(), runs])
            .map_err(query_error)?;
        let mut lined: Vec<(i64, bm25::LinedUp)> = Vec::new();
        while let Some(r) = rows.next().map_err(query_error)? {
            let value = r.get_ref(1).map_err(query_error)?;
            let Some(bytes) = value
                .as_blob_or_null()
                .map_err(|_| Error::new(ErrorKind::Query, "a lined-up row's value is not bytes"))?
            else {
                continue;
            };
            if lined.len() == PHRASE_SEEK_ROWS_MAX {
                return Ok(None);
            }
            lined.push((
                r.get(0).map_err(query_error)?,
                bm25::LinedUp::decode(bytes)?,
            ));
        }
        drop(rows);
        let sql = format!(
            "SELECT {}(fts) FROM fts WHERE fts MATCH ?1 AND rowid = ?2",
            bm25::POSITIONS_FUNCTION
        );
        let mut seek = self.conn.prepare_cached(&sql)?;
        let stops = split.stop_expression();
        let offsets = split.stop_offsets();
        let (wt, wr, wb) = BM25_WEIGHTS;
        let weights = [wt, wr, wb];
        let mut parts: Vec<(i64, f64)> = Vec::new();
        let mut table_rows = 0i64;
        for (row, up) in lined {
            let found: Option<Vec<u8>> = seek
                .query_row(params![stops, row], |r| r.get(0))
                .optional()
                .map_err(query_error)?;
            // A row holding none of the stop words is not sought further.
            let Some(found) = found else { continue };
            let at: Vec<(Vec<Position>, &[u32])> = bm25::decode_positions(&found, offsets.len())?
                .into_iter()
                .zip(offsets.iter().copied())
                .collect();
            let instances = phrase::verified(&up.starts, &at);
            if instances.is_empty() {
                continue;
            }
            // `bm25()`'s sum of the instances' column weights, in order.
            let mut freq = 0.0f64;
            for (col, _) in instances {
                freq += weights.get(col as usize).copied().unwrap_or(1.0);
            }
            parts.push((row, bm25::part(freq, f64::from(up.length), up.avgdl)));
            table_rows = up.rows;
        }
        Ok(Some((parts, table_rows)))
    }

    /// How many chunks `fts_query` matches, if at most `cap`; `None` if more.
    /// Costs at most `cap + 1` rows, and no scoring.
    ///
    /// # Errors
    /// As [`LexicalIndex::search`].
    pub fn matches_at_most(&self, fts_query: &str, cap: usize) -> Result<Option<usize>, Error> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ?1 LIMIT ?2)",
        )?;
        let n: i64 = stmt
            .query_row(params![fts_query, cap as i64 + 1], |r| r.get(0))
            .map_err(query_error)?;
        Ok((n as usize <= cap).then_some(n as usize))
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
        let excluded = if excluded.is_empty() {
            "[]".to_string()
        } else {
            serde_json::to_string(excluded).expect("ids serialise")
        };
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
        rows.map_err(query_error)
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
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert(7, "Office", "Phones", "Reception answers calls")
            .unwrap();
        let hits = idx.search("\"calling\"", 10, 0).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].chunk_id, 7);
    }

    #[test]
    fn excluded_chunks_take_no_slot_so_the_rest_fill_the_page() {
        let mut idx = LexicalIndex::new().unwrap();
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
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert(1, "t", "", "descaling the coffee machine")
            .unwrap();
        idx.delete(1).unwrap();
        assert!(idx.search("\"coffee\"", 10, 0).unwrap().is_empty());
        assert!(idx.is_empty().unwrap());
    }

    #[test]
    fn the_index_survives_serialise_and_deserialise() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert(3, "Budget", "Q3", "travel line item").unwrap();
        let bytes = idx.serialize().unwrap();
        let back = LexicalIndex::deserialize(&bytes).unwrap();
        assert_eq!(back.chunk_ids().unwrap(), vec![3]);
        assert_eq!(back.search("\"travel\"", 10, 0).unwrap()[0].chunk_id, 3);
    }

    fn ranked_ids(idx: &LexicalIndex, text: &str, limit: usize, offset: usize) -> Vec<i64> {
        let plan = crate::search::query::plan(text).unwrap();
        idx.ranked(&plan, limit, offset, &[])
            .unwrap()
            .iter()
            .map(|h| h.chunk_id)
            .collect()
    }

    #[test]
    fn the_decomposed_form_of_a_word_finds_its_composed_form_and_back() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "Menu", "", "the café opens at nine")
            .unwrap();
        idx.insert_new(2, "Menu", "", "crème bru\u{302}le\u{301}e for two")
            .unwrap();
        assert_eq!(ranked_ids(&idx, "cafe\u{301}", 10, 0), vec![1]);
        assert_eq!(ranked_ids(&idx, "brûlée", 10, 0), vec![2]);
    }

    #[test]
    fn a_hangul_word_typed_as_jamo_finds_its_syllables_and_back() {
        use unicode_normalization::UnicodeNormalization as _;
        // Hangul syllables decompose into jamo, which are letters, not marks:
        // the tokenizer cannot fold them, so only normalising both sides
        // makes the two spellings one word.
        let composed = "한국어";
        let jamo: String = composed.nfd().collect();
        assert_ne!(composed, jamo);
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "Notes", "", &format!("{composed} 수업"))
            .unwrap();
        idx.insert_new(2, "Notes", "", &format!("{jamo} 시험"))
            .unwrap();
        let mut both = ranked_ids(&idx, &jamo, 10, 0);
        both.sort_unstable();
        assert_eq!(both, vec![1, 2]);
        let mut both = ranked_ids(&idx, composed, 10, 0);
        both.sort_unstable();
        assert_eq!(both, vec![1, 2]);
    }

    #[test]
    fn an_unaccented_query_finds_the_accented_word() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "Trip", "", "Spotkanie w Polską stolicą")
            .unwrap();
        idx.insert_new(2, "Trip", "", "Gdańsk and Łódź in one day")
            .unwrap();
        assert_eq!(ranked_ids(&idx, "polska", 10, 0), vec![1]);
        assert_eq!(ranked_ids(&idx, "gdansk", 10, 0), vec![2]);
        // Ł is a letter of its own, not L with a mark: Unicode gives it no
        // decomposition, and the fold table takes it to `l` (issue 32).
        assert_eq!(ranked_ids(&idx, "łodz", 10, 0), vec![2]);
        assert_eq!(ranked_ids(&idx, "lodz", 10, 0), vec![2]);
    }

    #[test]
    fn a_word_typed_plainly_finds_it_written_in_greek_cyrillic_or_with_a_letter_of_its_own() {
        // (typed, written): Greek tonos and final sigma, Cyrillic ё, and
        // letters with no decomposition (issue 32).
        let rows = [
            ("οδος", "ΟΔΌΣ"),
            ("Οδός", "οδος"),
            ("ελπιδα", "ελπίδα"),
            ("еж", "Ёж"),
            ("oresund", "Øresund"),
            ("strasse", "STRASSE Straße"),
            ("STRASSE", "Straße"),
            ("dakar", "Đakar"),
            ("aesir", "Æsir"),
            ("istanbul", "ıstanbul"),
            ("istanbul", "İstanbul"),
            ("kobenhavn", "København"),
        ];
        for (typed, written) in rows {
            let mut idx = LexicalIndex::new().unwrap();
            idx.insert_new(1, "t", "", &format!("before {written} after"))
                .unwrap();
            idx.insert_new(2, "t", "", "before after").unwrap();
            assert_eq!(
                ranked_ids(&idx, typed, 10, 0),
                vec![1],
                "{typed} → {written}"
            );
            // And back: the written form finds itself.
            assert_eq!(ranked_ids(&idx, written, 10, 0), vec![1], "{written}");
        }
    }

    #[test]
    fn a_japanese_word_finds_the_sentence_that_holds_it() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "議事録", "", "東京で会議を開きました。")
            .unwrap();
        idx.insert_new(2, "議事録", "", "京都で食事をしました。")
            .unwrap();
        idx.insert_new(3, "Notes", "", "Meeting in Tokyo").unwrap();
        assert_eq!(ranked_ids(&idx, "東京", 10, 0), vec![1]);
        assert_eq!(ranked_ids(&idx, "会議", 10, 0), vec![1]);
        assert_eq!(ranked_ids(&idx, "京都", 10, 0), vec![2]);
        // One character finds the pairs it starts: 京 begins 京で and 京都.
        let mut one = ranked_ids(&idx, "京", 10, 0);
        one.sort_unstable();
        assert_eq!(one, vec![1, 2]);
        // A run needs its pairs adjacent: 東京都 is not in either passage.
        assert!(ranked_ids(&idx, "東京都", 10, 0).is_empty());
    }

    #[test]
    fn a_chinese_word_beside_a_latin_one_finds_the_passage_holding_both() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "报告", "", "我们在北京开会，讨论API设计。")
            .unwrap();
        idx.insert_new(2, "报告", "", "我们在上海开会。").unwrap();
        assert_eq!(ranked_ids(&idx, "北京 api", 10, 0), vec![1]);
        assert_eq!(ranked_ids(&idx, "开会", 10, 0).len(), 2);
    }

    #[test]
    fn a_date_ranks_the_passage_holding_it_above_one_holding_its_numbers_apart() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(
            1,
            "Training log",
            "",
            "14 sets, 03 reps, in 2026. 14 sets again, 03 reps, 2026 goals",
        )
        .unwrap();
        idx.insert_new(
            2,
            "Minutes",
            "",
            "The board met on 2026-03-14 and approved the budget for the coming year",
        )
        .unwrap();
        assert_eq!(ranked_ids(&idx, "2026-03-14", 10, 0), [2, 1]);
    }

    #[test]
    fn a_hyphenated_word_ranks_its_exact_form_above_its_parts_apart() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(
            1,
            "Multi purpose agent",
            "Agent",
            "A multi purpose agent for agent work",
        )
        .unwrap();
        idx.insert_new(
            2,
            "Design",
            "",
            "We chose a multi-agent design with one planner and many workers",
        )
        .unwrap();
        assert_eq!(ranked_ids(&idx, "multi-agent", 10, 0), [2, 1]);
    }

    #[test]
    fn passages_holding_every_word_come_before_those_holding_any() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "t", "", "kettle kettle kettle kettle kettle")
            .unwrap();
        idx.insert_new(
            2,
            "t",
            "",
            "descaling the kettle is a monthly chore and the machine descaling too",
        )
        .unwrap();
        idx.insert_new(3, "t", "", "unrelated text about nothing")
            .unwrap();
        assert_eq!(ranked_ids(&idx, "kettle descaling", 10, 0), [2, 1]);
    }

    #[test]
    fn a_stop_word_does_not_lift_a_passage_that_lacks_the_content_words() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "t", "", "on on on on on and on, the word on")
            .unwrap();
        idx.insert_new(2, "t", "", "the printer is broken").unwrap();
        assert_eq!(ranked_ids(&idx, "printer on", 10, 0), [2]);
    }

    #[test]
    fn pages_cut_across_the_tiers_repeat_no_passage_and_skip_none() {
        let mut idx = LexicalIndex::new().unwrap();
        for id in 1..=9 {
            let body = match id % 3 {
                0 => "alpha beta",
                1 => "alpha gamma beta",
                _ => "alpha only",
            };
            idx.insert_new(id, "t", "", body).unwrap();
        }
        let all = ranked_ids(&idx, "alpha beta", 100, 0);
        assert_eq!(all.len(), 9);
        let mut paged = Vec::new();
        for page in 0..5 {
            paged.extend(ranked_ids(&idx, "alpha beta", 2, page * 2));
        }
        assert_eq!(paged, all);
        assert_eq!(&all[..3], [3, 6, 9], "the phrase tier first");
    }

    #[test]
    fn passages_missing_one_word_come_before_those_holding_one() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "t", "", "alpha alpha alpha alpha")
            .unwrap();
        idx.insert_new(2, "t", "", "alpha and gamma").unwrap();
        idx.insert_new(3, "t", "", "gamma beta and alpha").unwrap();
        assert_eq!(ranked_ids(&idx, "alpha beta gamma", 10, 0), [3, 2, 1]);
    }

    #[test]
    fn a_word_in_more_passages_than_a_fill_may_score_does_not_fill_the_page() {
        let mut idx = LexicalIndex::new().unwrap();
        for id in 1..=(FILL_ROWS_MAX as i64 + 1) {
            idx.insert_new(id, "t", "", "common").unwrap();
        }
        let rare = FILL_ROWS_MAX as i64 + 2;
        idx.insert_new(rare, "t", "", "rare").unwrap();
        // No passage holds both: the fill takes the rare word and never the common one.
        assert_eq!(ranked_ids(&idx, "common rare", 10, 0), [rare]);
        // Alone, the common word is every word of the query: all its passages rank.
        assert_eq!(ranked_ids(&idx, "common", 10, 0).len(), 10);
        assert_eq!(
            idx.matches_at_most("\"common\"", FILL_ROWS_MAX).unwrap(),
            None
        );
        assert_eq!(
            idx.matches_at_most("\"rare\"", FILL_ROWS_MAX).unwrap(),
            Some(1)
        );
    }

    #[test]
    fn excluded_chunks_take_no_slot_in_any_tier() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "t", "", "alpha beta").unwrap();
        idx.insert_new(2, "t", "", "beta then alpha").unwrap();
        idx.insert_new(3, "t", "", "alpha").unwrap();
        let plan = crate::search::query::plan("alpha beta").unwrap();
        let ids: Vec<i64> = idx
            .ranked(&plan, 10, 0, &[1, 2])
            .unwrap()
            .iter()
            .map(|h| h.chunk_id)
            .collect();
        assert_eq!(ids, [3]);
    }

    #[test]
    fn a_filter_asked_row_by_row_ranks_exactly_as_the_same_chunks_excluded_up_front() {
        let mut idx = LexicalIndex::new().unwrap();
        for id in 1..=30 {
            let body = match id % 5 {
                0 => "alpha beta",
                1 => "alpha gamma beta",
                2 => "alpha only",
                3 => "beta alone here",
                _ => "gamma and alpha and beta again",
            };
            idx.insert_new(id, "t", "", body).unwrap();
        }
        // (query, the chunks the filter refuses, limit, offset)
        let table: &[(&str, &[i64], usize, usize)] = &[
            ("alpha beta", &[], 10, 0),
            ("alpha beta", &[1, 2, 3, 5, 10, 15], 10, 0),
            ("alpha beta", &[1, 2, 3, 5, 10, 15], 4, 6),
            ("alpha beta gamma", &[4, 9, 14, 19, 24, 29], 48, 0),
            ("beta", &(1..=29).collect::<Vec<i64>>(), 5, 0),
            ("alpha", &(1..=30).collect::<Vec<i64>>(), 5, 0),
        ];
        for (q, refused, limit, offset) in table {
            let plan = crate::search::query::plan(q).unwrap();
            let up_front = idx.ranked(&plan, *limit, *offset, refused).unwrap();
            let mut asked = 0;
            let row_by_row = idx
                .ranked_where(&plan, *limit, *offset, &mut |c| {
                    asked += 1;
                    Ok(!refused.contains(&c))
                })
                .unwrap();
            assert_eq!(row_by_row, up_front, "{q} without {refused:?}");
            if refused.is_empty() {
                assert!(
                    asked <= limit + offset,
                    "a filter that refuses nothing is asked of the page alone ({asked})"
                );
            }
        }
    }

    #[test]
    fn a_one_phrase_expression_ranks_and_scores_bit_for_bit_as_fts5_bm25() {
        let mut idx = LexicalIndex::new().unwrap();
        let words = ["alpha", "beta", "gamma", "delta", "alphabet"];
        for id in 1..=60i64 {
            let n = id as usize;
            let body: Vec<&str> = (0..(n % 17) + 2)
                .map(|i| words[(n * 7 + i * 3) % 5])
                .collect();
            let title = if n.is_multiple_of(4) {
                "alpha beta"
            } else {
                "notes"
            };
            let trail = if n.is_multiple_of(6) { "gamma" } else { "" };
            idx.insert_new(id, title, trail, &body.join(" ")).unwrap();
        }
        idx.delete(12).unwrap();
        // Lengths past one varint byte (128 and 16,384 tokens).
        let long = |n: usize| vec!["alpha beta"; n / 2].join(" ");
        idx.insert_new(61, "notes", "", &long(300)).unwrap();
        idx.insert_new(62, "notes", "gamma", &long(20_000)).unwrap();
        // (expression, rows asked): one word, a phrase, a prefix, no match.
        let table: &[(&str, Option<usize>)] = &[
            ("\"alpha\"", None),
            ("\"alpha\"", Some(5)),
            ("\"alpha beta\"", None),
            ("\"beta gamma delta\"", Some(21)),
            ("\"alph\"*", None),
            ("\"gamma\"", Some(1)),
            ("\"nothing\"", None),
        ];
        let same_as_fts5 = |idx: &LexicalIndex, when: &str| {
            for (expr, rows) in table {
                assert!(bm25::is_one_phrase(expr), "{expr}");
                let mut ours = Vec::new();
                idx.each_ranked_one_phrase(expr, *rows, &mut |h| {
                    ours.push(h);
                    Ok(true)
                })
                .unwrap();
                let fts5 = idx.search(expr, rows.unwrap_or(1_000), 0).unwrap();
                assert_eq!(ours, fts5, "{when}: {expr}");
                let bits = |hs: &[Hit]| hs.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&ours),
                    bits(&fts5),
                    "{when}: {expr}: the very same scores"
                );
            }
        };
        same_as_fts5(&idx, "in the open batch");
        assert_eq!(idx.lengths.kept(), 61, "every row's length is kept");
        // The kept lengths follow a replaced row, a deleted one, a new one
        // and a commit, and a loaded image reads its own.
        idx.insert(7, "alpha beta", "", &long(500)).unwrap();
        idx.delete(61).unwrap();
        idx.insert_new(63, "notes", "", "alpha alpha gamma")
            .unwrap();
        same_as_fts5(&idx, "after writes");
        idx.optimize().unwrap();
        same_as_fts5(&idx, "committed");
        let loaded = LexicalIndex::deserialize(&idx.serialize().unwrap()).unwrap();
        same_as_fts5(&loaded, "loaded");
        assert_eq!(loaded.lengths.kept(), 61);
        assert!(!idx.search("\"alpha\"", 1_000, 0).unwrap().is_empty());
        for not_one in [
            "\"alpha\" AND \"beta\"",
            "(\"a\" AND \"b\") OR (\"c\")",
            "\"a\" OR \"b\"",
        ] {
            assert!(!bm25::is_one_phrase(not_one), "{not_one}");
        }
    }

    #[test]
    fn a_phrase_with_stop_words_matched_from_its_other_words_first_is_bit_for_bit_fts5() {
        let mut idx = LexicalIndex::new().unwrap();
        // Passages where the content words line up with the stop words in
        // place, out of place, missing, twice, across columns; and filler.
        let bodies = [
            "how to configure a proxy server for apt",
            "how to configure the proxy server",
            "how to configure a proxy server and how to configure a proxy server again",
            "configure a proxy server how to",
            "how a configure to proxy server",
            "how to configure a proxy",
            "proxy server how to configure a proxy server",
            "to configure a proxy server",
            "the cat and the hat sat with the cat and the hat",
            "the cat and a hat",
            "cat and the hat",
        ];
        let mut id = 0i64;
        for (n, body) in bodies.iter().enumerate() {
            id += 1;
            let title = if n % 3 == 0 {
                "how to configure a proxy server"
            } else {
                "notes"
            };
            idx.insert_new(id, title, "", body).unwrap();
        }
        for n in 0..20 {
            id += 1;
            let body = format!("to a the and filler {n} how configure proxy server cat hat");
            idx.insert_new(id, "filler", "to a", &body).unwrap();
        }
        idx.delete(3).unwrap();
        let table = [
            "\"how to configure a proxy server\"",
            "\"to configure a proxy server\"",
            "\"a proxy server\"",
            "\"the cat and the hat\"",
            "\"cat and the hat\"",
            "\"how to\"",
            "\"proxy server for\"",
            "\"to nothing\"",
        ];
        let same_as_fts5 = |idx: &LexicalIndex, when: &str| {
            for expr in table {
                let split = StopPhrase::of(expr).unwrap();
                let (parts, _) = idx.stop_phrase_parts(&split).unwrap().unwrap();
                assert_eq!(
                    parts.len(),
                    idx.phrase_parts(expr).unwrap().0.len(),
                    "{when}: {expr}: the same rows as FTS5's pass"
                );
                let mut ours = Vec::new();
                idx.each_ranked_one_phrase(expr, None, &mut |h| {
                    ours.push(h);
                    Ok(true)
                })
                .unwrap();
                let fts5 = idx.search(expr, 1_000, 0).unwrap();
                assert_eq!(ours, fts5, "{when}: {expr}");
                let bits = |hs: &[Hit]| hs.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&ours),
                    bits(&fts5),
                    "{when}: {expr}: the very same scores"
                );
            }
        };
        same_as_fts5(&idx, "in the open batch");
        idx.optimize().unwrap();
        same_as_fts5(&idx, "committed");
        let loaded = LexicalIndex::deserialize(&idx.serialize().unwrap()).unwrap();
        same_as_fts5(&loaded, "loaded");
        // Where the runs line up in more rows than are sought one by one,
        // FTS5 matches the whole phrase, with the same hits.
        let mut many = LexicalIndex::new().unwrap();
        for id in 1..=(PHRASE_SEEK_ROWS_MAX as i64 + 1) {
            many.insert_new(id, "t", "", "set to go").unwrap();
        }
        let expr = "\"set to go\"";
        assert_eq!(
            many.stop_phrase_parts(&StopPhrase::of(expr).unwrap())
                .unwrap(),
            None
        );
        assert_eq!(
            many.search(expr, 1_000, 0).unwrap().len(),
            PHRASE_SEEK_ROWS_MAX + 1
        );
        let mut ours = 0;
        many.each_ranked_one_phrase(expr, None, &mut |_| {
            ours += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(ours, PHRASE_SEEK_ROWS_MAX + 1);
    }

    #[test]
    fn a_phrase_s_rows_counted_as_bm25_counts_them_are_the_rows_fts5_matches() {
        let mut idx = LexicalIndex::new().unwrap();
        let words = ["alpha", "beta", "gamma", "delta", "alphabet"];
        for id in 1..=60i64 {
            let n = id as usize;
            let body: Vec<&str> = (0..(n % 11) + 1)
                .map(|i| words[(n * 3 + i * 7) % 5])
                .collect();
            let title = if n.is_multiple_of(4) {
                "gamma"
            } else {
                "notes"
            };
            idx.insert_new(id, title, "", &body.join(" ")).unwrap();
        }
        idx.insert_new(61, "東京 notes", "", "京都 alpha").unwrap();
        // (phrase): a word, a word in titles, a prefix, a phrase of two
        // words, pairs of an unspaced run, a word no row holds, a phrase
        // of no token.
        let table = [
            "\"alpha\"",
            "\"gamma\"",
            "\"alph\"*",
            "\"beta gamma\"",
            "\"東京\"",
            "\"nothing\"",
            "\"-\"",
        ];
        let same_as_fts5 = |idx: &LexicalIndex, when: &str| {
            for phrase in table {
                let fts5: i64 = idx
                    .conn
                    .query_row(
                        "SELECT count(*) FROM fts WHERE fts MATCH ?1",
                        params![phrase],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(
                    idx.rows_holding(phrase).unwrap() as i64,
                    fts5,
                    "{when}: {phrase}"
                );
            }
        };
        same_as_fts5(&idx, "pending");
        idx.delete(3).unwrap();
        idx.delete(61).unwrap();
        same_as_fts5(&idx, "deleted in the open batch");
        idx.optimize().unwrap();
        same_as_fts5(&idx, "committed");
        // Deletes after the merge leave tombstones over committed segments.
        idx.delete(8).unwrap();
        idx.delete(9).unwrap();
        idx.insert_new(62, "t", "", "alpha beta gamma").unwrap();
        same_as_fts5(&idx, "tombstones and a row pending");
        idx.commit().unwrap();
        same_as_fts5(&idx, "tombstones committed");
        let loaded = LexicalIndex::deserialize(&idx.serialize().unwrap()).unwrap();
        same_as_fts5(&loaded, "loaded");
        assert!(loaded.rows_holding("\"alpha\"").unwrap() > 0);
    }

    #[test]
    fn an_expression_of_many_phrases_scored_with_its_counts_is_bit_for_bit_fts5_bm25() {
        let mut idx = LexicalIndex::new().unwrap();
        let words = ["alpha", "beta", "gamma", "delta", "alphabet"];
        for id in 1..=80i64 {
            let n = id as usize;
            let body: Vec<&str> = (0..(n % 13) + 1)
                .map(|i| words[(n * 3 + i * 7) % 5])
                .collect();
            let title = if n.is_multiple_of(5) {
                "gamma delta"
            } else {
                "notes"
            };
            let trail = if n.is_multiple_of(7) { "beta" } else { "" };
            idx.insert_new(id, title, trail, &body.join(" ")).unwrap();
        }
        idx.insert_new(81, "東京 notes", "", "京都 alpha").unwrap();
        idx.delete(10).unwrap();
        idx.delete(33).unwrap();
        // (expression, rows asked): the tiers' shapes (all, most, any), a
        // word repeated across the expression, a prefix, a phrase of
        // pairs, a word no row holds.
        let table: &[(&str, Option<usize>)] = &[
            ("\"alpha\" AND \"beta\"", None),
            ("\"alpha\" AND \"beta\"", Some(3)),
            ("\"alpha\" AND \"beta\" AND \"gamma\"", Some(21)),
            (
                "(\"beta\" AND \"gamma\") OR (\"alpha\" AND \"gamma\") OR (\"alpha\" AND \"beta\")",
                None,
            ),
            ("\"delta\" OR \"alphabet\"", None),
            ("\"alph\"* OR \"gamma delta\"", Some(10)),
            ("\"東京\" OR \"京都\"", None),
            ("\"alpha\" AND \"nothing\"", None),
            ("\"nothing\" OR \"beta\"", Some(5)),
        ];
        let same_as_fts5 = |idx: &LexicalIndex, when: &str| {
            for (expr, rows) in table {
                assert!(!bm25::is_one_phrase(expr), "{expr}");
                let mut ours = Vec::new();
                let mut counts = PhraseHits::default();
                idx.each_ranked(expr, *rows, None, &mut counts, &mut |h| {
                    ours.push(h);
                    Ok(true)
                })
                .unwrap();
                let fts5 = idx.search(expr, rows.unwrap_or(1_000), 0).unwrap();
                assert_eq!(ours, fts5, "{when}: {expr}");
                let bits = |hs: &[Hit]| hs.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&ours),
                    bits(&fts5),
                    "{when}: {expr}: the very same scores"
                );
            }
        };
        same_as_fts5(&idx, "in the open batch");
        idx.optimize().unwrap();
        same_as_fts5(&idx, "committed");
        let loaded = LexicalIndex::deserialize(&idx.serialize().unwrap()).unwrap();
        same_as_fts5(&loaded, "loaded");
        assert_eq!(
            bm25::phrases("(\"a b\" AND \"c\"*) OR \"d\""),
            ["\"a b\"", "\"c\"*", "\"d\""]
        );
    }

    #[test]
    fn the_fill_tiers_read_their_counts_from_the_all_words_tier_and_rank_as_before() {
        // Rows for the tiers after the all-words tier: passages missing one
        // word, then passages holding any, with a word too common to fill.
        let mut idx = LexicalIndex::new().unwrap();
        let mut id = 0;
        let mut add = |idx: &mut LexicalIndex, body: &str| {
            id += 1;
            idx.insert_new(id, "t", "", body).unwrap();
        };
        add(&mut idx, "alpha beta gamma delta");
        add(&mut idx, "alpha beta gamma");
        add(&mut idx, "beta gamma delta and more");
        add(&mut idx, "alpha delta");
        add(&mut idx, "gamma only");
        for _ in 0..FILL_ROWS_MAX {
            add(&mut idx, "common words here");
        }
        add(&mut idx, "common alpha");
        // Two words each in more rows than a fill may score, seldom
        // together: the counts cannot bound the most-words tier, which
        // matches few rows and runs.
        for _ in 0..=FILL_ROWS_MAX {
            add(&mut idx, "often");
            add(&mut idx, "seldom");
        }
        add(&mut idx, "often seldom");
        add(&mut idx, "often alpha gamma");
        // The plan's tiers, each run alone through FTS5's own bm25(), are
        // the ranking: the counts shared across the tiers change nothing.
        for q in [
            "alpha beta gamma delta",
            "alpha beta gamma common",
            "delta common",
            "common words alpha",
            "often seldom alpha",
        ] {
            let plan = crate::search::query::plan(q).unwrap();
            let mut expected: Vec<i64> = Vec::new();
            let run = |expr: &str, expected: &mut Vec<i64>| {
                for h in idx.search(expr, 10_000, 0).unwrap() {
                    if !expected.contains(&h.chunk_id) {
                        expected.push(h.chunk_id);
                    }
                }
            };
            for t in plan.tiers() {
                run(t, &mut expected);
            }
            if let Some(most) = &plan.most
                && idx.matches_at_most(most, FILL_ROWS_MAX).unwrap().is_some()
            {
                run(most, &mut expected);
            }
            let mut counted: Vec<(usize, &str)> = plan
                .any
                .iter()
                .filter_map(|w| {
                    idx.matches_at_most(w, FILL_ROWS_MAX)
                        .unwrap()
                        .map(|n| (n, w.as_str()))
                })
                .collect();
            counted.sort_unstable();
            let mut total = 0;
            let chosen: Vec<&str> = counted
                .into_iter()
                .take_while(|(n, _)| {
                    total += n;
                    total <= FILL_ROWS_MAX
                })
                .map(|(_, w)| w)
                .collect();
            if !chosen.is_empty() {
                run(&chosen.join(" OR "), &mut expected);
            }
            for (limit, offset) in [(100, 0), (3, 0), (2, 3)] {
                let want: Vec<i64> = expected.iter().copied().skip(offset).take(limit).collect();
                assert_eq!(
                    ranked_ids(&idx, q, limit, offset),
                    want,
                    "{q} ({limit}, {offset})"
                );
            }
        }
    }

    #[test]
    fn a_search_sees_rows_written_in_the_open_batch_and_a_commit_keeps_them() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "t", "", "pending words").unwrap();
        assert!(!idx.conn.is_autocommit(), "the batch is open");
        assert_eq!(idx.search("\"pending\"", 10, 0).unwrap().len(), 1);
        idx.optimize().unwrap();
        assert!(idx.conn.is_autocommit());
        assert_eq!(idx.search("\"pending\"", 10, 0).unwrap().len(), 1);
        assert_eq!(idx.chunk_ids().unwrap(), [1]);
    }

    #[test]
    fn an_image_loaded_in_place_is_the_index_that_was_serialised() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(3, "Budget", "Q3", "travel line item")
            .unwrap();
        let bytes = idx.serialize().unwrap();
        let mut buffer = ImageBuffer::zeroed(bytes.len() + 7).unwrap();
        buffer.as_mut_slice()[5..5 + bytes.len()].copy_from_slice(&bytes);
        let mut back = LexicalIndex::from_image(buffer, 5..5 + bytes.len()).unwrap();
        assert_eq!(back.chunk_ids().unwrap(), vec![3]);
        assert_eq!(back.search("\"travel\"", 10, 0).unwrap()[0].chunk_id, 3);
        back.insert_new(4, "t", "", "grows after loading").unwrap();
        assert_eq!(back.len().unwrap(), 2);
    }

    #[test]
    fn a_loaded_index_reads_in_place_until_its_first_write_and_keeps_every_row() {
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(1, "t", "", "kettle descaling").unwrap();
        idx.insert_new(2, "t", "", "kettle").unwrap();
        let mut back = LexicalIndex::deserialize(&idx.serialize().unwrap()).unwrap();
        assert!(back.is_mapped());
        assert_eq!(back.search("\"kettle\"", 10, 0).unwrap().len(), 2);
        back.delete(2).unwrap();
        assert!(!back.is_mapped(), "a write copies the image out first");
        back.insert_new(3, "t", "", "kettle again").unwrap();
        back.commit().unwrap();
        let mut ids: Vec<i64> = back
            .search("\"kettle\"", 10, 0)
            .unwrap()
            .iter()
            .map(|h| h.chunk_id)
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, [1, 3]);
        assert_eq!(back.chunk_ids().unwrap(), [1, 3]);
    }

    #[test]
    fn a_bulk_load_is_merged_when_it_settles_and_a_small_write_is_not() {
        let mut idx = LexicalIndex::new().unwrap();
        for id in 1..OPTIMIZE_AFTER_WRITES as i64 {
            idx.insert_new(id, "t", "", "bulk").unwrap();
        }
        idx.settle().unwrap();
        assert_eq!(
            idx.writes_since_optimize,
            OPTIMIZE_AFTER_WRITES - 1,
            "committed, not merged"
        );
        idx.insert_new(OPTIMIZE_AFTER_WRITES as i64, "t", "", "bulk")
            .unwrap();
        idx.settle().unwrap();
        assert_eq!(idx.writes_since_optimize, 0, "merged");
        assert!(idx.conn.is_autocommit());
        assert_eq!(idx.len().unwrap(), OPTIMIZE_AFTER_WRITES as u64);
    }

    #[test]
    fn a_bulk_load_merges_nothing_until_it_ends_and_leaves_fts_config_as_it_found_it() {
        let segments = |idx: &LexicalIndex| -> i64 {
            idx.conn
                .query_row("SELECT count(DISTINCT segid) FROM fts_idx", [], |r| {
                    r.get(0)
                })
                .unwrap()
        };
        let config = |idx: &LexicalIndex| -> Vec<(String, String)> {
            let mut stmt = idx
                .conn
                .prepare("SELECT k, CAST(v AS TEXT) FROM fts_config ORDER BY k")
                .unwrap();
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        // More commits than FTS5's default crisis merge lets one level
        // hold, each flushing one segment of one row.
        let flushes = FTS5_DEFAULT_CRISISMERGE_SEGMENTS + 4;
        let load = |idx: &mut LexicalIndex| {
            for id in 1..=flushes {
                idx.insert_new(id, "t", "", "kettle").unwrap();
                idx.commit().unwrap();
            }
        };
        let mut plain = LexicalIndex::new().unwrap();
        let found = config(&plain);
        load(&mut plain);
        assert!(
            segments(&plain) < flushes,
            "FTS5 merges as it goes by default"
        );

        let mut bulk = LexicalIndex::new().unwrap();
        bulk.begin_bulk_load().unwrap();
        load(&mut bulk);
        assert_eq!(segments(&bulk), flushes, "one segment a flush, none merged");
        bulk.end_bulk_load().unwrap();
        assert_eq!(config(&bulk), found);
        bulk.optimize().unwrap();
        assert_eq!(segments(&bulk), 1);
        assert_eq!(
            bulk.search("\"kettle\"", 100, 0).unwrap().len() as i64,
            flushes
        );
        assert_eq!(bulk.chunk_ids().unwrap(), plain.chunk_ids().unwrap());
    }

    #[test]
    fn garbage_in_place_is_not_an_index_image() {
        let mut buffer = ImageBuffer::zeroed(64).unwrap();
        buffer.as_mut_slice().copy_from_slice(&[7u8; 64]);
        assert!(LexicalIndex::from_image(buffer, 0..64).is_err());
    }

    #[test]
    fn garbage_is_not_an_index_image() {
        assert!(LexicalIndex::deserialize(b"not a database").is_err());
        assert!(LexicalIndex::deserialize(&[]).is_err());
    }

    #[test]
    fn the_contentless_table_keeps_no_copy_of_the_text() {
        let mut idx = LexicalIndex::new().unwrap();
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
