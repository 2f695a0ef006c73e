//! The explorer's broken token files (issue 26): about a quarter of the worlds break memoria's token file at a sibling for spells, unreadable, missing or garbage, and mend it (§6.2).
//!
//! Drawn from a generator of its own (the seed under another constant),
//! and only after the rest of the run, so a seed whose swarm lacks
//! [`FaultKind::TokenFile`] is the run it was before token files broke. A
//! world that draws it runs one to three spells (the kind's weight), each
//! at a sibling of the world, in one of the three broken states, slipped
//! between the run's own events at a random place; most end with the file
//! restored a little later, the rest are mended only when the faults stop
//! (`expect-converged`). The oracle's `[safety:token-file]` judges every
//! call memoria makes meanwhile (`crate::scenario`'s `token_file.rs`).
//!
//! The draw: 25% of the worlds ([`TOKEN_FILE_SHARE`]); 80% of the spells
//! end with the file restored within 30 events, the rest at
//! `expect-converged`, which mends every file before liveness is judged. A
//! drain's phase 2 that writes a token over a broken file ends its spell.
//! `token-file-unreadable-calls-nobody.toml` holds the three states and two
//! mutations only `[safety:token-file]` sees (every page looks the same
//! under both): a token file that cannot be read falls back to the last
//! token read (an adversary's, left unkilled until the explorer made the
//! fault), and a token that cannot be read sent empty.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{Event, TokenFileState};

/// The share of worlds that break memoria's token files.
pub const TOKEN_FILE_SHARE: f64 = 0.25;
/// The share of spells that end with the file restored in the run, not
/// only when the faults stop.
pub const RESTORED_SHARE: f64 = 0.8;
/// The events a spell spans at most, before its file is restored.
const SPELL_EVENTS_MAX: usize = 30;
/// The broken states a spell draws from.
const BROKEN: [TokenFileState; 3] = [
    TokenFileState::Unreadable,
    TokenFileState::Missing,
    TokenFileState::Garbage,
];

/// Adds spells of broken token files at `apps` (the world's siblings) to
/// `events` (which holds at least its opening event) on
/// [`TOKEN_FILE_SHARE`] of the seeds, and [`FaultKind::TokenFile`] to the
/// swarm. Returns whether it did.
pub(super) fn add(seed: u64, swarm: &mut Swarm, apps: &[String], events: &mut Vec<Event>) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x746f_6b65_6e66_696c);
    if apps.is_empty() || !rng.gen_bool(TOKEN_FILE_SHARE) {
        return false;
    }
    let weight = rng.gen_range(1..=3u32);
    swarm.0.push((FaultKind::TokenFile, weight));
    for _ in 0..weight {
        let app = apps.choose(&mut rng).cloned().unwrap_or_default();
        let state = *BROKEN.choose(&mut rng).unwrap_or(&TokenFileState::Missing);
        let at = rng.gen_range(1..=events.len());
        events.insert(
            at,
            Event::TokenFile {
                at_ms: None,
                app: app.clone(),
                state,
            },
        );
        if rng.gen_bool(RESTORED_SHARE) {
            let end = rng.gen_range(at + 1..=(at + SPELL_EVENTS_MAX).min(events.len()));
            events.insert(
                end,
                Event::TokenFile {
                    at_ms: None,
                    app,
                    state: TokenFileState::Restored,
                },
            );
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_whose_swarm_lacks_token_files_breaks_none_and_one_that_has_them_breaks_one() {
        let mut drawn = 0;
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let on = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::TokenFile);
            let broken = x
                .scenario
                .events
                .iter()
                .filter(|e| {
                    matches!(e, Event::TokenFile { state, .. } if *state != TokenFileState::Restored)
                })
                .count();
            assert_eq!(on, broken > 0, "seed {seed}: {broken} broken");
            drawn += usize::from(on);
        }
        assert!(drawn > 0, "no seed of 40 broke a token file");
    }
}
