//! The explorer's document links (issue 26): people open the documents pages linked, on the document page and over MCP's `document` tool, and the owner's sources page; the oracle judges each answer (§4.1, §4.2, §8.1).
//!
//! Drawn from a generator of their own (the seed under another constant),
//! after the rest of the run, the roster's events included, so a seed draws
//! the world, the swarm and the events it drew before, with these slipped
//! between them. Each opening follows, within a few events, an event that
//! names its document: a question by the document's tag (which showed
//! somebody its link, when memoria found it), a revision, deletion,
//! visibility change or partial restore at its sibling, or an upload or
//! delete of memoria's own document. The opener is anybody: members,
//! guests, strangers and the person later removed (with the session they
//! held), so links reach people who may not see them.

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
    let named: Vec<(usize, Named)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let n = match e {
                Event::Query { q, .. } => by_tag.get(q.trim())?.clone(),
                Event::Upload { doc, .. } | Event::DeleteUpload { doc, .. } => {
                    (None, Some(doc.clone()))
                }
                Event::Revise { app, item, .. }
                | Event::Delete { app, item, .. }
                | Event::Downgrade { app, item, .. }
                | Event::Upgrade { app, item, .. }
                | Event::PartialRestore { app, item, .. } => {
                    (Some((app.clone(), item.clone())), None)
                }
                _ => return None,
            };
            Some((i, n))
        })
        .collect();
    let mut inserts: Vec<(usize, Event)> = vec![];
    if !named.is_empty() {
        for _ in 0..rng.gen_range(OPENS) {
            let (i, (sibling, doc)) = named.choose(&mut rng).cloned().unwrap_or_default();
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
