//! Gate 3 (§10, §6.1): S1 feed rows carry no content and no visibility flag.
//!
//! Presence first: a fake Sheets stocked with real text and two canary items
//! feeds memoria, whose warm-up ingests them (they become searchable). Then
//! the raw S1 bytes, fetched with memoria's own token, hold rows for every
//! item and each row is exactly (item_id, revision, gone, touched_at): no
//! canary title or body word, no fifth field. And memoria's side: a row
//! with a visibility flag or a title is refused by its decoder and by the
//! contract schema, never half-read.

use bytes::Bytes;
use http_body_util::Full;
use memoria::exchange;
use memoria::wire::{self, FeedError};
use memoria_simulator::{OWNERS, Rung, SIBLING_PORT, SiblingSpec, TurmoilDialer, World};
use rand::Rng as _;

use crate::rigs::sim::{check, run_world, stock, tagged_body};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 3.
pub static GATE: Gate = Gate {
    id: "3",
    title: "Feed rows carry no content and no visibility flag",
    gates_md: &["Feed rows (S1) carry no content and no visibility flag"],
    sections: &["§10", "§6.1"],
    requirement: "Every S1 row is exactly (item_id, revision, gone, touched_at): no title, no content, no visibility flag; memoria refuses a row that carries more.",
    cases: &[
        Case {
            id: "3/rows-are-four-fields",
            desc: "Stock Sheets with real text and two canary items, delete one item and take another out of the team; memoria's warm-up makes the canaries searchable (presence); the raw S1 answer holds a row per item and gone rows for both departures, each row with exactly the four fields, and no canary word anywhere in its bytes.",
            run: rows_are_four_fields,
        },
        Case {
            id: "3/memoria-refuses-a-leaky-row",
            desc: "Decode S1 answers whose row carries a visibility flag, a title, a body, a snippet, an owner or any of eight random field names: each is refused as malformed, and a clean row decodes (presence).",
            run: memoria_refuses_a_leaky_row,
        },
    ],
};

const FIELDS: [&str; 4] = ["item_id", "revision", "gone", "touched_at"];

fn rows_are_four_fields(ctx: &mut Ctx) -> Result<(), Failure> {
    let (title_canary, body_canary) = (ctx.canary(), ctx.canary());
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    let stocked = stock(&world, "sheets", 20);
    world.fake("sheets").model().with(|m| {
        // Gone rows too: one deletion and one departure from team-visibility.
        m.delete("sheets-c0").expect("delete");
        m.set_rung(
            "sheets-c1",
            Rung::Granted {
                to: [OWNERS[0].to_string()].into(),
            },
        )
        .expect("downgrade");
        m.add_item(
            "sh-x",
            Rung::Team,
            &format!("Salaries {title_canary}"),
            &tagged_body(&body_canary, "tagx"),
        )
        .expect("item");
        m.add_item(
            "sh-y",
            Rung::Team,
            &format!("Payroll {title_canary}"),
            &tagged_body(&body_canary, "tagy"),
        )
        .expect("item");
    });
    let host = SiblingSpec::own("sheets").host();
    let token = world.token(&host).to_string();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let page = m.search(OWNERS[0], &body_canary).await.response.body;
        check(
            page.contains("tagx") && page.contains("tagy"),
            "both canary items were fed, fetched and are searchable (presence)",
            "one is missing",
        )?;
        let req = http::Request::builder()
            .uri("/s1/feed")
            .header(http::header::HOST, host.as_str())
            .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let r = exchange(&TurmoilDialer, &host, SIBLING_PORT, req)
            .await
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&r.body).to_string();
        let json: serde_json::Value =
            serde_json::from_slice(&r.body).map_err(|e| format!("S1 is not JSON: {e}"))?;
        let rows = json["rows"].as_array().cloned().unwrap_or_default();
        check(
            rows.len() > stocked,
            format!("a row for each of the {} items (presence)", stocked + 2),
            format!("{} rows", rows.len()),
        )?;
        let gone = rows
            .iter()
            .filter(|r| r["gone"] == serde_json::Value::Bool(true))
            .count();
        check(
            gone >= 2,
            "gone rows for the deletion and the departure (presence)",
            format!("{gone} gone rows"),
        )?;
        for row in &rows {
            let keys: Vec<&str> = row
                .as_object()
                .map(|o| o.keys().map(String::as_str).collect())
                .unwrap_or_default();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            let mut want = FIELDS.to_vec();
            want.sort_unstable();
            check(
                sorted == want,
                format!("every row has exactly {FIELDS:?}"),
                format!("a row has {keys:?}"),
            )?;
        }
        for (what, word) in [("title", &title_canary), ("body", &body_canary)] {
            check(
                !text.contains(word.as_str()),
                format!("no {what} canary in the S1 bytes"),
                "it is there",
            )?;
        }
        Ok(())
    })
}

fn memoria_refuses_a_leaky_row(ctx: &mut Ctx) -> Result<(), Failure> {
    let row = |extra: &str| {
        format!(
            r#"{{"cursor":"c","more":false,"rows":[{{"item_id":"a","revision":"1","gone":false,"touched_at":"2026-11-30T09:00:00Z"{extra}}}]}}"#
        )
    };
    let clean = wire::decode_s1(200, row("").as_bytes());
    ensure(
        clean.as_ref().is_ok_and(|p| p.rows.len() == 1),
        "a clean row decodes (presence)",
        format!("{clean:?}"),
    )?;
    let mut extras: Vec<String> = [
        r#","visible_to_team":true"#,
        r#","visible":false"#,
        r#","title":"Salaries""#,
        r#","body":"x""#,
        r#","snippet":"x""#,
        r#","summary":"x""#,
        r#","shared_with":["a@b"]"#,
        r#","acl":null"#,
        r#","owner":"ana@acme.test""#,
        r#","team":true"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // And names nobody thought of: any field beyond the four is refused.
    for _ in 0..8 {
        let len = ctx.rng().gen_range(1..12);
        let name: String = (0..len)
            .map(|_| (b'a' + ctx.rng().gen_range(0..26u8)) as char)
            .collect();
        if !FIELDS.contains(&name.as_str()) {
            extras.push(format!(r#","{name}":0"#));
        }
    }
    for extra in &extras {
        let got = wire::decode_s1(200, row(extra).as_bytes());
        ensure(
            matches!(got, Err(FeedError::Malformed(_))),
            format!("a row with {extra} is refused as malformed"),
            format!("{got:?}"),
        )?;
    }
    Ok(())
}
