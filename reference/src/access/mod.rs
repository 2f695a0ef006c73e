//! Who may ask: admission (§4.3), read on every request and never held.
//!
//! Sessions, sign-in links and CSRF live with the web surface for now
//! (`web/`); admission is the predicate every one of them reads.

pub mod admission;
