//! The explorer's roster (issue 26): about a third of the worlds run in suite shape, with the home's roster changed and its pulls faulted; the oracle judges admission against it (§4.3, §6.5).
//!
//! Drawn from a generator of its own (the seed under another constant), and
//! only after the rest of the run, so a seed whose world stays in lone shape
//! is the run it was before the roster existed. In suite shape
//! ([`FaultKind::Roster`]) every reader but the first is admitted from the
//! home's roster; the reader the run removes is removed at the home rather
//! than from the owners file (a run that drew none removes a reader of the
//! roster's own), and may be added back; other readers may be
//! removed and added back; and the home's pulls answer faults (down, a
//! lagging replica's older epoch, another team's roster, garbage) for
//! spells the run ends. Each event is slipped between the run's own at a
//! random place, after the one it follows.
//!
//! The draw: 35% of the worlds with two readers or more run beside a fake
//! home (`home = true`): the first reader is an owner, the others are
//! admitted from the home's roster, pulled by memoria's own roster loop. The
//! run's removal of a reader is then the home's (`roster-remove`), sometimes
//! undone (`roster-add`); and the swarm's `roster` kind, by its weight, puts
//! the home's pulls into outage spells (`roster-fault`: down, stale-epoch,
//! other-team, five garbage bodies; `none` ends one). `[safety:silent]` is
//! not judged for a roster reader unless a clean pull since their last
//! change and memoria's last wake certainly admits them.
//!
//! The liveness check ends the home's fault, lets simulated time run until
//! the roster loop pulls cleanly if its last pull failed (its retry,
//! `ROSTER_RETRY_S`), and again after the first round (at most
//! `ROSTER_PULL_WAIT_MAX_S`, 305 s), so the calendar's skips never age the
//! copy past `ROSTER_TTL_S`: simulated time runs only in suite-shape
//! worlds, which is what they cost. `SIMULATION_DURATION_S` is 1,800 s for
//! it and for the home spell that runs past a pull (`home.rs`). Without
//! that, the liveness check would refuse everybody in suite shape, and
//! rightly: it skips memoria's calendar 3 × `QUIET_S` = 915 s, past
//! `ROSTER_TTL_S` (900 s), while the roster loop (`AppState::wake_home`)
//! sleeps `ROSTER_REFRESH_S` (300 s) in simulated time, which a calendar
//! skip does not move. On the production path the check lets simulated
//! time pass until the loop pulls again, never calls `pull_roster`.
//!
//! `roster-outage-keeps-the-last-good-copy.toml` holds the rules, with two
//! mutations of `RosterCopy::apply` it kills; the explorer kills the one
//! that keeps a removed member in the copy at seed 16, shrunk to
//! `explore-roster-removed-stays-refused.toml`.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::Event;

/// The share of worlds with two readers or more that run in suite shape.
pub const SUITE_SHAPE_SHARE: f64 = 0.35;
/// The faults a spell of a roster outage draws from (`crate::fake::home`).
const MODES: [&str; 8] = [
    "down",
    "stale-epoch",
    "other-team",
    "garbage-html",
    "garbage-truncated",
    "garbage-empty-object",
    "garbage-not-an-address",
    "garbage-no-members",
];

/// Puts the world in suite shape on [`SUITE_SHAPE_SHARE`] of the seeds
/// whose `readers` are two or more, and then turns the run's removal of a
/// reader into the home's, and slips roster changes and outage spells into
/// `events` (which holds at least its opening event). Returns whether the
/// world is in suite shape.
pub(super) fn add(
    seed: u64,
    swarm: &mut Swarm,
    readers: &[String],
    events: &mut Vec<Event>,
) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x726f_7374_6572_2121);
    if readers.len() < 2 || !rng.gen_bool(SUITE_SHAPE_SHARE) {
        return false;
    }
    let weight = rng.gen_range(1..=4u32);
    swarm.0.push((FaultKind::Roster, weight));
    let mut removed_at = None;
    for (i, e) in events.iter_mut().enumerate() {
        if let Event::RemoveReader { at_ms, reader } = e {
            *e = Event::RosterRemove {
                at_ms: *at_ms,
                reader: reader.clone(),
            };
            removed_at = Some(i);
        }
    }
    let insert_after =
        |rng: &mut rand::rngs::StdRng, events: &mut Vec<Event>, i: usize, e: Event| {
            let at = rng.gen_range(i + 1..=events.len());
            events.insert(at, e);
            at
        };
    // Every suite-shape run removes somebody at the home: the removal the
    // run drew, else a reader of the roster's own.
    let removed_at = match removed_at {
        Some(i) => i,
        None => {
            let reader = readers[1..].choose(&mut rng).cloned().unwrap_or_default();
            let remove = Event::RosterRemove {
                at_ms: None,
                reader,
            };
            insert_after(&mut rng, events, 0, remove)
        }
    };
    if rng.gen_bool(0.4)
        && let Event::RosterRemove { reader, .. } = &events[removed_at]
    {
        let add = Event::RosterAdd {
            at_ms: None,
            reader: reader.clone(),
        };
        insert_after(&mut rng, events, removed_at, add);
    }
    for reader in &readers[1..] {
        if rng.gen_bool(0.3) {
            let at = insert_after(
                &mut rng,
                events,
                0,
                Event::RosterRemove {
                    at_ms: None,
                    reader: reader.clone(),
                },
            );
            if rng.gen_bool(0.6) {
                let add = Event::RosterAdd {
                    at_ms: None,
                    reader: reader.clone(),
                };
                insert_after(&mut rng, events, at, add);
            }
        }
    }
    for _ in 0..weight {
        let mode = MODES.choose(&mut rng).unwrap_or(&"down").to_string();
        let at = insert_after(
            &mut rng,
            events,
            0,
            Event::RosterFault { at_ms: None, mode },
        );
        let end = Event::RosterFault {
            at_ms: None,
            mode: "none".into(),
        };
        insert_after(&mut rng, events, at, end);
    }
    true
}
