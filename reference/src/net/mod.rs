//! The network floor (§4.1, §6): how memoria's calls leave the instance and what the bytes mean, below every room that dials.
//!
//! [`host`] refuses other teams' hosts (§6.3), [`transport`] carries HTTP
//! over a pluggable [`transport::Dialer`] within a deadline, [`tls`] runs
//! TLS over its stream (an `https://` sibling or home, and the provider,
//! §6.1, §8.3), [`token`] reads memoria's token at each sibling where it is
//! sent (§6.2), and [`wire`], [`s6`] and [`sheet`] hold the contract's
//! messages and their total decoders (`fixtures/contract/`, suite ruling 7).
//! Nothing here knows the instance, a person or a page: the calls that use
//! them (the sibling client, the home's roster pull, the provider's
//! clients) are the rooms above.

pub mod host;
pub mod s6;
pub mod sheet;
pub mod tls;
pub mod token;
pub mod transport;
pub mod wire;
