//! The fake Sheets against `fixtures/contract/`: S3 serves a sheet's body, S6 answers the worked example byte for byte, custody and the grants join are S2's, verdicts come in their order, reformatting shows at once, every S6 knob bends the wire, and every call is traced (§6.1 S6, §8.7).

use axum::body::Body;
use http::{Request, StatusCode, header};
use memoria_simulator::{
    CallDetail, CallKind, Clock, FakeConfig, FakeSibling, ForcedS6, MalformedS6, ModelHandle,
    Outage, Revise, Rung, SubjectKind, Trace,
};
use serde_json::{Value, json};
use tower::ServiceExt as _;

const TOKEN: &str = "tok-memoria-1";
const ANA: &str = "ana@almendra.studio";
const BEA: &str = "bea@almendra.studio";
const GUS: &str = "gus@elsewhere.test";

fn contract(rel: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/contract")
            .join(rel),
    )
    .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A fake Sheets holding the worked example (team), plus a private, a
/// granted, a link-shared and a deleted copy of FY2024, and a team sheet
/// Bea has been removed from.
fn sheets() -> FakeSibling {
    let model = ModelHandle::new(Clock::manual().0);
    model.add_member(ANA, Some("prs_ana"));
    model.add_member(BEA, Some("prs_bea"));
    model.add_guest(GUS, Some("prs_gus"));
    model.with(|m| {
        m.add_worked_example().expect("the worked example");
        let fy2024 = memoria_simulator::worked_example().remove(0).1;
        let owner = Rung::Private {
            owner: ANA.to_owned(),
        };
        m.add_sheet("sh-private", owner, fy2024.clone())
            .expect("private");
        let granted = Rung::Granted {
            to: [ANA.to_owned()].into(),
        };
        m.add_sheet("sh-granted", granted, fy2024.clone())
            .expect("granted");
        m.add_sheet("sh-link", Rung::Team, fy2024.clone())
            .expect("link");
        m.set_link_shared("sh-link", true).expect("link");
        m.add_sheet("sh-deleted", Rung::Team, fy2024.clone())
            .expect("deleted");
        m.delete("sh-deleted").expect("deleted");
        m.add_sheet("sh-minus-bea", Rung::Team, fy2024)
            .expect("minus bea");
        m.set_removed("sh-minus-bea", BEA, true).expect("removed");
    });
    FakeSibling::new(
        FakeConfig {
            team: "almendra".to_owned(),
            app: "sheets".to_owned(),
            keys_on: SubjectKind::Address,
            tokens: vec![("memoria".to_owned(), TOKEN.to_owned())],
        },
        model,
        Trace::new(),
        Clock::manual().0,
    )
}

fn valid(schema: &str, body: &[u8]) -> Value {
    let value: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
        panic!(
            "{schema}: not JSON ({e}): {}",
            String::from_utf8_lossy(body)
        )
    });
    let errors: Vec<String> = memoria_contract::validator(schema)
        .expect("a contract schema")
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:?} in {value}");
    value
}

async fn raw(fake: &FakeSibling, path: &str, body: &str) -> (StatusCode, String) {
    let request = Request::post(path)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .expect("a request");
    let response = fake.router().oneshot(request).await.expect("an answer");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    (status, String::from_utf8(bytes.to_vec()).expect("UTF-8"))
}

/// `(sheet, row, col, revision)` on tab `P&L`.
type At<'a> = (&'a str, u32, u32, &'a str);

fn request(subject: &str, function: &str, cells: &[At<'_>]) -> String {
    let cells: Vec<Value> = cells
        .iter()
        .map(|(sheet, row, col, revision)| {
            json!({"sheet": sheet, "tab": "P&L", "row": row, "col": col, "revision": revision})
        })
        .collect();
    json!({"subject": {"kind": "address", "value": subject}, "fn": function, "cells": cells})
        .to_string()
}

/// S6 over `cells`, the answer checked against `s6-response`; the body.
async fn s6(fake: &FakeSibling, subject: &str, function: &str, cells: &[At<'_>]) -> String {
    let (status, body) = raw(fake, "/s6/aggregate", &request(subject, function, cells)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    valid("s6-response", body.as_bytes());
    body
}

const JUNE: [At<'static>; 3] = [
    ("sh-fy2024", 2, 7, "r1"),
    ("sh-fy2025", 2, 7, "r1"),
    ("sh-fy2026", 2, 7, "r1"),
];

#[tokio::test]
async fn average_june_revenue_over_the_worked_example_is_the_contract_example_byte_for_byte() {
    let fake = sheets();
    let example = contract("examples/s6-request--average-june-revenue.json");
    let (status, body) = raw(&fake, "/s6/aggregate", example.trim_end()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        contract("examples/s6-response--value.json").trim_end()
    );
    let count = contract("examples/s6-request--count-person-ref.json");
    let keyed_on_ref = {
        let f = sheets();
        let model = f.model();
        FakeSibling::new(
            FakeConfig {
                team: "almendra".into(),
                app: "sheets".into(),
                keys_on: SubjectKind::PersonRef,
                tokens: vec![("memoria".into(), TOKEN.into())],
            },
            model,
            Trace::new(),
            Clock::manual().0,
        )
    };
    let (_, body) = raw(&keyed_on_ref, "/s6/aggregate", count.trim_end()).await;
    assert_eq!(
        body,
        contract("examples/s6-response--value-count.json").trim_end()
    );
    let (_, body) = raw(&fake, "/s6/aggregate", count.trim_end()).await;
    assert_eq!(
        body,
        contract("examples/s6-response--unknown.json").trim_end(),
        "a kind not keyed on"
    );
}

#[tokio::test]
async fn s3_serves_a_sheet_as_its_media_type_with_a_body_the_sheet_schema_accepts() {
    let fake = sheets();
    let (status, body) = raw(
        &fake,
        "/s3/fetch",
        r#"{"item_id":"sh-fy2024","revision":"r1"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        contract("examples/s3-response--sheet.json").trim_end()
    );
    let s3 = valid("s3-response", body.as_bytes());
    valid(
        "sheet-body",
        s3["body"].as_str().expect("a body").as_bytes(),
    );
}

#[tokio::test]
async fn not_visible_is_byte_identical_whichever_cell_is_private_granted_link_shared_deleted_or_has_no_row()
 {
    let fake = sheets();
    let want = contract("examples/s6-response--not-visible.json");
    for hidden in [
        "sh-private",
        "sh-granted",
        "sh-link",
        "sh-deleted",
        "sh-no-row",
    ] {
        for at in 0..3 {
            let mut cells = JUNE.to_vec();
            cells[at].0 = hidden;
            let body = s6(&fake, ANA, "SUM", &cells).await;
            assert_eq!(body, want.trim_end(), "{hidden} at {at}");
        }
    }
    // The grants join: Bea was removed from one team sheet, a guest sees no team sheet.
    let minus = [("sh-minus-bea", 2, 7, "r1")];
    assert!(s6(&fake, ANA, "SUM", &minus).await.contains("VALUE"));
    assert_eq!(s6(&fake, BEA, "SUM", &minus).await, want.trim_end());
    assert_eq!(s6(&fake, GUS, "SUM", &JUNE).await, want.trim_end());
    assert_eq!(
        s6(&fake, "nobody@almendra.studio", "SUM", &JUNE).await,
        want.trim_end()
    );
}

#[tokio::test]
async fn verdicts_come_in_order_not_visible_then_the_first_stale_cell_then_the_first_non_numeric_cell()
 {
    let fake = sheets();
    fake.model()
        .revise("sh-fy2025", "FY2025", "")
        .expect("a bump");
    let dec = ("sh-fy2026", 2, 13, "r1");
    let label = ("sh-fy2026", 2, 1, "r1");
    let stale = r#"{"subject_kind":"address","result":{"type":"STALE","cell":{"sheet":"sh-fy2025","tab":"P&L","row":2,"col":7}}}"#;
    assert_eq!(
        s6(&fake, ANA, "AVERAGE", &[dec, JUNE[1], JUNE[0]]).await,
        stale
    );
    let mut hidden = JUNE.to_vec();
    hidden.push(("sh-private", 2, 7, "r1"));
    hidden.push(dec);
    assert!(
        s6(&fake, BEA, "AVERAGE", &hidden)
            .await
            .contains("NOT_VISIBLE")
    );
    let non_numeric = |col| {
        format!(
            r#"{{"subject_kind":"address","result":{{"type":"NON_NUMERIC","cell":{{"sheet":"sh-fy2026","tab":"P&L","row":2,"col":{col}}}}}}}"#
        )
    };
    assert_eq!(
        s6(&fake, ANA, "SUM", &[JUNE[0], dec, label]).await,
        non_numeric(13)
    );
    assert_eq!(s6(&fake, ANA, "COUNT", &[label, dec]).await, non_numeric(1));
    let off_grid = ("sh-fy2026", 99, 99, "r1");
    assert!(
        s6(&fake, ANA, "MAX", &[off_grid])
            .await
            .contains(r#""row":99"#)
    );
}

#[tokio::test]
async fn a_reformat_shows_at_once_in_place_keeping_the_revision_or_as_a_new_revision_making_the_old_one_stale()
 {
    let fake = sheets();
    let eur = r#""display":"€1,350,000","format_code":"€#,##0""#;
    assert!(s6(&fake, ANA, "AVERAGE", &JUNE).await.contains(eur));
    // In place: same revision, new format. Never cached: the next call sees it.
    let same = fake
        .model()
        .with(|m| m.reformat_cell("sh-fy2024", "P&L", (2, 7), Some("k€#,##0"), Revise::InPlace))
        .expect("reformatted");
    assert_eq!(same, "r1");
    let after = s6(&fake, ANA, "AVERAGE", &JUNE).await;
    assert!(
        after.contains(r#""display":"k€1,350,000","format_code":"k€#,##0""#),
        "{after}"
    );
    // A column at a new revision: the old revision is STALE, the new one answers.
    let new = fake
        .model()
        .with(|m| m.reformat_column("sh-fy2025", "P&L", 7, Some("#,##0,"), Revise::New))
        .expect("reformatted");
    assert_eq!(new, "r2");
    assert!(s6(&fake, ANA, "SUM", &[JUNE[1]]).await.contains("STALE"));
    let fresh = s6(&fake, ANA, "SUM", &[("sh-fy2025", 2, 7, "r2")]).await;
    assert!(
        fresh.contains(r##""value":"1400000","display":"1,400","format_code":"#,##0,""##),
        "{fresh}"
    );
    let (status, _) = raw(
        &fake,
        "/s3/fetch",
        r#"{"item_id":"sh-fy2025","revision":"r2"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    // A new value at a new revision.
    let r3 = fake
        .model()
        .with(|m| m.set_cell("sh-fy2025", "P&L", (2, 7), "1500000"))
        .expect("set");
    assert!(
        s6(&fake, ANA, "SUM", &[("sh-fy2025", 2, 7, r3.as_str())])
            .await
            .contains(r#""value":"1500000""#)
    );
}

#[tokio::test]
async fn every_refused_request_in_the_contract_table_gets_its_status_and_error() {
    let fake = sheets();
    let table: Value = serde_json::from_str(&contract("s6-refused-requests.json")).expect("JSON");
    for r in table["requests"].as_array().expect("requests") {
        let (status, body) = raw(&fake, "/s6/aggregate", r["body"].as_str().expect("a body")).await;
        assert_eq!(
            u64::from(status.as_u16()),
            r["status"].as_u64().expect("a status"),
            "{}",
            r["name"]
        );
        let error = valid("error", body.as_bytes());
        assert_eq!(error["error"], r["error"], "{}", r["name"]);
    }
    let cap: Vec<At<'_>> = (0..64)
        .map(|i| ("sh-fy2024", 2 + i % 4, 2 + i / 4 % 12, "r1"))
        .collect();
    assert!(
        s6(&fake, ANA, "COUNT", &cap)
            .await
            .contains(r#""value":"64""#)
    );
}

#[tokio::test]
async fn each_s6_knob_bends_the_answer_and_the_trace_records_every_call_without_content() {
    let fake = sheets();
    let faults = fake.faults();
    let body = request(ANA, "AVERAGE", &JUNE);
    faults.set_forced_s6(Some(ForcedS6::Stale));
    assert!(
        s6(&fake, ANA, "AVERAGE", &JUNE)
            .await
            .contains(r#""type":"STALE","cell":{"sheet":"sh-fy2024""#)
    );
    assert!(
        s6(&fake, GUS, "AVERAGE", &JUNE)
            .await
            .contains("NOT_VISIBLE"),
        "never over custody"
    );
    faults.set_forced_s6(Some(ForcedS6::NonNumeric));
    assert!(
        s6(&fake, ANA, "AVERAGE", &JUNE)
            .await
            .contains("NON_NUMERIC")
    );
    faults.set_forced_s6(None);
    let table = [
        (MalformedS6::NotJson, "<html>ok</html>"),
        (MalformedS6::Empty, ""),
        (MalformedS6::UnknownType, r#""type":"PERHAPS""#),
        (MalformedS6::KindMismatch, r#""subject_kind":"person_ref""#),
        (MalformedS6::ValueAsNumber, r#""value":1350000,"#),
        (MalformedS6::ExtraField, r#""formula":"=SUM()"}}"#),
        (MalformedS6::TrailingBytes, "}}{}"),
    ];
    for (knob, shows) in table {
        faults.set_malformed_s6(Some(knob));
        let (status, text) = raw(&fake, "/s6/aggregate", &body).await;
        assert_eq!(status, StatusCode::OK, "{knob:?}");
        assert!(text.contains(shows), "{knob:?}: {text}");
        let parsed: Result<Value, _> = serde_json::from_str(&text);
        let ok = parsed.ok().is_some_and(|v| {
            memoria_contract::validator("s6-response").is_some_and(|s| s.is_valid(&v))
        });
        assert!(
            !ok || knob == MalformedS6::KindMismatch,
            "{knob:?} is still the schema"
        );
    }
    faults.set_malformed_s6(Some(MalformedS6::Truncated));
    let (_, text) = raw(&fake, "/s6/aggregate", &body).await;
    assert!(serde_json::from_str::<Value>(&text).is_err());
    faults.set_malformed_s6(None);
    faults.set_outage_for(Some(Outage::Status(503)), Some(CallKind::S6));
    assert_eq!(
        raw(&fake, "/s6/aggregate", &body).await.0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(
        raw(
            &fake,
            "/s3/fetch",
            r#"{"item_id":"sh-fy2024","revision":"r1"}"#
        )
        .await
        .0,
        StatusCode::OK,
        "S6 down, S3 up"
    );
    let trace = fake.trace().render();
    assert!(
        !trace.contains("P&L") && !trace.contains("1350000") && !trace.contains(ANA),
        "{trace}"
    );
    let s6_calls: Vec<_> = fake
        .trace()
        .events()
        .into_iter()
        .filter(|e| e.call == CallKind::S6)
        .collect();
    assert_eq!(s6_calls.len(), 12);
    assert!(matches!(
        &s6_calls[0].detail,
        CallDetail::S6 { function: Some(f), cells, result: Some(r), subject: Some(who), .. }
            if f == "AVERAGE" && cells.len() == 3 && r == "STALE" && who == "member-1"
    ));
}

#[tokio::test]
async fn a_public_statistics_table_becomes_a_sheet_s6_can_aggregate() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/corpus/sheets-stats/us-employment.csv");
    let Ok(csv) = std::fs::read_to_string(&path) else {
        println!(
            "skipped: {} is absent; run fixtures/corpus/fetch-sheets-stats to fetch it",
            path.display()
        );
        return;
    };
    let sheet = memoria_simulator::sheet::sheet_from_monthly_csv("US employment", &csv, "#,##0")
        .expect("the BLS table is a monthly table of decimals");
    assert_eq!(sheet.tabs.first().map(|t| t.name.as_str()), Some("2006"));
    assert_eq!(sheet.tabs.len(), 10, "2006..2015");
    let fake = sheets();
    fake.model()
        .with(|m| m.add_sheet("sh-bls", Rung::Team, sheet))
        .expect("added");
    // June nonfarm employment, 2006..2008: column 7 of row 2 on three tabs.
    let cells: Vec<Value> = ["2006", "2007", "2008"]
        .iter()
        .map(|tab| json!({"sheet": "sh-bls", "tab": tab, "row": 2, "col": 7, "revision": "r1"}))
        .collect();
    let body =
        json!({"subject": {"kind": "address", "value": ANA}, "fn": "AVERAGE", "cells": cells});
    let (status, answer) = raw(&fake, "/s6/aggregate", &body.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let answer = valid("s6-response", answer.as_bytes());
    // An independent reading of the same three numbers, in the test only.
    let june: Vec<f64> = csv
        .lines()
        .filter(|l| {
            l.starts_with("2006-06") || l.starts_with("2007-06") || l.starts_with("2008-06")
        })
        .map(|l| {
            l.split(',')
                .nth(1)
                .and_then(|v| v.parse().ok())
                .expect("a nonfarm figure")
        })
        .collect();
    assert_eq!(june.len(), 3);
    let mean = june.iter().sum::<f64>() / 3.0;
    let display = answer["result"]["display"]
        .as_str()
        .expect("a VALUE's display");
    assert_eq!(
        display.replace(',', "").parse::<f64>().ok(),
        Some(mean.round()),
        "{answer}"
    );
    assert_eq!(answer["result"]["format_code"], "#,##0");
}

#[tokio::test(start_paused = true)]
async fn the_control_route_drives_reformats_and_each_s6_fault_and_slow_delays_only_s6() {
    let fake = sheets();
    let control = memoria_simulator::Controller::new(fake.clone(), vec![]);
    let apply = |action: &str, args: &[&str]| {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        control.apply(action, &args)
    };
    assert_eq!(
        apply(
            "reformat-column",
            &["sh-fy2024", "P&L", "7", "0.0%", "same"]
        ),
        Ok(Some("r1".to_owned()))
    );
    assert_eq!(
        apply(
            "reformat-cell",
            &["sh-fy2025", "P&L", "2", "7", "General", "new"]
        ),
        Ok(Some("r2".to_owned()))
    );
    assert_eq!(
        apply("set-cell", &["sh-fy2026", "P&L", "2", "13", "1500000"]),
        Ok(Some("r2".to_owned()))
    );
    assert!(
        apply(
            "reformat-cell",
            &["sh-fy2024", "P&L", "99", "1", "0", "same"]
        )
        .is_err()
    );
    assert!(
        apply(
            "reformat-cell",
            &["sh-fy2024", "Nope", "2", "2", "0", "same"]
        )
        .is_err()
    );
    let june = s6(&fake, ANA, "SUM", &[JUNE[0]]).await;
    assert!(june.contains(r#""display":"135000000.0%""#), "{june}");
    for (knob, shows) in [
        (&["stale"][..], "STALE"),
        (&["non-numeric"][..], "NON_NUMERIC"),
        (&["malformed", "unknown-type"][..], "PERHAPS"),
    ] {
        assert_eq!(apply("s6-fault", knob), Ok(None));
        let (_, body) = raw(&fake, "/s6/aggregate", &request(ANA, "SUM", &[JUNE[0]])).await;
        assert!(body.contains(shows), "{knob:?}: {body}");
        assert_eq!(apply("s6-fault", &["off"]), Ok(None));
    }
    assert_eq!(apply("s6-fault", &["down"]), Ok(None));
    assert_eq!(
        raw(&fake, "/s6/aggregate", &request(ANA, "SUM", &[JUNE[0]]))
            .await
            .0,
        StatusCode::SERVICE_UNAVAILABLE
    );
    assert_eq!(apply("s6-fault", &["off"]), Ok(None));
    assert_eq!(apply("s6-fault", &["slow", "1500"]), Ok(None));
    let t0 = tokio::time::Instant::now();
    let _ = raw(
        &fake,
        "/s3/fetch",
        r#"{"item_id":"sh-fy2024","revision":"r1"}"#,
    )
    .await;
    assert!(
        t0.elapsed() < std::time::Duration::from_millis(1500),
        "S3 is not slowed"
    );
    let t1 = tokio::time::Instant::now();
    assert_eq!(
        raw(&fake, "/s6/aggregate", &request(ANA, "SUM", &[JUNE[0]]))
            .await
            .0,
        StatusCode::OK,
        "up again, slowly"
    );
    assert!(t1.elapsed() >= std::time::Duration::from_millis(1500));
    assert_eq!(apply("s6-fault", &["off"]), Ok(None));
    assert!(apply("s6-fault", &["malformed", "nonsense"]).is_err());
}
