//! The explorer's token rotation (issue 26): about a third of the worlds rotate memoria's tokens at their siblings with the operator drain's three phases, each phase possibly interrupted and resumed (§6.2).
//!
//! Drawn from a generator of its own (the seed under another constant),
//! and only after the rest of the run, so a seed whose swarm lacks
//! [`FaultKind::Rotation`] is the run it was before rotations existed. A
//! rotating world runs one or two rotations (the kind's weight), each a
//! `begin` and then phases 1, 2 and 3 in order. Each phase is interrupted
//! with [`INTERRUPTED_SHARE`]: run over only the first siblings (a partial
//! delivery), then one interruption, memoria restarted or a sibling
//! unreachable for a spell (an outage switched on, and cleared later), and
//! then the phase run again to the end (resumed). Each event is slipped
//! between the run's own at a random place, in order.
//!
//! The draw: 35% of the worlds ([`ROTATION_SHARE`]) rotate memoria's tokens
//! at their siblings once or twice with the simulator's `Drain`, through
//! `rotation` events; [`INTERRUPTED_SHARE`] is 60%, and an outage is
//! cleared before or after the phase resumes. memoria reads its tokens from
//! token files, as `serve` does with `MEMORIA_SIBLING_TOKEN_<APP>_FILE`;
//! nothing calls into memoria to rotate. The oracle's `[safety:rotation]`
//! and `[liveness:rotation]` judge the run (`crate::scenario`'s
//! `rotation.rs`).
//!
//! `explore-rotation-interrupted-at-each-phase.toml` holds one rotation
//! with each phase interrupted (a restart, a partial delivery during an
//! outage, a partial contract) and the mutations it kills: ingest calls
//! that carry the first token memoria read while S2 reads the file, so the
//! contract the drain makes on seeing S2 turns the next feed pull into a
//! 401 (`[safety:rotation]`), and one only `[liveness:rotation]` sees: the
//! token file read once, when the client is built, so the drain never sees
//! the new token in use and no contract retires anything (every page stays
//! whole). The explorer kills each at seed 0.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{Event, FaultDecl, RotationPhase};

/// The share of worlds that rotate memoria's tokens.
pub const ROTATION_SHARE: f64 = 0.35;
/// The share of phases that are interrupted and resumed.
pub const INTERRUPTED_SHARE: f64 = 0.6;
/// The outages a sibling is unreachable with for a spell (`crate::fake::faults`).
const OUTAGES: [&str; 3] = ["refuse", "503", "hang"];

/// Adds rotations of memoria's tokens at `apps` (the world's siblings, in
/// the drain's order) to `events` (which holds at least its opening event)
/// on [`ROTATION_SHARE`] of the seeds, and [`FaultKind::Rotation`] to the
/// swarm. Returns whether it did.
pub(super) fn add(seed: u64, swarm: &mut Swarm, apps: &[String], events: &mut Vec<Event>) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x726f_7461_7469_6f6e);
    if apps.is_empty() || !rng.gen_bool(ROTATION_SHARE) {
        return false;
    }
    let weight = rng.gen_range(1..=2u32);
    swarm.0.push((FaultKind::Rotation, weight));
    let phase = |phase, reach| Event::Rotation {
        at_ms: None,
        phase,
        reach,
    };
    let mut plan = vec![];
    for _ in 0..weight {
        plan.push(phase(RotationPhase::Begin, None));
        for p in [
            RotationPhase::Expand,
            RotationPhase::Switch,
            RotationPhase::Contract,
        ] {
            if rng.gen_bool(INTERRUPTED_SHARE) {
                plan.push(phase(p, Some(rng.gen_range(0..apps.len()))));
                if rng.gen_bool(0.5) {
                    plan.push(Event::Restart { at_ms: None });
                    plan.push(phase(p, None));
                } else {
                    let app = apps.choose(&mut rng).cloned().unwrap_or_default();
                    plan.push(Event::Fault {
                        at_ms: None,
                        app: app.clone(),
                        fault: FaultDecl::Outage {
                            mode: OUTAGES.choose(&mut rng).unwrap_or(&"503").to_string(),
                            only: None,
                        },
                    });
                    // The spell ends before the phase is resumed, or after.
                    if rng.gen_bool(0.5) {
                        plan.push(Event::Clear { at_ms: None, app });
                        plan.push(phase(p, None));
                    } else {
                        plan.push(phase(p, None));
                        plan.push(Event::Clear { at_ms: None, app });
                    }
                }
            } else {
                plan.push(phase(p, None));
            }
        }
    }
    // Sorted places after the opening event, filled from the last so each
    // index still means the run's own event it follows.
    let mut at: Vec<usize> = (0..plan.len())
        .map(|_| rng.gen_range(1..=events.len()))
        .collect();
    at.sort_unstable();
    for (e, i) in plan.into_iter().zip(at).rev() {
        events.insert(i, e);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phases of every rotation a seed draws, in order, as (phase,
    /// reach), one list per `begin`.
    fn rotations(seed: u64) -> Vec<Vec<(RotationPhase, Option<usize>)>> {
        let mut out: Vec<Vec<(RotationPhase, Option<usize>)>> = vec![];
        for e in &super::super::generate(seed).scenario.events {
            if let Event::Rotation { phase, reach, .. } = e {
                if *phase == RotationPhase::Begin {
                    out.push(vec![]);
                } else if let Some(r) = out.last_mut() {
                    r.push((*phase, *reach));
                }
            }
        }
        out
    }

    #[test]
    fn every_drawn_rotation_runs_its_phases_in_order_and_ends_each_one_resumed_to_the_end() {
        let mut drawn = 0;
        for seed in 0..40 {
            for phases in rotations(seed) {
                drawn += 1;
                let order: Vec<RotationPhase> = phases.iter().map(|(p, _)| *p).collect();
                let mut sorted = order.clone();
                sorted.sort_by_key(|p| *p as u8);
                assert_eq!(order, sorted, "seed {seed}: phases out of order");
                for p in [
                    RotationPhase::Expand,
                    RotationPhase::Switch,
                    RotationPhase::Contract,
                ] {
                    let runs: Vec<Option<usize>> = phases
                        .iter()
                        .filter(|(x, _)| *x == p)
                        .map(|(_, r)| *r)
                        .collect();
                    assert_eq!(runs.last(), Some(&None), "seed {seed}: {p:?} {runs:?}");
                }
            }
        }
        assert!(drawn > 0, "no seed of 40 drew a rotation");
    }

    #[test]
    fn a_seed_whose_swarm_lacks_rotation_has_no_rotation_event() {
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let rotating = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::Rotation);
            let events = x
                .scenario
                .events
                .iter()
                .filter(|e| matches!(e, Event::Rotation { .. }))
                .count();
            assert_eq!(
                rotating,
                events > 0,
                "seed {seed}: {events} rotation events"
            );
        }
    }
}
