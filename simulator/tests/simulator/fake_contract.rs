//! The fake sibling against `fixtures/contract/`: every response it sends validates, every request example decodes, and each state and fault knob shows on the wire (§4.1, §6.1, §6.2, §6.5).
//!
//! Size: one row per contract example and fault knob; the rows share one
//! served fake, so splitting them would serve it per file.

use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::{Request, StatusCode, header};
use memoria_simulator::wire::{
    ErrorBody, S1Response, S1aPage, S1aRecord, S2Request, S2Response, S3Request, S3Response,
    S6Request, S6Response, SheetBody, to_compact,
};
use memoria_simulator::{
    CallDetail, CallKind, Clock, Cold, FakeConfig, FakeSibling, Lie, MalformedS2, ModelHandle,
    Outage, Redirect, RefuseConnection, Rung, Slow, SubjectKind, Trace, TruncateAnnounce, rfc3339,
};
use serde_json::Value;
use tower::ServiceExt as _;

const TOKEN: &str = "tok-memoria-1";
const ANA: &str = "ana@acme.test";
const BEA: &str = "bea@acme.test";
const GUS: &str = "gus@elsewhere.test";
const NOBODY: &str = "nobody@acme.test";

fn contract_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/contract")
}

fn assert_valid(schema: &str, body: &[u8]) {
    let value: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
        panic!(
            "{schema}: not JSON ({e}): {}",
            String::from_utf8_lossy(body)
        )
    });
    let errors: Vec<String> = memoria_contract::validator(schema)
        .unwrap_or_else(|| panic!("{schema} is not a contract schema"))
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{schema}: {errors:?} in {value}");
    // Compact: serde_json's own compact form of the same value (keys
    // re-sorted, so compare lengths) is exactly as long.
    assert_eq!(
        serde_json::to_vec(&value).unwrap().len(),
        body.len(),
        "{schema}: not compact"
    );
}

fn fake_keyed_on(keys_on: SubjectKind) -> FakeSibling {
    let model = ModelHandle::new(Clock::manual().0);
    model.add_member(ANA, Some("prs_ana"));
    model.add_member(BEA, Some("prs_bea"));
    model.add_guest(GUS, Some("prs_gus"));
    FakeSibling::new(
        FakeConfig {
            team: "acme".to_owned(),
            app: "sheets".to_owned(),
            keys_on,
            tokens: vec![("memoria".to_owned(), TOKEN.to_owned())],
        },
        model,
        Trace::new(),
        Clock::manual().0,
    )
}

fn fake() -> FakeSibling {
    fake_keyed_on(SubjectKind::Address)
}

struct Answer {
    status: StatusCode,
    body: Bytes,
    location: Option<String>,
    refused: bool,
}

impl Answer {
    fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

fn get(path: &str) -> Request<Body> {
    Request::get(path)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap()
}

fn post(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

/// Sends without validating: for answers a fault deliberately breaks.
async fn send_raw(fake: &FakeSibling, request: Request<Body>) -> Answer {
    let response = fake.router().oneshot(request).await.unwrap();
    let status = response.status();
    let location = response
        .headers()
        .get(header::LOCATION)
        .map(|v| v.to_str().unwrap().to_owned());
    let refused = response.extensions().get::<RefuseConnection>().is_some();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        body,
        location,
        refused,
    }
}

/// Sends and validates the answer against its schema.
async fn send(fake: &FakeSibling, request: Request<Body>) -> Answer {
    let path = request.uri().path().to_owned();
    let answer = send_raw(fake, request).await;
    if answer.status == StatusCode::OK {
        let schema = match path.as_str() {
            "/s1/feed" => "s1-response",
            "/s1a/announce" => "s1a-page",
            "/s2/check" => "s2-response",
            "/s3/fetch" => "s3-response",
            other => panic!("unexpected path {other}"),
        };
        assert_valid(schema, &answer.body);
    } else if !answer.refused && answer.status != StatusCode::TEMPORARY_REDIRECT {
        assert_valid("error", &answer.body);
    }
    answer
}

fn s2_body(kind: &str, value: &str, pairs: &[(&str, &str)]) -> String {
    let pairs: Vec<Value> = pairs
        .iter()
        .map(|(i, r)| serde_json::json!({"item_id": i, "revision": r}))
        .collect();
    let body = serde_json::json!({"subject": {"kind": kind, "value": value}, "pairs": pairs});
    let text = body.to_string();
    assert_valid("s2-request", text.as_bytes());
    text
}

async fn s2(fake: &FakeSibling, address: &str, pairs: &[(&str, &str)]) -> Answer {
    send(fake, post("/s2/check", &s2_body("address", address, pairs))).await
}

fn values(answer: &Answer) -> Vec<String> {
    answer.json()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"].as_str().unwrap().to_owned())
        .collect()
}

async fn s3(fake: &FakeSibling, item: &str, revision: &str) -> Answer {
    send(
        fake,
        post(
            "/s3/fetch",
            &format!(r#"{{"item_id":"{item}","revision":"{revision}"}}"#),
        ),
    )
    .await
}

#[test]
fn every_request_example_decodes_with_the_fakes_own_types_and_every_message_example_round_trips_byte_for_byte()
 {
    let mut seen = 0;
    for entry in std::fs::read_dir(contract_dir().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let raw = text.trim_end().as_bytes();
        let again = match name.split("--").next().unwrap() {
            "s2-request" => to_compact(&serde_json::from_slice::<S2Request>(raw).unwrap()),
            "s3-request" => to_compact(&serde_json::from_slice::<S3Request>(raw).unwrap()),
            "s2-response" => to_compact(&serde_json::from_slice::<S2Response>(raw).unwrap()),
            "s3-response" => to_compact(&serde_json::from_slice::<S3Response>(raw).unwrap()),
            "s1-response" => to_compact(&serde_json::from_slice::<S1Response>(raw).unwrap()),
            "s1a-page" => to_compact(&serde_json::from_slice::<S1aPage>(raw).unwrap()),
            "error" => to_compact(&serde_json::from_slice::<ErrorBody>(raw).unwrap()),
            "s6-request" => to_compact(&serde_json::from_slice::<S6Request>(raw).unwrap()),
            "s6-response" => to_compact(&serde_json::from_slice::<S6Response>(raw).unwrap()),
            "sheet-body" => to_compact(&serde_json::from_slice::<SheetBody>(raw).unwrap()),
            "roster-response" => to_compact(
                &serde_json::from_slice::<memoria_simulator::RosterResponse>(raw).unwrap(),
            ),
            other => panic!("example for an unknown message: {other}"),
        };
        assert_eq!(String::from_utf8(again).unwrap(), text.trim_end(), "{name}");
        seen += 1;
    }
    assert_eq!(seen, 29);
}

#[tokio::test]
async fn not_visible_is_byte_identical_for_private_granted_guest_only_link_shared_deleted_and_no_row_items()
 {
    type Setup = fn(&ModelHandle);
    let states: [(&str, Setup); 6] = [
        ("private", |m| {
            m.add_item("sh-1", Rung::Private { owner: ANA.into() }, "T", "B")
                .unwrap();
        }),
        ("granted", |m| {
            m.add_item(
                "sh-1",
                Rung::Granted {
                    to: [ANA.into()].into(),
                },
                "T",
                "B",
            )
            .unwrap();
        }),
        ("guest-only", |m| {
            m.add_item("sh-1", Rung::Team, "T", "B").unwrap();
            m.set_guest_only("sh-1", true).unwrap();
        }),
        ("link-shared-not-team", |m| {
            m.add_item("sh-1", Rung::Team, "T", "B").unwrap();
            m.set_link_shared("sh-1", true).unwrap();
        }),
        ("deleted", |m| {
            m.add_item("sh-1", Rung::Team, "T", "B").unwrap();
            m.delete("sh-1").unwrap();
        }),
        ("no row", |_| {}),
    ];
    let mut bodies = Vec::new();
    for (name, setup) in states {
        let fake = fake();
        setup(&fake.model());
        let answer = s2(&fake, ANA, &[("sh-1", "r1")]).await;
        assert_eq!(answer.status, StatusCode::OK, "{name}");
        bodies.push((name, answer.body));
    }
    let expected = r#"{"subject_kind":"address","results":[{"item_id":"sh-1","revision":"r1","result":"NOT_VISIBLE"}]}"#;
    for (name, body) in bodies {
        assert_eq!(body, expected.as_bytes(), "{name}");
    }
}

#[tokio::test]
async fn an_item_downgraded_from_team_to_granted_with_the_askers_grant_intact_is_not_visible_404s_and_shows_gone_in_s1()
 {
    let fake = fake();
    let model = fake.model();
    model
        .add_item("sh-1", Rung::Team, "Supplier sheet", "Oat milk")
        .unwrap();
    let ingested = send(&fake, get("/s1/feed")).await.json();
    assert_eq!(ingested["rows"][0]["gone"], false);
    assert_eq!(
        values(&s2(&fake, ANA, &[("sh-1", "r1")]).await),
        ["VISIBLE"]
    );
    assert_eq!(s3(&fake, "sh-1", "r1").await.status, StatusCode::OK);

    model
        .set_rung(
            "sh-1",
            Rung::Granted {
                to: [ANA.into()].into(),
            },
        )
        .unwrap();

    assert_eq!(
        values(&s2(&fake, ANA, &[("sh-1", "r1")]).await),
        ["NOT_VISIBLE"]
    );
    let fetched = s3(&fake, "sh-1", "r1").await;
    assert_eq!(fetched.status, StatusCode::NOT_FOUND);
    assert_eq!(fetched.text(), r#"{"error":"not_found"}"#);
    let cursor = ingested["cursor"].as_str().unwrap();
    let feed = send(&fake, get(&format!("/s1/feed?cursor={cursor}"))).await;
    assert_eq!(
        feed.json()["rows"],
        serde_json::json!([{"item_id":"sh-1","revision":"r1","gone":true,"touched_at":"2026-11-30T09:00:00Z"}])
    );
}

#[tokio::test]
async fn an_older_revision_is_stale_a_revision_lost_to_a_partial_restore_is_ahead_and_a_no_row_id_is_not_visible_never_ahead()
 {
    let fake = fake();
    let model = fake.model();
    model.add_item("sh-1", Rung::Team, "T", "one").unwrap();
    assert_eq!(model.revise("sh-1", "T", "two").unwrap(), "r2");
    assert_eq!(model.revise("sh-1", "T", "three").unwrap(), "r3");
    let pairs = [("sh-1", "r1"), ("sh-1", "r3"), ("sh-9", "r1")];
    assert_eq!(
        values(&s2(&fake, ANA, &pairs).await),
        ["STALE", "VISIBLE", "NOT_VISIBLE"]
    );
    let before = send(&fake, get("/s1/feed")).await.json();

    model.restore_item_to("sh-1", "r2").unwrap();

    assert_eq!(
        values(
            &s2(
                &fake,
                ANA,
                &[("sh-1", "r3"), ("sh-1", "r2"), ("sh-1", "r1")]
            )
            .await
        ),
        ["AHEAD", "VISIBLE", "STALE"]
    );
    assert_eq!(s3(&fake, "sh-1", "r3").await.status, StatusCode::NOT_FOUND);
    assert_eq!(s3(&fake, "sh-1", "r1").await.status, StatusCode::OK);
    // The partial restore did not touch the event log: the cursor still works.
    let cursor = before["cursor"].as_str().unwrap();
    let after = send(&fake, get(&format!("/s1/feed?cursor={cursor}"))).await;
    assert_eq!(after.status, StatusCode::OK);
    assert_eq!(after.json()["rows"], serde_json::json!([]));
}

#[tokio::test]
async fn a_restore_that_lost_a_row_answers_not_visible_exactly_as_a_private_item_and_s1a_omits_it()
{
    let fake = fake();
    let model = fake.model();
    model.add_item("sh-1", Rung::Team, "T", "one").unwrap();
    model.add_item("sh-2", Rung::Team, "T", "two").unwrap();
    model
        .add_item(
            "sh-p",
            Rung::Private {
                owner: BEA.to_string(),
            },
            "T",
            "private",
        )
        .unwrap();
    model.forget_item("sh-2").unwrap();
    let answer = s2(&fake, ANA, &[("sh-2", "r1"), ("sh-p", "r1")]).await;
    let results = answer.json()["results"].clone();
    let without_ids = |r: &serde_json::Value| {
        let mut r = r.clone();
        r.as_object_mut().unwrap().remove("item_id");
        r
    };
    assert_eq!(without_ids(&results[0]), without_ids(&results[1]));
    assert_eq!(values(&answer), ["NOT_VISIBLE", "NOT_VISIBLE"]);
    assert_eq!(s3(&fake, "sh-2", "r1").await.status, StatusCode::NOT_FOUND);
    let announce = send(&fake, get("/s1a/announce")).await.json();
    let ids: Vec<&str> = announce["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["item_id"].as_str())
        .collect();
    assert_eq!(ids, ["sh-1"]);
}

#[tokio::test]
async fn the_grants_join_gives_a_member_a_removed_member_a_guest_and_a_stranger_different_answers()
{
    let fake = fake();
    let model = fake.model();
    model.add_item("sh-1", Rung::Team, "T", "B").unwrap();
    model.set_removed("sh-1", BEA, true).unwrap();
    let pair = [("sh-1", "r1")];
    assert_eq!(values(&s2(&fake, ANA, &pair).await), ["VISIBLE"]);
    assert_eq!(values(&s2(&fake, BEA, &pair).await), ["NOT_VISIBLE"]);
    assert_eq!(values(&s2(&fake, GUS, &pair).await), ["NOT_VISIBLE"]);
    assert_eq!(values(&s2(&fake, NOBODY, &pair).await), ["NOT_VISIBLE"]);
    model.set_removed("sh-1", BEA, false).unwrap();
    assert_eq!(values(&s2(&fake, BEA, &pair).await), ["VISIBLE"]);
    let labels: Vec<Option<String>> = fake
        .trace()
        .events()
        .into_iter()
        .filter_map(|e| match e.detail {
            CallDetail::S2 { subject, .. } => Some(subject),
            _ => None,
        })
        .collect();
    assert_eq!(
        labels,
        [
            Some("member-1".to_owned()),
            Some("member-2".to_owned()),
            Some("guest-1".to_owned()),
            Some("stranger".to_owned()),
            Some("member-2".to_owned()),
        ]
    );
}

#[tokio::test]
async fn a_subject_of_the_kind_the_sibling_does_not_key_on_gets_unknown_for_every_pair_and_the_keyed_kind_echoed()
 {
    let fake = fake_keyed_on(SubjectKind::PersonRef);
    fake.model().add_item("sh-1", Rung::Team, "T", "B").unwrap();
    let by_address = s2(&fake, ANA, &[("sh-1", "r1"), ("sh-2", "r1")]).await;
    assert_eq!(
        by_address.text(),
        r#"{"subject_kind":"person_ref","results":[{"item_id":"sh-1","revision":"r1","result":"UNKNOWN"},{"item_id":"sh-2","revision":"r1","result":"UNKNOWN"}]}"#
    );
    let by_ref = send(
        &fake,
        post(
            "/s2/check",
            &s2_body("person_ref", "prs_ana", &[("sh-1", "r1")]),
        ),
    )
    .await;
    assert_eq!(values(&by_ref), ["VISIBLE"]);
}

#[tokio::test]
async fn an_s3_request_carrying_a_person_ref_field_is_rejected_400_and_the_trace_records_the_unexpected_field()
 {
    let fake = fake();
    fake.model().add_item("sh-1", Rung::Team, "T", "B").unwrap();
    let answer = send(
        &fake,
        post(
            "/s3/fetch",
            r#"{"item_id":"sh-1","revision":"r1","person_ref":"prs_ana"}"#,
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.text(), r#"{"error":"bad_request"}"#);
    let events = fake.trace().events();
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].detail,
        CallDetail::S3 {
            item_id: Some("sh-1".to_owned()),
            revision: Some("r1".to_owned()),
            unexpected_fields: vec!["person_ref".to_owned()],
            served: false,
        }
    );
    assert!(!fake.trace().render().contains("prs_ana"));
}

#[tokio::test]
async fn s3_serves_a_team_visible_item_at_any_logged_revision_and_404s_never_403s_otherwise() {
    let fake = fake();
    let model = fake.model();
    model
        .add_item("sh-1", Rung::Team, "Supplier sheet", "Oat milk")
        .unwrap();
    model.revise("sh-1", "Supplier sheet", "Soy milk").unwrap();
    model
        .add_item("sh-2", Rung::Private { owner: ANA.into() }, "Mine", "x")
        .unwrap();
    let old = s3(&fake, "sh-1", "r1").await;
    assert_eq!(
        old.text(),
        r##"{"item_id":"sh-1","revision":"r1","title":"Supplier sheet","media_type":"text/markdown","body":"Oat milk"}"##
    );
    for (item, revision) in [("sh-1", "r7"), ("sh-2", "r1"), ("sh-404", "r1")] {
        let answer = s3(&fake, item, revision).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{item} {revision}");
        assert_eq!(answer.text(), r#"{"error":"not_found"}"#);
    }
}

#[tokio::test]
async fn s1_rows_carry_exactly_four_fields_page_with_more_and_only_show_team_visible_changes() {
    let fake = fake();
    let model = fake.model();
    model
        .add_item("secret", Rung::Private { owner: ANA.into() }, "T", "B")
        .unwrap();
    for i in 0..150 {
        model
            .add_item(&format!("sh-{i:03}"), Rung::Team, "T", "B")
            .unwrap();
    }
    let first = send(&fake, get("/s1/feed")).await.json();
    assert_eq!(first["more"], true);
    let rows = first["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 100);
    for row in rows {
        let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["gone", "item_id", "revision", "touched_at"]);
        assert_ne!(row["item_id"], "secret");
    }
    let cursor = first["cursor"].as_str().unwrap();
    let second = send(&fake, get(&format!("/s1/feed?cursor={cursor}")))
        .await
        .json();
    assert_eq!(second["more"], false);
    assert_eq!(second["rows"].as_array().unwrap().len(), 50);
    assert_eq!(second["cursor"], model.head_cursor());
}

#[tokio::test]
async fn s1a_pages_an_announce_from_open_through_every_team_visible_item_to_a_close_with_the_count_and_a_head_cursor()
 {
    let fake = fake();
    let model = fake.model();
    for i in 0..120 {
        model
            .add_item(&format!("sh-{i:03}"), Rung::Team, "T", "B")
            .unwrap();
    }
    model
        .add_item("secret", Rung::Private { owner: ANA.into() }, "T", "B")
        .unwrap();
    model.delete("sh-000").unwrap();
    let mut records = Vec::new();
    let mut page = send(&fake, get("/s1a/announce")).await.json();
    let mut pages = 1;
    while let Some(next) = page["next_page"].as_str() {
        page = send(&fake, get(&format!("/s1a/announce?page={next}")))
            .await
            .json();
        pages += 1;
        records.extend(page["records"].as_array().unwrap().clone());
    }
    let first = send(&fake, get("/s1a/announce")).await.json();
    assert_eq!(first["records"][0], serde_json::json!({"type":"open"}));
    assert_eq!(pages, 3);
    let items = records.iter().filter(|r| r["type"] == "item").count()
        + first["records"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["type"] == "item")
            .count();
    assert_eq!(items, 119);
    let close = records.last().unwrap();
    assert_eq!(close["type"], "close");
    assert_eq!(close["count"], 119);
    assert_eq!(close["cursor"], model.head_cursor());
    let empty = fake_keyed_on(SubjectKind::Address);
    let answer = send(&empty, get("/s1a/announce")).await;
    assert_eq!(
        answer.text(),
        r#"{"records":[{"type":"open"},{"type":"close","count":0,"cursor":"c1-0000"}],"next_page":null}"#
    );
}

#[tokio::test]
async fn a_whole_log_restore_makes_an_old_cursor_answer_410_reannounce_required() {
    let fake = fake();
    let model = fake.model();
    model.add_item("sh-1", Rung::Team, "T", "B").unwrap();
    let snapshot = model.snapshot();
    model.add_item("sh-2", Rung::Team, "T", "B").unwrap();
    let cursor = send(&fake, get("/s1/feed")).await.json()["cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    model.restore_whole(&snapshot);
    let stale = send(&fake, get(&format!("/s1/feed?cursor={cursor}"))).await;
    assert_eq!(stale.status, StatusCode::GONE);
    assert_eq!(stale.text(), r#"{"error":"reannounce_required"}"#);
    let forged = send(&fake, get("/s1/feed?cursor=not-ours")).await;
    assert_eq!(forged.status, StatusCode::GONE);
    let fresh = send(&fake, get("/s1/feed")).await.json();
    assert_eq!(fresh["rows"].as_array().unwrap().len(), 1);
    assert_eq!(
        values(&s2(&fake, ANA, &[("sh-2", "r1")]).await),
        ["NOT_VISIBLE"]
    );
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_401_and_both_tokens_of_a_rotation_are_accepted() {
    let fake = fake();
    let no_token = Request::get("/s1/feed").body(Body::empty()).unwrap();
    let answer = send(&fake, no_token).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.text(), r#"{"error":"unauthorized"}"#);
    fake.set_tokens(vec![
        ("memoria".to_owned(), TOKEN.to_owned()),
        ("memoria".to_owned(), "tok-memoria-2".to_owned()),
    ]);
    // Wrong: another word, a prefix, an extension, another case.
    let wrong = ["wrong", "tok-memoria-", "tok-memoria-10", "TOK-MEMORIA-1"];
    for token in [TOKEN, "tok-memoria-2"].into_iter().chain(wrong) {
        let request = Request::get("/s1/feed")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap();
        let expected = if wrong.contains(&token) { 401 } else { 200 };
        assert_eq!(
            send(&fake, request).await.status.as_u16(),
            expected,
            "{token}"
        );
    }
    let callers: Vec<String> = fake
        .trace()
        .events()
        .into_iter()
        .map(|e| e.caller)
        .collect();
    assert_eq!(
        callers,
        [
            "unauthenticated",
            "memoria",
            "memoria",
            "unauthenticated",
            "unauthenticated",
            "unauthenticated",
            "unauthenticated"
        ]
    );
}

#[tokio::test]
async fn over_256_pairs_is_400_too_many_pairs_and_a_malformed_request_is_400_bad_request() {
    let fake = fake();
    let ids: Vec<String> = (0..257).map(|i| format!("sh-{i}")).collect();
    let pairs: Vec<Value> = ids
        .iter()
        .map(|i| serde_json::json!({"item_id": i, "revision": "r1"}))
        .collect();
    let body = serde_json::json!({"subject":{"kind":"address","value":ANA},"pairs":pairs});
    let answer = send(&fake, post("/s2/check", &body.to_string())).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.text(), r#"{"error":"too_many_pairs"}"#);
    let answer = send(&fake, post("/s2/check", "{}")).await;
    assert_eq!(answer.text(), r#"{"error":"bad_request"}"#);
}

#[tokio::test]
async fn the_trace_is_content_free_deterministic_and_names_the_callee_host() {
    let fake = fake();
    fake.model()
        .add_item("sh-1", Rung::Team, "Secret title", "Secret body")
        .unwrap();
    send(&fake, get("/s1/feed")).await;
    s2(&fake, ANA, &[("sh-1", "r1")]).await;
    s3(&fake, "sh-1", "r1").await;
    let rendered = fake.trace().render();
    for content in ["Secret", ANA, "prs_ana"] {
        assert!(!rendered.contains(content), "{content} in {rendered}");
    }
    assert_eq!(rendered, fake.trace().render());
    let events = fake.trace().events();
    assert_eq!(
        events.iter().map(|e| e.call).collect::<Vec<_>>(),
        [CallKind::S1, CallKind::S2, CallKind::S3]
    );
    assert!(
        events
            .iter()
            .all(|e| e.callee == "acme.sheets.oficina.works")
    );
    expect_test::expect![[r#"
        {"at_ms":0,"caller":"memoria","epoch":1,"callee":"acme.sheets.oficina.works","call":"S1","status":200,"faults":[],"detail":{"kind":"s1","cursor_given":false,"rows":[{"item_id":"sh-1","revision":"r1","gone":false}],"more":false}}
        {"at_ms":0,"caller":"memoria","epoch":1,"callee":"acme.sheets.oficina.works","call":"S2","status":200,"faults":[],"detail":{"kind":"s2","subject_kind":"address","subject":"member-1","pairs":[{"item_id":"sh-1","revision":"r1","result":"VISIBLE"}]}}
        {"at_ms":0,"caller":"memoria","epoch":1,"callee":"acme.sheets.oficina.works","call":"S3","status":200,"faults":[],"detail":{"kind":"s3","item_id":"sh-1","revision":"r1","unexpected_fields":[],"served":true}}
    "#]]
    .assert_eq(&rendered);
}

#[test]
fn touched_at_is_rfc3339_utc_from_the_fixed_epoch_plus_simulated_milliseconds() {
    assert_eq!(rfc3339(0), "2026-11-30T09:00:00Z");
    assert_eq!(rfc3339(312_999), "2026-11-30T09:05:12Z");
    assert_eq!(rfc3339(15 * 3_600_000), "2026-12-01T00:00:00Z");
    assert_eq!(rfc3339(32 * 86_400_000), "2027-01-01T09:00:00Z");
    assert_eq!(
        rfc3339(u64::MAX),
        "9999-12-31T23:59:59Z",
        "clamped, never garbage"
    );
}

#[test]
fn the_corpus_loader_reports_its_source_and_returns_titled_items_in_a_stable_order() {
    let corpus = memoria_simulator::load_corpus(5);
    assert!(!corpus.items.is_empty());
    assert!(corpus.items.len() <= 5);
    assert!(
        corpus
            .items
            .iter()
            .all(|(title, body)| !title.is_empty() && !body.is_empty())
    );
    assert_eq!(memoria_simulator::load_corpus(5), corpus);
}

// ---- fault knobs ----

#[tokio::test(start_paused = true)]
async fn the_cold_knob_makes_the_first_call_after_an_idle_period_wait_for_the_wake() {
    let model = ModelHandle::new(Clock::tokio());
    let fake = FakeSibling::new(
        FakeConfig {
            team: "acme".into(),
            app: "sheets".into(),
            keys_on: SubjectKind::Address,
            tokens: vec![("memoria".into(), TOKEN.into())],
        },
        model,
        Trace::new(),
        Clock::tokio(),
    );
    fake.faults().set_cold(Some(Cold {
        idle_ms: 60_000,
        wake_ms: 3_000,
    }));
    let timed = |fake: FakeSibling| async move {
        let start = tokio::time::Instant::now();
        assert_eq!(send(&fake, get("/s1/feed")).await.status, StatusCode::OK);
        start.elapsed()
    };
    assert_eq!(timed(fake.clone()).await, Duration::from_millis(3_000));
    assert_eq!(timed(fake.clone()).await, Duration::ZERO);
    tokio::time::advance(Duration::from_secs(61)).await;
    assert_eq!(timed(fake.clone()).await, Duration::from_millis(3_000));
    assert_eq!(fake.trace().events()[0].faults, ["cold"]);
}

#[tokio::test(start_paused = true)]
async fn the_slow_knob_adds_latency_to_every_answer_or_only_to_one_call_kind() {
    let fake = FakeSibling::new(
        FakeConfig {
            team: "acme".into(),
            app: "sheets".into(),
            keys_on: SubjectKind::Address,
            tokens: vec![("memoria".into(), TOKEN.into())],
        },
        ModelHandle::new(Clock::tokio()),
        Trace::new(),
        Clock::tokio(),
    );
    let start = tokio::time::Instant::now();
    send(&fake, get("/s1/feed")).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    fake.faults().set_slow(Some(Slow {
        latency_ms: 900,
        only: None,
    }));
    let start = tokio::time::Instant::now();
    send(&fake, get("/s1/feed")).await;
    assert_eq!(start.elapsed(), Duration::from_millis(900));
    fake.faults().set_slow(Some(Slow {
        latency_ms: 900,
        only: Some(CallKind::S2),
    }));
    let start = tokio::time::Instant::now();
    send(&fake, get("/s1/feed")).await;
    assert_eq!(start.elapsed(), Duration::ZERO);
    s2(&fake, ANA, &[("sh-1", "r1")]).await;
    assert_eq!(start.elapsed(), Duration::from_millis(900));
}

#[tokio::test(start_paused = true)]
async fn the_hang_outage_accepts_a_call_and_never_answers_it() {
    let fake = fake();
    fake.faults().set_outage(Some(Outage::Hang));
    let hung =
        tokio::time::timeout(Duration::from_secs(30), send_raw(&fake, get("/s1/feed"))).await;
    assert!(hung.is_err());
    let events = fake.trace().events();
    assert_eq!(events[0].status, None);
    fake.faults().set_outage(None);
    assert_eq!(send(&fake, get("/s1/feed")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn the_status_outage_answers_503_unavailable_and_the_refuse_outage_marks_the_connection_for_dropping()
 {
    let fake = fake();
    fake.faults().set_outage(Some(Outage::Status(503)));
    let answer = send(&fake, get("/s1/feed")).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.text(), r#"{"error":"unavailable"}"#);
    fake.faults().set_outage(Some(Outage::Refuse));
    let answer = send_raw(&fake, get("/s1/feed")).await;
    assert!(answer.refused);
    assert!(answer.body.is_empty());
}

#[tokio::test]
async fn the_lie_knobs_make_s2_say_visible_to_anyone_and_s3_serve_a_made_up_body() {
    let fake = fake();
    fake.model()
        .add_item("sh-1", Rung::Private { owner: ANA.into() }, "T", "B")
        .unwrap();
    assert_eq!(
        values(&s2(&fake, NOBODY, &[("sh-1", "r1"), ("zz", "r9")]).await),
        ["NOT_VISIBLE", "NOT_VISIBLE"]
    );
    fake.faults().set_lie(Some(Lie::VisibleForAnyone));
    assert_eq!(
        values(&s2(&fake, NOBODY, &[("sh-1", "r1"), ("zz", "r9")]).await),
        ["VISIBLE", "VISIBLE"]
    );
    assert_eq!(s3(&fake, "zz", "r9").await.status, StatusCode::NOT_FOUND);
    fake.faults().set_lie(Some(Lie::FabricatedS3));
    let made_up = s3(&fake, "zz", "r9").await;
    assert_eq!(made_up.status, StatusCode::OK);
    assert_eq!(made_up.json()["item_id"], "zz");
}

#[tokio::test]
async fn each_malformed_s2_knob_sends_its_own_broken_answer() {
    let fake = fake();
    fake.model().add_item("a", Rung::Team, "T", "B").unwrap();
    let pairs = [("a", "1"), ("a", "r1"), ("b", "1")];
    let honest = s2(&fake, ANA, &pairs).await;
    assert_eq!(
        honest.text(),
        r#"{"subject_kind":"address","results":[{"item_id":"a","revision":"1","result":"AHEAD"},{"item_id":"a","revision":"r1","result":"VISIBLE"},{"item_id":"b","revision":"1","result":"NOT_VISIBLE"}]}"#
    );
    let cases = [
        (MalformedS2::NotJson, 200, "<html>ok</html>".to_owned()),
        (MalformedS2::Empty, 200, String::new()),
        (MalformedS2::Truncated, 200, honest.text()[..honest.text().len() / 2].to_owned()),
        (MalformedS2::TrailingBytes, 200, format!("{}{{}}", honest.text())),
        (
            MalformedS2::MissingItem,
            200,
            r#"{"subject_kind":"address","results":[{"item_id":"a","revision":"1","result":"AHEAD"},{"item_id":"a","revision":"r1","result":"VISIBLE"}]}"#.to_owned(),
        ),
        (
            MalformedS2::ShortResponse,
            200,
            r#"{"subject_kind":"address","results":[{"item_id":"a","revision":"1","result":"AHEAD"}]}"#.to_owned(),
        ),
        (
            MalformedS2::DuplicateItem,
            200,
            r#"{"subject_kind":"address","results":[{"item_id":"a","revision":"1","result":"AHEAD"},{"item_id":"a","revision":"r1","result":"VISIBLE"},{"item_id":"b","revision":"1","result":"NOT_VISIBLE"},{"item_id":"a","revision":"1","result":"VISIBLE"}]}"#.to_owned(),
        ),
        (
            MalformedS2::UnknownValue,
            200,
            honest.text().replacen("AHEAD", "PERHAPS", 1),
        ),
        (
            MalformedS2::KindMismatch,
            200,
            honest.text().replace("\"address\"", "\"person_ref\""),
        ),
        (MalformedS2::Non2xx(500), 500, r#"{"error":"unavailable"}"#.to_owned()),
        (
            MalformedS2::ExtraField,
            200,
            honest.text().replace("\"}", "\",\"visible_to_team\":true}"),
        ),
        (MalformedS2::Not200(203), 203, honest.text().to_owned()),
        (
            MalformedS2::KindInCapitals,
            200,
            honest.text().replace("\"address\"", "\"ADDRESS\""),
        ),
        (
            MalformedS2::DuplicateSameValue,
            200,
            r#"{"subject_kind":"address","results":[{"item_id":"a","revision":"1","result":"AHEAD"},{"item_id":"a","revision":"r1","result":"VISIBLE"},{"item_id":"b","revision":"1","result":"NOT_VISIBLE"},{"item_id":"a","revision":"1","result":"AHEAD"}]}"#.to_owned(),
        ),
    ];
    for (knob, status, body) in cases {
        fake.faults().set_malformed_s2(Some(knob));
        let answer = send_raw(&fake, post("/s2/check", &s2_body("address", ANA, &pairs))).await;
        assert_eq!(answer.status.as_u16(), status, "{knob:?}");
        assert_eq!(answer.text(), body, "{knob:?}");
        // A 2xx other than 200 is broken by its status alone.
        if !matches!(knob, MalformedS2::Not200(_)) {
            assert_ne!(answer.body, honest.body, "{knob:?}");
        }
    }
    // S1 is untouched by an S2 malformation.
    send(&fake, get("/s1/feed")).await;
}

#[tokio::test]
async fn the_truncate_announce_knobs_drop_the_close_or_falsify_its_count() {
    let fake = fake();
    fake.model().add_item("sh-1", Rung::Team, "T", "B").unwrap();
    fake.faults()
        .set_truncate_announce(Some(TruncateAnnounce::NoClose));
    let page: S1aPage =
        serde_json::from_slice(&send(&fake, get("/s1a/announce")).await.body).unwrap();
    assert_eq!(page.next_page, None);
    assert!(
        !page
            .records
            .iter()
            .any(|r| matches!(r, S1aRecord::Close { .. }))
    );
    fake.faults()
        .set_truncate_announce(Some(TruncateAnnounce::WrongCount(2)));
    let page: S1aPage =
        serde_json::from_slice(&send(&fake, get("/s1a/announce")).await.body).unwrap();
    assert!(matches!(
        page.records.last(),
        Some(S1aRecord::Close { count: 3, .. })
    ));
}

#[tokio::test]
async fn the_redirect_knob_answers_every_call_307_with_the_location() {
    let fake = fake();
    fake.faults().set_redirect(Some(Redirect {
        location: "https://beta.sheets.oficina.works/s1/feed".into(),
    }));
    for request in [
        get("/s1/feed"),
        post("/s3/fetch", r#"{"item_id":"a","revision":"1"}"#),
    ] {
        let answer = send(&fake, request).await;
        assert_eq!(answer.status, StatusCode::TEMPORARY_REDIRECT);
        assert_eq!(
            answer.location.as_deref(),
            Some("https://beta.sheets.oficina.works/s1/feed")
        );
    }
}

// ---- turmoil ----

#[test]
fn a_turmoil_client_dialing_a_fake_sibling_host_with_the_reference_transport_gets_an_s1_answer() {
    use http_body_util::Full;
    use memoria::exchange;
    use memoria_simulator::{TurmoilDialer, serve_turmoil};

    const HOST: &str = "acme.sheets.oficina.works";
    const PORT: u16 = 443;
    let trace = Trace::new();
    let model = ModelHandle::new(Clock::turmoil());
    model.add_item("sh-1", Rung::Team, "T", "B").unwrap();
    let fake = FakeSibling::new(
        FakeConfig {
            team: "acme".into(),
            app: "sheets".into(),
            keys_on: SubjectKind::Address,
            tokens: vec![("memoria".into(), TOKEN.into())],
        },
        model,
        trace.clone(),
        Clock::turmoil(),
    );
    let mut sim = turmoil::Builder::new().build();
    let router = fake.router();
    sim.host(HOST, move || serve_turmoil(router.clone(), PORT));
    let faults = fake.faults();
    sim.client("memoria", async move {
        let request = || {
            http::Request::get("/s1/feed")
                .header(header::HOST, HOST)
                .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
                .body(Full::new(Bytes::new()))
                .unwrap()
        };
        let answer = exchange(&TurmoilDialer, HOST, PORT, request()).await?;
        assert_eq!(answer.status, 200);
        let page: S1Response = serde_json::from_slice(&answer.body)?;
        assert_eq!(page.rows.len(), 1);
        faults.set_outage(Some(Outage::Refuse));
        assert!(
            exchange(&TurmoilDialer, HOST, PORT, request())
                .await
                .is_err()
        );
        Ok(())
    });
    sim.run().unwrap();
    let events = trace.events();
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].status, Some(200));
    assert_eq!(events[1].status, None);
}

#[tokio::test]
async fn a_fake_served_on_loopback_answers_the_reference_transport_over_real_tcp() {
    use http_body_util::Full;
    use memoria::{TcpDialer, exchange};

    let fake = fake();
    fake.model().add_item("sh-1", Rung::Team, "T", "B").unwrap();
    let (addr, server) = memoria_simulator::serve_loopback(
        fake.router(),
        std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .unwrap();
    let request = http::Request::post("/s2/check")
        .header(header::HOST, "acme.sheets.oficina.works")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .body(Full::new(Bytes::from(s2_body(
            "address",
            ANA,
            &[("sh-1", "r1")],
        ))))
        .unwrap();
    let answer = exchange(&TcpDialer, "127.0.0.1", addr.port(), request)
        .await
        .unwrap();
    assert_eq!(answer.status, 200);
    assert_valid("s2-response", &answer.body);
    server.abort();
}
