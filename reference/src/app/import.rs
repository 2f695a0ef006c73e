//! `memoria import` and an upload's bytes driven into the instance: decoded, ingested, one transaction per document, one snapshot at the end (§5, §4.2).
//!
//! What an import reads and how it reports are `ingest/import.rs`'s
//! (the walk, the skips, [`ImportReport`], [`file_outcome`], [`source_key`]);
//! this is the use-case above the instance that puts what was read into it:
//! [`import`] for `memoria import`, [`ingest_bytes`] for an upload, a
//! connector's item and the demo, [`ingest_read`] for a file read.

use std::path::{Path, PathBuf};

use crate::crashpoint::crashpoint;
use crate::date::{DateKind, DocumentDate};
use crate::error::{Error, ErrorKind};
use crate::ingest::decode::{self, SourceKind};
use crate::ingest::import::{
    Collected, ImportReport, collect_reporting, file_outcome, modified_unix_s, source_key,
};
use crate::instance::Instance;
use crate::storage::store::{IngestStatus, NewDocument};

/// Ingests one named blob of bytes; shared by import and upload.
/// `modified`: the file's modification time in Unix seconds, where the
/// source gives one (an import, not an upload): the document's date unless
/// its front matter names one (issue 31).
///
/// # Errors
/// Decoding and storage errors, with their kinds.
pub fn ingest_bytes(
    instance: &mut Instance,
    source_key: &str,
    name: &str,
    bytes: &[u8],
    modified: Option<i64>,
) -> Result<(crate::storage::store::IngestOutcome, SourceKind), Error> {
    let decoded = decode::decode(name, bytes)?;
    let outcome = instance.ingest_chunked(
        &NewDocument {
            source_key: source_key.to_string(),
            title: decoded.title,
            path: name.to_string(),
            body: decoded.body,
            date: modified.map(|at| DocumentDate {
                kind: DateKind::FileModified,
                at,
            }),
        },
        decoded.chunks,
    )?;
    Ok((outcome, decoded.kind))
}

/// Imports `paths` (files or directories) into `instance`.
///
/// # Errors
/// [`ErrorKind::Usage`] if a named path does not exist; snapshot errors at the
/// end. Per-file failures are reported in the [`ImportReport`], not returned.
pub fn import(instance: &mut Instance, paths: &[PathBuf]) -> Result<ImportReport, Error> {
    let Collected {
        files,
        skipped_by_extension,
        skipped,
        skipped_total,
    } = collect_reporting(paths)?;
    let mut report = ImportReport {
        skipped_by_extension,
        skipped,
        skipped_total,
        ..ImportReport::default()
    };
    let mut changed = false;
    // The index merges once, when the snapshot settles it (issue 30).
    instance.begin_bulk_load()?;
    for (n, file) in files.iter().enumerate() {
        let outcome = file_outcome(file, import_one(instance, file));
        changed |= outcome
            .status
            .is_some_and(|status| status != IngestStatus::Unchanged);
        report.files.push(outcome);
        if n == 0 {
            crashpoint("import:after-first-document", instance.data_dir());
        }
    }
    instance.end_bulk_load()?;
    if changed {
        report.snapshot_generation = Some(instance.write_snapshot()?.generation);
    }
    Ok(report)
}

fn import_one(
    instance: &mut Instance,
    file: &Path,
) -> Result<(crate::storage::store::IngestOutcome, SourceKind), Error> {
    ingest_read(instance, file, std::fs::read(file))
}

/// Ingests what reading `path` gave under its [`source_key`], named by the
/// path as given, dated by its modification time unless its front matter
/// names a date (issue 31). Writes no snapshot.
///
/// # Errors
/// [`ErrorKind::Io`] when the read failed; otherwise what [`ingest_bytes`] returns.
pub fn ingest_read(
    instance: &mut Instance,
    path: &Path,
    bytes: std::io::Result<Vec<u8>>,
) -> Result<(crate::storage::store::IngestOutcome, SourceKind), Error> {
    let bytes = bytes
        .map_err(|e| Error::with_source(ErrorKind::Io, format!("cannot read ({})", e.kind()), e))?;
    ingest_bytes(
        instance,
        &source_key(path),
        &path.display().to_string(),
        &bytes,
        modified_unix_s(path),
    )
}
