//! The reference memoria: a per-team search index that seals everything it stores and asks before it speaks.
//!
//! This crate is slice 0 of `memoria-design.md`: memoria with only its own
//! content (uploads and imported files), AI off, done properly. It is the
//! reference the harness in this workspace runs against fake siblings. It
//! never depends on the simulator or the gates.
//!
//! # The one rule (§0)
//!
//! memoria never speaks a passage without asking whoever owns it whether this
//! person may see it, right now. For memoria-owned content memoria is the app
//! of record, and the test is §4.2's two facts: the asker is admitted
//! ([`admission`]), and the document is present and not deleted ([`store`]).
//!
//! # Sealing (§3)
//!
//! [`Sealer`] derives one key per [`Purpose`] from the DEK and seals
//! every cell with AES-256-GCM, bound to its row:
//!
//! ```
//! use memoria::{Dek, Purpose, Sealer};
//! let sealer = Sealer::new(&Dek::generate());
//! let cell = sealer.seal(Purpose::Title, "documents/abc/title", b"Budget 2026");
//! assert_eq!(sealer.open(Purpose::Title, "documents/abc/title", &cell).unwrap(), b"Budget 2026");
//! assert!(sealer.open(Purpose::Title, "documents/xyz/title", &cell).is_err());
//! ```
//!
//! # Chunking, indexing, waking (§7)
//!
//! [`chunk`] splits a document into passages; the [`Store`] seals them into
//! one SQLite file; the [`LexicalIndex`] holds FTS5 postings in memory only;
//! [`snapshot`] persists the index as one sealed blob per generation; an
//! [`Instance`] wakes by loading that blob and rebuilds only when it is
//! missing or behind.
//!
//! ```
//! use std::sync::Arc;
//! use memoria::{Admission, Dek, EgressMode, FixedClock, Instance, InstanceConfig, NewDocument, Sealer};
//! let dir = tempfile::tempdir().unwrap();
//! let config = InstanceConfig {
//!     data_dir: dir.path().to_path_buf(),
//!     admission: Admission::parse("ana@example.org").unwrap(),
//!     egress: EgressMode::AiOff,
//! };
//! let mut m = Instance::wake(config, Sealer::new(&Dek::generate()), Arc::new(FixedClock(0))).unwrap();
//! m.ingest(&NewDocument {
//!     source_key: "upload:kitchen.md".into(),
//!     title: "Kitchen".into(),
//!     path: "kitchen.md".into(),
//!     body: "# Kitchen\n\nDescale the coffee machine monthly.".into(),
//!     date: None,
//! }).unwrap();
//! let page = m.search("ana@example.org", "descaling", 1).unwrap();
//! // Passages are numbered from 1 on the page and in links (`ordinal` counts from 0).
//! assert_eq!(page.results[0].link, format!("/documents/{}#p1", page.results[0].document_id));
//! assert!(m.search("eve@example.org", "descaling", 1).is_err());
//! ```
//!
//! # The dense half (§7, §7.2)
//!
//! [`quantise_embedding`] turns a provider's 4,096 values into a unit int8
//! [`QuantisedVector`] (the first 512, renormalised, one scale per vector);
//! a [`DenseMatrix`] holds them, finds the top [`DENSE_TOP_K`] by raw dot
//! product on the [`DenseKernel`] detected for this CPU, and encodes to the
//! bytes the caller seals; [`fuse_reciprocal_rank`] fuses the BM25 and dense
//! lists with [`RRF_K`].
//!
//! ```
//! use memoria::{DENSE_TOP_K, DenseMatrix, EMBED_DIM_NATIVE, NORM_EPSILON, quantise_embedding};
//! let mut response = vec![0.0f32; EMBED_DIM_NATIVE];
//! response[..3].copy_from_slice(&[0.6, -0.8, 0.1]);
//! let v = quantise_embedding(&response).unwrap();
//! assert!((v.norm() - 1.0).abs() <= NORM_EPSILON);
//! let mut m = DenseMatrix::new();
//! m.push(7, &v).unwrap();
//! assert_eq!(m.top_k(&v, DENSE_TOP_K)[0].chunk_id, 7);
//! assert_eq!(DenseMatrix::decode(&m.encode()).unwrap(), m);
//! assert_eq!(memoria::fuse_reciprocal_rank(&[3, 7], &[7])[0].chunk_id, 7);
//! ```
//!
//! # Surfaces (§8.1, §9.1)
//!
//! [`router`] serves the scriptless search page with axum; every route is in
//! [`DECLARED_ROUTES`] and every page carries the [`EgressMode`] footer.
//! Every sibling passage on every surface is ruled by [`ruled_search`],
//! [`ruled_document`] or [`ruled_brief`], the one S2 path. The `memoria`
//! binary wraps it all in a CLI, and [`McpServer`] serves searches and
//! [`brief`]s to an agent over the Model Context Protocol on stdio.
//!
//! # The facade
//!
//! Every module is private; this file is the crate's whole public surface,
//! grouped by concern, so the tree under `src/` can move without the other
//! crates noticing. The sibling wire format is a namespace of its own
//! ([`wire`]), as are the few groups whose names would collide at the root
//! ([`snapshot`], [`connector`], [`demo`], [`facts`]). Test scaffolding ([`testkit`],
//! crash points) exists only with the `testkit` feature, which release
//! builds do not turn on.

#![deny(missing_docs)]
// `memoria-ship` (reference/ship/) compiles these sources as its own lib
// without `testkit`; the workspace's `--all-targets` build would compile
// that lib's unit tests too, which need `memoria`'s dev-dependencies and
// run as `memoria`'s. There the test build is an empty crate.
#![cfg(not(all(test, feature = "ship")))]

mod access;
mod ai;
pub mod answer;
mod app;
pub mod artefact;
pub mod brief;
mod clock;
mod config;
#[cfg_attr(not(feature = "testkit"), allow(dead_code))]
mod crashpoint;
pub mod date;
pub mod demo;
mod dense;
mod error;
mod ingest;
mod instance;
mod limits;
mod mcp;
mod net;
pub mod numeric;
mod offload;
mod page;
mod policy;
mod search;
mod sibling;
mod storage;
#[cfg(feature = "testkit")]
pub mod testkit;
mod web;

// The one rule's two facts (§4.2) and the errors every call returns.
pub use access::admission::{
    Admission, DEV_OWNER, OWNER_ADDRESS_BYTES_MAX, OWNERS_ENV, OWNERS_FILE_BYTES_MAX,
    OWNERS_FILE_ENV, OWNERS_MAX, Owner, Standing,
};
// Suite shape's admission: the home's roster, pulled (§4.3, suite call 8).
pub use access::classifier::{NoClassifier, SignInClassifier};
pub use access::connector::{
    CONNECTOR_NAME_CHARS_MAX, CONNECTORS_ENV, CONNECTORS_MAX, Connectors, token_sha256,
};
pub use access::home::{
    HOME_APP_LABEL, HOME_ENV, HOME_TOKEN_ENV, HOME_TOKEN_FILE_ENV, HomeClient, ROSTER_PATH,
};
pub use access::roster::{
    PulledRoster, ROSTER_BODY_BYTES_MAX, ROSTER_DEADLINE_MS, ROSTER_GENERATION_BYTES_MAX,
    ROSTER_MEMBERS_MAX, ROSTER_REFRESH_S, ROSTER_RETRY_S, ROSTER_TTL_S, RosterCopy, RosterFault,
    RosterLack, RosterStanding, RosterStatus, decode_roster,
};
pub use error::{DecodeError, Error, ErrorKind};

// Time, configuration and the instance (§7.4).
pub use clock::{Clock, FixedClock, SystemClock, iso_date, iso_date_time};
pub use config::{
    AI_ENV, Ai, CALENDAR_BODIES_ENV, Config, DATA_DIR_DEFAULT, DATA_ENV, DEK_ENV, DEK_FILE_ENV,
    DEV_DEK_FILE_NAME, DekSource, IDLE_EVICT_ENV, PROVIDER_KEY_ENV, PROVIDER_KEY_FILE_ENV,
    SIBLING_CA_FILE_ENV, TOMBSTONE_DIR_SUFFIX, TOMBSTONES_ENV, resolve as resolve_config,
    resolve_calendar_bodies, resolve_idle_evict, resolve_sibling_trust, tombstone_dir_default,
};
pub use instance::{
    DenseWake, DocumentsPage, EMBED_QUEUE_BATCH_CHUNKS, EMBED_TEXT_BYTES_MAX,
    HOME_DOCUMENTS_PER_PAGE, Instance, InstanceConfig, QuerySemantic, ReadView, SnapshotFootprint,
    WakeKind, WakeReport,
};
#[cfg(feature = "testkit")]
pub use offload::ReadHook;
pub use offload::{Offload, READ_HANDLES_IDLE_MAX, SharedInstance};

// At rest (§3, §3.2, §7.4).
pub use storage::roster_mark::ROSTER_MARK_FILE_NAME;
pub use storage::seal::{
    DEK_BYTES, Dek, FINGERPRINT_BYTES, NONCE_BYTES, Purpose, SEAL_VERSION, SEALED_OVERHEAD_BYTES,
    Sealer, TAG_BYTES,
};
pub use storage::store::{
    APP_ARTEFACT, APP_MEMORIA, Applied, ConnectorState, DB_FILE_NAME, DEK_CHECK_TITLES_MAX,
    DOCUMENT_ID_BYTES, Deletion, DocumentSummary, HeldItem, IndexedChunk, IngestOutcome,
    IngestStatus, NewDocument, Passage, PassageHit, Provenance, SCHEMA_VERSION, SiblingState,
    Store, is_document_id,
};
pub use storage::tombstone::{
    TOMBSTONE_CHECKSUM_BYTES, TOMBSTONE_LOG_FILE_NAME, Tombstone, TombstoneLog,
};

// Ingest (§5, §7.2).
pub use app::import::{import, ingest_bytes};
pub use date::{DateKind, DocumentDate, front_matter_date, parse_timestamp};
pub use ingest::decode::{
    CONTROL_CHARS_PER_MILLE_MAX, Decoded, IMPORT_FILE_BYTES_MAX, SourceKind, TITLE_CHARS_MAX,
    decode, is_importable_name,
};
pub use ingest::import::{
    Collected as CollectedImport, FileOutcome, IMPORT_FILES_MAX, IMPORT_SKIPS_LISTED_MAX,
    ImportReport, SkipReason, Skipped, check_paths as check_import_paths,
    collect as collect_import_paths, collect_reporting as collect_import_paths_reporting,
};
pub use search::chunk::{
    CHUNK_BYTES_MAX, CHUNK_WORDS_MAX, CHUNK_WORDS_TARGET, Chunk, HEADING_LEVEL_MAX, RUNT_WORDS_MAX,
    WORD_BYTES_MAX, chunk, word_spans,
};

// Search and its ruling (§7.1, §7.2, §8.1).
pub use page::{
    Candidates, MARKER_MODEL_FOUND_LABEL, MARKER_MODEL_LABEL, MARKER_PERSON, MARKER_PERSON_LABEL,
    PAGE_MAX, PAGE_SIZE_RESULTS, Reconciling, SearchError, SearchPage, SearchResult,
    SemanticRanking, Verdicts, Withheld, WithheldReason, app_display_name, counted, passage_anchor,
    passage_link, passage_number,
};
pub use search::highlight::{
    Highlighter, SNIPPET_CHARS_MAX, SNIPPET_LEAD_CHARS, SNIPPET_WORDS_MAX, Segment, Snippet,
};
pub use search::index::{BM25_WEIGHTS, Hit, ImageSlot, LexicalIndex, SharedImage};
pub use search::markdown::{READ_OPTIONS, TextForm, plain_text};
pub use search::query::{
    Plan, QUERY_BYTES_MAX, QUERY_WORDS_MAX, Query, QueryRefusal, STOP_WORDS, is_stop_word,
    parse as parse_query, plan as plan_query,
};
pub use sibling::numeric::{CANDIDATE_SHEETS_MAX, numeric_answer};
pub use sibling::ruled::{
    DocumentRuling, FollowUps, RuledBrief, RuledDocument, RuledSearch, Ruling, rule, ruled_brief,
    ruled_document, ruled_search, ruled_search_embedded,
};

// The dense half: vectors, the scan, fusion (§3.1, §7, §7.2).
pub use dense::{
    COARSE_LEVEL_MAX, DENSE_COARSE_CANDIDATES, DENSE_COARSE_CANDIDATES_PER_HIT,
    DENSE_FORMAT_VERSION, DENSE_ROWS_MAX, DENSE_TOP_K, DOT_LEN_MAX, DenseDecodeError, DenseHit,
    DenseKernel, DenseMatrix, DenseMatrixError, EMBED_DIM_NATIVE, EMBED_DIM_STORED,
    FUSION_DEPTH_CHUNKS, FusedHit, NORM_EPSILON, QUANT_LEVEL_MAX, QuantisedVector, RRF_K,
    SCALE_MAX, SCAN_BLOCK_ROWS, VectorRefusal, dense_candidates, fuse_reciprocal_rank,
    quantise_embedding,
};

// Policy (§3.6, §8.1).
pub use policy::breaker::{
    BASELINE_DAYS, BREAKER_COUNTERS_RETAINED_DAYS, BreakerState, Lacking,
    REFUSAL_BREAKER_ASKERS_MIN, S2Tally, S3_BREAKER_FETCHES_MIN, S3Tally, Undetermined,
};
pub use policy::egress::EgressMode;

// The one provider, its embeddings and chat calls, built only with AI on (§7.2, §8.2, §8.3).
pub use ai::canary::{CANARY_DRIFT_MAX, CANARY_SENTENCES, CanaryState};
pub use ai::chat::{
    CHAT_ATTEMPTS_MAX, CHAT_DEADLINE_MS, CHAT_PASSAGES_MAX, CHAT_REPLY_TOKENS_MAX,
    CHAT_REQUEST_BYTES_MAX, CHAT_RESPONSE_BYTES_MAX, CHAT_RETRY_WAIT_MS, ChatClient, ChatError,
    ChatErrorKind, ChatModels, ChatPassage, ChatPrompt, ChatReply, FinishReason, ModelTier,
    PromptRefusal, decode_chat_response, encode_chat_request,
};
pub use ai::embed::{
    EMBED_ATTEMPTS_MAX, EMBED_BACKOFF_BASE_MS, EMBED_INGEST_DEADLINE_MS, EMBED_INPUT_BYTES_MAX,
    EMBED_INPUTS_PER_CALL_MAX, EMBED_QUERY_DEADLINE_MS, EMBED_RESPONSE_BYTES_MAX,
    EMBED_RETRY_AFTER_MS_MAX, EMBEDDING_VALUES, EmbedClient, EmbedError, EmbedErrorKind,
    EmbedPolicy, Embedding, InputRefusal, JSON_FLOAT_BYTES_MAX, JsonFault, decode_response,
};
pub use ai::provider::{
    CHAT_PATH, EMBED_MODEL, EMBED_PATH, KeyRefusal, MODEL_CHEAP, MODEL_FRONTIER, PROVIDER_HOST,
    PROVIDER_KEY_BYTES_MAX, PROVIDER_NAME, PROVIDER_PORT, ProviderKey,
};
pub use app::queue::{
    DrainReport, EMBED_SET_ASIDE_RETRY_BASE_S, EMBED_SET_ASIDE_RETRY_MAX_S, SetAside,
    drain as drain_embeddings,
};

// The network floor: host checks, transport, TLS, tokens and the wire (§4.1, §6).
pub use net::host::{
    HostRefusal, SIBLING_PORT_DEFAULT, SIBLING_TLS_PORT_DEFAULT, SiblingScheme, SiblingUrl,
};
pub use net::tls::{CaRefusal, SIBLING_CA_FILE_BYTES_MAX, TlsDialer, TlsRefusal, TlsTrust};
pub use net::token::{
    SIBLING_TOKEN_BYTES_MAX, SIBLING_TOKEN_ENV_PREFIX, SIBLING_TOKEN_FILE_SLACK_BYTES,
    SIBLING_TOKEN_FILE_SUFFIX, SiblingToken, TokenUnreadable,
};
pub use net::transport::{
    Connection, DialFuture, Dialer, SIBLING_DEADLINE_MS, TcpDialer, TransportError, exchange,
};
pub use net::wire::{Pair, Subject, SubjectKind, Verdict};

// Siblings: the client, the pulls (§4.1, §6).
pub use sibling::client::{
    BODIES_REFUSED_BY_DEFAULT, CALENDAR_APP, ConfigRefusal, SiblingClient, SiblingConfig,
};
pub use sibling::pull::{
    Puller, S1_CURRENT_AS_OF_AFTER_S, S1_PULL_BACKOFF_MAX_S, S1_PULL_INTERVAL_MIN_S,
};
pub use sibling::sync::{ReannounceStatus, SyncReport};

// The web surface (§8.1, §9.1).
pub use web::{
    AppState, CONNECTOR_BODY_MAX_BYTES, DECLARED_ROUTES, DeclaredRoute, EMBED_DRAIN_INTERVAL_S,
    FOOTER_EXEMPT, FooterRule, IDLE_EVICT_DEFAULT_S, MULTIPART_OVERHEAD_BYTES_MAX, SESSION_COOKIE,
    SESSION_TTL_S, SESSIONS_MAX, SIGN_IN_LINK_TTL_S, SignInDelivery, TOKEN_BYTES, TerminalDelivery,
    UPLOAD_BYTES_MAX, UPLOAD_NAME_CHARS_MAX, router, scope_names, serve,
};

// The agent transport: briefs and searches over MCP on stdio (issue 16).
pub use mcp::{
    BRIEF_TOOL, BriefArgs, DOCUMENT_ABSENT_SENTENCE, DOCUMENT_ID_ARG_BYTES_MAX, DOCUMENT_TOOL,
    DocumentAnswer, DocumentArgs, DocumentPassage, DocumentTarget, MCP_SERVER_NAME, McpServer,
    PUBLIC_URL_BYTES_MAX, PUBLIC_URL_ENV, PublicUrl, SEARCH_TOOL, STRUCTURED_CONTENT_SINCE,
    SearchArgs, ToolOutcome, serve_stdio as serve_mcp,
};

/// The sibling wire contract as memoria reads and writes it (§4.1, §6.1;
/// `fixtures/contract/`): the messages and the total decoders.
pub mod wire {
    pub use crate::net::s6::*;
    pub use crate::net::wire::*;
}

/// The sealed index snapshot: one blob per generation (§3.1, §7.3, §7.4).
pub mod snapshot {
    pub use crate::storage::snapshot::{
        BACKUP_RETENTION_WINDOW_S, LoadedSnapshot, LoadedVectors, SNAPSHOT_DIR_NAME,
        SnapshotHeader, SnapshotImage, blob_path, dir, generations, latest_generation, open, read,
        read_image, read_vectors, retirable, retire, seal, vectors_blob_path, write, write_at,
        write_vectors_at,
    };
}

/// The fact box's deterministic layer (§8.8): the kinds, their recognisers
/// and validators, the label, and the boxes built from a ruled page; and
/// its model half's pure logic (§8.9, [`facts::model`]).
pub mod facts {
    pub use crate::search::facts::{
        Attribution, Budget, FACT_PASSAGE_BYTES_MAX, FACT_ROWS_MAX, FACT_SPANS_PER_PASSAGE_MAX,
        FactBox, FactQuery, FactRow, Found, Incomplete, Kind, LABEL_CHARS_MAX, Label, Narrowed,
        Span, boxes, scan, spans, tokens,
    };
    pub use crate::search::facts::{eircode, email, iban, label, lexicon, model, phone, vat};
}

/// Connectors for memoria-owned content: enumerate, diff, never read a
/// failure as an empty list (§5.1, §4.2, gate 7).
pub mod connector {
    pub use crate::app::connector::{sync, sync_folder};
    pub use crate::ingest::connector::*;
}
