//! The sibling client: S1 polls, S1a announces, S2 re-checks and S3 fetches over a [`Dialer`] (§4.1, §6.1, §6.5).
//!
//! S2 calls to every sibling go out at once, each sibling bounded by
//! [`SIBLING_DEADLINE_MS`], so a page waits for its slowest sibling and never
//! for their sum. A sibling past its deadline is UNKNOWN for every pair it
//! was asked. Nothing here caches an answer (ruling 3).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;

use crate::net::host::{HostRefusal, SiblingUrl};
use crate::net::s6::{Aggregate, CellRef, S6Request, S6Result, decode_s6};
use crate::net::tls::{TlsTrust, dialer_for};
use crate::net::token::SiblingToken;
use crate::net::transport::{
    Dialer, INGEST_CALL_DEADLINE_MS, RawResponse, SIBLING_DEADLINE_MS, TransportError, exchange,
};
use crate::net::wire::{
    Announce, AnnounceAssembler, AnnounceFailure, FeedError, FetchError, Pair, S1Page,
    S2_PAIRS_PER_CALL_MAX, S2Answer, S2Decoded, S2Fault, S2Request, S3Body, Subject, decode_s1,
    decode_s1a_page, decode_s2, decode_s3,
};

/// One configured sibling: its base URL and where memoria's bearer token
/// for it comes from (§6.2).
#[derive(Clone)]
pub struct SiblingConfig {
    /// e.g. `https://acme.sheets.oficina.works` or
    /// `http://acme.sheets.oficina.works:8080` (§6.1, §6.3).
    pub url: String,
    /// memoria's consumer token at this sibling: given at start, or a file
    /// read on every call ([`SiblingToken`]).
    pub token: SiblingToken,
}

impl std::fmt::Debug for SiblingConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiblingConfig")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

#[derive(Clone)]
struct Sibling {
    url: SiblingUrl,
    token: SiblingToken,
}

impl Sibling {
    /// The token to send now, or `None` (logged, its reason only: never
    /// the token): then no call is made (§6.2, fail closed).
    fn token_now(&self, app: &str) -> Option<String> {
        match self.token.current() {
            Ok(token) => Some(token),
            Err(why) => {
                tracing::warn!(app, reason = %why, "no token to send the sibling: no call made");
                None
            }
        }
    }
}

/// A sibling URL that was refused at configuration (§6.3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sibling URL {url:?} refused: {refusal}")]
pub struct ConfigRefusal {
    /// The URL as configured.
    pub url: String,
    /// Why.
    pub refusal: HostRefusal,
}

/// memoria's client for its own team's siblings.
#[derive(Clone)]
pub struct SiblingClient {
    trust: TlsTrust,
    /// Apps whose S3 bodies memoria keeps; the others are kept as their
    /// titles alone (§3.5, [`SiblingClient::with_calendar_bodies`]).
    bodies_refused: std::collections::BTreeSet<String>,
    team: String,
    siblings: BTreeMap<String, Sibling>,
    dialer: Arc<dyn Dialer>,
}

impl std::fmt::Debug for SiblingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiblingClient")
            .field("team", &self.team)
            .field("apps", &self.siblings.keys().collect::<Vec<_>>())
            .field("trust", &self.trust)
            .finish_non_exhaustive()
    }
}

/// The Calendar sibling's app name (§6.2's host `<team>.calendar.oficina.works`).
pub const CALENDAR_APP: &str = "calendar";

/// The apps whose bodies memoria does not keep unless the owner turns
/// them on (§3.5: "Refusing sources by kind. Calendar bodies off by
/// default."): an invitation's body carries dial-in codes, attendees'
/// notes and agendas nobody meant for a team-wide index.
pub const BODIES_REFUSED_BY_DEFAULT: &[&str] = &[CALENDAR_APP];

impl SiblingClient {
    /// A client for team `team` over `dialer`. Every URL must be this team's
    /// (§6.3); two URLs for one app are refused as well. An `https://`
    /// sibling is dialled with TLS over `dialer`, trusting Mozilla's roots
    /// until [`SiblingClient::with_trust`] adds a private CA (§6.1).
    ///
    /// # Errors
    /// The first [`ConfigRefusal`].
    pub fn new(
        team: &str,
        siblings: &[SiblingConfig],
        dialer: Arc<dyn Dialer>,
    ) -> Result<SiblingClient, ConfigRefusal> {
        let mut map = BTreeMap::new();
        for s in siblings {
            let url = SiblingUrl::parse(&s.url, team).map_err(|refusal| ConfigRefusal {
                url: s.url.clone(),
                refusal,
            })?;
            let app = url.app().to_string();
            if map
                .insert(
                    app,
                    Sibling {
                        url,
                        token: s.token.clone(),
                    },
                )
                .is_some()
            {
                return Err(ConfigRefusal {
                    url: s.url.clone(),
                    refusal: HostRefusal::Malformed,
                });
            }
        }
        Ok(SiblingClient {
            trust: TlsTrust::public(),
            bodies_refused: BODIES_REFUSED_BY_DEFAULT
                .iter()
                .map(|a| (*a).to_owned())
                .collect(),
            team: team.to_ascii_lowercase(),
            siblings: map,
            dialer,
        })
    }

    /// The same client, keeping Calendar's bodies (`on`, `MEMORIA_CALENDAR_BODIES=on`)
    /// or only their titles (the default, §3.5: "Calendar bodies off by default").
    #[must_use]
    pub fn with_calendar_bodies(mut self, on: bool) -> SiblingClient {
        if on {
            self.bodies_refused.remove(CALENDAR_APP);
        } else {
            self.bodies_refused.insert(CALENDAR_APP.to_owned());
        }
        self
    }

    /// Whether memoria keeps `app`'s S3 bodies; when not, an item is kept
    /// as its title alone, searchable by it and shown as it (§3.5).
    pub fn keeps_bodies(&self, app: &str) -> bool {
        !self.bodies_refused.contains(app)
    }

    /// The same client, its `https://` siblings verified against `trust`
    /// (Mozilla's roots plus the team's private CA, `MEMORIA_SIBLING_CA_FILE`).
    #[must_use]
    pub fn with_trust(mut self, trust: TlsTrust) -> SiblingClient {
        self.trust = trust;
        self
    }

    /// The team label this client dials within.
    pub fn team(&self) -> &str {
        &self.team
    }

    /// The configured apps, sorted.
    pub fn apps(&self) -> Vec<String> {
        self.siblings.keys().cloned().collect()
    }

    /// The SHA-256 of each token memoria sends a sibling now (a token
    /// file read now; one that cannot be read has none), for the check
    /// that no connector holds one ([`crate::Connectors::disjoint_from`], §9.1).
    pub fn token_hashes(&self) -> Vec<[u8; 32]> {
        self.siblings
            .values()
            .filter_map(|s| s.token.current().ok())
            .map(|t| crate::access::connector::token_sha256(&t))
            .collect()
    }

    /// True if `presented` is a token memoria sends one of its siblings
    /// now, compared in constant time: the credential a connector route
    /// refuses by name (§9.1, gate 16).
    pub(crate) fn sends_token(&self, presented: &str) -> bool {
        self.siblings.values().any(|s| {
            s.token.current().is_ok_and(|t| {
                bool::from(subtle::ConstantTimeEq::ct_eq(
                    presented.as_bytes(),
                    t.as_bytes(),
                ))
            })
        })
    }

    /// Where each app's token comes from, by app, sorted: a token file is
    /// read on every call to its sibling (§6.2).
    pub fn token_sources(&self) -> BTreeMap<String, SiblingToken> {
        self.siblings
            .iter()
            .map(|(app, s)| (app.clone(), s.token.clone()))
            .collect()
    }

    /// True if `app` is configured.
    pub fn has_app(&self, app: &str) -> bool {
        self.siblings.contains_key(app)
    }

    /// The token to send `app` now; `None` for an app not configured or
    /// a token that cannot be read (then no call is made).
    fn token_now(&self, app: &str) -> Option<String> {
        self.siblings.get(app)?.token_now(app)
    }

    async fn call(
        &self,
        app: &str,
        token: &str,
        method: &str,
        path_and_query: &str,
        body: Option<Vec<u8>>,
    ) -> Result<RawResponse, TransportError> {
        let Some(sibling) = self.siblings.get(app) else {
            return Err(TransportError::Http("no such sibling".into()));
        };
        let mut builder = http::Request::builder()
            .method(method)
            .uri(path_and_query)
            .header(http::header::HOST, sibling.url.host())
            .header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        if body.is_some() {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
        }
        let request = builder
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| TransportError::Http(e.to_string()))?;
        exchange(
            dialer_for(sibling.url.scheme(), &self.dialer, &self.trust).as_ref(),
            sibling.url.host(),
            sibling.url.port(),
            request,
        )
        .await
    }

    async fn call_within(
        &self,
        deadline_ms: u64,
        app: &str,
        method: &str,
        path_and_query: &str,
        body: Option<Vec<u8>>,
    ) -> Option<RawResponse> {
        // Read now, for this call: a token file replaced since the last
        // call is the token this one carries (§6.2 phase 2).
        let token = self.token_now(app)?;
        match tokio::time::timeout(
            Duration::from_millis(deadline_ms),
            self.call(app, &token, method, path_and_query, body),
        )
        .await
        {
            Ok(Ok(r)) => Some(r),
            Ok(Err(e)) => {
                tracing::warn!(app, error = %e, "sibling call failed");
                None
            }
            Err(_) => {
                tracing::warn!(app, deadline_ms, "sibling call past its deadline");
                None
            }
        }
    }

    /// Re-checks `pairs` with `app` for `subject` (§4.1): as many calls of at
    /// most [`S2_PAIRS_PER_CALL_MAX`] pairs as needed, all at once, within
    /// one [`SIBLING_DEADLINE_MS`]. Total: one verdict per pair, in order.
    pub async fn check(&self, app: &str, subject: &Subject, pairs: &[Pair]) -> S2Decoded {
        if pairs.is_empty() {
            return S2Decoded {
                verdicts: vec![],
                faults: BTreeMap::new(),
            };
        }
        // One read for the whole check: every batch carries the same token.
        let Some(token) = self.token_now(app) else {
            return unknown_for(pairs, S2Fault::NoToken).tap_faults(app);
        };
        let token = token.as_str();
        let batches = pairs.chunks(S2_PAIRS_PER_CALL_MAX).map(|batch| async move {
            let body = serde_json::to_vec(&S2Request {
                subject,
                pairs: batch,
            })
            .expect("S2 request serialises");
            let answer = match self.call(app, token, "POST", "/s2/check", Some(body)).await {
                Ok(r) => S2Answer::Http {
                    status: r.status,
                    body: r.body.to_vec(),
                },
                Err(e) => {
                    tracing::warn!(app, error = %e, "S2 call failed");
                    S2Answer::NoAnswer
                }
            };
            decode_s2(batch, subject.kind, &answer)
        });
        let all = futures::future::join_all(batches);
        match tokio::time::timeout(Duration::from_millis(SIBLING_DEADLINE_MS), all).await {
            Ok(decoded) => {
                let mut out = S2Decoded {
                    verdicts: Vec::with_capacity(pairs.len()),
                    faults: BTreeMap::new(),
                };
                for d in decoded {
                    out.verdicts.extend(d.verdicts);
                    for (f, n) in d.faults {
                        *out.faults.entry(f).or_insert(0) += n;
                    }
                }
                out
            }
            Err(_) => {
                tracing::warn!(
                    app,
                    deadline_ms = SIBLING_DEADLINE_MS,
                    "S2 past its deadline"
                );
                decode_s2(pairs, subject.kind, &S2Answer::NoAnswer)
            }
        }
        .tap_faults(app)
    }

    /// Re-checks every app's pairs at once (§6.5): the page waits for the
    /// slowest sibling, never for the sum. Apps not configured answer
    /// UNKNOWN for every pair, without a call.
    pub async fn check_all(
        &self,
        subject: &Subject,
        by_app: &BTreeMap<String, Vec<Pair>>,
    ) -> BTreeMap<String, S2Decoded> {
        let calls = by_app.iter().map(|(app, pairs)| async move {
            let decoded = if self.has_app(app) {
                self.check(app, subject, pairs).await
            } else {
                decode_s2(pairs, subject.kind, &S2Answer::NoAnswer)
            };
            (app.clone(), decoded)
        });
        futures::future::join_all(calls).await.into_iter().collect()
    }

    /// Polls `app`'s S1 feed from `cursor` (`None`: from the start).
    ///
    /// # Errors
    /// [`FeedError`]; [`FeedError::ReannounceRequired`] asks for S1a.
    pub async fn feed(&self, app: &str, cursor: Option<&str>) -> Result<S1Page, FeedError> {
        let path = match cursor {
            Some(c) => format!("/s1/feed?cursor={}", percent_encode(c)),
            None => "/s1/feed".to_string(),
        };
        let r = self
            .call_within(INGEST_CALL_DEADLINE_MS, app, "GET", &path, None)
            .await
            .ok_or(FeedError::NoAnswer)?;
        decode_s1(r.status, &r.body)
    }

    /// Reads a whole re-announce from `app` (§4.1 rule 2). Complete, or failed.
    ///
    /// # Errors
    /// An [`AnnounceFailure`]; a failed announce authorises nothing.
    pub async fn announce(&self, app: &str) -> Result<Announce, AnnounceFailure> {
        let mut assembler = AnnounceAssembler::default();
        let mut path = "/s1a/announce".to_string();
        loop {
            let r = self
                .call_within(INGEST_CALL_DEADLINE_MS, app, "GET", &path, None)
                .await
                .ok_or(AnnounceFailure::Page(FeedError::NoAnswer))?;
            let page = decode_s1a_page(r.status, &r.body).map_err(AnnounceFailure::Page)?;
            match assembler.feed(page)? {
                Some(next) => path = format!("/s1a/announce?page={}", percent_encode(&next)),
                None => return assembler.finish(),
            }
        }
    }

    /// Asks `app`'s S6 for `function` over `cells` as `subject` (§6.1 S6
    /// row, §8.7), within [`SIBLING_DEADLINE_MS`]. Total: no answer, any
    /// status and any bytes give one [`S6Result`]. Never cached. Zero cells
    /// or more than [`crate::net::s6::S6_CELLS_PER_CALL_MAX`] make no call and
    /// are UNKNOWN. Only [`crate::sibling::ruled::aggregate`] calls this.
    pub async fn aggregate(
        &self,
        app: &str,
        subject: &Subject,
        function: Aggregate,
        cells: &[CellRef],
    ) -> S6Result {
        if cells.is_empty() || cells.len() > crate::net::s6::S6_CELLS_PER_CALL_MAX {
            return S6Result::Unknown;
        }
        let body = serde_json::to_vec(&S6Request {
            subject,
            function,
            cells,
        })
        .expect("S6 request serialises");
        let answer = self
            .call_within(
                SIBLING_DEADLINE_MS,
                app,
                "POST",
                "/s6/aggregate",
                Some(body),
            )
            .await;
        let result = decode_s6(
            subject.kind,
            cells,
            answer.as_ref().map(|r| (r.status, &r.body[..])),
        );
        if result == S6Result::Unknown {
            tracing::warn!(app, "S6 answered nothing usable: UNKNOWN");
        }
        result
    }

    /// Fetches one item's body at one revision (§6.1). No person is sent.
    ///
    /// # Errors
    /// [`FetchError`].
    pub async fn fetch(&self, app: &str, pair: &Pair) -> Result<S3Body, FetchError> {
        let body = serde_json::to_vec(pair).expect("S3 request serialises");
        let r = self
            .call_within(
                INGEST_CALL_DEADLINE_MS,
                app,
                "POST",
                "/s3/fetch",
                Some(body),
            )
            .await
            .ok_or(FetchError::NoAnswer)?;
        decode_s3(pair, r.status, &r.body)
    }
}

trait TapFaults {
    fn tap_faults(self, app: &str) -> Self;
}

impl TapFaults for S2Decoded {
    fn tap_faults(self, app: &str) -> Self {
        for (fault, pairs) in &self.faults {
            tracing::warn!(app, fault = ?fault, pairs, "S2 pairs decoded to UNKNOWN");
        }
        self
    }
}

/// What a query-string token keeps unescaped: RFC 3986's unreserved
/// characters (§2.3), so a sibling's plain percent-decoder, form-aware or not,
/// reads the token back as it was sent (a space is `%20`, never `+`).
const TOKEN_KEPT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes an opaque token for a query string (RFC 3986 unreserved kept).
fn percent_encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, TOKEN_KEPT).to_string()
}

/// Every pair UNKNOWN with one fault: for callers that never reached a sibling.
pub fn unknown_for(pairs: &[Pair], fault: S2Fault) -> S2Decoded {
    S2Decoded {
        verdicts: vec![crate::net::wire::Verdict::Unknown; pairs.len()],
        faults: BTreeMap::from([(fault, pairs.len())]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_token_keeps_only_the_unreserved_characters_and_decodes_back() {
        assert_eq!(percent_encode("AZaz09-_.~"), "AZaz09-_.~");
        assert_eq!(
            percent_encode("a b+c&d=e#f%/é"),
            "a%20b%2Bc%26d%3De%23f%25%2F%C3%A9"
        );
        for token in ["c 1+2", "p&q=r", "100%", "日本"] {
            let sent = percent_encode(token);
            let back = percent_encoding::percent_decode_str(&sent).decode_utf8();
            assert_eq!(back.as_deref(), Ok(token), "{sent}");
        }
    }
}
