//! The search page and document surface, served by axum: scriptless, paginated, footer on every page (§8.1, §9.1).
//!
//! Every route is declared in [`DECLARED_ROUTES`], keyed by method and path
//! together; gate 17 reads the router's registrations out of the syntax
//! tree of every file under `src/` and fails on any that the table does
//! not name. Every page, error pages included, ends with the egress footer
//! (gate 38); a response that carries no body at all is listed in
//! [`FOOTER_EXEMPT`] with its reason.
//!
//! Admission is the owners list (§4.3, lone shape), and in suite shape the
//! owners list first and then the home's roster copy, read on every
//! request; a session whose standing cannot be established (a stale
//! roster) gets the standing page, every result withheld. An owner signs in with a one-time link that `memoria
//! serve` delivers on its terminal (never through the log), at start and
//! whenever the sign-in form asks for one for an owner's address (`GET
//! /signin`, `POST /auth/begin`: admission before the sign-in classifier,
//! §3.2); the link sets a session cookie (`access/session.rs`). Every
//! handler that needs a signed-in owner takes the [`extract::SignedIn`]
//! extractor, the one session check. Every mutation is a POST that carries
//! the session's CSRF token and, when the browser sends one, an `Origin`
//! equal to the host.
//!
//! One file per page: [`search`], [`document`], [`upload`], [`sources`],
//! [`delete`], [`auth`], [`brief`]; the connector ingest surface, which
//! takes a connector's bearer token and never a session, is [`connector`]
//! (§9.1, gate 16); the chrome every page shares is [`envelope`]; the
//! document page renders passages through [`markdown`]; the
//! state behind the router is [`state`]. Every sibling passage a page
//! renders was ruled by `sibling::ruled` in that request.
//!
//! Nothing here logs content: the request log records the method, the
//! matched route template (never the URI, which carries `q` and tokens) and
//! the status.

mod answer;
mod auth;
mod brief;
mod connector;
mod delete;
mod document;
mod envelope;
mod extract;
mod facts;
mod markdown;
mod marker;
mod numeric;
mod roster;
mod search;
mod sentences;
mod sources;
mod state;
mod upload;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::get;

use auth::{begin, login, logout, sign_in_page};
use brief::brief_page;
pub use brief::scope_names;
pub use connector::CONNECTOR_BODY_MAX_BYTES;
use connector::connector_document;
use delete::{delete_confirm, delete_document};
use document::document_page;
use envelope::{envelope, not_found};
use roster::{roster_confirm, roster_page};
use search::{search_fragment, search_page};
use sources::sources_page;
use upload::upload;

#[cfg(feature = "testkit")]
pub use crate::access::session::CapturedDelivery;
pub use crate::access::session::{SignInDelivery, TerminalDelivery};
pub use state::{AppState, EMBED_DRAIN_INTERVAL_S, IDLE_EVICT_DEFAULT_S};

/// The largest upload accepted, in bytes (§9.1: "body cap 1 MiB").
pub const UPLOAD_BYTES_MAX: usize = 1024 * 1024;
/// Room for multipart framing and the CSRF field on top of the file, in bytes.
pub const MULTIPART_OVERHEAD_BYTES_MAX: usize = 16 * 1024;
/// The longest upload file name kept, in characters.
pub const UPLOAD_NAME_CHARS_MAX: usize = 200;
/// How long a session lasts, in seconds.
pub const SESSION_TTL_S: i64 = 12 * 3600;
/// How long a one-time sign-in link stays valid, in seconds.
pub const SIGN_IN_LINK_TTL_S: i64 = 15 * 60;
pub use crate::access::session::{SESSION_COOKIE, SESSIONS_MAX, TOKEN_BYTES};

/// Whether a declared route renders the egress footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FooterRule {
    /// Every body this route renders, at any status, carries the footer.
    Rendered,
    /// The route never renders a page: it answers a redirect with no body.
    /// (Its error answers are pages, and carry the footer.)
    RedirectOnly,
}

/// One route memoria serves, keyed by method and path together (§9.1, gate 17).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeclaredRoute {
    /// HTTP method, upper case.
    pub method: &'static str,
    /// Path template as registered with axum.
    pub path: &'static str,
    /// What it is for.
    pub what: &'static str,
    /// Its footer rule (gate 38).
    pub footer: FooterRule,
}

/// Every route memoria serves (§9.1). Gate 17 fails on any registration not here.
pub const DECLARED_ROUTES: &[DeclaredRoute] = &[
    DeclaredRoute {
        method: "GET",
        path: "/",
        what: "the search page: ?q= and &page=, scriptless",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/search",
        what: "the results region alone, rendered from the same code as the page",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/documents/{id}",
        what: "one document with #p{n} anchors per passage",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "POST",
        path: "/documents",
        what: "upload (multipart, CSRF)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/documents/{id}/delete",
        what: "asks before deleting",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "POST",
        path: "/documents/{id}/delete",
        what: "deletes through a tombstone (CSRF)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/sources",
        what: "the owner's sources page: per sibling, the refusal and S3 breaker states and the last poll (§8.1)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/brief",
        what: "a brief for an agent's task: ?task=, &scope=, &budget=, &team=, scriptless; the form alone without a task (issue 16, beyond §9.1's list)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "POST",
        path: "/connectors/{name}/documents",
        what: "a connector creates or revises a memoria-owned document: ?path=, the body its bytes (bearer token of that connector only, never a session; origin allowlisted; 1 MiB)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/signin",
        what: "the sign-in form: one address, posted to /auth/begin, scriptless",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "POST",
        path: "/auth/begin",
        what: "asks for a sign-in link: admission first, then the classifier and the link for an owner only; the same page either way (§3.2)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "GET",
        path: "/auth/login",
        what: "follows a one-time sign-in link and sets the session",
        footer: FooterRule::RedirectOnly,
    },
    DeclaredRoute {
        method: "GET",
        path: "/roster",
        what: "the home's roster copy: generation, epoch, age, why standing cannot be established, a generation waiting for confirmation (suite shape, §4.3); never a member",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "POST",
        path: "/roster/confirm",
        what: "an owner on the owners list adopts the roster generation waiting for confirmation (CSRF; §4.3)",
        footer: FooterRule::Rendered,
    },
    DeclaredRoute {
        method: "POST",
        path: "/auth/logout",
        what: "ends the session (CSRF)",
        footer: FooterRule::Rendered,
    },
];

/// Responses that carry no footer, each with the reason gate 38 verifies.
pub const FOOTER_EXEMPT: &[(&str, &str, u16, &str)] = &[
    (
        "GET",
        "/auth/login",
        303,
        "a followed sign-in link answers 303 See Other with an empty body and lands on /, which renders the footer",
    ),
    (
        "POST",
        "/connectors/{name}/documents",
        201,
        "a connector's new document answers 201 Created with an empty body for a program, and its Location is the document's page, which renders the footer",
    ),
    (
        "POST",
        "/connectors/{name}/documents",
        204,
        "a connector's revision answers 204 No Content, which has no body by definition, and its Location is the document's page, which renders the footer",
    ),
];

/// Serves `state` on `listener` until `shutdown` resolves: what `memoria
/// serve` runs, and what the simulator runs on memoria's host. Starts the
/// wake warm-up first (§6.5), so every configured sibling is polled with no
/// query issued, and in suite shape the roster loop beside it.
///
/// # Errors
/// An I/O error from the listener.
pub async fn serve<L>(
    listener: L,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    state.wake_siblings();
    // Suite shape: the roster is pulled on the same wake (§6.5).
    state.wake_home();
    state.start_embedding();
    state.start_idle_eviction();
    let served = axum::serve(listener, router(state.clone()))
        .with_graceful_shutdown(shutdown)
        .await;
    state.stop_home();
    state.stop_pulls();
    state.stop_embedding();
    state.stop_idle_eviction();
    served
}

/// Builds the router over `state`. Every registration here is in [`DECLARED_ROUTES`].
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(search_page))
        .route("/search", get(search_fragment))
        .route("/documents/{id}", get(document_page))
        .route(
            "/documents",
            axum::routing::post(upload).layer(DefaultBodyLimit::max(
                UPLOAD_BYTES_MAX + MULTIPART_OVERHEAD_BYTES_MAX,
            )),
        )
        .route(
            "/documents/{id}/delete",
            get(delete_confirm).post(delete_document),
        )
        .route(
            "/connectors/{name}/documents",
            axum::routing::post(connector_document)
                .layer(DefaultBodyLimit::max(CONNECTOR_BODY_MAX_BYTES)),
        )
        .route("/sources", get(sources_page))
        .route("/signin", get(sign_in_page))
        .route("/auth/begin", axum::routing::post(begin))
        .route("/auth/login", get(login))
        .route("/auth/logout", axum::routing::post(logout))
        .route("/brief", get(brief_page))
        .route("/roster", get(roster_page))
        .route("/roster/confirm", axum::routing::post(roster_confirm))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), envelope))
        .with_state(state)
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct CsrfForm {
    pub(crate) csrf: Option<String>,
}
