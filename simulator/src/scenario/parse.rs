//! Parsing: a scenario file's TOML becomes a typed [`Scenario`], and a misspelt key, kind or value is reported at its own line and column.
//!
//! Size: about 850 lines because the file format is one vocabulary: every
//! event and fault the explorer draws, the roster's suite shape among them,
//! with the error that names a misspelling's line and column.
//!
//! The types here are the file format (`scenarios/README.md` teaches it):
//! the siblings and their items, the readers, the timeline's [`Event`]s and
//! a query's [`PageExpect`]. Unknown fields are refused. [`parse`] reads the
//! text with its spans, turns each event's `do` and each fault's `kind` into
//! serde's external tag, deserializes, and hands the result to
//! `validate.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::validate::validate;

/// A scenario file, as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// One line naming the incident.
    pub title: String,
    /// What happened and what the expectations hold, in prose.
    #[serde(default)]
    pub about: String,
    /// The seed, unless `--seed` overrides it.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Reader names; each is an owner of memoria and a member at every sibling.
    #[serde(default)]
    pub readers: Vec<String>,
    /// Guests: admitted by memoria, a guest at every sibling (who sees no
    /// team item, §4.1). A query may name one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guests: Vec<String>,
    /// Strangers: admitted by memoria, unknown to every sibling. A query
    /// may name one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strangers: Vec<String>,
    /// Judge every query's page with the explorer's truth oracle
    /// (`oracle.rs`: safety at every render, §4.1, §8.1), besides any
    /// `expect` it carries.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub oracle: bool,
    /// memoria runs with AI on against the stub provider, answering
    /// extractively: it embeds, and writes derived artefacts (§5.2) for
    /// items with a `topic`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ai: bool,
    /// Suite shape (§4.3): a fake home serves the team's roster (suite
    /// call 8) listing every reader but the first; memoria admits the first
    /// reader, the guests and the strangers from its owners list and the
    /// other readers from its pulled copy of the roster, which its own
    /// roster loop refreshes (§6.5). The `roster-*` events need it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub home: bool,
    /// turmoil's tick for this run, in simulated ms (`World::set_tick_ms`,
    /// 1 to `TICK_MS_MAX`); absent, the gates' 1 ms. The explorer's worlds
    /// run at `explore::TICK_MS`, and a scenario shrunk from one keeps it,
    /// so it replays the run that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_ms: Option<u64>,
    /// How often memoria enumerates its connectors, in simulated ms
    /// (`connector.rs`: the schedule an operator runs `memoria
    /// sync-folder` on; the spec states none); absent,
    /// `connector::CONNECTOR_EVERY_MS_DEFAULT`. Only a scenario with
    /// `connector-*` events enumerates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_every_ms: Option<u64>,
    /// Items per page of the paged connector (`fake_connector.rs`);
    /// absent, its default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paged_page_size: Option<usize>,
    /// The siblings.
    #[serde(rename = "sibling", default)]
    pub siblings: Vec<SiblingDecl>,
    /// The timeline, in order.
    #[serde(rename = "event", default)]
    pub events: Vec<Event>,
}

/// One sibling and what it holds at the start.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SiblingDecl {
    /// App label: `sheets`, `docs`, `calendar`.
    pub app: String,
    /// Items of real text from the public corpus (or the fixtures), team-visible.
    #[serde(default)]
    pub corpus: usize,
    /// Items of the scenario's own text.
    #[serde(rename = "item", default)]
    pub items: Vec<ItemDecl>,
    /// Records per S1a page on this sibling's fake (default: the fake's
    /// own, 50); a few makes a re-announce span pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub announce_page_records: Option<usize>,
    /// Whether the sibling holds §8.7's worked example (the spreadsheets
    /// `sh-fy2024` … `sh-fy2026`, tab `P&L`, Revenue in `€#,##0`).
    #[serde(default)]
    pub worked_example: bool,
}

/// One item the scenario writes itself.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ItemDecl {
    /// The sibling's item id.
    pub id: String,
    /// Words the body holds, e.g. `quarterly budget`; queries find it by them.
    pub words: String,
    /// How many revisions to create (`r1` … `rN`); default 1.
    #[serde(default = "one")]
    pub revisions: usize,
    /// `team` (default), `private` (owned by the first reader) or `granted`.
    #[serde(default)]
    pub rung: RungDecl,
    /// Readers an item is granted to (with `rung = "granted"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub granted_to: Vec<String>,
    /// Readers removed from a team item ("minus rows I have been removed from").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// A topic tag the item's title carries (`#topic`): with `ai = true`,
    /// memoria writes the item a summary and the topic an overview (§5.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// Sections the body holds after its first, each under a heading of
    /// [`CONTINUED_HEADING`] (so a passage of its own, §7.2's chunker):
    /// 0 (default), a body of one passage. A revision keeps them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sections: usize,
}

/// The heading that opens each later section of an item's body
/// ([`ItemDecl::sections`]), followed by its number from 2.
pub const CONTINUED_HEADING: &str = "## Continued, part";

/// The later sections of an item's body ([`ItemDecl::sections`]): real
/// sentences of a working note, none naming the item's words, so a
/// question by its tag still finds one passage, its first.
pub fn sections_body(sections: usize) -> String {
    (0..sections)
        .map(|k| {
            format!(
                "\n{CONTINUED_HEADING} {}\n\nThe actions agreed at the last meeting, who owns each and when it is due; what was decided, what is still open, and who must be asked before the next review.\n",
                k + 2
            )
        })
        .collect()
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn one() -> usize {
    1
}

/// An item's rung (§4.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RungDecl {
    /// Every team member.
    #[default]
    Team,
    /// The first reader only.
    Private,
    /// `granted_to` only.
    Granted,
    /// Team rung, reachable by link and not shared with the team: not
    /// team-visible (§4.1 custody).
    LinkShared,
    /// Team rung, shared with guests only: not team-visible.
    GuestOnly,
}

/// The surface a question is asked on (§8.1: every surface that shows a
/// passage rules it on the one S2 path).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Surface {
    /// The search page, `GET /?q=`.
    #[default]
    Page,
    /// The brief page, `GET /brief?task=&scope=team`.
    Brief,
    /// The search as `memoria search --format json` prints it: the ruled
    /// page serialised.
    Json,
    /// The MCP server's `search` tool, its structured content.
    Mcp,
}

impl Surface {
    /// What a person does on it, for the timeline.
    pub fn verb(self) -> &'static str {
        match self {
            Surface::Page => "searches",
            Surface::Brief => "asks for a brief",
            Surface::Json => "searches as JSON",
            Surface::Mcp => "searches over MCP",
        }
    }
}

/// A fault knob as a scenario switches it on (`simulator/src/fake/faults.rs`).
///
/// The file names the knob with `kind = "…"` inside the fault's table;
/// [`parse`] turns that into serde's external tag before deserializing, so
/// an error keeps the span of the key it is about. (De)serialized directly,
/// the form is externally tagged: `{ cold = { idle_ms = …, … } }`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum FaultDecl {
    /// The first call after `idle_ms` waits `wake_ms`.
    Cold {
        /// Quiet period, ms.
        idle_ms: u64,
        /// Wake time, ms.
        wake_ms: u64,
    },
    /// Added latency on S2 (or every call with `all = true`).
    Slow {
        /// Added latency, ms.
        latency_ms: u64,
        /// Every call, not only S2.
        #[serde(default)]
        all: bool,
    },
    /// Down: `hang`, `refuse`, or a status such as 503.
    Outage {
        /// `hang`, `refuse` or a status code as text, e.g. `"503"`.
        mode: String,
        /// Only this call is down (`S1`, `S1a`, `S2`, `S3` or `S6`): S3's
        /// content store answering 404 while the feed answers, say.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        only: Option<String>,
    },
    /// S2 says VISIBLE for everyone.
    LieVisible,
    /// A malformed S2 answer: `not-json`, `missing-item`, `unknown-value`, …
    MalformedS2 {
        /// The shape, kebab-case of `MalformedS2`'s variants
        /// (`status-203` for `Not200(203)`, `kind-capitals` for
        /// `KindInCapitals`).
        shape: String,
    },
    /// An announce without its close marker.
    AnnounceNoClose,
    /// An announce whose close count is off by `delta`.
    AnnounceWrongCount {
        /// Added to the true count.
        delta: i64,
    },
    /// An announce whose continuation pages never answer: the consumer's
    /// deadline cuts it off after the first page.
    AnnounceHang,
    /// Every call answers 307 to `location`.
    Redirect {
        /// The `Location`.
        location: String,
    },
    /// S1 pages of `rows` rows from now on; with `fail-next`, the first
    /// page asked from the log's head as it is now, or later, answers 503,
    /// once (a one-shot `clear` leaves armed: a feed failing after the page
    /// naming the last row, §6.1, gate 27).
    FeedPages {
        /// Rows per page (at least one).
        rows: usize,
        /// Whether the next page past the head now fails once.
        #[serde(default)]
        fail_next: bool,
    },
    /// S3 answers 503 once for `item` at `revision`, a one-shot `clear`
    /// leaves armed (a refetch failing during a re-announce, §4.1 rule 4,
    /// gate 27).
    S3FailsOnce {
        /// Which item.
        item: String,
        /// At which revision.
        revision: String,
    },
}

/// What the stub provider does from a `provider` event on, in an AI-on
/// scenario (§8.3): its embeddings and chat calls alike. memoria is never
/// told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderState {
    /// Every call answered 503.
    Down,
    /// Every connection refused.
    Refused,
    /// Every call answered [`PROVIDER_SLOW_MS`] late: past memoria's
    /// ingest deadline (`memoria::EMBED_INGEST_DEADLINE_MS`).
    Slow,
    /// The next [`PROVIDER_RATE_LIMITED_CALLS`] calls answered 429.
    RateLimited,
    /// Every call answered [`PROVIDER_LAG_MS`] late: inside memoria's
    /// ingest deadline, so what a drain sent lands, long after it left
    /// (a deletion meanwhile races it, gate 10).
    Lagging,
    /// Every fault cleared: the provider answers again.
    Answering,
}

/// How late a slow provider answers, in simulated ms: 5 s past memoria's
/// ingest deadline for an embeddings call (§8.3).
pub const PROVIDER_SLOW_MS: u64 = memoria::EMBED_INGEST_DEADLINE_MS + 5_000;
/// How late a lagging provider answers, in simulated ms: inside memoria's
/// ingest deadline for an embeddings call (§8.3), as gate 10's vector
/// race (`PROVIDER_LATENCY_MS`, 5 s) answers.
pub const PROVIDER_LAG_MS: u64 = 5_000;
const _: () = assert!(PROVIDER_LAG_MS < memoria::EMBED_INGEST_DEADLINE_MS);
/// How many calls a rate-limited provider answers 429.
pub const PROVIDER_RATE_LIMITED_CALLS: u32 = 3;

impl ProviderState {
    /// Its name in the timeline.
    pub fn name(self) -> &'static str {
        match self {
            ProviderState::Down => "down",
            ProviderState::Refused => "refusing connections",
            ProviderState::Slow => "slow past the deadline",
            ProviderState::RateLimited => "rate-limited",
            ProviderState::Lagging => "answering late, inside the deadline",
            ProviderState::Answering => "answering again",
        }
    }
}

/// What a reader's page must show. Every field is optional; each one given is checked.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PageExpect {
    /// Exactly this many results on the page.
    pub results: Option<usize>,
    /// Exactly this many results per app, e.g. `{ docs = 50, sheets = 0 }`.
    pub results_by_app: Option<BTreeMap<String, usize>>,
    /// Exactly these withheld lines, in order.
    pub withheld: Option<Vec<String>>,
    /// Exactly these reconciling lines, in order.
    pub reconciling: Option<Vec<String>>,
    /// Exactly these freshness lines (a sibling whose content may be
    /// behind, §8.1), in order.
    pub freshness: Option<Vec<String>>,
    /// Whether the page says "No passage matched.".
    pub says_no_match: Option<bool>,
    /// Simulated milliseconds the page may take at most.
    pub within_ms: Option<u64>,
    /// Exactly this many derived artefacts shown (§5.2).
    pub artefacts: Option<usize>,
    /// Exactly these lines withholding derived artefacts, in order (§5.2).
    pub artefacts_withheld: Option<Vec<String>>,
    /// The numeric answer's outcome (§8.7): `VALUE`, `SLOT_TABLE`,
    /// `MIXED_UNITS`, `UNIT_UNKNOWN`, `REFORMATTED`, ...
    pub numeric: Option<String>,
}

/// One timeline event. `at_ms` waits until that simulated time first.
///
/// The file names the event with `do = "…"` inside its `[[event]]` table;
/// [`parse`] turns that into serde's external tag before deserializing, so
/// an error points at the key it is about, not at the first `[[event]]`.
/// (De)serialized directly, the form is externally tagged:
/// `{ query = { reader = …, … } }`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum Event {
    /// Wait until memoria's wake warm-up has finished.
    WarmedUp {
        /// When.
        at_ms: Option<u64>,
    },
    /// A reader searches.
    Query {
        /// When.
        at_ms: Option<u64>,
        /// The reader's name.
        reader: String,
        /// The query text (never printed).
        q: String,
        /// What the page must show.
        expect: Option<PageExpect>,
        /// The surface asked (default: the search page).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        surface: Option<Surface>,
    },
    /// A person uploads a memoria-owned document `doc` through the home
    /// page's form (§4.2, §5): a Markdown file whose title is `words`
    /// followed by the document's tag.
    Upload {
        /// When.
        at_ms: Option<u64>,
        /// Who uploads (signed in, with the form's CSRF token).
        reader: String,
        /// The document's name in the scenario (its file is `<doc>.md`).
        doc: String,
        /// Words its title and body hold.
        words: String,
        /// A long document: its body is this many headed sections, each a
        /// passage of its own holding `words` (the explorer's crowd of
        /// gone dense rows, `explore/dense.rs`); none, one passage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sections: Option<u32>,
    },
    /// A person deletes the memoria-owned document `doc` through its
    /// delete form (§7.4); a document never stored is skipped.
    DeleteUpload {
        /// When.
        at_ms: Option<u64>,
        /// Who deletes.
        reader: String,
        /// The document's name in the scenario.
        doc: String,
    },
    /// memoria's data directory is copied aside as backup `name`, its
    /// tombstone log left out (kept apart, as `MEMORIA_TOMBSTONES` is),
    /// and a copy of the log taken beside it (the operator backs the log
    /// up apart, §7.4).
    MemoriaBackup {
        /// When.
        at_ms: Option<u64>,
        /// The backup's name.
        name: String,
        /// The whole data directory copied, everything in it, as an
        /// operator copies it (`cp -a`). A scenario that holds one runs
        /// memoria configured as `memoria serve` reads its environment,
        /// `MEMORIA_TOMBSTONES` unset: the log is then the default's,
        /// beside the data directory (§7.4, gate 10's whole-directory
        /// case).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        whole: bool,
    },
    /// memoria stops, its tombstone log is replaced (`how`: `rewound`,
    /// the copy taken with backup `from`; `behind-one`, its last entry
    /// dropped; `foreign`, another store's log as far along;
    /// `foreign-ahead`, another store's log one entry further; `missing`,
    /// an empty log, as a lost tombstone directory leaves it) and memoria
    /// is started on it, which the oracle judges; then the operator puts
    /// its own log back and memoria wakes again (§7.4).
    TombstoneLog {
        /// When.
        at_ms: Option<u64>,
        /// How the log is replaced.
        how: String,
        /// With `rewound`, the backup whose copy of the log is put back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    /// memoria stops, its snapshot bucket is damaged (`how`:
    /// `generation-deleted`, the newest generation's blob gone;
    /// `blob-damaged`, one byte of it flipped), and memoria wakes (§7.4).
    SnapshotBucket {
        /// When.
        at_ms: Option<u64>,
        /// What the disk or the operator did.
        how: String,
    },
    /// memoria stops, its data directory is restored from backup `name`
    /// (the tombstone log kept as it is), and it wakes from it (§7.4).
    MemoriaRestore {
        /// When.
        at_ms: Option<u64>,
        /// The backup's name.
        name: String,
    },
    /// A fault knob switched on at a sibling.
    Fault {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which knob.
        fault: FaultDecl,
    },
    /// Every fault at a sibling switched off.
    Clear {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
    },
    /// The sibling revises an item (a new revision).
    Revise {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which item.
        item: String,
        /// Words the new revision's body adds, e.g. `wombat`: a query finds
        /// the new revision, and only it, by them. None: the body says
        /// "revised" and nothing new.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        words: Option<String>,
    },
    /// The sibling creates a new team-visible item at `r1` holding `words`.
    Create {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// The new item's id.
        item: String,
        /// Words its body holds; queries find it by them.
        words: String,
    },
    /// The sibling deletes an item.
    Delete {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which item.
        item: String,
    },
    /// The sibling downgrades a team item to granted (grants to `to`).
    Downgrade {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which item.
        item: String,
        /// Readers who keep a grant.
        #[serde(default)]
        to: Vec<String>,
    },
    /// A partial restore: the item's content rewinds to `to`, its event log does not.
    PartialRestore {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which item.
        item: String,
        /// The revision it is restored to, e.g. `r1`.
        to: String,
    },
    /// The sibling records a backup point named `name`.
    Backup {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// The backup's name.
        name: String,
    },
    /// A whole-log restore to the backup `name`: cursors rewind, S1 answers 410.
    WholeRestore {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// The backup's name.
        name: String,
    },
    /// The sibling reformats a spreadsheet's column (the design card's
    /// "reformat cells" fault, §8.7): every number in column `col` of `tab`
    /// takes `format_code` (`General` clears it), with a new revision or,
    /// `in_place`, under the revision memoria holds.
    Reformat {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which sheet.
        item: String,
        /// Which tab.
        tab: String,
        /// 1-based column.
        col: u32,
        /// The new format code, e.g. `k€#,##0`.
        format_code: String,
        /// True: no new revision (nothing on S1).
        #[serde(default)]
        in_place: bool,
    },
    /// The sibling makes an item team-visible again (team rung, neither
    /// link-shared nor guest-only): a visibility change back (§4.1).
    Upgrade {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which item.
        item: String,
    },
    /// memoria's owners file is rewritten without `reader` (§4.3): their
    /// later queries use the session they held, and must show nothing.
    RemoveReader {
        /// When.
        at_ms: Option<u64>,
        /// The reader removed.
        reader: String,
    },
    /// The home removes `reader` from the team's roster (suite shape): the
    /// epoch moves on, and memoria refuses them once its roster loop has
    /// pulled the change (§4.3). Their later questions use the session
    /// they held.
    RosterRemove {
        /// When.
        at_ms: Option<u64>,
        /// A reader on the roster (not the first, an owner).
        reader: String,
    },
    /// The home adds `reader` (back) to the team's roster (suite shape).
    RosterAdd {
        /// When.
        at_ms: Option<u64>,
        /// A reader (not the first, an owner).
        reader: String,
    },
    /// The home answers memoria's roster pulls with a fault from now on
    /// (suite shape, `crate::fake::home::HomeFault`): `down` (503),
    /// `stale-epoch` (the roster as it was one change ago), `other-team`,
    /// `garbage-html`, `garbage-truncated`, `garbage-empty-object`,
    /// `garbage-not-an-address`, `garbage-no-members`, `refuse` (the
    /// connection dropped unanswered), `hang` (accepted, never answered);
    /// `none` ends it.
    RosterFault {
        /// When.
        at_ms: Option<u64>,
        /// The fault's name.
        mode: String,
    },
    /// The home starts a new roster generation listing `members` (suite
    /// shape): a home restored or re-provisioned, at epoch 1 again, named
    /// `gen-2`, `gen-3`, … in the order of the run. memoria holds it
    /// pending, and the copy it held goes on ageing, until an owner
    /// confirms it (§4.3, suite gate 5).
    RosterNewGeneration {
        /// When.
        at_ms: Option<u64>,
        /// The readers it lists (none the first, an owner).
        members: Vec<String>,
    },
    /// The first reader, an owner, opens the roster page and, if it holds
    /// the confirmation form, posts it as a browser does (its CSRF token
    /// and the generation it names): memoria adopts the generation that
    /// waits (§4.3, suite shape).
    RosterConfirm {
        /// When.
        at_ms: Option<u64>,
    },
    /// The operator drain's rotation of memoria's tokens at every sibling
    /// (§6.2, `rotation.rs`): `begin` starts one, `expand`, `switch` and
    /// `contract` run phases 1, 2 and 3, each stopped after the first
    /// `reach` siblings (in the file's order) when given, and run again to
    /// resume. memoria reads its tokens from token files.
    Rotation {
        /// When.
        at_ms: Option<u64>,
        /// `begin`, `expand`, `switch` or `contract`.
        phase: super::rotation::RotationPhase,
        /// The phase stops after this many siblings (an interrupted run);
        /// absent, it runs over every sibling.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reach: Option<usize>,
    },
    /// memoria's token file for sibling `app` broken or mended (§6.2,
    /// `token_file.rs`): `unreadable` (a directory in its place),
    /// `missing`, `garbage` (no bearer token), or `restored`. memoria reads
    /// its tokens from token files; it is never told.
    TokenFile {
        /// When.
        at_ms: Option<u64>,
        /// The sibling whose token file it is.
        app: String,
        /// What happens to the file.
        state: super::token_file::TokenFileState,
    },
    /// An item of a connector's source created or edited (§5.1,
    /// `connector.rs`): `connector` is `folder` (a file `item`.md of the
    /// run's own folder, `sub/name` in a subfolder) or `paged` (the fake's
    /// item, `collection/name`). memoria sees it at its next enumeration.
    ConnectorPut {
        /// When.
        at_ms: Option<u64>,
        /// `folder` or `paged`.
        connector: String,
        /// The item's path or key.
        item: String,
        /// The words its title starts with (never printed).
        words: String,
    },
    /// An item removed from a connector's source (§5.1).
    ConnectorRemove {
        /// When.
        at_ms: Option<u64>,
        /// `folder` or `paged`.
        connector: String,
        /// The item's path or key.
        item: String,
    },
    /// A connector's source faulted, or mended (`clear`): the folder's
    /// `root-gone` and `unreadable:SUB`; the paged fake's `hang:PAGE`,
    /// `rate-limit:PAGE`, `credential-expired`, `forbidden:COLLECTION`,
    /// `partial-last-page` and `over-cap` (§5.1, gate 7).
    ConnectorFault {
        /// When.
        at_ms: Option<u64>,
        /// `folder` or `paged`.
        connector: String,
        /// The fault, or `clear` (not `fault`: the file writer reads a
        /// `fault` as a sibling's knob table).
        mode: String,
    },
    /// The stub provider goes down, slow or rate-limited, or answers again
    /// (an AI-on scenario, §8.3).
    Provider {
        /// When.
        at_ms: Option<u64>,
        /// What the provider does from now on.
        state: ProviderState,
        /// With `rate-limited` only: the `Retry-After` its 429s to
        /// embeddings calls carry, in seconds (memoria waits at most
        /// `memoria::EMBED_RETRY_AFTER_MS_MAX` of it); none when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_s: Option<u64>,
    },
    /// Liveness (the explorer's oracle): faults are off; after a quiet
    /// period and a few questions, every team-visible item at its current
    /// revision is found by every admitted member the sibling shows it to,
    /// and no page names a source as reconciling or withheld.
    ExpectConverged {
        /// When.
        at_ms: Option<u64>,
    },
    /// A person opens a document by its link (§8.1): `item` of sibling
    /// `app`, by the id the last page that linked it gave (not opened while
    /// no page has), or memoria's own document `doc`, by the id its upload
    /// got; on the document page, or over the MCP `document` tool with
    /// `surface = "mcp"`.
    OpenDocument {
        /// When.
        at_ms: Option<u64>,
        /// Who opens it (a removed person with the session they held).
        reader: String,
        /// The sibling, with `item`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        app: Option<String>,
        /// The sibling's item, with `app`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        item: Option<String>,
        /// memoria's own document, by its name in the scenario.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        doc: Option<String>,
        /// `page` (default) or `mcp`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        surface: Option<Surface>,
        /// When the answer is absent (a 404, or the MCP tool's `absent`),
        /// the same person asks at once, on the same surface and session,
        /// for an id memoria never held, and the two answers are compared
        /// (§4.1: NOT_VISIBLE is indistinguishable from absence).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        beside_never_held: bool,
    },
    /// A person opens the owner's sources page (§8.1).
    OpenSources {
        /// When.
        at_ms: Option<u64>,
        /// Who opens it (a removed person with the session they held).
        reader: String,
    },
    /// memoria restarts from its data directory.
    Restart {
        /// When.
        at_ms: Option<u64>,
    },
    /// A crash aimed at a named crash point of memoria (issue 26), one of
    /// `ingest:before-commit`, `ingest:after-commit`,
    /// `snapshot:before-rename`, `tombstone:mid-append` and
    /// `tombstone:after-append`. It lands during the next event, that
    /// event's wait included, if memoria's code reaches the point then
    /// (an upload, a deletion, a sync's ingest or snapshot): memoria does
    /// nothing more, as after a SIGKILL there, and a new memoria wakes
    /// from the same data directory before the next event; a request in
    /// flight gets no answer (an upload or deletion so cut off was never
    /// acknowledged, and the oracle holds it in doubt until a deletion
    /// settles it). If the point is not reached by the end of that
    /// event, the crash is taken away and the timeline says so; a
    /// `restart`, `memoria-restore`, `memoria-backup` or
    /// `expect-converged` next takes it away first.
    Crash {
        /// When it is aimed.
        at_ms: Option<u64>,
        /// The crash point's name.
        point: String,
    },
    /// memoria's calendar skips whole UTC days.
    AdvanceDays {
        /// When.
        at_ms: Option<u64>,
        /// How many days.
        days: i64,
    },
    /// memoria's calendar skips whole hours (production's clock moving on
    /// while memoria sleeps), so a run can cross a UTC midnight (§8.1's
    /// window is a UTC day).
    AdvanceHours {
        /// When.
        at_ms: Option<u64>,
        /// How many hours.
        hours: i64,
    },
    /// The sibling removes `reader` from every item it holds now but the
    /// ones in `keep` (the fake's per-person removal, "minus rows I have
    /// been removed from"): S2 answers them NOT_VISIBLE there from now on,
    /// and the items stay team-visible to everybody else (§4.1, §8.1).
    SiblingRemoves {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// The reader removed.
        reader: String,
        /// Items the removal spares.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        keep: Vec<String>,
    },
    /// Calls a sibling received since the last event that was not an
    /// expectation began (or since the start of the run).
    ExpectCalls {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// `S1`, `S1a`, `S2` or `S3`.
        call: String,
        /// At least this many.
        min: Option<usize>,
        /// At most this many.
        max: Option<usize>,
        /// Count from the start of the run, not the previous event.
        #[serde(default)]
        since_start: bool,
    },
    /// Whether memoria holds a sibling item (live, not deleted).
    ExpectHeld {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Which item.
        item: String,
        /// Held or not.
        held: bool,
    },
    /// What the owner-only sources page says about a sibling's breakers
    /// (§8.1): each given phrase must appear in that breaker's line.
    ExpectSources {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// A phrase of the refusal breaker's line, e.g. `no refusal anomaly`.
        refusal: Option<String>,
        /// A phrase of the S3 breaker's line.
        s3: Option<String>,
        /// The reader who opens the page (an owner).
        reader: String,
    },
    /// Whether memoria has a sibling marked for re-announce.
    ExpectReannounce {
        /// When.
        at_ms: Option<u64>,
        /// Which sibling.
        app: String,
        /// Marked or not.
        marked: bool,
    },
}

/// A `match` over every [`Event`] variant, binding its `at_ms` to `$at`: one
/// list for [`Event::at_ms`] and [`Event::at_ms_mut`].
macro_rules! with_at_ms {
    ($event:expr, $at:ident => $out:expr) => {
        match $event {
            Event::WarmedUp { at_ms: $at }
            | Event::Query { at_ms: $at, .. }
            | Event::Upload { at_ms: $at, .. }
            | Event::DeleteUpload { at_ms: $at, .. }
            | Event::MemoriaBackup { at_ms: $at, .. }
            | Event::MemoriaRestore { at_ms: $at, .. }
            | Event::TombstoneLog { at_ms: $at, .. }
            | Event::SnapshotBucket { at_ms: $at, .. }
            | Event::Fault { at_ms: $at, .. }
            | Event::Clear { at_ms: $at, .. }
            | Event::Revise { at_ms: $at, .. }
            | Event::Create { at_ms: $at, .. }
            | Event::Delete { at_ms: $at, .. }
            | Event::Downgrade { at_ms: $at, .. }
            | Event::PartialRestore { at_ms: $at, .. }
            | Event::Backup { at_ms: $at, .. }
            | Event::WholeRestore { at_ms: $at, .. }
            | Event::Upgrade { at_ms: $at, .. }
            | Event::Reformat { at_ms: $at, .. }
            | Event::RemoveReader { at_ms: $at, .. }
            | Event::RosterRemove { at_ms: $at, .. }
            | Event::RosterAdd { at_ms: $at, .. }
            | Event::RosterFault { at_ms: $at, .. }
            | Event::RosterNewGeneration { at_ms: $at, .. }
            | Event::RosterConfirm { at_ms: $at }
            | Event::Rotation { at_ms: $at, .. }
            | Event::TokenFile { at_ms: $at, .. }
            | Event::Provider { at_ms: $at, .. }
            | Event::ConnectorPut { at_ms: $at, .. }
            | Event::ConnectorRemove { at_ms: $at, .. }
            | Event::ConnectorFault { at_ms: $at, .. }
            | Event::ExpectConverged { at_ms: $at }
            | Event::Restart { at_ms: $at }
            | Event::Crash { at_ms: $at, .. }
            | Event::OpenDocument { at_ms: $at, .. }
            | Event::OpenSources { at_ms: $at, .. }
            | Event::AdvanceDays { at_ms: $at, .. }
            | Event::AdvanceHours { at_ms: $at, .. }
            | Event::SiblingRemoves { at_ms: $at, .. }
            | Event::ExpectCalls { at_ms: $at, .. }
            | Event::ExpectHeld { at_ms: $at, .. }
            | Event::ExpectSources { at_ms: $at, .. }
            | Event::ExpectReannounce { at_ms: $at, .. } => $out,
        }
    };
}

impl Event {
    pub(crate) fn at_ms(&self) -> Option<u64> {
        with_at_ms!(self, at => *at)
    }

    /// The event's `at_ms`, to move it (the explorer's generators).
    pub(crate) fn at_ms_mut(&mut self) -> &mut Option<u64> {
        with_at_ms!(self, at => at)
    }

    /// True for an event that only checks, and changes nothing.
    pub fn is_expectation(&self) -> bool {
        matches!(
            self,
            Event::ExpectCalls { .. }
                | Event::ExpectHeld { .. }
                | Event::ExpectReannounce { .. }
                | Event::ExpectSources { .. }
                | Event::ExpectConverged { .. }
        )
    }

    /// Every parameter of the event on one line, in the file's own TOML
    /// words and content-free: the kind (`do`), then each given field as
    /// `key = value` in key order (a fault as `{ kind = …, … }`), with a
    /// query's text and a created item's words shown as word counts only.
    pub fn details(&self) -> String {
        let value = serde_json::to_value(self).unwrap_or_default();
        let Some((kind, fields)) = value.as_object().and_then(|o| o.iter().next()) else {
            return self.describe();
        };
        let mut out = format!("do = {kind:?}");
        for (key, v) in fields.as_object().into_iter().flatten() {
            let shown = match (key.as_str(), v) {
                (_, serde_json::Value::Null) => continue,
                ("q" | "words", serde_json::Value::String(text)) => {
                    format!("({} words)", text.split_whitespace().count())
                }
                ("fault", serde_json::Value::String(kind)) => format!("{{ kind = {kind:?} }}"),
                ("fault", serde_json::Value::Object(o)) if o.len() == 1 => {
                    let (kind, knob) = o.iter().next().expect("one entry");
                    let knob = toml_inline(knob);
                    let rest = knob
                        .strip_prefix("{ ")
                        .and_then(|k| k.strip_suffix(" }"))
                        .map_or(String::new(), |k| format!(", {k}"));
                    format!("{{ kind = {kind:?}{rest} }}")
                }
                _ => toml_inline(v),
            };
            out.push_str(&format!(", {key} = {shown}"));
        }
        out
    }

    /// A content-free one-line description.
    pub fn describe(&self) -> String {
        match self {
            Event::WarmedUp { .. } => "memoria's warm-up finishes".into(),
            Event::Query {
                reader, q, surface, ..
            } => format!(
                "{reader} {} ({} words)",
                surface.unwrap_or_default().verb(),
                q.split_whitespace().count()
            ),
            Event::Upload {
                reader,
                doc,
                sections: None,
                ..
            } => format!("{reader} uploads {doc}"),
            Event::Upload {
                reader,
                doc,
                sections: Some(n),
                ..
            } => format!("{reader} uploads {doc}, {n} sections long"),
            Event::DeleteUpload { reader, doc, .. } => format!("{reader} deletes {doc}"),
            Event::MemoriaBackup { name, whole, .. } => format!(
                "memoria's data{} backed up as {name}",
                if *whole { " directory, whole," } else { "" }
            ),
            Event::TombstoneLog { how, from, .. } => format!(
                "memoria started on its tombstone log {how}{}",
                from.as_ref()
                    .map_or(String::new(), |b| format!(" (the copy of backup {b})"))
            ),
            Event::SnapshotBucket { how, .. } => {
                format!("memoria restarts on its snapshot bucket, {how}")
            }
            Event::MemoriaRestore { name, .. } => {
                format!("memoria restored from its backup {name}")
            }
            Event::Fault { app, fault, .. } => format!("{app}: fault {}", fault_name(fault)),
            Event::Clear { app, .. } => format!("{app}: every fault off"),
            Event::Revise { app, item, .. } => format!("{app}: {item} revised"),
            Event::Create { app, item, .. } => format!("{app}: {item} created"),
            Event::Delete { app, item, .. } => format!("{app}: {item} deleted"),
            Event::Downgrade { app, item, to, .. } => {
                format!(
                    "{app}: {item} downgraded to granted ({} grantees)",
                    to.len()
                )
            }
            Event::PartialRestore { app, item, to, .. } => {
                format!("{app}: partial restore of {item} to {to}")
            }
            Event::Backup { app, name, .. } => format!("{app}: backup {name}"),
            Event::WholeRestore { app, name, .. } => format!("{app}: whole-log restore to {name}"),
            Event::Upgrade { app, item, .. } => format!("{app}: {item} team-visible again"),
            Event::Reformat {
                app,
                item,
                col,
                format_code,
                in_place,
                ..
            } => format!(
                "{app}: {item} column {col} reformatted {format_code}{}",
                if *in_place {
                    " in place (no new revision)"
                } else {
                    ""
                }
            ),
            Event::RemoveReader { reader, .. } => format!("{reader} removed from the owners"),
            Event::RosterRemove { reader, .. } => {
                format!("home: {reader} removed from the team's roster")
            }
            Event::RosterAdd { reader, .. } => format!("home: {reader} added to the team's roster"),
            Event::RosterFault { mode, .. } => format!("home: roster pulls answered {mode}"),
            Event::RosterNewGeneration { members, .. } => format!(
                "home: a new roster generation listing {}",
                if members.is_empty() {
                    "nobody".to_string()
                } else {
                    members.join(", ")
                }
            ),
            Event::RosterConfirm { .. } => {
                "an owner confirms the roster generation waiting, on the roster page".into()
            }
            Event::Rotation {
                phase: super::rotation::RotationPhase::Begin,
                ..
            } => "drain: a rotation of memoria's tokens begins".into(),
            Event::Rotation { phase, reach, .. } => format!(
                "drain: memoria's tokens, {}{}",
                phase.name(),
                reach.map_or(String::new(), |k| format!(
                    ", interrupted after the first {k} siblings"
                ))
            ),
            Event::TokenFile { app, state, .. } => {
                format!("memoria's token file for {app} {}", state.name())
            }
            Event::Provider {
                state,
                retry_after_s,
                ..
            } => match retry_after_s {
                Some(s) => format!(
                    "the embedding provider {}, with Retry-After: {s}",
                    state.name()
                ),
                None => format!("the embedding provider {}", state.name()),
            },
            Event::ConnectorPut {
                connector, item, ..
            } => format!("{connector}: {item} written"),
            Event::ConnectorRemove {
                connector, item, ..
            } => format!("{connector}: {item} removed"),
            Event::ConnectorFault {
                connector, mode, ..
            } => format!("{connector}: fault {mode}"),
            Event::ExpectConverged { .. } => "expect memoria converged (liveness)".into(),
            Event::Restart { .. } => "memoria restarts".into(),
            Event::Crash { point, .. } => format!("a crash is aimed at memoria's {point}"),
            Event::OpenDocument {
                reader,
                app,
                item,
                doc,
                surface,
                ..
            } => format!(
                "{reader} opens {} {}",
                match (app, item, doc) {
                    (Some(a), Some(i), _) => format!("{a}:{i}"),
                    (_, _, Some(d)) => d.clone(),
                    _ => "a document".into(),
                },
                if *surface == Some(Surface::Mcp) {
                    "over MCP's document tool"
                } else {
                    "on its document page"
                }
            ),
            Event::OpenSources { reader, .. } => format!("{reader} opens the sources page"),
            Event::AdvanceDays { days, .. } => format!("memoria's calendar skips {days} days"),
            Event::AdvanceHours { hours, .. } => {
                format!("memoria's calendar skips {hours} hours")
            }
            Event::SiblingRemoves {
                app, reader, keep, ..
            } => format!(
                "{app} removes {reader} from its items{}",
                if keep.is_empty() {
                    String::new()
                } else {
                    format!(" but {}", keep.len())
                }
            ),
            Event::ExpectCalls { app, call, .. } => format!("expect {call} calls at {app}"),
            Event::ExpectHeld {
                app, item, held, ..
            } => {
                format!(
                    "expect {app}:{item} {}",
                    if *held { "held" } else { "not held" }
                )
            }
            Event::ExpectSources { app, .. } => format!("expect the sources page on {app}"),
            Event::ExpectReannounce { app, marked, .. } => format!(
                "expect {app} {}marked for re-announce",
                if *marked { "" } else { "not " }
            ),
        }
    }
}

/// `v` as a TOML inline value, leaving out null (absent) fields.
fn toml_inline(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(o) => {
            let fields: Vec<String> = o
                .iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| format!("{k} = {}", toml_inline(x)))
                .collect();
            if fields.is_empty() {
                "{}".into()
            } else {
                format!("{{ {} }}", fields.join(", "))
            }
        }
        serde_json::Value::Array(a) => format!(
            "[{}]",
            a.iter().map(toml_inline).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}

fn fault_name(f: &FaultDecl) -> String {
    match f {
        FaultDecl::Cold { wake_ms, .. } => format!("cold (wake {wake_ms} ms)"),
        FaultDecl::Slow { latency_ms, .. } => format!("slow ({latency_ms} ms)"),
        FaultDecl::Outage { mode, only: None } => format!("outage ({mode})"),
        FaultDecl::Outage {
            mode,
            only: Some(call),
        } => format!("outage of {call} ({mode})"),
        FaultDecl::LieVisible => "lie (VISIBLE for anyone)".into(),
        FaultDecl::MalformedS2 { shape } => format!("malformed S2 ({shape})"),
        FaultDecl::AnnounceNoClose => "announce without close".into(),
        FaultDecl::AnnounceWrongCount { delta } => format!("announce count off by {delta}"),
        FaultDecl::AnnounceHang => "announce cut off after its first page".into(),
        FaultDecl::Redirect { .. } => "redirect".into(),
        FaultDecl::S3FailsOnce { revision, .. } => {
            format!("S3 failing once for an item at {revision}")
        }
        FaultDecl::FeedPages { rows, fail_next } => format!(
            "feed pages of {rows} rows{}",
            if *fail_next {
                ", the next past the head failing once"
            } else {
                ""
            }
        ),
    }
}

/// The home's fault a `roster-fault` event's `mode` names, or `None` for
/// a name it does not know.
pub fn home_fault(mode: &str) -> Option<crate::fake::home::HomeFault> {
    use crate::fake::home::{Garbage, HomeFault};
    Some(match mode {
        "none" => HomeFault::None,
        "down" => HomeFault::Down,
        "stale-epoch" => HomeFault::StaleEpoch,
        "other-team" => HomeFault::OtherTeam,
        "garbage-html" => HomeFault::Garbage(Garbage::Html),
        "garbage-truncated" => HomeFault::Garbage(Garbage::Truncated),
        "garbage-empty-object" => HomeFault::Garbage(Garbage::EmptyObject),
        "garbage-not-an-address" => HomeFault::Garbage(Garbage::NotAnAddress),
        "garbage-no-members" => HomeFault::Garbage(Garbage::NoMembers),
        "refuse" => HomeFault::Refuse,
        "hang" => HomeFault::Hang,
        _ => return None,
    })
}

/// Why a scenario could not be read or set up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// Not TOML, or not this format.
    #[error("the scenario does not parse: {0}")]
    Parse(String),
    /// It parses, and names something that does not exist.
    #[error("the scenario is inconsistent: {0}")]
    Invalid(String),
}

/// Parses a scenario file's text.
///
/// The file is read with its spans (`toml::de::DeTable`); each event's `do`
/// and each fault's `kind` become serde's external tag, keeping their
/// spans, so a misspelt key, kind or value is reported at its own line and
/// column rather than at the first `[[event]]`.
///
/// # Errors
/// [`ScenarioError::Parse`] with the parser's message, line and column, or
/// [`ScenarioError::Invalid`] for a reader, app or item the file never
/// declared, or for a timeline that checks nothing.
pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    let located = |mut e: toml::de::Error| {
        e.set_input(Some(text));
        ScenarioError::Parse(e.to_string())
    };
    let mut doc = toml::de::DeTable::parse(text).map_err(located)?;
    let event_spans = retag_events(doc.get_mut()).map_err(|(span, what)| {
        let (line, column) = line_column(text, span.start);
        ScenarioError::Parse(format!("line {line}, column {column}: {what}"))
    })?;
    let s = Scenario::deserialize(toml::de::Deserializer::from(doc)).map_err(located)?;
    let event_lines: Vec<usize> = event_spans
        .iter()
        .map(|span| line_column(text, span.start).0)
        .collect();
    validate(&s, &event_lines)?;
    Ok(s)
}

/// Line and column (both from 1, the column in characters) of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

type Span = std::ops::Range<usize>;

/// Rewrites every `[[event]]` table's `do = "x"` (and its `fault`'s
/// `kind = "y"`) into serde's external tag, `{ x = { … } }`, keeping spans.
/// Returns each event's span, in file order.
fn retag_events(doc: &mut toml::de::DeTable<'_>) -> Result<Vec<Span>, (Span, String)> {
    let Some(events) = doc.get_mut("event") else {
        return Ok(vec![]);
    };
    let toml::de::DeValue::Array(events) = events.get_mut() else {
        return Ok(vec![]);
    };
    let spans = events.iter().map(toml::Spanned::span).collect();
    for event in events.iter_mut() {
        if let toml::de::DeValue::Table(t) = event.get_mut()
            && let Some(fault) = t.get_mut("fault")
        {
            retag(fault, "kind", "a fault")?;
        }
        retag(event, "do", "an event")?;
    }
    Ok(spans)
}

fn retag(
    value: &mut toml::Spanned<toml::de::DeValue<'_>>,
    tag: &str,
    what: &str,
) -> Result<(), (Span, String)> {
    use toml::de::{DeTable, DeValue};
    let span = value.span();
    let DeValue::Table(table) = value.get_mut() else {
        // Not a table: deserializing reports it at its own span.
        return Ok(());
    };
    let Some((_, name)) = table.remove_entry(tag) else {
        return Err((span, format!("{what} has no `{tag}`")));
    };
    let name_span = name.span();
    let DeValue::String(name) = name.into_inner() else {
        return Err((name_span, format!("{what}'s `{tag}` is not a string")));
    };
    let fields = std::mem::take(table);
    let mut tagged = DeTable::new();
    tagged.insert(
        toml::Spanned::new(name_span, name),
        toml::Spanned::new(span, DeValue::Table(fields)),
    );
    *table = tagged;
    Ok(())
}
