//! Who may ask: admission (§4.3), read on every request and never held, and the sessions and sign-in links that carry it (§9.1).

pub mod admission;
pub mod session;
