//! Gate 39 (§8.9): the model half sends only what it may, accepts only what it can locate, and never touches a validator-backed kind.
//!
//! Size: over 800 lines because §8.9's model half has many rules (what is sent, what is located, which kinds a model never touches), each a case over one shared simulated world and its provider scripts.
//!
//! End to end in the simulator: memoria with AI on (or off), Sheets as a
//! fake sibling holding the passages (so S2 rules each item per asker), and
//! the stub provider on §8.3's host, answering scripted replies and
//! recording every request body. "Every case asserts on the recorded
//! requests as well as on the page, because draft 1's version could not
//! see an egress that had already happened by the time the box rendered
//! nothing." A case learns the ruled order first through the one S2 path
//! (`memoria::ruled_search`, which calls no model), so a scripted reply can
//! name a passage by its rank; then it searches through the web page (or
//! the live fragment) and reads the recorded bodies and the page.

use memoria::{EgressMode, MODEL_CHEAP, NewDocument, SearchResult};
use memoria_simulator::{
    CallKind, Memoria, OWNERS, ProviderDown, Rung, SiblingSpec, Slow, StubProvider, World,
};

use crate::rigs::page::{FactRowSeen, Page};
use crate::rigs::sim::{check, fail, run_world};
use crate::rigs::support::CapturedLogs;
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 39.
pub static GATE: Gate = Gate {
    id: "39",
    title: "The model half sends only what it may and accepts only what it can locate",
    gates_md: &[
        "The model half sends only what it may, accepts only what it can locate, never touches a validator-backed kind",
    ],
    sections: &["§8.9", "§8.8", "§4.1"],
    requirement: "With AI on, a query naming the postal address sends the top eight ruled passages still present, each with its index and nothing else, to the cheap model; a proposal renders only as a byte-exact span of a sent passage, first occurrence, on word boundaries, outside every recognised span, labelled by §8.8's rules and marked 🤖 with TensorX and the model named; a truncated or malformed reply is rejected whole; a provider failure leaves the list and one loud line; a validator-backed kind and AI off send nothing.",
    cases: &[
        Case {
            id: "39/an-address-query-sends-the-top-eight-and-a-located-span-renders-as-a-model-row",
            desc: "Ten Sheets items each hold an address. \"<canary> postal address\" sends one request to the cheap model holding exactly the passages ranked 1 to 8, each as `[rank] text`, no title and no document id, and the fixed question; the reply's span in passage 1 renders as one 🤖 row naming \"TensorX · deepseek/deepseek-v4-flash-0731\", its value sliced from the document, its label the document's, cited to passage 1. The live fragment (GET /search) does the same.",
            run: presence,
        },
        Case {
            id: "39/ai-off-sends-nothing-where-ai-on-sends-one",
            desc: "The same items and query against the stub with AI off: zero chat requests and no model row; with AI on (the presence half) one request and the row.",
            run: ai_off,
        },
        Case {
            id: "39/a-validator-backed-kind-never-reaches-the-model",
            desc: "AI on. A phone query finding no phone number, one finding four (suppressed by the cap), an email query and a VAT query send zero requests, though each search finds the items; \"phone number and postal address\" sends exactly one, for the address.",
            run: validator_kinds,
        },
        Case {
            id: "39/a-passage-ruled-not-visible-is-in-no-request-body",
            desc: "Sheets removes Ana from one item. Ana's request holds the visible passages and not the refused one's text, and a reply naming the refused address renders nothing; Bea's request (the presence half) does hold it.",
            run: not_visible,
        },
        Case {
            id: "39/a-passage-ranked-ninth-is-never-sent-and-a-reply-naming-it-is-dropped",
            desc: "Ten items. The request holds no `[9]` and not passage nine's text. A reply naming passage 9 with its address, and passage 1 with passage nine's address, renders no row for it; the same reply's span in passage 1 renders (presence).",
            run: ninth,
        },
        Case {
            id: "39/a-passage-gone-after-the-ruling-thins-the-request-and-result-nine-stays-out",
            desc: "Nine uploads and one Sheets item, Sheets' S2 slowed by 300 ms; an upload in the top eight is deleted while the ruling waits on Sheets. The request holds the other seven of the top eight and neither the deleted passage nor passage nine: bounded by rank first, then thinned, never refilled.",
            run: thinned,
        },
        Case {
            id: "39/a-text-not-in-the-passage-byte-for-byte-is-refused",
            desc: "A passage holds straight quotes, a non-breaking space and a line break. Proposals with curly quotes, a plain space for the NBSP, the line break flattened to a space and the case changed render nothing; the exact bytes render (presence), value byte for byte.",
            run: normalisation,
        },
        Case {
            id: "39/a-short-or-unstructured-or-embedded-text-is-refused",
            desc: "`Dublin`, `Dublin 2` (under 12 bytes), the empty string, a digit-free street name, a span splitting a word and a street name inside a recognised email address render nothing; a whole address in the same passage renders (presence).",
            run: short_and_embedded,
        },
        Case {
            id: "39/the-first-occurrence-by-byte-offset-is-the-one",
            desc: "One passage holds the same address twice with different labels: the row carries the first occurrence's label and cites that passage.",
            run: first_occurrence,
        },
        Case {
            id: "39/the-same-bytes-in-two-passages-are-one-row-cited-to-the-better-ranked",
            desc: "The same address in passages 1 and 2, proposed for passage 2 first: one row, cited to passage 1 with passage 1's label.",
            run: same_bytes,
        },
        Case {
            id: "39/a-truncated-or-malformed-reply-is-rejected-whole",
            desc: "A valid list marked finish_reason length, a reply that is prose around the list, and a body that is not a chat completion: each request is delivered, no model row renders, the results still do, and one loud line names TensorX and what failed.",
            run: rejected_whole,
        },
        Case {
            id: "39/a-provider-down-or-slow-leaves-the-list-and-one-loud-line",
            desc: "The stub answers 503, then is slower than 800 ms: the page and the live fragment are 200 with their results, no model row, and one line naming TensorX and what failed; the stub saw each request.",
            run: provider_failure,
        },
        Case {
            id: "39/four-accepted-addresses-render-nothing",
            desc: "Four located addresses render no model box (the cap, as §8.8, with no narrowing); three render three rows (presence).",
            run: cap,
        },
    ],
};

/// The model row's attribution as the page shows it.
/// A model row's `span.fact-by` as read: the drawn 🤖 figure's words
/// ([`memoria::MARKER_MODEL_FOUND_LABEL`]), the provider and the model.
const BY: &str = "found by a model, TensorX · deepseek/deepseek-v4-flash-0731";

/// The fixed question every request ends with (the reader's query is not sent).
const QUESTION: &str = "Question: List every postal address in the passages above.";

/// An address for item `k`: at least 12 bytes, with digits and a comma.
fn address(k: usize) -> String {
    format!("{} Harcourt Street, Dublin {}", 10 + k, k + 1)
}

/// An item whose body labels `address` and carries `canary`.
fn site(canary: &str, k: usize, address: &str) -> String {
    format!("# Site {k}\n\nThe {canary} site {k} is at: {address}\n")
}

/// A world with Sheets holding `items` (id, body), each team-visible,
/// titled so the title's word is in no body; Ana removed from `refused`.
fn world(
    ctx: &mut Ctx,
    items: &[(String, String)],
    refused: &[&str],
    egress: EgressMode,
) -> (World, StubProvider) {
    let mut world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    let stub = StubProvider::new();
    // The answer path (§8.4) calls the provider on the same page: its
    // requests are answered apart, so this gate counts and scripts §8.9's.
    stub.set_answers_apart(true);
    world.use_stub_provider(&stub, egress);
    let ana = OWNERS[0];
    world.fake("sheets").model().with(|m| {
        for (id, body) in items {
            m.add_item(id, Rung::Team, &format!("Premises {id}"), body)
                .expect("an item");
        }
        for id in refused {
            m.set_removed(id, ana, true).expect("removed");
        }
    });
    (world, stub)
}

/// Ten site items, `sh-0` … `sh-9`, each with [`address`].
fn sites(canary: &str, n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|k| (format!("sh-{k}"), site(canary, k, &address(k))))
        .collect()
}

/// The ruled results for `q` as `asker`, through the one S2 path and no model.
async fn ranked(m: &Memoria, asker: &str, q: &str) -> Result<Vec<SearchResult>, String> {
    let state = m.state();
    let ruled = memoria::ruled_search(
        state.shared_instance(),
        state.siblings().as_deref(),
        asker,
        q,
        1,
    )
    .await
    .map_err(|e| fail("the ruled search runs", e.to_string()))?;
    Ok(ruled.page.results)
}

/// Each recorded chat request's user message (the passages and the question).
fn sent(stub: &StubProvider) -> Result<Vec<String>, String> {
    stub.chat_requests()
        .iter()
        .map(|r| {
            let body: serde_json::Value = serde_json::from_slice(&r.body)
                .map_err(|e| fail("a chat request body is JSON", e.to_string()))?;
            check(
                r.model.as_deref() == Some(MODEL_CHEAP),
                "every request goes to the cheap model",
                format!("{:?}", r.model),
            )?;
            check(
                body["messages"].as_array().map(Vec::len) == Some(2)
                    && body["messages"][0]["content"].as_str()
                        == Some(memoria::facts::model::MODEL_INSTRUCTIONS),
                "a request is the fixed instructions and one user message, nothing added",
                format!("{}", body["messages"]),
            )?;
            body["messages"][1]["content"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| fail("a request has a user message", "none"))
        })
        .collect()
}

/// The JSON list a reply carries: one `{"passage", "text"}` per pair.
fn reply(proposals: &[(usize, &str)]) -> String {
    let list: Vec<serde_json::Value> = proposals
        .iter()
        .map(|(p, t)| serde_json::json!({"passage": p, "text": t}))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// Ana's results page for `q`, parsed, with its status.
async fn page(m: &mut Memoria, q: &str) -> Page {
    crate::rigs::page::of(&m.search(OWNERS[0], q).await.response)
}

fn model_rows(p: &Page) -> Vec<FactRowSeen> {
    p.fact_rows().into_iter().filter(|r| r.model).collect()
}

/// Which of the first `n` [`address`]es the ruled result `r` holds.
fn address_in(r: &SearchResult, n: usize) -> Result<String, String> {
    (0..n)
        .map(address)
        .find(|a| r.text.contains(a.as_str()))
        .ok_or_else(|| fail("each ruled result holds an address", "one does not"))
}

/// A box row's citation text for `r`: its title and the trail below it.
fn cite_of(r: &SearchResult) -> String {
    std::iter::once(r.title.as_str())
        .chain(r.trail_below_title().iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" › ")
}

/// The captured logs hold `line` (the path logged) and nothing of the
/// case's content: no canary (query and passages), no address, no title,
/// no reply (gates 4, 31).
fn nothing_logged(logs: &CapturedLogs, canary: &str, line: &str) -> Result<(), Failure> {
    let text = logs.all_text();
    ensure(
        text.contains(line),
        format!("the model half logged {line:?} (presence)"),
        "no such line",
    )?;
    let tail = crate::canary_tail(canary);
    let leaked: Vec<&str> = [
        canary,
        tail,
        "Harcourt",
        "Premises",
        "passage\"",
        "passage\\\"",
    ]
    .into_iter()
    .filter(|w| text.contains(w))
    .collect();
    ensure(
        leaked.is_empty(),
        "no query word, passage, address, title or reply in any log line",
        format!("found {leaked:?}"),
    )
}

fn q_for(canary: &str) -> String {
    format!("{canary} postal address")
}

fn presence(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(ctx, &sites(&canary, 10), &[], EgressMode::AiOn);
    let q = q_for(&canary);
    let logs = CapturedLogs::default();
    let words = canary.clone();
    logs.capture(|| {
        run_world(&world, move |mut m| async move {
            m.warmed_up().await?;
            let results = ranked(&m, OWNERS[0], &q).await?;
            check(
                results.len() == 10,
                "all ten items are ruled results",
                format!("{}", results.len()),
            )?;
            let first = &results[0];
            let span = address_in(first, 10)?;
            stub.push_chat_reply(&reply(&[(1, &span)]));
            let p = page(&mut m, &q).await;
            let bodies = sent(&stub)?;
            check(
                bodies.len() == 1,
                "one request for the page",
                format!("{}", bodies.len()),
            )?;
            let user = &bodies[0];
            let exact: String = results[..8]
                .iter()
                .map(|r| format!("[{}] {}\n\n", r.rank, r.text))
                .collect::<String>()
                + QUESTION;
            check(
                *user == exact,
                "the user message is each passage under its index, exactly, then the question: nothing else about a passage",
                format!("{} bytes, expected {}", user.len(), exact.len()),
            )?;
            for r in &results[..8] {
                check(
                    user.contains(&format!("[{}] {}", r.rank, r.text)),
                    format!("the request holds passage {} under its index", r.rank),
                    "it does not",
                )?;
            }
            for r in &results[8..] {
                check(
                    !user.contains(&r.text) && !user.contains(&format!("[{}]", r.rank)),
                    format!("the request holds nothing of passage {}", r.rank),
                    "it does",
                )?;
            }
            check(
                !user.contains("Premises") && !user.contains(&first.document_id),
                "no title and no document id is sent",
                "one is",
            )?;
            check(
                user.ends_with(QUESTION),
                "the request ends with the fixed question, not the reader's query",
                "it does not",
            )?;
            let rows = model_rows(&p);
            let want = FactRowSeen {
                kind: "address".into(),
                model: true,
                by: BY.into(),
                label: format!(
                    "The {canary} site {} is at",
                    first.title.trim_start_matches("Premises sh-")
                ),
                value: span.clone(),
                cite: cite_of(first),
                link: first.link.clone(),
            };
            check(
                rows.len() == 1 && rows[0] == want,
                "one 🤖 row: the span sliced from passage 1, its label and its citation",
                format!("{rows:?} (wanted {want:?})"),
            )?;
            // The 🤖 is drawn, so it reads where no emoji font is (issue 31).
            check(
                p.tags("li.fact-row-model span.fact-by span.marker svg").len() == 1,
                "the row's 🤖 marker is a drawn figure (svg) beside its words",
                format!("{:?}", p.tags("li.fact-row-model span.fact-by *")),
            )?;
            check(
                !p.results().is_empty(),
                "the results still render below the box",
                "none",
            )?;
            // The live fragment runs the same path (§8.9: "that includes live search").
            stub.push_chat_reply(&reply(&[(1, &span)]));
            let fragment = m
                .get(
                    OWNERS[0],
                    &format!("/search?q={}", memoria::testkit::form_encode(&q)),
                )
                .await;
            let fragment = crate::rigs::page::of(&fragment.response);
            check(
                stub.chat_calls() == 2 && model_rows(&fragment) == [want],
                "the live fragment sends one request and renders the same row",
                format!("{} calls, {:?}", stub.chat_calls(), model_rows(&fragment)),
            )
        })
    })?;
    nothing_logged(&logs, &words, "the model half ran")
}

fn ai_off(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let items = sites(&canary, 3);
    let q = q_for(&canary);
    for egress in [EgressMode::AiOff, EgressMode::AiOn] {
        let (world, stub) = world(ctx, &items, &[], egress);
        let span = address(0);
        stub.set_chat_default_reply(Some(&reply(&[(1, &span), (2, &span), (3, &span)])));
        let q = q.clone();
        run_world(&world, move |mut m| async move {
            m.warmed_up().await?;
            let p = page(&mut m, &q).await;
            check(
                p.results().len() == 3,
                "the search finds the three items",
                format!("{}", p.results().len()),
            )?;
            let (calls, rows) = (stub.chat_calls(), model_rows(&p).len());
            match egress {
                EgressMode::AiOff => check(
                    calls == 0 && rows == 0,
                    "AI off: zero chat requests and no model row",
                    format!("{calls} requests, {rows} rows"),
                ),
                EgressMode::AiOn => check(
                    calls == 1 && rows == 1,
                    "AI on (presence): one request and the row",
                    format!("{calls} requests, {rows} rows"),
                ),
            }
        })?;
    }
    Ok(())
}

fn validator_kinds(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let mut items = sites(&canary, 2);
    for (k, n) in ["01 547 7801", "01 547 7802", "01 547 7803", "01 547 7804"]
        .iter()
        .enumerate()
    {
        items.push((
            format!("ph-{k}"),
            format!("# Desk {k}\n\nThe {canary} desk {k} line: {n}\n"),
        ));
    }
    let (world, stub) = world(ctx, &items, &[], EgressMode::AiOn);
    stub.set_chat_default_reply(Some("[]"));
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        for q in [
            format!("{canary} phone"),
            format!("{canary} telephone number"),
            format!("{canary} email"),
            format!("{canary} vat number"),
            format!("{canary} iban"),
            format!("{canary} eircode"),
        ] {
            let p = page(&mut m, &q).await;
            check(
                !p.results().is_empty(),
                format!("{q:?} finds the items (presence)"),
                "nothing",
            )?;
            check(
                stub.chat_calls() == 0,
                format!("{q:?} sends nothing to the model"),
                format!("{} requests", stub.chat_calls()),
            )?;
        }
        let p = page(&mut m, &format!("{canary} phone number and postal address")).await;
        let bodies = sent(&stub)?;
        check(
            bodies.len() == 1 && p.fact_rows().iter().all(|r| !r.model),
            "the mixed query sends exactly one request, for the address",
            format!("{} requests", bodies.len()),
        )
    })
}

fn not_visible(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let items = sites(&canary, 3);
    let (world, stub) = world(ctx, &items, &["sh-2"], EgressMode::AiOn);
    let q = q_for(&canary);
    let refused = address(2);
    stub.set_chat_default_reply(Some(&reply(&[(1, &refused), (2, &refused)])));
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let p = page(&mut m, &q).await;
        let bodies = sent(&stub)?;
        check(
            bodies.len() == 1 && p.results().len() == 2,
            "Ana's search sends one request and shows the two visible items",
            format!("{} requests, {} results", bodies.len(), p.results().len()),
        )?;
        check(
            bodies[0].contains(&address(0)) && bodies[0].contains(&address(1)),
            "Ana's request holds the visible passages",
            "it does not",
        )?;
        check(
            !bodies[0].contains(&refused) && !bodies[0].contains("site 2"),
            "Ana's request holds nothing of the passage Sheets refused her",
            "it does",
        )?;
        check(
            model_rows(&p).is_empty() && !p.text().contains(&refused),
            "a reply naming the refused address renders nothing",
            format!("{:?}", model_rows(&p)),
        )?;
        let theirs = m.search(OWNERS[1], &q).await;
        let bodies = sent(&stub)?;
        check(
            bodies.len() == 2 && bodies[1].contains(&refused),
            "Bea's request (presence) holds the passage Ana may not see",
            format!("{} requests", bodies.len()),
        )?;
        check(
            crate::rigs::page::of(&theirs.response).results().len() == 3,
            "Bea sees all three",
            "she does not",
        )
    })
}

fn ninth(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(ctx, &sites(&canary, 10), &[], EgressMode::AiOn);
    let q = q_for(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let results = ranked(&m, OWNERS[0], &q).await?;
        check(
            results.len() == 10,
            "all ten items are ruled results",
            format!("{}", results.len()),
        )?;
        let (one, nine) = (address_in(&results[0], 10)?, address_in(&results[8], 10)?);
        stub.push_chat_reply(&reply(&[(9, &nine), (1, &nine), (1, &one)]));
        let p = page(&mut m, &q).await;
        let bodies = sent(&stub)?;
        check(
            bodies.len() == 1 && !bodies[0].contains("[9]") && !bodies[0].contains(&nine),
            "the request holds nothing of the passage ranked ninth",
            format!("{} requests", bodies.len()),
        )?;
        let values: Vec<String> = model_rows(&p).into_iter().map(|r| r.value).collect();
        check(
            values == [one.clone()],
            "only passage 1's span renders; passage nine's address is dropped",
            format!("{values:?}"),
        )
    })
}

fn thinned(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(
        ctx,
        &[("sh-9".to_string(), site(&canary, 9, &address(9)))],
        &[],
        EgressMode::AiOn,
    );
    let sheets = world.fake("sheets").clone();
    stub.set_chat_default_reply(Some("[]"));
    let q = q_for(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let state = m.state();
        for k in 0..9 {
            let body = site(&canary, k, &address(k));
            state
                .blocking(move |i| {
                    i.ingest(&NewDocument {
                        source_key: format!("upload:site-{k}.md"),
                        title: format!("Premises up-{k}"),
                        path: format!("site-{k}.md"),
                        body,
                        date: None,
                    })
                })
                .await
                .map_err(|e| fail("the upload is ingested", e.to_string()))?
                .map_err(|e| fail("the upload is ingested", e.to_string()))?;
        }
        let results = ranked(&m, OWNERS[0], &q).await?;
        check(
            results.len() == 10 && results.iter().any(|r| r.app == "sheets"),
            "ten ruled results, one of them Sheets' (so the ruling asks S2)",
            format!("{}", results.len()),
        )?;
        let gone = results[..8]
            .iter()
            .find(|r| r.app == "memoria")
            .ok_or_else(|| fail("an upload is in the top eight", "none is"))?
            .clone();
        let nine = results[8].text.clone();
        // Signed in, and one request seen, before the timed search.
        page(&mut m, &q).await;
        stub.clear_chat_requests();
        sheets.faults().set_slow(Some(Slow {
            latency_ms: 300,
            only: Some(CallKind::S2),
        }));
        let id = gone.document_id.clone();
        let delete = async move {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            state.blocking(move |i| i.delete(&id).map(|_| ())).await
        };
        let (_, deleted) = tokio::join!(m.search(OWNERS[0], &q), delete);
        deleted
            .map_err(|e| fail("the upload is deleted mid-search", e.to_string()))?
            .map_err(|e| fail("the upload is deleted mid-search", e.to_string()))?;
        let bodies = sent(&stub)?;
        check(
            bodies.len() == 1,
            "one request for the search",
            format!("{}", bodies.len()),
        )?;
        let user = &bodies[0];
        for r in results[..8].iter().filter(|r| r.rank != gone.rank) {
            check(
                user.contains(&format!("[{}] {}", r.rank, r.text)),
                format!("the request holds passage {}, still present", r.rank),
                "it does not",
            )?;
        }
        check(
            !user.contains(&gone.text),
            "the passage deleted after the ruling is not sent",
            "it is",
        )?;
        check(
            !user.contains("[9]") && !user.contains(&nine),
            "passage nine does not move up into the gap",
            "it does",
        )
    })
}

/// A case's one passage (its item `sh-0`, which also carries `canary`).
/// A reply per proposal of `refused`, each for passage 1: delivered, and
/// no row renders. A last reply proposes each of `accepted`: the page must show
/// exactly those as model rows' values (presence), so a refusal is never
/// hidden behind an accepted proposal at the same coordinate.
fn one_passage(
    ctx: &mut Ctx,
    body: impl Fn(&str) -> String,
    refused: &'static [&'static str],
    accepted: &'static [&'static str],
) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(
        ctx,
        &[("sh-0".to_string(), body(&canary))],
        &[],
        EgressMode::AiOn,
    );
    let pairs = |texts: &[&str]| reply(&texts.iter().map(|t| (1, *t)).collect::<Vec<_>>());
    // One request per refused proposal: judged alone, an acceptance can
    // never hide behind another's citation-line collision (§8.8).
    for r in refused {
        stub.push_chat_reply(&pairs(&[r]));
    }
    stub.push_chat_reply(&pairs(accepted));
    let q = q_for(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let mut rounds: Vec<(usize, &[&str])> = (1..=refused.len()).map(|n| (n, &[][..])).collect();
        rounds.push((refused.len() + 1, accepted));
        for (n, want) in rounds {
            let p = page(&mut m, &q).await;
            check(
                stub.chat_calls() == n && p.results().len() == 1,
                "each request delivered and the passage found",
                format!(
                    "{} requests, {} results",
                    stub.chat_calls(),
                    p.results().len()
                ),
            )?;
            check(
                p.withheld().is_empty(),
                "the reply was delivered and used: no loud line",
                format!("{:?}", p.withheld()),
            )?;
            let values: Vec<String> = model_rows(&p).into_iter().map(|r| r.value).collect();
            check(
                values == want,
                format!("exactly the located spans render: {want:?}"),
                format!("{values:?}"),
            )?;
        }
        Ok(())
    })
}

fn normalisation(ctx: &mut Ctx) -> Result<(), Failure> {
    one_passage(
        ctx,
        |c| format!("# Yard\n\nThe {c} yard is at: \"The Yard\", 4\u{a0}Mill Lane,\nDublin 8\n"),
        &[
            "\u{201c}The Yard\u{201d}, 4\u{a0}Mill Lane,\nDublin 8",
            "\"The Yard\", 4 Mill Lane,\nDublin 8",
            "\"The Yard\", 4\u{a0}Mill Lane, Dublin 8",
            "\"the yard\", 4\u{a0}mill lane,\ndublin 8",
        ],
        &["\"The Yard\", 4\u{a0}Mill Lane,\nDublin 8"],
    )
}

fn short_and_embedded(ctx: &mut Ctx) -> Result<(), Failure> {
    one_passage(
        ctx,
        |c| {
            format!(
                "# Post\n\nThe {c} post goes to: 12 Harcourt Street, Dublin 2\nWrite to harcourt.street.dublin2@example.ie today.\nCall +353 1 547 7854 first. Meet at St. Stephen's Green Park after.\n"
            )
        },
        &[
            "Dublin",
            "Dublin 2",
            "",
            "Harcourt Street",
            "2 Harcourt Street, Dublin 2",
            "harcourt.street.dublin2",
            "12 Harcourt Street, Dubli",
            "\t12 Harcourt Street, Dublin 2",
            "+353 1 547 7854",
            "St. Stephen's Green Park",
        ],
        &["12 Harcourt Street, Dublin 2"],
    )
}

fn first_occurrence(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let a = address(0);
    let body = format!("# Moves\n\nThe {canary} old office: {a}\nThe {canary} new office: {a}\n");
    let (world, stub) = world(ctx, &[("sh-0".into(), body)], &[], EgressMode::AiOn);
    stub.push_chat_reply(&reply(&[(1, &a)]));
    let q = q_for(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let results = ranked(&m, OWNERS[0], &q).await?;
        let p = page(&mut m, &q).await;
        let rows = model_rows(&p);
        check(
            stub.chat_calls() == 1
                && rows.len() == 1
                && rows[0].label == format!("The {canary} old office")
                && rows[0].value == a
                && Some(&rows[0].link) == results.first().map(|r| &r.link),
            "one row, the first occurrence's label, cited to the passage",
            format!("{rows:?}"),
        )
    })
}

fn same_bytes(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let a = address(0);
    let items = vec![
        ("sh-0".to_string(), site(&canary, 0, &a)),
        ("sh-1".to_string(), site(&canary, 1, &a)),
    ];
    let (world, stub) = world(ctx, &items, &[], EgressMode::AiOn);
    stub.push_chat_reply(&reply(&[(2, &a), (1, &a)]));
    let q = q_for(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let results = ranked(&m, OWNERS[0], &q).await?;
        let first = results
            .first()
            .ok_or_else(|| fail("the search finds the items", "nothing"))?;
        let k = first.title.trim_start_matches("Premises sh-").to_owned();
        let p = page(&mut m, &q).await;
        let rows = model_rows(&p);
        check(
            stub.chat_calls() == 1
                && rows.len() == 1
                && rows[0].link == first.link
                && rows[0].cite == cite_of(first)
                && rows[0].label == format!("The {canary} site {k} is at"),
            "one row, cited to passage 1 with its label",
            format!("{rows:?} (passage 1 is {})", first.link),
        )
    })
}

fn rejected_whole(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(ctx, &sites(&canary, 2), &[], EgressMode::AiOn);
    let q = q_for(&canary);
    let good = reply(&[
        (1, &address(0)),
        (1, &address(1)),
        (2, &address(0)),
        (2, &address(1)),
    ]);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let cases: [(&str, &str); 4] = [
            (
                "truncated",
                "TensorX's reply to the address search was cut off, so none of it is used.",
            ),
            (
                "prose",
                "TensorX's reply to the address search was not the list asked for, so none of it is used.",
            ),
            (
                "trailing prose",
                "TensorX's reply to the address search was not the list asked for, so none of it is used.",
            ),
            (
                "malformed",
                "TensorX sent a reply that is not a chat completion, so no addresses from it are shown.",
            ),
        ];
        for (n, (how, line)) in cases.iter().enumerate() {
            stub.clear_chat_faults();
            match *how {
                "truncated" => {
                    stub.set_chat_truncated(true);
                    stub.push_chat_reply(&good);
                }
                "prose" => stub.push_chat_reply(&format!("Here are the addresses: {good}")),
                "trailing prose" => {
                    stub.push_chat_reply(&format!("{good} Let me know if you need more."))
                }
                _ => stub.set_chat_malformed(true),
            }
            let p = page(&mut m, &q).await;
            check(
                stub.chat_calls() == n + 1,
                format!("{how}: the request was delivered"),
                format!("{} requests", stub.chat_calls()),
            )?;
            check(
                model_rows(&p).is_empty() && p.results().len() == 2,
                format!("{how}: no model row, and the results render"),
                format!("{:?}", model_rows(&p)),
            )?;
            check(
                p.withheld() == [line.to_string()],
                format!("{how}: one loud line naming TensorX"),
                format!("{:?}", p.withheld()),
            )?;
        }
        // Presence: the same reply, finished and well formed, is used.
        stub.clear_chat_faults();
        stub.push_chat_reply(&good);
        let p = page(&mut m, &q).await;
        check(
            model_rows(&p).len() == 2 && p.withheld().is_empty(),
            "the same list, unmarked, renders its rows (presence)",
            format!("{:?}", model_rows(&p)),
        )?;
        // A proposal naming the passage that does not hold its text is
        // dropped: check 3 searches the passage named, never another.
        let results = ranked(&m, OWNERS[0], &q).await?;
        let other = address_in(&results[1], 2)?;
        stub.push_chat_reply(&reply(&[(1, &other), (0, &address_in(&results[0], 2)?)]));
        let p = page(&mut m, &q).await;
        check(
            model_rows(&p).is_empty() && p.withheld().is_empty(),
            "passage 2's address proposed for passage 1, and passage 1's for a passage 0 never sent, render nothing",
            format!("{:?}", model_rows(&p)),
        )
    })
}

fn provider_failure(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(ctx, &sites(&canary, 2), &[], EgressMode::AiOn);
    let q = q_for(&canary);
    stub.set_chat_default_reply(Some(&reply(&[(1, &address(0))])));
    let logs = CapturedLogs::default();
    let words = canary.clone();
    logs.capture(|| {
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let fragment_uri = format!("/search?q={}", memoria::testkit::form_encode(&q));
        let cases: [(&str, &str); 2] = [
            (
                "down",
                "TensorX was unavailable for the address search, so no addresses from it are shown.",
            ),
            (
                "slow",
                "TensorX did not answer the address search within 800 ms, so no addresses from it are shown.",
            ),
        ];
        for (how, line) in cases {
            stub.clear_chat_faults();
            if how == "down" {
                stub.set_chat_down(Some(ProviderDown::Status(503)));
            } else {
                stub.set_chat_slow(Some(2_000));
            }
            for (surface, uri) in [
                ("page", format!("/?q={}", memoria::testkit::form_encode(&q))),
                ("fragment", fragment_uri.clone()),
            ] {
                let before = stub.chat_calls();
                let p = crate::rigs::page::of(&m.get(OWNERS[0], &uri).await.response);
                check(
                    stub.chat_calls() > before,
                    format!("{how}, {surface}: the stub saw the request"),
                    "it did not",
                )?;
                check(
                    p.status() == Some(200) && p.results().len() == 2 && model_rows(&p).is_empty(),
                    format!("{how}, {surface}: 200 with the results and no model row"),
                    format!(
                        "{:?}, {} results, {:?}",
                        p.status(),
                        p.results().len(),
                        model_rows(&p)
                    ),
                )?;
                check(
                    p.withheld() == [line.to_string()],
                    format!("{how}, {surface}: one loud line naming TensorX and what failed"),
                    format!("{:?}", p.withheld()),
                )?;
            }
        }
        stub.clear_chat_faults();
        let p = page(&mut m, &q).await;
        check(
            model_rows(&p).len() == 1 && p.withheld().is_empty(),
            "healed: the row renders and the line is gone (presence)",
            format!("{:?} {:?}", model_rows(&p), p.withheld()),
        )
    })
    })?;
    nothing_logged(&logs, &words, "the model half showed nothing")
}

fn cap(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, stub) = world(ctx, &sites(&canary, 4), &[], EgressMode::AiOn);
    let q = q_for(&canary);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let results = ranked(&m, OWNERS[0], &q).await?;
        let mut located = vec![];
        for r in &results {
            located.push((r.rank, address_in(r, 4)?));
        }
        let pairs: Vec<(usize, &str)> = located.iter().map(|(r, a)| (*r, a.as_str())).collect();
        stub.push_chat_reply(&reply(&pairs[..3]));
        let p = page(&mut m, &q).await;
        check(
            model_rows(&p).len() == 3 && model_rows(&p).iter().all(|r| r.by == BY),
            "three located addresses render three rows, each marked 🤖 and naming TensorX and the model (presence)",
            format!("{:?}", model_rows(&p)),
        )?;
        stub.push_chat_reply(&reply(&pairs));
        let p = page(&mut m, &q).await;
        check(
            stub.chat_calls() == 2 && model_rows(&p).is_empty() && p.withheld().is_empty(),
            "four located addresses render no model box and no line",
            format!("{} requests, {:?}", stub.chat_calls(), model_rows(&p)),
        )
    })
}
