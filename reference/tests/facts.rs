//! The fact box through the real search page, on the embedded demo corpus: a labelled, cited box for each kind, narrowing on a contact list, and the box inside the results region (§8.8, §8.1).
//!
//! Every request goes through [`TestApp`], in process. A test that asserts
//! an absence first asserts the presence that makes it meaningful.

use memoria::Dek;
use memoria::testkit::{TestApp, form_encode};
use tempfile::TempDir;

const OWNER: &str = "ana@example.org";

async fn demo_app() -> (TempDir, TestApp) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut app = TestApp::new(dir.path(), &Dek::generate(), OWNER).expect("wake");
    app.sign_in(OWNER).await;
    {
        let instance = app.state().instance();
        let mut guard = instance.lock().expect("instance lock");
        let report = memoria::demo::seed(&mut guard).expect("seed");
        assert_eq!(report.refused(), 0, "every fixture decodes");
    }
    (dir, app)
}

/// The page's fact section, as its text with whitespace folded, or `None`.
fn fact_section(body: &str) -> Option<String> {
    let start = body.find("<section class=\"facts\"")?;
    let end = start + body[start..].find("</section>")?;
    let inner = &body[start..end];
    let mut text = String::new();
    let mut in_tag = false;
    for c in inner.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                text.push(' ');
            }
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    Some(text.split_whitespace().collect::<Vec<_>>().join(" "))
}

async fn search(app: &TestApp, q: &str) -> String {
    let r = app.get(&format!("/?q={}", form_encode(q))).await;
    assert_eq!(r.status, 200, "{q}");
    r.body
}

#[tokio::test]
async fn the_demo_answers_office_phone_number_with_one_narrowed_labelled_cited_row() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "office phone number").await;
    let facts = fact_section(&body).expect("a fact box");
    assert!(facts.starts_with("Phone Office phone"), "{facts}");
    assert!(facts.contains("+353 1 547 7854"), "{facts}");
    assert!(facts.contains("Matched “office”."), "{facts}");
    assert!(
        facts.contains("other phone numbers are in these results."),
        "{facts}"
    );
    // Without the reader's word the contact list is over the cap: no box.
    let plain = search(&app, "phone number").await;
    assert!(plain.contains("class=\"result\""), "the page has results");
    assert_eq!(fact_section(&plain), None);
}

#[tokio::test]
async fn the_demo_answers_an_eircode_an_iban_and_a_vat_question_with_a_labelled_cited_box() {
    let (_d, app) = demo_app().await;
    for (q, want) in [
        ("eircode", "Eircode Eircode : D02 X7K4"),
        (
            "what is our IBAN",
            "IBAN Bank details (IBAN) : IE29 AIBK 9311 5212 3456 78",
        ),
        ("our VAT number", "VAT number VAT number : IE1234567T"),
    ] {
        let body = search(&app, q).await;
        let facts = fact_section(&body).unwrap_or_else(|| panic!("{q}: no box"));
        assert!(facts.starts_with(want), "{q}: {facts}");
        assert!(
            facts.contains("The Office › Company details"),
            "{q}: {facts}"
        );
    }
}

#[tokio::test]
async fn the_box_sits_inside_the_results_region_below_the_notices_and_above_the_list() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "eircode").await;
    let region = body
        .find("<section id=\"results\"")
        .expect("results region");
    let facts = body.find("<section class=\"facts\"").expect("box");
    let list = body.find("<ol").expect("list");
    assert!(region < facts && facts < list, "{region} {facts} {list}");
    let fragment = app.get("/search?q=eircode").await;
    assert!(
        fact_section(&fragment.body).is_some(),
        "the fragment carries the box too"
    );
}

#[tokio::test]
async fn the_only_links_in_the_box_are_its_citations_to_passages() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "accounts email").await;
    let start = body.find("<section class=\"facts\"").expect("box");
    let end = start + body[start..].find("</section>").expect("end");
    let html = &body[start..end];
    let hrefs: Vec<&str> = html
        .split("href=\"")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap_or(0)])
        .collect();
    // Two addresses in reach (the onboarding page's and the accounts one),
    // two rows, each with exactly one link: its citation.
    assert!(html.contains("accounts@almendra.example"), "{html}");
    assert_eq!(
        hrefs.len(),
        html.matches("class=\"fact-row\"").count(),
        "{html}"
    );
    for h in &hrefs {
        assert!(
            h.starts_with("/documents/") && h.contains("#p"),
            "{hrefs:?}"
        );
    }
    assert!(!html.contains("mailto:"));
}

#[tokio::test]
async fn a_query_naming_no_kind_renders_no_box_over_the_same_results() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "company details").await;
    assert!(body.contains("IE1234567T"), "the passage is on the page");
    assert_eq!(fact_section(&body), None);
}
