//! The stub provider's HTTP handlers: `POST /v1/embeddings`, `POST /v1/chat/completions` and `POST /_control`, each reading its knobs and recording what it was sent (§8.3).
//!
//! Every error's body carries the stub's body marker when one is set (gate
//! 31); delays are `tokio::time::sleep`, which turmoil simulates.

use std::io::Write as _;
use std::time::Duration;

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderMap, StatusCode, header};
use serde::Deserialize;

use super::hashed::{drifted, embed_text};
use super::models::{STUB_ANSWER_APART_REPLY, extractive_reply};
use super::{
    Down, Drift, REFUSED_MARKER, RecordedChatRequest, RecordedRequest, STUB_CHAT_DEFAULT_REPLY,
    STUB_CHAT_MALFORMED_BODY, STUB_CHAT_OVERSIZED_BYTES, STUB_CHAT_REQUEST_BYTES_MAX,
    STUB_INPUTS_PER_CALL_MAX, STUB_REQUEST_BYTES_MAX, STUB_VECTOR_VALUES, StubProvider,
};
use crate::fake::control::ControlRequest;
use crate::fake::faults::RefuseConnection;

#[derive(Deserialize)]
struct EmbedRequest {
    model: String,
    input: Input,
    #[serde(default)]
    dimensions: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Input {
    One(String),
    Many(Vec<String>),
}

/// What both endpoints answer before they read a request, in this order:
/// the knobs' delay, an outage, a rate limit (`knobs` is the delay in
/// milliseconds, the outage, whether this call is rate limited and the
/// `Retry-After` its 429 carries, in seconds), a body over `bytes_max`
/// bytes, a missing bearer token. `None` lets it through.
async fn refused_before_reading(
    marker: &Option<String>,
    (slow_ms, down, rate_limited, retry_after_s): (Option<u64>, Option<&Down>, bool, Option<u64>),
    body_bytes: usize,
    bytes_max: usize,
    authorization: Option<&str>,
) -> Option<Response> {
    if let Some(ms) = slow_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    match down {
        Some(Down::Refuse) => {
            let mut r = StatusCode::SERVICE_UNAVAILABLE.into_response();
            r.extensions_mut().insert(RefuseConnection);
            return Some(r);
        }
        Some(Down::Status(code)) => {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::SERVICE_UNAVAILABLE);
            return Some(error_m(marker, status, "unavailable"));
        }
        None => {}
    }
    if rate_limited {
        let mut r = error_m(marker, StatusCode::TOO_MANY_REQUESTS, "rate limited");
        if let Some(s) = retry_after_s {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from(s));
        }
        return Some(r);
    }
    if body_bytes > bytes_max {
        return Some(error_m(
            marker,
            StatusCode::PAYLOAD_TOO_LARGE,
            "request too large",
        ));
    }
    if !authorization.is_some_and(|a| a.starts_with("Bearer ") && a.len() > 7) {
        return Some(error_m(
            marker,
            StatusCode::UNAUTHORIZED,
            "missing bearer token",
        ));
    }
    None
}

/// [`error`], its message followed by the stub's body marker when one is set.
fn error_m(marker: &Option<String>, status: StatusCode, message: &str) -> Response {
    match marker {
        Some(m) => error(status, &format!("{message} {m}")),
        None => error(status, message),
    }
}

fn error(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(serde_json::json!({"error": {"message": message}})),
    )
        .into_response()
}

pub(super) async fn embeddings(
    State(stub): State<StubProvider>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let marker = stub.with(|s| s.body_marker.clone());
    let parsed: Option<EmbedRequest> = serde_json::from_slice(&body).ok();
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let inputs = match parsed.as_ref().map(|r| &r.input) {
        Some(Input::One(s)) => vec![s.clone()],
        Some(Input::Many(v)) => v.clone(),
        None => Vec::new(),
    };
    let faults = stub.with(|s| {
        s.requests.push(RecordedRequest {
            body: body.to_vec(),
            inputs: inputs.clone(),
            model: parsed.as_ref().map(|r| r.model.clone()),
            authorization: authorization.clone(),
        });
        let faults = s.faults.clone();
        s.faults.rate_limited_calls = s.faults.rate_limited_calls.saturating_sub(1);
        faults
    });
    if let Some(refused) = refused_before_reading(
        &marker,
        (
            faults.slow_ms,
            faults.down.as_ref(),
            faults.rate_limited_calls > 0,
            faults.retry_after_s,
        ),
        body.len(),
        STUB_REQUEST_BYTES_MAX,
        authorization.as_deref(),
    )
    .await
    {
        return refused;
    }
    let Some(request) = parsed else {
        return error_m(
            &marker,
            StatusCode::BAD_REQUEST,
            "not an embeddings request",
        );
    };
    // §7.2: the real model fails the request when `dimensions` is sent.
    if request.dimensions.is_some() {
        return error_m(
            &marker,
            StatusCode::BAD_REQUEST,
            "dimensions is not supported",
        );
    }
    if request.model != memoria::EMBED_MODEL {
        return error_m(&marker, StatusCode::NOT_FOUND, "model not found");
    }
    if inputs.is_empty() || inputs.len() > STUB_INPUTS_PER_CALL_MAX {
        return error_m(&marker, StatusCode::BAD_REQUEST, "input count out of range");
    }
    if inputs.iter().any(|s| s.is_empty()) {
        return error_m(&marker, StatusCode::BAD_REQUEST, "empty input");
    }
    // A whole call refused for one input, as a provider's filter does.
    if inputs.iter().any(|s| s.contains(REFUSED_MARKER)) {
        return error_m(&marker, StatusCode::BAD_REQUEST, "input rejected");
    }
    let model = stub.with(|s| s.model.clone());
    let base: Vec<Vec<f32>> = match model {
        None => inputs.iter().map(|t| embed_text(t)).collect(),
        Some(model) => {
            let texts = inputs.clone();
            match tokio::task::spawn_blocking(move || model.embed(&texts)).await {
                Ok(Ok(vectors)) => vectors
                    .into_iter()
                    .map(|mut v| {
                        v.resize(STUB_VECTOR_VALUES, 0.0);
                        v
                    })
                    .collect(),
                _ => {
                    return error_m(
                        &marker,
                        StatusCode::SERVICE_UNAVAILABLE,
                        "the model did not answer",
                    );
                }
            }
        }
    };
    // Written into one buffer: a string a value was most of a seed's CPU
    // in the simulator's unoptimised build (1,536 values an input).
    use std::fmt::Write as _;
    let mut json = String::from(r#"{"object":"list","data":["#);
    for (i, (text, v)) in inputs.iter().zip(base).enumerate() {
        let mut v = drifted(v, text, faults.drift);
        if let Some(n) = faults.wrong_length {
            v.resize(n, 0.01);
        }
        if faults.all_zero {
            v.iter_mut().for_each(|x| *x = 0.0);
        }
        if i > 0 {
            json.push(',');
        }
        let _ = write!(json, r#"{{"object":"embedding","index":{i},"embedding":["#);
        for (k, x) in v.iter().enumerate() {
            if k > 0 {
                json.push(',');
            }
            if k == 0 && faults.nan {
                json.push_str("null");
            } else if x.to_bits() == 0 {
                // `{x:?}` of +0.0, written without `core::fmt`: a hashed
                // vector is mostly zeros (`hashed.rs`), and formatting
                // 4,096 values an input was most of this handler's CPU
                // in the simulator's unoptimised build (benches/RESULTS.md,
                // issue 26, "The explorer's steps"). Same bytes.
                json.push_str("0.0");
            } else {
                let _ = write!(json, "{x:?}");
            }
        }
        json.push_str("]}");
    }
    let tokens: usize = inputs.iter().map(|s| s.split_whitespace().count()).sum();
    let _ = write!(
        json,
        r#"],"model":"{}","usage":{{"prompt_tokens":{tokens},"total_tokens":{tokens}}}}}"#,
        memoria::EMBED_MODEL
    );
    let gzip = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    let mut response = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json");
    let body = if gzip {
        response = response.header(header::CONTENT_ENCODING, "gzip");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(json.as_bytes()).expect("writing to memory");
        e.finish().expect("writing to memory")
    } else {
        json.into_bytes()
    };
    response
        .body(Body::from(body))
        .expect("a fixed status and headers make a response")
}

#[derive(Deserialize)]
struct ChatRequest {
    model: String,
    messages: Vec<serde_json::Value>,
}

pub(super) async fn chat_completions(
    State(stub): State<StubProvider>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let marker = stub.with(|s| s.body_marker.clone());
    let parsed: Option<ChatRequest> = serde_json::from_slice(&body).ok();
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // memoria's answer requests, answered on the side when asked to be:
    // not recorded with the others, no fault, no scripted reply used.
    let is_answer = parsed.as_ref().is_some_and(|r| {
        r.messages
            .first()
            .and_then(|m| m.get("content"))
            .and_then(|c| c.as_str())
            == Some(memoria::answer::ANSWER_INSTRUCTIONS)
    });
    if is_answer && stub.with(|s| s.answers_apart) {
        stub.with(|s| s.answer_requests.push(body.to_vec()));
        let completion = serde_json::json!({
            "id": "stub-answer-apart",
            "object": "chat.completion",
            "model": parsed.as_ref().map(|r| r.model.clone()),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": STUB_ANSWER_APART_REPLY},
                "finish_reason": "stop",
            }],
        });
        return Json(completion).into_response();
    }
    let faults = stub.with(|s| {
        s.chat_requests.push(RecordedChatRequest {
            body: body.to_vec(),
            model: parsed.as_ref().map(|r| r.model.clone()),
            authorization: authorization.clone(),
        });
        let faults = s.chat_faults.clone();
        s.chat_faults.rate_limited_calls = s.chat_faults.rate_limited_calls.saturating_sub(1);
        faults
    });
    if let Some(refused) = refused_before_reading(
        &marker,
        (
            faults.slow_ms,
            faults.down.as_ref(),
            faults.rate_limited_calls > 0,
            None,
        ),
        body.len(),
        STUB_CHAT_REQUEST_BYTES_MAX,
        authorization.as_deref(),
    )
    .await
    {
        return refused;
    }
    let Some(request) = parsed else {
        return error_m(
            &marker,
            StatusCode::BAD_REQUEST,
            "not a chat completions request",
        );
    };
    if request.model != memoria::MODEL_CHEAP && request.model != memoria::MODEL_FRONTIER {
        return error_m(&marker, StatusCode::NOT_FOUND, "model not found");
    }
    if request.messages.is_empty() {
        return error_m(&marker, StatusCode::BAD_REQUEST, "no messages");
    }
    let json = |body: String| {
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body))
            .expect("a fixed status and headers make a response")
    };
    if faults.malformed {
        return json(match &marker {
            Some(m) => format!("{STUB_CHAT_MALFORMED_BODY} {m}"),
            None => STUB_CHAT_MALFORMED_BODY.to_owned(),
        });
    }
    let content = if faults.oversized {
        match &marker {
            Some(m) => format!("{m} ").repeat(STUB_CHAT_OVERSIZED_BYTES / (m.len() + 1) + 1),
            None => "x".repeat(STUB_CHAT_OVERSIZED_BYTES),
        }
    } else {
        stub.with(|s| {
            s.chat_replies
                .pop_front()
                .or_else(|| {
                    s.chat_extractive
                        .then(|| extractive_reply(&request.messages))
                        .flatten()
                })
                .or_else(|| s.chat_default.clone())
                .unwrap_or_else(|| STUB_CHAT_DEFAULT_REPLY.to_owned())
        })
    };
    let n = stub.chat_calls();
    let words = content.split_whitespace().count();
    let mut completion = serde_json::json!({
        "id": format!("stub-chat-{n}"),
        "object": "chat.completion",
        "model": request.model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": if faults.truncated { "length" } else { "stop" },
        }],
        "usage": {"prompt_tokens": body.len() / 4, "completion_tokens": words},
    });
    // The marker rides in a field no client reads, so an empty or cut-off
    // completion carries it too (gate 31).
    if let Some(m) = &marker {
        completion["system_fingerprint"] = serde_json::Value::String(m.clone());
    }
    json(completion.to_string())
}

pub(super) async fn control(
    State(stub): State<StubProvider>,
    Json(req): Json<ControlRequest>,
) -> Response {
    let arg = |i: usize| req.args.get(i).map(String::as_str);
    let on_off = |i: usize| match arg(i) {
        Some("on") => Some(true),
        Some("off") => Some(false),
        _ => None,
    };
    let bad = || StatusCode::BAD_REQUEST.into_response();
    let done = |value: Option<String>| Json(serde_json::json!({ "value": value })).into_response();
    match req.action.as_str() {
        "down" => match arg(0) {
            Some("off") => stub.set_down(None),
            Some("refuse") => stub.set_down(Some(Down::Refuse)),
            Some(code) => match code.parse::<u16>() {
                Ok(c) if (100..600).contains(&c) => stub.set_down(Some(Down::Status(c))),
                _ => return bad(),
            },
            None => return bad(),
        },
        "slow" => match arg(0) {
            Some("off") => stub.set_slow(None),
            Some(ms) => match ms.parse() {
                Ok(ms) => stub.set_slow(Some(ms)),
                Err(_) => return bad(),
            },
            None => return bad(),
        },
        "rate-limit" => match arg(0).and_then(|n| n.parse().ok()) {
            Some(n) => stub.rate_limit_next(n),
            None => return bad(),
        },
        "wrong-length" => match arg(0) {
            Some("off") => stub.set_wrong_length(None),
            Some(n) => match n.parse() {
                Ok(n) => stub.set_wrong_length(Some(n)),
                Err(_) => return bad(),
            },
            None => return bad(),
        },
        "nan" => match on_off(0) {
            Some(on) => stub.set_nan(on),
            None => return bad(),
        },
        "all-zero" => match on_off(0) {
            Some(on) => stub.set_all_zero(on),
            None => return bad(),
        },
        "drift" => match (arg(0), arg(1)) {
            (Some("off"), None) => stub.set_drift(None),
            (Some(seed), Some(delta)) => match (seed.parse(), delta.parse::<f32>()) {
                (Ok(seed), Ok(delta)) if delta.is_finite() && delta >= 0.0 => {
                    stub.set_drift(Some(Drift { seed, delta }));
                }
                _ => return bad(),
            },
            _ => return bad(),
        },
        "chat-down" => match arg(0) {
            Some("off") => stub.set_chat_down(None),
            Some("refuse") => stub.set_chat_down(Some(Down::Refuse)),
            Some(code) => match code.parse::<u16>() {
                Ok(c) if (100..600).contains(&c) => stub.set_chat_down(Some(Down::Status(c))),
                _ => return bad(),
            },
            None => return bad(),
        },
        "chat-slow" => match arg(0) {
            Some("off") => stub.set_chat_slow(None),
            Some(ms) => match ms.parse() {
                Ok(ms) => stub.set_chat_slow(Some(ms)),
                Err(_) => return bad(),
            },
            None => return bad(),
        },
        "chat-rate-limit" => match arg(0).and_then(|n| n.parse().ok()) {
            Some(n) => stub.chat_rate_limit_next(n),
            None => return bad(),
        },
        "chat-malformed" => match on_off(0) {
            Some(on) => stub.set_chat_malformed(on),
            None => return bad(),
        },
        "chat-oversized" => match on_off(0) {
            Some(on) => stub.set_chat_oversized(on),
            None => return bad(),
        },
        "chat-truncated" => match on_off(0) {
            Some(on) => stub.set_chat_truncated(on),
            None => return bad(),
        },
        "chat-reply" if !req.args.is_empty() => stub.push_chat_reply(&req.args.join(" ")),
        "chat-default-reply" => match req.args.as_slice() {
            [] => return bad(),
            [off] if off == "off" => stub.set_chat_default_reply(None),
            args => stub.set_chat_default_reply(Some(&args.join(" "))),
        },
        "faults-off" => {
            stub.clear_faults();
            stub.clear_chat_faults();
        }
        "calls" => return done(Some(stub.calls().to_string())),
        "chat-calls" => return done(Some(stub.chat_calls().to_string())),
        _ => return StatusCode::NOT_FOUND.into_response(),
    }
    done(None)
}
