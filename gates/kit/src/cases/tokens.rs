//! Tokens (§6.2): every call refused without a token or with a near miss (S3 before it looks the pair up), the 401 body, consumers' cursors and announces isolated (one consumer's reads never prune another's, one's announce never voids another's), the token checked before a body is read, both tokens accepted during a rotation and the old one refused once retired.

use serde_json::{Value, json};

use super::wire::{
    Outcome, announce_from_as, announce_page_as, body_text, call_failed, fail, feed_all, items_of,
    never_issued, never_team_visible, no_row, none_wrong, record_type, s2_body,
};
use crate::client::{Auth, Response, encode_query};
use crate::{ConformCase, Ctx, NotPassed};

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

/// Bodies a sibling refuses with 400 once a caller is authenticated: an
/// S2 batch over the cap, an S2 body that is not JSON, an S3 request with
/// a field the schema does not allow.
fn bad_bodies(ctx: &Ctx<'_>) -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let m = ctx.manifest;
    let t = m.item("team");
    let a = m.person("member_a");
    let pairs: Vec<(&str, &str)> = (0..=super::S2_PAIRS_PER_CALL_MAX)
        .map(|_| (t.item_id.as_str(), t.current()))
        .collect();
    vec![
        (
            "POST /s2/check with 257 pairs",
            "/s2/check",
            s2_body(&m.keys_on, m.subject_value(a, &m.keys_on), &pairs),
        ),
        (
            "POST /s2/check with a body that is not JSON",
            "/s2/check",
            b"conform: not json".to_vec(),
        ),
        (
            "POST /s3/fetch with a field the schema does not allow",
            "/s3/fetch",
            serde_json::to_vec(
                &json!({"item_id": t.item_id, "revision": t.current(), "conform_unknown_field": true}),
            )
            .expect("JSON serialises"),
        ),
    ]
}

fn refused_before_the_body(ctx: &mut Ctx<'_>) -> Outcome {
    let not_issued = format!("{}-not-issued", ctx.token);
    let mut wrong = Vec::new();
    for (how, auth) in [
        ("without a token", Auth::Missing),
        ("with a token nobody was issued", Auth::Bearer(&not_issued)),
    ] {
        for (name, path, body) in bad_bodies(ctx) {
            let r = ctx
                .client
                .post(path, body, auth)
                .map_err(|e| call_failed(name, &e))?;
            if r.status != 401 {
                wrong.push(format!("{name} {how} -> {}", r.status));
            }
        }
    }
    none_wrong(
        "401 for every S2 and S3 request without a valid token, whatever its body (over the cap, not JSON, an unknown field): the token is checked before the body is read",
        &wrong,
    )
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

fn s3_refused_before_lookup(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut asks = never_team_visible(m);
    asks.extend([no_row(m), never_issued(m)]);
    let not_issued = format!("{}-not-issued", ctx.token);
    let mut wrong = Vec::new();
    for (how, auth) in [
        ("without a token", Auth::Missing),
        ("with a token nobody was issued", Auth::Bearer(&not_issued)),
    ] {
        for (state, id, rev) in &asks {
            let body = serde_json::to_vec(&json!({"item_id": id, "revision": rev})).expect("JSON");
            let r = ctx
                .client
                .post("/s3/fetch", body, auth)
                .map_err(|e| call_failed("POST /s3/fetch", &e))?;
            if r.status != 401 {
                wrong.push(format!("{state} {how} -> {}", r.status));
            }
        }
    }
    none_wrong(
        "401 for every S3 request without a valid token, whatever the pair (non-team, no-row, never-issued): the token is checked before the pair is looked up",
        &wrong,
    )
}

fn reads_prune_nothing(ctx: &mut Ctx<'_>) -> Outcome {
    let second = ctx
        .second_token
        .ok_or_else(|| NotPassed::Skip("needs --second-token".into()))?;
    let t = ctx.manifest.item("team");
    let (_, first_cursor) = feed_all(ctx, ctx.token, None)?;
    let new = ctx
        .control("bump-revision", &[&t.item_id])?
        .ok_or_else(|| {
            fail(
                "bump-revision prints the new revision",
                "it printed nothing",
            )
        })?;
    let (_, second_head) = feed_all(ctx, second, None)?;
    feed_all(ctx, second, Some(&second_head))?;
    let r = ctx
        .client
        .get(
            &format!("/s1/feed?cursor={}", encode_query(&first_cursor)),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("GET /s1/feed", &e))?;
    if r.status != 200 {
        return Err(fail(
            "200 for the first consumer's older cursor after the second consumer read to the head and polled from it",
            format!("status {}", r.status),
        ));
    }
    let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    let rows = v["rows"].as_array().cloned().unwrap_or_default();
    if rows
        .iter()
        .any(|r| r["item_id"] == json!(t.item_id) && r["revision"] == json!(new))
    {
        Ok(())
    } else {
        Err(fail(
            format!(
                "the first consumer still reads the row for ({}, {new}) made before the second consumer's reads",
                t.item_id
            ),
            format!("{} rows, none for it", rows.len()),
        ))
    }
}

fn announces_isolated(ctx: &mut Ctx<'_>) -> Outcome {
    let second = ctx
        .second_token
        .ok_or_else(|| NotPassed::Skip("needs --second-token".into()))?;
    let (first, next) = announce_page_as(ctx, ctx.token, None)?;
    let Some(next) = next else {
        return Err(NotPassed::Skip(
            "the announce fits in one page, so no announce is in flight while another opens".into(),
        ));
    };
    // The second consumer opens and completes an announce of its own
    // while the first consumer's is in flight (§6.1: state per consumer).
    announce_from_as(ctx, second, None)?;
    let rest = match announce_from_as(ctx, ctx.token, Some(next)) {
        Ok((rest, _)) => rest,
        Err(NotPassed::Fail(f)) => {
            return Err(fail(
                "the first consumer's announce goes on to its close after the second consumer opened and completed one of its own",
                f.actual,
            ));
        }
        Err(other) => return Err(other),
    };
    let all: Vec<&Value> = first.iter().chain(rest.iter().flatten()).collect();
    let got = items_of(all.iter().copied());
    let counts: Vec<Option<u64>> = all
        .iter()
        .filter(|r| record_type(r) == "close")
        .map(|r| r["count"].as_u64())
        .collect();
    let mut wrong = Vec::new();
    for i in ctx.manifest.items.iter().filter(|i| i.team_visible()) {
        let n = got.iter().filter(|(id, _)| *id == i.item_id).count();
        if n != 1 {
            wrong.push(format!("{} announced {n} times", i.item_id));
        }
    }
    if counts != [u64::try_from(got.len()).ok()] {
        wrong.push(format!(
            "close counts {counts:?} for {} item records",
            got.len()
        ));
    }
    none_wrong(
        "the first consumer's announce, read across the second consumer's whole announce, still carries every team-visible item once and a close counting them (§6.1, gate 13)",
        &wrong,
    )
}

fn rotation_retired_refused(ctx: &mut Ctx<'_>) -> Outcome {
    let new = ctx
        .control("rotate-begin", &[])?
        .ok_or_else(|| fail("rotate-begin prints the new token", "it printed nothing"))?;
    ctx.control("rotate-retire", &[])?;
    let mut wrong: Vec<String> = every_call_and_continuation(ctx, Auth::Bearer(ctx.token))?
        .into_iter()
        .filter(|(_, r)| r.status != 401)
        .map(|(name, r)| format!("retired token: {name} -> {}", r.status))
        .collect();
    wrong.extend(
        every_call(ctx, Auth::Bearer(&new))?
            .into_iter()
            .filter(|(_, r)| r.status != 200)
            .map(|(name, r)| format!("new token: {name} -> {}", r.status)),
    );
    if let Some(second) = ctx.second_token {
        wrong.extend(
            every_call(ctx, Auth::Bearer(second))?
                .into_iter()
                .filter(|(_, r)| r.status != 200)
                .map(|(name, r)| format!("the other consumer's token: {name} -> {}", r.status)),
        );
    }
    none_wrong(
        "once rotation phase 3 retires the old token, 401 on every call with it, 200 with the new one and with the other consumer's (gate 13)",
        &wrong,
    )
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
        "tokens/refused-before-the-body-is-read",
        Must,
        "§6.2, contract common rules (authentication)",
        Nothing,
        "An S2 or S3 request without a token, or with one nobody was issued, answers 401 whatever its body (257 pairs, not JSON, an unknown field): the token is checked before the body is read, so an unauthenticated caller learns nothing of the validator.",
        refused_before_the_body
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
    case!(
        "tokens/s3-refused-before-lookup",
        Must,
        "§6.2, §6.1 (S3 404s, never 403s)",
        Nothing,
        "S3 without a token, or with one nobody was issued, answers 401 for every pair, non-team, no-row and never-issued ones included: the token is checked before the pair is looked up.",
        s3_refused_before_lookup
    ),
    case!(
        "tokens/other-consumer-reads-prune-nothing",
        Must,
        "§6.1 (cursor stored per consumer), §6.2, gate 13",
        Control,
        "A second consumer reading to the head and polling from it never prunes the first consumer's older cursor: it still answers 200 with the rows after it.",
        reads_prune_nothing
    ),
    case!(
        "tokens/announces-isolated",
        Must,
        "§6.1 (state per consumer), §6.2, gate 13",
        SecondToken,
        "A second consumer opening and completing an announce while the first consumer's is in flight leaves the first's going: its next pages answer 200, with every team-visible item once and a close counting them.",
        announces_isolated
    ),
    case!(
        "tokens/rotation-retired-token-refused",
        Must,
        "§6.2 (rotation phase 3), gate 13",
        Control,
        "Once rotation phase 3 retires the old token, every call with it is refused with 401; every call with the new one, and with the other consumer's token, answers 200.",
        rotation_retired_refused
    ),
];
