//! The chat completions call: instructions, ruled passages and a question in, one typed reply or one typed error out, through the one provider (§8.2, §8.3).
//!
//! Size: over 800 lines because the request, its deadline and the total
//! decoder of the reply change together, with their tests.
//!
//! One request is the OpenAI-compatible `POST /v1/chat/completions` to the
//! same host, over the same [`Dialer`] and TLS, with the same key, as the
//! embeddings call: no base URL, host or port is a parameter (§8.3,
//! decision 13). The model is one of the two pinned ids of §8.2,
//! [`ChatModels::PINNED`]'s `model.cheap` or `model.frontier`. The body is
//! exactly `{"model", "messages", "max_tokens", "temperature"}`: no `tools`,
//! no `functions`, no `response_format` (§8.5, "no tools").
//!
//! What is sent is bounded before anything is sent: at most
//! [`CHAT_PASSAGES_MAX`] passages and [`CHAT_REQUEST_BYTES_MAX`] bytes of
//! body. Over either is refused ([`ChatError::Input`]), never cut, so a
//! caller can never believe a passage was read that was not sent.
//!
//! A response is decoded totally ([`decode_chat_response`]): every body
//! becomes a [`ChatReply`] or a [`ChatError`] with a [`ChatErrorKind`],
//! never a panic. The whole call, its one retry on 429 or 5xx included,
//! runs within [`CHAT_DEADLINE_MS`].
//!
//! Nothing here logs a request body, a response body, a passage, a
//! question, a reply or the key, at any level (§3.2, gate 31). A retry logs
//! its attempt number and status; errors name kinds, statuses, counts and
//! lengths only. This client is constructed only when AI is on (§8.1); the
//! answer (`crate::answer`, §8.4), the model half of the fact box
//! (`crate::search::facts::model`, §8.9) and the artefact builder
//! (`crate::app::artefacts`) call it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use serde::{Deserialize, Serialize};

use super::embed::JsonFault;
use super::provider::{
    CHAT_PATH, MODEL_CHEAP, MODEL_FRONTIER, PROVIDER_HOST, PROVIDER_NAME, PROVIDER_PORT,
    ProviderKey,
};
use crate::net::tls::{TlsDialer, TlsTrust};
use crate::net::transport::{Dialer, RawResponse, TransportError, exchange_within};

/// The most passages sent in one request: §8.6's "~8 passages plus
/// instructions", and §8.9's "top eight ruled passages".
pub const CHAT_PASSAGES_MAX: usize = 8;

/// The largest request body sent, in bytes, JSON framing included. §8.6
/// budgets ~5k tokens in, ~20 KB at ~4 bytes a token; this is a little over
/// three times that, so eight of §7.2's measured chunks (202 words) and the
/// instructions fit with room, and a request built from runaway input is
/// refused before it leaves. This project's number.
pub const CHAT_REQUEST_BYTES_MAX: usize = 64 * 1024;

/// The most tokens the model is asked to write (`max_tokens`): §8.6 budgets
/// ~500 out for one paragraph; twice that, so a paragraph is not cut.
pub const CHAT_REPLY_TOKENS_MAX: u32 = 1024;

/// The largest response body read, in bytes. [`CHAT_REPLY_TOKENS_MAX`]
/// tokens are a few KB of text; this leaves room for framing, escaping and
/// a provider's extra fields, and refuses a body like the stub's 5 MB one
/// whole ([`ChatError::TooLarge`]). This project's number.
pub const CHAT_RESPONSE_BYTES_MAX: usize = 256 * 1024;

/// The deadline for the whole call, both attempts and the decoding, in
/// milliseconds: §6.5's sibling deadline, reused as §8.9 reuses it for its
/// provider call ("Deadline: 800 ms, §6.5's sibling deadline reused"). The
/// call is on a search's path, and past it the page renders the list with a
/// loud line instead (issue 14).
pub const CHAT_DEADLINE_MS: u64 = crate::net::transport::SIBLING_DEADLINE_MS;

/// The most attempts at one request: the first and one retry, on 429 or
/// 5xx only.
pub const CHAT_ATTEMPTS_MAX: u32 = 2;

/// The wait before the retry, in milliseconds: short, because the retry
/// must land inside [`CHAT_DEADLINE_MS`]. A `Retry-After` is not read: any
/// wait it could ask for that fits the deadline is this one or shorter.
pub const CHAT_RETRY_WAIT_MS: u64 = 100;

const _: () = assert!(CHAT_RETRY_WAIT_MS < CHAT_DEADLINE_MS);
const _: () = assert!(CHAT_ATTEMPTS_MAX == 2);

/// Which of §8.2's two model tiers a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelTier {
    /// `model.cheap`: single-source factual, extractive (§8.2), and §8.9's
    /// extraction.
    Cheap,
    /// `model.frontier`: synthesis across ≥3 documents (§8.2).
    Frontier,
}

/// The two configuration values of §8.2, `model.cheap` and
/// `model.frontier`: each a pinned model id, never a tier alias. Fixed in
/// code as the embedding model is ([`crate::EMBED_MODEL`]): a change is a
/// code change through review (§8.2: "a withdrawal is a config change
/// through §Review"), and no environment variable reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChatModels {
    /// `model.cheap`.
    pub cheap: &'static str,
    /// `model.frontier`.
    pub frontier: &'static str,
}

impl ChatModels {
    /// The pinned pair: [`MODEL_CHEAP`] and [`MODEL_FRONTIER`] (§8.2).
    pub const PINNED: ChatModels = ChatModels {
        cheap: MODEL_CHEAP,
        frontier: MODEL_FRONTIER,
    };

    /// The id `tier` is pinned to; the id printed on an answer (§8.2).
    pub fn id(&self, tier: ModelTier) -> &'static str {
        match tier {
            ModelTier::Cheap => self.cheap,
            ModelTier::Frontier => self.frontier,
        }
    }
}

/// One passage sent: its id as the citation list shows it, and its text.
/// Only passages that passed §4.1 in this request may be one (§8.4); the
/// prompt builder that guarantees it is later work (gate 32). Its `Debug`
/// prints the id and the text's length, never the text.
#[derive(Clone, PartialEq, Eq)]
pub struct ChatPassage {
    /// The passage id the model must cite (§8.4).
    pub id: String,
    /// The passage text.
    pub text: String,
}

impl std::fmt::Debug for ChatPassage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChatPassage({}, {} bytes)", self.id, self.text.len())
    }
}

/// One request's content: the instructions (the system message), the
/// passages, and the asker's question. The user message is the passages,
/// each as `[id] text` on its own paragraph, then `Question: ` and the
/// question. Its `Debug` prints counts and lengths only.
#[derive(Clone, PartialEq, Eq)]
pub struct ChatPrompt {
    /// The system message: what the model is told to do.
    pub instructions: String,
    /// At most [`CHAT_PASSAGES_MAX`] passages, in list order.
    pub passages: Vec<ChatPassage>,
    /// The asker's query text.
    pub question: String,
}

impl std::fmt::Debug for ChatPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ChatPrompt({} instruction bytes, {} passages, {} question bytes)",
            self.instructions.len(),
            self.passages.len(),
            self.question.len()
        )
    }
}

/// Why a prompt was refused before anything was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptRefusal {
    /// The question is empty or only whitespace.
    EmptyQuestion,
    /// More than [`CHAT_PASSAGES_MAX`] passages.
    TooManyPassages {
        /// Passages given.
        passages: usize,
    },
    /// The request body would be over [`CHAT_REQUEST_BYTES_MAX`].
    TooManyBytes {
        /// The body's length, in bytes.
        bytes: usize,
    },
}

/// Why the model stopped writing, as `finish_reason` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    /// `stop`: the model finished.
    Stop,
    /// `length`: cut at [`CHAT_REPLY_TOKENS_MAX`].
    Length,
    /// Anything else, or absent (`content_filter`, a provider's own word).
    Other,
}

/// The model's reply: the first choice's text and why it stopped. The text
/// is untrusted model output, to be judged by §8.4 and §8.5 before it is
/// rendered. Its `Debug` prints the length, never the text.
#[derive(Clone, PartialEq, Eq)]
pub struct ChatReply {
    /// The reply text (`choices[0].message.content`), non-empty.
    pub text: String,
    /// `choices[0].finish_reason`.
    pub finish: FinishReason,
}

impl std::fmt::Debug for ChatReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ChatReply({} bytes, {:?})", self.text.len(), self.finish)
    }
}

/// What kind of failure a [`ChatError`] is: for the loud line that names
/// the provider and what failed (issue 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChatErrorKind {
    /// The prompt was refused before sending.
    Input,
    /// The provider could not be reached (dial, TLS, HTTP framing).
    Unreachable,
    /// The call passed [`CHAT_DEADLINE_MS`].
    Deadline,
    /// 429 on every attempt.
    RateLimited,
    /// 5xx on every attempt.
    Unavailable,
    /// A status that is not retried (4xx other than 429, 3xx, 1xx).
    Refused,
    /// The body is over [`CHAT_RESPONSE_BYTES_MAX`].
    TooLarge,
    /// A `Content-Encoding` other than identity.
    Encoding,
    /// The body is not a chat completion.
    Malformed,
    /// A chat completion with no choice, or a choice with no text.
    Empty,
}

/// A failed chat call. Every message names kinds, statuses, counts and
/// limits, never a passage, a question, a reply or a body (§3.2, gate 31).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    /// The prompt was refused before anything was sent.
    #[error("the prompt cannot be sent: {0:?}")]
    Input(PromptRefusal),
    /// The provider could not be reached on the last attempt.
    #[error("{PROVIDER_NAME} could not be reached")]
    Unreachable {
        /// The transport's failure (a dial, TLS or HTTP error; no content).
        #[source]
        source: TransportError,
    },
    /// The call passed its deadline.
    #[error("{PROVIDER_NAME} did not answer within {deadline_ms} ms")]
    Deadline {
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
    /// The body is over the response cap.
    #[error("the response body is over {bytes_max} bytes")]
    TooLarge {
        /// The cap, in bytes.
        bytes_max: usize,
    },
    /// A `Content-Encoding` other than identity (none was asked for).
    #[error("the response body has a content encoding that was not asked for")]
    Encoding,
    /// The body is not a chat completion.
    #[error("the response is not a chat completion ({fault:?} at line {line}, column {column})")]
    Malformed {
        /// How it failed.
        fault: JsonFault,
        /// Where, by `serde_json`'s count.
        line: usize,
        /// Where, by `serde_json`'s count.
        column: usize,
    },
    /// No choice, or the first choice has no text (null, missing or empty
    /// content, as a tool call or a refusal would have).
    #[error("the chat completion has no reply text ({choices} choice(s))")]
    Empty {
        /// Choices in the response.
        choices: usize,
    },
}

impl ChatError {
    /// The kind of failure.
    pub fn kind(&self) -> ChatErrorKind {
        match self {
            ChatError::Input(_) => ChatErrorKind::Input,
            ChatError::Unreachable { .. } => ChatErrorKind::Unreachable,
            ChatError::Deadline { .. } => ChatErrorKind::Deadline,
            ChatError::RateLimited { .. } => ChatErrorKind::RateLimited,
            ChatError::Unavailable { .. } => ChatErrorKind::Unavailable,
            ChatError::Refused { .. } => ChatErrorKind::Refused,
            ChatError::TooLarge { .. } => ChatErrorKind::TooLarge,
            ChatError::Encoding => ChatErrorKind::Encoding,
            ChatError::Malformed { .. } => ChatErrorKind::Malformed,
            ChatError::Empty { .. } => ChatErrorKind::Empty,
        }
    }
}

impl From<ChatError> for crate::error::Error {
    fn from(e: ChatError) -> crate::error::Error {
        crate::error::Error::with_source(
            crate::error::ErrorKind::Provider,
            format!("the chat call to {PROVIDER_NAME} failed"),
            e,
        )
    }
}

/// The request body: exactly these four fields (§8.5: no tools).
#[derive(Serialize)]
struct Request<'a> {
    model: &'static str,
    messages: [Message<'a>; 2],
    max_tokens: u32,
    temperature: u32,
}

#[derive(Serialize)]
struct Message<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Deserialize)]
struct Response {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ReplyMessage,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct ReplyMessage {
    #[serde(default)]
    content: Option<String>,
}

/// The request body for `prompt` to `model`, checked against the caps.
///
/// # Errors
/// [`ChatError::Input`]: an empty question, more than
/// [`CHAT_PASSAGES_MAX`] passages, or a body over
/// [`CHAT_REQUEST_BYTES_MAX`].
pub fn encode_chat_request(model: &'static str, prompt: &ChatPrompt) -> Result<Bytes, ChatError> {
    if prompt.question.trim().is_empty() {
        return Err(ChatError::Input(PromptRefusal::EmptyQuestion));
    }
    if prompt.passages.len() > CHAT_PASSAGES_MAX {
        return Err(ChatError::Input(PromptRefusal::TooManyPassages {
            passages: prompt.passages.len(),
        }));
    }
    let mut user = String::new();
    for p in &prompt.passages {
        user.push('[');
        user.push_str(&p.id);
        user.push_str("] ");
        user.push_str(&p.text);
        user.push_str("\n\n");
    }
    user.push_str("Question: ");
    user.push_str(&prompt.question);
    let body = serde_json::to_vec(&Request {
        model,
        messages: [
            Message {
                role: "system",
                content: &prompt.instructions,
            },
            Message {
                role: "user",
                content: &user,
            },
        ],
        max_tokens: CHAT_REPLY_TOKENS_MAX,
        temperature: 0,
    })
    .expect("strings serialise");
    if body.len() > CHAT_REQUEST_BYTES_MAX {
        return Err(ChatError::Input(PromptRefusal::TooManyBytes {
            bytes: body.len(),
        }));
    }
    Ok(Bytes::from(body))
}

/// Decodes one response body, totally: `choices[0].message.content`, a
/// non-empty string, and its `finish_reason`. Fields not named here are
/// ignored; a body of any bytes and any length returns, never panics.
///
/// # Errors
/// [`ChatError::TooLarge`] for a body over [`CHAT_RESPONSE_BYTES_MAX`];
/// [`ChatError::Malformed`] for anything that is not JSON of that shape
/// (wrong types included); [`ChatError::Empty`] for no choice or no text.
pub fn decode_chat_response(body: &[u8]) -> Result<ChatReply, ChatError> {
    if body.len() > CHAT_RESPONSE_BYTES_MAX {
        return Err(ChatError::TooLarge {
            bytes_max: CHAT_RESPONSE_BYTES_MAX,
        });
    }
    let response: Response = serde_json::from_slice(body).map_err(|e| ChatError::Malformed {
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
    let choices = response.choices.len();
    let Some(choice) = response.choices.into_iter().next() else {
        return Err(ChatError::Empty { choices });
    };
    let text = choice
        .message
        .content
        .filter(|t| !t.trim().is_empty())
        .ok_or(ChatError::Empty { choices })?;
    let finish = match choice.finish_reason.as_deref() {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        _ => FinishReason::Other,
    };
    Ok(ChatReply { text, finish })
}

/// Where the client sends: the provider over TLS, or (testkit only) a
/// plain-HTTP stub.
#[derive(Debug, Clone)]
struct Endpoint {
    host: String,
    port: u16,
}

/// The chat client for the one provider (§8.3). Constructed only when AI
/// is on; reaches the network only through the [`Dialer`] it is given, so
/// gate 15's guard hears every lookup and connection.
#[derive(Clone)]
pub struct ChatClient {
    endpoint: Endpoint,
    dialer: Arc<dyn Dialer>,
    key: ProviderKey,
    models: ChatModels,
}

impl std::fmt::Debug for ChatClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatClient")
            .field("host", &self.endpoint.host)
            .field("port", &self.endpoint.port)
            .field("models", &self.models)
            .finish_non_exhaustive()
    }
}

impl ChatClient {
    /// The client for TensorX (`https://api.tensorx.ai/v1/chat/completions`,
    /// [`ChatModels::PINNED`]), dialing through `dialer` and running TLS
    /// over the stream it opens, exactly as [`crate::EmbedClient::tensorx`].
    /// The host, port and models are not parameters (§8.3, decision 13).
    pub fn tensorx(dialer: Arc<dyn Dialer>, key: ProviderKey) -> ChatClient {
        ChatClient {
            endpoint: Endpoint {
                host: PROVIDER_HOST.to_owned(),
                port: PROVIDER_PORT,
            },
            dialer: Arc::new(TlsDialer::new(dialer, TlsTrust::public())),
            key,
            models: ChatModels::PINNED,
        }
    }

    /// A client for a plain-HTTP stand-in at `host:port` (the harness's
    /// stub provider), dialed through `dialer` with no TLS. Exists only with
    /// the `testkit` feature: no configuration reaches it, and a release
    /// build has no way to send content anywhere but TensorX.
    #[cfg(feature = "testkit")]
    pub fn plain_http_stand_in(
        dialer: Arc<dyn Dialer>,
        host: &str,
        port: u16,
        key: ProviderKey,
    ) -> ChatClient {
        ChatClient {
            endpoint: Endpoint {
                host: host.to_owned(),
                port,
            },
            dialer,
            key,
            models: ChatModels::PINNED,
        }
    }

    /// The pinned ids this client asks for (§8.2).
    pub fn models(&self) -> ChatModels {
        self.models
    }

    /// Sends `prompt` to `tier`'s pinned model and returns its reply:
    /// within [`CHAT_DEADLINE_MS`], retried once after
    /// [`CHAT_RETRY_WAIT_MS`] on 429 or 5xx.
    ///
    /// # Errors
    /// [`ChatError::Input`] before anything is sent (see
    /// [`encode_chat_request`]); [`ChatError::Deadline`] past the deadline;
    /// after both attempts, [`ChatError::RateLimited`] or
    /// [`ChatError::Unavailable`]; at once, [`ChatError::Unreachable`],
    /// [`ChatError::Refused`], [`ChatError::Encoding`], or a body refused by
    /// [`decode_chat_response`].
    pub async fn complete(
        &self,
        tier: ModelTier,
        prompt: &ChatPrompt,
    ) -> Result<ChatReply, ChatError> {
        self.complete_within(tier, prompt, CHAT_DEADLINE_MS).await
    }

    /// As [`ChatClient::complete`], within `deadline_ms` milliseconds
    /// instead of [`CHAT_DEADLINE_MS`]: the answer's own deadline
    /// (`crate::answer::ANSWER_DEADLINE_MS`, §8.4), a paragraph being
    /// longer to write than §8.9's list of spans.
    ///
    /// # Errors
    /// As [`ChatClient::complete`], [`ChatError::Deadline`] naming
    /// `deadline_ms`.
    pub async fn complete_within(
        &self,
        tier: ModelTier,
        prompt: &ChatPrompt,
        deadline_ms: u64,
    ) -> Result<ChatReply, ChatError> {
        let body = encode_chat_request(self.models.id(tier), prompt)?;
        let call = async {
            let mut attempt = 1;
            loop {
                match self.attempt(&body, attempt).await {
                    Err(e) if attempt < CHAT_ATTEMPTS_MAX && retryable(&e) => {
                        let status = match &e {
                            ChatError::RateLimited { .. } => 429,
                            ChatError::Unavailable { status, .. } => *status,
                            _ => 0,
                        };
                        tracing::warn!(attempt, status, "chat call failed; retrying");
                        attempt += 1;
                        tokio::time::sleep(Duration::from_millis(CHAT_RETRY_WAIT_MS)).await;
                    }
                    other => return other,
                }
            }
        };
        tokio::time::timeout(Duration::from_millis(deadline_ms), call)
            .await
            .unwrap_or(Err(ChatError::Deadline { deadline_ms }))
    }

    /// One attempt: the exchange, then the body judged.
    async fn attempt(&self, body: &Bytes, attempts: u32) -> Result<ChatReply, ChatError> {
        let raw = exchange_within(
            self.dialer.as_ref(),
            &self.endpoint.host,
            self.endpoint.port,
            self.request(body.clone()),
            CHAT_RESPONSE_BYTES_MAX,
        )
        .await;
        judge(raw, attempts)
    }

    fn request(&self, body: Bytes) -> http::Request<Full<Bytes>> {
        let host = if self.endpoint.port == PROVIDER_PORT {
            self.endpoint.host.clone()
        } else {
            format!("{}:{}", self.endpoint.host, self.endpoint.port)
        };
        http::Request::builder()
            .method("POST")
            .uri(CHAT_PATH)
            .header(http::header::HOST, host)
            .header(http::header::AUTHORIZATION, self.key.bearer())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::ACCEPT_ENCODING, "identity")
            .body(Full::new(body))
            .expect("a fixed method, path and headers make a request")
    }
}

/// True for the two failures the one retry is for: 429 and 5xx.
fn retryable(e: &ChatError) -> bool {
    matches!(
        e.kind(),
        ChatErrorKind::RateLimited | ChatErrorKind::Unavailable
    )
}

/// Reads one exchange's outcome into a reply or an error.
fn judge(raw: Result<RawResponse, TransportError>, attempts: u32) -> Result<ChatReply, ChatError> {
    let raw = match raw {
        Ok(raw) => raw,
        Err(TransportError::TooLarge) => {
            return Err(ChatError::TooLarge {
                bytes_max: CHAT_RESPONSE_BYTES_MAX,
            });
        }
        Err(source) => return Err(ChatError::Unreachable { source }),
    };
    match raw.status {
        200..=299 => {
            let identity = raw
                .headers
                .get(http::header::CONTENT_ENCODING)
                .is_none_or(|v| v.as_bytes().eq_ignore_ascii_case(b"identity"));
            if !identity {
                return Err(ChatError::Encoding);
            }
            decode_chat_response(&raw.body)
        }
        429 => Err(ChatError::RateLimited { attempts }),
        status @ 500..=599 => Err(ChatError::Unavailable { status, attempts }),
        status => Err(ChatError::Refused { status }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(passages: usize, text_bytes: usize) -> ChatPrompt {
        ChatPrompt {
            instructions: "Answer from the passages; cite each by its id.".into(),
            passages: (0..passages)
                .map(|i| ChatPassage {
                    id: format!("p{i}"),
                    text: "x".repeat(text_bytes),
                })
                .collect(),
            question: "when is the boiler serviced?".into(),
        }
    }

    fn kind(body: &[u8]) -> ChatErrorKind {
        decode_chat_response(body).unwrap_err().kind()
    }

    #[test]
    fn a_valid_completion_decodes_to_its_first_choices_text_and_finish_reason() {
        let body = br#"{"id":"c1","object":"chat.completion","model":"m","choices":[
            {"index":0,"message":{"role":"assistant","content":"Due in March [p0]."},"finish_reason":"stop"},
            {"index":1,"message":{"role":"assistant","content":"other"},"finish_reason":"length"}],
            "usage":{"prompt_tokens":9,"completion_tokens":4}}"#;
        let reply = decode_chat_response(body).unwrap();
        assert_eq!(reply.text, "Due in March [p0].");
        assert_eq!(reply.finish, FinishReason::Stop);
        assert_eq!(format!("{reply:?}"), "ChatReply(18 bytes, Stop)");
    }

    #[test]
    fn garbage_and_truncated_bodies_are_malformed_without_quoting_them() {
        for (body, fault) in [
            (&b"the secret passage"[..], JsonFault::Syntax),
            (b"", JsonFault::Truncated),
            (
                br#"{"choices":[{"message":{"content":"the secret"#,
                JsonFault::Truncated,
            ),
            (b"\xff\xfe\x00", JsonFault::Syntax),
        ] {
            let e = decode_chat_response(body).unwrap_err();
            assert!(
                matches!(e, ChatError::Malformed { fault: f, .. } if f == fault),
                "{e}"
            );
            assert!(!e.to_string().contains("secret"), "{e}");
        }
    }

    #[test]
    fn no_choices_or_no_text_is_an_empty_reply() {
        assert_eq!(kind(br#"{"choices":[]}"#), ChatErrorKind::Empty);
        assert_eq!(
            kind(br#"{"choices":[{"message":{"content":null}}]}"#),
            ChatErrorKind::Empty
        );
        assert_eq!(
            kind(br#"{"choices":[{"message":{"role":"assistant","tool_calls":[]}}]}"#),
            ChatErrorKind::Empty
        );
        assert_eq!(
            kind(br#"{"choices":[{"message":{"content":"  \n"}}]}"#),
            ChatErrorKind::Empty
        );
    }

    #[test]
    fn wrong_types_anywhere_are_a_malformed_shape() {
        for body in [
            &br#"{"choices":{"message":{"content":"x"}}}"#[..],
            br#"{"choices":[{"message":{"content":42}}]}"#,
            br#"{"choices":[{"message":"the secret"}]}"#,
            br#"{"choices":[{"message":{"content":"x"},"finish_reason":7}]}"#,
            br#"{"no_choices":true}"#,
            br#"[1,2,3]"#,
            b"null",
        ] {
            let e = decode_chat_response(body).unwrap_err();
            assert!(
                matches!(
                    e,
                    ChatError::Malformed {
                        fault: JsonFault::Shape,
                        ..
                    }
                ),
                "{e}"
            );
            assert!(!e.to_string().contains("secret"), "{e}");
        }
    }

    #[test]
    fn a_five_megabyte_body_is_refused_as_too_large_even_when_it_is_valid_json() {
        let content = "y".repeat(5 * 1024 * 1024);
        let body = format!(r#"{{"choices":[{{"message":{{"content":"{content}"}}}}]}}"#);
        let e = decode_chat_response(body.as_bytes()).unwrap_err();
        assert_eq!(e.kind(), ChatErrorKind::TooLarge);
        assert!(e.to_string().len() < 100, "{e}");
    }

    #[test]
    fn a_request_carries_the_model_two_messages_and_no_tools() {
        let body = encode_chat_request(MODEL_CHEAP, &prompt(2, 5)).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["max_tokens", "messages", "model", "temperature"]);
        assert_eq!(json["model"], MODEL_CHEAP);
        assert_eq!(json["messages"][0]["role"], "system");
        assert_eq!(
            json["messages"][1]["content"],
            "[p0] xxxxx\n\n[p1] xxxxx\n\nQuestion: when is the boiler serviced?"
        );
    }

    #[test]
    fn more_than_eight_passages_are_refused_before_anything_is_sent() {
        assert!(encode_chat_request(MODEL_CHEAP, &prompt(CHAT_PASSAGES_MAX, 10)).is_ok());
        let e = encode_chat_request(MODEL_CHEAP, &prompt(CHAT_PASSAGES_MAX + 1, 10)).unwrap_err();
        assert!(matches!(
            e,
            ChatError::Input(PromptRefusal::TooManyPassages { passages: 9 })
        ));
    }

    #[test]
    fn a_body_over_the_byte_cap_is_refused_not_cut() {
        let each = CHAT_REQUEST_BYTES_MAX / CHAT_PASSAGES_MAX;
        let e = encode_chat_request(MODEL_FRONTIER, &prompt(CHAT_PASSAGES_MAX, each)).unwrap_err();
        assert!(
            matches!(e, ChatError::Input(PromptRefusal::TooManyBytes { bytes }) if bytes > CHAT_REQUEST_BYTES_MAX),
            "{e}"
        );
        let under = encode_chat_request(MODEL_FRONTIER, &prompt(CHAT_PASSAGES_MAX, each - 200));
        assert!(under.unwrap().len() <= CHAT_REQUEST_BYTES_MAX);
    }

    #[test]
    fn an_empty_question_is_refused() {
        let mut p = prompt(1, 3);
        p.question = " ".into();
        assert!(matches!(
            encode_chat_request(MODEL_CHEAP, &p),
            Err(ChatError::Input(PromptRefusal::EmptyQuestion))
        ));
    }

    #[test]
    fn the_tiers_are_the_two_pinned_datestamped_ids() {
        assert_eq!(
            ChatModels::PINNED.id(ModelTier::Cheap),
            "deepseek/deepseek-v4-flash-0731"
        );
        assert_eq!(
            ChatModels::PINNED.id(ModelTier::Frontier),
            "deepseek/deepseek-v4-pro-0813"
        );
    }

    #[test]
    fn only_429_and_5xx_are_retried() {
        let raw = |status| {
            Ok(RawResponse {
                status,
                headers: http::HeaderMap::new(),
                body: Bytes::new(),
            })
        };
        assert!(retryable(&judge(raw(429), 1).unwrap_err()));
        assert!(retryable(&judge(raw(503), 1).unwrap_err()));
        assert!(!retryable(&judge(raw(401), 1).unwrap_err()));
        assert!(!retryable(&judge(raw(200), 1).unwrap_err()));
    }
}
