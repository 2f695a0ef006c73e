//! The oracle's judge of a reconciling spell's cause: a page may name a source reconciling only when the fakes' trace shows something since its last re-announce that can mark it (§4.1 rules 1 and 4, §6.1's S1 and S3 rows, §7.4, §8.1, §8.7).
//!
//! `reconciling.rs` judges one direction: from a sure mark until a
//! re-announce may have completed, the source is named. This judges the
//! other: a source is "temporarily out of the search" (§8.1) for a reason,
//! and one taken out for nothing is a short page the owner is told to
//! distrust. `[safety:reconciling-cause]`, at every surface a question is
//! asked on: a page that names app X reconciling needs a cause of X in
//! the fakes' trace (calls of memoria's consumer) that no earlier results
//! page has spent. The causes, each read as loosely as memoria may:
//!
//! - an S1 `410` (§6.1: a rewound cursor or an expired consumer), whatever
//!   shaped it;
//! - an S2 answer with an AHEAD pair (§4.1), or one a malformation or an
//!   outage shaped (a delay and the VISIBLE lie are traced as sent:
//!   [`TRUTHFUL_S2_FAULTS`]);
//! - any S6 answer (§8.7's re-certification arm marks a sheet's app);
//! - memoria's data directory restored from a backup (§7.4: every app,
//!   the backup's own marks included), or a crash, whose wake may read a
//!   tombstone logged but not applied, or a snapshot written but not
//!   recorded, as a restore (`restore_found` in `reference/src/instance.rs`);
//! - an S3 `404` the feed does not explain: the reference's own third way
//!   in (`reference/src/sibling/sync.rs`; the spec is silent), which gate
//!   27's `27/later-row-explains-a-404` and
//!   `27/lost-feed-revision-reannounces` pin down. memoria fetches a
//!   revision a row named, and reads the feed to its head and once more
//!   before it marks; a later row about the item (`gone`, or another
//!   revision) explains the 404. The oracle reads the sibling's own event
//!   log: the 404 is explained when the last row about the item appended
//!   before the 404's request arrived is `gone` or names another revision
//!   (memoria's reads after the 404 surely see it). A row appended later
//!   may explain it to memoria too, which only makes a mark rarer; a
//!   sibling whose log a whole-log restore rewound since is not judged
//!   (every 404 of it a cause).
//!
//! A cause is spent by a results page (a member admitted, answered 200)
//! that does not name X and was asked once memoria surely acted on the
//! cause: [`IN_FLIGHT_MS`] after a clean answer (no fault shaped it) or
//! a restore; for a 404, once X's announce was asked after it (memoria
//! marks before it announces). A cause a fault shaped is never spent that
//! way. So a source named reconciling once its causes are all spent was
//! marked for nothing, or kept marked after a re-announce cleared it.
//!
//! The lateness the reference's reading implies (a mark from an
//! unexplained 404 is re-announced in the same pull, gate 27's
//! `27/lost-feed-revision-reannounces`) is judged only where sure: every
//! cause left is such a 404; after the latest, X's feed answered twice
//! more (a head with no `more`, then an empty page: the one more read),
//! every call of X since then clean and no delay or outage knob on X now;
//! and the page was asked [`IN_FLIGHT_MS`] after that read with no
//! announce of X asked since the 404, and no crash since it.

use std::collections::BTreeMap;

use super::checks::Check;
use super::oracle::app_of;
use super::reconciling::IN_FLIGHT_MS;
use super::surfaces::Rendered;
use crate::fake::server::FakeSibling;
use crate::fake::trace::{CallDetail, CallKind, TraceEvent};
use crate::world::MEMORIA_CONSUMER;

/// The invariant's name, first in each failed check's text.
pub const SAFETY_RECONCILING_CAUSE: &str = "[safety:reconciling-cause]";

/// The faults an S2 answer may carry whose traced pairs are what was sent:
/// a delay changes when, and the lie (`Lie::VisibleForAnyone`) is traced
/// after it rewrote every value to VISIBLE, which marks nothing. Any other
/// fault (a malformation, an outage) may have put on the wire what the
/// trace does not show, so it stays a cause that is never spent.
const TRUTHFUL_S2_FAULTS: [&str; 3] = ["slow", "cold", "lie"];

/// What can mark an app for re-announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// S1 answered `410`.
    Gone410,
    /// S2 answered AHEAD, or a malformation shaped its answer.
    Ahead,
    /// An S6 answer (§8.7's re-ingest mark).
    Numeric,
    /// memoria's data directory was restored.
    Restore,
    /// S3 answered `404` for a revision no later feed row explains.
    Lost404,
}

/// One possible cause.
#[derive(Debug, Clone)]
struct Cause {
    app: String,
    kind: Kind,
    at_ms: u64,
    /// The trace's length once it is known: the request that asks past it
    /// may show it.
    known_at: usize,
    /// From when a results page not naming the app spends it; `None`:
    /// not yet known (a 404 before its announce), or never (a fault).
    spent_from_ms: Option<u64>,
}

/// What the oracle knows of the causes of reconciling spells.
#[derive(Debug, Default)]
pub(super) struct CauseTruth {
    /// Trace events read so far.
    scanned: usize,
    causes: Vec<Cause>,
    /// When memoria last stopped (a restart, a crash), in simulated ms.
    stopped_ms: Option<u64>,
}

/// Whether the sibling's own log explains S3's 404 of `item` at `revision`
/// asked at `at_ms`: the last row about it appended before is `gone` or
/// names another revision. Not judged (`false`) after a whole-log restore.
fn explained(fake: &FakeSibling, item: &str, revision: &str, at_ms: u64) -> bool {
    fake.model().with(|m| {
        if m.epoch() > 1 {
            return false;
        }
        m.events()
            .iter()
            .rev()
            .filter(|e| e.at_ms < at_ms)
            .find(|e| e.item_id == item)
            .is_some_and(|e| e.gone || e.revision != revision)
    })
}

impl CauseTruth {
    /// Reads the trace's events since the last call: the causes they show,
    /// and when a 404's announce makes it spendable.
    pub(super) fn observe(&mut self, all: &[TraceEvent], fakes: &BTreeMap<String, FakeSibling>) {
        let from = self.scanned.min(all.len());
        for (i, e) in all.iter().enumerate().skip(from) {
            if e.caller != MEMORIA_CONSUMER {
                continue;
            }
            let app = app_of(&e.callee).to_string();
            let clean = e.faults.is_empty();
            let settled = clean.then_some(e.at_ms.saturating_add(IN_FLIGHT_MS));
            let found = match (&e.call, &e.detail) {
                (CallKind::S1, _) if e.status == Some(410) => Some((Kind::Gone410, settled)),
                (CallKind::S2, CallDetail::S2 { pairs, .. }) => {
                    if pairs.iter().any(|p| p.result == "AHEAD") {
                        Some((Kind::Ahead, settled))
                    } else if e
                        .faults
                        .iter()
                        .any(|f| !TRUTHFUL_S2_FAULTS.contains(&f.as_str()))
                    {
                        Some((Kind::Ahead, None))
                    } else {
                        None
                    }
                }
                (CallKind::S6, _) => Some((Kind::Numeric, settled)),
                (
                    CallKind::S3,
                    CallDetail::S3 {
                        item_id, revision, ..
                    },
                ) if e.status == Some(404) => {
                    let item = item_id.as_deref().unwrap_or_default();
                    let revision = revision.as_deref().unwrap_or_default();
                    let sure = fakes
                        .get(&app)
                        .is_some_and(|f| explained(f, item, revision, e.at_ms));
                    (!sure).then_some((Kind::Lost404, None))
                }
                // An outage answering 404: no pair to judge it by.
                (CallKind::S3, _) if e.status == Some(404) => Some((Kind::Lost404, None)),
                (CallKind::S1a, CallDetail::S1a { first_page, .. }) if *first_page => {
                    // memoria marks before it announces: every 404 of the
                    // app before this request is acted on once it arrived.
                    for c in &mut self.causes {
                        if c.app == app && c.kind == Kind::Lost404 && c.spent_from_ms.is_none() {
                            c.spent_from_ms = Some(e.at_ms);
                        }
                    }
                    None
                }
                _ => None,
            };
            if let Some((kind, spent_from_ms)) = found {
                self.causes.push(Cause {
                    app,
                    kind,
                    at_ms: e.at_ms,
                    known_at: i + 1,
                    spent_from_ms,
                });
            }
        }
        self.scanned = all.len();
    }

    /// memoria's data directory was restored at `now_ms`, the trace `end`
    /// long: every app may be marked (§7.4).
    pub(super) fn restore(&mut self, apps: impl Iterator<Item = String>, now_ms: u64, end: usize) {
        for app in apps {
            self.causes.push(Cause {
                app,
                kind: Kind::Restore,
                at_ms: now_ms,
                known_at: end,
                spent_from_ms: Some(now_ms.saturating_add(IN_FLIGHT_MS)),
            });
        }
    }

    /// memoria stopped (a restart, a crash) at `from_ms` or later.
    pub(super) fn interrupted(&mut self, from_ms: u64) {
        self.stopped_ms = Some(from_ms);
    }

    /// Whether memoria surely let a mark from the 404 `c` wait past its
    /// own pull (module docs): judged only where sure.
    fn surely_late(
        &self,
        c: &Cause,
        all: &[TraceEvent],
        fake: Option<&FakeSibling>,
        start_ms: u64,
    ) -> bool {
        if self.stopped_ms.is_some_and(|s| s >= c.at_ms) {
            return false;
        }
        let Some(fake) = fake else { return false };
        let knobs = fake.faults().get();
        if knobs.cold.is_some()
            || knobs.slow.is_some()
            || knobs.outage.is_some()
            || knobs.redirect.is_some()
            || knobs.truncate_announce.is_some()
        {
            return false;
        }
        let after: Vec<&TraceEvent> = all
            .iter()
            .skip(c.known_at)
            .filter(|e| e.caller == MEMORIA_CONSUMER && app_of(&e.callee) == c.app)
            .collect();
        if after
            .iter()
            .any(|e| !e.faults.is_empty() || e.call == CallKind::S1a)
        {
            return false;
        }
        let reads: Vec<&&TraceEvent> = after
            .iter()
            .filter(|e| e.call == CallKind::S1 && e.status == Some(200))
            .collect();
        reads.windows(2).any(|w| {
            matches!(&w[0].detail, CallDetail::S1 { more: false, .. })
                && matches!(&w[1].detail, CallDetail::S1 { rows, more: false, .. } if rows.is_empty())
                && w[1].at_ms.saturating_add(IN_FLIGHT_MS) <= start_ms
        })
    }

    /// Judges one surface `seen`, asked at `start_ms`, whose request ended
    /// with the trace `end` long (`all` is the whole trace now); a
    /// `results` page (a member admitted, answered 200) that names an app
    /// not reconciling then spends its settled causes. Returns only failed
    /// checks.
    pub(super) fn judge_page(
        &mut self,
        seen: &Rendered,
        all: &[TraceEvent],
        fakes: &BTreeMap<String, FakeSibling>,
        start_ms: u64,
        end: usize,
        results: bool,
    ) -> Vec<Check> {
        let mut out = vec![];
        for app in &seen.reconciling {
            let open: Vec<&Cause> = self
                .causes
                .iter()
                .filter(|c| &c.app == app && c.known_at <= end)
                .collect();
            if open.is_empty() {
                out.push(Check {
                    expected: format!(
                        "{SAFETY_RECONCILING_CAUSE} a page names {app} reconciling only for a cause since its last re-announce: an S1 410, an S2 AHEAD, memoria's restore, or an S3 404 no later feed row explains (§4.1, §6.1, §7.4, §8.1)"
                    ),
                    actual: format!(
                        "a page asked at {start_ms} ms names {app} reconciling with no such cause in the trace"
                    ),
                    ok: false,
                });
                continue;
            }
            let latest = open.iter().max_by_key(|c| c.known_at).copied();
            if open.iter().all(|c| c.kind == Kind::Lost404)
                && let Some(c) = latest
                && self.surely_late(c, all, fakes.get(app), start_ms)
            {
                out.push(Check {
                    expected: format!(
                        "{SAFETY_RECONCILING_CAUSE} a 404 of {app} no later feed row explains is re-announced in the pull that met it (sync.rs, gate 27's 27/lost-feed-revision-reannounces)"
                    ),
                    actual: format!(
                        "S3 404 at {} ms, the feed read to its head and once more, no announce asked by a page at {start_ms} ms that names {app} reconciling",
                        c.at_ms
                    ),
                    ok: false,
                });
            }
        }
        if results {
            self.causes.retain(|c| {
                seen.reconciling.contains(&c.app)
                    || c.known_at > end
                    || c.spent_from_ms.is_none_or(|t| t > start_ms)
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::traced::{self, sheets_with};
    use super::*;
    use crate::fake::model::{ModelHandle, Rung};
    use crate::fake::trace::Clock;

    /// Sheets, its clock at 100 ms, holding `sh-a` (team-visible, r1 and
    /// r2 made at 100 ms) and `sh-b`, which left team visibility at 100 ms.
    fn sheets() -> BTreeMap<String, FakeSibling> {
        let (clock, time) = Clock::manual();
        let model = ModelHandle::new(clock.clone());
        time.set_ms(100);
        model.with(|m| {
            m.add_item("sh-a", Rung::Team, "A", "a").expect("item");
            m.revise("sh-a", "A", "a2").expect("revise");
            m.add_item("sh-b", Rung::Team, "B", "b").expect("item");
            m.set_link_shared("sh-b", true).expect("link-shared");
        });
        sheets_with(model, clock)
    }

    /// Sheets' calls about `sh-a` from a line of words (`traced.rs`).
    fn calls(line: &str) -> Vec<TraceEvent> {
        traced::calls(line, "sh-a")
    }

    fn page(reconciling: &str) -> Rendered {
        Rendered {
            reconciling: reconciling.split_whitespace().map(String::from).collect(),
            ..Rendered::default()
        }
    }

    #[test]
    fn each_row_of_the_table_is_judged_as_it_says() {
        // Each row: what | the calls before | the first page (asked at
        // 20,000 ms: its reconciling app, `nothing`, or `-` for no page),
        // a member's results page | the calls
        // after it | the second page (at 40,000 ms) | failures on it.
        let rows = [
            "a 410, then named | 410@1000 | - | | sheets | 0",
            "named for nothing | head@1000 | - | | sheets | 1",
            "an AHEAD | AHEAD@1000 | - | | sheets | 0",
            "a VISIBLE is none | VISIBLE@1000 | - | | sheets | 1",
            "a malformed answer may be | VISIBLE!malformed_s2@1000 | - | | sheets | 0",
            "an S6 answer | s6@1000 | - | | sheets | 0",
            "a 404 of the revision the last row names | head@1000 404:sh-a:r2@1010 | - | | sheets | 0",
            "a 404 a later row explains | head@1000 404:sh-a:r1@1010 | - | | sheets | 1",
            "a 404 a gone row explains | head@1000 404:sh-b:r1@1010 | - | | sheets | 1",
            "a page not naming it spends a 410 | 410@1000 | nothing | | sheets | 1",
            "not a slow 410 | 410!slow@1000 | nothing | | sheets | 0",
            "a page naming it spends nothing | 410@1000 | sheets | | sheets | 0",
            "a new cause after the spending page | 410@1000 | nothing | 410@30000 | sheets | 0",
            "a 404 is spent only once announced | head@1000 404:sh-a:r2@1010 announce@1020 | nothing | | sheets | 1",
            "and not before | head@1000 404:sh-a:r2@1010 | nothing | | sheets | 0",
            "a 404 left to the next pull is late | head@1000 404:sh-a:r2@1010 head@1020 empty@1030 | sheets | | sheets | 1",
            "not once announced | head@1000 404:sh-a:r2@1010 head@1020 empty@1030 announce@1040 | sheets | | sheets | 0",
            "nor before the one more read | head@1000 404:sh-a:r2@1010 head@1020 | sheets | | sheets | 0",
            "nor when a fault shaped a read | head@1000 404:sh-a:r2@1010 head!slow@1020 empty@1030 | sheets | | sheets | 0",
        ];
        for row in rows {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let [what, before, first, after, second, failures] = cells[..] else {
                panic!("a row of six cells: {row}");
            };
            let fakes = sheets();
            let failures: usize = failures.parse().unwrap_or(usize::MAX);
            let mut all = calls(before);
            let mut truth = CauseTruth::default();
            truth.observe(&all, &fakes);
            if first != "-" {
                let first = page(if first == "nothing" { "" } else { first });
                let _ = truth.judge_page(&first, &all, &fakes, 20_000, all.len(), true);
            }
            all.extend(calls(after));
            truth.observe(&all, &fakes);
            let got = truth.judge_page(&page(second), &all, &fakes, 40_000, all.len(), true);
            assert_eq!(got.len(), failures, "{what}: {got:?}");
            assert!(
                got.iter()
                    .all(|c| !c.ok && c.expected.starts_with(SAFETY_RECONCILING_CAUSE)),
                "{what}"
            );
        }
    }

    #[test]
    fn a_restore_is_a_cause_for_every_app_and_a_crash_stops_the_lateness_judge() {
        let fakes = sheets();
        let mut truth = CauseTruth::default();
        truth.restore(["sheets".to_string()].into_iter(), 1_000, 0);
        assert!(
            truth
                .judge_page(&page("sheets"), &[], &fakes, 5_000, 0, true)
                .is_empty()
        );
        let all = calls("head@1000 404:sh-a:r2@1010 head@1020 empty@1030");
        let mut truth = CauseTruth::default();
        truth.observe(&all, &fakes);
        truth.interrupted(1_015);
        assert!(
            truth
                .judge_page(&page("sheets"), &all, &fakes, 40_000, all.len(), true)
                .is_empty()
        );
    }
}
