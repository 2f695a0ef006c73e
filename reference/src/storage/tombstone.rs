//! The durable tombstone log: one append-only file beside the database, one line per deletion (§7.4).
//!
//! §7.4: restoring a database backup from before a deletion also restores
//! the database's own record of deletions, so the deletion is simply gone.
//! The log is therefore a file of its own in the data directory
//! ([`TOMBSTONE_LOG_FILE_NAME`]), never inside the database, written before
//! the database transaction and fsynced, with a monotonic sequence. On wake
//! the instance replays every entry after the sequence the database stops at
//! ([`crate::storage::store::Store::tombstone_seq`]).
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

/// The log's file name inside the data directory.
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
    /// The log's path under `data_dir`.
    pub fn path_in(data_dir: &Path) -> PathBuf {
        data_dir.join(TOMBSTONE_LOG_FILE_NAME)
    }

    /// Opens (creating if needed) the log in `data_dir`, reads every complete
    /// entry, and truncates a torn last line away (fsynced).
    ///
    /// # Errors
    /// [`ErrorKind::Io`] if the file cannot be opened, read or truncated;
    /// [`ErrorKind::Storage`] if a complete line is malformed, fails its
    /// checksum, or breaks the sequence (each entry's seq is the previous + 1).
    pub fn open(data_dir: &Path) -> Result<TombstoneLog, Error> {
        fs::create_dir_all(data_dir)?;
        let path = TombstoneLog::path_in(data_dir);
        let created = !path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        if created {
            file.sync_all()?;
            File::open(data_dir)?.sync_all()?;
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
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
            file.set_len(complete_len as u64)?;
            file.sync_all()?;
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

    /// Bytes of a torn last line found (and truncated) at open; 0 normally.
    pub fn torn_bytes_dropped(&self) -> u64 {
        self.torn_bytes
    }

    /// Appends an entry taken from elsewhere (the database's own record, when
    /// the log lost its tail) and fsyncs it.
    ///
    /// # Errors
    /// [`ErrorKind::Storage`] unless `t.seq` is the log's last + 1;
    /// otherwise as [`TombstoneLog::append`].
    pub fn append_entry(&mut self, t: &Tombstone) -> Result<(), Error> {
        if t.seq != self.last_seq() + 1 {
            return Err(Error::new(
                ErrorKind::Storage,
                format!(
                    "tombstone log: cannot backfill sequence {} after {}",
                    t.seq,
                    self.last_seq()
                ),
            ));
        }
        let appended = self.append(&t.doc_id, t.revision, t.at)?;
        debug_assert_eq!(&appended, t);
        Ok(())
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
        crashpoint("tombstone:mid-append");
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
