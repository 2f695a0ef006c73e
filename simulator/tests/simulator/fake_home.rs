//! The fake home against `fixtures/contract/`: every roster it answers validates against `roster-response`, the reference's decoder reads it, and each fault shows on the wire (§4.3, suite call 8).

use axum::body::Body;
use http::{Request, header};
use memoria_simulator::{Clock, FakeHome, GARBAGE, HomeFault};
use serde_json::Value;
use tower::ServiceExt as _;

const TOKEN: &str = "home-token-1";

async fn pull(home: &FakeHome, token: &str) -> (u16, Vec<u8>) {
    let request = Request::get("/roster")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Body::empty())
        .expect("a request");
    let r = home.router().oneshot(request).await.expect("an answer");
    let status = r.status().as_u16();
    let body = axum::body::to_bytes(r.into_body(), usize::MAX)
        .await
        .expect("a body");
    (status, body.to_vec())
}

fn valid(body: &[u8]) -> bool {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    memoria_contract::validator("roster-response")
        .expect("the roster schema")
        .is_valid(&value)
}

#[tokio::test]
async fn the_homes_rosters_validate_and_decode_and_each_fault_shows_on_the_wire() {
    let home = FakeHome::new(
        "acme",
        TOKEN,
        "gen-1",
        &["cai@acme.test"],
        Clock::manual().0,
    );
    let (status, body) = pull(&home, TOKEN).await;
    assert_eq!(status, 200);
    assert!(valid(&body), "{}", String::from_utf8_lossy(&body));
    let r = memoria::decode_roster(status, &body, "acme").expect("decodes");
    assert_eq!((r.generation.as_str(), r.epoch), ("gen-1", 1));
    assert!(r.members.contains("cai@acme.test"));

    home.remove("cai@acme.test");
    let (_, body) = pull(&home, TOKEN).await;
    let r = memoria::decode_roster(200, &body, "acme").expect("decodes");
    assert!(valid(&body) && r.epoch == 2 && r.members.is_empty());

    home.set_fault(HomeFault::StaleEpoch);
    let (_, body) = pull(&home, TOKEN).await;
    let r = memoria::decode_roster(200, &body, "acme").expect("decodes");
    assert!(valid(&body) && r.epoch == 1 && r.members.contains("cai@acme.test"));

    home.set_fault(HomeFault::Down);
    assert_eq!(pull(&home, TOKEN).await.0, 503);
    for g in GARBAGE {
        home.set_fault(HomeFault::Garbage(g));
        let (status, body) = pull(&home, TOKEN).await;
        assert!(status == 200 && !valid(&body), "{g:?} validates");
        assert!(
            memoria::decode_roster(status, &body, "acme").is_err(),
            "{g:?} decodes"
        );
    }
    home.set_fault(HomeFault::None);
    assert_eq!(pull(&home, "wrong").await.0, 401);
    home.new_generation("gen-2", &["eve@acme.test"]);
    let (_, body) = pull(&home, TOKEN).await;
    let r = memoria::decode_roster(200, &body, "acme").expect("decodes");
    assert!(valid(&body) && r.generation == "gen-2" && r.epoch == 1);
    assert_eq!(home.pulls().len(), 5 + GARBAGE.len() + 1);
}
