//! The explorer's new roster generation (issue 26, suite gate 5): in about half the suite-shape worlds the home starts a new generation, and an owner confirms it through the roster page's form, or never (§4.3).
//!
//! Drawn from a generator of its own (the seed under another constant),
//! only for a world in suite shape, and after every other drawing, so a
//! seed that does not draw it is the run it was before it existed. In
//! [`NEW_GENERATION_SHARE`] of those worlds ([`FaultKind::NewGeneration`])
//! one block of events is slipped in at a random place after the warm-up:
//!
//! 1. `roster-new-generation`: the home starts `gen-2`, listing each
//!    roster reader with a chance of [`LISTED_SHARE`] (so some kept, some
//!    dropped, and a reader the run removed before may come back: added);
//!    the clock then moves [`PULL_MS`], so memoria's roster loop (which
//!    sleeps `ROSTER_REFRESH_S` after a pull it adopted) pulls the new
//!    generation, and every roster reader asks a question: the copy held
//!    is the old generation's, still inside its TTL.
//! 2. In [`WITHIN_SHARE`] of them the home removes a member of the new
//!    generation while another stays listed, or else adds a roster reader
//!    it does not list (its epoch 2), and the clock moves [`RETRY_MS`] (the loop
//!    retries every `ROSTER_RETRY_S` while the generation waits), and in
//!    half of those a lagging replica then answers the new generation's
//!    epoch 1 for a retry or more: what waits must stay the newer epoch.
//! 3. In [`STALE_SHARE`] of them the clock moves [`STALE_MS`] past the TTL
//!    while the generation waits, the home answering it all along, or, in
//!    half, failing ([`DOWN_MODES`], half of them [`GARBAGE`]) from just
//!    before; the readers ask.
//! 4. In [`CONFIRM_SHARE`] of them the first reader, an owner, opens the
//!    roster page and confirms through its form (`roster-confirm`), and
//!    the readers ask at once; a home that failed through step 3 answers
//!    again only after it (the confirmed copy as old as the pull that
//!    brought it, so still stale), and a lagging replica's spell ends.
//! 5. In [`LAGGING_STALE_SHARE`] of the confirmations after a removal in
//!    the new generation, a lagging replica answers its older epoch for
//!    [`STALE_MS`] (behind the copy: no successful fetch), and the readers
//!    ask in it.
//!
//! `scenario`'s `roster.rs` judges it from the home's own record of its
//! pulls (`Possible`): a new generation refreshes nothing until an owner
//! confirms it, and is then enforced as it stands.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::Event;

/// The share of suite-shape worlds whose home starts a new generation.
pub const NEW_GENERATION_SHARE: f64 = 0.5;
/// The chance each roster reader is listed by the new generation.
const LISTED_SHARE: f64 = 0.6;
/// The share of new generations changed once at the home before an owner
/// confirms (a member removed: its epoch 2).
const WITHIN_SHARE: f64 = 0.6;
/// The share of those whose lagging replica then answers epoch 1.
const LAGGING_SHARE: f64 = 0.5;
/// The share of new generations that wait past the copy's TTL.
const STALE_SHARE: f64 = 0.5;
/// The share of those whose home fails while they wait.
const DOWN_SHARE: f64 = 0.5;
/// The share of new generations an owner confirms.
const CONFIRM_SHARE: f64 = 0.8;
/// The share of confirmed generations changed at the home before whose
/// lagging replica answers past the TTL after the confirmation.
const LAGGING_STALE_SHARE: f64 = 0.5;
/// How the home fails while a generation waits past the TTL
/// (`crate::fake::home::HomeFault`), besides [`GARBAGE`].
const DOWN_MODES: [&str; 3] = ["down", "refuse", "hang"];
/// The body the home answers in [`GARBAGE_SHARE`] of those spells: the
/// roster without its members, which a decoder that reads it as an empty
/// roster would hold pending, and an owner would confirm.
const GARBAGE: &str = "garbage-no-members";
/// The share of the home's failing spells that answer [`GARBAGE`].
const GARBAGE_SHARE: f64 = 0.5;
/// How far the clock moves for the roster loop to pull after a pull it
/// adopted, in simulated ms: `ROSTER_REFRESH_S` (300 s) and 5 s.
pub const PULL_MS: u64 = (memoria::ROSTER_REFRESH_S + 5) * 1_000;
/// How far the clock moves for the roster loop to pull again while a
/// generation waits (every pull fails), in simulated ms: `ROSTER_RETRY_S`
/// (30 s) and 5 s.
pub const RETRY_MS: u64 = (memoria::ROSTER_RETRY_S + 5) * 1_000;
/// How far the clock moves past the copy's TTL, in simulated ms:
/// `ROSTER_TTL_S` (900 s) and two minutes, as the home's stale spell.
pub const STALE_MS: u64 = super::home::STALE_SPELL_MS;
/// The roster readers who ask at each step of the block, at most.
const ASKED_MAX: usize = 4;
/// The questions each of them asks there, at most: tags of team-visible
/// items (`tags`), one item each.
const QUESTIONS_MAX: usize = 2;

/// Slips a new generation's block (module docs) into `events` (which
/// holds at least its opening event) on [`NEW_GENERATION_SHARE`] of the
/// seeds whose world is in suite shape (`home`), and
/// [`FaultKind::NewGeneration`] into the swarm. `readers` are the world's
/// readers, the first an owner; `tags`, those of the items every member
/// may see at the start, which the readers ask for. Returns whether it did.
pub(super) fn add(
    seed: u64,
    swarm: &mut Swarm,
    home: bool,
    readers: &[String],
    tags: &[String],
    events: &mut Vec<Event>,
) -> bool {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6e65_7767_656e_6572);
    let roster = readers.get(1..).unwrap_or_default();
    if !home || roster.is_empty() || !rng.gen_bool(NEW_GENERATION_SHARE) {
        return false;
    }
    swarm.0.push((FaultKind::NewGeneration, 1));
    let mut members: Vec<String> = roster
        .iter()
        .filter(|_| rng.gen_bool(LISTED_SHARE))
        .cloned()
        .collect();
    if members.is_empty()
        && let Some(r) = roster.choose(&mut rng)
    {
        members.push(r.clone());
    }
    let at = rng.gen_range(1..=events.len());
    // The questions: tags of items every member may see, so a reader the
    // copy admits finds something, else the last question asked.
    let mut qs: Vec<String> = tags
        .choose_multiple(&mut rng, QUESTIONS_MAX)
        .cloned()
        .collect();
    if qs.is_empty() {
        qs.extend(events[..at].iter().rev().find_map(|e| match e {
            Event::Query { q, .. } => Some(q.clone()),
            _ => None,
        }));
    }
    let ask = |block: &mut Vec<(u64, Event)>, by: u64| {
        let mut by = by;
        for reader in roster.iter().take(ASKED_MAX) {
            for q in &qs {
                block.push((
                    std::mem::take(&mut by),
                    Event::Query {
                        at_ms: None,
                        reader: reader.clone(),
                        q: q.clone(),
                        expect: None,
                        surface: None,
                    },
                ));
            }
        }
    };
    // Each event with how far the clock moves right before it.
    // A spell of the home's that straddles the block ends first.
    let mut block: Vec<(u64, Event)> = vec![
        (0, fault("none")),
        (
            0,
            Event::RosterNewGeneration {
                at_ms: None,
                members: members.clone(),
            },
        ),
    ];
    ask(&mut block, PULL_MS);
    // The change in the new generation: a member removed while another
    // stays listed, else a roster reader it does not list added.
    let unlisted: Vec<String> = roster
        .iter()
        .filter(|r| !members.contains(r))
        .cloned()
        .collect();
    let change = match (members.choose(&mut rng), unlisted.choose(&mut rng)) {
        (Some(x), _) if members.len() >= 2 => Some(Event::RosterRemove {
            at_ms: None,
            reader: x.clone(),
        }),
        (_, Some(y)) => Some(Event::RosterAdd {
            at_ms: None,
            reader: y.clone(),
        }),
        _ => None,
    };
    let within = rng.gen_bool(WITHIN_SHARE) && change.is_some();
    let mut lagging = false;
    if within && let Some(change) = change {
        block.push((0, change));
        ask(&mut block, RETRY_MS);
        if rng.gen_bool(LAGGING_SHARE) {
            lagging = true;
            block.push((0, fault("stale-epoch")));
            ask(&mut block, RETRY_MS);
        }
    }
    let stale = rng.gen_bool(STALE_SHARE);
    let down = stale && rng.gen_bool(DOWN_SHARE);
    if down {
        let mode = if rng.gen_bool(GARBAGE_SHARE) {
            GARBAGE
        } else {
            DOWN_MODES.choose(&mut rng).unwrap_or(&"down")
        };
        block.push((0, fault(mode)));
    }
    if stale {
        ask(&mut block, STALE_MS);
    }
    let confirm = rng.gen_bool(CONFIRM_SHARE);
    if confirm {
        block.push((0, Event::RosterConfirm { at_ms: None }));
        ask(&mut block, 0);
    }
    if down || lagging {
        block.push((0, fault("none")));
        ask(&mut block, RETRY_MS);
    }
    if confirm && within && rng.gen_bool(LAGGING_STALE_SHARE) {
        block.push((0, fault("stale-epoch")));
        ask(&mut block, STALE_MS);
        block.push((0, fault("none")));
    }
    // The block in place, each move of the clock kept by every later event.
    for (i, (by, e)) in block.into_iter().enumerate() {
        events.insert(at + i, e);
        if by > 0 {
            super::home::delay_from(events, at + i, by);
        }
    }
    true
}

fn fault(mode: &str) -> Event {
    Event::RosterFault {
        at_ms: None,
        mode: mode.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_suite_shape_world_draws_a_new_generation_and_some_confirm_it() {
        let (mut drawn, mut confirmed) = (0, 0);
        for seed in 0..120 {
            let x = super::super::generate(seed);
            let on = x
                .swarm
                .0
                .iter()
                .any(|(k, _)| *k == FaultKind::NewGeneration);
            let events = &x.scenario.events;
            let new = events
                .iter()
                .filter(|e| matches!(e, Event::RosterNewGeneration { .. }))
                .count();
            assert_eq!(new, usize::from(on), "seed {seed}");
            assert!(!on || x.scenario.home, "seed {seed}: lone shape");
            let times: Vec<u64> = events.iter().filter_map(Event::at_ms).collect();
            assert!(times.is_sorted(), "seed {seed}: the timeline runs back");
            drawn += usize::from(on);
            confirmed += usize::from(
                events
                    .iter()
                    .any(|e| matches!(e, Event::RosterConfirm { .. })),
            );
        }
        assert!(drawn > 0, "no seed of 120 drew a new generation");
        assert!(confirmed > 0, "no seed of 120 confirmed one");
    }

    /// The shapes of a block, by the order of its events: a removal in the
    /// new generation, a lagging replica, a clock past the TTL, a
    /// confirmation.
    fn shape(events: &[Event]) -> Option<String> {
        let start = events
            .iter()
            .position(|e| matches!(e, Event::RosterNewGeneration { .. }))?;
        let mut out = String::new();
        let mut last = events[..start]
            .iter()
            .rev()
            .find_map(Event::at_ms)
            .unwrap_or(0);
        for e in &events[start + 1..] {
            if let Some(t) = e.at_ms() {
                if t - last >= STALE_MS {
                    out.push('T');
                }
                last = t;
            }
            match e {
                Event::RosterRemove { .. } | Event::RosterAdd { .. } => out.push('r'),
                Event::RosterFault { mode, .. } if mode == "stale-epoch" => out.push('l'),
                Event::RosterFault { mode, .. } if mode == GARBAGE => out.push('g'),
                Event::RosterFault { mode, .. } if mode != "none" => out.push('d'),
                Event::RosterConfirm { .. } => out.push('C'),
                Event::Query { .. } | Event::RosterFault { .. } => {}
                _ => break,
            }
        }
        Some(out)
    }

    #[test]
    fn the_blocks_confirm_inside_the_ttl_past_it_and_before_a_lagging_spell() {
        let shapes: Vec<(u64, String)> = (0..400)
            .filter_map(|seed| Some((seed, shape(&super::super::generate(seed).scenario.events)?)))
            .collect();
        eprintln!("{shapes:?}");
        for (what, want) in [
            ("a removal then a confirmation inside the TTL", "rC"),
            ("a lagging replica then a confirmation", "rlC"),
            ("a confirmation past the TTL with the home failing", "dTC"),
            (
                "a confirmation past the TTL with the home answering no members",
                "gTC",
            ),
            ("a lagging spell past the TTL after a confirmation", "ClT"),
        ] {
            assert!(
                shapes.iter().any(|(_, s)| s.contains(want)),
                "no seed of 400 draws {what}"
            );
        }
    }
}
