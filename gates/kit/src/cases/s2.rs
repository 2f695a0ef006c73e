//! S2 (§4.1, contract S2): the five values and when each is owed, batches of up to 256 pairs, custody and the grants join before the revision whoever asks, answer order, compact bodies, and the S2 and S3 schemas.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::wire::{
    NEVER_TEAM_VISIBLE, Outcome, body_text, expect_value, fail, none_wrong, normalised_s2,
    parse_s2, post_s2, s3, schema_failure, values,
};
use super::{
    NEVER_ISSUED_BOTH_SIDES, NEVER_ISSUED_REVISION, S2_PAIRS_PER_CALL_MAX, STRANGER_LOCAL_PART,
};
use crate::{ConformCase, Ctx, NotPassed};

/// What `person` must be answered for `(item_id, rev)` by the manifest's
/// state: VISIBLE for a member on a team-visible item at its current
/// revision, STALE at an older one, NOT_VISIBLE for everything else,
/// whatever revision is asked (§4.1: custody and the grants join come
/// before the revision). `rev` must be in the manifest's log for a
/// team-visible item.
fn expected_value(
    m: &crate::manifest::Manifest,
    person: &str,
    item_id: &str,
    rev: &str,
) -> &'static str {
    let p = m.person(person);
    let admitted = m.items.iter().find(|i| i.item_id == item_id).filter(|i| {
        i.team_visible()
            && p.role == crate::manifest::Role::Member
            && !i.removed.iter().any(|r| r == person)
    });
    match admitted {
        None => "NOT_VISIBLE",
        Some(i) if i.current() == rev => "VISIBLE",
        Some(_) => "STALE",
    }
}

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

fn never_issued_ahead(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    let pairs: Vec<(&str, &str)> = NEVER_ISSUED_BOTH_SIDES
        .iter()
        .map(|r| (t.item_id.as_str(), *r))
        .collect();
    let got = values(ctx, "member_a", &pairs)?;
    if got.iter().all(|v| v == "AHEAD") {
        Ok(())
    } else {
        Err(fail(
            format!(
                "AHEAD for member_a on the team item at {NEVER_ISSUED_BOTH_SIDES:?}, revisions its log never held (looked up, never ordered against {})",
                t.current()
            ),
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
    for key in NEVER_TEAM_VISIBLE {
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

fn s2_s3_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    let owned = batch_pairs(ctx, 16);
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(i, r)| (i.as_str(), r.as_str()))
        .collect();
    let m = ctx.manifest;
    let a = m.person("member_a");
    let r = post_s2(ctx, &m.keys_on, m.subject_value(a, &m.keys_on), &pairs)?;
    let problems = crate::schema::violations("s2-response", &r.body);
    if r.status != 200 || !problems.is_empty() {
        return Err(schema_failure(
            &format!("a 200 S2 answer (status {})", r.status),
            "s2-response",
            &problems,
        ));
    }
    let t = m.item("team");
    let ok = s3(ctx, &json!({"item_id": t.item_id, "revision": t.current()}))?;
    let problems = crate::schema::violations("s3-response", &ok.body);
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
    let problems = crate::schema::violations("error", &nf.body);
    if !problems.is_empty() {
        return Err(schema_failure("the 404 body of S3", "error", &problems));
    }
    Ok(())
}

/// The s2 cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
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
        "s2/never-issued-revision-ahead",
        Must,
        "§4.1 (AHEAD, opaque revisions)",
        Nothing,
        "A revision the admitted item's log never held answers AHEAD, whether it sorts before or after the current one: revisions are looked up in the log, never ordered.",
        never_issued_ahead
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
];
