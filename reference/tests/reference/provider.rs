//! The embedding provider's client against a `wiremock` server: the request it sends, the responses it accepts, and every response it refuses (§7.2, §8.3).
//!
//! The client reaches the mock through a test dialer that maps any host to
//! the mock's loopback address, over the plain-HTTP constructor only the
//! `testkit` feature has. Waits are the mock's own small delays and
//! policies with millisecond backoffs; no test sleeps.

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memoria::{
    Connection, DialFuture, Dialer, EMBED_MODEL, EMBED_PATH, EMBEDDING_VALUES, EmbedClient,
    EmbedError, EmbedErrorKind, EmbedPolicy, ProviderKey,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const KEY: &str = "tx-test-key-7f3a";

/// Dials the mock's address whatever host is asked for.
struct ToMock(SocketAddr);

impl Dialer for ToMock {
    fn dial<'a>(&'a self, _host: &'a str, _port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let s = tokio::net::TcpStream::connect(self.0).await?;
            Ok(Box::new(s) as Box<dyn Connection>)
        })
    }
}

fn client(server: &MockServer) -> EmbedClient {
    let addr = *server.address();
    EmbedClient::plain_http_stand_in(
        Arc::new(ToMock(addr)),
        "provider.test",
        addr.port(),
        ProviderKey::parse(KEY).unwrap(),
    )
}

/// Small, fast numbers: two inputs a call, three attempts, 1 ms backoff.
fn policy() -> EmbedPolicy {
    EmbedPolicy {
        inputs_per_call: 2,
        deadline_ms: 2_000,
        attempts_max: 3,
        backoff_base_ms: 1,
        retry_after_max_ms: 5,
        response_bytes_max: memoria::EMBED_RESPONSE_BYTES_MAX,
    }
}

/// A vector whose every value is `fill`.
fn values(fill: f32) -> Vec<f32> {
    vec![fill; EMBEDDING_VALUES]
}

/// An OpenAI-shaped response of `(index, values)` pairs, as JSON text.
fn response(items: &[(usize, serde_json::Value)]) -> Vec<u8> {
    let data: Vec<serde_json::Value> = items
        .iter()
        .map(|(i, v)| serde_json::json!({"object": "embedding", "index": i, "embedding": v}))
        .collect();
    serde_json::to_vec(&serde_json::json!({"object": "list", "model": EMBED_MODEL, "data": data}))
        .unwrap()
}

/// The request's inputs.
fn inputs_of(r: &Request) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    v["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// A responder embedding each input `"tN"` as a vector of `N + 1`.
fn echo(r: &Request) -> ResponseTemplate {
    let items: Vec<(usize, serde_json::Value)> = inputs_of(r)
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let n: f32 = s.trim_start_matches('t').parse().unwrap();
            (i, serde_json::json!(values(n + 1.0)))
        })
        .collect();
    ResponseTemplate::new(200).set_body_raw(response(&items), "application/json")
}

fn ok_one(fill: f32) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(
        response(&[(0, serde_json::json!(values(fill)))]),
        "application/json",
    )
}

async fn mount(server: &MockServer, template: ResponseTemplate) {
    Mock::given(method("POST"))
        .and(path(EMBED_PATH))
        .respond_with(template)
        .mount(server)
        .await;
}

async fn requests(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn the_request_is_the_pinned_model_and_the_inputs_with_a_bearer_key_and_nothing_else() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(EMBED_PATH))
        .respond_with(echo)
        .mount(&server)
        .await;
    let got = client(&server)
        .embed(&["t0", "t1"], &policy())
        .await
        .unwrap();
    assert_eq!(got.len(), 2);
    let sent = requests(&server).await;
    assert_eq!(sent.len(), 1);
    let r = &sent[0];
    let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["input", "model"],
        "no dimensions, no encoding_format"
    );
    assert_eq!(body["model"], EMBED_MODEL);
    assert_eq!(body["input"], serde_json::json!(["t0", "t1"]));
    let header = |name: &str| r.headers.get(name).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(header("authorization"), Some(format!("Bearer {KEY}")));
    assert_eq!(header("accept-encoding"), Some("gzip".into()));
    assert_eq!(header("content-type"), Some("application/json".into()));
}

#[tokio::test]
async fn a_gzip_response_is_decoded() {
    let server = MockServer::start().await;
    let body = gzip(&response(&[(0, serde_json::json!(values(0.5)))]));
    mount(
        &server,
        ResponseTemplate::new(200)
            .set_body_raw(body, "application/json")
            .insert_header("content-encoding", "gzip"),
    )
    .await;
    let got = client(&server).embed(&["t0"], &policy()).await.unwrap();
    assert_eq!(got[0].values()[EMBEDDING_VALUES - 1], 0.5);
}

#[tokio::test]
async fn inputs_are_sent_in_batches_and_come_back_in_order() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(EMBED_PATH))
        .respond_with(echo)
        .mount(&server)
        .await;
    let inputs = ["t0", "t1", "t2", "t3", "t4"];
    let got = client(&server).embed(&inputs, &policy()).await.unwrap();
    let firsts: Vec<f32> = got.iter().map(|e| e.values()[0]).collect();
    assert_eq!(firsts, [1.0, 2.0, 3.0, 4.0, 5.0]);
    let batches: Vec<Vec<String>> = requests(&server).await.iter().map(inputs_of).collect();
    assert_eq!(batches, [vec!["t0", "t1"], vec!["t2", "t3"], vec!["t4"]]);
}

#[tokio::test]
async fn no_inputs_send_nothing_and_an_empty_input_is_refused_before_sending() {
    let server = MockServer::start().await;
    mount(&server, ok_one(0.5)).await;
    let c = client(&server);
    assert!(c.embed(&[], &policy()).await.unwrap().is_empty());
    let e = c.embed(&["t0", "  "], &policy()).await.unwrap_err();
    assert!(matches!(e, EmbedError::Input { index: 1, .. }), "{e}");
    let long = "a".repeat(memoria::EMBED_INPUT_BYTES_MAX + 1);
    let e = c.embed(&[long.as_str()], &policy()).await.unwrap_err();
    assert_eq!(e.kind(), EmbedErrorKind::Input);
    assert!(requests(&server).await.is_empty());
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after_and_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "0"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    mount(&server, ok_one(0.25)).await;
    let got = client(&server).embed(&["t0"], &policy()).await.unwrap();
    assert_eq!(got[0].values()[0], 0.25);
    assert_eq!(requests(&server).await.len(), 2);
}

#[tokio::test]
async fn a_429_on_every_attempt_is_rate_limited_after_the_last() {
    let server = MockServer::start().await;
    mount(&server, ResponseTemplate::new(429)).await;
    let e = client(&server).embed(&["t0"], &policy()).await.unwrap_err();
    assert!(matches!(e, EmbedError::RateLimited { attempts: 3 }), "{e}");
    assert_eq!(requests(&server).await.len(), 3);
}

#[tokio::test]
async fn five_hundreds_are_retried_until_the_attempts_run_out() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(503).set_body_string("upstream t0 down"),
    )
    .await;
    let e = client(&server).embed(&["t0"], &policy()).await.unwrap_err();
    assert!(
        matches!(
            e,
            EmbedError::Unavailable {
                status: 503,
                attempts: 3
            }
        ),
        "{e}"
    );
    assert!(!format!("{e}").contains("t0"), "no body in the error");
    assert_eq!(requests(&server).await.len(), 3);
}

#[tokio::test]
async fn a_400_is_not_retried() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(400).set_body_string(r#"{"error":"dimensions not supported"}"#),
    )
    .await;
    let e = client(&server).embed(&["t0"], &policy()).await.unwrap_err();
    assert!(matches!(e, EmbedError::Refused { status: 400 }), "{e}");
    assert_eq!(requests(&server).await.len(), 1);
}

#[tokio::test]
async fn an_answer_past_the_deadline_is_a_deadline_error() {
    let server = MockServer::start().await;
    mount(&server, ok_one(0.5).set_delay(Duration::from_millis(400))).await;
    let quick = EmbedPolicy {
        deadline_ms: 40,
        attempts_max: 1,
        ..policy()
    };
    let e = client(&server).embed(&["t0"], &quick).await.unwrap_err();
    assert!(
        matches!(
            e,
            EmbedError::Deadline {
                attempts: 1,
                deadline_ms: 40
            }
        ),
        "{e}"
    );
}

/// Mounts `body` as the only answer and returns the error embedding `n` inputs gives.
async fn refused(body: Vec<u8>, n: usize) -> EmbedError {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(body, "application/json"),
    )
    .await;
    let inputs: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let e = client(&server)
        .embed(&inputs, &policy())
        .await
        .expect_err("the response is refused");
    assert_eq!(
        requests(&server).await.len(),
        1,
        "a bad response is not retried"
    );
    e
}

#[tokio::test]
async fn a_vector_of_the_wrong_length_is_refused() {
    let short = serde_json::json!(vec![0.5f32; 512]);
    let e = refused(response(&[(0, short)]), 1).await;
    assert!(
        matches!(
            e,
            EmbedError::Dimensions {
                index: 0,
                values: 512
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn a_nan_or_infinite_value_is_refused() {
    let mut v: Vec<serde_json::Value> = values(0.5)
        .into_iter()
        .map(|f| serde_json::json!(f))
        .collect();
    v[9] = serde_json::Value::Null;
    let e = refused(response(&[(0, serde_json::json!(v))]), 1).await;
    assert!(
        matches!(
            e,
            EmbedError::NonFinite {
                index: 0,
                position: 9
            }
        ),
        "{e}"
    );
    let text = String::from_utf8(response(&[(0, serde_json::json!(values(0.5)))]))
        .unwrap()
        .replacen("0.5", "1e40", 1);
    let e = refused(text.into_bytes(), 1).await;
    assert!(
        matches!(e, EmbedError::NonFinite { position: 0, .. }),
        "{e}"
    );
}

#[tokio::test]
async fn an_all_zero_vector_is_refused() {
    let e = refused(
        response(&[
            (0, serde_json::json!(values(0.5))),
            (1, serde_json::json!(values(0.0))),
        ]),
        2,
    )
    .await;
    assert!(matches!(e, EmbedError::AllZero { index: 1 }), "{e}");
}

#[tokio::test]
async fn a_vector_without_an_index_is_refused_as_malformed() {
    let body =
        serde_json::to_vec(&serde_json::json!({"data": [{"embedding": values(0.5)}]})).unwrap();
    let e = refused(body, 1).await;
    assert_eq!(e.kind(), EmbedErrorKind::Malformed, "{e}");
}

#[tokio::test]
async fn an_index_named_twice_or_out_of_range_is_refused() {
    let v = serde_json::json!(values(0.5));
    let e = refused(response(&[(0, v.clone()), (0, v.clone())]), 2).await;
    assert!(matches!(e, EmbedError::DuplicateIndex { index: 0 }), "{e}");
    let e = refused(response(&[(0, v.clone()), (2, v)]), 2).await;
    assert!(
        matches!(
            e,
            EmbedError::IndexOutOfRange {
                index: 2,
                expected: 2
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn a_response_with_the_wrong_count_is_refused() {
    let v = serde_json::json!(values(0.5));
    let e = refused(response(&[(0, v)]), 2).await;
    assert!(
        matches!(
            e,
            EmbedError::Count {
                expected: 2,
                got: 1
            }
        ),
        "{e}"
    );
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_on_the_wire_and_after_gunzip() {
    let body = response(&[(0, serde_json::json!(values(0.5)))]);
    let small = EmbedPolicy {
        response_bytes_max: body.len() - 1,
        ..policy()
    };
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200).set_body_raw(body.clone(), "application/json"),
    )
    .await;
    let e = client(&server).embed(&["t0"], &small).await.unwrap_err();
    assert_eq!(e.kind(), EmbedErrorKind::TooLarge, "{e}");

    let zipped = gzip(&body);
    assert!(zipped.len() < small.response_bytes_max, "small on the wire");
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200)
            .set_body_raw(zipped, "application/json")
            .insert_header("content-encoding", "gzip"),
    )
    .await;
    let e = client(&server).embed(&["t0"], &small).await.unwrap_err();
    assert!(matches!(e, EmbedError::TooLarge { .. }), "{e}");
}

#[tokio::test]
async fn an_unknown_encoding_or_broken_gzip_is_refused() {
    let server = MockServer::start().await;
    mount(
        &server,
        ResponseTemplate::new(200)
            .set_body_raw(b"\x1f\x8b\x08garbage".to_vec(), "application/json")
            .insert_header("content-encoding", "gzip"),
    )
    .await;
    let e = client(&server).embed(&["t0"], &policy()).await.unwrap_err();
    assert_eq!(e.kind(), EmbedErrorKind::Encoding, "{e}");
    let server = MockServer::start().await;
    mount(&server, ok_one(0.5).insert_header("content-encoding", "br")).await;
    let e = client(&server).embed(&["t0"], &policy()).await.unwrap_err();
    assert_eq!(e.kind(), EmbedErrorKind::Encoding, "{e}");
}

#[tokio::test]
async fn an_unreachable_provider_is_an_error_after_the_attempts() {
    // Bind and drop a listener: nothing answers on that port.
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let c = EmbedClient::plain_http_stand_in(
        Arc::new(ToMock(addr)),
        "provider.test",
        addr.port(),
        ProviderKey::parse(KEY).unwrap(),
    );
    let e = c.embed(&["t0"], &policy()).await.unwrap_err();
    assert!(
        matches!(e, EmbedError::Unreachable { attempts: 3, .. }),
        "{e}"
    );
}

/// A `tracing` writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn nothing_the_client_logs_carries_an_input_a_body_a_value_or_the_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("body-canary-91"))
        .up_to_n_times(2)
        .mount(&server)
        .await;
    mount(&server, ok_one(0.123_456_7)).await;
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    client(&server)
        .embed(&["input-canary-42"], &policy())
        .await
        .unwrap();
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(log.contains("retrying"), "the retries are logged: {log}");
    for secret in ["input-canary-42", "body-canary-91", KEY, "0.1234"] {
        assert!(!log.contains(secret), "the log carries {secret}: {log}");
    }
}

/// Records every dial, then dials the mock.
struct Recording(SocketAddr, Arc<Mutex<Vec<(String, u16)>>>);

impl Dialer for Recording {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        self.1.lock().unwrap().push((host.to_owned(), port));
        Box::pin(async move {
            let s = tokio::net::TcpStream::connect(self.0).await?;
            Ok(Box::new(s) as Box<dyn Connection>)
        })
    }
}

#[tokio::test]
async fn the_tensorx_client_dials_its_fixed_host_through_the_dialer_and_speaks_tls_first() {
    let server = MockServer::start().await;
    mount(&server, ok_one(0.5)).await;
    let dials = Arc::new(Mutex::new(Vec::new()));
    let c = EmbedClient::tensorx(
        Arc::new(Recording(*server.address(), dials.clone())),
        ProviderKey::parse(KEY).unwrap(),
    );
    let e = c
        .embed(
            &["t0"],
            &EmbedPolicy {
                attempts_max: 1,
                ..policy()
            },
        )
        .await
        .unwrap_err();
    // A plain-HTTP server cannot complete a TLS handshake: nothing was
    // sent in the clear, and the failure is the provider being unreachable.
    assert_eq!(e.kind(), EmbedErrorKind::Unreachable, "{e}");
    assert_eq!(
        *dials.lock().unwrap(),
        [(memoria::PROVIDER_HOST.to_owned(), memoria::PROVIDER_PORT)]
    );
    assert!(
        requests(&server).await.is_empty(),
        "no HTTP request in the clear"
    );
}
