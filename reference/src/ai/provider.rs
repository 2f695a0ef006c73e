//! Who receives content when AI is on, fixed in code (§8.3, decision 13), and the key memoria presents to it.
//!
//! The provider is not configurable: no base URL, host or model id is read
//! from configuration. §8.3 gives the reason: a configurable base URL on an
//! OpenAI-compatible client would let an owner point memoria at a proxy
//! while every footer still printed "one named provider". A team owner's
//! choice is on or off (`MEMORIA_AI`), not which.

use zeroize::Zeroize as _;

/// The provider's name, as the footer states it (§8.3).
pub const PROVIDER_NAME: &str = "TensorX";
/// The provider's host (§8.3: "TensorX (api.tensorx.ai)").
pub const PROVIDER_HOST: &str = "api.tensorx.ai";
/// The provider's port: HTTPS.
pub const PROVIDER_PORT: u16 = 443;
/// The embedding model id, pinned (§7.2, §8.3): 4,096 values per input,
/// trained Matryoshka, and it fails the request if `dimensions` is sent.
pub const EMBED_MODEL: &str = "qwen/qwen3-embedding-8b";
/// The OpenAI-compatible embeddings path (§8.3).
pub const EMBED_PATH: &str = "/v1/embeddings";
/// The OpenAI-compatible chat completions path (§8.3): the same provider
/// and host as embeddings.
pub const CHAT_PATH: &str = "/v1/chat/completions";
/// `model.cheap`, pinned (§8.2, "model.cheap is
/// deepseek/deepseek-v4-flash-0731", confirmed by Paul 2026-09-05): a
/// datestamped id, so gate 30's canary is not load-bearing for it.
pub const MODEL_CHEAP: &str = "deepseek/deepseek-v4-flash-0731";
/// `model.frontier`, pinned (§8.2, "model.frontier is
/// deepseek/deepseek-v4-pro-0813", confirmed by Paul 2026-09-05).
pub const MODEL_FRONTIER: &str = "deepseek/deepseek-v4-pro-0813";
/// The longest provider key accepted, in bytes; a bearer token, so a few
/// hundred bytes at most. This project's bound, not the provider's.
pub const PROVIDER_KEY_BYTES_MAX: usize = 1024;

/// Why a provider key was refused. Names the rule, never the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRefusal {
    /// The key is empty after trimming whitespace.
    #[error("the provider key is empty")]
    Empty,
    /// The key is over [`PROVIDER_KEY_BYTES_MAX`].
    #[error("the provider key is over {PROVIDER_KEY_BYTES_MAX} bytes")]
    TooLong,
    /// The key has a byte a bearer token cannot carry (a space, a control
    /// character, anything outside visible ASCII).
    #[error("the provider key has a character a bearer token cannot carry")]
    BadCharacter,
}

/// The provider's API key: sent as a bearer token, never printed (its
/// `Debug` is redacted) and wiped from memory when dropped.
#[derive(Clone)]
pub struct ProviderKey(String);

impl ProviderKey {
    /// The key in `text`, with surrounding whitespace (a file's trailing
    /// newline) trimmed.
    ///
    /// # Errors
    /// [`KeyRefusal`] when the key is empty, over
    /// [`PROVIDER_KEY_BYTES_MAX`], or has a byte outside visible ASCII.
    pub fn parse(text: &str) -> Result<ProviderKey, KeyRefusal> {
        let key = text.trim();
        if key.is_empty() {
            return Err(KeyRefusal::Empty);
        }
        if key.len() > PROVIDER_KEY_BYTES_MAX {
            return Err(KeyRefusal::TooLong);
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(KeyRefusal::BadCharacter);
        }
        Ok(ProviderKey(key.to_owned()))
    }

    /// The `Authorization` header value, marked sensitive.
    pub(crate) fn bearer(&self) -> http::HeaderValue {
        let mut v = http::HeaderValue::from_str(&format!("Bearer {}", self.0))
            .expect("a visible-ASCII key makes a valid header value");
        v.set_sensitive(true);
        v
    }
}

impl Drop for ProviderKey {
    fn drop(&mut self) {
        self.0.zeroize();
    }
}

impl std::fmt::Debug for ProviderKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProviderKey(redacted)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_trimmed_and_never_printed() {
        let key = ProviderKey::parse("  tx-secret-123\n").unwrap();
        assert_eq!(format!("{key:?}"), "ProviderKey(redacted)");
        assert_eq!(key.bearer().to_str().unwrap(), "Bearer tx-secret-123");
        assert!(key.bearer().is_sensitive());
    }

    #[test]
    fn an_empty_long_or_spaced_key_is_refused_by_rule() {
        assert_eq!(ProviderKey::parse(" \n").unwrap_err(), KeyRefusal::Empty);
        assert_eq!(
            ProviderKey::parse(&"k".repeat(PROVIDER_KEY_BYTES_MAX + 1)).unwrap_err(),
            KeyRefusal::TooLong
        );
        assert_eq!(
            ProviderKey::parse("two words").unwrap_err(),
            KeyRefusal::BadCharacter
        );
    }
}
