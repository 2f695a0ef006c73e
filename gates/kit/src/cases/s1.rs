//! S1 (§6.1, gate 3): four-field rows and their schema (from the start and for rows written during the run), never-team items absent and their edits unfed, one row per change with paging that loses none and says more: false only at the head, rows in log order, pages of at most 500 rows, leaving team read as gone, and 410 for a rewound cursor, also once the restored log has regrown past it.
//!
//! One row per change: §6.1 makes the cursor a position in the sibling's
//! event log, so "rows since the cursor" are that log's events, one per new
//! revision of a team-visible item and one per entry into or departure
//! from team-visibility. A feed that keeps only the latest row per item on
//! a page is not conformant, because from outside it cannot be told apart
//! from one that drops rows at page boundaries, and a dropped row can be an
//! item's only one (its `gone`). `fixtures/conformance/README.md` records
//! the decision.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::wire::{
    Outcome, body_text, call_failed, fail, feed_all, none_wrong, pages_match_schema,
};
use super::{
    PAGES_MAX, S1_MORE_PROBE_BUMPS_MAX, S1_PAGE_PROBE_BUMPS, S1_PAGE_ROWS_MAX, S1_ROW_FIELDS,
};
use crate::client::{Auth, encode_query};
use crate::{ConformCase, Ctx, NotPassed};

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

/// Reads to the head past one new revision, restores the whole log, makes
/// `regrow` new revisions, and requires the cursor from before the restore
/// to get `410 {"error":"reannounce_required"}`; `after` says when, for the
/// failure.
fn rewound_cursor_410(ctx: &Ctx<'_>, regrow: usize, after: &str) -> Outcome {
    let t = ctx.manifest.item("team");
    let (_, c0) = feed_all(ctx, ctx.token, None)?;
    ctx.control("bump-revision", &[&t.item_id])?;
    let (_, c1) = feed_all(ctx, ctx.token, Some(&c0))?;
    ctx.control("whole-log-restore", &[])?;
    if regrow > 0 {
        ctx.bump_revisions(&t.item_id, regrow)?;
    }
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
            format!(
                "410 {{\"error\":\"reannounce_required\"}} for a cursor from before a whole-log restore, {after}"
            ),
            format!("status {} body {}", r.status, body_text(&r)),
        ))
    }
}

fn s1_rewound_cursor(ctx: &mut Ctx<'_>) -> Outcome {
    rewound_cursor_410(ctx, 0, "asked straight after it")
}

fn s1_pages_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    pages_match_schema(ctx, "/s1/feed", "s1-response", "the S1 feed", |v| {
        (v["more"] == json!(true))
            .then(|| v["cursor"].as_str())
            .flatten()
            .map(|c| format!("/s1/feed?cursor={}", encode_query(c)))
    })
}

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
    let made = ctx.bump_revisions(&t.item_id, S1_PAGE_PROBE_BUMPS)?;
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
        let compacting =
            seen.len() <= pages && made.last().is_some_and(|l| seen.contains(l.as_str()));
        let hint = if compacting {
            " (at most one row per page and the last revision arrived: a feed that keeps only the latest row per item; the contract asks one row per change, §6.1)"
        } else {
            ""
        };
        return Err(fail(
            format!(
                "a row for each of the {S1_PAGE_PROBE_BUMPS} new revisions, over {pages} pages"
            ),
            format!(
                "{} never arrived, e.g. {:?}{hint}",
                lost.len(),
                lost.first()
            ),
        ));
    }
    if pages < 2 {
        return Err(NotPassed::Skip(format!(
            "the feed after {S1_PAGE_PROBE_BUMPS} new revisions fit in one page, so no page boundary was crossed"
        )));
    }
    Ok(())
}

/// One S1 page as a walk saw it: its row count, its `more`, its cursor.
struct Page {
    rows: usize,
    more: bool,
    cursor: String,
}

/// Follows S1 from `cursor` (the start when `None`) until a page says
/// `more: false`, keeping every page's shape.
fn walk_pages(ctx: &Ctx<'_>, cursor: Option<&str>) -> Result<Vec<Page>, NotPassed> {
    let mut pages = Vec::new();
    let mut cursor = cursor.map(str::to_owned);
    for _ in 0..PAGES_MAX {
        let path = match &cursor {
            Some(c) => format!("/s1/feed?cursor={}", encode_query(c)),
            None => "/s1/feed".to_owned(),
        };
        let r = ctx
            .client
            .get(&path, Auth::Bearer(ctx.token))
            .map_err(|e| call_failed("GET /s1/feed", &e))?;
        if r.status != 200 {
            return Err(fail(
                "GET /s1/feed answers 200",
                format!("status {}", r.status),
            ));
        }
        let v: Value = serde_json::from_slice(&r.body)
            .map_err(|_| fail("an s1-response JSON body", "not JSON"))?;
        let page = Page {
            rows: v["rows"].as_array().map_or(0, Vec::len),
            more: v["more"] == json!(true),
            cursor: v["cursor"]
                .as_str()
                .ok_or_else(|| fail("a cursor in every S1 page", "none"))?
                .to_owned(),
        };
        let last = !page.more;
        cursor = Some(page.cursor.clone());
        pages.push(page);
        if last {
            return Ok(pages);
        }
    }
    Err(fail(
        format!("the feed ends within {PAGES_MAX} pages"),
        "it did not",
    ))
}

/// Reads once more from every `more: false` page's cursor in `pages`:
/// with nothing changed since, each must be empty. One line per page
/// that left rows behind.
fn left_behind(ctx: &Ctx<'_>, pages: &[Page], walk: &str) -> Result<Vec<String>, NotPassed> {
    let mut wrong = Vec::new();
    for (n, p) in pages.iter().enumerate().filter(|(_, p)| !p.more) {
        let again = walk_pages(ctx, Some(&p.cursor))?;
        let left: usize = again.iter().map(|p| p.rows).sum();
        if left > 0 {
            wrong.push(format!(
                "{walk}: page {} ({} rows) said more: false with {left} rows still behind its cursor",
                n + 1,
                p.rows
            ));
        }
    }
    Ok(wrong)
}

fn s1_more_false_only_at_head(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    let mut pages = walk_pages(ctx, None)?;
    let mut wrong = left_behind(ctx, &pages, "from the start")?;
    let mut size = pages.iter().find(|p| p.more).map(|p| p.rows);
    if size.is_none() {
        let head = pages.last().map(|p| p.cursor.clone()).unwrap_or_default();
        ctx.bump_revisions(&t.item_id, S1_PAGE_PROBE_BUMPS)?;
        pages = walk_pages(ctx, Some(&head))?;
        wrong.extend(left_behind(
            ctx,
            &pages,
            &format!("after {S1_PAGE_PROBE_BUMPS} new revisions"),
        )?);
        size = pages.iter().find(|p| p.more).map(|p| p.rows);
    }
    // A page of `size` rows said `more: true`: make exactly one row more
    // than that behind the head, the boundary an off-by-one misses.
    match size.filter(|s| (1..S1_MORE_PROBE_BUMPS_MAX).contains(s)) {
        Some(size) => {
            let head = pages.last().map(|p| p.cursor.clone()).unwrap_or_default();
            ctx.bump_revisions(&t.item_id, size + 1)?;
            let after = walk_pages(ctx, Some(&head))?;
            wrong.extend(left_behind(
                ctx,
                &after,
                &format!("{} new revisions, one more than a full page", size + 1),
            )?);
        }
        None if wrong.is_empty() => {
            return Err(NotPassed::Skip(format!(
                "no page said more: true with 1 to {} rows, so no boundary of one row past a full page could be made",
                S1_MORE_PROBE_BUMPS_MAX - 1
            )));
        }
        None => {}
    }
    none_wrong(
        "more: false only when nothing is left: with nothing changed since, every more: false page's cursor reads back no row (contract S1: more: true means ask again straight away)",
        &wrong,
    )
}

fn s1_rows_in_log_order(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    let made = ctx.bump_revisions(&t.item_id, 3)?;
    let (rows, _) = feed_all(ctx, ctx.token, Some(&head))?;
    let got: Vec<&str> = rows
        .iter()
        .filter(|r| r["item_id"] == json!(t.item_id))
        .filter_map(|r| r["revision"].as_str())
        .collect();
    if got == made.iter().map(String::as_str).collect::<Vec<_>>() {
        Ok(())
    } else {
        Err(fail(
            format!(
                "the rows for {}'s three new revisions in the order they were made: {made:?}",
                t.item_id
            ),
            format!("{got:?}"),
        ))
    }
}

fn s1_pages_hold_at_most_500(ctx: &mut Ctx<'_>) -> Outcome {
    let t = ctx.manifest.item("team");
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    ctx.bump_revisions(&t.item_id, S1_PAGE_ROWS_MAX + 1)?;
    let pages = walk_pages(ctx, Some(&head))?;
    let wrong: Vec<String> = pages
        .iter()
        .enumerate()
        .filter(|(_, p)| p.rows > S1_PAGE_ROWS_MAX)
        .map(|(n, p)| format!("page {} holds {} rows", n + 1, p.rows))
        .collect();
    none_wrong(
        format!(
            "with {} rows behind the cursor, every S1 page holds at most {S1_PAGE_ROWS_MAX} rows (s1-response.schema.json's maxItems), the rest behind more: true",
            S1_PAGE_ROWS_MAX + 1
        ),
        &wrong,
    )
}

fn s1_restored_cursor_410_once_regrown(ctx: &mut Ctx<'_>) -> Outcome {
    // The restored log grows past the old cursor's place in it: a cursor
    // checked by position alone is accepted again, in another history.
    rewound_cursor_410(
        ctx,
        2,
        "after the restored log grew past it by two new revisions",
    )
}

fn s1_run_rows_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (t, down, del) = (
        m.item("team"),
        m.item("team_to_downgrade"),
        m.item("team_to_delete"),
    );
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    ctx.control("bump-revision", &[&t.item_id])?;
    ctx.control(
        "downgrade-to-granted",
        &[&down.item_id, &m.person("member_a").address],
    )?;
    ctx.control("delete", &[&del.item_id])?;
    let first = format!("/s1/feed?cursor={}", encode_query(&head));
    pages_match_schema(
        ctx,
        &first,
        "s1-response",
        "the S1 feed after a revision, a downgrade and a deletion",
        |v| {
            (v["more"] == json!(true))
                .then(|| v["cursor"].as_str())
                .flatten()
                .map(|c| format!("/s1/feed?cursor={}", encode_query(c)))
        },
    )
}

fn s1_non_team_edits_unfed(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (_, head) = feed_all(ctx, ctx.token, None)?;
    let keys = ["private", "granted", "link_shared", "guest_only"];
    for k in keys {
        ctx.control("bump-revision", &[&m.item(k).item_id])?;
    }
    let (rows, _) = feed_all(ctx, ctx.token, Some(&head))?;
    let fed: Vec<String> = keys
        .iter()
        .filter(|k| {
            rows.iter()
                .any(|r| r["item_id"] == json!(m.item(k).item_id))
        })
        .map(|k| format!("{k} ({})", m.item(k).item_id))
        .collect();
    none_wrong(
        "no row for a new revision of an item that is not team-visible (private, granted, link-shared, guest-only)",
        &fed,
    )
}

/// The s1 cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
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
        "s1/rows-written-during-the-run-match-schema",
        Must,
        "§6.1, gate 3, contract S1",
        Control,
        "Every S1 page after a new revision, a downgrade and a deletion is valid against s1-response.schema.json, read from the earlier head: rows written during the run, not only the seeded ones.",
        s1_run_rows_match_schema
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
        "s1/non-team-edits-add-no-row",
        Must,
        "§6.1, §4.1 (custody), gate 3",
        Control,
        "A new revision of an item that is not team-visible (private, granted, link-shared, guest-only) adds no row to the feed.",
        s1_non_team_edits_unfed
    ),
    case!(
        "s1/pages-lose-no-row",
        Must,
        "§6.1",
        Control,
        "After 150 new revisions of one item, reading the feed page by page from the earlier head delivers a row for every one of them, one row per change (skipped if the feed never needs a second page).",
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
        "s1/more-false-only-when-nothing-is-left",
        Must,
        "§6.1, contract S1 (more)",
        Control,
        "A page says more: false only when no row is left behind its cursor, also when exactly one row is left past a full page.",
        s1_more_false_only_at_head
    ),
    case!(
        "s1/rows-in-log-order",
        Must,
        "§6.1 (the cursor is a position in the event log)",
        Control,
        "Rows come in the order their changes were made: three new revisions of one item arrive oldest first.",
        s1_rows_in_log_order
    ),
    case!(
        "s1/pages-hold-at-most-500-rows",
        Must,
        "§6.1, contract S1 (s1-response maxItems)",
        Control,
        "With 501 rows behind a cursor, no S1 page holds more than 500 rows: the rest wait behind more: true.",
        s1_pages_hold_at_most_500
    ),
    case!(
        "s1/rewound-cursor-410-after-the-log-regrows",
        Must,
        "§6.1",
        Control,
        "A cursor from before a whole-log restore still gets 410 {\"error\":\"reannounce_required\"} once the restored log has grown past its position.",
        s1_restored_cursor_410_once_regrown
    ),
    case!(
        "s1/rewound-cursor-410",
        Must,
        "§6.1",
        Control,
        "A cursor rewound by a whole-log restore gets 410 {\"error\":\"reannounce_required\"}.",
        s1_rewound_cursor
    ),
];
