//! The AI half's way out: the one provider memoria supports (§8.3), its embeddings call (§7.2) and chat completions call (§8.2), and what the canary is (§8.2); the queue's drain and the canary's check are `app/`'s.
//!
//! With AI off (the default, §8.1) nothing here is constructed, so nothing
//! here is dialed. With AI on, [`embed::EmbedClient`] and
//! [`chat::ChatClient`] are the only things that send content outside the
//! instance, and they reach the provider through the same [`crate::Dialer`]
//! the sibling client uses, so gate 15's guard hears them. Nothing
//! constructs the chat client yet (the router and the answer are later
//! work, issue 14).

pub(crate) mod canary;
pub(crate) mod chat;
pub(crate) mod embed;
pub(crate) mod provider;
