//! The fact box's rig (§8.8, gates 35-37): one memoria instance in the case's scratch directory, AI off, on a hand clock, holding the documents a case gives it, searched as its one owner.
//!
//! The gates assert the struct the page renders from ([`SearchPage`]'s
//! `facts`), not the markup: the boxes come from `Instance::search`, which
//! rules through the same `Candidates::rule` as every surface. The one
//! exception is what the box looks like to a reader (text, and no link but
//! its citations), which only the rendered page can show: [`page_for`]
//! serves it through memoria's web app and reads it with [`Page`].

use std::sync::Arc;

use memoria::facts::FactBox;
use memoria::testkit::{TestApp, form_encode};
use memoria::{Admission, EgressMode, Instance, InstanceConfig, NewDocument, Sealer, SearchPage};

use super::app::APP_T0_S;
use super::clock::HandClock;
use super::page::Page;
use super::support::{block_on, dek};
use crate::{Ctx, Failure};

/// The one owner the rig's instance admits.
pub const FACTS_OWNER: &str = "ana@example.org";

/// An instance holding `docs` as (title, Markdown body) uploads, in a
/// fresh scratch directory of the case's (so one case may build several).
///
/// # Errors
/// A [`Failure`] if memoria does not wake or refuses a document.
pub fn instance_with(ctx: &mut Ctx, docs: &[(&str, &str)]) -> Result<Instance, Failure> {
    use rand::RngCore as _;
    let name = format!("data-{:08x}", ctx.rng().next_u32());
    let mut m = Instance::wake(
        InstanceConfig {
            data_dir: ctx.dir(&name),
            admission: Admission::parse(FACTS_OWNER).expect("one owner"),
            egress: EgressMode::AiOff,
        },
        Sealer::new(&dek(ctx.rng())),
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(|e| Failure::new("memoria wakes", e.to_string()))?;
    for (i, (title, body)) in docs.iter().enumerate() {
        m.ingest(&NewDocument {
            source_key: format!("upload:doc{i}.md"),
            title: (*title).into(),
            path: format!("doc{i}.md"),
            body: (*body).into(),
            date: None,
        })
        .map_err(|e| Failure::new("memoria ingests the document", e.to_string()))?;
    }
    Ok(m)
}

/// The first page for `q`.
///
/// # Errors
/// A [`Failure`] if the search fails.
pub fn search(m: &Instance, q: &str) -> Result<SearchPage, Failure> {
    m.search(FACTS_OWNER, q, 1)
        .map_err(|e| Failure::new("the search runs", e.to_string()))
}

/// The boxes an instance holding `docs` shows for `q`. The presence that
/// makes an empty box mean something comes first: the query must find
/// every document, or the case fails here rather than passing on a page
/// with nothing on it.
///
/// # Errors
/// As [`instance_with`] and [`search`], and a [`Failure`] when a document
/// is not among the results.
pub fn boxes_for(ctx: &mut Ctx, docs: &[(&str, &str)], q: &str) -> Result<Vec<FactBox>, Failure> {
    let m = instance_with(ctx, docs)?;
    let page = search(&m, q)?;
    let titles: std::collections::BTreeSet<&str> =
        page.results.iter().map(|r| r.title.as_str()).collect();
    let missing: Vec<&str> = docs
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| !titles.contains(t))
        .collect();
    if !missing.is_empty() {
        return Err(Failure::new(
            format!("the query {q:?} finds every document (presence)"),
            format!("not found: {missing:?}"),
        ));
    }
    Ok(page.facts)
}

/// A box as its rows' (label, value), for a failure message and a comparison.
pub fn rows(b: &FactBox) -> Vec<(String, String)> {
    b.rows
        .iter()
        .map(|r| (r.label.clone(), r.value.clone()))
        .collect()
}

/// The results page (`GET /?q=`) an instance holding `docs` serves its one
/// owner for `q`, signed in, parsed.
///
/// # Errors
/// As [`instance_with`], and a [`Failure`] when the page is not a 200.
pub fn page_for(ctx: &mut Ctx, docs: &[(&str, &str)], q: &str) -> Result<Page, Failure> {
    let m = instance_with(ctx, docs)?;
    let mut app = TestApp::from_instance(m);
    let resp = block_on(async {
        app.sign_in(FACTS_OWNER).await;
        app.get(&format!("/?q={}", form_encode(q))).await
    });
    let page = crate::rigs::page::of(&resp);
    if page.status() != Some(200) {
        return Err(Failure::new(
            format!("the results page for {q:?} is served"),
            format!("status {:?}", page.status()),
        ));
    }
    Ok(page)
}
