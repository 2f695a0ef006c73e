//! What one ranked result is, how a page counts and names what it withheld, and S2's verdicts for a page's pairs (§8.1, §4.1): below the page, so the fact box and derived artefacts read them without the page.
//!
//! The page ([`crate::page`]) re-exports every item here; it keeps
//! the candidates, their ruling and the page itself.

use crate::date::{DateKind, DocumentDate};
use crate::net::wire::{Pair, Verdict};
use crate::search::highlight::Snippet;

/// Where a sibling document came from: every chunk of it carries this (§5.2, decision 8).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Provenance {
    /// The app of record, e.g. `sheets`.
    pub app: String,
    /// The sibling's item id (opaque).
    pub item_id: String,
    /// The sibling revision held (opaque, compared for equality only, §4.1).
    pub revision: String,
}

/// An app's name as a reader sees it: `sheets` → `Sheets`.
pub fn app_display_name(app: &str) -> String {
    let mut chars = app.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The marker for a passage a person wrote, as opposed to 🤖 for a model's (§8.1).
pub const MARKER_PERSON: &str = "👨";

/// The words a page shows beside [`MARKER_PERSON`], so the marker reads
/// without an emoji font and without a hover (§8.1: "👨/🤖 marker").
pub const MARKER_PERSON_LABEL: &str = "written by a person";

/// The words a page shows beside the drawn 🤖 figure where a model wrote
/// the text: the answer paragraph and a derived artefact (§8.1, §8.4).
pub const MARKER_MODEL_LABEL: &str = "written by a model";

/// The words a page shows beside the drawn 🤖 figure on a fact row a model
/// pointed at (§8.9): it found the span; the words are the document's.
pub const MARKER_MODEL_FOUND_LABEL: &str = "found by a model";

/// One search result: a passage with its citation (§8.1).
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchResult {
    /// Rank on the page, from 1.
    pub rank: usize,
    /// The app of record: `memoria` for uploads and imports.
    pub app: String,
    /// The document's public id.
    pub document_id: String,
    /// The document title.
    pub title: String,
    /// Heading trail, outermost first.
    pub trail: Vec<String>,
    /// The passage's 0-based position; cited as `#p{ordinal + 1}`
    /// ([`passage_anchor`]).
    pub ordinal: i64,
    /// 👨 for a passage a person wrote.
    pub marker: &'static str,
    /// The document's revision.
    pub revision: i64,
    /// The document's own date (issue 31), ISO (`2026-03-03`): the
    /// source's where it gives one, else the import date.
    pub date: String,
    /// Where `date` came from: `edited` (a sibling's revision time),
    /// `front_matter`, `file_modified` or `imported`.
    pub date_kind: DateKind,
    /// `date` as Unix seconds, for the words a page shows
    /// ([`SearchResult::date_phrase`]). Never serialised: `date` says it.
    #[serde(skip)]
    pub date_at: i64,
    /// Deep link: `/documents/{id}#p{n}`, `n` the passage's number from 1
    /// ([`passage_link`]).
    pub link: String,
    /// The highlighted window of the passage.
    pub snippet: Snippet,
    /// For a sibling's passage, the item and revision held; `None` if memoria-owned.
    pub provenance: Option<Provenance>,
    /// The passage's opened text, which the fact box reads after the ruling
    /// (§8.8). Never serialised: a page shows its snippet, not the passage.
    #[serde(skip)]
    pub text: String,
}

impl SearchResult {
    /// The passage's number as a page shows it, from 1: `ordinal + 1`, the
    /// number its deep link's anchor names too (`#p{n}`). The JSON keeps
    /// the 0-based `ordinal` beside it.
    pub fn passage_number(&self) -> i64 {
        passage_number(self.ordinal)
    }

    /// The words a page shows for the date: "edited 3 March 2026 in
    /// Docs", "file modified …", "imported …" ([`DocumentDate::phrase`]).
    pub fn date_phrase(&self) -> String {
        DocumentDate {
            kind: self.date_kind,
            at: self.date_at,
        }
        .phrase(&app_display_name(&self.app))
    }

    /// The words a page shows beside the marker: [`MARKER_PERSON_LABEL`]
    /// for [`MARKER_PERSON`].
    pub fn marker_label(&self) -> &'static str {
        match self.marker {
            MARKER_PERSON => MARKER_PERSON_LABEL,
            _ => "",
        }
    }

    /// The heading trail to show beside the title: the trail without a first
    /// entry that merely repeats the title (a document's own `# Title`).
    pub fn trail_below_title(&self) -> &[String] {
        trail_below(&self.title, &self.trail)
    }
}

/// A passage's number as every surface shows it, from 1, for its 0-based
/// `ordinal`: the label ("passage 2") and the anchor (`#p2`) alike (§8.1).
pub fn passage_number(ordinal: i64) -> i64 {
    ordinal.saturating_add(1)
}

/// The anchor of the passage at 0-based `ordinal` on its document's page:
/// `p{n}`, `n` its [`passage_number`], so a link names the number its
/// label shows.
pub fn passage_anchor(ordinal: i64) -> String {
    format!("p{}", passage_number(ordinal))
}

/// The deep link to the passage at 0-based `ordinal` of document
/// `document_id`: `/documents/{id}#p{n}` ([`passage_anchor`]), relative to
/// the instance (the MCP server makes it absolute with
/// `MEMORIA_PUBLIC_URL`).
pub fn passage_link(document_id: &str, ordinal: i64) -> String {
    format!("/documents/{document_id}#{}", passage_anchor(ordinal))
}

/// `trail` without a first entry that merely repeats `title` (a
/// document's own `# Title`): the trail a page shows beside the title.
pub fn trail_below<'a>(title: &str, trail: &'a [String]) -> &'a [String] {
    match trail.first() {
        Some(first) if first.trim() == title.trim() => &trail[1..],
        _ => trail,
    }
}

/// `n` with the word that counts it, as a reader reads it: `counted(1,
/// "passage", "passages")` is "1 passage", any other `n` takes `many`
/// ("0 passages", "3 passages"). Every count a page renders goes through it.
pub fn counted(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Why sibling passages were withheld loudly (§4.1, §8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WithheldReason {
    /// The sibling did not answer usefully (UNKNOWN).
    NoAnswer,
    /// The sibling has moved past the revision held (STALE): refetching.
    Stale,
    /// The sibling's log stops short of the revision held (AHEAD): the
    /// source is marked for re-announce, and nothing is deleted.
    Ahead,
}

/// One line of loud withholding: `count` passages from `app`, for `reason`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Withheld {
    /// The app of record, e.g. `sheets`.
    pub app: String,
    /// Why.
    pub reason: WithheldReason,
    /// How many results on this page were withheld.
    pub count: usize,
}

impl Withheld {
    /// One withheld passage or document of `app`'s, for `reason`: what a
    /// document page withholds (§8.1).
    pub fn one(app: &str, reason: WithheldReason) -> Withheld {
        Withheld {
            app: app.to_string(),
            reason,
            count: 1,
        }
    }

    /// The sentence the page shows, e.g. "Sheets did not answer; 7 results withheld."
    pub fn sentence(&self) -> String {
        let app = app_display_name(&self.app);
        let results = counted(self.count, "result", "results");
        match self.reason {
            WithheldReason::NoAnswer => format!("{app} did not answer; {results} withheld."),
            WithheldReason::Stale => format!(
                "{app} has a newer version of {results}; withheld while memoria fetches it."
            ),
            WithheldReason::Ahead => format!(
                "{app} is behind the version memoria holds of {results}, as after a restore; \
                 withheld until {app} re-announces. Nothing was deleted."
            ),
        }
    }
}

/// S2's answers for one request, by (app, item, revision) (§4.1). A pair
/// not in here is UNKNOWN: the absence of an answer is never a VISIBLE.
#[derive(Debug, Clone, Default)]
pub struct Verdicts {
    by_pair: std::collections::BTreeMap<(String, Pair), Verdict>,
}

impl Verdicts {
    /// No answers at all: every sibling passage is UNKNOWN.
    pub fn none() -> Verdicts {
        Verdicts::default()
    }

    /// Records `app`'s answer for `pairs` (as asked, in order).
    pub fn record(&mut self, app: &str, pairs: &[Pair], verdicts: &[Verdict]) {
        for (pair, verdict) in pairs.iter().zip(verdicts) {
            self.by_pair
                .insert((app.to_string(), pair.clone()), *verdict);
        }
    }

    /// The verdict for a passage's provenance; UNKNOWN if never answered.
    pub fn get(&self, p: &Provenance) -> Verdict {
        let key = (
            p.app.clone(),
            Pair {
                item_id: p.item_id.clone(),
                revision: p.revision.clone(),
            },
        );
        self.by_pair.get(&key).copied().unwrap_or(Verdict::Unknown)
    }

    /// Apps with at least one pair answered `verdict`.
    pub fn apps_with(&self, verdict: Verdict) -> std::collections::BTreeSet<String> {
        self.by_pair
            .iter()
            .filter(|(_, v)| **v == verdict)
            .map(|((app, _), _)| app.clone())
            .collect()
    }
}
