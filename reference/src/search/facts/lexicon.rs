//! The kind lexicon and the reader's qualifiers: which kinds a query names, and which of its words may narrow a box (§8.8).
//!
//! The lexicon maps distinctive words and phrases to kinds, longest phrase
//! first, so `email address` primes email and not the postal address, and
//! `number` on its own primes nothing: generic words count only in
//! combination. It can afford to be generous, because the validator is the
//! guard and not the prime: "mobile app" primes phone, finds no phone
//! number, and renders nothing.
//!
//! The box never changes what Enter does: it is a thing to read, not a
//! destination, so it adds no form, no focus and no link but its citations.
//!
//! Qualifiers are the query's [`tokens`] less every token of the lexicon's
//! phrases, the generic `number`, `numbers`, `no` and `nr`, a fixed list of
//! question and function words ([`FUNCTION_WORDS`], stated as incomplete,
//! and like the abbreviation list it must not grow into a parser) and
//! single-character tokens (the `s` of `what's` and `Tito's`).

use super::Kind;

/// One lexicon row: the phrase's tokens and what it primes (`None`: the
/// postal address, §8.9's model kind, which this layer never produces).
type Row = (&'static [&'static str], Option<Kind>);

/// The kind lexicon (§8.8's table), longest phrase first.
pub const LEXICON: [Row; 18] = [
    (&["postal", "address"], None),
    (&["office", "address"], None),
    (&["email", "address"], Some(Kind::Email)),
    (&["phone", "number"], Some(Kind::Phone)),
    (&["vat", "number"], Some(Kind::Vat)),
    (&["bank", "details"], Some(Kind::Iban)),
    (&["post", "code"], Some(Kind::Eircode)),
    (&["e", "mail"], Some(Kind::Email)),
    (&["eircode"], Some(Kind::Eircode)),
    (&["postcode"], Some(Kind::Eircode)),
    (&["iban"], Some(Kind::Iban)),
    (&["vat"], Some(Kind::Vat)),
    (&["phone"], Some(Kind::Phone)),
    (&["telephone"], Some(Kind::Phone)),
    (&["tel"], Some(Kind::Phone)),
    (&["mobile"], Some(Kind::Phone)),
    (&["email"], Some(Kind::Email)),
    (&["address"], None),
];

/// Lexicon tokens that stay qualifiers. `office` appears in the lexicon
/// only inside `office address`, §8.9's model kind's phrase, and §8.8's
/// pinned examples ("what is the office phone number?" → {office}) make it
/// a qualifier; the pinned example wins over the general sentence.
pub const LEXICON_TOKENS_KEPT: [&str; 1] = ["office"];

/// Generic words that are never qualifiers (§8.8).
pub const GENERIC_WORDS: [&str; 4] = ["number", "numbers", "no", "nr"];

/// Question and function words that are never qualifiers: interrogatives,
/// articles, pronouns, auxiliaries, common prepositions and request verbs.
/// Incomplete by design (§8.8).
pub const FUNCTION_WORDS: [&str; 72] = [
    "what", "whats", "which", "who", "whom", "whose", "where", "when", "why", "how", "the", "a",
    "an", "this", "that", "these", "those", "our", "ours", "my", "mine", "your", "yours", "their",
    "its", "it", "we", "us", "i", "me", "you", "they", "them", "is", "are", "was", "were", "be",
    "do", "does", "did", "can", "could", "would", "should", "will", "have", "has", "had", "of",
    "for", "to", "in", "on", "at", "by", "with", "from", "and", "or", "about", "tell", "give",
    "find", "show", "get", "need", "want", "please", "list", "any", "there",
];

/// The query's tokens (§8.8's `fact.tokens`): lowercased, split on
/// anything that is not a letter or a digit.
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// What a query asks of the fact box: the kinds it names, in the order it
/// names them, and the qualifiers narrowing may use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FactQuery {
    /// Kinds primed, first-named first, each once.
    pub kinds: Vec<Kind>,
    /// The reader's own words left after the lexicon and the stop lists.
    pub qualifiers: Vec<String>,
}

impl FactQuery {
    /// Reads a query (§8.8's lexicon, longest phrase first).
    pub fn parse(text: &str) -> FactQuery {
        let toks = tokens(text);
        let mut kinds = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let hit = LEXICON.iter().find(|(phrase, _)| {
                toks.len() - i >= phrase.len() && phrase.iter().zip(&toks[i..]).all(|(p, t)| p == t)
            });
            match hit {
                Some((phrase, kind)) => {
                    if let Some(k) = kind
                        && !kinds.contains(k)
                    {
                        kinds.push(*k);
                    }
                    i += phrase.len();
                }
                None => i += 1,
            }
        }
        let stop = |t: &str| {
            t.chars().count() <= 1
                || GENERIC_WORDS.contains(&t)
                || FUNCTION_WORDS.contains(&t)
                || (!LEXICON_TOKENS_KEPT.contains(&t)
                    && LEXICON.iter().any(|(phrase, _)| phrase.contains(&t)))
        };
        let mut qualifiers: Vec<String> = Vec::new();
        for t in toks {
            if !stop(&t) && !qualifiers.contains(&t) {
                qualifiers.push(t);
            }
        }
        FactQuery { kinds, qualifiers }
    }

    /// True if the query names no kind this layer serves: no box, no scan.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}
