//! Gate 9 (§10, §5.2, decision 8): derived artefacts expand to full provenance, flattened to roots, two hops included; memoria-owned roots carry a revision.
//!
//! §10: "An artefact built from an artefact built from a sibling document
//! must send that document's (id, revision) to S2, and must be withheld
//! when the sibling refuses it. Assert also that no roots entry is an
//! artefact id." And the memoria-owned revision case: "generate an
//! artefact from revision 1 of an uploaded document, re-upload the
//! document as revision 2, and assert the artefact is not served — it is
//! regenerated … Assert too that its roots entry recorded a revision at
//! all."
//!
//! End to end in the simulator with AI on against the stub provider
//! ([`crate::rigs::artefacts`]): a document whose title carries a topic
//! tag gets a summary (hop one), and the tag an overview written from the
//! summaries (hop two; with more than eight documents, from parts of
//! them, hop three). Searching "overview" finds the overview alone, so the
//! S2 calls a search makes are its roots.

use memoria::APP_MEMORIA;
use memoria_simulator::{CallDetail, OWNERS};

use crate::rigs::artefacts::{
    body, item_id, record, records, requires_overview, search_overview, shown, tag, upload, world,
};
use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 9.
pub static GATE: Gate = Gate {
    id: "9",
    title: "Derived artefacts expand to full provenance, flattened to roots, two hops",
    gates_md: &[
        "Derived artefacts expand to full provenance, flattened to roots, two hops; memoria-owned roots carry a revision",
    ],
    sections: &["§10", "§5.2"],
    requirement: "An artefact built from an artefact built from a sibling document sends that document's (id, revision) to S2 and is withheld when the sibling refuses it; no roots entry is an artefact id, at any depth; an artefact written from revision 1 of an upload is not served once revision 2 is uploaded, is written again from revision 2, and its root recorded the revision; a sibling root answered STALE withholds the artefact loudly until it is written from the new revision, and one answered AHEAD withholds it loudly and re-announces the app.",
    cases: &[
        Case {
            id: "9/a-summary-of-a-summary-is-ruled-by-its-sibling-root",
            desc: "Sheets holds one tagged item, refused to Ana. The overview (written from the item's summary) records the item's (id, revision) as its only root and the summary in built_from; Bea's search shows it, naming its model, after an S2 call that asked the item's pair (VISIBLE); Ana's search asks the same pair, gets NOT_VISIBLE, and shows no overview.",
            run: two_hops_ruled_by_the_root,
        },
        Case {
            id: "9/no-root-is-an-artefact-id-at-any-depth",
            desc: "Sheets holds ten tagged items: ten summaries, two parts and an overview (three hops). Every artefact's roots are sibling pairs only (no artefact id, no artefact owner); each part rests on its summaries' roots and the overview on all ten items, while its built_from names the two parts.",
            run: no_artefact_id_in_roots,
        },
        Case {
            id: "9/an-artefact-of-a-superseded-upload-is-not-served-and-is-rewritten",
            desc: "Ana uploads a tagged document; the overview of its summary is shown, its root (memoria, id, 1). She uploads the file again with other text (revision 2): while memoria writes it again, her search shows no overview and says it is being written again; once written, it shows the new text and not the old, its root (memoria, id, 2).",
            run: superseded_upload,
        },
        Case {
            id: "9/an-artefact-of-a-revised-sibling-item-is-withheld-while-stale-and-rewritten",
            desc: "§5.2: \"STALE or a superseded revision regenerates and does not speak\". The overview of one Sheets item is shown to Bea (presence), its root the item at r1; Sheets revises the item. Ana's search asks S2 the root's pair, gets STALE, shows no overview and says it is being written again; once memoria has fetched the item and written it again, her search shows the new text and not the old, its root the item at r2.",
            run: stale_sibling_root,
        },
        Case {
            id: "9/an-artefact-whose-sibling-is-behind-is-withheld-and-re-announces",
            desc: "§5.2: \"AHEAD withholds and re-announces\". The overview rests on a Sheets item at r2 and is shown to Ana (presence); Sheets is restored to r1. Ana's search asks S2 the root's pair, gets AHEAD, shows no overview and says the app is behind; Sheets is marked for re-announce, and the follow-up reads S1a.",
            run: ahead_sibling_root,
        },
    ],
};

fn two_hops_ruled_by_the_root(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let (world, _stub) = world(ctx.seed(), &canary, 1);
    world
        .fake("sheets")
        .model()
        .with(|m| m.set_removed(&item_id(0), ana, true).expect("removed"));
    let trace = world.trace().clone();
    let tag = tag(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.settle_follow_ups().await;
        let (_, overview) =
            record(&m, &format!("artefact:topic:{tag}")).ok_or("the overview is written")?;
        let summary_id = overview.built_from.first().cloned().unwrap_or_default();
        check(
            overview.built_from.len() == 1 && records(&m).iter().any(|(id, _)| *id == summary_id),
            "the overview was built from one artefact, the item's summary",
            format!("{:?}", overview.built_from),
        )?;
        let roots: Vec<(String, String)> = overview
            .roots
            .iter()
            .map(|r| (r.owner.clone(), r.id.clone()))
            .collect();
        check(
            roots == [("sheets".to_string(), item_id(0))]
                && overview.roots.iter().all(|r| !r.revision.is_empty()),
            "the overview's one root is the Sheets item with its revision",
            format!("{:?}", overview.roots),
        )?;
        let (page, calls) = search_overview(&mut m, &trace, bea).await;
        requires_overview(&page, &tag, "Bea")?;
        check(
            calls
                .iter()
                .flatten()
                .any(|(id, v)| *id == item_id(0) && v == "VISIBLE"),
            "Bea's search asked S2 about the item's pair (VISIBLE)",
            format!("{calls:?}"),
        )?;
        let (page, calls) = search_overview(&mut m, &trace, ana).await;
        check(
            calls
                .iter()
                .flatten()
                .any(|(id, v)| *id == item_id(0) && v == "NOT_VISIBLE"),
            "Ana's search asked S2 about the item's pair (NOT_VISIBLE)",
            format!("{calls:?}"),
        )?;
        check(
            shown(&page).is_empty() && !page.text().contains(&format!("#{tag}")),
            "Ana's page shows no artefact of the refused item, in any form",
            format!("{:?}", shown(&page)),
        )
    })
}

fn no_artefact_id_in_roots(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _stub) = world(ctx.seed(), &canary, 10);
    let tag = tag(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.settle_follow_ups().await;
        let all = records(&m);
        check(
            all.len() == 13,
            "ten summaries, two parts and an overview are written",
            format!("{}", all.len()),
        )?;
        let ids: Vec<&String> = all.iter().map(|(id, _)| id).collect();
        for (id, r) in &all {
            let r = r.as_ref().ok_or(format!("artefact {id} has a record"))?;
            check(
                !r.roots.is_empty()
                    && r.roots
                        .iter()
                        .all(|root| root.owner == "sheets" && !ids.contains(&&root.id)),
                format!("artefact {id}'s roots are Sheets pairs only, no artefact id"),
                format!("{:?}", r.roots),
            )?;
        }
        let (_, overview) =
            record(&m, &format!("artefact:topic:{tag}")).ok_or("the overview is written")?;
        let items: Vec<String> = (0..10).map(item_id).collect();
        let rooted: Vec<String> = overview.roots.iter().map(|r| r.id.clone()).collect();
        check(
            rooted == items,
            "the overview rests on all ten items",
            format!("{rooted:?}"),
        )?;
        check(
            overview.built_from.len() == 2
                && overview.built_from.iter().all(|b| {
                    all.iter().any(|(id, r)| {
                        id == b && r.as_ref().is_some_and(|r| r.built_from.len() > 1)
                    })
                }),
            "the overview's built_from names the two parts, each built from summaries",
            format!("{:?}", overview.built_from),
        )
    })
}

fn superseded_upload(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let (world, stub) = world(ctx.seed(), &canary, 0);
    let trace = world.trace().clone();
    let tag = tag(&canary);
    let old = format!("lisbonx{canary}");
    let new = format!("portox{canary}");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let first = format!("# Offsite #{tag}\n\nThe venue is {old} this year.\n");
        let doc = upload(&mut m, ana, "offsite.md", &first).await?;
        m.settle_follow_ups().await;
        let (page, _) = search_overview(&mut m, &trace, ana).await;
        requires_overview(&page, &tag, "Ana")?;
        let text = page.texts("article.artefact p").join(" ");
        check(
            text.contains(&old),
            "the overview says what revision 1 says",
            text,
        )?;
        let root = |m: &memoria_simulator::Memoria| {
            record(m, &format!("artefact:topic:{tag}"))
                .map(|(_, r)| r.roots)
                .unwrap_or_default()
        };
        let roots = root(&m);
        check(
            roots.len() == 1
                && roots[0].owner == APP_MEMORIA
                && roots[0].id == doc
                && roots[0].revision == "1",
            "the overview's root is the upload at revision 1: a revision is recorded",
            format!("{roots:?}"),
        )?;
        // The provider answers slowly, so the search below comes while
        // memoria is writing the artefacts again.
        stub.set_chat_slow(Some(400));
        let second = format!("# Offsite #{tag}\n\nThe venue is {new} this year.\n");
        let again = upload(&mut m, ana, "offsite.md", &second).await?;
        check(
            again == doc,
            "the re-upload revises the same document",
            again,
        )?;
        let (page, _) = search_overview(&mut m, &trace, ana).await;
        check(
            shown(&page).is_empty(),
            "the overview of revision 1 is not served once revision 2 is stored",
            format!("{:?}", shown(&page)),
        )?;
        check(
            page.withheld()
                .iter()
                .any(|w| w.contains("writing it again")),
            "the page says the summary is withheld while memoria writes it again",
            format!("{:?}", page.withheld()),
        )?;
        stub.set_chat_slow(None);
        m.settle_follow_ups().await;
        let (page, _) = search_overview(&mut m, &trace, ana).await;
        requires_overview(&page, &tag, "Ana")?;
        let text = page.texts("article.artefact p").join(" ");
        check(
            text.contains(&new) && !text.contains(&old),
            "the overview written again says what revision 2 says, and not revision 1",
            text,
        )?;
        let roots = root(&m);
        check(
            roots.len() == 1 && roots[0].id == doc && roots[0].revision == "2",
            "the rewritten overview's root is the upload at revision 2",
            format!("{roots:?}"),
        )
    })
}

/// The overview's roots as (owner, id, revision).
fn overview_roots(m: &memoria_simulator::Memoria, tag: &str) -> Vec<(String, String, String)> {
    record(m, &format!("artefact:topic:{tag}"))
        .map(|(_, r)| r.roots)
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.owner, r.id, r.revision))
        .collect()
}

/// The one root `(sheets, item 0, revision)`.
fn sheets_root(revision: &str) -> Vec<(String, String, String)> {
    vec![("sheets".into(), item_id(0), revision.into())]
}

/// `who` searches for the overview whose one root is Sheets' item 0, and
/// S2 answers `verdict` for that pair: the overview is not served, and a
/// withheld line of the page says `why` (§5.2: STALE "regenerates and does
/// not speak", AHEAD withholds).
async fn withheld_for_its_root(
    m: &mut memoria_simulator::Memoria,
    trace: &memoria_simulator::Trace,
    who: &str,
    verdict: &str,
    why: &str,
) -> Result<(), String> {
    let (page, calls) = search_overview(m, trace, who).await;
    check(
        calls
            .iter()
            .flatten()
            .any(|(id, v)| *id == item_id(0) && v == verdict),
        format!("{who}'s search asked S2 the root's pair and got {verdict}"),
        format!("{calls:?}"),
    )?;
    check(
        shown(&page).is_empty(),
        format!("the overview of a {verdict} root is not served"),
        format!("{:?}", shown(&page)),
    )?;
    check(
        page.withheld().iter().any(|w| w.contains(why)),
        format!("a withheld line says the summary is withheld: \"{why}\""),
        format!("{:?}", page.withheld()),
    )
}

fn stale_sibling_root(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let (world, _stub) = world(ctx.seed(), &canary, 1);
    let sheets = world.fake("sheets").clone();
    let trace = world.trace().clone();
    let tag = tag(&canary);
    let (old, new) = (format!("mk0x{canary}"), format!("revisedx{canary}"));
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.settle_follow_ups().await;
        check(
            overview_roots(&m, &tag) == sheets_root("r1"),
            "the overview's one root is the item at r1",
            format!("{:?}", overview_roots(&m, &tag)),
        )?;
        let (page, _) = search_overview(&mut m, &trace, bea).await;
        requires_overview(&page, &tag, "Bea")?;
        let text = page.texts("article.artefact p").join(" ");
        check(text.contains(&old), "the overview says what r1 says", text)?;
        let body = format!("The {canary} note number 0 now says {new}.\n");
        let revised = sheets.model().with(|mm| {
            mm.revise(&item_id(0), &crate::rigs::artefacts::title(0, &tag), &body)
                .expect("revise")
        });
        withheld_for_its_root(&mut m, &trace, ana, "STALE", "writing it again").await?;
        m.settle_follow_ups().await;
        check(
            overview_roots(&m, &tag) == sheets_root(&revised),
            format!("the overview is written again, its root the item at {revised}"),
            format!("{:?}", overview_roots(&m, &tag)),
        )?;
        let (page, _) = search_overview(&mut m, &trace, ana).await;
        requires_overview(&page, &tag, "Ana")?;
        let text = page.texts("article.artefact p").join(" ");
        check(
            text.contains(&new) && !text.contains(&old),
            "the overview written again says what the new revision says, and not the old",
            text,
        )
    })
}

fn ahead_sibling_root(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let (world, _stub) = world(ctx.seed(), &canary, 1);
    let sheets = world.fake("sheets").clone();
    let tag = tag(&canary);
    let held = sheets.model().with(|mm| {
        mm.revise(
            &item_id(0),
            &crate::rigs::artefacts::title(0, &tag),
            &body(&canary, 0),
        )
        .expect("revise")
    });
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.settle_follow_ups().await;
        check(
            overview_roots(&m, &tag) == sheets_root(&held),
            format!("the overview's one root is the item at {held}"),
            format!("{:?}", overview_roots(&m, &tag)),
        )?;
        let (page, _) = search_overview(&mut m, &trace, ana).await;
        requires_overview(&page, &tag, "Ana")?;
        sheets
            .model()
            .with(|mm| mm.restore_item_to(&item_id(0), "r1").expect("restore"));
        withheld_for_its_root(&mut m, &trace, ana, "AHEAD", "is behind").await?;
        let before = trace.events().len();
        m.settle_follow_ups().await;
        let announced = trace.events()[before..]
            .iter()
            .any(|e| e.callee.contains("sheets") && matches!(e.detail, CallDetail::S1a { .. }));
        check(
            announced,
            "the follow-up re-announces Sheets: an S1a call",
            "no S1a call after the AHEAD",
        )
    })
}
