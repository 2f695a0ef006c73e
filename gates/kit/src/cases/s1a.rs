//! S1a (§6.1, §4.1 rule 2): an announce opens first, carries every team-visible item once at its current revision (after a partial restore, a change mid-announce, or with no team item at all), closes with its count and the new cursor (which leaves no change made mid-announce behind), skips no item when one is removed mid-announce, keeps its page tokens apart from S1 cursors, and matches its schema.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::wire::{
    Outcome, announce_all, announce_from, announce_page, call_failed, fail, items_of, none_wrong,
    pages_match_schema, record_type,
};
use crate::client::{Auth, encode_query};
use crate::{ConformCase, Ctx, NotPassed};

/// The close records' counts, and whether the last record is a close.
fn closes(all: &[&Value]) -> (Vec<Option<u64>>, bool) {
    let counts = all
        .iter()
        .filter(|r| record_type(r) == "close")
        .map(|r| r["count"].as_u64())
        .collect();
    (
        counts,
        all.last().is_some_and(|r| record_type(r) == "close"),
    )
}

/// What is wrong with an announce's records `all` against `expected` (an
/// item id and the revisions it may carry): each expected item announced
/// exactly once at one of them, and one close, last, counting the item
/// records (§4.1 rule 2).
fn announced_once(all: &[&Value], expected: &[(&str, Vec<&str>)]) -> Vec<String> {
    let got = items_of(all.iter().copied());
    let mut per_item: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (i, r) in &got {
        per_item.entry(i.as_str()).or_default().push(r.as_str());
    }
    let mut wrong = Vec::new();
    for (id, allowed) in expected {
        match per_item.get(id).map(Vec::as_slice) {
            Some([one]) if allowed.contains(one) => {}
            other => wrong.push(format!("{id}: {other:?}")),
        }
    }
    let (counts, last_is_close) = closes(all);
    if counts != [u64::try_from(got.len()).ok()] || !last_is_close {
        wrong.push(format!(
            "close counts {counts:?} for {} item records, last record a close: {last_is_close}",
            got.len()
        ));
    }
    wrong
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

fn s1a_after_partial_restore(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let h = m.item("team_history");
    let n = h.revisions.len();
    if n < 2 {
        return Err(fail(
            "team_history has two revisions or more",
            format!("{n}"),
        ));
    }
    let back_to = h.revisions[n - 2].as_str();
    ctx.control("partial-restore", &[&h.item_id, back_to])?;
    let pages = announce_all(ctx)?;
    let got = items_of(pages.iter().flatten());
    let history: Vec<&String> = got
        .iter()
        .filter(|(i, _)| *i == h.item_id)
        .map(|(_, r)| r)
        .collect();
    if history == [back_to] {
        Ok(())
    } else {
        Err(fail(
            format!(
                "one item record for {} at {back_to}, the revision a partial restore made current ({} was dropped)",
                h.item_id,
                h.current()
            ),
            format!("its item records' revisions: {history:?}"),
        ))
    }
}

fn s1a_page_token_not_cursor(ctx: &mut Ctx<'_>) -> Outcome {
    let (_, tokens) = announce_from(ctx, None)?;
    if tokens.is_empty() {
        return Err(NotPassed::Skip(
            "the announce fits in one page, so it issued no page token".into(),
        ));
    }
    let mut wrong = Vec::new();
    for (n, token) in tokens.iter().enumerate() {
        let r = ctx
            .client
            .get(
                &format!("/s1/feed?cursor={}", encode_query(token)),
                Auth::Bearer(ctx.token),
            )
            .map_err(|e| call_failed("GET /s1/feed", &e))?;
        if r.status == 200 {
            wrong.push(format!("page token {} -> 200", n + 1));
        }
    }
    none_wrong(
        "no S1 read accepted from an announce's page token: the close record is the only place an S1 cursor appears",
        &wrong,
    )
}

fn s1a_change_mid_announce(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (first, next) = announce_page(ctx, None)?;
    let Some(next) = next else {
        return Err(NotPassed::Skip(
            "the announce fits in one page, so nothing can change mid-announce".into(),
        ));
    };
    let seen: BTreeSet<String> = items_of(&first).into_iter().map(|(i, _)| i).collect();
    let Some(unseen) = m
        .items
        .iter()
        .find(|i| i.team_visible() && !seen.contains(&i.item_id))
    else {
        return Err(NotPassed::Skip(
            "every team-visible item came on the first page".into(),
        ));
    };
    // One item already announced and one not yet: a list cut live, in
    // whatever order (most or least recently touched first, say), moves
    // one of them across the page already read, and an item is skipped.
    let announced = m
        .items
        .iter()
        .find(|i| i.team_visible() && seen.contains(&i.item_id));
    let mut new_revisions: BTreeMap<&str, String> = BTreeMap::new();
    for changed in announced.into_iter().chain([unseen]) {
        let new = ctx
            .control("bump-revision", &[&changed.item_id])?
            .ok_or_else(|| {
                fail(
                    "bump-revision prints the new revision",
                    "it printed nothing",
                )
            })?;
        new_revisions.insert(changed.item_id.as_str(), new);
    }
    let (rest, _) = announce_from(ctx, Some(next))?;
    let all: Vec<&Value> = first.iter().chain(rest.iter().flatten()).collect();
    let expected: Vec<(&str, Vec<&str>)> = m
        .items
        .iter()
        .filter(|i| i.team_visible())
        .map(|i| {
            let mut allowed = vec![i.current()];
            allowed.extend(new_revisions.get(i.item_id.as_str()).map(String::as_str));
            (i.item_id.as_str(), allowed)
        })
        .collect();
    let wrong = announced_once(&all, &expected);
    let changed: Vec<&str> = new_revisions.keys().copied().collect();
    none_wrong(
        format!(
            "with {changed:?} changed after the first page was read (one already announced, one not yet), every team-visible item exactly once (at its revision at open, or its new one), and a close counting the item records (§4.1 rule 2: an announce is a complete statement; an item it skips is retired by the consumer, rule 3)"
        ),
        &wrong,
    )
}

fn s1a_removal_mid_announce(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let (first, next) = announce_page(ctx, None)?;
    let Some(next) = next else {
        return Err(NotPassed::Skip(
            "the announce fits in one page, so nothing can change mid-announce".into(),
        ));
    };
    let seen: BTreeSet<String> = items_of(&first).into_iter().map(|(i, _)| i).collect();
    // An item the first page already carried, removed before the rest is
    // read: a sibling paging by offset into its live list, rather than into
    // the statement fixed at open, shifts every later item back by one
    // place and skips the item that crosses the page boundary. Its count
    // still agrees with what it sent, so only the item set shows it.
    let Some(removed) = m
        .items
        .iter()
        .find(|i| i.team_visible() && seen.contains(&i.item_id))
    else {
        return Err(NotPassed::Skip(
            "the first page carries no team-visible item of the manifest".into(),
        ));
    };
    if !m
        .items
        .iter()
        .any(|i| i.team_visible() && !seen.contains(&i.item_id))
    {
        return Err(NotPassed::Skip(
            "every team-visible item came on the first page".into(),
        ));
    }
    ctx.control("delete", &[&removed.item_id])?;
    let (rest, _) = announce_from(ctx, Some(next))?;
    let all: Vec<&Value> = first.iter().chain(rest.iter().flatten()).collect();
    let expected: Vec<(&str, Vec<&str>)> = m
        .items
        .iter()
        .filter(|i| i.team_visible() && i.item_id != removed.item_id)
        .map(|i| (i.item_id.as_str(), vec![i.current()]))
        .collect();
    let wrong = announced_once(&all, &expected);
    none_wrong(
        format!(
            "with {} (carried on the first page) deleted before the rest was read, every other team-visible item exactly once at its current revision, and a close counting the item records (§4.1 rule 2: the announce is the statement made when it opened; an item it skips is retired by the consumer though still team-visible, rule 3)",
            removed.item_id
        ),
        &wrong,
    )
}

fn s1a_close_cursor_leaves_nothing_behind(ctx: &mut Ctx<'_>) -> Outcome {
    let (first, next) = announce_page(ctx, None)?;
    let Some(next) = next else {
        return Err(NotPassed::Skip(
            "the announce fits in one page, so nothing can change mid-announce".into(),
        ));
    };
    let Some((changed, _)) = items_of(&first).into_iter().next() else {
        return Err(NotPassed::Skip(
            "the first page carries no item record".into(),
        ));
    };
    let new = ctx.control("bump-revision", &[&changed])?.ok_or_else(|| {
        fail(
            "bump-revision prints the new revision",
            "it printed nothing",
        )
    })?;
    let (rest, _) = announce_from(ctx, Some(next))?;
    let all: Vec<&Value> = first.iter().chain(rest.iter().flatten()).collect();
    let cursor = all
        .iter()
        .rev()
        .find(|r| record_type(r) == "close")
        .and_then(|r| r["cursor"].as_str())
        .ok_or_else(|| fail("a cursor in the close record", "none"))?
        .to_owned();
    let announced_new = items_of(all.iter().copied())
        .iter()
        .any(|(i, r)| *i == changed && *r == new);
    let (rows, _) = super::wire::feed_all(ctx, ctx.token, Some(&cursor))?;
    let fed_new = rows
        .iter()
        .any(|r| r["item_id"].as_str() == Some(&changed) && r["revision"].as_str() == Some(&new));
    if announced_new || fed_new {
        Ok(())
    } else {
        Err(fail(
            format!(
                "({changed}, {new}), made after the announce's first page was read, either announced or read from S1 after the close record's cursor (the cursor is the log head when the announce opened, §6.1)"
            ),
            format!(
                "neither: the announce carried another revision, and S1 from its cursor read {} rows, none for it",
                rows.len()
            ),
        ))
    }
}

fn s1a_empty_team_set(ctx: &mut Ctx<'_>) -> Outcome {
    ctx.control("empty-team-set", &[])?;
    let pages = announce_all(ctx)?;
    let all: Vec<&Value> = pages.iter().flatten().collect();
    let types: Vec<&str> = all.iter().map(|r| record_type(r)).collect();
    let (counts, _) = closes(&all);
    if types != ["open", "close"] || counts != [Some(0)] {
        return Err(fail(
            "an announce of an empty team set is an open record and a close record with count 0",
            format!("records {types:?}, close counts {counts:?}"),
        ));
    }
    let cursor = all
        .last()
        .and_then(|r| r["cursor"].as_str())
        .ok_or_else(|| fail("a cursor in the close record", "none"))?;
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
            "200 on S1 from the empty announce's close cursor",
            format!("status {}", r.status),
        ))
    }
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
    case!(
        "s1a/partial-restore-announces-restored-revision",
        Must,
        "§6.1, §4.1 (AHEAD, rule 4)",
        Control,
        "After a partial restore rewinds a team item's log, the announce carries the item at the revision the restore made current, never the dropped one.",
        s1a_after_partial_restore
    ),
    case!(
        "s1a/page-token-is-not-a-cursor",
        Must,
        "§6.1, contract S1a",
        Nothing,
        "No announce page token is accepted by S1 as a cursor: the close record is the only place the new cursor appears (skipped if the announce fits in one page).",
        s1a_page_token_not_cursor
    ),
    case!(
        "s1a/change-mid-announce-skips-nothing",
        Must,
        "§6.1, §4.1 rule 2",
        Control,
        "Two items changed after the announce's first page was read, one it carried and one it had not yet reached, are each announced exactly once, every other team-visible item too, and the close counts the item records (skipped if the announce fits in one page).",
        s1a_change_mid_announce
    ),
    case!(
        "s1a/removal-mid-announce-skips-nothing",
        Must,
        "§6.1, §4.1 rules 2 and 3",
        Control,
        "An item the first page carried, deleted before the rest of the announce is read, shifts nothing: every other team-visible item is announced exactly once at its current revision, and the close counts the item records (catches pages cut as offsets into the live item list; skipped if the announce fits in one page).",
        s1a_removal_mid_announce
    ),
    case!(
        "s1a/empty-team-set-closes-with-zero",
        Must,
        "§6.1, §4.1 rule 2",
        Control,
        "With no team-visible item, an announce is an open record and a close record with count 0 whose cursor S1 accepts.",
        s1a_empty_team_set
    ),
    case!(
        "s1a/close-cursor-leaves-no-change-behind",
        Must,
        "§6.1, §4.1 rule 2",
        Control,
        "A change made while an announce is in flight is in the announce or after its close cursor: an item changed once the first page was read is announced at its new revision, or S1 from the close record's cursor reads that revision's row (skipped if the announce fits in one page).",
        s1a_close_cursor_leaves_nothing_behind
    ),
];
