//! Snippets and highlights built from the opened chunk, because a contentless FTS5 table has no `snippet()` (§7.2).
//!
//! The text a snippet is cut from is what a reader sees of the passage: a
//! Markdown passage's plain text, without backticks, bullets, table pipes,
//! emphasis marks or link syntax ([`crate::search::markdown::plain_text`]),
//! and a plain-text passage as it is.
//!
//! A word of the chunk is a hit when it equals a query word, or when both stem
//! to the same English stem (the index uses the Porter stemmer; this uses its
//! Snowball successor, which agrees on the common cases), both compared with
//! their accents folded as the index folds them ([`crate::search::text::fold`]),
//! so `polska` marks `Polską`. Inside a run of Chinese or Japanese the
//! query's run is marked wherever it stands, character by character
//! ([`crate::search::text`]). Stop words are not marked unless the query is
//! nothing else. Snippets are cut at
//! word boundaries found by [`crate::search::query::words`], so a highlight never
//! splits a multi-byte character, and no snippet holds more than
//! [`SNIPPET_CHARS_MAX`] characters (a window of long tokens is cut between
//! grapheme clusters). The output is plain text segments; the page escapes
//! them (§8.1).

use std::cell::RefCell;
use std::ops::Range;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_segmentation::UnicodeSegmentation as _;

use crate::search::query::{is_stop_word, words};
use crate::search::text::{fold, is_unspaced};

/// How many words a snippet shows around its best cluster of hits.
pub const SNIPPET_WORDS_MAX: usize = 36;

/// The most characters (Unicode scalar values) a snippet's segments hold,
/// ellipses aside (issue 32: a passage of a few very long tokens, a hash
/// or a minified line, gave snippets of several KB).
///
/// 400 is [`SNIPPET_WORDS_MAX`] words of English at their usual length (about
/// five letters and a space) with room to spare, so a snippet of ordinary
/// words is never shortened by it; only long tokens are.
pub const SNIPPET_CHARS_MAX: usize = 400;

/// How many characters a snippet cut by [`SNIPPET_CHARS_MAX`] keeps before
/// its first hit, for context: a quarter of the cap.
pub const SNIPPET_LEAD_CHARS: usize = SNIPPET_CHARS_MAX / 4;

/// The bytes of text a word and the space after it are guessed to take,
/// to size a passage's spans once rather than grow them as they are found
/// (issue 30: the growth was 1.3% of a search's CPU over HTTP). English
/// averages about six; five leaves room, and a wrong guess costs only a
/// growth or some spare capacity.
const SPAN_BYTES_GUESS: usize = 5;

/// One run of snippet text: a hit or the plain text between hits.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Segment {
    /// The text, verbatim from the text the snippet was cut from (see the
    /// module documentation) except that line breaks become spaces.
    pub text: String,
    /// True if this run is a matched word.
    pub hit: bool,
}

/// A window of a chunk with its hits marked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Snippet {
    /// True if the chunk continues before the window.
    pub cut_before: bool,
    /// The window's segments, in order.
    pub segments: Vec<Segment>,
    /// True if the chunk continues after the window.
    pub cut_after: bool,
}

impl Snippet {
    /// The snippet as plain text with `[` `]` around hits; for the CLI's text output and tests.
    pub fn to_marked_text(&self) -> String {
        let mut s = String::new();
        if self.cut_before {
            s.push('…');
        }
        for seg in &self.segments {
            if seg.hit {
                s.push('[');
                s.push_str(&seg.text);
                s.push(']');
            } else {
                s.push_str(&seg.text);
            }
        }
        if self.cut_after {
            s.push('…');
        }
        s
    }
}

/// Matches chunk words against a query's words.
pub struct Highlighter {
    stemmer: Stemmer,
    /// Folded words of spaced scripts ([`fold`]).
    terms: Vec<String>,
    stems: Vec<String>,
    /// Unspaced runs ([`is_unspaced`]), marked wherever they stand inside a run.
    runs: Vec<String>,
    /// The first byte of each of `terms`: a word whose first character is
    /// ASCII and not one of these is no hit, judged without folding,
    /// stemming or hashing it (see [`Highlighter::may_hit`]).
    firsts: Vec<u8>,
    /// Each distinct word already judged, as it stood in the text: a page's
    /// passages repeat most of their words, and folding and stemming every
    /// occurrence was most of a page's snippet cost at 90k chunks. Hashed
    /// by foldhash, not SipHash (issue 30: SipHash was 1.3% of a search's
    /// CPU over HTTP); its seed is drawn per process and the map lives for
    /// one request, so a passage's words are not chosen to collide.
    judged: RefCell<foldhash::HashMap<String, bool>>,
}

impl std::fmt::Debug for Highlighter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Highlighter")
            .field("terms", &(self.terms.len() + self.runs.len()))
            .finish()
    }
}

impl Highlighter {
    /// A highlighter for a query's terms (lowercased, as
    /// [`crate::search::query::terms`] gives them). Stop words are not
    /// marked, unless the query holds nothing else: they are left out of
    /// the ranking ([`crate::search::query::Plan`]), so marking "on" would
    /// claim a match the ranking did not make.
    pub fn new(query_words: &[String]) -> Highlighter {
        let stemmer = Stemmer::create(Algorithm::English);
        let content: Vec<&String> = query_words.iter().filter(|w| !is_stop_word(w)).collect();
        let chosen: Vec<&String> = if content.is_empty() {
            query_words.iter().collect()
        } else {
            content
        };
        let (runs, words): (Vec<&String>, Vec<&String>) = chosen
            .into_iter()
            .partition(|w| w.chars().next().is_some_and(is_unspaced));
        let terms: Vec<String> = words.iter().map(|w| fold(w)).collect();
        let stems = terms.iter().map(|w| stemmer.stem(w).into_owned()).collect();
        let firsts = terms.iter().filter_map(|t| t.bytes().next()).collect();
        Highlighter {
            stemmer,
            terms,
            stems,
            firsts,
            runs: runs.into_iter().cloned().collect(),
            judged: RefCell::default(),
        }
    }

    /// False only for a word that cannot be a hit: its first character is
    /// ASCII and begins none of the query's terms. A hit is a folded word
    /// equal to a term, or one with a term's stem; folding keeps an ASCII
    /// first character (lowercased), and the English stemmer keeps every
    /// word's first character (it rewrites endings only: a test below holds
    /// both), so a word and a term of different first characters never
    /// match. Most of a passage's words end here (issue 30: stemming was 7%
    /// of a search's CPU at 90k chunks).
    fn may_hit(&self, word: &str) -> bool {
        match word.as_bytes().first() {
            Some(b) if b.is_ascii() => self.firsts.contains(&b.to_ascii_lowercase()),
            _ => true,
        }
    }

    fn is_hit(&self, word: &str) -> bool {
        if !self.may_hit(word) {
            return false;
        }
        if let Some(&hit) = self.judged.borrow().get(word) {
            return hit;
        }
        let hit = self.judge(word);
        self.judged.borrow_mut().insert(word.to_owned(), hit);
        hit
    }

    fn judge(&self, word: &str) -> bool {
        let folded = fold(word);
        if self.terms.contains(&folded) {
            return true;
        }
        let stem = self.stemmer.stem(&folded);
        self.stems.iter().any(|s| *s == stem)
    }

    /// The spans of `text` a snippet is cut from: `(start, end, hit)` byte
    /// ranges, one per word, and inside an unspaced run (which has no words
    /// to cut at) one per character, or one per place a query run stands.
    fn spans(&self, text: &str) -> Vec<(usize, usize, bool)> {
        let mut spans = Vec::with_capacity(text.len() / SPAN_BYTES_GUESS + 1);
        for (start, w) in words(text) {
            // A word of ASCII holds no unspaced character: one span.
            if w.is_ascii() {
                spans.push((start, start + w.len(), self.is_hit(w)));
                continue;
            }
            let mut at = start;
            let mut rest = w;
            while let Some(first) = rest.chars().next() {
                let unspaced = is_unspaced(first);
                let end = rest
                    .char_indices()
                    .find(|(_, c)| is_unspaced(*c) != unspaced)
                    .map_or(rest.len(), |(i, _)| i);
                let segment = &rest[..end];
                if unspaced {
                    let mut marked = vec![false; segment.len()];
                    for run in &self.runs {
                        for (i, _) in segment.match_indices(run.as_str()) {
                            marked[i..i + run.len()].fill(true);
                        }
                    }
                    // Marked characters that touch are one span, so a
                    // window never cuts a matched run in two.
                    for (i, c) in segment.char_indices() {
                        let end = at + i + c.len_utf8();
                        match spans.last_mut() {
                            Some((_, e, true)) if marked[i] && *e == at + i => *e = end,
                            _ => spans.push((at + i, end, marked[i])),
                        }
                    }
                } else {
                    spans.push((at, at + end, self.is_hit(segment)));
                }
                at += end;
                rest = &rest[end..];
            }
        }
        spans
    }

    /// The best window of `text` with hits marked. Total over any `&str`.
    pub fn snippet(&self, text: &str) -> Snippet {
        let spans = self.spans(text);
        if spans.is_empty() {
            return Snippet {
                cut_before: false,
                segments: vec![],
                cut_after: false,
            };
        }
        // The window of SNIPPET_WORDS_MAX words holding the most hits; ties go to the earliest.
        let window = SNIPPET_WORDS_MAX.min(spans.len());
        let mut hits_in: usize = spans[..window].iter().filter(|s| s.2).count();
        let (mut best, mut best_hits) = (0usize, hits_in);
        for start in 1..=spans.len() - window {
            hits_in -= usize::from(spans[start - 1].2);
            hits_in += usize::from(spans[start + window - 1].2);
            if hits_in > best_hits {
                best = start;
                best_hits = hits_in;
            }
        }
        // Start a little before the first hit so it has some context.
        let first_hit = spans[best..best + window].iter().position(|s| s.2);
        if let Some(offset) = first_hit {
            let lead = 4usize;
            let shift = offset.saturating_sub(lead);
            best = (best + shift).min(spans.len() - window);
        }
        let chosen = &spans[best..best + window];
        let from = if best == 0 { 0 } else { chosen[0].0 };
        let last = chosen[chosen.len() - 1];
        let mut cut_after = best + window < spans.len();
        let to = if cut_after { last.1 } else { text.len() };
        // At most SNIPPET_CHARS_MAX characters, from a little before the
        // first hit, cut between grapheme clusters.
        let anchor = chosen.iter().find(|s| s.2).map_or(from, |s| s.0);
        let kept = char_window(text, from..to, anchor);
        let cut_before = best > 0 || kept.start > from;
        cut_after |= kept.end < to;
        let (from, to) = (kept.start, kept.end);

        let mut segments: Vec<Segment> = Vec::new();
        let mut push = |s: &str, hit: bool| {
            if s.is_empty() {
                return;
            }
            let s = s.replace(['\n', '\r'], " ");
            match segments.last_mut() {
                // Plain text joins plain text; a hit joins a hit it touches
                // (the characters of one matched run).
                Some(prev) if prev.hit == hit => prev.text.push_str(&s),
                _ => segments.push(Segment { text: s, hit }),
            }
        };
        let mut cursor = from;
        for &(s, e, hit) in chosen {
            let (s, e) = (s.max(from), e.min(to));
            if hit && s < e && cursor <= s {
                push(&text[cursor..s], false);
                push(&text[s..e], true);
                cursor = e;
            }
        }
        push(&text[cursor..to.max(cursor)], false);
        Snippet {
            cut_before,
            segments,
            cut_after,
        }
    }
}

/// The part of `text[range]` a snippet shows: all of it when it holds at
/// most [`SNIPPET_CHARS_MAX`] characters, else at most that many from up
/// to [`SNIPPET_LEAD_CHARS`] before `anchor` (the first hit), ending at
/// white space when there is some in the last quarter. Both ends are
/// grapheme cluster boundaries, so no accent, emoji sequence or flag is
/// split; a single cluster longer than the cap is cut between characters.
fn char_window(text: &str, range: Range<usize>, anchor: usize) -> Range<usize> {
    let slice = &text[range.clone()];
    if slice.len() <= SNIPPET_CHARS_MAX || slice.chars().count() <= SNIPPET_CHARS_MAX {
        return range;
    }
    let clusters: Vec<(usize, usize)> = slice
        .grapheme_indices(true)
        .map(|(i, g)| (range.start + i, g.chars().count()))
        .collect();
    let mut first = clusters
        .partition_point(|&(i, _)| i <= anchor)
        .saturating_sub(1);
    let mut lead = 0;
    while first > 0 && lead + clusters[first - 1].1 <= SNIPPET_LEAD_CHARS {
        first -= 1;
        lead += clusters[first].1;
    }
    let (mut end, mut chars) = (first, 0);
    while end < clusters.len() && chars + clusters[end].1 <= SNIPPET_CHARS_MAX {
        chars += clusters[end].1;
        end += 1;
    }
    let start = clusters[first].0;
    if end == first {
        // One cluster over the cap: its first characters.
        let stop = text[start..]
            .char_indices()
            .nth(SNIPPET_CHARS_MAX)
            .map_or(range.end, |(i, _)| start + i);
        return start..stop;
    }
    let at = |k: usize| clusters.get(k).map_or(range.end, |c| c.0);
    // End at white space in the window's last quarter, if any.
    let quarter = (first + (end - first) * 3 / 4).max(first + 1);
    if end < clusters.len()
        && let Some(space) = (quarter..end)
            .rev()
            .find(|&k| text[at(k)..at(k + 1)].chars().all(char::is_whitespace))
    {
        end = space;
    }
    start..at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hl(q: &[&str]) -> Highlighter {
        Highlighter::new(&q.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn exact_and_stemmed_words_are_marked() {
        let s = hl(&["descale"]).snippet("Descaling the machine: we descale monthly.");
        assert_eq!(
            s.to_marked_text(),
            "[Descaling] the machine: we [descale] monthly."
        );
    }

    #[test]
    fn a_long_chunk_is_cut_around_the_hits() {
        let text = format!("{} needle {}", "word ".repeat(100), "tail ".repeat(100));
        let s = hl(&["needle"]).snippet(&text);
        assert!(s.cut_before && s.cut_after);
        assert!(s.to_marked_text().contains("[needle]"));
    }

    #[test]
    fn multibyte_words_are_never_split() {
        let s = hl(&["café"]).snippet("Le café à Zürich — naïve 東京 café!");
        assert_eq!(
            s.to_marked_text(),
            "Le [café] à Zürich — naïve 東京 [café]!"
        );
    }

    #[test]
    fn an_accent_folded_match_is_marked() {
        assert_eq!(
            hl(&["polska"])
                .snippet("Spotkanie w Polską stolicą")
                .to_marked_text(),
            "Spotkanie w [Polską] stolicą"
        );
        assert_eq!(
            hl(&["café"]).snippet("a cafe\u{301} here").to_marked_text(),
            "a [cafe\u{301}] here"
        );
    }

    #[test]
    fn a_japanese_word_is_marked_inside_its_sentence() {
        assert_eq!(
            hl(&["東京"])
                .snippet("東京で会議を開きました。")
                .to_marked_text(),
            "[東京]で会議を開きました。"
        );
    }

    #[test]
    fn a_stop_word_is_not_marked_beside_a_content_word() {
        assert_eq!(
            hl(&["kettle", "on"])
                .snippet("put the kettle on")
                .to_marked_text(),
            "put the [kettle] on"
        );
        assert_eq!(
            hl(&["to", "be"]).snippet("to be or not").to_marked_text(),
            "[to] [be] or not"
        );
    }

    #[test]
    fn a_chunk_with_no_words_gives_an_empty_snippet() {
        assert!(hl(&["x"]).snippet("--- *** ---").segments.is_empty());
    }

    #[test]
    fn a_passage_of_long_tokens_gives_a_snippet_of_at_most_the_character_cap() {
        let blob: String = (0..3000)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let text = format!("{blob} needle {blob} {blob}");
        let s = hl(&["needle"]).snippet(&text);
        let shown: String = s.segments.iter().map(|g| g.text.as_str()).collect();
        assert!(
            shown.chars().count() <= SNIPPET_CHARS_MAX,
            "{}",
            shown.len()
        );
        assert!(s.to_marked_text().contains("[needle]"));
        assert!(s.cut_before && s.cut_after);
    }

    #[test]
    fn a_snippet_of_ordinary_words_is_not_shortened_by_the_character_cap() {
        let text = "The kettle is descaled every month by whoever is on the rota, and \
                    the filter jug is rinsed weekly.";
        let s = hl(&["kettle"]).snippet(text);
        assert!(!s.cut_before && !s.cut_after);
        assert_eq!(s.to_marked_text().replace(['[', ']'], ""), text);
    }

    #[test]
    fn the_english_stemmer_keeps_the_first_character_of_its_exceptions_and_rewritten_endings() {
        // Snowball English's exception list, a leading `y` (made `Y` and
        // back), and each step's rewrites of an ending.
        let words = [
            "skis",
            "skies",
            "dying",
            "lying",
            "tying",
            "idly",
            "gently",
            "ugly",
            "early",
            "only",
            "singly",
            "sky",
            "news",
            "howe",
            "atlas",
            "cosmos",
            "bias",
            "andes",
            "inning",
            "outing",
            "canning",
            "herring",
            "earring",
            "proceed",
            "exceed",
            "succeed",
            "yes",
            "youth",
            "ies",
            "ied",
            "cries",
            "ties",
            "sses",
            "eed",
            "ing",
            "ed",
            "y",
            "yy",
            "generously",
            "relational",
            "conditional",
            "hopefulness",
            "agreed",
        ];
        let stemmer = Stemmer::create(Algorithm::English);
        for w in words {
            let stem = stemmer.stem(w);
            assert_eq!(stem.chars().next(), w.chars().next(), "{w} → {stem}");
        }
    }

    proptest::proptest! {
        #[test]
        fn every_snippet_holds_at_most_the_character_cap_and_splits_no_cluster(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec!["needle", " ", "x", "👨\u{200d}👩\u{200d}👧", "🇮🇪", "e\u{301}", "東京", "-"]),
                0..3000,
            ),
            long in 0usize..2000,
        ) {
            use unicode_segmentation::UnicodeSegmentation as _;
            let text = format!("{}{}", "y".repeat(long), pieces.concat());
            let s = hl(&["needle"]).snippet(&text);
            let shown: String = s.segments.iter().map(|g| g.text.as_str()).collect();
            proptest::prop_assert!(shown.chars().count() <= SNIPPET_CHARS_MAX);
            // Whole clusters of the text only: the shown text is a run of
            // the text's clusters.
            let text_clusters: Vec<&str> = text.graphemes(true).collect();
            let shown_clusters: Vec<&str> = shown.graphemes(true).collect();
            proptest::prop_assert!(
                shown_clusters.is_empty()
                    || text_clusters.windows(shown_clusters.len()).any(|w| w == shown_clusters.as_slice())
            );
        }

        #[test]
        fn the_first_letter_shortcut_never_refuses_a_word_the_full_judgement_marks(
            word in "[a-zA-Z0-9][a-zA-Z0-9éüßøÆİıñ\u{301}]{0,14}",
            term in proptest::sample::select(vec![
                "descale", "running", "generous", "happy", "skies", "dying", "only", "yes",
                "agreed", "cries", "united", "ties", "argue", "news", "ugly", "error", "e",
            ]),
        ) {
            let h = hl(&[term]);
            if !h.may_hit(&word) {
                proptest::prop_assert!(!h.judge(&word), "{word} against {term}");
            }
        }

        #[test]
        fn the_english_stemmer_keeps_a_word_s_first_character(word in "[a-z0-9][a-z0-9'éüßø]{0,16}") {
            let stemmer = Stemmer::create(Algorithm::English);
            let stem = stemmer.stem(&word);
            proptest::prop_assert_eq!(stem.chars().next(), word.chars().next(), "{}", stem);
        }

        #[test]
        fn any_text_and_query_snippet_without_panicking(text in "\\PC{0,300}", q in "[a-zé]{1,6}") {
            let s = hl(&[q.as_str()]).snippet(&text);
            for seg in s.segments {
                proptest::prop_assert!(!seg.text.is_empty());
            }
        }
    }
}
