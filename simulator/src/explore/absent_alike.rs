//! The explorer's absent documents compared (issue 26, gate 6): some openings of a sibling's document ask, when the answer is absent, for an id memoria never held as well, and the oracle requires the two answers alike (§4.1).
//!
//! NOT_VISIBLE is the one silent value (§4.1's table), and the document
//! page's and the MCP `document` tool's absent answer must say nothing an
//! id never held does not say: the same status, headers and body. Each
//! `open-document` of a sibling's item gets `beside_never_held` with
//! probability [`BESIDE_NEVER_HELD_SHARE`], in a share [`RUN_SHARE`] of
//! runs, drawn from a generator of its
//! own (the seed under another constant) after every other drawing, so a
//! seed keeps every event, time and app it drew before: the flag changes a
//! run only where an answer is a 404 (or the tool's `absent`), and then by
//! one more request of the same person at once
//! (`scenario/documents.rs` asks it, `scenario/document_answer.rs`'s
//! `judge_absent_alike` compares the two).

use rand::{Rng as _, SeedableRng as _};

use crate::scenario::Event;

/// The share of runs whose openings compare absent answers.
pub const RUN_SHARE: f64 = 0.6;
/// In such a run, the share of openings of a sibling's document that compare an
/// absent answer with an id never held's.
pub const BESIDE_NEVER_HELD_SHARE: f64 = 0.6;

/// Sets `beside_never_held` on [`BESIDE_NEVER_HELD_SHARE`] of the
/// openings of a sibling's document in `events`, in [`RUN_SHARE`] of runs.
pub(super) fn add(seed: u64, events: &mut [Event]) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6162_7365_6e74_3434);
    if !rng.gen_bool(RUN_SHARE) {
        return;
    }
    for e in events {
        if let Event::OpenDocument {
            app: Some(_),
            beside_never_held,
            ..
        } = e
        {
            *beside_never_held = rng.gen_bool(BESIDE_NEVER_HELD_SHARE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_openings_of_a_sibling_document_within_ten_seeds_compare_an_absent_answer() {
        let (mut on, mut off) = (0, 0);
        for seed in 0..10 {
            for e in &super::super::generate(seed).scenario.events {
                match e {
                    Event::OpenDocument {
                        app: Some(_),
                        beside_never_held,
                        ..
                    } => {
                        if *beside_never_held {
                            on += 1;
                        } else {
                            off += 1;
                        }
                    }
                    Event::OpenDocument {
                        beside_never_held, ..
                    } => assert!(
                        !beside_never_held,
                        "seed {seed}: memoria's own document flagged"
                    ),
                    _ => {}
                }
            }
        }
        assert!(on > 0 && off > 0, "{on} flagged, {off} not");
    }
}
