//! The explorer's items of several passages (issue 26, gate 6): in some worlds some of the siblings' items hold two to four passages, so a document withheld whole is one result where its passages are several (§4.1, §7.2).
//!
//! Until this drawing every item the explorer declared was one passage (a
//! heading and a sentence), and a withheld document counted one result
//! either way. With probability [`RUN_SHARE`] a world draws, for each
//! declared item with probability [`ITEM_SHARE`], 1 to
//! [`LATER_SECTIONS_MAX`] later sections (`ItemDecl::sections`: each under
//! a heading of its own, so the chunker makes it a passage; a revision
//! keeps them). Drawn from a generator of its own (the seed under another
//! constant) after every other drawing, and a world without it is the world
//! it was: every event, time and app is kept. The oracle's document judge
//! (`scenario/documents.rs`, its `document_answer.rs`) reads the withheld
//! count of such a document: one result, in one line.

use rand::{Rng as _, SeedableRng as _};

use crate::scenario::SiblingDecl;

/// The share of worlds that draw items of several passages.
pub const RUN_SHARE: f64 = 0.5;
/// In such a world, the share of declared items drawn with later sections.
pub const ITEM_SHARE: f64 = 0.5;
/// The most later sections an item is drawn with: four passages in all.
pub const LATER_SECTIONS_MAX: usize = 3;

/// Draws later sections for some items of `siblings` (module docs).
pub(super) fn add(seed: u64, siblings: &mut [SiblingDecl]) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x7365_6374_696f_6e73);
    if !rng.gen_bool(RUN_SHARE) {
        return;
    }
    for item in siblings.iter_mut().flat_map(|s| &mut s.items) {
        if rng.gen_bool(ITEM_SHARE) {
            item.sections = rng.gen_range(1..=LATER_SECTIONS_MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn within_ten_seeds_some_worlds_draw_items_of_several_passages_and_some_do_not() {
        let (mut with, mut without) = (0, 0);
        for seed in 0..10 {
            let x = super::super::generate(seed);
            let items = x.scenario.siblings.iter().flat_map(|s| &s.items);
            if items.clone().any(|i| i.sections > 0) {
                with += 1;
                assert!(
                    items
                        .clone()
                        .all(|i| i.sections <= super::LATER_SECTIONS_MAX)
                );
            } else {
                without += 1;
            }
        }
        assert!(with > 0 && without > 0, "{with} with, {without} without");
    }
}
