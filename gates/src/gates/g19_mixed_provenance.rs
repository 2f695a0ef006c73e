//! Gate 19 (§10, §5.2 steps 2 to 4, §4.1): a mixed-provenance artefact needs both authorities, spans several S2 batches, and is withheld when either refuses.
//!
//! §5.2: sibling pairs go to S2 "batched, cap 256 per call, as many calls
//! as the provenance needs. VISIBLE for every pair or the artefact is
//! withheld"; memoria-owned pairs pass on admission, presence and the
//! current revision; "a mixed artefact needs both to pass … authorities
//! are ANDed". §10: "a derived artefact with one sibling source and one
//! memoria-owned source requires both, spans multiple S2 batches, and
//! withholds when either fails."
//!
//! The artefact is a topic's overview ([`crate::rigs::artefacts`]) over
//! 257 Sheets items and one upload: 258 roots, the 257 sibling pairs two
//! S2 calls (256 and 1). Roots are sorted, so the last item's pair is the
//! one in the second call; the cases refuse it there, and only there.

use memoria_simulator::{OWNERS, S2_PAIRS_PER_CALL_MAX};

use crate::rigs::artefacts::{
    item_id, record, requires_overview, search_overview, shown, tag, upload, world,
};
use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Sheets items: one more than an S2 call carries, so the roots take two.
const ITEMS: usize = S2_PAIRS_PER_CALL_MAX + 1;

/// Gate 19.
pub static GATE: Gate = Gate {
    id: "19",
    title: "Mixed-provenance artefact needs both authorities, spans several S2 batches",
    gates_md: &["Mixed-provenance artefact needs both authorities, spans several S2 batches"],
    sections: &["§10", "§5.2", "§4.1"],
    requirement: "An artefact resting on 257 sibling items and one upload is shown when S2 answers VISIBLE for every pair, asked in two calls of 256 and 1, and the upload is present at its revision; it is withheld when S2 refuses one pair, even a pair only the second call asked, and when the upload is deleted while every sibling pair passes.",
    cases: &[
        Case {
            id: "19/a-mixed-artefact-over-two-batches-is-shown-when-both-pass",
            desc: "The overview's roots are the 257 items and the upload at revision 1; Ana's search asks S2 twice (256 pairs, then 1), every answer VISIBLE, and shows the overview naming its model.",
            run: shown_when_both_pass,
        },
        Case {
            id: "19/a-refusal-only-in-the-second-batch-withholds-it",
            desc: "Sheets refuses Ana the last item only. Bea's search shows the overview (presence); Ana's search asks the refused pair in its second S2 call, gets NOT_VISIBLE there and VISIBLE for all 256 of the first, and shows no overview and no withheld notice.",
            run: refused_in_the_second_batch,
        },
        Case {
            id: "19/a-deleted-memoria-owned-root-withholds-it-while-every-sibling-pair-passes",
            desc: "The overview is shown to Ana (presence); the upload is deleted; her next search gets VISIBLE for all 257 sibling pairs and shows no overview.",
            run: withheld_when_the_upload_goes,
        },
    ],
};

/// Warms up, uploads the tagged document, waits for the artefacts, and
/// returns the upload's id.
async fn stocked(m: &mut memoria_simulator::Memoria, canary: &str) -> Result<String, String> {
    m.warmed_up().await?;
    let tag = tag(canary);
    let file = format!("# Budget #{tag}\n\nThe {canary} budget holds.\n");
    let doc = upload(m, OWNERS[0], "budget.md", &file).await?;
    m.settle_follow_ups().await;
    Ok(doc)
}

/// The pairs per S2 call, largest first: the client sends a check's
/// batches at once (§4.1), so the order they reach the fake is the
/// schedule's, not the pairs' (seed 25 brought the 1 before the 256).
fn batches(calls: &[Vec<(String, String)>]) -> Vec<usize> {
    let mut sizes: Vec<usize> = calls.iter().map(Vec::len).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    sizes
}

/// The call of `len` pairs, if exactly one has that many.
fn call_of(calls: &[Vec<(String, String)>], len: usize) -> Option<&Vec<(String, String)>> {
    let mut of = calls.iter().filter(|c| c.len() == len);
    of.next().filter(|_| of.next().is_none())
}

fn shown_when_both_pass(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _stub) = world(ctx.seed(), &canary, ITEMS);
    let trace = world.trace().clone();
    let tag = tag(&canary);
    run_world(&world, move |mut m| async move {
        let doc = stocked(&mut m, &canary).await?;
        let (_, overview) =
            record(&m, &format!("artefact:topic:{tag}")).ok_or("the overview is written")?;
        let sibling = overview
            .roots
            .iter()
            .filter(|r| r.owner == "sheets")
            .count();
        let own: Vec<_> = overview
            .roots
            .iter()
            .filter(|r| r.owner == "memoria")
            .collect();
        check(
            sibling == ITEMS && own.len() == 1 && own[0].id == doc && own[0].revision == "1",
            "the overview's roots are the 257 items and the upload at revision 1",
            format!("{sibling} sibling, {own:?}"),
        )?;
        let (page, calls) = search_overview(&mut m, &trace, OWNERS[0]).await;
        check(
            batches(&calls) == [S2_PAIRS_PER_CALL_MAX, 1]
                && calls.iter().flatten().all(|(_, v)| v == "VISIBLE"),
            "Ana's search asked S2 twice, 256 pairs then 1, all VISIBLE",
            format!("{:?}", batches(&calls)),
        )?;
        requires_overview(&page, &tag, "Ana")
    })
}

fn refused_in_the_second_batch(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let (world, _stub) = world(ctx.seed(), &canary, ITEMS);
    let last = item_id(ITEMS - 1);
    world
        .fake("sheets")
        .model()
        .with(|m| m.set_removed(&last, ana, true).expect("removed"));
    let trace = world.trace().clone();
    let tag = tag(&canary);
    run_world(&world, move |mut m| async move {
        stocked(&mut m, &canary).await?;
        let (page, _) = search_overview(&mut m, &trace, bea).await;
        requires_overview(&page, &tag, "Bea")?;
        let (page, calls) = search_overview(&mut m, &trace, ana).await;
        let (full, rest) = (call_of(&calls, S2_PAIRS_PER_CALL_MAX), call_of(&calls, 1));
        check(
            batches(&calls) == [S2_PAIRS_PER_CALL_MAX, 1]
                && full.is_some_and(|c| c.iter().all(|(_, v)| v == "VISIBLE"))
                && rest.is_some_and(|c| *c == [(last.clone(), "NOT_VISIBLE".to_string())]),
            "Ana's second S2 call alone asked the refused pair, and got NOT_VISIBLE; the first got VISIBLE for all 256",
            format!("{:?}; the call of one {rest:?}", batches(&calls)),
        )?;
        check(
            shown(&page).is_empty(),
            "Ana's page shows no overview",
            format!("{:?}", shown(&page)),
        )?;
        check(
            page.withheld().is_empty(),
            "and says nothing of it: NOT_VISIBLE is the one verdict that omits silently (§4.1), so no withheld notice",
            format!("{:?}", page.withheld()),
        )
    })
}

fn withheld_when_the_upload_goes(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let (world, _stub) = world(ctx.seed(), &canary, ITEMS);
    let trace = world.trace().clone();
    let tag = tag(&canary);
    run_world(&world, move |mut m| async move {
        let doc = stocked(&mut m, &canary).await?;
        let (page, _) = search_overview(&mut m, &trace, ana).await;
        requires_overview(&page, &tag, "Ana")?;
        m.state()
            .blocking(move |i| i.delete(&doc).map(|_| ()))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let (page, calls) = search_overview(&mut m, &trace, ana).await;
        check(
            calls.iter().flatten().count() == ITEMS
                && calls.iter().flatten().all(|(_, v)| v == "VISIBLE"),
            "every sibling pair passed S2 on Ana's search",
            format!("{:?}", batches(&calls)),
        )?;
        check(
            shown(&page).is_empty(),
            "the overview is withheld once its memoria-owned root is deleted",
            format!("{:?}", shown(&page)),
        )
    })
}
