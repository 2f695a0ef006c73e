//! A stub provider: the OpenAI-compatible `POST /v1/embeddings` of §8.3 over a deterministic, NOT semantic, embedder, and `POST /v1/chat/completions` answering scripted replies, each with fault knobs (§7.2, §8.2, §8.3, issues 12 and 14).
//!
//! No real model is reachable from these machines, so the tests, the gates
//! and the demo embed through this. Its vectors come from hashed word
//! features: each distinct word of an input (lower-cased, split on anything
//! not alphanumeric) adds signed unit features at positions drawn from the
//! word's hash, half of them inside the first [`STUB_PREFIX_VALUES`] values
//! and half anywhere in the [`STUB_VECTOR_VALUES`], and the sum is
//! normalised to unit L2. So two texts sharing words have a higher dot
//! product than two that share none, and the prefix the dense index keeps
//! (§7.2's truncation) keeps that overlap. That is all it does: it knows
//! nothing of meaning, synonyms, or language, and a ranking quality
//! measured against it measures word overlap (gate 29 needs a real model).
//!
//! One input is special: any input containing [`SENTINEL_MARKER`] gets
//! [`sentinel_vector`], a fixed, distinctive vector gate 2 looks for at rest.
//! And one is always refused: a call with any input containing
//! [`REFUSED_MARKER`] is answered 400 ("input rejected") whole, as a real
//! provider rejects a batch for one input its filters refuse (issue 26).
//!
//! Every request body is recorded in memory ([`StubProvider::requests`]),
//! for gates that check what was sent (32, 39); nothing is logged. The knobs
//! ([`ProviderFaults`], switched through [`StubProvider`] at any time, as
//! the fake sibling's are) bend the answers: down, slow, 429 for the next N
//! calls, wrong length, NaN, all-zero, and drift (a seeded perturbation for
//! the embedding canary, gate 30). Delays are `tokio::time::sleep`, which
//! turmoil simulates; nothing here reads the wall clock.
//!
//! The chat completions call is the same provider's (§8.3 names one for
//! both), so it is this stub's too. It answers scripted replies: texts
//! queued through [`StubProvider::push_chat_reply`], one per answered
//! call, then [`StubProvider::set_chat_default_reply`]'s (at first
//! [`STUB_CHAT_DEFAULT_REPLY`]). Content-level faults (a sentence citing an
//! id that was not sent, an injected remote image) are scripted replies,
//! not knobs. Every chat request body is recorded in memory
//! ([`StubProvider::chat_requests`]) and never logged. Its knobs
//! ([`ChatFaults`]) are the embeddings call's in kind: down, slow, 429 for
//! the next N calls, plus a malformed JSON body, a reply marked truncated
//! (`finish_reason: length`) and an oversized
//! ([`STUB_CHAT_OVERSIZED_BYTES`]) one.
//!
//! Serve it like a fake sibling: `serve_turmoil(stub.router(), port)` as a
//! turmoil host's body, or `serve_loopback(stub.router(), addr)` outside a
//! simulation (`memoria-harness serve-provider`). The router carries
//! [`CONTROL_PATH`] for the knobs; the contract path never does.
//!
//! This file is the stub itself: its knobs, its record and its router. The
//! hashed-word embedder is `provider/hashed.rs`, the HTTP handlers
//! `provider/handlers.rs`, and the fake chat models (the extractive
//! stand-in) `provider/models.rs`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::routing::post;

use crate::fake::control::CONTROL_PATH;
use crate::fake::embedder::ModelEmbedder;

mod handlers;
mod hashed;
mod models;

use handlers::{chat_completions, control, embeddings};
use hashed::drifted;
pub use hashed::{SENTINEL_MARKER, dot, embed_text, sentinel_vector};

/// A word the stub always refuses to embed: a call with any input
/// containing it is answered 400, "input rejected", whole, whatever the
/// knobs (issue 26: one passage a provider always refuses must not block
/// the queue). Never in a fixture's text; a scenario puts it in a
/// document's words to make that document's passage the refused one.
pub const REFUSED_MARKER: &str = "qxrefusedbytheprovider";

/// The path the stub serves: the provider's embeddings call (§8.3).
pub const STUB_EMBED_PATH: &str = memoria::EMBED_PATH;
/// The values in every vector the stub returns: the pinned model's 4,096 (§7.2).
pub const STUB_VECTOR_VALUES: usize = memoria::EMBEDDING_VALUES;
/// The leading values that carry half of each word's features: the 512
/// the dense index keeps after truncation (§7.2), so the kept prefix still
/// reflects word overlap, as a Matryoshka model's does.
pub const STUB_PREFIX_VALUES: usize = 512;
/// Features each distinct word adds: half in the prefix, half anywhere.
pub const STUB_FEATURES_PER_WORD: usize = 8;
/// The most inputs the stub takes in one call; more answers 400, as a real
/// provider's batch limit would. Twice the client's batch, so the client's
/// own limit is what a test sees.
pub const STUB_INPUTS_PER_CALL_MAX: usize = 2 * memoria::EMBED_INPUTS_PER_CALL_MAX;
/// The largest request body the stub reads, in bytes: a full batch of
/// inputs at the client's input cap, with JSON escaping room.
pub const STUB_REQUEST_BYTES_MAX: usize =
    4 * STUB_INPUTS_PER_CALL_MAX * memoria::EMBED_INPUT_BYTES_MAX;

/// The chat path the stub serves: the provider's chat completions call (§8.3).
pub const STUB_CHAT_PATH: &str = memoria::CHAT_PATH;
/// The reply the stub gives when no scripted reply is queued and no default
/// was set. It cites nothing, so §8.4 would drop it: a test that wants a
/// cited answer scripts one.
pub const STUB_CHAT_DEFAULT_REPLY: &str = "The stub provider has no scripted reply.";
/// The size of the oversized chat body, in bytes: 5 MB (issue 14's "a 5 MB
/// body"), a valid completion whose content is that long.
pub const STUB_CHAT_OVERSIZED_BYTES: usize = 5 * 1024 * 1024;
/// The largest chat request body the stub reads, in bytes: twice the
/// client's own cap, so the client's cap is what a test sees.
pub const STUB_CHAT_REQUEST_BYTES_MAX: usize = 2 * memoria::CHAT_REQUEST_BYTES_MAX;
/// The malformed chat body: a completion cut off mid-string.
const STUB_CHAT_MALFORMED_BODY: &str = r#"{"id":"stub","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"cut of"#;

/// The provider is down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Down {
    /// Answer this status (e.g. 503) to every embeddings call.
    Status(u16),
    /// Drop the connection unanswered (see [`RefuseConnection`](crate::fake::faults::RefuseConnection)).
    Refuse,
}

/// A seeded drift: each vector gets `delta` times a unit perturbation drawn
/// from `seed` and the input, then is renormalised. For small `delta` the
/// cosine to the undrifted vector is about `1 - delta² / 2` (gate 30).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drift {
    /// The perturbation's seed.
    pub seed: u64,
    /// Its magnitude (L2, against a unit vector).
    pub delta: f32,
}

/// The knobs, all off by default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderFaults {
    /// See [`Down`].
    pub down: Option<Down>,
    /// Latency added to every embeddings call, in ms.
    pub slow_ms: Option<u64>,
    /// Answer 429 to this many more calls, then answer again.
    pub rate_limited_calls: u32,
    /// The `Retry-After` those 429s carry, in seconds; none when `None`.
    pub retry_after_s: Option<u64>,
    /// Return vectors of this many values instead of 4,096.
    pub wrong_length: Option<usize>,
    /// Return each vector with its first value `null`, which is how a JSON
    /// serialiser writes NaN.
    pub nan: bool,
    /// Return every vector as all zeros.
    pub all_zero: bool,
    /// See [`Drift`].
    pub drift: Option<Drift>,
}

/// The chat call's knobs, all off by default; apart from the embeddings
/// call's ([`ProviderFaults`]), so one call can fail while the other answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatFaults {
    /// See [`Down`].
    pub down: Option<Down>,
    /// Latency added to every chat call, in ms.
    pub slow_ms: Option<u64>,
    /// Answer 429 to this many more calls, then answer again.
    pub rate_limited_calls: u32,
    /// Answer 200 with a body that is not valid JSON (a completion cut
    /// off mid-string).
    pub malformed: bool,
    /// Answer 200 with a valid completion of
    /// [`STUB_CHAT_OVERSIZED_BYTES`] bytes of content.
    pub oversized: bool,
    /// Answer 200 with the reply as scripted but marked truncated
    /// (`finish_reason: length`), as a provider does when the model hit
    /// its token limit (§8.9: such a reply is rejected whole).
    pub truncated: bool,
}

/// One chat call as received: the body exactly, and the model it asked for.
/// Memory only; never logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedChatRequest {
    /// The request body, byte for byte.
    pub body: Vec<u8>,
    /// The model asked for, if the body parsed.
    pub model: Option<String>,
    /// The `Authorization` header, as sent.
    pub authorization: Option<String>,
}

/// One embeddings call as received: the body exactly, and what it said.
/// Memory only; never logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// The request body, byte for byte.
    pub body: Vec<u8>,
    /// The inputs, if the body parsed.
    pub inputs: Vec<String>,
    /// The model asked for, if the body parsed.
    pub model: Option<String>,
    /// The `Authorization` header, as sent.
    pub authorization: Option<String>,
}

#[derive(Debug, Default)]
struct StubState {
    faults: ProviderFaults,
    requests: Vec<RecordedRequest>,
    /// A real model answering in place of the hashed words (loopback only).
    model: Option<Arc<ModelEmbedder>>,
    chat_faults: ChatFaults,
    chat_requests: Vec<RecordedChatRequest>,
    /// Scripted replies, one per answered chat call, first in first out.
    chat_replies: VecDeque<String>,
    /// The reply once the queue is empty; `None` is [`STUB_CHAT_DEFAULT_REPLY`].
    chat_default: Option<String>,
    /// A marker every response body carries (error messages, the malformed
    /// and oversized chat bodies): what gate 31 looks for in the logs.
    body_marker: Option<String>,
    /// Once the queue is empty, answer with [`extractive_reply`](models::extractive_reply) instead of
    /// the default reply (the demo's stand-in for a model).
    chat_extractive: bool,
    /// Answer memoria's answer requests apart ([`StubProvider::set_answers_apart`]).
    answers_apart: bool,
    /// The answer requests answered apart, their bodies in order.
    answer_requests: Vec<Vec<u8>>,
}

/// The stub provider: its router, its knobs and its record. Clones share
/// one stub.
#[derive(Debug, Clone, Default)]
pub struct StubProvider(Arc<Mutex<StubState>>);

impl StubProvider {
    /// A stub with every knob off and nothing recorded.
    #[must_use]
    pub fn new() -> StubProvider {
        StubProvider::default()
    }

    fn with<R>(&self, f: impl FnOnce(&mut StubState) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// This stub answering a real model's vectors ([`ModelEmbedder`]:
    /// all-MiniLM-L6-v2, 384 values then zeros to
    /// [`STUB_VECTOR_VALUES`]) instead of hashed words; the knobs still
    /// apply. For loopback demos only, never inside a simulation (the
    /// model is a child process on the wall clock). [`StubProvider::expected`]
    /// knows only the hashed words.
    #[must_use]
    pub fn with_model(self, model: ModelEmbedder) -> StubProvider {
        self.with(|s| s.model = Some(Arc::new(model)));
        self
    }

    /// `POST /v1/embeddings`, `POST /v1/chat/completions` and `POST /_control`.
    pub fn router(&self) -> Router {
        Router::new()
            .route(STUB_EMBED_PATH, post(embeddings))
            .route(STUB_CHAT_PATH, post(chat_completions))
            .route(CONTROL_PATH, post(control))
            .with_state(self.clone())
    }

    /// The knobs as they are now.
    #[must_use]
    pub fn faults(&self) -> ProviderFaults {
        self.with(|s| s.faults.clone())
    }

    /// Replaces every knob at once.
    pub fn set_faults(&self, faults: ProviderFaults) {
        self.with(|s| s.faults = faults);
    }

    /// Turns every knob off.
    pub fn clear_faults(&self) {
        self.set_faults(ProviderFaults::default());
    }

    /// Sets or clears [`Down`].
    pub fn set_down(&self, down: Option<Down>) {
        self.with(|s| s.faults.down = down);
    }

    /// Sets or clears the added latency, in ms.
    pub fn set_slow(&self, latency_ms: Option<u64>) {
        self.with(|s| s.faults.slow_ms = latency_ms);
    }

    /// Answers 429 to the next `calls` embeddings calls.
    pub fn rate_limit_next(&self, calls: u32) {
        self.with(|s| s.faults.rate_limited_calls = calls);
    }

    /// Sets or clears the `Retry-After` the embeddings 429s carry, in
    /// seconds.
    pub fn set_retry_after(&self, seconds: Option<u64>) {
        self.with(|s| s.faults.retry_after_s = seconds);
    }

    /// Sets or clears the wrong vector length.
    pub fn set_wrong_length(&self, values: Option<usize>) {
        self.with(|s| s.faults.wrong_length = values);
    }

    /// Switches NaN values on or off.
    pub fn set_nan(&self, on: bool) {
        self.with(|s| s.faults.nan = on);
    }

    /// Switches all-zero vectors on or off.
    pub fn set_all_zero(&self, on: bool) {
        self.with(|s| s.faults.all_zero = on);
    }

    /// Sets or clears [`Drift`].
    pub fn set_drift(&self, drift: Option<Drift>) {
        self.with(|s| s.faults.drift = drift);
    }

    /// Every embeddings call received, in order.
    #[must_use]
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.with(|s| s.requests.clone())
    }

    /// How many embeddings calls were received.
    #[must_use]
    pub fn calls(&self) -> usize {
        self.with(|s| s.requests.len())
    }

    /// Forgets the recorded calls.
    pub fn clear_requests(&self) {
        self.with(|s| s.requests.clear());
    }

    /// The chat knobs as they are now.
    #[must_use]
    pub fn chat_faults(&self) -> ChatFaults {
        self.with(|s| s.chat_faults.clone())
    }

    /// Replaces every chat knob at once.
    pub fn set_chat_faults(&self, faults: ChatFaults) {
        self.with(|s| s.chat_faults = faults);
    }

    /// Turns every chat knob off. The scripted replies stay.
    pub fn clear_chat_faults(&self) {
        self.set_chat_faults(ChatFaults::default());
    }

    /// Sets or clears [`Down`] for the chat call.
    pub fn set_chat_down(&self, down: Option<Down>) {
        self.with(|s| s.chat_faults.down = down);
    }

    /// Sets or clears the chat call's added latency, in ms.
    pub fn set_chat_slow(&self, latency_ms: Option<u64>) {
        self.with(|s| s.chat_faults.slow_ms = latency_ms);
    }

    /// Answers 429 to the next `calls` chat calls.
    pub fn chat_rate_limit_next(&self, calls: u32) {
        self.with(|s| s.chat_faults.rate_limited_calls = calls);
    }

    /// Switches the malformed chat body on or off.
    pub fn set_chat_malformed(&self, on: bool) {
        self.with(|s| s.chat_faults.malformed = on);
    }

    /// Switches the cut-off reply (`finish_reason: "length"`) on or off.
    pub fn set_chat_truncated(&self, on: bool) {
        self.with(|s| s.chat_faults.truncated = on);
    }

    /// Switches the 5 MB chat body on or off.
    pub fn set_chat_oversized(&self, on: bool) {
        self.with(|s| s.chat_faults.oversized = on);
    }

    /// Sets the marker every response body then carries, on both calls:
    /// appended to an error's message, and to the malformed chat body;
    /// the oversized chat body is the marker repeated. `None`: the plain
    /// bodies. Gate 31 greps the logs for it.
    pub fn set_body_marker(&self, marker: Option<&str>) {
        self.with(|s| s.body_marker = marker.map(str::to_owned));
    }

    /// Answers, once the queue is empty, with [`extractive_reply`](models::extractive_reply): the
    /// first sentence of each of the first three passages sent, each cited
    /// to its id; to §8.9's address request, the lines that look like a
    /// street address, as the JSON list it asks for. Deterministic and NOT a model: it shows a cited answer
    /// in the demo, and proves nothing about a model's quality.
    pub fn set_chat_extractive(&self, on: bool) {
        self.with(|s| s.chat_extractive = on);
    }

    /// Answers memoria's answer requests (§8.4: the system message is
    /// `memoria::answer::ANSWER_INSTRUCTIONS`) on the side: with
    /// [`STUB_ANSWER_APART_REPLY`](models::STUB_ANSWER_APART_REPLY), under no fault, without taking a
    /// scripted reply, and recorded in [`StubProvider::answer_requests`]
    /// instead of [`StubProvider::chat_requests`]. A scenario about
    /// another call (§8.9's extraction, gate 39) then counts and scripts
    /// only its own.
    pub fn set_answers_apart(&self, on: bool) {
        self.with(|s| s.answers_apart = on);
    }

    /// The answer requests answered apart, their bodies in order.
    #[must_use]
    pub fn answer_requests(&self) -> Vec<Vec<u8>> {
        self.with(|s| s.answer_requests.clone())
    }

    /// Queues `reply` as the text of the next answered chat call, after
    /// any already queued.
    pub fn push_chat_reply(&self, reply: &str) {
        self.with(|s| s.chat_replies.push_back(reply.to_owned()));
    }

    /// Sets the reply given once the queue is empty; `None` restores
    /// [`STUB_CHAT_DEFAULT_REPLY`].
    pub fn set_chat_default_reply(&self, reply: Option<&str>) {
        self.with(|s| s.chat_default = reply.map(str::to_owned));
    }

    /// Forgets the queued replies.
    pub fn clear_chat_replies(&self) {
        self.with(|s| s.chat_replies.clear());
    }

    /// Every chat call received, in order.
    #[must_use]
    pub fn chat_requests(&self) -> Vec<RecordedChatRequest> {
        self.with(|s| s.chat_requests.clone())
    }

    /// How many chat calls were received.
    #[must_use]
    pub fn chat_calls(&self) -> usize {
        self.with(|s| s.chat_requests.len())
    }

    /// Forgets the recorded chat calls.
    pub fn clear_chat_requests(&self) {
        self.with(|s| s.chat_requests.clear());
    }

    /// The vector the stub returns for `text` with the knobs as they are
    /// now, `None` when a knob makes the call fail or the vector invalid.
    #[must_use]
    pub fn expected(&self, text: &str) -> Option<Vec<f32>> {
        let f = self.faults();
        if f.down.is_some()
            || text.contains(REFUSED_MARKER)
            || f.rate_limited_calls > 0
            || f.wrong_length.is_some()
            || f.nan
            || f.all_zero
        {
            return None;
        }
        Some(drifted(embed_text(text), text, f.drift))
    }
}

/// The stub's control actions, as `memoria-harness fake-control` sends them.
pub const PROVIDER_ACTIONS: &[(&str, &str)] = &[
    (
        "down STATUS|refuse|off",
        "answer STATUS (e.g. 503), drop the connection, or answer again",
    ),
    (
        "slow MS|off",
        "add MS milliseconds to every embeddings call",
    ),
    ("rate-limit N", "answer 429 to the next N calls"),
    ("wrong-length N|off", "return vectors of N values"),
    (
        "nan on|off",
        "return each vector with a null (NaN) first value",
    ),
    ("all-zero on|off", "return all-zero vectors"),
    (
        "drift SEED DELTA|off",
        "perturb every vector by DELTA, seeded, then renormalise",
    ),
    (
        "chat-down STATUS|refuse|off",
        "the chat call answers STATUS, drops the connection, or answers again",
    ),
    ("chat-slow MS|off", "add MS milliseconds to every chat call"),
    ("chat-rate-limit N", "answer 429 to the next N chat calls"),
    (
        "chat-malformed on|off",
        "answer chat calls with a body that is not JSON",
    ),
    (
        "chat-oversized on|off",
        "answer chat calls with a 5 MB completion",
    ),
    (
        "chat-truncated on|off",
        "answer chat calls with finish_reason \"length\": a reply cut at its token limit",
    ),
    ("chat-reply TEXT", "queue TEXT as the next chat reply"),
    (
        "chat-default-reply TEXT|off",
        "the chat reply once the queue is empty",
    ),
    ("faults-off", "every knob off, embeddings and chat"),
    ("calls", "the number of embeddings calls received (value)"),
    ("chat-calls", "the number of chat calls received (value)"),
];

#[cfg(test)]
mod tests {
    use super::hashed::normalise;
    use super::*;
    use axum::body::Body;
    use http::header;

    #[test]
    fn texts_sharing_words_score_higher_than_texts_sharing_none() {
        let a = embed_text("the boiler service is due in March");
        let b = embed_text("book the boiler service");
        let c = embed_text("quarterly revenue targets");
        assert!(
            dot(&a, &b) > dot(&a, &c) + 0.2,
            "{} vs {}",
            dot(&a, &b),
            dot(&a, &c)
        );
        let prefix = |v: &[f32]| normalise(v[..STUB_PREFIX_VALUES].to_vec());
        assert!(dot(&prefix(&a), &prefix(&b)) > dot(&prefix(&a), &prefix(&c)));
    }

    #[test]
    fn every_vector_is_unit_length_with_4096_values_even_without_words() {
        for text in ["Budget 2026", "!!!", "ünïcödé wörds", SENTINEL_MARKER] {
            let v = embed_text(text);
            assert_eq!(v.len(), STUB_VECTOR_VALUES);
            assert!((dot(&v, &v) - 1.0).abs() < 1e-5, "{text}");
        }
    }

    #[test]
    fn the_sentinel_is_fixed_whatever_surrounds_the_marker() {
        let a = embed_text(&format!("a passage with {SENTINEL_MARKER} inside"));
        assert_eq!(a, sentinel_vector());
        assert_eq!(a, embed_text(SENTINEL_MARKER));
        expect_test::expect!["[-0.013011871, 0.017009955, -0.004806714, 0.012874458]"]
            .assert_eq(&format!("{:?}", &a[..4]));
    }

    async fn send(stub: &StubProvider, path: &str, body: serde_json::Value) -> (u16, Vec<u8>) {
        use http_body_util::BodyExt as _;
        use tower::ServiceExt as _;
        let request = http::Request::post(path)
            .header(header::AUTHORIZATION, "Bearer k")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let r = stub.router().oneshot(request).await.unwrap();
        let status = r.status().as_u16();
        (
            status,
            r.into_body().collect().await.unwrap().to_bytes().to_vec(),
        )
    }

    #[tokio::test]
    async fn the_chat_control_actions_set_the_chat_knobs_and_queue_replies() {
        let stub = StubProvider::new();
        let act = |action: &str, args: &[&str]| serde_json::json!({"action": action, "args": args});
        for (action, args) in [
            ("chat-down", &["503"][..]),
            ("chat-slow", &["40"]),
            ("chat-rate-limit", &["2"]),
            ("chat-malformed", &["on"]),
            ("chat-oversized", &["on"]),
            ("chat-truncated", &["on"]),
            ("chat-reply", &["cited", "[p0]."]),
            ("chat-default-reply", &["fallback"]),
        ] {
            let (status, _) = send(&stub, CONTROL_PATH, act(action, args)).await;
            assert_eq!(status, 200, "{action}");
        }
        assert_eq!(
            stub.chat_faults(),
            ChatFaults {
                down: Some(Down::Status(503)),
                slow_ms: Some(40),
                rate_limited_calls: 2,
                malformed: true,
                oversized: true,
                truncated: true,
            }
        );
        assert_eq!(
            stub.faults(),
            ProviderFaults::default(),
            "embeddings untouched"
        );
        let (status, _) = send(&stub, CONTROL_PATH, act("chat-slow", &["soon"])).await;
        assert_eq!(status, 400);
        send(&stub, CONTROL_PATH, act("faults-off", &[])).await;
        assert_eq!(stub.chat_faults(), ChatFaults::default());
        let chat = serde_json::json!({
            "model": memoria::MODEL_CHEAP,
            "messages": [{"role": "user", "content": "q"}],
        });
        for want in ["cited [p0].", "fallback"] {
            let (status, body) = send(&stub, STUB_CHAT_PATH, chat.clone()).await;
            assert_eq!(status, 200);
            assert_eq!(memoria::decode_chat_response(&body).unwrap().text, want);
        }
        let (_, calls) = send(&stub, CONTROL_PATH, act("chat-calls", &[])).await;
        assert_eq!(calls, br#"{"value":"2"}"#);
        let (status, _) = send(
            &stub,
            STUB_CHAT_PATH,
            serde_json::json!({"model": "deepseek/deepseek-v4-pro", "messages": [{}]}),
        )
        .await;
        assert_eq!(status, 404, "an undated alias is not served");
    }

    #[test]
    fn drift_moves_a_vector_by_about_its_delta_and_is_seeded() {
        let v = embed_text("office hours");
        let d = drifted(
            v.clone(),
            "office hours",
            Some(Drift {
                seed: 3,
                delta: 0.1,
            }),
        );
        let cos = dot(&v, &d);
        assert!((0.99..0.999).contains(&cos), "{cos}");
        let again = drifted(
            v.clone(),
            "office hours",
            Some(Drift {
                seed: 3,
                delta: 0.1,
            }),
        );
        assert_eq!(d, again);
        assert_eq!(drifted(v.clone(), "office hours", None), v);
    }

    #[test]
    fn the_extractive_reply_quotes_and_cites_the_first_sentence_of_each_of_the_first_three_passages()
     {
        let user = "[1] # Rooms\nFourteen rooms on the second floor. Swap them.\n\n[2] The coach stops once.\n\n[3] Parking is free.\n\n[4] Never quoted.\n\nQuestion: where?";
        let messages = vec![
            serde_json::json!({"role": "system", "content": "instructions"}),
            serde_json::json!({"role": "user", "content": user}),
        ];
        assert_eq!(
            super::models::extractive_reply(&messages).as_deref(),
            Some(
                "Fourteen rooms on the second floor [1]. The coach stops once [2]. Parking is free [3]."
            )
        );
        let address = vec![
            serde_json::json!({"role": "system", "content": "You find postal addresses in passages."}),
            serde_json::json!({"role": "user", "content": "[2] Deliveries:\n\n    14 Grand Canal Quay, Dublin 2, D02 X7K4\n    Contact: 01 598 1234\n\n[5] No address, here.\n\nQuestion: List them."}),
        ];
        assert_eq!(
            super::models::extractive_reply(&address).as_deref(),
            Some(r#"[{"passage":2,"text":"14 Grand Canal Quay, Dublin 2, D02 X7K4"}]"#)
        );
        let none = vec![serde_json::json!({"role": "user", "content": "Question: x"})];
        assert_eq!(super::models::extractive_reply(&none), None);
    }
}
