//! The one session check: a handler that needs a signed-in, admitted person takes [`SignedIn`] (§4.3, §9.1).
//!
//! Admission is read, not held: the extractor asks `AppState::session_check`,
//! which reads the owners list (and in suite shape the roster's copy) on
//! every request. A request without a live session of a person admitted
//! now is answered with the sign-in page (401) before the handler runs, and
//! before any body is read. A session whose person's team standing cannot
//! be established now (suite shape, the roster copy stale or missing) is
//! answered with the standing page instead ([`standing_withheld`]): every
//! result withheld, loudly and with the reason, no sibling asked and no
//! memoria-owned content read (§4.3, suite gate 5).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::response::Response;

use super::AppState;
use super::envelope::{sign_in_required, standing_withheld};
use super::state::SessionCheck;
use crate::access::session::Session;

/// A signed-in, admitted person's session, as a handler argument.
#[derive(Debug, Clone)]
pub(crate) struct SignedIn(pub(crate) Session);

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match state.session_check(&parts.headers) {
            SessionCheck::Admitted(s) => Ok(SignedIn(s)),
            SessionCheck::Lacking(s, lack) => {
                let search = parts.method == axum::http::Method::GET
                    && matches!(parts.uri.path(), "/" | "/search");
                Err(standing_withheld(state, &s, lack, search))
            }
            SessionCheck::None => Err(sign_in_required(state)),
        }
    }
}

/// A live session whose person is admitted now or whose standing cannot be
/// established now (a stale roster): what signing out takes, so a person
/// can always end a session. Anyone refused now is answered as
/// [`SignedIn`] answers them (401).
#[derive(Debug, Clone)]
pub(crate) struct SessionHeld(pub(crate) Session);

impl FromRequestParts<AppState> for SessionHeld {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match state.session_check(&parts.headers) {
            SessionCheck::Admitted(s) | SessionCheck::Lacking(s, _) => Ok(SessionHeld(s)),
            SessionCheck::None => Err(sign_in_required(state)),
        }
    }
}
