//! The sealed index snapshot: one blob per generation in the bucket directory (§3.1, §7.3, §7.4).
//!
//! The in-memory FTS5 database is serialised, prefixed with a small header,
//! and sealed whole under [`Purpose::IndexSnapshot`] with the generation in
//! the AAD, so a blob renamed to another generation fails to open. It is
//! written to a temporary name, synced, and renamed into place, so a crash
//! leaves either the old generation or the new one, never half of one.
//!
//! Header (little-endian, inside the seal): `MIDX` magic, format version u32,
//! generation u64, `store_seq` i64, `tombstone_seq` i64, then the SQLite image.
//!
//! Retirement here keeps the current and the previous generation. §7.4's full
//! rule (retire only once no restorable backup can point at a generation) is
//! owed by the restore work and noted in ARCHITECTURE.md.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::crashpoint::crashpoint;
use crate::error::{Error, ErrorKind};
use crate::seal::{Purpose, Sealer};

/// The bucket subdirectory holding snapshot blobs.
pub const SNAPSHOT_DIR_NAME: &str = "snapshots";
/// Generations kept on disk: the current one and the one before it.
pub const SNAPSHOT_GENERATIONS_KEPT: i64 = 2;
const MAGIC: &[u8; 4] = b"MIDX";
const FORMAT_VERSION: u32 = 1;
const HEADER_BYTES: usize = 4 + 4 + 8 + 8 + 8;

/// What a snapshot records besides the index image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotHeader {
    /// Monotonic generation number.
    pub generation: i64,
    /// The store's change counter this snapshot is current through.
    pub store_seq: i64,
    /// The last tombstone this snapshot has applied (§7.4's deletion cursor).
    pub tombstone_seq: i64,
}

/// A snapshot read back and opened.
#[derive(Debug)]
pub struct LoadedSnapshot {
    /// Its header.
    pub header: SnapshotHeader,
    /// The SQLite image of the index.
    pub image: Vec<u8>,
    /// Size of the sealed blob on disk, in bytes.
    pub sealed_bytes: u64,
}

/// The snapshot directory under a data directory.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join(SNAPSHOT_DIR_NAME)
}

/// The blob path of one generation.
pub fn blob_path(data_dir: &Path, generation: i64) -> PathBuf {
    dir(data_dir).join(format!("index-{generation:020}.sealed"))
}

fn row(generation: i64) -> String {
    format!("snapshots/{generation}")
}

/// Seals the header and image to memory; the exact bytes [`write`] puts on disk.
pub fn seal(sealer: &Sealer, header: SnapshotHeader, image: &[u8]) -> Vec<u8> {
    let mut plain = Vec::with_capacity(HEADER_BYTES + image.len());
    plain.extend_from_slice(MAGIC);
    plain.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    plain.extend_from_slice(&(header.generation as u64).to_le_bytes());
    plain.extend_from_slice(&header.store_seq.to_le_bytes());
    plain.extend_from_slice(&header.tombstone_seq.to_le_bytes());
    plain.extend_from_slice(image);
    let sealed = sealer.seal(Purpose::IndexSnapshot, &row(header.generation), &plain);
    zeroize::Zeroize::zeroize(&mut plain);
    sealed
}

/// Opens bytes produced by [`seal`] for the given generation.
///
/// # Errors
/// [`ErrorKind::Seal`] if the blob does not open under this generation;
/// [`ErrorKind::Snapshot`] if its header is malformed.
pub fn open(sealer: &Sealer, generation: i64, sealed: &[u8]) -> Result<LoadedSnapshot, Error> {
    let plain = sealer.open(Purpose::IndexSnapshot, &row(generation), sealed)?;
    if plain.len() < HEADER_BYTES || &plain[0..4] != MAGIC {
        return Err(Error::new(
            ErrorKind::Snapshot,
            "snapshot header is malformed",
        ));
    }
    let u32_at = |i: usize| u32::from_le_bytes(plain[i..i + 4].try_into().expect("4 bytes"));
    let i64_at = |i: usize| i64::from_le_bytes(plain[i..i + 8].try_into().expect("8 bytes"));
    if u32_at(4) != FORMAT_VERSION {
        return Err(Error::new(
            ErrorKind::Snapshot,
            "snapshot format version is unknown",
        ));
    }
    let header = SnapshotHeader {
        generation: i64_at(8),
        store_seq: i64_at(16),
        tombstone_seq: i64_at(24),
    };
    if header.generation != generation {
        return Err(Error::new(
            ErrorKind::Snapshot,
            "snapshot header names another generation",
        ));
    }
    Ok(LoadedSnapshot {
        header,
        image: plain[HEADER_BYTES..].to_vec(),
        sealed_bytes: sealed.len() as u64,
    })
}

/// Writes one generation atomically: temporary file, fsync, rename, fsync the directory.
///
/// Returns the sealed size in bytes.
///
/// # Errors
/// [`ErrorKind::Io`] if any file operation fails.
pub fn write(
    data_dir: &Path,
    sealer: &Sealer,
    header: SnapshotHeader,
    image: &[u8],
) -> Result<u64, Error> {
    let d = dir(data_dir);
    fs::create_dir_all(&d)?;
    let sealed = seal(sealer, header, image);
    let final_path = blob_path(data_dir, header.generation);
    let tmp_path = final_path.with_extension("sealed.tmp");
    {
        let mut f = fs::File::create(&tmp_path)?;
        f.write_all(&sealed)?;
        f.sync_all()?;
    }
    crashpoint("snapshot:before-rename");
    fs::rename(&tmp_path, &final_path)?;
    fs::File::open(&d)?.sync_all()?;
    Ok(sealed.len() as u64)
}

/// Reads and opens one generation; `Ok(None)` if its blob is missing.
///
/// # Errors
/// As [`open`], plus [`ErrorKind::Io`] if the file exists but cannot be read.
pub fn read(
    data_dir: &Path,
    sealer: &Sealer,
    generation: i64,
) -> Result<Option<LoadedSnapshot>, Error> {
    let path = blob_path(data_dir, generation);
    let sealed = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    open(sealer, generation, &sealed).map(Some)
}

/// Deletes blobs older than the kept generations, and leftover temporary files.
///
/// # Errors
/// [`ErrorKind::Io`] if the directory cannot be listed; individual removals
/// that fail are skipped, since a blob left behind is sealed.
pub fn retire(data_dir: &Path, current: i64) -> Result<u32, Error> {
    let d = dir(data_dir);
    let entries = match fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e.into()),
    };
    let mut retired = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let generation = name
            .strip_prefix("index-")
            .and_then(|n| n.strip_suffix(".sealed"))
            .and_then(|n| n.parse::<i64>().ok());
        let stale = match generation {
            Some(g) => g <= current - SNAPSHOT_GENERATIONS_KEPT,
            None => name.ends_with(".sealed.tmp"),
        };
        if stale && fs::remove_file(entry.path()).is_ok() {
            retired += 1;
        }
    }
    Ok(retired)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::Dek;

    fn sealer() -> Sealer {
        Sealer::new(&Dek::from_bytes([3; 32]))
    }

    #[test]
    fn a_snapshot_written_is_read_back_with_its_header() {
        let dir = tempfile::tempdir().unwrap();
        let h = SnapshotHeader {
            generation: 4,
            store_seq: 9,
            tombstone_seq: 2,
        };
        write(dir.path(), &sealer(), h, b"image bytes").unwrap();
        let back = read(dir.path(), &sealer(), 4).unwrap().unwrap();
        assert_eq!(back.header, h);
        assert_eq!(back.image, b"image bytes");
    }

    #[test]
    fn a_missing_generation_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path(), &sealer(), 1).unwrap().is_none());
    }

    #[test]
    fn a_blob_renamed_to_another_generation_fails_to_open() {
        let dir = tempfile::tempdir().unwrap();
        let h = SnapshotHeader {
            generation: 1,
            store_seq: 1,
            tombstone_seq: 0,
        };
        write(dir.path(), &sealer(), h, b"x").unwrap();
        fs::rename(blob_path(dir.path(), 1), blob_path(dir.path(), 2)).unwrap();
        assert!(read(dir.path(), &sealer(), 2).is_err());
    }

    #[test]
    fn retirement_keeps_the_current_and_previous_generation() {
        let dir = tempfile::tempdir().unwrap();
        for g in 1..=4 {
            let h = SnapshotHeader {
                generation: g,
                store_seq: g,
                tombstone_seq: 0,
            };
            write(dir.path(), &sealer(), h, b"x").unwrap();
        }
        assert_eq!(retire(dir.path(), 4).unwrap(), 2);
        assert!(read(dir.path(), &sealer(), 3).unwrap().is_some());
        assert!(read(dir.path(), &sealer(), 2).unwrap().is_none());
    }
}
