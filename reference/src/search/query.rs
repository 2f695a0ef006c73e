//! Turning what a person typed into words, and words into an FTS5 expression (§8.1, §9.1).
//!
//! Whatever a person types is searched as words, never as FTS5 syntax. The
//! text is split the way FTS5's `unicode61` tokenizer splits it (runs of
//! letters and digits), each word is wrapped in double quotes so that `AND`,
//! `OR`, `NOT`, `NEAR`, `*`, `+`, `:` and `-` are plain words or plain
//! separators, and the words are joined with `OR` so BM25 ranks passages by
//! how many of them they hold. Text with no word in it is [`Query::Empty`],
//! which searches nothing: it never errors and never shows everything.

/// The most bytes of query text memoria accepts (§9.1: "q capped at 1 KiB").
pub const QUERY_BYTES_MAX: usize = 1024;
/// The most words of one query passed to FTS5; the rest are ignored.
/// 1 KiB of one-letter words is 512 words; 64 keeps a query's cost bounded.
pub const QUERY_WORDS_MAX: usize = 64;

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
    TooLong,
}

/// Splits `text` into words the way `unicode61` does: maximal runs of
/// alphanumeric characters. Total over any `&str`.
pub fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some(&(_, c)) = rest.peek() {
            if is_word_char(c) {
                break;
            }
            rest.next();
        }
        let (start, _) = *rest.peek()?;
        let mut end = start;
        while let Some(&(i, c)) = rest.peek() {
            if !is_word_char(c) {
                break;
            }
            end = i + c.len_utf8();
            rest.next();
        }
        Some((start, &text[start..end]))
    })
}

/// True for the characters `unicode61` keeps inside a token.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

/// Parses what a person typed.
///
/// # Errors
/// [`QueryRefusal::TooLong`] if `text` is longer than [`QUERY_BYTES_MAX`] bytes.
pub fn parse(text: &str) -> Result<Query, QueryRefusal> {
    if text.len() > QUERY_BYTES_MAX {
        return Err(QueryRefusal::TooLong);
    }
    let mut out: Vec<String> = Vec::new();
    for (_, w) in words(text) {
        let w = w.to_lowercase();
        if !out.contains(&w) {
            out.push(w);
        }
        if out.len() == QUERY_WORDS_MAX {
            break;
        }
    }
    if out.is_empty() {
        Ok(Query::Empty)
    } else {
        Ok(Query::Words(out))
    }
}

impl Query {
    /// The FTS5 `MATCH` expression, or `None` for [`Query::Empty`].
    ///
    /// Every word is a quoted string; a word never contains `"` because
    /// [`words`] keeps only alphanumerics, so no quoting can be escaped.
    pub fn to_fts(&self) -> Option<String> {
        match self {
            Query::Empty => None,
            Query::Words(ws) => Some(
                ws.iter()
                    .map(|w| format!("\"{w}\""))
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
        assert_eq!(parse(&long), Err(QueryRefusal::TooLong));
        assert!(parse(&"a".repeat(QUERY_BYTES_MAX)).is_ok());
    }

    #[test]
    fn multibyte_words_survive() {
        let q = parse("café Zürich 東京").unwrap();
        assert_eq!(q.word_count(), 3);
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_without_panicking_and_quotes_stay_balanced(s in "\\PC{0,200}") {
            if let Ok(q) = parse(&s)
                && let Some(fts) = q.to_fts()
            {
                proptest::prop_assert_eq!(fts.matches('"').count() % 2, 0);
            }
        }
    }
}
