//! A document's page: a memoria-owned document on §4.2's two facts, a sibling's only on S2's VISIBLE, asked now (§8.1, §4.1).
//!
//! The page is the document's passages in order, each a
//! `section.passage#p{n}`, the anchor a result's deep link names
//! (`/documents/{id}#p{n}`), and `n` is the number the page shows
//! ("Passage 1" is `#p1`, [`crate::page::passage_anchor`]). The passage a link lands on is marked by the stylesheet's
//! `:target`, with no script. A Markdown document is rendered
//! ([`super::markdown`]: raw HTML shown as text, no image, no script link),
//! and the headings a passage opens (its trail, which the chunker keeps out
//! of the passage's own lines, §7.2) are rendered above it; a plain-text
//! document is shown as the text it is ([`TextForm`]).

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};

use super::AppState;
use super::envelope::{error_page, layout, not_found_page, page, withheld_page};
use super::extract::SignedIn;
use crate::page::{counted, passage_anchor, passage_number, trail_below};
use crate::search::markdown::TextForm;
use crate::sibling::ruled::DocumentRuling;
use crate::storage::store::{DocumentSummary, Passage, is_document_id};

/// The shallowest heading a trail entry renders as (`h1` is the title).
const TRAIL_HEADING_LEVEL_MIN: usize = 2;
/// The deepest heading HTML has.
const TRAIL_HEADING_LEVEL_MAX: usize = 6;

/// The search a document page was opened from, which its back link
/// returns to: the results page's `q` and `page` (issue 31).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct FromSearch {
    q: Option<String>,
    page: Option<String>,
}

pub(crate) async fn document_page(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    Path(id): Path<String>,
    Query(from): Query<FromSearch>,
) -> Response {
    if !is_document_id(&id) {
        return not_found_page(&state, true);
    }
    let footer = state.egress().footer();
    // The one S2 path (§8.1): a sibling's document is spoken only on
    // VISIBLE, asked now; the rest is withheld with the search page's words.
    let found = state.ruled_document(session.owner.address(), &id).await;
    match found {
        Ok(DocumentRuling::Shown { doc, passages }) => {
            let q = from.q.as_deref().unwrap_or_default();
            let body = html! {
                (back_link(q, super::search::parse_page(&from.page)))
                (document_body(&doc, &passages))
            };
            page(
                StatusCode::OK,
                layout(&doc.title, footer, true, Some(&session.csrf), q, body),
            )
        }
        Ok(DocumentRuling::Absent) => not_found_page(&state, true),
        Ok(DocumentRuling::Withheld(w)) => withheld_page(&w, footer),
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "document page failed");
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "This document could not be read.",
                footer,
                true,
            )
        }
    }
}

/// The way back: to the results page the document was opened from, with
/// its query and page kept, or to the list of every document.
fn back_link(q: &str, page: u32) -> Markup {
    html! {
        nav.back {
            @if q.trim().is_empty() {
                a href="/#documents" { "‹ Every document" }
            } @else {
                a href=(super::search::page_link(q, page)) { "‹ Back to the results for “" (q) "”" }
            }
        }
    }
}

/// One passage as the page lays it out.
struct Laid<'a> {
    passage: &'a Passage,
    /// The trail entries this passage opens, as (heading level, text):
    /// those not in effect above it, less a first entry that is the title.
    opens: Vec<(usize, &'a str)>,
}

/// The trail entries each passage opens: the part of its trail that differs
/// from the passage above's, at a heading level of its depth (the first
/// entry `h2`), without a first entry that repeats the title the `h1`
/// already shows.
fn lay_out<'a>(title: &str, passages: &'a [Passage]) -> Vec<Laid<'a>> {
    let mut above: &[String] = &[];
    let mut out = Vec::with_capacity(passages.len());
    for passage in passages {
        let trail = &passage.trail;
        let common = above.iter().zip(trail).take_while(|(a, b)| a == b).count();
        let opens = trail
            .iter()
            .enumerate()
            .skip(common)
            .filter(|(depth, t)| {
                let is_title = *depth == 0 && t.trim() == title.trim();
                !t.trim().is_empty() && !is_title
            })
            .map(|(depth, t)| {
                let level = (depth + 1).clamp(TRAIL_HEADING_LEVEL_MIN, TRAIL_HEADING_LEVEL_MAX);
                (level, t.as_str())
            })
            .collect();
        out.push(Laid { passage, opens });
        above = trail;
    }
    out
}

/// True if `body`'s first line is a heading line whose text is `text`
/// (`## Text`, as the chunker leaves a heading that has no body of its own).
fn opens_with_heading_line(body: &str, text: &str) -> bool {
    let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let stripped = first.trim().trim_start_matches('#');
    first.trim_start().starts_with('#')
        && stripped.trim().trim_end_matches('#').trim() == text.trim()
}

/// The page's body for a document shown: title, coordinates, and every
/// passage under its anchor.
fn document_body(doc: &DocumentSummary, passages: &[Passage]) -> Markup {
    let form = doc.text_form();
    let laid = lay_out(&doc.title, passages);
    html! {
        h1 { (doc.title) }
        p.meta { (doc.app) " · " (doc.path) " · revision " (doc.revision) " · "
                 time datetime=(doc.date.iso()) { (doc.date.phrase(&crate::page::app_display_name(&doc.app))) } " · "
                 (counted(usize::try_from(doc.chunk_count).unwrap_or(0), "passage", "passages")) }
        @if doc.provenance.is_none() {
            p { a href=(format!("/documents/{}/delete", doc.id)) { "Delete this document" } }
        }
        @for l in &laid {
            @let p = l.passage;
            section.passage id=(passage_anchor(p.ordinal)) {
                @if form == TextForm::Markdown {
                    @for (level, text) in &l.opens { (heading(*level, text)) }
                }
                p.meta {
                    a href=(format!("#{}", passage_anchor(p.ordinal))) { "Passage " (passage_number(p.ordinal)) }
                    @if l.opens.is_empty() && !trail_below(&doc.title, &p.trail).is_empty() {
                        " · " (trail_below(&doc.title, &p.trail).join(" › "))
                    }
                }
                @match form {
                    TextForm::Markdown => {
                        div.body { (super::markdown::render(&p.body, p.ordinal == 0, p.trail.last().map(String::as_str))) }
                    }
                    // Plain text: the lines the chunker read as headings
                    // are not in the passage's own text; shown as the lines
                    // they were, never as headings.
                    TextForm::Plain => {
                        pre.text {
                            @for (_, text) in &l.opens {
                                @if !opens_with_heading_line(&p.body, text) { (text) "\n" }
                            }
                            (p.body)
                        }
                    }
                }
            }
        }
    }
}

/// A trail entry as a heading of `level` (2 to 6), its text escaped.
fn heading(level: usize, text: &str) -> Markup {
    match level {
        2 => html! { h2 { (text) } },
        3 => html! { h3 { (text) } },
        4 => html! { h4 { (text) } },
        5 => html! { h5 { (text) } },
        _ => html! { h6 { (text) } },
    }
}
