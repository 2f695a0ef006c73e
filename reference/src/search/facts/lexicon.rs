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

/// A kind §8.9 may send to a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// A postal address: no checksum, no grammar, no length, so no validator.
    Address,
}

impl ModelKind {
    /// The box kind its rows are shown under.
    pub fn kind(self) -> Kind {
        match self {
            ModelKind::Address => Kind::Address,
        }
    }
}

/// What a lexicon phrase primes: a kind this layer validates, or one of
/// §8.9's model kinds, which this layer never produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primes {
    /// A validator-backed kind (§8.8's table): never sent to a model.
    Validated(Kind),
    /// A model kind (§8.9's allowlist): the postal address.
    Model(ModelKind),
}

/// One lexicon row: the phrase's tokens and what it primes.
type Row = (&'static [&'static str], Primes);

/// The kind lexicon (§8.8's table), longest phrase first.
pub const LEXICON: [Row; 18] = [
    (&["postal", "address"], Primes::Model(ModelKind::Address)),
    (&["office", "address"], Primes::Model(ModelKind::Address)),
    (&["email", "address"], Primes::Validated(Kind::Email)),
    (&["phone", "number"], Primes::Validated(Kind::Phone)),
    (&["vat", "number"], Primes::Validated(Kind::Vat)),
    (&["bank", "details"], Primes::Validated(Kind::Iban)),
    (&["post", "code"], Primes::Validated(Kind::Eircode)),
    (&["e", "mail"], Primes::Validated(Kind::Email)),
    (&["eircode"], Primes::Validated(Kind::Eircode)),
    (&["postcode"], Primes::Validated(Kind::Eircode)),
    (&["iban"], Primes::Validated(Kind::Iban)),
    (&["vat"], Primes::Validated(Kind::Vat)),
    (&["phone"], Primes::Validated(Kind::Phone)),
    (&["telephone"], Primes::Validated(Kind::Phone)),
    (&["tel"], Primes::Validated(Kind::Phone)),
    (&["mobile"], Primes::Validated(Kind::Phone)),
    (&["email"], Primes::Validated(Kind::Email)),
    (&["address"], Primes::Model(ModelKind::Address)),
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
    /// Validator-backed kinds primed, first-named first, each once (§8.8).
    pub kinds: Vec<Kind>,
    /// Model kinds primed (§8.9's allowlist), first-named first, each once.
    /// Apart from [`FactQuery::kinds`] by type, so a validator-backed kind
    /// cannot reach the model half whatever this layer did with it.
    pub models: Vec<ModelKind>,
    /// The reader's own words left after the lexicon and the stop lists.
    pub qualifiers: Vec<String>,
}

impl FactQuery {
    /// Reads a query (§8.8's lexicon, longest phrase first).
    pub fn parse(text: &str) -> FactQuery {
        let toks = tokens(text);
        let mut kinds = Vec::new();
        let mut models = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let hit = LEXICON.iter().find(|(phrase, _)| {
                toks.len() - i >= phrase.len() && phrase.iter().zip(&toks[i..]).all(|(p, t)| p == t)
            });
            match hit {
                Some((phrase, primes)) => {
                    match primes {
                        Primes::Validated(k) if !kinds.contains(k) => kinds.push(*k),
                        Primes::Model(k) if !models.contains(k) => models.push(*k),
                        Primes::Validated(_) | Primes::Model(_) => {}
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
        FactQuery {
            kinds,
            models,
            qualifiers,
        }
    }

    /// True if the query names no kind this layer serves: no box, no scan.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}
