//! The box: candidates from the ruled results only, one per value, and per kind the cap, the collision and narrowing (§8.8, "Candidates, ambiguity, the cap, and one box per kind").
//!
//! A candidate is one canonical value, cited to the best-ranked passage
//! carrying it: its first occurrence, in rank order, is its candidate, and
//! that occurrence's label is its label ("identity comes before matching").
//! Every rule below is applied per kind, and a multi-kind query renders one
//! box per kind, in the order the query named them.
//!
//! Never by picking: rank order sorts the rows and carries no claim about
//! which is the answer. A kind with at most [`FACT_ROWS_MAX`] candidates
//! renders them all, unless one's own label is over-long (rule 4 silences
//! the kind) or two share their whole citation line (title, trail, label),
//! which would be a contradiction the reader cannot resolve. Over the cap
//! the kind renders nothing, unless narrowing by the reader's own words
//! (Paul, 2026-09-29) leaves exactly one candidate whose own label holds
//! every qualifier as a whole token; then that one renders, alone, with a
//! line counting the others. Counts are taken after the §4.1 ruling, so a
//! withheld document neither adds to them nor is revealed by them.

use std::collections::BTreeSet;

use super::{Found, Incomplete, Kind, lexicon::FactQuery, scan, tokens};
use crate::search::result::{SearchResult, counted};

/// The cap, inclusive: three renders, four renders nothing (§8.8).
pub const FACT_ROWS_MAX: usize = 3;

/// One row of a box: a value, its label and its citation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FactRow {
    /// The value as the document wrote it, byte for byte.
    pub value: String,
    /// The label (the document's own words, or the trail or title).
    pub label: String,
    /// The document's title.
    pub title: String,
    /// The passage's heading trail, without a first entry repeating the title.
    pub trail: Vec<String>,
    /// The cited passage's rank on the page.
    pub rank: usize,
    /// The citation: `/documents/{id}#p{ordinal}`, the only link the box carries.
    pub link: String,
}

/// What narrowing did, for the line under the row (§8.8).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Narrowed {
    /// The qualifiers the row's label matched, as the reader typed them (lowercased).
    pub matched: Vec<String>,
    /// How many other candidates of this kind are in these results (at least three).
    pub others: usize,
}

/// Who vouches for a box's rows: a validator of this layer, or a model
/// that pointed at a span memoria then located (§8.9: "a reader must be
/// able to tell 'validated' from 'a model pointed here, and the text really
/// is in the document' at a glance").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Attribution {
    /// §8.8's recogniser and validator found every row.
    Validated,
    /// §8.9: a model proposed each row's span and memoria found its bytes
    /// in a sent passage; classification, completeness and relevance are
    /// the model's judgement. Names both the provider and the model.
    Model {
        /// The provider that received the passages, e.g. `TensorX`.
        provider: &'static str,
        /// The pinned model id, e.g. `deepseek/deepseek-v4-flash-0731`.
        model: &'static str,
    },
}

/// One kind's box.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FactBox {
    /// The kind.
    pub kind: Kind,
    /// Its rows, best-ranked first; never empty, at most [`FACT_ROWS_MAX`].
    pub rows: Vec<FactRow>,
    /// Set when narrowing chose the one row (never for a model box).
    pub narrowed: Option<Narrowed>,
    /// Who vouches for the rows.
    pub attribution: Attribution,
}

impl Narrowed {
    /// The line under a narrowed row, e.g. "Matched “office”. 3 other phone
    /// numbers are in these results." (one: "1 other phone number is").
    pub fn sentence(&self, kind: Kind) -> String {
        let quoted: Vec<String> = self.matched.iter().map(|q| format!("“{q}”")).collect();
        let matched = match quoted.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        };
        let others = counted(
            self.others,
            &format!("other {}", kind.singular()),
            &format!("other {}", kind.plural()),
        );
        let are = if self.others == 1 { "is" } else { "are" };
        format!("Matched {matched}. {others} {are} in these results.")
    }
}

/// One candidate: a value's first occurrence and where it was found.
pub(crate) struct Candidate<'r> {
    /// The value, its identity and its label.
    pub(crate) found: Found,
    /// The passage it is cited to.
    pub(crate) result: &'r SearchResult,
}

impl Candidate<'_> {
    /// The whole citation line: title, trail and label (§8.8's collision key).
    fn line(&self) -> (String, Vec<String>, String) {
        (
            self.result.title.clone(),
            self.result.trail_below_title().to_vec(),
            self.found.label.text.clone(),
        )
    }

    fn row(&self) -> FactRow {
        FactRow {
            value: self.found.span.clone(),
            label: self.found.label.text.clone(),
            title: self.result.title.clone(),
            trail: self.result.trail_below_title().to_vec(),
            rank: self.result.rank,
            link: self.result.link.clone(),
        }
    }

    /// True if the label is the document's own and holds every qualifier
    /// as a whole token (no stemming: `office` is not `offices`).
    fn matches(&self, qualifiers: &[String]) -> bool {
        let own = &self.found.label;
        let words: BTreeSet<String> = tokens(&own.text).into_iter().collect();
        own.own && qualifiers.iter().all(|q| words.contains(q))
    }
}

/// The boxes for `query` over `results`, which must be the ruled results of
/// this request and nothing else (§8.8, gate 34): one per kind named, in
/// the order named, each present only when its rules let it render.
pub fn boxes(query: &FactQuery, results: &[SearchResult]) -> Vec<FactBox> {
    if query.is_empty() || results.is_empty() {
        return vec![];
    }
    let mut found: Vec<(Found, &SearchResult)> = Vec::new();
    for r in results {
        match scan(&r.text, &r.trail, &r.title) {
            Ok(fs) => found.extend(fs.into_iter().map(|f| (f, r))),
            // A passage the box could not read whole may hold the candidate
            // that makes another ambiguous: no box at all, never a partial one.
            Err(Incomplete::TooLong | Incomplete::TooManySpans) => return vec![],
        }
    }
    query
        .kinds
        .iter()
        .filter_map(|kind| kind_box(*kind, query, &found))
        .collect()
}

/// One kind's box, or `None` when its rules render nothing.
fn kind_box(kind: Kind, query: &FactQuery, found: &[(Found, &SearchResult)]) -> Option<FactBox> {
    rule_box(
        kind,
        candidates(kind, found),
        Some(&query.qualifiers),
        Attribution::Validated,
    )
}

/// `kind`'s candidates in `found` (which is in rank order): one per
/// identity ([`Found::canonical`]), its first occurrence, so a value is
/// cited to the best-ranked passage carrying it.
pub(crate) fn candidates<'r>(
    kind: Kind,
    found: &[(Found, &'r SearchResult)],
) -> Vec<Candidate<'r>> {
    let mut seen = BTreeSet::new();
    found
        .iter()
        .filter(|(f, _)| f.kind == kind && seen.insert(f.canonical.clone()))
        .map(|(f, r)| Candidate {
            found: f.clone(),
            result: r,
        })
        .collect()
}

/// The box §8.8's rules make of one kind's `candidates`: all of them up
/// to [`FACT_ROWS_MAX`] unless one's own label is over-long or two share a
/// citation line; over the cap, narrowing by `qualifiers` when given
/// (`None`: §8.9's model kinds, which are not narrowed), else nothing.
pub(crate) fn rule_box(
    kind: Kind,
    candidates: Vec<Candidate<'_>>,
    qualifiers: Option<&[String]>,
    attribution: Attribution,
) -> Option<FactBox> {
    if candidates.is_empty() {
        return None;
    }
    if candidates.len() <= FACT_ROWS_MAX {
        if candidates.iter().any(|c| c.found.label.over_long) {
            return None;
        }
        let lines: BTreeSet<_> = candidates.iter().map(Candidate::line).collect();
        if lines.len() != candidates.len() {
            return None;
        }
        return Some(FactBox {
            kind,
            rows: candidates.iter().map(Candidate::row).collect(),
            narrowed: None,
            attribution,
        });
    }
    // Over the cap: narrowing by the reader's own words, or nothing.
    let qualifiers = qualifiers.filter(|q| !q.is_empty())?;
    let matching: Vec<&Candidate<'_>> = candidates
        .iter()
        .filter(|c| c.matches(qualifiers))
        .collect();
    let [one] = matching.as_slice() else {
        return None;
    };
    if one.found.label.over_long {
        return None;
    }
    Some(FactBox {
        kind,
        rows: vec![one.row()],
        narrowed: Some(Narrowed {
            matched: qualifiers.to_vec(),
            others: candidates.len() - 1,
        }),
        attribution,
    })
}
