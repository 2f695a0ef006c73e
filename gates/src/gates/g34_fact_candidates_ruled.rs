//! Gate 34 (§8.8): fact-box candidates come only from the results that passed §4.1 in this request, and every count is taken after the ruling.
//!
//! End to end in the simulator, with the fake siblings' per-item custody:
//! Sheets rules each item for each asker (its grants join), and Docs can be
//! made to answer nothing. "Candidates are the validated facts carried by
//! the passages this search already returned and §4.1 already allowed …
//! a candidate that is not in Page.Results does not exist." So a number in
//! a passage Sheets refuses (NOT_VISIBLE), holds at a newer revision than
//! memoria does (STALE) or Docs does not answer for (UNKNOWN) must be in no
//! box, and "the count is taken after the §4.1
//! ruling … so a withheld document neither adds to it nor is revealed by
//! it": the cap and the narrowing line see the ruled count. The gate
//! asserts the struct the page renders from (`RuledSearch.page.facts`, via
//! `memoria::ruled_search`, the one S2 path) and the page itself.

use memoria::facts::FactBox;
use memoria_simulator::{CallKind, Memoria, OWNERS, Outage, Rung, SiblingSpec, World};

use crate::rigs::facts::rows;
use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 34.
pub static GATE: Gate = Gate {
    id: "34",
    title: "Fact-box candidates come only from the ruled results",
    gates_md: &["Fact-box candidates come only from the ruled results (per-item custody fake)"],
    sections: &["§8.8", "§4.1"],
    requirement: "A value in a passage S2 refused (NOT_VISIBLE), ruled STALE or did not answer for (UNKNOWN) is in no fact box and on no page; the cap and narrowing's count line see only the passages that passed §4.1 in this request.",
    cases: &[
        Case {
            id: "34/refused-passage-adds-no-candidate",
            desc: "Sheets holds four team items, each a different desk number; Sheets removes Ana from one. Ana's ruled search shows one phone box of exactly the three numbers she may see (so the cap saw three, not four), and the refused number is in no box and nowhere on her page; Bea, not removed, gets no box (four, over the cap).",
            run: refused_passage,
        },
        Case {
            id: "34/narrowing-counts-after-the-ruling",
            desc: "Sheets holds an office number and four unused ones, one item refused to Ana. \"what is the office phone number?\" shows the office row alone with \"Matched “office”. 3 other phone numbers are in these results.\": three, the ruled count, never four.",
            run: narrowing_counts_after_ruling,
        },
        Case {
            id: "34/unanswered-passage-adds-no-candidate",
            desc: "Two Sheets items and two Docs items each carry a number; Docs answers S2 with 503. The box holds the two Sheets numbers only, the page says Docs did not answer, and neither Docs number appears in a box or on the page.",
            run: unanswered_passage,
        },
        Case {
            id: "34/stale-passage-adds-no-candidate",
            desc: "\"Candidates are the validated facts carried by the passages this search already returned and §4.1 already allowed.\" Three Sheets items each carry a number; Sheets revises one past the revision memoria holds. The page says Sheets has a newer version of 1 result, and the box holds the two VISIBLE numbers only: the STALE revision's number is in no box and nowhere on the page, though S2 still admits Ana to the item.",
            run: stale_passage,
        },
    ],
};

/// Ana's ruled page for `q`, through the one S2 path, and the boxes on it.
async fn ruled_boxes(m: &Memoria, asker: &str, q: &str) -> Result<Vec<FactBox>, String> {
    let state = m.state();
    let ruled = memoria::ruled_search(
        state.shared_instance(),
        state.siblings().as_deref(),
        asker,
        q,
        1,
    )
    .await
    .map_err(|e| crate::rigs::sim::fail("the ruled search runs", e.to_string()))?;
    Ok(ruled.page.facts)
}

fn values(boxes: &[FactBox]) -> Vec<String> {
    boxes
        .iter()
        .flat_map(|b| b.rows.iter().map(|r| r.value.clone()))
        .collect()
}

fn desk(canary: &str, label: &str, number: &str) -> String {
    format!("# Desk {label}\n\nThe {canary} {label}: {number}\n")
}

const NUMBERS: [&str; 5] = [
    "01 547 7801",
    "01 547 7802",
    "01 547 7803",
    "01 547 7804",
    "01 547 7805",
];

fn refused_passage(ctx: &mut Ctx) -> Result<(), Failure> {
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let canary = ctx.canary();
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    let sheets = world.fake("sheets").clone();
    sheets.model().with(|m| {
        for (i, n) in NUMBERS[..4].iter().enumerate() {
            let label = ["reception", "kitchen", "studio", "workshop"][i];
            m.add_item(
                &format!("sh-{i}"),
                Rung::Team,
                "Desk",
                &desk(&canary, label, n),
            )
            .expect("item");
        }
        m.set_removed("sh-3", ana, true).expect("removed");
    });
    let q = format!("{canary} phone");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let boxes = ruled_boxes(&m, ana, &q).await?;
        let got = values(&boxes);
        check(
            boxes.len() == 1 && got == NUMBERS[..3],
            "Ana's box holds exactly the three numbers Sheets lets her see",
            format!("{:?}", boxes.iter().map(rows).collect::<Vec<_>>()),
        )?;
        let page = m.search(ana, &q).await.response.body;
        check(
            page.contains(NUMBERS[0]),
            "Ana's page shows a visible number (presence)",
            "it does not",
        )?;
        check(
            !page.contains(NUMBERS[3]),
            "the refused passage's number is nowhere on Ana's page",
            "it is on the page",
        )?;
        check(
            Page::parse(&page).withheld().is_empty(),
            "NOT_VISIBLE is silent: no withheld line",
            format!("{:?}", Page::parse(&page).withheld()),
        )?;
        let theirs = ruled_boxes(&m, bea, &q).await?;
        check(
            theirs.is_empty(),
            "Bea sees four numbers, over the cap: no box",
            format!("{:?}", theirs.iter().map(rows).collect::<Vec<_>>()),
        )
    })
}

fn narrowing_counts_after_ruling(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let canary = ctx.canary();
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    let sheets = world.fake("sheets").clone();
    sheets.model().with(|m| {
        m.add_item(
            "sh-office",
            Rung::Team,
            "Office",
            &format!("# Office\n\nThe {canary} office phone: {}\n", NUMBERS[0]),
        )
        .expect("item");
        for (i, n) in NUMBERS[1..].iter().enumerate() {
            m.add_item(
                &format!("sh-unused-{i}"),
                Rung::Team,
                "Unused",
                &format!("# Unused\n\nThe {canary} unused phone: {n}\n"),
            )
            .expect("item");
        }
        m.set_removed("sh-unused-3", ana, true).expect("removed");
    });
    let q = format!("what is the {canary} office phone number?");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        // The canary is a qualifier too, and every label holds it, so
        // "office" is what tells the labels apart.
        let boxes = ruled_boxes(&m, ana, &q).await?;
        let line = boxes
            .first()
            .and_then(|b| b.narrowed.as_ref().map(|n| n.sentence(b.kind)));
        check(
            boxes.len() == 1 && values(&boxes) == [NUMBERS[0]],
            "the office row alone",
            format!("{:?}", boxes.iter().map(rows).collect::<Vec<_>>()),
        )?;
        check(
            line.as_deref()
                == Some(
                    &format!(
                        "Matched “{canary}” and “office”. 3 other phone numbers are in these results."
                    )[..],
                ),
            "the count line counts the three others Ana may see, not four",
            format!("{line:?}"),
        )
    })
}

fn unanswered_passage(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let canary = ctx.canary();
    let world = World::new(
        ctx.seed(),
        vec![SiblingSpec::own("sheets"), SiblingSpec::own("docs")],
    );
    let (sheets, docs) = (world.fake("sheets").clone(), world.fake("docs").clone());
    sheets.model().with(|m| {
        for (i, label) in ["reception", "kitchen"].iter().enumerate() {
            m.add_item(
                &format!("sh-{i}"),
                Rung::Team,
                "Desk",
                &desk(&canary, label, NUMBERS[i]),
            )
            .expect("item");
        }
    });
    docs.model().with(|m| {
        for (i, label) in ["studio", "workshop"].iter().enumerate() {
            m.add_item(
                &format!("dc-{i}"),
                Rung::Team,
                "Desk",
                &desk(&canary, label, NUMBERS[2 + i]),
            )
            .expect("item");
        }
    });
    let q = format!("{canary} phone");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S2));
        let boxes = ruled_boxes(&m, ana, &q).await?;
        check(
            values(&boxes) == NUMBERS[..2],
            "the box holds the two Sheets numbers and no Docs number",
            format!("{:?}", boxes.iter().map(rows).collect::<Vec<_>>()),
        )?;
        let page = m.search(ana, &q).await.response.body;
        let withheld = Page::parse(&page).withheld();
        check(
            withheld
                .iter()
                .any(|w| w.starts_with("Docs did not answer")),
            "the page says Docs did not answer",
            format!("{withheld:?}"),
        )?;
        check(
            !page.contains(NUMBERS[2]) && !page.contains(NUMBERS[3]),
            "neither unanswered number is on the page",
            "one is",
        )
    })
}

fn stale_passage(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let canary = ctx.canary();
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    let sheets = world.fake("sheets").clone();
    let labels = ["reception", "kitchen", "studio"];
    sheets.model().with(|m| {
        for (i, label) in labels.iter().enumerate() {
            m.add_item(
                &format!("sh-{i}"),
                Rung::Team,
                "Desk",
                &desk(&canary, label, NUMBERS[i]),
            )
            .expect("item");
        }
    });
    let q = format!("{canary} phone");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        // STALE: Sheets moves sh-2 past the revision memoria holds, still
        // team-visible, so S2 admits Ana to the item at another revision.
        sheets.model().with(|mm| {
            mm.revise("sh-2", "Desk", &desk(&canary, "studio", NUMBERS[4]))
                .expect("revise")
        });
        // The ruled search first: it starts no refetch, and the page's
        // search does, after which sh-2 would be VISIBLE at its new revision.
        let boxes = ruled_boxes(&m, ana, &q).await?;
        let page = m.search(ana, &q).await.response.body;
        let withheld = Page::parse(&page).withheld();
        check(
            withheld
                == ["Sheets has a newer version of 1 result; withheld while memoria fetches it."],
            "the page withholds the STALE passage loudly (presence: the ruling saw it)",
            format!("{withheld:?}"),
        )?;
        check(
            page.contains(NUMBERS[0]) && !page.contains(NUMBERS[2]),
            "the page shows a VISIBLE number and not the STALE revision's",
            "it does not",
        )?;
        check(
            values(&boxes) == NUMBERS[..2],
            "the box holds the two VISIBLE numbers and not the STALE revision's",
            format!("{:?}", boxes.iter().map(rows).collect::<Vec<_>>()),
        )
    })
}
