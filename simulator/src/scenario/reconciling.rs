//! The oracle's judge of the reconciling state: a source marked for re-announce is out of the ranking and named on every results page until its re-announce completes, and nothing phantom stays ranked once the faults stop (§4.1 rules 1-4, §6.1's S1 rows, §7.4, §8.1).
//!
//! §4.1 rule 1: "A source marked for re-announce leaves the ranking until
//! the re-announce completes. Its chunks are not scored, not fused and not
//! counted against top-k [...] The page names the excluded source and says
//! it is reconciling." §8.1's AHEAD bullet: it "marks the source for
//! re-announce, takes that source out of the ranking, and purges nothing";
//! the reconciling notice "does go on the results page [...] Leaving it off
//! would be the silent short page gate 27 exists to catch". §7.4: "A
//! restore from backup takes the re-announce path". Judged from the fakes'
//! own trace and the truth model, never memoria's store:
//!
//! - `[safety:reconciling]`, on every surface a question is asked on (the
//!   search page, the brief, JSON, MCP):
//!   - a page that names app X reconciling shows no passage of X, and the
//!     S2 round of that request asks X about no item (X is out of the
//!     ranking);
//!   - from the moment memoria surely knows X is marked until the trace
//!     shows a re-announce of X that may have completed, every results
//!     page of a person admitted names X reconciling. memoria surely knows
//!     X is marked [`IN_FLIGHT_MS`] after the fake answered it, with no
//!     fault shaping the answer: an S1 `410` (a rewound or expired cursor,
//!     §6.1), or an S2 answer with an AHEAD pair (§4.1); and at once when
//!     memoria's data directory was restored from a backup and the durable
//!     tombstone log holds a deletion acknowledged after that backup (the
//!     restore §7.4 makes findable: every sibling memoria held a passage
//!     of before the backup is marked), and for every mark the backup
//!     itself held. A re-announce may have completed once X answered an
//!     announce page carrying its close record (status 200, no
//!     truncation) after the mark: a slow page, or one whose refetches
//!     failed, may leave the mark standing, so from then on a page that
//!     names X is not required to. A restart or a crash drops every mark
//!     not yet sure (an answer memoria may not have read before it died).
//!     Where a call was in flight across the question's start the page is
//!     not judged for it.
//! - `[liveness:phantom]` at `expect-converged`, after the rounds (§4.1
//!   rules 3 and 4, §6.1): every item any sibling ever held is asked for by
//!   its tag by the first member, and [`PULL_SETTLE_MS`] later the tags of
//!   the items those questions named behind are asked again. No S2
//!   pair memoria sends in those questions names an item its sibling does
//!   not hold as team-visible (deleted, left team visibility, or lost by a
//!   restore), and none names a revision other than the sibling's current
//!   one twice in a row for the same item (a STALE refetched once is fine).
//!   Custody, chosen from §4.1 and §6.1: an item that left team visibility
//!   arrives on S1 as `gone`, "indistinguishable from deletion" (§4.1,
//!   §6.1's S4 row), so memoria deletes it and asks nothing of it; a
//!   departure is judged as a deletion. An item lost by a whole-log
//!   restore is reconciled by the re-announce its `410` starts, which
//!   retires what the announce omits (rule 3); one whose revision a
//!   partial restore lost answers AHEAD, and the re-announce replaces the
//!   revision (rule 4).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::checks::Check;
use super::oracle::PULL_SETTLE_MS;
use super::oracle::app_of;
use super::surfaces::{APP_MEMORIA, Rendered};
use crate::fake::server::FakeSibling;
use crate::fake::trace::{CallDetail, CallKind, TraceEvent};
use crate::world::{MEMORIA_CONSUMER, Memoria};

/// The invariant's name, first in each failed check's text.
pub const SAFETY_RECONCILING: &str = "[safety:reconciling]";
/// The liveness invariant's name: a phantom item still asked about.
pub const LIVENESS_PHANTOM: &str = "[liveness:phantom]";

/// How long after the fake answered a marking call memoria surely holds
/// the mark, in simulated ms: one sibling deadline
/// (`memoria::SIBLING_DEADLINE_MS`, §6.5), far above the links' latency
/// (1 to 3 ms) and a tick (10 ms); store work is inline in a simulation.
pub const IN_FLIGHT_MS: u64 = memoria::SIBLING_DEADLINE_MS;

/// Why an app is marked for re-announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    /// S1 answered `410` (§6.1: a rewound or expired cursor).
    Gone410,
    /// S2 answered AHEAD for a pair (§4.1).
    Ahead,
    /// memoria's data directory was restored from a backup (§7.4), or the
    /// backup held the mark.
    Restore,
}

impl Why {
    fn says(self) -> &'static str {
        match self {
            Why::Gone410 => "its feed answered 410",
            Why::Ahead => "it answered AHEAD",
            Why::Restore => "memoria's data directory was restored",
        }
    }
}

/// One mark memoria surely set.
#[derive(Debug, Clone)]
struct Mark {
    app: String,
    /// When the marking answer was sent (simulated ms).
    at_ms: u64,
    /// From when memoria surely holds it.
    sure_ms: u64,
    /// The trace's length once it was set: an announce after it may
    /// complete it.
    index: usize,
    why: Why,
}

/// What a backup of memoria's data directory holds of the reconciling
/// state.
#[derive(Debug, Clone, Default)]
struct Backup {
    /// Apps marked, surely and with no re-announce since, when it was taken.
    marked: BTreeMap<String, Why>,
    /// Apps memoria surely held a row of.
    held: BTreeSet<String>,
    /// memoria-owned deletions acknowledged before it.
    deletions: usize,
}

/// What the oracle knows of memoria's reconciling state, from the trace.
#[derive(Debug, Default)]
pub(super) struct ReconcilingTruth {
    /// Trace events read so far.
    scanned: usize,
    marks: Vec<Mark>,
    /// Announce pages carrying a close record, by (app, trace index).
    closes: Vec<(String, usize)>,
    /// Apps some page showed a passage of: memoria holds a row of them.
    held: BTreeSet<String>,
    /// memoria-owned deletions acknowledged (each a tombstone in the
    /// durable log, §7.4).
    deletions: usize,
    backups: BTreeMap<String, Backup>,
    /// Every item any sibling held, with its tag, by (app, item id).
    ever: BTreeMap<(String, String), String>,
}

fn fail(invariant: &str, what: String, saw: String) -> Check {
    Check {
        expected: format!("{invariant} {what}"),
        actual: saw,
        ok: false,
    }
}

/// Whether `e` is an answer memoria surely read as the fake sent it: no
/// delay (cold, slow), outage, redirect or malformation shaped it.
fn clean(e: &TraceEvent) -> bool {
    e.caller == MEMORIA_CONSUMER && e.faults.is_empty()
}

impl ReconcilingTruth {
    /// Reads the trace's events since the last call: the marks it shows
    /// (an S1 `410`, an S2 AHEAD) and the announces that may complete them.
    pub(super) fn observe(&mut self, all: &[TraceEvent]) {
        let from = self.scanned.min(all.len());
        for (i, e) in all.iter().enumerate().skip(from) {
            let app = app_of(&e.callee).to_string();
            let why = match (&e.call, &e.detail) {
                (CallKind::S1, _) if e.status == Some(410) => {
                    // A consumer expired under its TTL is §6.1's other way in.
                    (e.caller == MEMORIA_CONSUMER
                        && e.faults.iter().all(|f| f == "consumer_expired"))
                    .then_some(Why::Gone410)
                }
                (CallKind::S2, CallDetail::S2 { pairs, .. }) if e.status == Some(200) => {
                    (clean(e) && pairs.iter().any(|p| p.result == "AHEAD")).then_some(Why::Ahead)
                }
                (CallKind::S1a, CallDetail::S1a { close_count, .. }) => {
                    if e.caller == MEMORIA_CONSUMER
                        && e.status == Some(200)
                        && close_count.is_some()
                        && !e.faults.iter().any(|f| f == "truncate_announce")
                    {
                        self.closes.push((app.clone(), i));
                    }
                    None
                }
                _ => None,
            };
            if let Some(why) = why {
                self.marks.push(Mark {
                    app,
                    at_ms: e.at_ms,
                    sure_ms: e.at_ms.saturating_add(IN_FLIGHT_MS),
                    index: i + 1,
                    why,
                });
            }
        }
        self.scanned = all.len();
    }

    /// Learns every item the fakes hold now, with its tag (the last word
    /// of its current title), for [`judge_phantoms`].
    pub(super) fn learn_items(&mut self, fakes: &BTreeMap<String, FakeSibling>) {
        for (app, fake) in fakes {
            fake.model().with(|m| {
                for i in m.items() {
                    let tag = i
                        .current()
                        .title
                        .split_whitespace()
                        .last()
                        .unwrap_or("")
                        .to_string();
                    self.ever
                        .entry((app.clone(), i.item_id.clone()))
                        .or_insert(tag);
                }
            });
        }
    }

    /// memoria stopped (a restart, a crash) at `from_ms` or later: a mark
    /// not yet sure then may never have been written.
    pub(super) fn interrupted(&mut self, from_ms: u64) {
        self.marks.retain(|m| m.sure_ms <= from_ms);
    }

    /// A memoria-owned deletion was acknowledged: a tombstone in the
    /// durable log (§7.4).
    pub(super) fn deleted_upload(&mut self) {
        self.deletions += 1;
    }

    /// The mark that requires `app` named on a page asked at `start_ms`
    /// whose request ended with the trace `end` long, if any: sure before
    /// the question began, and no announce of `app` since that may have
    /// completed it.
    fn requiring(&self, app: &str, start_ms: u64, end: usize) -> Option<&Mark> {
        self.marks.iter().find(|m| {
            m.app == app
                && m.sure_ms <= start_ms
                && !self
                    .closes
                    .iter()
                    .any(|(a, i)| a == app && *i >= m.index && *i < end)
        })
    }

    /// memoria's data directory was backed up as `name` at `now_ms`, the
    /// trace `end` long.
    pub(super) fn backup(&mut self, name: &str, now_ms: u64, end: usize) {
        let marked = self
            .marks
            .iter()
            .filter(|m| self.requiring(&m.app, now_ms, end).is_some())
            .map(|m| (m.app.clone(), m.why))
            .collect();
        self.backups.insert(
            name.to_string(),
            Backup {
                marked,
                held: self.held.clone(),
                deletions: self.deletions,
            },
        );
    }

    /// memoria's data directory was restored from `name` at `now_ms`, the
    /// trace `end` long, and memoria woke on it: its marks are the
    /// backup's, and if the durable log holds a deletion the restored
    /// database does not, the restore is found and every sibling it held a
    /// row of is marked (§7.4).
    pub(super) fn restore(&mut self, name: &str, now_ms: u64, end: usize) {
        let b = self.backups.get(name).cloned().unwrap_or_default();
        let mut apps: BTreeMap<String, Why> = b.marked.clone();
        if self.deletions > b.deletions {
            for app in &b.held {
                apps.insert(app.clone(), Why::Restore);
            }
        }
        self.marks = apps
            .into_iter()
            .map(|(app, why)| Mark {
                app,
                at_ms: now_ms,
                sure_ms: now_ms,
                index: end,
                why,
            })
            .collect();
        self.held = b.held;
    }

    /// Judges one surface `seen`, asked at `start_ms` by a person
    /// (`admitted` when their page is a results page: admitted now, and
    /// answered 200), whose request's sibling calls are `window` and ended
    /// with the trace `end` long. Then records the apps it showed a passage
    /// of. Returns only failed checks.
    pub(super) fn judge_page(
        &mut self,
        seen: &Rendered,
        window: &[TraceEvent],
        fakes: &BTreeMap<String, FakeSibling>,
        start_ms: u64,
        end: usize,
        admitted: bool,
    ) -> Vec<Check> {
        let mut out = vec![];
        let shown: Vec<String> = seen
            .shown
            .iter()
            .filter(|r| r.app != APP_MEMORIA)
            .filter_map(|r| {
                if !r.app.is_empty() {
                    return Some(r.app.clone());
                }
                fakes
                    .iter()
                    .find(|(_, f)| {
                        f.model()
                            .with(|m| m.items().any(|i| i.log.iter().any(|v| v.title == r.title)))
                    })
                    .map(|(a, _)| a.clone())
            })
            .collect();
        for app in &seen.reconciling {
            let passages = shown.iter().filter(|a| *a == app).count();
            if passages > 0 {
                out.push(fail(
                    SAFETY_RECONCILING,
                    format!(
                        "a page that names {app} reconciling shows no passage of it: it is out of the ranking (§4.1 rule 1)"
                    ),
                    format!("{passages} passages of {app}"),
                ));
            }
            let asked: usize = window
                .iter()
                .filter(|e| {
                    e.call == CallKind::S2
                        && e.caller == MEMORIA_CONSUMER
                        && app_of(&e.callee) == app
                })
                .map(|e| match &e.detail {
                    CallDetail::S2 { pairs, .. } => pairs.len().max(1),
                    _ => 1,
                })
                .sum();
            if asked > 0 {
                out.push(fail(
                    SAFETY_RECONCILING,
                    format!(
                        "a page that names {app} reconciling asks {app} about no item: its chunks are not scored, fused or counted against top-k (§4.1 rule 1)"
                    ),
                    format!("{asked} pairs asked of {app} in that request"),
                ));
            }
        }
        if admitted {
            for app in fakes.keys() {
                if seen.reconciling.contains(app) {
                    continue;
                }
                if let Some(m) = self.requiring(app, start_ms, end) {
                    out.push(fail(
                        SAFETY_RECONCILING,
                        format!(
                            "{app} is named reconciling on every results page from when memoria surely marked it ({}, at {} ms) until a re-announce of it may have completed (§4.1 rule 1, §8.1, §7.4)",
                            m.why.says(),
                            m.at_ms
                        ),
                        format!(
                            "a page asked at {start_ms} ms naming {} reconciling, {} passages of {app}",
                            if seen.reconciling.is_empty() {
                                "nothing".to_string()
                            } else {
                                seen.reconciling.join(", ")
                            },
                            shown.iter().filter(|a| *a == app).count()
                        ),
                    ));
                }
            }
        }
        self.held.extend(shown);
        out
    }
}

/// `[liveness:phantom]` (module docs): after the convergence rounds, the
/// first member `reader` asks for every item any sibling ever held by its
/// tag, and [`PULL_SETTLE_MS`] later for the tags of the items named behind
/// (only they can be named behind twice in a row). No S2 pair memoria sends names an
/// item its sibling does not hold as team-visible, and none names a
/// revision other than the current one in two questions in a row once the
/// sibling answered it STALE or AHEAD (a NOT_VISIBLE tells memoria nothing
/// of revisions: explore seed 50, every reader removed at the sibling).
///
/// # Errors
/// Never: memoria's answers are judged by the trace alone.
pub(super) async fn judge_phantoms(
    m: &mut Memoria,
    fakes: &BTreeMap<String, FakeSibling>,
    truth: &ReconcilingTruth,
    reader: &str,
    trace: &crate::fake::trace::Trace,
) -> Vec<Check> {
    let mut out = vec![];
    let mut phantom: BTreeSet<(String, String)> = BTreeSet::new();
    let mut twice: BTreeSet<(String, String)> = BTreeSet::new();
    // Per (app, item): whether the last pair naming it named another
    // revision than the current one.
    let mut behind: BTreeMap<(String, String), bool> = BTreeMap::new();
    let mut pairs = 0usize;
    let tags: BTreeSet<&String> = truth.ever.values().collect();
    let mut asked_tags = tags.len();
    for round in 0..2 {
        let round_tags: Vec<&String> = if round == 0 {
            tags.iter().copied().collect()
        } else {
            // Only an item named behind in the first round can be named
            // behind twice in a row: the second round asks their tags alone.
            let again: Vec<&String> = behind
                .iter()
                .filter(|(_, now_behind)| **now_behind)
                .filter_map(|((app, item), _)| truth.ever.get(&(app.clone(), item.clone())))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if again.is_empty() {
                break;
            }
            asked_tags += again.len();
            tokio::time::sleep(Duration::from_millis(PULL_SETTLE_MS)).await;
            again
        };
        for tag in round_tags {
            let before = trace.len();
            let _ = m.search(reader, tag).await;
            for e in trace.since(before) {
                let CallDetail::S2 { pairs: asked, .. } = &e.detail else {
                    continue;
                };
                if e.call != CallKind::S2 || e.caller != MEMORIA_CONSUMER {
                    continue;
                }
                let app = app_of(&e.callee).to_string();
                let Some(fake) = fakes.get(&app) else {
                    continue;
                };
                let mut named: BTreeMap<String, bool> = BTreeMap::new();
                for p in asked {
                    pairs += 1;
                    let (held, current) = fake.model().with(|mm| {
                        mm.item(&p.item_id).map_or((false, false), |i| {
                            (i.team_visible(), i.current().revision == p.revision)
                        })
                    });
                    if !held {
                        phantom.insert((app.clone(), p.item_id.clone()));
                        continue;
                    }
                    // Only a STALE or an AHEAD tells memoria its revision is
                    // not the current one: a pair answered NOT_VISIBLE (the
                    // asker removed, or the item ungranted to them) teaches
                    // it nothing, so asking it again is not a phantom.
                    let told = p.result == "STALE" || p.result == "AHEAD";
                    *named.entry(p.item_id.clone()).or_insert(false) |= !current && told;
                }
                for (item, now_behind) in named {
                    let key = (app.clone(), item);
                    if now_behind && behind.get(&key) == Some(&true) {
                        twice.insert(key.clone());
                    }
                    behind.insert(key, now_behind);
                }
            }
        }
    }
    for (app, item) in &phantom {
        out.push(fail(
            LIVENESS_PHANTOM,
            format!(
                "after the rounds no S2 pair names {app}:{item}, which {app} no longer holds as team-visible: a complete re-announce retires it, a gone row deletes it (§4.1 rule 3, §6.1)"
            ),
            "memoria asked about it".into(),
        ));
    }
    for (app, item) in &twice {
        out.push(fail(
            LIVENESS_PHANTOM,
            format!(
                "after the rounds {app}:{item} is not asked at a revision other than its current one twice in a row: a STALE is refetched, an AHEAD re-announced (§4.1 rule 4)"
            ),
            "named behind twice".into(),
        ));
    }
    if out.is_empty() {
        out.push(Check {
            expected: format!(
                "{LIVENESS_PHANTOM} {} tags asked, then {} again: no S2 pair names an item its sibling does not hold, none a revision behind twice",
                tags.len(),
                asked_tags - tags.len()
            ),
            actual: format!("{pairs} pairs asked"),
            ok: true,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::traced::{self, sheets_with};
    use super::*;
    use crate::fake::model::ModelHandle;
    use crate::fake::trace::Clock;
    use crate::scenario::surfaces::Shown;

    fn sheets() -> BTreeMap<String, FakeSibling> {
        sheets_with(ModelHandle::new(Clock::manual().0), Clock::manual().0)
    }

    /// Sheets' calls about `sh-ia` from a line of words (`traced.rs`).
    fn calls(line: &str) -> Vec<TraceEvent> {
        traced::calls(line, "sh-ia")
    }

    /// A page naming `reconciling` (`sheets` or nothing) and showing a
    /// passage of each app in `shown`.
    fn page(reconciling: &str, shown: &str) -> Rendered {
        Rendered {
            shown: shown
                .split_whitespace()
                .map(|a| Shown {
                    app: a.to_string(),
                    title: "budget qxshia".into(),
                })
                .collect(),
            reconciling: reconciling.split_whitespace().map(String::from).collect(),
            ..Rendered::default()
        }
    }

    #[test]
    fn each_row_of_the_table_is_judged_as_it_says() {
        // Each row: what | the calls before the question | the question's
        // own calls | the page's reconciling app | the apps of its passages
        // | failures; every question starts at 5,000 ms.
        let rows = [
            "nothing marked, nothing named | | | | sheets | 0",
            "a 410 read in time: the page names it | 410@1000 | | | | 1",
            "a 410, and the page names it | 410@1000 | | sheets | | 0",
            "a 410 in flight across the question | 410@4500 | | | | 0",
            "an outage's 410 is no rewind | 410!outage@1000 | | | | 0",
            "an expired consumer is one | 410!consumer_expired@1000 | | | | 1",
            "an AHEAD read in time | AHEAD@1000 | | | | 1",
            "a slow AHEAD may have come late | AHEAD!slow@1000 | | | | 0",
            "a STALE marks nothing | STALE@1000 | | | | 0",
            "a close may have completed it | 410@1000 close@2000 | | | | 0",
            "so may one in the request | 410@1000 | close@5000 | | | 0",
            "a miscounted close does not | 410@1000 close!truncate_announce@2000 | | | | 1",
            "nor a page with no close | 410@1000 open@2000 | | | | 1",
            "nor a close before the mark | close@500 410@1000 | | | | 1",
            "named reconciling, a passage shown | | | sheets | sheets | 1",
            "named reconciling, asked in S2 | | VISIBLE@5010 | sheets | | 1",
        ];
        let fakes = sheets();
        for row in rows {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let [what, before, own, reconciling, shown, failures] = cells[..] else {
                panic!("a row of six cells: {row}");
            };
            let failures: usize = failures.parse().unwrap_or(usize::MAX);
            let own = calls(own);
            let mut all = calls(before);
            all.extend(own.iter().cloned());
            let mut truth = ReconcilingTruth::default();
            truth.observe(&all);
            let seen = page(reconciling, shown);
            let got = truth.judge_page(&seen, &own, &fakes, 5_000, all.len(), true);
            assert_eq!(got.len(), failures, "{what}: {got:?}");
            assert!(
                got.iter()
                    .all(|c| !c.ok && c.expected.starts_with(SAFETY_RECONCILING)),
                "{what}"
            );
        }
    }

    #[test]
    fn a_restore_brings_back_the_backups_marks_and_marks_what_it_held_once_a_deletion_followed() {
        let fakes = sheets();
        // (what, a deletion between the backup and the restore, the calls
        // before the backup, failures on a page naming nothing after).
        let rows = [
            ("no deletion since: not found", false, "", 0),
            ("a deletion since: every held sibling marked", true, "", 1),
            ("the backup's own mark comes back", false, "410@1000", 1),
        ];
        for (what, deletion, before, failures) in rows {
            let mut truth = ReconcilingTruth::default();
            let _ = truth.judge_page(&page("", "sheets"), &[], &fakes, 0, 0, true);
            let mut all = calls(before);
            truth.observe(&all);
            truth.backup("m0", 5_000, all.len());
            all.extend(calls("close@6000"));
            truth.observe(&all);
            if deletion {
                truth.deleted_upload();
            }
            truth.restore("m0", 7_000, all.len());
            let got = truth.judge_page(&page("", ""), &[], &fakes, 8_000, all.len(), true);
            assert_eq!(got.len(), failures, "{what}: {got:?}");
        }
    }

    #[test]
    fn a_restart_drops_only_a_mark_memoria_may_not_have_written() {
        let fakes = sheets();
        for (stopped_ms, failures) in [(1_200, 0), (3_000, 1)] {
            let mut truth = ReconcilingTruth::default();
            truth.observe(&calls("410@1000"));
            truth.interrupted(stopped_ms);
            let got = truth.judge_page(&page("", ""), &[], &fakes, 5_000, 1, true);
            assert_eq!(got.len(), failures, "stopped at {stopped_ms} ms: {got:?}");
        }
    }
}
