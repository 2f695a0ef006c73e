//! The framework every gate is written in: what a gate and a case are, what a case body may use, running one to a verdict, choosing cases, and reporting runs.
//!
//! Nothing here knows a gate: the registry (`crate::gates`) lists them, and
//! the rigs (`crate::rigs`) are what bodies build their worlds with.

mod ctx;
mod gate;
pub mod listing;
pub mod progress;
pub mod report;
mod run;
pub mod select;

pub use ctx::{CANARY_CHARS, CANARY_TAIL_CHARS, Ctx, canary_tail};
pub use gate::{Case, CaseFn, Failure, Gate, Status, ensure};
pub use run::{
    assert_case, case, check_case, check_case_reported, filter_picks, gate, registry,
    replay_command, run_case,
};
