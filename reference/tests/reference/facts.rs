//! The fact box through the real search page, on the embedded demo corpus: a labelled, cited box for each kind, narrowing on a contact list, and the box inside the results region (§8.8, §8.1).
//!
//! Every request goes through [`TestApp`], in process. A test that asserts
//! an absence first asserts the presence that makes it meaningful.

use memoria::Dek;
use memoria::testkit::{TestApp, form_encode};
use memoria_page::Page;
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

/// The page's fact box, `section.facts`, read as a page of its own, or
/// `None` when the page has none.
fn fact_box(body: &str) -> Option<Page> {
    Page::parse(body).region("section.facts")
}

/// Each row of the boxes as (its box's heading, label, value, citation).
fn rows(facts: &Page) -> Vec<(String, String, String, String)> {
    facts
        .fact_rows()
        .into_iter()
        .map(|r| {
            let heading = facts
                .texts(&format!("div.fact[data-kind=\"{}\"] h2", r.kind))
                .into_iter()
                .next()
                .unwrap_or_default();
            (heading, r.label, r.value, r.cite)
        })
        .collect()
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
    let facts = fact_box(&body).expect("a fact box");
    let seen = rows(&facts);
    assert_eq!(seen.len(), 1, "{seen:?}");
    let (heading, label, value, _) = &seen[0];
    assert_eq!(
        (heading.as_str(), label.as_str(), value.as_str()),
        ("Phone", "Office phone (reception)", "+353 1 547 7854")
    );
    let narrowed = facts.texts("p.fact-narrowed").join(" ");
    assert!(narrowed.contains("Matched “office”."), "{narrowed}");
    assert!(
        narrowed.contains("other phone numbers are in these results."),
        "{narrowed}"
    );
    // Without the reader's word the contact list is over the cap: no box.
    let plain = search(&app, "phone number").await;
    assert!(
        !Page::parse(&plain).results().is_empty(),
        "the page has results"
    );
    assert!(fact_box(&plain).is_none());
}

#[tokio::test]
async fn the_demo_answers_an_eircode_an_iban_and_a_vat_question_with_a_labelled_cited_box() {
    let (_d, app) = demo_app().await;
    for (q, want) in [
        ("eircode", ("Eircode", "Eircode", "D02 X7K4")),
        (
            "what is our IBAN",
            ("IBAN", "Bank details (IBAN)", "IE29 AIBK 9311 5212 3456 78"),
        ),
        ("our VAT number", ("VAT number", "VAT number", "IE1234567T")),
    ] {
        let body = search(&app, q).await;
        let facts = fact_box(&body).unwrap_or_else(|| panic!("{q}: no box"));
        let seen = rows(&facts);
        let (heading, label, value, cite) = seen.first().unwrap_or_else(|| panic!("{q}: no row"));
        assert_eq!(
            (heading.as_str(), label.as_str(), value.as_str()),
            want,
            "{q}: {seen:?}"
        );
        assert!(cite.contains("The Office › Company details"), "{q}: {cite}");
    }
}

#[tokio::test]
async fn the_box_sits_inside_the_results_region_below_the_notices_and_above_the_list() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "eircode").await;
    let page = Page::parse(&body);
    let region = page.region("section#results").expect("results region");
    assert!(
        region.region("section.facts").is_some(),
        "the box is inside"
    );
    assert_eq!(
        region.precedes("section.facts", "ol"),
        Some(true),
        "the box is above the list"
    );
    let fragment = app.get("/search?q=eircode").await;
    assert!(
        fact_box(&fragment.body).is_some(),
        "the fragment carries the box too"
    );
}

#[tokio::test]
async fn the_only_links_in_the_box_are_its_citations_to_passages() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "accounts email").await;
    let facts = fact_box(&body).expect("box");
    let hrefs = facts.hrefs("[href]");
    // Two addresses in reach (the onboarding page's and the accounts one),
    // two rows, each with exactly one link: its citation.
    let values: Vec<String> = facts.fact_rows().into_iter().map(|r| r.value).collect();
    assert!(
        values.iter().any(|v| v == "accounts@almendra.example"),
        "{values:?}"
    );
    assert_eq!(hrefs.len(), values.len(), "{hrefs:?}");
    for h in &hrefs {
        assert!(
            h.starts_with("/documents/") && h.contains("#p"),
            "{hrefs:?}"
        );
    }
}

#[tokio::test]
async fn a_query_naming_no_kind_renders_no_box_over_the_same_results() {
    let (_d, app) = demo_app().await;
    let body = search(&app, "company details").await;
    assert!(
        Page::parse(&body).text().contains("IE1234567T"),
        "the passage is on the page"
    );
    assert!(fact_box(&body).is_none());
}
