//! One page of results and how it is ruled: the candidates, S2's verdicts, and the lines a reader sees for what was withheld (§8.1, §4.1).
//!
//! [`Candidates`] are opened but not yet ruled; `sibling::ruled` asks S2
//! and [`Candidates::rule`] turns the [`Verdicts`] into a [`SearchPage`]:
//! VISIBLE renders, NOT_VISIBLE is omitted and counted nowhere, STALE,
//! AHEAD and UNKNOWN are [`Withheld`] with one line per app and reason.

use crate::artefact::{
    ArtefactCandidate, ArtefactRuling, ArtefactWithheld, ArtefactWithheldReason, ShownArtefact,
};
use crate::error::Error;
use crate::net::wire::{Pair, Verdict};
use crate::search::facts::model::ModelFailure;
use crate::search::facts::{FactBox, FactQuery, boxes};
use crate::search::query;
// What one result is, and the withheld lines, live below the page, so the
// fact box and derived artefacts read them without importing the page.
pub use crate::search::result::{
    MARKER_MODEL_FOUND_LABEL, MARKER_MODEL_LABEL, MARKER_PERSON, MARKER_PERSON_LABEL, SearchResult,
    Verdicts, Withheld, WithheldReason, app_display_name, counted, passage_anchor, passage_link,
    passage_number, trail_below,
};

/// Results per page of the search page and the CLI (§8.1).
pub const PAGE_SIZE_RESULTS: usize = 20;
/// The deepest page served; beyond it the page is empty. Bounds FTS5's OFFSET.
pub const PAGE_MAX: u32 = 50;
/// One page of search results.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SearchPage {
    /// How many words the query held (0: empty, nothing searched).
    pub query_words: usize,
    /// The page number, from 1.
    pub page: u32,
    /// Results on this page, best first.
    pub results: Vec<SearchResult>,
    /// True if another page follows.
    pub has_next: bool,
    /// Sibling passages withheld loudly, per app and reason (§8.1). Never
    /// NOT_VISIBLE: that value is omitted silently and counted nowhere.
    pub withheld: Vec<Withheld>,
    /// Sources out of the ranking while they reconcile (marked for
    /// re-announce: an AHEAD, a rewound or expired feed, memoria's own
    /// restore), one line each (§4.1 rule 1, §8.1): the results page names them.
    pub reconciling: Vec<Reconciling>,
    /// Siblings whose content may be behind, one line each (§8.1: "a failed
    /// or stale S1 → the page states the corpus is current as of a time"),
    /// filled by the caller that knows the pulls
    /// ([`crate::sibling::Puller::freshness`]); empty without siblings.
    pub freshness: Vec<Freshness>,
    /// The fact boxes, one per kind the query named that has something to
    /// show, read from `results` and nothing else (§8.8).
    pub facts: Vec<FactBox>,
    /// Why §8.9's model half shows nothing from the provider on this page,
    /// when its call failed or its reply was rejected whole: the page's one
    /// loud line naming the provider. `None` with AI off, when no model
    /// kind was named, and when the call answered and was used.
    pub model_failure: Option<ModelFailure>,
    /// How the page was ranked (§7): with AI on and the provider silent, the
    /// page says its results are lexical only.
    pub semantic: SemanticRanking,
    /// The derived artefacts the search found that every root let through
    /// (§5.2), each naming the model that wrote it (decision 4); empty
    /// with AI off, when none is written.
    pub artefacts: Vec<ShownArtefact>,
    /// Artefacts withheld loudly, one line per reason (§5.2). An artefact
    /// with a NOT_VISIBLE root is in none: it vanished, counted nowhere.
    pub artefacts_withheld: Vec<ArtefactWithheld>,
    /// True when an artefact on the page was withheld because a source
    /// changed: the caller starts its regeneration (§5.2).
    #[serde(skip)]
    pub regenerate: bool,
    /// The numeric route's answer (§8.7), above the results like the fact
    /// box: S6's number with its unit and citations, or the slot table.
    /// `None` when the question is not numeric, and before the route runs.
    pub numeric: Option<crate::numeric::NumericAnswer>,
}

impl SearchPage {
    /// The line that counts the results shown: "12 results", "1 result"
    /// on a search that fits one page; on a page of several, the ranks it
    /// shows, e.g. "Results 21–40; more on the next page.". `None` when the
    /// page shows no result: it says why in its own words. The count is of
    /// what renders, after the ruling: a passage NOT_VISIBLE was never a
    /// result (§8.1), and no total is claimed that was not ruled.
    pub fn count_line(&self) -> Option<String> {
        let (first, last) = (self.results.first()?.rank, self.results.last()?.rank);
        if self.page <= 1 && !self.has_next {
            return Some(counted(self.results.len(), "result", "results"));
        }
        let ranks = if first == last {
            format!("Result {first}")
        } else {
            format!("Results {first}–{last}")
        };
        Some(if self.has_next {
            format!("{ranks}; more on the next page.")
        } else {
            format!("{ranks}.")
        })
    }

    /// The page as text, for a terminal or an agent's context: what
    /// `memoria search` prints and `memoria mcp`'s `search` tool returns.
    /// The notices come first, as on the page (the ranking, each
    /// reconciling source, each withheld line), then one block of three
    /// lines per result (rank, title and trail; app, passage, marker, date,
    /// revision and deep link; the snippet as [`Snippet::to_marked_text`]
    /// marks it), then the next page's number. A page with nothing to show
    /// says why, in the page's words.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        if self.query_words == 0 {
            let _ = writeln!(out, "The query holds no words to search for.");
            return out;
        }
        if self.semantic == SemanticRanking::Unavailable {
            let _ = writeln!(out, "{}", SemanticRanking::UNAVAILABLE_SENTENCE);
        }
        for r in &self.reconciling {
            let _ = writeln!(out, "{}", r.sentence());
        }
        for f in &self.freshness {
            let _ = writeln!(out, "{}", f.sentence());
        }
        for w in &self.withheld {
            let _ = writeln!(out, "{}", w.sentence());
        }
        for w in &self.artefacts_withheld {
            let _ = writeln!(out, "{}", w.sentence());
        }
        for a in &self.artefacts {
            let _ = writeln!(
                out,
                "{} (written by {}, from {} sources)",
                a.title, a.model, a.roots
            );
            let _ = writeln!(
                out,
                "     {}",
                a.text.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
        if self.results.is_empty() && self.reconciling.is_empty() {
            let why = if !self.withheld.is_empty() {
                "No passage can be shown."
            } else if self.page > 1 {
                "No more results."
            } else {
                "No passage matched."
            };
            let _ = writeln!(out, "{why}");
        }
        for r in &self.results {
            let trail = if r.trail_below_title().is_empty() {
                String::new()
            } else {
                format!(" › {}", r.trail_below_title().join(" › "))
            };
            let _ = writeln!(out, "{:>3}. {}{trail}", r.rank, r.title);
            let _ = writeln!(
                out,
                "     {} · passage {} · {} {} · {} · revision {} · {}",
                r.app,
                r.passage_number(),
                r.marker,
                r.marker_label(),
                r.date_phrase(),
                r.revision,
                r.link
            );
            let _ = writeln!(out, "     {}", r.snippet.to_marked_text());
        }
        if self.has_next {
            let _ = writeln!(out, "More results: page {}.", self.page + 1);
        }
        out
    }
}

/// One source out of the search until its re-announce completes (§4.1 rule 1).
///
/// Its chunks were not scored and not counted against the page; the page
/// says so in one line instead of one per passage. It states the suite's
/// health, never a permission, so it goes on a reader's results page (§8.1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reconciling {
    /// The app of record, e.g. `sheets`.
    pub app: String,
}

impl Reconciling {
    /// The sentence the page shows, e.g. "Sheets is reconciling: its
    /// results are temporarily out of the search until it re-announces."
    /// It names no cause: a mark comes from an AHEAD, a rewound or
    /// expired feed or memoria's own restore, and §8.1 words it as
    /// "temporarily out of the search".
    pub fn sentence(&self) -> String {
        format!(
            "{} is reconciling: its results are temporarily out of the search until it re-announces.",
            app_display_name(&self.app)
        )
    }
}

/// A sibling whose content on this page may be behind (§8.1): its last
/// pull for changes failed, or its last S1 answer is old. Content-free; one
/// line per sibling, in the notices above the results.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Freshness {
    /// The app of record, e.g. `docs`.
    pub app: String,
    /// Unix seconds of its last S1 answer memoria applied: what its content
    /// is current as of. `None` if it never answered.
    pub current_as_of: Option<i64>,
    /// Its last pull failed (the feed did not answer, a fetch or the
    /// re-announce failed).
    pub last_pull_failed: bool,
}

impl Freshness {
    /// The sentence the page shows, e.g. "memoria's last pull of changes
    /// from Docs failed; its results are current as of 2026-12-05 09:00
    /// UTC."
    pub fn sentence(&self) -> String {
        let app = app_display_name(&self.app);
        match (self.current_as_of, self.last_pull_failed) {
            (Some(t), true) => format!(
                "memoria's last pull of changes from {app} failed; its results are current as of {} UTC.",
                crate::clock::iso_date_time(t)
            ),
            (None, true) => format!(
                "memoria's last pull of changes from {app} failed, and none has succeeded yet: its results may be missing."
            ),
            (Some(t), false) => format!(
                "Results from {app} are current as of {} UTC; memoria is pulling its changes now.",
                crate::clock::iso_date_time(t)
            ),
            (None, false) => format!(
                "{app} has not answered a pull for changes yet: its results may be missing."
            ),
        }
    }
}

/// The ranked candidates for one page, opened but not yet ruled (§8.1).
#[derive(Debug, Clone)]
pub struct Candidates {
    /// How many words the query held.
    pub query_words: usize,
    /// The page number, from 1.
    pub page: u32,
    /// Candidates best first; sibling ones carry provenance.
    pub results: Vec<SearchResult>,
    /// True if another page follows.
    pub has_next: bool,
    /// Apps marked for re-announce, left out of the ranking (§4.1 rule 1).
    pub reconciling: Vec<String>,
    /// What the query asks of the fact box (§8.8): the kinds it names and
    /// the reader's qualifiers. Applied in [`Candidates::rule`], after S2.
    pub facts: FactQuery,
    /// How the candidates were ranked (§7, §8.1).
    pub semantic: SemanticRanking,
    /// The derived artefacts the search found, read for ruling by their
    /// roots (§5.2), best-ranked first; not among `results`.
    pub artefacts: Vec<ArtefactCandidate>,
}

/// How a page was ranked, and so what it says of it (§7, §8.1, issue 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SemanticRanking {
    /// AI is off: BM25 alone, as the footer already says.
    #[default]
    Off,
    /// BM25 and the dense scan, fused by reciprocal rank.
    Fused,
    /// AI is on, but the query could not be embedded: BM25 alone, said
    /// loudly on the page ([`SemanticRanking::UNAVAILABLE_SENTENCE`]).
    Unavailable,
}

impl SemanticRanking {
    /// The line a page shows when semantic ranking is unavailable.
    pub const UNAVAILABLE_SENTENCE: &str = "Semantic ranking is unavailable: the embedding provider did not answer, so these results are ranked by their words alone.";
}

impl Candidates {
    /// The pairs to put to S2, per app: one per sibling item on the page,
    /// in first-ranked order (§4.1, §5.2).
    pub fn pairs_by_app(&self) -> std::collections::BTreeMap<String, Vec<Pair>> {
        let mut out: std::collections::BTreeMap<String, Vec<Pair>> = Default::default();
        let mut add = |app: &str, pair: Pair| {
            let pairs = out.entry(app.to_string()).or_default();
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        };
        for r in &self.results {
            if let Some(p) = &r.provenance {
                let pair = Pair {
                    item_id: p.item_id.clone(),
                    revision: p.revision.clone(),
                };
                add(&p.app, pair);
            }
        }
        // Each artefact's sibling roots, flattened when it was written
        // (§5.2 step 2): as many S2 batches as they need.
        for a in &self.artefacts {
            for (app, pairs) in a.sibling_pairs() {
                for pair in pairs {
                    add(&app, pair);
                }
            }
        }
        out
    }

    /// Applies §8.1 to the candidates: memoria-owned passages render (their
    /// authority is §4.2, already applied); a sibling passage renders only
    /// on VISIBLE for its exact (item, revision) in `verdicts`; NOT_VISIBLE
    /// is omitted silently; STALE, AHEAD and UNKNOWN, and a pair missing
    /// from `verdicts`, are withheld and counted per app and reason. The
    /// fact box is read from what renders, after the ruling, and from
    /// nothing else (§8.8, gate 34).
    pub fn rule(self, verdicts: &Verdicts) -> SearchPage {
        let mut results = Vec::with_capacity(self.results.len());
        let mut withheld: std::collections::BTreeMap<(String, WithheldReason), usize> =
            Default::default();
        let offset = (self.page.max(1) as usize - 1) * PAGE_SIZE_RESULTS;
        for mut r in self.results {
            let reason = match &r.provenance {
                None => None,
                Some(p) => match verdicts.get(p) {
                    Verdict::Visible => None,
                    Verdict::NotVisible => continue,
                    Verdict::Stale => Some(WithheldReason::Stale),
                    Verdict::Ahead => Some(WithheldReason::Ahead),
                    Verdict::Unknown => Some(WithheldReason::NoAnswer),
                },
            };
            match reason {
                None => {
                    r.rank = offset + results.len() + 1;
                    results.push(r);
                }
                Some(reason) => {
                    *withheld.entry((r.app.clone(), reason)).or_insert(0) += 1;
                }
            }
        }
        let facts = boxes(&self.facts, &results);
        let mut artefacts = Vec::new();
        let mut artefacts_held: std::collections::BTreeMap<ArtefactWithheldReason, usize> =
            Default::default();
        for a in &self.artefacts {
            match a.rule(verdicts) {
                ArtefactRuling::Shown(shown) => artefacts.push(shown),
                ArtefactRuling::Vanished => {}
                ArtefactRuling::Withheld(reason) => {
                    *artefacts_held.entry(reason).or_insert(0) += 1;
                }
            }
        }
        SearchPage {
            regenerate: artefacts_held.contains_key(&ArtefactWithheldReason::Regenerating),
            artefacts,
            artefacts_withheld: artefacts_held
                .into_iter()
                .map(|(reason, count)| ArtefactWithheld { reason, count })
                .collect(),
            query_words: self.query_words,
            page: self.page,
            facts,
            model_failure: None,
            results,
            has_next: self.has_next,
            withheld: withheld
                .into_iter()
                .map(|((app, reason), count)| Withheld { app, reason, count })
                .collect(),
            reconciling: self
                .reconciling
                .into_iter()
                .map(|app| Reconciling { app })
                .collect(),
            freshness: vec![],
            semantic: self.semantic,
            numeric: None,
        }
    }
}

/// Why a search produced no page.
#[derive(Debug)]
pub enum SearchError {
    /// The asker is not admitted (§4.3).
    NotAdmitted,
    /// The query text is over [`query::QUERY_BYTES_MAX`].
    TooLong {
        /// Its size in bytes of UTF-8, the unit of the limit (§9.1).
        bytes: usize,
        /// Its size in characters, the unit a person counts in.
        chars: usize,
    },
    /// The query holds more than [`query::QUERY_WORDS_MAX`] different words:
    /// refused whole, never searched with the rest cut off.
    TooManyWords {
        /// How many different words it held.
        words: usize,
    },
    /// The engine rejected the query: reported, never shown as "no results".
    Engine(Error),
    /// The store failed.
    Store(Error),
}

impl std::fmt::Display for SearchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchError::NotAdmitted => f.write_str("not admitted"),
            SearchError::TooLong { bytes, chars } => write!(
                f,
                "the query is {bytes} bytes ({chars} characters); memoria searches at most {} bytes",
                query::QUERY_BYTES_MAX
            ),
            SearchError::TooManyWords { words } => write!(
                f,
                "the query holds {words} different words; memoria searches at most {}",
                query::QUERY_WORDS_MAX
            ),
            SearchError::Engine(e) => write!(f, "the search engine failed: {e}"),
            SearchError::Store(e) => write!(f, "the store failed: {e}"),
        }
    }
}

impl std::error::Error for SearchError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::highlight::Snippet;

    fn result(rank: usize) -> SearchResult {
        SearchResult {
            rank,
            app: "memoria".into(),
            document_id: "d".into(),
            title: "T".into(),
            trail: vec![],
            ordinal: 0,
            marker: MARKER_PERSON,
            revision: 1,
            date: "2026-01-01".into(),
            date_kind: crate::date::DateKind::Imported,
            date_at: 0,
            link: "/documents/d#p1".into(),
            snippet: Snippet {
                cut_before: false,
                segments: vec![],
                cut_after: false,
            },
            provenance: None,
            text: String::new(),
        }
    }

    /// Page `page` showing `count` results from rank `first`.
    fn page_of(page: u32, first: usize, count: usize, has_next: bool) -> SearchPage {
        SearchPage {
            query_words: 1,
            page,
            results: (first..first + count).map(result).collect(),
            has_next,
            withheld: vec![],
            reconciling: vec![],
            freshness: vec![],
            facts: vec![],
            model_failure: None,
            semantic: SemanticRanking::Off,
            artefacts: vec![],
            artefacts_withheld: vec![],
            regenerate: false,
            numeric: None,
        }
    }

    #[test]
    fn a_count_is_singular_for_one_and_plural_otherwise() {
        assert_eq!(counted(0, "passage", "passages"), "0 passages");
        assert_eq!(counted(1, "passage", "passages"), "1 passage");
        assert_eq!(counted(2, "passage", "passages"), "2 passages");
        assert_eq!(counted(11, "result", "results"), "11 results");
    }

    #[test]
    fn the_count_line_counts_a_search_on_one_page_and_names_the_ranks_across_pages() {
        assert_eq!(
            page_of(1, 1, 1, false).count_line().as_deref(),
            Some("1 result")
        );
        assert_eq!(
            page_of(1, 1, 12, false).count_line().as_deref(),
            Some("12 results")
        );
        assert_eq!(
            page_of(1, 1, 20, true).count_line().as_deref(),
            Some("Results 1–20; more on the next page.")
        );
        assert_eq!(
            page_of(2, 21, 7, false).count_line().as_deref(),
            Some("Results 21–27.")
        );
        assert_eq!(
            page_of(3, 41, 1, false).count_line().as_deref(),
            Some("Result 41.")
        );
        assert_eq!(
            page_of(1, 1, 0, false).count_line(),
            None,
            "no result, no count"
        );
    }

    #[test]
    fn a_withheld_line_agrees_in_number_with_its_count() {
        let one = Withheld::one("sheets", WithheldReason::NoAnswer);
        assert_eq!(one.sentence(), "Sheets did not answer; 1 result withheld.");
        let seven = Withheld { count: 7, ..one };
        assert_eq!(
            seven.sentence(),
            "Sheets did not answer; 7 results withheld."
        );
    }

    #[test]
    fn a_passage_is_numbered_from_one_and_its_marker_carries_its_words() {
        let mut r = result(1);
        r.ordinal = 0;
        assert_eq!(r.passage_number(), 1, "ordinal 0 is passage 1");
        assert_eq!(
            passage_link("d", r.ordinal),
            "/documents/d#p1",
            "the anchor names the number the label shows"
        );
        assert_eq!(r.marker_label(), "written by a person");
    }
}
