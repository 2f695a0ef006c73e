//! FTS5's `bm25()` without its second passes: one phrase scored in one pass over its matches, many with their counts given (§7.1, issue 30).
//!
//! Size: over 900 lines because every FTS5 auxiliary function memoria
//! registers, and the values they hand back, are one unsafe surface kept
//! in one file beside the arithmetic they repeat.
//!
//! FTS5's `bm25()` works out each phrase's IDF on its first call by
//! running the phrase again over the whole index (`xQueryPhrase`), so a
//! search by one phrase (the adjacency tier of [`crate::search::query::Plan`],
//! or a one-word query) finds its matches twice: the profile at 90,000
//! chunks put that second pass at a quarter of `Instance::search`'s CPU.
//! With one phrase the second pass is not needed: the rows the expression
//! matches *are* the rows holding the phrase, so their count is the IDF's
//! `nHit`. [`one_phrase_part`] gives each row the part of FTS5's score that
//! is the row's own; [`score`] multiplies in the IDF once every row is
//! read. Both repeat `fts5Bm25Function`'s arithmetic operation for
//! operation, so each score is bit for bit the one `bm25()` gives, and the
//! ranking (score, then rowid) is the same (a unit table compares them).
//!
//! An expression of several phrases (the all-words, most-words and
//! any-word tiers) has one IDF per phrase, and `bm25()` counts each by
//! running the phrase over the whole index, once per phrase per statement:
//! a most-words tier of four words runs twelve such counts of words the
//! all-words tier counted just before. [`GIVEN_FUNCTION`] is `bm25()` with
//! the counts given by the caller, who counts each word once per search.
//!
//! A phrase holding stop words is matched from its other words first
//! ([`crate::search::phrase`]): [`STARTS_FUNCTION`] gives, for each row
//! holding its content runs, the starts at which they line up, and
//! [`POSITIONS_FUNCTION`] the stop words' positions in one such row;
//! [`part`] is [`one_phrase_part`]'s arithmetic, for the instances that
//! survive.
//!
//! The functions are FTS5 auxiliary functions registered on each index
//! connection ([`register`]).
//!
//! A row's length in tokens (BM25's `D`) is FTS5's `xColumnSize`, one
//! `%_docsize` b-tree seek a row: 16% of a one-phrase search at 90,000
//! chunks (issue 30). [`RowLengths`] keeps every row's length in memory,
//! read from `%_docsize` in one scan on the first search after the index
//! is opened, and told of every insert and delete, so a row is sought only
//! when it was written since; its value is always the one `xColumnSize`
//! gives (the unit tables compare the scores' bits).

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, ffi};

use crate::error::{Error, ErrorKind};
use crate::search::phrase::Position;

/// The SQL name of [`one_phrase_part`]: `memoria_bm25_part(fts, w_title, w_trail, w_body)`.
pub const PART_FUNCTION: &str = "memoria_bm25_part";
/// The SQL name of the row count FTS5's `bm25()` divides by: `memoria_bm25_rows(fts)`.
pub const ROWS_FUNCTION: &str = "memoria_bm25_rows";
/// The SQL name of [`given_hits_score`]: `memoria_bm25_given(fts, w_title,
/// w_trail, w_body, hits)`, FTS5's `bm25()` with each phrase's count of
/// rows given (`hits`, [`hits_blob`]) rather than counted by FTS5.
pub const GIVEN_FUNCTION: &str = "memoria_bm25_given";

/// The SQL name of [`phrase_starts`]: `memoria_phrase_starts(fts, runs)`.
pub const STARTS_FUNCTION: &str = "memoria_phrase_starts";
/// The SQL name of [`phrase_positions`]: `memoria_phrase_positions(fts)`.
pub const POSITIONS_FUNCTION: &str = "memoria_phrase_positions";
/// The SQL name of [`phrase_rows`]: `memoria_phrase_rows(fts)`.
pub const PHRASE_ROWS_FUNCTION: &str = "memoria_phrase_rows";

/// BM25's `k1`, as FTS5 fixes it.
const K1: f64 = 1.2;
/// BM25's `b`, as FTS5 fixes it.
const B: f64 = 0.75;

/// The IDF FTS5's `bm25()` gives a phrase held by `hits` of `rows` rows:
/// `ln((rows − hits + 0.5) / (hits + 0.5))`, floored at 1e-6.
fn idf(hits: i64, rows: i64) -> f64 {
    let idf = (((rows - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// FTS5's score of a row from its own part (what [`PART_FUNCTION`]
/// returned) and the count of rows holding the phrase (`hits`) among
/// `rows` in the table: `-(0.0 + idf × part)`, the IDF floored at 1e-6, as
/// `fts5Bm25Function` computes it (lower is better).
pub fn score(part: f64, hits: i64, rows: i64) -> f64 {
    let total = 0.0 + idf(hits, rows) * part;
    // FTS5 returns `-1.0 * score`: IEEE negation, the same bits.
    -total
}

/// Each row's length in tokens, all columns summed (what FTS5's
/// `xColumnSize(-1)` gives), by row id: [`PART_FUNCTION`]'s `D` without a
/// `%_docsize` seek a row. Shared by an index and the auxiliary function
/// registered on its connection ([`register`]); the index must call
/// [`RowLengths::forget`] for every row it inserts or deletes.
#[derive(Debug, Default)]
pub struct RowLengths {
    inner: Mutex<Lengths>,
}

#[derive(Debug, Default)]
struct Lengths {
    /// True once `%_docsize` was read whole ([`RowLengths::fill`]).
    filled: bool,
    /// Each row's length, indexed by its row id; [`NO_LENGTH`] where none
    /// is kept. A vector, not a map: the length is asked once per scored
    /// row, and a map's lookup was 3.7% of a search's CPU over HTTP at
    /// 90,000 chunks, mostly cache misses in a table about six times this
    /// vector's size (issue 30). Row ids are the store's chunk ids, dense
    /// from 1.
    by_row: Vec<u32>,
}

/// What [`Lengths::by_row`] holds for a row with no length kept. Never a
/// length: [`summed_sizes`] keeps only lengths that fit a C int.
const NO_LENGTH: u32 = u32::MAX;

/// The first row id [`Lengths::by_row`] does not hold, so a store whose
/// ids run far past its count of rows costs at most 4 bytes times this,
/// 16 MiB; a row past it is sought by `xColumnSize` each time it is
/// scored. Chosen: 45 times the 90,000 chunks issue 30 measured.
const KEPT_ROW_ID_MAX: i64 = 1 << 22;

impl Lengths {
    /// The slot of `row`, if the vector may hold it.
    fn slot(row: i64) -> Option<usize> {
        (0..KEPT_ROW_ID_MAX)
            .contains(&row)
            .then(|| usize::try_from(row).ok())
            .flatten()
    }

    fn get(&self, row: i64) -> Option<u32> {
        let n = *self.by_row.get(Lengths::slot(row)?)?;
        (n != NO_LENGTH).then_some(n)
    }

    fn insert(&mut self, row: i64, n: u32) {
        let Some(at) = Lengths::slot(row) else {
            return;
        };
        if at >= self.by_row.len() {
            self.by_row.resize(at + 1, NO_LENGTH);
        }
        self.by_row[at] = n;
    }

    fn remove(&mut self, row: i64) {
        if let Some(n) = Lengths::slot(row).and_then(|at| self.by_row.get_mut(at)) {
            *n = NO_LENGTH;
        }
    }
}

impl RowLengths {
    fn lock(&self) -> std::sync::MutexGuard<'_, Lengths> {
        // The map holds only lengths FTS5 gave; a panic mid-update leaves
        // at worst a row missing, which is then sought again.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads every row's length from `conn`'s `fts_docsize` (the table
    /// named `fts`, `columns` indexed columns), once: a later call does
    /// nothing. A record that does not decode is left out, to be sought
    /// by `xColumnSize` when its row is scored.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if SQLite cannot read the table.
    pub fn fill(&self, conn: &Connection, columns: usize) -> Result<(), Error> {
        let mut kept = self.lock();
        if kept.filled {
            return Ok(());
        }
        let mut stmt = conn.prepare_cached("SELECT id, sz FROM fts_docsize")?;
        let mut rows = stmt.query([])?;
        kept.by_row.clear();
        while let Some(r) = rows.next()? {
            let id: i64 = r.get(0)?;
            let sz = r.get_ref(1)?.as_blob_or_null().ok().flatten();
            if let Some(n) = sz.and_then(|b| summed_sizes(b, columns)) {
                kept.insert(id, n);
            }
        }
        kept.filled = true;
        Ok(())
    }

    /// Drops the length kept for `row`: it is being inserted or deleted.
    pub fn forget(&self, row: i64) {
        self.lock().remove(row);
    }

    /// How many rows have a length kept.
    #[cfg(test)]
    pub fn kept(&self) -> usize {
        self.lock()
            .by_row
            .iter()
            .filter(|n| **n != NO_LENGTH)
            .count()
    }
}

/// Sums the `columns` token counts of a `%_docsize` record, as FTS5's
/// `fts5StorageDecodeSizeArray` reads them (one SQLite varint each, the
/// record ending with the last): `None` for a record FTS5 would call
/// corrupt, or a count past four varint bytes (2^28 tokens), which is left
/// to FTS5 to read.
fn summed_sizes(record: &[u8], columns: usize) -> Option<u32> {
    let mut at = 0usize;
    let mut total = 0u32;
    for _ in 0..columns {
        let mut n = 0u32;
        let mut ended = false;
        for _ in 0..4 {
            let b = *record.get(at)?;
            at += 1;
            n = (n << 7) | u32::from(b & 0x7f);
            if b & 0x80 == 0 {
                ended = true;
                break;
            }
        }
        if !ended {
            return None;
        }
        // FTS5 sums them as C ints; a real row is far below the bound.
        total = total.checked_add(n)?;
    }
    (at == record.len() && i32::try_from(total).is_ok()).then_some(total)
}

/// Registers [`PART_FUNCTION`] and [`ROWS_FUNCTION`] on `conn`'s FTS5,
/// the first reading row lengths from `lengths` (which the registration
/// keeps alive until the connection closes).
///
/// # Errors
/// [`ErrorKind::Storage`] if the connection has no FTS5 or refuses them.
pub fn register(conn: &Connection, lengths: &Arc<RowLengths>) -> Result<(), Error> {
    let api = fts5_api(conn)?;
    for (name, f, data) in [
        (
            c"memoria_bm25_part",
            one_phrase_part as Aux,
            Some(Arc::clone(lengths)),
        ),
        (c"memoria_bm25_rows", row_count as Aux, None),
        (
            c"memoria_bm25_given",
            given_hits_score as Aux,
            Some(Arc::clone(lengths)),
        ),
        (
            c"memoria_phrase_starts",
            phrase_starts as Aux,
            Some(Arc::clone(lengths)),
        ),
        (c"memoria_phrase_positions", phrase_positions as Aux, None),
        (c"memoria_phrase_rows", phrase_rows as Aux, None),
    ] {
        let (user, destroy): (*mut c_void, Option<unsafe extern "C" fn(*mut c_void)>) = match data {
            Some(arc) => (
                Arc::into_raw(arc).cast_mut().cast::<c_void>(),
                Some(drop_lengths),
            ),
            None => (std::ptr::null_mut(), None),
        };
        // SAFETY: `api` is the live fts5_api of this connection (it lives
        // as long as the connection); the name is a NUL-terminated static;
        // the function has FTS5's auxiliary signature; the user data, if
        // any, is an `Arc<RowLengths>` that FTS5 hands to `drop_lengths`
        // when the connection closes (if FTS5 refuses the function, that
        // one reference is leaked, never freed twice).
        let rc = unsafe {
            let create = (*api).xCreateFunction.ok_or_else(no_fts5)?;
            create(api, name.as_ptr(), user, Some(f), destroy)
        };
        if rc != ffi::SQLITE_OK {
            return Err(Error::new(
                ErrorKind::Storage,
                format!("FTS5 refused the auxiliary function {name:?} (code {rc})"),
            ));
        }
    }
    Ok(())
}

type Aux = unsafe extern "C" fn(
    *const ffi::Fts5ExtensionApi,
    *mut ffi::Fts5Context,
    *mut ffi::sqlite3_context,
    c_int,
    *mut *mut ffi::sqlite3_value,
);

fn no_fts5() -> Error {
    Error::new(ErrorKind::Storage, "this SQLite has no FTS5 API")
}

/// The connection's `fts5_api`, asked for as SQLite documents it: `SELECT
/// fts5(?1)` with a pointer bound under the type `fts5_api_ptr`.
fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api, Error> {
    let mut api: *mut ffi::fts5_api = std::ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
    // SAFETY: the handle is the open connection's, used on this thread
    // only while `conn` is borrowed; the statement is finalised before
    // this returns; the bound pointer outlives the step.
    let rc = unsafe {
        let db = conn.handle();
        let sql = c"SELECT fts5(?1)";
        let mut rc = ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut stmt, std::ptr::null_mut());
        if rc == ffi::SQLITE_OK {
            rc = ffi::sqlite3_bind_pointer(
                stmt,
                1,
                (&mut api as *mut *mut ffi::fts5_api).cast::<c_void>(),
                c"fts5_api_ptr".as_ptr(),
                None,
            );
        }
        if rc == ffi::SQLITE_OK {
            rc = ffi::sqlite3_step(stmt);
            if rc == ffi::SQLITE_ROW {
                rc = ffi::SQLITE_OK;
            }
        }
        ffi::sqlite3_finalize(stmt);
        rc
    };
    if rc != ffi::SQLITE_OK || api.is_null() {
        return Err(no_fts5());
    }
    Ok(api)
}

/// `memoria_bm25_part(fts, w…)`: the row's own part of FTS5's BM25 for an
/// expression of exactly one phrase, `f × (k1 + 1) / (f + k1 × (1 − b + b ×
/// D / avgdl))`, where `f` sums the column weights of the phrase's
/// instances in the row and `D` is the row's length in tokens. An
/// expression of more than one phrase is an error: its IDFs differ per
/// phrase, and only `bm25()` may rank it.
unsafe extern "C" fn one_phrase_part(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its API, the row's context, and `n_val`
    // argument values, all valid for the call.
    unsafe {
        match one_phrase_part_of(&*api, fts, n_val, values) {
            Ok(part) => ffi::sqlite3_result_double(ctx, part),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// [`one_phrase_part`]'s arithmetic, `fts5Bm25Function`'s for one phrase.
///
/// # Safety
/// As FTS5 calls an auxiliary function.
unsafe fn one_phrase_part_of(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Result<f64, c_int> {
    // SAFETY: the API's functions are called with the context FTS5 gave;
    // `values` holds `n_val` values, every one a weight.
    unsafe {
        if api.xPhraseCount.ok_or(MISSING)?(fts) != 1 {
            return Err(ffi::SQLITE_MISMATCH);
        }
        let avgdl = totals(api, fts)?.avgdl;
        let mut freq = 0.0f64;
        let d = f64::from(row_instances(api, fts, n_val, values, |_, w| {
            freq += w;
            Ok(())
        })?);
        Ok(part(freq, d, avgdl))
    }
}

/// What a call into FTS5's API returned, as a `Result`: `SQLITE_OK`, or
/// its code as the error the auxiliary function fails with.
fn check(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The code an auxiliary function fails with when FTS5's API lacks a
/// function it calls.
const MISSING: c_int = ffi::SQLITE_MISUSE;

/// The preamble [`one_phrase_part_of`] and [`given_hits_score_of`] share:
/// calls `each(phrase, weight)` for every instance of a phrase in FTS5's
/// current row, in FTS5's order, `weight` being its column's (the first
/// `weights` argument values, by column; 1.0 past them, as
/// `fts5Bm25Function` reads them), then returns the row's length in
/// tokens ([`row_length`]).
///
/// # Safety
/// As FTS5 calls an auxiliary function registered by [`register`];
/// `values` holds at least `weights` values.
unsafe fn row_instances(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    weights: c_int,
    values: *mut *mut ffi::sqlite3_value,
    mut each: impl FnMut(c_int, f64) -> Result<(), c_int>,
) -> Result<c_int, c_int> {
    // SAFETY: the API's functions are called with the context FTS5 gave;
    // a column below `weights` indexes one of the caller's values.
    unsafe {
        let mut n_inst: c_int = 0;
        check(api.xInstCount.ok_or(MISSING)?(fts, &mut n_inst))?;
        for i in 0..n_inst {
            let (mut phrase, mut col, mut off): (c_int, c_int, c_int) = (0, 0, 0);
            check(api.xInst.ok_or(MISSING)?(
                fts,
                i,
                &mut phrase,
                &mut col,
                &mut off,
            ))?;
            let w = if weights > col {
                ffi::sqlite3_value_double(*values.add(col as usize))
            } else {
                1.0
            };
            each(phrase, w)?;
        }
        row_length(api, fts)
    }
}

/// A row's own part of FTS5's BM25 for one phrase (see
/// [`one_phrase_part`]): `freq` is the column weights of the phrase's
/// instances in the row summed, `d` the row's length in tokens, `avgdl`
/// the mean row length. `fts5Bm25Function`'s operations in its order.
pub fn part(freq: f64, d: f64, avgdl: f64) -> f64 {
    (freq * (K1 + 1.0)) / (freq + K1 * (1.0 - B + B * d / avgdl))
}

/// The row's length in tokens, all columns summed: from the
/// [`RowLengths`] registered with the function, else FTS5's `xColumnSize`
/// (then kept there).
///
/// # Safety
/// As FTS5 calls an auxiliary function registered by [`register`].
unsafe fn row_length(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<c_int, c_int> {
    // SAFETY: the user data is the `Arc<RowLengths>` `register` gave, alive
    // until the connection closes; the row id is this row's.
    unsafe {
        let lengths = api.xUserData.ok_or(MISSING)?(fts)
            .cast::<RowLengths>()
            .as_ref();
        let row = api.xRowid.ok_or(MISSING)?(fts);
        if let Some(n) = lengths.and_then(|l| l.lock().get(row)) {
            // `summed_sizes` keeps only lengths that fit a C int.
            return Ok(n as c_int);
        }
        let mut n_tok: c_int = 0;
        let rc = api.xColumnSize.ok_or(MISSING)?(fts, -1, &mut n_tok);
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        if let (Some(l), Ok(n)) = (lengths, u32::try_from(n_tok)) {
            let mut kept = l.lock();
            if kept.filled {
                kept.insert(row, n);
            }
        }
        Ok(n_tok)
    }
}

/// The `hits` argument of [`GIVEN_FUNCTION`]: each phrase's count of rows,
/// in the order the phrases stand in the expression, as 8-byte
/// little-endian integers.
pub fn hits_blob(hits: &[i64]) -> Vec<u8> {
    hits.iter().flat_map(|h| h.to_le_bytes()).collect()
}

/// `memoria_bm25_given(fts, w…, hits)`: FTS5's `bm25()` for an expression
/// of any number of phrases, with each phrase's count of rows (its IDF's
/// `nHit`) given in `hits` ([`hits_blob`]) instead of counted by running
/// the phrase over the whole index again (`xQueryPhrase`), which `bm25()`
/// does per phrase per statement: the tiers of one search name the same
/// words again and again (issue 30). The same arithmetic as
/// `fts5Bm25Function`, in the same order, so with the counts FTS5 would
/// find each score is bit for bit the one `bm25()` gives.
unsafe extern "C" fn given_hits_score(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as in `one_phrase_part`.
    unsafe {
        match given_hits_score_of(&*api, fts, n_val, values) {
            Ok(score) => ffi::sqlite3_result_double(ctx, score),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// What [`given_hits_score`] keeps for its statement: the mean row length
/// and each phrase's IDF, worked out on its first row.
#[derive(Debug)]
struct Given {
    avgdl: f64,
    idf: Vec<f64>,
    /// Each phrase's weighted count in the current row (`aFreq`).
    freq: Vec<f64>,
}

/// [`given_hits_score`]'s arithmetic, `fts5Bm25Function`'s.
///
/// # Safety
/// As FTS5 calls an auxiliary function registered by [`register`].
unsafe fn given_hits_score_of(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Result<f64, c_int> {
    // The last argument is the hits; the ones before it are the weights.
    let weights = n_val - 1;
    if weights < 0 {
        return Err(ffi::SQLITE_MISMATCH);
    }
    // SAFETY: the API's functions are called with the context FTS5 gave;
    // the auxiliary data, when set, is the `Given` boxed below, owned by
    // FTS5 until it calls `drop_given`.
    unsafe {
        let mut given = api.xGetAuxdata.ok_or(MISSING)?(fts, 0).cast::<Given>();
        if given.is_null() {
            let phrases = usize::try_from(api.xPhraseCount.ok_or(MISSING)?(fts))
                .map_err(|_| ffi::SQLITE_MISMATCH)?;
            let blob = *values.add(weights as usize);
            let len = usize::try_from(ffi::sqlite3_value_bytes(blob)).unwrap_or(0);
            let bytes = ffi::sqlite3_value_blob(blob).cast::<u8>();
            if len != phrases * 8 || (len > 0 && bytes.is_null()) {
                return Err(ffi::SQLITE_MISMATCH);
            }
            let hits: Vec<i64> = if len == 0 {
                Vec::new()
            } else {
                std::slice::from_raw_parts(bytes, len)
                    .chunks_exact(8)
                    .map(|b| i64::from_le_bytes(b.try_into().expect("eight bytes")))
                    .collect()
            };
            let Totals { rows, avgdl } = read_totals(api, fts)?;
            let raw = Box::into_raw(Box::new(Given {
                avgdl,
                idf: hits.iter().map(|&h| idf(h, rows)).collect(),
                freq: vec![0.0; phrases],
            }));
            // On failure FTS5 calls the destructor itself.
            check(api.xSetAuxdata.ok_or(MISSING)?(
                fts,
                raw.cast::<c_void>(),
                Some(drop_given),
            ))?;
            given = raw;
        }
        let given = &mut *given;
        given.freq.iter_mut().for_each(|f| *f = 0.0);
        let freq = &mut given.freq;
        let d = f64::from(row_instances(api, fts, weights, values, |phrase, w| {
            let slot = usize::try_from(phrase)
                .ok()
                .and_then(|p| freq.get_mut(p))
                .ok_or(ffi::SQLITE_MISMATCH)?;
            *slot += w;
            Ok(())
        })?);
        let mut score = 0.0f64;
        for (idf, freq) in given.idf.iter().zip(&given.freq) {
            score += idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1.0 - B + B * d / given.avgdl)));
        }
        // FTS5 returns `-1.0 * score`: IEEE negation, the same bits.
        Ok(-score)
    }
}

/// Frees a [`Given`] kept by [`given_hits_score_of`].
unsafe extern "C" fn drop_given(raw: *mut c_void) {
    // SAFETY: FTS5 passes back the pointer `given_hits_score_of` boxed, once.
    drop(unsafe { Box::from_raw(raw.cast::<Given>()) });
}

/// The phrases of `expression` (a sanitised FTS5 `MATCH` expression, see
/// [`crate::search::query`]) in the order FTS5 numbers them, each as an
/// expression of its own (`"a b"`, or `"a"*` for a prefix): every quoted
/// string, left to right. Terms never hold `"`.
pub fn phrases(expression: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = expression;
    while let Some(start) = rest.find('"') {
        let Some(len) = rest[start + 1..].find('"') else {
            break;
        };
        let mut end = start + 1 + len + 1;
        if rest[end..].starts_with('*') {
            end += 1;
        }
        out.push(&rest[start..end]);
        rest = &rest[end..];
    }
    out
}

/// The `runs` argument of [`STARTS_FUNCTION`]: each phrase's offset in
/// the whole phrase and its length in tokens
/// ([`crate::search::phrase::StopPhrase::run_offsets`]), as 4-byte
/// little-endian integers, in the order the phrases stand.
pub fn runs_blob(runs: &[(u32, u32)]) -> Vec<u8> {
    runs.iter()
        .flat_map(|&(at, len)| at.to_le_bytes().into_iter().chain(len.to_le_bytes()))
        .collect()
}

/// What [`STARTS_FUNCTION`] gives for a row where the runs line up.
#[derive(Debug, Clone, PartialEq)]
pub struct LinedUp {
    /// The table's row count, `bm25()`'s `N`.
    pub rows: i64,
    /// The table's mean row length in tokens.
    pub avgdl: f64,
    /// This row's length in tokens, all columns summed.
    pub length: u32,
    /// The starts at which every run stands at its offset, ascending.
    pub starts: Vec<Position>,
}

impl LinedUp {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + 8 * self.starts.len());
        out.extend(self.rows.to_le_bytes());
        out.extend(self.avgdl.to_bits().to_le_bytes());
        out.extend(self.length.to_le_bytes());
        for &(col, p) in &self.starts {
            out.extend(col.to_le_bytes());
            out.extend(p.to_le_bytes());
        }
        out
    }

    /// The value [`STARTS_FUNCTION`] returned for a row.
    ///
    /// # Errors
    /// [`ErrorKind::Query`] if the bytes are not such a value.
    pub fn decode(bytes: &[u8]) -> Result<LinedUp, Error> {
        let torn = || Error::new(ErrorKind::Query, "a lined-up row's value is torn");
        let (Some(rows), Some(avgdl), Some(length), Some(rest)) = (
            bytes.get(..8),
            bytes.get(8..16),
            bytes.get(16..20),
            bytes.get(20..),
        ) else {
            return Err(torn());
        };
        Ok(LinedUp {
            rows: i64::from_le_bytes(rows.try_into().map_err(|_| torn())?),
            avgdl: f64::from_bits(u64::from_le_bytes(avgdl.try_into().map_err(|_| torn())?)),
            length: u32::from_le_bytes(length.try_into().map_err(|_| torn())?),
            starts: decode_pairs(rest).ok_or_else(torn)?,
        })
    }
}

/// `(u32, u32)` pairs, little-endian, back to back; `None` if torn.
fn decode_pairs(bytes: &[u8]) -> Option<Vec<Position>> {
    if !bytes.len().is_multiple_of(8) {
        return None;
    }
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| (word(&c[..4]), word(&c[4..])))
            .collect(),
    )
}

/// What [`POSITIONS_FUNCTION`] gave for a row of an expression of
/// `phrases` one-token phrases: each phrase's positions in the row,
/// ascending.
///
/// # Errors
/// [`ErrorKind::Query`] if the bytes are not such a value, or a phrase
/// was not one token.
pub fn decode_positions(bytes: &[u8], phrases: usize) -> Result<Vec<Vec<Position>>, Error> {
    let torn = || Error::new(ErrorKind::Query, "a row's phrase positions are torn");
    let mut out = Vec::with_capacity(phrases);
    let mut rest = bytes;
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    for _ in 0..phrases {
        let head = rest.get(..8).ok_or_else(torn)?;
        let (size, n) = (word(&head[..4]), word(&head[4..]) as usize);
        if size != 1 {
            return Err(Error::new(
                ErrorKind::Query,
                "a stop word was not one token to the index",
            ));
        }
        let body = rest.get(8..8 + 8 * n).ok_or_else(torn)?;
        out.push(decode_pairs(body).ok_or_else(torn)?);
        rest = &rest[8 + 8 * n..];
    }
    if rest.is_empty() {
        Ok(out)
    } else {
        Err(torn())
    }
}

/// Appends phrase `phrase`'s instances in the current row to `out`,
/// ascending, as FTS5's position list holds them (`xPhraseFirst`).
///
/// # Safety
/// As FTS5 calls an auxiliary function.
unsafe fn instances_of(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    phrase: c_int,
    out: &mut Vec<Position>,
) -> Result<(), c_int> {
    let mut iter = ffi::Fts5PhraseIter {
        a: std::ptr::null(),
        b: std::ptr::null(),
    };
    let (mut col, mut off): (c_int, c_int) = (0, 0);
    // SAFETY: the API's functions are called with the context FTS5 gave,
    // and the iterator is used only within this row.
    unsafe {
        let rc = api.xPhraseFirst.ok_or(MISSING)?(fts, phrase, &mut iter, &mut col, &mut off);
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        let next = api.xPhraseNext.ok_or(MISSING)?;
        while col >= 0 {
            let (Ok(c), Ok(o)) = (u32::try_from(col), u32::try_from(off)) else {
                return Err(ffi::SQLITE_CORRUPT);
            };
            out.push((c, o));
            next(fts, &mut iter, &mut col, &mut off);
        }
    }
    Ok(())
}

/// `memoria_phrase_starts(fts, runs)`: for the rows of an expression whose
/// phrases are a phrase's content runs
/// ([`crate::search::phrase::StopPhrase::content_expression`]), the
/// starts at which each run stands at its offset (`runs`, [`runs_blob`]),
/// with the table's totals and the row's length, as one value
/// ([`LinedUp::decode`]); NULL for a row where they do not line up. A
/// phrase whose length in tokens is not the one given is an error.
unsafe extern "C" fn phrase_starts(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as in `one_phrase_part`.
    unsafe {
        match phrase_starts_of(&*api, fts, n_val, values) {
            Ok(Some(bytes)) => ffi::sqlite3_result_blob(
                ctx,
                bytes.as_ptr().cast::<c_void>(),
                c_int::try_from(bytes.len()).unwrap_or(c_int::MAX),
                ffi::SQLITE_TRANSIENT(),
            ),
            Ok(None) => ffi::sqlite3_result_null(ctx),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// [`phrase_starts`]'s work.
///
/// # Safety
/// As FTS5 calls an auxiliary function registered by [`register`].
unsafe fn phrase_starts_of(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    n_val: c_int,
    values: *mut *mut ffi::sqlite3_value,
) -> Result<Option<Vec<u8>>, c_int> {
    if n_val != 1 {
        return Err(ffi::SQLITE_MISMATCH);
    }
    // SAFETY: the API's functions are called with the context FTS5 gave;
    // the one argument value is valid for the call.
    unsafe {
        let blob = *values;
        let len = usize::try_from(ffi::sqlite3_value_bytes(blob)).unwrap_or(0);
        let bytes = ffi::sqlite3_value_blob(blob).cast::<u8>();
        let phrases = api.xPhraseCount.ok_or(MISSING)?(fts);
        if len == 0 || bytes.is_null() || Ok(len) != usize::try_from(phrases).map(|p| p * 8) {
            return Err(ffi::SQLITE_MISMATCH);
        }
        let runs =
            decode_pairs(std::slice::from_raw_parts(bytes, len)).ok_or(ffi::SQLITE_MISMATCH)?;
        let mut positions: Vec<Vec<Position>> = Vec::with_capacity(runs.len());
        for (i, &(_, size)) in (0..).zip(&runs) {
            if u32::try_from(api.xPhraseSize.ok_or(MISSING)?(fts, i)) != Ok(size) {
                return Err(ffi::SQLITE_MISMATCH);
            }
            let mut at = Vec::new();
            instances_of(api, fts, i, &mut at)?;
            positions.push(at);
        }
        let offsets: Vec<u32> = runs.iter().map(|&(at, _)| at).collect();
        let starts = crate::search::phrase::line_up(&positions, &offsets);
        if starts.is_empty() {
            return Ok(None);
        }
        let t = totals(api, fts)?;
        let length = u32::try_from(row_length(api, fts)?).map_err(|_| ffi::SQLITE_CORRUPT)?;
        Ok(Some(
            LinedUp {
                rows: t.rows,
                avgdl: t.avgdl,
                length,
                starts,
            }
            .encode(),
        ))
    }
}

/// `memoria_phrase_positions(fts)`: each phrase's length in tokens and its
/// instances in the row, phrase by phrase, as one value
/// ([`decode_positions`]).
unsafe extern "C" fn phrase_positions(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n_val: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as in `one_phrase_part`.
    unsafe {
        let api = &*api;
        let mut out: Vec<u8> = Vec::new();
        let mut at: Vec<Position> = Vec::new();
        let result = (|| -> Result<(), c_int> {
            let phrases = api.xPhraseCount.ok_or(ffi::SQLITE_MISUSE)?(fts);
            for i in 0..phrases {
                let size = api.xPhraseSize.ok_or(ffi::SQLITE_MISUSE)?(fts, i);
                at.clear();
                instances_of(api, fts, i, &mut at)?;
                out.extend(u32::try_from(size).unwrap_or(0).to_le_bytes());
                out.extend(u32::try_from(at.len()).unwrap_or(u32::MAX).to_le_bytes());
                for &(col, off) in &at {
                    out.extend(col.to_le_bytes());
                    out.extend(off.to_le_bytes());
                }
            }
            Ok(())
        })();
        match result {
            Ok(()) => ffi::sqlite3_result_blob(
                ctx,
                out.as_ptr().cast::<c_void>(),
                c_int::try_from(out.len()).unwrap_or(c_int::MAX),
                ffi::SQLITE_TRANSIENT(),
            ),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// `memoria_phrase_rows(fts)`: how many rows hold the expression's one
/// phrase, counted as `fts5Bm25GetData` counts a phrase's `nHit`: FTS5
/// runs the phrase over the whole index (`xQueryPhrase`) and a callback
/// adds one a row. The same count as `SELECT count(*) … MATCH` of the
/// phrase, in one C loop rather than a row at a time through the virtual
/// table (issue 30: counting the all-words tier's words that way was a
/// fifth of a search's CPU at 90,000 chunks, a third of it SQLite's own
/// statement loop). Asked of any one row the phrase matches; an
/// expression of more than one phrase is an error.
unsafe extern "C" fn phrase_rows(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n_val: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as in `one_phrase_part`; the count the callback adds to
    // lives on this frame for the whole of `xQueryPhrase`.
    unsafe {
        let api = &*api;
        let result = (|| -> Result<i64, c_int> {
            if api.xPhraseCount.ok_or(MISSING)?(fts) != 1 {
                return Err(ffi::SQLITE_MISMATCH);
            }
            let mut rows: i64 = 0;
            check(api.xQueryPhrase.ok_or(MISSING)?(
                fts,
                0,
                (&raw mut rows).cast::<c_void>(),
                Some(count_row),
            ))?;
            Ok(rows)
        })();
        match result {
            Ok(rows) => ffi::sqlite3_result_int64(ctx, rows),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// [`phrase_rows`]'s callback, `fts5CountCb`'s: one more row.
unsafe extern "C" fn count_row(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    rows: *mut c_void,
) -> c_int {
    // SAFETY: `rows` is the `i64` `phrase_rows` handed to `xQueryPhrase`.
    unsafe { *rows.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

/// Drops the `Arc<RowLengths>` reference [`register`] gave FTS5.
unsafe extern "C" fn drop_lengths(raw: *mut c_void) {
    // SAFETY: FTS5 passes back the pointer `register` made with
    // `Arc::into_raw`, once.
    drop(unsafe { Arc::from_raw(raw.cast_const().cast::<RowLengths>()) });
}

/// `memoria_bm25_rows(fts)`: the table's row count as FTS5's `bm25()`
/// reads it (`xRowCount`), the `N` of its IDF.
unsafe extern "C" fn row_count(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _n_val: c_int,
    _values: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: as in `one_phrase_part`.
    unsafe {
        match totals(&*api, fts) {
            Ok(t) => ffi::sqlite3_result_int64(ctx, t.rows),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// The table's row count and mean row length in tokens, as `bm25()`
/// reads them once per statement (`fts5Bm25GetData`).
#[derive(Debug, Clone, Copy)]
struct Totals {
    rows: i64,
    avgdl: f64,
}

/// [`Totals`] for this statement: read on a function's first row and kept
/// as its auxiliary data (FTS5's own totals are not cached for an
/// auxiliary function: each `xRowCount` reads the index's averages record
/// again, a b-tree lookup per row).
///
/// # Safety
/// As FTS5 calls an auxiliary function.
unsafe fn totals(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context) -> Result<Totals, c_int> {
    // SAFETY: the auxiliary data, when set, is the `Totals` boxed below,
    // owned by FTS5 until it calls `drop_totals`.
    unsafe {
        let kept = api.xGetAuxdata.ok_or(MISSING)?(fts, 0).cast::<Totals>();
        if let Some(t) = kept.as_ref() {
            return Ok(*t);
        }
        let t = read_totals(api, fts)?;
        let raw = Box::into_raw(Box::new(t)).cast::<c_void>();
        // On failure FTS5 calls the destructor itself.
        check(api.xSetAuxdata.ok_or(MISSING)?(fts, raw, Some(drop_totals)))?;
        Ok(t)
    }
}

/// The table's row count and mean row length in tokens, read from FTS5
/// (`xRowCount`, `xColumnTotalSize`) as `fts5Bm25GetData` reads them: what
/// [`totals`] keeps, and [`given_hits_score_of`] keeps beside its IDFs.
///
/// # Safety
/// As FTS5 calls an auxiliary function.
unsafe fn read_totals(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<Totals, c_int> {
    let (mut rows, mut tokens) = (0i64, 0i64);
    // SAFETY: the API's functions are called with the context FTS5 gave.
    unsafe {
        check(api.xRowCount.ok_or(MISSING)?(fts, &mut rows))?;
        check(api.xColumnTotalSize.ok_or(MISSING)?(fts, -1, &mut tokens))?;
    }
    Ok(Totals {
        rows,
        avgdl: tokens as f64 / rows as f64,
    })
}

/// Frees a [`Totals`] kept by [`totals`].
unsafe extern "C" fn drop_totals(raw: *mut c_void) {
    // SAFETY: FTS5 passes back the pointer `totals` boxed, once.
    drop(unsafe { Box::from_raw(raw.cast::<Totals>()) });
}

/// True if `expression` (a sanitised FTS5 `MATCH` expression, see
/// [`crate::search::query`]) is one quoted phrase, optionally a prefix:
/// `"a b c"` or `"a"*`. Terms never hold `"`, so a phrase has exactly two.
pub fn is_one_phrase(expression: &str) -> bool {
    let body = expression.strip_suffix('*').unwrap_or(expression);
    body.len() >= 2
        && body.starts_with('"')
        && body.ends_with('"')
        && body.bytes().filter(|&b| b == b'"').count() == 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_length_is_kept_by_row_id_inside_the_bound_and_sought_outside_it() {
        // (row id, kept?) as one row each.
        for (row, kept) in [
            (0, true),
            (1, true),
            (90_005, true),
            (KEPT_ROW_ID_MAX - 1, true),
            (KEPT_ROW_ID_MAX, false),
            (i64::MAX, false),
            (-1, false),
            (i64::MIN, false),
        ] {
            let mut lengths = Lengths::default();
            lengths.insert(row, 42);
            assert_eq!(lengths.get(row), kept.then_some(42), "row {row}");
            assert_eq!(
                lengths.get(row.wrapping_add(1)),
                None,
                "row {row}'s neighbour"
            );
            lengths.remove(row);
            assert_eq!(lengths.get(row), None, "row {row} forgotten");
            assert!(lengths.by_row.len() <= KEPT_ROW_ID_MAX as usize);
        }
    }

    #[test]
    fn a_docsize_record_sums_its_columns_varints_and_refuses_a_torn_one() {
        // 1 token, 128 tokens (two bytes), 16,384 tokens (three bytes).
        assert_eq!(
            summed_sizes(&[0x01, 0x81, 0x00, 0x81, 0x80, 0x00], 3),
            Some(1 + 128 + 16_384)
        );
        assert_eq!(summed_sizes(&[0x00, 0x00, 0x07], 3), Some(7));
        assert_eq!(summed_sizes(&[0x01, 0x02], 3), None, "a column short");
        assert_eq!(summed_sizes(&[1, 2, 3, 4], 3), None, "a byte over");
        assert_eq!(summed_sizes(&[0x81], 1), None, "a varint cut");
        assert_eq!(
            summed_sizes(&[0x81, 0x80, 0x80, 0x80, 0x00], 1),
            None,
            "past four bytes is left to FTS5"
        );
    }
}
