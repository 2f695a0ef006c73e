//! The explorer's feed that fails mid-read (issue 26, gate 27): in two thirds of the worlds that draw a lost feed revision ([`super::lost_revision`]), the sibling's S1 pages hold one or two rows, a new item's row follows the one naming the lost revision, and the page after that row may answer 503 once.
//!
//! The lost revision's row is then on a page with more behind it, and
//! with `fail-next` the pull that meets it fails on a later page: memoria
//! must mark nothing (rows it never read might explain the 404), hold its
//! cursor before the row, and meet it again at the next pull (gate 27's
//! `27/lost-feed-revision-survives-a-failed-page`). In half of them S3
//! also fails once for the item's `r1`, the revision the restore kept: the
//! re-announce that follows meets a refetch failing and must leave the
//! mark standing (`27/refetch-failure-keeps-the-mark`). Both failures are
//! one-shots the convergence rounds do not switch off: as for the lost
//! revision, their pulls meet them (the first fails, the second marks and
//! its refetch fails, the third completes), so the item is found by the
//! rounds' end only if memoria held its cursor and its mark.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing, only where the lost revision was drawn: a
//! seed that does not draw it is the run it was, and one that does keeps
//! every other event, with [`FaultKind::FeedMidRead`] added to its swarm.

use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm, tag};
use crate::scenario::{Event, FaultDecl};

/// The share of worlds with a lost revision whose feed fails mid-read.
pub const FEED_SHARE: f64 = 2.0 / 3.0;

/// After the lost revision `lost` (`app:item`, as [`super::lost_revision`]
/// returns it) in `events`, adds small feed pages (maybe failing once past
/// the head), maybe S3 failing once for the item's `r1`, and a new item's
/// row, in [`FEED_SHARE`] of the worlds; adds [`FaultKind::FeedMidRead`]
/// to `swarm` when it does. Returns whether it did.
pub(super) fn add(
    seed: u64,
    swarm: &mut Swarm,
    lost: Option<&str>,
    events: &mut Vec<Event>,
) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6665_6564_7061_6765);
    let Some((app, item)) = lost.and_then(|l| l.split_once(':')) else {
        return false;
    };
    if !rng.gen_bool(FEED_SHARE) {
        return false;
    }
    let Some(at) = events.iter().position(|e| {
        matches!(e, Event::PartialRestore { at_ms: None, app: a, item: i, .. } if a == app && i == item)
    }) else {
        return false;
    };
    let rows = rng.gen_range(1..=2);
    let fail_next = rng.gen_bool(0.75);
    let refetch_fails = rng.gen_bool(0.5);
    let id = format!("{}-feedrow", &app[..2.min(app.len())]);
    let mut block = vec![
        Event::Fault {
            at_ms: None,
            app: app.to_string(),
            fault: FaultDecl::FeedPages { rows, fail_next },
        },
        Event::Create {
            at_ms: None,
            app: app.to_string(),
            item: id.clone(),
            words: format!("ledger {}", tag(&id)),
        },
    ];
    if refetch_fails {
        // The re-announce's refetch of the revision the restore kept.
        block.insert(
            1,
            Event::Fault {
                at_ms: None,
                app: app.to_string(),
                fault: FaultDecl::S3FailsOnce {
                    item: item.to_string(),
                    revision: "r1".into(),
                },
            },
        );
    }
    for (k, e) in block.into_iter().enumerate() {
        events.insert(at + 1 + k, e);
    }
    swarm.0.push((FaultKind::FeedMidRead, rng.gen_range(1..=4)));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_worlds_with_a_lost_revision_draw_it_and_it_follows_the_lost_pair() {
        let mut drawn = vec![];
        for seed in 0..24 {
            let x = super::super::generate(seed);
            let on = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::FeedMidRead);
            if x.swarm
                .0
                .iter()
                .any(|(k, _)| *k == FaultKind::ExplainedFeed)
            {
                // `explained_404.rs`'s one-row pages, never beside a lost
                // revision: judged by its own test.
                assert!(!on, "seed {seed}: both drawn");
                continue;
            }
            let at = x.scenario.events.iter().position(|e| {
                matches!(
                    e,
                    Event::Fault {
                        fault: FaultDecl::FeedPages { .. },
                        ..
                    }
                )
            });
            assert_eq!(
                on,
                at.is_some(),
                "seed {seed}: the swarm says what was drawn"
            );
            if let Some(at) = at {
                assert!(
                    matches!(
                        x.scenario.events.get(at - 1),
                        Some(Event::PartialRestore { at_ms: None, .. })
                    ),
                    "seed {seed}: right after the lost pair"
                );
                drawn.push(seed);
            }
            let text = super::super::to_toml(&x.scenario).expect("writes");
            crate::scenario::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        assert!(
            !drawn.is_empty(),
            "no seed of 0..24 drew a feed failing mid-read"
        );
    }
}
