//! The explorer's explained 404s (issue 26, gate 27): in [`EXPLAINED_SHARE`] of the worlds that draw no lost revision, one sibling gets two new items whose feed rows name revisions S3 404s and later rows explain, an announce that never closes, and a member's questions while it stands.
//!
//! `[safety:reconciling-cause]` (`crate::scenario`'s `reconciling_cause.rs`)
//! rejects a page naming a source reconciling for a 404 a later feed row
//! explains, but no drawn world asked a page while such a mark stood: a
//! needless mark was re-announced, and the announce completed, inside the
//! pull that made it. Here gate 27's `27/later-row-explains-a-404` shape
//! is on the feed before memoria pulls: the moved item's `r2`, lost to a
//! partial restore, then its `r3`; the leaving item's `r1` and `r2`, then
//! its `gone` row (downgraded to granted, so S3 404s both). The sibling's
//! announces then lack their close marker ([`FaultDecl::AnnounceNoClose`],
//! §4.1 rule 2), so a mark memoria makes for those 404s stands into the
//! next question's page. memoria reading the feed as the reference does
//! (§4.1, §6.1; the spec is silent on a 404 of a revision the feed named,
//! the reading is `reference/src/sibling/sync.rs`'s) marks nothing. In half
//! of them the feed is in pages of one row and the page past the 404s
//! fails once ([`FaultDecl::FeedPages`], gate 27's
//! `27/lost-feed-revision-survives-a-failed-page`): a pass that failed
//! marks nothing, whatever its 404s, since rows it never read explain them.
//!
//! The sibling is the one the run's faults touched least (a cause a fault
//! shaped, a malformed S2 answer, is never spent, and hides a needless
//! mark); its faults are cleared first. The questions come [`ASK_GAP_MS`]
//! apart, more than `memoria::sibling::pull`'s least interval between
//! pulls and its first backoff, so each may start a pull and the later
//! ones see what the earlier ones' pulls left.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing, only in worlds where [`super::lost_revision`]
//! drew nothing (so its pair stays the convergence rounds' first pull's):
//! a seed that does not draw it is the run it was, and one that does keeps
//! every other event, with this block added at its end (before a long
//! provider outage's end, which stays last) and
//! [`FaultKind::ExplainedFeed`] in its swarm.

use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm, tag};
use crate::scenario::{Event, FaultDecl};

/// The share of worlds without a lost revision that draw the block.
pub const EXPLAINED_SHARE: f64 = 0.5;
/// Simulated ms between the block's questions: past the reference's least
/// interval between two pulls a question starts
/// ([`memoria::S1_PULL_INTERVAL_MIN_S`], 5 s) and its first backoff after
/// a failed one (twice that, 10 s), `memoria::sibling::pull`.
pub const ASK_GAP_MS: u64 = 12_000;
const _: () = assert!(ASK_GAP_MS > 2 * 1_000 * memoria::S1_PULL_INTERVAL_MIN_S.unsigned_abs());
/// Questions asked after the block's rows, each [`ASK_GAP_MS`] apart.
pub const ASKS: u64 = 4;
/// The share of blocks whose feed is in pages of one row, the page past
/// the 404s failing once (module docs).
pub const FAILED_PAGE_SHARE: f64 = 0.5;

/// Adds the block (module docs) at the end of `events` (which does not
/// yet hold `expect-converged`) in [`EXPLAINED_SHARE`] of the worlds where
/// `lost` is `None`, at the sibling of `apps` whose faults `events` touch
/// least, its questions asked by `member`; adds [`FaultKind::ExplainedFeed`]
/// to `swarm` when it does. Returns the sibling drawn.
pub(super) fn add(
    seed: u64,
    swarm: &mut Swarm,
    lost: Option<&str>,
    apps: &[String],
    member: &str,
    events: &mut Vec<Event>,
) -> Option<String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6578_706c_6169_6e34);
    if lost.is_some() || !rng.gen_bool(EXPLAINED_SHARE) {
        return None;
    }
    let faults = |app: &str| {
        events
            .iter()
            .filter(|e| matches!(e, Event::Fault { app: a, .. } if a == app))
            .count()
    };
    let app = apps.iter().min_by_key(|a| faults(a))?.clone();
    let fail_page = rng.gen_bool(FAILED_PAGE_SHARE);
    // Before a long provider outage's end, which `provider.rs` keeps last.
    let at = match events.last() {
        Some(Event::Provider { .. }) => events.len() - 1,
        _ => events.len(),
    };
    // After every event before it: inside a long provider outage (at
    // least 360 s past the events before it, `provider.rs`) the block's
    // minute ends before the outage does, and the timeline runs forward.
    let t0 = events[..at]
        .iter()
        .filter_map(Event::at_ms)
        .max()
        .unwrap_or(0)
        + ASK_GAP_MS;
    let short = &app[..2.min(app.len())];
    let (moved, leaving) = (format!("{short}-moved"), format!("{short}-leaving"));
    let on = |fault: FaultDecl| Event::Fault {
        at_ms: None,
        app: app.clone(),
        fault,
    };
    let revise = |item: &str| Event::Revise {
        at_ms: None,
        app: app.clone(),
        item: item.to_string(),
        words: None,
    };
    let mut block = vec![Event::Clear {
        at_ms: Some(t0),
        app: app.clone(),
    }];
    for item in [&moved, &leaving] {
        block.push(Event::Create {
            at_ms: None,
            app: app.clone(),
            item: item.clone(),
            words: format!("ledger {}", tag(item)),
        });
        block.push(revise(item));
    }
    block.push(Event::PartialRestore {
        at_ms: None,
        app: app.clone(),
        item: moved.clone(),
        to: "r1".into(),
    });
    if fail_page {
        // The page past the leaving item's `r2` row answers 503 once.
        block.push(on(FaultDecl::FeedPages {
            rows: 1,
            fail_next: true,
        }));
    }
    // The rows that explain the 404s: the moved item's r3, the leaving
    // item's gone row.
    block.push(revise(&moved));
    block.push(Event::Downgrade {
        at_ms: None,
        app: app.clone(),
        item: leaving.clone(),
        to: vec![member.to_string()],
    });
    block.push(on(FaultDecl::AnnounceNoClose));
    for k in 1..=ASKS {
        block.push(Event::Query {
            at_ms: Some(t0 + k * ASK_GAP_MS),
            reader: member.to_string(),
            q: tag(&moved),
            expect: None,
            surface: None,
        });
    }
    for (k, e) in block.into_iter().enumerate() {
        events.insert(at + k, e);
    }
    swarm
        .0
        .push((FaultKind::ExplainedFeed, rng.gen_range(1..=4)));
    Some(app)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_worlds_without_a_lost_revision_draw_it_and_its_rows_come_before_its_questions() {
        let mut drawn = vec![];
        for seed in 0..60 {
            let x = super::super::generate(seed);
            let on = x
                .swarm
                .0
                .iter()
                .any(|(k, _)| *k == FaultKind::ExplainedFeed);
            let lost = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::FeedMidRead)
                || x.scenario.events.windows(2).any(|w| {
                    matches!(
                        (&w[0], &w[1]),
                        (
                            Event::Upgrade { at_ms: None, item: a, .. },
                            Event::PartialRestore { at_ms: None, item: b, .. },
                        ) if a == b
                    )
                });
            let at = |id: &str| {
                x.scenario
                    .events
                    .iter()
                    .position(|e| matches!(e, Event::Create { item, .. } if item.ends_with(id)))
            };
            assert_eq!(
                on,
                at("-moved").is_some() && at("-leaving").is_some(),
                "seed {seed}: the swarm says what was drawn"
            );
            if on {
                assert!(!lost, "seed {seed}: drawn beside a lost revision");
                let first = at("-moved").unwrap_or_default();
                let asks: Vec<u64> = x.scenario.events[first..]
                    .iter()
                    .filter(|e| matches!(e, Event::Query { .. }))
                    .filter_map(Event::at_ms)
                    .collect();
                assert_eq!(asks.len() as u64, ASKS, "seed {seed}: {asks:?}");
                let times: Vec<u64> = x.scenario.events.iter().filter_map(Event::at_ms).collect();
                assert!(times.is_sorted(), "seed {seed}: the timeline runs back");
                assert!(
                    asks.windows(2).all(|w| w[1] == w[0] + ASK_GAP_MS),
                    "seed {seed}: {asks:?}"
                );
                drawn.push(seed);
            }
            let text = super::super::to_toml(&x.scenario).expect("writes");
            crate::scenario::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        assert!(
            drawn.iter().filter(|s| **s < 12).count() >= 3,
            "seeds drawing explained 404s: {drawn:?}"
        );
    }
}
