//! What the derived-artefact gates share (9, 19; §5.2): a world with AI on against the stub provider answering extractively, Sheets items tagged into a topic, an upload through the page's form, and the artefacts as the page and the store show them.
//!
//! An artefact exists for every document whose title carries a topic tag
//! (`app/artefacts.rs` in the reference): a summary of it, and an overview per tag
//! ("Overview of #tag", the only text holding the word [`OVERVIEW`]), so
//! searching that word finds the overview alone and S2 is asked exactly
//! its roots.

use memoria::artefact::ArtefactRecord;
use memoria_simulator::{Memoria, Rung, SiblingSpec, StubProvider, TraceEvent, World};

use super::page::Page;
use super::sim::check;

/// The word only an overview's title holds: what a gate searches for.
pub const OVERVIEW: &str = "overview";

/// The topic tag a case uses: lower-case letters from its canary.
pub fn tag(canary: &str) -> String {
    format!("t{}", &canary[3..])
}

/// The id of item `i` at Sheets, zero-padded so ids sort as numbers.
pub fn item_id(i: usize) -> String {
    format!("sh-{i:03}")
}

/// Item `i`'s title: tagged into `tag`'s topic.
pub fn title(i: usize, tag: &str) -> String {
    format!("Note {i:03} #{tag}")
}

/// Item `i`'s body: the canary and a marker of its own.
pub fn body(canary: &str, i: usize) -> String {
    format!("The {canary} note number {i} says mk{i}x{canary}.\n")
}

/// A world with Sheets holding `n` items tagged `tag`, the stub provider
/// serving and answering extractively, and memoria with AI on.
pub fn world(seed: u64, canary: &str, n: usize) -> (World, StubProvider) {
    let mut world = World::new(seed, vec![SiblingSpec::own("sheets")]);
    let sheets = world.fake("sheets").clone();
    let tag = tag(canary);
    sheets.model().with(|m| {
        for i in 0..n {
            m.add_item(&item_id(i), Rung::Team, &title(i, &tag), &body(canary, i))
                .expect("a fresh item is accepted");
        }
    });
    let stub = StubProvider::new();
    stub.set_chat_extractive(true);
    world.use_provider(&stub);
    (world, stub)
}

/// Uploads `file` as `name` through the home page's form, as `owner`;
/// returns the stored document's id.
///
/// # Errors
/// If the form is missing or the upload is not stored.
pub async fn upload(
    m: &mut Memoria,
    owner: &str,
    name: &str,
    file: &str,
) -> Result<String, String> {
    let home = crate::rigs::page::of(&m.get(owner, "/").await.response);
    let form = home
        .forms()
        .into_iter()
        .find(|f| f.input_type("file").is_some())
        .ok_or("the home page has an upload form")?;
    let token = form
        .inputs
        .iter()
        .find(|(_, t, v)| t == "hidden" && !v.is_empty())
        .cloned()
        .ok_or("the upload form carries a CSRF token")?;
    let field = form
        .inputs
        .iter()
        .find(|(_, t, _)| t == "file")
        .map(|(n, _, _)| n.clone())
        .unwrap_or_default();
    let (content_type, bytes) = crate::gates::g15_ai_off_floor::multipart(
        &[(&token.0, &token.2)],
        &field,
        name,
        file.as_bytes(),
    );
    let posted = m.post(owner, &form.action, &content_type, bytes).await;
    posted
        .response
        .location()
        .and_then(|l| l.strip_prefix("/documents/"))
        .map(str::to_string)
        .ok_or_else(|| format!("the upload is stored: {}", posted.response.status))
}

/// The artefacts a page shows: (title, the model line).
pub fn shown(page: &Page) -> Vec<(String, String)> {
    page.texts("article.artefact h3")
        .into_iter()
        .zip(page.texts("article.artefact .artefact-model"))
        .collect()
}

/// The overview of `tag` is on `page`, naming `model`.
pub fn overview_shown(page: &Page, tag: &str) -> bool {
    shown(page)
        .iter()
        .any(|(t, _)| t.ends_with(&format!("Overview of #{tag}")))
}

/// The store's record of the artefact stored under `key`, and its id.
pub fn record(m: &Memoria, key: &str) -> Option<(String, ArtefactRecord)> {
    let instance = m.state().instance();
    let guard = instance.lock().ok()?;
    let id = guard.store().artefact_by_key(key).ok()??;
    let record = guard.store().artefact_record(&id).ok()??;
    Some((id, record))
}

/// Every live artefact's id and record.
pub fn records(m: &Memoria) -> Vec<(String, Option<ArtefactRecord>)> {
    let instance = m.state().instance();
    let Ok(guard) = instance.lock() else {
        return vec![];
    };
    guard
        .store()
        .documents()
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.app == memoria::APP_ARTEFACT)
        .map(|d| {
            let r = guard.store().artefact_record(&d.id).ok().flatten();
            (d.id, r)
        })
        .collect()
}

/// The S2 calls in `events` (those after a mark), as (pairs asked: item
/// id and answer), in arrival order.
pub fn s2_calls(events: &[TraceEvent]) -> Vec<Vec<(String, String)>> {
    events
        .iter()
        .filter_map(|e| match &e.detail {
            memoria_simulator::CallDetail::S2 { pairs, .. } => Some(
                pairs
                    .iter()
                    .map(|p| (p.item_id.clone(), p.result.clone()))
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// Searches [`OVERVIEW`] as `owner` and returns the page with the S2
/// calls that search made.
pub async fn search_overview(
    m: &mut Memoria,
    trace: &memoria_simulator::Trace,
    owner: &str,
) -> (Page, Vec<Vec<(String, String)>>) {
    let before = trace.events().len();
    let page = crate::rigs::page::of(&m.search(owner, OVERVIEW).await.response);
    let calls = s2_calls(&trace.events()[before..]);
    (page, calls)
}

/// Requires `page` to show the overview of `tag`, named by `model`.
///
/// # Errors
/// Naming what the page showed.
pub fn requires_overview(page: &Page, tag: &str, who: &str) -> Result<(), String> {
    check(
        overview_shown(page, tag),
        format!("{who}'s page shows the overview of #{tag} (presence)"),
        format!("{:?}; withheld {:?}", shown(page), page.withheld()),
    )?;
    let model = shown(page)
        .into_iter()
        .find(|(t, _)| t.ends_with(&format!("Overview of #{tag}")))
        .map(|(_, m)| m)
        .unwrap_or_default();
    check(
        model.contains(memoria::MODEL_FRONTIER),
        "the overview names the model that wrote it",
        model,
    )
}
