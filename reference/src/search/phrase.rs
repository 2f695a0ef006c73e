//! A phrase holding stop words, matched from its other words first: the stop words' postings are sought only where the rest line up (§7.1, issue 30).
//!
//! The adjacency tier ([`crate::search::query::Plan`]'s phrase) of "how to
//! configure a proxy server" is one FTS5 phrase, and FTS5 matches a phrase
//! by stepping every one of its words' postings to each row the others
//! reach: the postings of "to" and "a", which most passages hold, are read
//! nearly whole on every such search (issue 30's profile at 90,000 chunks).
//!
//! [`StopPhrase`] splits a phrase of ASCII words into its content runs
//! (maximal runs of words outside [`STOP_WORDS`], each an FTS5 phrase of
//! its own, with its offset in the whole) and its stop words (each with
//! its offsets). The index reads the rows holding every content run,
//! keeps the starts at which each run stands at its offset
//! ([`line_up`]), and only at those rows reads the stop words' positions,
//! keeping the starts at which each stop word stands at each of its
//! offsets ([`verified`]). A start that survives is exactly a position at
//! which FTS5 finds the phrase (token `i` of the phrase at start + `i`, in
//! one column), so the rows, their count and each row's instances are
//! FTS5's own, and so are the scores made from them.
//!
//! Only ASCII words are split: each is one token to `unicode61`, so an
//! offset in the typed phrase is an offset in the index. A phrase of
//! other words, of stop words only, or of no stop word is left to FTS5.

use crate::search::query::is_stop_word;

/// A token's place in a row: its column and its offset in tokens within
/// that column, as FTS5's position lists give them.
pub type Position = (u32, u32);

/// A phrase of ASCII words split into its content runs and its stop
/// words (see the module). Every FTS5 phrase it names is quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopPhrase {
    /// Each content run: its offset in the phrase, its length in words,
    /// and the run as an FTS5 phrase, in the order typed.
    runs: Vec<(u32, u32, String)>,
    /// Each stop word once, as an FTS5 phrase, with every offset it
    /// stands at in the phrase.
    stops: Vec<(String, Vec<u32>)>,
}

impl StopPhrase {
    /// The split of `phrase` (one quoted FTS5 phrase, `"how to configure a
    /// proxy server"`), or `None` unless it is two or more ASCII words of
    /// which at least one is a stop word and at least one is not.
    pub fn of(phrase: &str) -> Option<StopPhrase> {
        let body = phrase.strip_prefix('"')?.strip_suffix('"')?;
        let words: Vec<&str> = body.split(' ').collect();
        let ascii_word = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphanumeric());
        if words.len() < 2 || !words.iter().all(|w| ascii_word(w)) {
            return None;
        }
        let mut runs: Vec<(u32, u32, String)> = Vec::new();
        let mut stops: Vec<(String, Vec<u32>)> = Vec::new();
        let mut run: Vec<&str> = Vec::new();
        let mut run_start = 0u32;
        let close = |run: &mut Vec<&str>, start: u32, runs: &mut Vec<(u32, u32, String)>| {
            if !run.is_empty() {
                runs.push((start, run.len() as u32, format!("\"{}\"", run.join(" "))));
                run.clear();
            }
        };
        for (at, w) in (0u32..).zip(&words) {
            if is_stop_word(w) {
                close(&mut run, run_start, &mut runs);
                let quoted = format!("\"{w}\"");
                match stops.iter_mut().find(|(s, _)| *s == quoted) {
                    Some((_, offsets)) => offsets.push(at),
                    None => stops.push((quoted, vec![at])),
                }
            } else {
                if run.is_empty() {
                    run_start = at;
                }
                run.push(w);
            }
        }
        close(&mut run, run_start, &mut runs);
        (!runs.is_empty() && !stops.is_empty()).then_some(StopPhrase { runs, stops })
    }

    /// The FTS5 expression of the rows holding every content run:
    /// `"how" AND "configure" AND "proxy server"`. Its phrases are the
    /// runs, numbered as [`StopPhrase::run_offsets`] lists them.
    pub fn content_expression(&self) -> String {
        let runs: Vec<&str> = self.runs.iter().map(|(_, _, r)| r.as_str()).collect();
        runs.join(" AND ")
    }

    /// Each content run's offset in the phrase and its length in words,
    /// in the order of [`StopPhrase::content_expression`]'s phrases.
    pub fn run_offsets(&self) -> Vec<(u32, u32)> {
        self.runs.iter().map(|&(at, len, _)| (at, len)).collect()
    }

    /// The FTS5 expression of the rows holding any of the stop words:
    /// `"to" OR "a"`. Its phrases are the stop words, numbered as
    /// [`StopPhrase::stop_offsets`] lists them.
    pub fn stop_expression(&self) -> String {
        let stops: Vec<&str> = self.stops.iter().map(|(s, _)| s.as_str()).collect();
        stops.join(" OR ")
    }

    /// Each stop word's offsets in the phrase, in the order of
    /// [`StopPhrase::stop_expression`]'s phrases.
    pub fn stop_offsets(&self) -> Vec<&[u32]> {
        self.stops.iter().map(|(_, o)| o.as_slice()).collect()
    }
}

/// The starts at which every run stands at its offset: each `(column, p)`
/// such that `positions[i]` holds `(column, p + offsets[i])` for every
/// `i`, ascending. `positions[i]` are run `i`'s instances in one row,
/// ascending (as FTS5 lists them); empty if any run has none.
pub fn line_up(positions: &[Vec<Position>], offsets: &[u32]) -> Vec<Position> {
    let (Some(first), Some(&first_at)) = (positions.first(), offsets.first()) else {
        return Vec::new();
    };
    first
        .iter()
        .filter_map(|&(col, off)| off.checked_sub(first_at).map(|p| (col, p)))
        .filter(|&(col, p)| {
            positions.iter().zip(offsets).skip(1).all(|(at, &k)| {
                p.checked_add(k)
                    .is_some_and(|o| at.binary_search(&(col, o)).is_ok())
            })
        })
        .collect()
}

/// The starts among `starts` at which every stop word stands at each of
/// its offsets: `stops[j]` is stop word `j`'s positions in the row
/// (ascending) and its offsets in the phrase.
pub fn verified(starts: &[Position], stops: &[(Vec<Position>, &[u32])]) -> Vec<Position> {
    starts
        .iter()
        .copied()
        .filter(|&(col, p)| {
            stops.iter().all(|(at, offsets)| {
                offsets.iter().all(|&k| {
                    p.checked_add(k)
                        .is_some_and(|o| at.binary_search(&(col, o)).is_ok())
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_splits_into_its_content_runs_and_its_stop_words() {
        let s = StopPhrase::of("\"how to configure a proxy server\"").unwrap();
        assert_eq!(
            s.content_expression(),
            "\"how\" AND \"configure\" AND \"proxy server\""
        );
        assert_eq!(s.run_offsets(), [(0, 1), (2, 1), (4, 2)]);
        assert_eq!(s.stop_expression(), "\"to\" OR \"a\"");
        assert_eq!(s.stop_offsets(), [&[1u32][..], &[3]]);
        let s = StopPhrase::of("\"the cat and the hat\"").unwrap();
        assert_eq!(s.content_expression(), "\"cat\" AND \"hat\"");
        assert_eq!(s.run_offsets(), [(1, 1), (4, 1)]);
        assert_eq!(s.stop_expression(), "\"the\" OR \"and\"");
        assert_eq!(s.stop_offsets(), [&[0u32, 3][..], &[2]]);
    }

    #[test]
    fn a_phrase_left_to_fts5_is_not_split() {
        for phrase in [
            "\"proxy server\"",       // no stop word
            "\"to be or not to be\"", // stop words only
            "\"kettle\"",             // one word
            "\"café to go\"",         // not ASCII
            "\"東京 京都\"",          // pairs of an unspaced run
            "\"京\"*",                // a prefix
            "\"to\" AND \"proxy\"",   // not one phrase
        ] {
            assert_eq!(StopPhrase::of(phrase), None, "{phrase}");
        }
    }

    #[test]
    fn runs_line_up_only_at_their_offsets_in_one_column() {
        // Runs at offsets 0, 2 and 4 ("how _ configure _ proxy server").
        let offsets = [0, 2, 4];
        // [how, configure, proxy server, the starts]
        let rows: &[[&[Position]; 4]] = &[
            [&[(2, 10)], &[(2, 12)], &[(2, 14)], &[(2, 10)]],
            [&[(2, 10)], &[(2, 13)], &[(2, 14)], &[]],
            [&[(1, 10)], &[(2, 12)], &[(2, 14)], &[]],
            [
                &[(0, 0), (2, 3), (2, 10)],
                &[(2, 5), (2, 12)],
                &[(2, 7), (2, 14)],
                &[(2, 3), (2, 10)],
            ],
            [&[], &[(2, 12)], &[(2, 14)], &[]],
        ];
        for [how, configure, proxy, starts] in rows {
            let positions = vec![how.to_vec(), configure.to_vec(), proxy.to_vec()];
            assert_eq!(line_up(&positions, &offsets), starts.to_vec(), "{how:?}");
        }
        // A first run that is not at offset 0 starts the phrase before it.
        assert_eq!(line_up(&[vec![(0, 1), (0, 5)]], &[1]), [(0, 0), (0, 4)]);
        assert_eq!(
            line_up(&[vec![(0, 0)]], &[1]),
            [],
            "no start before a column"
        );
    }

    #[test]
    fn a_start_is_kept_only_where_every_stop_word_stands_at_each_offset() {
        let starts = [(2, 3), (2, 10), (0, 0)];
        let to: Vec<Position> = vec![(0, 1), (2, 4), (2, 11)];
        let a: Vec<Position> = vec![(2, 13)];
        assert_eq!(
            verified(&starts, &[(to.clone(), &[1]), (a.clone(), &[3])]),
            [(2, 10)]
        );
        assert_eq!(verified(&starts, &[(to.clone(), &[1])]), starts);
        assert_eq!(verified(&starts, &[(to, &[1, 8])]), [(2, 3)]);
        assert_eq!(verified(&starts, &[(Vec::new(), &[1])]), []);
    }
}
