//! Gate 16 (§10, §9.1): the credential sets are disjoint — a sibling credential (and a session) is refused at the connector routes, and a connector credential at everything else.
//!
//! Requirement: every route in `memoria::DECLARED_ROUTES` under
//! `/connectors/` accepts only the bearer token of the connector its path
//! names, and refuses, with nothing stored, a session cookie, a token
//! memoria sends one of its siblings, another connector's token, the
//! configured hash presented as if it were the token, near-misses of the
//! connector's own token, and no credential; and a request with an
//! `Origin` off that connector's allowlist (one that merely extends an
//! allowed origin included), where a connector configured with no origins
//! refuses every `Origin` and accepts only a request without one. Every
//! other declared route answers a connector token, as a bearer or as a
//! session cookie, byte for byte as it answers no credential at all. The
//! routes are read from the table, so a route added later is covered by
//! the next run. Presence first: the connector token lands a document that
//! search finds, and the session opens the search page, so each refusal
//! is a refusal of something that works.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, header};
use memoria::testkit::{TestApp, TestResponse};
use memoria::{
    Connectors, DECLARED_ROUTES, DialFuture, Dialer, SESSION_COOKIE, SiblingClient, SiblingConfig,
    token_sha256,
};

use crate::rigs::app::app;
use crate::rigs::support::block_on;
use crate::{Case, Ctx, Failure, Gate, ensure};

const OWNER: &str = "ana@example.org";
/// The connector every connector route is probed as.
const CONNECTOR: &str = "notion";
/// A second connector, whose token must not open the first's routes.
const OTHER_CONNECTOR: &str = "drive";
/// The one origin [`CONNECTOR`] may send from.
const ALLOWED_ORIGIN: &str = "https://bridge.example";
/// The team the sibling belongs to, and its URL.
const TEAM: &str = "acme";
const SIBLING_URL: &str = "http://acme.sheets.oficina.works";
/// A word the connector's document carries, and nothing else does.
const PROBE_WORD: &str = "quokka";
/// The prefix that makes a declared route a connector route (§9.1).
const CONNECTOR_PREFIX: &str = "/connectors/";

/// Gate 16.
pub static GATE: Gate = Gate {
    id: "16",
    title: "Credential sets are disjoint",
    gates_md: &[
        "A sibling credential is refused at the connector routes, a connector credential at everything else",
    ],
    sections: &["§10", "§9.1"],
    requirement: "Every declared route under /connectors/ accepts only its connector's bearer token and refuses a session, a sibling's token, another connector's token, the stored hash and none, storing nothing, and refuses an Origin off the allowlist; every other declared route answers a connector token exactly as it answers no credential.",
    cases: &[
        Case {
            id: "16/the-connector-token-lands-a-searchable-document-and-the-session-opens-search",
            desc: "Presence: POST a document to every connector route with the connector's bearer token; require 2xx and that a signed-in search finds it; require the session to open GET / (200) where no credential gets the sign-in page (401).",
            run: presence,
        },
        Case {
            id: "16/connector-routes-refuse-the-sibling-token-the-session-another-connectors-token-and-none",
            desc: "For every declared route under /connectors/, send it a session cookie, memoria's sibling token (as a bearer and as a cookie), another connector's token, the configured SHA-256 as a bearer, a malformed Authorization, near-misses of the connector's own token (upper-cased, its last character dropped, one character appended) and none; require 401 and the document count unchanged each time, then the connector's own token accepted.",
            run: connector_routes_refuse,
        },
        Case {
            id: "16/every-other-route-answers-a-connector-token-as-no-credential",
            desc: "For every other declared route, with a real document id, send no credential, the connector token as a bearer, and the connector token as the session cookie; require the same status and body each time, and require the session to change at least one route's answer.",
            run: elsewhere_no_credential,
        },
        Case {
            id: "16/an-origin-off-the-connectors-allowlist-is-refused",
            desc: "For every declared route under /connectors/, send the connector's own token with an Origin off its allowlist (another host, the allowed host on another scheme, memoria's own host, and origins that extend the allowed one: a longer host, another port, a suffix); require 403 and nothing stored; then the allowed Origin accepted.",
            run: origin_refused,
        },
        Case {
            id: "16/a-connector-with-no-origins-refuses-every-origin",
            desc: "For every declared route under /connectors/, probed as the connector configured with no origins, send its own token with an Origin (the other connector's allowed origin, another host, memoria's own host, null); require 403 and nothing stored each time; then the same request without an Origin accepted.",
            run: no_origins_refuses_every_origin,
        },
    ],
};

/// A dialer that opens nothing: the sibling is configured for its token,
/// and nothing in this gate may reach it.
struct NoDialer;

impl Dialer for NoDialer {
    fn dial<'a>(&'a self, _host: &'a str, _port: u16) -> DialFuture<'a> {
        Box::pin(async { Err(std::io::Error::other("gate 16 dials nothing")) })
    }
}

/// The tokens one case uses, drawn from its stream.
struct Tokens {
    connector: String,
    other: String,
    sibling: String,
}

/// memoria with two connectors and one sibling, signed in as [`OWNER`].
fn rig(ctx: &mut Ctx) -> Result<(TestApp, Tokens), Failure> {
    use rand::Rng as _;
    let mut draw = |what: &str| format!("{what}-{:016x}", ctx.rng().r#gen::<u64>());
    let tokens = Tokens {
        connector: draw("connector"),
        other: draw("other-connector"),
        sibling: draw("sibling"),
    };
    let config = |e: memoria::Error| Failure::new("the connectors configure", e.to_string());
    let connectors = Connectors::none()
        .with(
            CONNECTOR,
            token_sha256(&tokens.connector),
            &[ALLOWED_ORIGIN],
        )
        .and_then(|c| c.with(OTHER_CONNECTOR, token_sha256(&tokens.other), &[]))
        .map_err(config)?;
    let siblings = SiblingClient::new(
        TEAM,
        &[SiblingConfig {
            url: SIBLING_URL.into(),
            token: tokens.sibling.clone().into(),
        }],
        Arc::new(NoDialer),
    )
    .map_err(|e| Failure::new("the sibling configures", e.to_string()))?;
    connectors
        .disjoint_from(&siblings.token_hashes())
        .map_err(config)?;
    let mut app = app(ctx, OWNER)?
        .with_siblings(siblings)
        .with_connectors(connectors);
    block_on(app.sign_in(OWNER));
    Ok((app, tokens))
}

fn connector_routes() -> Result<Vec<&'static memoria::DeclaredRoute>, Failure> {
    let routes: Vec<_> = DECLARED_ROUTES
        .iter()
        .filter(|r| r.path.starts_with(CONNECTOR_PREFIX))
        .collect();
    ensure(
        !routes.is_empty(),
        "DECLARED_ROUTES names at least one connector route",
        "none under /connectors/",
    )?;
    Ok(routes)
}

/// The URI a probe of `path` sends: `{name}` is [`CONNECTOR`], `{id}` is `id`,
/// and a connector route names the document it would store.
fn uri(path: &str, id: &str, doc: &str) -> String {
    uri_as(CONNECTOR, path, id, doc)
}

/// As [`uri`], with `{name}` the connector `name`.
fn uri_as(name: &str, path: &str, id: &str, doc: &str) -> String {
    let p = path.replace("{name}", name).replace("{id}", id);
    if path.starts_with(CONNECTOR_PREFIX) {
        format!("{p}?path={doc}")
    } else {
        p
    }
}

/// One request: `method uri` with a small Markdown body on anything but GET.
fn request(method: &str, uri: &str) -> Request<Body> {
    let body = if method == "GET" {
        Body::empty()
    } else {
        Body::from(format!("# Probe\n\nThe {PROBE_WORD} note."))
    };
    Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "text/markdown")
        .body(body)
        .expect("valid request")
}

/// The credential a request carries.
#[derive(Debug, Clone, Copy)]
enum Credential<'a> {
    None,
    Bearer(&'a str),
    Cookie(&'a str),
    Authorization(&'a str),
}

fn with(mut req: Request<Body>, credential: Credential<'_>) -> Request<Body> {
    let h = req.headers_mut();
    match credential {
        Credential::None => {}
        Credential::Bearer(t) => {
            h.insert(
                header::AUTHORIZATION,
                format!("Bearer {t}").parse().expect("header"),
            );
        }
        Credential::Cookie(pair) => {
            h.insert(header::COOKIE, pair.parse().expect("cookie"));
        }
        Credential::Authorization(v) => {
            h.insert(header::AUTHORIZATION, v.parse().expect("header"));
        }
    }
    req
}

fn documents(app: &TestApp) -> Result<u64, Failure> {
    let instance = app.state().instance();
    let guard = instance.lock().expect("instance");
    guard
        .store()
        .counts()
        .map(|c| c.0)
        .map_err(|e| Failure::new("the store counts", e.to_string()))
}

fn send(app: &TestApp, req: Request<Body>) -> TestResponse {
    block_on(app.send_bare(req))
}

fn presence(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, tokens) = rig(ctx)?;
    for route in connector_routes()? {
        let u = uri(route.path, "", "probe/presence.md");
        let r = send(
            &app,
            with(
                request(route.method, &u),
                Credential::Bearer(&tokens.connector),
            ),
        );
        ensure(
            r.status.is_success(),
            format!(
                "{} {} accepts its connector's token",
                route.method, route.path
            ),
            format!("status {}", r.status),
        )?;
        let at = r.location().unwrap_or_default().to_string();
        let found = block_on(app.get(&format!("/?q={PROBE_WORD}")));
        ensure(
            !at.is_empty() && found.body.contains(&at),
            "the connector's document is searchable by a signed-in owner",
            format!("Location {at:?}, search status {}", found.status),
        )?;
    }
    let none = send(&app, request("GET", "/"));
    let session = block_on(app.get("/"));
    ensure(
        none.status.as_u16() == 401 && session.status.as_u16() == 200,
        "GET / is the sign-in page with no credential and the search page with the session",
        format!("{} and {}", none.status, session.status),
    )
}

fn connector_routes_refuse(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, tokens) = rig(ctx)?;
    let session = app
        .session_cookie()
        .ok_or_else(|| Failure::new("the rig is signed in", "no session cookie"))?
        .to_string();
    let sibling_cookie = format!("{SESSION_COOKIE}={}", tokens.sibling);
    let hash = hex::encode(token_sha256(&tokens.connector));
    let basic = format!("Basic {}", tokens.connector);
    // Near-misses of the connector's own token: not the configured token.
    let upper = tokens.connector.to_ascii_uppercase();
    let shorter = &tokens.connector[..tokens.connector.len() - 1];
    let longer = format!("{}0", tokens.connector);
    let refused: [(&str, Credential<'_>); 11] = [
        ("the session cookie", Credential::Cookie(&session)),
        (
            "memoria's sibling token",
            Credential::Bearer(&tokens.sibling),
        ),
        (
            "memoria's sibling token as a cookie",
            Credential::Cookie(&sibling_cookie),
        ),
        (
            "another connector's token",
            Credential::Bearer(&tokens.other),
        ),
        (
            "the configured hash, presented as the token",
            Credential::Bearer(&hash),
        ),
        (
            "the connector's token under another scheme",
            Credential::Authorization(&basic),
        ),
        ("an empty bearer", Credential::Authorization("Bearer ")),
        (
            "the connector's token upper-cased",
            Credential::Bearer(&upper),
        ),
        (
            "the connector's token less its last character",
            Credential::Bearer(shorter),
        ),
        (
            "the connector's token with one character appended",
            Credential::Bearer(&longer),
        ),
        ("no credential", Credential::None),
    ];
    for route in connector_routes()? {
        let u = uri(route.path, "", "probe/refused.md");
        for (what, credential) in refused {
            let before = documents(&app)?;
            let r = send(&app, with(request(route.method, &u), credential));
            ensure(
                r.status.as_u16() == 401,
                format!("{} {} refuses {what} with 401", route.method, route.path),
                format!("status {}", r.status),
            )?;
            ensure(
                documents(&app)? == before,
                format!("{what} stores nothing"),
                "a document was stored",
            )?;
        }
        let r = send(
            &app,
            with(
                request(route.method, &u),
                Credential::Bearer(&tokens.connector),
            ),
        );
        ensure(
            r.status.is_success(),
            format!(
                "{} {} accepts its connector's token",
                route.method, route.path
            ),
            format!("status {}", r.status),
        )?;
    }
    Ok(())
}

fn elsewhere_no_credential(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, tokens) = rig(ctx)?;
    // A real document, so every {id} route is probed at an id that exists.
    let landed = send(
        &app,
        with(
            request(
                "POST",
                &uri("/connectors/{name}/documents", "", "probe/doc.md"),
            ),
            Credential::Bearer(&tokens.connector),
        ),
    );
    let id = landed
        .location()
        .and_then(|l| l.strip_prefix("/documents/"))
        .unwrap_or_default()
        .to_string();
    ensure(
        id.len() == 32,
        "the connector's document has an id",
        format!("status {}", landed.status),
    )?;
    let session = app
        .session_cookie()
        .ok_or_else(|| Failure::new("the rig is signed in", "no session cookie"))?
        .to_string();
    let token_cookie = format!("{SESSION_COOKIE}={}", tokens.connector);
    let mut probed = 0;
    let mut session_mattered = false;
    for route in DECLARED_ROUTES
        .iter()
        .filter(|r| !r.path.starts_with(CONNECTOR_PREFIX))
    {
        let u = uri(route.path, &id, "");
        let none = send(&app, request(route.method, &u));
        for (what, credential) in [
            ("as a bearer", Credential::Bearer(&tokens.connector)),
            ("as the session cookie", Credential::Cookie(&token_cookie)),
        ] {
            let r = send(&app, with(request(route.method, &u), credential));
            ensure(
                r.status == none.status && r.body == none.body,
                format!(
                    "{} {} answers the connector token {what} as no credential ({})",
                    route.method, route.path, none.status
                ),
                format!("status {}", r.status),
            )?;
        }
        let signed_in = send(
            &app,
            with(request(route.method, &u), Credential::Cookie(&session)),
        );
        session_mattered |= signed_in.status != none.status;
        probed += 1;
    }
    ensure(
        probed + connector_routes()?.len() == DECLARED_ROUTES.len() && probed > 0,
        "every declared route is probed",
        format!("{probed} of {}", DECLARED_ROUTES.len()),
    )?;
    ensure(
        session_mattered,
        "the session changes some route's answer, so answering as no credential is a refusal",
        "no route answered the session differently",
    )
}

fn origin_refused(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, tokens) = rig(ctx)?;
    for route in connector_routes()? {
        let u = uri(route.path, "", "probe/origin.md");
        let with_origin = |origin: &str| {
            let mut req = with(
                request(route.method, &u),
                Credential::Bearer(&tokens.connector),
            );
            req.headers_mut()
                .insert(header::ORIGIN, origin.parse().expect("origin"));
            req
        };
        for origin in [
            "https://evil.example",
            "http://bridge.example",
            "http://memoria.test",
            "null",
            "https://bridge.example.evil.test",
            "https://bridge.example:8443",
            "https://bridge.examplex",
        ] {
            let before = documents(&app)?;
            let r = send(&app, with_origin(origin));
            ensure(
                r.status.as_u16() == 403,
                format!(
                    "{} {} refuses Origin {origin} with 403",
                    route.method, route.path
                ),
                format!("status {}", r.status),
            )?;
            ensure(
                documents(&app)? == before,
                format!("Origin {origin} stores nothing"),
                "a document was stored",
            )?;
        }
        let r = send(&app, with_origin(ALLOWED_ORIGIN));
        ensure(
            r.status.is_success(),
            format!("{} {} accepts the allowed Origin", route.method, route.path),
            format!("status {}", r.status),
        )?;
    }
    Ok(())
}

fn no_origins_refuses_every_origin(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, tokens) = rig(ctx)?;
    for route in connector_routes()? {
        let u = uri_as(OTHER_CONNECTOR, route.path, "", "probe/no-origins.md");
        let bearer = || with(request(route.method, &u), Credential::Bearer(&tokens.other));
        for origin in [
            ALLOWED_ORIGIN,
            "https://evil.example",
            "http://memoria.test",
            "null",
        ] {
            let mut req = bearer();
            req.headers_mut()
                .insert(header::ORIGIN, origin.parse().expect("origin"));
            let before = documents(&app)?;
            let r = send(&app, req);
            ensure(
                r.status.as_u16() == 403,
                format!(
                    "{} {} as {OTHER_CONNECTOR}, configured with no origins, refuses Origin {origin} with 403",
                    route.method, route.path
                ),
                format!("status {}", r.status),
            )?;
            ensure(
                documents(&app)? == before,
                format!("Origin {origin} stores nothing"),
                "a document was stored",
            )?;
        }
        let r = send(&app, bearer());
        ensure(
            r.status.is_success(),
            format!(
                "{} {} as {OTHER_CONNECTOR} accepts its token without an Origin",
                route.method, route.path
            ),
            format!("status {}", r.status),
        )?;
    }
    Ok(())
}
