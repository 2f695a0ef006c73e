//! Gate 32 (§10, §8.4): every passage in a model prompt passed §4.1 in the request that built it; nothing from an earlier request, and nothing S2 refused, withheld or left unanswered, is in any request body the provider received.
//!
//! End to end in the simulator, asserting on the stub provider's recorded
//! request bodies ([`crate::rigs::answer`]): each item carries a marker
//! word of its own, so a body holds an item's passage exactly when it holds
//! its marker. Every absence is preceded by the presence that makes it
//! mean something: the same passage in another asker's prompt, or in an
//! earlier prompt of the same asker, or its neighbours in this one.

use memoria_simulator::{CallKind, OWNERS, Outage, Rung, SiblingSpec, StubProvider, World};

use crate::rigs::answer::{ITEMS, body, item_id, marker, prompts, question, ranks, title, world};
use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 32.
pub static GATE: Gate = Gate {
    id: "32",
    title: "Every passage in a prompt passed §4.1 in its request",
    gates_md: &["Every passage in a model prompt passed §4.1 in the request that built it"],
    sections: &["§10", "§8.4", "§4.1"],
    requirement: "A passage S2 answers NOT_VISIBLE, STALE or UNKNOWN for is in no request body the provider receives; a passage refused since an earlier request is not carried into a later prompt; a prompt holds the top eight ruled passages by rank, with no item id or document link.",
    cases: &[
        Case {
            id: "32/a-refused-passage-is-in-no-prompt",
            desc: "Sheets holds four items and removes Ana from one. Ana's question sends one request holding the three others' markers and not the refused one's; Bea's same question sends the refused item's marker (presence: the passage would be sent if allowed).",
            run: refused_passage,
        },
        Case {
            id: "32/stale-and-unanswered-passages-are-in-no-prompt",
            desc: "Sheets holds three items and Docs two; Sheets revises one past memoria's revision (STALE) and Docs answers S2 with 503 (UNKNOWN). Ana's prompt holds the two VISIBLE Sheets markers and neither the STALE one nor a Docs one, while her page says both were withheld.",
            run: stale_and_unanswered,
        },
        Case {
            id: "32/a-passage-refused-since-the-last-request-is-in-no-later-prompt",
            desc: "Ana asks twice. Her first prompt holds item 3's marker; Sheets then removes her from item 3, and her second prompt, built by a new ruling, does not hold it: no ruling and no passage is carried across requests.",
            run: refused_since,
        },
        Case {
            id: "32/a-revised-passage-is-sent-as-this-request-holds-it",
            desc: "Ana asks; her prompt holds item 3's text. Sheets revises item 3 to new text; memoria sees it STALE, withholds it and refetches it. Ana's next prompt holds the new text and not the old: no passage text sent in one request is reused in another.",
            run: revised_passage,
        },
        Case {
            id: "32/a-prompt-holds-the-top-eight-ruled-passages-and-nothing-else",
            desc: "Ten items answer the question. The one request holds exactly the markers of the items ranked 1 to 8 on Ana's page, each in the paragraph labelled with that item's rank on the page, and no item id or document link.",
            run: top_eight_only,
        },
    ],
};

/// The user message's `[id] text` paragraphs, from a recorded body.
fn labelled(body: &str) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let user = json["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    user.split("\n\n")
        .filter_map(|p| {
            let (id, text) = p.strip_prefix('[')?.split_once("] ")?;
            Some((id.to_string(), text.to_string()))
        })
        .collect()
}

fn revised_passage(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let (world, sheets, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    let fresh = format!("revisedx{canary}");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.search(ana, &q).await;
        check(
            prompts(&stub).first().is_some_and(|p| holds(p, &canary, 3)),
            "Ana's first prompt holds item 3's text (presence)",
            "it does not",
        )?;
        let revised = format!("{} Revised as {fresh}.\n", body(&canary, 3).trim_end())
            .replace(&marker(&canary, 3), "");
        sheets
            .model()
            .with(|mm| mm.revise(&item_id(3), &title(3), &revised).expect("revise"));
        m.search(ana, &q).await;
        m.settle_follow_ups().await;
        m.search(ana, &q).await;
        let sent = prompts(&stub);
        let last = sent.last().cloned().unwrap_or_default();
        check(
            last.contains(&fresh),
            "the last prompt holds item 3's revised text (presence: memoria refetched it)",
            format!("{} requests", sent.len()),
        )?;
        check(
            !sent[1..].iter().any(|p| holds(p, &canary, 3)),
            "no prompt after the revision holds item 3's old text",
            "one does",
        )
    })
}

fn holds(prompt: &str, canary: &str, i: usize) -> bool {
    prompt.contains(&marker(canary, i))
}

fn refused_passage(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let (world, sheets, stub) = world(ctx.seed(), &canary, ITEMS);
    sheets
        .model()
        .with(|m| m.set_removed(&item_id(3), ana, true).expect("removed"));
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.search(ana, &q).await;
        let sent = prompts(&stub);
        check(
            sent.len() == 1,
            "Ana's question sent one request",
            format!("{}", sent.len()),
        )?;
        check(
            (0..3).all(|i| holds(&sent[0], &canary, i)),
            "Ana's prompt holds the three passages she may see (presence)",
            "one is missing",
        )?;
        check(
            !holds(&sent[0], &canary, 3),
            "the refused passage is in no request body of Ana's",
            "it is in her prompt",
        )?;
        m.search(bea, &q).await;
        let sent = prompts(&stub);
        check(
            sent.len() == 2 && holds(&sent[1], &canary, 3),
            "Bea's prompt holds the passage Ana may not see (presence)",
            format!("{} requests", sent.len()),
        )
    })
}

fn stale_and_unanswered(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let mut world = World::new(
        ctx.seed(),
        vec![SiblingSpec::own("sheets"), SiblingSpec::own("docs")],
    );
    let (sheets, docs) = (world.fake("sheets").clone(), world.fake("docs").clone());
    sheets.model().with(|m| {
        for i in 0..3 {
            m.add_item(&item_id(i), Rung::Team, &title(i), &body(&canary, i))
                .expect("item");
        }
    });
    docs.model().with(|m| {
        for i in 3..5 {
            m.add_item(&format!("dc-{i}"), Rung::Team, &title(i), &body(&canary, i))
                .expect("item");
        }
    });
    let stub = StubProvider::new();
    world.use_provider(&stub);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        sheets.model().with(|mm| {
            mm.revise(&item_id(2), &title(2), &body(&canary, 2))
                .expect("revise")
        });
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S2));
        let page = m.search(ana, &q).await.response.body;
        let withheld = Page::parse(&page).withheld();
        check(
            withheld
                .iter()
                .any(|w| w.starts_with("Sheets has a newer version"))
                && withheld
                    .iter()
                    .any(|w| w.starts_with("Docs did not answer")),
            "the page withholds the STALE and the unanswered passages loudly (presence: the ruling saw them)",
            format!("{withheld:?}"),
        )?;
        let sent = prompts(&stub);
        check(
            sent.len() == 1,
            "the question sent one request",
            format!("{}", sent.len()),
        )?;
        check(
            holds(&sent[0], &canary, 0) && holds(&sent[0], &canary, 1),
            "the prompt holds the two VISIBLE passages (presence)",
            "one is missing",
        )?;
        check(
            !holds(&sent[0], &canary, 2),
            "the STALE passage is in no request body",
            "it is in the prompt",
        )?;
        check(
            !holds(&sent[0], &canary, 3) && !holds(&sent[0], &canary, 4),
            "no passage Docs did not answer for is in a request body",
            "one is in the prompt",
        )
    })
}

fn refused_since(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let (world, sheets, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        m.search(ana, &q).await;
        check(
            prompts(&stub).first().is_some_and(|p| holds(p, &canary, 3)),
            "Ana's first prompt holds item 3's passage (presence)",
            "it does not",
        )?;
        sheets
            .model()
            .with(|mm| mm.set_removed(&item_id(3), ana, true).expect("removed"));
        m.search(ana, &q).await;
        let sent = prompts(&stub);
        check(
            sent.len() == 2,
            "the second question sent a second request",
            format!("{}", sent.len()),
        )?;
        check(
            holds(&sent[1], &canary, 0) && !holds(&sent[1], &canary, 3),
            "the second prompt holds what Ana may still see and not the passage refused since",
            "it carries the refused passage",
        )
    })
}

fn top_eight_only(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let ana = OWNERS[0];
    let n = 10;
    let (world, _, stub) = world(ctx.seed(), &canary, n);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let page = Page::parse(&m.search(ana, &q).await.response.body);
        let rank = ranks(&page, n);
        check(
            rank.len() == n,
            "all ten items are on the page",
            format!("{rank:?}"),
        )?;
        let sent = prompts(&stub);
        check(
            sent.len() == 1,
            "the question sent one request",
            format!("{}", sent.len()),
        )?;
        let in_prompt: Vec<usize> = (0..n).filter(|i| holds(&sent[0], &canary, *i)).collect();
        let top: Vec<usize> = (0..n).filter(|i| rank[i] <= 8).collect();
        check(
            in_prompt == top,
            "the prompt holds exactly the items ranked 1 to 8",
            format!("sent {in_prompt:?}, ranked 1-8 {top:?}"),
        )?;
        let paragraphs = labelled(&sent[0]);
        for i in &top {
            let text = paragraphs.iter().find(|(id, _)| *id == rank[i].to_string());
            check(
                text.is_some_and(|(_, t)| t.contains(&marker(&canary, *i))),
                "each passage is sent under the rank the page shows it at, so [n] cites what the reader opens",
                format!("item {i} at rank {}: {text:?}", rank[i]),
            )?;
        }
        check(
            (0..n).all(|i| !sent[0].contains(&item_id(i))) && !sent[0].contains("/documents/"),
            "no item id and no document link is sent, only the passages' own text",
            "one is",
        )
    })
}
