//! Connector credentials: each configured connector's bearer token, held only as its SHA-256, and the origins it may be sent from (§9.1, gate 16).
//!
//! The connector ingest surface is the one inbound path that is not a
//! person's (§9.1). Its credentials are a set of their own: a connector
//! token opens `/connectors/{name}/…` for that one connector and nothing
//! else (it is never a session), and neither a session nor any of the
//! tokens memoria sends to its siblings opens a connector route. Sibling
//! tokens are memoria's own outbound credentials; a sibling presenting one
//! back is refused, and a connector configured with a sibling's token is
//! refused at start ([`Connectors::disjoint_from`]).
//!
//! Configuration is [`CONNECTORS_ENV`]: `name=SHA256HEX[;ORIGIN…],…`. The
//! operator hashes the token (`printf %s "$TOKEN" | sha256sum`) and the
//! plaintext token never reaches memoria's configuration or its log.
//! Tokens are random and long, so an unkeyed SHA-256 is the right hash,
//! as for session ids and sign-in links (`access/session.rs`); a presented
//! token is hashed and compared in constant time (`subtle`).

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq as _;

use crate::error::{Error, ErrorKind};

/// Environment variable listing the connectors: `name=SHA256HEX[;ORIGIN…],…`
/// (§9.1). Unset or empty means no connector, and every connector route
/// refuses every request.
pub const CONNECTORS_ENV: &str = "MEMORIA_CONNECTORS";
/// The longest connector name, in characters. Our bound: a name is a label
/// in a path, like a project name.
pub const CONNECTOR_NAME_CHARS_MAX: usize = 64;
/// The most connectors one instance configures. Our bound: each is a
/// credential an operator keeps, and a list longer than this is a mistake.
pub const CONNECTORS_MAX: usize = 64;

/// One connector's credential: its token's SHA-256 and its origin allowlist.
#[derive(Clone, PartialEq, Eq)]
struct Credential {
    token_sha256: [u8; 32],
    /// Exact `Origin` values (`scheme://host[:port]`) it may send.
    origins: Vec<String>,
}

/// The configured connectors, by name (§9.1). Its `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Connectors {
    by_name: BTreeMap<String, Credential>,
}

impl std::fmt::Debug for Connectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connectors")
            .field("names", &self.by_name.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The SHA-256 of a token, as [`CONNECTORS_ENV`] holds it.
pub fn token_sha256(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Connectors {
    /// No connector: every connector route refuses.
    pub fn none() -> Connectors {
        Connectors::default()
    }

    /// Parses [`CONNECTORS_ENV`]'s value: entries separated by `,`, each
    /// `name=SHA256HEX` followed by zero or more `;ORIGIN`. A name is 1 to
    /// [`CONNECTOR_NAME_CHARS_MAX`] of `a-z 0-9 - _`; the hash is 64 hex
    /// digits; an origin is `http://` or `https://` and a host, with no
    /// path. Empty text is no connector.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a malformed entry, a repeated name, or more
    /// than [`CONNECTORS_MAX`] entries. The message never quotes a hash.
    pub fn parse(text: &str) -> Result<Connectors, Error> {
        let mut c = Connectors::none();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let mut parts = entry.split(';').map(str::trim);
            let head = parts.next().unwrap_or_default();
            let Some((name, hex_hash)) = head.split_once('=') else {
                return Err(config("an entry is not name=SHA256HEX"));
            };
            let mut hash = [0u8; 32];
            if hex_hash.len() != 64 || hex::decode_to_slice(hex_hash, &mut hash).is_err() {
                return Err(config(&format!(
                    "connector {name:?}: the token hash is not 64 hex digits"
                )));
            }
            let origins: Vec<&str> = parts.filter(|o| !o.is_empty()).collect();
            c = c.with(name, hash, &origins)?;
        }
        Ok(c)
    }

    /// Reads [`CONNECTORS_ENV`] from the process environment.
    ///
    /// # Errors
    /// As [`Connectors::parse`].
    pub fn from_env() -> Result<Connectors, Error> {
        Connectors::parse(&std::env::var(CONNECTORS_ENV).unwrap_or_default())
    }

    /// The same set with connector `name`, whose token hashes to
    /// `token_sha256`, allowed from `origins` (exact `Origin` values).
    ///
    /// # Errors
    /// [`ErrorKind::Config`] for a malformed name or origin, a repeated
    /// name, or more than [`CONNECTORS_MAX`] connectors.
    pub fn with(
        mut self,
        name: &str,
        token_sha256: [u8; 32],
        origins: &[&str],
    ) -> Result<Connectors, Error> {
        let good_name = !name.is_empty()
            && name.chars().count() <= CONNECTOR_NAME_CHARS_MAX
            && name
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-' || ch == '_');
        if !good_name {
            return Err(config(&format!(
                "connector name {name:?} is not 1 to {CONNECTOR_NAME_CHARS_MAX} of a-z 0-9 - _"
            )));
        }
        for o in origins {
            let host = o
                .strip_prefix("https://")
                .or_else(|| o.strip_prefix("http://"));
            if host.is_none_or(|h| h.is_empty() || h.contains('/')) {
                return Err(config(&format!(
                    "connector {name:?}: origin {o:?} is not scheme://host[:port]"
                )));
            }
        }
        if self.by_name.len() >= CONNECTORS_MAX {
            return Err(config(&format!(
                "more than {CONNECTORS_MAX} connectors are configured"
            )));
        }
        let credential = Credential {
            token_sha256,
            origins: origins.iter().map(|o| (*o).to_string()).collect(),
        };
        if self.by_name.insert(name.to_string(), credential).is_some() {
            return Err(config(&format!("connector {name:?} is configured twice")));
        }
        Ok(self)
    }

    /// The configured names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// True if `presented` is connector `name`'s token: its SHA-256 is
    /// compared in constant time with the one configured. A token of
    /// another connector, or any token for an unknown name, is false.
    pub(crate) fn verify(&self, name: &str, presented: &str) -> bool {
        let Some(c) = self.by_name.get(name) else {
            return false;
        };
        token_sha256(presented).ct_eq(&c.token_sha256).into()
    }

    /// True if connector `name` may send a request carrying `Origin: origin`.
    pub(crate) fn origin_allowed(&self, name: &str, origin: &str) -> bool {
        self.by_name
            .get(name)
            .is_some_and(|c| c.origins.iter().any(|o| o == origin))
    }

    /// Checks that no connector's token is one of `sibling_hashes` (the
    /// SHA-256 of each token memoria sends a sibling): the two credential
    /// sets are disjoint (§9.1).
    ///
    /// # Errors
    /// [`ErrorKind::Config`] naming the connector, never the token.
    pub fn disjoint_from(&self, sibling_hashes: &[[u8; 32]]) -> Result<(), Error> {
        for (name, c) in &self.by_name {
            if sibling_hashes
                .iter()
                .any(|h| bool::from(h.ct_eq(&c.token_sha256)))
            {
                return Err(config(&format!(
                    "connector {name:?} is configured with a sibling's token: the two credential sets must be disjoint (§9.1)"
                )));
            }
        }
        Ok(())
    }
}

fn config(message: &str) -> Error {
    Error::new(ErrorKind::Config, format!("{CONNECTORS_ENV}: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex_of(token: &str) -> String {
        hex::encode(token_sha256(token))
    }

    #[test]
    fn a_configured_token_verifies_for_its_own_connector_only() {
        let text = format!(
            "notion={};https://bridge.example, drive={}",
            hex_of("tok-notion"),
            hex_of("tok-drive")
        );
        let c = Connectors::parse(&text).unwrap();
        assert!(c.verify("notion", "tok-notion"));
        assert!(!c.verify("notion", "tok-drive"));
        assert!(!c.verify("mail", "tok-notion"));
        assert!(c.origin_allowed("notion", "https://bridge.example"));
        assert!(!c.origin_allowed("drive", "https://bridge.example"));
        assert!(!format!("{c:?}").contains(&hex_of("tok-notion")));
    }

    #[test]
    fn malformed_entries_are_refused_without_quoting_the_hash() {
        let h = hex_of("t");
        for bad in [
            "notion".to_string(),
            "notion=abc".to_string(),
            format!("Notion={h}"),
            format!("notion={h};ftp://x"),
            format!("notion={h};https://x/path"),
            format!("notion={h},notion={h}"),
        ] {
            let err = Connectors::parse(&bad).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Config, "{bad}");
            assert!(!err.to_string().contains(&h), "{err}");
        }
        assert_eq!(Connectors::parse(" ").unwrap(), Connectors::none());
    }

    #[test]
    fn a_connector_holding_a_sibling_token_is_refused() {
        let c = Connectors::parse(&format!("notion={}", hex_of("shared"))).unwrap();
        assert!(c.disjoint_from(&[token_sha256("other")]).is_ok());
        let err = c.disjoint_from(&[token_sha256("shared")]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
    }
}
