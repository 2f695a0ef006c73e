//! Fake siblings: real implementations of the contract over a state model, with fault knobs (§4.1, §6).
//!
//! [`model`] holds the state, [`server`] serves it as an axum router,
//! [`faults`] bends the answers, [`trace`] records every call without
//! content, and [`wire`] is the fake's own serde view of
//! `fixtures/contract/`. [`control`] is an optional `/_control` route that
//! drives state transitions for the conformance kit over loopback.
//! [`sheet`] is the fake Sheets' cell model (values, display strings,
//! format codes) that S3 renders and S6 evaluates.
//! [`home`] is not a sibling either: the team's home, serving the roster
//! (suite call 8, §4.3) with faults.
//! [`provider`] is not a sibling: it is the stub embedding provider (§8.3),
//! served the same way.

pub mod control;
pub mod embedder;
pub mod faults;
pub mod home;
pub mod model;
pub mod provider;
pub mod server;
pub mod sheet;
pub mod trace;
pub mod wire;

pub use control::{CONTROL_PATH, Controller};
pub use faults::{
    Cold, Faults, FaultsHandle, ForcedS6, Lie, MalformedS2, MalformedS6, Outage, Redirect,
    RefuseConnection, Slow, TruncateAnnounce,
};
pub use model::{Model, ModelError, ModelHandle, Revise, Role, Rung, Snapshot};
pub use server::{FakeConfig, FakeSibling, S2_PAIRS_PER_CALL_MAX, S6_CELLS_PER_CALL_MAX};
pub use sheet::{Cell, Sheet, Tab};
pub use trace::{CallDetail, CallKind, Clock, ManualClock, Trace, TraceEvent};
pub use wire::SubjectKind;
