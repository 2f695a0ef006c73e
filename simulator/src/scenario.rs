//! Incident replay: a TOML scenario declares siblings, readers and a timeline in simulated time, with expectations (§4.1, §6.5, §8.1).
//!
//! A scenario file (`scenarios/*.toml`, taught in `scenarios/README.md`)
//! declares the siblings and their items, the readers, and a timeline of
//! events: faults switched on and off, restores, revisions, ingest ticks,
//! memoria restarts, skipped days, and queries by a named reader, each with
//! optional expectations about the page, the trace or memoria's store.
//! [`replay`] runs it in a [`World`] under one seed and returns a
//! [`Replay`]: the timeline as it happened, with every expectation checked.
//! Content never reaches the timeline: queries are shown by reader and word
//! count, pages by counts and notice lines, calls by ids and statuses.
//!
//! Size: over 700 lines, and due to be split into parsing, validation,
//! replay, checks and shrinking (issue 10); it is one file today because the
//! replay, its checks and the shrinker share the timeline types and were
//! changed together this turn.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::corpus;
use crate::fake::faults::{Cold, MalformedS2, Outage, Redirect, Slow, TruncateAnnounce};
use crate::fake::model::{Rung, Snapshot};
use crate::fake::trace::{CallDetail, CallKind, TraceEvent};
use crate::world::{Memoria, SiblingSpec, TEAM, World};

/// The domain a reader's name is turned into an address under: `ana` → `ana@acme.test`.
pub const READER_DOMAIN: &str = "acme.test";
/// The seed a scenario runs under when neither the file nor the command gives one.
pub const SCENARIO_SEED_DEFAULT: u64 = 1;

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
    #[serde(default)]
    pub granted_to: Vec<String>,
    /// Readers removed from a team item ("minus rows I have been removed from").
    #[serde(default)]
    pub removed: Vec<String>,
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
    },
    /// S2 says VISIBLE for everyone.
    LieVisible,
    /// A malformed S2 answer: `not-json`, `missing-item`, `unknown-value`, …
    MalformedS2 {
        /// The shape, kebab-case of `MalformedS2`'s variants.
        shape: String,
    },
    /// An announce without its close marker.
    AnnounceNoClose,
    /// An announce whose close count is off by `delta`.
    AnnounceWrongCount {
        /// Added to the true count.
        delta: i64,
    },
    /// Every call answers 307 to `location`.
    Redirect {
        /// The `Location`.
        location: String,
    },
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
    /// Whether the page says "No passage matched.".
    pub says_no_match: Option<bool>,
    /// Simulated milliseconds the page may take at most.
    pub within_ms: Option<u64>,
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
    /// An ingest tick: memoria polls every sibling's S1 now.
    Sync {
        /// When.
        at_ms: Option<u64>,
    },
    /// memoria restarts from its data directory.
    Restart {
        /// When.
        at_ms: Option<u64>,
    },
    /// memoria's calendar skips whole UTC days.
    AdvanceDays {
        /// When.
        at_ms: Option<u64>,
        /// How many days.
        days: i64,
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

impl Event {
    fn at_ms(&self) -> Option<u64> {
        match self {
            Event::WarmedUp { at_ms }
            | Event::Query { at_ms, .. }
            | Event::Fault { at_ms, .. }
            | Event::Clear { at_ms, .. }
            | Event::Revise { at_ms, .. }
            | Event::Create { at_ms, .. }
            | Event::Delete { at_ms, .. }
            | Event::Downgrade { at_ms, .. }
            | Event::PartialRestore { at_ms, .. }
            | Event::Backup { at_ms, .. }
            | Event::WholeRestore { at_ms, .. }
            | Event::Sync { at_ms }
            | Event::Restart { at_ms }
            | Event::AdvanceDays { at_ms, .. }
            | Event::ExpectCalls { at_ms, .. }
            | Event::ExpectHeld { at_ms, .. }
            | Event::ExpectSources { at_ms, .. }
            | Event::ExpectReannounce { at_ms, .. } => *at_ms,
        }
    }

    /// True for an event that only checks, and changes nothing.
    pub fn is_expectation(&self) -> bool {
        matches!(
            self,
            Event::ExpectCalls { .. }
                | Event::ExpectHeld { .. }
                | Event::ExpectReannounce { .. }
                | Event::ExpectSources { .. }
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
            Event::Query { reader, q, .. } => {
                format!("{reader} searches ({} words)", q.split_whitespace().count())
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
            Event::Sync { .. } => "memoria polls every sibling".into(),
            Event::Restart { .. } => "memoria restarts".into(),
            Event::AdvanceDays { days, .. } => format!("memoria's calendar skips {days} days"),
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
        FaultDecl::Outage { mode } => format!("outage ({mode})"),
        FaultDecl::LieVisible => "lie (VISIBLE for anyone)".into(),
        FaultDecl::MalformedS2 { shape } => format!("malformed S2 ({shape})"),
        FaultDecl::AnnounceNoClose => "announce without close".into(),
        FaultDecl::AnnounceWrongCount { delta } => format!("announce count off by {delta}"),
        FaultDecl::Redirect { .. } => "redirect".into(),
    }
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

/// Checks what parsing cannot: every reader, app, call and fault an event
/// names exists. `event_lines` is each event's line in the file, for the
/// message.
fn validate(s: &Scenario, event_lines: &[usize]) -> Result<(), ScenarioError> {
    let apps: Vec<&str> = s.siblings.iter().map(|x| x.app.as_str()).collect();
    let bad = |m: String| Err(ScenarioError::Invalid(m));
    if s.readers.is_empty() {
        return bad("no readers".into());
    }
    for x in &s.siblings {
        for i in &x.items {
            for r in i.granted_to.iter().chain(&i.removed) {
                if !s.readers.contains(r) {
                    return bad(format!(
                        "item {} names reader {r}, who is not declared",
                        i.id
                    ));
                }
            }
        }
    }
    for (i, e) in s.events.iter().enumerate() {
        let at = |m: String| {
            let line = event_lines
                .get(i)
                .map_or(String::new(), |l| format!(" (line {l})"));
            Err(ScenarioError::Invalid(format!("event #{i}{line}: {m}")))
        };
        let app = match e {
            Event::Fault { app, .. }
            | Event::Clear { app, .. }
            | Event::Revise { app, .. }
            | Event::Create { app, .. }
            | Event::Delete { app, .. }
            | Event::Downgrade { app, .. }
            | Event::PartialRestore { app, .. }
            | Event::Backup { app, .. }
            | Event::WholeRestore { app, .. }
            | Event::ExpectCalls { app, .. }
            | Event::ExpectHeld { app, .. }
            | Event::ExpectSources { app, .. }
            | Event::ExpectReannounce { app, .. } => Some(app),
            _ => None,
        };
        if let Some(app) = app
            && !apps.contains(&app.as_str())
        {
            return at(format!("it names app {app}, which is not declared"));
        }
        if let Event::Query { reader, .. } | Event::ExpectSources { reader, .. } = e
            && !s.readers.contains(reader)
        {
            return at(format!("it names reader {reader}, who is not declared"));
        }
        if let Event::ExpectCalls { call, .. } = e
            && call_kind(call).is_none()
        {
            return at(format!("unknown call {call}: S1, S1a, S2 or S3"));
        }
        if let Event::Fault { fault, .. } = e
            && let Err(m) = fault_knob(fault)
        {
            return at(m);
        }
    }
    let checks = |e: &Event| {
        e.is_expectation()
            || matches!(
                e,
                Event::Query {
                    expect: Some(_),
                    ..
                }
            )
    };
    if !s.events.iter().any(checks) {
        return bad(
            "the timeline checks nothing (no expect-* event and no query with an expect), so a replay could only pass vacuously".into(),
        );
    }
    Ok(())
}

fn call_kind(s: &str) -> Option<CallKind> {
    match s {
        "S1" => Some(CallKind::S1),
        "S1a" => Some(CallKind::S1a),
        "S2" => Some(CallKind::S2),
        "S3" => Some(CallKind::S3),
        _ => None,
    }
}

/// A reader's address.
pub fn address(reader: &str) -> String {
    format!("{reader}@{READER_DOMAIN}")
}

/// One entry of a replayed timeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// The event's index in the file, from 0.
    pub index: usize,
    /// Simulated ms when it ran.
    pub at_ms: u64,
    /// What happened (content-free).
    pub event: String,
    /// S-calls the siblings received since the previous entry, summarised.
    pub calls: Vec<String>,
    /// For a query: the page as the reader saw it.
    pub page: Option<PageSummary>,
    /// Expectations checked at this event.
    pub checks: Vec<Check>,
}

/// A page, by counts and notice lines only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PageSummary {
    /// HTTP status.
    pub status: u16,
    /// Simulated ms the page took.
    pub elapsed_ms: u64,
    /// Results on the page.
    pub results: usize,
    /// Results per app.
    pub by_app: BTreeMap<String, usize>,
    /// Withheld lines.
    pub withheld: Vec<String>,
    /// Reconciling lines.
    pub reconciling: Vec<String>,
    /// Whether it said "No passage matched.".
    pub says_no_match: bool,
}

/// One checked expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// What was expected.
    pub expected: String,
    /// What was seen.
    pub actual: String,
    /// Whether it held.
    pub ok: bool,
}

/// A replayed scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Replay {
    /// The title.
    pub title: String,
    /// The seed it ran under.
    pub seed: u64,
    /// Every seed-derived setting.
    pub settings: Vec<String>,
    /// The timeline.
    pub entries: Vec<Entry>,
    /// Set when the simulation itself failed (not an expectation).
    pub error: Option<String>,
}

impl Replay {
    /// Every failed check, as (event index, check).
    pub fn failures(&self) -> Vec<(usize, &Check)> {
        self.entries
            .iter()
            .flat_map(|e| e.checks.iter().filter(|c| !c.ok).map(move |c| (e.index, c)))
            .collect()
    }

    /// True when every expectation held and the run completed.
    pub fn passed(&self) -> bool {
        self.error.is_none() && self.failures().is_empty()
    }

    /// The timeline as text, under a `scenario: <title>  (seed N)` header.
    pub fn render_text(&self) -> String {
        format!(
            "scenario: {}  (seed {})\n{}",
            self.title,
            self.seed,
            self.render_timeline()
        )
    }

    /// The timeline as text without the header: settings, entries, checks.
    pub fn render_timeline(&self) -> String {
        let mut out = String::new();
        for s in &self.settings {
            out.push_str(&format!("  setting {s}\n"));
        }
        for e in &self.entries {
            out.push_str(&format!(
                "t={:>8} ms  #{:<3} {}\n",
                e.at_ms, e.index, e.event
            ));
            for c in &e.calls {
                out.push_str(&format!("                    call  {c}\n"));
            }
            if let Some(p) = &e.page {
                out.push_str(&format!(
                    "                    page  {} results {:?} in {} ms, status {}{}\n",
                    p.results,
                    p.by_app,
                    p.elapsed_ms,
                    p.status,
                    if p.says_no_match {
                        ", says no passage matched"
                    } else {
                        ""
                    }
                ));
                for w in &p.withheld {
                    out.push_str(&format!("                    withheld  {w}\n"));
                }
                for r in &p.reconciling {
                    out.push_str(&format!("                    reconciling  {r}\n"));
                }
            }
            for c in &e.checks {
                out.push_str(&format!(
                    "                    {}  {}{}\n",
                    if c.ok { "ok  " } else { "FAIL" },
                    c.expected,
                    if c.ok {
                        String::new()
                    } else {
                        format!(" — saw {}", c.actual)
                    }
                ));
            }
        }
        if let Some(err) = &self.error {
            out.push_str(&format!("the simulation failed: {err}\n"));
        }
        let failed = self.failures().len();
        let checks: usize = self.entries.iter().map(|e| e.checks.len()).sum();
        out.push_str(&format!(
            "{} checks, {} failed{}\n",
            checks,
            failed,
            if self.error.is_some() {
                ", run incomplete"
            } else {
                ""
            }
        ));
        out
    }
}

/// (app, call, status) of a group of calls in a timeline entry.
type CallGroup = (String, String, String);

fn summarise_calls(events: &[TraceEvent]) -> Vec<String> {
    let mut groups: BTreeMap<CallGroup, (usize, BTreeMap<String, usize>)> = BTreeMap::new();
    for e in events {
        let app = e.callee.split('.').nth(1).unwrap_or(&e.callee).to_string();
        let status = e.status.map_or("no answer".to_string(), |s| s.to_string());
        let g = groups
            .entry((app, format!("{:?}", e.call), status))
            .or_default();
        g.0 += 1;
        match &e.detail {
            CallDetail::S2 { pairs, .. } => {
                for p in pairs {
                    *g.1.entry(p.result.clone()).or_default() += 1;
                }
            }
            CallDetail::S1 { rows, .. } => *g.1.entry("rows".into()).or_default() += rows.len(),
            CallDetail::S1a { items, .. } => *g.1.entry("items".into()).or_default() += items.len(),
            _ => {}
        }
    }
    groups
        .into_iter()
        .map(|((app, call, status), (n, detail))| {
            let detail: Vec<String> = detail.iter().map(|(k, v)| format!("{k} {v}")).collect();
            format!(
                "{app} {call} x{n} → {status}{}",
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", detail.join(", "))
                }
            )
        })
        .collect()
}

fn lines_with_class(body: &str, class: &str) -> Vec<String> {
    let needle = format!("<p class=\"{class}\"");
    let mut out = vec![];
    let mut rest = body;
    while let Some(at) = rest.find(&needle) {
        rest = &rest[at..];
        let (Some(open_end), Some(close)) = (rest.find('>'), rest.find("</p>")) else {
            break;
        };
        out.push(rest[open_end + 1..close].to_string());
        rest = &rest[close..];
    }
    out
}

/// Reads a results page into counts and notice lines.
pub fn summarise_page(status: u16, elapsed_ms: u64, body: &str) -> PageSummary {
    let mut by_app: BTreeMap<String, usize> = BTreeMap::new();
    let mut rest = body;
    let mut results = 0;
    while let Some(at) = rest.find("<li class=\"result\"") {
        rest = &rest[at + 1..];
        results += 1;
        if let Some(a) = rest.find("<span class=\"app\">") {
            let tail = &rest[a + "<span class=\"app\">".len()..];
            if let Some(end) = tail.find('<') {
                *by_app.entry(tail[..end].to_string()).or_default() += 1;
            }
        }
    }
    PageSummary {
        status,
        elapsed_ms,
        results,
        by_app,
        withheld: lines_with_class(body, "withheld"),
        reconciling: lines_with_class(body, "reconciling"),
        says_no_match: body.contains("No passage matched."),
    }
}

fn check(expected: String, actual: String, ok: bool) -> Check {
    Check {
        expected,
        actual,
        ok,
    }
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn page_checks(p: &PageSummary, e: &PageExpect) -> Vec<Check> {
    let mut out = vec![];
    if let Some(n) = e.results {
        out.push(check(
            plural(n, "result"),
            format!("{}", p.results),
            p.results == n,
        ));
    }
    if let Some(m) = &e.results_by_app {
        for (app, n) in m {
            let got = p.by_app.get(app).copied().unwrap_or(0);
            out.push(check(
                format!("{} from {app}", plural(*n, "result")),
                got.to_string(),
                got == *n,
            ));
        }
    }
    if let Some(w) = &e.withheld {
        out.push(check(
            format!("withheld lines {w:?}"),
            format!("{:?}", p.withheld),
            &p.withheld == w,
        ));
    }
    if let Some(r) = &e.reconciling {
        out.push(check(
            format!("reconciling lines {r:?}"),
            format!("{:?}", p.reconciling),
            &p.reconciling == r,
        ));
    }
    if let Some(b) = e.says_no_match {
        out.push(check(
            format!(
                "{}says \"No passage matched.\"",
                if b { "" } else { "never " }
            ),
            p.says_no_match.to_string(),
            p.says_no_match == b,
        ));
    }
    if let Some(ms) = e.within_ms {
        out.push(check(
            format!("within {ms} ms"),
            format!("{} ms", p.elapsed_ms),
            p.elapsed_ms <= ms,
        ));
    }
    out
}

fn fault_knob(f: &FaultDecl) -> Result<FaultSetter, String> {
    Ok(match f.clone() {
        FaultDecl::Cold { idle_ms, wake_ms } => FaultSetter::Cold(Cold { idle_ms, wake_ms }),
        FaultDecl::Slow { latency_ms, all } => FaultSetter::Slow(Slow {
            latency_ms,
            only: if all { None } else { Some(CallKind::S2) },
        }),
        FaultDecl::Outage { mode } => FaultSetter::Outage(match mode.as_str() {
            "hang" => Outage::Hang,
            "refuse" => Outage::Refuse,
            s => Outage::Status(
                s.parse()
                    .map_err(|_| format!("outage mode {s}: hang, refuse or a status"))?,
            ),
        }),
        FaultDecl::LieVisible => FaultSetter::LieVisible,
        FaultDecl::MalformedS2 { shape } => FaultSetter::Malformed(match shape.as_str() {
            "not-json" => MalformedS2::NotJson,
            "empty" => MalformedS2::Empty,
            "truncated" => MalformedS2::Truncated,
            "trailing-bytes" => MalformedS2::TrailingBytes,
            "missing-item" => MalformedS2::MissingItem,
            "short-response" => MalformedS2::ShortResponse,
            "duplicate-item" => MalformedS2::DuplicateItem,
            "unknown-value" => MalformedS2::UnknownValue,
            "kind-mismatch" => MalformedS2::KindMismatch,
            "extra-field" => MalformedS2::ExtraField,
            s => return Err(format!("malformed S2 shape {s} is not one the fake knows")),
        }),
        FaultDecl::AnnounceNoClose => FaultSetter::Announce(TruncateAnnounce::NoClose),
        FaultDecl::AnnounceWrongCount { delta } => {
            FaultSetter::Announce(TruncateAnnounce::WrongCount(delta))
        }
        FaultDecl::Redirect { location } => FaultSetter::Redirect(Redirect { location }),
    })
}

enum FaultSetter {
    Cold(Cold),
    Slow(Slow),
    Outage(Outage),
    LieVisible,
    Malformed(MalformedS2),
    Announce(TruncateAnnounce),
    Redirect(Redirect),
}

/// Builds the world a scenario declares, under `seed`.
///
/// # Errors
/// [`ScenarioError::Invalid`] if an item cannot be created as declared.
pub fn world(s: &Scenario, seed: u64) -> Result<World, ScenarioError> {
    let mut world = World::new(
        seed,
        s.siblings
            .iter()
            .map(|x| SiblingSpec::own(&x.app))
            .collect(),
    );
    let readers: Vec<String> = s.readers.iter().map(|r| address(r)).collect();
    world.set_owners(&readers);
    world.set("readers", readers.len());
    let corpus = corpus::load_items(s.siblings.iter().map(|x| x.corpus).sum());
    world.set("corpus", format!("{:?}", corpus.source));
    let mut offset = 0;
    for x in &s.siblings {
        let fake = world.fake(&x.app).clone();
        let result: Result<(), String> = fake.model().with(|m| {
            for (i, (title, body)) in corpus.items.iter().skip(offset).take(x.corpus).enumerate() {
                m.add_item(&format!("{}-c{i}", x.app), Rung::Team, title, body)
                    .map_err(|e| format!("{e:?}"))?;
            }
            for item in &x.items {
                let body = |n: usize| {
                    format!(
                        "# {} {}\n\nThe {} notes, revision {n}.\n",
                        item.words, item.id, item.words
                    )
                };
                let rung = match item.rung {
                    RungDecl::Team => Rung::Team,
                    RungDecl::Private => Rung::Private {
                        owner: readers[0].clone(),
                    },
                    RungDecl::Granted => Rung::Granted {
                        to: item.granted_to.iter().map(|r| address(r)).collect(),
                    },
                };
                m.add_item(&item.id, rung, &item.words, &body(1))
                    .map_err(|e| format!("{}: {e:?}", item.id))?;
                for n in 2..=item.revisions {
                    m.revise(&item.id, &item.words, &body(n))
                        .map_err(|e| format!("{}: {e:?}", item.id))?;
                }
                for r in &item.removed {
                    m.set_removed(&item.id, &address(r), true)
                        .map_err(|e| format!("{}: {e:?}", item.id))?;
                }
            }
            Ok(())
        });
        result.map_err(ScenarioError::Invalid)?;
        offset += x.corpus;
    }
    Ok(world)
}

/// Replays `s` under `seed` (the file's seed, or [`SCENARIO_SEED_DEFAULT`],
/// when `None`). Every event runs in order; expectations are checked where
/// they stand and the run goes on, so one replay shows every failure.
///
/// # Errors
/// [`ScenarioError`] if the world cannot be built; a failed simulation is
/// reported in [`Replay::error`], not here.
pub fn replay(s: &Scenario, seed: Option<u64>) -> Result<Replay, ScenarioError> {
    let seed = seed.or(s.seed).unwrap_or(SCENARIO_SEED_DEFAULT);
    let world = world(s, seed)?;
    let entries: Arc<Mutex<Vec<Entry>>> = Arc::default();
    let out = entries.clone();
    let events = s.events.clone();
    let fakes: BTreeMap<String, crate::fake::server::FakeSibling> = s
        .siblings
        .iter()
        .map(|x| (x.app.clone(), world.fake(&x.app).clone()))
        .collect();
    let trace = world.trace().clone();
    let run = world.run(move |mut m| async move {
        let mut backups: BTreeMap<(String, String), Snapshot> = BTreeMap::new();
        let mut seen = 0usize;
        let mut action_start = 0usize;
        for (index, event) in events.iter().enumerate() {
            if let Some(at) = event.at_ms() {
                let now = turmoil::sim_elapsed().unwrap_or_default();
                let at = Duration::from_millis(at);
                if at > now {
                    tokio::time::sleep(at - now).await;
                }
            }
            let at_ms = turmoil::sim_elapsed().unwrap_or_default().as_millis() as u64;
            let mut entry = Entry {
                index,
                at_ms,
                event: event.describe(),
                ..Entry::default()
            };
            if !event.is_expectation() {
                action_start = seen;
            }
            apply(
                &mut m,
                &fakes,
                &mut backups,
                event,
                &mut entry,
                &trace,
                action_start,
            )
            .await?;
            let all = trace.events();
            entry.calls = summarise_calls(&all[seen.min(all.len())..]);
            seen = all.len();
            out.lock().map_err(|_| "timeline lock")?.push(entry);
        }
        Ok(())
    });
    let entries = entries.lock().map(|e| e.clone()).unwrap_or_default();
    Ok(Replay {
        title: s.title.clone(),
        seed,
        settings: world.settings().lines().map(String::from).collect(),
        entries,
        error: run.err().map(|e| e.message),
    })
}

async fn apply(
    m: &mut Memoria,
    fakes: &BTreeMap<String, crate::fake::server::FakeSibling>,
    backups: &mut BTreeMap<(String, String), Snapshot>,
    event: &Event,
    entry: &mut Entry,
    trace: &crate::fake::trace::Trace,
    since: usize,
) -> Result<(), String> {
    let fake = |app: &str| fakes.get(app).cloned().ok_or(format!("no sibling {app}"));
    match event {
        Event::WarmedUp { .. } => {
            m.warmed_up().await?;
        }
        Event::Query {
            reader, q, expect, ..
        } => {
            let page = m.search(&address(reader), q).await;
            let summary = summarise_page(
                page.response.status.as_u16(),
                page.elapsed.as_millis() as u64,
                &page.response.body,
            );
            if let Some(e) = expect {
                entry.checks = page_checks(&summary, e);
            }
            entry.page = Some(summary);
        }
        Event::Fault { app, fault, .. } => {
            let f = fake(app)?.faults();
            match fault_knob(fault)? {
                FaultSetter::Cold(c) => f.set_cold(Some(c)),
                FaultSetter::Slow(s) => f.set_slow(Some(s)),
                FaultSetter::Outage(o) => f.set_outage(Some(o)),
                FaultSetter::LieVisible => {
                    f.set_lie(Some(crate::fake::faults::Lie::VisibleForAnyone))
                }
                FaultSetter::Malformed(x) => f.set_malformed_s2(Some(x)),
                FaultSetter::Announce(t) => f.set_truncate_announce(Some(t)),
                FaultSetter::Redirect(r) => f.set_redirect(Some(r)),
            }
        }
        Event::Clear { app, .. } => fake(app)?.faults().clear(),
        Event::Revise { app, item, .. } => {
            fake(app)?
                .model()
                .with(|mm| {
                    let title = mm
                        .item(item)
                        .map(|i| i.current().title.clone())
                        .unwrap_or_default();
                    mm.revise(
                        item,
                        &title,
                        &format!("# {title}\n\nThe {title} notes, revised.\n"),
                    )
                })
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::Create {
            app, item, words, ..
        } => {
            fake(app)?
                .model()
                .with(|mm| {
                    mm.add_item(
                        item,
                        Rung::Team,
                        words,
                        &format!("# {words} {item}\n\nThe {words} notes, revision 1.\n"),
                    )
                })
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::Delete { app, item, .. } => {
            fake(app)?
                .model()
                .with(|mm| mm.delete(item))
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::Downgrade { app, item, to, .. } => {
            let to = to.iter().map(|r| address(r)).collect();
            fake(app)?
                .model()
                .with(|mm| mm.set_rung(item, Rung::Granted { to }))
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::PartialRestore { app, item, to, .. } => {
            fake(app)?
                .model()
                .with(|mm| mm.restore_item_to(item, to))
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::Backup { app, name, .. } => {
            let snap = fake(app)?.model().with(|mm| mm.snapshot());
            backups.insert((app.clone(), name.clone()), snap);
        }
        Event::WholeRestore { app, name, .. } => {
            let snap = backups
                .get(&(app.clone(), name.clone()))
                .ok_or(format!("no backup {name} of {app}"))?;
            fake(app)?.model().with(|mm| mm.restore_whole(snap));
        }
        Event::Sync { .. } => {
            m.sync().await;
        }
        Event::Restart { .. } => m.restart().await,
        Event::AdvanceDays { days, .. } => m.advance_days(*days),
        Event::ExpectCalls {
            app,
            call,
            min,
            max,
            since_start,
            ..
        } => {
            let kind = call_kind(call).ok_or("unknown call")?;
            let host = format!("{TEAM}.{app}.oficina.works");
            let from = if *since_start { 0 } else { since };
            let n = trace.events()[from..]
                .iter()
                .filter(|e| e.callee == host && e.call == kind)
                .count();
            if let Some(lo) = min {
                entry.checks.push(check(
                    format!("at least {lo} {call} calls at {app}"),
                    n.to_string(),
                    n >= *lo,
                ));
            }
            if let Some(hi) = max {
                entry.checks.push(check(
                    format!("at most {hi} {call} calls at {app}"),
                    n.to_string(),
                    n <= *hi,
                ));
            }
        }
        Event::ExpectHeld {
            app, item, held, ..
        } => {
            let got = m
                .state()
                .instance()
                .lock()
                .map_err(|_| "instance lock")?
                .store()
                .sibling_document(app, item)
                .map_err(|e| e.to_string())?
                .is_some();
            entry.checks.push(check(
                format!("{app}:{item} {}", if *held { "held" } else { "not held" }),
                (if got { "held" } else { "not held" }).to_string(),
                got == *held,
            ));
        }
        Event::ExpectSources {
            app,
            refusal,
            s3,
            reader,
            ..
        } => {
            let page = m.get(&address(reader), "/sources").await;
            let body = &page.response.body;
            let name = memoria::app_display_name(app);
            let section = body
                .find(&format!("data-app=\"{name}\""))
                .map(|at| &body[at..])
                .map(|rest| &rest[..rest.find("</section>").unwrap_or(rest.len())])
                .unwrap_or("");
            let line =
                |class: &str| lines_with_class(section, &format!("breaker {class}")).join(" ");
            for (class, want) in [("refusal-breaker", refusal), ("s3-breaker", s3)] {
                if let Some(want) = want {
                    let got = line(class);
                    entry.checks.push(check(
                        format!("{app}'s {class} line says \"{want}\""),
                        if got.is_empty() {
                            "no such line".to_string()
                        } else {
                            got.clone()
                        },
                        got.contains(want.as_str()),
                    ));
                }
            }
        }
        Event::ExpectReannounce { app, marked, .. } => {
            let got = m
                .state()
                .instance()
                .lock()
                .map_err(|_| "instance lock")?
                .store()
                .sibling_state(app)
                .map_err(|e| e.to_string())?
                .reannounce;
            entry.checks.push(check(
                format!(
                    "{app} {}marked for re-announce",
                    if *marked { "" } else { "not " }
                ),
                (if got { "marked" } else { "not marked" }).to_string(),
                got == *marked,
            ));
        }
    }
    Ok(())
}

/// What shrinking a scenario found.
#[derive(Debug, Clone)]
pub enum Shrunk {
    /// Every expectation held: there is no failure to shrink.
    Passes(Replay),
    /// The smallest timeline found that still fails the same way.
    Failing {
        /// The replay of the whole file: the failure as it first happened.
        original: Box<Replay>,
        /// The file with only the events the failure needs.
        minimal: Box<Scenario>,
        /// The replay of `minimal`; each entry's `index` is the event's
        /// index in the original file.
        replay: Replay,
        /// For each of `minimal`'s events, its index in the original file.
        kept: Vec<usize>,
    },
}

/// Drops events while the first failure persists and returns the smallest
/// scenario found that still fails the same way (greedy, one event at a
/// time, to a fixed point). The failing expectation itself is kept. A
/// scenario that passes is [`Shrunk::Passes`]: nothing is dropped.
///
/// # Errors
/// As [`replay`].
pub fn shrink(s: &Scenario, seed: Option<u64>) -> Result<Shrunk, ScenarioError> {
    let first = replay(s, seed)?;
    let Some(target) = failure_key(s, &first) else {
        return Ok(Shrunk::Passes(first));
    };
    let original = first.clone();
    let mut best = s.clone();
    let mut kept: Vec<usize> = (0..s.events.len()).collect();
    let mut best_replay = first;
    loop {
        let mut shrunk = false;
        let mut i = 0;
        while i < best.events.len() {
            let keeps_target = failure_key(&best, &best_replay).is_some_and(|(idx, _)| idx != i);
            if !keeps_target {
                i += 1;
                continue;
            }
            let mut candidate = best.clone();
            candidate.events.remove(i);
            let r = replay(&candidate, seed)?;
            if failure_key(&candidate, &r).is_some_and(|(_, e)| e == target.1) {
                best = candidate;
                best_replay = r;
                kept.remove(i);
                shrunk = true;
            } else {
                i += 1;
            }
        }
        if !shrunk {
            for e in &mut best_replay.entries {
                e.index = kept.get(e.index).copied().unwrap_or(e.index);
            }
            return Ok(Shrunk::Failing {
                original: Box::new(original),
                minimal: Box::new(best),
                replay: best_replay,
                kept,
            });
        }
    }
}

/// The first failure as (event index, its expectation text), for shrinking.
fn failure_key(s: &Scenario, r: &Replay) -> Option<(usize, String)> {
    if let Some(err) = &r.error {
        return Some((s.events.len(), format!("the simulation fails: {err}")));
    }
    r.failures()
        .first()
        .map(|(idx, c)| (*idx, c.expected.clone()))
}
