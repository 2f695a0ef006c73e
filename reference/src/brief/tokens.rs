//! Content tokens, overlap and polarity, exactly as `brief-repeats.md` §2-§3 defines them.
//!
//! A sentence is reduced to its content tokens: lower-cased words of
//! [`TOKEN_CHARS_MIN`] or more characters, the fixed [`FUNCTION_WORDS`]
//! dropped (`through` and `see` are not on it), a trailing plural folded to
//! the singular. Two blocks overlap by the tokens they share divided by the
//! **larger** of the two sets (§2: "dividing by the larger set makes the test
//! symmetric"). Polarity is read from a list of words ([`NEGATIONS`], and a
//! contraction ending in `n't`), and the paper's own limitation stands: a
//! reversal with no negation word ("Stop running migrations") is not seen as
//! one.
//!
//! Worked example from the paper, as this module computes it:
//!
//! ```
//! use memoria::brief::{content_tokens, overlap};
//! let carried = content_tokens("The stack is Postgres, Redis and the API, started with docker compose; see the deploy notes for the box.");
//! let candidate = content_tokens("Deploys go through docker compose on the box");
//! assert_eq!(carried.len(), 11);
//! assert_eq!(candidate.len(), 5);
//! assert_eq!(carried.intersection(&candidate).count(), 4);
//! assert!((overlap(&carried, &candidate) - 4.0 / 11.0).abs() < 1e-9);
//! ```

use std::collections::BTreeSet;

/// The fewest characters a content token has (`brief-repeats.md` §2: "three or more").
pub const TOKEN_CHARS_MIN: usize = 3;

/// The fixed list of common function words dropped from content tokens
/// (`brief-repeats.md` §2). Words of one or two letters never reach it.
/// `through` and `see` are not on it, as the paper requires; negation
/// words are not either: polarity is read apart ([`is_negated`]). Sorted,
/// so [`is_function_word`] is a binary search.
pub const FUNCTION_WORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "all",
    "also",
    "am",
    "and",
    "any",
    "are",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "could",
    "did",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "into",
    "its",
    "itself",
    "just",
    "may",
    "might",
    "more",
    "most",
    "must",
    "myself",
    "once",
    "only",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shall",
    "she",
    "should",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "too",
    "under",
    "until",
    "upon",
    "very",
    "was",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Words that mark a sentence as negated (`brief-repeats.md` §4: "never",
/// "not", "avoid", "without", a contraction ending in n't "and a few
/// others"). A word ending in `n't` (or `n’t`) is negated too. Sorted.
pub const NEGATIONS: &[&str] = &[
    "avoid", "cannot", "neither", "never", "no", "nobody", "none", "nor", "not", "nothing",
    "nowhere", "without",
];

/// True if `word` (lower-cased) is on [`FUNCTION_WORDS`].
pub fn is_function_word(word: &str) -> bool {
    FUNCTION_WORDS.binary_search(&word).is_ok()
}

/// The words of `text`, lower-cased: runs of letters and digits, an
/// apostrophe inside a word kept (so `don't` stays one word).
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’'))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '’'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('’', "'"))
}

/// A trailing plural folded to the singular (`brief-repeats.md` §2):
/// `notes` → `note`, `postgres` → `postgre` (the paper's own reading),
/// `memories` → `memory`; a word ending in `ss`, `us` or `is` (`class`,
/// `status`, `redis`) is not a plural, and a word of
/// [`TOKEN_CHARS_MIN`] letters is left whole.
pub fn fold_plural(word: &str) -> String {
    let n = word.chars().count();
    if n > TOKEN_CHARS_MIN + 1 && word.ends_with("ies") {
        return format!("{}y", &word[..word.len() - 3]);
    }
    if n > TOKEN_CHARS_MIN
        && word.ends_with('s')
        && !(word.ends_with("ss") || word.ends_with("us") || word.ends_with("is"))
    {
        return word[..word.len() - 1].to_string();
    }
    word.to_string()
}

/// The content tokens of `text` (`brief-repeats.md` §2): lower-cased words
/// of [`TOKEN_CHARS_MIN`] or more characters, not on [`FUNCTION_WORDS`],
/// with a possessive `'s` dropped and a trailing plural folded. A set: a
/// word said twice counts once.
pub fn content_tokens(text: &str) -> BTreeSet<String> {
    words(text)
        .map(|w| w.strip_suffix("'s").map(str::to_string).unwrap_or(w))
        .filter(|w| w.chars().count() >= TOKEN_CHARS_MIN && !is_function_word(w))
        .map(|w| fold_plural(&w))
        .collect()
}

/// Shared tokens divided by the **larger** token set (`brief-repeats.md`
/// §2), in `[0, 1]`; 0 when either set is empty.
pub fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let larger = a.len().max(b.len());
    if larger == 0 || a.is_empty() || b.is_empty() {
        return 0.0;
    }
    a.intersection(b).count() as f64 / larger as f64
}

/// True if `text` carries a negation (`brief-repeats.md` §3-§4): a word on
/// [`NEGATIONS`] or a contraction ending in `n't`.
pub fn is_negated(text: &str) -> bool {
    words(text).any(|w| w.ends_with("n't") || NEGATIONS.binary_search(&w.as_str()).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        content_tokens(s).into_iter().collect()
    }

    #[test]
    fn the_lists_are_sorted_so_lookups_are_binary_searches() {
        assert!(FUNCTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(NEGATIONS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_papers_carried_sentence_has_its_eleven_tokens() {
        let t = toks(
            "The stack is Postgres, Redis and the API, started with docker compose; see the deploy notes for the box.",
        );
        let want = [
            "api", "box", "compose", "deploy", "docker", "note", "postgre", "redis", "see",
            "stack", "started",
        ];
        assert_eq!(t, want);
    }

    #[test]
    fn the_papers_candidate_has_its_five_tokens() {
        assert_eq!(
            toks("Deploys go through docker compose on the box"),
            ["box", "compose", "deploy", "docker", "through"]
        );
    }

    #[test]
    fn the_loose_paraphrases_share_two_tokens_of_six() {
        let a = content_tokens("The memory store is Postgres with the pgvector extension");
        let b = content_tokens("Embeddings live in a Postgres table indexed by pgvector");
        assert_eq!((a.len(), b.len()), (5, 6));
        assert!((overlap(&a, &b) - 2.0 / 6.0).abs() < 1e-9);
    }

    #[test]
    fn the_unmarked_reversal_overlaps_at_exactly_the_threshold() {
        let a = content_tokens("Run migrations on API boot.");
        let b = content_tokens("Stop running migrations on API boot.");
        assert_eq!(
            toks("Run migrations on API boot."),
            ["api", "boot", "migration", "run"]
        );
        assert!((overlap(&a, &b) - 0.6).abs() < 1e-9);
        assert!(!is_negated("Stop running migrations on API boot."));
    }

    #[test]
    fn negation_is_read_from_words_and_contractions() {
        assert!(is_negated("Never run migrations by hand"));
        assert!(is_negated("We don't run migrations by hand"));
        assert!(is_negated("Deploy without the cache"));
        assert!(!is_negated("Run migrations by hand"));
    }

    #[test]
    fn overlap_is_symmetric_and_zero_for_an_empty_side() {
        let a = content_tokens("alpha beta gamma");
        let b = content_tokens("beta gamma delta epsilon");
        assert_eq!(overlap(&a, &b), overlap(&b, &a));
        assert_eq!(overlap(&a, &BTreeSet::new()), 0.0);
    }
}
