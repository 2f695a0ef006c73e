//! Who may ask: admission (§4.3), read on every request and never held; the sessions and sign-in links that carry it (§9.1); the sign-in classifier, run only after admission (§3.2); and the connectors' credentials, a set of their own (§9.1).

pub mod address;
pub mod admission;
pub mod classifier;
pub mod connector;
pub mod home;
pub mod roster;
pub mod session;
