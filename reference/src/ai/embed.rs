//! The embeddings call: texts in, validated 4,096-value vectors out, through the one provider (§7.2, §8.3).
//!
//! Size: over 800 lines because the request, its batching and the total
//! decoder of the vectors change together, with their tests.
//!
//! One request is the OpenAI-compatible `POST /v1/embeddings` with exactly
//! `{"model": EMBED_MODEL, "input": [...]}`. Never `dimensions`: the pinned
//! model emits 4,096 values and fails the request if it is sent (§7.2); the
//! truncation to 512 and the renormalise are the dense index's, after this.
//! Never `encoding_format`: TensorX accepts `"base64"` and silently ignores
//! it (§7.2), so the client asks for nothing it would have to trust and
//! asserts on what comes back instead. It asks for gzip, which collapses
//! the digit strings (§7.2), and decodes it.
//!
//! A response is decoded totally ([`decode_response`]): every `data[i]`
//! matched to its input by `index`, exactly one per input, each exactly
//! [`EMBEDDING_VALUES`] values, every value finite, no vector all zero.
//! Anything else is an [`EmbedError`] naming what was wrong by position and
//! count, never by content, and no vector of that batch is returned.
//!
//! Nothing here logs a request body, a response body, an input, a vector or
//! the key, at any level (§3.2, gate 31). A retry logs its attempt number
//! and status, nothing else.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;

use super::provider::{
    EMBED_MODEL, EMBED_PATH, PROVIDER_HOST, PROVIDER_NAME, PROVIDER_PORT, ProviderKey,
};
use crate::net::tls::{TlsDialer, TlsTrust};
use crate::net::transport::{Dialer, RawResponse, TransportError, exchange_within};

/// The values in one vector the model returns: qwen3-embedding-8b's native
/// width, 4,096, fixed (§7.2).
pub const EMBEDDING_VALUES: usize = 4096;

/// The most inputs sent in one call. Bounded by the response, not the
/// request: each vector is [`EMBEDDING_VALUES`] JSON floats of up to
/// [`JSON_FLOAT_BYTES_MAX`] bytes, about 90 KB, so 32 of them are about
/// 2.9 MB and fit under [`EMBED_RESPONSE_BYTES_MAX`] uncompressed (checked in
/// `limits.rs`), and 32 chunks of §7.2's ~270 tokens are ~8,600 tokens a
/// call. TensorX's own batch limit is written down nowhere (§7.2); this is
/// this project's number.
pub const EMBED_INPUTS_PER_CALL_MAX: usize = 32;

/// The longest input accepted, in bytes: one chunk at the chunker's byte
/// ceiling (`CHUNK_BYTES_MAX`, §7.2); a query is shorter (checked in
/// `limits.rs`). Longer is refused before anything is sent, never cut.
pub const EMBED_INPUT_BYTES_MAX: usize = 32 * 1024;

/// The most bytes one JSON float takes in a response, sign, digits, exponent
/// and separator included: a 17-significant-digit repr such as
/// `-1.2345678901234567e-05,` is 24 (§7.2 expects ~11 to ~20).
pub const JSON_FLOAT_BYTES_MAX: usize = 24;

/// The largest response body read, in bytes, on the wire and again after
/// gunzip: a full batch of [`EMBED_INPUTS_PER_CALL_MAX`] vectors at
/// [`JSON_FLOAT_BYTES_MAX`] a value, with room for framing. A body over it
/// is refused whole ([`EmbedError::TooLarge`]).
pub const EMBED_RESPONSE_BYTES_MAX: usize = 4 * 1024 * 1024;

/// The deadline for one call on a search's path, in milliseconds: §6.5's
/// sibling deadline, reused as §8.9 reuses it for its provider call. It
/// covers the exchange and the decoding of the response (§8.9, "one
/// deadline now covers both").
pub const EMBED_QUERY_DEADLINE_MS: u64 = crate::net::transport::SIBLING_DEADLINE_MS;

/// The deadline for one call at ingest, in milliseconds: nobody waits on
/// it, and a full batch's wall-clock is measured nowhere (§7.2, §13). This
/// project's number.
pub const EMBED_INGEST_DEADLINE_MS: u64 = 20_000;

/// The most attempts at one batch at ingest: the first and three retries.
pub const EMBED_ATTEMPTS_MAX: u32 = 4;

/// The first retry's wait, in milliseconds; each later one doubles it.
pub const EMBED_BACKOFF_BASE_MS: u64 = 250;

/// The longest wait honoured from a numeric `Retry-After` (and the longest
/// backoff), in milliseconds. A longer `Retry-After` is waited for this long.
/// An HTTP-date `Retry-After` is not read: that would need the wall clock.
pub const EMBED_RETRY_AFTER_MS_MAX: u64 = 20_000;

/// How one use of the client calls: batch size, deadline, retries and the
/// response cap. [`EmbedPolicy::QUERY`] and [`EmbedPolicy::INGEST`] are
/// production's; tests build their own with small numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedPolicy {
    /// Inputs per call, 1 to [`EMBED_INPUTS_PER_CALL_MAX`].
    pub inputs_per_call: usize,
    /// One attempt's deadline, exchange and decoding together, in ms.
    pub deadline_ms: u64,
    /// Attempts per batch, at least 1.
    pub attempts_max: u32,
    /// The first retry's wait, in ms; doubled for each later one.
    pub backoff_base_ms: u64,
    /// The longest wait before a retry, in ms, whatever `Retry-After` says.
    pub retry_after_max_ms: u64,
    /// The largest response body, on the wire and decoded, in bytes.
    pub response_bytes_max: usize,
}

impl EmbedPolicy {
    /// A search's query, on the request path: one attempt within
    /// [`EMBED_QUERY_DEADLINE_MS`]. A retry would land past the page's
    /// deadline, and a provider that is down or slow gives a lexical page
    /// with a loud line instead (issue 12).
    pub const QUERY: EmbedPolicy = EmbedPolicy {
        inputs_per_call: EMBED_INPUTS_PER_CALL_MAX,
        deadline_ms: EMBED_QUERY_DEADLINE_MS,
        attempts_max: 1,
        backoff_base_ms: EMBED_BACKOFF_BASE_MS,
        retry_after_max_ms: EMBED_RETRY_AFTER_MS_MAX,
        response_bytes_max: EMBED_RESPONSE_BYTES_MAX,
    };

    /// Passages at ingest: batches of [`EMBED_INPUTS_PER_CALL_MAX`],
    /// [`EMBED_INGEST_DEADLINE_MS`] each, [`EMBED_ATTEMPTS_MAX`] attempts
    /// with exponential backoff.
    pub const INGEST: EmbedPolicy = EmbedPolicy {
        inputs_per_call: EMBED_INPUTS_PER_CALL_MAX,
        deadline_ms: EMBED_INGEST_DEADLINE_MS,
        attempts_max: EMBED_ATTEMPTS_MAX,
        backoff_base_ms: EMBED_BACKOFF_BASE_MS,
        retry_after_max_ms: EMBED_RETRY_AFTER_MS_MAX,
        response_bytes_max: EMBED_RESPONSE_BYTES_MAX,
    };

    /// The wait before attempt `next` (2 for the first retry), in ms:
    /// exponential from [`EmbedPolicy::backoff_base_ms`], or a numeric
    /// `Retry-After` if longer, never over
    /// [`EmbedPolicy::retry_after_max_ms`].
    pub fn wait_ms(&self, next: u32, retry_after_s: Option<u64>) -> u64 {
        let doublings = next.saturating_sub(2).min(32);
        let backoff = self.backoff_base_ms.saturating_mul(1u64 << doublings);
        let asked = retry_after_s.map_or(0, |s| s.saturating_mul(1000));
        backoff.max(asked).min(self.retry_after_max_ms)
    }
}

/// One vector as the model returned it: exactly [`EMBEDDING_VALUES`]
/// finite `f32`s, not all zero, in the model's order. Not truncated and not
/// renormalised: that is the dense index's work (§7.2). Its `Debug` prints
/// no value: a vector is content (decision 6).
#[derive(Clone, PartialEq)]
pub struct Embedding(Box<[f32; EMBEDDING_VALUES]>);

impl Embedding {
    /// The values.
    pub fn values(&self) -> &[f32; EMBEDDING_VALUES] {
        &self.0
    }

    /// The values, owned.
    pub fn into_values(self) -> Box<[f32; EMBEDDING_VALUES]> {
        self.0
    }
}

impl std::fmt::Debug for Embedding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Embedding({EMBEDDING_VALUES} values)")
    }
}

/// Why an input was refused before anything was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputRefusal {
    /// The input is empty or only whitespace.
    Empty,
    /// The input is over [`EMBED_INPUT_BYTES_MAX`].
    TooLarge,
}

/// How a response body failed to parse as JSON of the expected shape, in
/// `serde_json`'s categories; its message is not kept, since it can quote
/// the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonFault {
    /// Not JSON.
    Syntax,
    /// JSON, but not `{"data":[{"index":N,"embedding":[numbers]}]}`.
    Shape,
    /// The body ended early.
    Truncated,
}

/// What kind of failure an [`EmbedError`] is: for callers that branch
/// (e.g. "semantic ranking is unavailable" on the search page).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EmbedErrorKind {
    /// An input was refused before sending.
    Input,
    /// The provider could not be reached (dial, TLS, HTTP framing).
    Unreachable,
    /// An attempt passed its deadline.
    Deadline,
    /// 429 on every attempt.
    RateLimited,
    /// 5xx on every attempt.
    Unavailable,
    /// A status that is not retried (4xx other than 429, 3xx, 1xx).
    Refused,
    /// The body is over the response cap.
    TooLarge,
    /// A content encoding other than gzip or identity, or broken gzip.
    Encoding,
    /// The body is not the expected JSON.
    Malformed,
    /// The response's vectors do not match the inputs one to one.
    Mismatch,
    /// A vector has the wrong number of values.
    Dimensions,
    /// A vector has a NaN or infinite value.
    NonFinite,
    /// A vector is all zero.
    AllZero,
}

/// A failed embeddings call. Every message names positions, counts,
/// statuses and limits, never an input, a value or a body (§3.2).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// Input `index` was refused before anything was sent.
    #[error("input {index} cannot be embedded: {why:?}")]
    Input {
        /// The input's position.
        index: usize,
        /// Why.
        why: InputRefusal,
    },
    /// The provider could not be reached on the last attempt.
    #[error("{PROVIDER_NAME} could not be reached after {attempts} attempt(s)")]
    Unreachable {
        /// Attempts made.
        attempts: u32,
        /// The transport's failure (a dial, TLS or HTTP error; no content).
        #[source]
        source: TransportError,
    },
    /// The last attempt passed its deadline.
    #[error("{PROVIDER_NAME} did not answer within {deadline_ms} ms ({attempts} attempt(s))")]
    Deadline {
        /// Attempts made.
        attempts: u32,
        /// The deadline, in ms.
        deadline_ms: u64,
    },
    /// 429 on every attempt.
    #[error("{PROVIDER_NAME} answered 429 (rate limited) to all {attempts} attempt(s)")]
    RateLimited {
        /// Attempts made.
        attempts: u32,
    },
    /// 5xx on every attempt.
    #[error("{PROVIDER_NAME} answered {status} on the last of {attempts} attempt(s)")]
    Unavailable {
        /// The last status.
        status: u16,
        /// Attempts made.
        attempts: u32,
    },
    /// A status that is not retried.
    #[error("{PROVIDER_NAME} refused the call with status {status}")]
    Refused {
        /// The status.
        status: u16,
    },
    /// The body is over the response cap, on the wire or after gunzip.
    #[error("the response body is over {bytes_max} bytes")]
    TooLarge {
        /// The cap, in bytes.
        bytes_max: usize,
    },
    /// An unsupported `Content-Encoding`, or gzip that does not decode.
    #[error("the response body's encoding cannot be read ({what})")]
    Encoding {
        /// Which: `unsupported` or `corrupt gzip`.
        what: &'static str,
    },
    /// The body is not the expected JSON.
    #[error("the response is not an embeddings list ({fault:?} at line {line}, column {column})")]
    Malformed {
        /// How it failed.
        fault: JsonFault,
        /// Where, by `serde_json`'s count.
        line: usize,
        /// Where, by `serde_json`'s count.
        column: usize,
    },
    /// The number of vectors is not the number of inputs.
    #[error("the response has {got} vectors for {expected} inputs")]
    Count {
        /// Inputs sent.
        expected: usize,
        /// Vectors returned.
        got: usize,
    },
    /// A vector's `index` names no input sent.
    #[error("a vector names index {index}, but only {expected} inputs were sent")]
    IndexOutOfRange {
        /// The index as returned.
        index: u64,
        /// Inputs sent.
        expected: usize,
    },
    /// Two vectors name the same input (so, the count being right, another
    /// input has none).
    #[error("two vectors name input {index}")]
    DuplicateIndex {
        /// The index.
        index: usize,
    },
    /// A vector has the wrong number of values.
    #[error("the vector for input {index} has {values} values, not {EMBEDDING_VALUES}")]
    Dimensions {
        /// The input.
        index: usize,
        /// Values returned.
        values: usize,
    },
    /// A vector has a NaN or infinite value (or a JSON `null`, which is
    /// how a serialiser writes one).
    #[error("the vector for input {index} has a non-finite value at position {position}")]
    NonFinite {
        /// The input.
        index: usize,
        /// The value's position.
        position: usize,
    },
    /// A vector is all zero.
    #[error("the vector for input {index} is all zero")]
    AllZero {
        /// The input.
        index: usize,
    },
}

impl EmbedError {
    /// The kind of failure.
    pub fn kind(&self) -> EmbedErrorKind {
        match self {
            EmbedError::Input { .. } => EmbedErrorKind::Input,
            EmbedError::Unreachable { .. } => EmbedErrorKind::Unreachable,
            EmbedError::Deadline { .. } => EmbedErrorKind::Deadline,
            EmbedError::RateLimited { .. } => EmbedErrorKind::RateLimited,
            EmbedError::Unavailable { .. } => EmbedErrorKind::Unavailable,
            EmbedError::Refused { .. } => EmbedErrorKind::Refused,
            EmbedError::TooLarge { .. } => EmbedErrorKind::TooLarge,
            EmbedError::Encoding { .. } => EmbedErrorKind::Encoding,
            EmbedError::Malformed { .. } => EmbedErrorKind::Malformed,
            EmbedError::Count { .. }
            | EmbedError::IndexOutOfRange { .. }
            | EmbedError::DuplicateIndex { .. } => EmbedErrorKind::Mismatch,
            EmbedError::Dimensions { .. } => EmbedErrorKind::Dimensions,
            EmbedError::NonFinite { .. } => EmbedErrorKind::NonFinite,
            EmbedError::AllZero { .. } => EmbedErrorKind::AllZero,
        }
    }

    /// True when the provider refused the request for what it carries,
    /// not for its own state: an input refused before sending, or a 400,
    /// 413 or 422 (the body's content or size). A batch refused so is
    /// split until the input it refuses is alone (`app/queue.rs`). Not a
    /// 401, 403 or 404, which refuse the key or the model whatever is sent.
    pub fn refuses_content(&self) -> bool {
        matches!(
            self,
            EmbedError::Input { .. }
                | EmbedError::Refused {
                    status: 400 | 413 | 422
                }
        )
    }

    /// True when another attempt may succeed: unreachable, past the
    /// deadline, 429 or 5xx. A refused status or a bad response is not retried.
    fn retryable(&self) -> bool {
        matches!(
            self.kind(),
            EmbedErrorKind::Unreachable
                | EmbedErrorKind::Deadline
                | EmbedErrorKind::RateLimited
                | EmbedErrorKind::Unavailable
        )
    }
}

impl From<EmbedError> for crate::error::Error {
    fn from(e: EmbedError) -> crate::error::Error {
        crate::error::Error::with_source(
            crate::error::ErrorKind::Provider,
            format!("the embeddings call to {PROVIDER_NAME} failed"),
            e,
        )
    }
}

/// The request body: exactly these two fields (§7.2: no `dimensions`, no
/// `encoding_format`).
#[derive(serde::Serialize)]
struct Request<'a> {
    model: &'static str,
    input: &'a [&'a str],
}

/// Decodes one response body for `expected` inputs, totally: exactly one
/// vector per input, matched by `index` (the provider's order is not
/// trusted), each [`EMBEDDING_VALUES`] finite values, not all zero. The
/// vectors come back in input order.
///
/// # Errors
/// [`EmbedError::Malformed`], [`EmbedError::Count`],
/// [`EmbedError::IndexOutOfRange`], [`EmbedError::DuplicateIndex`],
/// [`EmbedError::Dimensions`],
/// [`EmbedError::NonFinite`] or [`EmbedError::AllZero`]: the first problem
/// found, and no vector.
pub fn decode_response(body: &[u8], expected: usize) -> Result<Vec<Embedding>, EmbedError> {
    let response = memoria_embed_wire::decode(body).map_err(|e| EmbedError::Malformed {
        fault: match e.classify() {
            serde_json::error::Category::Eof => JsonFault::Truncated,
            serde_json::error::Category::Data => JsonFault::Shape,
            serde_json::error::Category::Syntax | serde_json::error::Category::Io => {
                JsonFault::Syntax
            }
        },
        line: e.line(),
        column: e.column(),
    })?;
    if response.data.len() != expected {
        return Err(EmbedError::Count {
            expected,
            got: response.data.len(),
        });
    }
    let mut slots: Vec<Option<Embedding>> = (0..expected).map(|_| None).collect();
    for item in &response.data {
        let index = usize::try_from(item.index)
            .ok()
            .filter(|i| *i < expected)
            .ok_or(EmbedError::IndexOutOfRange {
                index: item.index,
                expected,
            })?;
        if slots[index].is_some() {
            return Err(EmbedError::DuplicateIndex { index });
        }
        let values: &[memoria_embed_wire::Value] = &item.embedding;
        let array: &[memoria_embed_wire::Value; EMBEDDING_VALUES] =
            values.try_into().map_err(|_| EmbedError::Dimensions {
                index,
                values: values.len(),
            })?;
        if let Some(position) = array.iter().position(|v| !v.0.is_finite()) {
            return Err(EmbedError::NonFinite { index, position });
        }
        if array.iter().all(|v| v.0 == 0.0) {
            return Err(EmbedError::AllZero { index });
        }
        slots[index] = Some(Embedding(Box::new(std::array::from_fn(|i| array[i].0))));
    }
    // As many vectors as inputs, each in range and none twice: every slot
    // is filled. Counted again rather than unwrapped, so no input can panic.
    let filled = slots.iter().filter(|s| s.is_some()).count();
    slots
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or(EmbedError::Count {
            expected,
            got: filled,
        })
}

/// Where the client sends: the provider over TLS, or (testkit only) a
/// plain-HTTP stub.
#[derive(Debug, Clone)]
struct Endpoint {
    host: String,
    port: u16,
}

/// The embeddings client for the one provider (§8.3). Constructed only
/// when AI is on; reaches the network only through the [`Dialer`] it is
/// given, so gate 15's guard hears every lookup and connection.
#[derive(Clone)]
pub struct EmbedClient {
    endpoint: Endpoint,
    dialer: Arc<dyn Dialer>,
    key: ProviderKey,
}

impl std::fmt::Debug for EmbedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedClient")
            .field("host", &self.endpoint.host)
            .field("port", &self.endpoint.port)
            .finish_non_exhaustive()
    }
}

impl EmbedClient {
    /// The client for TensorX (`https://api.tensorx.ai/v1/embeddings`,
    /// model [`EMBED_MODEL`]), dialing through `dialer` and running TLS
    /// over the stream it opens. The host, port and model are not
    /// parameters (§8.3, decision 13).
    pub fn tensorx(dialer: Arc<dyn Dialer>, key: ProviderKey) -> EmbedClient {
        EmbedClient {
            endpoint: Endpoint {
                host: PROVIDER_HOST.to_owned(),
                port: PROVIDER_PORT,
            },
            dialer: Arc::new(TlsDialer::new(dialer, TlsTrust::public())),
            key,
        }
    }

    /// A client for a plain-HTTP stand-in at `host:port` (the harness's
    /// stub provider, a `wiremock` server), dialed through `dialer` with no
    /// TLS. Exists only with the `testkit` feature: no configuration
    /// reaches it, and a release build has no way to send content anywhere
    /// but TensorX.
    #[cfg(feature = "testkit")]
    pub fn plain_http_stand_in(
        dialer: Arc<dyn Dialer>,
        host: &str,
        port: u16,
        key: ProviderKey,
    ) -> EmbedClient {
        EmbedClient {
            endpoint: Endpoint {
                host: host.to_owned(),
                port,
            },
            dialer,
            key,
        }
    }

    /// Embeds one search query under [`EmbedPolicy::QUERY`].
    ///
    /// # Errors
    /// As [`EmbedClient::embed`].
    pub async fn embed_query(&self, query: &str) -> Result<Embedding, EmbedError> {
        let mut v = self.embed(&[query], &EmbedPolicy::QUERY).await?;
        Ok(v.pop().expect("one vector per input"))
    }

    /// Embeds `inputs` in order, in batches of `policy.inputs_per_call`,
    /// one batch after another, each retried per `policy`. All or nothing:
    /// the first batch that fails ends the call with its error, and no
    /// vector is returned. Empty `inputs` sends nothing.
    ///
    /// # Errors
    /// [`EmbedError::Input`] before anything is sent, for an empty input or
    /// one over [`EMBED_INPUT_BYTES_MAX`]; otherwise the failing batch's
    /// error: after its attempts, [`EmbedError::Unreachable`],
    /// [`EmbedError::Deadline`], [`EmbedError::RateLimited`] or
    /// [`EmbedError::Unavailable`]; at once, [`EmbedError::Refused`], or a
    /// response refused by [`decode_response`], [`EmbedError::TooLarge`]
    /// or [`EmbedError::Encoding`].
    ///
    /// # Panics
    /// If `policy.inputs_per_call` is 0 or over
    /// [`EMBED_INPUTS_PER_CALL_MAX`], or `policy.attempts_max` is 0: a
    /// policy is code, not input.
    pub async fn embed(
        &self,
        inputs: &[&str],
        policy: &EmbedPolicy,
    ) -> Result<Vec<Embedding>, EmbedError> {
        assert!(
            (1..=EMBED_INPUTS_PER_CALL_MAX).contains(&policy.inputs_per_call)
                && policy.attempts_max >= 1,
            "an embed policy batches 1 to {EMBED_INPUTS_PER_CALL_MAX} inputs and attempts at least once"
        );
        for (index, input) in inputs.iter().enumerate() {
            let why = if input.trim().is_empty() {
                InputRefusal::Empty
            } else if input.len() > EMBED_INPUT_BYTES_MAX {
                InputRefusal::TooLarge
            } else {
                continue;
            };
            return Err(EmbedError::Input { index, why });
        }
        let mut out = Vec::with_capacity(inputs.len());
        for batch in inputs.chunks(policy.inputs_per_call) {
            out.extend(self.batch(batch, policy).await?);
        }
        Ok(out)
    }

    /// One batch, with its retries.
    async fn batch(
        &self,
        batch: &[&str],
        policy: &EmbedPolicy,
    ) -> Result<Vec<Embedding>, EmbedError> {
        let body = Bytes::from(
            serde_json::to_vec(&Request {
                model: EMBED_MODEL,
                input: batch,
            })
            .expect("strings serialise"),
        );
        let mut attempt = 1;
        loop {
            let (result, retry_after_s) = self.attempt(&body, batch.len(), policy, attempt).await;
            match result {
                Err(e) if e.retryable() && attempt < policy.attempts_max => {
                    let status = match &e {
                        EmbedError::RateLimited { .. } => 429,
                        EmbedError::Unavailable { status, .. } => *status,
                        _ => 0,
                    };
                    tracing::warn!(
                        attempt,
                        status,
                        kind = ?e.kind(),
                        "embeddings call failed; retrying"
                    );
                    attempt += 1;
                    let wait = policy.wait_ms(attempt, retry_after_s);
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
                other => return other,
            }
        }
    }

    /// One attempt within the deadline: the exchange, then the body read,
    /// gunzipped and decoded. Returns a numeric `Retry-After`, in seconds,
    /// beside a 429 or 5xx.
    async fn attempt(
        &self,
        body: &Bytes,
        expected: usize,
        policy: &EmbedPolicy,
        attempts: u32,
    ) -> (Result<Vec<Embedding>, EmbedError>, Option<u64>) {
        let request = self.request(body.clone());
        let call = async {
            let raw = exchange_within(
                self.dialer.as_ref(),
                &self.endpoint.host,
                self.endpoint.port,
                request,
                policy.response_bytes_max,
            )
            .await;
            judge(raw, expected, policy, attempts)
        };
        match tokio::time::timeout(Duration::from_millis(policy.deadline_ms), call).await {
            Ok(judged) => judged,
            Err(_) => (
                Err(EmbedError::Deadline {
                    attempts,
                    deadline_ms: policy.deadline_ms,
                }),
                None,
            ),
        }
    }

    fn request(&self, body: Bytes) -> http::Request<Full<Bytes>> {
        let host = if self.endpoint.port == PROVIDER_PORT {
            self.endpoint.host.clone()
        } else {
            format!("{}:{}", self.endpoint.host, self.endpoint.port)
        };
        http::Request::builder()
            .method("POST")
            .uri(EMBED_PATH)
            .header(http::header::HOST, host)
            .header(http::header::AUTHORIZATION, self.key.bearer())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::ACCEPT_ENCODING, "gzip")
            .body(Full::new(body))
            .expect("a fixed method, path and headers make a request")
    }
}

/// Reads one exchange's outcome into vectors or an error, and a numeric
/// `Retry-After` if one came with a 429 or 5xx.
fn judge(
    raw: Result<RawResponse, TransportError>,
    expected: usize,
    policy: &EmbedPolicy,
    attempts: u32,
) -> (Result<Vec<Embedding>, EmbedError>, Option<u64>) {
    let raw = match raw {
        Ok(raw) => raw,
        Err(TransportError::TooLarge) => {
            return (
                Err(EmbedError::TooLarge {
                    bytes_max: policy.response_bytes_max,
                }),
                None,
            );
        }
        Err(source) => return (Err(EmbedError::Unreachable { attempts, source }), None),
    };
    let retry_after_s = raw
        .headers
        .get(http::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let result = match raw.status {
        200..=299 => gunzip(&raw, policy.response_bytes_max)
            .and_then(|body| decode_response(&body, expected)),
        429 => Err(EmbedError::RateLimited { attempts }),
        status @ 500..=599 => Err(EmbedError::Unavailable { status, attempts }),
        status => Err(EmbedError::Refused { status }),
    };
    (result, retry_after_s)
}

/// The body as sent, or gunzipped under the same cap.
fn gunzip(raw: &RawResponse, bytes_max: usize) -> Result<Bytes, EmbedError> {
    use std::io::Read as _;
    let encoding = raw
        .headers
        .get(http::header::CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("").trim().to_ascii_lowercase());
    match encoding.as_deref() {
        None | Some("identity") => Ok(raw.body.clone()),
        Some("gzip" | "x-gzip") => {
            let mut out = Vec::new();
            let cap = u64::try_from(bytes_max)
                .unwrap_or(u64::MAX)
                .saturating_add(1);
            flate2::read::GzDecoder::new(raw.body.as_ref())
                .take(cap)
                .read_to_end(&mut out)
                .map_err(|_| EmbedError::Encoding {
                    what: "corrupt gzip",
                })?;
            if out.len() > bytes_max {
                return Err(EmbedError::TooLarge { bytes_max });
            }
            Ok(Bytes::from(out))
        }
        Some(_) => Err(EmbedError::Encoding {
            what: "unsupported",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(fill: f32) -> String {
        let v = vec![fill; EMBEDDING_VALUES];
        serde_json::to_string(&v).unwrap()
    }

    fn body(items: &[(u64, String)]) -> Vec<u8> {
        let data: Vec<String> = items
            .iter()
            .map(|(i, v)| format!(r#"{{"object":"embedding","index":{i},"embedding":{v}}}"#))
            .collect();
        format!(
            r#"{{"object":"list","model":"{EMBED_MODEL}","data":[{}]}}"#,
            data.join(",")
        )
        .into_bytes()
    }

    #[test]
    fn vectors_come_back_in_input_order_whatever_order_the_provider_sent() {
        let got = decode_response(&body(&[(1, vector(0.5)), (0, vector(0.25))]), 2).unwrap();
        assert_eq!(got[0].values()[0], 0.25);
        assert_eq!(got[1].values()[0], 0.5);
        assert_eq!(format!("{:?}", got[0]), "Embedding(4096 values)");
    }

    #[test]
    fn a_null_or_an_f32_overflow_is_a_non_finite_value_at_its_position() {
        let mut v = vec!["0.1".to_string(); EMBEDDING_VALUES];
        v[7] = "null".into();
        let nan = format!("[{}]", v.join(","));
        let e = decode_response(&body(&[(0, nan)]), 1).unwrap_err();
        assert!(
            matches!(
                e,
                EmbedError::NonFinite {
                    index: 0,
                    position: 7
                }
            ),
            "{e}"
        );
        v[7] = "1e39".into();
        let inf = format!("[{}]", v.join(","));
        let e = decode_response(&body(&[(0, inf)]), 1).unwrap_err();
        assert!(
            matches!(
                e,
                EmbedError::NonFinite {
                    index: 0,
                    position: 7
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_body_that_quotes_content_is_refused_without_quoting_it() {
        let e = decode_response(
            br#"{"data":[{"index":0,"embedding":["the secret passage"]}]}"#,
            1,
        )
        .unwrap_err();
        assert_eq!(e.kind(), EmbedErrorKind::Malformed);
        assert!(!e.to_string().contains("secret"), "{e}");
    }

    #[test]
    fn the_wait_doubles_from_the_base_and_honours_retry_after_up_to_the_cap() {
        let p = EmbedPolicy::INGEST;
        assert_eq!(p.wait_ms(2, None), EMBED_BACKOFF_BASE_MS);
        assert_eq!(p.wait_ms(3, None), 2 * EMBED_BACKOFF_BASE_MS);
        assert_eq!(p.wait_ms(4, None), 4 * EMBED_BACKOFF_BASE_MS);
        assert_eq!(p.wait_ms(2, Some(3)), 3000);
        assert_eq!(p.wait_ms(2, Some(3600)), EMBED_RETRY_AFTER_MS_MAX);
        assert_eq!(p.wait_ms(40, None), EMBED_RETRY_AFTER_MS_MAX);
    }

    #[test]
    fn the_request_body_names_the_model_and_input_and_nothing_else() {
        let json = serde_json::to_value(Request {
            model: EMBED_MODEL,
            input: &["a", "b"],
        })
        .unwrap();
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["input", "model"]);
    }
}
