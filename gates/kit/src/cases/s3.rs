//! S3 (§6.1, §4.2, gate 25): a team item's body at every revision it held (and the same body at it after a new revision), one 404 (never 403, byte-identical) for everything else, and no field or header that names a person makes a granted item fetchable.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::wire::{
    Outcome, body_text, call_failed, fail, never_issued, never_team_visible, no_row, none_wrong,
    s3, stable_headers, volatile_between,
};
use crate::client::{Auth, encode_query};
use crate::{ConformCase, Ctx, NotPassed};

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
    let mut asks = never_team_visible(m);
    asks.extend([no_row(m), never_issued(m)]);
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

fn s3_404_after_partial_restore(ctx: &mut Ctx<'_>) -> Outcome {
    let h = ctx.manifest.item("team_history");
    let n = h.revisions.len();
    if n < 2 {
        return Err(fail(
            "team_history has two revisions or more",
            format!("{n}"),
        ));
    }
    let (back_to, dropped) = (h.revisions[n - 2].as_str(), h.current());
    ctx.control("partial-restore", &[&h.item_id, back_to])?;
    let mut wrong = Vec::new();
    for (rev, want) in h.revisions.iter().map(|r| {
        let want = if r == dropped { 404 } else { 200 };
        (r, want)
    }) {
        let r = s3(ctx, &json!({"item_id": h.item_id, "revision": rev}))?;
        if r.status != want {
            wrong.push(format!("({}, {rev}) -> {} not {want}", h.item_id, r.status));
        }
    }
    none_wrong(
        format!(
            "after a partial restore to {back_to}, 404 for {dropped} (dropped from the log) and 200 for every revision still in it"
        ),
        &wrong,
    )
}

/// The parsed `(title, media_type, body)` of a 200 S3 answer for `(item,
/// rev)`, or a failure naming the status.
fn s3_content(ctx: &Ctx<'_>, item: &str, rev: &str) -> Result<Value, NotPassed> {
    let r = s3(ctx, &json!({"item_id": item, "revision": rev}))?;
    if r.status != 200 {
        return Err(fail(
            format!("200 for ({item}, {rev}), team-visible and in its log"),
            format!("status {}", r.status),
        ));
    }
    let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    Ok(json!([v["title"], v["media_type"], v["body"]]))
}

fn s3_revision_keeps_its_body(ctx: &mut Ctx<'_>) -> Outcome {
    let h = ctx.manifest.item("team_history");
    let mut before = Vec::new();
    for rev in &h.revisions {
        before.push((rev.clone(), s3_content(ctx, &h.item_id, rev)?));
    }
    let new = ctx
        .control("bump-revision", &[&h.item_id])?
        .ok_or_else(|| {
            fail(
                "bump-revision prints the new revision",
                "it printed nothing",
            )
        })?;
    s3_content(ctx, &h.item_id, &new)?;
    let mut wrong = Vec::new();
    for (rev, was) in &before {
        if s3_content(ctx, &h.item_id, rev)? != *was {
            // Named by id and revision only: no title or body in a report.
            wrong.push(format!("({}, {rev}) changed", h.item_id));
        }
    }
    none_wrong(
        format!(
            "after bump-revision made {new}, every older revision of {} answers the title, media type and body it answered before (a revision's content never changes: §6.1 S3 serves the body at that revision)",
            h.item_id
        ),
        &wrong,
    )
}

fn s3_404_identical(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut asks = never_team_visible(m);
    asks.push(never_issued(m));
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

/// The s3 cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
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
        "s3/404-for-revision-a-partial-restore-dropped",
        Must,
        "§6.1, §4.1 (AHEAD)",
        Control,
        "After a partial restore rewinds a team item's log, S3 answers 404 for a revision the restore dropped and 200 for every revision still in the log.",
        s3_404_after_partial_restore
    ),
    case!(
        "s3/older-revision-keeps-its-body",
        Must,
        "§6.1 (S3), §4.1 rule 4",
        Control,
        "An older revision's S3 answer is its own: after a new revision is made, every revision already in the log answers the same title, media type and body as before.",
        s3_revision_keeps_its_body
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
];
