//! The explorer's dense questions (issue 26, gate 10): in every AI-on world, people ask questions only the dense half can answer, some just after a wake, a deletion or a refused input, and `[safety:dense]` judges each page's order by the stub's own vectors (§7, §7.2, §7.4).
//!
//! A dense question is one or two tags of the world's documents (its
//! sibling items, corpus items, new items and memoria's own uploads) and
//! [`DENSE_ONLY_WORD`], which no passage holds: every other passage holds
//! no word of it, so it can reach the page only through the dense half,
//! in the order of its dense rank, which the oracle recomputes
//! (`crate::scenario`'s `dense.rs`). A row ranked by another's vector,
//! scale or sum (a wake that decoded the matrix wrong, a removal that
//! moved a row without its scale) breaks that order where the scores are
//! far enough apart.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing (but the lost revision's pair, which stays
//! the run's end) and only with AI on, so a seed with AI off,
//! or one drawn before, is the run it was: the questions are inserted
//! between the events already drawn, timed with the event before them
//! (`at_ms` none), never right after a `crash` (which lands during the
//! next event) and never in the provider outage or spell that ends some
//! runs. [`ANCHORED_SHARE`] of them follow a wake (a restart, a
//! restore of memoria's data directory), a deletion (an item's or an
//! upload's), the provider answering again, or an upload (the refused
//! one among them); the rest fall anywhere.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use crate::scenario::{DENSE_ONLY_WORD, Event, SiblingDecl, Surface, corpus_tag, owned_tag};

/// How many dense questions an AI-on world asks, inclusive range.
pub const QUESTIONS: std::ops::RangeInclusive<usize> = 8..=14;
/// The share of them asked right after an event that moves the dense
/// matrix (module doc).
pub const ANCHORED_SHARE: f64 = 0.6;

/// Adds dense questions to `events` when `ai` (module doc): asked by
/// `readers` mostly, else by anyone of `everybody`, about the documents
/// of `siblings` and of the events.
pub(super) fn add(
    seed: u64,
    ai: bool,
    siblings: &[SiblingDecl],
    readers: &[String],
    everybody: &[String],
    events: &mut Vec<Event>,
) {
    if !ai || events.is_empty() {
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6465_6e73_655f_7177);
    let mut tags: Vec<String> = siblings
        .iter()
        .flat_map(|x| {
            let items = x
                .items
                .iter()
                .filter_map(|i| i.words.split_whitespace().last().map(str::to_string));
            let corpus = (0..x.corpus).map(|i| corpus_tag(&x.app, i));
            items.chain(corpus).collect::<Vec<_>>()
        })
        .collect();
    for e in events.iter() {
        match e {
            Event::Create { words, .. } => {
                tags.extend(words.split_whitespace().last().map(str::to_string));
            }
            Event::Upload { doc, .. } => tags.push(owned_tag(doc)),
            _ => {}
        }
    }
    tags.sort();
    tags.dedup();
    if tags.is_empty() {
        return;
    }
    // Where a question may go: after event `i`, never after a crash, and
    // before a long provider outage or a rate-limited tail spell that ends
    // the run (`provider.rs`: nothing else happens in it).
    let end = events
        .iter()
        .position(
            |e| matches!(e, Event::Upload { doc, .. } if doc == "upoutage" || doc == "upretry"),
        )
        .map_or(events.len(), |i| i.saturating_sub(1));
    let anchors: Vec<usize> = (0..end)
        .filter(|i| {
            matches!(
                events[*i],
                Event::Restart { .. }
                    | Event::MemoriaRestore { .. }
                    | Event::Delete { .. }
                    | Event::DeleteUpload { .. }
                    | Event::Upload { .. }
                    | Event::Provider { .. }
            ) && !matches!(events.get(*i + 1), Some(Event::Crash { .. }))
        })
        .collect();
    let anywhere: Vec<usize> = (0..end)
        .filter(|i| !matches!(events[*i], Event::Crash { .. }))
        .collect();
    let mut places: Vec<(usize, Event)> = vec![];
    for _ in 0..rng.gen_range(QUESTIONS) {
        let after = if !anchors.is_empty() && rng.gen_bool(ANCHORED_SHARE) {
            anchors.choose(&mut rng).copied()
        } else {
            anywhere.choose(&mut rng).copied()
        }
        .unwrap_or(0);
        let mut words: Vec<String> = (0..rng.gen_range(1..=2))
            .filter_map(|_| tags.choose(&mut rng).cloned())
            .collect();
        words.push(DENSE_ONLY_WORD.to_string());
        words.shuffle(&mut rng);
        let reader = if rng.gen_bool(0.8) {
            readers.choose(&mut rng)
        } else {
            everybody.choose(&mut rng)
        }
        .cloned()
        .unwrap_or_default();
        let surface = match rng.gen_range(0..4) {
            0 => Some(Surface::Json),
            1 => Some(Surface::Mcp),
            _ => None,
        };
        places.push((
            after,
            Event::Query {
                at_ms: None,
                reader,
                q: words.join(" "),
                expect: None,
                surface,
            },
        ));
    }
    // Latest first, so each index still names the event it follows.
    places.sort_by_key(|p| std::cmp::Reverse(p.0));
    for (after, q) in places {
        events.insert(after + 1, q);
    }
}
