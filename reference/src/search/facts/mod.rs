//! The fact box's deterministic layer: validated facts read from the ruled results of this search, labelled with the document's own words (§8.8).
//!
//! A kind is in the box when a query word names it ([`FactQuery`], the
//! kind lexicon) and a candidate validates. Candidates are the validated
//! facts carried by the passages this search already returned and §4.1
//! already allowed: [`boxes`] takes the ruled [`SearchResult`]s and nothing
//! else. There is no second index, no second query and nothing stored; and
//! nothing on this path is logged, because a fact, its label, its kind and
//! the query that named the kind are all content (§8.8, gate 4).
//!
//! The layer has three parts, each in its own file:
//!
//! - the recognisers and validators ([`phone`], [`eircode`], [`iban`],
//!   [`vat`], [`email`]): generous recognition, strict validation; a span
//!   is the document's bytes exactly, and its canonical form is match-only
//!   (identity and validation, never rendered, never an operand);
//! - the label ([`label`]): the document's words before the value, never
//!   composed;
//! - the box ([`boxes`]): one candidate per canonical value, cited to its
//!   best-ranked passage; per kind the cap of three, the citation-line
//!   collision and narrowing by the reader's own words; one box per kind.
//!
//! The work per passage is bounded ([`FACT_PASSAGE_BYTES_MAX`],
//! [`FACT_SPANS_PER_PASSAGE_MAX`]), and a passage over either bound makes
//! the whole box empty rather than partial: a candidate the box could not
//! see could have been the second number that makes the first ambiguous,
//! and §8.8 will not turn an ambiguity into a confident single answer.
//!
//! No model is called anywhere here (decision 15 as amended: this is the
//! deterministic layer, and a validator-backed kind never reaches a model).
//! [`model`] is §8.9's model half as pure logic (what is sent for a postal
//! address, and which proposals are located); the one call it needs is
//! made by the web state after the ruling, with AI on only.

pub mod boxes;
pub mod eircode;
pub mod email;
pub mod iban;
pub mod label;
pub mod lexicon;
pub mod model;
pub mod phone;
pub mod vat;

pub use boxes::{Attribution, FACT_ROWS_MAX, FactBox, FactRow, Narrowed, boxes};
pub use label::{LABEL_CHARS_MAX, Label};
pub use lexicon::{FactQuery, tokens};

/// The longest passage the box scans, in bytes. A chunk is at most
/// `CHUNK_WORDS_MAX` (1,000) words, which is a few KiB of ordinary text;
/// 64 KiB leaves room for long words and pasted tables, and stops a
/// document of a million digits (one "word" the chunker cannot cut) from
/// costing a search anything measurable. Over it, no box (§8.8's bad input).
pub const FACT_PASSAGE_BYTES_MAX: usize = 64 * 1024;

/// The most candidate spans one passage may yield before the box gives up
/// on the whole search, counted after each recogniser's structural checks
/// and before the costly validators. A passage full of candidates (a
/// contact export, a table of numbers) is over the cap of three anyway;
/// 64 bounds the validator work per passage (§8.8's bad input).
pub const FACT_SPANS_PER_PASSAGE_MAX: usize = 64;

/// The kinds a box may hold: the five this layer validates (§8.8's table,
/// [`Kind::ALL`]), and [`Kind::Address`], §8.9's model kind, which no
/// recogniser here produces and only [`model`]'s box carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A telephone number: structural rules, then libphonenumber.
    Phone,
    /// An Irish postcode: the routing-key table and the identifier alphabet.
    Eircode,
    /// An IBAN: the registry's length and structure per country, mod-97.
    Iban,
    /// An Irish VAT number in the modern format, with its check letter.
    Vat,
    /// An email address: local@domain; pattern-spotting, and stated as weak.
    Email,
    /// A postal address: no validator, so never this layer's; a span a
    /// model pointed at and memoria located (§8.9).
    Address,
}

impl Kind {
    /// Every kind this layer validates, in the order a box names them when
    /// nothing else orders them ([`Kind::Address`] is not one).
    pub const ALL: [Kind; 5] = [
        Kind::Phone,
        Kind::Eircode,
        Kind::Iban,
        Kind::Vat,
        Kind::Email,
    ];

    /// The box's heading, e.g. `Phone`.
    pub fn heading(self) -> &'static str {
        match self {
            Kind::Phone => "Phone",
            Kind::Eircode => "Eircode",
            Kind::Iban => "IBAN",
            Kind::Vat => "VAT number",
            Kind::Email => "Email",
            Kind::Address => "Address",
        }
    }

    /// The singular a count line uses for one, e.g. `phone number`.
    pub fn singular(self) -> &'static str {
        match self {
            Kind::Phone => "phone number",
            Kind::Eircode => "eircode",
            Kind::Iban => "IBAN",
            Kind::Vat => "VAT number",
            Kind::Email => "email address",
            Kind::Address => "postal address",
        }
    }

    /// The plural a count line uses, e.g. `phone numbers`.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Phone => "phone numbers",
            Kind::Eircode => "eircodes",
            Kind::Iban => "IBANs",
            Kind::Vat => "VAT numbers",
            Kind::Email => "email addresses",
            Kind::Address => "postal addresses",
        }
    }

    /// The kind's name in markup and JSON, e.g. `phone`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Phone => "phone",
            Kind::Eircode => "eircode",
            Kind::Iban => "iban",
            Kind::Vat => "vat",
            Kind::Email => "email",
            Kind::Address => "address",
        }
    }
}

/// A validated value in a passage: where it is and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Its kind.
    pub kind: Kind,
    /// Byte offset of its first byte in the passage.
    pub start: usize,
    /// Byte offset one past its last byte.
    pub end: usize,
    /// The match-only form: identity and validation, never rendered (§8.8).
    pub canonical: String,
}

/// One validated fact found in a passage, with its label (§8.8's `fact.Found`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its kind.
    pub kind: Kind,
    /// The document's bytes, exactly: what the box displays.
    pub span: String,
    /// The match-only form (identity only).
    pub canonical: String,
    /// The label and where it came from.
    pub label: Label,
}

/// Why a passage yields no facts the box may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incomplete {
    /// Longer than [`FACT_PASSAGE_BYTES_MAX`].
    TooLong,
    /// More candidate spans than [`FACT_SPANS_PER_PASSAGE_MAX`].
    TooManySpans,
}

/// Counts candidate spans against [`FACT_SPANS_PER_PASSAGE_MAX`].
#[derive(Debug, Default)]
pub struct Budget {
    spent: usize,
}

impl Budget {
    /// Spends one candidate; false once the passage is over its bound.
    pub fn spend(&mut self) -> bool {
        self.spent += 1;
        self.spent <= FACT_SPANS_PER_PASSAGE_MAX
    }

    /// True once more than the bound were spent.
    pub fn exhausted(&self) -> bool {
        self.spent > FACT_SPANS_PER_PASSAGE_MAX
    }
}

/// Every validated span in `text`, of every kind, in order.
///
/// Where two validated spans share bytes, §8.8 is read this way (the
/// reading is DECISIONS.md's, "Nested fact spans"): a span lying inside
/// another is the enclosing value's part, and is not a candidate (an
/// IBAN's last groups that also read as a phone number are the IBAN's, as
/// §8.9's check 5 says a street name inside an email address is not an
/// address); the enclosing one stands. Two that cross, or two readings of
/// exactly the same bytes, are two readings with nothing to choose between
/// them: neither stands, and neither does a span inside either.
///
/// # Errors
/// [`Incomplete`] when the passage is over a bound: then nothing from it
/// may be used, because the box cannot know what it missed.
pub fn spans(text: &str) -> Result<Vec<Span>, Incomplete> {
    if text.len() > FACT_PASSAGE_BYTES_MAX {
        return Err(Incomplete::TooLong);
    }
    let mut budget = Budget::default();
    let mut all = Vec::new();
    phone::find(text, &mut budget, &mut all);
    eircode::find(text, &mut budget, &mut all);
    iban::find(text, &mut budget, &mut all);
    vat::find(text, &mut budget, &mut all);
    email::find(text, &mut budget, &mut all);
    if budget.exhausted() {
        return Err(Incomplete::TooManySpans);
    }
    all.sort_by_key(|s| (s.start, s.end));
    let keep: Vec<bool> = all.iter().map(|s| stands(s, &all)).collect();
    Ok(all
        .into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect())
}

/// True if `span` stands among `all` (which holds it): every other span
/// sharing bytes with it lies strictly inside it. A span inside another is
/// that one's part; two that cross or coincide are two readings of the
/// same bytes, and neither stands.
fn stands(span: &Span, all: &[Span]) -> bool {
    all.iter()
        .filter(|o| !std::ptr::eq(*o, span))
        .filter(|o| o.start < span.end && span.start < o.end)
        .all(|o| {
            span.start <= o.start && o.end <= span.end && (o.start, o.end) != (span.start, span.end)
        })
}

/// Every fact in one passage, each labelled by §8.8's rules against every
/// other span in it (of every kind, whatever the query asked for).
///
/// # Errors
/// As [`spans`].
pub fn scan(text: &str, trail: &[String], title: &str) -> Result<Vec<Found>, Incomplete> {
    let spans = spans(text)?;
    let starts = label::RunStarts::of(text);
    let ranges: Vec<(usize, usize)> = spans.iter().map(|s| (s.start, s.end)).collect();
    let mut out = Vec::with_capacity(spans.len());
    for (i, s) in spans.iter().enumerate() {
        let earlier = &ranges[..i];
        out.push(Found {
            kind: s.kind,
            span: text[s.start..s.end].to_string(),
            canonical: s.canonical.clone(),
            label: label::label(text, &starts, s.start, earlier, trail, title),
        });
    }
    Ok(out)
}

/// True if `c` may stand right before a value: the start of the text,
/// white space, or opening punctuation. A value glued to a word, a number,
/// a path, a hash tag, an `@` or a hyphen is part of something else (an
/// invoice number, a file name, a version, an address).
pub(crate) fn opens_after(prev: Option<char>) -> bool {
    match prev {
        None => true,
        Some(c) => c.is_whitespace() || "([{\"'“‘«:;,<>*|".contains(c),
    }
}

/// True if the text at `rest` (just after a value) closes it: the end, white
/// space, or closing punctuation not followed by more of a word (`10:30`,
/// `7854.5`, `a.png` are continuations, not ends).
pub(crate) fn closes_before(rest: &str) -> bool {
    let mut it = rest.chars();
    match it.next() {
        None => true,
        Some(c) if c.is_whitespace() => true,
        Some(c) if ")]}\"'”’»!?>*|".contains(c) => true,
        Some(c) if ".,;:".contains(c) => it.next().is_none_or(|n| !n.is_alphanumeric() && n != '@'),
        Some(_) => false,
    }
}

/// The character before byte `at` of `text`.
pub(crate) fn char_before(text: &str, at: usize) -> Option<char> {
    text[..at].chars().next_back()
}
#[cfg(test)]
mod real_text;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod vectors;
