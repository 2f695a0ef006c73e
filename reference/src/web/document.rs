//! A document's page: a memoria-owned document on §4.2's two facts, a sibling's only on S2's VISIBLE, asked now (§8.1, §4.1).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::AppState;
use super::envelope::{error_page, layout, not_found_page, page, withheld_page};
use super::extract::SignedIn;
use crate::sibling::ruled::DocumentRuling;
use crate::storage::store::is_document_id;

pub(crate) async fn document_page(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    Path(id): Path<String>,
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
            let body = html! {
                h1 { (doc.title) }
                p.meta { (doc.app) " · " (doc.path) " · revision " (doc.revision) " · "
                         (crate::clock::iso_date(doc.updated_at)) " · " (doc.chunk_count) " passages" }
                @if doc.provenance.is_none() {
                    p { a href=(format!("/documents/{}/delete", doc.id)) { "Delete this document" } }
                }
                @for p in &passages {
                    section.passage id=(format!("p{}", p.ordinal)) {
                        p.meta { a href=(format!("#p{}", p.ordinal)) { "passage " (p.ordinal) }
                                 @if !p.trail.is_empty() { " · " (p.trail.join(" › ")) } }
                        pre { (p.body) }
                    }
                }
            };
            page(
                StatusCode::OK,
                layout(&doc.title, footer, true, Some(&session.csrf), "", body),
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
