//! The explorer's document links (issue 26): people open the documents pages linked, on the document page and over MCP's `document` tool, and the owner's sources page; the oracle judges each answer (§4.1, §4.2, §8.1).
//!
//! Drawn from a generator of their own (the seed under another constant),
//! after the rest of the run, the roster's events included, so a seed draws
//! the world, the swarm and the events it drew before, with these slipped
//! between them. Each opening follows, within a few events, an event that
//! names its document: a question by the document's tag (which showed
//! somebody its link, when memoria found it), a revision, deletion,
//! visibility change or partial restore at its sibling, a fault or a
//! whole-log restore there (then one of its items), or an upload or
//! delete of memoria's own document; a change or a fault four times as
//! often as a question, so documents are opened while S2 answers STALE,
//! AHEAD or nothing. The opener is anybody: members,
//! guests, strangers and the person later removed (with the session they
//! held), so links reach people who may not see them.
//!
//! The draw: 4 to 12 openings a run, each within three events of the one
//! that names its document; 30% of them over the MCP `document` tool,
//! called as `memoria mcp` calls it (`McpServer::document_call`), the rest
//! on the document page; and up to twice a run somebody opens the sources
//! page. An opening before any page linked its document opens nothing.
//! `explore-document-opened-by-link.toml` and
//! `explore-sources-names-no-document.toml` write the judgements down, with
//! mutations only the oracle kills.

use std::collections::BTreeMap;

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use crate::scenario::{Event, SiblingDecl, Surface, corpus_tag, owned_tag};

/// Documents opened in one run, inclusive range.
pub const OPENS: std::ops::RangeInclusive<usize> = 4..=12;
/// The most openings of the owner's sources page in one run.
pub const SOURCES_OPENS_MAX: usize = 2;
/// How many events after the one naming it a document may be opened.
const FOLLOW_EVENTS_MAX: usize = 3;
/// The share of openings made over MCP's `document` tool.
const MCP_SHARE: f64 = 0.3;
/// How likely an opening follows a question by its document's tag.
const QUESTION_WEIGHT: u32 = 1;
/// How likely an opening follows a change of its document (a revision,
/// deletion, visibility change, restore, upload or delete) or a fault at
/// its sibling: four times a question's, so links are opened while S2
/// answers STALE, AHEAD or nothing, where a document is withheld loudly.
const CHANGE_WEIGHT: u32 = 4;

/// What an opening names: `(app, item)` of a sibling, or memoria's own `doc`.
type Named = (Option<(String, String)>, Option<String>);

/// Slips openings of documents and of the sources page into `events`
/// (module docs), opened by one of `people`.
pub(super) fn add(seed: u64, siblings: &[SiblingDecl], people: &[String], events: &mut Vec<Event>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x646f_6375_6d65_6e74);
    if people.is_empty() || events.is_empty() {
        return;
    }
    let mut by_tag: BTreeMap<String, Named> = BTreeMap::new();
    for s in siblings {
        for i in 0..s.corpus {
            let item = format!("{}-c{i}", s.app);
            by_tag.insert(corpus_tag(&s.app, i), (Some((s.app.clone(), item)), None));
        }
        for item in &s.items {
            by_tag.insert(
                super::tag(&item.id),
                (Some((s.app.clone(), item.id.clone())), None),
            );
        }
    }
    for e in events.iter() {
        match e {
            Event::Create { app, item, .. } => {
                by_tag.insert(super::tag(item), (Some((app.clone(), item.clone())), None));
            }
            Event::Upload { doc, .. } => {
                by_tag.insert(owned_tag(doc), (None, Some(doc.clone())));
            }
            _ => {}
        }
    }
    // Every sibling's items, for an event that names only its app.
    let mut items_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (sibling, _) in by_tag.values() {
        if let Some((app, item)) = sibling {
            items_of.entry(app.clone()).or_default().push(item.clone());
        }
    }
    // (index, what it names, or only its app, and its weight).
    let named: Vec<(usize, Named, Option<String>, u32)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let sibling = |app: &String, item: &String| (Some((app.clone(), item.clone())), None);
            Some(match e {
                Event::Query { q, .. } => (i, by_tag.get(q.trim())?.clone(), None, QUESTION_WEIGHT),
                Event::Upload { doc, .. } | Event::DeleteUpload { doc, .. } => {
                    (i, (None, Some(doc.clone())), None, CHANGE_WEIGHT)
                }
                Event::Revise { app, item, .. }
                | Event::Delete { app, item, .. }
                | Event::Downgrade { app, item, .. }
                | Event::Upgrade { app, item, .. }
                | Event::PartialRestore { app, item, .. } => {
                    (i, sibling(app, item), None, CHANGE_WEIGHT)
                }
                Event::Fault { app, .. } | Event::WholeRestore { app, .. } => {
                    (i, (None, None), Some(app.clone()), CHANGE_WEIGHT)
                }
                _ => return None,
            })
        })
        .collect();
    let mut inserts: Vec<(usize, Event)> = vec![];
    if !named.is_empty() {
        for _ in 0..rng.gen_range(OPENS) {
            let Ok((i, (sibling, doc), app_only, _)) =
                named.choose_weighted(&mut rng, |(_, _, _, w)| *w).cloned()
            else {
                break;
            };
            // An event that names only its app: one of its items.
            let sibling = match app_only {
                Some(app) => items_of
                    .get(&app)
                    .and_then(|items| items.choose(&mut rng))
                    .map(|item| (app.clone(), item.clone())),
                None => sibling,
            };
            if sibling.is_none() && doc.is_none() {
                continue;
            }
            let at = (i + 1 + rng.gen_range(0..FOLLOW_EVENTS_MAX)).min(events.len());
            let reader = people.choose(&mut rng).cloned().unwrap_or_default();
            let surface = rng.gen_bool(MCP_SHARE).then_some(Surface::Mcp);
            let (app, item) = sibling.map_or((None, None), |(a, i)| (Some(a), Some(i)));
            inserts.push((
                at,
                Event::OpenDocument {
                    at_ms: None,
                    reader,
                    app,
                    item,
                    doc,
                    surface,
                    beside_never_held: false,
                },
            ));
        }
    }
    for _ in 0..rng.gen_range(0..=SOURCES_OPENS_MAX) {
        let at = rng.gen_range(1..=events.len());
        let reader = people.choose(&mut rng).cloned().unwrap_or_default();
        inserts.push((
            at,
            Event::OpenSources {
                at_ms: None,
                reader,
            },
        ));
    }
    // From the last place back, so each place is still the one drawn.
    inserts.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    for (at, e) in inserts {
        events.insert(at, e);
    }
}
