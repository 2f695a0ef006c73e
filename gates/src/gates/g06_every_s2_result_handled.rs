//! Gate 6 (§10, §4.1): every S2 result is handled, AHEAD included, and the decoder is total.
//!
//! Size: over 700 lines because its three halves (the decoder table, the
//! five values end to end, the malformed answers) share one world of fake
//! siblings and one reading of the withheld lines.
//!
//! Three halves. The table: every case in `fixtures/contract/s2-decoder-cases.json`
//! decodes to its listed verdicts. The five values end to end: one search
//! meets VISIBLE, NOT_VISIBLE, STALE, AHEAD and UNKNOWN at once, and each gets
//! its treatment (render; omit silently; withhold loudly and refetch;
//! withhold loudly, mark for re-announce and delete nothing; withhold loudly
//! naming the app). The malformed answers end to end: a fake Docs answers
//! each way the decoder must survive, and the page withholds exactly the
//! pairs that got no clean answer, loudly. The MCP server's `document`
//! tool meets the values too, on the same one S2 path.

use std::path::PathBuf;

use memoria::wire::{self, Pair, S2Answer, SubjectKind, Verdict};
use memoria_simulator::{
    CallDetail, CallKind, FakeSibling, MalformedS2, Memoria, OWNERS, Outage, Rung, SiblingSpec,
    Slow, TruncateAnnounce, World,
};

use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world, stock, tagged_body};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 6.
pub static GATE: Gate = Gate {
    id: "6",
    title: "Every S2 result handled; the decoder is total",
    gates_md: &[
        "Every S2 result handled; decoder total (timeout, non-2xx, malformed, missing, duplicate, short, unknown value such as PERHAPS all become UNKNOWN); AHEAD arm present",
    ],
    sections: &["§10", "§4.1"],
    requirement: "VISIBLE renders, NOT_VISIBLE omits silently, STALE withholds loudly and refetches, AHEAD withholds loudly, marks the source for re-announce and deletes nothing, UNKNOWN withholds loudly; a timeout, non-2xx, malformed body, missing, duplicate or short answer, an unknown value such as PERHAPS and a subject-kind mismatch all become UNKNOWN.",
    cases: &[
        Case {
            id: "6/decoder-table",
            desc: "Decode every case of fixtures/contract/s2-decoder-cases.json (at least 25) and require exactly its listed verdicts, one per requested pair.",
            run: decoder_table,
        },
        Case {
            id: "6/five-values",
            desc: "Sheets answers VISIBLE, NOT_VISIBLE (the downgrade-with-grant transition), STALE and AHEAD for four items and Docs is down; one search renders the first, omits the second uncounted, withholds the rest with one line each, refetches the STALE item, marks Sheets for re-announce and keeps the AHEAD item.",
            run: five_values,
        },
        Case {
            id: "6/document-page-values",
            desc: "The five values on GET /documents/{id}, each asked there and nowhere else: VISIBLE renders the document; NOT_VISIBLE answers the same 404 page as an id memoria never held; STALE is withheld (503) with the search page's STALE line for Sheets and a refetch follows, after which the page renders the new revision; AHEAD is withheld with the search page's AHEAD line, marks Sheets for re-announce and deletes nothing; UNKNOWN is withheld with 'Docs did not answer; 1 result withheld.'.",
            run: document_page_values,
        },
        Case {
            id: "6/mcp-document-values",
            desc: "The MCP server's document tool, on the one S2 path: with every sibling answering VISIBLE it opens each document and one passage by its {id}#p{n}; then VISIBLE still opens, NOT_VISIBLE answers exactly what an id never held answers (no title, no text), and UNKNOWN is refused with 'Docs did not answer; 1 result withheld.'.",
            run: mcp_document_values,
        },
        Case {
            id: "6/malformed-answers",
            desc: "For each malformed S2 answer a fake can give (eleven shapes plus a hang), search two Docs items and require the page to withhold exactly the pairs without a clean answer, with a 'Docs did not answer' line, and render the rest.",
            run: malformed_answers,
        },
    ],
};

fn decoder_table(_ctx: &mut Ctx) -> Result<(), Failure> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/contract/s2-decoder-cases.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::new("the table reads", e.to_string()))?;
    let t: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::new("the table is JSON", e.to_string()))?;
    let pairs: Vec<Pair> = serde_json::from_value(t["pairs"].clone())
        .map_err(|e| Failure::new("pairs decode", e.to_string()))?;
    let kind: SubjectKind = serde_json::from_value(t["subject_kind"].clone())
        .map_err(|e| Failure::new("kind decodes", e.to_string()))?;
    let cases = t["cases"].as_array().cloned().unwrap_or_default();
    ensure(
        cases.len() >= 25,
        "at least 25 decoder cases",
        format!("{}", cases.len()),
    )?;
    let mut wrong = vec![];
    for case in &cases {
        let answer = match case.get("failure") {
            Some(_) => S2Answer::NoAnswer,
            None => S2Answer::Http {
                status: case["status"].as_u64().unwrap_or(0) as u16,
                body: case["body"].as_str().unwrap_or("").as_bytes().to_vec(),
            },
        };
        let got: Vec<Verdict> = wire::decode_s2(&pairs, kind, &answer).verdicts;
        let want: Vec<Option<Verdict>> = case["expect"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| Verdict::from_wire(v.as_str().unwrap_or("")))
                    .collect()
            })
            .unwrap_or_default();
        if got.iter().copied().map(Some).collect::<Vec<_>>() != want {
            wrong.push(format!("{}: got {got:?}", case["name"]));
        }
    }
    ensure(
        wrong.is_empty(),
        "every case decodes to its listed verdicts",
        wrong.join("; "),
    )
}

/// The items both five-value cases meet: Sheets' `sh-v`, `sh-nv`, `sh-s`
/// and `sh-a` (held at its second revision, so a restore can put it behind
/// memoria), each tagged in its body, and Docs' `dc-u` with `unknown_body`.
/// Every item is titled `title`.
fn five_items(
    sheets: &FakeSibling,
    docs: &FakeSibling,
    title: &str,
    unknown_body: &str,
    canary: &str,
) {
    sheets.model().with(|m| {
        for (id, tag) in [
            ("sh-v", "tagvisible"),
            ("sh-nv", "tagnotvisible"),
            ("sh-s", "tagstale"),
            ("sh-a", "tagahead"),
        ] {
            m.add_item(id, Rung::Team, title, &tagged_body(canary, tag))
                .expect("item");
        }
        m.revise("sh-a", title, &tagged_body(canary, "tagahead"))
            .expect("revise");
    });
    docs.model().with(|m| {
        m.add_item("dc-u", Rung::Team, title, unknown_body)
            .expect("item");
    });
}

fn five_values(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let canary = ctx.canary();
    let world = World::new(
        ctx.seed(),
        vec![SiblingSpec::own("sheets"), SiblingSpec::own("docs")],
    );
    stock(&world, "sheets", 8);
    let (sheets, docs) = (world.fake("sheets").clone(), world.fake("docs").clone());
    five_items(
        &sheets,
        &docs,
        "Q",
        &tagged_body(&canary, "tagunknown"),
        &canary,
    );
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let first_ahead_rev = first_revision(&sheets, "sh-a");
        // NOT_VISIBLE: downgraded to granted with Ana's grant intact, asked before `gone` arrives.
        downgrade_keeping_grant(&sheets, ana);
        sheets.model().with(|mm| {
            // STALE: the sibling moves past what memoria holds.
            mm.revise("sh-s", "Q", &tagged_body(&canary, "tagstale tagfresh"))
                .expect("revise");
            // AHEAD: a partial restore rewinds the item's content, not its event log.
            mm.restore_item_to("sh-a", &first_ahead_rev)
                .expect("restore");
        });
        docs.faults().set_outage(Some(Outage::Status(503)));
        // Sheets' re-announce fails until the AHEAD checks below are done,
        // so the mark AHEAD sets can be seen standing (§4.1 rule 2).
        sheets
            .faults()
            .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        let before = trace.events().len();
        let page = m.search(ana, &canary).await.response.body;
        check(
            page.contains("tagvisible"),
            "VISIBLE renders (presence)",
            "the VISIBLE passage is absent",
        )?;
        check(
            !page.contains("tagnotvisible"),
            "NOT_VISIBLE is omitted",
            "it renders",
        )?;
        for tag in ["tagstale", "tagahead", "tagunknown"] {
            check(
                !page.contains(tag),
                format!("{tag}'s passage is withheld"),
                "it renders",
            )?;
        }
        let lines = Page::parse(&page).withheld();
        let want = vec![
            "Docs did not answer; 1 result withheld.".to_string(),
            "Sheets has a newer version of 1 result; withheld while memoria fetches it.".to_string(),
            "Sheets is behind the version memoria holds of 1 result, as after a restore; withheld until Sheets re-announces. Nothing was deleted.".to_string(),
        ];
        check(
            lines == want,
            format!("exactly these withheld lines, NOT_VISIBLE counted nowhere: {want:?}"),
            format!("{lines:?}"),
        )?;
        // STALE refetches: S1 then S3 for sh-s at its new revision, and the next page renders it.
        m.settle_follow_ups().await;
        let fetched = trace.events()[before..].iter().any(|e| e.call == CallKind::S3 && matches!(&e.detail, CallDetail::S3 { item_id: Some(i), served: true, .. } if i == "sh-s"));
        check(
            fetched,
            "the STALE item is refetched through S3 after the page",
            "no S3 fetch of it followed",
        )?;
        // AHEAD: marked for re-announce, nothing deleted.
        ahead_kept(&m, "Sheets is marked for re-announce")?;
        // A complete re-announce brings Sheets back into the ranking (§4.1).
        sheets.faults().set_truncate_announce(None);
        docs.faults().set_outage(None);
        m.question_pulls(ana).await;
        let again = m.search(ana, &canary).await.response.body;
        check(
            again.contains("tagfresh"),
            "the refetched revision renders on the next search",
            "it does not",
        )
    })
}

/// The revision `item` in `sheets` was first announced at, for a restore to
/// rewind it to.
fn first_revision(sheets: &FakeSibling, item: &str) -> String {
    sheets
        .model()
        .with(|mm| mm.item(item).map(|i| i.log[0].revision.clone()))
        .unwrap_or_default()
}

/// Sheets downgrades `sh-nv` from team to granted, with `ana`'s grant
/// intact: NOT_VISIBLE to her before `gone` arrives.
fn downgrade_keeping_grant(sheets: &FakeSibling, ana: &str) {
    sheets.model().with(|mm| {
        mm.set_rung(
            "sh-nv",
            Rung::Granted {
                to: [ana.to_string()].into(),
            },
        )
        .expect("downgrade");
    });
}

/// AHEAD's treatment in memoria's store, after the page that met it:
/// Sheets marked for re-announce (`marked` says so), and `sh-a` still held.
fn ahead_kept(m: &Memoria, marked: &str) -> Result<(), String> {
    let instance = m.state().instance();
    let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
    let state = guard
        .store()
        .sibling_state("sheets")
        .map_err(|e| e.to_string())?;
    check(state.reannounce, marked, "it is not marked")?;
    let held = guard
        .store()
        .sibling_document("sheets", "sh-a")
        .map_err(|e| e.to_string())?;
    check(
        held.is_some(),
        "the AHEAD item is still held: nothing deleted",
        "it was deleted",
    )
}

/// The document id memoria holds for `app`'s item `item`.
fn document_id(m: &Memoria, app: &str, item: &str) -> Result<String, String> {
    let instance = m.state().instance();
    let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
    guard
        .store()
        .sibling_document(app, item)
        .map_err(|e| e.to_string())?
        .map(|d| d.id)
        .ok_or_else(|| format!("memoria holds no document for {app}/{item}"))
}

/// A document page's status, withheld lines and whether it shows `tag`.
async fn open(m: &mut Memoria, id: &str, tag: &str) -> (u16, Vec<String>, bool, String) {
    let r = m.get(OWNERS[0], &format!("/documents/{id}")).await.response;
    let lines = Page::parse(&r.body).withheld();
    let shows = r.body.contains(tag);
    (r.status.as_u16(), lines, shows, r.body)
}

/// The title every sibling item of the document-page case carries: content
/// a withheld page must not show.
const TITLE_TAG: &str = "Ledger tagtitle";

/// The refetch's S3 latency while a second page is ruled, in ms: longer
/// than a page, shorter than the sync's S3 deadline (`INGEST_CALL_DEADLINE_MS`).
const SLOW_S3_MS: u64 = 3_000;

/// A body of three sections long enough that none is folded into another:
/// a document of three passages. The first section is `tagged_body`'s own
/// `# Notes` heading: a `# Part one` straight above it would be a heading
/// with no body, which §7.2's chunker makes a passage of its own (issue 11).
fn three_passages(canary: &str, tag: &str) -> String {
    let filler = "words that only pad this section past the runt limit ".repeat(12);
    format!(
        "{} {filler}\n\n# Part two\n\nThe second part. {filler}\n\n# Part three\n\nThe third part. {filler}\n",
        tagged_body(canary, tag)
    )
}

/// Headers that differ between any two responses (the time they were sent,
/// and a length that follows the body, compared on its own).
const HEADERS_THAT_VARY: &[&str] = &["date", "content-length"];

/// A response's headers, minus [`HEADERS_THAT_VARY`], as sorted pairs.
fn stable_headers(r: &memoria::testkit::TestResponse) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = r
        .headers
        .iter()
        .filter(|(k, _)| !HEADERS_THAT_VARY.contains(&k.as_str()))
        .map(|(k, v)| {
            (
                k.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The world the document-page and MCP document cases share: Sheets and
/// Docs with [`five_items`], Docs' three-passage item tagged `tagunknown`;
/// returns it, both fakes and the canary.
fn document_world(ctx: &mut Ctx) -> (World, FakeSibling, FakeSibling, String) {
    let canary = ctx.canary();
    let world = World::new(
        ctx.seed(),
        vec![SiblingSpec::own("sheets"), SiblingSpec::own("docs")],
    );
    let (sheets, docs) = (world.fake("sheets").clone(), world.fake("docs").clone());
    five_items(
        &sheets,
        &docs,
        TITLE_TAG,
        &three_passages(&canary, "tagunknown"),
        &canary,
    );
    (world, sheets, docs, canary)
}

fn document_page_values(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let (world, sheets, docs, canary) = document_world(ctx);
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let ids: Vec<String> = [
            ("sheets", "sh-v"),
            ("sheets", "sh-nv"),
            ("sheets", "sh-s"),
            ("sheets", "sh-a"),
            ("docs", "dc-u"),
        ]
        .iter()
        .map(|(app, item)| document_id(&m, app, item))
        .collect::<Result<_, _>>()?;
        let [v, nv, st, ah, un] = <[String; 5]>::try_from(ids).map_err(|_| "five ids")?;
        // Presence: with every sibling answering VISIBLE, each page renders.
        for (id, tag) in [
            (&v, "tagvisible"),
            (&nv, "tagnotvisible"),
            (&st, "tagstale"),
            (&ah, "tagahead"),
            (&un, "tagunknown"),
        ] {
            let (status, lines, shows, _) = open(&mut m, id, tag).await;
            check(
                status == 200 && shows && lines.is_empty(),
                format!("before any change, the {tag} document page renders"),
                format!("status {status}, shows {shows}, lines {lines:?}"),
            )?;
        }
        let (_, _, shows_title, _) = open(&mut m, &v, "tagtitle").await;
        let passages = {
            let r = m.get(ana, &format!("/documents/{un}")).await.response;
            Page::parse(&r.body).tags("section.passage").len()
        };
        check(
            shows_title && passages == 3,
            "before any change a document page shows its title, and the Docs document holds three passages",
            format!("title shown {shows_title}, {passages} passages"),
        )?;
        let first_ahead_rev = first_revision(&sheets, "sh-a");
        downgrade_keeping_grant(&sheets, ana);
        sheets.model().with(|mm| {
            mm.revise("sh-s", "Q", &tagged_body(&canary, "tagstale tagfresh"))
                .expect("revise");
        });
        docs.faults().set_outage(Some(Outage::Status(503)));
        // VISIBLE renders.
        let (status, lines, shows, _) = open(&mut m, &v, "tagvisible").await;
        check(
            status == 200 && shows && lines.is_empty(),
            "VISIBLE: the document page renders",
            format!("status {status}, shows {shows}, lines {lines:?}"),
        )?;
        // NOT_VISIBLE is the same 404 as an id memoria never held.
        let refused = m.get(ana, &format!("/documents/{nv}")).await.response;
        let (status, lines) = (
            refused.status.as_u16(),
            Page::parse(&refused.body).withheld(),
        );
        let (shows, body) = (refused.body.contains("tagnotvisible"), refused.body.clone());
        let never = m
            .get(ana, &format!("/documents/{}", "0".repeat(v.len())))
            .await
            .response;
        let same_headers = stable_headers(&refused) == stable_headers(&never);
        check(
            status == 404
                && !shows
                && !body.contains("tagtitle")
                && lines.is_empty()
                && never.status == 404
                && body == never.body
                && same_headers,
            "NOT_VISIBLE: the same 404 as an id never held, body byte for byte and every header but the date",
            format!(
                "status {status} (never held: {}), shows {shows}, lines {lines:?}, same body {}, same headers {same_headers}",
                never.status,
                body == never.body
            ),
        )?;
        // STALE: withheld with the search page's words, then refetched. The
        // refetch's S3 is slow, and another page is ruled while it runs:
        // settling must still wait for it.
        sheets.faults().set_slow(Some(Slow {
            latency_ms: SLOW_S3_MS,
            only: Some(CallKind::S3),
        }));
        let before = trace.events().len();
        let (status, lines, shows, body) = open(&mut m, &st, "tagstale").await;
        let want = "Sheets has a newer version of 1 result; withheld while memoria fetches it.";
        check(
            status == 503 && !shows && !body.contains("tagtitle") && lines == [want],
            format!("STALE: withheld (503) with exactly {want:?}, and no title"),
            format!("status {status}, shows {shows}, lines {lines:?}"),
        )?;
        let (status, _, _, _) = open(&mut m, &v, "tagvisible").await;
        let settled = m.settle_follow_ups().await;
        sheets.faults().set_slow(None);
        check(
            status == 200 && settled.iter().any(|r| r.app == "sheets" && r.fetched >= 1),
            "a second page ruled while the refetch runs does not drop it: settling waits for Sheets' refetch",
            format!(
                "second page {status}, settled {:?}",
                settled
                    .iter()
                    .map(|r| (&r.app, r.fetched))
                    .collect::<Vec<_>>()
            ),
        )?;
        let fetched = trace.events()[before..].iter().any(|e| {
            e.call == CallKind::S3
                && matches!(&e.detail, CallDetail::S3 { item_id: Some(i), served: true, .. } if i == "sh-s")
        });
        check(
            fetched,
            "STALE on the document page starts a refetch of the item through S3",
            "no S3 fetch of it followed",
        )?;
        let (status, _, shows, _) = open(&mut m, &st, "tagfresh").await;
        check(
            status == 200 && shows,
            "after the refetch the document page renders the new revision",
            format!("status {status}, shows the new revision: {shows}"),
        )?;
        // AHEAD: withheld, marked for re-announce, nothing deleted.
        sheets.model().with(|mm| {
            mm.restore_item_to("sh-a", &first_ahead_rev)
                .expect("restore");
        });
        sheets
            .faults()
            .set_truncate_announce(Some(TruncateAnnounce::NoClose));
        let (status, lines, shows, body) = open(&mut m, &ah, "tagahead").await;
        let want = "Sheets is behind the version memoria holds of 1 result, as after a restore; withheld until Sheets re-announces. Nothing was deleted.";
        check(
            status == 503 && !shows && !body.contains("tagtitle") && lines == [want],
            format!("AHEAD: withheld (503) with exactly {want:?}"),
            format!("status {status}, shows {shows}, lines {lines:?}"),
        )?;
        m.settle_follow_ups().await;
        ahead_kept(
            &m,
            "AHEAD on the document page marks Sheets for re-announce",
        )?;
        // UNKNOWN: withheld, naming the app as the search page does.
        let (status, lines, shows, body) = open(&mut m, &un, "tagunknown").await;
        let want = "Docs did not answer; 1 result withheld.";
        check(
            status == 503 && !shows && !body.contains("tagtitle") && lines == [want],
            format!(
                "UNKNOWN: withheld (503) with exactly {want:?} for a document of three passages, and no title"
            ),
            format!("status {status}, shows {shows}, lines {lines:?}"),
        )
    })
}

/// The MCP server a process serving `m`'s page would run beside it, as
/// `ana`: the same instance, siblings, puller and scopes.
fn mcp_beside(m: &Memoria, ana: &str) -> memoria::McpServer {
    let state = m.state();
    let server = memoria::McpServer::new(
        state.shared_instance().clone(),
        state.siblings().map(|c| (*c).clone()),
        None,
        ana,
        state.scopes().clone(),
    );
    match state.puller() {
        Some(p) => server.with_puller(p.clone()),
        None => server,
    }
}

/// The document tool's answer for `id`: refused or not, and its text.
async fn tool_document(server: &memoria::McpServer, id: &str) -> (bool, String) {
    let outcome = server
        .document_call(memoria::DocumentArgs { id: id.to_string() })
        .await;
    (outcome.is_error, outcome.text)
}

fn mcp_document_values(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let (world, sheets, docs, _canary) = document_world(ctx);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let v = document_id(&m, "sheets", "sh-v")?;
        let nv = document_id(&m, "sheets", "sh-nv")?;
        let un = document_id(&m, "docs", "dc-u")?;
        let server = mcp_beside(&m, ana);
        // Presence: with every sibling answering VISIBLE, the tool opens each.
        for (id, tag) in [
            (&v, "tagvisible"),
            (&nv, "tagnotvisible"),
            (&un, "tagunknown"),
        ] {
            let (refused, text) = tool_document(&server, id).await;
            check(
                !refused && text.contains(tag) && text.contains("tagtitle"),
                format!(
                    "before any change, the document tool opens the {tag} document, title and text"
                ),
                format!("refused {refused}, {} bytes", text.len()),
            )?;
        }
        let (refused, text) = tool_document(&server, &format!("{un}#p2")).await;
        check(
            !refused
                && text.contains(&format!("passage 2 › Part two · /documents/{un}#p2"))
                && !text.contains("passage 1")
                && !text.contains("passage 3"),
            "{id}#p2 opens passage 2 alone, labelled and linked with the same number",
            text.lines().take(4).collect::<Vec<_>>().join(" / "),
        )?;
        let never = "0".repeat(v.len());
        let (never_refused, never_text) = tool_document(&server, &never).await;
        downgrade_keeping_grant(&sheets, ana);
        docs.faults().set_outage(Some(Outage::Status(503)));
        let (refused, text) = tool_document(&server, &v).await;
        check(
            !refused && text.contains("tagvisible"),
            "VISIBLE: the document tool opens the document",
            format!("refused {refused}, {} bytes", text.len()),
        )?;
        let (refused, text) = tool_document(&server, &nv).await;
        check(
            refused
                && never_refused
                && text == never_text
                && !text.contains("tagnotvisible")
                && !text.contains("tagtitle"),
            "NOT_VISIBLE: the document tool answers what an id never held answers, byte for byte, with no title or text",
            format!("refused {refused}: {text:?}; never held: {never_text:?}"),
        )?;
        let (refused, text) = tool_document(&server, &format!("{nv}#p1")).await;
        check(
            refused && text == never_text,
            "NOT_VISIBLE: a passage of it is refused the same way",
            format!("refused {refused}: {text:?}"),
        )?;
        let (refused, text) = tool_document(&server, &un).await;
        let want = "Docs did not answer; 1 result withheld.";
        check(
            refused && text == want && !text.contains("tagunknown"),
            format!("UNKNOWN: the document tool refuses with exactly {want:?}"),
            format!("refused {refused}: {text:?}"),
        )
    })
}

/// One way a fake Docs answers S2 without a clean answer: the shape's
/// name, the malformed answer or the outage that makes it, and how many of
/// the two pairs lose their clean answer.
struct Shape {
    name: &'static str,
    malformed: Option<MalformedS2>,
    outage: Option<Outage>,
    lost: usize,
}

/// Every malformed S2 answer a fake can give, and a hang.
const SHAPES: &[Shape] = &[
    Shape {
        name: "not JSON",
        malformed: Some(MalformedS2::NotJson),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "empty",
        malformed: Some(MalformedS2::Empty),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "truncated",
        malformed: Some(MalformedS2::Truncated),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "trailing bytes",
        malformed: Some(MalformedS2::TrailingBytes),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "missing item",
        malformed: Some(MalformedS2::MissingItem),
        outage: None,
        lost: 1,
    },
    Shape {
        name: "short response",
        malformed: Some(MalformedS2::ShortResponse),
        outage: None,
        lost: 1,
    },
    Shape {
        name: "duplicate item",
        malformed: Some(MalformedS2::DuplicateItem),
        outage: None,
        lost: 1,
    },
    Shape {
        name: "unknown value PERHAPS",
        malformed: Some(MalformedS2::UnknownValue),
        outage: None,
        lost: 1,
    },
    Shape {
        name: "subject kind mismatch",
        malformed: Some(MalformedS2::KindMismatch),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "non-2xx 500",
        malformed: Some(MalformedS2::Non2xx(500)),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "extra field",
        malformed: Some(MalformedS2::ExtraField),
        outage: None,
        lost: 2,
    },
    Shape {
        name: "hang past the deadline",
        malformed: None,
        outage: Some(Outage::Hang),
        lost: 2,
    },
];

fn malformed_answers(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let canary = ctx.canary();
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("docs")]);
    let docs = world.fake("docs").clone();
    docs.model().with(|m| {
        m.add_item("dc-1", Rung::Team, "D", &tagged_body(&canary, "tagone"))
            .expect("item");
        m.add_item("dc-2", Rung::Team, "D", &tagged_body(&canary, "tagtwo"))
            .expect("item");
    });
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let clean = m.search(ana, &canary).await.response.body;
        check(
            clean.contains("tagone")
                && clean.contains("tagtwo")
                && Page::parse(&clean).withheld().is_empty(),
            "with no fault both Docs passages render (presence)",
            format!("withheld {:?}", Page::parse(&clean).withheld()),
        )?;
        for &Shape {
            name,
            malformed,
            outage,
            lost,
        } in SHAPES
        {
            docs.faults().set_malformed_s2(malformed);
            docs.faults().set_outage(outage);
            let page = m.search(ana, &canary).await.response.body;
            docs.faults().set_malformed_s2(None);
            docs.faults().set_outage(None);
            let results = if lost == 1 { "result" } else { "results" };
            let want = vec![format!("Docs did not answer; {lost} {results} withheld.")];
            let lines = Page::parse(&page).withheld();
            let shown = ["tagone", "tagtwo"]
                .iter()
                .filter(|t| page.contains(**t))
                .count();
            check(
                lines == want && shown == 2 - lost,
                format!("{name}: {want:?} and {} passage(s) rendered", 2 - lost),
                format!("{lines:?} and {shown} rendered"),
            )?;
        }
        Ok(())
    })
}
