//! Gate 27 (§10, §4.1, §8.1): a sibling's restore reconciles, and the page does not go quietly short.
//!
//! Size: over 1,200 lines because gate 27's cases share one fixture (60 Sheets
//! and 40 Docs chunks, the restore, the held-state reader); split, a case
//! would sit apart from its fixture.
//!
//! The spec's fixture: memoria holds 60 chunks from Sheets and 40 from Docs
//! (one chunk per item). Sheets is then restored behind memoria: (a) item
//! `sh-a` is back at `r5` while memoria holds `r7` (a partial restore,
//! [`memoria_simulator::Model::restore_item_to`]); (b) item
//! `sh-b` has no row at all ([`memoria_simulator::Model::forget_item`]);
//! (c) the rest answer normally. Ana's first search meets (a)'s AHEAD, which
//! marks Sheets for re-announce; from then on Sheets is out of the ranking
//! until a re-announce completes (§4.1 rules 1–4).
//!
//! The page's depth: the spec runs "a query matching all 100 chunks with a
//! page size of 50" and asks for "50 results, all from Docs" — which 40 Docs
//! chunks cannot give. The gate keeps the fixture's 60/40 and uses the
//! product's page of [`PAGE_SIZE_RESULTS`] (20): page 1 and page 2 each hold
//! exactly 20 results, all from Docs, so every Docs chunk is shown and no
//! Sheets chunk takes a slot; page 3 holds none and still names Sheets. A
//! ranking that kept Sheets would put its top-ranked (VISIBLE) chunks on
//! page 1 and fail the count of Docs results.

use memoria::PAGE_SIZE_RESULTS;
use memoria::wire::{Pair, Subject, Verdict};
use memoria::{ReannounceStatus, SyncReport};
use memoria_simulator::{
    CallDetail, CallKind, FakeSibling, Memoria, Model, OWNERS, Outage, Rung, S1_ROWS_PER_PAGE,
    SiblingSpec, Slow, Trace, TraceEvent, TruncateAnnounce, World,
};

use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Sheets chunks in the fixture (§10 gate 27), one per item.
pub const SHEETS_CHUNKS: usize = 60;
/// Docs chunks in the fixture (§10 gate 27), one per item.
pub const DOCS_CHUNKS: usize = 40;

/// The item restored to an older revision: (a).
const ITEM_AHEAD: &str = "sh-a";
/// The item whose row the restore lost: (b).
const ITEM_LOST: &str = "sh-b";
/// An item Sheets holds privately for Bea: the known-private comparison.
const ITEM_PRIVATE: &str = "sh-private";

/// Gate 27.
pub static GATE: Gate = Gate {
    id: "27",
    title: "A sibling's restore reconciles; the page does not go quietly short",
    gates_md: &[
        "A sibling's restore reconciles: AHEAD vs NOT_VISIBLE (byte-identical to a private item), nothing deleted, the source leaves the ranking, a page of 50 renders exactly 50, a failed announce retires nothing",
    ],
    sections: &["§10", "§4.1", "§8.1"],
    requirement: "After Sheets is restored behind memoria, S2 answers AHEAD for a lost revision and NOT_VISIBLE, equal to a private item's, for a lost row; nothing is deleted and Sheets is marked for re-announce; Sheets leaves the ranking so Docs fills the page, with one line naming Sheets as reconciling and never a 'no results'; a failed announce retires nothing; a completed one retires the lost row and refetches the lost revision at the announced one; a revision the feed named that S3 404s, with no later row to explain it, re-announces Sheets, since memoria holds nothing of that item for S2 to call AHEAD; a 404 a later row explains (even one appended while memoria fetched) marks nothing, and a pass that fails after such a 404 marks nothing and does not lose its row.",
    cases: &[
        Case {
            id: "27/restore-answers-and-nothing-lost",
            desc: "60 Sheets and 40 Docs chunks; Sheets restores (a) to r5 against memoria's r7 and loses (b)'s row. One S2 call answers AHEAD for (a) and, for (b) and a known-private item, the same NOT_VISIBLE. Ana's search marks Sheets for re-announce; nothing is deleted: 100 chunks, no tombstone, (a) still held at r7, (b) still held.",
            run: restore_answers,
        },
        Case {
            id: "27/docs-fill-the-page",
            desc: "With Sheets marked, a query matching all 100 chunks renders exactly 20 results on page 1 and 20 on page 2, every one from Docs (all 40 Docs chunks), with exactly one line naming Sheets as reconciling and no withheld line; page 3 still names Sheets and never says nothing matched.",
            run: docs_fill_the_page,
        },
        Case {
            id: "27/docs-removed-page-names-sheets",
            desc: "The same fixture without Docs: after the restore, the page for a query matching all 60 Sheets chunks says Sheets is reconciling and never 'no results' or 'No passage matched.'.",
            run: docs_removed,
        },
        Case {
            id: "27/failed-announce-retires-nothing",
            desc: "With Sheets marked, an announce with no close marker, then one whose close count is one too many, then one too few, each fails: nothing retired, no tombstone, (a) held at r7, (b) held, Sheets still marked and out of the ranking.",
            run: failed_announce,
        },
        Case {
            id: "27/mark-survives-restart",
            desc: "With Sheets marked, memoria restarts from its data directory: Sheets is still marked, and page 1 still renders exactly 20 Docs results plus the one reconciling line.",
            run: mark_survives_restart,
        },
        Case {
            id: "27/refetch-failure-keeps-the-mark",
            desc: "With Sheets marked and its S3 down (S1a and S2 answer), a complete announce cannot refetch (a): it is not applied, Sheets stays marked and out of the ranking, (a) is not taken to be at r5; once S3 answers, the next sync completes and (a) is held at r5.",
            run: refetch_failure_keeps_the_mark,
        },
        Case {
            id: "27/announce-brings-new-and-newer",
            desc: "After the restore Sheets also revises one item past what memoria holds and creates one memoria never saw; the complete announce replaces in both directions in one pass: (a) back to r5, the revised item forward to r2, and the new item fetched through S3 and held.",
            run: announce_brings_new_and_newer,
        },
        Case {
            id: "27/document-page-ahead-marks",
            desc: "After the restore, Ana opens (a)'s document page before any search: it is withheld with the search page's AHEAD line for Sheets (503), Sheets is marked for re-announce, and nothing is deleted (100 chunks, no tombstone, (a) held at r7); the next results page names Sheets as reconciling.",
            run: document_page_ahead_marks,
        },
        Case {
            id: "27/document-page-ahead-reannounces",
            desc: "After the restore, with Sheets' announce intact, Ana opens (a)'s document page: the AHEAD it meets starts the re-announce itself; once the page's follow-ups settle, Sheets was read through S1a, (a) is held at r5, and the next results page ranks Sheets again with no reconciling line, with no other sync in between.",
            run: document_page_ahead_reannounces,
        },
        Case {
            id: "27/lost-feed-revision-reannounces",
            desc: "A Sheets item went link-shared at r1 before memoria fetched it (its S3 404 explained by the gone row that followed: nothing marked) and was revised to r3. After the warm-up it becomes team-visible again, its feed row naming r3, and a partial restore takes it back to r1 before memoria polls: S3 404s r3, no row explains it even on one more read of the feed, so memoria, which holds nothing of the item for S2 to call AHEAD, marks Sheets and re-announces at once: the item is held at r1 and found, and nothing is retired.",
            run: lost_revision_named_by_the_feed,
        },
        Case {
            id: "27/later-row-explains-a-404",
            desc: "Two held Sheets items each 404 on a revision a feed row named, and the feed explains both: one was restored past that revision and then revised again (the next row names a revision S3 serves), the other left team-visibility while memoria fetched it (its gone row is appended after memoria read the head, so only the one more read from the head sees it). Sheets is not marked and not re-announced; the first is held at its new revision, the second deleted by its gone row.",
            run: later_row_explains_a_404,
        },
        Case {
            id: "27/lost-feed-revision-survives-a-failed-page",
            desc: "The row naming a revision a partial restore lost ends one full S1 page; S3 goes down from its 404 on, so the next page's fetch fails: nothing is marked or re-announced. The next pull reads that row again and marks Sheets; while the announce fails, a pull re-announces once and reads no row again; once it completes the item is held at r1, with nothing retired.",
            run: lost_revision_survives_a_failed_page,
        },
        Case {
            id: "27/completed-announce-reconciles",
            desc: "With Sheets marked, a complete announce retires (b) through a tombstone, refetches (a) through S3 at r5 and replaces its chunks (the older body is now the one held), clears the mark, and Sheets ranks again with no reconciling line.",
            run: completed_announce,
        },
        Case {
            id: "27/completion-clears-its-own-mark",
            desc: "Sheets and Docs are both restored behind memoria (one item each back a revision) and one search's AHEAD answers mark both; Sheets' announce then completes while every Docs announce fails: Sheets' mark is cleared and Docs' stands, and the next page ranks Sheets, shows no Docs passage and names Docs, and only Docs, as reconciling.",
            run: completion_clears_its_own_mark,
        },
        Case {
            id: "27/only-ahead-marks-and-only-its-app",
            desc: "Sheets is restored behind memoria and Docs moves its item beside (a) one revision past the one memoria holds; neither announce can complete (so a mark made stands); one search's round meets (a)'s AHEAD and the Docs item's STALE: Sheets is marked, Docs is not (STALE is refetched, never re-announced, and one app's AHEAD is no other's), and the next page names Sheets alone as reconciling and shows Docs passages.",
            run: only_ahead_marks_and_only_its_app,
        },
        Case {
            id: "27/feed-outage-marks-nothing",
            desc: "After the warm-up Docs' S1 answers 503 on every pull of a question's pulls (its S2 and S3 answer; its announce would not complete, so a mark would stand): the pull fails, Docs is not marked (only a 410 asks for a re-announce), and once the feed answers the next page names no source reconciling and shows results.",
            run: feed_outage_marks_nothing,
        },
    ],
};

fn sheets_body(canary: &str, i: usize) -> String {
    format!("# Row {i}\n\nThe {canary} figure and the {canary} total, line {i}.\n")
}

fn ahead_body(canary: &str, n: usize) -> String {
    format!("# Forecast\n\nThe {canary} {canary} {canary} forecast, tagrev{n}.\n")
}

fn docs_body(canary: &str, i: usize) -> String {
    format!("# Doc {i}\n\nThe {canary} figure, paragraph {i}.\n")
}

/// The fixture's world: Sheets with 60 team items ((a) at r7, (b)) plus a
/// private one; Docs with 40 team items, or no Docs at all.
fn fixture(ctx: &mut Ctx, with_docs: bool) -> (World, String) {
    let canary = ctx.canary();
    let mut specs = vec![SiblingSpec::own("sheets")];
    if with_docs {
        specs.push(SiblingSpec::own("docs"));
    }
    let world = World::new(ctx.seed(), specs);
    world.fake("sheets").model().with(|m| {
        m.add_item(ITEM_AHEAD, Rung::Team, "Forecast", &ahead_body(&canary, 1))
            .expect("item");
        for n in 2..=7 {
            m.revise(ITEM_AHEAD, "Forecast", &ahead_body(&canary, n))
                .expect("revise");
        }
        m.add_item(ITEM_LOST, Rung::Team, "Row", &sheets_body(&canary, 0))
            .expect("item");
        for i in 1..=SHEETS_CHUNKS - 2 {
            m.add_item(
                &format!("sh-{i}"),
                Rung::Team,
                "Row",
                &sheets_body(&canary, i),
            )
            .expect("item");
        }
        m.add_item(
            ITEM_PRIVATE,
            Rung::Private {
                owner: OWNERS[1].to_string(),
            },
            "Private",
            &sheets_body(&canary, 999),
        )
        .expect("item");
    });
    if with_docs {
        world.fake("docs").model().with(|m| {
            for i in 0..DOCS_CHUNKS {
                m.add_item(
                    &format!("dc-{i}"),
                    Rung::Team,
                    "Doc",
                    &docs_body(&canary, i),
                )
                .expect("item");
            }
        });
    }
    (world, canary)
}

/// Sheets' restore behind memoria: (a) back at r5, (b)'s row lost.
fn restore_sheets(sheets: &FakeSibling) {
    sheets.model().with(|m| {
        m.restore_item_to(ITEM_AHEAD, "r5").expect("restore (a)");
        m.forget_item(ITEM_LOST).expect("lose (b)");
    });
}

/// What memoria holds: (live chunks, tombstone seq, Sheets marked,
/// (a)'s held revision, (b) held).
fn held(m: &Memoria) -> Result<(u64, i64, bool, Option<String>, bool), String> {
    let instance = m.state().instance();
    let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
    let store = guard.store();
    let (_, chunks) = store.counts().map_err(|e| e.to_string())?;
    let tombstones = store.tombstone_seq().map_err(|e| e.to_string())?;
    let marked = store
        .sibling_state("sheets")
        .map_err(|e| e.to_string())?
        .reannounce;
    let a = store
        .sibling_document("sheets", ITEM_AHEAD)
        .map_err(|e| e.to_string())?
        .and_then(|d| d.provenance)
        .map(|p| p.revision);
    let b = store
        .sibling_document("sheets", ITEM_LOST)
        .map_err(|e| e.to_string())?
        .is_some();
    Ok((chunks, tombstones, marked, a, b))
}

/// Warms up, checks the fixture's chunk counts, restores Sheets with every
/// announce failing (`NoClose`), and has Ana search once so (a)'s AHEAD
/// marks Sheets; waits for the page's follow-ups. Returns the tombstone
/// sequence before the restore.
async fn restored_and_marked(
    m: &mut Memoria,
    sheets: &FakeSibling,
    canary: &str,
    chunks_expected: usize,
) -> Result<i64, String> {
    m.warmed_up().await?;
    let (chunks, tombstones, _, a, _) = held(m)?;
    check(
        chunks == chunks_expected as u64 && a.as_deref() == Some("r7"),
        format!("the fixture holds {chunks_expected} chunks with (a) at r7"),
        format!("{chunks} chunks, (a) at {a:?}"),
    )?;
    restore_sheets(sheets);
    sheets
        .faults()
        .set_truncate_announce(Some(TruncateAnnounce::NoClose));
    m.search(OWNERS[0], canary).await;
    m.settle_follow_ups().await;
    let (_, _, marked, _, _) = held(m)?;
    check(
        marked,
        "(a)'s AHEAD marks Sheets for re-announce",
        "Sheets is not marked",
    )?;
    Ok(tombstones)
}

fn restore_answers(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let (_, tombstones_before, _, _, _) = held(&m)?;
        restore_sheets(&sheets);
        // One S2 call: (a) at memoria's r7, (b) at its r1, and the private item.
        let client = m.state().siblings().ok_or("no sibling client")?;
        let pairs = [(ITEM_AHEAD, "r7"), (ITEM_LOST, "r1"), (ITEM_PRIVATE, "r1")].map(
            |(item_id, revision)| Pair {
                item_id: item_id.to_string(),
                revision: revision.to_string(),
            },
        );
        let before = trace.events().len();
        let decoded = client
            .check("sheets", &Subject::address(OWNERS[0]), &pairs)
            .await;
        check(
            decoded.verdicts == [Verdict::Ahead, Verdict::NotVisible, Verdict::NotVisible],
            "AHEAD for (a); NOT_VISIBLE for (b) and for the private item",
            format!("{:?}", decoded.verdicts),
        )?;
        let answered = sent_values(&trace, before);
        check(
            answered.len() == 3 && answered[1] == answered[2],
            "in the one call, (b)'s answer on the wire equals the private item's",
            format!("{answered:?}"),
        )?;
        sheets
            .faults()
            .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        m.search(OWNERS[0], &canary).await;
        m.settle_follow_ups().await;
        let (chunks, tombstones, marked, a, b) = held(&m)?;
        check(marked, "Sheets is marked for re-announce", "it is not")?;
        check(
            chunks == (SHEETS_CHUNKS + DOCS_CHUNKS) as u64
                && tombstones == tombstones_before
                && a.as_deref() == Some("r7")
                && b,
            "nothing deleted: 100 chunks, no new tombstone, (a) held at r7, (b) held",
            format!(
                "{chunks} chunks, {} new tombstones, (a) at {a:?}, (b) held: {b}",
                tombstones - tombstones_before
            ),
        )
    })
}

/// The wire values the fakes sent in S2 answers after trace event `from`.
fn sent_values(trace: &Trace, from: usize) -> Vec<String> {
    trace.events()[from..]
        .iter()
        .filter(|e| e.call == CallKind::S2)
        .flat_map(|e| match &e.detail {
            CallDetail::S2 { pairs, .. } => pairs.iter().map(|p| p.result.clone()).collect(),
            _ => vec![],
        })
        .collect()
}

/// Results on a page, and how many came from `app`.
fn results_from(body: &str, app: &str) -> (usize, usize) {
    let page = Page::parse(body);
    (page.results().len(), page.results_from(app))
}

const SHEETS_RECONCILING: &str =
    "Sheets is reconciling: its results are temporarily out of the search until it re-announces.";

fn says_no_results(body: &str) -> bool {
    let lower = body.to_lowercase();
    lower.contains("no results") || lower.contains("no passage matched")
}

fn docs_fill_the_page(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS + DOCS_CHUNKS).await?;
        let q = memoria::testkit::form_encode(&canary);
        let mut docs_seen = 0;
        for page in 1..=3u32 {
            let body = m
                .get(OWNERS[0], &format!("/?q={q}&page={page}"))
                .await
                .response
                .body;
            let read = Page::parse(&body);
            let (results, docs) = (read.results().len(), read.results_from("docs"));
            let want = if page <= 2 { PAGE_SIZE_RESULTS } else { 0 };
            check(
                results == want && docs == want,
                format!("page {page} renders exactly {want} results, all from Docs"),
                format!("{results} results, {docs} from Docs"),
            )?;
            docs_seen += docs;
            let lines = read.reconciling();
            check(
                lines == [SHEETS_RECONCILING],
                format!("page {page} carries exactly one line naming Sheets as reconciling"),
                format!("{lines:?}"),
            )?;
            let withheld = read.withheld();
            check(
                withheld.is_empty(),
                format!("page {page} withholds nothing: Sheets was never ranked"),
                format!("{withheld:?}"),
            )?;
            check(
                !says_no_results(&body),
                format!("page {page} never says there are no results"),
                "it does",
            )?;
        }
        check(
            docs_seen == DOCS_CHUNKS,
            "the pages show every Docs chunk",
            format!("{docs_seen}"),
        )
    })
}

fn docs_removed(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, false);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS).await?;
        let body = m.search(OWNERS[0], &canary).await.response.body;
        let lines = Page::parse(&body).reconciling();
        check(
            lines == [SHEETS_RECONCILING],
            "the page names Sheets as reconciling, once",
            format!("{lines:?}"),
        )?;
        check(
            !says_no_results(&body),
            "the page never says 'no results' or 'No passage matched.'",
            "it does",
        )?;
        let (results, _) = results_from(&body, "sheets");
        check(
            results == 0,
            "no Sheets passage is ranked while it reconciles",
            format!("{results} results"),
        )
    })
}

/// The report of `app`'s sync among `reports`, if it synced.
fn report_of(reports: &[SyncReport], app: &str) -> Option<SyncReport> {
    reports.iter().find(|r| r.app == app).cloned()
}

/// The report of Sheets' sync among `reports`, if it synced.
fn sheets_report(reports: &[SyncReport]) -> Option<SyncReport> {
    report_of(reports, "sheets")
}

fn failed_announce(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        let tombstones_before =
            restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS + DOCS_CHUNKS).await?;
        for fault in [
            TruncateAnnounce::NoClose,
            TruncateAnnounce::WrongCount(1),
            TruncateAnnounce::WrongCount(-1),
        ] {
            sheets.faults().set_truncate_announce(Some(fault));
            let report =
                sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
            check(
                matches!(report.reannounce, Some(ReannounceStatus::Failed(_)))
                    && report.retired == 0,
                format!("the announce with {fault:?} fails and retires nothing"),
                format!("{:?}, {} retired", report.reannounce, report.retired),
            )?;
            let (chunks, tombstones, marked, a, b) = held(&m)?;
            check(
                chunks == (SHEETS_CHUNKS + DOCS_CHUNKS) as u64
                    && tombstones == tombstones_before
                    && a.as_deref() == Some("r7")
                    && b
                    && marked,
                format!(
                    "after {fault:?}: nothing deleted, (a) at r7, (b) held, Sheets still marked"
                ),
                format!(
                    "{chunks} chunks, {} new tombstones, (a) at {a:?}, (b) held: {b}, marked: {marked}",
                    tombstones - tombstones_before
                ),
            )?;
        }
        let body = m.search(OWNERS[0], &canary).await.response.body;
        let (results, docs) = results_from(&body, "docs");
        check(
            results == PAGE_SIZE_RESULTS && docs == PAGE_SIZE_RESULTS,
            "Sheets stays out of the ranking after a failed announce",
            format!("{results} results, {docs} from Docs"),
        )
    })
}

fn completed_announce(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        let tombstones_before =
            restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS + DOCS_CHUNKS).await?;
        sheets.faults().set_truncate_announce(None);
        let before = trace.events().len();
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        check(
            report.reannounce == Some(ReannounceStatus::Completed) && report.retired == 1,
            "the complete announce is applied and retires one item",
            format!("{:?}, {} retired", report.reannounce, report.retired),
        )?;
        let (chunks, tombstones, marked, a, b) = held(&m)?;
        check(
            !b && tombstones == tombstones_before + 1,
            "(b), which the announce omits, is retired through one tombstone",
            format!(
                "(b) held: {b}, {} new tombstones",
                tombstones - tombstones_before
            ),
        )?;
        check(
            a.as_deref() == Some("r5") && chunks == (SHEETS_CHUNKS + DOCS_CHUNKS - 1) as u64,
            "(a) is held at the announced r5, its chunks replaced (99 chunks live)",
            format!("(a) at {a:?}, {chunks} chunks"),
        )?;
        let fetched_r5 = trace.events()[before..].iter().any(|e| {
            e.call == CallKind::S3
                && matches!(&e.detail, CallDetail::S3 { item_id: Some(i), revision: Some(r), served: true, .. } if i == ITEM_AHEAD && r == "r5")
        });
        check(
            fetched_r5,
            "(a) is refetched through S3 at r5",
            "no S3 fetch of (a) at r5",
        )?;
        check(!marked, "the mark is cleared", "Sheets is still marked")?;
        let body = m.search(OWNERS[0], &canary).await.response.body;
        check(
            body.contains("tagrev5") && !body.contains("tagrev7"),
            "the page shows (a)'s r5 body, not r7's",
            "it does not",
        )?;
        check(
            Page::parse(&body).reconciling().is_empty() && results_from(&body, "sheets").1 > 0,
            "Sheets ranks again, with no reconciling line",
            format!("{:?}", Page::parse(&body).reconciling()),
        )
    })
}

/// The Docs item beside (a): restored a revision behind memoria in
/// `27/completion-clears-its-own-mark`, revised one past it in
/// `27/only-ahead-marks-and-only-its-app`.
const ITEM_DOCS_AHEAD: &str = "dc-0";

/// Whether memoria holds `app` marked for re-announce.
fn marked(m: &Memoria, app: &str) -> Result<bool, String> {
    let instance = m.state().instance();
    let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
    Ok(guard
        .store()
        .sibling_state(app)
        .map_err(|e| e.to_string())?
        .reannounce)
}

/// Checks that memoria holds (Sheets, Docs) marked for re-announce as
/// `want`, which `what` says.
fn marks_are(m: &Memoria, want: (bool, bool), what: &str) -> Result<(), String> {
    let both = (marked(m, "sheets")?, marked(m, "docs")?);
    check(
        both == want,
        what,
        format!("(Sheets, Docs) marked: {both:?}"),
    )
}

/// The page Ana's search for `canary` renders next.
async fn next_page(m: &mut Memoria, canary: &str) -> Page {
    Page::parse(&m.search(OWNERS[0], canary).await.response.body)
}

/// Revises Docs' [`ITEM_DOCS_AHEAD`] to r2 before memoria first pulls it:
/// an AHEAD body, so it ranks beside (a).
fn docs_item_at_r2(docs: &FakeSibling, canary: &str) {
    docs.model().with(|m| {
        m.revise(ITEM_DOCS_AHEAD, "Forecast", &ahead_body(canary, 2))
            .expect("revise");
    });
}

fn completion_clears_its_own_mark(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let docs = world.fake("docs").clone();
    docs_item_at_r2(&docs, &canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        restore_sheets(&sheets);
        docs.model().with(|dm| {
            dm.restore_item_to(ITEM_DOCS_AHEAD, "r1")
                .expect("restore the Docs item");
        });
        for f in [&sheets, &docs] {
            f.faults()
                .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        }
        m.search(OWNERS[0], &canary).await;
        m.settle_follow_ups().await;
        marks_are(
            &m,
            (true, true),
            "one search's AHEAD answers mark Sheets and Docs",
        )?;
        sheets.faults().set_truncate_announce(None);
        let reports = m.question_pulls(OWNERS[0]).await;
        let (s, d) = (
            report_of(&reports, "sheets").ok_or("no Sheets sync")?,
            report_of(&reports, "docs").ok_or("no Docs sync")?,
        );
        check(
            s.reannounce == Some(ReannounceStatus::Completed)
                && matches!(d.reannounce, Some(ReannounceStatus::Failed(_))),
            "Sheets' announce completes and Docs' fails",
            format!("Sheets {:?}, Docs {:?}", s.reannounce, d.reannounce),
        )?;
        marks_are(
            &m,
            (false, true),
            "Sheets' completion clears its own mark only: Docs stays marked",
        )?;
        let page = next_page(&mut m, &canary).await;
        let lines = page.reconciling();
        check(
            lines.len() == 1
                && lines[0].starts_with("Docs is reconciling")
                && page.results_from("docs") == 0
                && page.results_from("sheets") > 0,
            "the page ranks Sheets, shows no Docs passage and names Docs alone as reconciling",
            format!(
                "{lines:?}; {} from Sheets, {} from Docs",
                page.results_from("sheets"),
                page.results_from("docs")
            ),
        )
    })
}

fn only_ahead_marks_and_only_its_app(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let docs = world.fake("docs").clone();
    let trace = world.trace().clone();
    docs_item_at_r2(&docs, &canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        restore_sheets(&sheets);
        docs.model().with(|dm| {
            dm.revise(ITEM_DOCS_AHEAD, "Forecast", &ahead_body(&canary, 3))
                .expect("revise the Docs item past memoria's");
        });
        // Neither announce can complete, so a mark made stands to be seen.
        for f in [&sheets, &docs] {
            f.faults()
                .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        }
        let before = trace.events().len();
        m.search(OWNERS[0], &canary).await;
        m.settle_follow_ups().await;
        let answered = sent_values(&trace, before);
        check(
            answered.iter().any(|v| v == "AHEAD") && answered.iter().any(|v| v == "STALE"),
            "the search's round meets (a)'s AHEAD and the Docs item's STALE (presence)",
            format!("{answered:?}"),
        )?;
        marks_are(
            &m,
            (true, false),
            "Sheets, which answered AHEAD, is marked; Docs, which answered STALE and VISIBLE, is not",
        )?;
        let page = next_page(&mut m, &canary).await;
        check(
            page.reconciling() == [SHEETS_RECONCILING] && page.results_from("docs") > 0,
            "the next page names Sheets alone as reconciling and shows Docs passages",
            format!(
                "{:?}; {} from Docs",
                page.reconciling(),
                page.results_from("docs")
            ),
        )
    })
}

fn feed_outage_marks_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let docs = world.fake("docs").clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        // Docs' announce cannot complete, so a mark made stands to be seen.
        docs.faults()
            .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S1));
        let reports = m.question_pulls(OWNERS[0]).await;
        docs.faults().set_outage_for(None, None);
        let d = report_of(&reports, "docs").ok_or("no Docs sync")?;
        check(
            d.feed_error.is_some(),
            "Docs' feed answers 503 on the pull (presence)",
            format!("{d:?}"),
        )?;
        marks_are(
            &m,
            (false, false),
            "a feed that answered 503 marks nothing: only a 410 asks for a re-announce",
        )?;
        let page = next_page(&mut m, &canary).await;
        check(
            page.reconciling().is_empty() && !page.results().is_empty(),
            "the next page names no source reconciling and shows results",
            format!("{:?}; {} results", page.reconciling(), page.results().len()),
        )
    })
}

/// Page 1 for the fixture's query: (results, from Docs, reconciling lines).
async fn page_one(m: &mut Memoria, canary: &str) -> (usize, usize, Vec<String>) {
    let body = m.search(OWNERS[0], canary).await.response.body;
    let (results, docs) = results_from(&body, "docs");
    (results, docs, Page::parse(&body).reconciling())
}

fn mark_survives_restart(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS + DOCS_CHUNKS).await?;
        let before = page_one(&mut m, &canary).await;
        check(
            before
                == (
                    PAGE_SIZE_RESULTS,
                    PAGE_SIZE_RESULTS,
                    vec![SHEETS_RECONCILING.to_string()],
                ),
            "before the restart: 20 Docs results and the reconciling line",
            format!("{before:?}"),
        )?;
        m.restart().await;
        let (_, _, marked, a, _) = held(&m)?;
        check(
            marked && a.as_deref() == Some("r7"),
            "after the restart Sheets is still marked, (a) still held at r7",
            format!("marked: {marked}, (a) at {a:?}"),
        )?;
        let after = page_one(&mut m, &canary).await;
        check(
            after == before,
            "after the restart page 1 is still 20 Docs results and the one reconciling line",
            format!("{after:?}"),
        )
    })
}

fn refetch_failure_keeps_the_mark(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS + DOCS_CHUNKS).await?;
        sheets.faults().set_truncate_announce(None);
        sheets
            .faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S3));
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        check(
            matches!(report.reannounce, Some(ReannounceStatus::Unapplied(_)))
                && report.fetch_failed >= 1,
            "the complete announce whose S3 refetch fails is not applied",
            format!(
                "{:?}, {} fetches failed",
                report.reannounce, report.fetch_failed
            ),
        )?;
        let (_, _, marked, a, _) = held(&m)?;
        check(
            marked && a.as_deref() == Some("r7"),
            "Sheets stays marked and (a) is not taken to be at r5",
            format!("marked: {marked}, (a) at {a:?}"),
        )?;
        let (results, docs, lines) = page_one(&mut m, &canary).await;
        check(
            results == PAGE_SIZE_RESULTS
                && docs == PAGE_SIZE_RESULTS
                && lines == [SHEETS_RECONCILING],
            "Sheets stays out of the ranking, named as reconciling",
            format!("{results} results, {docs} from Docs, {lines:?}"),
        )?;
        sheets.faults().set_outage_for(None, None);
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        let (_, _, marked, a, _) = held(&m)?;
        check(
            report.reannounce == Some(ReannounceStatus::Completed)
                && !marked
                && a.as_deref() == Some("r5"),
            "once S3 answers, the next sync completes: mark cleared, (a) at r5",
            format!("{:?}, marked: {marked}, (a) at {a:?}", report.reannounce),
        )
    })
}

/// A Sheets item memoria holds at r1 that Sheets revises after its restore.
const ITEM_NEWER: &str = "sh-1";
/// A Sheets item created after its restore, which memoria never held.
const ITEM_NEW: &str = "sh-new";

fn announce_brings_new_and_newer(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        restored_and_marked(&mut m, &sheets, &canary, SHEETS_CHUNKS + DOCS_CHUNKS).await?;
        let revision_of = |m: &Memoria, item: &str| -> Result<Option<String>, String> {
            let instance = m.state().instance();
            let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
            Ok(guard
                .store()
                .sibling_document("sheets", item)
                .map_err(|e| e.to_string())?
                .and_then(|d| d.provenance)
                .map(|p| p.revision))
        };
        let (newer, new) = (revision_of(&m, ITEM_NEWER)?, revision_of(&m, ITEM_NEW)?);
        check(
            newer.as_deref() == Some("r1") && new.is_none(),
            "before the announce memoria holds the revised item at r1 and not the new one",
            format!("revised item at {newer:?}, new item at {new:?}"),
        )?;
        let newer_rev = sheets.model().with(|mm| {
            mm.add_item(ITEM_NEW, Rung::Team, "Row", &sheets_body(&canary, 1000))
                .expect("item");
            mm.revise(ITEM_NEWER, "Row", &sheets_body(&canary, 1001))
                .expect("revise")
        });
        sheets.faults().set_truncate_announce(None);
        let before = trace.events().len();
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        check(
            report.reannounce == Some(ReannounceStatus::Completed),
            "the complete announce is applied",
            format!("{:?}", report.reannounce),
        )?;
        let (a, newer, new) = (
            revision_of(&m, ITEM_AHEAD)?,
            revision_of(&m, ITEM_NEWER)?,
            revision_of(&m, ITEM_NEW)?,
        );
        check(
            a.as_deref() == Some("r5")
                && newer.as_deref() == Some(newer_rev.as_str())
                && new.as_deref() == Some("r1"),
            format!(
                "one announce replaces both ways: (a) back to r5, the revised item forward to {newer_rev}, the new item held at r1"
            ),
            format!("(a) at {a:?}, revised item at {newer:?}, new item at {new:?}"),
        )?;
        let fetched: Vec<String> = trace.events()[before..]
            .iter()
            .filter(|e| e.call == CallKind::S3)
            .filter_map(|e| match &e.detail {
                CallDetail::S3 {
                    item_id: Some(i),
                    served: true,
                    ..
                } => Some(i.clone()),
                _ => None,
            })
            .collect();
        check(
            [ITEM_AHEAD, ITEM_NEWER, ITEM_NEW]
                .iter()
                .all(|i| fetched.iter().any(|f| f == i)),
            "(a), the revised item and the new item are each fetched through S3",
            format!("S3 served {} fetches", fetched.len()),
        )
    })
}

/// The document id memoria holds for Sheets' item `item`.
fn sheets_document_id(m: &Memoria, item: &str) -> Result<String, String> {
    let instance = m.state().instance();
    let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
    guard
        .store()
        .sibling_document("sheets", item)
        .map_err(|e| e.to_string())?
        .map(|d| d.id)
        .ok_or_else(|| format!("memoria holds no document for {item}"))
}

const SHEETS_AHEAD_ONE: &str = "Sheets is behind the version memoria holds of 1 result, as after a restore; withheld until Sheets re-announces. Nothing was deleted.";

fn document_page_ahead_marks(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let (chunks_before, tombstones_before, marked_before, a, _) = held(&m)?;
        check(
            !marked_before && a.as_deref() == Some("r7"),
            "before the restore Sheets is unmarked and (a) is held at r7",
            format!("marked {marked_before}, (a) at {a:?}"),
        )?;
        let id = sheets_document_id(&m, ITEM_AHEAD)?;
        // Presence: (a)'s page renders while Sheets answers VISIBLE.
        let shown = m.get(OWNERS[0], &format!("/documents/{id}")).await.response;
        check(
            shown.status == 200 && shown.body.contains("tagrev7"),
            "(a)'s document page renders at r7 before the restore",
            format!("status {}", shown.status),
        )?;
        restore_sheets(&sheets);
        sheets
            .faults()
            .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        let page = m.get(OWNERS[0], &format!("/documents/{id}")).await.response;
        m.settle_follow_ups().await;
        check(
            page.status == 503
                && !page.body.contains("tagrev")
                && Page::parse(&page.body).withheld() == [SHEETS_AHEAD_ONE],
            format!("(a)'s page is withheld (503) with exactly {SHEETS_AHEAD_ONE:?}"),
            format!(
                "status {}, lines {:?}",
                page.status,
                Page::parse(&page.body).withheld()
            ),
        )?;
        let (chunks, tombstones, marked, a, b) = held(&m)?;
        check(
            marked,
            "the document page's AHEAD marks Sheets for re-announce",
            "Sheets is not marked",
        )?;
        check(
            chunks == chunks_before
                && tombstones == tombstones_before
                && a.as_deref() == Some("r7")
                && b,
            "nothing deleted: the same chunks, no new tombstone, (a) held at r7, (b) held",
            format!("{chunks} chunks, tombstone seq {tombstones}, (a) at {a:?}, (b) held: {b}"),
        )?;
        let results = m.search(OWNERS[0], &canary).await.response.body;
        check(
            Page::parse(&results).reconciling() == [SHEETS_RECONCILING],
            "the next results page names Sheets as reconciling",
            format!("{:?}", Page::parse(&results).reconciling()),
        )
    })
}

fn document_page_ahead_reannounces(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let id = sheets_document_id(&m, ITEM_AHEAD)?;
        restore_sheets(&sheets);
        let before = trace.events().len();
        let page = m.get(OWNERS[0], &format!("/documents/{id}")).await.response;
        check(
            page.status == 503 && Page::parse(&page.body).withheld() == [SHEETS_AHEAD_ONE],
            "(a)'s page is withheld with the AHEAD line",
            format!(
                "status {}, lines {:?}",
                page.status,
                Page::parse(&page.body).withheld()
            ),
        )?;
        let settled = m.settle_follow_ups().await;
        let announced = trace.events()[before..]
            .iter()
            .any(|e| e.call == CallKind::S1a);
        check(
            announced && settled.iter().any(|r| r.app == "sheets"),
            "the document page's AHEAD starts Sheets' re-announce, and settling waits for it",
            format!(
                "S1a called: {announced}, settled apps {:?}",
                settled.iter().map(|r| &r.app).collect::<Vec<_>>()
            ),
        )?;
        let (_, _, marked, a, _) = held(&m)?;
        check(
            !marked && a.as_deref() == Some("r5"),
            "the completed announce cleared the mark and (a) is held at r5",
            format!("marked {marked}, (a) at {a:?}"),
        )?;
        let body = m.search(OWNERS[0], &canary).await.response.body;
        check(
            Page::parse(&body).reconciling().is_empty() && results_from(&body, "sheets").1 > 0,
            "the next results page ranks Sheets again, with no reconciling line",
            format!("reconciling {:?}", Page::parse(&body).reconciling()),
        )
    })
}

/// A Sheets item memoria never holds before the case's restore.
const ITEM_LATE: &str = "sh-late";

fn late_body(canary: &str, n: usize) -> String {
    format!("# Late\n\nThe {canary} latecomer, lateword{n}.\n")
}

/// S3 fetches of `item` after trace event `from`: (revision, served).
fn s3_fetches(trace: &Trace, from: usize, item: &str) -> Vec<(String, bool)> {
    trace.events()[from..]
        .iter()
        .filter(|e| e.call == CallKind::S3)
        .filter_map(|e| match &e.detail {
            CallDetail::S3 {
                item_id: Some(i),
                revision: Some(r),
                served,
                ..
            } if i == item => Some((r.clone(), *served)),
            _ => None,
        })
        .collect()
}

/// Adds [`ITEM_LATE`]: team-visible at r1 for one feed row, then
/// link-shared (a `gone` row) and revised twice, so memoria's warm-up meets
/// a 404 the feed explains and holds nothing of it.
fn add_late_item(mm: &mut Model, canary: &str) {
    mm.add_item(ITEM_LATE, Rung::Team, "Late", &late_body(canary, 1))
        .expect("item");
    mm.set_link_shared(ITEM_LATE, true).expect("link-shared");
    for n in 2..=3 {
        mm.revise(ITEM_LATE, "Late", &late_body(canary, n))
            .expect("revise");
    }
}

fn lost_revision_named_by_the_feed(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    sheets.model().with(|mm| add_late_item(mm, &canary));
    run_world(&world, move |mut m| async move {
        let warm = sheets_report(&m.warmed_up().await?).ok_or("no Sheets warm-up")?;
        let (chunks_before, tombstones_before, marked, _, _) = held(&m)?;
        let warm_up = s3_fetches(&trace, 0, ITEM_LATE);
        let announced = trace.events().iter().any(|e| e.call == CallKind::S1a);
        check(
            warm_up == [("r1".to_string(), false)]
                && warm.unexplained == 0
                && warm.reannounce.is_none()
                && !announced
                && !marked,
            "the warm-up's S3 404 of the item is explained by the gone row after it: Sheets is neither marked nor re-announced",
            format!(
                "S3 fetches of the item {warm_up:?}, {} unexplained, re-announce {:?}, S1a called: {announced}, marked: {marked}",
                warm.unexplained, warm.reannounce
            ),
        )?;
        sheets.model().with(|mm| {
            mm.set_link_shared(ITEM_LATE, false).expect("team-visible");
            mm.restore_item_to(ITEM_LATE, "r1").expect("restore");
        });
        let before = trace.events().len();
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        let fetched = s3_fetches(&trace, before, ITEM_LATE);
        check(
            fetched.first() == Some(&("r3".to_string(), false))
                && fetched.last() == Some(&("r1".to_string(), true)),
            "S3 404s the r3 the feed named, then serves r1, the revision the announce names",
            format!("S3 fetches of the item {fetched:?}"),
        )?;
        let reads = feed_reads(&trace, before, sheets.host());
        check(
            reads == 2,
            "the pull reads Sheets' feed twice: to its head, then once more from it",
            format!("{reads} S1 reads"),
        )?;
        check(
            report.unexplained == 1
                && report.reannounce == Some(ReannounceStatus::Completed)
                && report.retired == 0,
            "the one unexplained 404 marks Sheets and its re-announce completes in the same pull, retiring nothing",
            format!(
                "{} unexplained, re-announce {:?}, {} retired",
                report.unexplained, report.reannounce, report.retired
            ),
        )?;
        let (chunks, tombstones, marked, _, _) = held(&m)?;
        let late = sheets_document_id(&m, ITEM_LATE);
        check(
            late.is_ok()
                && !marked
                && chunks == chunks_before + 1
                && tombstones == tombstones_before,
            "the item is held, the mark is cleared, one chunk more and no tombstone",
            format!(
                "item held: {}, marked {marked}, {chunks} chunks (before {chunks_before}), tombstone seq {tombstones} (before {tombstones_before})",
                late.is_ok()
            ),
        )?;
        let body = m.search(OWNERS[0], "lateword1").await.response.body;
        check(
            results_from(&body, "sheets").1 == 1 && Page::parse(&body).reconciling().is_empty(),
            "Ana finds the item at r1 by its word, with no reconciling line",
            format!(
                "{} Sheets results, reconciling {:?}",
                results_from(&body, "sheets").1,
                Page::parse(&body).reconciling()
            ),
        )
    })
}

/// The latency every Sheets answer carries while a case changes Sheets
/// between two of memoria's calls: far longer than the trace watch's tick.
const WATCHED_LATENCY_MS: u64 = 500;
/// How often, in simulated ms, [`pulls_watched`] looks at the trace.
const WATCH_TICK_MS: u64 = 5;

/// Has Ana's question pull Sheets (as [`Memoria::question_pulls`]) while
/// watching the trace after event `from`: at the first event `seen`
/// accepts, `then` runs, once. Returns the pulls' reports and whether
/// `then` ran. The watch only observes the fakes' trace and changes a fake.
async fn pulls_watched(
    m: &mut Memoria,
    trace: &Trace,
    from: usize,
    seen: impl Fn(&TraceEvent) -> bool,
    then: impl FnOnce(),
) -> (Vec<SyncReport>, bool) {
    let fired = std::cell::Cell::new(false);
    let watch = async {
        while !trace.with(|all| all.get(from..).is_some_and(|new| new.iter().any(&seen))) {
            tokio::time::sleep(std::time::Duration::from_millis(WATCH_TICK_MS)).await;
        }
        then();
        fired.set(true);
        std::future::pending::<()>().await;
    };
    let reports = tokio::select! {
        reports = m.question_pulls(OWNERS[0]) => reports,
        () = watch => Vec::new(),
    };
    (reports, fired.get())
}

/// The revision memoria holds of Sheets' item `item`, if it holds it.
fn held_revision(m: &Memoria, item: &str) -> Result<Option<String>, String> {
    let instance = m.state().instance();
    let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
    Ok(guard
        .store()
        .sibling_document("sheets", item)
        .map_err(|e| e.to_string())?
        .and_then(|d| d.provenance)
        .map(|p| p.revision))
}

/// Re-announces opened (S1a first pages) after trace event `from`.
fn announces_opened(trace: &Trace, from: usize) -> usize {
    trace
        .since(from)
        .iter()
        .filter(|e| {
            matches!(
                e.detail,
                CallDetail::S1a {
                    first_page: true,
                    ..
                }
            )
        })
        .count()
}

/// S1 reads answered by `host` after trace event `from`.
fn feed_reads(trace: &Trace, from: usize, host: &str) -> usize {
    trace
        .since(from)
        .iter()
        .filter(|e| e.call == CallKind::S1 && e.callee == host)
        .count()
}

/// True for an S1 answer carrying a row about `item`.
fn names_in_feed(e: &TraceEvent, item: &str) -> bool {
    matches!(&e.detail, CallDetail::S1 { rows, .. } if rows.iter().any(|r| r.item_id == item))
}

/// True for S3's answer to `item` at `revision`.
fn s3_answered(e: &TraceEvent, item: &str, revision: &str) -> bool {
    matches!(
        &e.detail,
        CallDetail::S3 { item_id: Some(i), revision: Some(r), .. } if i == item && r == revision
    )
}

/// A held item restored past a revision the feed named, then revised again.
const ITEM_MOVED: &str = "sh-moved";
/// A held item that leaves team-visibility while memoria fetches it.
const ITEM_LEAVING: &str = "sh-leaving";

fn later_row_explains_a_404(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    sheets.model().with(|mm| {
        for item in [ITEM_MOVED, ITEM_LEAVING] {
            mm.add_item(item, Rung::Team, "Late", &late_body(&canary, 1))
                .expect("item");
        }
    });
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let held_before = (
            held_revision(&m, ITEM_MOVED)?,
            held_revision(&m, ITEM_LEAVING)?,
        );
        check(
            held_before == (Some("r1".to_string()), Some("r1".to_string())),
            "after the warm-up memoria holds both items at r1",
            format!("{held_before:?}"),
        )?;
        // Rows: the moved item's r2 (lost to a restore before memoria
        // fetches it) and r3; the leaving item's r2.
        let moved_to = sheets.model().with(|mm| {
            mm.revise(ITEM_MOVED, "Late", &late_body(&canary, 2))
                .expect("revise");
            mm.restore_item_to(ITEM_MOVED, "r1").expect("restore");
            let moved_to = mm
                .revise(ITEM_MOVED, "Late", &late_body(&canary, 3))
                .expect("revise");
            mm.revise(ITEM_LEAVING, "Late", &late_body(&canary, 2))
                .expect("revise");
            moved_to
        });
        // S3 answers late; the leaving item goes link-shared as soon as
        // memoria has read the feed's head, before S3 reads its r2.
        sheets.faults().set_slow(Some(Slow {
            latency_ms: WATCHED_LATENCY_MS,
            only: Some(CallKind::S3),
        }));
        let before = trace.len();
        let model = sheets.model();
        let (reports, fired) = pulls_watched(
            &mut m,
            &trace,
            before,
            |e| names_in_feed(e, ITEM_LEAVING),
            move || {
                model
                    .with(|mm| mm.set_link_shared(ITEM_LEAVING, true))
                    .expect("link-shared");
            },
        )
        .await;
        sheets.faults().set_slow(None);
        let report = sheets_report(&reports).ok_or("no Sheets sync")?;
        let answers = trace.since(before);
        let not_found = |item: &str, revision: &str| {
            answers.iter().any(|e| {
                s3_answered(e, item, revision)
                    && matches!(e.detail, CallDetail::S3 { served: false, .. })
            })
        };
        check(
            fired && not_found(ITEM_MOVED, "r2") && not_found(ITEM_LEAVING, "r2"),
            "S3 404s the moved item's r2 and, once it went link-shared mid-pull, the leaving item's r2",
            format!(
                "switched: {fired}; 404s: moved r2 {}, leaving r2 {}",
                not_found(ITEM_MOVED, "r2"),
                not_found(ITEM_LEAVING, "r2")
            ),
        )?;
        let (_, _, marked, _, _) = held(&m)?;
        let opened = announces_opened(&trace, before);
        check(
            report.unexplained == 0
                && report.reannounce.is_none()
                && opened == 0
                && !marked
                && report.retired == 0,
            "later rows explain both 404s: Sheets is neither marked nor re-announced",
            format!(
                "{} unexplained, re-announce {:?}, {opened} announces opened, marked: {marked}, {} retired",
                report.unexplained, report.reannounce, report.retired
            ),
        )?;
        let held_after = (
            held_revision(&m, ITEM_MOVED)?,
            held_revision(&m, ITEM_LEAVING)?,
        );
        check(
            held_after == (Some(moved_to.clone()), None) && report.deleted == 1,
            format!(
                "the moved item is held at {moved_to}; the leaving item is deleted by the gone row the one more read found"
            ),
            format!("held {held_after:?}, {} deleted", report.deleted),
        )
    })
}

/// A held item whose revision is named on the page after the lost one's.
const ITEM_PAGE_TWO: &str = "sh-1";
/// A held item revised once to make up the first page.
const ITEM_PAGE_ONE: &str = "sh-2";
/// An item memoria never holds (link-shared once added): its rows fill a page.
const ITEM_FILLER: &str = "sh-filler";

fn lost_revision_survives_a_failed_page(ctx: &mut Ctx) -> Result<(), Failure> {
    let (world, canary) = fixture(ctx, true);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    sheets.model().with(|mm| {
        add_late_item(mm, &canary);
        mm.add_item(ITEM_FILLER, Rung::Team, "Filler", &late_body(&canary, 0))
            .expect("item");
        mm.set_link_shared(ITEM_FILLER, true).expect("link-shared");
    });
    run_world(&world, move |mut m| async move {
        let warm = sheets_report(&m.warmed_up().await?).ok_or("no Sheets warm-up")?;
        check(
            warm.unexplained == 0 && warm.reannounce.is_none(),
            "the warm-up's 404s are explained by the gone rows after them",
            format!(
                "{} unexplained, re-announce {:?}",
                warm.unexplained, warm.reannounce
            ),
        )?;
        // From memoria's cursor: filler rows, one revision of a held item
        // and, last on the page, the row naming r3, which a partial restore
        // then loses; the next page names a revision of another held item.
        let (from, rows, last) = sheets.model().with(|mm| {
            let from = mm.events().len();
            for _ in 0..(S1_ROWS_PER_PAGE - 2) / 2 {
                mm.set_link_shared(ITEM_FILLER, false).expect("team");
                mm.set_link_shared(ITEM_FILLER, true).expect("link-shared");
            }
            mm.revise(ITEM_PAGE_ONE, "Row", &sheets_body(&canary, 2002))
                .expect("revise");
            mm.set_link_shared(ITEM_LATE, false).expect("team-visible");
            mm.restore_item_to(ITEM_LATE, "r1").expect("restore");
            let last = mm
                .events()
                .last()
                .map(|e| (e.item_id.clone(), e.revision.clone()));
            mm.revise(ITEM_PAGE_TWO, "Row", &sheets_body(&canary, 2003))
                .expect("revise");
            (from, mm.events().len() - from, last)
        });
        check(
            rows == S1_ROWS_PER_PAGE + 1 && last == Some((ITEM_LATE.to_string(), "r3".to_string())),
            "the row naming the lost r3 is the last of a full S1 page, and one row follows it",
            format!(
                "{rows} rows after memoria's cursor (at {from}); the page's last names {last:?}"
            ),
        )?;
        // Every answer late, and S3 down from the 404 of r3 on.
        sheets.faults().set_slow(Some(Slow {
            latency_ms: WATCHED_LATENCY_MS,
            only: None,
        }));
        let before = trace.len();
        let faults = sheets.faults();
        let (reports, fired) = pulls_watched(
            &mut m,
            &trace,
            before,
            |e| s3_answered(e, ITEM_LATE, "r3"),
            move || faults.set_outage_for(Some(Outage::Status(503)), Some(CallKind::S3)),
        )
        .await;
        sheets.faults().clear();
        let report = sheets_report(&reports).ok_or("no Sheets sync")?;
        let (_, _, marked, _, _) = held(&m)?;
        let opened = announces_opened(&trace, before);
        check(
            fired
                && report.fetch_failed > 0
                && report.reannounce.is_none()
                && opened == 0
                && !marked,
            "S3, down from r3's 404 on, fails the next page's fetch: the pass marks nothing and re-announces nothing",
            format!(
                "S3 switched off: {fired}; {} failed fetches, re-announce {:?}, {opened} announces opened, marked: {marked}",
                report.fetch_failed, report.reannounce
            ),
        )?;
        // S3 is back; every announce is truncated.
        sheets
            .faults()
            .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        let before = trace.len();
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        let (_, _, marked, _, _) = held(&m)?;
        let again = s3_fetches(&trace, before, ITEM_LATE);
        check(
            again.first() == Some(&("r3".to_string(), false))
                && report.unexplained == 1
                && matches!(report.reannounce, Some(ReannounceStatus::Failed(_)))
                && marked,
            "the next pull reads the row again: S3 404s r3, nothing explains it, Sheets is marked and its truncated announce fails",
            format!(
                "S3 fetches of the item {again:?}, {} unexplained, re-announce {:?}, marked: {marked}",
                report.unexplained, report.reannounce
            ),
        )?;
        let before = trace.len();
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        let opened = announces_opened(&trace, before);
        check(
            opened == 1 && report.rows == 0,
            "while the announce fails, a pull re-announces once and reads no feed row again: the mark stands for the lost revision",
            format!("{opened} announces opened, {} feed rows read", report.rows),
        )?;
        sheets.faults().set_truncate_announce(None);
        let report = sheets_report(&m.question_pulls(OWNERS[0]).await).ok_or("no Sheets sync")?;
        let (_, _, marked, _, _) = held(&m)?;
        let late = held_revision(&m, ITEM_LATE)?;
        let two = held_revision(&m, ITEM_PAGE_TWO)?;
        check(
            report.reannounce == Some(ReannounceStatus::Completed)
                && report.retired == 0
                && !marked
                && late.as_deref() == Some("r1")
                && two.as_deref() == Some("r2"),
            "once the announce completes the lost item is held at r1, the second page's item at r2, and nothing is retired",
            format!(
                "re-announce {:?}, {} retired, marked: {marked}, the item at {late:?}, the second page's at {two:?}",
                report.reannounce, report.retired
            ),
        )
    })
}
