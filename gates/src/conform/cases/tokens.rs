//! Tokens (§6.2): every call refused without a token or with a near miss, the 401 body, consumers' cursors isolated, and both tokens accepted during a rotation.

use serde_json::json;

use super::wire::{Outcome, body_text, call_failed, fail, feed_all, none_wrong, s2_body};
use crate::conform::client::{Auth, Response, encode_query};
use crate::conform::{ConformCase, Ctx, NotPassed};

fn every_call(ctx: &Ctx<'_>, auth: Auth<'_>) -> Result<Vec<(String, Response)>, NotPassed> {
    let m = ctx.manifest;
    let t = m.item("team");
    let a = m.person("member_a");
    let s2 = s2_body(
        &m.keys_on,
        m.subject_value(a, &m.keys_on),
        &[(&t.item_id, t.current())],
    );
    let s3 =
        serde_json::to_vec(&json!({"item_id": t.item_id, "revision": t.current()})).expect("JSON");
    let c = ctx.client;
    let calls = [
        ("GET /s1/feed", c.get("/s1/feed", auth)),
        ("GET /s1a/announce", c.get("/s1a/announce", auth)),
        ("POST /s2/check", c.post("/s2/check", s2, auth)),
        ("POST /s3/fetch", c.post("/s3/fetch", s3, auth)),
    ];
    calls
        .into_iter()
        .map(|(name, r)| {
            r.map(|r| (name.to_owned(), r))
                .map_err(|e| call_failed(name, &e))
        })
        .collect()
}

/// [`every_call`], plus an S1 read from a cursor and an S1a continuation
/// page, each with a token-shaped value the server never issued: a
/// refusal comes before anything a parameter could decide (§6.2).
fn every_call_and_continuation(
    ctx: &Ctx<'_>,
    auth: Auth<'_>,
) -> Result<Vec<(String, Response)>, NotPassed> {
    let mut calls = every_call(ctx, auth)?;
    let c = ctx.client;
    for (name, path) in [
        ("GET /s1/feed?cursor=", "/s1/feed?cursor=conform-cursor"),
        ("GET /s1a/announce?page=", "/s1a/announce?page=conform-page"),
    ] {
        let r = c.get(path, auth).map_err(|e| call_failed(name, &e))?;
        calls.push((name.to_owned(), r));
    }
    Ok(calls)
}

/// Tokens nobody was issued, each one step from `token`: a suffix, the
/// last byte changed, the last byte dropped, and (if it has letters) the
/// letters' case flipped.
fn near_tokens(token: &str) -> Vec<(&'static str, String)> {
    let mut out = vec![("with a suffix", format!("{token}-not-issued"))];
    if let Some(last) = token.chars().last() {
        let swapped = if last == 'x' { 'y' } else { 'x' };
        let stem = &token[..token.len() - last.len_utf8()];
        out.push((
            "with its last character changed",
            format!("{stem}{swapped}"),
        ));
        if !stem.is_empty() {
            out.push(("without its last character", stem.to_owned()));
        }
    }
    let flipped: String = token
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    if flipped != token {
        out.push(("in the other letter case", flipped));
    }
    out
}

fn refused(ctx: &Ctx<'_>, auth: Auth<'_>, what: &str) -> Outcome {
    let wrong: Vec<String> = every_call_and_continuation(ctx, auth)?
        .into_iter()
        .filter(|(_, r)| r.status != 401)
        .map(|(name, r)| format!("{name} -> {}", r.status))
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail(format!("401 on every call {what}"), wrong.join("; ")))
    }
}

fn missing_token(ctx: &mut Ctx<'_>) -> Outcome {
    refused(ctx, Auth::Missing, "without a token")
}

fn wrong_token(ctx: &mut Ctx<'_>) -> Outcome {
    for (how, wrong) in near_tokens(ctx.token) {
        refused(
            ctx,
            Auth::Bearer(&wrong),
            &format!("with a token nobody was issued: the real one {how}"),
        )?;
    }
    Ok(())
}

fn error_body_401(ctx: &mut Ctx<'_>) -> Outcome {
    let not_issued = format!("{}-not-issued", ctx.token);
    let wrong: Vec<String> = every_call_and_continuation(ctx, Auth::Bearer(&not_issued))?
        .into_iter()
        .filter(|(_, r)| r.body.as_ref() != br#"{"error":"unauthorized"}"#)
        .map(|(name, r)| format!("{name} -> {}", body_text(&r)))
        .collect();
    none_wrong(r#"{"error":"unauthorized"} on every refused call"#, &wrong)
}

fn cursors_isolated(ctx: &mut Ctx<'_>) -> Outcome {
    let second = ctx
        .second_token
        .ok_or_else(|| NotPassed::Skip("needs --second-token".into()))?;
    let (rows_a, cursor_a) = feed_all(ctx, ctx.token, None)?;
    let (rows_b, _) = feed_all(ctx, second, None)?;
    if rows_a.is_empty() || rows_a != rows_b {
        return Err(fail(
            "the second consumer reads the same rows from the start after the first read to the head",
            format!(
                "{} rows for the first, {} for the second",
                rows_a.len(),
                rows_b.len()
            ),
        ));
    }
    let r = ctx
        .client
        .get(
            &format!("/s1/feed?cursor={}", encode_query(&cursor_a)),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("GET /s1/feed", &e))?;
    if r.status != 200 {
        return Err(fail(
            "the first consumer's cursor still valid after the second consumer's reads",
            format!("status {}", r.status),
        ));
    }
    Ok(())
}

fn rotation_both_accepted(ctx: &mut Ctx<'_>) -> Outcome {
    let new = ctx
        .control("rotate-begin", &[])?
        .ok_or_else(|| fail("rotate-begin prints the new token", "it printed nothing"))?;
    for (phase, token) in [
        ("1, old token", ctx.token),
        ("1, new token", new.as_str()),
        ("2, new token", new.as_str()),
        ("2, old token", ctx.token),
    ] {
        let wrong: Vec<String> = every_call(ctx, Auth::Bearer(token))?
            .into_iter()
            .filter(|(_, r)| r.status != 200)
            .map(|(name, r)| format!("{name} -> {}", r.status))
            .collect();
        if !wrong.is_empty() {
            return Err(fail(
                format!("200 on every call in rotation phase {phase}"),
                wrong.join("; "),
            ));
        }
    }
    Ok(())
}

/// The tokens cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
    case!(
        "tokens/missing-refused",
        Must,
        "§6.2",
        Nothing,
        "Every call without a bearer token is refused with 401, S1 from a cursor and S1a continuation pages included.",
        missing_token
    ),
    case!(
        "tokens/wrong-refused",
        Must,
        "§6.2",
        Nothing,
        "Every call with a token nobody was issued is refused with 401: the real token with a suffix, with its last character changed or dropped, and in the other letter case.",
        wrong_token
    ),
    case!(
        "tokens/401-error-body",
        Should,
        "§6.2, contract errors",
        Nothing,
        "A refused call's body is exactly {\"error\":\"unauthorized\"}.",
        error_body_401
    ),
    case!(
        "tokens/cursors-isolated",
        Must,
        "§6.2, gate 13",
        SecondToken,
        "Two consumers' feeds are isolated: one reading to the head neither consumes nor invalidates the other's.",
        cursors_isolated
    ),
    case!(
        "tokens/rotation-both-accepted",
        Must,
        "§6.2 (rotation phases 1 and 2)",
        Control,
        "While a rotation has added a second token, old and new are both accepted on every call.",
        rotation_both_accepted
    ),
];
