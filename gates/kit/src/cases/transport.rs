//! Transport (contract common rules): every answer the kit reads is labelled `content-type: application/json`, the 200s of S1, S1a, S2 and S3 and every non-2xx it provokes (401, 404, 400, 410), and every error body matches `error.schema.json`.
//!
//! The contract's transport rule is JSON bodies with `content-type:
//! application/json` on every call, errors included; a body that parses
//! while labelled `text/plain` or with a document's own media type passes
//! every case that reads only bodies, so the label is checked here, once,
//! on every kind of answer the kit can cause without a control hook.

use serde_json::json;

use super::NEVER_ISSUED_REVISION;
use super::S2_PAIRS_PER_CALL_MAX;
use super::wire::{Outcome, call_failed, none_wrong, s2_body};
use crate::client::{Auth, Response};
use crate::{ConformCase, Ctx, NotPassed};

/// An S1 cursor and an S1a page token no sibling issued, for the 410s.
const NEVER_ISSUED_CURSOR: &str = "conform-never-issued-cursor";

/// The media type every body carries (contract common rules).
const JSON_MEDIA_TYPE: &str = "application/json";

/// True if `r`'s `content-type` is `application/json`, parameters (a
/// charset) allowed, compared case-insensitively as RFC 9110 §8.3.1 asks.
fn labelled_json(r: &Response) -> bool {
    r.headers
        .iter()
        .filter(|(k, _)| k == "content-type")
        .any(|(_, v)| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case(JSON_MEDIA_TYPE))
        })
}

/// Every error the kit can cause without a control hook, by name.
fn provoked(ctx: &Ctx<'_>) -> Result<Vec<(String, Response)>, NotPassed> {
    let m = ctx.manifest;
    let t = m.item("team");
    let a = m.person("member_a");
    let c = ctx.client;
    let token = Auth::Bearer(ctx.token);
    let pairs: Vec<(&str, &str)> = (0..=S2_PAIRS_PER_CALL_MAX)
        .map(|_| (t.item_id.as_str(), t.current()))
        .collect();
    let over_cap = s2_body(&m.keys_on, m.subject_value(a, &m.keys_on), &pairs);
    let s3_body = |v: serde_json::Value| serde_json::to_vec(&v).expect("JSON serialises");
    let calls: Vec<(&str, Result<Response, _>)> = vec![
        ("GET /s1/feed without a token", c.get("/s1/feed", Auth::Missing)),
        (
            "POST /s3/fetch for the no-row id",
            c.post(
                "/s3/fetch",
                s3_body(json!({"item_id": m.no_row.item_id, "revision": m.no_row.revision})),
                token,
            ),
        ),
        (
            "POST /s3/fetch for a team item at a revision never issued",
            c.post(
                "/s3/fetch",
                s3_body(json!({"item_id": t.item_id, "revision": NEVER_ISSUED_REVISION})),
                token,
            ),
        ),
        (
            "POST /s3/fetch with an unknown field",
            c.post(
                "/s3/fetch",
                s3_body(json!({"item_id": t.item_id, "revision": t.current(), "conform_unknown_field": true})),
                token,
            ),
        ),
        (
            "POST /s2/check with 257 pairs",
            c.post("/s2/check", over_cap, token),
        ),
        (
            "GET /s1/feed from a cursor never issued",
            c.get(&format!("/s1/feed?cursor={NEVER_ISSUED_CURSOR}"), token),
        ),
        (
            "GET /s1a/announce from a page token never issued",
            c.get(&format!("/s1a/announce?page={NEVER_ISSUED_CURSOR}"), token),
        ),
    ];
    calls
        .into_iter()
        .map(|(name, r)| {
            r.map(|r| (name.to_owned(), r))
                .map_err(|e| call_failed(name, &e))
        })
        .collect()
}

/// The `content-type` values `r` carries, for a failure line.
fn labels(r: &Response) -> Vec<&str> {
    r.headers
        .iter()
        .filter(|(k, _)| k == "content-type")
        .map(|(_, v)| v.as_str())
        .collect()
}

fn every_200_is_json(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let t = m.item("team");
    let a = m.person("member_a");
    let c = ctx.client;
    let token = Auth::Bearer(ctx.token);
    let s2 = s2_body(
        &m.keys_on,
        m.subject_value(a, &m.keys_on),
        &[(&t.item_id, t.current())],
    );
    let s3 = serde_json::to_vec(&json!({"item_id": t.item_id, "revision": t.current()}))
        .expect("JSON serialises");
    let calls = [
        ("GET /s1/feed", c.get("/s1/feed", token)),
        ("GET /s1a/announce", c.get("/s1a/announce", token)),
        ("POST /s2/check", c.post("/s2/check", s2, token)),
        (
            "POST /s3/fetch for a team item",
            c.post("/s3/fetch", s3, token),
        ),
    ];
    let mut wrong = Vec::new();
    for (name, r) in calls {
        let r = r.map_err(|e| call_failed(name, &e))?;
        if r.status != 200 {
            return Err(super::wire::fail(
                format!("{name} answers 200"),
                format!("status {}", r.status),
            ));
        }
        if !labelled_json(&r) {
            wrong.push(format!("{name} -> 200 content-type {:?}", labels(&r)));
        }
    }
    none_wrong(
        "every 200 of S1, S1a, S2 and S3 labelled content-type: application/json",
        &wrong,
    )
}

fn every_error_is_json(ctx: &mut Ctx<'_>) -> Outcome {
    let answers = provoked(ctx)?;
    let errors: Vec<&(String, Response)> = answers
        .iter()
        .filter(|(_, r)| !(200..300).contains(&r.status))
        .collect();
    // The absence of a wrong label means something only if errors came.
    if errors.is_empty() {
        return Err(super::wire::fail(
            "at least one of the provoked calls answers non-2xx",
            "every one answered 2xx",
        ));
    }
    let mut wrong = Vec::new();
    for (name, r) in errors {
        if !labelled_json(r) {
            wrong.push(format!(
                "{name} -> {} content-type {:?}",
                r.status,
                labels(r)
            ));
        }
        let problems = crate::schema::violations("error", &r.body);
        if !problems.is_empty() {
            wrong.push(format!(
                "{name} -> {} body not an error.schema.json: {}",
                r.status,
                problems.join(", ")
            ));
        }
    }
    none_wrong(
        "every non-2xx answer labelled content-type: application/json, its body an error.schema.json object",
        &wrong,
    )
}

/// The transport cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
    case!(
        "transport/every-200-is-json",
        Should,
        "contract common rules (transport)",
        Nothing,
        "Every 200 of S1, S1a, S2 and S3 (a team item's body included) is labelled content-type: application/json, never the document's own media type.",
        every_200_is_json
    ),
    case!(
        "transport/every-error-is-json",
        Should,
        "contract common rules (transport, errors)",
        Nothing,
        "Every non-2xx answer (401 without a token, 404 from S3, 400 for an unknown S3 field or 257 S2 pairs, 410 for a cursor or page token never issued) is labelled content-type: application/json and its body matches error.schema.json.",
        every_error_is_json
    ),
];
