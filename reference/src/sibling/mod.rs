//! memoria's client for its siblings' S1, S1a, S2 and S3 (§4.1, §6): it asks, it never decides.
//!
//! The wire shapes are `fixtures/contract/`'s, which are the interface
//! (suite ruling 7). [`host`] refuses other teams' hosts (§6.3),
//! [`transport`] carries HTTP over a pluggable [`transport::Dialer`],
//! [`tls`] runs TLS over its stream for an `https://` sibling (§6.1),
//! [`wire`] holds the total decoders ([`s6`] S6's), [`token`] reads memoria's token at
//! each sibling where it is sent (§6.2), [`client`] makes the calls,
//! [`sync`] pulls changes in, [`pull`] decides when (on wake and on each
//! question, §6.1) and [`ruled`] rules a search page through S2.

pub mod client;
pub mod host;
pub mod pull;
pub mod ruled;
pub mod s6;
pub mod sync;
pub mod tls;
pub mod token;
pub mod transport;
pub mod wire;

pub use client::SiblingClient;
pub use pull::Puller;
pub use wire::{Pair, Verdict};

/// An app's name as a reader sees it: `sheets` → `Sheets`.
pub fn app_display_name(app: &str) -> String {
    let mut chars = app.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
