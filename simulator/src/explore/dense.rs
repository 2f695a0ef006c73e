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
//!
//! **The crowd** ([`crowd`], `[safety:dense-crowded]`): every AI-on world
//! also ends (before a provider spell that ends it) with a beacon upload
//! of [`BEACON_WORDS`] made-up words whose stub features lean towards a
//! made-up word set W of [`CROWD_WORDS`] words (found by search over the
//! stub's hash, as [`leaning_words`] does), then three crowds, each a long
//! upload of `CROWD_SECTIONS` passages holding W, deleted: one after a
//! backup that held its vectors, memoria then restored from it (the wake
//! must replay the deletion into the loaded dense snapshot); one with no
//! wake after it (the live matrix must drop its rows); and one while a
//! lagging provider ([`PROVIDER_LAG_MS`]) embeds it (the vectors land
//! after the deletion and must be stored nowhere). Two of its events have
//! times of their own, [`CROWD_DRAIN_MS`] apart, so memoria's embedding
//! loop has embedded a crowd before its backup or deletion; every later
//! time moves by as much. The oracle asks W at `expect-converged`.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{
    CROWD_SECTIONS, DENSE_ONLY_WORD, Event, PROVIDER_LAG_MS, ProviderState, SiblingDecl, Surface,
    corpus_tag, dot, kept_vector, letters, owned_tag,
};

/// How many made-up words a crowd's set W holds (module doc).
pub const CROWD_WORDS: usize = 4;
/// How many made-up words the beacon holds, each leaning towards W.
pub const BEACON_WORDS: usize = 5;
/// The least dot product a beacon word's kept stub vector has with W's:
/// two features shared of W's eighteen or so, so five such words and the
/// upload's own four give the beacon about 0.35, well under a crowd
/// passage's 0.6 and well over an unrelated passage's 0.1.
pub const BEACON_LEAN_MIN: f32 = 0.2;
/// The most candidate words searched for the beacon's.
const BEACON_SEARCH_MAX: usize = 26 * 26 * 26;
/// How many suffixes the crowd's made-up words, and the first candidate
/// of the beacon's search, are drawn from: every [`letters`] of one to
/// three letters (`a` to `zzz`, in base 26).
const MADE_UP_SUFFIXES: usize = 26 * 26 * 26;
/// Simulated time between the crowd's timed events, in ms: memoria's
/// embedding loop, woken by the upload, embeds a crowd (one call of the
/// stub, `memoria::EMBED_INPUTS_PER_CALL_MAX` inputs) and writes its
/// snapshot well inside it.
pub const CROWD_DRAIN_MS: u64 = 30_000;
const _: () = assert!(PROVIDER_LAG_MS < CROWD_DRAIN_MS);
const _: () = assert!(CROWD_SECTIONS as usize <= memoria::EMBED_INPUTS_PER_CALL_MAX);

/// `n` words `prefix` + letters whose kept stub vectors each have a dot
/// product of at least [`BEACON_LEAN_MIN`] with `target`'s, searched from
/// `from` on; fewer if [`BEACON_SEARCH_MAX`] candidates hold fewer.
pub fn leaning_words(target: &str, prefix: &str, from: usize, n: usize) -> Vec<String> {
    let t = kept_vector(target);
    (from..from + BEACON_SEARCH_MAX)
        .map(|i| format!("{prefix}{}", letters(i)))
        .filter(|w| dot(&t, &kept_vector(w)) >= BEACON_LEAN_MIN)
        .take(n)
        .collect()
}

/// Adds the crowd (module doc) to an AI-on world's `events` (which do not
/// yet hold `expect-converged`), uploaded and deleted by `owner`.
pub(super) fn crowd(seed: u64, ai: bool, swarm: &mut Swarm, owner: &str, events: &mut Vec<Event>) {
    if !ai {
        return;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6372_6f77_645f_7177);
    let mut w: Vec<String> = vec![];
    while w.len() < CROWD_WORDS {
        let word = format!("qzcw{}", letters(rng.gen_range(0..MADE_UP_SUFFIXES)));
        if !w.contains(&word) {
            w.push(word);
        }
    }
    let w = w.join(" ");
    let beacon = leaning_words(&w, "qzbk", rng.gen_range(0..MADE_UP_SUFFIXES), BEACON_WORDS);
    // Last, after every wake the other drawings add (a wake after a
    // deletion rebuilds the matrix from live chunks, and would hide what
    // is judged), but before a long provider outage or a rate-limited
    // tail that ends the run (`provider.rs`), which stay its end.
    let tail = matches!(
        events.get(events.len().saturating_sub(2)),
        Some(Event::Upload { doc, .. }) if doc == "upretry"
    );
    let at = events
        .iter()
        .position(|e| matches!(e, Event::Upload { doc, .. } if doc == "upoutage"))
        .map_or(
            if tail {
                events.len().saturating_sub(3)
            } else {
                events.len()
            },
            |i| i.saturating_sub(1),
        );
    let t0 = events[..at]
        .iter()
        .filter_map(Event::at_ms)
        .max()
        .unwrap_or(0);
    let upload = |doc: &str, words: &str, sections: Option<u32>| Event::Upload {
        at_ms: None,
        reader: owner.to_string(),
        doc: doc.to_string(),
        words: words.to_string(),
        sections,
    };
    let delete = |doc: &str, at_ms: Option<u64>| Event::DeleteUpload {
        at_ms,
        reader: owner.to_string(),
        doc: doc.to_string(),
    };
    let provider = |state: ProviderState| Event::Provider {
        at_ms: None,
        state,
        retry_after_s: None,
    };
    let block = vec![
        upload("zbeacon", &beacon.join(" "), None),
        upload("zcrowda", &w, Some(CROWD_SECTIONS)),
        Event::MemoriaBackup {
            at_ms: Some(t0 + CROWD_DRAIN_MS),
            name: "crowd".into(),
            whole: false,
        },
        delete("zcrowda", None),
        Event::MemoriaRestore {
            at_ms: None,
            name: "crowd".into(),
        },
        upload("zcrowdb", &w, Some(CROWD_SECTIONS)),
        delete("zcrowdb", Some(t0 + 2 * CROWD_DRAIN_MS)),
        provider(ProviderState::Lagging),
        upload("zcrowdc", &w, Some(CROWD_SECTIONS)),
        delete("zcrowdc", None),
        provider(ProviderState::Answering),
    ];
    for e in &mut events[at..] {
        if let Some(t) = e.at_ms_mut().as_mut() {
            *t += 2 * CROWD_DRAIN_MS;
        }
    }
    events.splice(at..at, block);
    if !swarm.0.iter().any(|(k, _)| *k == FaultKind::Provider) {
        swarm.0.push((FaultKind::Provider, 1));
    }
}

/// How many dense questions an AI-on world asks, inclusive range.
pub const QUESTIONS: std::ops::RangeInclusive<usize> = 8..=14;
/// The share of them asked right after an event that moves the dense
/// matrix (module doc).
pub const ANCHORED_SHARE: f64 = 0.6;
/// The share of them asked by one of the world's readers; the rest by
/// anyone of it, its guests and strangers among them.
pub const READERS_SHARE: f64 = 0.8;

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
        let reader = if rng.gen_bool(READERS_SHARE) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{DENSE_MARGIN, crowd_text};

    #[test]
    fn of_forty_seeds_each_ai_on_world_deletes_three_crowds_beside_a_beacon_that_leans_less_than_they_and_no_ai_off_world_draws_one()
     {
        let mut ai = 0;
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let events = &x.scenario.events;
            let crowds: Vec<(&String, &String)> = events
                .iter()
                .filter_map(|e| match e {
                    Event::Upload {
                        doc,
                        words,
                        sections: Some(n),
                        ..
                    } => {
                        assert_eq!(*n, CROWD_SECTIONS, "seed {seed}");
                        Some((doc, words))
                    }
                    _ => None,
                })
                .collect();
            let beacon = events.iter().find_map(|e| match e {
                Event::Upload { doc, words, .. } if doc == "zbeacon" => Some(words),
                _ => None,
            });
            if !x.scenario.ai {
                assert!(crowds.is_empty() && beacon.is_none(), "seed {seed}");
                continue;
            }
            ai += 1;
            assert_eq!(crowds.len(), 3, "seed {seed}");
            for (doc, _) in &crowds {
                let deleted = events
                    .iter()
                    .any(|e| matches!(e, Event::DeleteUpload { doc: d, .. } if d == *doc));
                assert!(deleted, "seed {seed}: {doc}");
            }
            // Time never runs backwards across the crowd's own times.
            let times: Vec<u64> = events.iter().filter_map(Event::at_ms).collect();
            assert!(times.windows(2).all(|w| w[0] <= w[1]), "seed {seed}");
            // The beacon leans to W, each crowd passage (as memoria
            // embeds it: title, trail, body) far more.
            let (_, w) = crowds[0];
            let beacon = beacon.expect("a beacon");
            assert_eq!(
                beacon.split_whitespace().count(),
                BEACON_WORDS,
                "seed {seed}"
            );
            let q = kept_vector(w);
            let tag = owned_tag("zbeacon");
            let b = dot(
                &q,
                &kept_vector(&format!(
                    "{beacon} {tag}\n{beacon} {tag}\nThe {beacon} notes, uploaded."
                )),
            );
            assert!(b > 0.25, "seed {seed}: the beacon leans {b}");
            let crowd_tag = owned_tag("zcrowda");
            for c in memoria::chunk(&crowd_text(w, &crowd_tag, CROWD_SECTIONS)) {
                let text = format!("{w} {crowd_tag}\n{}\n{}", c.trail.join(" > "), c.text);
                let d = dot(&q, &kept_vector(&text));
                assert!(d > b + 2.0 * DENSE_MARGIN, "seed {seed}: {d} against {b}");
            }
        }
        assert!(ai > 0, "no AI-on world in forty seeds");
    }
}
