//! The results page and its fragment: one ruled page of citations, with every withholding said aloud (§8.1, §4.1).

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{Markup, html};

use super::AppState;
use super::envelope::{layout, page, standing_region};
use super::extract::SignedIn;
use super::marker::{model_marker, person_marker};
use super::state::SessionCheck;
use crate::instance::DocumentsPage;
use crate::page::{SearchError, SearchPage, SearchResult, SemanticRanking, counted};
use crate::search::query::{QUERY_BYTES_MAX, QUERY_WORDS_MAX};

#[derive(Debug, serde::Deserialize)]
pub(crate) struct SearchParams {
    pub(crate) q: Option<String>,
    pub(crate) page: Option<String>,
    pub(crate) deleted: Option<String>,
    /// The page of the home page's list of documents, from 1 (issue 30).
    pub(crate) docs: Option<String>,
}

pub(crate) fn parse_page(p: &Option<String>) -> u32 {
    p.as_deref()
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

/// The derived artefacts shown (§5.2): each its title, the model that
/// wrote it and how many sources it rests on, then its text as plain
/// paragraphs (model output: never rendered as Markdown or HTML).
fn artefacts_region(artefacts: &[crate::artefact::ShownArtefact]) -> Markup {
    html! {
        @if !artefacts.is_empty() {
            section.artefacts aria-label="Summaries" {
                @for a in artefacts {
                    article.artefact data-artefact=(a.id) {
                        h3 { (model_marker(crate::page::MARKER_MODEL_LABEL)) " " (a.title) }
                        p.artefact-model {
                            "Written by " (a.model) " from "
                            (crate::page::counted(a.roots, "source", "sources"))
                            "; shown because you may see every one of them."
                        }
                        @for para in a.text.split("\n\n").filter(|t| !t.trim().is_empty() && !t.starts_with("# ")) {
                            p { (para.trim()) }
                        }
                    }
                }
            }
        }
    }
}

pub(crate) fn results_region(
    q: &str,
    outcome: &Result<SearchPage, SearchError>,
    answer: Option<&crate::answer::Outcome>,
) -> (StatusCode, Markup) {
    match outcome {
        Err(SearchError::TooLong { bytes, chars }) => (
            StatusCode::BAD_REQUEST,
            html! { section #results { p.refusal {
                "Your search is " (chars) " characters, " (bytes) " bytes; memoria searches at most "
                (QUERY_BYTES_MAX) " bytes (1 KiB), so it was not run. A plain letter is one byte, an accented letter two, a Chinese or Japanese character three. Shorten it and search again."
            } } },
        ),
        Err(SearchError::TooManyWords { words }) => (
            StatusCode::BAD_REQUEST,
            html! { section #results { p.refusal {
                "Your search holds " (words) " different words; memoria searches at most " (QUERY_WORDS_MAX) ", so it was not run. Remove some words and search again."
            } } },
        ),
        Err(SearchError::Engine(_)) => (
            StatusCode::BAD_REQUEST,
            html! { section #results { p.refusal {
                "The search engine could not run this query. This is not a \"no results\" answer: nothing was searched. Try fewer or simpler words."
            } } },
        ),
        Err(SearchError::Store(_)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            html! { section #results { p.refusal {
                "The store could not be read, so this search has no results to show. Nothing was searched to completion."
            } } },
        ),
        Err(SearchError::NotAdmitted) => (
            StatusCode::FORBIDDEN,
            html! { section #results { p.refusal { "You are not admitted to this memoria." } } },
        ),
        Ok(p) if p.query_words == 0 => (
            StatusCode::OK,
            html! { section #results {
                @if !q.is_empty() { p.notice { "Your search holds no words to look for, so nothing was searched." } }
            } },
        ),
        Ok(p) => (
            StatusCode::OK,
            html! { section #results {
                // Notices, boxed apart from the results (the stylesheet's
                // `.reconciling` and `.withheld`), read as they open.
                // With AI on and the provider silent, the page says its
                // ranking is lexical only: never a silent lexical page.
                @if p.semantic == SemanticRanking::Unavailable {
                    p.withheld.semantic role="status" { (SemanticRanking::UNAVAILABLE_SENTENCE) }
                }
                // §8.9: the model half's call failed or its reply was
                // rejected whole; the page is otherwise unchanged.
                @if let Some(f) = &p.model_failure {
                    p.withheld.model-failure role="status" { (f.sentence()) }
                }
                @for r in &p.reconciling {
                    p.reconciling role="status" data-app=(r.app) { (r.sentence()) }
                }
                // §8.1: a failed or old S1 pull says how current the corpus is.
                @for f in &p.freshness {
                    p.freshness role="status" data-app=(f.app) { (f.sentence()) }
                }
                @for w in &p.withheld {
                    p.withheld role="status" data-app=(w.app) { (w.sentence()) }
                }
                // §5.2: derived artefacts withheld loudly, one line a reason.
                @for w in &p.artefacts_withheld {
                    p.withheld.artefact role="status" { (w.sentence()) }
                }
                // A reconciling source is out of the search: its lines say so,
                // and the page never claims nothing matched (§4.1 rule 1).
                @if p.results.is_empty() && p.reconciling.is_empty() {
                    @if !p.withheld.is_empty() { p { "No passage can be shown." } }
                    @else if p.page > 1 { p { "No more results." } } @else { p { "No passage matched." } }
                }
                // A page with no result is never a dead end (issue 31): a
                // way on, whatever the reason it is empty.
                @if p.results.is_empty() {
                    nav.way-on {
                        @if p.page > 1 && p.reconciling.is_empty() && p.withheld.is_empty() {
                            a href=(page_link(q, 1)) { "Back to the first page of results" }
                        } @else {
                            "Try fewer or other words, or " a href="/#documents" { "browse every document" } "."
                        }
                    }
                }
                // The numeric answer (§8.7), then the fact box: below the
                // notices and above the list (§8.8).
                (super::numeric::numeric_box(p.numeric.as_ref()))
                (super::facts::fact_boxes(&p.facts))
                // The answer: above the list, below the box (§8.4, §8.2).
                (super::answer::answer_region(answer, p))
                // Derived artefacts every root let through (§5.2), each
                // naming the model that wrote it (decision 4).
                (artefacts_region(&p.artefacts))
                @if let Some(count) = p.count_line() { p.count { (count) } }
                ol start=(p.results.first().map(|r| r.rank).unwrap_or(1)) {
                    @for entry in fold(&p.results) {
                        @match entry {
                            Entry::Shown(r) => { (result_item(r, q, p.page)) }
                            Entry::Fold(more) => {
                                li.fold {
                                    details {
                                        summary { (fold_summary(&more)) }
                                        ol { @for r in more { (result_item(r, q, p.page)) } }
                                    }
                                }
                            }
                        }
                    }
                }
                nav.pages {
                    @if p.page > 1 {
                        a href=(page_link(q, p.page - 1)) { "‹ Previous" } " "
                    }
                    @if p.has_next {
                        a href=(page_link(q, p.page + 1)) { "Next ›" }
                    }
                }
            } },
        ),
    }
}

/// How many results of one document a page shows before it folds the
/// rest of that document's results on the page under it (issue 31: one
/// document filled ten of thirteen results).
pub(crate) const FOLD_AFTER_RESULTS: usize = 3;

/// One entry of the rendered list: a result, or the fold that holds a
/// document's results past its first [`FOLD_AFTER_RESULTS`] on this page.
pub(crate) enum Entry<'a> {
    /// A result shown in its place.
    Shown(&'a SearchResult),
    /// A document's further results on this page, in rank order.
    Fold(Vec<&'a SearchResult>),
}

/// The page's results as the list renders them. Folding is within the page
/// only: page N is still ranks 20(N−1)+1 to 20N of the one ranking, each
/// result on the page it ranks on; a document's results past its first
/// [`FOLD_AFTER_RESULTS`] on this page are moved, in rank order, into one
/// fold placed straight after its last shown result. A later page counts
/// afresh: a document folded on page 1 shows its first three there again.
pub(crate) fn fold(results: &[SearchResult]) -> Vec<Entry<'_>> {
    use std::collections::HashMap;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut folded: HashMap<&str, Vec<&SearchResult>> = HashMap::new();
    for r in results {
        let n = seen.entry(r.document_id.as_str()).or_insert(0);
        *n += 1;
        if *n > FOLD_AFTER_RESULTS {
            folded.entry(r.document_id.as_str()).or_default().push(r);
        }
    }
    let mut shown: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::with_capacity(results.len());
    for r in results {
        let n = shown.entry(r.document_id.as_str()).or_insert(0);
        *n += 1;
        if *n > FOLD_AFTER_RESULTS {
            continue;
        }
        out.push(Entry::Shown(r));
        if *n == FOLD_AFTER_RESULTS
            && let Some(more) = folded.remove(r.document_id.as_str())
        {
            out.push(Entry::Fold(more));
        }
    }
    out
}

/// A fold's summary: "7 more passages from Runbook: deploying client sites".
fn fold_summary(more: &[&SearchResult]) -> String {
    let title = more.first().map(|r| r.title.as_str()).unwrap_or_default();
    let noun = if more.len() == 1 {
        "passage"
    } else {
        "passages"
    };
    format!("{} more {noun} from {title}", more.len())
}

/// What stands between two parts of a result's citation line: a no-break
/// space, the dot, and a space a line may break at (U+00A0 `·` U+0020).
const META_SEPARATOR: &str = "\u{a0}· ";

/// One result's list item: its rank as the item's number, the title linking
/// to the passage with the search kept (so the document page can link back
/// to these results), and its citation line.
fn result_item(r: &SearchResult, q: &str, page: u32) -> Markup {
    html! {
        li.result value=(r.rank) {
            div {
                a href=(result_href(&r.link, q, page)) { strong { (r.title) } }
                @if !r.trail_below_title().is_empty() { " › " (r.trail_below_title().join(" › ")) }
            }
            // No part breaks inside, and each " · " is held to the part
            // before it by a no-break space: a narrow page breaks after a
            // dot, never starting a line with one.
            div.meta {
                span.app { (r.app) } (META_SEPARATOR)
                span.part { "passage " (r.passage_number()) } (META_SEPARATOR)
                span.part { (person_marker()) } (META_SEPARATOR)
                span.part { time datetime=(r.date) { (r.date_phrase()) } } (META_SEPARATOR)
                span.part { "revision " (r.revision) }
            }
            p.snippet {
                @if r.snippet.cut_before { "… " }
                @for s in &r.snippet.segments {
                    @if s.hit { mark { (s.text) } } @else { (s.text) }
                }
                @if r.snippet.cut_after { " …" }
            }
        }
    }
}

/// A result's link as the results page writes it: the deep link
/// (`/documents/{id}#p{n}`) with the search it came from as its query
/// (`?q=…&page=N`), so the document page links back to these results.
pub(crate) fn result_href(link: &str, q: &str, page: u32) -> String {
    let (path, anchor) = link.split_once('#').unwrap_or((link, ""));
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("q", q)
        .append_pair("page", &page.to_string())
        .finish();
    if anchor.is_empty() {
        format!("{path}?{query}")
    } else {
        format!("{path}?{query}#{anchor}")
    }
}

/// The link to page `page` of the search for `q`: `/?q=…&page=N`, the query
/// form-encoded (`application/x-www-form-urlencoded`, what the `Query`
/// extractor decodes) so that any `q` comes back byte for byte.
pub(crate) fn page_link(q: &str, page: u32) -> String {
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("q", q)
        .append_pair("page", &page.to_string())
        .finish();
    format!("/?{query}")
}

pub(crate) async fn search_page(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    Query(params): Query<SearchParams>,
) -> Response {
    let q = params.q.clone().unwrap_or_default();
    let mut nothing_searched = None;
    if params.q.is_some() {
        let footer = state.egress().footer();
        let outcome = state
            .ruled_search(session.owner.address(), &q, parse_page(&params.page))
            .await;
        // A search with no word to look for searched nothing: the page is
        // the home page's list, with a line saying why (issue 31).
        if let Ok(p) = &outcome
            && p.query_words == 0
        {
            nothing_searched = Some(results_region(&q, &outcome, None).1);
        } else {
            // With AI on, the page's own ruled results and nothing else may be
            // answered from (§8.4's invariant): built here, stored nowhere.
            let answer = match (&outcome, state.chat()) {
                (Ok(p), Some(chat)) => crate::answer::answer(chat, &q, p).await,
                _ => None,
            };
            let (status, region) = results_region(&q, &outcome, answer.as_ref());
            return page(
                status,
                layout("Results", footer, true, Some(&session.csrf), &q, region),
            );
        }
    }
    let footer = state.egress().footer();
    let asker = session.owner.address().to_string();
    let list_page = parse_page(&params.docs);
    // One bounded page and a count, read beside the writer (issue 30).
    let listed = match state
        .read(move |v| v.documents_page(&asker, list_page))
        .await
        .and_then(|r| r)
    {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "the document list could not be read");
            None
        }
    };
    let body = html! {
        @if let Some(region) = nothing_searched { (region) }
        h1 { "Search your team's documents" }
        @if params.deleted.is_some() { p.notice { "The document was deleted." } }
        @match &listed {
            Some(l) => p { (counted(usize::try_from(l.total).unwrap_or(usize::MAX), "document", "documents")) ". Every passage found here is one of them, cited." },
            None => p.refusal { "The list of documents could not be read, so how many there are is not shown." },
        }
        p { a href="/brief" { "Brief an agent on a task" } ": a bounded, cited body of material from one scope." }
        h2 { "Upload a document" }
        form method="post" action="/documents" enctype="multipart/form-data" {
            input type="hidden" name="csrf" value=(session.csrf);
            input type="file" name="file" accept=".md,.markdown,.txt,.html,.htm,text/*" required;
            button type="submit" { "Upload" }
            p.meta { "Markdown, plain text or HTML, up to 1 MiB." }
        }
        h2 #documents { "Documents" }
        @if let Some(l) = &listed { (documents_region(l)) }
    };
    page(
        StatusCode::OK,
        layout("Search", footer, true, Some(&session.csrf), &q, body),
    )
}

/// The link to page `page` of the home page's list of documents:
/// `/?docs=N#documents` (its own parameter: `page` is the search's).
pub(crate) fn documents_link(page: u64) -> String {
    format!("/?docs={page}#documents")
}

/// One page of the home page's list (issue 30): where it stands in the
/// whole list, its documents, and the way to the pages beside it. A page
/// past the last says so, with the way back to the first.
fn documents_region(l: &DocumentsPage) -> Markup {
    let pages = l.pages();
    let shown = l.documents.len() as u64;
    html! {
        @if l.past_last() {
            p.notice { "There is no page " (l.page) " of this list: it has " (counted(usize::try_from(pages).unwrap_or(usize::MAX), "page", "pages")) "." }
            nav.documents-pages { a href=(documents_link(1)) { "Back to the first page of documents" } }
        } @else {
            @if pages > 1 {
                p.count { "Documents " (l.first_position()) "–" (l.first_position() + shown.saturating_sub(1)) " of " (l.total) ", most recently stored first." }
            }
            ul.documents {
                @for d in &l.documents {
                    li { a href=(format!("/documents/{}", d.id)) { (d.title) }
                         span.meta { (META_SEPARATOR) span.part { time datetime=(d.date.iso()) { (d.date.phrase(&crate::page::app_display_name(&d.app))) } } (META_SEPARATOR) span.part { "revision " (d.revision) } } }
                }
            }
            @if pages > 1 {
                nav.documents-pages {
                    @if l.page > 1 {
                        a href=(documents_link(u64::from(l.page) - 1)) { "‹ Previous" } " "
                    }
                    @if l.has_next() {
                        a href=(documents_link(u64::from(l.page) + 1)) { "Next ›" }
                    }
                }
            }
        }
    }
}

pub(crate) async fn search_fragment(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(params): Query<SearchParams>,
) -> Response {
    let footer = state.egress().footer();
    let session = match state.session_check(&headers) {
        SessionCheck::Admitted(s) => s,
        // Nobody's standing can be established (a stale roster): the
        // region withholds every result, loudly; nothing is searched.
        SessionCheck::Lacking(_, lack) => {
            return page(
                StatusCode::OK,
                html! { (standing_region(&state, lack)) p.egress { (footer) } },
            );
        }
        SessionCheck::None => {
            return page(
                StatusCode::UNAUTHORIZED,
                html! { section #results { p.refusal { "Sign in to search." } } p.egress { (footer) } },
            );
        }
    };
    let q = params.q.clone().unwrap_or_default();
    let outcome = state
        .ruled_search(session.owner.address(), &q, parse_page(&params.page))
        .await;
    // The live fragment never calls the answer model (crate::answer).
    let (status, region) = results_region(&q, &outcome, None);
    page(status, html! { (region) p.egress { (footer) } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_link_gives_the_query_back_byte_for_byte_through_the_query_extractor() {
        for q in [
            "plain",
            "a&b=c",
            "1+1 = 2",
            "#fragment?no",
            "100% sure",
            "~tilde*star",
            "café ünïcode 日本",
            "  spaced  ",
            "",
        ] {
            let link = page_link(q, 3);
            let uri: axum::http::Uri = link.parse().expect("the link is a URI");
            let Query(params) =
                Query::<SearchParams>::try_from_uri(&uri).expect("the link decodes");
            assert_eq!(params.q.as_deref(), Some(q), "{link}");
            assert_eq!(params.page.as_deref(), Some("3"), "{link}");
        }
    }

    #[test]
    fn withheld_reconciling_and_freshness_lines_are_boxed_notices_apart_from_the_results() {
        use crate::page::{Freshness, Reconciling, Withheld, WithheldReason};
        let page = SearchPage {
            query_words: 1,
            page: 1,
            results: vec![],
            has_next: false,
            withheld: vec![
                Withheld::one("docs", WithheldReason::NoAnswer),
                Withheld {
                    count: 3,
                    ..Withheld::one("calendar", WithheldReason::Stale)
                },
            ],
            reconciling: vec![Reconciling {
                app: "sheets".into(),
            }],
            freshness: vec![
                Freshness {
                    app: "drive".into(),
                    current_as_of: Some(1_796_029_200),
                    last_pull_failed: true,
                },
                Freshness {
                    app: "docs".into(),
                    current_as_of: Some(1_796_029_200),
                    last_pull_failed: false,
                },
            ],
            facts: vec![],
            model_failure: None,
            semantic: SemanticRanking::Off,
            artefacts: vec![],
            artefacts_withheld: vec![],
            regenerate: false,
            numeric: None,
        };
        let (status, region) = results_region("q", &Ok(page), None);
        assert_eq!(status, StatusCode::OK);
        expect_test::expect![[r#"<section id="results"><p class="reconciling" role="status" data-app="sheets">Sheets is reconciling: its results are temporarily out of the search until it re-announces.</p><p class="freshness" role="status" data-app="drive">memoria's last pull of changes from Drive failed; its results are current as of 2026-11-30 09:00 UTC.</p><p class="freshness" role="status" data-app="docs">Results from Docs are current as of 2026-11-30 09:00 UTC; memoria is pulling its changes now.</p><p class="withheld" role="status" data-app="docs">Docs did not answer; 1 result withheld.</p><p class="withheld" role="status" data-app="calendar">Calendar has a newer version of 3 results; withheld while memoria fetches it.</p><nav class="way-on">Try fewer or other words, or <a href="/#documents">browse every document</a>.</nav><ol start="1"></ol><nav class="pages"></nav></section>"#]]
        .assert_eq(&region.into_string());
        // The box itself: a rule of the page's one stylesheet, no script.
        let style = super::super::envelope::STYLE;
        assert!(
            style.contains(".withheld,.reconciling,.freshness{background:"),
            "{style}"
        );
        assert!(style.contains("border:1px solid"), "{style}");
    }

    /// A result of document `doc` at `rank`, titled after it.
    fn ranked(rank: usize, doc: &str) -> SearchResult {
        SearchResult {
            rank,
            app: "memoria".into(),
            document_id: doc.into(),
            title: format!("Doc {doc}"),
            trail: vec![],
            ordinal: i64::try_from(rank).unwrap_or(0),
            marker: crate::page::MARKER_PERSON,
            revision: 1,
            date: "2026-01-01".into(),
            date_kind: crate::date::DateKind::Imported,
            date_at: 0,
            link: format!("/documents/{doc}#p{rank}"),
            snippet: crate::search::highlight::Snippet {
                cut_before: false,
                segments: vec![],
                cut_after: false,
            },
            provenance: None,
            text: String::new(),
        }
    }

    /// The list as ranks, a fold as `[ranks]`.
    fn laid(entries: &[Entry<'_>]) -> String {
        entries
            .iter()
            .map(|e| match e {
                Entry::Shown(r) => r.rank.to_string(),
                Entry::Fold(more) => format!(
                    "[{}]",
                    more.iter()
                        .map(|r| r.rank.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn a_documents_results_past_its_first_three_on_a_page_fold_under_it_and_no_result_changes_page()
    {
        // (first rank on the page, the document of each result in rank order, the list laid out)
        let table: &[(usize, &str, &str)] = &[
            (1, "aaaaaaa", "1 2 3 [4 5 6 7]"),
            (1, "aaab", "1 2 3 4"),
            (1, "abababab", "1 2 3 4 5 [7] 6 [8]"),
            (1, "aaaabbbb", "1 2 3 [4] 5 6 7 [8]"),
            (1, "abcabcabc", "1 2 3 4 5 6 7 8 9"),
            // Page 2 starts at rank 21 and folds its own results afresh:
            // the document folded on page 1 shows its first three again.
            (21, "aaaaa", "21 22 23 [24 25]"),
            (1, "", ""),
        ];
        for (first, docs, want) in table {
            let results: Vec<SearchResult> = docs
                .chars()
                .enumerate()
                .map(|(i, d)| ranked(first + i, &d.to_string()))
                .collect();
            let entries = fold(&results);
            assert_eq!(laid(&entries), *want, "{docs}");
            // Every result on the page is in the list exactly once.
            let mut ranks: Vec<usize> = entries
                .iter()
                .flat_map(|e| match e {
                    Entry::Shown(r) => vec![r.rank],
                    Entry::Fold(more) => more.iter().map(|r| r.rank).collect(),
                })
                .collect();
            ranks.sort_unstable();
            assert_eq!(
                ranks,
                (*first..first + docs.len()).collect::<Vec<_>>(),
                "{docs}"
            );
        }
    }

    #[test]
    fn a_fold_says_how_many_more_passages_and_from_which_document() {
        let results: Vec<SearchResult> = (1..=10).map(|r| ranked(r, "a")).collect();
        let entries = fold(&results);
        let Some(Entry::Fold(more)) = entries.last() else {
            panic!("a fold")
        };
        assert_eq!(fold_summary(more), "7 more passages from Doc a");
        assert_eq!(fold_summary(&more[..1]), "1 more passage from Doc a");
    }

    #[test]
    fn a_results_link_keeps_the_search_and_the_anchor() {
        assert_eq!(
            result_href("/documents/abc#p2", "a&b c", 3),
            "/documents/abc?q=a%26b+c&page=3#p2"
        );
        assert_eq!(
            result_href("/documents/abc", "x", 1),
            "/documents/abc?q=x&page=1"
        );
    }

    #[test]
    fn a_page_link_escapes_every_character_that_would_end_the_value() {
        let link = page_link("a&page=9#x y", 2);
        assert_eq!(link, "/?q=a%26page%3D9%23x+y&page=2");
    }
}
