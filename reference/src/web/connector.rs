//! The connector ingest surface: `POST /connectors/{name}/documents` creates or revises a memoria-owned document, authenticated by that connector's bearer token and nothing else (§9.1, §4.2, gate 16).
//!
//! The credential check is [`ConnectorCaller`], which runs on the request's
//! head, before any body is read. It accepts exactly one thing: an
//! `Authorization: Bearer` token whose SHA-256 is the one configured for
//! the connector the path names ([`crate::Connectors`]). A session cookie
//! is not looked at; a token memoria sends one of its siblings is refused
//! by name; a request whose `Origin` is not on the connector's allowlist is
//! refused (a request with no `Origin`, a server's, is not a browser's).
//! Every refusal is the same 401 page, so a caller learns nothing about
//! which connector names exist, except the origin refusal (403), which
//! follows a valid token.
//!
//! The body is the document's bytes, capped at [`CONNECTOR_BODY_MAX_BYTES`];
//! `?path=` names it (its extension picks the decoder, as an upload's file
//! name does). It goes through the ingest uploads use
//! ([`crate::app::import::ingest_bytes`]) under the source key
//! `connector:{name}:{path}`, so the same path from the same connector
//! revises the same document. Nothing here logs the path, the body, the
//! connector's name or a token.

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::envelope::error_page;
use super::upload::upload_refusal;
use super::{AppState, UPLOAD_NAME_CHARS_MAX};
use crate::app::import;
use crate::storage::store::IngestStatus;

/// The largest body a connector may send, in bytes: §9.1's "body cap 1
/// MiB". The reason is the upload's: one document is decoded, chunked and
/// sealed in memory inside one transaction, and 1 MiB is the same ceiling
/// `POST /documents` holds ([`super::UPLOAD_BYTES_MAX`]), so a connector
/// can send nothing a person could not upload. (§9.1 asks for the reason
/// to be measured before the constant is committed; it is the upload's
/// figure, not a new measurement.)
pub const CONNECTOR_BODY_MAX_BYTES: usize = 1_048_576;

/// The one refusal every credential failure at a connector route answers.
const REFUSED: &str =
    "This connector route takes only its connector's bearer token. Nothing was stored.";

/// A connector whose token this request presented, by name, as a handler argument.
#[derive(Debug, Clone)]
pub(crate) struct ConnectorCaller(pub(crate) String);

/// The path and name a connector document is stored under.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct DocumentParams {
    pub(crate) path: Option<String>,
}

impl FromRequestParts<AppState> for ConnectorCaller {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let footer = state.egress().footer();
        let refused = || {
            let mut r = error_page(StatusCode::UNAUTHORIZED, REFUSED, footer, false);
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            r
        };
        let Ok(Path(name)) = Path::<String>::from_request_parts(parts, state).await else {
            return Err(refused());
        };
        let presented = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let Some(token) = presented else {
            return Err(refused());
        };
        // memoria's own outbound credentials are never inbound ones (§9.1).
        if state.siblings().is_some_and(|s| s.sends_token(token)) {
            tracing::warn!("a sibling's token was presented at a connector route, and refused");
            return Err(refused());
        }
        if !state.connectors().verify(&name, token) {
            return Err(refused());
        }
        if let Some(origin) = parts.headers.get(header::ORIGIN) {
            let allowed = origin
                .to_str()
                .is_ok_and(|o| state.connectors().origin_allowed(&name, o));
            if !allowed {
                return Err(error_page(
                    StatusCode::FORBIDDEN,
                    "This request's Origin is not on the connector's allowlist. Nothing was stored.",
                    footer,
                    false,
                ));
            }
        }
        Ok(ConnectorCaller(name))
    }
}

/// `POST /connectors/{name}/documents?path=…`: the body is the document.
/// Answers 201 Created for a new (or restored) document and 204 No Content
/// for a revision or an unchanged body, each with the document's page as
/// `Location` and no body (`FOOTER_EXEMPT`).
pub(crate) async fn connector_document(
    State(state): State<AppState>,
    ConnectorCaller(name): ConnectorCaller,
    Query(params): Query<DocumentParams>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let footer = state.egress().footer();
    let too_large = || {
        error_page(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The body is larger than 1 MiB (1,048,576 bytes), so nothing was stored.",
            footer,
            false,
        )
    };
    let bytes = match body {
        Ok(b) if b.len() > CONNECTOR_BODY_MAX_BYTES => return too_large(),
        Ok(b) => b.to_vec(),
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return too_large(),
        Err(_) => {
            return error_page(
                StatusCode::BAD_REQUEST,
                "The body could not be read, so nothing was stored.",
                footer,
                false,
            );
        }
    };
    let Some(path) = params
        .path
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty() && p.chars().count() <= UPLOAD_NAME_CHARS_MAX)
    else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "?path= must name the document, 1 to 200 characters, so nothing was stored.",
            footer,
            false,
        );
    };
    let result = state
        .blocking(move |instance| {
            let key = format!("connector:{name}:{path}");
            import::ingest_bytes(instance, &key, &path, &bytes, None).and_then(|(o, _)| {
                if o.status != IngestStatus::Unchanged {
                    instance.write_snapshot()?;
                }
                Ok(o)
            })
        })
        .await
        .flatten();
    match result {
        Ok(o) => {
            state.embed_soon();
            let status = match o.status {
                IngestStatus::Created | IngestStatus::Restored => StatusCode::CREATED,
                _ => StatusCode::NO_CONTENT,
            };
            tracing::info!(status = status.as_u16(), "connector document ingested");
            Response::builder()
                .status(status)
                .header(header::LOCATION, format!("/documents/{}", o.id))
                .body(Body::empty())
                .expect("static response")
        }
        Err(e) => upload_refusal(&e, footer),
    }
}
