//! The explorer's unreachable home (issue 26): about half the suite-shape worlds have the home drop memoria's roster pulls unanswered or accept them and never answer, for spells (§4.3, §6.5).
//!
//! Drawn from a generator of its own (the seed under another constant),
//! and only for a world in suite shape, after the rest of the run, so a
//! seed whose swarm lacks [`FaultKind::HomeUnreachable`] is the run it was
//! before these modes existed. One or two spells (the kind's weight), each
//! `refuse` (the connection dropped: memoria's pull sees the exchange
//! break) or `hang` (the request accepted and never answered: the pull
//! runs past its deadline), ended by `none` a little later. The roster
//! checks judge them as every outage: the last good copy is kept, and a
//! failed pull admits nobody (`crate::scenario`'s `roster.rs`).

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::Event;

/// The share of suite-shape worlds whose home goes unreachable.
pub const UNREACHABLE_SHARE: f64 = 0.5;
/// The events a spell spans at most.
const SPELL_EVENTS_MAX: usize = 40;
/// The modes a spell draws from (`crate::fake::home::HomeFault`).
const MODES: [&str; 2] = ["refuse", "hang"];

/// Adds spells of an unreachable home to `events` (which holds at least its
/// opening event) on [`UNREACHABLE_SHARE`] of the seeds whose world is in
/// suite shape (`home`), and [`FaultKind::HomeUnreachable`] to the swarm.
/// Returns whether it did.
pub(super) fn add(seed: u64, swarm: &mut Swarm, home: bool, events: &mut Vec<Event>) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x686f_6d65_6461_726b);
    if !home || !rng.gen_bool(UNREACHABLE_SHARE) {
        return false;
    }
    let weight = rng.gen_range(1..=2u32);
    swarm.0.push((FaultKind::HomeUnreachable, weight));
    for _ in 0..weight {
        let mode = MODES.choose(&mut rng).unwrap_or(&"refuse").to_string();
        let at = rng.gen_range(1..=events.len());
        events.insert(at, Event::RosterFault { at_ms: None, mode });
        let end = rng.gen_range(at + 1..=(at + SPELL_EVENTS_MAX).min(events.len()));
        events.insert(
            end,
            Event::RosterFault {
                at_ms: None,
                mode: "none".into(),
            },
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_suite_shape_world_draws_an_unreachable_home_and_every_spell_ends() {
        let mut drawn = 0;
        for seed in 0..60 {
            let x = super::super::generate(seed);
            let on = x
                .swarm
                .0
                .iter()
                .any(|(k, _)| *k == FaultKind::HomeUnreachable);
            assert!(!on || x.scenario.home, "seed {seed}: lone shape");
            let modes: Vec<&str> = x
                .scenario
                .events
                .iter()
                .filter_map(|e| match e {
                    Event::RosterFault { mode, .. } => Some(mode.as_str()),
                    _ => None,
                })
                .collect();
            let unreachable = modes.iter().any(|m| MODES.contains(m));
            assert_eq!(on, unreachable, "seed {seed}: {modes:?}");
            drawn += usize::from(on);
        }
        assert!(drawn > 0, "no seed of 60 drew an unreachable home");
    }
}
