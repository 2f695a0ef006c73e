//! Deleting a memoria-owned document: a confirmation page, then a CSRF-checked POST that tombstones it (§4.2, §7.4).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::envelope::{error_page, forbidden_csrf, layout, not_found_page, page};
use super::extract::SignedIn;
use super::{AppState, CsrfForm};
use crate::access::session::csrf_ok;
use crate::error::ErrorKind;
use crate::page::counted;
use crate::storage::store::is_document_id;

pub(crate) async fn delete_confirm(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    Path(id): Path<String>,
) -> Response {
    if !is_document_id(&id) {
        return not_found_page(&state, true);
    }
    let footer = state.egress().footer();
    let asker = session.owner.address().to_string();
    let found = state.blocking(move |i| i.document(&asker, &id)).await;
    let Ok(Ok(Some((doc, _)))) = found else {
        return not_found_page(&state, true);
    };
    let body = html! {
        h1 { "Delete “" (doc.title) "”?" }
        p { "This removes the document and its " (counted(usize::try_from(doc.chunk_count).unwrap_or(0), "passage", "passages")) " from memoria for everyone. It cannot be undone here." }
        form method="post" action=(format!("/documents/{}/delete", doc.id)) {
            input type="hidden" name="csrf" value=(session.csrf);
            button type="submit" { "Delete" }
            " " a href=(format!("/documents/{}", doc.id)) { "Cancel" }
        }
    };
    page(
        StatusCode::OK,
        layout("Delete", footer, true, Some(&session.csrf), "", body),
    )
}

pub(crate) async fn delete_document(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    headers: HeaderMap,
    Path(id): Path<String>,
    form: Result<axum::Form<CsrfForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let token = form.as_ref().ok().and_then(|f| f.csrf.as_deref());
    if !csrf_ok(&headers, &session, token) {
        return forbidden_csrf(&state);
    }
    if !is_document_id(&id) {
        return not_found_page(&state, true);
    }
    // The tombstone's fsync and the database delete run off the async
    // worker threads (`AppState::blocking`, issue 10).
    let result = state.blocking(move |i| i.delete(&id)).await.flatten();
    match result {
        Ok(_) => Redirect::to("/?deleted=1").into_response(),
        Err(e) if e.kind() == ErrorKind::NotFound => not_found_page(&state, true),
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "delete failed");
            let footer = state.egress().footer();
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The document could not be deleted.",
                footer,
                true,
            )
        }
    }
}
