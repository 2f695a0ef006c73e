//! The organisation's own read: six scored terms, scope proximity, the candidate list of 32, and the second read's seats (`brief-organisation-read.md` §1-§3).
//!
//! Every term is a function of the query and the memory alone, and none is
//! scaled against the other results of its read (§3), so the top of the
//! combined read and the top of the organisation's own read are on the same
//! footing and one bar, [`SEAT_BAR_FRACTION`] of the combined top, judges
//! both.

use serde::Serialize;

/// Weight of similarity of meaning (§1).
pub const WEIGHT_MEANING: f64 = 0.55;
/// Weight of shared words (§1).
pub const WEIGHT_WORDS: f64 = 0.17;
/// Weight of recency (§1).
pub const WEIGHT_RECENCY: f64 = 0.06;
/// Weight of the layer's standing (§1).
pub const WEIGHT_LAYER: f64 = 0.05;
/// Weight of scope proximity (§1).
pub const WEIGHT_SCOPE: f64 = 0.09;
/// Weight of the part of the project a memory came from (§1).
pub const WEIGHT_PATH: f64 = 0.08;

/// Scope proximity of the scope the agent works in (§1: "the repository 1.0").
pub const PROXIMITY_OWN: f64 = 1.0;
/// Scope proximity of the team, when named (§1: "sits between at 0.5").
pub const PROXIMITY_TEAM: f64 = 0.5;
/// Scope proximity of the organisation in a read from a project (§1: 0.0).
pub const PROXIMITY_ORGANISATION: f64 = 0.0;

/// The candidate list of the combined read (§2: "raised from 16 to 32").
pub const CANDIDATES_MAX: usize = 32;
/// How deep the organisation's own read goes (§3: "four candidates deep").
pub const ORGANISATION_READ_K: usize = 4;
/// The bar an organisation hit must clear, as a fraction of the combined
/// read's top score (§2: "within 85% of the top score"; §4: "a chosen
/// setting, not a measured optimum").
pub const SEAT_BAR_FRACTION: f64 = 0.85;
/// The brief's places, from 1, the seated organisation hits take (§2:
/// "moved to second and fourth place").
pub const SEAT_PLACES: [usize; 2] = [2, 4];

/// The six terms of one memory against one query, each in `[0, 1]` (§1).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Terms {
    /// Similarity of meaning: the dense cosine, clamped at 0; 0 with AI off.
    pub meaning: f64,
    /// Shared words: the share of the query's content tokens the memory
    /// holds, read under its document's title and section (`terms_of`).
    pub words: f64,
    /// Recency: halves every `RECENCY_HALF_LIFE_DAYS`.
    pub recency: f64,
    /// The standing of the layer it sits in.
    pub layer: f64,
    /// Scope proximity, for this read.
    pub scope: f64,
    /// The share of the query's content tokens its path holds.
    pub path: f64,
}

impl Terms {
    /// The weighted sum (§1): `0.55 meaning + 0.17 words + 0.06 recency +
    /// 0.05 layer + 0.09 scope + 0.08 path`.
    pub fn score(&self) -> f64 {
        WEIGHT_MEANING * self.meaning
            + WEIGHT_WORDS * self.words
            + WEIGHT_RECENCY * self.recency
            + WEIGHT_LAYER * self.layer
            + WEIGHT_SCOPE * self.scope
            + WEIGHT_PATH * self.path
    }
}

/// One scored candidate of a read: an index into the caller's blocks and its score.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Scored {
    /// The caller's block index.
    pub block: usize,
    /// Its score in this read.
    pub score: f64,
}

/// The `k` best of `scored`, best first; ties go to the lower block index,
/// so a read is deterministic.
pub fn top(mut scored: Vec<Scored>, k: usize) -> Vec<Scored> {
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.block.cmp(&b.block)));
    scored.truncate(k);
    scored
}

/// Where one place of the brief's order came from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Seat {
    /// The combined read's own order.
    Read,
    /// A seat for the organisation, won in its own read (§3).
    Organisation,
}

/// The brief's order: the combined read with the organisation's best hits
/// seated at [`SEAT_PLACES`] (§2-§3).
///
/// `combined` is the combined read's top [`CANDIDATES_MAX`], best first;
/// `organisation` the organisation read's top [`ORGANISATION_READ_K`], best
/// first, scored with the organisation as the nearest scope. An
/// organisation hit is seated when its score in **its own read** is at
/// least [`SEAT_BAR_FRACTION`] of the combined top; the best two across
/// both pools take the seats, and one that also made the combined list is
/// judged by its organisation-read score and leaves its place there
/// (§3: "reaching the list can never make a memory harder to seat").
/// `is_organisation` tells which blocks are the organisation's.
///
/// Returns `(block, score, seat)` in brief order; each block once.
pub fn seat(
    combined: &[Scored],
    organisation: &[Scored],
    is_organisation: impl Fn(usize) -> bool,
) -> Vec<(usize, f64, Seat)> {
    let Some(top_score) = combined.first().map(|s| s.score) else {
        return organisation
            .iter()
            .map(|s| (s.block, s.score, Seat::Organisation))
            .collect();
    };
    let bar = SEAT_BAR_FRACTION * top_score;
    let mut seated: Vec<Scored> = organisation
        .iter()
        .filter(|s| is_organisation(s.block) && s.score >= bar)
        .copied()
        .collect();
    seated.truncate(SEAT_PLACES.len());
    let mut rest: Vec<(usize, f64, Seat)> = combined
        .iter()
        .filter(|c| !seated.iter().any(|s| s.block == c.block))
        .map(|c| (c.block, c.score, Seat::Read))
        .collect();
    for (s, place) in seated.iter().zip(SEAT_PLACES) {
        let at = (place - 1).min(rest.len());
        rest.insert(at, (s.block, s.score, Seat::Organisation));
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weights_sum_to_one() {
        let all = Terms {
            meaning: 1.0,
            words: 1.0,
            recency: 1.0,
            layer: 1.0,
            scope: 1.0,
            path: 1.0,
        };
        assert!((all.score() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn the_papers_first_prompt_seats_two_organisation_memories_at_two_and_four() {
        // §2: the combined read's 32 repository candidates, 0.578 … 0.539;
        // the organisation read 0.541, 0.495, 0.485, 0.459; bar 0.491.
        let combined: Vec<Scored> = (0..32)
            .map(|i| Scored {
                block: i,
                score: 0.578 - (0.578 - 0.539) * i as f64 / 31.0,
            })
            .collect();
        let org: Vec<Scored> = [0.541, 0.495, 0.485, 0.459]
            .iter()
            .enumerate()
            .map(|(i, &score)| Scored {
                block: 100 + i,
                score,
            })
            .collect();
        let order = seat(&combined, &org, |b| b >= 100);
        assert_eq!((order[1].0, order[3].0), (100, 101));
        assert_eq!(order[1].2, Seat::Organisation);
        assert!(!order.iter().any(|o| o.0 == 102 || o.0 == 103));
        assert_eq!(order.len(), 34);
    }

    #[test]
    fn the_papers_second_prompt_leaves_the_fourth_place_to_the_repository() {
        // §3: the bar 0.85 × 0.654 = 0.556; the next organisation hit at 0.507 falls short.
        let combined: Vec<Scored> = (0..5)
            .map(|i| Scored {
                block: i,
                score: 0.654 - 0.01 * i as f64,
            })
            .collect();
        let org = [
            Scored {
                block: 100,
                score: 0.60,
            },
            Scored {
                block: 101,
                score: 0.507,
            },
        ];
        let order = seat(&combined, &org, |b| b >= 100);
        assert_eq!(order[1].0, 100);
        assert_eq!(order[3].2, Seat::Read);
        assert!(!order.iter().any(|o| o.0 == 101));
    }

    #[test]
    fn an_organisation_hit_in_the_combined_list_is_judged_by_its_own_reads_score() {
        let combined = [
            Scored {
                block: 0,
                score: 0.6,
            },
            Scored {
                block: 7,
                score: 0.45,
            },
        ];
        let org = [Scored {
            block: 7,
            score: 0.54,
        }];
        let order = seat(&combined, &org, |b| b == 7);
        assert_eq!(
            order,
            vec![(0, 0.6, Seat::Read), (7, 0.54, Seat::Organisation)]
        );
    }
}
