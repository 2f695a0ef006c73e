//! The explorer's lost feed revisions (issue 26, gate 27): three quarters of the worlds with partial restores in their swarm make one item seed 74's shape, an item not yet team-visible with several revisions upgraded to team-visible and, before memoria polls, partially restored to its first revision.
//!
//! Seed 74 (`scenarios/explore-lost-feed-revision-reannounces.toml`) found
//! the case: the upgrade's feed row names the item's last revision, the
//! partial restore takes that revision away without touching the log, so
//! S3 404s the revision the feed named, memoria holds nothing of the item
//! for S2 to answer AHEAD about, and the feed never names it again. Only a
//! re-announce brings it in (§4.1), and the reference's reading (a 404 that
//! no later row explains, after one more read of the feed from its head)
//! is what gate 27's mutations of that fix break. Seeds 0..12 drew no such
//! pair of events, so those mutations needed seed 74 to die.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing, only in worlds whose swarm has
//! [`FaultKind::PartialRestore`] and with probability [`LOST_SHARE`]: a
//! seed that does not draw it is the run it was before, and one that does
//! keeps every other event, time and app, with two events added at its
//! end (three, with a revision first for an item declared with one; before
//! a long provider outage's end, which stays last), each at no time of its
//! own, so right after the event before: as in seed 74, the
//! convergence rounds' first pull meets the lost revision, and no other
//! reconciliation of the run (an AHEAD's, a 410's) can bring the item in
//! first. Drawn in front of a question midway instead, it was healed by
//! such a re-announce in every world of 0..12 that drew it, and the
//! mutations of the fix survived there. The item is one
//! declared not team-visible (private, granted, link-shared or guest-only)
//! that no event deletes or restores partially (so every later event
//! still applies).

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{Event, RungDecl, SiblingDecl};

/// The share of worlds with partial restores that draw one lost revision.
pub const LOST_SHARE: f64 = 0.75;

/// Adds an upgrade (after a revision, for an item declared with one) and a
/// partial restore to `r1` of one item of `siblings` at the end of
/// `events` (which does not yet hold `expect-converged`), in
/// [`LOST_SHARE`] of the worlds whose `swarm` has partial restores.
/// Returns the item drawn, as `app:item`.
pub(super) fn add(
    seed: u64,
    swarm: &Swarm,
    siblings: &[SiblingDecl],
    events: &mut Vec<Event>,
) -> Option<String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6c6f_7374_7265_7673);
    if !swarm.0.iter().any(|(k, _)| *k == FaultKind::PartialRestore) || !rng.gen_bool(LOST_SHARE) {
        return None;
    }
    let touched = |app: &str, id: &str| {
        events.iter().any(|e| match e {
            Event::Delete { app: a, item, .. } | Event::PartialRestore { app: a, item, .. } => {
                a == app && item == id
            }
            _ => false,
        })
    };
    let items: Vec<(String, String, usize)> = siblings
        .iter()
        .flat_map(|s| {
            s.items
                .iter()
                .filter(|i| i.rung != RungDecl::Team)
                .map(|i| (s.app.clone(), i.id.clone(), i.revisions))
        })
        .filter(|(app, id, _)| !touched(app, id))
        .collect();
    let (app, item, revisions) = items.choose(&mut rng)?.clone();
    // Before a long provider outage's end, which `provider.rs` keeps last.
    let at = match events.last() {
        Some(Event::Provider { .. }) => events.len() - 1,
        _ => events.len(),
    };
    events.insert(
        at,
        Event::PartialRestore {
            at_ms: None,
            app: app.clone(),
            item: item.clone(),
            to: "r1".into(),
        },
    );
    events.insert(
        at,
        Event::Upgrade {
            at_ms: None,
            app: app.clone(),
            item: item.clone(),
        },
    );
    // One revision to lose: the upgrade's row names the last.
    if revisions < 2 {
        events.insert(
            at,
            Event::Revise {
                at_ms: None,
                app: app.clone(),
                item: item.clone(),
                words: None,
            },
        );
    }
    Some(format!("{app}:{item}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_worlds_with_partial_restores_draw_it_and_a_third_of_twelve_seeds_do() {
        let mut drawn = vec![];
        for seed in 0..12 {
            let x = super::super::generate(seed);
            let on = x
                .swarm
                .0
                .iter()
                .any(|(k, _)| *k == FaultKind::PartialRestore);
            let pairs = x.scenario.events.windows(2).filter(|w| {
                matches!(
                    (&w[0], &w[1]),
                    (
                        Event::Upgrade { at_ms: None, item: a, .. },
                        Event::PartialRestore { at_ms: None, item: b, to, .. },
                    ) if a == b && to == "r1"
                )
            });
            let n = pairs.count();
            assert!(n <= 1, "seed {seed}: {n} lost revisions");
            if n == 1 {
                assert!(
                    on,
                    "seed {seed}: drawn outside the swarm's partial restores"
                );
                drawn.push(seed);
            }
            let text = super::super::to_toml(&x.scenario).expect("writes");
            crate::scenario::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        assert!(drawn.len() >= 4, "seeds drawing a lost revision: {drawn:?}");
    }
}
