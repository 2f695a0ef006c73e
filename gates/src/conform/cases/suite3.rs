//! Suite gate 3 (§4.1): NOT_VISIBLE is the same bytes whatever the reason, a downgrade with the asker's grant intact included.

use super::wire::{Outcome, expect_value, fail, normalised_s2};
use crate::conform::{ConformCase, Ctx, NotPassed};

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
];
