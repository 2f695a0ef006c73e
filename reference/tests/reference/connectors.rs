//! The connector ingest surface, `POST /connectors/{name}/documents`: its connector's bearer token lands a searchable document, and a session, a sibling's token, another connector's token, an origin off the allowlist and an over-cap body are each refused with nothing stored; a connector token is no session anywhere else (§9.1, gate 16).
//!
//! Every request goes through [`TestApp`], in process and without a
//! socket. Each refusal is asserted after the presence that makes it mean
//! something: the same request with the right token is accepted.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use tempfile::TempDir;

use memoria::testkit::{TestApp, TestResponse};
use memoria::token_sha256;
use memoria::{CONNECTOR_BODY_MAX_BYTES, Connectors, Dek, SiblingClient, SiblingConfig, TcpDialer};

const OWNER: &str = "ana@example.org";
const NOTION_TOKEN: &str = "notion-connector-token-5f1c9a";
const DRIVE_TOKEN: &str = "drive-connector-token-77b2e0";
const SIBLING_TOKEN: &str = "memoria-at-sheets-token-0c4d";
const BRIDGE: &str = "https://bridge.example";

/// An app with two connectors (notion, allowed from [`BRIDGE`]; drive) and
/// one sibling whose token memoria sends, signed in as [`OWNER`].
async fn app() -> (TempDir, TestApp) {
    let dir = tempfile::tempdir().expect("tempdir");
    let connectors = Connectors::none()
        .with("notion", token_sha256(NOTION_TOKEN), &[BRIDGE])
        .and_then(|c| c.with("drive", token_sha256(DRIVE_TOKEN), &[]))
        .expect("connectors");
    let siblings = SiblingClient::new(
        "acme",
        &[SiblingConfig {
            url: "http://acme.sheets.oficina.works".into(),
            token: SIBLING_TOKEN.into(),
        }],
        Arc::new(TcpDialer),
    )
    .expect("sibling client");
    let mut app = TestApp::new(dir.path(), &Dek::generate(), OWNER)
        .expect("wake")
        .with_siblings(siblings)
        .with_connectors(connectors);
    app.sign_in(OWNER).await;
    (dir, app)
}

fn post(name: &str, path: &str, body: &[u8]) -> Request<Body> {
    Request::post(format!("/connectors/{name}/documents?path={path}"))
        .body(Body::from(body.to_vec()))
        .expect("request")
}

fn bearer(mut req: Request<Body>, token: &str) -> Request<Body> {
    req.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {token}").parse().expect("header"),
    );
    req
}

fn documents(app: &TestApp) -> u64 {
    let instance = app.state().instance();
    let guard = instance.lock().expect("instance");
    guard.store().counts().expect("counts").0
}

async fn search(app: &TestApp, q: &str) -> TestResponse {
    app.get(&format!("/?q={q}")).await
}

#[tokio::test]
async fn a_connector_token_creates_a_document_that_search_finds_and_a_second_post_revises_it() {
    let (_dir, app) = app().await;
    let r = app
        .send_bare(bearer(
            post(
                "notion",
                "handbook/reception.md",
                b"# Reception\n\nThe quokka desk opens at nine.",
            ),
            NOTION_TOKEN,
        ))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert!(r.body.is_empty());
    let at = r.location().expect("a Location").to_string();
    assert!(at.starts_with("/documents/"), "{at}");
    assert!(search(&app, "quokka").await.body.contains(&at));
    let again = app
        .send_bare(bearer(
            post(
                "notion",
                "handbook/reception.md",
                b"# Reception\n\nThe wombat desk opens at ten.",
            ),
            NOTION_TOKEN,
        ))
        .await;
    assert_eq!(again.status, StatusCode::NO_CONTENT, "{}", again.body);
    assert_eq!(
        again.location(),
        Some(at.as_str()),
        "the same document, revised"
    );
    assert_eq!(documents(&app), 1);
    assert!(search(&app, "wombat").await.body.contains(&at));
}

#[tokio::test]
async fn a_session_a_sibling_token_another_connectors_token_and_no_credential_are_refused_with_nothing_stored()
 {
    let (_dir, app) = app().await;
    let body = b"# Refused\n\nThe platypus note.";
    let cookie = app.session_cookie().expect("signed in").to_string();
    let mut with_session = post("notion", "refused.md", body);
    with_session
        .headers_mut()
        .insert(header::COOKIE, cookie.parse().expect("cookie"));
    let attempts = [
        ("a session cookie", with_session),
        (
            "a sibling token",
            bearer(post("notion", "refused.md", body), SIBLING_TOKEN),
        ),
        (
            "another connector's token",
            bearer(post("notion", "refused.md", body), DRIVE_TOKEN),
        ),
        (
            "a token at an unknown connector",
            bearer(post("mail", "refused.md", body), NOTION_TOKEN),
        ),
        ("no credential", post("notion", "refused.md", body)),
    ];
    for (what, req) in attempts {
        let r = app.send_bare(req).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{what}: {}", r.body);
        assert_eq!(documents(&app), 0, "{what}: nothing stored");
    }
    let r = app
        .send_bare(bearer(post("notion", "refused.md", body), NOTION_TOKEN))
        .await;
    assert_eq!(r.status, StatusCode::CREATED, "the right token is accepted");
}

#[tokio::test]
async fn an_origin_off_the_allowlist_is_refused_and_one_on_it_is_accepted() {
    let (_dir, app) = app().await;
    let with_origin = |origin: &str| {
        let mut req = bearer(
            post("notion", "origin.md", b"The echidna page."),
            NOTION_TOKEN,
        );
        req.headers_mut()
            .insert(header::ORIGIN, origin.parse().expect("origin"));
        req
    };
    let r = app.send_bare(with_origin("https://evil.example")).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    assert_eq!(documents(&app), 0);
    let r = app.send_bare(with_origin(BRIDGE)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
}

#[tokio::test]
async fn a_body_over_one_mebibyte_is_refused_with_nothing_stored() {
    let (_dir, app) = app().await;
    let big = vec![b'a'; CONNECTOR_BODY_MAX_BYTES + 1];
    let r = app
        .send_bare(bearer(post("notion", "big.txt", &big), NOTION_TOKEN))
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.body);
    assert_eq!(documents(&app), 0);
}

#[tokio::test]
async fn a_connector_token_is_no_session_at_the_search_page() {
    let (_dir, app) = app().await;
    let signed_in = app.get("/").await;
    assert_eq!(signed_in.status, StatusCode::OK, "the session is accepted");
    let none = app
        .send_bare(Request::get("/").body(Body::empty()).unwrap())
        .await;
    let token = app
        .send_bare(bearer(
            Request::get("/").body(Body::empty()).unwrap(),
            NOTION_TOKEN,
        ))
        .await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!((token.status, token.body), (none.status, none.body));
}

#[test]
fn a_connector_configured_with_a_siblings_token_is_refused() {
    let connectors = Connectors::none()
        .with("notion", token_sha256(SIBLING_TOKEN), &[])
        .expect("connectors");
    let err = connectors
        .disjoint_from(&[token_sha256(SIBLING_TOKEN)])
        .expect_err("refused");
    assert_eq!(err.kind(), memoria::ErrorKind::Config);
}
