//! The refusal and S3 circuit breakers over durable, sealed per-day counters (§8.1, gate 8).
//!
//! **Counters.** Per (sibling, asker, UTC day) two integers, VISIBLE and
//! NOT_VISIBLE, written on the S2 call path after the verdicts are in
//! ([`crate::sibling::ruled`]) and never read at query time. The asker is
//! stored only as an HMAC fingerprint under [`Purpose::BreakerAsker`]; the
//! two integers are sealed under [`Purpose::BreakerCounters`] with AAD naming
//! the row, so a row moved to another day or asker fails to open. UNKNOWN,
//! STALE and AHEAD write nothing. Per (sibling, UTC day) the S3 counters hold
//! fetches, 404s and successes, written by [`crate::sibling::sync`]. Rows
//! older than [`BREAKER_COUNTERS_RETAINED_DAYS`] are pruned on every write.
//! This is a per-person record, and §3.2's leak list carries it.
//!
//! **History.** Each sibling has a plaintext `since` day per counter kind:
//! the first UTC day memoria counted for it (a day number, no person). It
//! is what tells a quiet day (counted, zero) from a day nobody counted.
//!
//! **Refusal breaker.** The window is the current UTC day W, the baseline
//! the [`BASELINE_DAYS`] UTC days `[W-7, W)`, disjoint from it. The
//! baseline askers are those with VISIBLE >= 1 in the baseline. It fires
//! when at least [`REFUSAL_BREAKER_ASKERS_MIN`] baseline askers each have
//! VISIBLE = 0 and NOT_VISIBLE >= 1 in the window.
//!
//! **S3 breaker.** Fires when the window holds at least
//! [`S3_BREAKER_FETCHES_MIN`] fetches, all 404, and the baseline holds at
//! least one success.
//!
//! **Cannot determine.** A breaker whose counters are missing, unreadable
//! or short of a full baseline says so and names what it lacks:
//! - no `since` day for the sibling (never counted, or the counters were
//!   deleted): it lacks the window and the baseline;
//! - a `since` day later than `W-7` (fewer than 7 full UTC days counted
//!   before today): it lacks the baseline;
//! - a row that fails to open (seal failure) lacks the window if it is
//!   today's, the baseline otherwise.
//!
//! It never reports "no anomaly" in any of these: a count that fails is not
//! a count of zero.

use rusqlite::{Connection, OptionalExtension, params};

use crate::clock::iso_date;
use crate::error::{Error, ErrorKind};
use crate::storage::seal::{Purpose, Sealer};

/// How long counters are kept, in UTC days: the window plus the baseline
/// plus one (§8.1).
pub const BREAKER_COUNTERS_RETAINED_DAYS: i64 = 8;
/// The baseline's length in UTC days, ending where the window begins (§8.1).
pub const BASELINE_DAYS: i64 = 7;
/// The fewest baseline askers refused in the window that fire the refusal
/// breaker (§8.1: "at least 3 askers in the baseline set").
pub const REFUSAL_BREAKER_ASKERS_MIN: usize = 3;
/// The fewest S3 fetches in the window that can fire the S3 breaker (§8.1:
/// "at least 20 fetches in the window, all 404").
pub const S3_BREAKER_FETCHES_MIN: u64 = 20;
/// Seconds in one UTC day.
pub const SECONDS_PER_DAY: i64 = 86_400;

/// The breaker tables, created with the store's schema.
pub const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS breaker_s2 (
    app      TEXT NOT NULL,
    asker_fp BLOB NOT NULL,            -- HMAC(breaker-asker, address): no plaintext asker
    day      INTEGER NOT NULL,         -- UTC day number (unix seconds / 86400)
    counts   BLOB NOT NULL,            -- sealed "visible,not_visible"
    PRIMARY KEY (app, asker_fp, day)
);
CREATE TABLE IF NOT EXISTS breaker_s3 (
    app    TEXT NOT NULL,
    day    INTEGER NOT NULL,
    counts BLOB NOT NULL,              -- sealed "fetches,not_found,successes"
    PRIMARY KEY (app, day)
);
CREATE TABLE IF NOT EXISTS breaker_since (
    app   TEXT NOT NULL,
    kind  TEXT NOT NULL,               -- "s2" or "s3"
    day   INTEGER NOT NULL,            -- first UTC day counted
    PRIMARY KEY (app, kind)
);
"#;

/// The UTC day number of `unix_s`: whole days since 1970-01-01.
pub fn utc_day(unix_s: i64) -> i64 {
    unix_s.div_euclid(SECONDS_PER_DAY)
}

/// One S2 call's tally for one asker: how many pairs came back VISIBLE and
/// how many NOT_VISIBLE. Other values are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct S2Tally {
    /// Pairs answered VISIBLE.
    pub visible: u64,
    /// Pairs answered NOT_VISIBLE.
    pub not_visible: u64,
}

/// One sync's S3 tally for one sibling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct S3Tally {
    /// S3 fetches made (any outcome).
    pub fetches: u64,
    /// Fetches answered 404.
    pub not_found: u64,
    /// Fetches that returned a body.
    pub successes: u64,
}

/// What a breaker could not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lacking {
    /// Today's counters.
    Window,
    /// The 7 days before today.
    Baseline,
    /// Both: nothing is held for this sibling.
    WindowAndBaseline,
}

impl Lacking {
    fn join(a: Option<Lacking>, b: Lacking) -> Lacking {
        match (a, b) {
            (None, b) => b,
            (Some(a), b) if a == b => a,
            _ => Lacking::WindowAndBaseline,
        }
    }

    /// The words naming what is lacking.
    pub fn words(self) -> &'static str {
        match self {
            Lacking::Window => "the window (today)",
            Lacking::Baseline => "the baseline (the 7 UTC days before today)",
            Lacking::WindowAndBaseline => {
                "both the window (today) and the baseline (the 7 UTC days before today)"
            }
        }
    }
}

/// One breaker's state for one sibling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BreakerState {
    /// The predicate holds; `count` is the askers refused (refusal) or the
    /// fetches that all answered 404 (S3).
    Fires {
        /// Askers or fetches, per breaker.
        count: u64,
    },
    /// The counters were read whole and the predicate does not hold.
    Silent,
    /// The counters are missing, unreadable or short of a full baseline.
    CannotDetermine {
        /// What the breaker lacks.
        lacking: Lacking,
        /// Why, in words: no content, no person.
        why: String,
    },
}

fn since_day(conn: &Connection, app: &str, kind: &str) -> Result<Option<i64>, Error> {
    Ok(conn
        .query_row(
            "SELECT day FROM breaker_since WHERE app = ?1 AND kind = ?2",
            params![app, kind],
            |r| r.get(0),
        )
        .optional()?)
}

fn mark_since(conn: &Connection, app: &str, kind: &str, day: i64) -> Result<(), Error> {
    conn.execute(
        "INSERT OR IGNORE INTO breaker_since(app, kind, day) VALUES (?1, ?2, ?3)",
        params![app, kind, day],
    )?;
    Ok(())
}

fn prune(conn: &Connection, today: i64) -> Result<(), Error> {
    let oldest = today - (BREAKER_COUNTERS_RETAINED_DAYS - 1);
    conn.execute("DELETE FROM breaker_s2 WHERE day < ?1", params![oldest])?;
    conn.execute("DELETE FROM breaker_s3 WHERE day < ?1", params![oldest])?;
    Ok(())
}

fn s2_row(app: &str, fp: &[u8], day: i64) -> String {
    format!("breaker_s2/{app}/{}/{day}", hex::encode(fp))
}

fn s3_row(app: &str, day: i64) -> String {
    format!("breaker_s3/{app}/{day}")
}

fn open_ints<const N: usize>(sealer: &Sealer, row: &str, sealed: &[u8]) -> Result<[u64; N], Error> {
    let text = sealer.open_string(Purpose::BreakerCounters, row, sealed)?;
    let mut out = [0u64; N];
    let mut parts = text.split(',');
    for slot in &mut out {
        *slot = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| Error::new(ErrorKind::Seal, "a breaker counter cell is malformed"))?;
    }
    if parts.next().is_some() {
        return Err(Error::new(
            ErrorKind::Seal,
            "a breaker counter cell is malformed",
        ));
    }
    Ok(out)
}

fn seal_ints(sealer: &Sealer, row: &str, ints: &[u64]) -> Vec<u8> {
    let text = ints
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",");
    sealer.seal(Purpose::BreakerCounters, row, text.as_bytes())
}

/// Adds one S2 call's tally for `asker` at `app` to the counters for the
/// UTC day of `now_unix_s`. A tally of zero (UNKNOWN, STALE, AHEAD only)
/// writes nothing. Prunes rows older than [`BREAKER_COUNTERS_RETAINED_DAYS`].
///
/// # Errors
/// [`ErrorKind::Storage`] on a SQLite failure; [`ErrorKind::Seal`] if the
/// day's existing row cannot be opened (it is then left as it is).
pub fn record_s2(
    conn: &Connection,
    sealer: &Sealer,
    app: &str,
    asker: &str,
    tally: S2Tally,
    now_unix_s: i64,
) -> Result<(), Error> {
    if tally == S2Tally::default() {
        return Ok(());
    }
    let day = utc_day(now_unix_s);
    let fp = sealer.fingerprint(Purpose::BreakerAsker, asker.as_bytes());
    let row = s2_row(app, &fp, day);
    let held: Option<Vec<u8>> = conn
        .query_row(
            "SELECT counts FROM breaker_s2 WHERE app = ?1 AND asker_fp = ?2 AND day = ?3",
            params![app, &fp[..], day],
            |r| r.get(0),
        )
        .optional()?;
    let [v, nv] = match held {
        Some(sealed) => open_ints::<2>(sealer, &row, &sealed)?,
        None => [0, 0],
    };
    let sealed = seal_ints(sealer, &row, &[v + tally.visible, nv + tally.not_visible]);
    conn.execute(
        "INSERT INTO breaker_s2(app, asker_fp, day, counts) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT(app, asker_fp, day) DO UPDATE SET counts = excluded.counts",
        params![app, &fp[..], day, sealed],
    )?;
    mark_since(conn, app, "s2", day)?;
    prune(conn, day)
}

/// Adds one sync's S3 tally for `app` to the counters for the UTC day of
/// `now_unix_s`. A sync that fetched nothing writes nothing.
///
/// # Errors
/// As [`record_s2`].
pub fn record_s3(
    conn: &Connection,
    sealer: &Sealer,
    app: &str,
    tally: S3Tally,
    now_unix_s: i64,
) -> Result<(), Error> {
    if tally.fetches == 0 {
        return Ok(());
    }
    let day = utc_day(now_unix_s);
    let row = s3_row(app, day);
    let held: Option<Vec<u8>> = conn
        .query_row(
            "SELECT counts FROM breaker_s3 WHERE app = ?1 AND day = ?2",
            params![app, day],
            |r| r.get(0),
        )
        .optional()?;
    let [f, nf, ok] = match held {
        Some(sealed) => open_ints::<3>(sealer, &row, &sealed)?,
        None => [0, 0, 0],
    };
    let sealed = seal_ints(
        sealer,
        &row,
        &[
            f + tally.fetches,
            nf + tally.not_found,
            ok + tally.successes,
        ],
    );
    conn.execute(
        "INSERT INTO breaker_s3(app, day, counts) VALUES (?1, ?2, ?3) \
         ON CONFLICT(app, day) DO UPDATE SET counts = excluded.counts",
        params![app, day, sealed],
    )?;
    mark_since(conn, app, "s3", day)?;
    prune(conn, day)
}

/// Whether the history behind `kind` covers a full baseline before `today`.
fn history(
    conn: &Connection,
    app: &str,
    kind: &str,
    today: i64,
) -> Result<Option<BreakerState>, Error> {
    match since_day(conn, app, kind)? {
        None => Ok(Some(BreakerState::CannotDetermine {
            lacking: Lacking::WindowAndBaseline,
            why: "no counters are held for this source".into(),
        })),
        Some(since) if since > today - BASELINE_DAYS => Ok(Some(BreakerState::CannotDetermine {
            lacking: Lacking::Baseline,
            why: format!(
                "counting began on {}, and a full baseline needs the 7 UTC days before today",
                iso_date(since * SECONDS_PER_DAY)
            ),
        })),
        Some(_) => Ok(None),
    }
}

/// The refusal breaker's state for `app` at `now_unix_s` (§8.1). Read only
/// when the owner's sources page is rendered.
///
/// # Errors
/// [`ErrorKind::Storage`] on a SQLite failure. A row that fails to open is
/// not an error: it makes the state [`BreakerState::CannotDetermine`].
pub fn refusal_state(
    conn: &Connection,
    sealer: &Sealer,
    app: &str,
    now_unix_s: i64,
) -> Result<BreakerState, Error> {
    let today = utc_day(now_unix_s);
    if let Some(state) = history(conn, app, "s2", today)? {
        return Ok(state);
    }
    let baseline_start = today - BASELINE_DAYS;
    let mut stmt = conn.prepare(
        "SELECT asker_fp, day, counts FROM breaker_s2 WHERE app = ?1 AND day >= ?2 AND day <= ?3",
    )?;
    let rows = stmt
        .query_map(params![app, baseline_start, today], |r| {
            Ok((
                r.get::<_, Vec<u8>>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    // asker fingerprint -> (baseline VISIBLE, window VISIBLE, window NOT_VISIBLE)
    let mut per_asker: std::collections::BTreeMap<Vec<u8>, (u64, u64, u64)> =
        std::collections::BTreeMap::new();
    let mut lacking = None;
    for (fp, day, sealed) in rows {
        let Ok([v, nv]) = open_ints::<2>(sealer, &s2_row(app, &fp, day), &sealed) else {
            let part = if day == today {
                Lacking::Window
            } else {
                Lacking::Baseline
            };
            lacking = Some(Lacking::join(lacking, part));
            continue;
        };
        let e = per_asker.entry(fp).or_default();
        if day < today {
            e.0 += v;
        } else {
            e.1 += v;
            e.2 += nv;
        }
    }
    if let Some(lacking) = lacking {
        return Ok(BreakerState::CannotDetermine {
            lacking,
            why: "a counter could not be opened".into(),
        });
    }
    let refused = per_asker
        .values()
        .filter(|(baseline_v, window_v, window_nv)| {
            *baseline_v >= 1 && *window_v == 0 && *window_nv >= 1
        })
        .count();
    Ok(if refused >= REFUSAL_BREAKER_ASKERS_MIN {
        BreakerState::Fires {
            count: refused as u64,
        }
    } else {
        BreakerState::Silent
    })
}

/// The S3 breaker's state for `app` at `now_unix_s` (§8.1).
///
/// # Errors
/// As [`refusal_state`].
pub fn s3_state(
    conn: &Connection,
    sealer: &Sealer,
    app: &str,
    now_unix_s: i64,
) -> Result<BreakerState, Error> {
    let today = utc_day(now_unix_s);
    if let Some(state) = history(conn, app, "s3", today)? {
        return Ok(state);
    }
    let baseline_start = today - BASELINE_DAYS;
    let mut stmt = conn
        .prepare("SELECT day, counts FROM breaker_s3 WHERE app = ?1 AND day >= ?2 AND day <= ?3")?;
    let rows = stmt
        .query_map(params![app, baseline_start, today], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let (mut window_fetches, mut window_404, mut baseline_ok) = (0u64, 0u64, 0u64);
    let mut lacking = None;
    for (day, sealed) in rows {
        let Ok([f, nf, ok]) = open_ints::<3>(sealer, &s3_row(app, day), &sealed) else {
            let part = if day == today {
                Lacking::Window
            } else {
                Lacking::Baseline
            };
            lacking = Some(Lacking::join(lacking, part));
            continue;
        };
        if day == today {
            window_fetches += f;
            window_404 += nf;
        } else {
            baseline_ok += ok;
        }
    }
    if let Some(lacking) = lacking {
        return Ok(BreakerState::CannotDetermine {
            lacking,
            why: "a counter could not be opened".into(),
        });
    }
    Ok(
        if window_fetches >= S3_BREAKER_FETCHES_MIN
            && window_404 == window_fetches
            && baseline_ok >= 1
        {
            BreakerState::Fires {
                count: window_fetches,
            }
        } else {
            BreakerState::Silent
        },
    )
}

/// The owner's sentence for a refusal breaker state, naming the source.
pub fn refusal_sentence(source: &str, state: &BreakerState) -> String {
    match state {
        BreakerState::Fires { count } => format!(
            "Refusal breaker: fired. {count} people who were shown {source} passages in the 7 days before today were refused every {source} passage they were asked about today. Nothing was purged."
        ),
        BreakerState::Silent => "Refusal breaker: no refusal anomaly.".into(),
        BreakerState::CannotDetermine { lacking, why } => format!(
            "Refusal breaker: cannot determine. The counters lack {}: {why}.",
            lacking.words()
        ),
    }
}

/// The owner's sentence for an S3 breaker state, naming the source.
pub fn s3_sentence(source: &str, state: &BreakerState) -> String {
    match state {
        BreakerState::Fires { count } => format!(
            "S3 breaker: fired. All {count} of today's fetches from {source} answered 404, after a successful fetch in the 7 days before. Nothing was purged."
        ),
        BreakerState::Silent => "S3 breaker: no S3 anomaly.".into(),
        BreakerState::CannotDetermine { lacking, why } => format!(
            "S3 breaker: cannot determine. The counters lack {}: {why}.",
            lacking.words()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::seal::Dek;

    fn setup() -> (Connection, Sealer) {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        (conn, Sealer::new(&Dek::from_bytes([3u8; 32])))
    }

    const DAY: i64 = 20_000 * SECONDS_PER_DAY;

    #[test]
    fn counters_are_sealed_and_keyed_by_a_fingerprint_not_the_address() {
        let (conn, sealer) = setup();
        let tally = S2Tally {
            visible: 2,
            not_visible: 1,
        };
        record_s2(&conn, &sealer, "sheets", "ana@acme.test", tally, DAY).unwrap();
        record_s2(&conn, &sealer, "sheets", "ana@acme.test", tally, DAY + 60).unwrap();
        let (fp, counts): (Vec<u8>, Vec<u8>) = conn
            .query_row("SELECT asker_fp, counts FROM breaker_s2", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert!(!String::from_utf8_lossy(&fp).contains("ana"));
        let row = s2_row("sheets", &fp, utc_day(DAY));
        assert_eq!(open_ints::<2>(&sealer, &row, &counts).unwrap(), [4, 2]);
    }

    #[test]
    fn an_unknown_only_call_writes_nothing() {
        let (conn, sealer) = setup();
        record_s2(
            &conn,
            &sealer,
            "sheets",
            "ana@acme.test",
            S2Tally::default(),
            DAY,
        )
        .unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM breaker_s2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 0);
        assert!(matches!(
            refusal_state(&conn, &sealer, "sheets", DAY).unwrap(),
            BreakerState::CannotDetermine {
                lacking: Lacking::WindowAndBaseline,
                ..
            }
        ));
    }

    #[test]
    fn rows_older_than_the_retention_are_pruned_on_write() {
        let (conn, sealer) = setup();
        let t = S2Tally {
            visible: 1,
            not_visible: 0,
        };
        record_s2(&conn, &sealer, "sheets", "a", t, DAY).unwrap();
        record_s2(
            &conn,
            &sealer,
            "sheets",
            "a",
            t,
            DAY + BREAKER_COUNTERS_RETAINED_DAYS * SECONDS_PER_DAY,
        )
        .unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM breaker_s2", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }
}
