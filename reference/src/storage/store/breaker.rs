//! The breakers' counters at rest: sealed per-day rows written on the S2 and S3 paths, pruned on every write, and read back whole for `policy/breaker.rs` to judge (§8.1, §3.2, gate 8).
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
//! **History.** Each sibling's plaintext `since` day per counter kind (the
//! first UTC day counted; a day number, no person) is written with its
//! first row and read back for [`breaker::history`]. The predicates, and
//! what a missing or unopenable row means, are `policy/breaker.rs`'s.

use rusqlite::{OptionalExtension, params};

use super::*;
use crate::policy::breaker::{
    self, BASELINE_DAYS, BREAKER_COUNTERS_RETAINED_DAYS, BreakerState, S2Row, S2Tally, S3Row,
    S3Tally, utc_day,
};

impl Store {
    /// Adds one S2 call's tally for `asker` at `app` to today's breaker
    /// counters (§8.1). Called on the S2 path only. A tally of zero
    /// (UNKNOWN, STALE, AHEAD only) writes nothing.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a SQLite failure; [`ErrorKind::Seal`] if the
    /// day's existing row cannot be opened (it is then left as it is).
    pub fn record_s2_tally(
        &self,
        app: &str,
        asker: &str,
        tally: S2Tally,
        now: i64,
    ) -> Result<(), Error> {
        record_s2(&self.conn, &self.sealer, app, asker, tally, now)
    }

    /// Adds one sync's S3 tally for `app` to today's breaker counters (§8.1).
    ///
    /// # Errors
    /// As [`Store::record_s2_tally`].
    pub fn record_s3_tally(&self, app: &str, tally: S3Tally, now: i64) -> Result<(), Error> {
        record_s3(&self.conn, &self.sealer, app, tally, now)
    }

    /// The refusal breaker's state for `app` at `now` (§8.1).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] on a SQLite failure. A row that fails to open is
    /// not an error: it makes the state [`BreakerState::CannotDetermine`].
    pub fn refusal_breaker(&self, app: &str, now: i64) -> Result<BreakerState, Error> {
        read_refusal_state(&self.conn, &self.sealer, app, now)
    }

    /// The S3 breaker's state for `app` at `now` (§8.1).
    ///
    /// # Errors
    /// As [`Store::refusal_breaker`].
    pub fn s3_breaker(&self, app: &str, now: i64) -> Result<BreakerState, Error> {
        read_s3_state(&self.conn, &self.sealer, app, now)
    }
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
    conn.prepare_cached("INSERT OR IGNORE INTO breaker_since(app, kind, day) VALUES (?1, ?2, ?3)")?
        .execute(params![app, kind, day])?;
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
fn record_s2(
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
        .prepare_cached(
            "SELECT counts FROM breaker_s2 WHERE app = ?1 AND asker_fp = ?2 AND day = ?3",
        )?
        .query_row(params![app, &fp[..], day], |r| r.get(0))
        .optional()?;
    let [v, nv] = match held {
        Some(sealed) => open_ints::<2>(sealer, &row, &sealed)?,
        None => [0, 0],
    };
    let sealed = seal_ints(sealer, &row, &[v + tally.visible, nv + tally.not_visible]);
    conn.prepare_cached(
        "INSERT INTO breaker_s2(app, asker_fp, day, counts) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT(app, asker_fp, day) DO UPDATE SET counts = excluded.counts",
    )?
    .execute(params![app, &fp[..], day, sealed])?;
    mark_since(conn, app, "s2", day)?;
    prune(conn, day)
}

/// Adds one sync's S3 tally for `app` to the counters for the UTC day of
/// `now_unix_s`. A sync that fetched nothing writes nothing.
///
/// # Errors
/// As [`record_s2`].
fn record_s3(
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

/// The refusal breaker's state for `app` at `now_unix_s` (§8.1): reads the
/// history and the rows, and [`breaker::refusal_state`] decides. Read only
/// when the owner's sources page is rendered.
///
/// # Errors
/// [`ErrorKind::Storage`] on a SQLite failure. A row that fails to open is
/// not an error: it makes the state [`BreakerState::CannotDetermine`].
fn read_refusal_state(
    conn: &Connection,
    sealer: &Sealer,
    app: &str,
    now_unix_s: i64,
) -> Result<BreakerState, Error> {
    let today = utc_day(now_unix_s);
    if let Some(state) = breaker::history(since_day(conn, app, "s2")?, today) {
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
    let rows = rows.into_iter().map(|(asker_fp, day, sealed)| S2Row {
        counts: open_ints::<2>(sealer, &s2_row(app, &asker_fp, day), &sealed)
            .ok()
            .map(|[visible, not_visible]| S2Tally {
                visible,
                not_visible,
            }),
        asker_fp,
        day,
    });
    Ok(breaker::refusal_state(today, rows))
}

/// The S3 breaker's state for `app` at `now_unix_s` (§8.1): reads the
/// history and the rows, and [`breaker::s3_state`] decides.
///
/// # Errors
/// As [`read_refusal_state`].
fn read_s3_state(
    conn: &Connection,
    sealer: &Sealer,
    app: &str,
    now_unix_s: i64,
) -> Result<BreakerState, Error> {
    let today = utc_day(now_unix_s);
    if let Some(state) = breaker::history(since_day(conn, app, "s3")?, today) {
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
    let rows = rows.into_iter().map(|(day, sealed)| S3Row {
        day,
        counts: open_ints::<3>(sealer, &s3_row(app, day), &sealed).ok().map(
            |[fetches, not_found, successes]| S3Tally {
                fetches,
                not_found,
                successes,
            },
        ),
    });
    Ok(breaker::s3_state(today, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::breaker::{Lacking, SECONDS_PER_DAY};
    use crate::storage::seal::Dek;

    fn setup() -> (Connection, Sealer) {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(crate::storage::schema::BREAKER_SCHEMA)
            .unwrap();
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
            read_refusal_state(&conn, &sealer, "sheets", DAY).unwrap(),
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
