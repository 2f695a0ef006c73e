//! The one session check: a handler that needs a signed-in owner takes [`SignedIn`] (§4.3, §9.1).
//!
//! Admission is read, not held: the extractor asks `AppState::session`,
//! which re-reads the owners list on every request, and a request without
//! a live session for an admitted owner is answered with the sign-in page
//! (401) before the handler runs, and before any body is read.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::Response;

use super::AppState;
use super::envelope::sign_in_required;
use crate::access::session::Session;

/// A signed-in, admitted owner's session, as a handler argument.
#[derive(Debug, Clone)]
pub(crate) struct SignedIn(pub(crate) Session);

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        state
            .session(&parts.headers)
            .map(SignedIn)
            .ok_or_else(|| sign_in_required(state))
    }
}
