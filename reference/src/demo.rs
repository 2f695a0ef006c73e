//! The embedded default corpus: the fictional Almendra Studio's wiki, compiled in so `memoria demo` works with no set-up; and the demo's import of extra files one at a time, beside a serving page.
//!
//! The files live in `fixtures/team/` and were written for this project
//! (see its README). They exercise the chunker's cases (headings without
//! blank lines, fences holding `#`, a file with no blank lines over the word
//! ceiling, CRLF line endings), multi-byte highlighting and HTML escaping.
//!
//! Seeding is idempotent: each fixture is keyed `fixture:<name>`, and the
//! store leaves a document whose keyed body is unchanged as it is (§5.2), so
//! a demo on a reused data directory imports nothing twice and writes no
//! snapshot.
//!
//! `memoria demo PATH…` serves while it imports: it reads each file with no
//! lock held and ingests it with [`ingest_file`] in a store step of its own,
//! so a page request waits for at most one document's transaction.

use std::path::Path;

use crate::app::import::{ingest_bytes, ingest_read};
use crate::error::Error;
use crate::ingest::import::{FileOutcome, ImportReport, file_outcome};
use crate::instance::Instance;
use crate::storage::store::IngestStatus;

/// Every embedded fixture document: (file name, bytes).
pub const FIXTURE_CORPUS: &[(&str, &[u8])] = &[
    ("office.md", include_bytes!("../../fixtures/team/office.md")),
    (
        "budget-2026.md",
        include_bytes!("../../fixtures/team/budget-2026.md"),
    ),
    (
        "onboarding.md",
        include_bytes!("../../fixtures/team/onboarding.md"),
    ),
    (
        "runbook-deploys.md",
        include_bytes!("../../fixtures/team/runbook-deploys.md"),
    ),
    (
        "incident-2026-03-14.md",
        include_bytes!("../../fixtures/team/incident-2026-03-14.md"),
    ),
    (
        "meeting-notes-2026-02-03.md",
        include_bytes!("../../fixtures/team/meeting-notes-2026-02-03.md"),
    ),
    (
        "meeting-notes-2026-03-18.md",
        include_bytes!("../../fixtures/team/meeting-notes-2026-03-18.md"),
    ),
    (
        "access-log-sample.txt",
        include_bytes!("../../fixtures/team/access-log-sample.txt"),
    ),
    (
        "crlf-policy.md",
        include_bytes!("../../fixtures/team/crlf-policy.md"),
    ),
    (
        "handbook.html",
        include_bytes!("../../fixtures/team/handbook.html"),
    ),
    (
        "glossary.md",
        include_bytes!("../../fixtures/team/glossary.md"),
    ),
    (
        "kitchen.md",
        include_bytes!("../../fixtures/team/kitchen.md"),
    ),
];

/// Ingests the embedded corpus and, if anything changed, writes one snapshot.
/// On a store that already holds it, every fixture is
/// [`IngestStatus::Unchanged`] and nothing is written.
///
/// # Errors
/// Storage or snapshot errors. A fixture that fails to decode is a bug in the
/// fixtures and is reported in the [`ImportReport`] like any file.
pub fn seed(instance: &mut Instance) -> Result<ImportReport, Error> {
    let mut report = ImportReport::default();
    for (name, bytes) in FIXTURE_CORPUS {
        let key = format!("fixture:{name}");
        match ingest_bytes(instance, &key, name, bytes, None) {
            Ok((o, kind)) => report.files.push(FileOutcome {
                path: (*name).to_string(),
                status: Some(o.status),
                kind: Some(kind),
                refused: None,
                document_id: Some(o.id),
                chunks: o.added.len(),
            }),
            Err(e) => report.files.push(FileOutcome {
                path: (*name).to_string(),
                status: None,
                kind: None,
                refused: Some(e.message().to_string()),
                document_id: None,
                chunks: 0,
            }),
        }
    }
    if report
        .files
        .iter()
        .any(|f| f.status.is_some_and(|s| s != IngestStatus::Unchanged))
    {
        report.snapshot_generation = Some(instance.write_snapshot()?.generation);
    }
    Ok(report)
}

/// Ingests one file `memoria demo` read beside the serving page: `bytes` is
/// what reading `path` gave, read with no lock held. Writes no snapshot; the
/// caller writes one when the whole import is done (`memoria import` does
/// the same). A file that cannot be read or decoded is refused in the
/// outcome, as `memoria import` refuses it.
pub fn ingest_file(
    instance: &mut Instance,
    path: &Path,
    bytes: std::io::Result<Vec<u8>>,
) -> FileOutcome {
    file_outcome(path, ingest_read(instance, path, bytes))
}
