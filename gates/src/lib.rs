//! The numbered gates of memoria-design.md §10, each an executable claim with stable case ids.
//!
//! A gate is a claim about the world, not a test that happens to pass. Each
//! one lives in its own file under `src/gates/` named after its number and
//! subject (`g01_plaintext_grep.rs`), and carries its id, title, the spec
//! sections it holds, a one-paragraph requirement, and its cases. Each case
//! has a stable id (`1/database-and-wal`), a description of what the harness
//! does, and one body: the same function runs under `cargo test`
//! (`tests/gates.rs`, one trial per registered case) and from the
//! `memoria-harness` CLI. Registering a gate is one line in
//! `src/gates/mod.rs`.
//!
//! The crate is in three layers, each a private module, and this file is
//! its whole public face:
//!
//! - `framework/`: what a gate and a case are ([`Gate`], [`Case`], [`Ctx`],
//!   [`Failure`]), running one to a verdict ([`run_case`], [`check_case`]),
//!   choosing cases ([`select`]), rendering runs ([`report`]), saying how
//!   far a run has got ([`progress`]) and the counts the docs state
//!   ([`listing`]);
//! - `rigs/`: what bodies build their worlds with: seeds and greps
//!   (`support`), simulated siblings (`sim`), and the page reader (`page`);
//! - `gates/`: the registry and one file per gate.
//!
//! Beside them, [`conform`] is the conformance kit (the `memoria-kit`
//! crate re-exported, and the fake sibling `conform --fake` runs it
//! against), [`mutants`] runs the
//! recorded mutations (the `memoria-mutants` crate re-exported, and the
//! check of a `conform:` line against the kit's cases) and [`demo`] serves memoria beside fake siblings left
//! in faults for a person to look at; the CLI uses all three as modules.
//!
//! Ids follow `shared/spec/GATES.md` and are never reused. A gate that
//! asserts an absence first asserts the presence that makes it meaningful,
//! and a count that failed is reported as a failure, never as zero.
//!
//! ```
//! let gate = memoria_gates::gate("26").expect("gate 26 is registered");
//! assert!(gate.cases.iter().any(|c| c.id == "26/sha256-absent-at-rest"));
//! ```

#![deny(missing_docs)]

mod framework;
mod gates;
mod rigs;

pub mod conform;
pub mod demo;
pub mod mutants;

pub use framework::{
    CANARY_CHARS, CANARY_TAIL_CHARS, Case, CaseFn, Ctx, Failure, Gate, Status, assert_case,
    canary_tail, case, check_case, check_case_reported, ensure, filter_picks, gate, listing,
    progress, registry, replay_command, report, run_case, select,
};
/// Gate 29's measurement, for `memoria-harness quality`.
pub use gates::g29_retrieval_quality as quality;
pub use rigs::page::{Citation, FactRowSeen, Form, Page, ResultItem, Tag};
pub use rigs::support::{SEED_ENV, seed_from_env};
