//! Shrinking: drop events from a failing scenario while it still fails the same way, to the smallest timeline that shows the failure.

use super::parse::{Scenario, ScenarioError};
use super::replay::{Replay, replay};

/// What shrinking a scenario found.
#[derive(Debug, Clone)]
pub enum Shrunk {
    /// Every expectation held: there is no failure to shrink.
    Passes(Replay),
    /// The smallest timeline found that still fails the same way.
    Failing {
        /// The replay of the whole file: the failure as it first happened.
        original: Box<Replay>,
        /// The file with only the events the failure needs.
        minimal: Box<Scenario>,
        /// The replay of `minimal`; each entry's `index` is the event's
        /// index in the original file.
        replay: Replay,
        /// For each of `minimal`'s events, its index in the original file.
        kept: Vec<usize>,
    },
}

/// Drops events while the first failure persists and returns the smallest
/// scenario found that still fails the same way (greedy, one event at a
/// time, to a fixed point). The failing expectation itself is kept. A
/// scenario that passes is [`Shrunk::Passes`]: nothing is dropped.
///
/// # Errors
/// As [`replay`].
pub fn shrink(s: &Scenario, seed: Option<u64>) -> Result<Shrunk, ScenarioError> {
    let first = replay(s, seed)?;
    let Some(target) = failure_key(s, &first) else {
        return Ok(Shrunk::Passes(first));
    };
    let original = first.clone();
    let mut best = s.clone();
    let mut kept: Vec<usize> = (0..s.events.len()).collect();
    let mut best_replay = first;
    loop {
        let mut shrunk = false;
        let mut i = 0;
        while i < best.events.len() {
            let keeps_target = failure_key(&best, &best_replay).is_some_and(|(idx, _)| idx != i);
            if !keeps_target {
                i += 1;
                continue;
            }
            let mut candidate = best.clone();
            candidate.events.remove(i);
            let r = replay(&candidate, seed)?;
            if failure_key(&candidate, &r).is_some_and(|(_, e)| e == target.1) {
                best = candidate;
                best_replay = r;
                kept.remove(i);
                shrunk = true;
            } else {
                i += 1;
            }
        }
        if !shrunk {
            for e in &mut best_replay.entries {
                e.index = kept.get(e.index).copied().unwrap_or(e.index);
            }
            return Ok(Shrunk::Failing {
                original: Box::new(original),
                minimal: Box::new(best),
                replay: best_replay,
                kept,
            });
        }
    }
}

/// The first failure as (event index, its expectation text), for shrinking.
fn failure_key(s: &Scenario, r: &Replay) -> Option<(usize, String)> {
    if let Some(err) = &r.error {
        return Some((s.events.len(), format!("the simulation fails: {err}")));
    }
    r.failures()
        .first()
        .map(|(idx, c)| (*idx, c.expected.clone()))
}
