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

/// Ten realistic queries over the fetched corpora: five aimed at the Node.js
/// reference, five at the Rust book. Over the embedded fixtures most of them
/// find little, which is itself a fair latency case.
pub const BENCH_QUERIES: [&str; 10] = [
    "readable stream backpressure",
    "ownership borrowing",
    "child process spawn",
    "lifetimes elision",
    "tls certificate",
    "buffer encoding base64",
    "trait objects dynamic dispatch",
    "worker threads message port",
    "recoverable errors with result",
    "http server request headers",
];

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
