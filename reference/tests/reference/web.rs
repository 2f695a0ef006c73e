//! The search page's behaviour on bad input: refused uploads, unknown paths, hostile queries, markup in documents, line endings, CSRF and sessions, and pagination; and the page as a reader sees it: rendered documents, plain snippets, numbering, counts and the marker (§8.1, §8.5, §9.1).
//!
//! Size: one module for every page's hostile input, in the reference's one test binary (`main.rs`: one link on a 2-core machine, as issue 29 asks); its sections follow the routes.
//!
//! Every request goes through [`TestApp`], in process and without a socket.
//! A test that asserts an absence (nothing stored, nothing leaked, no
//! results) first asserts the presence that makes the absence meaningful.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use expect_test::expect;
use memoria_page::Page;
use tempfile::TempDir;

use memoria::Admission;
use memoria::EgressMode;
use memoria::NewDocument;
use memoria::snapshot;
use memoria::testkit::{TestApp, TestResponse, form_encode};
use memoria::{Clock, FixedClock};
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig, SearchError, WakeKind};
use memoria::{QUERY_BYTES_MAX, QUERY_WORDS_MAX};
use memoria::{SESSION_TTL_S, SIGN_IN_LINK_TTL_S, UPLOAD_BYTES_MAX};

/// The one owner every test signs in as.
const OWNER: &str = "ana@example.org";
/// The host `TestApp` puts on every request, and so the only same-origin host.
const HOST: &str = "memoria.test";
/// A fixed instant for tests that move time by hand (2026-01-01T00:00:00Z).
const T0_UNIX_S: i64 = 1_767_225_600;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn footer() -> &'static str {
    EgressMode::AiOff.footer()
}

fn assert_footer(what: &str, resp: &TestResponse) {
    assert!(
        resp.body.contains(footer()),
        "{what}: the page carries the egress footer; body was:\n{}",
        resp.body
    );
}

/// Wakes an app in a fresh data directory, signed in as [`OWNER`].
async fn signed_in_app() -> (TempDir, TestApp) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    app.sign_in(OWNER).await;
    (dir, app)
}

/// Everything about the store an upload could change.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StoreState {
    documents: u64,
    chunks: u64,
    store_seq: i64,
    generation: i64,
    tombstone_seq: i64,
    /// (id, revision) of every live document.
    revisions: Vec<(String, i64)>,
}

fn store_state(app: &TestApp) -> StoreState {
    let instance = app.state().instance();
    let guard = instance.lock().expect("instance lock");
    let store = guard.store();
    let (documents, chunks) = store.counts().expect("counts");
    let mut revisions: Vec<(String, i64)> = store
        .documents()
        .expect("documents")
        .into_iter()
        .map(|d| (d.id, d.revision))
        .collect();
    revisions.sort();
    StoreState {
        documents,
        chunks,
        store_seq: store.store_seq().expect("store_seq"),
        generation: store.snapshot_generation().expect("generation"),
        tombstone_seq: store.tombstone_seq().expect("tombstone_seq"),
        revisions,
    }
}

/// The document id an upload redirected to.
fn uploaded_id(resp: &TestResponse) -> String {
    assert_eq!(
        resp.status,
        StatusCode::SEE_OTHER,
        "upload body: {}",
        resp.body
    );
    let location = resp.location().expect("an upload redirects");
    location
        .strip_prefix("/documents/")
        .unwrap_or_else(|| panic!("the upload redirects to a document, not {location}"))
        .to_string()
}

/// Uploads `bytes` as `name` and returns the new document's id.
async fn upload_ok(app: &TestApp, name: &str, bytes: &[u8]) -> String {
    uploaded_id(&app.upload(name, bytes, None).await)
}

/// How many result rows a page renders.
fn result_count(body: &str) -> usize {
    Page::parse(body).results().len()
}

/// Every `/documents/` link of a page in document order, as the deep link
/// it names after `/documents/` (the search a result's link keeps,
/// `?q=…&page=N`, dropped: the passage it cites is the path and the anchor).
fn result_links(body: &str) -> Vec<String> {
    Page::parse(body)
        .hrefs("a[href^=\"/documents/\"]")
        .iter()
        .map(|href| memoria_page::deep_link(&href["/documents/".len()..]))
        .collect()
}

/// The text of every `<mark>` on a page.
fn marks(body: &str) -> Vec<String> {
    Page::parse(body).marks()
}

/// The text of the page's refusal paragraph, if it has one.
fn refusal(body: &str) -> Option<String> {
    Page::parse(body).refusals().into_iter().next()
}

/// Builds a multipart body from (name, file name, bytes) fields.
fn multipart(fields: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "web-rs-boundary-5c1e";
    let mut body = Vec::new();
    for (name, file_name, bytes) in fields {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file_name {
            Some(f) => body.extend_from_slice(
                format!(
                    "Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// `POST /documents/{id}/delete` with `csrf` (if any) and an optional `Origin`.
async fn post_delete(
    app: &TestApp,
    id: &str,
    csrf: Option<&str>,
    origin: Option<&str>,
) -> TestResponse {
    let body = csrf.map(|t| format!("csrf={t}")).unwrap_or_default();
    let mut req = Request::post(format!("/documents/{id}/delete"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(o) = origin {
        req = req.header(header::ORIGIN, o);
    }
    app.send(req.body(Body::from(body)).expect("valid request"))
        .await
}

fn wake_instance(dir: &Path, dek: &Dek) -> Instance {
    Instance::wake(
        InstanceConfig {
            data_dir: dir.to_path_buf(),
            admission: Admission::parse(OWNER).expect("owners"),
            egress: EgressMode::AiOff,
        },
        Sealer::new(dek),
        Arc::new(FixedClock(T0_UNIX_S)),
    )
    .expect("wake")
}

/// A clock a test moves by hand.
#[derive(Debug)]
struct HandClock(AtomicI64);

impl HandClock {
    fn set(&self, unix_s: i64) {
        self.0.store(unix_s, Ordering::SeqCst);
    }
}

impl Clock for HandClock {
    fn now_unix_s(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Seeds the embedded Almendra Studio corpus into the app's instance.
fn seed_corpus(app: &TestApp) {
    let instance = app.state().instance();
    let mut guard = instance.lock().expect("instance lock");
    let report = memoria::demo::seed(&mut guard).expect("seed");
    assert_eq!(report.refused(), 0, "every fixture decodes");
}

const KITCHEN_MD: &[u8] = b"# Kitchen\n\n## Coffee machine\n\nDescale the coffee machine monthly with the citric acid sachets.\n\n## Dishwasher\n\nEmpty the dishwasher before the morning stand-up.\n";

// ---------------------------------------------------------------------------
// Uploads
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_good_upload_answers_303_to_its_document_and_changes_the_store() {
    let (_dir, app) = signed_in_app().await;
    let before = store_state(&app);
    let resp = app.upload("kitchen.md", KITCHEN_MD, None).await;
    let id = uploaded_id(&resp);
    assert_eq!(resp.location(), Some(format!("/documents/{id}").as_str()));
    let after = store_state(&app);
    assert_eq!(after.documents, before.documents + 1);
    assert!(after.chunks > before.chunks, "{after:?}");
    assert!(after.store_seq > before.store_seq, "{after:?}");
    assert!(after.generation > before.generation, "{after:?}");
    assert_eq!(after.revisions, vec![(id.clone(), 1)]);

    let page = app.get(&format!("/documents/{id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Descale the coffee machine monthly"));
    assert_footer("document page", &page);
}

#[tokio::test]
async fn re_uploading_identical_bytes_is_idempotent_and_changed_content_is_revision_two() {
    let (_dir, app) = signed_in_app().await;
    let first = upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    let after_first = store_state(&app);

    let again = upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    assert_eq!(
        again, first,
        "the same name and bytes are the same document"
    );
    assert_eq!(
        store_state(&app),
        after_first,
        "an identical re-upload writes nothing: same revision, same seq, same snapshot"
    );

    let changed = [KITCHEN_MD, b"\nWipe the fridge shelves on Fridays.\n"].concat();
    let revised = upload_ok(&app, "kitchen.md", &changed).await;
    assert_eq!(
        revised, first,
        "changed content under the same name is the same document"
    );
    let after_change = store_state(&app);
    assert_eq!(after_change.revisions, vec![(first.clone(), 2)]);
    assert_eq!(after_change.documents, 1);
    assert!(after_change.store_seq > after_first.store_seq);
    let page = app.get(&format!("/documents/{first}")).await;
    assert!(page.body.contains("revision 2"), "{}", page.body);
    assert!(page.body.contains("Wipe the fridge shelves"));
}

#[tokio::test]
async fn an_over_cap_invalid_utf8_empty_or_binary_upload_is_refused_clearly_and_nothing_changes() {
    let (_dir, app) = signed_in_app().await;
    // Presence: a good upload under the same name does change the store, so
    // "unchanged" below is a real claim about each refusal.
    let empty = store_state(&app);
    let id = upload_ok(&app, "notes.md", KITCHEN_MD).await;
    let stored = store_state(&app);
    assert_ne!(stored, empty);
    assert_eq!(stored.documents, 1);
    assert!(stored.chunks > 0);

    let mut control_noise = Vec::new();
    for _ in 0..200 {
        control_noise.extend_from_slice(b"abcd\x01");
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("one byte over the cap", vec![b'a'; UPLOAD_BYTES_MAX + 1]),
        (
            "twice the cap (past the body limit)",
            "lorem ipsum ".repeat(UPLOAD_BYTES_MAX / 6).into_bytes(),
        ),
        ("invalid UTF-8", b"# Notes\n\ncaf\xe9 au lait\n".to_vec()),
        ("an empty file", Vec::new()),
        ("no words", b"  \n--- \n***\n".to_vec()),
        (
            "binary with NUL bytes",
            b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01".to_vec(),
        ),
        ("binary by control characters", control_noise),
    ];
    let mut seen = String::new();
    for (what, bytes) in &cases {
        let resp = app.upload("notes.md", bytes, None).await;
        assert!(
            resp.location().is_none(),
            "{what}: a refusal is not a redirect"
        );
        assert_footer(what, &resp);
        let sentence = refusal(&resp.body)
            .unwrap_or_else(|| panic!("{what}: the page states a refusal:\n{}", resp.body));
        assert!(
            sentence.contains("nothing was stored"),
            "{what}: the refusal says nothing was stored: {sentence}"
        );
        assert_eq!(
            store_state(&app),
            stored,
            "{what}: the store did not change"
        );
        seen.push_str(&format!("{what}: {} {sentence}\n", resp.status.as_u16()));
    }
    expect![[r#"
        one byte over the cap: 413 The upload is larger than 1 MiB (1,048,576 bytes), so nothing was stored.
        twice the cap (past the body limit): 413 The upload is larger than 1 MiB (1,048,576 bytes), so nothing was stored.
        invalid UTF-8: 422 The file is not valid UTF-8 text, so nothing was stored.
        an empty file: 400 The file is empty or holds no words, so nothing was stored.
        no words: 400 The file is empty or holds no words, so nothing was stored.
        binary with NUL bytes: 415 The file is binary, not text. memoria takes Markdown, plain text and HTML; nothing was stored.
        binary by control characters: 415 The file is binary, not text. memoria takes Markdown, plain text and HTML; nothing was stored.
    "#]]
    .assert_eq(&seen);

    // The stored document is still the one the good upload wrote.
    let page = app.get(&format!("/documents/{id}")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("revision 1"));
    assert!(page.body.contains("Descale the coffee machine monthly"));
}

#[tokio::test]
async fn an_upload_of_exactly_one_mebibyte_is_accepted() {
    let (_dir, app) = signed_in_app().await;
    let line = b"lorem ipsum dolor sit amet consectetur\n";
    let mut bytes = line.repeat(UPLOAD_BYTES_MAX / line.len());
    bytes.resize(UPLOAD_BYTES_MAX, b'x');
    assert_eq!(bytes.len(), UPLOAD_BYTES_MAX);
    let id = upload_ok(&app, "big.txt", &bytes).await;
    assert_eq!(store_state(&app).revisions, vec![(id, 1)]);
}

#[tokio::test]
async fn an_upload_without_a_csrf_token_or_with_a_wrong_one_is_403_and_changes_nothing() {
    let (_dir, app) = signed_in_app().await;
    let good = app.csrf().expect("signed in").to_string();
    upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    let stored = store_state(&app);
    let changed = [KITCHEN_MD, b"\nA change that must not land.\n"].concat();

    // Presence: the same change with the right token does land (checked last).
    let wrong = format!("{good}x");
    for (what, token) in [("an empty token", ""), ("a wrong token", wrong.as_str())] {
        let resp = app.upload("kitchen.md", &changed, Some(token)).await;
        assert_eq!(resp.status, StatusCode::FORBIDDEN, "{what}");
        assert_footer(what, &resp);
        assert!(
            refusal(&resp.body).is_some_and(|s| s.contains("CSRF")),
            "{what}"
        );
        assert_eq!(store_state(&app), stored, "{what}");
    }

    let (content_type, body) = multipart(&[("file", Some("kitchen.md"), &changed)]);
    let resp = app
        .send(
            Request::post("/documents")
                .header(header::CONTENT_TYPE, content_type)
                .body(Body::from(body))
                .expect("valid request"),
        )
        .await;
    assert_eq!(resp.status, StatusCode::FORBIDDEN, "no csrf field at all");
    assert_footer("no csrf field", &resp);
    assert_eq!(store_state(&app), stored);

    let (content_type, body) = multipart(&[
        ("csrf", None, good.as_bytes()),
        ("file", Some("kitchen.md"), &changed),
    ]);
    let resp = app
        .send(
            Request::post("/documents")
                .header(header::CONTENT_TYPE, content_type)
                .header(header::ORIGIN, "http://evil.example")
                .body(Body::from(body))
                .expect("valid request"),
        )
        .await;
    assert_eq!(resp.status, StatusCode::FORBIDDEN, "a cross-origin upload");
    assert_footer("cross-origin upload", &resp);
    assert_eq!(store_state(&app), stored);

    let resp = app.upload("kitchen.md", &changed, Some(&good)).await;
    uploaded_id(&resp);
    assert_ne!(
        store_state(&app),
        stored,
        "the right token does store the change"
    );
}

#[tokio::test]
async fn an_upload_while_signed_out_is_401_and_changes_nothing() {
    let (_dir, mut app) = signed_in_app().await;
    upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    let stored = store_state(&app);
    let csrf = app.csrf().expect("signed in").to_string();
    app.sign_out_locally();
    let resp = app
        .upload("other.md", b"# Other\n\nwords", Some(&csrf))
        .await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
    assert_footer("signed-out upload", &resp);
    assert!(resp.body.contains("Sign in"));
    assert_eq!(store_state(&app), stored);
}

// ---------------------------------------------------------------------------
// Paths
// ---------------------------------------------------------------------------

#[tokio::test]
async fn an_unknown_malformed_or_traversal_shaped_document_id_is_404_with_the_footer_and_leaks_nothing()
 {
    let (dir, app) = signed_in_app().await;
    let live_title = "Zanzibar ledger of quiet things";
    let gone_title = "Ouroboros minutes never to return";
    let live = upload_ok(
        &app,
        "live.md",
        format!("# {live_title}\n\nbody words").as_bytes(),
    )
    .await;
    let gone = upload_ok(
        &app,
        "gone.md",
        format!("# {gone_title}\n\nother words").as_bytes(),
    )
    .await;

    // Presence: both titles render on their document pages, and the data
    // directory is a real path, so their absence below is meaningful.
    for (id, title) in [(&live, live_title), (&gone, gone_title)] {
        let page = app.get(&format!("/documents/{id}")).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.body.contains(title));
        let confirm = app.get(&format!("/documents/{id}/delete")).await;
        assert_eq!(confirm.status, StatusCode::OK);
        assert!(confirm.body.contains(title));
    }
    let resp = post_delete(&app, &gone, app.csrf(), None).await;
    assert_eq!(resp.status, StatusCode::SEE_OTHER);
    let data_dir = dir.path().to_string_lossy().into_owned();
    let data_dir_name = dir
        .path()
        .file_name()
        .expect("named")
        .to_string_lossy()
        .into_owned();
    assert!(Path::new(&data_dir).join("memoria.sqlite3").exists());

    let unknown = "0123456789abcdef0123456789abcdef".to_string();
    assert_ne!(unknown, live);
    let ids = [
        unknown,
        "abc".to_string(),
        live.to_uppercase(),
        "..%2F..%2Fetc%2Fpasswd".to_string(),
        "%2e%2e".to_string(),
        "..".to_string(),
        "../memoria.sqlite3".to_string(),
        "..%2Fmemoria.sqlite3".to_string(),
        format!("{live}/"),
        format!("{live}%00"),
        format!("{live}%20"),
        format!("{live}0"),
        gone.clone(),
        "a".repeat(10_000),
    ];
    for id in &ids {
        for uri in [
            format!("/documents/{id}"),
            format!("/documents/{id}/delete"),
        ] {
            let resp = app.get(&uri).await;
            let shown: String = uri.chars().take(80).collect();
            assert_eq!(resp.status, StatusCode::NOT_FOUND, "{shown}");
            assert_footer(&shown, &resp);
            assert!(
                resp.body.contains("There is nothing at this address."),
                "{shown}"
            );
            for leak in [
                live_title,
                gone_title,
                data_dir.as_str(),
                data_dir_name.as_str(),
                "sqlite",
                "passwd",
            ] {
                assert!(!resp.body.contains(leak), "{shown} leaks {leak:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_signed_out_request_for_a_document_or_a_search_is_401_and_shows_no_title() {
    let (_dir, mut app) = signed_in_app().await;
    let title = "Marmalade protocol";
    let id = upload_ok(&app, "m.md", format!("# {title}\n\nbody").as_bytes()).await;
    let uris = [
        format!("/documents/{id}"),
        format!("/documents/{id}/delete"),
        "/".to_string(),
        "/?q=marmalade".to_string(),
        "/search?q=marmalade".to_string(),
    ];
    for uri in &uris {
        let resp = app.get(uri).await;
        assert_eq!(resp.status, StatusCode::OK, "{uri}");
        assert!(
            resp.body.contains(title),
            "presence: the owner sees it at {uri}"
        );
    }
    app.sign_out_locally();
    for uri in &uris {
        let resp = app.get(uri).await;
        assert_eq!(resp.status, StatusCode::UNAUTHORIZED, "{uri}");
        assert_footer(uri, &resp);
        assert!(!resp.body.contains(title), "{uri}");
        assert_eq!(result_count(&resp.body), 0, "{uri}");
    }
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

/// What a hostile query should give on the fixture corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// At least one result.
    Results,
    /// Searched as words that may match nothing: results or "No passage matched.".
    Searched,
    /// No word to search: zero results and the "no words" notice.
    NoWords,
}

#[tokio::test]
async fn whatever_a_person_types_is_searched_as_words_and_never_errors() {
    let (_dir, app) = signed_in_app().await;
    seed_corpus(&app);
    use Expect::*;
    let table: &[(&str, Expect)] = &[
        ("\"coffee", Results),
        ("coffee\"", Results),
        ("\"coffee machine\"", Results),
        ("'coffee'", Results),
        ("o'brien's coffee", Results),
        ("co-op coffee", Results),
        ("-coffee", Results),
        ("coffee -machine", Results),
        ("v1.2 coffee", Results),
        ("title:coffee", Results),
        ("body:coffee", Results),
        ("{title body}: coffee", Results),
        ("coffee:", Results),
        ("coffee*", Results),
        ("*coffee", Results),
        ("+coffee", Results),
        ("^coffee", Results),
        ("(coffee", Results),
        ("coffee)", Results),
        ("coffee AND", Results),
        ("AND coffee", Results),
        ("coffee OR", Results),
        ("coffee NOT machine", Results),
        ("NOT coffee", Results),
        ("NEAR(coffee machine)", Results),
        ("NEAR(coffee machine, 2)", Results),
        ("coffee NEAR/2 machine", Results),
        ("AND", Results),
        ("and", Results),
        ("Or", Results),
        ("nOt", Results),
        ("NEAR", Searched),
        ("near", Searched),
        // Three stop words and "near": searched for "near" (the fixtures lack it).
        ("AND OR NOT NEAR", Searched),
        ("'); DROP TABLE chunks; --", Results),
        ("coffee\0machine", Results),
        ("café", Results),
        ("締め切り", Results),
        ("\"", NoWords),
        ("\"\"", NoWords),
        ("'", NoWords),
        ("-", NoWords),
        ("...", NoWords),
        (":", NoWords),
        ("*", NoWords),
        ("+", NoWords),
        ("* + : - . ( ) ^ { }", NoWords),
        ("\"*\" - : .", NoWords),
        ("— … «»", NoWords),
        ("   ", NoWords),
    ];
    for (q, expect) in table {
        for route in ["/", "/search"] {
            let uri = format!("{route}?q={}", form_encode(q));
            let resp = app.get(&uri).await;
            assert_eq!(resp.status, StatusCode::OK, "{uri}: {}", resp.body);
            assert_footer(&uri, &resp);
            assert!(!resp.body.contains("could not run"), "{uri}");
            assert!(refusal(&resp.body).is_none(), "{uri}: no refusal");
            assert!(!resp.body.contains('\u{fffd}'), "{uri}");
            match expect {
                Results => assert!(result_count(&resp.body) > 0, "{uri}: results"),
                Searched => assert!(
                    result_count(&resp.body) > 0 || resp.body.contains("No passage matched."),
                    "{uri}: searched"
                ),
                NoWords => {
                    assert_eq!(result_count(&resp.body), 0, "{uri}: never everything");
                    assert!(
                        resp.body.contains("holds no words to look for"),
                        "{uri}: says why nothing was searched"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn a_query_with_fts5_syntax_finds_exactly_what_its_plain_words_find() {
    let (_dir, app) = signed_in_app().await;
    seed_corpus(&app);
    let pairs = [
        ("\"coffee machine\"", "coffee machine"),
        ("coffee*", "coffee"),
        ("+coffee -machine", "coffee machine"),
        ("coffee AND machine", "coffee and machine"),
        ("NEAR(coffee machine, 2)", "near coffee machine 2"),
        ("title:descaling", "title descaling"),
        ("o'brien's", "o brien s"),
        ("v1.2", "v1 2"),
        ("COFFEE Machine", "coffee machine"),
    ];
    for (nasty, plain) in pairs {
        let plain_page = app.get(&format!("/?q={}", form_encode(plain))).await;
        let nasty_page = app.get(&format!("/?q={}", form_encode(nasty))).await;
        let fragment = app.get(&format!("/search?q={}", form_encode(nasty))).await;
        assert_eq!(nasty_page.status, StatusCode::OK, "{nasty}");
        let expected = result_links(&plain_page.body);
        assert!(!expected.is_empty(), "presence: {plain} finds something");
        assert_eq!(
            result_links(&nasty_page.body),
            expected,
            "{nasty} vs {plain}"
        );
        assert_eq!(result_links(&fragment.body), expected, "/search {nasty}");
    }
}

#[tokio::test]
async fn an_empty_or_punctuation_only_query_shows_no_results() {
    let (_dir, app) = signed_in_app().await;
    seed_corpus(&app);
    // Presence: a real query on the same corpus shows results on both routes.
    for route in ["/", "/search"] {
        let resp = app.get(&format!("{route}?q=coffee")).await;
        assert!(result_count(&resp.body) > 0, "{route}");
    }
    for q in ["", "%20%20", "%22%22", "...", "%2A", "-%20-", "%E2%80%94"] {
        for route in ["/", "/search"] {
            let uri = format!("{route}?q={q}");
            let resp = app.get(&uri).await;
            assert_eq!(resp.status, StatusCode::OK, "{uri}");
            assert_footer(&uri, &resp);
            assert_eq!(result_count(&resp.body), 0, "{uri}");
            assert!(
                !resp.body.contains("No passage matched"),
                "{uri}: not a search"
            );
        }
    }
}

#[tokio::test]
async fn a_query_over_one_kibibyte_is_400_with_a_refusal_and_the_footer() {
    let (_dir, app) = signed_in_app().await;
    seed_corpus(&app);
    // Presence: exactly 1 KiB is still searched.
    let at_cap = format!("coffee {}", "a".repeat(QUERY_BYTES_MAX - 7));
    assert_eq!(at_cap.len(), QUERY_BYTES_MAX);
    let resp = app.get(&format!("/?q={}", form_encode(&at_cap))).await;
    assert_eq!(resp.status, StatusCode::OK);
    assert!(result_count(&resp.body) > 0);

    let over_ascii = "a".repeat(QUERY_BYTES_MAX + 1);
    // 513 two-byte characters: under 1 KiB of characters, over it in bytes.
    let over_multibyte = "é".repeat(QUERY_BYTES_MAX / 2 + 1);
    for q in [over_ascii, over_multibyte] {
        for route in ["/", "/search"] {
            let resp = app.get(&format!("{route}?q={}", form_encode(&q))).await;
            assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{route}");
            assert_footer(route, &resp);
            let sentence = refusal(&resp.body).expect("a refusal");
            let figures = format!(
                "{} characters, {} bytes; memoria searches at most 1024 bytes",
                q.chars().count(),
                q.len()
            );
            assert!(sentence.contains(&figures), "{sentence}");
            assert_eq!(result_count(&resp.body), 0);
        }
    }
}

#[tokio::test]
async fn japanese_and_accent_folded_words_are_found_and_marked_on_the_page() {
    let (_dir, app) = signed_in_app().await;
    upload_ok(
        &app,
        "notes.md",
        "# 議事録\n\n東京で会議を開きました。\n\n## Wyjazd\n\nSpotkanie w Polską stolicą.\n"
            .as_bytes(),
    )
    .await;
    for (q, marked) in [("東京", "東京"), ("polska", "Polską"), ("会議", "会議")] {
        let resp = app.get(&format!("/?q={}", form_encode(q))).await;
        assert_eq!(resp.status, StatusCode::OK, "{q}");
        assert!(result_count(&resp.body) > 0, "{q} finds the passage");
        assert_eq!(marks(&resp.body), vec![marked], "{q}");
    }
}

#[tokio::test]
async fn the_search_form_cuts_nothing_a_person_types_and_the_server_counts_once() {
    let (_dir, app) = signed_in_app().await;
    let home = app.get("/").await;
    assert_eq!(home.status, StatusCode::OK);
    // Presence: the form and its query field are on the page.
    assert!(
        home.body.contains("name=\"q\""),
        "the search field is on the page"
    );
    // A browser cuts a paste at `maxlength` without a word, and counts it in
    // UTF-16 units where the limit is bytes: the field carries none, and a
    // query of 4 KiB reaches the server's refusal, not a transport error.
    assert!(
        !home.body.contains("maxlength"),
        "the search field has no maxlength"
    );
    let long = "ż".repeat(2 * QUERY_BYTES_MAX);
    let resp = app.get(&format!("/?q={}", form_encode(&long))).await;
    assert_eq!(resp.status, StatusCode::BAD_REQUEST);
    let sentence = refusal(&resp.body).expect("a refusal");
    assert!(
        sentence.contains("2048 characters, 4096 bytes"),
        "{sentence}"
    );
}

#[tokio::test]
async fn a_query_of_more_than_sixty_four_words_is_refused_naming_the_limit_never_cut_short() {
    let (_dir, app) = signed_in_app().await;
    seed_corpus(&app);
    // 64 different words, the last one the only word the fixtures hold:
    // searched whole, so the 64th word still finds its passage.
    let mut words: Vec<String> = (1..QUERY_WORDS_MAX).map(|i| format!("zq{i}")).collect();
    words.push("coffee".to_string());
    let resp = app
        .get(&format!("/?q={}", form_encode(&words.join(" "))))
        .await;
    assert_eq!(resp.status, StatusCode::OK);
    assert!(result_count(&resp.body) > 0, "the 64th word is searched");
    // One more different word: refused, with both numbers, on both routes.
    words.insert(0, "zq0".to_string());
    for route in ["/", "/search"] {
        let resp = app
            .get(&format!("{route}?q={}", form_encode(&words.join(" "))))
            .await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{route}");
        assert_footer(route, &resp);
        let sentence = refusal(&resp.body).expect("a refusal");
        assert!(sentence.contains("65 different words"), "{sentence}");
        assert!(sentence.contains("at most 64"), "{sentence}");
        assert_eq!(result_count(&resp.body), 0);
    }
}

/// Builds a SQLite image that holds a table named `fts` and the shadow table
/// the wake check reads, but no FTS5 table: the engine fails on any `MATCH`.
fn index_image_without_fts5(chunk_ids: &[i64]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("image.sqlite3");
    {
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "CREATE TABLE fts(title, trail, body);
             CREATE TABLE fts_docsize(id INTEGER PRIMARY KEY, sz BLOB);",
        )
        .expect("schema");
        for id in chunk_ids {
            conn.execute("INSERT INTO fts_docsize(id, sz) VALUES (?1, x'')", [id])
                .expect("insert");
        }
    }
    std::fs::read(&path).expect("image bytes")
}

/// `SearchError::Engine` is not reachable with a sane index: every query is
/// sanitised into quoted words. It is reachable through the public API by
/// waking on a sealed snapshot whose image has no FTS5 table, which makes the
/// engine fail on every `MATCH`, as a real engine rejection would.
#[tokio::test]
async fn a_query_the_engine_rejects_is_reported_on_the_page_never_as_no_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dek = Dek::generate();
    let header = {
        let mut instance = wake_instance(dir.path(), &dek);
        instance
            .ingest(&NewDocument {
                source_key: "upload:kitchen.md".into(),
                title: "Kitchen".into(),
                path: "kitchen.md".into(),
                body: "Descale the coffee machine monthly.".into(),
                date: None,
            })
            .expect("ingest");
        let header = instance.write_snapshot().expect("snapshot");
        // Presence: on the real index the query finds the passage.
        let page = instance.search(OWNER, "coffee", 1).expect("search");
        assert_eq!(page.results.len(), 1);
        let image = index_image_without_fts5(&instance.store().live_chunk_ids().expect("ids"));
        snapshot::write(dir.path(), &Sealer::new(&dek), header, &image).expect("write");
        header
    };

    let mut app = TestApp::new(dir.path(), &dek, OWNER).expect("wake");
    {
        let instance = app.state().instance();
        let guard = instance.lock().expect("instance lock");
        assert_eq!(
            guard.wake_report().kind,
            WakeKind::Loaded {
                generation: header.generation
            },
            "the crafted snapshot agrees with the store, so it is served"
        );
        match guard.search(OWNER, "coffee", 1) {
            Err(SearchError::Engine(_)) => {}
            other => panic!("expected an engine error, got {other:?}"),
        }
    }
    app.sign_in(OWNER).await;
    for route in ["/", "/search"] {
        let resp = app.get(&format!("{route}?q=coffee")).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{route}");
        assert_footer(route, &resp);
        let sentence = refusal(&resp.body).expect("a refusal");
        assert!(sentence.contains("could not run this query"), "{sentence}");
        assert!(!resp.body.contains("No passage matched"), "{route}");
        assert_eq!(result_count(&resp.body), 0);
    }
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

#[tokio::test]
async fn markup_in_a_document_is_escaped_on_every_page_and_never_runs() {
    let (_dir, app) = signed_in_app().await;
    let doc = "# <script>alert(1)</script> Quokka plan\n\n\
        Intro: the quokka said \"quoted\" & 'apos' <script>alert(1)</script>.\n\n\
        ## <img src=x onerror=alert(2)> Findings\n\n\
        The quokka findings <img src=x onerror=alert(2)> and <b>bold</b> text.\n";
    let name = "<b onmouseover=alert(4)>.md";
    let id = upload_ok(&app, name, doc.as_bytes()).await;

    let pages = [
        ("home", app.get("/").await),
        ("results", app.get("/?q=quokka").await),
        ("fragment", app.get("/search?q=quokka").await),
        ("document", app.get(&format!("/documents/{id}")).await),
        (
            "delete confirm",
            app.get(&format!("/documents/{id}/delete")).await,
        ),
    ];
    for (what, resp) in &pages {
        assert_eq!(resp.status, StatusCode::OK, "{what}");
        assert_footer(what, resp);
        // Presence: the document's markup reached this page, escaped.
        assert!(
            resp.body.contains("&lt;script&gt;"),
            "{what}: {}",
            resp.body
        );
        // Absence: none of it as live markup. No page of memoria's own has a
        // script or an image, so any of these would have come from the document.
        for raw in [
            "<script",
            "<img",
            "<b>bold",
            "<b onmouseover",
            "onerror=alert(2)>",
        ] {
            assert!(!resp.body.contains(raw), "{what} carries raw {raw:?}");
        }
    }
    let results = &pages[1].1.body;
    assert!(result_count(results) > 0);
    assert!(
        results.contains("&lt;img src=x onerror=alert(2)&gt;"),
        "{results}"
    );
    let document = &pages[3].1.body;
    assert!(
        document.contains("&quot;quoted&quot; &amp; 'apos'"),
        "{document}"
    );
    assert!(document.contains("&lt;b&gt;bold&lt;/b&gt;"));
    assert!(
        document.contains("&lt;b onmouseover=alert(4)&gt;.md"),
        "the file name is escaped"
    );
}

#[tokio::test]
async fn a_query_echoed_into_the_search_box_is_escaped() {
    let (_dir, app) = signed_in_app().await;
    let q = "\"><script>alert(5)</script>";
    let resp = app.get(&format!("/?q={}", form_encode(q))).await;
    assert_eq!(resp.status, StatusCode::OK);
    assert!(
        resp.body.contains("&quot;&gt;&lt;script&gt;alert(5)"),
        "{}",
        resp.body
    );
    let page = Page::parse(&resp.body);
    assert!(page.scripts().is_empty(), "{:?}", page.scripts());
}

#[tokio::test]
async fn highlights_are_whole_words_and_never_split_a_multibyte_character() {
    let (_dir, app) = signed_in_app().await;
    let body = "café Zürich 東京 naïve ".repeat(300);
    upload_ok(
        &app,
        "multibyte.md",
        format!("# Travel\n\n{body}\n").as_bytes(),
    )
    .await;
    for (q, word) in [
        ("café", "café"),
        ("東京", "東京"),
        ("naïve", "naïve"),
        ("zürich", "Zürich"),
    ] {
        for route in ["/", "/search"] {
            let resp = app.get(&format!("{route}?q={}", form_encode(q))).await;
            assert_eq!(resp.status, StatusCode::OK);
            assert!(
                !resp.body.contains('\u{fffd}'),
                "{route} {q}: no replacement character"
            );
            let found = marks(&resp.body);
            assert!(!found.is_empty(), "{route} {q}: at least one highlight");
            for m in &found {
                assert_eq!(*m, word, "{route} {q}: a mark is exactly one whole word");
            }
            // Each mark stands between non-word characters, in every
            // snippet that shows one.
            let shown = snippets(&resp.body);
            assert!(
                shown.iter().any(|s| s.contains('[')),
                "{route} {q}: {shown:?}"
            );
            for s in &shown {
                for (at, _) in s.match_indices(']') {
                    assert!(
                        !s[at + 1..]
                            .chars()
                            .next()
                            .is_some_and(char::is_alphanumeric),
                        "{route} {q}: the word continues after its mark: {s}"
                    );
                }
                for (at, _) in s.match_indices('[') {
                    assert!(
                        !s[..at].chars().last().is_some_and(char::is_alphanumeric),
                        "{route} {q}: the word starts before its mark: {s}"
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The page, as a reader sees it (issue 11)
// ---------------------------------------------------------------------------

/// A Markdown document with every construct a reader should see rendered,
/// and every one a page must not pass through.
const PRINTERS_MD: &str = "# Printer guide\n\n\
Run `lpstat -p` to see **every** printer, then read [the manual](https://example.org/manual) \
or [this](javascript:alert(1)) or [that](data:text/html,x).\n\n\
- first bullet\n- second bullet\n\n\
| Floor | Printer |\n|---|---|\n| 2 | *Kyocera* |\n\n\
![floor plan](https://evil.example/track.png?d=1) and ![](//evil.example/x.gif)\n\n\
<div onclick=\"steal()\">a raw block</div>\n\n\
## Toner\n\n\
The toner lives <b>here</b>, on the shelf.\n";

/// The markup of a document page's passages, every `section.passage` in order.
fn passages_html(body: &str) -> String {
    let passages = Page::parse(body).markup("section.passage");
    assert!(!passages.is_empty(), "a document page has passages: {body}");
    passages.concat()
}

/// The text of every snippet, marks shown as `[`…`]` ([`Page::snippets`]).
fn snippets(body: &str) -> Vec<String> {
    Page::parse(body).snippets()
}

/// The text of every result's `div.meta`, whitespace folded, in rank order:
/// as a reader sees it, the no-break space before each dot is a space.
fn metas(body: &str) -> Vec<String> {
    Page::parse(body)
        .citations()
        .into_iter()
        .map(|c| c.meta)
        .collect()
}

#[tokio::test]
async fn a_markdown_document_page_is_rendered_with_raw_html_as_text_no_image_and_only_safe_links() {
    let (_dir, app) = signed_in_app().await;
    let id = upload_ok(&app, "printers.md", PRINTERS_MD.as_bytes()).await;
    let resp = app.get(&format!("/documents/{id}")).await;
    assert_eq!(resp.status, StatusCode::OK);
    assert_footer("the document page", &resp);
    expect![[r##"<section class="passage" id="p1"><p class="meta"><a href="#p1">Passage 1</a></p><div class="body"><p>Run <code>lpstat -p</code> to see <strong>every</strong> printer, then read <a href="https://example.org/manual" rel="noopener noreferrer nofollow">the manual</a> or this or that.</p><ul><li>first bullet</li><li>second bullet</li></ul><div class="table"><table><thead><tr><th>Floor</th><th>Printer</th></tr></thead><tbody><tr><td>2</td><td><em>Kyocera</em></td></tr></tbody></table></div><p><span class="image">[image: floor plan]</span> and <span class="image">[image]</span></p><pre class="html">&lt;div onclick="steal()"&gt;a raw block&lt;/div&gt;</pre></div></section><section class="passage" id="p2"><h2>Toner</h2><p class="meta"><a href="#p2">Passage 2</a></p><div class="body"><p>The toner lives &lt;b&gt;here&lt;/b&gt;, on the shelf.</p></div></section>"##]]
    .assert_eq(&passages_html(&resp.body));
    for absent in [
        "<img",
        "evil.example",
        "javascript:",
        "data:text",
        "<div onclick",
        "<b>",
    ] {
        assert!(!resp.body.contains(absent), "the page carries {absent:?}");
    }
    assert_eq!(
        Page::parse(&resp.body).texts("h1").len(),
        1,
        "one h1: the title; a passage's headings are deeper"
    );
}

#[tokio::test]
async fn a_plain_text_document_page_shows_its_text_and_makes_nothing_of_markdown_symbols() {
    let (_dir, app) = signed_in_app().await;
    let text = "Shopping list for the studio\n\n- oat milk\n* coffee beans\n1. `tea`\n| a | b |\n";
    let id = upload_ok(&app, "list.txt", text.as_bytes()).await;
    let resp = app.get(&format!("/documents/{id}")).await;
    assert_eq!(resp.status, StatusCode::OK);
    expect![[r##"
        <section class="passage" id="p1"><p class="meta"><a href="#p1">Passage 1</a></p><pre class="text">Shopping list for the studio

        - oat milk
        * coffee beans
        1. `tea`
        | a | b |</pre></section>"##]]
    .assert_eq(&passages_html(&resp.body));
    // The snippet of a text file is its text as well.
    let results = app.get("/?q=coffee").await;
    assert_eq!(
        snippets(&results.body),
        ["Shopping list for the studio  - oat milk * [coffee] beans 1. `tea` | a | b |"]
    );
}

#[tokio::test]
async fn the_passage_a_result_links_to_is_anchored_and_marked_without_script() {
    let (_dir, app) = signed_in_app().await;
    upload_ok(&app, "printers.md", PRINTERS_MD.as_bytes()).await;
    let results = app.get("/?q=toner").await;
    let links = result_links(&results.body);
    assert_eq!(links.len(), 1, "{}", results.body);
    let (path, fragment) = links[0].split_once('#').expect("a deep link");
    assert_eq!(
        fragment, "p2",
        "the second passage, labelled and anchored 2"
    );
    let doc = app.get(&format!("/documents/{path}")).await;
    let page = Page::parse(&doc.body);
    let passage = page
        .region(&format!("section.passage#{fragment}"))
        .unwrap_or_else(|| panic!("a passage anchored {fragment}: {}", doc.body));
    assert_eq!(
        passage.texts("h2").first().map(String::as_str),
        Some("Toner"),
        "{}",
        doc.body
    );
    // Marked by the stylesheet when the fragment names it: no script.
    assert!(doc.body.contains("section.passage:target{"), "{}", doc.body);
    assert!(
        doc.body
            .contains("section.passage:target>p.meta::after{content:")
    );
    assert!(page.scripts().is_empty(), "{:?}", page.scripts());
}

#[tokio::test]
async fn a_snippet_shows_the_passages_text_without_markdown_symbols_and_still_marks_folded_and_cjk_words()
 {
    let (_dir, app) = signed_in_app().await;
    upload_ok(&app, "printers.md", PRINTERS_MD.as_bytes()).await;
    upload_ok(
        &app,
        "trip.md",
        "# Trip\n\n- **Spotkanie** w *Polską* stolicą\n\n| Where | What |\n|---|---|\n| `東京`で | 会議, [notes](https://example.org) |\n"
            .as_bytes(),
    )
    .await;
    let resp = app.get("/?q=printer").await;
    let shown = snippets(&resp.body);
    assert!(
        shown.contains(
            &"Run lpstat -p to see every [printer], then read the manual or this or that. first bullet \
             second bullet Floor [Printer] 2 Kyocera floor plan and <div onclick=\"steal()\">a raw block</div>"
                .to_string()
        ),
        "{shown:?}"
    );
    for (q, marked) in [("polska", "Polską"), ("東京", "東京"), ("notes", "notes")] {
        let resp = app.get(&format!("/?q={}", form_encode(q))).await;
        assert_eq!(marks(&resp.body), [marked], "{q}");
        let shown = snippets(&resp.body);
        assert_eq!(shown.len(), 1, "{q}");
        for symbol in ["**", "`", "](", "- ", "|", "*"] {
            assert!(
                !shown[0].contains(symbol),
                "{q}: {symbol:?} in {}",
                shown[0]
            );
        }
    }
}

#[tokio::test]
async fn passages_are_numbered_from_one_on_every_page_and_anchors_name_the_same_number() {
    let (_dir, app) = signed_in_app().await;
    let id = upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    let results = app.get("/?q=descale").await;
    assert_eq!(result_links(&results.body), [format!("{id}#p1")]);
    let meta = metas(&results.body);
    assert!(meta[0].contains(" · passage 1 · "), "{meta:?}");
    let unfolded = Page::parse(&results.body).texts("li.result div.meta");
    assert!(
        unfolded[0].contains("passage 1\u{a0}· "),
        "each dot is held to the part before it, so a narrow page never starts a line with one: {unfolded:?}"
    );
    let doc = app.get(&format!("/documents/{id}")).await;
    let page = Page::parse(&doc.body);
    let anchors: Vec<(String, String)> = page
        .links("section.passage p.meta a")
        .into_iter()
        .map(|l| (l.href, l.text))
        .collect();
    let anchor = |n: u32| (format!("#p{n}"), format!("Passage {n}"));
    assert!(
        page.region("section.passage#p1").is_some() && anchors.starts_with(&[anchor(1), anchor(2)]),
        "{anchors:?}"
    );
    assert!(!doc.body.contains("Passage 0"));
}

#[tokio::test]
async fn the_person_marker_is_a_drawn_figure_with_its_words_beside_it_never_a_fonts_emoji() {
    let (_dir, app) = signed_in_app().await;
    upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    let results = app.get("/?q=descale").await;
    let meta = metas(&results.body);
    assert_eq!(meta.len(), 1);
    assert!(
        meta[0].contains(&format!(" · {} · ", memoria::MARKER_PERSON_LABEL)),
        "{meta:?}"
    );
    // Drawn, so it renders where no emoji font is installed (issue 31),
    // and hidden from a screen reader, which reads the words instead.
    let figures = Page::parse(&results.body).tags("li.result div.meta svg.marker-figure");
    let attr = |k: &str| {
        figures.first().and_then(|t| {
            t.attrs
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.as_str())
        })
    };
    assert_eq!(
        (
            attr("viewBox"),
            attr("width"),
            attr("height"),
            attr("aria-hidden")
        ),
        (Some("0 0 16 16"), Some("14"), Some("14"), Some("true")),
        "{figures:?}"
    );
    assert!(!results.body.contains(memoria::MARKER_PERSON));
    assert_eq!(memoria::MARKER_PERSON_LABEL, "written by a person");
}

#[tokio::test]
async fn the_results_page_counts_its_results_and_every_count_agrees_in_number() {
    let (_dir, app) = signed_in_app().await;
    let id = upload_ok(&app, "one.md", b"# One\n\nThe quokka alone.\n").await;
    let pages = [
        ("home", app.get("/").await, "1 document."),
        ("results", app.get("/?q=quokka").await, "1 result"),
        (
            "document",
            app.get(&format!("/documents/{id}")).await,
            " · 1 passage",
        ),
        (
            "delete",
            app.get(&format!("/documents/{id}/delete")).await,
            "its 1 passage from",
        ),
    ];
    for (what, resp, want) in &pages {
        let page = Page::parse(&resp.body);
        // Where each page states its count: the results page's count line,
        // the document page's line under its title, anywhere else.
        let said = match *what {
            "results" => page.texts("p.count").join(" "),
            "document" => page.document().map(|d| d.meta).unwrap_or_default(),
            _ => page.text(),
        };
        let holds = if *what == "results" {
            said == *want
        } else {
            said.contains(want)
        };
        assert!(holds, "{what}: {want:?} in {said:?}");
        for slip in ["1 documents", "1 results", "1 passages"] {
            assert!(!resp.body.contains(slip), "{what}: {slip:?}");
        }
    }
    upload_ok(
        &app,
        "two.md",
        b"# Two\n\nA second quokka.\n\n## More\n\nA third quokka.\n",
    )
    .await;
    assert!(app.get("/").await.body.contains("2 documents."));
    assert_eq!(
        Page::parse(&app.get("/?q=quokka").await.body).texts("p.count"),
        ["3 results"]
    );
    // Nothing matched: the page says so in its own words, with no count.
    let none = Page::parse(&app.get("/?q=wombat").await.body);
    assert!(none.text().contains("No passage matched."));
    assert!(none.texts("p.count").is_empty());
}

#[tokio::test]
async fn a_small_word_like_on_is_neither_marked_nor_lifts_a_weak_result() {
    let (_dir, app) = signed_in_app().await;
    upload_ok(
        &app,
        "kettle.md",
        b"# Kettle\n\nThe kettle is by the window.\n",
    )
    .await;
    upload_ok(
        &app,
        "chatter.md",
        b"# Chatter\n\nOn and on, carry on, hold on, on and on: on, on, on.\n",
    )
    .await;
    let resp = app.get(&format!("/?q={}", form_encode("kettle on"))).await;
    assert_eq!(resp.status, StatusCode::OK);
    // Presence: the passage holding the content word is found and marked.
    assert_eq!(result_count(&resp.body), 1, "{}", resp.body);
    assert_eq!(marks(&resp.body), ["kettle"]);
    assert!(
        !resp.body.contains("Chatter"),
        "a passage of only 'on' is no result"
    );
}

// ---------------------------------------------------------------------------
// Line endings
// ---------------------------------------------------------------------------

const SECTIONS_LF: &str = "# Expenses policy\n\
Intro line straight under the title.\n\
\n\
## Taxis\n\
Taxis after 22:00 are covered.\n\
Keep the receipt.\n\
\n\
### Airport\n\
\n\
The airport run is capped at forty euro.   \n\
\n\
```text\n\
# not a heading\n\
```\n\
\n\
## Meals\n\
\n\
Meals with clients are covered; lunch alone is not.\n";

/// The title of document `id`, and (trail, ordinal, body) of each of its passages.
fn passages_of(instance: &Instance, id: &str) -> (String, Vec<(Vec<String>, i64, String)>) {
    let (doc, passages) = instance
        .document(OWNER, id)
        .expect("document")
        .expect("live");
    (
        doc.title,
        passages
            .into_iter()
            .map(|p| (p.trail, p.ordinal, p.body))
            .collect(),
    )
}

#[test]
fn crlf_and_lf_files_chunk_identically() {
    let src = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir().expect("tempdir");
    let crlf = SECTIONS_LF.replace('\n', "\r\n");
    assert!(crlf.contains("\r\n") && !SECTIONS_LF.contains('\r'));
    std::fs::write(src.path().join("policy-lf.md"), SECTIONS_LF).expect("write");
    std::fs::write(src.path().join("policy-crlf.md"), &crlf).expect("write");

    let mut instance = wake_instance(data.path(), &Dek::generate());
    let report = memoria::import(&mut instance, &[src.path().to_path_buf()]).expect("import");
    assert_eq!(report.refused(), 0);
    let ids: Vec<String> = report
        .files
        .iter()
        .map(|f| f.document_id.clone().expect("ingested"))
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "two names are two documents");

    let (lf_title, lf) = passages_of(&instance, &ids[1]);
    let (crlf_title, crlf_passages) = passages_of(&instance, &ids[0]);
    assert!(lf.len() > 1, "presence: several passages to compare");
    assert!(
        lf.iter().any(|(trail, _, _)| trail.len() > 1),
        "nested trails"
    );
    assert_eq!(crlf_passages, lf);
    assert_eq!(crlf_title, lf_title);
    assert_eq!(lf_title, "Expenses policy");
    for (trail, _, body) in &crlf_passages {
        assert!(!body.contains('\r'), "{body:?}");
        assert!(trail.iter().all(|t| !t.contains('\r')), "{trail:?}");
    }
}

#[tokio::test]
async fn crlf_and_lf_uploads_chunk_identically() {
    let (_dir, app) = signed_in_app().await;
    let lf = upload_ok(&app, "lf.md", SECTIONS_LF.as_bytes()).await;
    let crlf = upload_ok(
        &app,
        "crlf.md",
        SECTIONS_LF.replace('\n', "\r\n").as_bytes(),
    )
    .await;
    let instance = app.state().instance();
    let guard = instance.lock().expect("instance lock");
    let lf = passages_of(&guard, &lf);
    assert!(lf.1.len() > 1);
    assert_eq!(passages_of(&guard, &crlf), lf);
}

#[test]
fn a_lone_cr_file_is_titled_and_chunked_like_its_lf_twin() {
    let src = tempfile::tempdir().expect("tempdir");
    let data = tempfile::tempdir().expect("tempdir");
    std::fs::write(src.path().join("a-lf.md"), SECTIONS_LF).expect("write");
    std::fs::write(src.path().join("b-cr.md"), SECTIONS_LF.replace('\n', "\r")).expect("write");
    let mut instance = wake_instance(data.path(), &Dek::generate());
    let report = memoria::import(&mut instance, &[src.path().to_path_buf()]).expect("import");
    let ids: Vec<String> = report
        .files
        .iter()
        .map(|f| f.document_id.clone().expect("ingested"))
        .collect();
    let (lf_title, lf) = passages_of(&instance, &ids[0]);
    let (cr_title, cr) = passages_of(&instance, &ids[1]);
    assert!(lf.len() > 1);
    assert_eq!(cr, lf, "passages");
    assert_eq!(cr_title, lf_title, "title");
}

// ---------------------------------------------------------------------------
// CSRF, admission and sessions
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_delete_without_csrf_is_403_and_with_it_removes_the_document_everywhere() {
    let (_dir, app) = signed_in_app().await;
    let id = upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    let before = store_state(&app);
    let found = app.get("/?q=descale").await;
    assert_eq!(
        result_count(&found.body),
        1,
        "presence: the document is found"
    );

    let wrong = format!("{}x", app.csrf().expect("signed in"));
    for (what, token, origin) in [
        ("no token", None, None),
        ("a wrong token", Some(wrong.as_str()), None),
        ("another origin", app.csrf(), Some("http://evil.example")),
        (
            "a look-alike origin",
            app.csrf(),
            Some("http://memoria.test.evil.example"),
        ),
        ("an opaque origin", app.csrf(), Some("null")),
    ] {
        let resp = post_delete(&app, &id, token, origin).await;
        assert_eq!(resp.status, StatusCode::FORBIDDEN, "{what}");
        assert_footer(what, &resp);
        assert_eq!(store_state(&app), before, "{what}");
        assert_eq!(
            app.get(&format!("/documents/{id}")).await.status,
            StatusCode::OK
        );
        assert_eq!(
            result_count(&app.get("/?q=descale").await.body),
            1,
            "{what}"
        );
    }

    let same_origin = format!("http://{HOST}");
    let resp = post_delete(&app, &id, app.csrf(), Some(&same_origin)).await;
    assert_eq!(resp.status, StatusCode::SEE_OTHER, "{}", resp.body);
    assert_eq!(resp.location(), Some("/?deleted=1"));
    let after = store_state(&app);
    assert!(
        after.tombstone_seq > before.tombstone_seq,
        "a tombstone is written"
    );
    assert!(
        after.generation > before.generation,
        "a superseding snapshot is written (§7.4)"
    );
    assert_eq!(after.documents, 0);
    assert_eq!(after.chunks, 0);

    let home = app.get("/?deleted=1").await;
    assert!(home.body.contains("The document was deleted."));
    let search = app.get("/?q=descale").await;
    assert_eq!(result_count(&search.body), 0);
    assert!(search.body.contains("No passage matched."));
    for uri in [
        format!("/documents/{id}"),
        format!("/documents/{id}/delete"),
    ] {
        assert_eq!(app.get(&uri).await.status, StatusCode::NOT_FOUND, "{uri}");
    }
    let again = post_delete(&app, &id, app.csrf(), None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND, "deleting twice");
    assert_footer("second delete", &again);
    assert_eq!(store_state(&app), after);
}

#[tokio::test]
async fn a_used_sign_in_link_cannot_be_used_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    let url = app.sign_in(OWNER).await;
    let path = url
        .strip_prefix(&format!("http://{HOST}"))
        .expect("base url");
    app.sign_out_locally();
    let resp = app.get(path).await;
    assert_eq!(resp.status, StatusCode::BAD_REQUEST);
    assert_footer("reused link", &resp);
    assert!(resp.headers.get(header::SET_COOKIE).is_none());
    assert!(refusal(&resp.body).is_some_and(|s| s.contains("not valid")));
    assert_eq!(app.get("/").await.status, StatusCode::UNAUTHORIZED);
}

/// The path of the link delivered by `deliver`, which must deliver exactly one.
fn deliver_one(app: &TestApp, deliver: impl FnOnce()) -> String {
    let before = app.delivered_links().len();
    deliver();
    let links = app.delivered_links();
    assert_eq!(links.len(), before + 1, "one link delivered");
    let (_, url) = links.last().expect("a link").clone();
    url.strip_prefix(&format!("http://{HOST}"))
        .expect("base url")
        .to_string()
}

#[tokio::test]
async fn a_sign_in_link_expires_after_its_time_to_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(HandClock(AtomicI64::new(T0_UNIX_S)));
    let app =
        TestApp::with_clock(dir.path(), &Dek::generate(), OWNER, clock.clone()).expect("wake");
    let owner = {
        let instance = app.state().instance();
        let guard = instance.lock().expect("instance lock");
        guard.admit(OWNER).expect("owner")
    };

    // Presence: a link followed one second before it expires signs in.
    let fresh = deliver_one(&app, || app.state().deliver_sign_in_link(&owner));
    clock.set(T0_UNIX_S + SIGN_IN_LINK_TTL_S - 1);
    let resp = app.get(&fresh).await;
    assert_eq!(resp.status, StatusCode::SEE_OTHER);
    assert!(resp.headers.get(header::SET_COOKIE).is_some());

    let t1 = T0_UNIX_S + 10_000;
    clock.set(t1);
    let stale = deliver_one(&app, || app.state().deliver_sign_in_link(&owner));
    clock.set(t1 + SIGN_IN_LINK_TTL_S);
    let resp = app.get(&stale).await;
    assert_eq!(resp.status, StatusCode::BAD_REQUEST);
    assert_footer("expired link", &resp);
    assert!(resp.headers.get(header::SET_COOKIE).is_none());
}

#[tokio::test]
async fn a_session_ends_after_its_time_to_live() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clock = Arc::new(HandClock(AtomicI64::new(T0_UNIX_S)));
    let mut app =
        TestApp::with_clock(dir.path(), &Dek::generate(), OWNER, clock.clone()).expect("wake");
    app.sign_in(OWNER).await;
    clock.set(T0_UNIX_S + SESSION_TTL_S - 1);
    assert_eq!(app.get("/").await.status, StatusCode::OK);
    clock.set(T0_UNIX_S + SESSION_TTL_S);
    let resp = app.get("/").await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
    assert_footer("expired session", &resp);
    let resp = app.upload("x.md", b"# X\n\nwords", None).await;
    assert_eq!(
        resp.status,
        StatusCode::UNAUTHORIZED,
        "an expired session uploads nothing"
    );
}

#[tokio::test]
async fn a_link_minted_for_someone_not_on_the_owners_list_never_yields_a_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    let owner = {
        let instance = app.state().instance();
        let guard = instance.lock().expect("instance lock");
        guard.admit(OWNER).expect("owner")
    };
    let outsider = Admission::parse("eve@example.org").expect("list").owners()[0].clone();

    // Presence: the same route signs an owner in.
    let path = deliver_one(&app, || app.state().deliver_sign_in_link(&owner));
    let resp = app.get(&path).await;
    assert_eq!(resp.status, StatusCode::SEE_OTHER);
    assert!(resp.headers.get(header::SET_COOKIE).is_some());

    let path = deliver_one(&app, || app.state().deliver_sign_in_link(&outsider));
    let resp = app.get(&path).await;
    assert_eq!(
        resp.status,
        StatusCode::FORBIDDEN,
        "not admitted at verification"
    );
    assert_footer("outsider link", &resp);
    assert!(resp.headers.get(header::SET_COOKIE).is_none());
}

#[tokio::test]
async fn the_sign_in_form_sends_an_owner_a_link_and_a_stranger_nothing_on_the_same_page() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    let form = app.get("/signin").await;
    assert_eq!(form.status, StatusCode::OK);
    assert_footer("sign-in form", &form);
    assert!(
        Page::parse(&form.body)
            .forms()
            .iter()
            .any(|f| f.method == "post"
                && f.action == "/auth/begin"
                && f.input_type("address").is_some())
            && Page::parse(&form.body).scripts().is_empty(),
        "a scriptless form posting one address to /auth/begin"
    );

    let owner = app.begin_sign_in(" Ana@Example.org ").await;
    assert_eq!(owner.status, StatusCode::OK);
    assert_footer("link asked", &owner);
    let links = app.delivered_links();
    assert_eq!(links.len(), 1, "one link for the owner");
    assert_eq!(links[0].0, OWNER);
    let mut browser = app.beside();
    let followed = browser.follow_sign_in_link(&links[0].1).await;
    assert_eq!(followed.status, StatusCode::SEE_OTHER, "the link signs in");
    assert_eq!(browser.get("/").await.status, StatusCode::OK);

    // Following a link delivers the next one (for another browser).
    let delivered = app.delivered_links().len();
    let stranger = app.begin_sign_in("eve@example.org").await;
    assert_eq!(stranger.status, StatusCode::OK);
    assert_eq!(stranger.body, owner.body, "the same page, owner or not");
    assert_eq!(
        app.delivered_links().len(),
        delivered,
        "no link for a stranger"
    );
}

#[tokio::test]
async fn the_sign_in_form_refuses_an_empty_or_over_long_address_and_another_sites_post() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    for address in ["", "   ", &format!("{}@example.org", "a".repeat(300))] {
        let resp = app.begin_sign_in(address).await;
        assert_eq!(
            resp.status,
            StatusCode::BAD_REQUEST,
            "{} bytes",
            address.len()
        );
        assert_footer("refused address", &resp);
    }
    let resp = app
        .send(
            Request::post("/auth/begin")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ORIGIN, "http://evil.example")
                .body(Body::from(format!("address={}", form_encode(OWNER))))
                .expect("valid request"),
        )
        .await;
    assert_eq!(resp.status, StatusCode::FORBIDDEN, "a cross-origin post");
    assert_footer("cross-origin sign-in", &resp);
    assert!(app.delivered_links().is_empty(), "no link was sent");
}

#[tokio::test]
async fn an_owner_removed_from_the_owners_file_is_refused_at_the_link_and_in_the_session() {
    let dir = tempfile::tempdir().expect("tempdir");
    let owners = dir.path().join("owners");
    std::fs::write(&owners, format!("{OWNER}\nbea@example.org\n")).expect("owners file");
    let admission = Admission::file(&owners).expect("a readable owners file");
    let mut app = TestApp::with_admission(
        &dir.path().join("data"),
        &Dek::generate(),
        admission,
        Arc::new(FixedClock(T0_UNIX_S)),
    )
    .expect("wake");
    app.sign_in(OWNER).await;
    app.begin_sign_in(OWNER).await;
    let (_, link) = app.delivered_links().pop().expect("a link");
    assert_eq!(app.get("/").await.status, StatusCode::OK, "presence");

    std::fs::write(&owners, "bea@example.org\n").expect("owners file");
    assert_eq!(app.get("/").await.status, StatusCode::UNAUTHORIZED);
    let mut browser = app.beside();
    let refused = browser.follow_sign_in_link(&link).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_footer("removed owner's link", &refused);
    assert!(refused.headers.get(header::SET_COOKIE).is_none());

    std::fs::remove_file(&owners).expect("remove");
    app.begin_sign_in("bea@example.org").await;
    assert_eq!(
        app.delivered_links()
            .iter()
            .filter(|(o, _)| o == "bea@example.org")
            .count(),
        0,
        "an owners file that cannot be read admits nobody"
    );
    std::fs::write(&owners, format!("{OWNER}\n")).expect("owners file");
    assert_eq!(app.get("/").await.status, StatusCode::OK, "readable again");
}

#[tokio::test]
async fn a_forged_or_missing_token_or_cookie_gets_no_session() {
    let (_dir, app) = signed_in_app().await;
    assert_eq!(
        app.get("/").await.status,
        StatusCode::OK,
        "presence: signed in"
    );
    for uri in [
        "/auth/login",
        "/auth/login?token=",
        "/auth/login?token=forged",
    ] {
        let resp = app.get(uri).await;
        assert_eq!(resp.status, StatusCode::BAD_REQUEST, "{uri}");
        assert_footer(uri, &resp);
        assert!(resp.headers.get(header::SET_COOKIE).is_none(), "{uri}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let stranger = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    let resp = stranger
        .send(
            Request::get("/")
                .header(header::COOKIE, "memoria_session=forged")
                .body(Body::empty())
                .expect("valid request"),
        )
        .await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
    assert_footer("forged cookie", &resp);
}

#[tokio::test]
async fn signing_out_ends_the_session_for_the_cookie_that_held_it() {
    let (_dir, app) = signed_in_app().await;
    assert_eq!(app.get("/").await.status, StatusCode::OK);
    let csrf = app.csrf().expect("signed in").to_string();
    let refused = app
        .send(
            Request::post("/auth/logout")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ORIGIN, "http://evil.example")
                .body(Body::from(format!("csrf={csrf}")))
                .expect("valid request"),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::FORBIDDEN,
        "a cross-origin sign-out"
    );
    assert_eq!(app.get("/").await.status, StatusCode::OK);

    let resp = app.post_form("/auth/logout", &[("csrf", &csrf)]).await;
    assert_eq!(resp.status, StatusCode::OK);
    assert_footer("signed out", &resp);
    // The test client still sends the old cookie: the server must refuse it.
    let resp = app.get("/").await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
}

// ---------------------------------------------------------------------------
// Pagination
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_broad_query_pages_by_twenty_and_a_page_past_the_end_is_empty_without_error() {
    let (_dir, app) = signed_in_app().await;
    seed_corpus(&app);

    let first = app.get("/?q=the").await;
    assert_eq!(first.status, StatusCode::OK);
    assert_eq!(result_count(&first.body), 20);
    assert!(first.body.contains("Next ›"), "{}", first.body);
    assert!(first.body.contains("/?q=the&amp;page=2"));
    let start = |body: &str| {
        Page::parse(body).tags("ol[start]").first().and_then(|t| {
            t.attrs
                .iter()
                .find(|(k, _)| k == "start")
                .map(|(_, v)| v.clone())
        })
    };
    assert_eq!(start(&first.body).as_deref(), Some("1"));
    assert!(!first.body.contains("‹ Previous"));

    for route in ["/", "/search"] {
        let second = app.get(&format!("{route}?q=the&page=2")).await;
        assert_eq!(second.status, StatusCode::OK);
        assert_eq!(
            start(&second.body).as_deref(),
            Some("21"),
            "{route}: ranks start at 21"
        );
        assert!(result_count(&second.body) > 0);
        assert!(second.body.contains("‹ Previous"));
        let page_one = result_links(&first.body);
        for link in result_links(&second.body) {
            assert!(
                !page_one.contains(&link),
                "{route}: {link} is on both pages"
            );
        }
    }

    for page in ["999", "51", "4294967295"] {
        for route in ["/", "/search"] {
            let uri = format!("{route}?q=the&page={page}");
            let resp = app.get(&uri).await;
            assert_eq!(resp.status, StatusCode::OK, "{uri}");
            assert_footer(&uri, &resp);
            assert_eq!(result_count(&resp.body), 0, "{uri}");
            assert!(refusal(&resp.body).is_none(), "{uri}");
            assert!(!resp.body.contains("Next ›"), "{uri}");
        }
    }

    for page in ["0", "-1", "abc", ""] {
        let resp = app.get(&format!("/?q=the&page={page}")).await;
        assert_eq!(resp.status, StatusCode::OK, "page={page}");
        assert_eq!(
            result_links(&resp.body),
            result_links(&first.body),
            "page={page} is page 1"
        );
    }
}

/// Stores `n` documents titled `Note <i>k</i> & co` (markup in the title),
/// then a snapshot, so the home page reads on a read handle.
fn store_notes(app: &TestApp, n: usize) {
    let instance = app.state().instance();
    let mut guard = instance.lock().expect("instance lock");
    for k in 1..=n {
        memoria::ingest_bytes(
            &mut guard,
            &format!("upload:note-{k}.md"),
            &format!("note-{k}.md"),
            format!("# Note <i>{k}</i> & co\n\nThe kettle is descaled on day {k}.").as_bytes(),
            None,
        )
        .expect("ingest");
    }
    guard.write_snapshot().expect("snapshot");
}

/// The home page's list as a reader sees it: the documents listed, and the
/// hrefs of its "‹ Previous" and "Next ›" links.
fn home_list(body: &str) -> (Vec<String>, Option<String>, Option<String>) {
    let page = Page::parse(body);
    let listed = page.texts("ul.documents > li > a");
    let link = |text: &str| {
        page.links("nav.documents-pages a")
            .into_iter()
            .find(|l| l.text == text)
            .map(|l| l.href)
    };
    (listed, link("‹ Previous"), link("Next ›"))
}

#[tokio::test]
async fn the_home_page_lists_one_page_of_documents_with_the_whole_count_and_links_to_the_pages_beside_it()
 {
    let (_dir, app) = signed_in_app().await;
    let per = memoria::HOME_DOCUMENTS_PER_PAGE;
    store_notes(&app, 2 * per + 3);
    // (uri, documents listed, previous page's link, next page's link)
    let table: &[(&str, usize, Option<&str>, Option<&str>)] = &[
        ("/", per, None, Some("/?docs=2#documents")),
        ("/?docs=1", per, None, Some("/?docs=2#documents")),
        (
            "/?docs=2",
            per,
            Some("/?docs=1#documents"),
            Some("/?docs=3#documents"),
        ),
        ("/?docs=3", 3, Some("/?docs=2#documents"), None),
        ("/?docs=0", per, None, Some("/?docs=2#documents")),
        ("/?docs=abc", per, None, Some("/?docs=2#documents")),
        // The search box's query with no word (issue 31): its line, and
        // the home page's first page under it.
        (
            "/?q=%21%21%21+%3F%3F%3F",
            per,
            None,
            Some("/?docs=2#documents"),
        ),
    ];
    let mut seen: Vec<String> = Vec::new();
    for &(uri, listed, previous, next) in table {
        let reads = app.state().shared_instance().reads();
        let resp = app.get(uri).await;
        assert_eq!(resp.status, StatusCode::OK, "{uri}");
        if !uri.contains("q=") {
            assert_eq!(
                app.state().shared_instance().reads(),
                reads + 1,
                "{uri}: the list was read on a read handle, never under the instance lock"
            );
        }
        assert_footer(uri, &resp);
        let (titles, prev, nxt) = home_list(&resp.body);
        assert_eq!(titles.len(), listed, "{uri}");
        assert_eq!(prev.as_deref(), previous, "{uri}");
        assert_eq!(nxt.as_deref(), next, "{uri}");
        assert!(
            resp.body.contains(&format!("{} documents.", 2 * per + 3)),
            "{uri}: the whole count"
        );
        // Titles are escaped: the markup in them is text.
        assert!(resp.body.contains("Note &lt;i&gt;"), "{uri}");
        assert!(!resp.body.contains("<i>"), "{uri}");
        if matches!(uri, "/?docs=1" | "/?docs=2" | "/?docs=3") {
            seen.extend(titles);
        }
    }
    let nothing = app.get("/?q=%21%21%21+%3F%3F%3F").await;
    assert!(
        nothing
            .body
            .contains("Your search holds no words to look for, so nothing was searched."),
        "{}",
        nothing.body
    );
    // Across its pages the list holds every document once.
    assert_eq!(seen.len(), 2 * per + 3);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 2 * per + 3, "no document on two pages");

    // A page past the last says so, with the way back; it is no error.
    for uri in ["/?docs=4", "/?docs=4294967295"] {
        let resp = app.get(uri).await;
        assert_eq!(resp.status, StatusCode::OK, "{uri}");
        assert!(refusal(&resp.body).is_none(), "{uri}");
        let (titles, prev, nxt) = home_list(&resp.body);
        assert!(
            titles.is_empty() && prev.is_none() && nxt.is_none(),
            "{uri}"
        );
        let said = Page::parse(&resp.body).texts("p.notice");
        assert!(
            said.iter()
                .any(|t| t.starts_with("There is no page ") && t.ends_with("it has 3 pages.")),
            "{uri}: {said:?}"
        );
        assert_eq!(
            Page::parse(&resp.body).hrefs("nav.documents-pages a"),
            ["/?docs=1#documents"],
            "{uri}"
        );
    }
}

#[tokio::test]
async fn a_home_page_that_fits_on_one_page_has_no_page_links() {
    let (_dir, app) = signed_in_app().await;
    store_notes(&app, 2);
    let resp = app.get("/").await;
    let (titles, prev, nxt) = home_list(&resp.body);
    assert_eq!(titles.len(), 2, "presence: {}", resp.body);
    assert!(prev.is_none() && nxt.is_none());
    assert!(resp.body.contains("2 documents."));
    assert!(!resp.body.contains("documents-pages"), "{}", resp.body);
}

#[tokio::test]
async fn an_upload_far_over_the_body_limit_is_413_and_a_malformed_form_is_400() {
    let (_dir, app) = signed_in_app().await;
    let before = store_state(&app);
    // Past the request-body limit (file cap plus multipart slack): refused while reading the form.
    let huge = vec![b'a'; 2 * UPLOAD_BYTES_MAX];
    let resp = app.upload("huge.md", &huge, None).await;
    assert_eq!(resp.status, StatusCode::PAYLOAD_TOO_LARGE, "a 2 MiB body");
    assert_footer("a 2 MiB body", &resp);
    // A multipart body that ends mid-part: unreadable, not too large.
    let req = Request::post("/documents")
        .header("content-type", "multipart/form-data; boundary=b0undary")
        .body(Body::from("--b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.md\"\r\n\r\nunterminated"))
        .expect("request");
    let resp = app.send(req).await;
    assert_eq!(
        resp.status,
        StatusCode::BAD_REQUEST,
        "a truncated multipart body"
    );
    assert_footer("a truncated multipart body", &resp);
    assert_eq!(store_state(&app), before, "nothing changed");
}

#[tokio::test]
async fn serve_delivers_one_sign_in_link_to_every_owner() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = TestApp::new(
        dir.path(),
        &Dek::generate(),
        "ana@example.org, bo@example.org",
    )
    .expect("app");
    assert!(
        app.delivered_links().is_empty(),
        "nothing delivered before asking"
    );
    app.state().deliver_sign_in_links();
    let mut owners: Vec<String> = app.delivered_links().into_iter().map(|(o, _)| o).collect();
    owners.sort();
    assert_eq!(owners, vec!["ana@example.org", "bo@example.org"]);
}

// ---------------------------------------------------------------------------
// Briefs (`GET /brief`)
// ---------------------------------------------------------------------------

/// An app with the kitchen notes uploaded and a project `ops` holding a
/// runbook, signed in as [`OWNER`]; the kitchen's document id.
async fn brief_app() -> (TempDir, TestApp, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let scopes = memoria::brief::Scopes::parse("ops=ops", None).expect("scopes");
    let mut app = TestApp::new(dir.path(), &Dek::generate(), OWNER)
        .expect("wake")
        .with_scopes(scopes);
    app.sign_in(OWNER).await;
    let id = upload_ok(&app, "kitchen.md", KITCHEN_MD).await;
    {
        let instance = app.state().instance();
        let mut guard = instance.lock().expect("instance lock");
        guard
            .ingest(&NewDocument {
                source_key: "import:ops/deploys.md".into(),
                title: "Deploys".into(),
                path: "ops/deploys.md".into(),
                body: "# Deploys\n\nRoll back a failed deploy with the previous release tag.\n"
                    .into(),
                date: None,
            })
            .expect("ingest");
    }
    (dir, app, id)
}

/// The page's brief, `section#brief`, read as a page of its own.
fn brief_region(body: &str) -> Option<Page> {
    Page::parse(body).region("section#brief")
}

#[tokio::test]
async fn the_brief_page_without_a_task_is_a_get_form_naming_every_scope() {
    let (_dir, app, _) = brief_app().await;
    let resp = app.get("/brief").await;
    assert_eq!(resp.status, StatusCode::OK);
    assert_footer("the brief form", &resp);
    let b = &resp.body;
    let page = Page::parse(b);
    let forms = page.forms();
    let ask = forms
        .iter()
        .find(|f| f.action == "/brief")
        .unwrap_or_else(|| panic!("a form asking for a brief: {forms:?}"));
    assert_eq!(ask.method, "get", "{ask:?}");
    for field in ["task", "scope", "team", "budget"] {
        assert!(ask.input_type(field).is_some(), "the form has {field}");
    }
    assert_eq!(ask.value("scope"), Some("team"), "the team is chosen");
    // Each scope offered, as (value, the words a person picks).
    let options = "form select[name=\"scope\"] option";
    let values = page.tags(options).into_iter().map(|t| {
        t.attrs
            .into_iter()
            .find(|(k, _)| k == "value")
            .map(|(_, v)| v)
            .unwrap_or_default()
    });
    let scopes: Vec<(String, String)> = values.zip(page.texts(options)).collect();
    let scopes: Vec<(&str, &str)> = scopes
        .iter()
        .map(|(v, l)| (v.as_str(), l.as_str()))
        .collect();
    assert!(
        scopes.contains(&("team", "the team")) && scopes.contains(&("ops", "project ops")),
        "{scopes:?}"
    );
    assert!(
        !scopes.iter().any(|(v, _)| *v == "organisation"),
        "no organisation is configured: {scopes:?}"
    );
    assert!(brief_region(b).is_none(), "no brief without a task");
    let home = app.get("/").await;
    assert!(
        Page::parse(&home.body)
            .hrefs("a")
            .iter()
            .any(|h| h == "/brief"),
        "the home page links to it"
    );
}

#[tokio::test]
async fn a_brief_over_an_uploaded_document_is_resolved_first_with_its_excerpt_linked_to_the_passage()
 {
    let (_dir, app, id) = brief_app().await;
    let resp = app
        .get("/brief?task=descale+the+coffee+machine&scope=team")
        .await;
    assert_eq!(resp.status, StatusCode::OK, "{}", resp.body);
    assert_footer("a brief", &resp);
    let region =
        brief_region(&resp.body).unwrap_or_else(|| panic!("the page holds a brief: {}", resp.body));
    let text = region.text();
    let shape = region.shape();
    assert_eq!(
        shape
            .iter()
            .skip_while(|e| !e.starts_with("section.brief"))
            .nth(1)
            .map(String::as_str),
        Some("p.status"),
        "the status comes first: {shape:?}"
    );
    assert_eq!(region.texts("p.status"), ["resolved"], "{text}");
    let links: Vec<(String, String)> = region
        .links("a")
        .into_iter()
        .map(|l| (l.href, l.text))
        .collect();
    let link = |href: String, t: &str| (href, t.to_string());
    assert!(
        links.contains(&link(format!("/documents/{id}"), "Kitchen")),
        "{links:?}"
    );
    assert!(
        region
            .texts("blockquote")
            .iter()
            .any(|q| q == "Descale the coffee machine monthly with the citric acid sachets."),
        "the excerpt is quoted whole: {text}"
    );
    assert!(
        links.contains(&link(format!("/documents/{id}#p1"), "Kitchen"))
            && text.contains("Kitchen › Coffee machine · passage 1"),
        "the excerpt links to its passage: {links:?} {text}"
    );
    assert!(
        region
            .texts("pre.text")
            .iter()
            .any(|t| t.starts_with("resolved\n")),
        "the text form is on the page too: {text}"
    );
    // The project's runbook is not the team's: it is not read from `team`.
    assert!(!text.contains("Deploys"), "{text}");
    let ops = app
        .get("/brief?task=roll+back+a+failed+deploy&scope=ops")
        .await;
    let region = brief_region(&ops.body).expect("a brief");
    assert!(
        region.texts("p.status") == ["resolved"] && region.text().contains("Deploys"),
        "{}",
        region.text()
    );
    let kept = Page::parse(&ops.body).forms();
    assert!(
        kept.iter().any(|f| f.value("scope") == Some("ops")),
        "the form keeps the scope: {kept:?}"
    );
}

#[tokio::test]
async fn a_brief_whose_task_is_a_word_of_an_uploads_title_alone_resolves_that_upload() {
    let (_dir, app, _) = brief_app().await;
    let id = upload_ok(
        &app,
        "rota.md",
        b"# Rota qxrota\n\nThe rota notes, uploaded.\n",
    )
    .await;
    // Presence: the search page finds it by the title's word.
    let page = app.get("/?q=qxrota").await;
    assert_eq!(
        result_links(&page.body),
        [format!("{id}#p1")],
        "the search page finds the upload by its title"
    );
    let resp = app.get("/brief?task=qxrota&scope=team").await;
    let region = brief_region(&resp.body).expect("a brief");
    let text = region.text();
    let titled = region
        .links("a")
        .iter()
        .any(|l| l.href == format!("/documents/{id}") && l.text == "Rota qxrota");
    assert!(
        region.texts("p.status") == ["resolved"]
            && titled
            && region.texts("blockquote.description") == ["The rota notes, uploaded."],
        "the brief resolves the upload and quotes its lead as its description: {text}"
    );
    assert!(!text.contains("matched the task"), "{text}");
}

#[tokio::test]
async fn bad_brief_input_is_a_400_refusal_with_the_footer_and_never_a_brief() {
    let (_dir, app, _) = brief_app().await;
    let long = "a".repeat(QUERY_BYTES_MAX + 1);
    let many: Vec<String> = (0..=QUERY_WORDS_MAX).map(|i| format!("w{i}")).collect();
    let cases: Vec<(String, &str)> = vec![
        (
            "/brief?task=&scope=team".into(),
            "the task holds no word to read for",
        ),
        (
            "/brief?task=%3F%21&scope=team".into(),
            "the task holds no word to read for",
        ),
        (
            format!("/brief?task={long}&scope=team"),
            "a brief reads at most 1024 bytes",
        ),
        (
            format!("/brief?task={}&scope=team", many.join("+")),
            "different words; a brief reads at most 64",
        ),
        (
            "/brief?task=coffee&scope=team&budget=0".into(),
            "a brief's budget is 1 to 16000 characters",
        ),
        (
            "/brief?task=coffee&scope=team&budget=16001".into(),
            "a brief's budget is 1 to 16000 characters",
        ),
        (
            "/brief?task=coffee&scope=team&budget=lots".into(),
            "the budget is a whole number of characters, 1 to 16000",
        ),
        (
            "/brief?task=coffee&scope=nowhere".into(),
            "The scopes here are: team, ops.",
        ),
        (
            "/brief?task=coffee&scope=organisation".into(),
            "the scope names no configured project",
        ),
    ];
    for (uri, says) in &cases {
        let resp = app.get(uri).await;
        let short = &uri[..uri.len().min(60)];
        assert_eq!(
            resp.status,
            StatusCode::BAD_REQUEST,
            "{short}: {}",
            resp.body
        );
        assert_footer(short, &resp);
        let why = refusal(&resp.body).unwrap_or_else(|| panic!("{short}: a refusal"));
        assert!(why.starts_with("No brief was built: "), "{short}: {why}");
        assert!(why.contains(says), "{short}: {why}");
        assert!(
            brief_region(&resp.body).is_none(),
            "{short}: no brief beside the refusal"
        );
        assert!(
            resp.body.contains(r#"action="/brief""#),
            "{short}: the form is kept"
        );
    }
}

#[tokio::test]
async fn a_signed_out_brief_request_is_401_and_shows_no_title() {
    let (_dir, mut app, _) = brief_app().await;
    app.sign_out_locally();
    let resp = app
        .get("/brief?task=descale+the+coffee+machine&scope=team")
        .await;
    assert_eq!(resp.status, StatusCode::UNAUTHORIZED);
    assert_footer("signed out", &resp);
    assert!(
        !resp.body.contains("Kitchen") && !resp.body.contains("Descale"),
        "{}",
        resp.body
    );
}
