//! Signing in and out: the sign-in form, the one-time link's landing, and the CSRF-checked logout (§4.3, §3.2, §9.1).
//!
//! Admission is read at each moment that decides, never carried from an
//! earlier one (§4.3, gate 21): `POST /auth/begin` asks it before anything
//! is done with the address, and `GET /auth/login` asks it again of the
//! address the link was sent to, after the link is followed, so an owner
//! removed between asking for a link and clicking it is refused (403, no
//! session). The sign-in classifier runs only over an address admission let
//! in (§3.2, gate 33): an address that is not an owner's causes no DNS query
//! and no fetch. Both answers to `POST /auth/begin` are the same page, owner
//! or not. Nothing here logs an address or a token.

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::{Markup, html};

use super::envelope::{error_page, forbidden_csrf, layout, page};
use super::extract::SessionHeld;
use super::{AppState, CsrfForm, SESSION_COOKIE, SESSION_TTL_S, SIGN_IN_LINK_TTL_S};
use crate::access::admission::OWNER_ADDRESS_BYTES_MAX;
use crate::access::session::{
    Session, cookie, csrf_ok, origin_ok, prune, random_token, session_set_cookie, token_hash,
};

/// The sign-in form: one address, posted to `/auth/begin`.
fn sign_in_form() -> Markup {
    html! {
        form method="post" action="/auth/begin" {
            label for="address" { "Your address" }
            " "
            input type="email" name="address" id="address" autocomplete="email" required;
            " "
            button type="submit" { "Send a sign-in link" }
        }
    }
}

/// `GET /signin`: the sign-in form, scriptless.
pub(crate) async fn sign_in_page(State(state): State<AppState>) -> Response {
    let footer = state.egress().footer();
    page(
        StatusCode::OK,
        layout(
            "Sign in",
            footer,
            false,
            None,
            "",
            html! {
                h1 { "Sign in" }
                p { "memoria admits " (super::envelope::who_is_admitted(&state)) ". Type your address and "
                    code { "memoria serve" } " prints a one-time sign-in link for it in its terminal." }
                (sign_in_form())
            },
        ),
    )
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct BeginForm {
    pub(crate) address: Option<String>,
}

/// `POST /auth/begin`: admission first (§3.2, gate 33). An owner's address
/// is classified (the suite's sign-in classifier) and sent a link; any other
/// address is dropped at admission, and the page says the same either way.
pub(crate) async fn begin(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Result<axum::Form<BeginForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let footer = state.egress().footer();
    if !origin_ok(&headers) {
        return error_page(
            StatusCode::FORBIDDEN,
            "This form did not come from this memoria (its Origin is another site's).",
            footer,
            false,
        );
    }
    let address = form
        .ok()
        .and_then(|f| f.0.address)
        .map(|a| a.trim().to_string())
        .unwrap_or_default();
    if address.is_empty() || address.len() > OWNER_ADDRESS_BYTES_MAX {
        return error_page(
            StatusCode::BAD_REQUEST,
            &format!("Type an address of at most {OWNER_ADDRESS_BYTES_MAX} bytes."),
            footer,
            false,
        );
    }
    // The predicate before the classifier: past admission nothing reads an
    // address, let alone resolves or fetches its domain, unless it is an
    // owner's now.
    if let Some(owner) = state.admit(&address) {
        state.classifier().classify(&owner).await;
        state.deliver_sign_in_link(&owner);
    }
    tracing::info!("sign-in asked");
    page(
        StatusCode::OK,
        layout(
            "Sign in",
            footer,
            false,
            None,
            "",
            html! {
                h1 { "Sign in" }
                p.notice role="status" {
                    "If that address is an owner's, " code { "memoria serve" }
                    " has printed a one-time sign-in link for it in its terminal. The link works once, for "
                    (SIGN_IN_LINK_TTL_S / 60) " minutes."
                }
                (sign_in_form())
            },
        ),
    )
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct LoginParams {
    pub(crate) token: Option<String>,
}

pub(crate) async fn login(
    State(state): State<AppState>,
    Query(params): Query<LoginParams>,
) -> Response {
    let now = state.now();
    let claimed = params.token.as_deref().and_then(|t| {
        let mut auth = state.lock_auth();
        match auth.links.remove(&token_hash(t)) {
            Some((owner, exp)) if exp > now => Some(owner),
            _ => None,
        }
    });
    let footer = state.egress().footer();
    let Some(linked) = claimed else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "This sign-in link is not valid: it was used already, it expired, or it was mistyped. memoria serve prints a fresh one after each sign-in.",
            footer,
            false,
        );
    };
    // Admission is read here, at verification, not carried from when the
    // link was sent: an owner removed since is refused, the link spent.
    let Some(owner) = state.admit(linked.address()) else {
        tracing::info!("sign-in refused: not admitted");
        return error_page(
            StatusCode::FORBIDDEN,
            &format!(
                "This sign-in link was sent to an address memoria does not admit now. memoria admits {}.",
                super::envelope::who_is_admitted(&state)
            ),
            footer,
            false,
        );
    };
    let sid = random_token();
    {
        let mut auth = state.lock_auth();
        prune(&mut auth.sessions, now, |s| s.expires_at);
        auth.sessions.insert(
            token_hash(&sid),
            Session {
                owner: owner.clone(),
                csrf: random_token(),
                expires_at: now + SESSION_TTL_S,
            },
        );
    }
    tracing::info!("signed in");
    // One link is spent; deliver the next so another browser can sign in.
    state.deliver_sign_in_link(&owner);
    let mut resp = Response::builder()
        .status(StatusCode::SEE_OTHER)
        .header(header::LOCATION, "/")
        .body(Body::empty())
        .expect("static response");
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&session_set_cookie(&sid, SESSION_TTL_S))
            .expect("token is URL-safe base64"),
    );
    resp
}

pub(crate) async fn logout(
    State(state): State<AppState>,
    SessionHeld(session): SessionHeld,
    headers: HeaderMap,
    form: Result<axum::Form<CsrfForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let token = form.as_ref().ok().and_then(|f| f.csrf.as_deref());
    if !csrf_ok(&headers, &session, token) {
        return forbidden_csrf(&state);
    }
    if let Some(id) = cookie(&headers, SESSION_COOKIE) {
        state.lock_auth().sessions.remove(&token_hash(&id));
    }
    let footer = state.egress().footer();
    let mut resp = page(
        StatusCode::OK,
        layout(
            "Signed out",
            footer,
            false,
            None,
            "",
            html! { h1 { "Signed out" } p { "You are signed out of memoria." } },
        ),
    );
    resp.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_str(&session_set_cookie("", 0)).expect("a cookie without a value"),
    );
    resp
}
