//! What the oracle asks of memoria's own restore when the tombstone log or the snapshot bucket is not what memoria left (§7.4, gate 10, issue 26): `[safety:tombstones]` and `[safety:retention]`.
//!
//! Both are judged from what an operator sees of memoria's files, never
//! from its store: the log's lines (each starts with its deletion
//! sequence) and the bucket's blob names (`index-<generation>.sealed`).
//!
//! - `[safety:tombstones]` (§7.4): started on a tombstone log that is not
//!   the one it left (a copy from an older backup, the log one entry
//!   short, another store's log as far along or one entry further, an
//!   empty log), memoria refuses to wake:
//!   `TombstonesBehind`, naming the log's path, where the log stops and
//!   the sequence the database has applied up to (or that the log does
//!   not hold the deletion the database records there), quoting no
//!   content. Started on its own log again, it wakes. §7.4 says the log
//!   is replayed "from the sequence the restored database stops at rather
//!   than from the log it happens to carry", and is silent on a log that
//!   went backwards or belongs to another store: this is the reading gate
//!   10's `10/rewound-tombstone-log-is-refused` asserts (and the
//!   reference's `TombstoneLog::vouch_for`). memoria was stopped
//!   cleanly, after a wake that replayed every entry, so the database
//!   has applied exactly the deletions its own log holds: the sequence
//!   of its log's last line.
//! - `[safety:retention]` (§7.4: "a snapshot is not retired while any
//!   restorable backup could point at it ... retirement waits out the
//!   backup retention window"): a generation the bucket held as its
//!   newest at a checkpoint is still in the bucket at every later
//!   checkpoint less than `BACKUP_RETENTION_WINDOW_S` (35 days; never
//!   less than [`BACKUPS_KEPT_S`], 30) later on memoria's calendar. It was
//!   superseded no earlier than that checkpoint, so the window cannot have
//!   passed. A restore of the data directory and a fault of the bucket
//!   (the harness's own deletions) start the record afresh.

use std::collections::BTreeMap;
use std::path::Path;

use super::checks::Check;

/// A started memoria refused a log that was not its own, or woke on one.
pub const SAFETY_TOMBSTONES: &str = "[safety:tombstones]";
/// A snapshot generation retired inside the backup window.
pub const SAFETY_RETENTION: &str = "[safety:retention]";

/// The shortest backup window `[safety:retention]` holds memoria to, in
/// seconds: 30 days, the daily backups kept 30 days that
/// `BACKUP_RETENTION_WINDOW_S` names as its own source (its 5 days of
/// slack left out). The judge's window is the reference's, and never less
/// than this: read alone, a window the reference shortened (a slip of unit)
/// would shorten the judge's with it, and the judge would pass what it is
/// there to catch. Gate 10's `10/retention-outlasts-a-month-of-daily-backups`
/// advances its clock by it, for the same reason.
pub const BACKUPS_KEPT_S: i64 = 30 * 24 * 60 * 60;

/// The sequence of a log's last complete line (0 for an empty log): its
/// first field.
pub(super) fn last_seq(log: &[u8]) -> i64 {
    String::from_utf8_lossy(log)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .unwrap_or(0)
}

/// `log` less its last line.
pub(super) fn behind_one(log: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(log);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let keep = lines.len().saturating_sub(1);
    lines[..keep]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .into_bytes()
}

/// Another store's log one deletion further along than `log`: [`foreign`]
/// and one more line, so it runs past the database's sequence (and reads as
/// a restore) while its entry there is not the database's.
pub(super) fn foreign_ahead(log: &[u8]) -> Vec<u8> {
    let mut out = foreign(log);
    let seq = last_seq(log) + 1;
    let at = String::from_utf8_lossy(log)
        .lines()
        .rev()
        .find_map(|l| l.split(' ').nth(3)?.parse().ok())
        .unwrap_or(0);
    out.extend_from_slice(
        memoria::Tombstone {
            seq,
            doc_id: format!("f0{seq:030x}"),
            revision: 1,
            at,
        }
        .line()
        .as_bytes(),
    );
    out
}

/// Another store's log as far along as `log`: as many deletions, of
/// documents this store never held, at the times `log`'s were.
pub(super) fn foreign(log: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(log);
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            let at = l
                .split(' ')
                .nth(3)
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
            memoria::Tombstone {
                seq: i as i64 + 1,
                // 32 hex digits, not a digest this store made.
                doc_id: format!("f0{:030x}", i + 1),
                revision: 1,
                at,
            }
            .line()
        })
        .collect::<String>()
        .into_bytes()
}

/// Judges a start on `presented` in place of `own` (at `path`), which
/// came to `started` (`[safety:tombstones]`). `tags` are words no refusal
/// may quote.
pub(super) fn judge_start(
    how: &str,
    own: &[u8],
    presented: &[u8],
    path: &Path,
    started: &Result<(), memoria::Error>,
    tags: &[String],
) -> Vec<Check> {
    let (database, stops) = (last_seq(own), last_seq(presented));
    let expected = if presented == own {
        format!("{SAFETY_TOMBSTONES} started on a log ({how}) identical to its own, memoria wakes")
    } else if stops < database {
        format!(
            "{SAFETY_TOMBSTONES} started on its tombstone log {how}, memoria refuses to wake (§7.4): TombstonesBehind naming {}, that the log stops at sequence {stops} and that the database has applied deletions up to sequence {database}, quoting no content",
            path.display()
        )
    } else {
        format!(
            "{SAFETY_TOMBSTONES} started on a tombstone log {how}, memoria refuses to wake (§7.4): TombstonesBehind naming {} and that the log does not hold the deletion the database records at sequence {database}, quoting no content",
            path.display()
        )
    };
    let ok = match started {
        Ok(()) => presented == own,
        Err(_) if presented == own => false,
        Err(e) => {
            let said = format!("{e:#}");
            let sequences = if stops < database {
                said.contains(&format!("stops at sequence {stops}"))
                    && said.contains(&format!("up to sequence {database}"))
            } else {
                said.contains(&format!(
                    "does not hold the deletion the database records at sequence {database}"
                ))
            };
            e.kind() == memoria::ErrorKind::TombstonesBehind
                && said.contains(&path.display().to_string())
                && sequences
                && !tags.iter().any(|t| said.contains(t.as_str()))
        }
    };
    let actual = match started {
        Ok(()) => "it woke".to_string(),
        Err(e) => format!("{:?}: {e:#}", e.kind()),
    };
    vec![Check {
        expected,
        ok,
        actual,
    }]
}

/// The bucket's generations, from its blob names.
fn on_disk(data_dir: &Path) -> Vec<i64> {
    let dir = data_dir.join(memoria::snapshot::SNAPSHOT_DIR_NAME);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("index-")?
                .strip_suffix(".sealed")?
                .parse()
                .ok()
        })
        .collect()
}

/// What `[safety:retention]` knows: each generation seen as the bucket's
/// newest, and when it last was, in seconds of memoria's calendar.
#[derive(Debug, Clone, Default)]
pub(super) struct Retention {
    newest_at: BTreeMap<i64, i64>,
}

impl Retention {
    /// The harness changed the bucket (a restore, a fault): start afresh.
    pub(super) fn reset(&mut self) {
        self.newest_at.clear();
    }

    /// A checkpoint at `now_s` on memoria's calendar.
    pub(super) fn judge(&mut self, data_dir: &Path, now_s: i64) -> Vec<Check> {
        let window = memoria::snapshot::BACKUP_RETENTION_WINDOW_S.max(BACKUPS_KEPT_S);
        let gens = on_disk(data_dir);
        let mut out = vec![];
        let gone: Vec<(i64, i64)> = self
            .newest_at
            .iter()
            .filter(|(g, _)| !gens.contains(g))
            .map(|(g, at)| (*g, *at))
            .collect();
        for (g, at) in gone {
            self.newest_at.remove(&g);
            if now_s - at <= window {
                out.push(Check {
                    expected: format!(
                        "{SAFETY_RETENTION} generation {g}, the bucket's newest {} s ago on memoria's calendar, is still in the bucket: retirement waits out the backup window of {window} s (§7.4)",
                        now_s - at
                    ),
                    ok: false,
                    actual: format!("it is gone; the bucket holds {gens:?}"),
                });
            }
        }
        if let Some(newest) = gens.iter().max() {
            self.newest_at.insert(*newest, now_s);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_one_entry_short_stops_one_before_and_a_foreign_one_is_as_far_along_or_one_further() {
        let own: String = (1..=3)
            .map(|s| {
                memoria::Tombstone {
                    seq: s,
                    doc_id: format!("{:032x}", 0xabc + s),
                    revision: 2,
                    at: 1_790_000_000 + s,
                }
                .line()
            })
            .collect();
        let own = own.into_bytes();
        assert_eq!(last_seq(&own), 3);
        assert_eq!(last_seq(&behind_one(&own)), 2);
        assert_eq!(last_seq(&behind_one(&behind_one(&behind_one(&own)))), 0);
        let other = foreign(&own);
        assert_eq!(last_seq(&other), 3);
        assert_ne!(other, own);
        let ahead = foreign_ahead(&own);
        assert_eq!(last_seq(&ahead), 4);
        assert!(ahead.starts_with(&other));
        // memoria's own parser reads every line of both, in sequence.
        for (i, line) in String::from_utf8_lossy(&ahead).lines().enumerate() {
            let t = memoria::Tombstone::parse(line).expect("a well-formed line");
            assert_eq!(t.seq, i as i64 + 1);
        }
        assert!(foreign(b"").is_empty());
    }
}
