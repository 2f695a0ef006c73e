//! memoria's conversations with its siblings, and the use-cases built on them (§4.1, §6, §8.7): it asks, it never decides.
//!
//! Above the instance: [`client`] makes the S1, S1a, S2, S3 and S6 calls
//! over the network floor ([`crate::net`]: host checks, transport, TLS,
//! tokens and the wire's decoders), [`ruled`] rules a search, a document
//! and a brief through S2 on the one path, [`numeric`] answers a numeric
//! question (S2 on the operands, then one S6 call), [`sync`] pulls changes
//! in and [`pull`] decides when (on wake and on each question, §6.1).

pub mod client;
pub mod numeric;
pub mod pull;
pub mod ruled;
pub mod sync;

pub use client::SiblingClient;
pub use pull::Puller;
