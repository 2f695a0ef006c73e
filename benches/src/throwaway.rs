//! A throwaway instance for a bench: woken over a temporary directory with a fresh DEK, the corpus imported into it, and the queries to ask it.

use std::path::Path;
use std::sync::Arc;

use memoria::Admission;
use memoria::EgressMode;
use memoria::SystemClock;
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig};

use crate::corpus::Corpus;

/// The one owner a bench instance admits.
pub const BENCH_OWNER: &str = "bench@localhost";

/// Wakes an instance over `data_dir` with a fresh random DEK, admitting [`BENCH_OWNER`].
///
/// # Errors
/// If the store cannot be opened.
pub fn wake_throwaway(data_dir: &Path) -> anyhow::Result<Instance> {
    let config = InstanceConfig {
        data_dir: data_dir.to_path_buf(),
        admission: Admission::parse(BENCH_OWNER)?,
        egress: EgressMode::AiOff,
    };
    Ok(Instance::wake(
        config,
        Sealer::new(&Dek::generate()),
        Arc::new(SystemClock),
    )?)
}

/// The corpus imported into a throwaway instance; the directory lives as long as the returned guard.
///
/// # Panics
/// If the instance cannot be woken or the import fails on storage.
pub fn imported(corpus: &Corpus) -> (tempfile::TempDir, Instance) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut instance = wake_throwaway(dir.path()).expect("a throwaway instance wakes");
    let refused = corpus
        .ingest_into(&mut instance)
        .expect("the corpus imports");
    let (docs, chunks) = instance.store().counts().expect("counts");
    eprintln!("imported: {docs} documents, {chunks} chunks, {refused} files refused");
    (dir, instance)
}

/// Where a 90k bench keeps its store, and with which DEK (`--keep DIR`):
/// [`StoreDir::open`].
#[derive(Debug)]
pub struct StoreDir {
    /// The data directory: `DIR`, or a temporary directory.
    pub path: std::path::PathBuf,
    /// The store's DEK: read back from `DIR.dek`, or fresh.
    pub dek: Dek,
    /// True when `DIR.dek` existed: the store is an earlier run's, reused
    /// (no import, no embedding).
    pub reused: bool,
    _temporary: Option<tempfile::TempDir>,
}

impl StoreDir {
    /// `keep` as `--keep DIR` gives it: with `DIR` and `DIR.dek` present, that
    /// store and its DEK (plain base64; a throwaway key, for profiling, never
    /// a real one); with `DIR` new, `DIR` and a fresh DEK written to
    /// `DIR.dek`; without `keep`, a temporary directory and a fresh DEK,
    /// removed when this is dropped.
    ///
    /// # Errors
    /// If the directory cannot be made, or `DIR.dek` is not a DEK.
    pub fn open(keep: Option<&Path>) -> anyhow::Result<StoreDir> {
        let Some(dir) = keep else {
            let temporary = tempfile::tempdir()?;
            return Ok(StoreDir {
                path: temporary.path().to_path_buf(),
                dek: Dek::generate(),
                reused: false,
                _temporary: Some(temporary),
            });
        };
        let dek_file = dir.with_extension("dek");
        if let Ok(b64) = std::fs::read_to_string(&dek_file) {
            return Ok(StoreDir {
                path: dir.to_path_buf(),
                dek: Dek::from_base64(b64.trim())?,
                reused: true,
                _temporary: None,
            });
        }
        let dek = Dek::generate();
        std::fs::create_dir_all(dir)?;
        std::fs::write(&dek_file, dek.to_base64())?;
        Ok(StoreDir {
            path: dir.to_path_buf(),
            dek,
            reused: false,
            _temporary: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::StoreDir;

    #[test]
    fn a_kept_store_is_made_once_and_reused_with_its_own_dek() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("store");
        let first = StoreDir::open(Some(&dir)).unwrap();
        assert!(!first.reused && dir.is_dir() && dir.with_extension("dek").is_file());
        let again = StoreDir::open(Some(&dir)).unwrap();
        assert!(again.reused);
        assert_eq!(again.dek.to_base64(), first.dek.to_base64());
        let temporary = StoreDir::open(None).unwrap();
        assert!(!temporary.reused && temporary.path.is_dir());
    }
}
