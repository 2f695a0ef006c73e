//! Suite gate 3 (§4.1): NOT_VISIBLE is the same bytes whatever the reason, a downgrade with the asker's grant intact included, and an item made link-shared or guest-only after ingest leaving custody on every call (S1, S1a, S2, S3).

use serde_json::json;

use super::wire::{
    Outcome, announce_all, expect_value, fail, feed_all, items_of, never_team_visible, no_row,
    none_wrong, normalised_s2, s3,
};
use crate::{ConformCase, Ctx, NotPassed};

fn not_visible_byte_identical(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let mut states = never_team_visible(m);
    states.push(no_row(m));
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
            None => first = Some((state.as_str(), bytes)),
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

/// An ingested team item leaves custody by `action` (`set-link-shared` or
/// `set-guest-only`): S1 from the earlier head carries a `gone: true` row
/// for it, S2 answers member_a NOT_VISIBLE byte-identical to the no-row
/// id's, S3 404s it at every revision, and an announce omits it (§4.1
/// custody, §4.2, §6.1).
fn leaves_custody_after_ingest(ctx: &Ctx<'_>, action: &str, what: &str) -> Outcome {
    let m = ctx.manifest;
    let item = m.item("team_to_downgrade");
    expect_value(ctx, "member_a", &item.item_id, item.current(), "VISIBLE").map_err(
        |e| match e {
            NotPassed::Fail(f) => fail(format!("precondition: {}", f.expected), f.actual),
            s => s,
        },
    )?;
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    ctx.control(action, &[&item.item_id])?;
    let mut wrong = Vec::new();
    let (rows, _) = feed_all(ctx, ctx.token, Some(&head))?;
    let last = rows
        .iter()
        .rev()
        .find(|r| r["item_id"] == json!(item.item_id));
    match last {
        Some(r) if r["gone"] == json!(true) => {}
        Some(r) => wrong.push(format!("S1: its last row has gone {}", r["gone"])),
        None => wrong.push("S1: no row for it after the earlier head".to_owned()),
    }
    let (value, bytes) = normalised_s2(ctx, "member_a", &item.item_id, item.current())?;
    let nr = &m.no_row;
    let (_, reference) = normalised_s2(ctx, "member_a", &nr.item_id, &nr.revision)?;
    if value != "NOT_VISIBLE" {
        wrong.push(format!("S2: {value} for member_a"));
    } else if bytes != reference {
        wrong.push(format!(
            "S2: NOT_VISIBLE not byte-identical to the no-row id's: {} | {}",
            String::from_utf8_lossy(&bytes),
            String::from_utf8_lossy(&reference)
        ));
    }
    for rev in &item.revisions {
        let r = s3(ctx, &json!({"item_id": item.item_id, "revision": rev}))?;
        if r.status != 404 {
            wrong.push(format!("S3: ({}, {rev}) -> {}", item.item_id, r.status));
        }
    }
    let pages = announce_all(ctx)?;
    let announced: Vec<String> = items_of(pages.iter().flatten())
        .into_iter()
        .filter(|(i, _)| *i == item.item_id)
        .map(|(_, r)| r)
        .collect();
    if !announced.is_empty() {
        wrong.push(format!("S1a: announced at {announced:?}"));
    }
    none_wrong(
        format!(
            "the team item made {what} after ingest leaves custody (§4.1, suite ruling 15: a link-shared-not-team or guest-only item is not team-visible): a gone row on S1, NOT_VISIBLE like a no-row id on S2, 404 on S3, absent from S1a"
        ),
        &wrong,
    )
}

fn link_shared_after_ingest(ctx: &mut Ctx<'_>) -> Outcome {
    leaves_custody_after_ingest(ctx, "set-link-shared", "link-shared-not-team")
}

fn guest_only_after_ingest(ctx: &mut Ctx<'_>) -> Outcome {
    leaves_custody_after_ingest(ctx, "set-guest-only", "guest-only")
}

/// The suite gate 3 cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
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
        "suite3/link-shared-after-ingest-leaves-custody",
        Must,
        "§4.1 (custody), §4.2, §6.1, suite gate 3",
        Control,
        "A team item made link-shared (not team) after ingest leaves custody on every call: S1 reads it as gone, S2 answers NOT_VISIBLE byte-identical to a no-row id's, S3 answers 404 at every revision, S1a leaves it out.",
        link_shared_after_ingest
    ),
    case!(
        "suite3/guest-only-after-ingest-leaves-custody",
        Must,
        "§4.1 (custody), §4.2, §6.1, suite gate 3",
        Control,
        "A team item made guest-only after ingest leaves custody on every call: S1 reads it as gone, S2 answers NOT_VISIBLE byte-identical to a no-row id's, S3 answers 404 at every revision, S1a leaves it out.",
        guest_only_after_ingest
    ),
];
