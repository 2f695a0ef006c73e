//! Connectors in a replayed world: a real folder of the run and the paged fake, enumerated by memoria on a schedule, faulted and mended, and the oracle's checks of what an enumeration may delete (§5.1, §4.2, gate 7).
//!
//! Size: about 800 lines, a fifth of them this doc and the test's scenario
//! text: the folder and the fake, their truth, the schedule, the replayed
//! source and the checks read one model of the two sources; splitting the
//! checks out is the next step.
//!
//! A scenario with `connector-*` events holds one or both connectors:
//!
//! - `folder`: a directory of the run's own, under `TMPDIR`, written by
//!   the timeline (files created, edited, removed, in subfolders), and
//!   memoria's [`FolderSource`] over it, as `memoria sync-folder` runs it.
//!   Each write sets the file's modification time from a counter of the
//!   run, never the wall clock, so a file's version is the same on every
//!   replay. Its faults: `root-gone` (the root renamed away, as an
//!   unmounted drive: its files still exist) and `unreadable:SUB` (reading
//!   the subfolder fails with `EACCES`, through
//!   [`FolderSource::with_injected_denial`]: the runs are root).
//! - `paged`: [`FakeConnector`], with its knobs: `hang:PAGE`,
//!   `rate-limit:PAGE`, `credential-expired` (401), `forbidden:COLL` (403),
//!   `partial-last-page` and `over-cap`.
//!
//! memoria enumerates on its own schedule, every
//! [`CONNECTOR_EVERY_MS_DEFAULT`] of simulated time (or the scenario's
//! `connector_every_ms`), between the timeline's events; nothing in the
//! timeline can ask for an enumeration. The reference has no connector
//! timer in `serve` (`memoria sync-folder` is a one-shot command an
//! operator schedules), so this is that operator's schedule, calling the
//! one production entry, `memoria::connector::sync`. Its paged
//! enumeration waits on the network, and `sync` holds the instance
//! exclusively throughout; the instance's lock must not be held across a
//! wait here (every host runs on one thread), so the paged source is
//! first enumerated by the reference's own `enumerate` with the lock
//! free, and `sync` then applies that enumeration, replayed page for page
//! and failure for failure, in one poll under the lock. A `serve` that
//! ran connectors would need the same split.
//!
//! The oracle, from the folder's and the fake's own state (never
//! memoria's), after every enumeration:
//!
//! - [`CONNECTOR_SAFETY`]: every item an admitted person found before the
//!   enumeration and still in the source is found after it (a failed, timed
//!   out, truncated or unreadable enumeration deletes nothing); and with no
//!   fault on (the enumeration must complete) no item removed from the
//!   source is found any more.
//! - [`CONNECTOR_RECORD`]: the attempt is recorded, when it happened and
//!   how it failed, and with no fault on, a complete enumeration at that
//!   time, no failure, and every item of the source seen then (§4.2's
//!   `last_seen_at`, "so 'no longer in the source' is answerable later").
//!   No surface shows the record yet, so this one check reads the store.
//! - [`CONNECTOR_LIVENESS`]: once the faults stop (`expect-converged`) and
//!   [`CONNECTOR_QUIET_SYNCS`] enumerations have run, every item of each
//!   source is found at its current version, and none removed is found.
//!
//! Every search is the JSON search (`memoria::ruled_search`) by the first
//! reader, an admitted member. The items' words are the connectors' own
//! (`zfolderdoc`, `zpageddoc` and each item's tag), which no other event
//! of a run asks for.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use memoria::connector::{
    Entry as Listed, Enumeration, FailureKind, Fetched, FolderSource, Page, PageEnd, Source,
    SyncReport, enumerate, sync,
};

use super::checks::Check;
use super::parse::{Event, Scenario};
use crate::fake_connector::{ConnectorFaults, FAKE_CONNECTOR_NAME, FakeConnector};
use crate::world::{EPOCH_UNIX_S, Memoria};

/// How often memoria enumerates its connectors unless the scenario says,
/// in simulated ms. Our choice: §5.1 states no interval; a run of about
/// 200 events spans a few simulated minutes, so this is several
/// enumerations a run.
pub const CONNECTOR_EVERY_MS_DEFAULT: u64 = 30_000;
/// Enumerations run after the faults stop before liveness is judged: the
/// first is complete, the second shows it stays so.
pub const CONNECTOR_QUIET_SYNCS: u64 = 2;
/// A failed, timed-out, truncated or unreadable enumeration deleted an
/// item still in its source, or a complete one kept a removed item.
pub const CONNECTOR_SAFETY: &str = "[safety:enumeration]";
/// The connector's record of the attempt is wrong (§5.1, §4.2).
pub const CONNECTOR_RECORD: &str = "[safety:connector-record]";
/// After the faults stopped and the quiet enumerations, an item of a
/// source is not found at its current version, or a removed one is.
pub const CONNECTOR_LIVENESS: &str = "[liveness:connector]";

/// The two connectors a scenario may name.
const CONNECTORS: [&str; 2] = ["folder", "paged"];

/// Checks a `connector-put` or `connector-remove`'s names.
///
/// # Errors
/// The complaint, for the file's line.
pub(super) fn check_item(connector: &str, item: &str) -> Result<(), String> {
    if !CONNECTORS.contains(&connector) {
        return Err(format!(
            "connector {connector} is neither `folder` nor `paged`"
        ));
    }
    let segments: Vec<&str> = item.split('/').collect();
    let fine = segments.len() <= 2
        && segments.iter().all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    if fine {
        Ok(())
    } else {
        Err(format!(
            "item {item}: one or two `/`-separated names of lowercase letters and digits"
        ))
    }
}

/// Checks a `connector-fault`'s fault against its connector.
///
/// # Errors
/// The complaint, for the file's line.
pub(super) fn check_fault(connector: &str, fault: &str) -> Result<(), String> {
    let ok = match connector {
        "folder" => {
            fault == "clear"
                || fault == "root-gone"
                || fault
                    .strip_prefix("unreadable:")
                    .is_some_and(|s| check_item("folder", s).is_ok() && !s.contains('/'))
        }
        "paged" => {
            matches!(
                fault,
                "clear" | "credential-expired" | "partial-last-page" | "over-cap"
            ) || fault
                .strip_prefix("hang:")
                .or_else(|| fault.strip_prefix("rate-limit:"))
                .is_some_and(|n| n.parse::<usize>().is_ok())
                || fault
                    .strip_prefix("forbidden:")
                    .is_some_and(|s| check_item("paged", s).is_ok() && !s.contains('/'))
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{connector} knows no fault {fault}"))
    }
}

/// One item of a source, as its truth holds it.
#[derive(Debug, Clone)]
struct ItemTruth {
    /// The item's tag: the last segment of its name.
    tag: String,
    /// Writes so far; the current version's token is `{tag}v{version}`.
    version: u64,
}

/// One connector's truth.
#[derive(Debug, Default)]
struct Side {
    items: BTreeMap<String, ItemTruth>,
    /// Tags of items removed from the source and not written since.
    removed: BTreeSet<String>,
}

/// The connectors of one replay and their truth.
pub(super) struct ConnectorTruth {
    _dir: tempfile::TempDir,
    root: PathBuf,
    unmounted: PathBuf,
    folder: Option<(FolderSource, Side)>,
    root_gone: bool,
    denied: Option<String>,
    paged: Option<(FakeConnector, Side)>,
    faults: ConnectorFaults,
    every_ms: u64,
    next_ms: u64,
    writes: i64,
}

impl ConnectorTruth {
    /// The connectors `s` names, or `None` if it names none.
    ///
    /// # Errors
    /// If the run's folder cannot be made.
    pub(super) fn new(s: &Scenario) -> Result<Option<ConnectorTruth>, String> {
        let named = |which: &str| {
            s.events.iter().any(|e| match e {
                Event::ConnectorPut { connector, .. }
                | Event::ConnectorRemove { connector, .. }
                | Event::ConnectorFault { connector, .. } => connector == which,
                _ => false,
            })
        };
        let (folder, paged) = (named("folder"), named("paged"));
        if !folder && !paged {
            return Ok(None);
        }
        let dir = tempfile::Builder::new()
            .prefix("explore-folder")
            .tempdir()
            .map_err(|e| format!("making the run's folder under TMPDIR: {e}"))?;
        let root = dir.path().join("folder");
        std::fs::create_dir(&root).map_err(|e| format!("{}: {e}", root.display()))?;
        let every_ms = s
            .connector_every_ms
            .unwrap_or(CONNECTOR_EVERY_MS_DEFAULT)
            .max(1);
        Ok(Some(ConnectorTruth {
            unmounted: dir.path().join("unmounted"),
            folder: folder.then(|| (FolderSource::new(&root), Side::default())),
            root,
            _dir: dir,
            root_gone: false,
            denied: None,
            paged: paged.then(|| {
                (
                    FakeConnector::new(
                        s.paged_page_size
                            .unwrap_or(crate::fake_connector::FAKE_PAGE_SIZE_DEFAULT),
                    ),
                    Side::default(),
                )
            }),
            faults: ConnectorFaults::default(),
            every_ms,
            next_ms: every_ms,
            writes: 0,
        }))
    }

    fn folder_now(&self) -> PathBuf {
        if self.root_gone {
            self.unmounted.clone()
        } else {
            self.root.clone()
        }
    }

    /// Applies a `connector-*` event to the source it names.
    ///
    /// # Errors
    /// A file that cannot be written, or an event naming a connector the
    /// run does not hold.
    pub(super) fn apply(&mut self, event: &Event) -> Result<(), String> {
        match event {
            Event::ConnectorPut {
                connector,
                item,
                words,
                ..
            } => {
                self.writes += 1;
                let tag = item.rsplit('/').next().unwrap_or(item).to_string();
                let side = self.side(connector)?;
                let truth = side.items.entry(item.clone()).or_insert(ItemTruth {
                    tag: tag.clone(),
                    version: 0,
                });
                truth.version += 1;
                let version = truth.version;
                side.removed.remove(&tag);
                let title = format!("z{connector}doc {tag} {tag}v{version}");
                // Only the connectors' own words: no other question finds it.
                let body = format!("{words} {tag} {tag}v{version}");
                if connector == "folder" {
                    let path = self.folder_now().join(format!("{item}.md"));
                    if let Some(parent) = path.parent() {
                        std::fs::create_dir_all(parent)
                            .map_err(|e| format!("{}: {e}", parent.display()))?;
                    }
                    std::fs::write(&path, format!("# {title}\n\n{body}\n"))
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                    // The version memoria reads is (length, mtime): the
                    // run's own clock, never the wall's.
                    let mtime = std::time::UNIX_EPOCH
                        + Duration::from_secs((EPOCH_UNIX_S + self.writes).unsigned_abs());
                    std::fs::File::options()
                        .write(true)
                        .open(&path)
                        .and_then(|f| f.set_modified(mtime))
                        .map_err(|e| format!("{}: {e}", path.display()))?;
                } else if let Some((fake, _)) = &self.paged {
                    let (collection, key) = item.split_once('/').unwrap_or(("root", item));
                    fake.put(key, collection, &title, &body);
                }
            }
            Event::ConnectorRemove {
                connector, item, ..
            } => {
                let side = self.side(connector)?;
                let truth = side
                    .items
                    .remove(item)
                    .ok_or(format!("{connector}: {item} is not in the source"))?;
                side.removed.insert(truth.tag);
                if connector == "folder" {
                    let path = self.folder_now().join(format!("{item}.md"));
                    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                } else if let Some((fake, _)) = &self.paged {
                    fake.remove(item.rsplit('/').next().unwrap_or(item));
                }
            }
            Event::ConnectorFault {
                connector, mode, ..
            } => {
                self.side(connector)?;
                if connector == "folder" {
                    self.folder_fault(mode)?;
                } else {
                    self.paged_fault(mode);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn side(&mut self, connector: &str) -> Result<&mut Side, String> {
        let side = match connector {
            "folder" => self.folder.as_mut().map(|(_, s)| s),
            _ => self.paged.as_mut().map(|(_, s)| s),
        };
        side.ok_or(format!("the run holds no {connector} connector"))
    }

    fn folder_fault(&mut self, fault: &str) -> Result<(), String> {
        let remount = |t: &mut ConnectorTruth| -> Result<(), String> {
            if t.root_gone {
                std::fs::rename(&t.unmounted, &t.root)
                    .map_err(|e| format!("{}: {e}", t.root.display()))?;
                t.root_gone = false;
            }
            Ok(())
        };
        match fault {
            "clear" => {
                remount(self)?;
                self.denied = None;
            }
            "root-gone" if !self.root_gone => {
                std::fs::rename(&self.root, &self.unmounted)
                    .map_err(|e| format!("{}: {e}", self.root.display()))?;
                self.root_gone = true;
            }
            _ => {
                if let Some(sub) = fault.strip_prefix("unreadable:") {
                    self.denied = Some(sub.to_string());
                }
            }
        }
        Ok(())
    }

    fn paged_fault(&mut self, fault: &str) {
        let number = |f: &str| f.rsplit(':').next().and_then(|n| n.parse().ok());
        let f = &mut self.faults;
        match fault {
            "clear" => *f = ConnectorFaults::default(),
            "credential-expired" => f.credential_expired = true,
            "partial-last-page" => f.partial_last_page = true,
            "over-cap" => f.over_cap = true,
            _ if fault.starts_with("hang:") => f.hang_from_page = number(fault),
            _ if fault.starts_with("rate-limit:") => f.rate_limit_from_page = number(fault),
            _ => f.forbidden_collection = fault.strip_prefix("forbidden:").map(String::from),
        }
        if let Some((fake, _)) = &self.paged {
            fake.set_faults(self.faults.clone());
        }
    }

    /// Runs every enumeration due by `until_ms` (none while `hold`: a crash
    /// is aimed at memoria's next event), each judged; what they did, as
    /// notes for the timeline.
    ///
    /// # Errors
    /// As [`ConnectorTruth::enumerate_all`].
    pub(super) async fn run_due(
        &mut self,
        m: &mut Memoria,
        who: &str,
        until_ms: u64,
        hold: bool,
    ) -> Result<(Vec<Check>, Vec<String>), String> {
        let (mut checks, mut notes) = (vec![], vec![]);
        while !hold && self.next_ms <= until_ms {
            sleep_until(self.next_ms).await;
            let (c, n) = self.enumerate_all(m, who).await?;
            checks.extend(c);
            notes.extend(n);
            self.next_ms = self.next_ms.max(super::roster::now_ms()) + self.every_ms;
        }
        Ok((checks, notes))
    }

    /// The faults stop; [`CONNECTOR_QUIET_SYNCS`] enumerations run on the
    /// schedule; then every item of each source is looked for at its
    /// current version, and every removed one (liveness).
    ///
    /// # Errors
    /// As [`ConnectorTruth::run_due`].
    pub(super) async fn converge(
        &mut self,
        m: &mut Memoria,
        who: &str,
    ) -> Result<(Vec<Check>, Vec<String>), String> {
        if self.folder.is_some() {
            self.folder_fault("clear")?;
        }
        self.paged_fault("clear");
        let until = self.next_ms + (CONNECTOR_QUIET_SYNCS - 1) * self.every_ms;
        let (mut checks, notes) = self.run_due(m, who, until, false).await?;
        for (name, side) in self.sides() {
            let mut missing = vec![];
            for t in side.items.values() {
                let token = format!("{}v{}", t.tag, t.version);
                if !findable(m, who, &token).await.contains(&token) {
                    missing.push(token);
                }
            }
            let mut kept = vec![];
            for tag in &side.removed {
                if findable(m, who, tag).await.contains(tag) {
                    kept.push(tag.clone());
                }
            }
            checks.push(Check {
                expected: format!(
                    "{CONNECTOR_LIVENESS} {name}: after the faults stopped and {CONNECTOR_QUIET_SYNCS} enumerations, every item of the source ({}) is found at its current version and none of the {} removed is",
                    side.items.len(),
                    side.removed.len()
                ),
                actual: format!(
                    "{} not found at their current version, {} removed still found",
                    missing.len(),
                    kept.len()
                ),
                ok: missing.is_empty() && kept.is_empty(),
            });
        }
        Ok((checks, notes))
    }

    fn sides(&self) -> Vec<(&'static str, &Side)> {
        let mut out = vec![];
        if let Some((_, s)) = &self.folder {
            out.push(("folder", s));
        }
        if let Some((_, s)) = &self.paged {
            out.push(("paged", s));
        }
        out
    }

    /// One enumeration of each connector, judged.
    ///
    /// # Errors
    /// A store error, or a `sync` that would wait while holding the instance.
    async fn enumerate_all(
        &mut self,
        m: &mut Memoria,
        who: &str,
    ) -> Result<(Vec<Check>, Vec<String>), String> {
        let (mut checks, mut notes) = (vec![], vec![]);
        for name in ["folder", "paged"] {
            let (faulted, keys, side_tags, removed, shared) = match name {
                "folder" => match &self.folder {
                    Some((source, side)) => (
                        self.root_gone || self.denied.is_some(),
                        side.items
                            .keys()
                            .map(|i| {
                                format!(
                                    "import:{}",
                                    source.root().join(format!("{i}.md")).display()
                                )
                            })
                            .collect::<Vec<_>>(),
                        side.items
                            .values()
                            .map(|t| t.tag.clone())
                            .collect::<Vec<_>>(),
                        side.removed.clone(),
                        "zfolderdoc",
                    ),
                    None => continue,
                },
                _ => match &self.paged {
                    Some((_, side)) => (
                        self.faults != ConnectorFaults::default(),
                        side.items
                            .keys()
                            .map(|i| FakeConnector::source_key(i.rsplit('/').next().unwrap_or(i)))
                            .collect(),
                        side.items.values().map(|t| t.tag.clone()).collect(),
                        side.removed.clone(),
                        "zpageddoc",
                    ),
                    None => continue,
                },
            };
            let before = findable(m, who, shared).await;
            let (report, source_name) = if name == "folder" {
                let Some((source, _)) = &self.folder else {
                    continue;
                };
                let source = match &self.denied {
                    Some(sub) => source
                        .clone()
                        .with_injected_denial(&source.root().join(sub)),
                    None => source.clone(),
                };
                (apply(m, &source)?, source.name().to_string())
            } else {
                let Some((fake, _)) = &self.paged else {
                    continue;
                };
                // The network's part with the instance free; the diff in one poll.
                let replayed = Replayed::from(fake, enumerate(fake).await);
                (apply(m, &replayed)?, FAKE_CONNECTOR_NAME.to_string())
            };
            notes.push(format!(
                "{name} enumerated: {}",
                report.failure.map_or("complete", FailureKind::as_str)
            ));
            let after = findable(m, who, shared).await;
            let lost: Vec<&String> = side_tags
                .iter()
                .filter(|t| before.contains(*t) && !after.contains(*t))
                .collect();
            checks.push(Check {
                expected: format!(
                    "{CONNECTOR_SAFETY} {name}: every item found before this enumeration and still in the source is found after it"
                ),
                actual: format!("{} no longer found", lost.len()),
                ok: lost.is_empty(),
            });
            if !faulted {
                let kept = removed.iter().filter(|t| after.contains(*t)).count();
                let absent = side_tags.iter().filter(|t| !after.contains(*t)).count();
                checks.push(Check {
                    expected: format!(
                        "{CONNECTOR_SAFETY} {name}: with no fault on, the enumeration shows every item of the source ({}) and none of the {} removed",
                        side_tags.len(),
                        removed.len()
                    ),
                    actual: format!("{absent} not found, {kept} removed still found"),
                    ok: kept == 0 && absent == 0,
                });
            }
            checks.push(record(m, &source_name, &keys, faulted, &report));
        }
        Ok((checks, notes))
    }
}

/// True for a title a connector's item carries: `z{folder,paged}doc TAG
/// TAGvN` (so `[safety:provenance]` leaves it to this file's checks).
pub(super) fn is_connector_title(title: &str) -> bool {
    let words: Vec<&str> = title.split_whitespace().collect();
    matches!(words.as_slice(), [kind, tag, version]
        if CONNECTORS.iter().any(|c| *kind == format!("z{c}doc"))
            && version.strip_prefix(tag).and_then(|v| v.strip_prefix('v')).is_some_and(|n| n.parse::<u64>().is_ok()))
}

/// Runs `sync` over `source` under the instance's lock, in one poll.
fn apply(m: &Memoria, source: &dyn Source) -> Result<SyncReport, String> {
    let instance = m.state().instance();
    let mut guard = instance.lock().unwrap_or_else(|p| p.into_inner());
    match sync(&mut guard, source).now_or_never() {
        Some(Ok(report)) => Ok(report),
        Some(Err(e)) => Err(format!("a connector sync failed: {e}")),
        None => Err("a connector sync waited while holding the instance".into()),
    }
}

/// [`CONNECTOR_RECORD`]'s check of the attempt just made.
fn record(m: &Memoria, name: &str, keys: &[String], faulted: bool, report: &SyncReport) -> Check {
    let instance = m.state().instance();
    let guard = instance.lock().unwrap_or_else(|p| p.into_inner());
    let now = guard.clock().now_unix_s();
    let store = guard.store();
    let state = store.connector_state(name).unwrap_or_default();
    let unseen = keys
        .iter()
        .filter(|k| {
            store
                .connector_item_seen_at(name, &store.source_fp(k))
                .ok()
                .flatten()
                != Some(now)
        })
        .count();
    let failure = report.failure.map(|f| f.as_str().to_string());
    let (expected, ok) = if faulted {
        (
            "the attempt recorded at its time, with the failure it had".to_string(),
            state.last_attempt_at == Some(now) && state.last_failure == failure,
        )
    } else {
        (
            format!(
                "with no fault on, a complete enumeration recorded at its time, no failure, and every item of the source ({}) seen then",
                keys.len()
            ),
            state.last_attempt_at == Some(now)
                && state.last_complete_at == Some(now)
                && state.last_failure.is_none()
                && unseen == 0,
        )
    };
    Check {
        expected: format!("{CONNECTOR_RECORD} {expected}"),
        actual: format!(
            "attempt {}, complete {}, failure {}, {unseen} items not seen then",
            at(state.last_attempt_at, now),
            at(state.last_complete_at, now),
            state.last_failure.as_deref().unwrap_or("none"),
        ),
        ok,
    }
}

fn at(t: Option<i64>, now: i64) -> String {
    match t {
        Some(t) if t == now => "now".into(),
        Some(t) => format!("{}s before", now - t),
        None => "never".into(),
    }
}

async fn sleep_until(ms: u64) {
    let now = turmoil::sim_elapsed().unwrap_or_default();
    let at = Duration::from_millis(ms);
    if at > now {
        tokio::time::sleep(at - now).await;
    }
}

/// The words of the titles `who`'s JSON search for `q` shows.
async fn findable(m: &Memoria, who: &str, q: &str) -> BTreeSet<String> {
    let state = m.state();
    let client = state.siblings();
    let page = memoria::ruled_search(state.shared_instance(), client.as_deref(), who, q, 1)
        .await
        .ok()
        .and_then(|r| serde_json::to_value(&r.page).ok())
        .unwrap_or_default();
    super::surfaces::from_json(&page)
        .shown
        .iter()
        .flat_map(|s| {
            s.title
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// An enumeration already made, answered again page for page, with the
/// fake's fetches: what `sync` applies under the lock.
struct Replayed<'a> {
    fake: &'a FakeConnector,
    read: Vec<Listed>,
    failure: Option<FailureKind>,
}

impl<'a> Replayed<'a> {
    fn from(fake: &'a FakeConnector, e: Enumeration) -> Replayed<'a> {
        match e {
            Enumeration::Complete { entries, .. } => Replayed {
                fake,
                read: entries,
                failure: None,
            },
            Enumeration::Failed { kind, read, .. } => Replayed {
                fake,
                read,
                failure: Some(kind),
            },
        }
    }
}

impl Source for Replayed<'_> {
    fn name(&self) -> &str {
        FAKE_CONNECTOR_NAME
    }

    fn list<'a>(&'a self, token: Option<&'a str>) -> BoxFuture<'a, Result<Page, FailureKind>> {
        Box::pin(async move {
            match (token, self.failure) {
                (None, None) => Ok(Page {
                    entries: self.read.clone(),
                    end: PageEnd::Complete,
                }),
                (None, Some(kind)) if self.read.is_empty() => Err(kind),
                (None, Some(_)) => Ok(Page {
                    entries: self.read.clone(),
                    end: PageEnd::Next("replayed-failure".into()),
                }),
                (Some(_), failure) => Err(failure.unwrap_or(FailureKind::Unavailable)),
            }
        })
    }

    fn fetch<'a>(&'a self, entry: &'a Listed) -> BoxFuture<'a, Result<Fetched, FailureKind>> {
        self.fake.fetch(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"
title = "a folder unmounted and a page that hangs delete nothing"
oracle = true
tick_ms = 10
connector_every_ms = 1000
paged_page_size = 1
readers = ["ana"]

[[sibling]]
app = "docs"

[[event]]
do = "warmed-up"

[[event]]
do = "connector-put"
connector = "folder"
item = "s1/zfa"
words = "zmemo"

[[event]]
do = "connector-put"
connector = "folder"
item = "zfb"
words = "zmemo"

[[event]]
do = "connector-put"
connector = "paged"
item = "c1/zpa"
words = "zplan"

[[event]]
do = "connector-put"
connector = "paged"
item = "zpb"
words = "zplan"

[[event]]
do = "connector-fault"
at_ms = 1500
connector = "folder"
mode = "root-gone"

[[event]]
do = "connector-fault"
connector = "paged"
mode = "hang:1"

[[event]]
do = "connector-put"
at_ms = 2500
connector = "folder"
item = "zfb"
words = "znotes"

[[event]]
do = "connector-remove"
connector = "paged"
item = "zpb"

[[event]]
do = "expect-converged"
"#;

    #[test]
    fn an_unmounted_folder_and_a_hanging_page_delete_nothing_and_memoria_converges_after() {
        let s = super::super::parse(RUN).expect("parses");
        let r = super::super::replay(&s, Some(1)).expect("replays");
        let text = r.render_text();
        assert!(r.passed(), "{text}");
        for seen in [
            "folder enumerated: complete",
            "folder enumerated: not_found",
            "paged enumerated: timeout",
            CONNECTOR_SAFETY,
            CONNECTOR_RECORD,
            CONNECTOR_LIVENESS,
        ] {
            assert!(text.contains(seen), "{seen} missing from\n{text}");
        }
    }

    #[test]
    fn a_fault_a_connector_does_not_know_is_refused() {
        assert!(check_fault("folder", "root-gone").is_ok());
        assert!(check_fault("paged", "hang:2").is_ok());
        assert!(check_fault("folder", "hang:2").is_err());
        assert!(check_fault("paged", "forbidden:a/b").is_err());
        assert!(check_item("paged", "c1/zpa").is_ok());
        assert!(check_item("drive", "zpa").is_err());
        assert!(is_connector_title("zfolderdoc zfa zfav2"));
        assert!(!is_connector_title("zfolderdoc zfa zfbv2"));
    }
}
