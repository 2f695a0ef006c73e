//! The explorer's later malformed S2 shapes (issue 26, gate 6): half the `malformed-s2` faults a run draws send one of the decoder cases the first draw lacks, a 2xx other than 200, the subject kind in capitals, or a pair answered twice with one value.
//!
//! The first draw (`explore.rs`'s `MALFORMED`) knows ten shapes of the
//! fake's; the contract's decoder cases (`s2-decoder-cases.json`, §6.5's
//! total decoder) have three more the fake now sends
//! (`crate::fake::faults::MalformedS2`): a well-formed body under `203`
//! (only 200 is an answer), `"subject_kind":"ADDRESS"` (not the kind
//! asked), and the first result repeated with its own value (a duplicate
//! is UNKNOWN whatever it says). Each `malformed-s2` fault of the run
//! becomes one of them with probability [`LATER_SHAPE_SHARE`], drawn from
//! a generator of its own (the seed under another constant) after every
//! other drawing: a seed whose swarm lacks malformed S2 is the run it was
//! before, and one that has it keeps every event, time and app, only some
//! shapes changed.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use crate::scenario::{Event, FaultDecl};

/// The share of a run's malformed S2 faults drawn again among [`LATER`].
pub const LATER_SHAPE_SHARE: f64 = 0.5;
/// The shapes the first draw lacks (`validate.rs`'s names).
pub const LATER: [&str; 3] = ["status-203", "kind-capitals", "duplicate-same-value"];

/// Redraws [`LATER_SHAPE_SHARE`] of the `malformed-s2` faults of `events`
/// among [`LATER`].
pub(super) fn add(seed: u64, events: &mut [Event]) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7332_7368_6170_6573);
    for e in events {
        if let Event::Fault {
            fault: FaultDecl::MalformedS2 { shape },
            ..
        } = e
            && rng.gen_bool(LATER_SHAPE_SHARE)
        {
            *shape = LATER.choose(&mut rng).copied().unwrap_or(LATER[0]).into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::FaultKind;
    use super::*;

    #[test]
    fn only_malformed_s2_faults_are_redrawn_and_every_later_shape_is_drawn_within_forty_seeds() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let on = x.swarm.0.iter().any(|(k, _)| *k == FaultKind::Malformed);
            for e in &x.scenario.events {
                if let Event::Fault {
                    fault: FaultDecl::MalformedS2 { shape },
                    ..
                } = e
                {
                    assert!(on, "seed {seed}: a malformed S2 fault outside the swarm");
                    if LATER.contains(&shape.as_str()) {
                        seen.insert(shape.clone());
                    }
                }
            }
            // The file the shrinker writes carries the shapes, and the
            // fake knows each.
            let text = super::super::to_toml(&x.scenario).expect("writes");
            crate::scenario::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        assert_eq!(seen.len(), LATER.len(), "later shapes drawn: {seen:?}");
    }
}
