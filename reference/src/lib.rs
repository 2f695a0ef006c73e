//! The reference memoria: a per-team search index that seals everything it stores and asks before it speaks.
//!
//! This crate is slice 0 of `memoria-design.md`: memoria with only its own
//! content (uploads and imported files), AI off, done properly. It is the
//! reference the harness in this workspace runs against fake siblings. It
//! never depends on the simulator or the gates.
//!
//! # The one rule (§0)
//!
//! memoria never speaks a passage without asking whoever owns it whether this
//! person may see it, right now. For memoria-owned content memoria is the app
//! of record, and the test is §4.2's two facts: the asker is admitted
//! ([`admission`]), and the document is present and not deleted ([`store`]).
//!
//! # Sealing (§3)
//!
//! [`seal`] derives one key per [`seal::Purpose`] from the DEK and seals
//! every cell with AES-256-GCM, bound to its row:
//!
//! ```
//! use memoria::seal::{Dek, Purpose, Sealer};
//! let sealer = Sealer::new(&Dek::generate());
//! let cell = sealer.seal(Purpose::Title, "documents/abc/title", b"Budget 2026");
//! assert_eq!(sealer.open(Purpose::Title, "documents/abc/title", &cell).unwrap(), b"Budget 2026");
//! assert!(sealer.open(Purpose::Title, "documents/xyz/title", &cell).is_err());
//! ```
//!
//! # Chunking, indexing, waking (§7)
//!
//! [`chunk`] splits a document into passages; [`store`] seals them into one
//! SQLite file; [`index`] holds FTS5 postings in memory only; [`snapshot`]
//! persists the index as one sealed blob per generation; [`instance`] wakes
//! by loading that blob and rebuilds only when it is missing or behind.
//!
//! ```
//! use std::sync::Arc;
//! use memoria::{admission::Admission, clock::FixedClock, egress::EgressMode, seal::{Dek, Sealer}};
//! use memoria::instance::{Instance, InstanceConfig};
//! use memoria::store::NewDocument;
//! let dir = tempfile::tempdir().unwrap();
//! let config = InstanceConfig {
//!     data_dir: dir.path().to_path_buf(),
//!     admission: Admission::parse("ana@example.org").unwrap(),
//!     egress: EgressMode::AiOff,
//! };
//! let mut m = Instance::wake(config, Sealer::new(&Dek::generate()), Arc::new(FixedClock(0))).unwrap();
//! m.ingest(&NewDocument {
//!     source_key: "upload:kitchen.md".into(),
//!     title: "Kitchen".into(),
//!     path: "kitchen.md".into(),
//!     body: "# Kitchen\n\nDescale the coffee machine monthly.".into(),
//! }).unwrap();
//! let page = m.search("ana@example.org", "descaling", 1).unwrap();
//! assert_eq!(page.results[0].link, format!("/documents/{}#p0", page.results[0].document_id));
//! assert!(m.search("eve@example.org", "descaling", 1).is_err());
//! ```
//!
//! # Surfaces (§8.1, §9.1)
//!
//! [`web`] serves the scriptless search page with axum; every route is in
//! [`web::DECLARED_ROUTES`] and every page carries the [`egress`] footer.
//! The `memoria` binary wraps it all in a CLI.

#![deny(missing_docs)]

pub mod admission;
pub mod breaker;
pub mod chunk;
pub mod clock;
pub mod config;
pub mod connector;
pub mod crashpoint;
pub mod decode;
pub mod demo;
pub mod egress;
pub mod error;
pub mod highlight;
pub mod import;
pub mod index;
pub mod instance;
pub mod query;
pub mod seal;
pub mod sibling;
pub mod snapshot;
pub mod store;
pub mod testkit;
pub mod tombstone;
pub mod web;

pub use error::{Error, ErrorKind};
