//! Sessions, one-time sign-in links and CSRF: how an admitted owner is recognised on each request (§4.3, §9.1).
//!
//! A sign-in link is a one-time token, kept only as its SHA-256, that
//! expires after `SIGN_IN_LINK_TTL_S`; following it mints a session id
//! (also kept hashed) and a CSRF token. Admission is read again on every
//! request, never held by the session (`web::AppState::session`). Links
//! reach the owner through a [`SignInDelivery`]: the terminal in
//! production, a captured list in tests. Nothing here logs a token.

use std::collections::HashMap;
#[cfg(feature = "testkit")]
use std::sync::Mutex;

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};

use crate::access::admission::Owner;
use crate::web::{SESSIONS_MAX, TOKEN_BYTES};

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

pub(crate) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    for value in headers.get_all(header::COOKIE) {
        let Ok(text) = value.to_str() else { continue };
        for part in text.split(';') {
            if let Some((k, v)) = part.trim().split_once('=')
                && k == name
            {
                return Some(v.to_string());
            }
        }
    }
    None
}

/// Checks the CSRF token and, if the browser sent one, the Origin.
pub(crate) fn csrf_ok(headers: &HeaderMap, session: &Session, token: Option<&str>) -> bool {
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let origin_host = origin
            .to_str()
            .ok()
            .and_then(|o| o.split_once("://").map(|(_, h)| h.to_string()));
        if host.is_none() || origin_host.as_deref() != host {
            return false;
        }
    }
    let Some(token) = token else { return false };
    // Compare digests so the comparison time does not depend on a shared prefix.
    token_hash(token) == token_hash(&session.csrf)
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
}
