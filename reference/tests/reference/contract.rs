//! The reference's side of the sibling contract, tested against `fixtures/contract/` (suite ruling 7: fixtures are the interface).

use std::path::PathBuf;

use memoria::SiblingUrl;
use memoria::wire::{
    self, AnnounceAssembler, AnnounceFailure, Pair, S2Answer, S2Request, Subject, SubjectKind,
    Verdict,
};
use proptest::prelude::*;
use serde_json::Value;

fn contract_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/contract")
}

fn read_json(rel: &str) -> Value {
    let text = std::fs::read_to_string(contract_dir().join(rel)).expect("fixture reads");
    serde_json::from_str(&text).expect("fixture is JSON")
}

fn validator(schema: &str) -> &'static jsonschema::Validator {
    memoria_contract::validator(schema)
        .unwrap_or_else(|| panic!("{schema} is not a contract schema"))
}

fn examples(schema: &str) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(contract_dir().join("examples"))
        .expect("examples dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{schema}--")))
        })
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("reads")))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no examples for {schema}");
    out
}

#[test]
fn every_example_validates_against_the_schema_it_is_named_for() {
    let mut checked = 0;
    for schema in memoria_contract::SCHEMAS {
        let v = validator(schema);
        for (name, bytes) in examples(schema) {
            let json: Value = serde_json::from_slice(&bytes).unwrap();
            assert!(
                v.is_valid(&json),
                "{name} does not validate against {schema}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} examples checked");
}

#[test]
fn the_schemas_refuse_a_feed_row_with_a_visibility_flag_and_an_s3_request_with_a_person() {
    let row = serde_json::json!({"cursor":"c","more":false,"rows":[{"item_id":"a","revision":"1","gone":false,"touched_at":"2026-11-30T09:00:00Z","visible_to_team":true}]});
    assert!(!validator("s1-response").is_valid(&row));
    let s3 = serde_json::json!({"item_id":"a","revision":"1","person_ref":"prs_1"});
    assert!(!validator("s3-request").is_valid(&s3));
}

#[test]
fn every_s1_example_decodes_and_a_fifth_row_field_is_refused() {
    for (name, bytes) in examples("s1-response") {
        wire::decode_s1(200, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let leaky = br#"{"cursor":"c","more":false,"rows":[{"item_id":"a","revision":"1","gone":false,"touched_at":"2026-11-30T09:00:00Z","title":"Salaries"}]}"#;
    assert!(matches!(
        wire::decode_s1(200, leaky),
        Err(wire::FeedError::Malformed(_))
    ));
    assert_eq!(
        wire::decode_s1(410, b"{\"error\":\"reannounce_required\"}"),
        Err(wire::FeedError::ReannounceRequired)
    );
}

#[test]
fn the_s1a_examples_assemble_into_one_complete_announce() {
    let first = wire::decode_s1a_page(
        200,
        &std::fs::read(contract_dir().join("examples/s1a-page--first.json")).unwrap(),
    )
    .unwrap();
    let last = wire::decode_s1a_page(
        200,
        &std::fs::read(contract_dir().join("examples/s1a-page--last.json")).unwrap(),
    )
    .unwrap();
    let mut a = AnnounceAssembler::default();
    assert_eq!(a.feed(first).unwrap().as_deref(), Some("p-2"));
    assert_eq!(a.feed(last).unwrap(), None);
    let done = a.finish().unwrap();
    assert_eq!(done.items.len(), 2);
    assert_eq!(done.cursor, "c-0018");
}

#[test]
fn an_announce_without_its_close_or_with_a_wrong_count_fails() {
    let page = |json: &str| wire::decode_s1a_page(200, json.as_bytes()).unwrap();
    let mut a = AnnounceAssembler::default();
    a.feed(page(r#"{"records":[{"type":"open"},{"type":"item","item_id":"x","revision":"1","touched_at":"2026-11-30T09:00:00Z"}],"next_page":null}"#)).unwrap();
    assert_eq!(a.finish(), Err(AnnounceFailure::NoClose));
    let mut a = AnnounceAssembler::default();
    a.feed(page(r#"{"records":[{"type":"open"},{"type":"item","item_id":"x","revision":"1","touched_at":"2026-11-30T09:00:00Z"},{"type":"close","count":2,"cursor":"c"}],"next_page":null}"#)).unwrap();
    assert_eq!(
        a.finish(),
        Err(AnnounceFailure::CountMismatch {
            declared: 2,
            received: 1
        })
    );
}

#[test]
fn the_s3_example_decodes_and_a_403_is_not_a_404() {
    let asked = Pair {
        item_id: "sh-4f1a".into(),
        revision: "r7".into(),
    };
    let mut decoded = 0;
    for (name, bytes) in examples("s3-response") {
        // Each example for its own pair, of every media type the reference
        // reads (a sheet's once the numeric path reads sheets, §8.7).
        let json: Value = serde_json::from_slice(&bytes).unwrap();
        if !wire::S3_MEDIA_TYPES.contains(&json["media_type"].as_str().unwrap_or_default()) {
            continue;
        }
        let pair = Pair {
            item_id: json["item_id"].as_str().unwrap().into(),
            revision: json["revision"].as_str().unwrap().into(),
        };
        wire::decode_s3(&pair, 200, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        decoded += 1;
    }
    assert!(decoded >= 1, "no S3 example decoded");
    assert_eq!(
        wire::decode_s3(&asked, 404, b""),
        Err(wire::FetchError::NotFound)
    );
    assert_eq!(
        wire::decode_s3(&asked, 403, b""),
        Err(wire::FetchError::Status(403))
    );
}

#[test]
fn the_requests_memoria_sends_validate_against_the_request_schemas() {
    let subject = Subject::address("Ana@Almendra.Studio");
    let pairs = vec![Pair {
        item_id: "sh-1".into(),
        revision: "r1".into(),
    }];
    let s2 = serde_json::to_value(S2Request {
        subject: &subject,
        pairs: &pairs,
    })
    .unwrap();
    assert!(validator("s2-request").is_valid(&s2), "{s2}");
    assert_eq!(s2["subject"]["value"], "ana@almendra.studio");
    let s3 = serde_json::to_value(&pairs[0]).unwrap();
    assert!(validator("s3-request").is_valid(&s3), "{s3}");
}

fn decoder_table() -> (Vec<Pair>, SubjectKind, Vec<Value>) {
    let t = read_json("s2-decoder-cases.json");
    let pairs: Vec<Pair> = serde_json::from_value(t["pairs"].clone()).unwrap();
    let kind: SubjectKind = serde_json::from_value(t["subject_kind"].clone()).unwrap();
    (pairs, kind, t["cases"].as_array().unwrap().clone())
}

fn verdict_name(v: Verdict) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn every_case_in_the_s2_decoder_table_gives_its_listed_verdicts() {
    let (pairs, kind, cases) = decoder_table();
    assert!(cases.len() >= 25, "the table shrank to {}", cases.len());
    let mut failures = vec![];
    for case in &cases {
        let answer = match case.get("failure") {
            Some(_) => S2Answer::NoAnswer,
            None => S2Answer::Http {
                status: case["status"].as_u64().unwrap() as u16,
                body: case["body"].as_str().unwrap().as_bytes().to_vec(),
            },
        };
        let got: Vec<String> = wire::decode_s2(&pairs, kind, &answer)
            .verdicts
            .into_iter()
            .map(verdict_name)
            .collect();
        let want: Vec<String> = serde_json::from_value(case["expect"].clone()).unwrap();
        if got != want {
            failures.push(format!("{}: got {got:?}, want {want:?}", case["name"]));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hostile_sibling_hosts_are_refused_and_same_team_hosts_accepted() {
    let t = read_json("hostile-hosts.json");
    let team = t["team"].as_str().unwrap();
    for url in t["accept"].as_array().unwrap() {
        let url = url.as_str().unwrap();
        assert!(SiblingUrl::parse(url, team).is_ok(), "refused {url}");
    }
    let refuse = t["refuse"].as_array().unwrap();
    assert!(refuse.len() >= 15);
    for url in refuse {
        let url = url.as_str().unwrap();
        assert!(SiblingUrl::parse(url, team).is_err(), "accepted {url}");
    }
}

proptest! {
    #[test]
    fn the_s2_decoder_gives_one_verdict_per_pair_for_any_bytes(
        status in prop_oneof![Just(200u16), 100u16..600],
        body in proptest::collection::vec(any::<u8>(), 0..512),
        n in 1usize..8,
    ) {
        let pairs: Vec<Pair> = (0..n).map(|i| Pair { item_id: format!("i{i}"), revision: "1".into() }).collect();
        let d = wire::decode_s2(&pairs, SubjectKind::Address, &S2Answer::Http { status, body });
        prop_assert_eq!(d.verdicts.len(), n);
    }

    #[test]
    fn the_s2_decoder_gives_one_verdict_per_pair_for_any_results_json(
        results in proptest::collection::vec(
            (0usize..10, prop_oneof![Just("1".to_string()), "[a-z0-9]{0,3}"],
             prop_oneof![Just("VISIBLE"), Just("NOT_VISIBLE"), Just("STALE"), Just("AHEAD"), Just("UNKNOWN"), Just("PERHAPS"), Just("")]),
            0..12),
        kind in prop_oneof![Just("address"), Just("person_ref"), Just("x")],
        n in 1usize..8,
    ) {
        let pairs: Vec<Pair> = (0..n).map(|i| Pair { item_id: format!("i{i}"), revision: "1".into() }).collect();
        let body = serde_json::json!({
            "subject_kind": kind,
            "results": results.iter().map(|(i, r, v)| serde_json::json!({"item_id": format!("i{i}"), "revision": r, "result": v})).collect::<Vec<_>>(),
        });
        let d = wire::decode_s2(&pairs, SubjectKind::Address, &S2Answer::Http { status: 200, body: body.to_string().into_bytes() });
        prop_assert_eq!(d.verdicts.len(), n);
        // Nothing is silently dropped: every pair the body did not answer exactly once,
        // with a known value, for the asked kind, is UNKNOWN.
        for (i, v) in d.verdicts.iter().enumerate() {
            let answers: Vec<_> = results.iter().filter(|(j, _, _)| *j == i).collect();
            let clean = kind == "address"
                && results.iter().all(|(j, r, _)| *j < n && r == "1")
                && answers.len() == 1
                && Verdict::from_wire(answers[0].2).is_some();
            if !clean { prop_assert_eq!(*v, Verdict::Unknown); }
        }
    }

    #[test]
    fn the_s1_and_s1a_decoders_never_panic_on_any_bytes(
        status in prop_oneof![Just(200u16), Just(410u16), 100u16..600],
        body in proptest::collection::vec(any::<u8>(), 0..512),
    ) {
        let _ = wire::decode_s1(status, &body);
        if let Ok(page) = wire::decode_s1a_page(status, &body) {
            let mut a = AnnounceAssembler::default();
            if let Ok(None) = a.feed(page) { let _ = a.finish(); }
        }
    }

    #[test]
    fn the_s1_decoder_refuses_any_row_with_a_field_beyond_the_four(field in "[a-z_]{1,12}") {
        prop_assume!(!["item_id", "revision", "gone", "touched_at"].contains(&field.as_str()));
        let body = format!(r#"{{"cursor":"c","more":false,"rows":[{{"item_id":"a","revision":"1","gone":false,"touched_at":"2026-11-30T09:00:00Z","{field}":1}}]}}"#);
        prop_assert!(wire::decode_s1(200, body.as_bytes()).is_err());
    }
}

#[test]
fn a_feed_row_whose_touched_at_is_not_contract_time_is_refused() {
    for t in [
        "2026-11-30 09:00:00",
        "2026-11-30T09:00:00+01:00",
        "2026-11-30T09:00:00Z Salaries",
        "",
        "2026-11-30T09:00:00.Z",
    ] {
        let body = format!(
            r#"{{"cursor":"c","more":false,"rows":[{{"item_id":"a","revision":"1","gone":false,"touched_at":"{t}"}}]}}"#
        );
        assert!(
            wire::decode_s1(200, body.as_bytes()).is_err(),
            "accepted {t:?}"
        );
    }
    assert!(wire::is_contract_time("2026-11-30T09:00:00.125Z"));
}

#[test]
fn every_roster_example_decodes_and_a_field_the_schema_does_not_name_is_refused() {
    for (name, bytes) in examples("roster-response") {
        let r = memoria::decode_roster(200, &bytes, "acme")
            .unwrap_or_else(|e| panic!("{name} does not decode: {e}"));
        assert!(r.members.iter().all(|m| m.contains('@')), "{name}");
        let mut json: Value = serde_json::from_slice(&bytes).unwrap();
        json["guests"] = serde_json::json!([]);
        assert!(!validator("roster-response").is_valid(&json), "{name}");
        assert!(
            memoria::decode_roster(200, &serde_json::to_vec(&json).unwrap(), "acme").is_err(),
            "{name} with a field the schema does not name decodes"
        );
    }
}
