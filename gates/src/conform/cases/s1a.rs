//! S1a (§6.1, §4.1 rule 2): an announce opens first, carries every team-visible item once, closes with its count and the new cursor, and matches its schema.

use serde_json::Value;

use super::PAGES_MAX;
use super::wire::{Outcome, body_text, call_failed, fail, pages_match_schema};
use crate::conform::client::{Auth, encode_query};
use crate::conform::{ConformCase, Ctx, NotPassed};

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

fn s1a_pages_match_schema(ctx: &mut Ctx<'_>) -> Outcome {
    pages_match_schema(ctx, "/s1a/announce", "s1a-page", "the S1a announce", |v| {
        v["next_page"]
            .as_str()
            .map(|p| format!("/s1a/announce?page={}", encode_query(p)))
    })
}

/// The s1a cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
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
];
