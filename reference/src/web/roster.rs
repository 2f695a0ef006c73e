//! The roster page and its confirmation form: where an owner sees the home's roster copy and confirms an unfamiliar generation (§4.3, suite shape).
//!
//! `GET /roster` shows any admitted person the copy's coordinates (its
//! generation, epoch and age, never a member), why standing cannot be
//! established if it cannot, and the generation waiting for confirmation;
//! an owner on the owners list also sees the form. `POST /roster/confirm`
//! is that form: CSRF-checked like the delete form, refused (403) to anyone
//! not on the owners list (the owners bypass the roster, decision 11, so
//! they can sign in and confirm while it is stale), and it adopts the
//! pending generation only if it is the one the form named. In lone shape
//! the page says there is no roster and the form is refused.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::AppState;
use super::envelope::{error_page, forbidden_csrf, lack_sentence, layout, page};
use super::extract::SignedIn;
use crate::access::session::csrf_ok;

/// The confirmation form's fields.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct ConfirmForm {
    pub(crate) csrf: Option<String>,
    pub(crate) generation: Option<String>,
}

/// `GET /roster`: the roster copy's state, and for an owner the form that
/// confirms a pending generation.
pub(crate) async fn roster_page(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
) -> Response {
    let footer = state.egress().footer();
    let owner = state.admission().owner(session.owner.address()).is_some();
    let Some(copy) = state.admission().roster() else {
        let body = html! {
            h1 { "Team roster" }
            p.notice { "This memoria runs in lone shape: its owners list is its only admission, and there is no roster." }
        };
        return page(
            StatusCode::OK,
            layout("Roster", footer, true, Some(&session.csrf), "", body),
        );
    };
    let status = copy.status();
    let body = html! {
        h1 { "Team roster" }
        @if let Some(lack) = status.lack {
            p.withheld role="status" data-app="roster" { (lack_sentence(lack)) }
        }
        @match (&status.current, status.age_s) {
            (Some((generation, epoch)), Some(age)) => {
                p.roster { "Generation " code { (generation) } ", epoch " (epoch) ", pulled " (age / 60) " minutes ago." }
            }
            _ => { p.roster { "No roster has been pulled from the home yet." } }
        }
        @if let Some(fault) = &status.last_fault {
            p.notice { "The last pull did not refresh the copy: " (fault.to_string()) "." }
        }
        @if let Some((generation, epoch)) = &status.pending {
            p.pending { "The home answers with a new roster generation, " code { (generation) } " (epoch " (epoch) "), which an owner has not confirmed. Until one does, memoria holds the copy above." }
            @if owner {
                form method="post" action="/roster/confirm" {
                    input type="hidden" name="csrf" value=(session.csrf);
                    input type="hidden" name="generation" value=(generation);
                    button type="submit" { "Confirm the new generation" }
                }
            }
        }
    };
    page(
        StatusCode::OK,
        layout("Roster", footer, true, Some(&session.csrf), "", body),
    )
}

/// `POST /roster/confirm`: an owner adopts the pending generation the form
/// names (CSRF). 303 to `/roster` once adopted; 403 to anyone not on the
/// owners list; 409 when that generation is not the one pending.
pub(crate) async fn roster_confirm(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    headers: HeaderMap,
    form: Result<axum::Form<ConfirmForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let form = form.ok().map(|f| f.0);
    let token = form.as_ref().and_then(|f| f.csrf.as_deref());
    if !csrf_ok(&headers, &session, token) {
        return forbidden_csrf(&state);
    }
    let footer = state.egress().footer();
    if state.admission().owner(session.owner.address()).is_none() {
        return error_page(
            StatusCode::FORBIDDEN,
            "Only an owner on the owners list can confirm a roster generation.",
            footer,
            true,
        );
    }
    let generation = form.and_then(|f| f.generation).unwrap_or_default();
    let confirmed = state
        .admission()
        .roster()
        .is_some_and(|copy| copy.confirm(&generation));
    if confirmed {
        state.keep_roster_coordinates().await;
        Redirect::to("/roster").into_response()
    } else {
        error_page(
            StatusCode::CONFLICT,
            "That roster generation is not the one waiting for confirmation; nothing was adopted.",
            footer,
            true,
        )
    }
}
