//! Every conformance case: stable ids grouped by section, level, requirement, spec section, and one body each (§4.1, §6.1, §6.2, GATES.md suite gates 2 and 3).
//!
//! Bodies compare raw response bytes where the contract fixes bytes
//! (suite gate 3) and parse leniently everywhere else, so that one broken
//! property fails the case that names it and no other. Failures carry ids,
//! revisions, statuses and values: never a title, a body or a token.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::client::{Auth, Response, encode_query};
use super::{ConformCase, Ctx, Level, Needs, NotPassed};
use crate::Failure;

/// Most S2 pairs one call may carry (`S2_PAIRS_PER_CALL_MAX`, §4.1).
pub const S2_PAIRS_PER_CALL_MAX: usize = 256;

/// Most S1 or S1a pages the kit follows before calling a feed endless.
pub const PAGES_MAX: usize = 1000;

/// The exactly four fields of an S1 row (gate 3, `s1-response.schema.json`).
pub const S1_ROW_FIELDS: [&str; 4] = ["gone", "item_id", "revision", "touched_at"];

/// A revision no sibling has issued for the team item, for S3's 404 case.
pub const NEVER_ISSUED_REVISION: &str = "conform-never-issued-revision";

/// The local part of an address (and the person ref) nobody at the sibling
/// holds: the stranger of `s2/stranger-not-visible`. The address takes
/// member_a's domain, so it looks like a colleague who is not on the roster
/// (§4.1, the grants join).
pub const STRANGER_LOCAL_PART: &str = "conform-not-on-the-roster";

/// New revisions `s1/pages-lose-no-row` makes, so that the feed after them
/// spans a page boundary of any sibling whose S1 page holds fewer rows
/// (the fake's holds 100). A count of revisions (§6.1, S1 paging).
pub const S1_PAGE_PROBE_BUMPS: usize = 150;

/// Response headers that may differ between two identical requests and are
/// left out of byte comparisons before the volatile ones are even measured
/// (suite gate 3: byte identity is of what depends on the item's state).
pub const HEADERS_NEVER_COMPARED: &[&str] = &["date", "content-length"];

type Outcome = Result<(), NotPassed>;

fn fail(expected: impl Into<String>, actual: impl Into<String>) -> NotPassed {
    NotPassed::Fail(Failure::new(expected, actual))
}

/// `Ok` when nothing went wrong; else a failure expecting `expected` and
/// listing every wrong answer.
fn none_wrong(expected: impl Into<String>, wrong: &[String]) -> Outcome {
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail(expected, wrong.join("; ")))
    }
}

fn call_failed(what: &str, e: &super::client::ClientError) -> NotPassed {
    fail(format!("{what} answers"), e.to_string())
}

fn body_text(r: &Response) -> String {
    String::from_utf8_lossy(&r.body).into_owned()
}

// ---- S2 helpers ----

fn s2_body(kind: &str, value: &str, pairs: &[(&str, &str)]) -> Vec<u8> {
    let pairs: Vec<Value> = pairs
        .iter()
        .map(|(i, r)| json!({"item_id": i, "revision": r}))
        .collect();
    serde_json::to_vec(&json!({"subject": {"kind": kind, "value": value}, "pairs": pairs}))
        .expect("JSON serialises")
}

fn post_s2(
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
struct S2Answer {
    kind: String,
    results: BTreeMap<(String, String), Vec<String>>,
    count: usize,
}

fn parse_s2(r: &Response) -> Result<S2Answer, NotPassed> {
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
fn values(ctx: &Ctx<'_>, person: &str, pairs: &[(&str, &str)]) -> Result<Vec<String>, NotPassed> {
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

fn expect_value(ctx: &Ctx<'_>, person: &str, item: &str, rev: &str, want: &str) -> Outcome {
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
fn normalised_s2(
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
fn stable_headers(r: &Response, volatile: &BTreeSet<String>) -> String {
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
fn volatile_s2_headers(ctx: &Ctx<'_>) -> Result<BTreeSet<String>, NotPassed> {
    let m = ctx.manifest;
    let a = m.person("member_a");
    let pair = [(m.no_row.item_id.as_str(), m.no_row.revision.as_str())];
    let one = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pair)?;
    let two = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pair)?;
    Ok(volatile_between(&one, &two))
}

fn volatile_between(one: &Response, two: &Response) -> BTreeSet<String> {
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

/// What `person` must be answered for `(item_id, rev)` by the manifest's
/// state: VISIBLE for a member on a team-visible item at its current
/// revision, STALE at an older one, NOT_VISIBLE for everything else,
/// whatever revision is asked (§4.1: custody and the grants join come
/// before the revision). `rev` must be in the manifest's log for a
/// team-visible item.
fn expected_value(
    m: &super::manifest::Manifest,
    person: &str,
    item_id: &str,
    rev: &str,
) -> &'static str {
    let p = m.person(person);
    let admitted = m.items.iter().find(|i| i.item_id == item_id).filter(|i| {
        i.team_visible()
            && p.role == super::manifest::Role::Member
            && !i.removed.iter().any(|r| r == person)
    });
    match admitted {
        None => "NOT_VISIBLE",
        Some(i) if i.current() == rev => "VISIBLE",
        Some(_) => "STALE",
    }
}

// ---- S1 / S1a helpers ----

/// Follows S1 from `cursor` to the head: every row and the last cursor.
fn feed_all(
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

/// Reads one whole announce: every page's records, in order.
fn announce_all(ctx: &Ctx<'_>) -> Result<Vec<Vec<Value>>, NotPassed> {
    let mut pages = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..PAGES_MAX {
        let path = match &page {
            Some(p) => format!("/s1a/announce?page={}", encode_query(p)),
            None => "/s1a/announce".to_owned(),
        };
        let r = ctx
            .client
            .get(&path, Auth::Bearer(ctx.token))
            .map_err(|e| call_failed("GET /s1a/announce", &e))?;
        if r.status != 200 {
            return Err(fail(
                "GET /s1a/announce answers 200",
                format!("status {} body {}", r.status, body_text(&r)),
            ));
        }
        let v: Value = serde_json::from_slice(&r.body)
            .map_err(|_| fail("an s1a-page JSON body", body_text(&r)))?;
        pages.push(v["records"].as_array().cloned().unwrap_or_default());
        match v["next_page"].as_str() {
            Some(p) => page = Some(p.to_owned()),
            None => return Ok(pages),
        }
    }
    Err(fail(
        format!("the announce ends within {PAGES_MAX} pages"),
        "it did not",
    ))
}

fn record_type(r: &Value) -> &str {
    r["type"].as_str().unwrap_or("<no type>")
}

// ---- suite gate 2 ----

fn kind_on_the_wire(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let team = m.item("team");
    let a = m.person("member_a");
    let r = post_s2(
        ctx,
        &m.keys_on,
        m.subject_value(a, &m.keys_on),
        &[(&team.item_id, team.current())],
    )?;
    let ans = parse_s2(&r)?;
    if ans.kind != m.keys_on {
        return Err(fail(
            format!("subject_kind {:?} echoed", m.keys_on),
            format!("{:?}", ans.kind),
        ));
    }
    let got = ans
        .results
        .get(&(team.item_id.clone(), team.current().to_owned()));
    if got.map(Vec::as_slice) != Some(&["VISIBLE".to_owned()][..]) {
        return Err(fail(
            "VISIBLE for member_a on the team item, asked by the keyed kind",
            format!("{got:?}"),
        ));
    }
    Ok(())
}

fn other_kind_unknown(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let other = m.other_kind();
    let a = m.person("member_a");
    let (team, hist, private) = (m.item("team"), m.item("team_history"), m.item("private"));
    let pairs = [
        (team.item_id.as_str(), team.current()),
        (hist.item_id.as_str(), hist.current()),
        (private.item_id.as_str(), private.current()),
        (m.no_row.item_id.as_str(), m.no_row.revision.as_str()),
    ];
    let r = post_s2(ctx, other, m.subject_value(a, other), &pairs)?;
    let ans = parse_s2(&r)?;
    let mut wrong = Vec::new();
    for (i, rev) in pairs {
        let got = ans.results.get(&(i.to_owned(), rev.to_owned()));
        if got.map(Vec::as_slice) != Some(&["UNKNOWN".to_owned()][..]) {
            wrong.push(format!("({i}, {rev}) -> {got:?}"));
        }
    }
    if wrong.is_empty() && ans.count == pairs.len() {
        Ok(())
    } else {
        Err(fail(
            format!(
                "UNKNOWN for every pair when the subject is a {other}, which the server does not key on"
            ),
            format!("{} results; {}", ans.count, wrong.join("; ")),
        ))
    }
}

// ---- suite gate 3 ----

fn not_visible_byte_identical(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut states: Vec<(&str, String, String)> =
        ["private", "granted", "guest_only", "link_shared", "deleted"]
            .iter()
            .map(|k| {
                let i = m.item(k);
                (*k, i.item_id.clone(), i.current().to_owned())
            })
            .collect();
    states.push((
        "no_row",
        m.no_row.item_id.clone(),
        m.no_row.revision.clone(),
    ));
    let mut first: Option<(&str, Vec<u8>)> = None;
    for (state, id, rev) in &states {
        let (value, bytes) = normalised_s2(ctx, "member_a", id, rev)?;
        if value != "NOT_VISIBLE" {
            return Err(fail(
                format!("NOT_VISIBLE for the {state} item ({id}, {rev})"),
                value,
            ));
        }
        match &first {
            None => first = Some((state, bytes)),
            Some((s0, b0)) if *b0 != bytes => {
                return Err(fail(
                    format!(
                        "the {state} item's NOT_VISIBLE body byte-identical to the {s0} item's (ids replaced)"
                    ),
                    format!(
                        "{s0}: {} | {state}: {}",
                        String::from_utf8_lossy(b0),
                        String::from_utf8_lossy(&bytes)
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

fn downgrade_with_grant_intact(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let item = m.item("team_to_downgrade");
    let a = m.person("member_a");
    expect_value(ctx, "member_a", &item.item_id, item.current(), "VISIBLE").map_err(
        |e| match e {
            NotPassed::Fail(f) => fail(format!("precondition: {}", f.expected), f.actual),
            s => s,
        },
    )?;
    ctx.control("downgrade-to-granted", &[&item.item_id, &a.address])?;
    let (value, bytes) = normalised_s2(ctx, "member_a", &item.item_id, item.current())?;
    if value != "NOT_VISIBLE" {
        return Err(fail(
            "NOT_VISIBLE for member_a after team → granted to member_a (custody intersection)",
            value,
        ));
    }
    let private = m.item("private");
    let (_, reference) = normalised_s2(ctx, "member_a", &private.item_id, private.current())?;
    if reference != bytes {
        return Err(fail(
            "the downgraded item's NOT_VISIBLE body byte-identical to the private item's",
            format!(
                "{} | {}",
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&reference)
            ),
        ));
    }
    Ok(())
}

// ---- S2 values ----

fn stale_for_older(ctx: &mut Ctx<'_>) -> Outcome {
    let h = ctx.manifest.item("team_history");
    let older: Vec<&str> = h.revisions[..h.revisions.len() - 1]
        .iter()
        .map(String::as_str)
        .collect();
    if older.is_empty() {
        return Err(fail(
            "team_history has an older revision in the manifest",
            "it has one revision",
        ));
    }
    let mut pairs: Vec<(&str, &str)> = older.iter().map(|r| (h.item_id.as_str(), *r)).collect();
    pairs.push((&h.item_id, h.current()));
    let got = values(ctx, "member_a", &pairs)?;
    let mut want = vec!["STALE".to_owned(); older.len()];
    want.push("VISIBLE".into());
    if got == want {
        Ok(())
    } else {
        Err(fail(
            format!("{want:?} for revisions {pairs:?}"),
            format!("{got:?}"),
        ))
    }
}

fn stale_after_bump(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    expect_value(ctx, "member_a", &t.item_id, t.current(), "VISIBLE")?;
    let new = ctx
        .control("bump-revision", &[&t.item_id])?
        .ok_or_else(|| {
            fail(
                "bump-revision prints the new revision",
                "it printed nothing",
            )
        })?;
    let got = values(
        ctx,
        "member_a",
        &[(&t.item_id, t.current()), (&t.item_id, &new)],
    )?;
    if got == ["STALE", "VISIBLE"] {
        Ok(())
    } else {
        Err(fail(
            "STALE for the old revision, VISIBLE for the bumped one",
            format!("{got:?}"),
        ))
    }
}

fn ahead_after_partial_restore(ctx: &mut Ctx<'_>) -> Outcome {
    let h = ctx.manifest.item("team_history");
    let n = h.revisions.len();
    if n < 2 {
        return Err(fail(
            "team_history has two revisions or more",
            format!("{n}"),
        ));
    }
    let (back_to, lost) = (h.revisions[n - 2].as_str(), h.current());
    expect_value(ctx, "member_a", &h.item_id, lost, "VISIBLE")?;
    ctx.control("partial-restore", &[&h.item_id, back_to])?;
    let got = values(
        ctx,
        "member_a",
        &[(&h.item_id, lost), (&h.item_id, back_to)],
    )?;
    if got == ["AHEAD", "VISIBLE"] {
        Ok(())
    } else {
        Err(fail(
            format!("AHEAD for {lost} (beyond the restored log), VISIBLE for {back_to}"),
            format!("{got:?}"),
        ))
    }
}

fn no_row_not_ahead(ctx: &mut Ctx<'_>) -> Outcome {
    let nr = &ctx.manifest.no_row;
    expect_value(ctx, "member_a", &nr.item_id, &nr.revision, "NOT_VISIBLE")
}

fn two_people(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let minus = m.item("team_minus_b");
    let team = m.item("team");
    let a = values(ctx, "member_a", &[(&minus.item_id, minus.current())])?;
    let b = values(
        ctx,
        "member_b",
        &[
            (&minus.item_id, minus.current()),
            (&team.item_id, team.current()),
        ],
    )?;
    let g = values(ctx, "guest", &[(&team.item_id, team.current())])?;
    let got = [a[0].as_str(), b[0].as_str(), b[1].as_str(), g[0].as_str()];
    let want = ["VISIBLE", "NOT_VISIBLE", "VISIBLE", "NOT_VISIBLE"];
    if got == want {
        Ok(())
    } else {
        Err(fail(
            format!("member_a/member_b on team_minus_b, member_b/guest on team: {want:?}"),
            format!("{got:?}"),
        ))
    }
}

fn batch_pairs(ctx: &Ctx<'_>, n: usize) -> Vec<(String, String)> {
    let m = ctx.manifest;
    let mut pairs: Vec<(String, String)> = m
        .items
        .iter()
        .flat_map(|i| i.revisions.iter().map(|r| (i.item_id.clone(), r.clone())))
        .collect();
    let mut k = 0;
    while pairs.len() < n {
        k += 1;
        pairs.push((
            format!("{}-{k}", m.no_row.item_id),
            m.no_row.revision.clone(),
        ));
    }
    pairs.truncate(n);
    pairs
}

fn full_batch(ctx: &mut Ctx<'_>) -> Outcome {
    let owned = batch_pairs(ctx, S2_PAIRS_PER_CALL_MAX);
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(i, r)| (i.as_str(), r.as_str()))
        .collect();
    let m = ctx.manifest;
    let a = m.person("member_a");
    let r = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pairs)?;
    let ans = parse_s2(&r)?;
    let five = ["VISIBLE", "NOT_VISIBLE", "STALE", "AHEAD", "UNKNOWN"];
    let asked: BTreeSet<(String, String)> = owned.iter().cloned().collect();
    let missing = asked
        .iter()
        .filter(|p| !ans.results.contains_key(*p))
        .count();
    let twice = ans.results.values().filter(|v| v.len() > 1).count();
    let unasked = ans.results.keys().filter(|k| !asked.contains(*k)).count();
    let bad = ans
        .results
        .values()
        .flatten()
        .filter(|v| !five.contains(&v.as_str()))
        .count();
    let wrong: Vec<String> = ans
        .results
        .iter()
        .filter(|(_, v)| v.len() == 1)
        .filter_map(|((i, r), v)| {
            let want = expected_value(m, "member_a", i, r);
            (v[0] != want).then(|| format!("({i}, {r}) {} not {want}", v[0]))
        })
        .collect();
    if ans.count == S2_PAIRS_PER_CALL_MAX && missing + twice + unasked + bad == 0 {
        if wrong.is_empty() {
            return Ok(());
        }
        Err(fail(
            "every value in a full batch what the same pair asked alone is answered (custody, grants join, log)",
            wrong.join("; "),
        ))
    } else {
        Err(fail(
            format!("{S2_PAIRS_PER_CALL_MAX} results, one per pair, each one of the five values"),
            format!(
                "{} results; {missing} pairs unanswered, {twice} answered twice, {unasked} unasked, {bad} unknown values",
                ans.count
            ),
        ))
    }
}

fn over_limit_refused(ctx: &mut Ctx<'_>) -> Outcome {
    let owned = batch_pairs(ctx, S2_PAIRS_PER_CALL_MAX + 1);
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(i, r)| (i.as_str(), r.as_str()))
        .collect();
    let m = ctx.manifest;
    let a = m.person("member_a");
    let r = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pairs)?;
    if r.status == 400 {
        Ok(())
    } else {
        Err(fail(
            format!("400 for {} pairs", S2_PAIRS_PER_CALL_MAX + 1),
            format!("status {}", r.status),
        ))
    }
}

fn compact_schema_order(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let t = m.item("team");
    let a = m.person("member_a");
    let r = post_s2(
        ctx,
        &m.keys_on,
        m.subject_value(a, &m.keys_on),
        &[(&t.item_id, t.current())],
    )?;
    let want = format!(
        r#"{{"subject_kind":{},"results":[{{"item_id":{},"revision":{},"result":"VISIBLE"}}]}}"#,
        serde_json::to_string(&m.keys_on).expect("str"),
        serde_json::to_string(&t.item_id).expect("str"),
        serde_json::to_string(t.current()).expect("str"),
    );
    if r.body.as_ref() == want.as_bytes() {
        Ok(())
    } else {
        Err(fail(want, body_text(&r)))
    }
}

// ---- S3 ----

fn s3(ctx: &Ctx<'_>, body: &Value) -> Result<Response, NotPassed> {
    ctx.client
        .post(
            "/s3/fetch",
            serde_json::to_vec(body).expect("JSON"),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("POST /s3/fetch", &e))
}

fn s3_200(ctx: &mut Ctx<'_>) -> Outcome {
    let h = ctx.manifest.item("team_history");
    for rev in &h.revisions {
        let r = s3(ctx, &json!({"item_id": h.item_id, "revision": rev}))?;
        if r.status != 200 {
            return Err(fail(
                format!(
                    "200 for ({}, {rev}), team-visible and in its log",
                    h.item_id
                ),
                format!("status {}", r.status),
            ));
        }
        let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let keys: BTreeSet<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let want: BTreeSet<&str> = ["body", "item_id", "media_type", "revision", "title"].into();
        if keys != want || v["item_id"] != json!(h.item_id) || v["revision"] != json!(rev) {
            return Err(fail(
                format!("an s3-response echoing ({}, {rev})", h.item_id),
                format!(
                    "fields {keys:?}, item_id {}, revision {}",
                    v["item_id"], v["revision"]
                ),
            ));
        }
    }
    Ok(())
}

fn s3_404_never_403(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut asks: Vec<(String, String, String)> =
        ["private", "granted", "guest_only", "link_shared", "deleted"]
            .iter()
            .map(|k| {
                let i = m.item(k);
                ((*k).to_owned(), i.item_id.clone(), i.current().to_owned())
            })
            .collect();
    asks.push((
        "no_row".into(),
        m.no_row.item_id.clone(),
        m.no_row.revision.clone(),
    ));
    let t = m.item("team");
    asks.push((
        "team at a revision never issued".into(),
        t.item_id.clone(),
        NEVER_ISSUED_REVISION.into(),
    ));
    let mut wrong = Vec::new();
    for (state, id, rev) in &asks {
        let r = s3(ctx, &json!({"item_id": id, "revision": rev}))?;
        if r.status != 404 {
            wrong.push(format!("{state} ({id}, {rev}) -> {}", r.status));
        }
    }
    none_wrong("404 for every non-team state and unknown id", &wrong)
}

fn s3_person_field(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let g = m.item("granted");
    let a = m.person("member_a");
    let bodies = [
        json!({"item_id": g.item_id, "revision": g.current(), "subject": {"kind": m.keys_on, "value": m.subject_value(a, &m.keys_on)}}),
        json!({"item_id": g.item_id, "revision": g.current(), "person": a.address}),
        json!({"item_id": g.item_id, "revision": g.current(), "person_ref": a.person_ref}),
    ];
    for (n, b) in bodies.iter().enumerate() {
        let r = s3(ctx, b)?;
        if r.status == 200 {
            return Err(fail(
                "no 200 for the granted item, whatever person field the request adds",
                format!("200 with person field variant {}", n + 1),
            ));
        }
    }
    Ok(())
}

// ---- S1 ----

fn s1_four_fields(ctx: &mut Ctx<'_>) -> Outcome {
    let (rows, _) = feed_all(ctx, ctx.token, None)?;
    if rows.is_empty() {
        return Err(fail(
            "at least one row from the start of the feed (the seeded team items)",
            "no rows",
        ));
    }
    for (n, row) in rows.iter().enumerate() {
        let keys: Vec<&str> = row
            .as_object()
            .map(|o| {
                let mut k: Vec<&str> = o.keys().map(String::as_str).collect();
                k.sort_unstable();
                k
            })
            .unwrap_or_default();
        let typed = row["item_id"].is_string()
            && row["revision"].is_string()
            && row["gone"].is_boolean()
            && row["touched_at"].is_string();
        if keys != S1_ROW_FIELDS || !typed {
            return Err(fail(
                format!("every row exactly {S1_ROW_FIELDS:?}, typed string, string, bool, string"),
                format!("row {n} has fields {keys:?}"),
            ));
        }
    }
    Ok(())
}

fn s1_leaving_is_gone(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (down, del) = (m.item("team_to_downgrade"), m.item("team_to_delete"));
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    ctx.control(
        "downgrade-to-granted",
        &[&down.item_id, &m.person("member_a").address],
    )?;
    ctx.control("delete", &[&del.item_id])?;
    let (rows, _) = feed_all(ctx, ctx.token, Some(&head))?;
    let last = |id: &str| {
        rows.iter()
            .rev()
            .find(|r| r["item_id"] == json!(id))
            .cloned()
    };
    let (Some(d), Some(x)) = (last(&down.item_id), last(&del.item_id)) else {
        return Err(fail(
            "a row for the downgraded item and one for the deleted item",
            format!("{} rows after the cursor", rows.len()),
        ));
    };
    let keys = |r: &Value| {
        r.as_object()
            .map(|o| o.keys().cloned().collect::<BTreeSet<_>>())
            .unwrap_or_default()
    };
    if d["gone"] != json!(true) || x["gone"] != json!(true) || keys(&d) != keys(&x) {
        return Err(fail(
            "both rows gone: true, with the same fields (leaving team reads as deletion)",
            format!(
                "downgraded gone {} fields {:?}; deleted gone {} fields {:?}",
                d["gone"],
                keys(&d),
                x["gone"],
                keys(&x)
            ),
        ));
    }
    Ok(())
}

fn s1_rewound_cursor(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    let (_, c0) = feed_all(ctx, ctx.token, None)?;
    ctx.control("bump-revision", &[&t.item_id])?;
    let (_, c1) = feed_all(ctx, ctx.token, Some(&c0))?;
    ctx.control("whole-log-restore", &[])?;
    let r = ctx
        .client
        .get(
            &format!("/s1/feed?cursor={}", encode_query(&c1)),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("GET /s1/feed", &e))?;
    let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    if r.status == 410 && body == json!({"error": "reannounce_required"}) {
        Ok(())
    } else {
        Err(fail(
            "410 {\"error\":\"reannounce_required\"} for a cursor a whole-log restore rewound",
            format!("status {} body {}", r.status, body_text(&r)),
        ))
    }
}

// ---- S1a ----

fn s1a_open_first(ctx: &mut Ctx<'_>) -> Outcome {
    let pages = announce_all(ctx)?;
    let all: Vec<&Value> = pages.iter().flatten().collect();
    let opens = all.iter().filter(|r| record_type(r) == "open").count();
    let first = pages.first().and_then(|p| p.first()).map(record_type);
    if first == Some("open") && opens == 1 {
        Ok(())
    } else {
        Err(fail(
            "one open record, the first of the first page",
            format!("first {first:?}, {opens} opens"),
        ))
    }
}

fn s1a_every_item(ctx: &mut Ctx<'_>) -> Outcome {
    let pages = announce_all(ctx)?;
    let got: Vec<(String, String)> = pages
        .iter()
        .flatten()
        .filter(|r| record_type(r) == "item")
        .map(|r| {
            (
                r["item_id"].as_str().unwrap_or("").to_owned(),
                r["revision"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let mut sorted = got.clone();
    sorted.sort();
    let want: Vec<(String, String)> = {
        let mut w: Vec<_> = ctx
            .manifest
            .items
            .iter()
            .filter(|i| i.team_visible())
            .map(|i| (i.item_id.clone(), i.current().to_owned()))
            .collect();
        w.sort();
        w
    };
    if sorted == want {
        Ok(())
    } else {
        Err(fail(
            format!("one item record per team-visible item at its current revision: {want:?}"),
            format!("{sorted:?}"),
        ))
    }
}

fn s1a_close_count(ctx: &mut Ctx<'_>) -> Outcome {
    let pages = announce_all(ctx)?;
    let all: Vec<&Value> = pages.iter().flatten().collect();
    let items = all.iter().filter(|r| record_type(r) == "item").count();
    let closes: Vec<&&Value> = all.iter().filter(|r| record_type(r) == "close").collect();
    let last_is_close = all.last().is_some_and(|r| record_type(r) == "close");
    match closes.as_slice() {
        [c] if last_is_close && c["count"].as_u64() == u64::try_from(items).ok() => Ok(()),
        [c] => Err(fail(
            format!("one close record, last, count {items} (the item records received)"),
            format!(
                "count {}, last record is close: {last_is_close}",
                c["count"]
            ),
        )),
        other => Err(fail(
            "exactly one close record, the last",
            format!("{} close records", other.len()),
        )),
    }
}

fn s1a_cursor_in_close(ctx: &mut Ctx<'_>) -> Outcome {
    let pages = announce_all(ctx)?;
    let all: Vec<&Value> = pages.iter().flatten().collect();
    if let Some(r) = all
        .iter()
        .find(|r| record_type(r) != "close" && r.get("cursor").is_some())
    {
        return Err(fail(
            "a cursor only in the close record",
            format!("a {} record carries one", record_type(r)),
        ));
    }
    let cursor = all
        .iter()
        .find(|r| record_type(r) == "close")
        .and_then(|r| r["cursor"].as_str())
        .ok_or_else(|| {
            fail(
                "a close record carrying the new S1 cursor",
                "no close record with a cursor",
            )
        })?;
    let r = ctx
        .client
        .get(
            &format!("/s1/feed?cursor={}", encode_query(cursor)),
            Auth::Bearer(ctx.token),
        )
        .map_err(|e| call_failed("GET /s1/feed", &e))?;
    if r.status == 200 {
        Ok(())
    } else {
        Err(fail(
            "200 on S1 from the close record's cursor",
            format!("status {}", r.status),
        ))
    }
}

// ---- custody before revision, whoever asks ----

/// The NOT_VISIBLE bytes (headers and normalised body) of the no-row pair,
/// the reference every other NOT_VISIBLE is held to.
fn no_row_reference(ctx: &Ctx<'_>, person: &str) -> Result<Vec<u8>, NotPassed> {
    let nr = &ctx.manifest.no_row;
    let (value, bytes) = normalised_s2(ctx, person, &nr.item_id, &nr.revision)?;
    if value == "NOT_VISIBLE" {
        Ok(bytes)
    } else {
        Err(fail(
            format!("NOT_VISIBLE for {person} on the no-row id"),
            value,
        ))
    }
}

/// Asks each `(person, state, item, revision)` alone and requires
/// NOT_VISIBLE, byte-identical to that person's no-row answer.
fn all_not_visible_like_no_row(ctx: &Ctx<'_>, asks: &[(&str, String, String, String)]) -> Outcome {
    let mut wrong = Vec::new();
    let mut references: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for (person, state, id, rev) in asks {
        if !references.contains_key(person) {
            references.insert(person, no_row_reference(ctx, person)?);
        }
        let (value, bytes) = normalised_s2(ctx, person, id, rev)?;
        if value != "NOT_VISIBLE" {
            wrong.push(format!("{person} on {state} ({id}, {rev}) -> {value}"));
        } else if references.get(person) != Some(&bytes) {
            wrong.push(format!(
                "{person} on {state} ({id}, {rev}): NOT_VISIBLE with other bytes than the no-row id's"
            ));
        }
    }
    none_wrong(
        "NOT_VISIBLE, byte-identical to the no-row id's, whatever revision is asked",
        &wrong,
    )
}

fn custody_before_revision(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut asks: Vec<(&str, String, String, String)> = Vec::new();
    for key in ["private", "granted", "guest_only", "link_shared", "deleted"] {
        let i = m.item(key);
        let older = i.revisions[..i.revisions.len() - 1].iter().cloned();
        for rev in older.chain([NEVER_ISSUED_REVISION.to_owned()]) {
            asks.push(("member_a", key.to_owned(), i.item_id.clone(), rev));
        }
    }
    for (person, key) in [("guest", "team_history"), ("member_b", "team_minus_b")] {
        let i = m.item(key);
        for rev in i
            .revisions
            .iter()
            .cloned()
            .chain([NEVER_ISSUED_REVISION.to_owned()])
        {
            asks.push((person, key.to_owned(), i.item_id.clone(), rev));
        }
    }
    all_not_visible_like_no_row(ctx, &asks)
}

fn custody_whoever_asks(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut asks: Vec<(&str, String, String, String)> = Vec::new();
    for key in ["private", "link_shared", "guest_only", "granted", "deleted"] {
        let i = m.item(key);
        let mut askers: Vec<&str> = Vec::new();
        if let Some(owner) = &i.owner {
            askers.push(m.person(owner).key.as_str());
        }
        for g in &i.granted_to {
            askers.push(m.person(g).key.as_str());
        }
        askers.push("member_a");
        askers.sort_unstable();
        askers.dedup();
        for person in askers {
            asks.push((
                person,
                key.to_owned(),
                i.item_id.clone(),
                i.current().to_owned(),
            ));
        }
    }
    all_not_visible_like_no_row(ctx, &asks)
}

fn stranger_not_visible(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let a = m.person("member_a");
    let domain = a
        .address
        .rsplit_once('@')
        .map_or("example.invalid", |(_, d)| d);
    let stranger = match m.keys_on.as_str() {
        "address" => format!("{STRANGER_LOCAL_PART}@{domain}"),
        _ => STRANGER_LOCAL_PART.to_owned(),
    };
    let (team, nr) = (m.item("team"), &m.no_row);
    let pairs = [
        (team.item_id.as_str(), team.current()),
        (nr.item_id.as_str(), nr.revision.as_str()),
    ];
    let r = post_s2(ctx, &m.keys_on, &stranger, &pairs)?;
    let ans = parse_s2(&r)?;
    let got: Vec<Option<&[String]>> = pairs
        .iter()
        .map(|(i, rev)| {
            ans.results
                .get(&((*i).to_owned(), (*rev).to_owned()))
                .map(Vec::as_slice)
        })
        .collect();
    let nv = Some(&["NOT_VISIBLE".to_owned()][..]);
    if got.iter().all(|g| *g == nv) {
        Ok(())
    } else {
        Err(fail(
            "NOT_VISIBLE for someone the sibling does not hold, on the team item and the no-row id alike",
            format!("team {:?}, no-row {:?}", got[0], got[1]),
        ))
    }
}

fn results_in_request_order(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let a = m.person("member_a");
    let (nr, private, team, granted) = (
        &m.no_row,
        m.item("private"),
        m.item("team"),
        m.item("granted"),
    );
    let forward = [
        (nr.item_id.as_str(), nr.revision.as_str()),
        (private.item_id.as_str(), private.current()),
        (team.item_id.as_str(), team.current()),
        (granted.item_id.as_str(), granted.current()),
    ];
    let mut backward = forward;
    backward.reverse();
    for pairs in [&forward, &backward] {
        let r = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), pairs)?;
        let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let got: Vec<(String, String)> = v["results"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|x| {
                        (
                            x["item_id"].as_str().unwrap_or("").to_owned(),
                            x["revision"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let want: Vec<(String, String)> = pairs
            .iter()
            .map(|(i, r)| ((*i).to_owned(), (*r).to_owned()))
            .collect();
        if got != want {
            return Err(fail(
                format!("results in the order the pairs were asked: {want:?}"),
                format!("{got:?}"),
            ));
        }
    }
    Ok(())
}

// ---- the contract's schemas ----

fn schema_failure(what: &str, schema: &str, problems: &[String]) -> NotPassed {
    fail(
        format!("{what} valid against {schema}.schema.json"),
        problems.join("; "),
    )
}

/// Reads every page of a paged call from its first, validating each
/// against `schema`: `next` gives the next page's path from a page, or
/// `None` on the last one.
fn pages_match_schema(
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
        let problems = super::schema::violations(schema, &r.body);
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

fn s1_pages_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    pages_match_schema(ctx, "/s1/feed", "s1-response", "the S1 feed", |v| {
        (v["more"] == json!(true))
            .then(|| v["cursor"].as_str())
            .flatten()
            .map(|c| format!("/s1/feed?cursor={}", encode_query(c)))
    })
}

fn s1a_pages_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    pages_match_schema(ctx, "/s1a/announce", "s1a-page", "the S1a announce", |v| {
        v["next_page"]
            .as_str()
            .map(|p| format!("/s1a/announce?page={}", encode_query(p)))
    })
}

fn s2_s3_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    let owned = batch_pairs(ctx, 16);
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(i, r)| (i.as_str(), r.as_str()))
        .collect();
    let m = ctx.manifest;
    let a = m.person("member_a");
    let r = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pairs)?;
    let problems = super::schema::violations("s2-response", &r.body);
    if r.status != 200 || !problems.is_empty() {
        return Err(schema_failure(
            &format!("a 200 S2 answer (status {})", r.status),
            "s2-response",
            &problems,
        ));
    }
    let t = m.item("team");
    let ok = s3(ctx, &json!({"item_id": t.item_id, "revision": t.current()}))?;
    let problems = super::schema::violations("s3-response", &ok.body);
    if ok.status != 200 || !problems.is_empty() {
        return Err(schema_failure(
            &format!("a 200 S3 answer (status {})", ok.status),
            "s3-response",
            &problems,
        ));
    }
    let nf = s3(
        ctx,
        &json!({"item_id": m.no_row.item_id, "revision": m.no_row.revision}),
    )?;
    let problems = super::schema::violations("error", &nf.body);
    if !problems.is_empty() {
        return Err(schema_failure("the 404 body of S3", "error", &problems));
    }
    Ok(())
}

// ---- S1: rows for items that were never team, pages ----

fn s1_never_team_absent(ctx: &mut Ctx<'_>) -> Outcome {
    let (rows, _) = feed_all(ctx, ctx.token, None)?;
    let m = ctx.manifest;
    let team_ids: BTreeSet<&str> = m
        .items
        .iter()
        .filter(|i| i.team_visible())
        .map(|i| i.item_id.as_str())
        .collect();
    let seen: BTreeSet<&str> = rows.iter().filter_map(|r| r["item_id"].as_str()).collect();
    if let Some(missing) = team_ids.iter().find(|i| !seen.contains(*i)) {
        return Err(fail(
            "a row for every team-visible item from the start of the feed",
            format!("none for {missing}"),
        ));
    }
    let never: Vec<(&str, &str)> = ["private", "granted", "guest_only", "link_shared"]
        .iter()
        .map(|k| (*k, m.item(k).item_id.as_str()))
        .chain([("no_row", m.no_row.item_id.as_str())])
        .collect();
    let leaked: Vec<String> = never
        .iter()
        .filter(|(_, id)| seen.contains(id))
        .map(|(k, id)| format!("{k} ({id})"))
        .collect();
    if leaked.is_empty() {
        Ok(())
    } else {
        Err(fail(
            "no row, gone or not, for an item that was never team-visible",
            format!("rows for {}", leaked.join(", ")),
        ))
    }
}

fn s1_pages_lose_no_row(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    let mut made = Vec::with_capacity(S1_PAGE_PROBE_BUMPS);
    for _ in 0..S1_PAGE_PROBE_BUMPS {
        let rev = ctx
            .control("bump-revision", &[&t.item_id])?
            .ok_or_else(|| {
                fail(
                    "bump-revision prints the new revision",
                    "it printed nothing",
                )
            })?;
        made.push(rev);
    }
    let mut rows = Vec::new();
    let mut cursor = head;
    let mut pages = 0;
    for _ in 0..PAGES_MAX {
        let r = ctx
            .client
            .get(
                &format!("/s1/feed?cursor={}", encode_query(&cursor)),
                Auth::Bearer(ctx.token),
            )
            .map_err(|e| call_failed("GET /s1/feed", &e))?;
        if r.status != 200 {
            return Err(fail(
                "GET /s1/feed answers 200",
                format!("status {}", r.status),
            ));
        }
        pages += 1;
        let v: Value = serde_json::from_slice(&r.body)
            .map_err(|_| fail("an s1-response JSON body", "not JSON"))?;
        rows.extend(v["rows"].as_array().cloned().unwrap_or_default());
        cursor = v["cursor"].as_str().unwrap_or_default().to_owned();
        if v["more"] != json!(true) {
            break;
        }
    }
    let seen: BTreeSet<&str> = rows
        .iter()
        .filter(|r| r["item_id"] == json!(t.item_id))
        .filter_map(|r| r["revision"].as_str())
        .collect();
    let lost: Vec<&String> = made.iter().filter(|r| !seen.contains(r.as_str())).collect();
    if !lost.is_empty() {
        return Err(fail(
            format!(
                "a row for each of the {S1_PAGE_PROBE_BUMPS} new revisions, over {pages} pages"
            ),
            format!("{} never arrived, e.g. {:?}", lost.len(), lost.first()),
        ));
    }
    if pages < 2 {
        return Err(NotPassed::Skip(format!(
            "the feed after {S1_PAGE_PROBE_BUMPS} new revisions fit in one page, so no page boundary was crossed"
        )));
    }
    Ok(())
}

// ---- S3: unknown fields, leaving team, identical 404s ----

fn s3_unknown_fields_400(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let t = m.item("team");
    let a = m.person("member_a");
    let variants = [
        ("person", json!(a.address)),
        (
            "subject",
            json!({"kind": m.keys_on, "value": m.subject_value(a, &m.keys_on)}),
        ),
        ("conform_unknown_field", json!(true)),
    ];
    let mut wrong = Vec::new();
    for (field, value) in variants {
        let mut body = json!({"item_id": t.item_id, "revision": t.current()});
        body[field] = value;
        let r = s3(ctx, &body)?;
        if r.status != 400 {
            wrong.push(format!("{field} -> {}", r.status));
        }
    }
    none_wrong(
        "400 for a team item's S3 request carrying any field but item_id and revision",
        &wrong,
    )
}

fn s3_person_beside_the_body(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let g = m.item("granted");
    let a = m.person("member_a");
    let body =
        serde_json::to_vec(&json!({"item_id": g.item_id, "revision": g.current()})).expect("JSON");
    let value = m.subject_value(a, &m.keys_on);
    let mut wrong = Vec::new();
    for q in ["person", "subject", "person_ref", "as"] {
        let path = format!("/s3/fetch?{q}={}", encode_query(value));
        let r = ctx
            .client
            .post(&path, body.clone(), Auth::Bearer(ctx.token))
            .map_err(|e| call_failed("POST /s3/fetch", &e))?;
        if r.status == 200 {
            wrong.push(format!("query {q}"));
        }
    }
    for h in ["x-person", "x-subject", "x-person-ref", "x-on-behalf-of"] {
        let r = ctx
            .client
            .post_with_headers(
                "/s3/fetch",
                body.clone(),
                Auth::Bearer(ctx.token),
                &[(h, value)],
            )
            .map_err(|e| call_failed("POST /s3/fetch", &e))?;
        if r.status == 200 {
            wrong.push(format!("header {h}"));
        }
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(fail(
            "no 200 for the granted item, whatever query parameter or header names a person",
            format!("200 with {}", wrong.join(", ")),
        ))
    }
}

fn s3_404_after_leaving_team(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (down, del) = (m.item("team_to_downgrade"), m.item("team_to_delete"));
    for i in [down, del] {
        let r = s3(ctx, &json!({"item_id": i.item_id, "revision": i.current()}))?;
        if r.status != 200 {
            return Err(fail(
                format!(
                    "precondition: 200 for ({}, {}) while team",
                    i.item_id,
                    i.current()
                ),
                format!("status {}", r.status),
            ));
        }
    }
    ctx.control(
        "downgrade-to-granted",
        &[&down.item_id, &m.person("member_a").address],
    )?;
    ctx.control("delete", &[&del.item_id])?;
    let mut wrong = Vec::new();
    for (what, i) in [("downgraded", down), ("deleted", del)] {
        for rev in &i.revisions {
            let r = s3(ctx, &json!({"item_id": i.item_id, "revision": rev}))?;
            if r.status != 404 {
                wrong.push(format!("{what} ({}, {rev}) -> {}", i.item_id, r.status));
            }
        }
    }
    none_wrong(
        "404 at every revision once an item leaves team-visibility, by downgrade or deletion",
        &wrong,
    )
}

fn s3_404_identical(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut asks: Vec<(String, String, String)> =
        ["private", "granted", "guest_only", "link_shared", "deleted"]
            .iter()
            .map(|k| {
                let i = m.item(k);
                ((*k).to_owned(), i.item_id.clone(), i.current().to_owned())
            })
            .collect();
    let t = m.item("team");
    asks.push((
        "team at a revision never issued".into(),
        t.item_id.clone(),
        NEVER_ISSUED_REVISION.into(),
    ));
    let reference_ask = json!({"item_id": m.no_row.item_id, "revision": m.no_row.revision});
    let one = s3(ctx, &reference_ask)?;
    let two = s3(ctx, &reference_ask)?;
    let volatile = volatile_between(&one, &two);
    let reference = format!(
        "{} {}{}",
        one.status,
        stable_headers(&one, &volatile),
        body_text(&one)
    );
    let mut wrong = Vec::new();
    for (state, id, rev) in &asks {
        let r = s3(ctx, &json!({"item_id": id, "revision": rev}))?;
        let got = format!(
            "{} {}{}",
            r.status,
            stable_headers(&r, &volatile),
            body_text(&r)
        );
        if got != reference {
            wrong.push(format!("{state}: {}", got.replace('\n', " | ")));
        }
    }
    none_wrong(
        format!(
            "every refused S3 answer byte-identical to the no-row id's: {}",
            reference.replace('\n', " | ")
        ),
        &wrong,
    )
}

// ---- tokens ----

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

macro_rules! case {
    ($id:literal, $level:ident, $section:literal, $needs:ident, $req:literal, $run:path) => {
        ConformCase {
            id: $id,
            level: Level::$level,
            section: $section,
            requirement: $req,
            needs: Needs::$needs,
            run: $run,
        }
    };
}

static CASES: &[ConformCase] = &[
    case!(
        "suite2/kind-on-the-wire",
        Must,
        "§4.1, suite gate 2",
        Nothing,
        "S2 keys on the subject kind sent on the wire and echoes it as subject_kind: a member asked by the keyed kind sees a team item VISIBLE.",
        kind_on_the_wire
    ),
    case!(
        "suite2/other-kind-unknown-for-whole-call",
        Must,
        "§4.1, suite gate 2",
        Nothing,
        "A subject of the kind the server does not key on gets UNKNOWN for every pair of the call, team items and no-row ids alike.",
        other_kind_unknown
    ),
    case!(
        "suite3/not-visible-byte-identical",
        Must,
        "§4.1, suite gate 3",
        Nothing,
        "NOT_VISIBLE is byte-identical (raw body, ids replaced) for private, granted (asker holds the grant), guest-only, link-shared-not-team, deleted and no-row items.",
        not_visible_byte_identical
    ),
    case!(
        "suite3/downgrade-with-grant-intact",
        Must,
        "§4.1, suite gate 3",
        Control,
        "An item ingested while team, downgraded to granted with the asker's grant intact and asked before gone arrives answers NOT_VISIBLE, byte-identical to a private item's.",
        downgrade_with_grant_intact
    ),
    case!(
        "s2/stale-for-older-revision",
        Must,
        "§4.1",
        Nothing,
        "STALE for a revision behind the current one in the item's log; VISIBLE for the current one.",
        stale_for_older
    ),
    case!(
        "s2/stale-after-bump",
        Must,
        "§4.1",
        Control,
        "After a new revision, the previous one answers STALE and the new one VISIBLE.",
        stale_after_bump
    ),
    case!(
        "s2/ahead-after-partial-restore",
        Must,
        "§4.1 (AHEAD)",
        Control,
        "After a partial restore rewinds an admitted item's log, a revision beyond it answers AHEAD.",
        ahead_after_partial_restore
    ),
    case!(
        "s2/no-row-not-visible-never-ahead",
        Must,
        "§4.1 (no-row rule), suite gate 3",
        Nothing,
        "An id with no row at all answers NOT_VISIBLE, never AHEAD (no existence oracle).",
        no_row_not_ahead
    ),
    case!(
        "s2/two-people-different-answers",
        Must,
        "§4.1 (grants join)",
        Nothing,
        "The sibling's own grants join decides per person: a removed member and a guest get NOT_VISIBLE where a member gets VISIBLE.",
        two_people
    ),
    case!(
        "s2/full-batch-256-answered",
        Must,
        "§4.1 (S2_PAIRS_PER_CALL_MAX)",
        Nothing,
        "A batch of 256 pairs gets 256 results, exactly one per pair, none unasked, each one of the five values.",
        full_batch
    ),
    case!(
        "s2/over-256-refused",
        Must,
        "§4.1, contract S2",
        Nothing,
        "A batch of 257 pairs is refused with 400.",
        over_limit_refused
    ),
    case!(
        "s2/custody-before-revision",
        Must,
        "§4.1 (custody, grants join), suite gate 3",
        Nothing,
        "Custody and the grants join come before the revision: an item the asker may not see answers NOT_VISIBLE at an older revision and at one never issued (never STALE or AHEAD), byte-identical to the no-row id's answer; so does a team item asked by a guest or a removed member.",
        custody_before_revision
    ),
    case!(
        "s2/custody-whoever-asks",
        Must,
        "§4.1 (custody intersection), suite gate 3",
        Nothing,
        "A non-team item is NOT_VISIBLE to everyone, its owner and its grantees included (private, link-shared, guest-only, granted, deleted), byte-identical to the no-row id's answer.",
        custody_whoever_asks
    ),
    case!(
        "s2/stranger-not-visible",
        Must,
        "§4.1 (grants join)",
        Nothing,
        "Someone the sibling does not hold (an address at the team's domain that is not on its roster) gets NOT_VISIBLE for a team item, as for a no-row id.",
        stranger_not_visible
    ),
    case!(
        "s2/results-in-request-order",
        Should,
        "§4.1 (no-row rule), contract S2",
        Nothing,
        "Results come in the order the pairs were asked, so their order cannot tell which ids exist (asked forwards and backwards: no-row, private, team, granted).",
        results_in_request_order
    ),
    case!(
        "s2/compact-schema-order",
        Should,
        "contract S2",
        Nothing,
        "S2 bodies are compact JSON in schema field order (what makes byte identity cheap).",
        compact_schema_order
    ),
    case!(
        "s2/s3-bodies-match-schema",
        Must,
        "§4.1, §6.1, contract",
        Nothing,
        "A 16-pair S2 answer, a 200 S3 answer and a 404 S3 body are valid against their schemas.",
        s2_s3_match_schema
    ),
    case!(
        "s3/200-team-at-held-revision",
        Must,
        "§6.1",
        Nothing,
        "200 with an s3-response echoing the pair for a team-visible item at every revision in its log.",
        s3_200
    ),
    case!(
        "s3/404-never-403",
        Must,
        "§6.1, §4.2",
        Nothing,
        "404, never 403, for private, granted, guest-only, link-shared, deleted, no-row, and a team item at a revision never issued.",
        s3_404_never_403
    ),
    case!(
        "s3/unknown-fields-400",
        Must,
        "§6.1, gate 25, contract S3",
        Nothing,
        "An S3 request for a team item carrying any field but item_id and revision (person, subject, or an unknown one) is refused with 400.",
        s3_unknown_fields_400
    ),
    case!(
        "s3/person-beside-the-body-ignored",
        Must,
        "§6.1, gate 25",
        Nothing,
        "A person named in a query parameter or a header never makes a granted item fetchable.",
        s3_person_beside_the_body
    ),
    case!(
        "s3/404-after-leaving-team",
        Must,
        "§6.1, §4.2",
        Control,
        "Once an item leaves team-visibility (team → granted, or deleted), S3 answers 404 at every revision of it.",
        s3_404_after_leaving_team
    ),
    case!(
        "s3/404-byte-identical",
        Must,
        "§6.1, §4.2",
        Nothing,
        "Every refused S3 answer (private, granted, guest-only, link-shared, deleted, a never-issued revision) is byte-identical to the no-row id's: status, headers and body.",
        s3_404_identical
    ),
    case!(
        "s3/person-field-never-fetches-granted",
        Must,
        "§6.1, gate 25",
        Nothing,
        "Adding a subject, person or person_ref field to an S3 request never makes a granted item fetchable.",
        s3_person_field
    ),
    case!(
        "s1/four-fields",
        Must,
        "§6.1, gate 3",
        Nothing,
        "Every S1 row is exactly item_id, revision, gone, touched_at: no title, content or visibility flag.",
        s1_four_fields
    ),
    case!(
        "s1/pages-match-schema",
        Must,
        "§6.1, gate 3, contract S1",
        Nothing,
        "Every S1 page from the start is valid against s1-response.schema.json: four-field rows, tokens of 1 to 256 bytes, times in UTC ending in Z.",
        s1_pages_match_schema
    ),
    case!(
        "s1/never-team-items-absent",
        Must,
        "§6.1, gate 3",
        Nothing,
        "The feed from the start holds a row for every team-visible item and none, gone or not, for an item that was never team-visible or has no row.",
        s1_never_team_absent
    ),
    case!(
        "s1/pages-lose-no-row",
        Must,
        "§6.1",
        Control,
        "After 150 new revisions of one item, reading the feed page by page from the earlier head delivers a row for every one of them (skipped if the feed never needs a second page).",
        s1_pages_lose_no_row
    ),
    case!(
        "s1/leaving-team-reads-as-gone",
        Must,
        "§6.1, §4.2",
        Control,
        "Leaving team-visibility (team → granted) reads as gone: true, the same row shape as a deletion.",
        s1_leaving_is_gone
    ),
    case!(
        "s1/rewound-cursor-410",
        Must,
        "§6.1",
        Control,
        "A cursor rewound by a whole-log restore gets 410 {\"error\":\"reannounce_required\"}.",
        s1_rewound_cursor
    ),
    case!(
        "s1a/open-first",
        Must,
        "§6.1, §4.1 rule 2",
        Nothing,
        "An announce opens with exactly one open record, the first of the first page.",
        s1a_open_first
    ),
    case!(
        "s1a/every-team-visible-item",
        Must,
        "§6.1, §4.1 rule 2",
        Nothing,
        "An announce carries one item record per team-visible item, at its current revision, and no other.",
        s1a_every_item
    ),
    case!(
        "s1a/close-count",
        Must,
        "§6.1, §4.1 rule 2",
        Nothing,
        "An announce ends with exactly one close record whose count equals the item records sent.",
        s1a_close_count
    ),
    case!(
        "s1a/pages-match-schema",
        Must,
        "§6.1, gate 3, contract S1a",
        Nothing,
        "Every S1a page is valid against s1a-page.schema.json: open, item (exactly item_id, revision, touched_at) and close records, and nothing else.",
        s1a_pages_match_schema
    ),
    case!(
        "s1a/cursor-only-in-close",
        Must,
        "§6.1",
        Nothing,
        "The new S1 cursor appears only in the close record, and S1 accepts it.",
        s1a_cursor_in_close
    ),
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

/// Every case, in list order.
#[must_use]
pub fn all() -> &'static [ConformCase] {
    CASES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_ids_are_unique_and_grouped_by_section() {
        let mut seen = BTreeSet::new();
        for c in all() {
            assert!(seen.insert(c.id), "duplicate id {}", c.id);
            let group = c.id.split('/').next().unwrap_or("");
            assert!(
                ["suite2", "suite3", "s1", "s1a", "s2", "s3", "tokens"].contains(&group),
                "{}",
                c.id
            );
        }
    }
}
