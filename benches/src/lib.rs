//! Shared setup for memoria's benches: the corpus they measure and a throwaway instance holding it.
//!
//! The benches (`benches/*.rs`, driven by criterion) and the
//! `corpus-report` binary use this crate for two things:
//!
//! - [`Corpus`]: the fetched public corpora if present, else the embedded
//!   fixtures, and always saying which ([`Corpus::load`] prints it), so a
//!   number is never read against the wrong corpus; or the 90k Debian
//!   documentation corpus when [`CORPUS_ENV`] asks for it (`corpus.rs`);
//! - [`imported`]: the corpus in a throwaway instance woken with a fresh
//!   DEK ([`wake_throwaway`]), admitting [`BENCH_OWNER`], and
//!   [`BENCH_QUERIES`] to ask it (`corpus.rs`);
//! - [`Gaussian`], [`dense_matrix`]: seeded Gaussian unit vectors for the
//!   dense scan, fusion and pipeline benches (`vectors.rs`, issue 12);
//! - [`rusage_cpu_s`], [`status_bytes`], [`io_bytes`]: this process's CPU
//!   time, memory and bytes read, for the 90k binaries (`process.rs`).
//!
//! Every module is private; this file is the crate's whole public surface.

mod corpus;
mod process;
mod throwaway;
mod vectors;

pub use corpus::{
    BENCH_QUERIES, CORPUS_DIR_RELATIVE, CORPUS_ENV, CORPUS_ENV_DEBIAN_DOCS, CORPUS_SOURCES, Corpus,
    CorpusFile, DEBIAN_DOCS_DIR_RELATIVE, DEBIAN_DOCS_MANIFEST, DecodedFile, Origin, QUERIES_90K,
    SOURCE_FILE_NAME, SourceInfo, corpus_90k, debian_docs_dir, fetched_sources, source_version,
    workspace_root,
};
pub use process::{io_bytes, rusage_cpu_s, status_bytes};
pub use throwaway::{BENCH_OWNER, StoreDir, imported, wake_throwaway};
pub use vectors::{DENSE_SEED, Gaussian, dense_matrix, padded, quantised};
