//! The search page and document surface, served by axum: scriptless, paginated, footer on every page (§8.1, §9.1).
//!
//! Every route is declared in [`DECLARED_ROUTES`], keyed by method and path
//! together; gate 17 reads the router's registrations out of this file's
//! syntax tree and fails on any that the table does not name. Every page,
//! error pages included, ends with the egress footer (gate 38); a response
//! that carries no body at all is listed in [`FOOTER_EXEMPT`] with its reason.
//!
//! Admission is the owners list (§4.3, lone shape). An owner signs in with a
//! one-time link that `memoria serve` delivers on its terminal (never through
//! the log); the link sets a session cookie. Every mutation is a POST that
//! carries the session's CSRF token and, when the browser sends one, an
//! `Origin` equal to the host.
//!
//! Nothing here logs content: the request log records the method, the
//! matched route template (never the URI, which carries `q` and tokens) and
//! the status.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, MatchedPath, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use maud::{DOCTYPE, Markup, PreEscaped, html};
use sha2::{Digest, Sha256};

use crate::admission::Owner;
use crate::error::{Error, ErrorKind};
use crate::import;
use crate::instance::{Instance, SearchError, SearchPage};
use crate::query::QUERY_BYTES_MAX;
use crate::sibling::SiblingClient;
use crate::sibling::sync::SyncReport;
use crate::store::{IngestStatus, is_document_id};

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
/// The most live sessions and pending links held; the oldest are dropped beyond it.
pub const SESSIONS_MAX: usize = 1024;
/// Bytes of randomness in a session id, a CSRF token and a sign-in token.
pub const TOKEN_BYTES: usize = 32;
/// The session cookie's name.
pub const SESSION_COOKIE: &str = "memoria_session";

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
        path: "/auth/login",
        what: "follows a one-time sign-in link and sets the session",
        footer: FooterRule::RedirectOnly,
    },
    DeclaredRoute {
        method: "POST",
        path: "/auth/logout",
        what: "ends the session (CSRF)",
        footer: FooterRule::Rendered,
    },
];

/// Responses that carry no footer, each with the reason gate 38 verifies.
pub const FOOTER_EXEMPT: &[(&str, &str, u16, &str)] = &[(
    "GET",
    "/auth/login",
    303,
    "a followed sign-in link answers 303 See Other with an empty body and lands on /, which renders the footer",
)];

/// Where one-time sign-in links go. Production prints them on the terminal;
/// tests capture them. Never the log (gate 4).
pub trait SignInDelivery: Send + Sync {
    /// Delivers `url` to `owner`.
    fn deliver(&self, owner: &Owner, url: &str);
}

/// Prints sign-in links on stdout, the terminal of whoever ran `memoria serve`.
#[derive(Debug, Default)]
pub struct TerminalDelivery;

impl SignInDelivery for TerminalDelivery {
    fn deliver(&self, owner: &Owner, url: &str) {
        println!("sign-in link for {}: {url}", owner.address());
    }
}

/// Keeps delivered links in memory, for tests and gates.
#[derive(Debug, Default)]
pub struct CapturedDelivery {
    links: Mutex<Vec<(String, String)>>,
}

impl CapturedDelivery {
    /// Every (owner, url) delivered so far.
    pub fn links(&self) -> Vec<(String, String)> {
        self.links.lock().expect("delivery lock").clone()
    }
}

impl SignInDelivery for CapturedDelivery {
    fn deliver(&self, owner: &Owner, url: &str) {
        self.links
            .lock()
            .expect("delivery lock")
            .push((owner.address().to_string(), url.to_string()));
    }
}

#[derive(Debug, Clone)]
struct Session {
    owner: Owner,
    csrf: String,
    expires_at: i64,
}

#[derive(Debug, Default)]
struct Auth {
    /// sha256(token) -> (owner, expiry)
    links: HashMap<[u8; 32], (Owner, i64)>,
    /// sha256(session id) -> session
    sessions: HashMap<[u8; 32], Session>,
}

fn random_token() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn prune<V>(map: &mut HashMap<[u8; 32], V>, now: i64, expiry: impl Fn(&V) -> i64) {
    map.retain(|_, v| expiry(v) > now);
    while map.len() >= SESSIONS_MAX {
        let Some(oldest) = map.iter().min_by_key(|(_, v)| expiry(v)).map(|(k, _)| *k) else {
            break;
        };
        map.remove(&oldest);
    }
}

/// Shared state behind the router.
#[derive(Clone)]
pub struct AppState {
    instance: Arc<Mutex<Instance>>,
    auth: Arc<Mutex<Auth>>,
    delivery: Arc<dyn SignInDelivery>,
    base_url: String,
    siblings: Option<Arc<SiblingClient>>,
    warm_up: Arc<Mutex<Option<tokio::task::JoinHandle<Vec<SyncReport>>>>>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State for an instance; `base_url` is what sign-in links start with,
    /// e.g. `http://127.0.0.1:7878`.
    pub fn new(
        instance: Instance,
        delivery: Arc<dyn SignInDelivery>,
        base_url: impl Into<String>,
    ) -> AppState {
        AppState {
            instance: Arc::new(Mutex::new(instance)),
            auth: Arc::new(Mutex::new(Auth::default())),
            delivery,
            base_url: base_url.into(),
            siblings: None,
            warm_up: Arc::default(),
        }
    }

    /// The same state with a sibling client: sibling passages are ruled
    /// through S2 on every search (§8.1). Without one, each is UNKNOWN.
    pub fn with_siblings(mut self, client: SiblingClient) -> AppState {
        self.siblings = Some(Arc::new(client));
        self
    }

    /// The sibling client, if configured.
    pub fn siblings(&self) -> Option<Arc<SiblingClient>> {
        self.siblings.clone()
    }

    /// The wake warm-up (§6.5): an S1 poll to every configured sibling, at
    /// once, with no query issued. Returns when every poll has finished;
    /// spawn it to run beside the server.
    pub async fn warm_up(&self) -> Vec<SyncReport> {
        match &self.siblings {
            Some(client) => crate::sibling::sync::warm_up(&self.instance, client).await,
            None => vec![],
        }
    }

    /// Starts the wake warm-up beside the server (§6.5): every configured
    /// sibling gets an S1 poll now, unprompted, while nobody is waiting.
    /// [`serve`] calls this once, before it accepts the first request.
    pub fn wake_siblings(&self) {
        let state = self.clone();
        let handle = tokio::spawn(async move { state.warm_up().await });
        *self.warm_up.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// The running warm-up's handle, once: await it to know every sibling's
    /// first poll has finished. `None` before [`serve`] started one.
    pub fn take_warm_up(&self) -> Option<tokio::task::JoinHandle<Vec<SyncReport>>> {
        self.warm_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Searches as `asker`, ruling every sibling passage through S2 now
    /// (§8.1), and spawns the follow-ups: the refetch STALE asks for, and
    /// the re-announce AHEAD marked (§4.1), both through one sync.
    async fn ruled_search(
        &self,
        asker: &str,
        q: &str,
        page: u32,
    ) -> Result<SearchPage, SearchError> {
        let ruled = crate::sibling::ruled::ruled_search(
            &self.instance,
            self.siblings.as_deref(),
            asker,
            q,
            page,
        )
        .await?;
        if let Some(client) = &self.siblings {
            let follow_ups: std::collections::BTreeSet<String> =
                ruled.refetch.into_iter().chain(ruled.reannounce).collect();
            for app in follow_ups {
                let instance = self.instance.clone();
                let client = client.clone();
                tokio::spawn(async move {
                    crate::sibling::sync::sync(&instance, &client, &app).await;
                });
            }
        }
        Ok(ruled.page)
    }

    /// The instance, shared with the router.
    pub fn instance(&self) -> Arc<Mutex<Instance>> {
        self.instance.clone()
    }

    fn now(&self) -> i64 {
        self.lock_instance().clock().now_unix_s()
    }

    fn lock_instance(&self) -> std::sync::MutexGuard<'_, Instance> {
        // A panic while holding the lock leaves the instance as the last
        // committed transaction left it; serving on is safe.
        self.instance.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_auth(&self) -> std::sync::MutexGuard<'_, Auth> {
        self.auth.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Mints a one-time sign-in link for every owner and delivers each.
    pub fn deliver_sign_in_links(&self) {
        let owners: Vec<Owner> = self.lock_instance().admission().owners().to_vec();
        for owner in owners {
            self.deliver_sign_in_link(&owner);
        }
    }

    /// Mints a one-time sign-in link for `owner` and delivers it.
    pub fn deliver_sign_in_link(&self, owner: &Owner) {
        let token = random_token();
        let now = self.now();
        {
            let mut auth = self.lock_auth();
            prune(&mut auth.links, now, |(_, exp)| *exp);
            auth.links.insert(
                token_hash(&token),
                (owner.clone(), now + SIGN_IN_LINK_TTL_S),
            );
        }
        let url = format!("{}/auth/login?token={token}", self.base_url);
        self.delivery.deliver(owner, &url);
        tracing::info!("sign-in link delivered");
    }

    fn session(&self, headers: &HeaderMap) -> Option<Session> {
        let id = cookie(headers, SESSION_COOKIE)?;
        let now = self.now();
        let auth = self.lock_auth();
        let s = auth.sessions.get(&token_hash(&id))?;
        if s.expires_at <= now {
            return None;
        }
        // Admission is read, not held: a session whose owner left the list is refused.
        self.lock_instance().admit(s.owner.address())?;
        Some(s.clone())
    }
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    for value in headers.get_all(header::COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        for part in text.split(';') {
            if let Some((k, v)) = part.trim().split_once('=')
                && k == name
            {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// Serves `state` on `listener` until `shutdown` resolves: what `memoria
/// serve` runs, and what the simulator runs on memoria's host. Starts the
/// wake warm-up first (§6.5), so every configured sibling is polled with no
/// query issued.
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
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown)
        .await
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
        .route("/sources", get(sources_page))
        .route("/auth/login", get(login))
        .route("/auth/logout", axum::routing::post(logout))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), envelope))
        .with_state(state)
}

/// Wraps every response: security headers, a footer page for any bodiless
/// or non-HTML error, and a content-free request log line.
async fn envelope(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "(unmatched)".to_string());
    let mut resp = next.run(req).await;
    let status = resp.status();
    let is_html = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if (status.is_client_error() || status.is_server_error()) && !is_html {
        let signed_in = false;
        let message = match status {
            StatusCode::METHOD_NOT_ALLOWED => "This address does not accept that method.",
            StatusCode::PAYLOAD_TOO_LARGE => "That request is larger than memoria accepts.",
            _ => "memoria could not make sense of that request.",
        };
        let egress = state.lock_instance().egress();
        let mut page = error_page(status, message, egress.footer(), signed_in);
        for (k, v) in resp.headers() {
            if k == header::ALLOW {
                page.headers_mut().insert(k.clone(), v.clone());
            }
        }
        resp = page;
    }
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    tracing::info!(method = %method, route = %route, status = resp.status().as_u16(), "request");
    resp
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem;color:#1b1b1b}\
header form{display:flex;gap:.5rem}header input[type=search]{flex:1;font-size:1.1rem;padding:.3rem}\
.result{margin:1.2rem 0}.meta{color:#555;font-size:.9rem}mark{background:#ffe58a}\
.notice{background:#eef4ff;padding:.5rem}.refusal{background:#fff1f0;padding:.5rem}\
section.passage{border-top:1px solid #ddd;padding-top:.5rem}.passage pre{white-space:pre-wrap;font:inherit}\
footer{margin-top:3rem;border-top:1px solid #ddd;padding-top:.5rem;color:#444;font-size:.9rem}";

fn layout(
    title: &str,
    footer: &str,
    signed_in: bool,
    csrf: Option<&str>,
    q: &str,
    body: Markup,
) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · memoria" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    @if signed_in {
                        form method="get" action="/" role="search" {
                            input type="search" name="q" value=(q) maxlength=(QUERY_BYTES_MAX) aria-label="Search" autofocus;
                            button type="submit" { "Search" }
                        }
                    } @else {
                        p { strong { "memoria" } }
                    }
                }
                main { (body) }
                footer {
                    p.egress { (footer) }
                    @if let Some(csrf) = csrf {
                        form method="post" action="/auth/logout" {
                            input type="hidden" name="csrf" value=(csrf);
                            button type="submit" { "Sign out" }
                        }
                    }
                }
            }
        }
    }
}

fn page(status: StatusCode, markup: Markup) -> Response {
    (status, Html(markup.into_string())).into_response()
}

fn error_page(status: StatusCode, message: &str, footer: &str, signed_in: bool) -> Response {
    let title = status.canonical_reason().unwrap_or("Error");
    page(
        status,
        layout(
            title,
            footer,
            signed_in,
            None,
            "",
            html! {
                h1 { (status.as_u16()) " " (title) }
                p.refusal { (message) }
                p { a href="/" { "Back to search" } }
            },
        ),
    )
}

fn sign_in_required(state: &AppState) -> Response {
    let footer = state.lock_instance().egress().footer();
    page(
        StatusCode::UNAUTHORIZED,
        layout(
            "Sign in",
            footer,
            false,
            None,
            "",
            html! {
                h1 { "Sign in" }
                p { "memoria admits its owners only. Open the one-time sign-in link that "
                    code { "memoria serve" } " printed in its terminal." }
            },
        ),
    )
}

#[derive(Debug, serde::Deserialize)]
struct SearchParams {
    q: Option<String>,
    page: Option<String>,
    deleted: Option<String>,
}

fn parse_page(p: &Option<String>) -> u32 {
    p.as_deref()
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(1)
}

fn results_region(q: &str, outcome: &Result<SearchPage, SearchError>) -> (StatusCode, Markup) {
    match outcome {
        Err(SearchError::TooLong) => (
            StatusCode::BAD_REQUEST,
            html! { section #results { p.refusal {
                "Your search is longer than " (QUERY_BYTES_MAX) " bytes (1 KiB), so it was not run. Shorten it and search again."
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
                @for r in &p.reconciling {
                    p.reconciling data-app=(r.app) { (r.sentence()) }
                }
                @for w in &p.withheld {
                    p.withheld data-app=(w.app) { (w.sentence()) }
                }
                // A reconciling source is out of the search: its lines say so,
                // and the page never claims nothing matched (§4.1 rule 1).
                @if p.results.is_empty() && p.reconciling.is_empty() {
                    @if !p.withheld.is_empty() { p { "No passage can be shown." } }
                    @else if p.page > 1 { p { "No more results." } } @else { p { "No passage matched." } }
                }
                ol start=(p.results.first().map(|r| r.rank).unwrap_or(1)) {
                    @for r in &p.results {
                        li.result {
                            div {
                                a href=(r.link) { strong { (r.title) } }
                                @if !r.trail_below_title().is_empty() { " › " (r.trail_below_title().join(" › ")) }
                            }
                            div.meta {
                                span.app { (r.app) } " · passage " (r.ordinal) " · " span title="written by a person" { (r.marker) }
                                " · " (r.date) " · revision " (r.revision)
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
                nav.pages {
                    @if p.page > 1 {
                        a href=(format!("/?q={}&page={}", urlencode(q), p.page - 1)) { "‹ Previous" } " "
                    }
                    @if p.has_next {
                        a href=(format!("/?q={}&page={}", urlencode(q), p.page + 1)) { "Next ›" }
                    }
                }
            } },
        ),
    }
}

fn urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

async fn search_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(params): Query<SearchParams>,
) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    let q = params.q.clone().unwrap_or_default();
    if params.q.is_some() {
        let footer = state.lock_instance().egress().footer();
        let outcome = state
            .ruled_search(session.owner.address(), &q, parse_page(&params.page))
            .await;
        let (status, region) = results_region(&q, &outcome);
        return page(
            status,
            layout("Results", footer, true, Some(&session.csrf), &q, region),
        );
    }
    let instance = state.lock_instance();
    let footer = instance.egress().footer();
    let docs = instance
        .documents(session.owner.address())
        .unwrap_or_default();
    let body = html! {
        h1 { "Search your team's documents" }
        @if params.deleted.is_some() { p.notice { "The document was deleted." } }
        p { (docs.len()) " documents. Every passage found here is one of them, cited." }
        h2 { "Upload a document" }
        form method="post" action="/documents" enctype="multipart/form-data" {
            input type="hidden" name="csrf" value=(session.csrf);
            input type="file" name="file" accept=".md,.markdown,.txt,.html,.htm,text/*" required;
            button type="submit" { "Upload" }
            p.meta { "Markdown, plain text or HTML, up to 1 MiB." }
        }
        h2 { "Documents" }
        ul {
            @for d in &docs {
                li { a href=(format!("/documents/{}", d.id)) { (d.title) }
                     span.meta { " · " (crate::clock::iso_date(d.updated_at)) " · revision " (d.revision) } }
            }
        }
    };
    page(
        StatusCode::OK,
        layout("Search", footer, true, Some(&session.csrf), "", body),
    )
}

async fn search_fragment(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(params): Query<SearchParams>,
) -> Response {
    let footer = state.lock_instance().egress().footer();
    let Some(session) = state.session(&headers) else {
        return page(
            StatusCode::UNAUTHORIZED,
            html! { section #results { p.refusal { "Sign in to search." } } p.egress { (footer) } },
        );
    };
    let q = params.q.clone().unwrap_or_default();
    let outcome = state
        .ruled_search(session.owner.address(), &q, parse_page(&params.page))
        .await;
    let (status, region) = results_region(&q, &outcome);
    page(status, html! { (region) p.egress { (footer) } })
}

fn not_found_page(state: &AppState, signed_in: bool) -> Response {
    let footer = state.lock_instance().egress().footer();
    error_page(
        StatusCode::NOT_FOUND,
        "There is nothing at this address.",
        footer,
        signed_in,
    )
}

async fn not_found(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let signed_in = state.session(&headers).is_some();
    not_found_page(&state, signed_in)
}

async fn document_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    if !is_document_id(&id) {
        return not_found_page(&state, true);
    }
    let (footer, found) = {
        let instance = state.lock_instance();
        (
            instance.egress().footer(),
            instance.document(session.owner.address(), &id),
        )
    };
    // A sibling's document is spoken only on S2's VISIBLE, asked now (§8.1).
    if let Ok(Some((doc, _))) = &found
        && let Some(p) = &doc.provenance
    {
        let pair = crate::sibling::Pair {
            item_id: p.item_id.clone(),
            revision: p.revision.clone(),
        };
        let subject = crate::sibling::Subject::address(session.owner.address());
        let verdict = match &state.siblings {
            Some(client) => client
                .check(&p.app, &subject, std::slice::from_ref(&pair))
                .await
                .verdicts
                .first()
                .copied()
                .unwrap_or(crate::sibling::Verdict::Unknown),
            None => crate::sibling::Verdict::Unknown,
        };
        match verdict {
            crate::sibling::Verdict::Visible => {}
            crate::sibling::Verdict::NotVisible => return not_found_page(&state, true),
            other => {
                let app = crate::instance::app_display_name(&p.app);
                let why = match other {
                    crate::sibling::Verdict::Stale => format!(
                        "{app} has a newer version of this document; it is withheld while memoria fetches it."
                    ),
                    crate::sibling::Verdict::Ahead => format!(
                        "{app} is behind the version memoria holds of this document; it is withheld until {app} re-announces."
                    ),
                    _ => format!("{app} did not answer, so this document is withheld."),
                };
                return error_page(StatusCode::SERVICE_UNAVAILABLE, &why, footer, true);
            }
        }
    }
    match found {
        Ok(Some((doc, passages))) => {
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
        Ok(None) => not_found_page(&state, true),
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

/// Checks the CSRF token and, if the browser sent one, the Origin.
fn csrf_ok(headers: &HeaderMap, session: &Session, token: Option<&str>) -> bool {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let origin_host = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://").map(|(_, h)| h.to_string()));
        if host.is_none() || origin_host.as_deref() != host {
            return false;
        }
    }
    let Some(token) = token else { return false };
    // Compare digests so the comparison time does not depend on a shared prefix.
    token_hash(token) == token_hash(&session.csrf)
}

fn forbidden_csrf(state: &AppState) -> Response {
    let footer = state.lock_instance().egress().footer();
    error_page(
        StatusCode::FORBIDDEN,
        "This form is stale or did not come from this memoria (CSRF check failed). Reload the page and try again.",
        footer,
        true,
    )
}

async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    mut multipart: Multipart,
) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    let footer = state.lock_instance().egress().footer();
    let too_large = || {
        error_page(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The upload is larger than 1 MiB (1,048,576 bytes), so nothing was stored.",
            footer,
            true,
        )
    };
    let mut csrf: Option<String> = None;
    let mut file: Option<(String, Vec<u8>)> = None;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return too_large(),
            Err(_) => {
                return error_page(
                    StatusCode::BAD_REQUEST,
                    "The upload form could not be read, so nothing was stored.",
                    footer,
                    true,
                );
            }
        };
        match field.name() {
            Some("csrf") => csrf = field.text().await.ok(),
            Some("file") => {
                let name = field
                    .file_name()
                    .map(|n| {
                        let base = n.rsplit(['/', '\\']).next().unwrap_or(n);
                        base.chars().take(UPLOAD_NAME_CHARS_MAX).collect::<String>()
                    })
                    .filter(|n| !n.trim().is_empty())
                    .unwrap_or_else(|| "upload.txt".to_string());
                match field.bytes().await {
                    Ok(b) => file = Some((name, b.to_vec())),
                    Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return too_large(),
                    Err(_) => {
                        return error_page(
                            StatusCode::BAD_REQUEST,
                            "The uploaded file could not be read, so nothing was stored.",
                            footer,
                            true,
                        );
                    }
                }
            }
            _ => {}
        }
    }
    if !csrf_ok(&headers, &session, csrf.as_deref()) {
        return forbidden_csrf(&state);
    }
    let Some((name, bytes)) = file else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "No file was attached, so nothing was stored.",
            footer,
            true,
        );
    };
    if bytes.len() > UPLOAD_BYTES_MAX {
        return too_large();
    }
    let result = {
        let mut instance = state.lock_instance();
        let key = format!("upload:{name}");
        import::ingest_bytes(&mut instance, &key, &name, &bytes).and_then(|(o, _)| {
            if o.status != IngestStatus::Unchanged {
                instance.write_snapshot()?;
            }
            Ok(o)
        })
    };
    match result {
        Ok(o) => Redirect::to(&format!("/documents/{}", o.id)).into_response(),
        Err(e) => upload_refusal(&e, footer),
    }
}

fn upload_refusal(e: &Error, footer: &str) -> Response {
    let (status, message) = match e.kind() {
        ErrorKind::Empty => (
            StatusCode::BAD_REQUEST,
            "The file is empty or holds no words, so nothing was stored.",
        ),
        ErrorKind::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "The upload is larger than memoria accepts, so nothing was stored.",
        ),
        ErrorKind::Decode if e.decode_error() == Some(crate::error::DecodeError::Binary) => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "The file is binary, not text. memoria takes Markdown, plain text and HTML; nothing was stored.",
        ),
        ErrorKind::Decode => (
            StatusCode::UNPROCESSABLE_ENTITY,
            "The file is not valid UTF-8 text, so nothing was stored.",
        ),
        _ => {
            tracing::error!(kind = ?e.kind(), "upload failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "The upload could not be stored.",
            )
        }
    };
    error_page(status, message, footer, true)
}

/// The owner's sources page (§8.1): per configured sibling, the refusal
/// breaker, the S3 breaker and the last S1 poll. Admitted owners only;
/// these notices never appear on a results page. The breakers' counters
/// are read here and nowhere on the query path.
async fn sources_page(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    let apps = state.siblings().map(|c| c.apps()).unwrap_or_default();
    let instance = state.lock_instance();
    let footer = instance.egress().footer();
    let now = instance.clock().now_unix_s();
    let store = instance.store();
    let cannot_read = |e: Error| crate::breaker::BreakerState::CannotDetermine {
        lacking: crate::breaker::Lacking::WindowAndBaseline,
        why: format!("the counters could not be read ({:?})", e.kind()),
    };
    let rows: Vec<(String, String, String, String)> = apps
        .iter()
        .map(|app| {
            let name = crate::instance::app_display_name(app);
            let refusal = store.refusal_breaker(app, now).unwrap_or_else(cannot_read);
            let s3 = store.s3_breaker(app, now).unwrap_or_else(cannot_read);
            let polled = match store.sibling_state(app).ok().and_then(|s| s.polled_at) {
                Some(t) => format!("Last polled {} UTC.", crate::clock::iso_date_time(t)),
                None => "Never polled.".to_string(),
            };
            (
                name.clone(),
                crate::breaker::refusal_sentence(&name, &refusal),
                crate::breaker::s3_sentence(&name, &s3),
                polled,
            )
        })
        .collect();
    drop(instance);
    let body = html! {
        h1 { "Sources" }
        @if rows.is_empty() { p { "No sibling is configured." } }
        @for (name, refusal, s3, polled) in &rows {
            section.source data-app=(name) {
                h2 { (name) }
                p.breaker.refusal-breaker { (refusal) }
                p.breaker.s3-breaker { (s3) }
                p.meta { (polled) }
            }
        }
    };
    page(
        StatusCode::OK,
        layout("Sources", footer, true, Some(&session.csrf), "", body),
    )
}

async fn delete_confirm(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    if !is_document_id(&id) {
        return not_found_page(&state, true);
    }
    let instance = state.lock_instance();
    let footer = instance.egress().footer();
    let Ok(Some((doc, _))) = instance.document(session.owner.address(), &id) else {
        drop(instance);
        return not_found_page(&state, true);
    };
    drop(instance);
    let body = html! {
        h1 { "Delete “" (doc.title) "”?" }
        p { "This removes the document and its " (doc.chunk_count) " passages from memoria for everyone. It cannot be undone here." }
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

#[derive(Debug, serde::Deserialize)]
struct CsrfForm {
    csrf: Option<String>,
}

async fn delete_document(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
    form: Result<axum::Form<CsrfForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    let token = form.as_ref().ok().and_then(|f| f.csrf.as_deref());
    if !csrf_ok(&headers, &session, token) {
        return forbidden_csrf(&state);
    }
    if !is_document_id(&id) {
        return not_found_page(&state, true);
    }
    let result = state.lock_instance().delete(&id);
    match result {
        Ok(_) => Redirect::to("/?deleted=1").into_response(),
        Err(e) if e.kind() == ErrorKind::NotFound => not_found_page(&state, true),
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "delete failed");
            let footer = state.lock_instance().egress().footer();
            error_page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The document could not be deleted.",
                footer,
                true,
            )
        }
    }
}

#[derive(Debug, serde::Deserialize)]
struct LoginParams {
    token: Option<String>,
}

async fn login(State(state): State<AppState>, Query(params): Query<LoginParams>) -> Response {
    let now = state.now();
    let claimed = params.token.as_deref().and_then(|t| {
        let mut auth = state.lock_auth();
        match auth.links.remove(&token_hash(t)) {
            Some((owner, exp)) if exp > now => Some(owner),
            _ => None,
        }
    });
    let Some(owner) = claimed.filter(|o| state.lock_instance().admit(o.address()).is_some()) else {
        let footer = state.lock_instance().egress().footer();
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
        HeaderValue::from_str(&format!(
            "{SESSION_COOKIE}={sid}; HttpOnly; SameSite=Strict; Path=/; Max-Age={SESSION_TTL_S}"
        ))
        .expect("token is URL-safe base64"),
    );
    resp
}

async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Result<axum::Form<CsrfForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Some(session) = state.session(&headers) else {
        return sign_in_required(&state);
    };
    let token = form.as_ref().ok().and_then(|f| f.csrf.as_deref());
    if !csrf_ok(&headers, &session, token) {
        return forbidden_csrf(&state);
    }
    if let Some(id) = cookie(&headers, SESSION_COOKIE) {
        state.lock_auth().sessions.remove(&token_hash(&id));
    }
    let footer = state.lock_instance().egress().footer();
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
        HeaderValue::from_static("memoria_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_drops_expired_entries_and_keeps_live_ones() {
        let mut m: HashMap<[u8; 32], i64> = HashMap::new();
        m.insert([1; 32], 10);
        m.insert([2; 32], 20);
        m.insert([3; 32], 30);
        prune(&mut m, 20, |e| *e);
        assert_eq!(m.len(), 1, "entries expiring at or before now are dropped");
        assert!(m.contains_key(&[3; 32]));
    }

    #[test]
    fn prune_evicts_the_soonest_to_expire_once_the_table_is_full() {
        let mut m: HashMap<[u8; 32], i64> = HashMap::new();
        for i in 0..SESSIONS_MAX {
            let mut k = [0u8; 32];
            k[..8].copy_from_slice(&(i as u64).to_le_bytes());
            m.insert(k, 1000 + i as i64);
        }
        prune(&mut m, 0, |e| *e);
        assert_eq!(m.len(), SESSIONS_MAX - 1, "room is made for one more");
        assert!(
            m.values().all(|e| *e > 1000),
            "the soonest-expiring entry went"
        );
    }
}
