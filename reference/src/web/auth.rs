//! Signing in and out: the one-time link's landing, and the CSRF-checked logout (§4.3, §9.1).

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use maud::html;

use super::envelope::{error_page, forbidden_csrf, layout, page};
use super::extract::SignedIn;
use super::{AppState, CsrfForm, SESSION_COOKIE, SESSION_TTL_S};
use crate::access::session::{
    Session, cookie, csrf_ok, prune, random_token, session_set_cookie, token_hash,
};

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
    let Some(owner) = claimed.filter(|o| state.admit(o.address()).is_some()) else {
        let footer = state.egress().footer();
        return error_page(
            StatusCode::BAD_REQUEST,
            "This sign-in link is not valid: it was used already, it expired, or it was mistyped. memoria serve prints a fresh one after each sign-in.",
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
    SignedIn(session): SignedIn,
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
