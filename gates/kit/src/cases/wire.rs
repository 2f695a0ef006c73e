//! What several sections' cases share: failures that list every wrong answer, S2 calls and their parsing, byte comparisons of NOT_VISIBLE, feed walks, announce walks, S3 fetches, and schema checks over every page.
//!
//! Nothing here is a case: each section's file holds its cases and its
//! table, and [`super::all`] concatenates the tables.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::{HEADERS_NEVER_COMPARED, NEVER_ISSUED_REVISION, PAGES_MAX};
use crate::Failure;
use crate::client::{Auth, Response, encode_query};
use crate::{Ctx, NotPassed};

pub(super) type Outcome = Result<(), NotPassed>;

/// The manifest's items that are never team-visible: custody (§4.1) keeps
/// every one of them out of S1, S1a and S3, and S2 answers NOT_VISIBLE.
pub(super) const NEVER_TEAM_VISIBLE: [&str; 5] =
    ["private", "granted", "guest_only", "link_shared", "deleted"];

/// One pair a case asks about: what it is (for the failure), the item id
/// and the revision.
pub(super) type Ask = (String, String, String);

/// Each never-team-visible item ([`NEVER_TEAM_VISIBLE`]) at its current
/// revision.
pub(super) fn never_team_visible(m: &crate::Manifest) -> Vec<Ask> {
    NEVER_TEAM_VISIBLE
        .iter()
        .map(|k| {
            let i = m.item(k);
            ((*k).to_owned(), i.item_id.clone(), i.current().to_owned())
        })
        .collect()
}

/// The manifest's id that has no row at the sibling.
pub(super) fn no_row(m: &crate::Manifest) -> Ask {
    (
        "no_row".into(),
        m.no_row.item_id.clone(),
        m.no_row.revision.clone(),
    )
}

/// The team item at a revision its sibling never issued.
pub(super) fn never_issued(m: &crate::Manifest) -> Ask {
    (
        "team at a revision never issued".into(),
        m.item("team").item_id.clone(),
        NEVER_ISSUED_REVISION.into(),
    )
}

pub(super) fn fail(expected: impl Into<String>, actual: impl Into<String>) -> NotPassed {
    NotPassed::Fail(Failure::new(expected, actual))
}

/// `Ok` when nothing went wrong; else a failure expecting `expected` and
/// listing every wrong answer.
pub(super) fn none_wrong(expected: impl Into<String>, wrong: &[String]) -> Outcome {
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail(expected, wrong.join("; ")))
    }
}

pub(super) fn call_failed(what: &str, e: &crate::client::ClientError) -> NotPassed {
    fail(format!("{what} answers"), e.to_string())
}

pub(super) fn body_text(r: &Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

pub(super) fn s2_body(kind: &str, value: &str, pairs: &[(&str, &str)]) -> Vec<u8> {
    let pairs: Vec<Value> = pairs
        .iter()
        .map(|(i, r)| json!({"item_id": i, "revision": r}))
        .collect();
    serde_json::to_vec(&json!({"subject": {"kind": kind, "value": value}, "pairs": pairs}))
        .expect("JSON serialises")
}

pub(super) fn post_s2(
    ctx: &Ctx<'_>,
    kind: &str,
    value: &str,
    pairs: &[(&str, &str)],
) -> Result<Response, NotPassed> {
    ctx.client
        .post(
            "/s2/check",
            s2_body(kind, value, pairs),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("POST /s2/check", &e))
}

/// The parsed S2 answer: echoed kind and (item, revision) → every value given.
pub(super) struct S2Answer {
    pub(super) kind: String,
    pub(super) results: BTreeMap<(String, String), Vec<String>>,
    pub(super) count: usize,
}

pub(super) fn parse_s2(r: &Response) -> Result<S2Answer, NotPassed> {
    if r.status != 200 {
        return Err(fail(
            "200 with an s2-response body",
            format!("status {} body {}", r.status, body_text(r)),
        ));
    }
    let v: Value = serde_json::from_slice(&r.body).map_err(|_| {
        fail(
            "an s2-response JSON body",
            format!("not JSON: {}", body_text(r)),
        )
    })?;
    let kind = v["subject_kind"].as_str().unwrap_or("").to_owned();
    let arr = v["results"]
        .as_array()
        .ok_or_else(|| fail("a results array", body_text(r)))?;
    let mut results: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for x in arr {
        let key = (
            x["item_id"].as_str().unwrap_or("").to_owned(),
            x["revision"].as_str().unwrap_or("").to_owned(),
        );
        results
            .entry(key)
            .or_default()
            .push(x["result"].as_str().unwrap_or("<not a string>").to_owned());
    }
    Ok(S2Answer {
        kind,
        results,
        count: arr.len(),
    })
}

/// Asks S2 as `person` in the keyed kind; one value per pair, in order.
pub(super) fn values(
    ctx: &Ctx<'_>,
    person: &str,
    pairs: &[(&str, &str)],
) -> Result<Vec<String>, NotPassed> {
    let m = ctx.manifest;
    let p = m.person(person);
    let r = post_s2(ctx, &m.keys_on, m.subject_value(p, &m.keys_on), pairs)?;
    let a = parse_s2(&r)?;
    let mut out = Vec::new();
    for (i, rev) in pairs {
        match a
            .results
            .get(&((*i).to_owned(), (*rev).to_owned()))
            .map(Vec::as_slice)
        {
            Some([one]) => out.push(one.clone()),
            other => {
                return Err(fail(
                    format!("exactly one result for ({i}, {rev})"),
                    format!("{other:?}"),
                ));
            }
        }
    }
    Ok(out)
}

pub(super) fn expect_value(
    ctx: &Ctx<'_>,
    person: &str,
    item: &str,
    rev: &str,
    want: &str,
) -> Outcome {
    let got = values(ctx, person, &[(item, rev)])?;
    if got[0] == want {
        Ok(())
    } else {
        Err(fail(
            format!("{want} for {person} on ({item}, {rev})"),
            got[0].clone(),
        ))
    }
}

/// The raw single-pair NOT_VISIBLE body with this pair's id and revision
/// replaced by placeholders, so bodies for different ids compare byte for byte.
pub(super) fn normalised_s2(
    ctx: &Ctx<'_>,
    person: &str,
    item: &str,
    rev: &str,
) -> Result<(String, Vec<u8>), NotPassed> {
    let m = ctx.manifest;
    let p = m.person(person);
    let r = post_s2(
        ctx,
        &m.keys_on,
        m.subject_value(p, &m.keys_on),
        &[(item, rev)],
    )?;
    let a = parse_s2(&r)?;
    let value = a
        .results
        .get(&(item.to_owned(), rev.to_owned()))
        .and_then(|v| v.first().cloned())
        .unwrap_or_else(|| "<no result>".into());
    let quote = |s: &str| serde_json::to_string(s).expect("a string serialises");
    let text = String::from_utf8_lossy(&r.body)
        .replace(&quote(item), "\"<ITEM>\"")
        .replace(&quote(rev), "\"<REVISION>\"");
    let mut out = stable_headers(&r, &volatile_s2_headers(ctx)?);
    out.push_str(&text);
    Ok((value, out.into_bytes()))
}

/// The headers of `r` that a byte comparison holds: every one but
/// [`HEADERS_NEVER_COMPARED`] and `volatile`, in the order received, as
/// `name: value` lines and a blank line.
pub(super) fn stable_headers(r: &Response, volatile: &BTreeSet<String>) -> String {
    let mut out = String::new();
    for (k, v) in &r.headers {
        if !HEADERS_NEVER_COMPARED.contains(&k.as_str()) && !volatile.contains(k) {
            out.push_str(&format!("{k}: {v}\n"));
        }
    }
    out.push('\n');
    out
}

/// Headers whose value differs between two identical S2 calls (a request
/// id, say): they depend on the request, not on the item's state, so a
/// byte comparison leaves them out.
pub(super) fn volatile_s2_headers(ctx: &Ctx<'_>) -> Result<BTreeSet<String>, NotPassed> {
    let m = ctx.manifest;
    let a = m.person("member_a");
    let pair = [(m.no_row.item_id.as_str(), m.no_row.revision.as_str())];
    let one = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pair)?;
    let two = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pair)?;
    Ok(volatile_between(&one, &two))
}

pub(super) fn volatile_between(one: &Response, two: &Response) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for (k, _) in one.headers.iter().chain(&two.headers) {
        let a: Vec<&String> = one
            .headers
            .iter()
            .filter(|(n, _)| n == k)
            .map(|(_, v)| v)
            .collect();
        let b: Vec<&String> = two
            .headers
            .iter()
            .filter(|(n, _)| n == k)
            .map(|(_, v)| v)
            .collect();
        if a != b {
            names.insert(k.clone());
        }
    }
    names
}

/// Follows S1 from `cursor` to the head: every row and the last cursor.
pub(super) fn feed_all(
    ctx: &Ctx<'_>,
    token: &str,
    cursor: Option<&str>,
) -> Result<(Vec<Value>, String), NotPassed> {
    let mut rows = Vec::new();
    let mut cursor = cursor.map(str::to_owned);
    for _ in 0..PAGES_MAX {
        let path = match &cursor {
            Some(c) => format!("/s1/feed?cursor={}", encode_query(c)),
            None => "/s1/feed".to_owned(),
        };
        let r = ctx
            .client
            .get(&path, Auth::Bearer(token))
            .map_err(|e| call_failed("GET /s1/feed", &e))?;
        if r.status != 200 {
            return Err(fail(
                "GET /s1/feed answers 200",
                format!("status {} body {}", r.status, body_text(&r)),
            ));
        }
        let v: Value = serde_json::from_slice(&r.body)
            .map_err(|_| fail("an s1-response JSON body", body_text(&r)))?;
        rows.extend(v["rows"].as_array().cloned().unwrap_or_default());
        let next = v["cursor"]
            .as_str()
            .ok_or_else(|| fail("a cursor in every S1 page", body_text(&r)))?
            .to_owned();
        let more = v["more"].as_bool().unwrap_or(false);
        cursor = Some(next);
        if !more {
            return Ok((rows, cursor.unwrap_or_default()));
        }
    }
    Err(fail(
        format!("the feed ends within {PAGES_MAX} pages"),
        "it did not",
    ))
}

pub(super) fn s3(ctx: &Ctx<'_>, body: &Value) -> Result<Response, NotPassed> {
    ctx.client
        .post(
            "/s3/fetch",
            serde_json::to_vec(body).expect("JSON"),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("POST /s3/fetch", &e))
}

pub(super) fn schema_failure(what: &str, schema: &str, problems: &[String]) -> NotPassed {
    fail(
        format!("{what} valid against {schema}.schema.json"),
        problems.join("; "),
    )
}

/// Reads every page of a paged call from its first, validating each
/// against `schema`: `next` gives the next page's path from a page, or
/// `None` on the last one.
pub(super) fn pages_match_schema(
    ctx: &Ctx<'_>,
    first: &str,
    schema: &str,
    what: &str,
    next: fn(&Value) -> Option<String>,
) -> Outcome {
    let mut path = first.to_owned();
    for n in 0..PAGES_MAX {
        let r = ctx
            .client
            .get(&path, Auth::Bearer(ctx.token))
            .map_err(|e| call_failed(&format!("GET {first}"), &e))?;
        if r.status != 200 {
            return Err(fail(
                format!("GET {first} answers 200"),
                format!("status {}", r.status),
            ));
        }
        let problems = crate::schema::violations(schema, &r.body);
        if !problems.is_empty() {
            return Err(schema_failure(
                &format!("{what} page {n}"),
                schema,
                &problems,
            ));
        }
        let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        match next(&v) {
            Some(p) => path = p,
            None => return Ok(()),
        }
    }
    Err(fail(
        format!("{what} ends within {PAGES_MAX} pages"),
        "it did not",
    ))
}

/// One announce page: its records and its `next_page` token, if any.
pub(super) fn announce_page(
    ctx: &Ctx<'_>,
    page: Option<&str>,
) -> Result<(Vec<Value>, Option<String>), NotPassed> {
    announce_page_as(ctx, ctx.token, page)
}

/// [`announce_page`] as the consumer holding `token`.
pub(super) fn announce_page_as(
    ctx: &Ctx<'_>,
    token: &str,
    page: Option<&str>,
) -> Result<(Vec<Value>, Option<String>), NotPassed> {
    let path = match page {
        Some(p) => format!("/s1a/announce?page={}", encode_query(p)),
        None => "/s1a/announce".to_owned(),
    };
    let r = ctx
        .client
        .get(&path, Auth::Bearer(token))
        .map_err(|e| call_failed("GET /s1a/announce", &e))?;
    if r.status != 200 {
        return Err(fail(
            "GET /s1a/announce answers 200",
            format!("status {} body {}", r.status, body_text(&r)),
        ));
    }
    let v: Value = serde_json::from_slice(&r.body)
        .map_err(|_| fail("an s1a-page JSON body", body_text(&r)))?;
    Ok((
        v["records"].as_array().cloned().unwrap_or_default(),
        v["next_page"].as_str().map(str::to_owned),
    ))
}

/// Reads the rest of an announce from `page` (the first page when
/// `None`): every page's records, in order, and every `next_page` token.
pub(super) fn announce_from(
    ctx: &Ctx<'_>,
    page: Option<String>,
) -> Result<(Vec<Vec<Value>>, Vec<String>), NotPassed> {
    announce_from_as(ctx, ctx.token, page)
}

/// [`announce_from`] as the consumer holding `token`.
pub(super) fn announce_from_as(
    ctx: &Ctx<'_>,
    token: &str,
    mut page: Option<String>,
) -> Result<(Vec<Vec<Value>>, Vec<String>), NotPassed> {
    let mut pages = Vec::new();
    let mut tokens = Vec::new();
    for _ in 0..PAGES_MAX {
        let (records, next) = announce_page_as(ctx, token, page.as_deref())?;
        pages.push(records);
        match next {
            Some(p) => {
                tokens.push(p.clone());
                page = Some(p);
            }
            None => return Ok((pages, tokens)),
        }
    }
    Err(fail(
        format!("the announce ends within {PAGES_MAX} pages"),
        "it did not",
    ))
}

/// Reads one whole announce: every page's records, in order.
pub(super) fn announce_all(ctx: &Ctx<'_>) -> Result<Vec<Vec<Value>>, NotPassed> {
    announce_from(ctx, None).map(|(pages, _)| pages)
}

/// The item records' (item_id, revision) pairs, in the order received.
pub(super) fn items_of<'a>(records: impl IntoIterator<Item = &'a Value>) -> Vec<(String, String)> {
    records
        .into_iter()
        .filter(|r| record_type(r) == "item")
        .map(|r| {
            (
                r["item_id"].as_str().unwrap_or("").to_owned(),
                r["revision"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// A record's `type`, or `<no type>`.
pub(super) fn record_type(r: &Value) -> &str {
    r["type"].as_str().unwrap_or("<no type>")
}
