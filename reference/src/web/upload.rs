//! Uploading a file: one Markdown, text or HTML file per POST, capped, decoded and ingested in one transaction (§5, §9.1).

use axum::extract::{Multipart, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

use super::envelope::{error_page, forbidden_csrf};
use super::extract::SignedIn;
use super::{AppState, UPLOAD_BYTES_MAX, UPLOAD_NAME_CHARS_MAX};
use crate::access::session::csrf_ok;
use crate::app::import;
use crate::error::{Error, ErrorKind};
use crate::storage::store::IngestStatus;

pub(crate) async fn upload(
    State(state): State<AppState>,
    SignedIn(session): SignedIn,
    headers: HeaderMap,
    mut multipart: Multipart,
) -> Response {
    let footer = state.egress().footer();
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
    // Chunking, sealing, the transaction and the snapshot run off the
    // async worker threads (`AppState::blocking`, issue 10).
    let result = state
        .blocking(move |instance| {
            let key = format!("upload:{name}");
            import::ingest_bytes(instance, &key, &name, &bytes, None).and_then(|(o, _)| {
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
            // With AI on, the new passages are embedded beside the request.
            state.embed_soon();
            Redirect::to(&format!("/documents/{}", o.id)).into_response()
        }
        Err(e) => upload_refusal(&e, footer),
    }
}

pub(crate) fn upload_refusal(e: &Error, footer: &str) -> Response {
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
