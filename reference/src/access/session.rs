//! Sessions, one-time sign-in links and CSRF: how an admitted owner is recognised on each request (§4.3, §9.1).
//!
//! A sign-in link is a one-time token, kept only as its SHA-256, that
//! expires after `SIGN_IN_LINK_TTL_S`; following it mints a session id
//! (also kept hashed) and a CSRF token. Neither holds admission: the
//! owners list is read again when the link is followed and on every
//! request of the session (`web::AppState::session`, §4.3). Links
//! reach the owner through a [`SignInDelivery`]: the terminal in
//! production, a captured list in tests. Nothing here logs a token.

use std::collections::HashMap;
#[cfg(feature = "testkit")]
use std::sync::Mutex;

use axum::http::{HeaderMap, header};
use cookie::{Cookie, SameSite};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq as _;

use crate::access::admission::Owner;

/// The most live sessions and pending links held; the oldest are dropped beyond it.
pub const SESSIONS_MAX: usize = 1024;
/// Bytes of randomness in a session id, a CSRF token and a sign-in token.
pub const TOKEN_BYTES: usize = 32;
/// The session cookie's name.
pub const SESSION_COOKIE: &str = "memoria_session";

/// Where one-time sign-in links go. Production prints them on the terminal;
/// tests capture them. Never the log (gate 4).
pub trait SignInDelivery: Send + Sync {
    /// Delivers `url` to `owner`.
    fn deliver(&self, owner: &Owner, url: &str);
}

/// Prints sign-in links on stdout, the terminal of whoever ran `memoria serve`.
#[derive(Debug, Default)]
pub struct TerminalDelivery;

impl SignInDelivery for TerminalDelivery {
    fn deliver(&self, owner: &Owner, url: &str) {
        println!("sign-in link for {}: {url}", owner.address());
    }
}

/// Keeps delivered links in memory, for tests and gates (`testkit` feature).
#[cfg(feature = "testkit")]
#[derive(Debug, Default)]
pub struct CapturedDelivery {
    pub(crate) links: Mutex<Vec<(String, String)>>,
}

#[cfg(feature = "testkit")]
impl CapturedDelivery {
    /// Every (owner, url) delivered so far.
    pub fn links(&self) -> Vec<(String, String)> {
        self.links.lock().expect("delivery lock").clone()
    }
}

#[cfg(feature = "testkit")]
impl SignInDelivery for CapturedDelivery {
    fn deliver(&self, owner: &Owner, url: &str) {
        self.links
            .lock()
            .expect("delivery lock")
            .push((owner.address().to_string(), url.to_string()));
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) owner: Owner,
    pub(crate) csrf: String,
    pub(crate) expires_at: i64,
}

#[derive(Debug, Default)]
pub(crate) struct Auth {
    /// sha256(token) -> (owner, expiry)
    pub(crate) links: HashMap<[u8; 32], (Owner, i64)>,
    /// sha256(session id) -> session
    pub(crate) sessions: HashMap<[u8; 32], Session>,
}

pub(crate) fn random_token() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub(crate) fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

pub(crate) fn prune<V>(map: &mut HashMap<[u8; 32], V>, now: i64, expiry: impl Fn(&V) -> i64) {
    map.retain(|_, v| expiry(v) > now);
    while map.len() >= SESSIONS_MAX {
        let Some(oldest) = map.iter().min_by_key(|(_, v)| expiry(v)).map(|(k, _)| *k) else {
            break;
        };
        map.remove(&oldest);
    }
}

/// The value of the cookie `name` in the request's `Cookie` headers (RFC 6265
/// §5.4), as sent: the first pair with that name wins. A header that is not
/// visible ASCII, or a piece without `=` or without a name, is skipped; no
/// header yields `None`, never a panic.
pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_owned())
}

/// The `Set-Cookie` value that gives the browser session `sid` for
/// `max_age_s` seconds: `HttpOnly`, `SameSite=Strict`, `Path=/` (§4.3).
/// An empty `sid` with `max_age_s` 0 is the one that signs out.
pub(crate) fn session_set_cookie(sid: &str, max_age_s: i64) -> String {
    Cookie::build((SESSION_COOKIE, sid))
        .http_only(true)
        .same_site(SameSite::Strict)
        .path("/")
        .max_age(time::Duration::seconds(max_age_s))
        .build()
        .to_string()
}

/// Whether a presented secret equals the one issued, in time that depends
/// only on their lengths (`subtle`), never on a shared prefix.
pub(crate) fn same_secret(presented: &str, issued: &str) -> bool {
    presented.as_bytes().ct_eq(issued.as_bytes()).into()
}

/// Whether the request's `Origin`, if the browser sent one, names this
/// host: a form posted from another site is refused.
pub(crate) fn origin_ok(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://").map(|(_, h)| h.to_string()));
    host.is_some() && origin_host.as_deref() == host
}

/// Checks the CSRF token and, if the browser sent one, the Origin.
pub(crate) fn csrf_ok(headers: &HeaderMap, session: &Session, token: Option<&str>) -> bool {
    if !origin_ok(headers) {
        return false;
    }
    let Some(token) = token else { return false };
    same_secret(token, &session.csrf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_drops_expired_entries_and_keeps_live_ones() {
        let mut m: HashMap<[u8; 32], i64> = HashMap::new();
        m.insert([1; 32], 10);
        m.insert([2; 32], 20);
        m.insert([3; 32], 30);
        prune(&mut m, 20, |e| *e);
        assert_eq!(m.len(), 1, "entries expiring at or before now are dropped");
        assert!(m.contains_key(&[3; 32]));
    }

    #[test]
    fn prune_evicts_the_soonest_to_expire_once_the_table_is_full() {
        let mut m: HashMap<[u8; 32], i64> = HashMap::new();
        for i in 0..SESSIONS_MAX {
            let mut k = [0u8; 32];
            k[..8].copy_from_slice(&(i as u64).to_le_bytes());
            m.insert(k, 1000 + i as i64);
        }
        prune(&mut m, 0, |e| *e);
        assert_eq!(m.len(), SESSIONS_MAX - 1, "room is made for one more");
        assert!(
            m.values().all(|e| *e > 1000),
            "the soonest-expiring entry went"
        );
    }

    fn headers(cookies: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for c in cookies {
            h.append(
                header::COOKIE,
                axum::http::HeaderValue::from_bytes(c).expect("a header value"),
            );
        }
        h
    }

    #[test]
    fn a_cookie_is_found_among_several_in_one_header_or_across_headers() {
        let one = headers(&[b"theme=dark; memoria_session=abc-_1; lang=pt"]);
        assert_eq!(cookie(&one, "memoria_session").as_deref(), Some("abc-_1"));
        assert_eq!(cookie(&one, "lang").as_deref(), Some("pt"));
        let two = headers(&[b"theme=dark", b"memoria_session=xyz"]);
        assert_eq!(cookie(&two, "memoria_session").as_deref(), Some("xyz"));
        let first_wins = headers(&[b"memoria_session=one; memoria_session=two"]);
        assert_eq!(
            cookie(&first_wins, "memoria_session").as_deref(),
            Some("one")
        );
    }

    #[test]
    fn a_cookie_name_matches_whole_and_case_sensitively() {
        let h = headers(&[b"xmemoria_session=a; Memoria_session=b; memoria_sessionx=c"]);
        assert_eq!(cookie(&h, "memoria_session"), None);
        assert_eq!(
            cookie(&h, "").as_deref(),
            None,
            "no cookie has an empty name"
        );
    }

    #[test]
    fn a_quoted_or_empty_cookie_value_comes_back_as_sent() {
        let h = headers(&[b"a=\"quoted\"; b=; c==x="]);
        assert_eq!(cookie(&h, "a").as_deref(), Some("\"quoted\""));
        assert_eq!(cookie(&h, "b").as_deref(), Some(""));
        assert_eq!(
            cookie(&h, "c").as_deref(),
            Some("=x="),
            "only the first = splits"
        );
    }

    #[test]
    fn a_malformed_cookie_header_yields_none_or_the_well_formed_pairs_never_a_panic() {
        for bad in [
            &b""[..],
            b";;;",
            b"novalue",
            b"=orphan",
            b" ; = ; ",
            b"\xff\xfe=\x80",
            b"memoria_session",
        ] {
            assert_eq!(cookie(&headers(&[bad]), "memoria_session"), None, "{bad:?}");
        }
        let mixed = headers(&[b"\xffbad", b"junk; =x; memoria_session=ok"]);
        assert_eq!(cookie(&mixed, "memoria_session").as_deref(), Some("ok"));
        assert_eq!(cookie(&HeaderMap::new(), "memoria_session"), None);
    }

    #[test]
    fn the_session_cookie_is_http_only_same_site_strict_for_the_whole_site() {
        assert_eq!(
            session_set_cookie("abc", 43_200),
            "memoria_session=abc; HttpOnly; SameSite=Strict; Path=/; Max-Age=43200"
        );
        assert_eq!(
            session_set_cookie("", 0),
            "memoria_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"
        );
    }

    #[test]
    fn a_secret_matches_only_itself_whatever_its_length() {
        assert!(same_secret("tok-123", "tok-123"));
        assert!(!same_secret("tok-124", "tok-123"));
        assert!(
            !same_secret("tok-12", "tok-123"),
            "a prefix is not the secret"
        );
        assert!(!same_secret("tok-1234", "tok-123"), "nor is an extension");
        assert!(!same_secret("", "tok-123"));
        assert!(same_secret("", ""));
    }
}
