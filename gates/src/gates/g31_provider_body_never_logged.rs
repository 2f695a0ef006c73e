//! Gate 31 (§10, §3.2, §8.3): a provider's response body is never logged, at any level, on success or on error, the 5 MB and malformed bodies included.
//!
//! Every line any thread logs at TRACE and above is captured
//! ([`CapturedLogs`]). The stub provider's bodies carry a marker of the
//! case's own: the scripted reply on success, and on error the marker the
//! stub appends to every error message, the malformed body and the 5 MB
//! body ([`memoria_simulator::StubProvider::set_body_marker`]). Presence
//! first, each time: the body reached memoria (the reply renders, or the
//! failure is named on the page) and the path logged (its own line is in
//! the capture); only then is the marker required to be in no line.

use memoria_simulator::{ChatFaults, OWNERS, ProviderDown as Down, StubProvider};

use crate::rigs::answer::{Fault, ITEMS, question, world};
use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world};
use crate::rigs::support::CapturedLogs;
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 31.
pub static GATE: Gate = Gate {
    id: "31",
    title: "A provider's response body is never logged",
    gates_md: &["A provider's response body is never logged"],
    sections: &["§10", "§3.2", "§8.3"],
    requirement: "With every level captured, no line holds any part of a provider's response body: a chat reply that rendered, a chat error's body (5xx, 429, 400, 401, 403), the malformed, the 5 MB, the empty and the cut-off chat bodies, and an embeddings error's body; each after the body is shown to have reached memoria and the path to have logged.",
    cases: &[
        Case {
            id: "31/a-reply-that-rendered-is-in-no-log-line",
            desc: "The model's reply carries the marker and renders in the answer (presence), the capture holds the answer's own line (presence); the marker is in no captured line.",
            run: reply_rendered,
        },
        Case {
            id: "31/a-chat-error-body-is-in-no-log-line",
            desc: "With the marker in every body (an error's message, the malformed body, the 5 MB body, a field of every completion), the provider answers 503, 429 on every attempt, 400, 401, 403, a malformed body, a 5 MB body, an empty completion and a reply cut at its length limit in turn. Each page names the failure (presence: memoria read the answer) and the capture holds the failure's own line each time; the marker is in no captured line and on no page.",
            run: chat_errors,
        },
        Case {
            id: "31/an-embeddings-error-body-is-in-no-log-line",
            desc: "With AI on and the marker in every body, the embeddings call answers 503, 429, 400 and 401 in turn. The drain embeds nothing and says so, the stub recorded the calls and the capture holds the drain's failure lines (presence); the marker is in no captured line.",
            run: embeddings_errors,
        },
    ],
};

fn reply_rendered(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let mark = format!("replymark{canary}");
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    let logs = CapturedLogs::default();
    let (m2, s2) = (mark.clone(), stub.clone());
    logs.capture(|| {
        run_world(&world, move |mut m| async move {
            m.warmed_up().await?;
            s2.push_chat_reply(&format!("The plan names {m2} [1]."));
            let page = Page::parse(&m.search(OWNERS[0], &q).await.response.body);
            let sentences = page.answer_sentences();
            check(
                sentences.len() == 1 && sentences[0].0.contains(&m2),
                "the reply's marker renders in the answer (presence)",
                format!("{sentences:?}"),
            )
        })
    })?;
    let text = logs.all_text();
    ensure(
        text.contains("answer judged"),
        "the answer path logged its line (presence)",
        "no line of it is in the capture",
    )?;
    ensure(
        !text.contains(&mark),
        "the reply is in no captured line",
        "a line holds it",
    )
}

fn chat_errors(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let mark = format!("bodymark{canary}");
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    stub.set_body_marker(Some(&mark));
    let q = question(&canary);
    let logs = CapturedLogs::default();
    let (m2, s2) = (mark.clone(), stub.clone());
    let faults: [Fault; 9] = [
        ("503", |s| s.set_chat_down(Some(Down::Status(503)))),
        ("429 on every attempt", |s| s.chat_rate_limit_next(10)),
        ("400", |s| s.set_chat_down(Some(Down::Status(400)))),
        ("401", |s| s.set_chat_down(Some(Down::Status(401)))),
        ("403", |s| s.set_chat_down(Some(Down::Status(403)))),
        ("a malformed body", |s| s.set_chat_malformed(true)),
        ("a 5 MB body", |s| s.set_chat_oversized(true)),
        ("an empty completion", |s| {
            s.set_chat_default_reply(Some(""))
        }),
        ("a reply cut at its length limit", |s| {
            s.set_chat_truncated(true)
        }),
    ];
    logs.capture(|| {
        run_world(&world, move |mut m| async move {
            m.warmed_up().await?;
            for (name, set) in faults {
                s2.set_chat_faults(ChatFaults::default());
                // The reply carries the marker too: a cut-off reply's text
                // is the provider's body as much as its framing is.
                s2.set_chat_default_reply(Some(&format!("It changed {m2} [1].")));
                set(&s2);
                let body = m.search(OWNERS[0], &q).await.response.body;
                let loud = Page::parse(&body).texts("p.answer-failed");
                check(
                    loud.len() == 1,
                    format!("with {name}, the page names the failure (presence)"),
                    format!("{loud:?}"),
                )?;
                check(
                    !body.contains(&m2),
                    format!("with {name}, the body is on no page"),
                    "the page holds it",
                )?;
            }
            check(
                s2.chat_calls() >= faults.len(),
                "every fault was a call the stub answered",
                format!("{} calls", s2.chat_calls()),
            )
        })
    })?;
    let text = logs.all_text();
    let failed = text.matches("answer: the provider call failed").count()
        + text
            .matches("answer: the reply was cut at its length limit")
            .count();
    ensure(
        failed >= 9,
        "the capture holds the failure's own line for each of the nine faults (presence)",
        format!("{failed} lines"),
    )?;
    ensure(
        !text.contains(&mark),
        "no error body is in a captured line",
        "a line holds one",
    )
}

fn embeddings_errors(ctx: &mut Ctx) -> Result<(), Failure> {
    use memoria::NewDocument;
    let canary = ctx.canary();
    let mark = format!("embedmark{canary}");
    let dir = ctx.dir("data");
    let sealer = memoria::Sealer::new(&crate::rigs::support::dek(ctx.rng()));
    let mut instance = crate::rigs::dense::wake_ai_on(&dir, sealer)?;
    instance
        .ingest(&NewDocument {
            source_key: "upload:plan.txt".into(),
            title: "Plan".into(),
            path: "plan.txt".into(),
            body: format!("The {canary} plan changed."),
            date: None,
        })
        .map_err(|e| Failure::new("a document is ingested", e.to_string()))?;
    let stub = StubProvider::new();
    stub.set_body_marker(Some(&mark));
    let logs = CapturedLogs::default();
    let s2 = stub.clone();
    let drained = logs.capture(|| {
        crate::rigs::dense::with_stub_provider(ctx.seed(), &stub, instance, move |app| async move {
            // 400 last: it refuses the passage's content, so the drain
            // sets the passage aside (failure none, issue 26) and later
            // drains leave it out until its retry is due.
            for status in [503, 429, 401, 400] {
                s2.set_down(Some(Down::Status(status)));
                let report = app.state().drain_embeddings().await;
                if report.stored != 0 || (report.failure.is_none() && report.set_aside == 0) {
                    return Err(Failure::new(
                        format!("with {status}, the drain stores nothing and names the failure or sets the passage aside"),
                        format!("{report:?}"),
                    ));
                }
            }
            Ok(())
        })
    });
    drained?;
    ensure(
        stub.requests().len() >= 2,
        "the stub answered the embeddings calls (presence)",
        format!("{} calls", stub.requests().len()),
    )?;
    let text = logs.all_text();
    ensure(
        text.contains("WARN") || text.contains("ERROR"),
        "the drain's failures are logged (presence)",
        "no warning or error line is in the capture",
    )?;
    ensure(
        !text.contains(&mark),
        "no embeddings error body is in a captured line",
        "a line holds one",
    )
}
