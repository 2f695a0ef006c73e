//! The explorer's AI-on worlds (issue 26): about a quarter of the worlds run memoria with AI on against the stub provider, and most of those take the provider down, slow or rate-limited for spells (§7, §8.3).
//!
//! Drawn from a generator of its own (the seed under another constant),
//! and only after the rest of the run, so a seed that does not draw AI on
//! is the run it was before. An AI-on world runs as `memoria serve` does
//! with AI on: every passage and query embedded by the stub, the ranking
//! fused, the embedding loop draining its queue on its own interval
//! (`crate::world::World::embed_with_provider`). The safety oracle judges
//! its pages as every other world's; at `expect-converged` the provider
//! answers again and `[liveness:embeddings]` asks that the queue drains
//! (`crate::scenario`'s `provider.rs`).
//!
//! The draw: [`AI_SHARE`] of the worlds turn AI on; [`SPELLS_SHARE`] of
//! those also draw [`FaultKind::Provider`] with a weight of one to three
//! spells, each down, refusing, slow past the deadline or rate-limited,
//! slipped between the run's events at a random place; most end with the
//! provider answering again within [`SPELL_EVENTS_MAX`] events, the rest
//! only when the faults stop.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{Event, ProviderState};

/// The share of worlds that run with AI on.
pub const AI_SHARE: f64 = 0.25;
/// The share of AI-on worlds whose provider fails for spells.
pub const SPELLS_SHARE: f64 = 0.75;
/// The share of spells that end in the run, not only when the faults stop.
pub const ANSWERING_SHARE: f64 = 0.8;
/// The events a spell spans at most, before the provider answers again.
const SPELL_EVENTS_MAX: usize = 30;
/// The failures a spell draws from.
const FAILING: [ProviderState; 4] = [
    ProviderState::Down,
    ProviderState::Refused,
    ProviderState::Slow,
    ProviderState::RateLimited,
];

/// Turns AI on for [`AI_SHARE`] of the seeds, and for most of those adds
/// spells of a failing provider to `events` (which holds at least its
/// opening event) and [`FaultKind::Provider`] to the swarm. Returns
/// whether AI is on.
pub(super) fn add(seed: u64, swarm: &mut Swarm, events: &mut Vec<Event>) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7072_6f76_6964_6572);
    if !rng.gen_bool(AI_SHARE) {
        return false;
    }
    if !rng.gen_bool(SPELLS_SHARE) {
        return true;
    }
    let weight = rng.gen_range(1..=3u32);
    swarm.0.push((FaultKind::Provider, weight));
    for _ in 0..weight {
        let state = *FAILING.choose(&mut rng).unwrap_or(&ProviderState::Down);
        let at = rng.gen_range(1..=events.len());
        events.insert(at, Event::Provider { at_ms: None, state });
        if rng.gen_bool(ANSWERING_SHARE) {
            let end = rng.gen_range(at + 1..=(at + SPELL_EVENTS_MAX).min(events.len()));
            events.insert(
                end,
                Event::Provider {
                    at_ms: None,
                    state: ProviderState::Answering,
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
    fn a_world_with_provider_faults_runs_with_ai_on_and_some_worlds_of_forty_draw_each() {
        let (mut ai, mut spells) = (0, 0);
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let faults = x
                .scenario
                .events
                .iter()
                .filter(|e| matches!(e, Event::Provider { state, .. } if *state != ProviderState::Answering))
                .count();
            let on = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::Provider);
            assert_eq!(on, faults > 0, "seed {seed}: {faults} provider faults");
            assert!(
                !on || x.scenario.ai,
                "seed {seed}: provider faults with AI off"
            );
            ai += usize::from(x.scenario.ai);
            spells += usize::from(on);
        }
        assert!(
            ai > 0 && spells > 0,
            "of 40 seeds, {ai} ran with AI on and {spells} failed the provider"
        );
    }
}
