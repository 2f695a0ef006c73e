//! The explorer's crashes (issue 26): about a third of the worlds aim a named crash point at memoria just before some of its uploads and deletions, so memoria is killed there and woken again from what the kill left.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing, so a seed whose swarm lacks
//! [`FaultKind::Crash`] is the run it was before crashes, and the other
//! kinds' events, restores and outages are the same with it or without
//! (crashes only add `crash` events). A world that draws it aims one to
//! three crashes (the kind's weight), each in front of an upload or a
//! deletion of memoria's own documents: an upload at
//! `ingest:before-commit`, `ingest:after-commit` or
//! `snapshot:before-rename`, a deletion at `tombstone:mid-append`,
//! `tombstone:after-append` or `snapshot:before-rename`. A sync's ingest
//! or snapshot during the event's wait may reach the point first, and a
//! refused upload never does: both are crashes too, or none. What the
//! oracle then asks is in `crate::scenario`'s replay: an upload or
//! deletion so cut off is in doubt until a deletion settles it, and every
//! other invariant holds across the wake as across a restart.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::Event;

/// The share of worlds that crash memoria at a named point.
pub const CRASH_SHARE: f64 = 0.3;
/// Where an upload is crashed.
const UPLOAD_POINTS: [&str; 3] = [
    "ingest:before-commit",
    "ingest:after-commit",
    "snapshot:before-rename",
];
/// Where a deletion is crashed.
const DELETE_POINTS: [&str; 3] = [
    "tombstone:mid-append",
    "tombstone:after-append",
    "snapshot:before-rename",
];

/// Aims crashes in front of uploads and deletions of `events` on
/// [`CRASH_SHARE`] of the seeds that have any, and adds
/// [`FaultKind::Crash`] to the swarm. Returns whether it did.
pub(super) fn add(seed: u64, swarm: &mut Swarm, events: &mut Vec<Event>) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6372_6173_6870_7473);
    let targets: Vec<usize> = (0..events.len())
        .filter(|i| {
            matches!(
                events[*i],
                Event::Upload { .. } | Event::DeleteUpload { .. }
            )
        })
        .collect();
    if targets.is_empty() || !rng.gen_bool(CRASH_SHARE) {
        return false;
    }
    let weight = rng.gen_range(1..=3u32);
    swarm.0.push((FaultKind::Crash, weight));
    let mut chosen: Vec<usize> = (0..weight)
        .filter_map(|_| targets.choose(&mut rng).copied())
        .collect();
    chosen.sort_unstable();
    chosen.dedup();
    for &at in chosen.iter().rev() {
        let points = match events[at] {
            Event::Upload { .. } => &UPLOAD_POINTS,
            _ => &DELETE_POINTS,
        };
        let point = points.choose(&mut rng).copied().unwrap_or(points[0]);
        events.insert(
            at,
            Event::Crash {
                at_ms: None,
                point: point.to_string(),
            },
        );
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_whose_swarm_lacks_crashes_aims_none_and_one_that_has_them_aims_each_before_an_upload_or_deletion()
     {
        let mut drawn = 0;
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let on = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::Crash);
            let events = &x.scenario.events;
            let aimed: Vec<usize> = (0..events.len())
                .filter(|i| matches!(events[*i], Event::Crash { .. }))
                .collect();
            assert_eq!(on, !aimed.is_empty(), "seed {seed}");
            for i in aimed {
                assert!(
                    matches!(
                        events.get(i + 1),
                        Some(Event::Upload { .. } | Event::DeleteUpload { .. })
                    ),
                    "seed {seed}: event {i} aims at no upload or deletion"
                );
            }
            if on {
                // The file the shrinker writes carries the crash, and
                // parses back to it.
                let text = super::super::to_toml(&x.scenario).expect("writes");
                assert!(text.contains("do = \"crash\""), "seed {seed}");
                let back =
                    crate::scenario::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                assert_eq!(back.events.len(), events.len(), "seed {seed}");
            }
            drawn += usize::from(on);
        }
        assert!(drawn > 0, "no seed of 40 crashed memoria");
    }
}
