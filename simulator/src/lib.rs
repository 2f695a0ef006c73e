//! Runs the reference memoria against fake siblings in simulated time, one seed per run.
//!
//! Nothing inside a simulated run reads the wall clock or opens a real socket:
//! every host is a turmoil host, every connection a turmoil connection, and
//! every timer tokio's paused clock, which turmoil advances.
//!
//! # A world (§6.5, §10)
//!
//! A [`World`] is memoria and its siblings as turmoil hosts, every setting
//! drawn from one seed. [`World::run`] wakes memoria on its own host and
//! hands the run a [`Memoria`], a browser that speaks HTTP to it; the
//! siblings' [`Trace`] records every S-call without content.
//!
//! ```
//! use memoria_simulator::{SiblingSpec, World};
//! let world = World::new(7, vec![SiblingSpec::own("sheets")]);
//! assert!(world.settings().contains("seed=7"));
//! ```
//!
//! # Fake siblings (§4.1, §6)
//!
//! A [`FakeSibling`] is a real implementation of the wire contract over a
//! state model ([`Model`], items on a [`Rung`]), with fault knobs switched
//! through [`FaultsHandle`] ([`Cold`], [`Slow`], [`Outage`], [`Lie`],
//! [`MalformedS2`], [`TruncateAnnounce`], [`Redirect`]). Its own serde view
//! of `fixtures/contract/` is the [`wire`] namespace. [`serve_turmoil`]
//! and [`serve_loopback`] serve a fake; [`TurmoilDialer`] is the
//! reference's way out in a run, behind a [`GuardedDialer`] that records
//! every lookup and connection memoria makes in a [`NetGuard`] (gate 15). The conformance kit's `/_control` hook is
//! [`Controller`], on loopback only. [`KeymailClassifier`] stands in for
//! the suite's sign-in classifier, dialing a [`MailDomain`] through the
//! same guard (gate 33).
//!
//! # Token rotation (§6.2)
//!
//! A fake's consumers rows hold up to two tokens per consumer, each with an
//! epoch, and its [`Trace`] records the epoch each call carried (never the
//! token). A [`Drain`] runs §6.2's three phases for one consumer over its
//! siblings ([`Drain::expand`], [`Drain::switch`] into memoria's token files,
//! which [`World::use_token_files`] configures, and [`Drain::contract`],
//! which retires the old token only where it observed the new one in use),
//! each interruptible after k siblings ([`Stop`]), and emergency
//! revocation ([`Drain::revoke`]). [`World::add_consumer`] and
//! [`World::run_consumers`] stand up a second memoria beside the first
//! against the same fakes (gate 13).
//!
//! # The stub provider (§7.2, §8.2, §8.3)
//!
//! [`StubProvider`] serves `POST /v1/embeddings` over a deterministic
//! embedder of hashed word features, which is NOT semantic: texts sharing
//! words score higher, and nothing more. An input holding
//! [`SENTINEL_MARKER`] gets [`sentinel_vector`]. It records every request
//! in memory and has knobs ([`ProviderFaults`]: down, slow, 429, wrong
//! length, NaN, all-zero, [`Drift`]). The same stub serves
//! `POST /v1/chat/completions` with scripted replies
//! ([`StubProvider::push_chat_reply`]), records every chat body, and has
//! knobs of its own ([`ChatFaults`]: down, slow, 429, malformed, 5 MB).
//! Serve it as a fake sibling is served:
//! `serve_turmoil(stub.router(), port)` on a turmoil host, or
//! [`serve_loopback`] outside a run.
//!
//! # Other fakes and runs
//!
//! [`connector`] is a paginated external source for the reference's
//! connector (§5.1, gate 7). [`scenario`] reads and replays incident
//! scenarios (`scenarios/*.toml`). [`tour`] is a representative
//! three-sibling run: the determinism check and the bench. [`load_corpus`]
//! gives fakes real text.
//!
//! # The facade
//!
//! Every module is private; this file is the crate's whole public surface,
//! grouped by concern, so the tree under `src/` can move without the other
//! crates noticing. The fake's wire types ([`wire`]), the fake connector
//! ([`connector`]) and incident replay ([`scenario`]) are namespaces of
//! their own.

mod corpus;
mod drain;
pub mod explore;
mod fake;
mod fake_connector;
mod guard;
mod keymail;
mod net;
pub mod scenario;
mod tour;
mod world;

// The world: memoria and its siblings on turmoil hosts, one seed (§6.5, §10).
pub use world::{
    BROWSER_HOST, EPOCH_UNIX_S, HOME_GENERATION, HOME_HOST, LINK_LATENCY_MS, MEMORIA_CONSUMER,
    MEMORIA_HOST, MEMORIA_PORT, Memoria, OTHER_TEAM, OWNERS, OWNERS_FILE_NAME, PROVIDER_STUB_KEY,
    PROVIDER_STUB_PORT, Page, SECONDS_PER_DAY, SIBLING_PORT, SIM_DEK_BYTES, SIMULATION_DURATION_S,
    SiblingSpec, SimClock, SimFailure, TEAM, TICK_MS, World,
};

// The operator drain's token rotation: expand, switch, contract, revoke (§6.2, gates 12 and 13).
pub use drain::{Drain, DrainRefusal, PhaseReport, Stop};

// The network: serving a router, dialing out (§6.1, §6.3).
pub use net::{TurmoilDialer, TurmoilListener, serve_connection, serve_loopback, serve_turmoil};

// The network guard: every lookup and connection memoria makes in a run (§3.2, gate 15).
pub use guard::{DialOutcome, GuardedDialer, NetEvent, NetGuard};

// The suite's sign-in classifier as rastrillo's behaves, and the mail domains it dials (§3.2, gate 33).
pub use keymail::{KEYMAIL_PATH, KEYMAIL_PORT, KeymailClassifier, MailDomain};

// Fake siblings: the model, the server, the knobs, the trace (§4.1, §6).
pub use fake::model::{
    EPOCH_UNIX_SECONDS, Event as S1Event, FeedError, Item, Person, Revision, S1_ROWS_PER_PAGE,
    S1A_RECORDS_PER_PAGE, rfc3339,
};
// The fake home: the roster, suite call 8 (§4.3).
pub use fake::home::{FakeHome, GARBAGE, Garbage, HOME_LABEL, HomeFault, Pull, RosterResponse};
pub use fake::server::{TOKENS_PER_CONSUMER_MAX, TokenRefusal};
pub use fake::trace::{TracedCell, TracedPair, TracedRow};
pub use fake::{
    CONTROL_PATH, CallDetail, CallKind, Cell, Clock, Cold, Controller, FakeConfig, FakeSibling,
    Faults, FaultsHandle, ForcedS6, Lie, MalformedS2, MalformedS6, ManualClock, Model, ModelError,
    ModelHandle, Outage, Redirect, RefuseConnection, Revise, Role, Rung, S2_PAIRS_PER_CALL_MAX,
    S6_CELLS_PER_CALL_MAX, Sheet, Slow, Snapshot, SubjectKind, Tab, Trace, TraceEvent,
    TruncateAnnounce,
};
// The fake Sheets' cell model and §8.7's worked example (FY2024..FY2026 P&L).
pub use fake::sheet::{self as sheet, worked_example};

// The stub provider: embeddings deterministic, NOT semantic; chat scripted; both with knobs (§7.2, §8.2, §8.3).
pub use fake::provider::{
    ChatFaults, Down as ProviderDown, Drift, PROVIDER_ACTIONS, ProviderFaults, REFUSED_MARKER,
    RecordedChatRequest, RecordedRequest, SENTINEL_MARKER, STUB_CHAT_DEFAULT_REPLY,
    STUB_CHAT_OVERSIZED_BYTES, STUB_CHAT_PATH, STUB_CHAT_REQUEST_BYTES_MAX, STUB_EMBED_PATH,
    STUB_FEATURES_PER_WORD, STUB_INPUTS_PER_CALL_MAX, STUB_PREFIX_VALUES, STUB_REQUEST_BYTES_MAX,
    STUB_VECTOR_VALUES, StubProvider, dot as stub_dot, embed_text as stub_embed_text,
    sentinel_vector,
};

// A real model behind the stub, for loopback demos (§7.2).
pub use fake::embedder::{EmbedderError, MODEL_HOME_RELATIVE, MODEL_VALUES, ModelEmbedder};

// Real text for fakes (§7).
pub use corpus::{Corpus, CorpusSource, load_items as load_corpus};

// A representative run.
pub use tour::{
    TOUR_APPS, TOUR_ITEMS_PER_SIBLING, TOUR_LATENCY_MS_MAX, TOUR_QUERY, tour, tour_world,
};

/// The fake sibling's own serde view of the wire contract
/// (`fixtures/contract/`), independent of the reference's types.
pub mod wire {
    pub use crate::fake::wire::*;
}

/// A paginated fake connector: an external source with page tokens and
/// fault knobs, for the reference's connector in simulated time (§5.1,
/// gate 7).
pub mod connector {
    pub use crate::fake_connector::*;
}
