//! Gate 5 (§10, §4.1): two people get different answers, and the sibling's own grants join decides.
//!
//! End to end in the simulator: Sheets holds one team item from which Bea has
//! been removed ("minus rows I have been removed from", Sheets §4.5). Both
//! are admitted to memoria, so memoria has nothing of its own to tell them
//! apart by. The passage must render for Ana and be omitted, silently, for
//! Bea; the trace must show Sheets was asked for each person and answered
//! each differently; and when Sheets restores Bea, with nothing changed in
//! memoria, the passage renders for her too. Draft 2's version asserted only
//! that an authorization call happened, so it stayed green with a constant
//! VISIBLE, with the wrong person, or with authorization after disclosure.

use memoria_simulator::{CallDetail, CallKind, OWNERS, Rung, SiblingSpec, World};

use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world, stock, tagged_body};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 5.
pub static GATE: Gate = Gate {
    id: "5",
    title: "Two people get different answers",
    gates_md: &["Two people get different answers, decided by the sibling's own grants join"],
    sections: &["§10", "§4.1"],
    requirement: "A sibling passage renders for a person the sibling's grants join admits and is omitted silently for one it does not; the sibling is asked per person, in the request; a change in the sibling's grants alone changes the page.",
    cases: &[Case {
        id: "5/two-people",
        desc: "Sheets holds a team item Bea was removed from; Ana's search renders it, Bea's omits it with no count and no notice; the trace shows one S2 per person with VISIBLE and NOT_VISIBLE; Sheets restores Bea and her next search renders it; Sheets removes Ana and her next search omits it.",
        run: two_people,
    }],
};

const ITEM: &str = "sh-budget";

fn two_people(ctx: &mut Ctx) -> Result<(), Failure> {
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let canary = ctx.canary();
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    stock(&world, "sheets", 12);
    let sheets = world.fake("sheets").clone();
    sheets.model().with(|m| {
        m.add_item(
            ITEM,
            Rung::Team,
            "Budget",
            &tagged_body(&canary, "tagbudget"),
        )
        .expect("item");
        m.set_removed(ITEM, bea, true).expect("removed");
    });
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        trace.clear();
        let a = m.search(ana, &canary).await.response.body;
        check(
            a.contains("tagbudget"),
            "Ana's page renders the Sheets passage (presence)",
            "it does not",
        )?;
        let b = m.search(bea, &canary).await.response.body;
        check(
            !b.contains("tagbudget"),
            "Bea's page omits the passage",
            "it renders it",
        )?;
        check(
            Page::parse(&b).withheld().is_empty() && b.contains("No passage matched."),
            "Bea's page is silent: no withheld line, the ordinary no-match sentence",
            format!("withheld lines {:?}", Page::parse(&b).withheld()),
        )?;
        let asked: Vec<(Option<String>, Vec<String>)> = trace
            .events()
            .into_iter()
            .filter(|e| e.call == CallKind::S2)
            .filter_map(|e| match e.detail {
                CallDetail::S2 { subject, pairs, .. } => Some((
                    subject,
                    pairs
                        .into_iter()
                        .filter(|p| p.item_id == ITEM)
                        .map(|p| p.result)
                        .collect(),
                )),
                _ => None,
            })
            .collect();
        check(
            asked.len() == 2
                && asked[0].0 != asked[1].0
                && asked[0].1 == ["VISIBLE"]
                && asked[1].1 == ["NOT_VISIBLE"],
            "two S2 calls, one per person, answering VISIBLE then NOT_VISIBLE",
            format!("{asked:?}"),
        )?;
        sheets
            .model()
            .with(|m| m.set_removed(ITEM, bea, false))
            .expect("restore bea");
        let b2 = m.search(bea, &canary).await.response.body;
        check(
            b2.contains("tagbudget"),
            "after Sheets restores Bea, her page renders the passage with nothing changed in memoria",
            "it still omits it",
        )?;
        // And the other way: an answer is never held. Sheets removes Ana,
        // whose last answer was VISIBLE; her next page omits the passage.
        sheets
            .model()
            .with(|m| m.set_removed(ITEM, ana, true))
            .expect("remove ana");
        let a2 = m.search(ana, &canary).await.response.body;
        check(
            !a2.contains("tagbudget") && Page::parse(&a2).withheld().is_empty(),
            "after Sheets removes Ana, her page omits the passage silently: no answer is cached",
            "it still renders, or a count appears",
        )
    })
}
