//! Incident replay: a TOML scenario declares siblings, readers and a timeline in simulated time, with expectations (§4.1, §6.5, §8.1).
//!
//! A scenario file (`scenarios/*.toml`, taught in `scenarios/README.md`)
//! declares the siblings and their items, the readers, and a timeline of
//! events: faults switched on and off, restores, revisions, ingest ticks,
//! memoria restarts and crashes at named points, skipped days, and
//! queries by a named reader, each with optional expectations about the
//! page, the trace or memoria's store.
//! [`replay`] runs it in a [`World`](crate::World) under one seed and
//! returns a [`Replay`]: the timeline as it happened, with every
//! expectation checked. Content never reaches the timeline: queries are
//! shown by reader and word count, pages by counts and notice lines, calls
//! by ids and statuses.
//!
//! One job per file, each private; this file is the namespace's surface:
//!
//! - `parse.rs`: the file format's types and [`parse`] (line and column on
//!   every error);
//! - `validate.rs`: what parsing cannot check (every name resolves, the
//!   timeline checks something);
//! - `replay.rs`: [`world`] and [`replay`], driving the world;
//! - `checks.rs`: the assertions a scenario states, as [`Check`]s;
//! - `oracle.rs`: the explorer's truth oracle, safety at every page and
//!   liveness after the faults (`oracle = true`);
//! - `surfaces.rs`: each surface read as what it showed, the truth of
//!   memoria-owned documents, the grep at rest;
//! - `rotation.rs`: the operator drain's token rotation driven by the
//!   timeline, and the oracle's rotation checks (§6.2);
//! - `token_file.rs`: memoria's token files broken and mended, and the
//!   oracle's check that a token it cannot read is sent to nobody (§6.2);
//! - `documents.rs`: the document page, the MCP `document` tool and the
//!   sources page, opened by link and judged; `document_answer.rs`: what
//!   only a document's answer shows (anchors, a withheld document's count,
//!   an absent one against an id never held);
//! - `connector.rs`: the folder and paged connectors, enumerated on
//!   memoria's schedule, and the oracle's checks of what an enumeration
//!   may delete (§5.1, §4.2, gate 7);
//! - `dense.rs`: with AI on, a question only the dense half answers,
//!   its page's order judged by the stub provider's own vectors (§7);
//! - `roster.rs` and `possible.rs`: suite shape, the home's roster as the
//!   oracle knows it, and the copies memoria may hold once the home starts
//!   a new generation (§4.3);
//! - `shrink.rs`: [`shrink`], the smallest timeline that still fails.

mod breaker;
mod checks;
mod connector;
mod deadline;
mod dense;
mod document_answer;
mod documents;
mod oracle;
mod parse;
mod possible;
mod provider;
mod reconciling;
mod reconciling_cause;
mod replay;
mod roster;
mod rotation;
mod shrink;
mod surfaces;
mod token_file;
mod tomb;
#[cfg(test)]
mod traced;
mod validate;

pub use breaker::SAFETY_BREAKER;
pub use checks::{Check, PageSummary, summarise_page};
pub use connector::{
    CONNECTOR_EVERY_MS_DEFAULT, CONNECTOR_LIVENESS, CONNECTOR_QUIET_SYNCS, CONNECTOR_RECORD,
    CONNECTOR_SAFETY,
};
pub use dense::{
    CROWD_SECTIONS, DENSE_MARGIN, DENSE_ONLY_WORD, PAGE_ROWS, SAFETY_DENSE, SAFETY_DENSE_CROWDED,
    crowd_text, dot, kept_vector,
};
pub use documents::{SAFETY_DOCUMENT, SAFETY_SOURCES};
pub use oracle::{
    CONVERGENCE_ROUNDS, LIVENESS, PULL_SETTLE_MS, QUIET_S, SAFETY_ADMITTED, SAFETY_AT_REST,
    SAFETY_COUNTED, SAFETY_OWNED, SAFETY_PROVENANCE, SAFETY_VISIBLE, corpus_tag, letters,
};
pub use parse::{
    Event, FaultDecl, ItemDecl, PROVIDER_LAG_MS, PROVIDER_RATE_LIMITED_CALLS, PROVIDER_SLOW_MS,
    PageExpect, ProviderState, RungDecl, Scenario, ScenarioError, SiblingDecl, Surface, parse,
};
pub use provider::{EMBED_DRAIN_WAIT_MAX_S, LIVENESS_EMBEDDINGS};
pub use reconciling::{LIVENESS_PHANTOM, SAFETY_RECONCILING};
pub use reconciling_cause::SAFETY_RECONCILING_CAUSE;
pub use replay::{Entry, READER_DOMAIN, Replay, SCENARIO_SEED_DEFAULT, address, replay, world};
pub use roster::{ROSTER_PULL_WAIT_MAX_S, SAFETY_ROSTER};
pub use rotation::{ROTATION_LIVENESS, ROTATION_SAFETY, RotationPhase};
pub use shrink::{Shrunk, shrink};
pub use surfaces::owned_tag;
pub use token_file::{SAFETY_TOKEN_FILE, TokenFileState};
pub use tomb::{BACKUPS_KEPT_S, SAFETY_RETENTION, SAFETY_TOMBSTONES};
pub use validate::CRASH_POINTS;
