//! `FakeSibling`: an axum router serving S1, S1a, S2, S3 and S6 from a [`ModelHandle`], shaped by fault knobs and recorded in a [`Trace`] (§4.1, §6.1, §6.2, §6.5).
//!
//! Size: over 800 lines because one router answers all five calls
//! (S1, S1a, S2, S3, S6) from one model and one set of fault knobs, and
//! the malformed S2 shapes are rendered beside the well-formed one; S6's
//! handlers are already apart (`server/s6.rs`).
//!
//! Every answer is compact JSON in schema field order; every non-2xx body
//! is `{"error":"<code>"}`. Nothing here logs content.
//!
//! Size: over 800 lines because it is one server (tokens, consumer rows,
//! faults, S1 to S3 and the malformed S2 answers); S6 lives in the child
//! `server/s6.rs`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use subtle::ConstantTimeEq as _;

use crate::fake::faults::{
    Faults, FaultsHandle, Lie, MalformedS2, Outage, RefuseConnection, TruncateAnnounce,
};
use crate::fake::model::ModelHandle;
use crate::fake::trace::{CallDetail, CallKind, Clock, Trace, TraceEvent, TracedPair, TracedRow};
use crate::fake::wire::{
    ErrorBody, ErrorCode, MediaType, S1aRecord, S2Request, S2Result, S2Value, S3Request,
    S3Response, SUBJECT_VALUE_BYTES_MAX, SubjectKind, is_token, to_compact,
};

mod s6;

/// Most pairs one S2 call may carry; more is `400 too_many_pairs` (§4.1).
pub const S2_PAIRS_PER_CALL_MAX: usize = 256;

/// Most cells one S6 call may carry; more is `400 too_many_cells`, none
/// `400 no_cells` (§6.1's S6 row, `s6-request.schema.json`).
pub const S6_CELLS_PER_CALL_MAX: usize = 64;

/// The longest tab name an S6 cell may carry, in bytes
/// (`s6-request.schema.json`).
pub const TAB_NAME_BYTES_MAX: usize = 256;

/// Most bearer tokens accepted at once for one consumer: old and new during
/// a rotation (§6.2).
pub const TOKENS_PER_CONSUMER_MAX: usize = 2;

/// The DNS suffix of every sibling host: `<team>.<app>.oficina.works` (§6.3).
pub const SIBLING_HOST_SUFFIX: &str = "oficina.works";

/// The trace caller for a call with a missing or wrong token.
pub const UNAUTHENTICATED: &str = "unauthenticated";

/// How one fake is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeConfig {
    /// Team label, e.g. `acme`.
    pub team: String,
    /// App label, e.g. `sheets`.
    pub app: String,
    /// The S2 subject kind this sibling keys on (§4.1).
    pub keys_on: SubjectKind,
    /// Accepted bearer tokens as `(consumer name, token)`, at most
    /// [`TOKENS_PER_CONSUMER_MAX`] per name (§6.2).
    pub tokens: Vec<(String, String)>,
}

/// One accepted bearer token: whose it is, and its epoch at this sibling
/// (§6.2: "a consumers row holds up to two hashed tokens, each with an epoch").
#[derive(Clone)]
struct Accepted {
    consumer: String,
    token: String,
    epoch: u32,
}

/// The consumers rows' tokens: the accepted ones, and each consumer's next
/// epoch (a consumer's first token is epoch 1; each token added for it
/// takes the next, and an epoch is never reused).
#[derive(Default)]
struct Tokens {
    accepted: Vec<Accepted>,
    next_epoch: BTreeMap<String, u32>,
}

impl Tokens {
    fn add(&mut self, consumer: &str, token: &str) -> u32 {
        let next = self.next_epoch.entry(consumer.to_owned()).or_insert(1);
        let epoch = *next;
        *next += 1;
        self.accepted.push(Accepted {
            consumer: consumer.to_owned(),
            token: token.to_owned(),
            epoch,
        });
        epoch
    }

    fn epoch_of(&self, consumer: &str, token: &str) -> Option<u32> {
        self.accepted
            .iter()
            .find(|a| a.consumer == consumer && a.token == token)
            .map(|a| a.epoch)
    }

    /// Replaces the accepted set; a token already accepted for the same
    /// consumer keeps its epoch.
    fn set(&mut self, tokens: Vec<(String, String)>) {
        let old = std::mem::take(&mut self.accepted);
        for (consumer, token) in tokens {
            match old
                .iter()
                .find(|a| a.consumer == consumer && a.token == token)
            {
                Some(kept) => self.accepted.push(kept.clone()),
                None => {
                    self.add(&consumer, &token);
                }
            }
        }
    }
}

/// Why a fake would not accept one more token for a consumer (§6.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenRefusal {
    /// The consumer already holds [`TOKENS_PER_CONSUMER_MAX`] tokens.
    #[error("the consumer already holds {TOKENS_PER_CONSUMER_MAX} tokens")]
    Full,
    /// Another consumer holds this token.
    #[error("another consumer holds this token")]
    Taken,
}

/// One consumer's mutable row at this sibling, created lazily on its first
/// authenticated call (§6.2: "the mutable (cursor, TTL, epoch) state is
/// created lazily by the sibling on first contact").
#[derive(Debug, Clone, Copy)]
struct ConsumerRow {
    /// When the consumer last called, in ms since the run started.
    last_contact_ms: u64,
}

struct Inner {
    host: String,
    keys_on: SubjectKind,
    tokens: Mutex<Tokens>,
    rows: Mutex<BTreeMap<String, ConsumerRow>>,
    consumer_ttl_ms: Mutex<Option<u64>>,
    model: ModelHandle,
    trace: Trace,
    clock: Clock,
    faults: FaultsHandle,
}

/// One fake sibling app; clones share everything.
#[derive(Clone)]
pub struct FakeSibling(Arc<Inner>);

impl std::fmt::Debug for FakeSibling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeSibling")
            .field("host", &self.0.host)
            .finish_non_exhaustive()
    }
}

fn check_tokens(tokens: &[(String, String)]) {
    for (name, _) in tokens {
        let n = tokens.iter().filter(|(other, _)| other == name).count();
        assert!(
            n <= TOKENS_PER_CONSUMER_MAX,
            "at most {TOKENS_PER_CONSUMER_MAX} tokens per consumer (§6.2)"
        );
    }
}

impl FakeSibling {
    /// A fake serving `model`, recording into `trace`, stamping with `clock`.
    ///
    /// # Panics
    /// If `config.tokens` holds more than [`TOKENS_PER_CONSUMER_MAX`] tokens
    /// for one consumer name (§6.2).
    #[must_use]
    pub fn new(config: FakeConfig, model: ModelHandle, trace: Trace, clock: Clock) -> Self {
        check_tokens(&config.tokens);
        let mut tokens = Tokens::default();
        tokens.set(config.tokens);
        Self(Arc::new(Inner {
            host: format!("{}.{}.{SIBLING_HOST_SUFFIX}", config.team, config.app),
            keys_on: config.keys_on,
            tokens: Mutex::new(tokens),
            rows: Mutex::new(BTreeMap::new()),
            consumer_ttl_ms: Mutex::new(None),
            model,
            trace,
            clock,
            faults: FaultsHandle::new(),
        }))
    }

    /// The router: `GET /s1/feed`, `GET /s1a/announce`, `POST /s2/check`,
    /// `POST /s3/fetch`, `POST /s6/aggregate`. Every fake serves S6: a
    /// fake holding no sheet answers `NOT_VISIBLE` for an id it has no row
    /// for and `NON_NUMERIC` for a readable item that is not a sheet.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/s1/feed", get(s1))
            .route("/s1a/announce", get(s1a))
            .route("/s2/check", post(s2))
            .route("/s3/fetch", post(s3))
            .route("/s6/aggregate", post(s6))
            .with_state(self.clone())
    }

    /// The fault knobs (shared with every clone).
    #[must_use]
    pub fn faults(&self) -> FaultsHandle {
        self.0.faults.clone()
    }

    /// The state this fake serves from.
    #[must_use]
    pub fn model(&self) -> ModelHandle {
        self.0.model.clone()
    }

    /// The trace this fake records into.
    #[must_use]
    pub fn trace(&self) -> Trace {
        self.0.trace.clone()
    }

    /// The host name, `<team>.<app>.oficina.works` (§6.3).
    #[must_use]
    pub fn host(&self) -> &str {
        &self.0.host
    }

    /// Replaces the accepted tokens (a rotation phase, §6.2).
    ///
    /// # Panics
    /// As [`FakeSibling::new`].
    pub fn set_tokens(&self, tokens: Vec<(String, String)>) {
        check_tokens(&tokens);
        self.tokens().set(tokens);
    }

    fn tokens(&self) -> std::sync::MutexGuard<'_, Tokens> {
        self.0.tokens.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Accepts `token` for `consumer` beside its others (§6.2 phase 1, the
    /// expand); idempotent: a token already accepted for it keeps its
    /// epoch. Returns the token's epoch here.
    ///
    /// # Errors
    /// [`TokenRefusal::Full`] if the consumer already holds
    /// [`TOKENS_PER_CONSUMER_MAX`] other tokens; [`TokenRefusal::Taken`]
    /// if another consumer holds this one.
    pub fn accept_token(&self, consumer: &str, token: &str) -> Result<u32, TokenRefusal> {
        let mut tokens = self.tokens();
        if let Some(epoch) = tokens.epoch_of(consumer, token) {
            return Ok(epoch);
        }
        if tokens.accepted.iter().any(|a| a.token == token) {
            return Err(TokenRefusal::Taken);
        }
        let held = tokens
            .accepted
            .iter()
            .filter(|a| a.consumer == consumer)
            .count();
        if held >= TOKENS_PER_CONSUMER_MAX {
            return Err(TokenRefusal::Full);
        }
        Ok(tokens.add(consumer, token))
    }

    /// Retires `token` for `consumer` (§6.2 phase 3, the contract), and
    /// nothing else: every other token, the consumer's own and every other
    /// consumer's, stays. Idempotent; true if it was accepted until now.
    pub fn retire_token(&self, consumer: &str, token: &str) -> bool {
        let mut tokens = self.tokens();
        let before = tokens.accepted.len();
        tokens
            .accepted
            .retain(|a| !(a.consumer == consumer && a.token == token));
        tokens.accepted.len() != before
    }

    /// The epoch here of `token` for `consumer`, while it is accepted.
    #[must_use]
    pub fn token_epoch(&self, consumer: &str, token: &str) -> Option<u32> {
        self.tokens().epoch_of(consumer, token)
    }

    /// Every accepted token as `(consumer, epoch)`, in order: the
    /// consumers rows without their secrets.
    #[must_use]
    pub fn accepted_epochs(&self) -> Vec<(String, u32)> {
        self.tokens()
            .accepted
            .iter()
            .map(|a| (a.consumer.clone(), a.epoch))
            .collect()
    }

    /// Sets the per-consumer retention TTL, in ms (§6.1: "Retention is a
    /// per-consumer TTL"); `None` (the default) never expires a consumer.
    /// A consumer that has not called for longer than the TTL has expired:
    /// its row is made anew on its next call, and if that call is an S1
    /// with a cursor it answers `410` (take a full re-announce). Another
    /// consumer's calls never keep it alive.
    pub fn set_consumer_ttl_ms(&self, ttl_ms: Option<u64>) {
        *self
            .0
            .consumer_ttl_ms
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = ttl_ms;
    }

    /// Records a call from `consumer` at `at_ms` on its own row (made on
    /// first contact); true if the row had expired under the TTL.
    fn contact(&self, consumer: &str, at_ms: u64) -> bool {
        let ttl = *self
            .0
            .consumer_ttl_ms
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut rows = self.0.rows.lock().unwrap_or_else(PoisonError::into_inner);
        let row = rows.entry(consumer.to_owned()).or_insert(ConsumerRow {
            last_contact_ms: at_ms,
        });
        let expired = ttl.is_some_and(|ttl| at_ms.saturating_sub(row.last_contact_ms) > ttl);
        row.last_contact_ms = at_ms;
        expired
    }

    /// The consumer whose bearer token `headers` carry and that token's
    /// epoch, the token compared in constant time (`subtle`); `None` for a
    /// missing or wrong one.
    fn caller(&self, headers: &HeaderMap) -> Option<(String, u32)> {
        let token = headers
            .get(header::AUTHORIZATION)?
            .to_str()
            .ok()?
            .strip_prefix("Bearer ")?;
        self.tokens()
            .accepted
            .iter()
            .find(|a| bool::from(a.token.as_bytes().ct_eq(token.as_bytes())))
            .map(|a| (a.consumer.clone(), a.epoch))
    }

    async fn serve(
        &self,
        call: CallKind,
        headers: &HeaderMap,
        query: Option<&str>,
        body: &Bytes,
    ) -> Response {
        let at_ms = self.0.clock.now_ms();
        let (faults, delay_ms, names) = self.0.faults.arrive(at_ms, call);
        let caller = self.caller(headers);
        let mut event = TraceEvent {
            at_ms,
            caller: caller
                .as_ref()
                .map_or_else(|| UNAUTHENTICATED.to_owned(), |(name, _)| name.clone()),
            epoch: caller.as_ref().map(|(_, epoch)| *epoch),
            callee: self.0.host.clone(),
            call,
            status: None,
            faults: names,
            detail: CallDetail::NotServed,
        };
        match faults.outage {
            Some(Outage::Hang) => {
                event.faults.push("outage".to_owned());
                self.0.trace.record(event);
                std::future::pending::<()>().await;
                unreachable!("a pending future never completes")
            }
            Some(Outage::Refuse) => {
                event.faults.push("outage".to_owned());
                self.0.trace.record(event);
                let mut response = Response::new(Body::empty());
                *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
                response.extensions_mut().insert(RefuseConnection);
                return response;
            }
            _ => {}
        }
        if call == CallKind::S1a
            && faults.truncate_announce == Some(TruncateAnnounce::HangAfterFirstPage)
            && query_param(query, "page").is_some()
        {
            event.faults.push("truncate_announce".to_owned());
            self.0.trace.record(event);
            std::future::pending::<()>().await;
            unreachable!("a pending future never completes")
        }
        if delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        }
        let (response, detail, extra) = if let Some(Outage::Status(code)) = faults.outage {
            (
                error(code, ErrorCode::Unavailable),
                CallDetail::NotServed,
                vec!["outage"],
            )
        } else if let Some(redirect) = &faults.redirect {
            let mut response = Response::new(Body::empty());
            *response.status_mut() = StatusCode::TEMPORARY_REDIRECT;
            if let Ok(location) = HeaderValue::from_str(&redirect.location) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            (response, CallDetail::NotServed, vec!["redirect"])
        } else if caller.is_none() {
            (
                error(401, ErrorCode::Unauthorized),
                CallDetail::NotServed,
                vec![],
            )
        } else if caller
            .as_ref()
            .is_some_and(|(name, _)| self.contact(name, at_ms))
            && call == CallKind::S1
            && query_param(query, "cursor").is_some()
        {
            // Past its TTL the consumer's position is gone (§6.1).
            (
                error(410, ErrorCode::ReannounceRequired),
                CallDetail::S1 {
                    cursor_given: true,
                    rows: vec![],
                    more: false,
                },
                vec!["consumer_expired"],
            )
        } else {
            match call {
                CallKind::S1 => self.s1(query),
                CallKind::S1a => self.s1a(query, &faults),
                CallKind::S2 => self.s2(body, &faults),
                CallKind::S3 => self.s3(body, query, headers, &faults),
                CallKind::S6 => self.s6(body, &faults),
            }
        };
        event.status = Some(response.status().as_u16());
        event.faults.extend(extra.into_iter().map(str::to_owned));
        event.detail = detail;
        self.0.trace.record(event);
        response
    }

    fn s1(&self, query: Option<&str>) -> (Response, CallDetail, Vec<&'static str>) {
        let cursor = query_param(query, "cursor");
        let at = self.0.model.with(|m| m.feed_position(cursor.as_deref()));
        if at.is_some_and(|p| self.0.faults.feed_fails(p)) {
            return (
                error(503, ErrorCode::Unavailable),
                CallDetail::NotServed,
                vec!["feed_fails"],
            );
        }
        match self.0.model.with(|m| m.feed(cursor.as_deref())) {
            Ok(page) => {
                let detail = CallDetail::S1 {
                    cursor_given: cursor.is_some(),
                    rows: page
                        .rows
                        .iter()
                        .map(|r| TracedRow {
                            item_id: r.item_id.clone(),
                            revision: r.revision.clone(),
                            gone: r.gone,
                        })
                        .collect(),
                    more: page.more,
                };
                (ok(to_compact(&page)), detail, vec![])
            }
            Err(_) => (
                error(410, ErrorCode::ReannounceRequired),
                CallDetail::S1 {
                    cursor_given: cursor.is_some(),
                    rows: vec![],
                    more: false,
                },
                vec![],
            ),
        }
    }

    fn s1a(
        &self,
        query: Option<&str>,
        faults: &Faults,
    ) -> (Response, CallDetail, Vec<&'static str>) {
        let page_token = query_param(query, "page");
        let mut page = match self.0.model.with(|m| m.announce(page_token.as_deref())) {
            Ok(page) => page,
            Err(_) => {
                return (
                    error(410, ErrorCode::ReannounceRequired),
                    CallDetail::S1a {
                        first_page: page_token.is_none(),
                        items: vec![],
                        close_count: None,
                    },
                    vec![],
                );
            }
        };
        let mut extra = vec![];
        match faults.truncate_announce {
            Some(TruncateAnnounce::NoClose) => {
                let before = page.records.len();
                page.records
                    .retain(|r| !matches!(r, S1aRecord::Close { .. }));
                if page.records.len() != before {
                    extra.push("truncate_announce");
                }
            }
            Some(TruncateAnnounce::WrongCount(delta)) => {
                for record in &mut page.records {
                    if let S1aRecord::Close { count, .. } = record {
                        *count = count.saturating_add_signed(delta);
                        extra.push("truncate_announce");
                    }
                }
            }
            Some(TruncateAnnounce::HangAfterFirstPage) | None => {}
        }
        let detail = CallDetail::S1a {
            first_page: page_token.is_none(),
            items: page
                .records
                .iter()
                .filter_map(|r| match r {
                    S1aRecord::Item {
                        item_id, revision, ..
                    } => Some(TracedRow {
                        item_id: item_id.clone(),
                        revision: revision.clone(),
                        gone: false,
                    }),
                    _ => None,
                })
                .collect(),
            close_count: page.records.iter().find_map(|r| match r {
                S1aRecord::Close { count, .. } => Some(*count),
                _ => None,
            }),
        };
        (ok(to_compact(&page)), detail, extra)
    }

    fn s2(&self, body: &Bytes, faults: &Faults) -> (Response, CallDetail, Vec<&'static str>) {
        let bad = |code: ErrorCode, kind: Option<String>| {
            (
                error(400, code),
                CallDetail::S2 {
                    subject_kind: kind,
                    subject: None,
                    pairs: vec![],
                },
                vec![],
            )
        };
        let Ok(request) = serde_json::from_slice::<S2Request>(body) else {
            return bad(ErrorCode::BadRequest, None);
        };
        let kind = Some(request.subject.kind.as_str().to_owned());
        if request.pairs.len() > S2_PAIRS_PER_CALL_MAX {
            return bad(ErrorCode::TooManyPairs, kind);
        }
        let value_len = request.subject.value.len();
        if request.pairs.is_empty()
            || !(1..=SUBJECT_VALUE_BYTES_MAX).contains(&value_len)
            || request
                .pairs
                .iter()
                .any(|p| !is_token(&p.item_id) || !is_token(&p.revision))
        {
            return bad(ErrorCode::BadRequest, kind);
        }
        let (label, mut results) = self.0.model.with(|m| {
            m.check(
                self.0.keys_on,
                request.subject.kind,
                &request.subject.value,
                &request.pairs,
            )
        });
        let mut extra = vec![];
        if faults.lie == Some(Lie::VisibleForAnyone) {
            for r in &mut results {
                r.result = S2Value::Visible;
            }
            extra.push("lie");
        }
        let detail = CallDetail::S2 {
            subject_kind: kind,
            subject: Some(label),
            pairs: results
                .iter()
                .map(|r| TracedPair {
                    item_id: r.item_id.clone(),
                    revision: r.revision.clone(),
                    result: r.result.as_str().to_owned(),
                })
                .collect(),
        };
        let response = match faults.malformed_s2 {
            None => ok(render_s2(self.0.keys_on, &results, None)),
            Some(malformed) => {
                extra.push("malformed_s2");
                malformed_s2(malformed, self.0.keys_on, results)
            }
        };
        (response, detail, extra)
    }

    fn s3(
        &self,
        body: &Bytes,
        query: Option<&str>,
        headers: &HeaderMap,
        faults: &Faults,
    ) -> (Response, CallDetail, Vec<&'static str>) {
        let raw: Option<serde_json::Value> = serde_json::from_slice(body).ok();
        let object = raw.as_ref().and_then(serde_json::Value::as_object);
        // Gate 25: the request is exactly a pair. A field in the body, a
        // query parameter or a header beyond transport and auth is recorded
        // by name (never value) and refused.
        let mut unexpected_fields: Vec<String> = object
            .map(|o| {
                o.keys()
                    .filter(|k| *k != "item_id" && *k != "revision")
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        unexpected_fields.extend(
            query
                .unwrap_or("")
                .split('&')
                .filter(|kv| !kv.is_empty())
                .map(|kv| format!("?{}", kv.split('=').next().unwrap_or(""))),
        );
        unexpected_fields.extend(
            headers
                .keys()
                .map(|h| h.as_str())
                .filter(|h| !S3_HEADERS_EXPECTED.contains(h))
                .map(|h| format!("header:{h}")),
        );
        unexpected_fields.sort();
        let refuse = !unexpected_fields.is_empty();
        let field = |name: &str| {
            object
                .and_then(|o| o.get(name))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        };
        let mut detail = CallDetail::S3 {
            item_id: field("item_id"),
            revision: field("revision"),
            unexpected_fields,
            served: false,
        };
        let request = match serde_json::from_slice::<S3Request>(body) {
            Ok(r) if !refuse && is_token(&r.item_id) && is_token(&r.revision) => r,
            _ => return (error(400, ErrorCode::BadRequest), detail, vec![]),
        };
        if self.0.faults.s3_fails(&request.item_id, &request.revision) {
            return (error(503, ErrorCode::Unavailable), detail, vec!["s3_fails"]);
        }
        let (answer, extra) = if faults.lie == Some(Lie::FabricatedS3) {
            (
                Some(S3Response {
                    item_id: request.item_id.clone(),
                    revision: request.revision.clone(),
                    title: "Fabricated".to_owned(),
                    media_type: MediaType::Plain,
                    body: "A body this sibling made up.".to_owned(),
                }),
                vec!["lie"],
            )
        } else {
            (self.0.model.with(|m| m.fetch(&request)), vec![])
        };
        match answer {
            Some(answer) => {
                if let CallDetail::S3 { served, .. } = &mut detail {
                    *served = true;
                }
                (ok(to_compact(&answer)), detail, extra)
            }
            None => (error(404, ErrorCode::NotFound), detail, extra),
        }
    }
}

/// Headers an S3 request may carry: transport and the bearer token, nothing
/// that could name a person (gate 25).
pub const S3_HEADERS_EXPECTED: [&str; 6] = [
    "host",
    "authorization",
    "content-type",
    "content-length",
    "accept",
    "user-agent",
];

/// `{"subject_kind":K,"results":[...]}` by hand, so a malformation can
/// rewrite one result without disturbing field order.
fn render_s2(kind: SubjectKind, results: &[S2Result], extra_field: Option<&str>) -> Vec<u8> {
    let mut out = format!(r#"{{"subject_kind":"{}","results":["#, kind.as_str()).into_bytes();
    for (i, r) in results.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let mut one = to_compact(r);
        if let Some(extra) = extra_field {
            one.pop();
            one.extend_from_slice(extra.as_bytes());
            one.push(b'}');
        }
        out.extend_from_slice(&one);
    }
    out.extend_from_slice(b"]}");
    out
}

fn malformed_s2(malformed: MalformedS2, kind: SubjectKind, mut results: Vec<S2Result>) -> Response {
    let body = match malformed {
        MalformedS2::NotJson => b"<html>ok</html>".to_vec(),
        MalformedS2::Empty => Vec::new(),
        MalformedS2::Truncated => {
            let mut whole = render_s2(kind, &results, None);
            whole.truncate(whole.len() / 2);
            whole
        }
        MalformedS2::TrailingBytes => {
            let mut whole = render_s2(kind, &results, None);
            whole.extend_from_slice(b"{}");
            whole
        }
        MalformedS2::MissingItem => {
            results.pop();
            render_s2(kind, &results, None)
        }
        MalformedS2::ShortResponse => {
            results.truncate(1);
            render_s2(kind, &results, None)
        }
        MalformedS2::DuplicateItem => {
            if let Some(first) = results.first().cloned() {
                let other = if first.result == S2Value::Visible {
                    S2Value::NotVisible
                } else {
                    S2Value::Visible
                };
                results.push(S2Result {
                    result: other,
                    ..first
                });
            }
            render_s2(kind, &results, None)
        }
        MalformedS2::UnknownValue => {
            let whole =
                String::from_utf8(render_s2(kind, &results, None)).expect("rendered JSON is UTF-8");
            match results.first() {
                Some(first) => whole
                    .replacen(
                        &format!(r#""result":"{}""#, first.result.as_str()),
                        r#""result":"PERHAPS""#,
                        1,
                    )
                    .into_bytes(),
                None => whole.into_bytes(),
            }
        }
        MalformedS2::KindMismatch => render_s2(kind.other(), &results, None),
        MalformedS2::Non2xx(code) => return error(code, ErrorCode::Unavailable),
        MalformedS2::ExtraField => render_s2(kind, &results, Some(r#","visible_to_team":true"#)),
        MalformedS2::Not200(code) => {
            return json(
                StatusCode::from_u16(code).unwrap_or(StatusCode::OK),
                render_s2(kind, &results, None),
            );
        }
        MalformedS2::KindInCapitals => {
            let whole =
                String::from_utf8(render_s2(kind, &results, None)).expect("rendered JSON is UTF-8");
            let field = |k: &str| format!(r#""subject_kind":"{k}""#);
            whole
                .replacen(
                    &field(kind.as_str()),
                    &field(&kind.as_str().to_ascii_uppercase()),
                    1,
                )
                .into_bytes()
        }
        MalformedS2::DuplicateSameValue => {
            if let Some(first) = results.first().cloned() {
                results.push(first);
            }
            render_s2(kind, &results, None)
        }
    };
    ok(body)
}

fn json(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn ok(body: Vec<u8>) -> Response {
    json(StatusCode::OK, body)
}

fn error(status: u16, code: ErrorCode) -> Response {
    json(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        to_compact(&ErrorBody { error: code }),
    )
}

/// The decoded value of the first `name` in a query string, if present:
/// `+` is a space, `%XX` a byte, invalid UTF-8 replaced (`form_urlencoded`).
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(query?.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

async fn s1(
    State(fake): State<FakeSibling>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    fake.serve(CallKind::S1, &headers, q.as_deref(), &Bytes::new())
        .await
}

async fn s1a(
    State(fake): State<FakeSibling>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
) -> Response {
    fake.serve(CallKind::S1a, &headers, q.as_deref(), &Bytes::new())
        .await
}

async fn s2(State(fake): State<FakeSibling>, headers: HeaderMap, body: Bytes) -> Response {
    fake.serve(CallKind::S2, &headers, None, &body).await
}

async fn s6(State(fake): State<FakeSibling>, headers: HeaderMap, body: Bytes) -> Response {
    fake.serve(CallKind::S6, &headers, None, &body).await
}

async fn s3(
    State(fake): State<FakeSibling>,
    headers: HeaderMap,
    RawQuery(q): RawQuery,
    body: Bytes,
) -> Response {
    fake.serve(CallKind::S3, &headers, q.as_deref(), &body)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_value_is_form_decoded_and_the_first_of_a_repeated_name_wins() {
        let q = Some("cursor=c%201+2%2B&page=p&page=q&bad=%zz&lossy=%FF");
        assert_eq!(query_param(q, "cursor").as_deref(), Some("c 1 2+"));
        assert_eq!(query_param(q, "page").as_deref(), Some("p"));
        assert_eq!(query_param(q, "bad").as_deref(), Some("%zz"));
        assert_eq!(query_param(q, "lossy").as_deref(), Some("\u{FFFD}"));
        assert_eq!(query_param(q, "person"), None);
        assert_eq!(query_param(Some("person"), "person").as_deref(), Some(""));
        assert_eq!(query_param(None, "cursor"), None);
    }
}
