//! The roster's high-water mark: the generation and epoch memoria last adopted, kept beside the tombstone log so a restore of the data directory cannot rewind them (§4.3, §7.4).
//!
//! The store keeps the same coordinates (`roster_held`), but the store is
//! what a restore from a backup replaces, and a store from before a
//! removal at the home remembers the epoch from before it. A lagging home
//! replica answering that older roster would then be adopted, and the
//! person removed admitted again: exactly the loss §7.4 names for
//! deletions ("restoring a backup from before a deletion also restores a
//! tombstone log from before it … the deletion is simply gone"), and
//! answers the same way: the mark lives in the tombstone directory, which
//! the operator backs up apart and never restores with the data
//! (`MEMORIA_TOMBSTONES`). On wake memoria judges its first pull against
//! the mark when there is one, else the store's row.
//!
//! One small JSON file ([`ROSTER_MARK_FILE_NAME`]), coordinates only: the
//! team, the opaque generation and the epoch, never a member. Written as a
//! new file fsynced and renamed over the old, so a crash leaves the old
//! mark or the new one. Read totally: a file that is not a mark is an
//! error, never a mark of nothing.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

/// The mark's file name in the tombstone directory.
pub const ROSTER_MARK_FILE_NAME: &str = "roster-mark.json";

/// The largest mark file read, in bytes: a team label and a generation of
/// at most `ROSTER_GENERATION_BYTES_MAX` (256) bytes each, escaped, an
/// epoch and the braces, rounded up.
const ROSTER_MARK_BYTES_MAX: u64 = 4096;

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Mark {
    team: String,
    generation: String,
    epoch: u64,
}

/// The mark's path under the tombstone directory `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(ROSTER_MARK_FILE_NAME)
}

fn io(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::with_source(
        ErrorKind::Io,
        format!("roster mark {}: {what}", path.display()),
        e,
    )
}

/// The generation and epoch last adopted for `team`, as the mark in `dir`
/// holds them; `None` with no mark, or a mark of another team.
///
/// # Errors
/// [`ErrorKind::Io`] if the file exists and cannot be read;
/// [`ErrorKind::Storage`] if it is over its cap or not a mark.
pub fn read(dir: &Path, team: &str) -> Result<Option<(String, u64)>, Error> {
    let path = path_in(dir);
    let bytes = match fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path, "reading", e)),
    };
    if bytes.len() as u64 > ROSTER_MARK_BYTES_MAX {
        return Err(Error::new(
            ErrorKind::Storage,
            format!(
                "roster mark {}: over {ROSTER_MARK_BYTES_MAX} bytes",
                path.display()
            ),
        ));
    }
    let mark: Mark = serde_json::from_slice(&bytes).map_err(|_| {
        Error::new(
            ErrorKind::Storage,
            format!("roster mark {}: not a roster mark", path.display()),
        )
    })?;
    Ok(mark
        .team
        .eq_ignore_ascii_case(team)
        .then_some((mark.generation, mark.epoch)))
}

/// Records `generation` at `epoch` as the roster last adopted for `team`
/// in `dir` (created if needed): a new file, fsynced, renamed over the old.
///
/// # Errors
/// [`ErrorKind::Io`] if the directory or the file cannot be written.
pub fn write(dir: &Path, team: &str, generation: &str, epoch: u64) -> Result<(), Error> {
    let path = path_in(dir);
    fs::create_dir_all(dir).map_err(|e| io(&path, "creating its directory", e))?;
    let next = dir.join(format!("{ROSTER_MARK_FILE_NAME}.next"));
    let body = serde_json::to_vec(&Mark {
        team: team.to_owned(),
        generation: generation.to_owned(),
        epoch,
    })
    .map_err(|_| Error::new(ErrorKind::Storage, "roster mark: not serialisable"))?;
    let mut file = fs::File::create(&next).map_err(|e| io(&next, "creating", e))?;
    file.write_all(&body)
        .and_then(|()| file.sync_all())
        .map_err(|e| io(&next, "writing", e))?;
    fs::rename(&next, &path).map_err(|e| io(&path, "renaming the new mark over it", e))?;
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io(&path, "syncing its directory", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_written_is_read_back_for_its_team_only_and_a_later_one_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path(), "acme").unwrap(), None);
        write(dir.path(), "acme", "g1", 3).unwrap();
        assert_eq!(read(dir.path(), "acme").unwrap(), Some(("g1".into(), 3)));
        assert_eq!(read(dir.path(), "other").unwrap(), None);
        write(dir.path(), "acme", "g2", 1).unwrap();
        assert_eq!(read(dir.path(), "ACME").unwrap(), Some(("g2".into(), 1)));
    }

    #[test]
    fn a_file_that_is_not_a_mark_is_an_error_never_a_mark_of_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for bytes in [&b"{}"[..], b"not json", b"{\"team\":\"acme\"}"] {
            fs::write(path_in(dir.path()), bytes).unwrap();
            let e = read(dir.path(), "acme").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Storage, "{bytes:?}");
        }
        fs::write(path_in(dir.path()), vec![b' '; 5000]).unwrap();
        assert_eq!(
            read(dir.path(), "acme").unwrap_err().kind(),
            ErrorKind::Storage
        );
    }
}
