//! The reference's embeddings client against the stub provider: over real loopback (as `serve-provider` serves it) and over turmoil (as a simulated world would), with every knob (§7.2, §8.3).

use std::net::SocketAddr;
use std::sync::Arc;

use memoria::{
    Connection, DialFuture, Dialer, EMBED_MODEL, EmbedClient, EmbedError, EmbedErrorKind,
    EmbedPolicy, Embedding, ProviderKey,
};
use memoria_simulator::{
    Drift, ProviderDown, SENTINEL_MARKER, StubProvider, TurmoilDialer, sentinel_vector,
    serve_loopback, serve_turmoil, stub_dot,
};

const KEY: &str = "tx-stub-key";

/// Dials the stub's loopback address whatever host is asked for.
struct ToStub(SocketAddr);

impl Dialer for ToStub {
    fn dial<'a>(&'a self, _host: &'a str, _port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let s = tokio::net::TcpStream::connect(self.0).await?;
            Ok(Box::new(s) as Box<dyn Connection>)
        })
    }
}

async fn served() -> (StubProvider, EmbedClient) {
    served_with(StubProvider::new()).await
}

/// `stub` on loopback, and memoria's client dialing it.
async fn served_with(stub: StubProvider) -> (StubProvider, EmbedClient) {
    let (addr, _task) = serve_loopback(stub.router(), "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let client = EmbedClient::plain_http_stand_in(
        Arc::new(ToStub(addr)),
        "127.0.0.1",
        addr.port(),
        ProviderKey::parse(KEY).unwrap(),
    );
    (stub, client)
}

/// Small, fast numbers: three attempts, 1 ms backoff, a short deadline.
fn policy() -> EmbedPolicy {
    EmbedPolicy {
        attempts_max: 3,
        backoff_base_ms: 1,
        retry_after_max_ms: 5,
        deadline_ms: 2_000,
        ..EmbedPolicy::INGEST
    }
}

fn close(a: &Embedding, b: &[f32]) -> bool {
    a.values().iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
}

#[tokio::test]
async fn the_client_gets_the_stubs_vectors_and_the_stub_records_what_was_sent() {
    let (stub, client) = served().await;
    let texts = [
        "the boiler service is due in March",
        "book the boiler service",
        "quarterly revenue targets",
    ];
    let sentinel = format!("a passage carrying {SENTINEL_MARKER}");
    let mut inputs: Vec<&str> = texts.to_vec();
    inputs.push(&sentinel);
    let got = client.embed(&inputs, &policy()).await.unwrap();
    for (e, text) in got.iter().zip(&inputs) {
        assert!(close(e, &stub.expected(text).unwrap()), "{text}");
    }
    assert!(close(&got[3], &sentinel_vector()));
    let (a, b, c) = (got[0].values(), got[1].values(), got[2].values());
    assert!(stub_dot(a, b) > stub_dot(a, c), "shared words score higher");
    let sent = stub.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].model.as_deref(), Some(EMBED_MODEL));
    assert_eq!(sent[0].inputs, inputs);
    assert_eq!(sent[0].authorization.as_deref(), Some("Bearer tx-stub-key"));
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert!(body.get("dimensions").is_none());
}

#[tokio::test]
async fn rate_limited_calls_are_retried_until_the_stub_answers() {
    let (stub, client) = served().await;
    stub.rate_limit_next(2);
    client.embed(&["office hours"], &policy()).await.unwrap();
    assert_eq!(stub.calls(), 3);
}

#[tokio::test]
async fn each_failure_knob_is_refused_by_the_client_with_its_kind() {
    let (stub, client) = served().await;
    type Knob = fn(&StubProvider);
    let cases: [(Knob, EmbedErrorKind); 5] = [
        (
            |s| s.set_down(Some(ProviderDown::Status(503))),
            EmbedErrorKind::Unavailable,
        ),
        (
            |s| s.set_down(Some(ProviderDown::Refuse)),
            EmbedErrorKind::Unreachable,
        ),
        (
            |s| s.set_wrong_length(Some(1024)),
            EmbedErrorKind::Dimensions,
        ),
        (|s| s.set_nan(true), EmbedErrorKind::NonFinite),
        (|s| s.set_all_zero(true), EmbedErrorKind::AllZero),
    ];
    for (knob, kind) in cases {
        stub.clear_faults();
        knob(&stub);
        let e: EmbedError = client
            .embed(&["office hours"], &policy())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), kind, "{e}");
    }
    stub.clear_faults();
    stub.set_slow(Some(300));
    let quick = EmbedPolicy {
        deadline_ms: 30,
        attempts_max: 1,
        ..policy()
    };
    let e = client.embed(&["office hours"], &quick).await.unwrap_err();
    assert_eq!(e.kind(), EmbedErrorKind::Deadline, "{e}");
}

#[tokio::test]
async fn drift_moves_the_vectors_the_client_receives_by_about_delta() {
    let (stub, client) = served().await;
    let before = client.embed_query("the canary sentence").await.unwrap();
    stub.set_drift(Some(Drift {
        seed: 11,
        delta: 0.2,
    }));
    let after = client.embed_query("the canary sentence").await.unwrap();
    let cos = stub_dot(before.values(), after.values());
    assert!((0.95..0.995).contains(&cos), "cosine {cos}");
}

#[test]
fn the_client_reaches_the_stub_on_a_turmoil_host() {
    let mut sim = turmoil::Builder::new().build();
    let stub = StubProvider::new();
    let router = stub.router();
    sim.host("api.tensorx.ai", move || serve_turmoil(router.clone(), 80));
    sim.client("memoria", async move {
        let client = EmbedClient::plain_http_stand_in(
            Arc::new(TurmoilDialer),
            "api.tensorx.ai",
            80,
            ProviderKey::parse(KEY).unwrap(),
        );
        let got = client.embed_query(SENTINEL_MARKER).await?;
        assert!(close(&got, &sentinel_vector()));
        Ok(())
    });
    sim.run().unwrap();
    assert_eq!(stub.calls(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_minilm_model_the_stub_answers_vectors_that_carry_meaning() {
    // Needs `fixtures/corpus/fetch-minilm` (the README's test command runs it).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = memoria_simulator::ModelEmbedder::start(&root).unwrap_or_else(|e| panic!("{e}"));
    let (_stub, client) = served_with(StubProvider::new().with_model(model)).await;
    let inputs = [
        "That is a happy person",
        "That is a very happy person",
        "Today is a sunny day",
    ];
    let got = client
        .embed(
            &inputs,
            &EmbedPolicy {
                deadline_ms: 60_000,
                ..policy()
            },
        )
        .await
        .unwrap();
    let cos = |a: &Embedding, b: &Embedding| stub_dot(a.values(), b.values());
    // The model card's figures (0.943, 0.257): meaning, not shared words.
    assert!((cos(&got[0], &got[1]) - 0.943).abs() < 0.01);
    assert!((cos(&got[0], &got[2]) - 0.257).abs() < 0.02);
    assert!(
        got[0].values()[memoria_simulator::MODEL_VALUES..]
            .iter()
            .all(|x| *x == 0.0),
        "past the model's 384 values the provider's 4,096 are zeros"
    );
}
