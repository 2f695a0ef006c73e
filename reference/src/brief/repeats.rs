//! Which ranked blocks a brief carries: repeats skipped, polarity kept, at most two per first source (`brief-repeats.md` §2-§3).
//!
//! Blocks are taken in rank order. A candidate is skipped as a repeat when
//! its overlap ([`overlap`]: shared content tokens over the **larger** set)
//! with any block already carried reaches [`REPEAT_OVERLAP_MIN`], with two
//! exemptions: a block of fewer than [`REPEAT_TOKENS_MIN`] content tokens is
//! never skipped on the ratio, and a block whose polarity differs from the
//! carried block's ([`is_negated`]) is never its repeat. Then, apart from
//! wording, at most [`SAME_SOURCE_BLOCKS_MAX`] blocks cite the same first
//! source; a block with no source is not capped.

use std::collections::{BTreeMap, BTreeSet};

use super::tokens::{content_tokens, is_negated, overlap};

/// The overlap at which a candidate is a repeat of a carried block
/// (`brief-repeats.md` §2: "reaches 0.6").
pub const REPEAT_OVERLAP_MIN: f64 = 0.6;
/// A block with fewer content tokens than this is never skipped on the
/// ratio (`brief-repeats.md` §3: "fewer than three content tokens").
pub const REPEAT_TOKENS_MIN: usize = 3;
/// The most blocks that may cite the same first source
/// (`brief-repeats.md` §3: "at most two blocks citing the same first source").
pub const SAME_SOURCE_BLOCKS_MAX: usize = 2;

/// One candidate block, as [`carry`] reads it.
#[derive(Debug, Clone, Copy)]
pub struct BlockRef<'a> {
    /// The block's text.
    pub text: &'a str,
    /// Its first source (for memoria, the document id), or `None`.
    pub first_source: Option<&'a str>,
}

/// Why [`carry`] left a block out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum Skip {
    /// Its overlap with carried block `of` (an index into the input)
    /// reached [`REPEAT_OVERLAP_MIN`].
    Repeat {
        /// The carried block it repeats.
        of: usize,
        /// The overlap, shared over the larger set.
        overlap: f64,
    },
    /// Its first source already had [`SAME_SOURCE_BLOCKS_MAX`] blocks carried.
    SourceCap,
}

use serde::Serialize;

/// The decision for each block of `blocks`, in order: `None` carried,
/// `Some(why)` skipped (`brief-repeats.md` §2-§3). Pure: the same input
/// gives the same decisions.
pub fn carry(blocks: &[BlockRef<'_>]) -> Vec<Option<Skip>> {
    let tokens: Vec<BTreeSet<String>> = blocks.iter().map(|b| content_tokens(b.text)).collect();
    let negated: Vec<bool> = blocks.iter().map(|b| is_negated(b.text)).collect();
    let mut carried: Vec<usize> = Vec::new();
    let mut per_source: BTreeMap<&str, usize> = BTreeMap::new();
    let mut out = Vec::with_capacity(blocks.len());
    for (i, b) in blocks.iter().enumerate() {
        let repeat = if tokens[i].len() < REPEAT_TOKENS_MIN {
            None
        } else {
            carried
                .iter()
                .filter(|&&c| negated[c] == negated[i])
                .map(|&c| (c, overlap(&tokens[c], &tokens[i])))
                .find(|&(_, o)| o >= REPEAT_OVERLAP_MIN)
        };
        if let Some((of, overlap)) = repeat {
            out.push(Some(Skip::Repeat { of, overlap }));
            continue;
        }
        if let Some(src) = b.first_source {
            let n = per_source.entry(src).or_insert(0);
            if *n >= SAME_SOURCE_BLOCKS_MAX {
                out.push(Some(Skip::SourceCap));
                continue;
            }
            *n += 1;
        }
        carried.push(i);
        out.push(None);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b<'a>(text: &'a str, src: &'a str) -> BlockRef<'a> {
        BlockRef {
            text,
            first_source: Some(src),
        }
    }

    #[test]
    fn the_precise_line_is_carried_beside_the_vague_one() {
        let d = carry(&[
            b(
                "The stack is Postgres, Redis and the API, started with docker compose; see the deploy notes for the box.",
                "a",
            ),
            b("Deploys go through docker compose on the box", "b"),
        ]);
        assert_eq!(d, [None, None]);
    }

    #[test]
    fn a_rule_and_its_negation_are_both_carried() {
        let d = carry(&[
            b("Run migrations by hand", "a"),
            b("Never run migrations by hand", "b"),
        ]);
        assert_eq!(d, [None, None]);
    }

    #[test]
    fn the_unmarked_reversal_is_skipped_as_the_paper_says_it_is() {
        let d = carry(&[
            b("Run migrations on API boot.", "a"),
            b("Stop running migrations on API boot.", "b"),
        ]);
        assert!(matches!(d[1], Some(Skip::Repeat { of: 0, .. })));
    }

    #[test]
    fn a_block_under_three_tokens_is_never_skipped() {
        let d = carry(&[b("Postgres store", "a"), b("Postgres store", "b")]);
        assert_eq!(d, [None, None]);
    }

    #[test]
    fn a_third_block_from_one_source_is_capped_and_a_sourceless_one_is_not() {
        let none = |t| BlockRef {
            text: t,
            first_source: None,
        };
        let d = carry(&[
            b("alpha beta gamma", "f"),
            b("delta epsilon zeta", "f"),
            b("kappa lambda sigma", "f"),
            none("omicron upsilon omega"),
            none("theta rho phi"),
            none("chi psi iota"),
        ]);
        assert_eq!(d, [None, None, Some(Skip::SourceCap), None, None, None]);
    }
}
