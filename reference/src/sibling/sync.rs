//! Pulling a sibling's changes: S1 rows in, S3 bodies fetched, `gone` deleted, and a marked sibling reconciled through S1a (§6.1, §5.2, §6.5, §4.1).
//!
//! Custody is S3's: a body arrives only for an item the sibling holds as
//! team-visible, so everything ingested here was team-visible when fetched.
//! The cursor is stored only after its page is applied, so a crash replays
//! a page rather than skipping one.
//!
//! A sibling marked for re-announce (a `410` feed, or AHEAD on a page) is
//! reconciled first, by [`reannounce`]: only a complete announce retires
//! anything, and it is the only thing that ever does (§4.1 rules 2–4).
//!
//! A third way in is this module's own reading of §4.1, where the spec is
//! silent: a revision a feed row named that S3 404s, when no later row
//! says the item went or moved on (not even on one more read of the feed
//! from its head), was lost by a partial restore before memoria fetched
//! it. memoria then holds nothing of the item, so no S2 call answers AHEAD
//! and the feed never names it again; the re-announce, "what reconciles
//! the two", is run at once. Found by the explorer at seed 74
//! (`scenarios/explore-lost-feed-revision-reannounces.toml`, gate 27).
//!
//! Every store step (a read of the cursor, an ingest, a delete with its
//! fsynced tombstone, the snapshot) goes through [`SharedInstance::run`],
//! off the async worker threads in production (issue 10); no lock is held
//! across a sibling call.

use super::client::SiblingClient;
use crate::date::{DateKind, DocumentDate, parse_timestamp};
use crate::error::Error;
use crate::instance::Instance;
use crate::net::sheet::{SHEET_MEDIA_TYPE, SheetBody};
use crate::net::wire::{Announce, FeedError, FetchError, Pair, S3Body};
use crate::numeric::sheet::{ChunkedSheet, chunk_sheet};
use crate::offload::SharedInstance;
use crate::policy::breaker::S3Tally;
use crate::storage::store::{IngestOutcome, NewDocument, Provenance};

/// The most S1 pages one sync reads before yielding, a bound on one wake's work.
pub const S1_PAGES_PER_SYNC_MAX: usize = 100;

/// What one sync of one sibling did. Counts only: no content (gate 4).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SyncReport {
    /// The app synced.
    pub app: String,
    /// S1 rows read.
    pub rows: usize,
    /// Bodies fetched through S3 and ingested.
    pub fetched: usize,
    /// Items deleted on `gone`.
    pub deleted: usize,
    /// Rows for a revision already held.
    pub unchanged: usize,
    /// S3 answered 404 (not team-visible now, §6.1).
    pub not_found: usize,
    /// Items whose feed-named revision S3 answered 404 and that no later
    /// row explained, after one more read of the feed from its head: the
    /// sibling lost that revision (a partial restore), so the app was
    /// marked for re-announce (§4.1).
    pub unexplained: usize,
    /// S3 failed otherwise; the cursor is not advanced past such a page.
    pub fetch_failed: usize,
    /// The feed failed, or asked for a re-announce (`410`).
    pub feed_error: Option<String>,
    /// Items retired by a completed re-announce (§4.1 rule 3).
    pub retired: usize,
    /// What the re-announce did, if the app was marked for one (§4.1).
    pub reannounce: Option<ReannounceStatus>,
}

/// The outcome of one re-announce pass (§4.1 rules 2–4). Content-free.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum ReannounceStatus {
    /// The announce was complete and fully applied: the mark is cleared and
    /// the close marker's cursor is the S1 cursor.
    Completed,
    /// The announce failed (no close marker, a count that disagrees, a page
    /// that failed): nothing was retired and the mark stands.
    Failed(String),
    /// The announce was complete but a retirement, refetch or write did not
    /// apply; the mark stands and the next sync tries again.
    Unapplied(String),
}

/// Reconciles `app` after its restore (§4.1 rules 2–4): reads a whole S1a
/// announce; if it failed, retires nothing and leaves the mark. If it is
/// complete, retires every held item it omits (a deletion through
/// [`Instance::delete`], so tombstoned), refetches through S3 every
/// announced item whose revision is not the one held (equality only, in
/// either direction, and items not held at all), then stores the close
/// cursor and clears the mark. Nothing here reads an S2 answer. Returns the
/// status and whether the store changed; counts go into `report`.
pub async fn reannounce(
    instance: &SharedInstance,
    client: &SiblingClient,
    app: &str,
    report: &mut SyncReport,
) -> (ReannounceStatus, bool) {
    let announce: Announce = match client.announce(app).await {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!(app, error = %e, "re-announce failed: nothing retired");
            return (ReannounceStatus::Failed(e.to_string()), false);
        }
    };
    let a = app.to_string();
    // A sheet marked for re-ingest (§8.7's re-certification arm) is
    // refetched even at the revision held: a reformat need not bump it.
    let held = step(instance, move |i| {
        let held = i.store().sibling_documents(&a)?;
        let mut marked = std::collections::BTreeSet::new();
        for d in &held {
            if i.store().sheet_reingest_marked(&d.id)? {
                marked.insert(d.id.clone());
            }
        }
        Ok((held, marked))
    })
    .await;
    let (held, marked) = match held {
        Ok(h) => h,
        Err(e) => return (ReannounceStatus::Unapplied(e.to_string()), false),
    };
    let mut changed = false;
    let mut unapplied: Option<String> = None;
    let mut held_revisions = std::collections::BTreeMap::new();
    // Rule 3: what the complete announce omits is retired.
    for doc in held {
        let Some(p) = doc.provenance else { continue };
        if announce.items.contains_key(&p.item_id) {
            if !marked.contains(&doc.id) {
                held_revisions.insert(p.item_id, p.revision);
            }
            continue;
        }
        match step(instance, move |i| i.delete(&doc.id)).await {
            Ok(_) => {
                report.retired += 1;
                changed = true;
            }
            Err(e) => unapplied = Some(e.to_string()),
        }
    }
    // Rule 4: the announced revision replaces memoria's, whichever way.
    for (item_id, revision) in &announce.items {
        if held_revisions.get(item_id) == Some(revision) {
            report.unchanged += 1;
            continue;
        }
        let pair = Pair {
            item_id: item_id.clone(),
            revision: revision.clone(),
        };
        match client.fetch(app, &pair).await {
            Ok(body) => {
                let sheet = sheet_of(client, app, &body);
                let doc = NewDocument {
                    source_key: String::new(),
                    path: format!("{app}:{item_id}"),
                    body: kept_body(client, app, &body.title, body.body),
                    title: body.title,
                    date: edited_at(announce.touched_at.get(item_id).map(String::as_str)),
                };
                let provenance = Provenance {
                    app: app.to_string(),
                    item_id: item_id.clone(),
                    revision: revision.clone(),
                };
                match step(instance, move |i| {
                    ingest_fetched(i, &doc, &provenance, sheet)
                })
                .await
                {
                    Ok(_) => {
                        report.fetched += 1;
                        changed = true;
                    }
                    Err(e) => {
                        report.fetch_failed += 1;
                        unapplied = Some(e.to_string());
                    }
                }
            }
            // The announce lists the item as team-visible and S3 says it is
            // not: it left since the announce, or S3 alone is failing (a 404
            // spell while the feed answers). Completing now would store the
            // close cursor past a revision memoria never fetched, and no row
            // would name it again: the item lost for good, silently. So the
            // mark stands (the source stays out of the ranking, named
            // reconciling) and the next sync announces again: an item that
            // left is then omitted, one S3 serves again is fetched. Found by
            // the explorer (`scenarios/explore-s3-404-spell-reannounces.toml`).
            Err(FetchError::NotFound) => {
                report.not_found += 1;
                unapplied = Some("S3 answered 404 for an announced item".to_string());
            }
            Err(e) => {
                report.fetch_failed += 1;
                unapplied = Some(e.to_string());
            }
        }
    }
    if let Some(reason) = unapplied {
        tracing::warn!(app, "re-announce not fully applied: the mark stands");
        return (ReannounceStatus::Unapplied(reason), changed);
    }
    let (a, cursor) = (app.to_string(), announce.cursor.clone());
    if let Err(e) = step(instance, move |i| {
        let now = i.clock().now_unix_s();
        i.store().complete_reannounce(&a, &cursor, now)
    })
    .await
    {
        return (ReannounceStatus::Unapplied(e.to_string()), changed);
    }
    tracing::info!(
        app,
        items = announce.items.len(),
        retired = report.retired,
        "re-announce complete: back in the ranking"
    );
    (ReannounceStatus::Completed, changed)
}

/// Stores `cursor` as `app`'s S1 cursor, stamped with the poll time.
async fn store_cursor(instance: &SharedInstance, app: &str, cursor: &str) -> Result<(), Error> {
    let (a, c) = (app.to_string(), cursor.to_string());
    step(instance, move |i| {
        let now = i.clock().now_unix_s();
        i.store().set_sibling_cursor(&a, &c, now)
    })
    .await
}

/// One store step of a sync, run where the instance's offload says; a
/// step that panicked is that step's error ([`crate::ErrorKind::Abandoned`]).
async fn step<T, F>(instance: &SharedInstance, work: F) -> Result<T, Error>
where
    F: FnOnce(&mut Instance) -> Result<T, Error> + Send + 'static,
    T: Send + 'static,
{
    instance.run(work).await?
}

/// A sibling item's own date: the `touched_at` its S1 row or S1a record
/// gave the revision fetched, the time it was edited in the sibling
/// (issue 31). The decoders refused a `touched_at` not of the contract's
/// shape, so `None` only when none was given.
fn edited_at(touched_at: Option<&str>) -> Option<DocumentDate> {
    touched_at.and_then(parse_timestamp).map(|at| DocumentDate {
        kind: DateKind::Edited,
        at,
    })
}

/// What memoria keeps of a fetched body: the body, or for an app whose
/// bodies are refused by kind (§3.5, [`SiblingClient::keeps_bodies`]) the
/// title alone, so the item is found and cited by its title and nothing
/// of its body is stored.
fn kept_body(client: &SiblingClient, app: &str, title: &str, body: String) -> String {
    if client.keeps_bodies(app) {
        body
    } else {
        title.to_owned()
    }
}

/// A fetched spreadsheet whose body memoria keeps, chunked by §8.7's
/// chunker; `None` for any other body. `decode_s3` already refused a sheet
/// body that does not decode, so `None` here is never a sheet half-read.
fn sheet_of(client: &SiblingClient, app: &str, body: &S3Body) -> Option<ChunkedSheet> {
    if !client.keeps_bodies(app) || body.media_type != SHEET_MEDIA_TYPE {
        return None;
    }
    SheetBody::decode(&body.body)
        .ok()
        .map(|sheet| chunk_sheet(&sheet))
}

/// Ingests one fetched item: a spreadsheet with its chunks and catalogue
/// (§8.7), anything else as text.
fn ingest_fetched(
    i: &mut Instance,
    doc: &NewDocument,
    provenance: &Provenance,
    sheet: Option<ChunkedSheet>,
) -> Result<IngestOutcome, Error> {
    match sheet {
        Some(sheet) => i.ingest_sheet(doc, provenance, sheet),
        None => i.ingest_sibling(doc, provenance),
    }
}

/// Polls `app`'s S1 feed from the stored cursor and applies every row:
/// `gone` deletes, a new revision is fetched through S3 and ingested.
/// A `410` marks the app for re-announce and changes nothing else.
/// A revision S3 404s that no later row explains, even after one more read
/// of the feed from its head, marks the app and re-announces it at once
/// (a partial restore lost that revision, §4.1); until then the cursor is
/// not stored past the row that named it. Writes a snapshot if anything
/// changed.
pub async fn sync(instance: &SharedInstance, client: &SiblingClient, app: &str) -> SyncReport {
    let mut report = SyncReport {
        app: app.to_string(),
        ..SyncReport::default()
    };
    let mut changed = false;
    // Bodies S3 returned that memoria then failed to ingest: a fetch that
    // succeeded, counted in `fetch_failed` by the report.
    let mut ingest_failed = 0usize;
    let a = app.to_string();
    let marked = step(instance, move |i| i.store().sibling_state(&a))
        .await
        .is_ok_and(|s| s.reannounce);
    if marked {
        let (status, did_change) = reannounce(instance, client, app, &mut report).await;
        changed |= did_change;
        report.reannounce = Some(status);
    }
    // Items whose feed-named revision S3 answered 404, until a later row
    // names them again; what is left once the feed has been read to its
    // head and read once more is re-announced (below the loop).
    let mut unexplained = std::collections::BTreeSet::<String>::new();
    let mut confirming = false;
    let mut failed = false;
    let a = app.to_string();
    let mut cursor = match step(instance, move |i| i.store().sibling_state(&a)).await {
        Ok(s) => s.cursor,
        Err(e) => {
            report.feed_error = Some(e.to_string());
            failed = true;
            None
        }
    };
    for _ in 0..S1_PAGES_PER_SYNC_MAX {
        if failed {
            break;
        }
        let page = match client.feed(app, cursor.as_deref()).await {
            Ok(p) => p,
            Err(e) => {
                failed = true;
                let a = app.to_string();
                if e == FeedError::ReannounceRequired
                    && let Err(e) = step(instance, move |i| i.store().mark_reannounce(&a)).await
                {
                    tracing::error!(app, error = %e, "could not mark a sibling for re-announce");
                }
                tracing::warn!(app, error = %e, "S1 poll failed");
                report.feed_error = Some(e.to_string());
                break;
            }
        };
        report.rows += page.rows.len();
        let mut page_complete = true;
        for row in &page.rows {
            // A later row about an item explains an earlier 404 of it: it
            // is gone, or at another revision, fetched or 404ed afresh.
            unexplained.remove(&row.item_id);
            let (a, item) = (app.to_string(), row.item_id.clone());
            let held = step(instance, move |i| i.store().sibling_document(&a, &item)).await;
            let held = match held {
                Ok(h) => h,
                Err(e) => {
                    tracing::error!(app, error = %e, "could not read a held sibling item");
                    page_complete = false;
                    break;
                }
            };
            if row.gone {
                if let Some(doc) = held {
                    if step(instance, move |i| i.delete(&doc.id)).await.is_ok() {
                        report.deleted += 1;
                        changed = true;
                    } else {
                        page_complete = false;
                    }
                }
                continue;
            }
            if held
                .as_ref()
                .and_then(|d| d.provenance.as_ref())
                .is_some_and(|p| p.revision == row.revision)
            {
                report.unchanged += 1;
                continue;
            }
            let pair = Pair {
                item_id: row.item_id.clone(),
                revision: row.revision.clone(),
            };
            match client.fetch(app, &pair).await {
                Ok(body) => {
                    let sheet = sheet_of(client, app, &body);
                    let doc = NewDocument {
                        source_key: String::new(),
                        path: format!("{app}:{}", row.item_id),
                        body: kept_body(client, app, &body.title, body.body),
                        title: body.title,
                        date: edited_at(Some(&row.touched_at)),
                    };
                    let provenance = Provenance {
                        app: app.to_string(),
                        item_id: row.item_id.clone(),
                        revision: row.revision.clone(),
                    };
                    match step(instance, move |i| {
                        ingest_fetched(i, &doc, &provenance, sheet)
                    })
                    .await
                    {
                        Ok(_) => {
                            report.fetched += 1;
                            changed = true;
                        }
                        Err(e) => {
                            tracing::warn!(app, error = %e, "a sibling body was not ingested");
                            report.fetch_failed += 1;
                            ingest_failed += 1;
                        }
                    }
                }
                Err(FetchError::NotFound) => {
                    report.not_found += 1;
                    unexplained.insert(row.item_id.clone());
                }
                Err(e) => {
                    tracing::warn!(app, error = %e, "S3 fetch failed");
                    report.fetch_failed += 1;
                    page_complete = false;
                }
            }
        }
        if !page_complete {
            failed = true;
            break;
        }
        cursor = Some(page.cursor.clone());
        // Held back while a 404 is unexplained, so a crash or a failed page
        // replays the row that met it rather than skipping it.
        if unexplained.is_empty()
            && let Err(e) = store_cursor(instance, app, &page.cursor).await
        {
            report.feed_error = Some(e.to_string());
            failed = true;
            break;
        }
        if !page.more {
            if unexplained.is_empty() || confirming {
                break;
            }
            confirming = true;
        }
    }
    if !failed && !unexplained.is_empty() {
        // §4.1: a revision the feed named that S3 404s, with no later row
        // saying the item went or moved on, not even on a second read from
        // the head, is one the sibling no longer has: a partial restore
        // lost it. memoria may hold nothing of the item, so no S2 call will
        // ever answer AHEAD for it, and the feed will not name it again.
        // The re-announce is what reconciles the two, so the app is marked
        // (before its cursor moves past the row) and re-announced now.
        report.unexplained = unexplained.len();
        tracing::warn!(
            app,
            items = report.unexplained,
            "S3 404s no later feed row explains: the sibling lost history; re-announcing"
        );
        let a = app.to_string();
        match step(instance, move |i| i.store().mark_reannounce(&a)).await {
            Ok(()) => {
                if let Some(c) = &cursor
                    && let Err(e) = store_cursor(instance, app, c).await
                {
                    report.feed_error = Some(e.to_string());
                }
                let (status, did_change) = reannounce(instance, client, app, &mut report).await;
                changed |= did_change;
                report.reannounce = Some(status);
            }
            Err(e) => {
                tracing::error!(app, error = %e, "could not mark a sibling for re-announce");
                report.feed_error = Some(e.to_string());
            }
        }
    }
    // The S3 breaker's counters (§8.1): written on the path that made the
    // fetches, read only by the owner's sources page.
    let tally = S3Tally {
        fetches: (report.fetched + report.not_found + report.fetch_failed) as u64,
        not_found: report.not_found as u64,
        successes: (report.fetched + ingest_failed) as u64,
    };
    let a = app.to_string();
    if let Err(e) = step(instance, move |guard| {
        let now = guard.clock().now_unix_s();
        guard.store().record_s3_tally(&a, tally, now)
    })
    .await
    {
        tracing::error!(app, error = %e, "could not write the S3 breaker's counters");
    }
    if changed && let Err(e) = step(instance, |i| i.write_snapshot()).await {
        tracing::error!(app, error = %e, "snapshot after a sibling sync failed");
    }
    tracing::info!(
        app,
        rows = report.rows,
        fetched = report.fetched,
        deleted = report.deleted,
        retired = report.retired,
        not_found = report.not_found,
        fetch_failed = report.fetch_failed,
        "sibling synced"
    );
    report
}
