//! Reciprocal rank fusion of the BM25 list and the dense list into one ranking (§7: "hybrid BM25 + dense vectors, fused by reciprocal rank").
//!
//! A chunk's fused score is `Σ 1 / (RRF_K + rank)` over the lists it appears
//! in, ranks counted from 1; a chunk in one list only still counts, with
//! that list's term alone. Only ranks are used, never the lists' scores, so
//! BM25's unbounded scores and the dense dot products need no common scale.
//!
//! The caller applies §4.1 rule 1's exclusion of a reconciling source to
//! both lists before fusing, and rules every fused passage by S2 exactly as
//! a lexical one (issue 12): fusion only orders.

use std::collections::HashMap;
use std::hash::Hash;

/// The constant `k` of reciprocal rank fusion: 60.
///
/// Source: Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion
/// outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009,
/// which fixed k = 60 from a pilot study and found it robust across the TREC
/// collections it was tested on. It damps the weight of the first few ranks,
/// so one list's top result cannot outvote agreement further down both.
pub const RRF_K: u32 = 60;

/// Chunks each list (BM25's and the dense scan's) brings to the fusion,
/// on every page: three pages of results. Fixed, not grown with the page,
/// so that every page is a slice of one ranking (gate 29); past the fused
/// chunks a search's ranking goes on in BM25's order. This project's
/// number: §7 names the fusion, not its depth. Measured by gate 29 on the
/// Rust book: fused nDCG@10 0.826 at 40, 0.832 at 60, 0.834 at 100; at
/// 100 BM25's list is so deep it holds most dense hits too, and a wrong
/// fusion constant or a fusion that drops dense-only chunks no longer
/// costs any measurable quality, so the gate could not see them.
///
/// Three times `PAGE_SIZE_RESULTS` (20, `page.rs`); `limits.rs` holds
/// the two together, so the dense floor imports nothing from search.
pub const FUSION_DEPTH_CHUNKS: usize = 60;
const _: () = assert!(FUSION_DEPTH_CHUNKS >= crate::dense::DENSE_TOP_K);

/// One chunk of a fused ranking.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusedHit<T> {
    /// The chunk's id, as the input lists gave it.
    pub chunk_id: T,
    /// `Σ 1 / (RRF_K + rank)` over the lists holding the chunk.
    pub score: f64,
    /// Its rank in the BM25 list, from 1, if it is there.
    pub lexical_rank: Option<usize>,
    /// Its rank in the dense list, from 1, if it is there.
    pub dense_rank: Option<usize>,
}

/// Fuses a BM25-ranked list and a dense-ranked list of chunk ids, each best
/// first, into one ranking, best first (§7).
///
/// Every chunk of either list appears once. A chunk repeated within one list
/// keeps its first (best) rank there. Ties in fused score are broken, in
/// order, by the better BM25 rank (a chunk in the BM25 list before one that
/// is not), then the better dense rank, then the lower chunk id, so the
/// result is a pure function of the two lists. Equal ranks in the two lists
/// give exactly equal scores, because each score is computed by one formula
/// in one order.
pub fn fuse_reciprocal_rank<T: Copy + Eq + Hash + Ord>(
    lexical: &[T],
    dense: &[T],
) -> Vec<FusedHit<T>> {
    let mut ranks: HashMap<T, (Option<usize>, Option<usize>)> =
        HashMap::with_capacity(lexical.len() + dense.len());
    for (i, &id) in lexical.iter().enumerate() {
        ranks.entry(id).or_default().0.get_or_insert(i + 1);
    }
    for (i, &id) in dense.iter().enumerate() {
        ranks.entry(id).or_default().1.get_or_insert(i + 1);
    }
    let mut fused: Vec<FusedHit<T>> = ranks
        .into_iter()
        .map(|(chunk_id, (lexical_rank, dense_rank))| FusedHit {
            chunk_id,
            score: term(lexical_rank) + term(dense_rank),
            lexical_rank,
            dense_rank,
        })
        .collect();
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(rank_order(a.lexical_rank, b.lexical_rank))
            .then(rank_order(a.dense_rank, b.dense_rank))
            .then(a.chunk_id.cmp(&b.chunk_id))
    });
    fused
}

/// One list's contribution: `1 / (RRF_K + rank)`, or 0 when absent.
fn term(rank: Option<usize>) -> f64 {
    rank.map_or(0.0, |r| 1.0 / (f64::from(RRF_K) + r as f64))
}

/// Present before absent, then the better (lower) rank first.
fn rank_order(a: Option<usize>, b: Option<usize>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<T: Copy>(fused: &[FusedHit<T>]) -> Vec<T> {
        fused.iter().map(|f| f.chunk_id).collect()
    }

    #[test]
    fn a_chunk_in_both_lists_sums_its_two_terms() {
        // lexical: a b c; dense: c d a.
        // a = 1/61 + 1/63 = 0.0322664585; c = 1/63 + 1/61, the same;
        // b = 1/62 = 0.0161290323; d = 1/62, the same.
        let fused = fuse_reciprocal_rank(&['a', 'b', 'c'], &['c', 'd', 'a']);
        assert_eq!(ids(&fused), ['a', 'c', 'b', 'd']);
        assert!((fused[0].score - 0.032_266_458_5).abs() < 1e-10);
        assert_eq!(fused[0].score, fused[1].score);
        assert!((fused[2].score - 0.016_129_032_3).abs() < 1e-10);
        assert_eq!(fused[2].score, fused[3].score);
        assert_eq!(
            (fused[0].lexical_rank, fused[0].dense_rank),
            (Some(1), Some(3))
        );
        assert_eq!(
            (fused[3].lexical_rank, fused[3].dense_rank),
            (None, Some(2))
        );
    }

    #[test]
    fn agreement_further_down_both_lists_beats_one_list_s_top() {
        // x is first in BM25 only: 1/61 = 0.01639.
        // y is fifth in both: 2/65 = 0.03077.
        let lexical = [1, 2, 3, 4, 50];
        let dense = [6, 7, 8, 9, 50];
        let fused = fuse_reciprocal_rank(&lexical, &dense);
        assert_eq!(fused[0].chunk_id, 50);
        assert!((fused[0].score - 2.0 / 65.0).abs() < 1e-15);
        assert_eq!(fused.len(), 9);
    }

    #[test]
    fn a_chunk_in_one_list_only_still_counts() {
        let fused = fuse_reciprocal_rank(&[10i64], &[]);
        assert_eq!(ids(&fused), [10]);
        assert_eq!(fused[0].score, 1.0 / 61.0);
        let fused = fuse_reciprocal_rank(&[], &[20i64]);
        assert_eq!(ids(&fused), [20]);
        assert_eq!(fused[0].dense_rank, Some(1));
        assert!(fuse_reciprocal_rank::<i64>(&[], &[]).is_empty());
    }

    #[test]
    fn equal_scores_go_to_bm25_rank_then_dense_rank_then_the_lower_id() {
        // 5 and 9 are each second in one list; 5 is in BM25, so first.
        let fused = fuse_reciprocal_rank(&[1, 5], &[2, 9]);
        assert_eq!(ids(&fused), [1, 2, 5, 9]);
        // Swapped ranks in the two lists: (1st, 2nd) before (2nd, 1st).
        let fused = fuse_reciprocal_rank(&[7, 3], &[3, 7]);
        assert_eq!(ids(&fused), [7, 3]);
    }

    #[test]
    fn a_chunk_repeated_in_one_list_keeps_its_best_rank_and_appears_once() {
        let fused = fuse_reciprocal_rank(&[4, 8, 4], &[8]);
        assert_eq!(ids(&fused), [8, 4]);
        assert_eq!(fused[1].lexical_rank, Some(1));
        assert_eq!(fused[0].score, 1.0 / 62.0 + 1.0 / 61.0);
    }

    #[test]
    fn the_fused_order_does_not_depend_on_hashing() {
        let lexical: Vec<i64> = (0..100).map(|i| i * 7 % 101).collect();
        let dense: Vec<i64> = (0..100).map(|i| i * 13 % 103).collect();
        let first = fuse_reciprocal_rank(&lexical, &dense);
        for _ in 0..5 {
            assert_eq!(fuse_reciprocal_rank(&lexical, &dense), first);
        }
    }
}
