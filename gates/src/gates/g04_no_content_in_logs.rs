//! Gate 4 (§10, §3.2): no content in logs — query text, titles, passages, paths, and the sign-in token.
//!
//! Requirement: nothing a person wrote or typed, and no credential, reaches
//! a log line. Each case first proves the thing was sent or handled (the
//! sign-in link reached the delivery sink and opened a session; the query
//! found its passage; the title rendered on a page) and that logging was
//! live on that path, and only then that the captured logs do not hold it.

use crate::rigs::app::app;
use crate::rigs::support::{CapturedLogs, block_on, write_file};
use crate::{Case, Ctx, Failure, Gate, ensure};

const OWNER: &str = "ana@example.org";

/// Gate 4.
pub static GATE: Gate = Gate {
    id: "4",
    title: "No content in logs",
    gates_md: &[
        "No content in logs (query, answer, snippets, model ledger); credential half proves a sign-in link was sent before asserting its token is in no log line",
    ],
    sections: &["§10", "§3.2", "§9.1"],
    requirement: "Query text, titles, passages, paths and the sign-in token never appear in captured logs, after the harness has proven each was handled and that the path logged.",
    cases: &[
        Case {
            id: "4/sign-in-token",
            desc: "Deliver a one-time sign-in link to a capture sink, follow it to a session, and require the token in no log line while the log records the delivery and the sign-in.",
            run: sign_in_token,
        },
        Case {
            id: "4/query-text",
            desc: "Search canary words through the page, the fragment, an over-long query and a 404 path; require the passage found, the search logged, and no query word in any log line.",
            run: query_text,
        },
        Case {
            id: "4/ai-on-paths",
            desc: "With AI on against the stub provider in a simulation: upload a canary passage, drain the embedding queue, search the canary (the query is embedded), take the provider down, upload a second canary passage and drain (it fails and stays queued), search again (lexical, said loudly); require the provider to have received the passage and the query, the drains and the failure to be logged, and no canary, no provider key, no stored vector component and no component of the provider's own vector in any log line.",
            run: ai_on_paths,
        },
        Case {
            id: "4/answer-path",
            desc: "With AI on in a simulation, ask a question over four Sheets items whose titles, markers and the question carry canaries; the stub answers citing them and then fails. Require the answer rendered, the prompt to have held every marker, the answer's lines logged (judged, then failed), and no canary, title, marker or query word in any log line.",
            run: answer_path,
        },
        Case {
            id: "4/brief-path",
            desc: "Ask for a brief whose task, the resolved document's title, path and sentence, and an organisation document's sentence carry canaries, and one whose task is refused; require the brief resolved and quoting both sentences, the pool read and the assembly logged, and no canary in any log line.",
            run: brief_path,
        },
        Case {
            id: "4/brief-link-to-no-document",
            desc: "Ask for a brief whose resolved document links to a document it holds and to a canary-named path that is no document; require the first link a relation and the second none, the pool read logged, and the canary path in no log line.",
            run: brief_link_to_no_document,
        },
        Case {
            id: "4/no-stray-prints",
            desc: "Parse reference/src and require print macros (println!, eprintln!, print!, eprint!, dbg!) only in main.rs (the CLI's answers) and in access/session.rs's TerminalDelivery (the sign-in link's delivery to the terminal); anything else writes around the log and the log check.",
            run: no_stray_prints,
        },
        Case {
            id: "4/titles-passages-paths",
            desc: "Upload, view and delete a document whose title, heading, body and file name carry canaries, and import a directory with a refused canary-named file; require each rendered or reported, the actions logged, and no canary in the logs.",
            run: titles_passages_paths,
        },
    ],
};

fn sign_in_token(ctx: &mut Ctx) -> Result<(), Failure> {
    let logs = CapturedLogs::default();
    let mut app = app(ctx, OWNER)?;
    let link = logs.capture(|| block_on(app.sign_in(OWNER)));
    let token = link
        .split_once("token=")
        .map(|(_, t)| t.to_string())
        .unwrap_or_default();
    ensure(
        token.len() >= 32,
        "the delivered link carries a token",
        format!("{} chars", token.len()),
    )?;
    ensure(
        app.delivered_links().iter().any(|(_, u)| *u == link),
        "the sink captured the followed link",
        "it did not",
    )?;
    let text = logs.text();
    ensure(
        text.contains("sign-in link delivered") && text.contains("signed in"),
        "the log records the delivery and the sign-in",
        format!("{} log bytes without those lines", text.len()),
    )?;
    let text = logs.all_text();
    ensure(
        !text.contains(&token),
        "the token is in no log line",
        "the token was logged",
    )?;
    ensure(
        !text.contains("token="),
        "no token parameter is logged",
        "a token= parameter was logged",
    )
}

fn query_text(ctx: &mut Ctx) -> Result<(), Failure> {
    let a = ctx.canary();
    let b = ctx.canary();
    let logs = CapturedLogs::default();
    let mut app = app(ctx, OWNER)?;
    let (page, fragment) = logs.capture(|| {
        block_on(async {
            app.sign_in(OWNER).await;
            let up = app
                .upload(
                    "notes.md",
                    format!("# Notes\n\nThe {a} figure is final.\n").as_bytes(),
                    None,
                )
                .await;
            assert_eq!(up.status.as_u16(), 303, "upload accepted");
            let page = app.get(&format!("/?q={a}+{b}")).await;
            let fragment = app.get(&format!("/search?q={a}")).await;
            // A query that matches nothing, on both surfaces and past page 1.
            let _ = app.get(&format!("/?q={b}")).await;
            let _ = app.get(&format!("/search?q={b}")).await;
            let _ = app.get(&format!("/?q={a}&page=2")).await;
            let long = format!("/?q={a}+{}", "x".repeat(1100));
            let _ = app.get(&long).await;
            let _ = app.get(&format!("/documents/{b}")).await;
            (page, fragment)
        })
    });
    ensure(
        crate::rigs::page::of(&page).marks().contains(&a),
        "the page found and highlighted the queried passage",
        format!("status {} without the highlight", page.status),
    )?;
    ensure(
        crate::rigs::page::of(&fragment).marks().contains(&a),
        "the fragment found the queried passage",
        format!("status {}", fragment.status),
    )?;
    let text = logs.text();
    ensure(
        text.contains("searched") && text.contains("route=/search"),
        "the log records the searches",
        "no search log lines",
    )?;
    absent_from_logs(
        &logs,
        &[("first query word", &a), ("second query word", &b)],
    )
}

fn brief_path(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::brief::{Doc, ask, brief, instance_with, request, scopes};
    let (title, path, body, org, task) = (
        ctx.canary(),
        ctx.canary(),
        ctx.canary(),
        ctx.canary(),
        ctx.canary(),
    );
    let own = format!("# {title}\n\nThe {body} ledger is reconciled nightly by {task} staff.\n");
    let theirs = format!("# Shared\n\nEvery {org} ledger follows the {task} checklist.\n");
    let own_path = format!("repo/{path}.md");
    let docs = [
        Doc {
            title: &title,
            path: &own_path,
            body: &own,
        },
        Doc {
            title: "Shared",
            path: "org/shared.md",
            body: &theirs,
        },
    ];
    let logs = CapturedLogs::default();
    let m = instance_with(ctx, &docs)?;
    let s = scopes();
    let (b, refused) = logs.capture(|| {
        let b = brief(
            &m,
            &s,
            &request(&format!("{task} ledger nightly {body}"), "repo", 2000),
        );
        let refused = ask(
            &m,
            &s,
            &request(&format!("{task} {}", "x".repeat(1100)), "repo", 2000),
        );
        (b, refused)
    });
    let b = b?;
    let text = b.to_text();
    ensure(
        b.status == memoria::brief::Status::Resolved && text.contains(&body) && text.contains(&org),
        "the brief resolved and quotes both canary sentences",
        format!("{:?}", b.status),
    )?;
    ensure(
        refused.is_err(),
        "the over-long task is refused",
        "it was briefed",
    )?;
    let logged = logs.text();
    ensure(
        logged.contains("brief pool read") && logged.contains("brief assembled"),
        "the log records the pool and the assembly",
        "no brief log lines",
    )?;
    absent_from_logs(
        &logs,
        &[
            ("task word", &task),
            ("title", &title),
            ("path", &path),
            ("passage word", &body),
            ("organisation passage word", &org),
        ],
    )
}

fn brief_link_to_no_document(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::brief::{Doc, brief, instance_with, request, scopes};
    let nowhere = ctx.canary();
    let runbook = format!(
        "# Runbook\n\nRead the [deploy notes](deploy.md) before any runbook step.\n\n\
         Ask the [night desk](desk/{nowhere}.md) when a runbook step fails.\n"
    );
    let docs = [
        Doc {
            title: "Runbook",
            path: "repo/runbook.md",
            body: &runbook,
        },
        Doc {
            title: "Deploy notes",
            path: "repo/deploy.md",
            body: "# Deploy notes\n\nDeploys follow the runbook on Tuesdays only.\n",
        },
    ];
    let logs = CapturedLogs::default();
    let m = instance_with(ctx, &docs)?;
    let b = logs.capture(|| brief(&m, &scopes(), &request("Runbook", "repo", 2000)))?;
    let targets: Vec<&str> = b
        .relations
        .iter()
        .map(|r| r.target_title.as_str())
        .collect();
    ensure(
        targets == ["Deploy notes"],
        "the link to the deploy notes is the one relation; the canary path resolves to nothing",
        format!("{:?}: {targets:?}", b.status),
    )?;
    ensure(
        logs.text().contains("brief pool read"),
        "the log records the pool read",
        "no brief log lines",
    )?;
    absent_from_logs(&logs, &[("path linked to no document", &nowhere)])
}

fn titles_passages_paths(ctx: &mut Ctx) -> Result<(), Failure> {
    let title = ctx.canary();
    let heading = ctx.canary();
    let body = ctx.canary();
    let file = ctx.canary();
    let refused = ctx.canary();
    let import_dir = ctx.dir("import");
    // Invalid UTF-8 with no byte-order mark: refused as text in any
    // encoding memoria reads (`FF FE` would now open UTF-16, issue 32).
    write_file(
        &import_dir.join(format!("{refused}.md")),
        b"\xc3\x28 not utf-8",
    );
    let logs = CapturedLogs::default();
    let mut app = app(ctx, OWNER)?;
    let (doc_page, report) = logs.capture(|| {
        block_on(async {
            app.sign_in(OWNER).await;
            let md = format!("# {title}\n\n## {heading}\n\nThe passage holds {body}.\n");
            let up = app.upload(&format!("{file}.md"), md.as_bytes(), None).await;
            let loc = up.location().unwrap_or_default().to_string();
            let doc_page = app.get(&loc).await;
            let id = loc.trim_start_matches("/documents/").to_string();
            let csrf = app.csrf().unwrap_or_default().to_string();
            let del = app
                .post_form(&format!("/documents/{id}/delete"), &[("csrf", &csrf)])
                .await;
            assert_eq!(del.status.as_u16(), 303, "delete accepted");
            let instance = app.state().instance();
            let mut guard = instance.lock().expect("instance");
            let report = memoria::import(&mut guard, std::slice::from_ref(&import_dir))
                .expect("import runs");
            (doc_page, report)
        })
    });
    for (what, w) in [
        ("title", &title),
        ("heading", &heading),
        ("passage", &body),
        ("file name", &file),
    ] {
        ensure(
            doc_page.body.contains(w.as_str()),
            format!("the document page rendered the {what}"),
            "it did not",
        )?;
    }
    ensure(
        report.refused() == 1 && report.files[0].path.contains(&refused),
        "the import reported the refused file by name",
        format!("{} refused", report.refused()),
    )?;
    let text = logs.text();
    for line in [
        "ingested",
        "deleted",
        "a file was refused",
        "route=/documents/{id}",
    ] {
        ensure(
            text.contains(line),
            format!("the log records `{line}`"),
            "it does not",
        )?;
    }
    absent_from_logs(
        &logs,
        &[
            ("title", &title),
            ("heading", &heading),
            ("passage", &body),
            ("file name", &file),
            ("refused file name", &refused),
        ],
    )
}

fn ai_on_paths(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::dense::{STUB_PROVIDER_KEY, wake_ai_on, with_stub_provider};
    let a = ctx.canary();
    let b = ctx.canary();
    let c = ctx.canary();
    let logs = CapturedLogs::default();
    let dir = ctx.dir("data");
    let instance = wake_ai_on(
        &dir,
        memoria::Sealer::new(&crate::rigs::support::dek(ctx.rng())),
    )?;
    let stub = memoria_simulator::StubProvider::new();
    let seen = stub.clone();
    // The sentinel marker makes the stub return its sentinel vector, whose
    // components are long decimals a log line could not hold by chance.
    let body = format!(
        "# Notes\n\nThe {a} figure is final. {}\n",
        memoria_simulator::SENTINEL_MARKER
    );
    let stored: std::rc::Rc<std::cell::RefCell<Vec<f32>>> = std::rc::Rc::default();
    let slot = stored.clone();
    let (qa, qb, qc) = (a.clone(), b.clone(), c.clone());
    let marker = memoria_simulator::SENTINEL_MARKER;
    logs.capture(|| {
        with_stub_provider(ctx.seed(), &stub, instance, move |mut app| async move {
            app.sign_in(OWNER).await;
            let up = app.upload("notes.md", body.as_bytes(), None).await;
            ensure(
                up.status.as_u16() == 303,
                "the upload is accepted",
                format!("{}", up.status),
            )?;
            let drained = app.state().drain_embeddings().await;
            ensure(
                drained.stored >= 1,
                "the drain stored the passage's vector",
                format!("{drained:?}"),
            )?;
            let v = app
                .state()
                .blocking(|i| i.dense().vectors().next().map(|(_, v)| v.dequantised()))
                .await
                .map_err(|e| Failure::new("the store answers", e.to_string()))?;
            *slot.borrow_mut() = v.unwrap_or_default();
            // The query carries the marker too: its vector is the sentinel's,
            // so a logged query vector shows as the sentinel's values.
            let fused = app.get(&format!("/?q={qa}+{qb}+{marker}")).await;
            ensure(
                crate::rigs::page::of(&fused).marks().contains(&qa),
                "the AI-on search found and highlighted the passage",
                format!("status {}", fused.status),
            )?;
            seen.set_down(Some(memoria_simulator::ProviderDown::Status(503)));
            // A passage whose embedding fails: the drain's failure path.
            let later = format!("# Later\n\nThe {qc} memo waits for its vector.\n");
            let up = app.upload("later.md", later.as_bytes(), None).await;
            ensure(
                up.status.as_u16() == 303,
                "the second upload is accepted",
                format!("{}", up.status),
            )?;
            let failed = app.state().drain_embeddings().await;
            ensure(
                failed.failure.is_some() && failed.awaiting >= 1,
                "the drain with the provider down fails and leaves the passage queued",
                format!("{failed:?}"),
            )?;
            let lexical = app.get(&format!("/?q={qa}")).await;
            ensure(
                crate::rigs::page::of(&lexical).texts("p.semantic").len() == 1,
                "the search with the provider down says its ranking is lexical",
                format!("status {}", lexical.status),
            )
        })
    })?;
    let sent: Vec<String> = stub
        .requests()
        .iter()
        .flat_map(|r| r.inputs.clone())
        .collect();
    ensure(
        sent.iter().any(|i| i.contains(&a) && i.contains("figure")),
        "the provider received the passage to embed",
        format!("{} inputs", sent.len()),
    )?;
    ensure(
        sent.iter().any(|i| i.contains(&b)),
        "the provider received the query to embed",
        format!("{} inputs", sent.len()),
    )?;
    let text = logs.text();
    ensure(
        text.contains("embedding drain finished") && text.contains("could not be embedded"),
        "the log records the drain and the provider's failure",
        "no such log lines",
    )?;
    let key = STUB_PROVIDER_KEY.to_string();
    let components: Vec<String> = stored
        .borrow()
        .iter()
        .map(|v| format!("{v}"))
        // Long renderings only: "0.2" is also an address in the
        // simulation's own trace; "0.24253562" is a vector's.
        .filter(|v| v.len() >= 8)
        .take(4)
        .collect();
    ensure(
        !components.is_empty(),
        "the passage's vector has components to look for",
        "none",
    )?;
    // The provider's own values for the sentinel (what a logged response
    // body or query vector would show), beside the stored ones.
    let raw: Vec<String> = memoria_simulator::sentinel_vector()
        .iter()
        .map(|v| format!("{v}"))
        .filter(|v| v.len() >= 8)
        .take(4)
        .collect();
    let mut words: Vec<(&str, &String)> = vec![
        ("passage word", &a),
        ("query word", &b),
        ("queued passage word", &c),
        ("provider key", &key),
    ];
    for v in &components {
        words.push(("stored vector component", v));
    }
    for v in &raw {
        words.push(("provider's vector component", v));
    }
    absent_from_logs(&logs, &words)
}

fn answer_path(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::answer::{ITEMS, marker, prompts, question, title, world};
    use crate::rigs::sim::{check, run_world};
    let canary = ctx.canary();
    let (world, _, stub) = world(ctx.seed(), &canary, ITEMS);
    let q = question(&canary);
    let logs = CapturedLogs::default();
    let (s2, q2, c2) = (stub.clone(), q.clone(), canary.clone());
    logs.capture(|| {
        run_world(&world, move |mut m| async move {
            m.warmed_up().await?;
            s2.push_chat_reply(&format!("It names {} [1].", marker(&c2, 0)));
            let page = crate::rigs::page::Page::parse(
                &m.search(memoria_simulator::OWNERS[0], &q2)
                    .await
                    .response
                    .body,
            );
            check(
                page.answer_sentences().len() == 1,
                "the answer renders (presence)",
                format!("{:?}", page.answer_sentences()),
            )?;
            s2.set_chat_down(Some(memoria_simulator::ProviderDown::Status(503)));
            m.search(memoria_simulator::OWNERS[0], &q2).await;
            Ok(())
        })
    })?;
    let sent = prompts(&stub);
    ensure(
        sent.len() >= 2 && (0..ITEMS).all(|i| sent[0].contains(&marker(&canary, i))),
        "both questions reached the provider, the first with every passage (presence)",
        format!("{} requests", sent.len()),
    )?;
    let text = logs.all_text();
    ensure(
        text.contains("answer judged") && text.contains("answer: the provider call failed"),
        "the answer path logged its lines (presence)",
        "a line is missing",
    )?;
    let mut words: Vec<(&str, String)> = vec![("query", q.clone()), ("canary", canary.clone())];
    for i in 0..ITEMS {
        words.push(("passage marker", marker(&canary, i)));
        words.push(("title", title(i)));
    }
    let refs: Vec<(&str, &String)> = words.iter().map(|(w, s)| (*w, s)).collect();
    absent_from_logs(&logs, &refs)
}

/// The absence half: no word appears in any line this case or any other
/// thread of the process logged. Call it only after the presence half.
fn absent_from_logs(logs: &CapturedLogs, words: &[(&str, &String)]) -> Result<(), Failure> {
    let text = logs.all_text();
    for (what, w) in words {
        ensure(
            !text.contains(w.as_str()),
            format!("the {what} is in no log line"),
            format!("the {what} was logged"),
        )?;
    }
    Ok(())
}

/// Where a print macro may appear: (file, enclosing fn or "*" for any).
const PRINTS_ALLOWED: &[(&str, &str)] = &[("main.rs", "*"), ("access/session.rs", "deliver")];

struct Prints<'a> {
    file: &'a str,
    func: Vec<String>,
    found: Vec<String>,
}

impl<'ast> syn::visit::Visit<'ast> for Prints<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.func.push(f.sig.ident.to_string());
        syn::visit::visit_item_fn(self, f);
        self.func.pop();
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.func.push(f.sig.ident.to_string());
        syn::visit::visit_impl_item_fn(self, f);
        self.func.pop();
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let name = m
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if matches!(
            name.as_str(),
            "println" | "eprintln" | "print" | "eprint" | "dbg"
        ) {
            let func = self.func.last().cloned().unwrap_or_default();
            let allowed = PRINTS_ALLOWED
                .iter()
                .any(|(f, n)| *f == self.file && (*n == "*" || *n == func));
            if !allowed {
                let line = m.path.segments[0].ident.span().start().line;
                self.found
                    .push(format!("{name}! in {}:{line} ({func})", self.file));
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

fn no_stray_prints(_: &mut Ctx) -> Result<(), Failure> {
    use syn::visit::Visit as _;
    let src = std::path::Path::new(super::g17_no_undeclared_route::REFERENCE_SRC);
    let mut files = 0;
    let mut found = Vec::new();
    let mut allowed_seen = 0;
    for entry in walkdir::WalkDir::new(src)
        .into_iter()
        .filter_map(Result::ok)
    {
        let p = entry.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        let rel = p.strip_prefix(src).unwrap_or(p).display().to_string();
        let text = std::fs::read_to_string(p)
            .map_err(|e| Failure::new(format!("{rel} is readable"), e.to_string()))?;
        let ast = syn::parse_file(&text)
            .map_err(|e| Failure::new(format!("{rel} parses"), e.to_string()))?;
        files += 1;
        let mut v = Prints {
            file: &rel,
            func: vec![],
            found: vec![],
        };
        v.visit_file(&ast);
        found.extend(v.found);
        if PRINTS_ALLOWED.iter().any(|(f, _)| *f == rel)
            && (text.contains("println!") || text.contains("eprintln!"))
        {
            allowed_seen += 1;
        }
    }
    ensure(
        files >= 10,
        "the reference's sources were read",
        format!("{files} files"),
    )?;
    ensure(
        allowed_seen == PRINTS_ALLOWED.len(),
        "the visitor sees the allowed prints (so it would see others)",
        format!(
            "{allowed_seen} of {} allowed files print",
            PRINTS_ALLOWED.len()
        ),
    )?;
    ensure(
        found.is_empty(),
        "no print macro outside the CLI and the sign-in delivery",
        found.join("; "),
    )
}
