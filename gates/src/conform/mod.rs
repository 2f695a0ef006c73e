//! The harness's side of the conformance kit: the kit itself is the `memoria-kit` crate (`gates/kit/`), re-exported here whole; the in-process fake sibling it runs against with `--fake` stays in [`fake`] (§4.1, §6.1).
//!
//! `memoria_gates::conform::…` names what it always named, so the tests,
//! the mutation runner's judge and the listing read the kit's cases and
//! reports through this module. The fake needs the simulator, which the
//! kit must never build.

pub use memoria_kit::*;

pub mod fake;
