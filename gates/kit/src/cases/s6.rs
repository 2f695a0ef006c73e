//! S6 aggregate (§6.1 S6, §8.7, this project's wire in `fixtures/contract/README.md`): the custody intersection and the grants join as S2's, STALE and NON_NUMERIC per cell, the 64-cell cap, subject kinds, never cached, byte-identical NOT_VISIBLE.
//!
//! These cases apply only to a target that serves S6: one whose manifest
//! carries a `sheet` grid (every item a sheet holding it) and that does not
//! answer `404` on `POST /s6/aggregate`. Either missing, each case is
//! skipped as "not served", never passed, so Docs and Calendar siblings
//! run the kit unchanged.

use serde_json::{Value, json};

use super::wire::{Outcome, body_text, call_failed, fail, none_wrong};
use crate::client::{Auth, Response};
use crate::manifest::{Item, SheetGrid};
use crate::{ConformCase, Ctx, NotPassed};

/// Most cells one S6 call may carry (`S6_CELLS_PER_CALL_MAX`, §6.1).
pub const S6_CELLS_PER_CALL_MAX: usize = 64;

/// A cell the kit asks about: (item, 1-based row, 1-based col, revision).
type Asked<'a> = (&'a str, u32, u32, &'a str);

fn grid<'a>(ctx: &Ctx<'a>) -> Result<&'a SheetGrid, NotPassed> {
    ctx.manifest
        .sheet
        .as_ref()
        .ok_or_else(|| NotPassed::Skip("not served: the manifest declares no sheet grid".into()))
}

fn body(grid: &SheetGrid, kind: &str, value: &str, function: &str, cells: &[Asked<'_>]) -> Vec<u8> {
    let cells: Vec<Value> = cells
        .iter()
        .map(|(sheet, row, col, revision)| {
            json!({"sheet": sheet, "tab": grid.tab, "row": row, "col": col, "revision": revision})
        })
        .collect();
    serde_json::to_vec(
        &json!({"subject": {"kind": kind, "value": value}, "fn": function, "cells": cells}),
    )
    .expect("JSON serialises")
}

fn post(ctx: &Ctx<'_>, body: Vec<u8>) -> Result<Response, NotPassed> {
    let r = ctx
        .client
        .post("/s6/aggregate", body, Auth::Bearer(ctx.token))
        .map_err(|e| call_failed("POST /s6/aggregate", &e))?;
    if r.status == 404 {
        return Err(NotPassed::Skip(
            "not served: 404 on POST /s6/aggregate".into(),
        ));
    }
    Ok(r)
}

/// S6 by `person` (a manifest key) in the keyed kind; the raw answer.
fn s6(
    ctx: &Ctx<'_>,
    person: &str,
    function: &str,
    cells: &[Asked<'_>],
) -> Result<Response, NotPassed> {
    let g = grid(ctx)?;
    let m = ctx.manifest;
    let p = m.person(person);
    post(
        ctx,
        body(
            g,
            &m.keys_on,
            m.subject_value(p, &m.keys_on),
            function,
            cells,
        ),
    )
}

/// The `result` of a 200 S6 answer whose `subject_kind` is the keyed kind.
fn result(ctx: &Ctx<'_>, r: &Response) -> Result<Value, NotPassed> {
    if r.status != 200 {
        return Err(fail(
            "200 from S6",
            format!("{} {}", r.status, body_text(r)),
        ));
    }
    let v: Value =
        serde_json::from_slice(&r.body).map_err(|e| fail("a JSON S6 answer", e.to_string()))?;
    if v["subject_kind"] != ctx.manifest.keys_on.as_str() {
        return Err(fail(
            format!("subject_kind {:?}", ctx.manifest.keys_on),
            v["subject_kind"].to_string(),
        ));
    }
    Ok(v["result"].clone())
}

fn revenue<'a>(item: &'a Item) -> [Asked<'a>; 3] {
    let rev = item.current();
    [
        (&item.item_id, 2, 2, rev),
        (&item.item_id, 2, 3, rev),
        (&item.item_id, 2, 4, rev),
    ]
}

fn expect_sum(got: &Value, grid: &SheetGrid, what: &str) -> Outcome {
    let want = json!({"type": "VALUE", "value": grid.sum_revenue.value, "display": grid.sum_revenue.display, "format_code": grid.sum_revenue.format_code});
    if *got == want {
        Ok(())
    } else {
        Err(fail(format!("{what}: {want}"), got.to_string()))
    }
}

fn value_for_team_cells(ctx: &mut Ctx<'_>) -> Outcome {
    let g = grid(ctx)?;
    let team = ctx.manifest.item("team");
    let r = s6(ctx, "member_a", "SUM", &revenue(team))?;
    expect_sum(
        &result(ctx, &r)?,
        g,
        "SUM of row 2 on the team sheet for member_a",
    )
}

/// The manifest's table of the other four functions over row 2 of `team`
/// (`revenue_aggregates`), one call a row, every row's answer compared
/// whole: a fake whose AVERAGE divides by one too many, or whose MIN is
/// its first operand, fails here while SUM passes.
fn each_function(ctx: &mut Ctx<'_>) -> Outcome {
    let g = grid(ctx)?;
    let team = ctx.manifest.item("team");
    let rev = team.current();
    let mut wrong = Vec::new();
    let mut asked = Vec::new();
    for row in &g.revenue_aggregates {
        let cells: Vec<Asked<'_>> = row
            .cols
            .iter()
            .map(|col| (team.item_id.as_str(), 2, *col, rev))
            .collect();
        let got = result(ctx, &s6(ctx, "member_a", &row.function, &cells)?)?;
        let e = &row.expected;
        let want = json!({"type": "VALUE", "value": e.value, "display": e.display, "format_code": e.format_code});
        if got != want {
            wrong.push(format!(
                "{} of cols {:?} -> {got}, not {want}",
                row.function, row.cols
            ));
        }
        asked.push(row.function.as_str());
    }
    for function in ["AVERAGE", "MIN", "MAX", "COUNT"] {
        if !asked.contains(&function) {
            wrong.push(format!(
                "the manifest's revenue_aggregates has no {function} row"
            ));
        }
    }
    none_wrong(
        "each of AVERAGE, MIN, MAX and COUNT answers the manifest's VALUE",
        &wrong,
    )
}

/// The cells whose sheet member_a may not read, each with who asks:
/// custody refuses them whoever asks, the owner and a grantee included.
fn hidden(ctx: &Ctx<'_>) -> Vec<(String, &'static str, String, String)> {
    let m = ctx.manifest;
    let mut out: Vec<(String, &'static str, String, String)> =
        ["private", "granted", "link_shared", "guest_only", "deleted"]
            .into_iter()
            .map(|key| {
                let item = m.item(key);
                (
                    key.to_owned(),
                    "member_a",
                    item.item_id.clone(),
                    item.current().to_owned(),
                )
            })
            .collect();
    out.push((
        "no_row".to_owned(),
        "member_a",
        m.no_row.item_id.clone(),
        m.no_row.revision.clone(),
    ));
    out
}

fn custody_intersection(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let team = m.item("team");
    let mut wrong = Vec::new();
    for (key, _, item, rev) in hidden(ctx) {
        for person in owner_and_grantees(ctx, &key) {
            let cells = [revenue(team)[0], (&item, 2, 2, &rev), revenue(team)[1]];
            let got = result(ctx, &s6(ctx, &person, "SUM", &cells)?)?;
            if got != json!({"type": "NOT_VISIBLE"}) {
                wrong.push(format!("{key} asked by {person} -> {got}"));
            }
        }
    }
    none_wrong(
        "NOT_VISIBLE whenever one cell's sheet is not team-visible, owner and grantees included",
        &wrong,
    )
}

fn owner_and_grantees(ctx: &Ctx<'_>, key: &str) -> Vec<String> {
    if key == "no_row" {
        return vec!["member_a".to_owned()];
    }
    let item = ctx.manifest.item(key);
    let mut people: Vec<String> = item.owner.iter().chain(&item.granted_to).cloned().collect();
    people.push("member_a".to_owned());
    people.sort();
    people.dedup();
    people
}

fn grants_join(ctx: &mut Ctx<'_>) -> Outcome {
    let g = grid(ctx)?;
    let m = ctx.manifest;
    let minus = m.item("team_minus_b");
    let mut wrong = Vec::new();
    let a = result(ctx, &s6(ctx, "member_a", "SUM", &revenue(minus))?)?;
    if let Err(NotPassed::Fail(f)) = expect_sum(&a, g, "member_a on team_minus_b") {
        wrong.push(format!("{f:?}"));
    }
    for (person, item) in [("member_b", minus), ("guest", m.item("team"))] {
        let got = result(ctx, &s6(ctx, person, "SUM", &revenue(item))?)?;
        if got != json!({"type": "NOT_VISIBLE"}) {
            wrong.push(format!("{person} on {} -> {got}", item.key));
        }
    }
    none_wrong(
        "VALUE for member_a, NOT_VISIBLE for member_b (removed) and for the guest",
        &wrong,
    )
}

fn not_visible_byte_identical(ctx: &mut Ctx<'_>) -> Outcome {
    let team = ctx.manifest.item("team");
    let mut bodies: Vec<(String, String)> = Vec::new();
    for (key, person, item, rev) in hidden(ctx) {
        for at in 0..3 {
            let mut cells = revenue(team).to_vec();
            cells[at] = (&item, 2, 2, &rev);
            let r = s6(ctx, person, "SUM", &cells)?;
            bodies.push((format!("{key} at cell {}", at + 1), body_text(&r)));
        }
    }
    let first = bodies.first().map(|(_, b)| b.clone()).unwrap_or_default();
    let wrong: Vec<String> = bodies
        .iter()
        .filter(|(_, b)| *b != first)
        .map(|(w, b)| format!("{w}: {b}"))
        .collect();
    none_wrong(
        format!("every NOT_VISIBLE body byte for byte {first}"),
        &wrong,
    )
}

fn stale_per_cell(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (team, hist) = (m.item("team"), m.item("team_history"));
    let old = hist
        .revisions
        .first()
        .map(String::as_str)
        .unwrap_or_default();
    let cells = [
        revenue(team)[0],
        (hist.item_id.as_str(), 2, 3, old),
        (hist.item_id.as_str(), 2, 2, old),
    ];
    let got = result(ctx, &s6(ctx, "member_a", "SUM", &cells)?)?;
    let want = json!({"type": "STALE", "cell": {"sheet": hist.item_id, "tab": grid(ctx)?.tab, "row": 2, "col": 3}});
    if got == want {
        Ok(())
    } else {
        Err(fail(
            format!("{want}: the first cell not at its revision"),
            got.to_string(),
        ))
    }
}

fn non_numeric(ctx: &mut Ctx<'_>) -> Outcome {
    let team = ctx.manifest.item("team");
    let tab = grid(ctx)?.tab.clone();
    let rev = team.current();
    let mut wrong = Vec::new();
    for (what, row, col) in [("the row label (text)", 2, 1), ("an empty cell", 3, 3)] {
        let cells = [
            revenue(team)[0],
            (team.item_id.as_str(), row, col, rev),
            revenue(team)[1],
        ];
        let got = result(ctx, &s6(ctx, "member_a", "SUM", &cells)?)?;
        let want = json!({"type": "NON_NUMERIC", "cell": {"sheet": team.item_id, "tab": tab, "row": row, "col": col}});
        if got != want {
            wrong.push(format!("{what}: {got}, not {want}"));
        }
    }
    none_wrong(
        "NON_NUMERIC naming the first cell that holds text or is empty",
        &wrong,
    )
}

fn cap_64_cells(ctx: &mut Ctx<'_>) -> Outcome {
    let team = ctx.manifest.item("team");
    let three = revenue(team);
    let cells: Vec<Asked<'_>> = (0..=S6_CELLS_PER_CALL_MAX).map(|i| three[i % 3]).collect();
    let mut wrong = Vec::new();
    let at_cap = result(
        ctx,
        &s6(ctx, "member_a", "COUNT", &cells[..S6_CELLS_PER_CALL_MAX])?,
    )?;
    if at_cap["type"] != "VALUE" || at_cap["value"] != "64" {
        wrong.push(format!("64 cells -> {at_cap}"));
    }
    for (n, code) in [
        (S6_CELLS_PER_CALL_MAX + 1, "too_many_cells"),
        (0, "no_cells"),
    ] {
        let r = s6(ctx, "member_a", "COUNT", &cells[..n])?;
        let want = format!(r#"{{"error":"{code}"}}"#);
        if r.status != 400 || body_text(&r) != want {
            wrong.push(format!("{n} cells -> {} {}", r.status, body_text(&r)));
        }
    }
    none_wrong(
        "COUNT 64 at the cap; 400 too_many_cells at 65; 400 no_cells at 0",
        &wrong,
    )
}

fn subject_kinds(ctx: &mut Ctx<'_>) -> Outcome {
    let g = grid(ctx)?;
    let m = ctx.manifest;
    let team = m.item("team");
    let a = m.person("member_a");
    let other = m.other_kind();
    let r = post(
        ctx,
        body(g, other, m.subject_value(a, other), "SUM", &revenue(team)),
    )?;
    let v: Value =
        serde_json::from_slice(&r.body).map_err(|e| fail("a JSON S6 answer", e.to_string()))?;
    let want = json!({"subject_kind": m.keys_on, "result": {"type": "UNKNOWN"}});
    if r.status == 200 && v == want {
        Ok(())
    } else {
        Err(fail(
            format!("{want} for a subject of the kind not keyed on"),
            format!("{} {v}", r.status),
        ))
    }
}

fn never_cached(ctx: &mut Ctx<'_>) -> Outcome {
    let g = grid(ctx)?;
    let team = ctx.manifest.item("team");
    let jan = [revenue(team)[0]];
    let before = result(ctx, &s6(ctx, "member_a", "SUM", &jan)?)?;
    ctx.control(
        "reformat-cell",
        &[
            &team.item_id,
            &g.tab,
            "2",
            "2",
            &g.jan_reformatted.format_code,
            "same",
        ],
    )?;
    let after = result(ctx, &s6(ctx, "member_a", "SUM", &jan)?)?;
    if after["display"] != g.jan_reformatted.display.as_str()
        || after["format_code"] != g.jan_reformatted.format_code.as_str()
    {
        return Err(fail(
            format!(
                "after reformat-cell at the same revision, display {:?} in {:?}",
                g.jan_reformatted.display, g.jan_reformatted.format_code
            ),
            format!("{after} (before: {before})"),
        ));
    }
    let new = ctx
        .control("bump-revision", &[&team.item_id])?
        .ok_or_else(|| fail("bump-revision prints the new revision", "nothing"))?;
    let old = result(ctx, &s6(ctx, "member_a", "SUM", &jan)?)?;
    let fresh = result(
        ctx,
        &s6(ctx, "member_a", "SUM", &[(&team.item_id, 2, 2, &new)])?,
    )?;
    if old["type"] != "STALE" || fresh["type"] != "VALUE" {
        return Err(fail(
            "after bump-revision: STALE at the old revision, VALUE at the new",
            format!("{old} / {fresh}"),
        ));
    }
    Ok(())
}

fn refuses_expression_text(ctx: &mut Ctx<'_>) -> Outcome {
    let team = ctx.manifest.item("team");
    let mut wrong = Vec::new();
    for function in ["MEDIAN", "=SUM(B2:D2)", "sum"] {
        let r = s6(ctx, "member_a", function, &revenue(team))?;
        if r.status != 400 {
            wrong.push(format!("fn {function:?} -> {} {}", r.status, body_text(&r)));
        }
    }
    none_wrong("400 for any fn but SUM, AVERAGE, MIN, MAX, COUNT", &wrong)
}

/// S6's cases, in list order.
pub const CASES: &[ConformCase] = &[
    case!(
        "s6/value-for-team-cells",
        Must,
        "§6.1 S6, §8.7",
        Nothing,
        "SUM over team-visible number cells answers VALUE with Sheets' value, display string and format code.",
        value_for_team_cells
    ),
    case!(
        "s6/each-function",
        Must,
        "§6.1 S6, §8.7",
        Nothing,
        "AVERAGE, MIN, MAX and COUNT over row 2's cells, in the manifest's order, each answer VALUE with the manifest's value, display string and format code (COUNT in General).",
        each_function
    ),
    case!(
        "s6/custody-intersection",
        Must,
        "§6.1 S6, §4.1",
        Nothing,
        "A cell whose sheet is private, granted, link-shared, guest-only, deleted or has no row makes the whole call NOT_VISIBLE, whoever asks: the owner and grantees included.",
        custody_intersection
    ),
    case!(
        "s6/grants-join",
        Must,
        "§6.1 S6, §4.1",
        Nothing,
        "The grants join as S2's: VALUE for a member, NOT_VISIBLE for a member removed from the sheet and for a guest.",
        grants_join
    ),
    case!(
        "s6/not-visible-byte-identical",
        Must,
        "§6.1 S6, suite gate 3",
        Nothing,
        "NOT_VISIBLE is byte-identical whichever cell and whichever kind of hidden sheet caused it: it never says which.",
        not_visible_byte_identical
    ),
    case!(
        "s6/stale-per-cell",
        Must,
        "§6.1 S6",
        Nothing,
        "STALE names the first cell whose sheet is not at the asked revision.",
        stale_per_cell
    ),
    case!(
        "s6/non-numeric",
        Must,
        "§6.1 S6",
        Nothing,
        "NON_NUMERIC names the first cell that holds text or is empty.",
        non_numeric
    ),
    case!(
        "s6/cap-64-cells",
        Must,
        "§6.1 S6",
        Nothing,
        "64 cells are answered; 65 are 400 too_many_cells; none is 400 no_cells.",
        cap_64_cells
    ),
    case!(
        "s6/subject-kinds",
        Must,
        "§6.1 S6, suite gate 2",
        Nothing,
        "A subject of the kind the sibling does not key on gets UNKNOWN, with the keyed kind echoed.",
        subject_kinds
    ),
    case!(
        "s6/never-cached",
        Must,
        "§6.1 S6, §8.7",
        Control,
        "Never cached: after reformat-cell at the same revision the same call shows the new format; after bump-revision the old revision is STALE and the new one answers.",
        never_cached
    ),
    case!(
        "s6/refuses-expression-text",
        Must,
        "§6.1 S6, decision 10",
        Nothing,
        "Any fn but the five, expression text included, is 400.",
        refuses_expression_text
    ),
];
