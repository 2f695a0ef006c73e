//! Gate 38 (§8.9, §3.6): the egress footer — every declared GET route, at whatever status it renders, states the egress mode.
//!
//! Requirement: every body memoria renders states the egress mode
//! truthfully, 200s and error pages alike (401, 400, 403, 404, 405, 413, 415,
//! 422), in both modes: every case runs against an instance with AI off and
//! one with AI on (§8.3's team-owner switch), and a page must carry its own
//! mode's sentence and never the other's. A response without a footer must be listed in
//! `memoria::FOOTER_EXEMPT` with its reason, and the gate verifies the
//! reason: the response has that status, an empty body, and a `Location`
//! whose page carries the footer. The walk covers every GET route in
//! `DECLARED_ROUTES`; a GET route the walk does not know fails the gate.

use memoria::EgressMode;
use memoria::testkit::{TestApp, TestResponse};
use memoria::{DECLARED_ROUTES, FOOTER_EXEMPT, FooterRule};

use crate::rigs::app::app_in_mode;
use crate::rigs::page::Page;
use crate::rigs::support::block_on;
use crate::{Case, Ctx, Failure, Gate, ensure};

const OWNER: &str = "ana@example.org";

/// The AI-off footer, word for word as the gate requires it. Held here, not
/// read from `EgressMode::footer`, so a footer rewritten in the code to claim
/// something else goes red instead of agreeing with itself.
pub const AI_OFF_FOOTER: &str = "Egress: AI is off. No document leaves this instance: memoria searches your content where it sits.";

/// Words an AI-off footer must not contain: each would describe egress that AI-off forbids.
const AI_OFF_FORBIDDEN: &[&str] = &["TensorX", "provider", "except", "sent", "model"];

/// The AI-on footer, word for word, held here for the same reason as
/// [`AI_OFF_FOOTER`]: what leaves (the text of every search, every passage
/// at indexing), to whom (TensorX, at its host) and for what (embedding by
/// the pinned model), §3.2 and §8.3.
pub const AI_ON_FOOTER: &str = "Egress: AI is on. The text of every search, and every passage when it is indexed, is sent to TensorX (api.tensorx.ai) to be embedded by the model qwen/qwen3-embedding-8b. To write an answer above a search's results, the search's text and its top eight passages are sent to TensorX's deepseek/deepseek-v4-flash-0731 or deepseek/deepseek-v4-pro-0813 (the answer names which); a search that asks for a postal address, live searches included, sends its top eight passages to deepseek/deepseek-v4-flash-0731 to find one. TensorX can read what it receives; nothing else leaves this instance.";

/// What an AI-on footer must name (§8.3): the provider, its host, the
/// model ids, and what leaves for each: the search and every passage to be
/// embedded, the top eight to answer (§8.4) or to find an address (§8.9).
const AI_ON_REQUIRED: &[&str] = &[
    "AI is on",
    "TensorX",
    "api.tensorx.ai",
    "qwen/qwen3-embedding-8b",
    "every search",
    "every passage",
    "deepseek/deepseek-v4-flash-0731",
    "deepseek/deepseek-v4-pro-0813",
    "top eight passages",
    "postal address",
];

/// Both modes; every case walks each.
const MODES: [EgressMode; 2] = [EgressMode::AiOff, EgressMode::AiOn];

/// CSS declarations that hide an element; none may target the footer.
const HIDING: &[&str] = &[
    "display:none",
    "visibility:hidden",
    "opacity:0",
    "font-size:0",
    "height:0",
    "color:transparent",
    "clip:rect(0",
];

/// Request header variants a page must not answer differently to, footer-wise.
const HEADER_VARIANTS: &[(&str, &str)] = &[
    ("hx-request", "true"),
    ("accept", "application/json"),
    ("accept", "text/plain"),
    ("x-requested-with", "XMLHttpRequest"),
];

/// Gate 38.
pub static GATE: Gate = Gate {
    id: "38",
    title: "The egress footer on every page",
    gates_md: &[
        "The egress footer: every declared GET route, at whatever status it renders, states the egress mode truthfully; routes without a footer are listed with a verified reason. The spec describes this gate in §8.9 without a number; 38 is this project's number for it",
    ],
    sections: &["§8.9", "§3.6", "§8.1"],
    requirement: "Every declared GET route, at every status it renders, states the egress mode truthfully; error pages too; responses without a footer are listed with a reason the gate verifies.",
    cases: &[
        Case {
            id: "38/every-get-route",
            desc: "In each mode (AI off, AI on), for every GET route in DECLARED_ROUTES, request it signed out and signed in, with a real id, an unknown id and a malformed id, an over-long query and an empty one; require that mode's footer, and not the other's, in every body, and fail on a GET route the walk does not know.",
            run: every_get_route,
        },
        Case {
            id: "38/error-pages",
            desc: "In each mode, provoke 404 (fallback, signed in and out), 405, 403 (CSRF), 413, 415, 422 and 400 (empty upload) pages; require that mode's footer in each.",
            run: error_pages,
        },
        Case {
            id: "38/server-error-pages",
            desc: "In each mode, corrupt a sealed title cell in the database file, then request the document page and a search that reaches it; require 500 pages, each with that mode's footer.",
            run: server_error_pages,
        },
        Case {
            id: "38/exemptions-verified",
            desc: "In each mode, for each FOOTER_EXEMPT entry, provoke that response and require its status, an empty body, and a Location whose page carries that mode's footer.",
            run: exemptions_verified,
        },
        Case {
            id: "38/footer-is-truthful",
            desc: "An instance woken with AI off renders the AI-off sentence word for word, which describes no egress; one woken with AI on renders the AI-on sentence word for word, which names what leaves (search text, passages), to whom (TensorX, api.tensorx.ai) and the model id.",
            run: footer_truthful,
        },
    ],
};

/// The sentence a page of an instance in `mode` must carry: the gate's own
/// copy, never the code's.
fn footer(mode: EgressMode) -> &'static str {
    match mode {
        EgressMode::AiOff => AI_OFF_FOOTER,
        _ => AI_ON_FOOTER,
    }
}

/// The sentence a page in `mode` must not carry.
fn other_footer(mode: EgressMode) -> &'static str {
    match mode {
        EgressMode::AiOff => AI_ON_FOOTER,
        _ => AI_OFF_FOOTER,
    }
}

struct Walk {
    app: TestApp,
    doc_id: String,
    mode: EgressMode,
}

fn mode_app(ctx: &mut Ctx, mode: EgressMode) -> Result<TestApp, Failure> {
    app_in_mode(ctx, OWNER, mode, &format!("data-{mode:?}"))
}

fn walk_app(ctx: &mut Ctx, mode: EgressMode) -> Result<Walk, Failure> {
    let mut app = mode_app(ctx, mode)?;
    let doc_id = block_on(async {
        app.sign_in(OWNER).await;
        let up = app
            .upload(
                "office.md",
                b"# Office\n\nReception: +353 1 547 7854\n",
                None,
            )
            .await;
        up.location()
            .unwrap_or_default()
            .trim_start_matches("/documents/")
            .to_string()
    });
    Ok(Walk { app, doc_id, mode })
}

fn short(uri: &str) -> String {
    if uri.len() > 48 {
        format!("{}…({} bytes)", &uri[..40], uri.len())
    } else {
        uri.to_string()
    }
}

fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase()
}

/// Why the footer would not be seen, if it would not: a stylesheet rule or an
/// inline style hiding `footer` or `.egress`, or a `hidden` attribute.
fn hidden_by_style(body: &str) -> Option<String> {
    let page = Page::parse(body);
    for sheet in page.styles() {
        for rule in sheet.split('}') {
            let Some((selector, decls)) = rule.split_once('{') else {
                continue;
            };
            let sel = squash(selector);
            let targets = sel.contains("footer") || sel.contains("egress") || sel == "*";
            let d = squash(decls);
            if targets && let Some(h) = HIDING.iter().find(|h| d.contains(*h)) {
                return Some(format!("the rule `{}` sets {h}", selector.trim()));
            }
        }
    }
    for tag in page.tags("footer, p.egress") {
        // A `hidden` attribute, a `hidden` word in a value (a class), or an inline style.
        let hides_itself = tag.attrs.iter().any(|(name, value)| {
            name == "hidden"
                || value.split_whitespace().any(|w| w == "hidden")
                || HIDING.iter().any(|h| squash(value).contains(h))
        });
        if hides_itself {
            return Some(format!("the tag `{tag}` hides itself"));
        }
    }
    None
}

fn check(mode: EgressMode, uri: &str, label: &str, r: &TestResponse, problems: &mut Vec<String>) {
    let uri = short(uri);
    let status = r.status;
    if r.body.is_empty() {
        problems.push(format!(
            "{mode:?}: {label} {uri} answered {status} with an empty body"
        ));
    } else if !r.body.contains(footer(mode)) {
        problems.push(format!(
            "{mode:?}: {label} {uri} answered {status} without the {mode:?} footer"
        ));
    } else if r.body.contains(other_footer(mode)) {
        problems.push(format!(
            "{mode:?}: {label} {uri} answered {status} stating the other mode too"
        ));
    } else if let Some(why) = hidden_by_style(&r.body) {
        problems.push(format!(
            "{mode:?}: {label} {uri} answered {status} with the footer hidden: {why}"
        ));
    }
}

fn every_get_route(ctx: &mut Ctx) -> Result<(), Failure> {
    for mode in MODES {
        every_get_route_in(ctx, mode)?;
    }
    Ok(())
}

fn every_get_route_in(ctx: &mut Ctx, mode: EgressMode) -> Result<(), Failure> {
    let mut w = walk_app(ctx, mode)?;
    ensure(
        w.doc_id.len() == 32,
        "the walk has a real document",
        format!("id {:?}", w.doc_id),
    )?;
    let mut problems = Vec::new();
    let mut statuses = std::collections::BTreeSet::new();
    for route in DECLARED_ROUTES.iter().filter(|r| r.method == "GET") {
        let uris: Vec<String> = match route.path {
            "/" => vec![
                "/".into(),
                "/?q=reception".into(),
                "/?q=".into(),
                "/?q=%22%2A%3A".into(),
                format!("/?q={}", "a".repeat(1100)),
                "/?q=reception&page=999".into(),
            ],
            "/search" => vec![
                "/search?q=reception".into(),
                "/search".into(),
                format!("/search?q={}", "a".repeat(1100)),
            ],
            "/documents/{id}" => vec![
                format!("/documents/{}", w.doc_id),
                format!("/documents/{}", "0".repeat(32)),
                "/documents/not-an-id".into(),
                "/documents/..%2F..%2Fetc%2Fpasswd".into(),
            ],
            "/documents/{id}/delete" => vec![
                format!("/documents/{}/delete", w.doc_id),
                format!("/documents/{}/delete", "0".repeat(32)),
                "/documents/XYZ/delete".into(),
            ],
            "/auth/login" => vec!["/auth/login".into(), "/auth/login?token=forged".into()],
            "/signin" => vec!["/signin".into(), "/signin?sent=1".into()],
            "/sources" => vec!["/sources".into()],
            // Lone shape: the page says there is no roster (suite shape's
            // roster page is walked by suite 5).
            "/roster" => vec!["/roster".into()],
            "/brief" => vec![
                "/brief".into(),
                "/brief?task=reception&scope=team".into(),
                "/brief?task=&scope=team".into(),
                format!("/brief?task={}&scope=team", "a".repeat(1100)),
                "/brief?task=reception&scope=nowhere".into(),
                "/brief?task=reception&scope=team&budget=0".into(),
                "/brief?task=reception&scope=team&budget=lots".into(),
            ],
            other => {
                return Err(Failure::new(
                    "the walk knows every declared GET route",
                    format!("it does not know {other}: extend gate 38"),
                ));
            }
        };
        if route.footer == FooterRule::RedirectOnly {
            ensure(
                FOOTER_EXEMPT
                    .iter()
                    .any(|(m, p, _, _)| *m == "GET" && *p == route.path),
                format!("redirect-only {} is listed in FOOTER_EXEMPT", route.path),
                "it is not",
            )?;
        }
        for uri in &uris {
            let signed_in = block_on(w.app.get(uri));
            statuses.insert(signed_in.status.as_u16());
            check(w.mode, uri, "signed in", &signed_in, &mut problems);
            for (name, value) in HEADER_VARIANTS {
                let mut req = memoria::testkit::request("GET", uri);
                req.headers_mut()
                    .insert(*name, value.parse().expect("header value"));
                let r = block_on(w.app.send(req));
                check(
                    w.mode,
                    uri,
                    &format!("signed in with {name}: {value}"),
                    &r,
                    &mut problems,
                );
            }
        }
        let csrf = w.app.csrf().map(str::to_string);
        w.app.sign_out_locally();
        for uri in &uris {
            let out = block_on(w.app.get(uri));
            statuses.insert(out.status.as_u16());
            check(w.mode, uri, "signed out", &out, &mut problems);
        }
        block_on(w.app.sign_in(OWNER));
        let _ = csrf;
    }
    for s in [200u16, 400, 401, 404] {
        ensure(
            statuses.contains(&s),
            format!("the {mode:?} walk saw a {s} page"),
            format!("statuses seen: {statuses:?}"),
        )?;
    }
    ensure(
        problems.is_empty(),
        "every GET page carries the footer",
        problems.join("; "),
    )
}

fn error_pages(ctx: &mut Ctx) -> Result<(), Failure> {
    for mode in MODES {
        error_pages_in(ctx, mode)?;
    }
    Ok(())
}

fn error_pages_in(ctx: &mut Ctx, mode: EgressMode) -> Result<(), Failure> {
    let w = walk_app(ctx, mode)?;
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    block_on(async {
        let cases: Vec<(&str, TestResponse)> = vec![
            ("fallback", w.app.get("/nowhere").await),
            (
                "wrong method",
                w.app.send(axum_request("DELETE", "/")).await,
            ),
            (
                "csrf",
                w.app
                    .post_form(
                        &format!("/documents/{}/delete", w.doc_id),
                        &[("csrf", "forged")],
                    )
                    .await,
            ),
            (
                "over cap",
                w.app
                    .upload("big.md", &vec![b'a'; memoria::UPLOAD_BYTES_MAX + 1], None)
                    .await,
            ),
            (
                "binary",
                w.app.upload("x.bin", b"\x00\x01\x02binary", None).await,
            ),
            ("not utf-8", w.app.upload("x.md", b"caf\xe9", None).await),
            ("empty", w.app.upload("x.md", b"", None).await),
        ];
        for (label, r) in cases {
            seen.push(format!("{label}={}", r.status.as_u16()));
            check(mode, label, "error page", &r, &mut problems);
        }
    });
    let expect = [
        "fallback=404",
        "wrong method=405",
        "csrf=403",
        "over cap=413",
        "binary=415",
        "not utf-8=422",
        "empty=400",
    ];
    for e in expect {
        ensure(
            seen.iter().any(|s| s == e),
            format!("{mode:?}: provoked {e}"),
            seen.join(", "),
        )?;
    }
    ensure(
        problems.is_empty(),
        "every error page carries the footer",
        problems.join("; "),
    )
}

fn axum_request(method: &str, uri: &str) -> memoria::testkit::Request {
    memoria::testkit::request(method, uri)
}

fn exemptions_verified(ctx: &mut Ctx) -> Result<(), Failure> {
    for mode in MODES {
        exemptions_verified_in(ctx, mode)?;
    }
    Ok(())
}

/// The connector the exemption walk posts as, and its token (gate 16 tests the credential).
const EXEMPT_CONNECTOR: (&str, &str) = ("g38", "gate-38-connector-token");

fn exemptions_verified_in(ctx: &mut Ctx, mode: EgressMode) -> Result<(), Failure> {
    let connectors = memoria::Connectors::none()
        .with(
            EXEMPT_CONNECTOR.0,
            memoria::token_sha256(EXEMPT_CONNECTOR.1),
            &[],
        )
        .map_err(|e| Failure::new("a connector configures", e.to_string()))?;
    let mut app = mode_app(ctx, mode)?.with_connectors(connectors);
    ensure(
        !FOOTER_EXEMPT.is_empty(),
        "the exempt list is non-empty, so this case checks something",
        "it is empty",
    )?;
    for (method, path, status, reason) in FOOTER_EXEMPT {
        ensure(
            !reason.is_empty(),
            format!("{method} {path} gives a reason"),
            "no reason",
        )?;
        let resp = match (*method, *path) {
            ("GET", "/auth/login") => {
                // Follow a real, freshly delivered link: the success path is the exempt one.
                let link = block_on(app.sign_in(OWNER));
                app.sign_out_locally();
                let owner = app
                    .state()
                    .instance()
                    .lock()
                    .expect("instance")
                    .admit(OWNER)
                    .expect("owner");
                app.state().deliver_sign_in_link(&owner);
                let next = app
                    .delivered_links()
                    .last()
                    .map(|(_, u)| u.clone())
                    .unwrap_or_default();
                ensure(next != link, "a fresh link was delivered", "the same link")?;
                block_on(app.get(next.trim_start_matches("http://memoria.test")))
            }
            ("POST", "/connectors/{name}/documents") => {
                // 201 is a new document; 204 is the same path posted again, changed.
                let post = |words: &str| {
                    let req = axum::http::Request::post(format!(
                        "/connectors/{}/documents?path=exempt-{status}.md",
                        EXEMPT_CONNECTOR.0
                    ))
                    .header(
                        axum::http::header::AUTHORIZATION,
                        format!("Bearer {}", EXEMPT_CONNECTOR.1),
                    )
                    .body(axum::body::Body::from(format!(
                        "# Exempt\n\nThe {words} words."
                    )))
                    .expect("valid request");
                    block_on(app.send_bare(req))
                };
                let first = post("first");
                if *status == 204 {
                    post("second")
                } else {
                    first
                }
            }
            other => {
                return Err(Failure::new(
                    "the gate knows how to provoke every exempt response",
                    format!("it does not know {} {}", other.0, other.1),
                ));
            }
        };
        ensure(
            resp.status.as_u16() == *status,
            format!("{method} {path} answers {status}"),
            format!("{}", resp.status),
        )?;
        ensure(
            resp.body.is_empty(),
            format!("{method} {path} at {status} has an empty body"),
            format!("{} bytes", resp.body.len()),
        )?;
        let to = resp.location().unwrap_or_default().to_string();
        ensure(!to.is_empty(), "it redirects somewhere", "no Location")?;
        let landed = block_on(app.get_with_set_cookie(&to, &resp));
        ensure(
            landed.body.contains(footer(mode)) && !landed.body.contains(other_footer(mode)),
            format!("{mode:?}: the page it lands on ({to}) carries that mode's footer"),
            format!("status {}", landed.status),
        )?;
    }
    Ok(())
}

fn footer_truthful(ctx: &mut Ctx) -> Result<(), Failure> {
    for want in MODES {
        let w = walk_app(ctx, want)?;
        let mode = w.app.state().instance().lock().expect("instance").egress();
        ensure(
            mode == want,
            format!("an instance woken {want:?} runs {want:?}"),
            format!("{mode:?}"),
        )?;
        let page = block_on(w.app.get("/"));
        ensure(
            page.body.contains(mode.footer()),
            format!("{mode:?}: the page states the instance's own mode"),
            "it does not",
        )?;
        ensure(
            mode.footer() == footer(want),
            format!("the {want:?} footer reads exactly: {}", footer(want)),
            mode.footer().to_string(),
        )?;
    }
    let off = AI_OFF_FOOTER.to_lowercase();
    let bad: Vec<&str> = AI_OFF_FORBIDDEN
        .iter()
        .copied()
        .filter(|w| off.contains(&w.to_lowercase()))
        .collect();
    ensure(
        bad.is_empty(),
        "the AI-off footer describes no egress",
        format!("it mentions {}", bad.join(", ")),
    )?;
    let missing: Vec<&str> = AI_ON_REQUIRED
        .iter()
        .copied()
        .filter(|w| !AI_ON_FOOTER.contains(w))
        .collect();
    ensure(
        missing.is_empty(),
        "the AI-on footer names what leaves, to whom and the model",
        format!("it does not name {}", missing.join(", ")),
    )?;
    ensure(
        AI_ON_FOOTER.contains(memoria::PROVIDER_HOST)
            && AI_ON_FOOTER.contains(memoria::EMBED_MODEL),
        "the AI-on footer names the host and model the client actually uses",
        format!("{} / {}", memoria::PROVIDER_HOST, memoria::EMBED_MODEL),
    )
}

fn server_error_pages(ctx: &mut Ctx) -> Result<(), Failure> {
    for mode in MODES {
        server_error_pages_in(ctx, mode)?;
    }
    Ok(())
}

fn server_error_pages_in(ctx: &mut Ctx, mode: EgressMode) -> Result<(), Failure> {
    let w = walk_app(ctx, mode)?;
    let db = {
        let instance = w.app.state().instance();
        let guard = instance.lock().expect("instance");
        guard.store().path().to_path_buf()
    };
    let conn = rusqlite::Connection::open(&db)
        .map_err(|e| Failure::new("the database opens", e.to_string()))?;
    let changed = conn
        .execute("UPDATE documents SET title = x'01000000000000000000000000000000000000000000000000000000' WHERE id = ?1", [&w.doc_id])
        .map_err(|e| Failure::new("the title cell can be corrupted", e.to_string()))?;
    ensure(
        changed == 1,
        "one title cell corrupted",
        format!("{changed}"),
    )?;
    drop(conn);
    let mut problems = Vec::new();
    let mut fives = 0;
    for uri in [
        format!("/documents/{}", w.doc_id),
        "/?q=reception".to_string(),
        "/search?q=reception".to_string(),
    ] {
        let r = block_on(w.app.get(&uri));
        if r.status.is_server_error() {
            fives += 1;
        }
        check(mode, &uri, "with a corrupt cell", &r, &mut problems);
    }
    ensure(
        fives >= 2,
        "the corrupt cell produced server-error pages",
        format!("{fives} of 3 were 5xx"),
    )?;
    ensure(
        problems.is_empty(),
        "every server-error page carries the footer",
        problems.join("; "),
    )
}
