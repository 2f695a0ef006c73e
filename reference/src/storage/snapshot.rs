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
//! Retirement follows §7.4: a generation is not retired while a restorable
//! database backup could point at it. A backup taken at time T points at the
//! generation current at T, so generation G can be pointed at by any backup
//! taken before G was superseded. G is retired only once it is superseded (a
//! higher generation is on disk), is not the one the database records, and
//! was superseded more than [`BACKUP_RETENTION_WINDOW_S`] ago. Each blob's
//! modification time is set to its write time from the instance's clock
//! ([`write_at`]), so the bucket itself says when each generation was
//! written, whatever database is later restored beside it.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::crashpoint::crashpoint;
use crate::error::{Error, ErrorKind};
use crate::search::index::{ImageBuffer, LexicalIndex};
use crate::storage::seal::{Purpose, Sealer};

/// The bucket subdirectory holding snapshot blobs.
pub const SNAPSHOT_DIR_NAME: &str = "snapshots";
/// How long a database backup stays restorable, in seconds: 35 days.
///
/// Source: an assumption, stated because §7.4 names the window but no spec
/// gives its length. It covers daily backups kept 30 days plus 5 days of
/// slack for a restore that is started late. A deployment whose backups are
/// kept longer must raise it; a shorter value would let a restored database
/// point at a retired generation (which then rebuilds, never serves empty).
pub const BACKUP_RETENTION_WINDOW_S: i64 = 35 * 24 * 60 * 60;
const MAGIC: &[u8; 4] = b"MIDX";
/// 2: the index holds [`crate::search::text::index_form`] text under
/// `remove_diacritics 2` (issue 11). 3: that text is folded beyond Latin
/// ([`crate::search::text::fold`]) and a Markdown passage is indexed less
/// its comments and hidden elements
/// ([`crate::search::markdown::TextForm::index_text`]) (issue 32). An image
/// of an older version is rebuilt from the sealed chunks at wake, as any
/// image that does not load is, so no index folded the old way answers a
/// query folded the new way.
const FORMAT_VERSION: u32 = 3;
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

/// A snapshot read and opened in place, ready to become the index without a
/// copy ([`read_image`]): what a wake loads.
#[derive(Debug)]
pub struct SnapshotImage {
    /// Its header.
    pub header: SnapshotHeader,
    /// Size of the sealed blob on disk, in bytes.
    pub sealed_bytes: u64,
    buffer: Option<ImageBuffer>,
    image: std::ops::Range<usize>,
}

impl SnapshotImage {
    /// The index, loaded from this image in place; the image is handed over,
    /// so a second call finds none.
    ///
    /// # Errors
    /// [`ErrorKind::Snapshot`] if the image is not an FTS5 index database,
    /// or was already taken.
    pub fn take_index(&mut self) -> Result<LexicalIndex, Error> {
        let buffer = self
            .buffer
            .take()
            .ok_or_else(|| Error::new(ErrorKind::Snapshot, "the index image was already taken"))?;
        LexicalIndex::from_image(buffer, self.image.clone())
    }
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

/// Seals the header and image to memory; the exact bytes [`write()`] puts on disk.
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
    let header = parse_header(&plain, generation)?;
    Ok(LoadedSnapshot {
        header,
        image: plain[HEADER_BYTES..].to_vec(),
        sealed_bytes: sealed.len() as u64,
    })
}

/// The header at the start of an opened snapshot, checked against `generation`.
fn parse_header(plain: &[u8], generation: i64) -> Result<SnapshotHeader, Error> {
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
    Ok(header)
}

/// Writes one generation atomically: temporary file, fsync, rename, fsync the directory.
/// The blob's modification time is whatever the file system gives it.
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
    write_inner(data_dir, sealer, header, image, None)
}

/// As [`write()`], and records `written_at_unix_s` (the instance's clock, unix
/// seconds) as the blob's modification time, which retention reads ([`retire`]).
///
/// # Errors
/// As [`write()`].
pub fn write_at(
    data_dir: &Path,
    sealer: &Sealer,
    header: SnapshotHeader,
    image: &[u8],
    written_at_unix_s: i64,
) -> Result<u64, Error> {
    write_inner(data_dir, sealer, header, image, Some(written_at_unix_s))
}

fn system_time(unix_s: i64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_s.max(0) as u64)
}

fn write_inner(
    data_dir: &Path,
    sealer: &Sealer,
    header: SnapshotHeader,
    image: &[u8],
    written_at_unix_s: Option<i64>,
) -> Result<u64, Error> {
    let d = dir(data_dir);
    fs::create_dir_all(&d)?;
    let sealed = seal(sealer, header, image);
    let final_path = blob_path(data_dir, header.generation);
    let tmp_path = final_path.with_extension("sealed.tmp");
    {
        let mut f = fs::File::create(&tmp_path)?;
        f.write_all(&sealed)?;
        if let Some(at) = written_at_unix_s {
            f.set_modified(system_time(at))?;
        }
        f.sync_all()?;
    }
    crashpoint("snapshot:before-rename", &final_path);
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

/// As [`read`], for waking: the blob is read into one buffer SQLite
/// allocated and opened there ([`Sealer::open_in_place`]), so the image is
/// never copied (issue 11: peak memory at wake at most 1.5 times the
/// snapshot). `Ok(None)` if the blob is missing.
///
/// # Errors
/// As [`read`].
pub fn read_image(
    data_dir: &Path,
    sealer: &Sealer,
    generation: i64,
) -> Result<Option<SnapshotImage>, Error> {
    use std::io::Read as _;
    let path = blob_path(data_dir, generation);
    let mut file = match fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| Error::new(ErrorKind::Snapshot, "snapshot blob is too large to load"))?;
    let mut buffer = ImageBuffer::zeroed(len)?;
    file.read_exact(buffer.as_mut_slice())?;
    let plain = sealer.open_in_place(
        Purpose::IndexSnapshot,
        &row(generation),
        buffer.as_mut_slice(),
    )?;
    let header = parse_header(&buffer.as_slice()[plain.clone()], generation)?;
    Ok(Some(SnapshotImage {
        header,
        sealed_bytes: len as u64,
        buffer: Some(buffer),
        image: plain.start + HEADER_BYTES..plain.end,
    }))
}

/// The generation of a blob file name, `index-<generation>.sealed`.
fn generation_of(name: &str) -> Option<i64> {
    name.strip_prefix("index-")
        .and_then(|n| n.strip_suffix(".sealed"))
        .and_then(|n| n.parse::<i64>().ok())
}

/// Every generation whose blob is on disk, with its write time (unix
/// seconds, from the blob's modification time), ascending by generation.
///
/// # Errors
/// [`ErrorKind::Io`] if the directory cannot be listed.
pub fn generations(data_dir: &Path) -> Result<Vec<(i64, i64)>, Error> {
    let entries = match fs::read_dir(dir(data_dir)) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(e.into()),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(g) = generation_of(&entry.file_name().to_string_lossy()) else {
            continue;
        };
        let written_at = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs() as i64);
        out.push((g, written_at));
    }
    out.sort_unstable();
    Ok(out)
}

/// The highest generation whose blob is on disk (0: none). A restored
/// database can record a lower one; the next generation is above both.
///
/// # Errors
/// As [`generations`].
pub fn latest_generation(data_dir: &Path) -> Result<i64, Error> {
    Ok(generations(data_dir)?.last().map_or(0, |(g, _)| *g))
}

/// The dense index's blob of one generation, beside the lexical one.
pub fn vectors_blob_path(data_dir: &Path, generation: i64) -> PathBuf {
    dir(data_dir).join(format!("vectors-{generation:020}.sealed"))
}

fn vectors_row(generation: i64) -> String {
    format!("snapshots/{generation}/vectors")
}

const VECTORS_MAGIC: &[u8; 4] = b"MVSN";
const VECTORS_FORMAT_VERSION: u32 = 1;
const VECTORS_HEADER_BYTES: usize = 4 + 4 + 8 + 8 + 8;

/// A dense-index snapshot read back and opened.
#[derive(Debug)]
pub struct LoadedVectors {
    /// The store's change counter the matrix is current through.
    pub store_seq: i64,
    /// The store's vector counter the matrix is current through
    /// ([`crate::storage::store::Store::vector_seq`]).
    pub vector_seq: i64,
    /// The matrix, in the dense index's own encoding ([`crate::dense::DenseMatrix::to_bytes`]).
    pub matrix: Vec<u8>,
    /// Size of the sealed blob on disk, in bytes.
    pub sealed_bytes: u64,
}

/// Writes the dense index of one generation (§3.1, §7.3): `MVEC` magic,
/// format version u32, generation u64, `store_seq` i64, `vector_seq` i64,
/// then the matrix,
/// sealed whole under [`Purpose::VectorSnapshot`] with the generation in the
/// AAD, atomically (temporary file, fsync, rename, fsync the directory).
/// Written before the lexical blob of the same generation, and retired with
/// it ([`retire`]). Returns the sealed size in bytes.
///
/// # Errors
/// [`ErrorKind::Io`] if any file operation fails.
pub fn write_vectors_at(
    data_dir: &Path,
    sealer: &Sealer,
    generation: i64,
    store_seq: i64,
    vector_seq: i64,
    matrix: &[u8],
    written_at_unix_s: i64,
) -> Result<u64, Error> {
    let d = dir(data_dir);
    fs::create_dir_all(&d)?;
    let mut plain = Vec::with_capacity(VECTORS_HEADER_BYTES + matrix.len());
    plain.extend_from_slice(VECTORS_MAGIC);
    plain.extend_from_slice(&VECTORS_FORMAT_VERSION.to_le_bytes());
    plain.extend_from_slice(&(generation as u64).to_le_bytes());
    plain.extend_from_slice(&store_seq.to_le_bytes());
    plain.extend_from_slice(&vector_seq.to_le_bytes());
    plain.extend_from_slice(matrix);
    let sealed = sealer.seal(Purpose::VectorSnapshot, &vectors_row(generation), &plain);
    zeroize::Zeroize::zeroize(&mut plain);
    let final_path = vectors_blob_path(data_dir, generation);
    let tmp_path = final_path.with_extension("sealed.tmp");
    {
        let mut f = fs::File::create(&tmp_path)?;
        f.write_all(&sealed)?;
        f.set_modified(system_time(written_at_unix_s))?;
        f.sync_all()?;
    }
    fs::rename(&tmp_path, &final_path)?;
    fs::File::open(&d)?.sync_all()?;
    Ok(sealed.len() as u64)
}

/// Reads and opens the dense index of one generation; `Ok(None)` if its
/// blob is missing (a store that never had AI on, or a crash between the
/// two blobs: the caller rebuilds the matrix from the sealed vectors).
///
/// # Errors
/// [`ErrorKind::Seal`] if the blob does not open under this generation;
/// [`ErrorKind::Snapshot`] if its header is malformed;
/// [`ErrorKind::Io`] if it exists but cannot be read.
pub fn read_vectors(
    data_dir: &Path,
    sealer: &Sealer,
    generation: i64,
) -> Result<Option<LoadedVectors>, Error> {
    let mut sealed = match fs::read(vectors_blob_path(data_dir, generation)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let sealed_bytes = sealed.len() as u64;
    // Opened where it lies, and the matrix moved down over the framing in
    // the same allocation: at 90,000 rows a wake holds one 47 MB buffer
    // for the vectors, not three (issue 12).
    let plain = sealer.open_in_place(
        Purpose::VectorSnapshot,
        &vectors_row(generation),
        &mut sealed,
    )?;
    let malformed = || Error::new(ErrorKind::Snapshot, "vector snapshot header is malformed");
    let header = sealed
        .get(plain.start..plain.start + VECTORS_HEADER_BYTES)
        .filter(|_| plain.len() >= VECTORS_HEADER_BYTES)
        .ok_or_else(malformed)?;
    if &header[0..4] != VECTORS_MAGIC {
        return Err(malformed());
    }
    let u32_at = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
    let i64_at = |i: usize| i64::from_le_bytes(header[i..i + 8].try_into().expect("8 bytes"));
    if u32_at(4) != VECTORS_FORMAT_VERSION || i64_at(8) != generation {
        return Err(malformed());
    }
    let (store_seq, vector_seq) = (i64_at(16), i64_at(24));
    zeroize::Zeroize::zeroize(&mut sealed[plain.start..plain.start + VECTORS_HEADER_BYTES]);
    sealed.truncate(plain.end);
    sealed.drain(..plain.start + VECTORS_HEADER_BYTES);
    Ok(Some(LoadedVectors {
        store_seq,
        vector_seq,
        matrix: sealed,
        sealed_bytes,
    }))
}

/// Whether generation `g`, superseded at `superseded_at` (unix seconds; `None`
/// if nothing supersedes it), may be retired at `now` while `current` is the
/// generation the database records (§7.4).
pub fn retirable(g: i64, superseded_at: Option<i64>, current: i64, now: i64) -> bool {
    match superseded_at {
        Some(at) => g != current && now - at > BACKUP_RETENTION_WINDOW_S,
        None => false,
    }
}

/// Deletes blobs no restorable backup can point at ([`retirable`]), and
/// leftover temporary files. `current` is the generation the database
/// records; `now` is unix seconds. Returns how many files were removed.
///
/// # Errors
/// [`ErrorKind::Io`] if the directory cannot be listed; individual removals
/// that fail are skipped, since a blob left behind is sealed.
pub fn retire(data_dir: &Path, current: i64, now: i64) -> Result<u32, Error> {
    let gens = generations(data_dir)?;
    let mut retired = 0;
    for (i, (g, _)) in gens.iter().enumerate() {
        // Superseded when the next higher generation on disk was written.
        let superseded_at = gens.get(i + 1).map(|(_, at)| *at);
        if retirable(*g, superseded_at, current, now) {
            // The dense index of a generation is retired with it (§7.4).
            if fs::remove_file(vectors_blob_path(data_dir, *g)).is_ok() {
                retired += 1;
            }
            if fs::remove_file(blob_path(data_dir, *g)).is_ok() {
                retired += 1;
            }
        }
    }
    if let Ok(entries) = fs::read_dir(dir(data_dir)) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().ends_with(".sealed.tmp")
                && fs::remove_file(entry.path()).is_ok()
            {
                retired += 1;
            }
        }
    }
    Ok(retired)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::seal::Dek;

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
        assert!(read_image(dir.path(), &sealer(), 1).unwrap().is_none());
    }

    #[test]
    fn a_snapshot_read_in_place_is_the_index_that_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = LexicalIndex::new().unwrap();
        idx.insert_new(9, "Budget", "", "travel line item").unwrap();
        let h = SnapshotHeader {
            generation: 5,
            store_seq: 3,
            tombstone_seq: 1,
        };
        write(dir.path(), &sealer(), h, &idx.serialize().unwrap()).unwrap();
        let mut image = read_image(dir.path(), &sealer(), 5).unwrap().unwrap();
        assert_eq!(image.header, h);
        assert_eq!(image.take_index().unwrap().chunk_ids().unwrap(), [9]);
        assert!(image.take_index().is_err(), "the image is handed over once");
        fs::rename(blob_path(dir.path(), 5), blob_path(dir.path(), 6)).unwrap();
        assert!(read_image(dir.path(), &sealer(), 6).is_err());
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

    fn write_gens(dir: &Path, gens: &[(i64, i64)]) {
        for (g, at) in gens {
            let h = SnapshotHeader {
                generation: *g,
                store_seq: *g,
                tombstone_seq: 0,
            };
            write_at(dir, &sealer(), h, b"x", *at).unwrap();
        }
    }

    #[test]
    fn a_generation_superseded_inside_the_backup_window_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_790_000_000;
        write_gens(dir.path(), &[(1, t0), (2, t0 + 10), (3, t0 + 20)]);
        assert_eq!(retire(dir.path(), 3, t0 + 20).unwrap(), 0);
        assert_eq!(generations(dir.path()).unwrap().len(), 3);
    }

    #[test]
    fn only_generations_superseded_longer_ago_than_the_window_are_retired() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_790_000_000;
        let w = BACKUP_RETENTION_WINDOW_S;
        write_gens(dir.path(), &[(1, t0), (2, t0 + 10), (3, t0 + w)]);
        // Generation 1 was superseded at t0 + 10: past the window at t0 + w + 11.
        assert_eq!(retire(dir.path(), 3, t0 + w + 11).unwrap(), 1);
        assert!(read(dir.path(), &sealer(), 1).unwrap().is_none());
        assert!(read(dir.path(), &sealer(), 2).unwrap().is_some());
        assert!(read(dir.path(), &sealer(), 3).unwrap().is_some());
        assert_eq!(latest_generation(dir.path()).unwrap(), 3);
    }

    #[test]
    fn the_generation_the_database_records_is_never_retired() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_790_000_000;
        write_gens(dir.path(), &[(1, t0), (2, t0 + 10)]);
        let far = t0 + 10 * BACKUP_RETENTION_WINDOW_S;
        assert_eq!(retire(dir.path(), 1, far).unwrap(), 0);
        assert!(read(dir.path(), &sealer(), 1).unwrap().is_some());
    }
}
