//! What every page shares: the request envelope (headers, content-free log, footer on errors), the layout, and the error pages (§8.1, §9.1, §3.6).

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::AppState;

/// Wraps every response: security headers, a footer page for any bodiless
/// or non-HTML error, and a content-free request log line.
pub(crate) async fn envelope(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_string())
        .unwrap_or_else(|| "(unmatched)".to_string());
    // Every request counts against the idle eviction (§3.5).
    state.touch();
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
        let egress = state.egress();
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

pub(crate) const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem;color:#1b1b1b}\
header form{display:flex;gap:.5rem}header input[type=search]{flex:1;font-size:1.1rem;padding:.3rem}\
.facts{border:1px solid #cbd5e1;padding:0 1rem;margin:1rem 0}.facts h2{font-size:1rem;margin:.6rem 0 .2rem}.facts ul{margin:0 0 .6rem;padding-left:1.2rem}\
.fact-model{border-left:.3rem dashed #7c3aed;padding-left:.6rem;margin:.4rem 0}.fact-by,.fact-caveat{color:#5b21b6;font-size:.9rem}\
.result{margin:1.2rem 0}.meta{color:#555;font-size:.9rem}mark{background:#ffe58a}\
.notice{background:#eef4ff;padding:.5rem}.refusal{background:#fff1f0;padding:.5rem}\
.withheld,.reconciling,.freshness{background:#fff8e1;border:1px solid #e0b400;border-left-width:.3rem;padding:.5rem .75rem;margin:.6rem 0}\
.count{color:#444;margin:.8rem 0 0}.meta .part,.marker{white-space:nowrap}.marker-figure{vertical-align:-.1em;margin-right:.3em;color:#3b5b8c}.marker-label{font-size:.85rem}.marker-model .marker-figure{color:#8a4b08}.answer-text>.marker{display:block;margin-bottom:.2rem}.result,.answer,.fact{overflow-wrap:break-word}\
li.fold{list-style:none;margin:-.6rem 0 1.2rem}li.fold summary{cursor:pointer;color:#1f4f99}li.fold ol{margin:.3rem 0 0;padding-left:1.5rem}\
nav.back{margin:.5rem 0}.grounds ul{margin:.2rem 0;padding-left:1.2rem}\
.answer{border:1px solid #b4a7d6;border-left:.3rem solid #7e57c2;background:#f7f4fd;padding:.2rem 1rem;margin:1rem 0}.answer .cite{font-size:.85rem;text-decoration:none}\
.answer-meta,.answer-dropped,.answer-stripped,.answer-route{color:#555;font-size:.9rem}\
.ask{display:grid;gap:.3rem;max-width:40rem;margin:1rem 0}.ask textarea,.ask select,.ask input,.ask button{font:inherit;padding:.2rem .3rem}.ask input[name=budget]{max-width:8rem}.ask button{justify-self:start}\
.brief .status{font-size:1.2rem;margin-bottom:0}.brief blockquote{border-left:.2rem solid #ccc;margin:.3rem 0;padding-left:.8rem}.brief .excerpts li{margin:.6rem 0}\
.brief pre.text{white-space:pre-wrap;background:#f6f6f6;padding:.4rem .6rem}.brief .grounds code{font-size:.8rem}\
section.passage{border-top:1px solid #ddd;padding:.5rem .75rem 0;margin:0 -.75rem}.passage pre.text{white-space:pre-wrap;font:inherit}\
section.passage:target{background:#fffbea;border-left:.3rem solid #e0b400;padding-left:.45rem}\
section.passage:target>p.meta::after{content:' · the passage your link points to';font-weight:600}\
.passage pre{white-space:pre-wrap;background:#f6f6f6;padding:.4rem .6rem;overflow-x:auto}.passage code{background:#f2f2f2;padding:0 .15rem}\
.passage pre code{background:none;padding:0}.passage blockquote{border-left:.2rem solid #ccc;margin-left:0;padding-left:.8rem;color:#444}\
.passage .table{overflow-x:auto}.passage table{border-collapse:collapse;margin:.5rem 0}.passage th,.passage td{border:1px solid #ccc;padding:.2rem .5rem;vertical-align:top}\
.align-left{text-align:left}.align-center{text-align:center}.align-right{text-align:right}.passage .image{color:#555;font-style:italic}\
footer{margin-top:3rem;border-top:1px solid #ddd;padding-top:.5rem;color:#444;font-size:.9rem}";

pub(crate) fn layout(
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
                            // No `maxlength`: a browser counts it in UTF-16
                            // units and cuts a longer paste in silence, while
                            // the limit is bytes (§9.1). The server counts,
                            // once, and refuses aloud with both figures.
                            input type="search" name="q" value=(q) aria-label="Search" autofocus;
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

pub(crate) fn page(status: StatusCode, markup: Markup) -> Response {
    (status, Html(markup.into_string())).into_response()
}

pub(crate) fn error_page(
    status: StatusCode,
    message: &str,
    footer: &str,
    signed_in: bool,
) -> Response {
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

/// A sibling document withheld loudly (§8.1): 503, and the line the search
/// page shows for the same app and reason, in the same markup.
pub(crate) fn withheld_page(w: &crate::page::Withheld, footer: &str) -> Response {
    let status = StatusCode::SERVICE_UNAVAILABLE;
    let title = status.canonical_reason().unwrap_or("Error");
    page(
        status,
        layout(
            title,
            footer,
            true,
            None,
            "",
            html! {
                h1 { (status.as_u16()) " " (title) }
                p.withheld role="status" data-app=(w.app) { (w.sentence()) }
                p { a href="/" { "Back to search" } }
            },
        ),
    )
}

/// The sentence that says why nobody's team standing can be established
/// (§4.3), for the standing page and the roster page.
pub(crate) fn lack_sentence(lack: crate::access::roster::RosterLack) -> String {
    use crate::access::roster::{ROSTER_TTL_S, RosterLack};
    let minutes = ROSTER_TTL_S / 60;
    match lack {
        RosterLack::NoCopy => "memoria has not been able to fetch the team's roster from the home, so nobody's team standing can be established.".to_string(),
        RosterLack::Stale { awaiting_confirmation: false } => format!(
            "The team's roster is stale: memoria has not fetched it from the home for over {minutes} minutes, so nobody's team standing can be established."
        ),
        RosterLack::Stale { awaiting_confirmation: true } => format!(
            "The team's roster is stale: the home answers with a new roster generation that an owner has not confirmed, and the copy memoria holds is over {minutes} minutes old, so nobody's team standing can be established."
        ),
    }
}

/// A session whose person's team standing cannot be established now
/// (suite shape, the roster copy stale or missing: §4.3, suite gate 5).
/// Nothing is searched or read and no sibling is asked: every source's
/// results are withheld, each named in a line of its own with the reason.
/// The search page and its fragment answer 200 (a page that withholds, not
/// an error); every other route 503, with the same lines.
pub(crate) fn standing_withheld(
    state: &AppState,
    session: &crate::access::session::Session,
    lack: crate::access::roster::RosterLack,
    search: bool,
) -> Response {
    let footer = state.egress().footer();
    let status = if search {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    page(
        status,
        layout(
            "Withheld",
            footer,
            true,
            Some(&session.csrf),
            "",
            html! {
                h1 { "Nothing can be shown" }
                (standing_region(state, lack))
            },
        ),
    )
}

/// The results region while nobody's team standing can be established:
/// one withheld line for the roster's reason, one for memoria's own
/// documents, one per configured sibling (not asked), and no passage.
pub(crate) fn standing_region(state: &AppState, lack: crate::access::roster::RosterLack) -> Markup {
    let apps: Vec<String> = state
        .siblings()
        .map(|c| c.apps())
        .unwrap_or_default()
        .iter()
        .map(|a| crate::page::app_display_name(a))
        .collect();
    html! {
        section #results {
            p.withheld role="status" data-app="roster" { (lack_sentence(lack)) }
            p.withheld role="status" data-app="memoria" {
                "memoria's own documents are withheld until the roster can be fetched."
            }
            @for app in &apps {
                p.withheld role="status" data-app=(app.to_lowercase()) {
                    (app) " was not asked (unknown); its results are withheld until the roster can be fetched."
                }
            }
            p { "No passage can be shown." }
        }
    }
}

/// Who this instance admits, for the sign-in pages (§4.3): its owners
/// only in lone shape; its owners and its team's roster in suite shape.
pub(crate) fn who_is_admitted(state: &AppState) -> &'static str {
    if state.admission().roster().is_some() {
        "its owners and the members on its team's roster"
    } else {
        "its owners only"
    }
}

pub(crate) fn sign_in_required(state: &AppState) -> Response {
    let footer = state.egress().footer();
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
                p { "memoria admits " (who_is_admitted(state)) ". Open the one-time sign-in link that "
                    code { "memoria serve" } " printed in its terminal." }
                p { a href="/signin" { "Ask for a fresh sign-in link" } }
            },
        ),
    )
}

pub(crate) fn not_found_page(state: &AppState, signed_in: bool) -> Response {
    let footer = state.egress().footer();
    error_page(
        StatusCode::NOT_FOUND,
        "There is nothing at this address.",
        footer,
        signed_in,
    )
}

pub(crate) async fn not_found(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let signed_in = state.session(&headers).is_some();
    not_found_page(&state, signed_in)
}

pub(crate) fn forbidden_csrf(state: &AppState) -> Response {
    let footer = state.egress().footer();
    error_page(
        StatusCode::FORBIDDEN,
        "This form is stale or did not come from this memoria (CSRF check failed). Reload the page and try again.",
        footer,
        true,
    )
}
