//! A connector synced into the instance: enumerate the source, ingest what is new or changed, delete what a complete enumeration omits, record the attempt (§5.1, §4.2, gate 7).
//!
//! The source, its pages, the enumeration and the rule that a failure is
//! never an empty list are `ingest/connector.rs`'s; this is the use-case
//! above the instance that applies the diff ([`sync`]) and the one that
//! runs it over a local folder ([`sync_folder`], `memoria sync-folder`).
//! Each new or changed entry is ingested through [`ingest_bytes`]; on a
//! complete enumeration what it omitted is deleted through a tombstone
//! ([`Instance::delete`]); on a failed one nothing is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use crate::app::import::ingest_bytes;
use crate::error::{Error, ErrorKind};
use crate::ingest::connector::{
    CONNECTOR_CALL_DEADLINE_MS, Enumeration, FailureKind, FolderSource, Source, SyncReport,
    enumerate,
};
use crate::instance::Instance;
use crate::storage::store::IngestStatus;

/// Enumerates `source`, ingests what is new or changed, deletes what a
/// complete enumeration omits, and records the attempt (§5.1, gate 7).
///
/// # Errors
/// Storage and snapshot errors. A failure of the source is not an error: it
/// is [`SyncReport::failure`], recorded durably, and it deletes nothing.
pub async fn sync(instance: &mut Instance, source: &dyn Source) -> Result<SyncReport, Error> {
    let name = source.name().to_string();
    let (complete, entries, pages, failure) = match enumerate(source).await {
        Enumeration::Complete { entries, pages } => (true, entries, pages, None),
        Enumeration::Failed { kind, read, pages } => (false, read, pages, Some(kind)),
    };
    let held: BTreeMap<Vec<u8>, Option<Vec<u8>>> = instance
        .store()
        .connector_items(&name)?
        .into_iter()
        .map(|h| (h.key_fp, h.version_fp))
        .collect();
    let mut report = SyncReport {
        failure,
        pages,
        listed: entries.len(),
        ..SyncReport::default()
    };
    let mut listed: BTreeSet<Vec<u8>> = BTreeSet::new();
    let mut changed = false;
    for entry in &entries {
        let now = instance.clock().now_unix_s();
        let key_fp = instance.store().source_fp(&entry.key);
        let version_fp = instance.store().version_fp(&entry.key, &entry.version);
        listed.insert(key_fp.clone());
        if held.get(&key_fp) == Some(&Some(version_fp.clone())) {
            report.unchanged += 1;
            instance.store().connector_seen(&name, &key_fp, None, now)?;
            continue;
        }
        let deadline = Duration::from_millis(CONNECTOR_CALL_DEADLINE_MS);
        let fetched = match tokio::time::timeout(deadline, source.fetch(entry)).await {
            Err(_) => Err(FailureKind::Timeout),
            Ok(r) => r,
        };
        let ingested = match fetched {
            Ok(f) => {
                ingest_bytes(instance, &entry.key, &f.name, &f.bytes, None).map_err(|e| e.kind())
            }
            Err(kind) => {
                tracing::warn!(
                    kind = kind.as_str(),
                    "a connector item could not be fetched"
                );
                report.refused += 1;
                instance.store().connector_seen(&name, &key_fp, None, now)?;
                continue;
            }
        };
        match ingested {
            Ok((outcome, _)) => {
                match outcome.status {
                    IngestStatus::Created => report.created += 1,
                    IngestStatus::Revised | IngestStatus::Restored => report.revised += 1,
                    IngestStatus::Unchanged => report.unchanged += 1,
                }
                changed |= outcome.status != IngestStatus::Unchanged;
                instance
                    .store()
                    .connector_seen(&name, &key_fp, Some(&version_fp), now)?;
            }
            Err(kind) => {
                tracing::warn!(kind = ?kind, "a connector item was refused");
                report.refused += 1;
                instance.store().connector_seen(&name, &key_fp, None, now)?;
            }
        }
    }
    if complete {
        for key_fp in held.keys().filter(|k| !listed.contains(*k)) {
            if let Some(id) = instance.store().live_document_by_source_fp(key_fp)? {
                instance.delete(&id)?;
                report.deleted += 1;
            }
            instance.store().connector_forget(&name, key_fp)?;
        }
    }
    let now = instance.clock().now_unix_s();
    instance
        .store()
        .connector_attempt(&name, now, failure.map(FailureKind::as_str))?;
    if changed {
        report.snapshot_generation = Some(instance.write_snapshot()?.generation);
    } else if report.deleted > 0 {
        report.snapshot_generation = Some(instance.wake_report().generation);
    }
    tracing::info!(
        failure = failure.map(FailureKind::as_str).unwrap_or("none"),
        pages = report.pages,
        listed = report.listed,
        created = report.created,
        revised = report.revised,
        unchanged = report.unchanged,
        refused = report.refused,
        deleted = report.deleted,
        "connector synced"
    );
    Ok(report)
}

/// Syncs the directory `root` on a current-thread runtime: what `memoria
/// sync-folder` runs.
///
/// # Errors
/// As [`sync`]; [`ErrorKind::Io`] if no runtime can be started.
pub fn sync_folder(instance: &mut Instance, root: &Path) -> Result<SyncReport, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| Error::new(ErrorKind::Io, format!("starting the runtime: {e}")))?;
    let source = FolderSource::new(root);
    runtime.block_on(sync(instance, &source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(dir: &Path) -> Instance {
        crate::instance::instance_for_tests(dir)
    }

    #[test]
    fn a_folder_that_is_gone_is_a_failure_and_deletes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("notes");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("a.md"), "# A\n\nDescale the machine.").unwrap();
        std::fs::write(folder.join(".hidden.md"), "# H\n\nHidden.").unwrap();
        std::fs::write(folder.join("b.bin"), [0u8, 1, 2]).unwrap();
        let mut m = instance(&tmp.path().join("data"));
        let first = sync_folder(&mut m, &folder).unwrap();
        assert!(first.is_complete());
        assert_eq!((first.listed, first.created), (1, 1));
        let source = FolderSource::new(&folder);
        std::fs::rename(&folder, tmp.path().join("elsewhere")).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let gone = runtime.block_on(sync(&mut m, &source)).unwrap();
        assert_eq!(gone.failure, Some(FailureKind::NotFound));
        assert_eq!(gone.deleted, 0);
        assert_eq!(m.store().counts().unwrap().0, 1);
    }

    #[test]
    fn an_unchanged_version_is_not_fetched_again() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("notes");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("a.md"), "# A\n\nDescale the machine.").unwrap();
        let mut m = instance(&tmp.path().join("data"));
        assert_eq!(sync_folder(&mut m, &folder).unwrap().created, 1);
        let again = sync_folder(&mut m, &folder).unwrap();
        assert_eq!((again.unchanged, again.created, again.deleted), (1, 0, 0));
        assert_eq!(again.snapshot_generation, None);
    }
}
