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
//!
//! Two more draws, from a third generator, so the spells above are what
//! they were. [`LONG_OUTAGE_SHARE`] of the AI-on worlds end in a long
//! outage: the provider down or refusing for [`LONG_OUTAGE_S`], many of the
//! embedding loop's intervals (`memoria::EMBED_DRAIN_INTERVAL_S`), with an
//! upload queued in it, and in [`RESTART_IN_OUTAGE_SHARE`] of them memoria
//! restarted [`RESTART_IN_OUTAGE_MS`] into it, as the world restarts
//! memoria elsewhere (its canary then cannot be checked at wake, §8.2).
//! Nothing else happens until the provider answers, so only the loop's own
//! retries can drain the queue: a loop whose wait grows without a ceiling,
//! or one that never starts after a wake in an outage, is seen by
//! `[liveness:embeddings]`. And [`REFUSED_PASSAGE_SHARE`] of them upload
//! a document whose words the stub always refuses
//! ([`crate::fake::provider::REFUSED_MARKER`]), which must be set aside,
//! counted, and never block the rest of the queue (`app/queue.rs`).
//!
//! Last, from a fourth generator, so every event above is what it was:
//! [`RETRY_AFTER_SHARE`] of the rate-limited spells carry a `Retry-After`
//! on their 429s, [`LONG_RETRY_AFTER_SHARE`] of those far past memoria's
//! cap (`memoria::EMBED_RETRY_AFTER_MS_MAX`, 20 s), up to a day
//! ([`LONG_RETRY_AFTER_S`]), the rest inside it ([`SHORT_RETRY_AFTER_S`]).
//! A stall inside the run is hidden by any later restart or restore (a
//! new `serve` starts a new loop), so [`RETRY_AFTER_TAIL_SHARE`] of the
//! AI-on worlds that do not end in a long outage end instead in a
//! rate-limited spell whose `Retry-After` is an hour to a day
//! ([`TAIL_RETRY_AFTER_S`]), with an upload by the owner at once (the
//! ingest wakes the loop, so its drain, not a question's query, meets the
//! 429s) and nothing else until the provider answers again
//! [`TAIL_SPELL_MS`] later: a client that honoured the `Retry-After`
//! would still be asleep when `[liveness:embeddings]` reads the sources
//! page.

use std::ops::RangeInclusive;

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
/// The share of AI-on worlds that end in a long provider outage.
pub const LONG_OUTAGE_SHARE: f64 = 0.4;
/// How long a long outage lasts, in simulated seconds: six to twenty-five
/// of the embedding loop's 60 s intervals, so a wait doubled after each
/// failed drain outgrows `[liveness:embeddings]`'s three intervals.
pub const LONG_OUTAGE_S: RangeInclusive<u64> = 360..=1_500;
/// The share of long outages memoria restarts inside.
pub const RESTART_IN_OUTAGE_SHARE: f64 = 0.6;
/// When memoria restarts inside a long outage, in simulated ms after the
/// run's last event: well inside the outage, after its upload.
pub const RESTART_IN_OUTAGE_MS: u64 = 10_000;
/// The share of AI-on worlds that upload a passage the provider always
/// refuses.
pub const REFUSED_PASSAGE_SHARE: f64 = 0.35;
/// The share of rate-limited spells whose 429s carry a `Retry-After`.
pub const RETRY_AFTER_SHARE: f64 = 0.75;
/// The share of those whose `Retry-After` is past memoria's cap.
pub const LONG_RETRY_AFTER_SHARE: f64 = 0.5;
/// A `Retry-After` inside memoria's cap (`memoria::EMBED_RETRY_AFTER_MS_MAX`),
/// in seconds.
pub const SHORT_RETRY_AFTER_S: RangeInclusive<u64> = 1..=memoria::EMBED_RETRY_AFTER_MS_MAX / 1_000;
/// A `Retry-After` past it, in seconds: from five minutes (past
/// `[liveness:embeddings]`'s wait, three 60 s intervals and a deadline) to
/// a day.
pub const LONG_RETRY_AFTER_S: RangeInclusive<u64> = 300..=86_400;
/// The share of AI-on worlds without a long outage that end in a
/// rate-limited spell with a long `Retry-After`.
pub const RETRY_AFTER_TAIL_SHARE: f64 = 0.5;
/// That spell's `Retry-After`, in seconds: an hour to a day, past the
/// liveness check's whole wait however long its quiet period.
pub const TAIL_RETRY_AFTER_S: RangeInclusive<u64> = 3_600..=86_400;
/// How long that spell lasts before the provider answers every call
/// again, in simulated ms: past the drain's three capped waits (the 429s
/// are three, `crate::scenario::PROVIDER_RATE_LIMITED_CALLS`), so the
/// drain meets them before the liveness check clears the faults.
pub const TAIL_SPELL_MS: u64 = 120_000;
/// The failures a long outage draws from: no answer at all.
const OUTAGE: [ProviderState; 2] = [ProviderState::Down, ProviderState::Refused];

/// The failures a spell draws from.
const FAILING: [ProviderState; 4] = [
    ProviderState::Down,
    ProviderState::Refused,
    ProviderState::Slow,
    ProviderState::RateLimited,
];

/// Turns AI on for [`AI_SHARE`] of the seeds, and for most of those adds
/// spells of a failing provider to `events` (which holds at least its
/// opening event) and [`FaultKind::Provider`] to the swarm; for some, a
/// long outage at the end and a refused passage uploaded by `owner`
/// (module doc). Returns whether AI is on.
pub(super) fn add(seed: u64, swarm: &mut Swarm, events: &mut Vec<Event>, owner: &str) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7072_6f76_6964_6572);
    if !rng.gen_bool(AI_SHARE) {
        return false;
    }
    if rng.gen_bool(SPELLS_SHARE) {
        spells(&mut rng, swarm, events);
    }
    let mut more = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6c6f_6e67_6f75_7421);
    if more.gen_bool(REFUSED_PASSAGE_SHARE) {
        let at = more.gen_range(1..=events.len());
        events.insert(
            at,
            Event::Upload {
                at_ms: None,
                reader: owner.to_string(),
                doc: "uprefused".into(),
                words: format!("quarantined {}", crate::fake::provider::REFUSED_MARKER),
                sections: None,
            },
        );
    }
    let long = more.gen_bool(LONG_OUTAGE_SHARE);
    if long {
        long_outage(&mut more, swarm, events, owner);
    }
    retry_after(seed, swarm, events, owner, !long);
    true
}

/// Gives some rate-limited spells a `Retry-After`, and when `tail` (no
/// long outage ends the run) perhaps ends the run in a rate-limited spell
/// with a long one and an upload (module doc); from a generator of their
/// own, so nothing else drawn changes.
fn retry_after(seed: u64, swarm: &mut Swarm, events: &mut Vec<Event>, owner: &str, tail: bool) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7265_7472_7961_6674);
    for e in events.iter_mut() {
        if let Event::Provider {
            state: ProviderState::RateLimited,
            retry_after_s,
            ..
        } = e
            && rng.gen_bool(RETRY_AFTER_SHARE)
        {
            *retry_after_s = Some(if rng.gen_bool(LONG_RETRY_AFTER_SHARE) {
                rng.gen_range(LONG_RETRY_AFTER_S)
            } else {
                rng.gen_range(SHORT_RETRY_AFTER_S)
            });
        }
    }
    if tail && rng.gen_bool(RETRY_AFTER_TAIL_SHARE) {
        let last = events.iter().filter_map(Event::at_ms).max().unwrap_or(0);
        if !swarm.0.iter().any(|(k, _)| *k == FaultKind::Provider) {
            swarm.0.push((FaultKind::Provider, 1));
        }
        events.push(Event::Provider {
            at_ms: None,
            state: ProviderState::RateLimited,
            retry_after_s: Some(rng.gen_range(TAIL_RETRY_AFTER_S)),
        });
        events.push(Event::Upload {
            at_ms: None,
            reader: owner.to_string(),
            doc: "upretry".into(),
            words: "tarried".into(),
            sections: None,
        });
        events.push(Event::Provider {
            at_ms: Some(last + TAIL_SPELL_MS),
            state: ProviderState::Answering,
            retry_after_s: None,
        });
    }
}

/// A long outage after the run's last event (module doc): the provider
/// fails, the owner uploads, memoria perhaps restarts, and the provider
/// answers again [`LONG_OUTAGE_S`] later.
fn long_outage(
    rng: &mut rand::rngs::StdRng,
    swarm: &mut Swarm,
    events: &mut Vec<Event>,
    owner: &str,
) {
    if !swarm.0.iter().any(|(k, _)| *k == FaultKind::Provider) {
        swarm.0.push((FaultKind::Provider, 1));
    }
    let last = events.iter().filter_map(Event::at_ms).max().unwrap_or(0);
    let state = *OUTAGE.choose(rng).unwrap_or(&ProviderState::Down);
    let lasts_ms = rng.gen_range(LONG_OUTAGE_S) * 1_000;
    events.push(Event::Provider {
        at_ms: None,
        state,
        retry_after_s: None,
    });
    events.push(Event::Upload {
        at_ms: None,
        reader: owner.to_string(),
        doc: "upoutage".into(),
        words: "outlasted".into(),
        sections: None,
    });
    if rng.gen_bool(RESTART_IN_OUTAGE_SHARE) {
        events.push(Event::Restart {
            at_ms: Some(last + RESTART_IN_OUTAGE_MS),
        });
    }
    events.push(Event::Provider {
        at_ms: Some(last + lasts_ms),
        state: ProviderState::Answering,
        retry_after_s: None,
    });
}

/// One to three spells of a failing provider, between the run's events.
fn spells(rng: &mut rand::rngs::StdRng, swarm: &mut Swarm, events: &mut Vec<Event>) {
    let weight = rng.gen_range(1..=3u32);
    swarm.0.push((FaultKind::Provider, weight));
    for _ in 0..weight {
        let state = *FAILING.choose(rng).unwrap_or(&ProviderState::Down);
        let at = rng.gen_range(1..=events.len());
        events.insert(
            at,
            Event::Provider {
                at_ms: None,
                state,
                retry_after_s: None,
            },
        );
        if rng.gen_bool(ANSWERING_SHARE) {
            let end = rng.gen_range(at + 1..=(at + SPELL_EVENTS_MAX).min(events.len()));
            events.insert(
                end,
                Event::Provider {
                    at_ms: None,
                    state: ProviderState::Answering,
                    retry_after_s: None,
                },
            );
        }
    }
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

    #[test]
    fn of_eighty_seeds_some_rate_limited_spells_carry_a_retry_after_past_the_cap_some_inside_it_and_some_runs_end_in_one()
     {
        let cap_s = memoria::EMBED_RETRY_AFTER_MS_MAX / 1_000;
        let (mut none, mut short, mut long, mut tails) = (0, 0, 0, 0);
        for seed in 0..80 {
            let events = super::super::generate(seed).scenario.events;
            // A tail: the run's last four events are the spell, the
            // upload, the provider answering and the liveness check.
            if let [
                Event::Provider {
                    state: ProviderState::RateLimited,
                    retry_after_s: Some(s),
                    ..
                },
                Event::Upload { .. },
                Event::Provider {
                    state: ProviderState::Answering,
                    ..
                },
                Event::ExpectConverged { .. },
            ] = &events[events.len() - 4..]
            {
                assert!(
                    TAIL_RETRY_AFTER_S.contains(s),
                    "seed {seed}: a tail of {s} s"
                );
                tails += 1;
            }
            for e in events {
                match e {
                    Event::Provider {
                        state: ProviderState::RateLimited,
                        retry_after_s,
                        ..
                    } => match retry_after_s {
                        None => none += 1,
                        Some(s) if s <= cap_s => short += 1,
                        Some(_) => long += 1,
                    },
                    Event::Provider { retry_after_s, .. } => {
                        assert_eq!(retry_after_s, None, "seed {seed}: only a 429 says when")
                    }
                    _ => {}
                }
            }
        }
        assert!(
            none > 0 && short > 0 && long > 0 && tails > 0,
            "of 80 seeds' rate-limited spells, {none} without a Retry-After, {short} inside the {cap_s} s cap, {long} past it; {tails} runs end in one"
        );
    }

    #[test]
    fn of_eighty_seeds_some_ai_on_worlds_end_in_a_long_outage_some_restart_in_it_and_some_upload_a_refused_passage()
     {
        let (mut long, mut restarted, mut refused) = (0, 0, 0);
        for seed in 0..80 {
            let x = super::super::generate(seed);
            let events = &x.scenario.events;
            let refuses = events.iter().any(|e| {
                matches!(e, Event::Upload { words, .. } if words.contains(crate::fake::provider::REFUSED_MARKER))
            });
            // A long outage's end is the one provider event with a time
            // in a run that uploads into one.
            let outage = events
                .iter()
                .any(|e| matches!(e, Event::Upload { doc, .. } if doc == "upoutage"));
            let end = events.iter().position(|e| {
                matches!(
                    e,
                    Event::Provider {
                        at_ms: Some(_),
                        state: ProviderState::Answering,
                        ..
                    }
                )
            });
            assert!(
                x.scenario.ai || (!refuses && end.is_none()),
                "seed {seed}: drawn with AI off"
            );
            refused += usize::from(refuses);
            if let (true, Some(end)) = (outage, end) {
                long += 1;
                // Nothing between the outage's end and the liveness check.
                assert!(
                    matches!(events.get(end + 1), Some(Event::ExpectConverged { .. })),
                    "seed {seed}: the long outage is not the run's end"
                );
                restarted += usize::from(matches!(events[end - 1], Event::Restart { .. }));
            }
        }
        assert!(
            long > 0 && restarted > 0 && restarted < long && refused > 0,
            "of 80 seeds, {long} long outages, {restarted} with a restart in them, {refused} refused passages"
        );
    }
}
