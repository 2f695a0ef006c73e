//! Turning what a person typed into words, and words into the FTS5 expressions of a ranked search (§8.1, §9.1).
//!
//! Whatever a person types is searched as words, never as FTS5 syntax. The
//! text is normalised as the index's text is ([`crate::search::text`]),
//! split the way FTS5's `unicode61` tokenizer splits it (runs of letters
//! and digits) into [`terms`] (a word, or a run of Chinese or Japanese,
//! searched as the phrase of its pairs), and each is wrapped in double quotes, so that
//! `AND`, `OR`, `NOT`, `NEAR`, `*`, `+`, `:` and `-` are plain words or plain
//! separators. Text with no word in it is [`Query::Empty`], which searches
//! nothing: it never errors and never shows everything. A query of more than
//! [`QUERY_WORDS_MAX`] different words is refused with that number, never
//! cut short in silence.
//!
//! **How words combine** ([`Plan`]), chosen for issue 11 and measured at
//! §7.2's 90,000 chunks. Results come in tiers, each ranked by BM25 within
//! itself, and a tier is only run while the page is not yet full:
//!
//! 1. **The words adjacent, in the order typed** (an FTS5 phrase), when the
//!    query has two or more words: `2026-03-14` finds the passage holding that
//!    date before one holding "14 sets, 03 reps, in 2026", and `multi-agent`
//!    finds "multi-agent" before "Multi purpose agent".
//! 2. **Every content word**, anywhere in the passage (`AND`).
//! 3. **All content words but one** (three to [`MOST_WORDS_MAX`] content
//!    words): the passages missing just one of them.
//! 4. **Any content word** (`OR`), to fill the page, from the rarest word up.
//!
//! Tiers 3 and 4 only fill a page the tiers above left short, and a fill
//! never scores more than [`FILL_ROWS_MAX`] passages: tier 3 is skipped if it
//! matches more, and tier 4 takes words rarest first while their passages
//! add up to at most that, leaving out any word found in more (such a word
//! cannot rank a page by itself, and scoring it is what made a search slow).
//!
//! A content word is a word not in [`STOP_WORDS`]: very common words ("the",
//! "with", "on") match most of a corpus, so in tiers 2 to 4 they would cost
//! the most and say the least. They still count in the phrase of tier 1, and
//! a query made only of stop words ("to be or not to be") uses them all as
//! its content words, with no fill.

use crate::search::text;

/// The most bytes of query text memoria accepts (§9.1: "q capped at 1 KiB").
pub const QUERY_BYTES_MAX: usize = 1024;
/// The most content words for which tier 3 ("all but one", [`Plan`]) is
/// built: its expression holds n × (n − 1) words, so it stays small.
pub const MOST_WORDS_MAX: usize = 8;

/// The most passages a fill tier (3 or 4, [`Plan`]) may score: a fill that
/// would match more is skipped (tier 3) or built from rarer words only
/// (tier 4). BM25 costs about a microsecond a passage at 90,000 chunks
/// (issue 11), so this keeps a fill well under a millisecond.
pub const FILL_ROWS_MAX: usize = 500;

/// The most different words one query may hold; a query with more is
/// refused ([`QueryRefusal::TooManyWords`]), never cut short. 1 KiB of
/// one-letter words is 512 words; 64 keeps a query's cost bounded.
pub const QUERY_WORDS_MAX: usize = 64;

/// Words too common to rank on their own: left out of the all-words and
/// any-word tiers ([`Plan`]), kept in the phrase. The English stop set of
/// Lucene's `EnglishAnalyzer` (`ENGLISH_STOP_WORDS_SET`), lowercased: a small,
/// widely used list, so no ordinary content word is in it.
pub const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// No searchable word: empty, whitespace or punctuation only.
    Empty,
    /// One or more lowercased words, deduplicated, in the order typed.
    Words(Vec<String>),
}

/// Why a query was refused before it reached the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryRefusal {
    /// Longer than [`QUERY_BYTES_MAX`].
    TooLong {
        /// How many bytes of UTF-8 the query held.
        bytes: usize,
        /// How many characters (Unicode scalar values) it held.
        chars: usize,
    },
    /// More than [`QUERY_WORDS_MAX`] different words.
    TooManyWords {
        /// How many different words the query held.
        words: usize,
    },
}

/// The FTS5 expressions of one search, tier by tier (see the module's
/// "How words combine"). Every word in them is quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Tier 1: every word adjacent, in the order typed; `None` for one word.
    pub phrase: Option<String>,
    /// Tier 2: every content word (`AND`).
    pub all: String,
    /// Tier 3: all content words but one, each way (`OR` of `AND`s); `None`
    /// outside three to [`MOST_WORDS_MAX`] content words.
    pub most: Option<String>,
    /// Tier 4's candidates: each content word, quoted; empty with fewer than
    /// two content words, or only stop words. Which of them fill the page is
    /// decided against the index ([`FILL_ROWS_MAX`]).
    pub any: Vec<String>,
}

impl Plan {
    /// Tiers 1 and 2, best first: the tiers always run while the page is short.
    pub fn tiers(&self) -> impl Iterator<Item = &str> {
        self.phrase
            .as_deref()
            .into_iter()
            .chain(std::iter::once(self.all.as_str()))
    }
}

/// True if `word` (lowercased) is in [`STOP_WORDS`].
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// The tiers for `text` ([`Plan`]), or `None` if it holds no word. Call
/// [`parse`] first: a text it refuses is not planned differently here, but
/// only [`parse`] refuses.
pub fn plan(text: &str) -> Option<Plan> {
    let sequence = terms(text);
    let mut distinct: Vec<&str> = Vec::new();
    for w in &sequence {
        if !distinct.contains(&w.as_str()) {
            distinct.push(w);
        }
    }
    if distinct.is_empty() {
        return None;
    }
    let mut content: Vec<&str> = distinct
        .iter()
        .copied()
        .filter(|w| !is_stop_word(w))
        .collect();
    let only_stop_words = content.is_empty();
    if only_stop_words {
        content = distinct.clone();
    }
    let quoted = |ws: &[&str], join: &str| {
        ws.iter()
            .map(|w| fts_term(w))
            .collect::<Vec<_>>()
            .join(join)
    };
    // A longer run of words (one word typed a hundred times) is not tried as a phrase.
    let phrase = (sequence.len() > 1 && sequence.len() <= QUERY_WORDS_MAX)
        .then(|| phrase_of(&sequence))
        .flatten();
    let most = (!only_stop_words && (3..=MOST_WORDS_MAX).contains(&content.len())).then(|| {
        (0..content.len())
            .map(|left_out| {
                let rest: Vec<&str> = content
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != left_out)
                    .map(|(_, w)| *w)
                    .collect();
                format!("({})", quoted(&rest, " AND "))
            })
            .collect::<Vec<_>>()
            .join(" OR ")
    });
    let any = if content.len() > 1 && !only_stop_words {
        content.iter().map(|w| fts_term(w)).collect()
    } else {
        Vec::new()
    };
    Some(Plan {
        phrase,
        all: quoted(&content, " AND "),
        most,
        any,
    })
}

/// The query's terms in the order typed, not deduplicated: the [`words`] of
/// its [`text::nfc`] form [`text::fold`]ed as the index folds its text, with a word that mixes letters of
/// a spaced script and an unspaced one ([`text::is_unspaced`]) cut where
/// the script changes, so each term is either a word or one unspaced run.
pub fn terms(text: &str) -> Vec<String> {
    let normal = text::fold(&text::nfc(text));
    let mut out = Vec::new();
    for (_, w) in words(&normal) {
        let mut rest = w;
        while let Some(first) = rest.chars().next() {
            let unspaced = text::is_unspaced(first);
            let end = rest
                .char_indices()
                .find(|(_, c)| text::is_unspaced(*c) != unspaced)
                .map_or(rest.len(), |(i, _)| i);
            out.push(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    out
}

/// One term as an FTS5 string: a word quoted (`"kettle"`); an unspaced run
/// as the phrase of its pairs (`"東京 京都"`, [`text::pairs`]); a lone
/// unspaced character as the prefix of the pairs it starts (`"京"*`). A
/// term never holds `"`: [`terms`] keeps only letters and digits.
pub fn fts_term(term: &str) -> String {
    if term.chars().next().is_some_and(text::is_unspaced) {
        let pairs = text::pairs(term);
        if pairs.len() == 1 && term.chars().count() == 1 {
            return format!("\"{term}\"*");
        }
        return format!("\"{}\"", pairs.join(" "));
    }
    format!("\"{term}\"")
}

/// Every term adjacent, in order, as one FTS5 phrase; `None` when a lone
/// unspaced character stands before the last term (it matches only as a
/// prefix, and FTS5 allows a prefix only at a phrase's end).
fn phrase_of(sequence: &[String]) -> Option<String> {
    let mut tokens: Vec<String> = Vec::new();
    let mut prefix_last = false;
    for (i, t) in sequence.iter().enumerate() {
        let lone = t.chars().count() == 1 && t.chars().next().is_some_and(text::is_unspaced);
        if lone && i + 1 < sequence.len() {
            return None;
        }
        prefix_last = lone;
        if t.chars().next().is_some_and(text::is_unspaced) {
            tokens.extend(text::pairs(t));
        } else {
            tokens.push(t.clone());
        }
    }
    Some(format!(
        "\"{}\"{}",
        tokens.join(" "),
        if prefix_last { "*" } else { "" }
    ))
}

/// Splits `text` into words the way `unicode61` does: maximal runs of
/// alphanumeric characters ([`is_word_char`]). Total over any `&str`.
///
/// Read a byte at a time where the text is ASCII, whose word characters
/// are `[A-Za-z0-9]`, and a character at a time elsewhere (issue 30: the
/// highlighter splits every passage of a page, and decoding each
/// character was most of the snippet's own cost at 90,000 chunks).
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = first_where(text, at, true);
        if start == text.len() {
            return None;
        }
        let end = first_where(text, start, false);
        at = end;
        Some((start, &text[start..end]))
    })
}

/// The first character boundary of `text` at or past `from` (itself a
/// boundary) whose character is a word character (`word`) or is not
/// (`!word`); `text.len()` if there is none.
fn first_where(text: &str, from: usize, word: bool) -> usize {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii() {
            // `char::is_alphanumeric` of an ASCII character.
            if b.is_ascii_alphanumeric() == word {
                return i;
            }
            i += 1;
        } else {
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            if is_word_char(c) == word {
                return i;
            }
            i += c.len_utf8();
        }
    }
    text.len()
}

/// True for the characters kept inside a word: letters and digits, as
/// `unicode61` keeps them, and combining marks, which its
/// `remove_diacritics` drops from inside a token rather than splitting it.
/// No ASCII character is a combining mark, so ASCII is not looked up (the
/// lookup was 3.5% of a search's CPU over HTTP, issue 30: the highlighter
/// asks it of every space and stop in a passage).
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || (!c.is_ascii() && unicode_normalization::char::is_combining_mark(c))
}

/// Parses what a person typed.
///
/// # Errors
/// [`QueryRefusal::TooLong`] if `text` is longer than [`QUERY_BYTES_MAX`]
/// bytes; [`QueryRefusal::TooManyWords`] if it holds more than
/// [`QUERY_WORDS_MAX`] different words.
pub fn parse(text: &str) -> Result<Query, QueryRefusal> {
    if text.len() > QUERY_BYTES_MAX {
        return Err(QueryRefusal::TooLong {
            bytes: text.len(),
            chars: text.chars().count(),
        });
    }
    let mut out: Vec<String> = Vec::new();
    for w in terms(text) {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    if out.len() > QUERY_WORDS_MAX {
        return Err(QueryRefusal::TooManyWords { words: out.len() });
    }
    if out.is_empty() {
        Ok(Query::Empty)
    } else {
        Ok(Query::Words(out))
    }
}

impl Query {
    /// Every word ORed: one FTS5 `MATCH` expression, or `None` for
    /// [`Query::Empty`]. The search itself runs [`plan`]'s tiers; this is
    /// the any-word expression peers and benches compare against.
    ///
    /// Every word is a quoted string; a word never contains `"` because
    /// [`words`] keeps only alphanumerics, so no quoting can be escaped.
    pub fn to_fts(&self) -> Option<String> {
        match self {
            Query::Empty => None,
            Query::Words(ws) => Some(
                ws.iter()
                    .map(|w| fts_term(w))
                    .collect::<Vec<_>>()
                    .join(" OR "),
            ),
        }
    }

    /// How many words the query holds (0 for empty). Safe to log: a count, not content.
    pub fn word_count(&self) -> usize {
        match self {
            Query::Empty => 0,
            Query::Words(ws) => ws.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_only_and_empty_queries_are_empty() {
        for q in ["", "   ", "\"\"", "'", "-", "...", "*+:", "\"*\" - : ."] {
            assert_eq!(parse(q).unwrap(), Query::Empty, "{q:?}");
        }
    }

    #[test]
    fn operators_in_any_case_become_quoted_words() {
        let q = parse("cats AND dogs or NOT near Near").unwrap();
        assert_eq!(
            q.to_fts().unwrap(),
            "\"cats\" OR \"and\" OR \"dogs\" OR \"or\" OR \"not\" OR \"near\""
        );
    }

    #[test]
    fn quotes_hyphens_dots_colons_stars_and_pluses_split_words() {
        let q = parse("o'brien's co-op v1.2 title:x foo* +bar \"baz").unwrap();
        assert_eq!(
            q,
            Query::Words(
                [
                    "o", "brien", "s", "co", "op", "v1", "2", "title", "x", "foo", "bar", "baz"
                ]
                .map(String::from)
                .to_vec()
            )
        );
    }

    #[test]
    fn a_query_over_one_kibibyte_is_refused() {
        let long = "a".repeat(QUERY_BYTES_MAX + 1);
        assert_eq!(
            parse(&long),
            Err(QueryRefusal::TooLong {
                bytes: QUERY_BYTES_MAX + 1,
                chars: QUERY_BYTES_MAX + 1
            })
        );
        assert!(parse(&"a".repeat(QUERY_BYTES_MAX)).is_ok());
    }

    #[test]
    fn a_query_of_more_than_sixty_four_different_words_is_refused_with_its_count() {
        let words: Vec<String> = (0..QUERY_WORDS_MAX + 1).map(|i| format!("w{i}")).collect();
        assert_eq!(
            parse(&words.join(" ")),
            Err(QueryRefusal::TooManyWords {
                words: QUERY_WORDS_MAX + 1
            })
        );
    }

    #[test]
    fn the_sixty_fourth_word_is_searched_like_the_first() {
        let words: Vec<String> = (0..QUERY_WORDS_MAX).map(|i| format!("w{i}")).collect();
        let q = parse(&words.join(" ")).unwrap();
        assert_eq!(q.word_count(), QUERY_WORDS_MAX);
        let p = plan(&words.join(" ")).unwrap();
        let last = format!("\"w{}\"", QUERY_WORDS_MAX - 1);
        assert!(p.all.ends_with(&last));
        assert_eq!(p.any.last(), Some(&last));
        assert_eq!(p.any.len(), QUERY_WORDS_MAX);
    }

    #[test]
    fn a_repeated_word_is_counted_once_so_a_long_repetition_is_not_refused() {
        let q = parse(&"kettle ".repeat(100)).unwrap();
        assert_eq!(q.word_count(), 1);
        assert_eq!(plan(&"kettle ".repeat(100)).unwrap().phrase, None);
    }

    #[test]
    fn a_hyphenated_or_dated_query_is_tried_first_as_its_words_adjacent() {
        let p = plan("multi-agent").unwrap();
        assert_eq!(p.phrase.as_deref(), Some("\"multi agent\""));
        assert_eq!(p.all, "\"multi\" AND \"agent\"");
        assert_eq!(p.most, None, "two words: all but one is any");
        assert_eq!(p.any, ["\"multi\"", "\"agent\""]);
        let p = plan("2026-03-14").unwrap();
        assert_eq!(
            p.tiers().collect::<Vec<_>>(),
            ["\"2026 03 14\"", "\"2026\" AND \"03\" AND \"14\""]
        );
        assert_eq!(
            p.most.as_deref(),
            Some("(\"03\" AND \"14\") OR (\"2026\" AND \"14\") OR (\"2026\" AND \"03\")")
        );
    }

    #[test]
    fn stop_words_stay_in_the_phrase_and_leave_the_other_tiers() {
        let p = plan("Errors with the Result").unwrap();
        assert_eq!(p.phrase.as_deref(), Some("\"errors with the result\""));
        assert_eq!(p.all, "\"errors\" AND \"result\"");
        assert_eq!(p.any, ["\"errors\"", "\"result\""]);
    }

    #[test]
    fn one_content_word_has_no_fill_tier() {
        let p = plan("is the kettle on").unwrap();
        assert_eq!(p.phrase.as_deref(), Some("\"is the kettle on\""));
        assert_eq!(p.all, "\"kettle\"");
        assert!(p.any.is_empty());
        let p = plan("kettle").unwrap();
        assert_eq!(
            (p.phrase, p.all.as_str(), p.most),
            (None, "\"kettle\"", None)
        );
        assert!(p.any.is_empty());
    }

    #[test]
    fn a_query_of_only_stop_words_searches_them_all_and_fills_with_nothing() {
        let p = plan("to be or not to be").unwrap();
        assert_eq!(p.phrase.as_deref(), Some("\"to be or not to be\""));
        assert_eq!(p.all, "\"to\" AND \"be\" AND \"or\" AND \"not\"");
        assert_eq!((p.most, p.any.len()), (None, 0));
    }

    #[test]
    fn a_text_with_no_word_has_no_plan() {
        assert_eq!(plan(" - ... "), None);
    }

    #[test]
    fn no_ascii_character_is_a_combining_mark_so_the_fast_path_splits_as_before() {
        for c in (0u8..=127).map(char::from) {
            assert!(!unicode_normalization::char::is_combining_mark(c), "{c:?}");
            assert_eq!(is_word_char(c), c.is_alphanumeric(), "{c:?}");
        }
        assert!(
            is_word_char('\u{301}'),
            "a combining acute stays inside a word"
        );
    }

    #[test]
    fn multibyte_words_survive() {
        let q = parse("café Zürich 東京").unwrap();
        assert_eq!(q.word_count(), 3);
    }

    #[test]
    fn a_japanese_run_is_one_term_searched_as_the_phrase_of_its_pairs() {
        assert_eq!(parse("東京都 会議").unwrap().word_count(), 2);
        let p = plan("東京都").unwrap();
        assert_eq!(p.all, "\"東京 京都\"");
        let p = plan("京").unwrap();
        assert_eq!(p.all, "\"京\"*");
        let p = plan("北京api").unwrap();
        assert_eq!(p.phrase.as_deref(), Some("\"北京 api\""));
        assert_eq!(p.all, "\"北京\" AND \"api\"");
    }

    #[test]
    fn a_decomposed_query_is_the_same_query_as_its_composed_form() {
        assert_eq!(parse("cafe\u{301}").unwrap(), parse("café").unwrap());
    }

    /// [`words`] a character at a time, as it was before its ASCII bytes
    /// were read as bytes: the reference the fast path must equal.
    fn words_by_character(text: &str) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            match (is_word_char(c), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    out.push((s, &text[s..i]));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            out.push((s, &text[s..]));
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn words_read_a_byte_at_a_time_over_ascii_are_the_words_read_by_character(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "word", " ", "x9", "-", "\n", "é", "e\u{301}", "東京", "ß", "Ω", "٣", "🇮🇪", "\u{a0}", "_", "'",
                ]),
                0..40,
            ),
            any in "\\PC{0,60}",
        ) {
            for text in [pieces.concat(), any] {
                proptest::prop_assert_eq!(words(&text).collect::<Vec<_>>(), words_by_character(&text));
            }
        }

        #[test]
        fn any_text_parses_without_panicking_and_quotes_stay_balanced(s in "\\PC{0,200}") {
            if let Ok(q) = parse(&s)
                && let Some(fts) = q.to_fts()
            {
                proptest::prop_assert_eq!(fts.matches('"').count() % 2, 0);
            }
            if let Some(p) = plan(&s) {
                for t in p.tiers().chain(p.most.as_deref()).chain(p.any.iter().map(String::as_str)) {
                    proptest::prop_assert_eq!(t.matches('"').count() % 2, 0);
                }
            }
        }
    }
}
