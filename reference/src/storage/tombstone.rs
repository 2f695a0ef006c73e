//! The durable tombstone log: one append-only file in a directory of its own, one line per deletion (§7.4).
//!
//! §7.4: restoring a backup from before a deletion also restores a
//! tombstone log from before it, so the deletion is simply gone. The log is
//! therefore a file of its own ([`TOMBSTONE_LOG_FILE_NAME`]) in the
//! tombstone directory, which the operator configures apart from the data
//! directory (`MEMORIA_TOMBSTONES`, [`crate::config::TOMBSTONES_ENV`]), backs up
//! apart and never restores with the data. It is never inside the database,
//! written before the database transaction and fsynced, with a monotonic
//! sequence. On wake the instance replays every entry after the sequence the
//! database stops at ([`crate::storage::store::Store::tombstone_seq`]), and
//! first asks the log to vouch for the database ([`TombstoneLog::vouch_for`]):
//! a log that stops before the database's own record of deletions went
//! backwards, and memoria refuses to wake on it.
//!
//! An entry holds coordinates only (§3.2): the sequence, the public document
//! id, memoria's integer revision of that document, and the time in unix
//! seconds. The document id is enough to re-apply it: a restored database
//! holds the same rows under the same ids, and a document created after the
//! backup is not in the restored database at all. No title, path or body is
//! ever written here, so the log needs no sealing; each line carries a
//! checksum so a damaged complete line is refused rather than skipped.
//!
//! Line format (ASCII, space separated, `\n` terminated):
//! `<seq> <doc id, 32 hex> <revision> <at> <checksum, 16 hex>`, where the
//! checksum is the first 8 bytes of SHA-256 over the four fields as written.
//!
//! A crash can leave the last line torn (no terminating newline). [`TombstoneLog::open`]
//! ignores it and truncates it away, since an append is acknowledged only
//! after its newline is fsynced. A complete line that does not parse, does
//! not verify, or breaks the sequence is an error: a complete entry is never
//! silently dropped.
//!
//! The log is never compacted here: §7.4 keeps tombstones "beyond any
//! restorable backup's age", and compaction past
//! [`crate::storage::snapshot::BACKUP_RETENTION_WINDOW_S`] is not built.

use std::fs::{self, File, OpenOptions};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::crashpoint::crashpoint;
use crate::error::{Error, ErrorKind};
use crate::storage::store::is_document_id;

/// The log's file name inside the tombstone directory.
pub const TOMBSTONE_LOG_FILE_NAME: &str = "tombstones.log";
/// Bytes of SHA-256 kept as each line's checksum (rendered as twice as many hex digits).
pub const TOMBSTONE_CHECKSUM_BYTES: usize = 8;

/// One deletion, as the log records it. Coordinates only (§3.2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Tombstone {
    /// Monotonic deletion sequence, from 1, without gaps.
    pub seq: i64,
    /// The deleted document's public id (32 hex).
    pub doc_id: String,
    /// memoria's revision of the document that was deleted. A later
    /// revision of the same id (re-ingested after the delete) is not deleted
    /// by replaying this entry.
    pub revision: i64,
    /// Unix seconds of the deletion.
    pub at: i64,
}

impl Tombstone {
    fn fields(&self) -> String {
        format!("{} {} {} {}", self.seq, self.doc_id, self.revision, self.at)
    }

    fn checksum(fields: &str) -> String {
        hex::encode(&Sha256::digest(fields.as_bytes())[..TOMBSTONE_CHECKSUM_BYTES])
    }

    /// The entry's line, newline included.
    pub fn line(&self) -> String {
        let fields = self.fields();
        let sum = Tombstone::checksum(&fields);
        format!("{fields} {sum}\n")
    }

    /// Parses one complete line (without its newline).
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] if the line is malformed or its checksum fails.
    pub fn parse(line: &str) -> Result<Tombstone, Error> {
        let bad = |what: &str| Error::new(ErrorKind::Storage, format!("tombstone log: {what}"));
        let parts: Vec<&str> = line.split(' ').collect();
        let [seq, doc_id, revision, at, sum] = parts[..] else {
            return Err(bad("a complete line does not have five fields"));
        };
        let t = Tombstone {
            seq: seq.parse().map_err(|_| bad("a sequence is not a number"))?,
            doc_id: doc_id.to_string(),
            revision: revision
                .parse()
                .map_err(|_| bad("a revision is not a number"))?,
            at: at.parse().map_err(|_| bad("a time is not a number"))?,
        };
        if !is_document_id(&t.doc_id) {
            return Err(bad("a document id is malformed"));
        }
        if Tombstone::checksum(&t.fields()) != sum {
            return Err(bad("a complete line fails its checksum"));
        }
        Ok(t)
    }
}

/// The open log: every complete entry, and the file to append to.
#[derive(Debug)]
pub struct TombstoneLog {
    path: PathBuf,
    file: File,
    entries: Vec<Tombstone>,
    torn_bytes: u64,
}

impl TombstoneLog {
    /// The log's path under the tombstone directory `dir`.
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(TOMBSTONE_LOG_FILE_NAME)
    }

    /// Opens (creating `dir` and the file if needed) the log in the
    /// tombstone directory `dir`, reads every complete entry, and truncates a
    /// torn last line away (fsynced).
    ///
    /// # Errors
    /// [`ErrorKind::Io`] if the file cannot be opened, read or truncated;
    /// [`ErrorKind::Storage`] if a complete line is malformed, fails its
    /// checksum, or breaks the sequence (each entry's seq is the previous + 1).
    pub fn open(dir: &Path) -> Result<TombstoneLog, Error> {
        let path = TombstoneLog::path_in(dir);
        // The directory is the operator's setting: every I/O error names it.
        let io = |what: &str, e: std::io::Error| {
            Error::with_source(
                ErrorKind::Io,
                format!("tombstone log {}: {what}", path.display()),
                e,
            )
        };
        fs::create_dir_all(dir).map_err(|e| io("creating its directory", e))?;
        let created = !path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| io("opening", e))?;
        if created {
            file.sync_all().map_err(|e| io("syncing", e))?;
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| io("syncing its directory", e))?;
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(|e| io("reading", e))?;
        let complete_len = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let text = std::str::from_utf8(&bytes[..complete_len])
            .map_err(|_| Error::new(ErrorKind::Storage, "tombstone log: a line is not ASCII"))?;
        let mut entries: Vec<Tombstone> = Vec::new();
        for line in text.lines() {
            let t = Tombstone::parse(line)?;
            let expected = entries.last().map_or(1, |p| p.seq + 1);
            if t.seq != expected {
                return Err(Error::new(
                    ErrorKind::Storage,
                    format!("tombstone log: sequence {} follows {}", t.seq, expected - 1),
                ));
            }
            entries.push(t);
        }
        let torn_bytes = (bytes.len() - complete_len) as u64;
        if torn_bytes > 0 {
            tracing::warn!(
                torn_bytes,
                "tombstone log: ignoring a torn last line left by a crash"
            );
            file.set_len(complete_len as u64)
                .map_err(|e| io("truncating a torn line", e))?;
            file.sync_all().map_err(|e| io("syncing", e))?;
        }
        Ok(TombstoneLog {
            path,
            file,
            entries,
            torn_bytes,
        })
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every complete entry, in sequence order.
    pub fn entries(&self) -> &[Tombstone] {
        &self.entries
    }

    /// The entries with a sequence greater than `seq`, in order.
    pub fn after(&self, seq: i64) -> &[Tombstone] {
        let start = self.entries.partition_point(|t| t.seq <= seq);
        &self.entries[start..]
    }

    /// The highest sequence written (0: none).
    pub fn last_seq(&self) -> i64 {
        self.entries.last().map_or(0, |t| t.seq)
    }

    /// Vouches for a database whose own record of deletions stops at
    /// `database_seq`, with `database_last` its entry at that sequence (§7.4):
    /// the log must hold that sequence, and hold it for the same document and
    /// revision. A log behind the database went backwards: it was restored
    /// from a backup with (or without) the data, replaced, or lost. Replaying
    /// it would replay nothing the database lacks, and every later deletion
    /// would reuse a sequence, so memoria refuses to wake on it rather than
    /// serve what was deleted.
    ///
    /// # Errors
    /// [`ErrorKind::TombstonesBehind`], naming the log's path and both
    /// sequences, if the log's last sequence is below `database_seq` or its
    /// entry there is not `database_last`.
    pub fn vouch_for(
        &self,
        database_seq: i64,
        database_last: Option<&Tombstone>,
    ) -> Result<(), Error> {
        if self.last_seq() < database_seq {
            return Err(Error::new(
                ErrorKind::TombstonesBehind,
                format!(
                    "the tombstone log {} stops at sequence {} but the database has applied deletions up to sequence {database_seq}: the log went backwards (restored from a backup, replaced or lost), and memoria refuses to serve rather than serve what was deleted; put back the log that holds sequence {database_seq}, never one restored with the data",
                    self.path.display(),
                    self.last_seq()
                ),
            ));
        }
        let held = self.after(database_seq - 1).first();
        if database_seq > 0 && held != database_last {
            return Err(Error::new(
                ErrorKind::TombstonesBehind,
                format!(
                    "the tombstone log {} does not hold the deletion the database records at sequence {database_seq}: it is not this store's log, and memoria refuses to serve on it",
                    self.path.display()
                ),
            ));
        }
        Ok(())
    }

    /// Bytes of a torn last line found (and truncated) at open; 0 normally.
    pub fn torn_bytes_dropped(&self) -> u64 {
        self.torn_bytes
    }

    /// Appends the next entry and fsyncs it; returns it once durable.
    ///
    /// The entry's sequence is the log's last + 1. The line is written in two
    /// halves around the `tombstone:mid-append` crash point, so a crash test
    /// can leave a torn line exactly as a power cut would.
    ///
    /// # Errors
    /// [`ErrorKind::NotFound`] if `doc_id` is not a document id;
    /// [`ErrorKind::Io`] if the write or the fsync fails (the entry then is
    /// not acknowledged, and the caller must not delete).
    pub fn append(&mut self, doc_id: &str, revision: i64, at: i64) -> Result<Tombstone, Error> {
        if !is_document_id(doc_id) {
            return Err(Error::new(ErrorKind::NotFound, "no such document"));
        }
        let t = Tombstone {
            seq: self.last_seq() + 1,
            doc_id: doc_id.to_string(),
            revision,
            at,
        };
        let line = t.line();
        let (head, tail) = line.as_bytes().split_at(line.len() / 2);
        self.file.write_all(head)?;
        crashpoint("tombstone:mid-append", &self.path);
        self.file.write_all(tail)?;
        self.file.sync_all()?;
        self.entries.push(t.clone());
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC_A: &str = "0123456789abcdef0123456789abcdef";
    const DOC_B: &str = "fedcba9876543210fedcba9876543210";

    #[test]
    fn appended_entries_are_read_back_in_sequence_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = TombstoneLog::open(dir.path()).unwrap();
        assert_eq!(log.append(DOC_A, 3, 100).unwrap().seq, 1);
        assert_eq!(log.append(DOC_B, 1, 101).unwrap().seq, 2);
        drop(log);
        let log = TombstoneLog::open(dir.path()).unwrap();
        assert_eq!(log.last_seq(), 2);
        assert_eq!(log.entries()[0].doc_id, DOC_A);
        assert_eq!(log.entries()[0].revision, 3);
        assert_eq!(log.after(1).len(), 1);
        assert_eq!(log.after(1)[0].doc_id, DOC_B);
        assert!(log.after(2).is_empty());
    }

    #[test]
    fn a_torn_last_line_is_ignored_truncated_and_the_next_append_takes_its_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = TombstoneLog::open(dir.path()).unwrap();
        log.append(DOC_A, 1, 100).unwrap();
        drop(log);
        let torn = Tombstone {
            seq: 2,
            doc_id: DOC_B.into(),
            revision: 1,
            at: 101,
        }
        .line();
        let mut f = OpenOptions::new()
            .append(true)
            .open(TombstoneLog::path_in(dir.path()))
            .unwrap();
        f.write_all(&torn.as_bytes()[..torn.len() - 3]).unwrap();
        drop(f);
        let mut log = TombstoneLog::open(dir.path()).unwrap();
        assert_eq!(log.last_seq(), 1);
        assert_eq!(log.torn_bytes_dropped(), (torn.len() - 3) as u64);
        assert_eq!(log.append(DOC_B, 1, 102).unwrap().seq, 2);
        drop(log);
        assert_eq!(TombstoneLog::open(dir.path()).unwrap().last_seq(), 2);
    }

    #[test]
    fn a_damaged_complete_line_is_refused_never_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = TombstoneLog::open(dir.path()).unwrap();
        log.append(DOC_A, 1, 100).unwrap();
        log.append(DOC_B, 1, 101).unwrap();
        drop(log);
        let path = TombstoneLog::path_in(dir.path());
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replacen(" 100 ", " 109 ", 1)).unwrap();
        assert_eq!(
            TombstoneLog::open(dir.path()).unwrap_err().kind(),
            ErrorKind::Storage
        );
    }

    #[test]
    fn a_gap_in_the_sequence_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = TombstoneLog::path_in(dir.path());
        let line = |seq| {
            Tombstone {
                seq,
                doc_id: DOC_A.into(),
                revision: 1,
                at: 100,
            }
            .line()
        };
        fs::write(&path, format!("{}{}", line(1), line(3))).unwrap();
        assert!(TombstoneLog::open(dir.path()).is_err());
    }

    #[test]
    fn the_log_vouches_only_for_a_database_it_reaches_with_the_same_entries() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = TombstoneLog::open(dir.path()).unwrap();
        let first = log.append(DOC_A, 1, 100).unwrap();
        let second = log.append(DOC_B, 1, 101).unwrap();
        let stranger = Tombstone {
            doc_id: DOC_A.into(),
            ..second.clone()
        };
        let beyond = Tombstone {
            seq: 3,
            ..second.clone()
        };
        // (database's sequence, its entry there, vouched for)
        let rows: [(i64, Option<&Tombstone>, bool); 6] = [
            (0, None, true),
            (1, Some(&first), true),
            (2, Some(&second), true),
            (2, Some(&stranger), false),
            (2, None, false),
            (3, Some(&beyond), false),
        ];
        for (seq, last, vouched) in rows {
            let got = log.vouch_for(seq, last);
            assert_eq!(got.is_ok(), vouched, "database at {seq}: {got:?}");
            if let Err(e) = got {
                assert_eq!(e.kind(), ErrorKind::TombstonesBehind);
                assert!(e.to_string().contains(&log.path().display().to_string()));
            }
        }
    }

    #[test]
    fn a_missing_log_is_refused_for_a_database_that_has_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let log = TombstoneLog::open(&dir.path().join("never-written")).unwrap();
        let held = Tombstone {
            seq: 1,
            doc_id: DOC_A.into(),
            revision: 1,
            at: 100,
        };
        assert!(log.vouch_for(0, None).is_ok());
        let e = log.vouch_for(1, Some(&held)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TombstonesBehind);
        assert!(
            e.to_string().contains("stops at sequence 0")
                && e.to_string().contains("up to sequence 1"),
            "{e}"
        );
    }

    #[test]
    fn a_line_holds_only_coordinates() {
        let t = Tombstone {
            seq: 7,
            doc_id: DOC_A.into(),
            revision: 2,
            at: 1_790_000_000,
        };
        let line = t.line();
        assert!(line.starts_with(&format!("7 {DOC_A} 2 1790000000 ")));
        assert_eq!(
            line.len(),
            t.fields().len() + 1 + 2 * TOMBSTONE_CHECKSUM_BYTES + 1
        );
        assert_eq!(Tombstone::parse(line.trim_end()).unwrap(), t);
    }
}
