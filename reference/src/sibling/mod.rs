//! memoria's client for its siblings' S1, S1a, S2 and S3 (§4.1, §6): it asks, it never decides.
//!
//! The wire shapes are `fixtures/contract/`'s, which are the interface
//! (suite ruling 7). [`host`] refuses other teams' hosts (§6.3) and
//! [`transport`] carries HTTP over a pluggable [`transport::Dialer`].

pub mod host;
pub mod transport;
