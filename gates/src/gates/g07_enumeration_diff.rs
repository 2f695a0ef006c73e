//! Gate 7 (§10, §5.1, §4.2): an enumeration diff distinguishes an authoritative empty from a failure, and deletes nothing on a failure.
//!
//! Size: over 800 lines because gate 7's cases share one rig (a fake
//! connector with its knobs and a hand clock); split, a case would sit apart
//! from its fixture.
//!
//! The reference's connector ([`memoria::connector::sync`]) is driven by the
//! simulator's paginated fake connector
//! ([`memoria_simulator::connector`]) in simulated time, and by the real
//! folder connector on a real directory. Every case first shows the items
//! ingested and searchable (presence), then asserts what a sync deleted. Each
//! failure case also removes one item from the source before the failing
//! sync, so that reading the failure as a complete list would delete it; and
//! after the fault clears, a complete sync does delete it, so the case is
//! seen able to observe a deletion at all; that sync must also clear the
//! recorded failure. A listing past the enumeration's entry or page cap
//! (`CONNECTOR_ENTRIES_MAX`, `CONNECTOR_PAGES_MAX`) and a folder whose root
//! is gone are failures like the others. Every enumeration that lists an
//! item, changed or not, moves its `last_seen_at` forward; a failed one does
//! so only for the items on pages it read whole.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use memoria::Admission;
use memoria::Clock;
use memoria::ConnectorState;
use memoria::EgressMode;
use memoria::NewDocument;
use memoria::connector::{
    CONNECTOR_ENTRIES_MAX, CONNECTOR_PAGES_MAX, Entry, FailureKind, Fetched, FolderSource, Page,
    PageEnd, Source, SyncReport, sync,
};
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig};
use memoria_simulator::OWNERS;
use memoria_simulator::connector::{
    ConnectorFaults, FAKE_CONNECTOR_NAME, FakeConnector, simulate, wake_memoria,
};

use crate::rigs::clock::HandClock;
use crate::rigs::sim::{check, fail};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 7.
pub static GATE: Gate = Gate {
    id: "7",
    title: "Enumeration diff: empty and failed are distinguished",
    gates_md: &[
        "Enumeration diff distinguishes an authoritative empty result from a failure; deletes nothing on timeout, credential error or partial page",
    ],
    sections: &["§10", "§5.1", "§4.2"],
    requirement: "An enumeration diff deletes only on a complete enumeration: an item a complete enumeration omits is deleted, and an authoritative empty deletes everything that source held; a timeout, a rate limit, a partial page, an expired credential, a permission error on a subfolder, a missing folder root or a listing past the entry or page cap deletes nothing; the attempt, its failure and last_seen_at (moved forward for every item listed) are recorded durably, and the failure is cleared by the next complete enumeration.",
    cases: &[
        Case {
            id: "7/complete-omission-deletes",
            desc: "The fake connector lists 6 items over 3 pages; all are ingested and searchable; one is removed at the source; the next complete enumeration deletes exactly that one through a tombstone and records the complete attempt.",
            run: complete_omission_deletes,
        },
        Case {
            id: "7/authoritative-empty-deletes-all",
            desc: "The fake connector's 6 items and an upload are searchable; the source empties and answers one empty page with the complete marker; all 6 are deleted and the upload, which that source never held, stays.",
            run: authoritative_empty_deletes_all,
        },
        Case {
            id: "7/timeout-deletes-nothing",
            desc: "6 items searchable; one removed at the source; the first page never answers; the sync times out in simulated time, deletes nothing, and records the attempt as a timeout with last_complete_at and the removed item's last_seen_at unchanged; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |f| f.hang_from_page = Some(0),
                    overrun: Overrun::None,
                    kind: FailureKind::Timeout,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/rate-limit-deletes-nothing",
            desc: "6 items searchable; one removed; the second page answers 429; nothing is deleted, the failure is recorded as rate_limited; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |f| f.rate_limit_from_page = Some(1),
                    overrun: Overrun::None,
                    kind: FailureKind::RateLimited,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/partial-page-deletes-nothing",
            desc: "6 items searchable; one removed; the last page arrives cut in half without its end marker; nothing is deleted, the failure is recorded as partial_page; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |f| f.partial_last_page = true,
                    overrun: Overrun::None,
                    kind: FailureKind::PartialPage,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/expired-credential-deletes-nothing",
            desc: "6 items searchable; one removed; every call answers 401; nothing is deleted, the failure is recorded as credential_expired; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |f| f.credential_expired = true,
                    overrun: Overrun::None,
                    kind: FailureKind::CredentialExpired,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/permission-error-on-sub-collection-deletes-nothing",
            desc: "6 items searchable, one in a private collection; one removed; the page listing the private collection answers 403; nothing is deleted, the failure is recorded as permission_denied; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |f| f.forbidden_collection = Some("private".into()),
                    overrun: Overrun::None,
                    kind: FailureKind::PermissionDenied,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/entry-cap-overrun-deletes-nothing",
            desc: "6 items searchable; one removed; the first page lists more entries than the enumeration's entry cap (the first page's items repeated past it); the listing is not truncated into a complete one: nothing is deleted, the failure is recorded as too_large; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |_| {},
                    overrun: Overrun::Entries,
                    kind: FailureKind::TooLarge,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/page-cap-overrun-deletes-nothing",
            desc: "6 items searchable; one removed; the source answers empty pages, each with a next token, up to the enumeration's page cap before its real pages; nothing is deleted, the failure is recorded as too_large; cleared, a complete sync deletes the removed item.",
            run: |ctx| {
                FaultRow {
                    fault: |_| {},
                    overrun: Overrun::Pages,
                    kind: FailureKind::TooLarge,
                }
                .run(ctx)
            },
        },
        Case {
            id: "7/unreadable-subfolder-deletes-nothing",
            desc: "The real folder connector syncs a directory with a subfolder of 2 files; all 4 files are searchable; one file in the subfolder is removed and the subfolder is chmod 000 (as root, where chmod does not stop a read, the same walk is given an injected EACCES for that subfolder instead, and a failure says which); the sync is incomplete, deletes nothing and records permission_denied; readable again, a complete sync deletes the removed file.",
            run: unreadable_subfolder_deletes_nothing,
        },
        Case {
            id: "7/missing-folder-root-deletes-nothing",
            desc: "The real folder connector syncs a directory of 2 files; both are searchable; one is removed and the whole folder is moved away (an unmounted drive); the walk fails as not_found, deletes nothing and is recorded; moved back, a complete walk deletes the removed file and clears the recorded failure.",
            run: missing_folder_root_deletes_nothing,
        },
    ],
};

/// Items the fake connector is stocked with: (key, collection).
const ITEMS: [(&str, &str); 6] = [
    ("k0", "root"),
    ("k1", "root"),
    ("k2", "private"),
    ("k3", "root"),
    ("k4", "root"),
    ("k5", "root"),
];
/// The item removed at the source before a failing sync: on the last page.
const REMOVED: &str = "k5";
/// Simulated time between syncs, so each attempt has its own timestamp, in s.
const BETWEEN_SYNCS_S: u64 = 60;

fn title(key: &str) -> String {
    format!("Item {key}")
}

fn decode(r: Result<(), String>) -> Result<(), Failure> {
    r.map_err(|e| match e.split_once('\u{1f}') {
        Some((expected, actual)) => Failure::new(expected, actual),
        None => Failure::new("the simulated run completes", e),
    })
}

/// Titles of the documents a search for `canary` shows the first owner.
fn searchable(m: &Instance, canary: &str) -> Result<BTreeSet<String>, String> {
    let page = m
        .search(OWNERS[0], canary, 1)
        .map_err(|e| fail("the search runs", e.to_string()))?;
    Ok(page.results.into_iter().map(|r| r.title).collect())
}

fn all_titles() -> BTreeSet<String> {
    ITEMS.iter().map(|(k, _)| title(k)).collect()
}

fn stocked(canary: &str) -> FakeConnector {
    let fake = FakeConnector::new(2);
    for (key, collection) in ITEMS {
        fake.put(
            key,
            collection,
            &title(key),
            &format!("The {canary} figure is tag{key} this quarter."),
        );
    }
    fake
}

/// Each item's last_seen_at under the fake connector, in the order of `keys`.
fn seen_at(m: &Instance, keys: &[&str]) -> Vec<Option<i64>> {
    keys.iter()
        .map(|k| {
            let fp = m.store().source_fp(&FakeConnector::source_key(k));
            m.store()
                .connector_item_seen_at(FAKE_CONNECTOR_NAME, &fp)
                .ok()
                .flatten()
        })
        .collect()
}

/// How a failing sync's listing is stretched past the enumeration's caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overrun {
    /// The fake connector as it is.
    None,
    /// The first page's entries repeated until the page holds
    /// [`CONNECTOR_ENTRIES_MAX`] + 1 entries: past the entry cap after one
    /// page, and cheap, since the repeats are one item each.
    Entries,
    /// [`CONNECTOR_PAGES_MAX`] empty pages, each with a next token, before
    /// the fake's own pages: past the page cap before any item is listed.
    Pages,
}

/// Token prefixes of [`Overrun`]'s pages: the fake's own tokens, and the padding's.
const FAKE_TOKEN: &str = "fake:";
const PAD_TOKEN: &str = "pad:";

/// The fake connector, listed through an [`Overrun`].
struct Overrunning {
    fake: FakeConnector,
    overrun: Overrun,
}

type Boxed<'a, T> = Pin<Box<dyn Future<Output = Result<T, FailureKind>> + Send + 'a>>;

impl Overrunning {
    async fn fake_page(&self, token: Option<&str>) -> Result<Page, FailureKind> {
        let mut page = self.fake.list(token).await?;
        if let PageEnd::Next(t) = &page.end {
            page.end = PageEnd::Next(format!("{FAKE_TOKEN}{t}"));
        }
        Ok(page)
    }
}

impl Source for Overrunning {
    fn name(&self) -> &str {
        self.fake.name()
    }

    fn list<'a>(&'a self, token: Option<&'a str>) -> Boxed<'a, Page> {
        Box::pin(async move {
            if let Some(t) = token.and_then(|t| t.strip_prefix(FAKE_TOKEN)) {
                return self.fake_page(Some(t)).await;
            }
            let padded: usize = match token.map(|t| t.strip_prefix(PAD_TOKEN)) {
                None => 0,
                Some(n) => n
                    .and_then(|n| n.parse().ok())
                    .ok_or(FailureKind::Unavailable)?,
            };
            match self.overrun {
                Overrun::Pages if padded < CONNECTOR_PAGES_MAX => Ok(Page {
                    entries: Vec::new(),
                    end: PageEnd::Next(format!("{PAD_TOKEN}{}", padded + 1)),
                }),
                Overrun::Entries => {
                    let mut page = self.fake_page(None).await?;
                    let first = page.entries.clone();
                    while !first.is_empty() && page.entries.len() <= CONNECTOR_ENTRIES_MAX {
                        page.entries.extend(first.iter().cloned());
                    }
                    Ok(page)
                }
                Overrun::None | Overrun::Pages => self.fake_page(None).await,
            }
        })
    }

    fn fetch<'a>(&'a self, entry: &'a Entry) -> Boxed<'a, Fetched> {
        self.fake.fetch(entry)
    }
}

async fn synced(m: &mut Instance, source: &dyn Source) -> Result<SyncReport, String> {
    tokio::time::sleep(Duration::from_secs(BETWEEN_SYNCS_S)).await;
    sync(m, source)
        .await
        .map_err(|e| fail("the sync runs to a report", e.to_string()))
}

/// Wakes memoria, syncs the stocked fake, and checks every item is searchable.
async fn presence(
    data: &Path,
    fake: &FakeConnector,
    canary: &str,
) -> Result<(Instance, i64), String> {
    let mut m = wake_memoria(data).map_err(|e| fail("memoria wakes", e.to_string()))?;
    let first = synced(&mut m, fake).await?;
    check(
        first.is_complete() && first.created == ITEMS.len() && first.pages == 3,
        "the first sync is complete over 3 pages and creates 6 documents",
        format!("{first:?}"),
    )?;
    let shown = searchable(&m, canary)?;
    check(
        shown == all_titles(),
        "all 6 items are searchable (presence)",
        format!("{} of them are", shown.len()),
    )?;
    let state = m
        .store()
        .connector_state(FAKE_CONNECTOR_NAME)
        .map_err(|e| fail("the connector state reads", e.to_string()))?;
    let complete_at = state.last_complete_at.ok_or_else(|| {
        fail(
            "a complete sync records last_complete_at",
            format!("{state:?}"),
        )
    })?;
    Ok((m, complete_at))
}

fn complete_omission_deletes(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let data = ctx.dir("data");
    decode(simulate(ctx.seed(), move || async move {
        let fake = stocked(&canary);
        let (mut m, _) = presence(&data, &fake, &canary).await?;
        let tombstones = m.store().tombstone_seq().unwrap_or(-1);
        let kept: Vec<&str> = ITEMS
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| *k != "k3")
            .collect();
        let seen_first = seen_at(&m, &kept);
        check(
            seen_first.iter().all(Option::is_some),
            "the first complete enumeration records last_seen_at for every item it listed",
            format!("{seen_first:?}"),
        )?;
        fake.remove("k3");
        let r = synced(&mut m, &fake).await?;
        let synced_at = m.clock().now_unix_s();
        check(
            r.is_complete() && r.deleted == 1 && r.listed == 5 && r.unchanged == 5,
            "a complete enumeration of 5 unchanged items deletes the 1 item it omits",
            format!("{r:?}"),
        )?;
        let seen_second = seen_at(&m, &kept);
        check(
            seen_first
                .iter()
                .zip(&seen_second)
                .all(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a < b && *b <= synced_at)),
            "every item the second enumeration listed unchanged has its last_seen_at moved forward to that enumeration",
            format!("{seen_first:?} then {seen_second:?}, synced at {synced_at}"),
        )?;
        let mut expected = all_titles();
        expected.remove(&title("k3"));
        let shown = searchable(&m, &canary)?;
        check(
            shown == expected,
            "the omitted item is no longer searchable and the other 5 are",
            format!(
                "{} searchable; {} expected ones missing, {} unexpected",
                shown.len(),
                expected.difference(&shown).count(),
                shown.difference(&expected).count()
            ),
        )?;
        let key_fp = m.store().source_fp(&FakeConnector::source_key("k3"));
        check(
            matches!(m.store().live_document_by_source_fp(&key_fp), Ok(None))
                && m.store().tombstone_seq().unwrap_or(-1) == tombstones + 1,
            "its document is deleted through one tombstone",
            "it is live, or no tombstone was written",
        )?;
        let state = m
            .store()
            .connector_state(FAKE_CONNECTOR_NAME)
            .map_err(|e| fail("the connector state reads", e.to_string()))?;
        check(
            state.last_failure.is_none() && state.last_complete_at == state.last_attempt_at,
            "the attempt is recorded as complete",
            format!("{state:?}"),
        )
    }))
}

fn authoritative_empty_deletes_all(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let data = ctx.dir("data");
    decode(simulate(ctx.seed(), move || async move {
        let fake = stocked(&canary);
        let (mut m, _) = presence(&data, &fake, &canary).await?;
        m.ingest(&NewDocument {
            source_key: "upload:other.md".into(),
            title: "Upload".into(),
            path: "other.md".into(),
            body: format!("# Upload\n\nThe {canary} upload stays."),
            date: None,
        })
        .map_err(|e| fail("the upload is ingested", e.to_string()))?;
        fake.clear();
        let r = synced(&mut m, &fake).await?;
        check(
            r.is_complete() && r.listed == 0 && r.pages == 1 && r.deleted == ITEMS.len(),
            "one empty page with the complete marker deletes all 6 items the source held",
            format!("{r:?}"),
        )?;
        let shown = searchable(&m, &canary)?;
        check(
            shown == BTreeSet::from(["Upload".to_string()]),
            "only the upload, which that source never held, is still searchable",
            format!(
                "{} searchable, the upload among them: {}",
                shown.len(),
                shown.contains("Upload")
            ),
        )
    }))
}

/// The shared body of the fake connector's failure cases.
fn fails_and_deletes_nothing(
    ctx: &mut Ctx,
    faults: ConnectorFaults,
    overrun: Overrun,
    kind: FailureKind,
) -> Result<(), Failure> {
    let canary = ctx.canary();
    let data = ctx.dir("data");
    decode(simulate(ctx.seed(), move || async move {
        let fake = stocked(&canary);
        let (mut m, complete_at) = presence(&data, &fake, &canary).await?;
        let removed_fp = m.store().source_fp(&FakeConnector::source_key(REMOVED));
        let seen_before = m
            .store()
            .connector_item_seen_at(FAKE_CONNECTOR_NAME, &removed_fp)
            .ok()
            .flatten();
        let remaining: Vec<&str> = ITEMS
            .iter()
            .map(|(k, _)| *k)
            .filter(|k| *k != REMOVED)
            .collect();
        let seen_complete = seen_at(&m, &remaining);
        fake.remove(REMOVED);
        fake.set_faults(faults);
        let failing = Overrunning {
            fake: fake.clone(),
            overrun,
        };
        let r = synced(&mut m, &failing).await?;
        let attempted_at = m.clock().now_unix_s();
        check(
            r.failure == Some(kind) && r.deleted == 0,
            format!("the sync fails as {} and deletes nothing", kind.as_str()),
            format!("{r:?}"),
        )?;
        // The items on pages read whole before the failure were listed: each
        // gets this attempt's last_seen_at; the others keep theirs.
        let seen_failed = seen_at(&m, &remaining);
        let moved = seen_complete
            .iter()
            .zip(&seen_failed)
            .filter(|(a, b)| matches!((a, b), (Some(a), Some(b)) if a < b && *b <= attempted_at))
            .count();
        let kept = seen_complete
            .iter()
            .zip(&seen_failed)
            .filter(|(a, b)| a.is_some() && a == b)
            .count();
        check(
            moved == r.listed && moved + kept == remaining.len(),
            format!(
                "the {} items the failed attempt listed on pages read whole have their last_seen_at moved forward, the rest keep theirs",
                r.listed
            ),
            format!("{moved} moved, {kept} kept: {seen_complete:?} then {seen_failed:?}"),
        )?;
        let shown = searchable(&m, &canary)?;
        check(
            shown == all_titles(),
            "all 6 items are still searchable, the one removed at the source included",
            format!("{} of them are", shown.len()),
        )?;
        let state = m
            .store()
            .connector_state(FAKE_CONNECTOR_NAME)
            .map_err(|e| fail("the connector state reads", e.to_string()))?;
        check(
            state.last_failure.as_deref() == Some(kind.as_str())
                && state.last_attempt_at == Some(attempted_at)
                && state.last_complete_at == Some(complete_at)
                && attempted_at > complete_at,
            format!(
                "the failed attempt is recorded durably: at {attempted_at}, as {}, the last complete enumeration still at {complete_at}",
                kind.as_str()
            ),
            format!("{state:?}"),
        )?;
        let seen_after = m
            .store()
            .connector_item_seen_at(FAKE_CONNECTOR_NAME, &removed_fp)
            .ok()
            .flatten();
        check(
            seen_before.is_some() && seen_after == seen_before,
            "the removed item's last_seen_at stays at the last enumeration that listed it",
            format!("{seen_before:?} then {seen_after:?}"),
        )?;
        // The same world can observe a deletion: cleared, a complete sync deletes it.
        fake.set_faults(ConnectorFaults::default());
        let r = synced(&mut m, &fake).await?;
        let cleared_at = m.clock().now_unix_s();
        let mut expected = all_titles();
        expected.remove(&title(REMOVED));
        let shown = searchable(&m, &canary)?;
        check(
            r.is_complete() && r.deleted == 1 && shown == expected,
            "with the fault cleared, a complete sync deletes the removed item and only it",
            format!("{r:?}, {} searchable", shown.len()),
        )?;
        let state = m
            .store()
            .connector_state(FAKE_CONNECTOR_NAME)
            .map_err(|e| fail("the connector state reads", e.to_string()))?;
        check(
            state.last_failure.is_none()
                && state.last_attempt_at == Some(cleared_at)
                && state.last_complete_at == Some(cleared_at),
            format!(
                "the complete sync at {cleared_at} clears the recorded failure and is the last complete enumeration"
            ),
            format!("{state:?}"),
        )?;
        let seen_cleared = seen_at(&m, &remaining);
        check(
            seen_cleared
                .iter()
                .all(|s| s.is_some_and(|s| s > attempted_at && s <= cleared_at)),
            "every item the complete sync listed has its last_seen_at moved forward to it",
            format!("{seen_failed:?} then {seen_cleared:?}"),
        )
    }))
}

/// One failing enumeration, the row of its case in [`GATE`]: the fault the
/// fake connector is given, how its listing is stretched, and the failure it
/// is recorded as.
struct FaultRow {
    /// The fault knob the failing sync turns on.
    fault: fn(&mut ConnectorFaults),
    /// How the listing is stretched past the caps.
    overrun: Overrun,
    /// The failure the sync must report and record.
    kind: FailureKind,
}

impl FaultRow {
    /// The row's case, through the one body.
    fn run(&self, ctx: &mut Ctx) -> Result<(), Failure> {
        let mut faults = ConnectorFaults::default();
        (self.fault)(&mut faults);
        fails_and_deletes_nothing(ctx, faults, self.overrun, self.kind)
    }
}

const FOLDER_FILES: [&str; 4] = ["a.md", "b.md", "locked/c.md", "locked/d.md"];

fn folder_title(file: &str) -> String {
    format!("Folder {}", file.replace(['/', '.'], " "))
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: u32) -> std::io::Result<()> {
    Ok(())
}

/// The real folder connector's rig: the case's folder of titled files, each
/// holding its canary, and memoria on a hand clock with a runtime to sync in.
struct FolderRig {
    root: PathBuf,
    canary: String,
    clock: HandClock,
    runtime: tokio::runtime::Runtime,
    m: Instance,
}

impl FolderRig {
    /// Writes `files` (paths under the folder) and wakes memoria beside it.
    fn new(ctx: &mut Ctx, files: &[&str]) -> Result<FolderRig, Failure> {
        let canary = ctx.canary();
        let root = ctx.dir("folder");
        for f in files {
            let path = root.join(f);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("subfolder");
            }
            std::fs::write(
                path,
                format!("# {}\n\nThe {canary} figure is here.\n", folder_title(f)),
            )
            .expect("a file");
        }
        let clock = HandClock::at(1_796_029_200);
        let m = Instance::wake(
            InstanceConfig {
                data_dir: ctx.dir("data"),
                admission: Admission::parse(&OWNERS.join(",")).expect("owners"),
                egress: EgressMode::AiOff,
            },
            Sealer::new(&Dek::from_bytes([7u8; 32])),
            Arc::new(clock.clone()),
        )
        .map_err(|e| Failure::new("memoria wakes", e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        Ok(FolderRig {
            root,
            canary,
            clock,
            runtime,
            m,
        })
    }

    /// A minute on, one sync of `source`.
    fn run(&mut self, source: &FolderSource) -> Result<SyncReport, Failure> {
        self.clock.advance(60);
        self.runtime
            .block_on(sync(&mut self.m, source))
            .map_err(|e| Failure::new("the sync runs to a report", e.to_string()))
    }

    /// Titles of the documents a search for the canary shows.
    fn shown(&self) -> Result<BTreeSet<String>, Failure> {
        searchable(&self.m, &self.canary).map_err(|e| decode(Err(e)).unwrap_err())
    }

    /// The first walk of `source`: complete, a document for each of `all`'s
    /// files, every one searchable (`presence` says so); returns its time.
    fn first_walk(
        &mut self,
        source: &FolderSource,
        all: &BTreeSet<String>,
        presence: &str,
    ) -> Result<i64, Failure> {
        let first = self.run(source)?;
        ensure(
            first.is_complete() && first.created == all.len(),
            format!(
                "the first walk is complete and creates {} documents",
                all.len()
            ),
            format!("{first:?}"),
        )?;
        let before = self.shown()?;
        ensure(
            before == *all,
            presence,
            format!("{} of them are", before.len()),
        )?;
        Ok(self.clock.now_unix_s())
    }

    /// The walk that just failed is recorded: at this minute, as `kind` (the
    /// recorded word, spelled out), the last complete walk still at
    /// `complete_at`.
    fn failure_recorded(
        &self,
        source: &FolderSource,
        kind: &str,
        complete_at: i64,
    ) -> Result<(), Failure> {
        let state = self.state(source)?;
        ensure(
            state.last_failure.as_deref() == Some(kind)
                && state.last_attempt_at == Some(self.clock.now_unix_s())
                && state.last_complete_at == Some(complete_at),
            format!(
                "the failed walk is recorded: its time, {kind}, and the last complete walk's time"
            ),
            format!("{state:?}"),
        )
    }

    /// The recorded state of `source`'s enumerations.
    fn state(&self, source: &FolderSource) -> Result<ConnectorState, Failure> {
        self.m
            .store()
            .connector_state(source.name())
            .map_err(|e| Failure::new("the connector state reads", e.to_string()))
    }
}

fn unreadable_subfolder_deletes_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut rig = FolderRig::new(ctx, &FOLDER_FILES)?;
    let root = rig.root.clone();
    let locked = root.join("locked");
    let all: BTreeSet<String> = FOLDER_FILES.iter().map(|f| folder_title(f)).collect();

    let plain = FolderSource::new(&root);
    let complete_at = rig.first_walk(
        &plain,
        &all,
        "all 4 files, 2 in the subfolder, are searchable (presence)",
    )?;

    std::fs::remove_file(locked.join("d.md")).expect("remove");
    set_mode(&locked, 0o000).expect("chmod 000");
    let chmod_effective = std::fs::read_dir(&locked).is_err();
    let (source, how) = if chmod_effective {
        (plain.clone(), "chmod 000")
    } else {
        (
            FolderSource::new(&root).with_injected_denial(&locked),
            "an injected EACCES (running as root: chmod 000 does not stop a read)",
        )
    };
    let failed = rig.run(&source);
    set_mode(&locked, 0o755).expect("chmod back");
    let failed = failed?;
    ensure(
        failed.failure == Some(FailureKind::PermissionDenied) && failed.deleted == 0,
        format!(
            "with the subfolder unreadable by {how}, the walk fails as permission_denied and deletes nothing"
        ),
        format!("{failed:?}"),
    )?;
    let during = rig.shown()?;
    ensure(
        during == all,
        format!(
            "with the subfolder unreadable by {how}, all 4 files are still searchable, the removed one included"
        ),
        format!(
            "{} of {} searchable",
            during.intersection(&all).count(),
            all.len()
        ),
    )?;
    rig.failure_recorded(&plain, "permission_denied", complete_at)?;

    let last = rig.run(&plain)?;
    let mut expected = all;
    expected.remove(&folder_title("locked/d.md"));
    let after = rig.shown()?;
    ensure(
        last.is_complete() && last.deleted == 1 && after == expected,
        "readable again, a complete walk deletes the removed file and only it",
        format!("{last:?}, {after:?}"),
    )
}

fn missing_folder_root_deletes_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let files = ["a.md", "b.md"];
    let mut rig = FolderRig::new(ctx, &files)?;
    let root = rig.root.clone();
    let all: BTreeSet<String> = files.iter().map(|f| folder_title(f)).collect();

    let source = FolderSource::new(&root);
    let complete_at = rig.first_walk(&source, &all, "both files are searchable (presence)")?;

    // One file removed, then the whole folder gone: an unmounted drive.
    std::fs::remove_file(root.join("b.md")).expect("remove");
    let unmounted = root.with_file_name("folder-unmounted");
    std::fs::rename(&root, &unmounted).expect("move the folder away");
    let gone = rig.run(&source);
    std::fs::rename(&unmounted, &root).expect("move the folder back");
    let gone = gone?;
    ensure(
        gone.failure == Some(FailureKind::NotFound) && gone.deleted == 0,
        "with the folder's root gone, the walk fails as not_found and deletes nothing",
        format!("{gone:?}"),
    )?;
    let during = rig.shown()?;
    ensure(
        during == all,
        "with the folder's root gone, both files are still searchable",
        format!("{} of them are", during.len()),
    )?;
    rig.failure_recorded(&source, "not_found", complete_at)?;

    let last = rig.run(&source)?;
    let mut expected = all;
    expected.remove(&folder_title("b.md"));
    let after = rig.shown()?;
    ensure(
        last.is_complete() && last.deleted == 1 && after == expected,
        "moved back, a complete walk deletes the removed file and only it",
        format!("{last:?}, {} searchable", after.len()),
    )?;
    let cleared = rig.state(&source)?;
    ensure(
        cleared.last_failure.is_none()
            && cleared.last_attempt_at == Some(rig.clock.now_unix_s())
            && cleared.last_complete_at == Some(rig.clock.now_unix_s()),
        "the complete walk clears the recorded failure and is the last complete walk",
        format!("{cleared:?}"),
    )
}
