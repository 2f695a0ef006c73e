//! The explorer's unreachable home (issue 26): about half the suite-shape worlds have the home drop memoria's roster pulls unanswered or accept them and never answer, for spells (§4.3, §6.5).
//!
//! Drawn from a generator of its own (the seed under another constant),
//! and only for a world in suite shape, after the rest of the run, so a
//! seed whose swarm lacks [`FaultKind::HomeUnreachable`] is the run it was
//! before these modes existed. One or two spells (the kind's weight), each
//! `refuse` (the connection dropped: memoria's pull sees the exchange
//! break) or `hang` (the request accepted and never answered: the pull
//! runs past its deadline), ended by `none` a little later; in
//! [`LONG_SPELL_SHARE`] of those worlds the first spell's clock jumps past
//! one of memoria's roster pulls ([`LONG_SPELL_MS`]), so the pull fails
//! inside it, and the roster readers ask again, right after the jump, the
//! last questions they asked before it: the copy the failed pull kept must
//! still let them find what they found. The roster
//! checks judge them as every outage: the last good copy is kept, and a
//! failed pull admits nobody (`crate::scenario`'s `roster.rs`).
//!
//! And memoria's own restore rewinding the roster's epoch ([`add_rewind`],
//! [`FaultKind::RosterRewind`], its own stream too): in a suite-shape
//! world whose run restores memoria from a backup, a home replica lagging
//! one change behind answers the pulls from just before a restore until a
//! few events after it, so the restored memoria, whose store remembers the
//! epoch of the backup, is offered a roster older than one it acted on
//! (§4.3, §7.4; `roster-restore-never-rewinds-the-epoch.toml`).
//!
//! The draw: `refuse` is as the fake sibling's `refuse`; `hang` runs past
//! `ROSTER_DEADLINE_MS`; the fake home records such a pull with status
//! `PULL_UNANSWERED`. `roster-home-unreachable-keeps-the-last-good-copy.toml`
//! holds both, with a mutation only these two modes reach: a pull the home
//! never answered drops the copy (a status or a garbage body keeps it). A
//! spell spans at most 40 events, tens of simulated seconds, and the roster
//! loop pulls every `ROSTER_REFRESH_S` (300 s), so a pull rarely fell inside
//! one; hence the long spell: its clock jumps [`LONG_SPELL_MS`]
//! (`ROSTER_REFRESH_S` and 5 s) right after it starts, the gaps after it
//! kept, in [`LONG_SPELL_SHARE`] of the worlds with an unreachable home (a
//! stream of its own, so the spells are where they were). The readers ask
//! again their last three questions (`ask_again`), which `[safety:silent]`
//! judges against what they found then, and `[safety:roster]` holds memoria
//! to the copy it kept. `benches/RESULTS.md` has what the explorer kills
//! with and without it.
//!
//! The stale spell: in [`STALE_SPELL_SHARE`] of the worlds with a long
//! spell, its clock jumps [`STALE_SPELL_MS`] (`ROSTER_TTL_S` and two
//! minutes) instead, so every pull inside it fails for longer than the
//! copy's TTL and the copy goes stale: nobody's team standing can be
//! established, sessions included (§4.3, suite gate 5). The questions asked
//! again there must find no passage and say why (`[safety:roster]`).
//!
//! The rewind: 60% of the suite-shape worlds whose run restores memoria from
//! a backup (`roster-rewind`) have the lagging replica answer the pulls from
//! just before one or two of those restores until up to 10 events after.
//! The reference once kept the roster's generation and epoch only in its
//! store (`roster_held`), which the restore rewinds, so the restored memoria
//! adopted the lagging roster from before a removal it had already pulled,
//! and admitted the person removed again: `[safety:roster]` went red on it
//! (found by writing the scenario). Fixed: memoria also keeps the
//! coordinates in a roster mark beside the tombstone log
//! (`reference/src/storage/roster_mark.rs`, `roster-mark.json` in
//! `MEMORIA_TOMBSTONES`), backed up apart and never restored with the data,
//! and judges its first pull after a wake against the mark when there is
//! one. The scenario's mutation reads the store alone again.

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
/// The share of worlds with an unreachable home whose first spell runs
/// past one of memoria's roster pulls ([`LONG_SPELL_MS`]).
pub const LONG_SPELL_SHARE: f64 = 0.5;
/// How far the run's clock moves inside a long spell, in simulated ms:
/// one `ROSTER_REFRESH_S` (300 s, the roster loop's interval) and 5 s, so
/// the loop pulls at least once while the home is unreachable, and the
/// spell's later events ask with whatever that pull left. One spell a
/// world at most, so the copy a failed pull keeps stays inside
/// `ROSTER_TTL_S` (900 s), unless the spell is a stale one
/// ([`STALE_SPELL_MS`]), and the run inside `SIMULATION_DURATION_S`.
pub const LONG_SPELL_MS: u64 = (memoria::ROSTER_REFRESH_S + 5) * 1_000;
/// The share of long spells that run past the copy's TTL instead
/// ([`STALE_SPELL_MS`]): the roster loop's pulls all fail for longer than
/// `ROSTER_TTL_S`, so the copy memoria holds goes stale inside the spell.
pub const STALE_SPELL_SHARE: f64 = 0.5;
/// How far the run's clock moves inside a stale spell, in simulated ms:
/// `ROSTER_TTL_S` (900 s) and two minutes, so at least 780 s of the jump
/// come after the last pull the home answered before the spell (the loop
/// pulls every 300 s while pulls succeed), and the questions after the
/// jump are asked of a copy past its TTL by more than the oracle's margin
/// (`scenario`'s `roster.rs`, `STALE_MARGIN_S`). The roster readers ask
/// again their last questions there too: a stale copy stops everyone's
/// team standing, sessions included, so they must find nothing, and be
/// told why (§4.3, suite gate 5).
pub const STALE_SPELL_MS: u64 = (memoria::ROSTER_TTL_S.unsigned_abs() + 120) * 1_000;
/// The modes a stale spell draws from: the unreachable home's, and three
/// the home answers (`crate::fake::home::HomeFault`: 503, a body that does
/// not decode, a lagging replica's older epoch), so a failed pull the home
/// answered is seen not to renew the copy either.
const STALE_MODES: [&str; 5] = ["refuse", "hang", "down", "garbage-html", "stale-epoch"];
/// The questions roster readers asked before a long spell that are asked
/// again inside it, at most ([`ask_again`]).
const ASKED_AGAIN_MAX: usize = 3;
/// The share of suite-shape worlds restoring memoria whose home lags
/// around a restore.
pub const REWIND_SHARE: f64 = 0.6;
/// The events a lagging spell runs past the restore, at most.
const REWIND_EVENTS_MAX: usize = 10;

/// Adds spells of an unreachable home to `events` (which holds at least its
/// opening event) on [`UNREACHABLE_SHARE`] of the seeds whose world is in
/// suite shape (`home`), and [`FaultKind::HomeUnreachable`] to the swarm.
/// Returns whether it did.
pub(super) fn add(
    seed: u64,
    swarm: &mut Swarm,
    home: bool,
    roster_readers: &[String],
    events: &mut Vec<Event>,
) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x686f_6d65_6461_726b);
    if !home || !rng.gen_bool(UNREACHABLE_SHARE) {
        return false;
    }
    // Whether the first spell runs past a pull: a stream of its own, so the
    // first spell is where it was before long ones existed.
    let mut long =
        rand::rngs::StdRng::seed_from_u64(seed ^ 0x6c6f_6e67_7370_656c).gen_bool(LONG_SPELL_SHARE);
    // Whether the long spell runs past the TTL: a stream of its own again,
    // so a world whose long spell does not is the run it was.
    let mut stale_rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7374_616c_6573_706c);
    let stale = stale_rng.gen_bool(STALE_SPELL_SHARE);
    let weight = rng.gen_range(1..=2u32);
    swarm.0.push((FaultKind::HomeUnreachable, weight));
    for _ in 0..weight {
        let mut mode = MODES.choose(&mut rng).unwrap_or(&"refuse").to_string();
        if long && stale {
            mode = STALE_MODES
                .choose(&mut stale_rng)
                .unwrap_or(&"refuse")
                .to_string();
        }
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
        if std::mem::take(&mut long) {
            delay_from(
                events,
                at + 1,
                if stale { STALE_SPELL_MS } else { LONG_SPELL_MS },
            );
            ask_again(events, at, roster_readers);
        }
    }
    true
}

/// Has the last [`ASKED_AGAIN_MAX`] questions the `roster_readers` asked
/// before the spell that starts at `start` asked again right after its
/// clock jumped (the event after `start`), as a colleague repeats a search:
/// what they found before, the copy the failed pull kept must still let
/// them find (`[safety:silent]`).
fn ask_again(events: &mut Vec<Event>, start: usize, roster_readers: &[String]) {
    let again: Vec<Event> = events[..start]
        .iter()
        .rev()
        .filter_map(|e| match e {
            Event::Query {
                reader, q, surface, ..
            } if roster_readers.contains(reader) => Some(Event::Query {
                at_ms: None,
                reader: reader.clone(),
                q: q.clone(),
                expect: None,
                surface: *surface,
            }),
            _ => None,
        })
        .take(ASKED_AGAIN_MAX)
        .collect();
    let at = (start + 2).min(events.len());
    events.splice(at..at, again.into_iter().rev());
}

/// Moves the event at `from` and every timed event after it `by` ms later,
/// so the run's clock jumps there and the gaps after it are kept. The
/// event at `from`, if untimed, is timed at the last time before it (where
/// it ran anyway) first.
pub(super) fn delay_from(events: &mut [Event], from: usize, by: u64) {
    let before = events[..from]
        .iter_mut()
        .rev()
        .find_map(|e| *e.at_ms_mut())
        .unwrap_or(0);
    if let Some(first) = events.get_mut(from) {
        first.at_ms_mut().get_or_insert(before);
    }
    for e in events.iter_mut().skip(from) {
        if let Some(t) = e.at_ms_mut() {
            *t += by;
        }
    }
}

/// Puts a lagging home replica around one or two of memoria's restores
/// (`memoria-restore` events) in `events` on [`REWIND_SHARE`] of the
/// suite-shape (`home`) seeds that have any, and
/// [`FaultKind::RosterRewind`] to the swarm. Returns whether it did.
pub(super) fn add_rewind(
    seed: u64,
    swarm: &mut Swarm,
    home: bool,
    events: &mut Vec<Event>,
) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7265_7769_6e64_2121);
    let restores = events
        .iter()
        .filter(|e| matches!(e, Event::MemoriaRestore { .. }))
        .count();
    if !home || restores == 0 || !rng.gen_bool(REWIND_SHARE) {
        return false;
    }
    let weight = rng.gen_range(1..=restores.min(2)) as u32;
    swarm.0.push((FaultKind::RosterRewind, weight));
    for _ in 0..weight {
        let at: Vec<usize> = (0..events.len())
            .filter(|i| matches!(events[*i], Event::MemoriaRestore { .. }))
            .collect();
        let Some(&i) = at.choose(&mut rng) else {
            break;
        };
        let end = rng.gen_range(i + 1..=(i + REWIND_EVENTS_MAX).min(events.len()));
        events.insert(
            end,
            Event::RosterFault {
                at_ms: None,
                mode: "none".into(),
            },
        );
        events.insert(
            i,
            Event::RosterFault {
                at_ms: None,
                mode: "stale-epoch".into(),
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
            // Refused or hung pulls come only from an unreachable home, or
            // a new generation's failing spell; a stale spell may instead
            // draw a mode the roster kind draws too.
            let unreachable = modes.iter().any(|m| MODES.contains(m));
            let spell = modes.iter().any(|m| STALE_MODES.contains(m));
            let generation = x
                .swarm
                .0
                .iter()
                .any(|(k, _)| *k == FaultKind::NewGeneration);
            assert!(!unreachable || on || generation, "seed {seed}: {modes:?}");
            assert!(!on || spell, "seed {seed}: {modes:?}");
            drawn += usize::from(on);
        }
        assert!(drawn > 0, "no seed of 60 drew an unreachable home");
    }

    #[test]
    fn some_spells_run_past_a_roster_pull_and_keep_the_gaps_after_them() {
        let mut long = 0;
        for seed in 0..60 {
            let x = super::super::generate(seed);
            let events = &x.scenario.events;
            let times: Vec<u64> = events.iter().filter_map(Event::at_ms).collect();
            assert!(times.is_sorted(), "seed {seed}: the timeline runs back");
            // Inside a spell (from an unreachable mode to `none`), the
            // clock's widest step between two timed events.
            let mut open: Option<u64> = None;
            let mut last = 0;
            for e in events {
                if let Some(t) = e.at_ms() {
                    if open.is_some() && t - last >= LONG_SPELL_MS {
                        long += 1;
                        open = None;
                    }
                    last = t;
                }
                if let Event::RosterFault { mode, .. } = e {
                    open = MODES.contains(&mode.as_str()).then_some(last);
                }
            }
        }
        assert!(long > 0, "no spell of 60 seeds ran past a roster pull");
    }

    #[test]
    fn some_long_spells_run_past_the_rosters_ttl() {
        let stale = (0..400u64)
            .filter(|&seed| {
                let x = super::super::generate(seed);
                // Inside a spell: the clock's step right after an
                // unreachable or stale mode starts one.
                let mut open = false;
                let mut last = 0;
                let mut stale = false;
                for e in &x.scenario.events {
                    if let Some(t) = e.at_ms() {
                        stale |= open && t - last >= STALE_SPELL_MS;
                        last = t;
                    }
                    if let Event::RosterFault { mode, .. } = e {
                        open = STALE_MODES.contains(&mode.as_str());
                    }
                }
                stale
            })
            .count();
        assert!(stale > 0, "no spell of 400 seeds ran past the roster's TTL");
    }

    #[test]
    fn a_rewinding_world_lags_its_home_right_before_one_of_memorias_restores() {
        let mut drawn = 0;
        for seed in 0..80 {
            let x = super::super::generate(seed);
            let on = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::RosterRewind);
            if !on {
                continue;
            }
            drawn += 1;
            assert!(x.scenario.home, "seed {seed}: lone shape");
            let before_a_restore = x.scenario.events.windows(2).any(|w| {
                matches!(&w[0], Event::RosterFault { mode, .. } if mode == "stale-epoch")
                    && matches!(w[1], Event::MemoriaRestore { .. })
            });
            assert!(before_a_restore, "seed {seed}");
        }
        assert!(drawn > 0, "no seed of 80 drew a rewinding world");
    }
}
