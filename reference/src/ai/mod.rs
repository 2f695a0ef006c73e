//! The AI half's way out: the one provider memoria supports (§8.3), its embeddings call (§7.2), the embedding queue's drain, and the canary (§8.2).
//!
//! With AI off (the default, §8.1) nothing here is constructed, so nothing
//! here is dialed. With AI on, [`embed::EmbedClient`] is the only thing that
//! sends content outside the instance, and it reaches the provider through
//! the same [`crate::Dialer`] the sibling client uses, so gate 15's guard
//! hears it.

pub(crate) mod canary;
pub(crate) mod embed;
pub(crate) mod provider;
pub(crate) mod queue;
mod tls;
