//! Replay: a scenario's world is built under one seed and its timeline driven event by event, each entry recorded content-free with its checks.
//!
//! Size: past 800 lines because every event the explorer generates is
//! applied here, the uploads, deletes and the surfaces beside the
//! searches; moving the surface client (`ask`, `upload`, `delete_upload`)
//! into a file of its own is the next step.
//!
//! [`world`] builds the fakes, readers and items a file declares;
//! [`replay`] runs the timeline in it, waiting for each event's `at_ms`,
//! applying actions to the fakes and memoria, and checking expectations
//! where they stand, so one run shows every failure. [`Replay`] renders the
//! result as text.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use super::checks::{Check, PageSummary, expect, page_checks, summarise_page};
use super::parse::{Event, RungDecl, Scenario, ScenarioError, Surface};
use super::validate::{FaultSetter, fault_knob};
use crate::corpus;
use crate::fake::model::{Rung, Snapshot};
use crate::fake::trace::{CallDetail, TraceEvent};
use crate::world::{Memoria, SiblingSpec, World};

/// The domain a reader's name is turned into an address under: `ana` → `ana@acme.test`.
pub const READER_DOMAIN: &str = "acme.test";
/// The seed a scenario runs under when neither the file nor the command gives one.
pub const SCENARIO_SEED_DEFAULT: u64 = 1;

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
                if p.artefacts > 0 {
                    out.push_str(&format!(
                        "                    artefacts  {} shown\n",
                        p.artefacts
                    ));
                }
                for w in &p.artefacts_withheld {
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
    // Suite shape: the first reader is an owner, every other reader is
    // admitted from the home's roster (§4.3); guests and strangers stay
    // owners, so S2 alone keeps them from the team's items.
    let owners = if s.home { &readers[..1] } else { &readers[..] };
    let admitted: Vec<String> = owners
        .iter()
        .cloned()
        .chain(s.guests.iter().chain(&s.strangers).map(|r| address(r)))
        .collect();
    world.set_owners(&admitted);
    if let Some(ms) = s.tick_ms {
        world.set_tick_ms(ms);
    }
    if s.home {
        let members: Vec<&str> = readers[1..].iter().map(String::as_str).collect();
        world.use_home(&members);
        world.set("home", "suite shape");
    }
    world.set("readers", readers.len());
    if !s.guests.is_empty() || !s.strangers.is_empty() {
        world.set("guests", s.guests.len());
        world.set("strangers", s.strangers.len());
    }
    let corpus = corpus::load_items(s.siblings.iter().map(|x| x.corpus).sum());
    world.set("corpus", format!("{:?}", corpus.source));
    if s.ai {
        // AI on against the stub provider, answering extractively: the
        // derived artefacts of §5.2 are written from what was sent.
        let stub = crate::fake::provider::StubProvider::new();
        stub.set_chat_extractive(true);
        world.use_provider(&stub);
        // As `memoria serve` runs with AI on: every passage and query
        // embedded, the embedding loop beside the server (§7, §8.3).
        world.embed_with_provider();
    }
    let mut offset = 0;
    for x in &s.siblings {
        let fake = world.fake(&x.app).clone();
        let result: Result<(), String> = fake.model().with(|m| {
            if let Some(records) = x.announce_page_records {
                m.set_announce_page_records(records);
            }
            for g in &s.guests {
                m.add_guest(&address(g), None);
            }
            for g in &s.strangers {
                m.forget_person(&address(g));
            }
            if x.worked_example {
                m.add_worked_example().map_err(|e| format!("{e:?}"))?;
            }
            for (i, (title, body)) in corpus.items.iter().skip(offset).take(x.corpus).enumerate() {
                // The oracle reads a page by titles: each ends in a tag of its own.
                let (title, body) = if s.oracle {
                    let tag = super::oracle::corpus_tag(&x.app, i);
                    (format!("{title} {tag}"), format!("{tag}\n\n{body}"))
                } else {
                    (title.clone(), body.clone())
                };
                m.add_item(&format!("{}-c{i}", x.app), Rung::Team, &title, &body)
                    .map_err(|e| format!("{e:?}"))?;
            }
            for item in &x.items {
                let body = |n: usize| {
                    format!(
                        "# {} {}\n\nThe {} notes, revision {n}.\n{}",
                        item.words,
                        item.id,
                        item.words,
                        super::parse::sections_body(item.sections)
                    )
                };
                let rung = match item.rung {
                    RungDecl::Team | RungDecl::LinkShared | RungDecl::GuestOnly => Rung::Team,
                    RungDecl::Private => Rung::Private {
                        owner: readers[0].clone(),
                    },
                    RungDecl::Granted => Rung::Granted {
                        to: item.granted_to.iter().map(|r| address(r)).collect(),
                    },
                };
                let title = match &item.topic {
                    Some(t) => format!("{} #{t}", item.words),
                    None => item.words.clone(),
                };
                m.add_item(&item.id, rung, &title, &body(1))
                    .map_err(|e| format!("{}: {e:?}", item.id))?;
                match item.rung {
                    RungDecl::LinkShared => m.set_link_shared(&item.id, true),
                    RungDecl::GuestOnly => m.set_guest_only(&item.id, true),
                    _ => Ok(()),
                }
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
    let mut world = world(s, seed)?;
    // A rotating scenario: memoria reads its tokens from token files,
    // which the drain's phase 2 rewrites (§6.2).
    let rotating = s.events.iter().any(|e| matches!(e, Event::Rotation { .. }));
    // And one whose token files break and mend (§6.2, `token_file.rs`).
    let token_files = s
        .events
        .iter()
        .any(|e| matches!(e, Event::TokenFile { .. }));
    if rotating || token_files {
        world.use_token_files();
    }
    // A whole-directory backup: memoria configured as `memoria serve`,
    // its tombstone log beside the data directory (§7.4).
    if s.events
        .iter()
        .any(|e| matches!(e, Event::MemoriaBackup { whole: true, .. }))
    {
        world.configure_as_serve();
    }
    let apps: Vec<String> = s.siblings.iter().map(|x| x.app.clone()).collect();
    let rotation = rotating.then(|| super::rotation::RotationTruth::new(&world, &apps, seed));
    let entries: Arc<Mutex<Vec<Entry>>> = Arc::default();
    let out = entries.clone();
    let events = s.events.clone();
    let fakes: BTreeMap<String, crate::fake::server::FakeSibling> = s
        .siblings
        .iter()
        .map(|x| (x.app.clone(), world.fake(&x.app).clone()))
        .collect();
    let trace = world.trace().clone();
    let mut ctx = Ctx {
        oracle: s.oracle,
        members: s.readers.iter().map(|r| address(r)).collect(),
        removed: BTreeMap::new(),
        shown: BTreeMap::new(),
        owned: super::surfaces::Owned::default(),
        at_rest: 0,
        links: super::documents::Links::default(),
        roster: world.home().map(|h| {
            super::roster::RosterTruth::new(
                h.clone(),
                address_all(&s.readers[1..]),
                address_all(&s.readers[..1]),
            )
        }),
        rotation,
        token_files: token_files.then(super::token_file::TokenFileTruth::default),
        provider: world.provider().cloned(),
        crash: None,
        connectors: super::connector::ConnectorTruth::new(s).map_err(ScenarioError::Invalid)?,
        reconciling: super::reconciling::ReconcilingTruth::default(),
        cause: super::reconciling_cause::CauseTruth::default(),
        breakers: super::breaker::BreakerTruth::default(),
        retention: super::tomb::Retention::default(),
    };
    let run = world.run(move |mut m| async move {
        let mut backups: BTreeMap<(String, String), Snapshot> = BTreeMap::new();
        let mut seen = 0usize;
        let mut action_start = 0usize;
        let mut previous_ms = 0u64;
        for (index, event) in events.iter().enumerate() {
            // memoria's connectors enumerate on their schedule, between
            // the events; before liveness, the faults stop and the quiet
            // enumerations run (`connector.rs`).
            let owner = ctx.members.first().cloned().unwrap_or_default();
            let hold = ctx.crash.is_some();
            let (connector_checks, connector_notes) = match ctx.connectors.as_mut() {
                Some(c) if matches!(event, Event::ExpectConverged { .. }) => {
                    c.converge(&mut m, &owner).await?
                }
                Some(c) => {
                    let now = turmoil::sim_elapsed().unwrap_or_default().as_millis() as u64;
                    c.run_due(&mut m, &owner, event.at_ms().unwrap_or(now), hold)
                        .await?
                }
                None => (vec![], vec![]),
            };
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
            // A crash aimed by the event before lands in this one or not
            // at all; a restart, a restore, a backup or the liveness check
            // takes it away first (`Event::Crash`).
            let aimed = ctx.crash.take();
            let before_landing = m.crash_landings();
            let takes_away = matches!(
                event,
                Event::Restart { .. }
                    | Event::MemoriaBackup { .. }
                    | Event::MemoriaRestore { .. }
                    | Event::TombstoneLog { .. }
                    | Event::SnapshotBucket { .. }
                    | Event::ExpectConverged { .. }
                    | Event::Crash { .. }
            );
            if aimed.is_some()
                && takes_away
                && let Some(point) = m.disarm_crash()
            {
                entry.event.push_str(&format!(" ({point} not reached)"));
            }
            apply(
                &mut m,
                &mut ctx,
                &fakes,
                &mut backups,
                event,
                &mut entry,
                &trace,
                action_start,
            )
            .await?;
            entry.checks.extend(connector_checks);
            if !connector_notes.is_empty() {
                entry
                    .event
                    .push_str(&format!(" (after {})", connector_notes.join("; ")));
            }
            if let Some(point) = aimed
                && !takes_away
            {
                after_aimed(&mut m, &mut ctx, &fakes, &mut entry, &point, before_landing).await;
            }
            // A crash that landed in this event: a mark memoria was not yet
            // sure to hold when it began may never have been written. And
            // the wake may read its own crash as a restore (a tombstone
            // logged but not applied, a snapshot written but not recorded:
            // `restore_found`), which marks every sibling (§7.4).
            if m.crash_landings() > before_landing {
                trace.with(|all| ctx.reconciling.observe(all));
                ctx.reconciling.interrupted(at_ms);
                ctx.cause.interrupted(at_ms);
                let end = trace.with(|all| all.len());
                ctx.cause
                    .restore(fakes.keys().cloned(), super::roster::now_ms(), end);
            }
            if ctx.oracle {
                ctx.reconciling.learn_items(&fakes);
            }
            // What the breakers' truth needs of this event (`breaker.rs`).
            let now_ms = super::roster::now_ms();
            let happened = if m.crash_landings() > before_landing {
                super::breaker::Happened::Crash
            } else if matches!(
                event,
                Event::Restart { .. } | Event::TombstoneLog { .. } | Event::SnapshotBucket { .. }
            ) {
                super::breaker::Happened::Restart
            } else {
                super::breaker::Happened::Nothing
            };
            match event {
                Event::MemoriaBackup { name, .. } => ctx.breakers.backed_up(name, at_ms),
                Event::MemoriaRestore { name, .. } => ctx.breakers.restored(name, at_ms, now_ms),
                _ => {}
            }
            let unasked = ctx
                .token_files
                .as_ref()
                .map(super::token_file::TokenFileTruth::unasked)
                .unwrap_or_default();
            let unclean: BTreeMap<String, bool> = fakes
                .iter()
                .map(|(app, f)| {
                    let untraced = matches!(
                        f.faults().get().outage,
                        Some(
                            crate::fake::faults::Outage::Hang | crate::fake::faults::Outage::Refuse
                        )
                    );
                    (app.clone(), unasked.contains(app) || untraced)
                })
                .collect();
            ctx.breakers.record(
                previous_ms,
                at_ms,
                now_ms,
                m.calendar_unix_s(),
                happened,
                &unclean,
            );
            previous_ms = now_ms;
            entry.calls = trace.with(|all| summarise_calls(&all[seen.min(all.len())..]));
            seen = trace.len();
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

/// What a replay keeps between events for the oracle.
struct Ctx {
    /// Judge every page with the oracle.
    oracle: bool,
    /// The members' addresses still admitted.
    members: Vec<String>,
    /// Readers removed from the owners, with the session each held.
    removed: BTreeMap<String, String>,
    /// What the oracle has seen shown, for its no-silent-loss check.
    shown: super::oracle::ShownSince,
    /// The truth of memoria's own documents.
    owned: super::surfaces::Owned,
    /// Checkpoints of the grep at rest so far (which words it samples).
    at_rest: usize,
    /// Suite shape: the home's roster as the oracle knows it.
    roster: Option<super::roster::RosterTruth>,
    /// A rotating scenario: the drain and what the oracle knows of it.
    rotation: Option<super::rotation::RotationTruth>,
    /// The document ids pages have linked, for `open-document`.
    links: super::documents::Links,
    /// A scenario whose token files break: what the oracle knows of them.
    token_files: Option<super::token_file::TokenFileTruth>,
    /// An AI-on scenario: the stub provider memoria embeds and chats with.
    provider: Option<crate::fake::provider::StubProvider>,
    /// A crash aimed by the last event, for the next one to land or not.
    crash: Option<String>,
    /// A scenario with connectors: the folder, the paged fake and their truth.
    connectors: Option<super::connector::ConnectorTruth>,
    /// What the oracle knows of memoria's reconciling state (`reconciling.rs`).
    reconciling: super::reconciling::ReconcilingTruth,
    /// What the oracle knows of reconciling spells' causes (`reconciling_cause.rs`).
    cause: super::reconciling_cause::CauseTruth,
    /// memoria's calendar and what cost it counter writes, for §8.1's breakers.
    breakers: super::breaker::BreakerTruth,
    /// The snapshot generations seen newest, for `[safety:retention]`.
    retention: super::tomb::Retention,
}

impl Ctx {
    /// The session `who` asks with when they cannot sign in again: the one
    /// held when the owners file dropped them, or, for a reader the roster
    /// admitted, the one taken at the first warm-up while memoria refuses
    /// them now (a restart ends it; they are then shown nothing). While
    /// nobody's standing can be established (the roster copy stale or
    /// missing) a reader asks with the session they hold now, which the
    /// stale copy must withhold from, not end (§4.3).
    fn held_session(&self, m: &mut Memoria, who: &str) -> Option<String> {
        if let Some(c) = self.removed.get(who) {
            return Some(c.clone());
        }
        let r = self.roster.as_ref()?;
        let standing = m
            .state()
            .instance()
            .lock()
            .ok()
            .map(|i| i.admission().standing(who));
        let held = match standing {
            Some(memoria::Standing::Admitted(_)) => false,
            Some(memoria::Standing::Lacking(_)) => !m.holds_session(who),
            Some(memoria::Standing::Refused) | None => true,
        };
        if held {
            r.sessions.get(who).cloned()
        } else {
            None
        }
    }
}

/// After the event a crash was aimed for: takes the aim away if it did
/// not land, and says so; if it landed, waits for the memoria woken
/// since, says where it landed, and greps the data directory as the kill
/// and that wake left it (a checkpoint of the grep at rest; the bytes
/// right after the kill, before any wake, are `tests/reference/crash.rs`'s).
async fn after_aimed(
    m: &mut Memoria,
    ctx: &mut Ctx,
    fakes: &BTreeMap<String, crate::fake::server::FakeSibling>,
    entry: &mut Entry,
    point: &str,
    before: u64,
) {
    m.settle_crash().await;
    if m.crash_landings() == before {
        if m.disarm_crash().is_some() {
            entry.event.push_str(&format!(" ({point} not reached)"));
        }
        return;
    }
    entry
        .event
        .push_str(&format!(" (memoria crashed at {point} and woke again)"));
    if let Some(r) = ctx.roster.as_mut() {
        r.woke(entry.at_ms);
    }
    if ctx.oracle {
        let words = at_rest_words(ctx, fakes);
        entry
            .checks
            .extend(super::oracle::judge_at_rest(m.data_dir(), &words));
    }
}

fn address_all(names: &[String]) -> Vec<String> {
    names.iter().map(|r| address(r)).collect()
}

/// Words sampled at one checkpoint of the grep at rest.
const AT_REST_WORDS_MAX: usize = 4;
/// Every this many events, a checkpoint of the grep at rest (besides each
/// restart, backup, restore and the liveness check).
const AT_REST_EVERY_EVENTS: usize = 25;

/// The words a checkpoint greps for: tags of items some page showed (memoria
/// holds them) and of memoria's own documents stored, a sample of at most
/// [`AT_REST_WORDS_MAX`] rotating with each checkpoint.
fn at_rest_words(
    ctx: &mut Ctx,
    fakes: &BTreeMap<String, crate::fake::server::FakeSibling>,
) -> Vec<String> {
    let mut words: Vec<String> = ctx
        .shown
        .keys()
        .filter_map(|(app, id)| {
            fakes.get(app)?.model().with(|m| {
                let title = m.item(id)?.current().title.clone();
                title.split_whitespace().last().map(str::to_string)
            })
        })
        .chain(
            ctx.owned
                .docs
                .values()
                .filter(|d| d.live)
                .map(|d| d.tag.clone()),
        )
        .collect();
    words.sort();
    words.dedup();
    if words.is_empty() {
        return words;
    }
    let start = (ctx.at_rest * AT_REST_WORDS_MAX) % words.len();
    ctx.at_rest += 1;
    words
        .iter()
        .cycle()
        .skip(start)
        .take(AT_REST_WORDS_MAX.min(words.len()))
        .cloned()
        .collect()
}

#[allow(clippy::too_many_arguments)]
async fn apply(
    m: &mut Memoria,
    ctx: &mut Ctx,
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
            // Suite shape: each roster reader signs in once, while the
            // copy admits them; later questions use that session.
            if let Some(r) = ctx.roster.as_mut()
                && r.sessions.is_empty()
            {
                for who in r.members.clone() {
                    if let Ok(cookie) = m.session(&who).await {
                        r.sessions.insert(who, cookie);
                    }
                }
            }
        }
        Event::Query {
            reader,
            q,
            expect,
            surface,
            ..
        } => {
            let before = trace.len();
            let who = address(reader);
            let surface = surface.unwrap_or_default();
            let start_ms = super::roster::now_ms();
            if let Some(r) = ctx.roster.as_mut() {
                r.asked_ms = start_ms;
                r.asked_live = m.holds_session(&who);
            }
            let chats = ctx.provider.as_ref().map(|p| p.chat_calls());
            let (page, seen) = ask(m, ctx, &who, q, surface).await?;
            let chatted = ctx.provider.as_ref().map(|p| p.chat_calls()) != chats;
            ctx.links.learn(&page.response.body, fakes);
            if ctx.oracle {
                let window = trace.since(before);
                let admitted = !ctx.removed.contains_key(&who);
                let unasked = ctx
                    .token_files
                    .as_ref()
                    .map(super::token_file::TokenFileTruth::unasked)
                    .unwrap_or_default();
                entry.checks.extend(super::oracle::judge_page(
                    &who, &seen, &window, fakes, admitted, &ctx.owned, &unasked,
                ));
                // With AI on, a question only the dense half answers is
                // ranked by the stub's own vectors (`dense.rs`).
                if let Some(p) = &ctx.provider
                    && surface != Surface::Brief
                {
                    entry.checks.extend(super::dense::judge_dense(q, &seen, p));
                }
                entry.checks.extend(super::deadline::judge_deadline(
                    &window,
                    crate::world::MEMORIA_CONSUMER,
                    start_ms,
                    start_ms + page.elapsed.as_millis() as u64,
                    chatted,
                ));
                // Every surface, the brief too: a task that is one item's
                // tag names that item alone, and a brief reads a sentence
                // under its document's title, as the index does.
                if let Some(r) = &ctx.roster {
                    entry
                        .checks
                        .extend(super::roster::judge_roster(r, &who, &seen));
                }
                // A roster reader's standing may lag the home's roster by
                // one pull: no silent loss is judged for them unless the
                // copy certainly admits them.
                let sure = ctx
                    .roster
                    .as_ref()
                    .is_none_or(|r| !r.is_roster_reader(&who) || r.surely_admitted(&who));
                entry.checks.extend(super::oracle::judge_silence(
                    &who,
                    q,
                    &seen,
                    fakes,
                    admitted && sure,
                    &mut ctx.shown,
                    &ctx.owned,
                ));
                // A results page: a person admitted now, answered 200.
                let results = ctx.members.contains(&who)
                    && admitted
                    && sure
                    && page.response.status.as_u16() == 200;
                let end = trace.len();
                trace.with(|all| ctx.reconciling.observe(all));
                entry.checks.extend(
                    ctx.reconciling
                        .judge_page(&seen, &window, fakes, start_ms, end, results),
                );
                let cause = &mut ctx.cause;
                entry.checks.extend(trace.with(|all| {
                    cause.observe(all, fakes);
                    cause.judge_page(&seen, all, fakes, start_ms, end, results)
                }));
            }
            let mut summary = summarise_page(
                page.response.status.as_u16(),
                page.elapsed.as_millis() as u64,
                &page.response.body,
            );
            if surface != Surface::Page {
                // Another surface: the timeline counts what it showed.
                summary.results = seen.shown.len();
                summary.by_app = BTreeMap::new();
                for r in &seen.shown {
                    *summary.by_app.entry(r.app.clone()).or_default() += 1;
                }
            }
            if let Some(e) = expect {
                entry.checks.extend(page_checks(&summary, e));
            }
            entry.page = Some(summary);
        }
        Event::Upload {
            reader,
            doc,
            words,
            sections,
            ..
        } => {
            let who = address(reader);
            let tag = super::surfaces::owned_tag(doc);
            let landings = m.crash_landings();
            let text = match sections {
                None => format!("# {words} {tag}\n\nThe {words} notes, uploaded.\n"),
                Some(n) => {
                    // The dense crowd (`dense.rs`): one passage a section.
                    ctx.owned.crowds.push((doc.clone(), words.clone()));
                    super::dense::crowd_text(words, &tag, *n)
                }
            };
            let answered = upload(m, ctx, &who, doc, &text).await;
            // Cut off by a crash: never acknowledged, stored or not.
            let (id, doubt) = match answered {
                Ok(id) => (id, false),
                Err(e) => {
                    m.settle_crash().await;
                    if m.crash_landings() == landings {
                        return Err(e);
                    }
                    let before = ctx.owned.docs.get(doc).and_then(|d| d.id.clone());
                    (before, true)
                }
            };
            ctx.owned.docs.insert(
                doc.clone(),
                super::surfaces::OwnedDoc {
                    tag,
                    live: id.is_some() && !doubt,
                    id,
                    deleted: false,
                    refused: words.contains(crate::fake::provider::REFUSED_MARKER),
                    doubt,
                },
            );
        }
        Event::DeleteUpload { reader, doc, .. } => {
            let who = address(reader);
            let id = ctx
                .owned
                .docs
                .get(doc)
                .filter(|d| d.live || d.doubt)
                .and_then(|d| d.id.clone());
            if let Some(id) = id {
                let landings = m.crash_landings();
                let answered = delete_upload(m, ctx, &who, &id).await;
                let lost = match &answered {
                    Err(_) => {
                        m.settle_crash().await;
                        m.crash_landings() > landings
                    }
                    Ok(_) => false,
                };
                match (answered, ctx.owned.docs.get_mut(doc)) {
                    (Ok(Deletion::Deleted), Some(d)) => {
                        (d.live, d.deleted, d.doubt) = (false, true, false);
                        ctx.reconciling.deleted_upload();
                    }
                    // A deletion a crash cut off, replayed at the wake
                    // (§7.4): gone, and it never comes back.
                    (Ok(Deletion::Gone), Some(d)) if d.doubt => {
                        (d.live, d.deleted, d.doubt) = (false, true, false);
                        ctx.reconciling.deleted_upload();
                    }
                    // Cut off by a crash: never acknowledged, done or not.
                    (Err(_), Some(d)) if lost => (d.live, d.doubt) = (false, true),
                    (Err(e), _) if !lost => return Err(e),
                    _ => {}
                }
            }
        }
        Event::MemoriaBackup { name, whole, .. } => {
            m.backup_data(name, *whole)?;
            trace.with(|all| ctx.reconciling.observe(all));
            ctx.reconciling
                .backup(name, super::roster::now_ms(), trace.len());
            let live = ctx
                .owned
                .docs
                .iter()
                .map(|(doc, d)| (doc.clone(), d.live))
                .collect();
            ctx.owned.backups.insert(name.clone(), live);
        }
        Event::MemoriaRestore { name, .. } => {
            let end = trace.len();
            trace.with(|all| ctx.reconciling.observe(&all[..end.min(all.len())]));
            let from = super::roster::now_ms();
            m.restore_data(name).await?;
            ctx.retention.reset();
            ctx.reconciling.restore(name, super::roster::now_ms(), end);
            ctx.cause
                .restore(fakes.keys().cloned(), super::roster::now_ms(), end);
            if let Some(r) = ctx.roster.as_mut() {
                r.woke(from);
            }
            ctx.owned.restored(name);
            // A restored memoria starts the no-silent-loss record afresh.
            ctx.shown.clear();
        }
        Event::Fault { app, fault, .. } => {
            let f = fake(app)?.faults();
            match fault_knob(fault)? {
                FaultSetter::Cold(c) => f.set_cold(Some(c)),
                FaultSetter::Slow(s) => f.set_slow(Some(s)),
                FaultSetter::Outage(o, only) => f.set_outage_for(Some(o), only),
                FaultSetter::LieVisible => {
                    f.set_lie(Some(crate::fake::faults::Lie::VisibleForAnyone))
                }
                FaultSetter::Malformed(x) => f.set_malformed_s2(Some(x)),
                FaultSetter::Announce(t) => f.set_truncate_announce(Some(t)),
                FaultSetter::Redirect(r) => f.set_redirect(Some(r)),
                FaultSetter::FeedPages(rows, fail_next) => {
                    // The page size stays (a sibling's setting), and the
                    // failure is a one-shot: the convergence rounds, which
                    // switch every knob off, may be the pulls that meet it.
                    let head = fake(app)?.model().with(|mm| {
                        mm.set_feed_page_rows(rows);
                        mm.events().len()
                    });
                    if fail_next {
                        f.arm_feed_failure(head);
                    }
                }
                FaultSetter::S3FailsOnce(item, revision) => f.arm_s3_failure(&item, &revision),
            }
        }
        Event::Clear { app, .. } => fake(app)?.faults().clear(),
        Event::Revise {
            app, item, words, ..
        } => {
            fake(app)?
                .model()
                .with(|mm| {
                    let (title, sections) = mm
                        .item(item)
                        .map(|i| {
                            let c = i.current();
                            // The later sections an item was drawn with stay.
                            let at = c
                                .body
                                .find(&format!("\n{}", super::parse::CONTINUED_HEADING));
                            (
                                c.title.clone(),
                                at.map_or(String::new(), |at| c.body[at..].to_string()),
                            )
                        })
                        .unwrap_or_default();
                    let body = match words {
                        Some(w) => {
                            format!("# {title}\n\nThe {title} notes, revised: {w}.\n{sections}")
                        }
                        None => format!("# {title}\n\nThe {title} notes, revised.\n{sections}"),
                    };
                    mm.revise(item, &title, &body)
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
            ctx.shown.retain(|(a, _), _| a != app);
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
            ctx.shown.retain(|(a, _), _| a != app);
            let snap = backups
                .get(&(app.clone(), name.clone()))
                .ok_or(format!("no backup {name} of {app}"))?;
            fake(app)?.model().with(|mm| mm.restore_whole(snap));
        }
        Event::Reformat {
            app,
            item,
            tab,
            col,
            format_code,
            in_place,
            ..
        } => {
            let revise = if *in_place {
                crate::Revise::InPlace
            } else {
                crate::Revise::New
            };
            let code = (format_code != "General").then_some(format_code.as_str());
            fake(app)?
                .model()
                .with(|mm| mm.reformat_column(item, tab, *col, code, revise))
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::Upgrade { app, item, .. } => {
            fake(app)?
                .model()
                .with(|mm| {
                    mm.set_rung(item, Rung::Team)?;
                    mm.set_link_shared(item, false)?;
                    mm.set_guest_only(item, false)
                })
                .map_err(|e| format!("{item}: {e:?}"))?;
        }
        Event::RemoveReader { reader, .. } => {
            let who = address(reader);
            let cookie = m.session(&who).await?;
            ctx.removed.insert(who.clone(), cookie);
            ctx.members.retain(|a| *a != who);
            let left: Vec<String> = std::fs::read_to_string(m.owners_file())
                .map_err(|e| format!("{}: {e}", m.owners_file().display()))?
                .lines()
                .filter(|l| !l.is_empty() && *l != who)
                .map(str::to_string)
                .collect();
            let left: Vec<&str> = left.iter().map(String::as_str).collect();
            m.set_owners(&left)?;
        }
        Event::RosterRemove { reader, .. } | Event::RosterAdd { reader, .. } => {
            let who = address(reader);
            let on = matches!(event, Event::RosterAdd { .. });
            let r = ctx.roster.as_mut().ok_or("a roster event in lone shape")?;
            if on {
                r.home.add(&who);
            } else {
                r.home.remove(&who);
            }
            r.changed.insert(who.clone(), (super::roster::now_ms(), on));
            ctx.members.retain(|a| *a != who);
            if on {
                ctx.members.push(who);
            }
        }
        Event::RosterFault { mode, .. } => {
            let fault = super::parse::home_fault(mode).ok_or(format!("roster fault {mode}"))?;
            let r = ctx.roster.as_mut().ok_or("a roster event in lone shape")?;
            r.set_fault(super::roster::now_ms(), fault);
        }
        Event::RosterNewGeneration { members, .. } => {
            let r = ctx.roster.as_mut().ok_or("a roster event in lone shape")?;
            let listed = address_all(members);
            let name = r.new_generation(&listed);
            entry.event.push_str(&format!(" ({name})"));
            let owners = r.owners.clone();
            ctx.members.retain(|a| owners.contains(a));
            ctx.members.extend(listed);
        }
        Event::RosterConfirm { .. } => {
            let from = super::roster::now_ms();
            let owner = ctx
                .roster
                .as_ref()
                .and_then(|r| r.owners.first().cloned())
                .ok_or("a roster event in lone shape")?;
            let (form, adopted, said) = confirm_roster(m, &owner).await?;
            entry.event.push_str(&format!(" ({said})"));
            let r = ctx.roster.as_mut().ok_or("a roster event in lone shape")?;
            let failed = r.confirmed(from, form, adopted);
            if ctx.oracle {
                entry.checks.extend(failed);
            }
        }
        Event::Rotation { phase, reach, .. } => {
            let r = ctx
                .rotation
                .as_mut()
                .ok_or("a rotation event without the drain")?;
            entry
                .checks
                .extend(r.phase(m, fakes, trace, *phase, *reach).await?);
        }
        Event::TokenFile { app, state, .. } => {
            let t = ctx
                .token_files
                .as_mut()
                .ok_or("a token-file event without token files")?;
            t.apply(m, app, *state, super::roster::now_ms())?;
        }
        Event::Provider {
            state,
            retry_after_s,
            ..
        } => {
            let stub = ctx
                .provider
                .as_ref()
                .ok_or("a provider event in a scenario without AI on")?;
            super::provider::apply(stub, *state, *retry_after_s);
        }
        Event::ConnectorPut { .. }
        | Event::ConnectorRemove { .. }
        | Event::ConnectorFault { .. } => {
            ctx.connectors
                .as_mut()
                .ok_or("a connector event without connectors")?
                .apply(event)?;
        }
        Event::ExpectConverged { .. } => {
            // The provider answers again: the faults stop.
            if let Some(stub) = &ctx.provider {
                super::provider::apply(stub, super::parse::ProviderState::Answering, None);
            }
            // Every token file broken is mended: the faults stop.
            if let Some(t) = ctx.token_files.as_mut() {
                t.restore_all(m, super::roster::now_ms())?;
            }
            // Suite shape: the home's faults stop too, and if its last
            // answer failed, time runs until memoria's roster loop (on its
            // retry interval) has pulled cleanly (§4.3, §6.5).
            if let Some(r) = ctx.roster.as_mut() {
                r.set_fault(super::roster::now_ms(), crate::fake::home::HomeFault::None);
                // And until it has pulled the home's last change: the
                // members judged below are the roster as it stands.
                let changed = r.changed.values().map(|(t, _)| *t).max();
                if !super::roster::last_pull_clean(r)
                    || changed.is_some_and(|t| !r.clean_pull_after(t))
                {
                    super::roster::await_clean_pull(r).await;
                }
            }
            let mut members = ctx.members.clone();
            // A generation no owner confirmed admits nobody from the
            // roster, ever (§4.3): only the owners are judged to converge.
            if let Some(r) = ctx.roster.as_ref()
                && r.awaiting_confirmation()
            {
                members.retain(|a| r.owners.contains(a));
            }
            // AI on: the embedding queue drains (§7, §8.3), judged first,
            // before the rounds' questions: a question pulls the siblings,
            // and a pull wakes the embedding loop, so only here does the
            // loop's own interval have to drain it, as it must when nobody
            // asks anything.
            let embedded = match (&ctx.provider, members.first()) {
                (Some(_), Some(owner)) => {
                    Some(super::provider::await_embedded(m, owner, ctx.owned.refused_live()).await)
                }
                _ => None,
            };
            // With every passage embedded and the provider answering, a
            // crowd's question shows a live passage (`dense.rs`).
            let crowded = match (&ctx.provider, members.first(), &embedded) {
                (Some(p), Some(owner), Some(drained))
                    if drained.ok && !ctx.removed.contains_key(owner) =>
                {
                    super::dense::judge_crowded(m, owner, &ctx.owned, p).await
                }
                _ => vec![],
            };
            // A rotation in flight is resumed as the drain resumes one
            // (phases 1 and 2 to the end), and completed after the rounds.
            let resumed = ctx.rotation.as_ref().map_or(vec![], |r| r.resume(m));
            entry.checks =
                super::oracle::converge(m, fakes, &ctx.owned, &members, trace, ctx.roster.as_ref())
                    .await?;
            entry.checks.extend(converge_refused(m, ctx, fakes).await?);
            // Nothing phantom stays ranked (§4.1 rules 3 and 4).
            if let Some(reader) = members.first() {
                ctx.reconciling.learn_items(fakes);
                entry.checks.extend(
                    super::reconciling::judge_phantoms(m, fakes, &ctx.reconciling, reader, trace)
                        .await,
                );
            }
            entry.checks.extend(embedded);
            entry.checks.extend(crowded);
            if let Some(r) = ctx.rotation.as_mut() {
                entry.checks.extend(resumed);
                entry
                    .checks
                    .extend(r.complete(m, fakes, trace, &members).await?);
            }
        }
        Event::OpenDocument { reader, .. } | Event::OpenSources { reader, .. } => {
            let who = address(reader);
            if let Some(r) = ctx.roster.as_mut() {
                r.asked_ms = super::roster::now_ms();
                r.asked_live = m.holds_session(&who);
            }
            let roster = ctx.roster.as_ref();
            let standing = super::documents::Standing {
                cookie: ctx.held_session(m, &who),
                admitted: !ctx.removed.contains_key(&who),
                refused: roster.is_some_and(|r| r.refused(&who)),
                sure: roster.is_none_or(|r| !r.is_roster_reader(&who) || r.surely_admitted(&who)),
                suite: roster.is_some(),
                unasked: ctx
                    .token_files
                    .as_ref()
                    .map(super::token_file::TokenFileTruth::unasked)
                    .unwrap_or_default(),
            };
            let seen = super::documents::apply(
                m,
                &who,
                &standing,
                event,
                &ctx.links,
                &ctx.owned,
                fakes,
                trace,
                ctx.oracle,
                &ctx.breakers,
                entry,
            )
            .await?;
            if ctx.oracle
                && let (Some(r), Some(seen)) = (roster, &seen)
            {
                entry
                    .checks
                    .extend(super::roster::judge_roster(r, &who, seen));
            }
        }
        Event::Crash { point, .. } => {
            m.aim_crash(point)?;
            ctx.crash = Some(point.clone());
        }
        Event::TombstoneLog { how, from, .. } => {
            trace.with(|all| ctx.reconciling.observe(all));
            ctx.reconciling.interrupted(super::roster::now_ms());
            let at = super::roster::now_ms();
            let own = m.tombstone_log_bytes();
            let presented = match (how.as_str(), from) {
                ("rewound", Some(b)) => m
                    .tombstone_log_backup(b)
                    .ok_or(format!("backup {b} holds no copy of the log"))?,
                ("behind-one", _) => super::tomb::behind_one(&own),
                ("foreign", _) => super::tomb::foreign(&own),
                ("foreign-ahead", _) => super::tomb::foreign_ahead(&own),
                ("missing", _) => Vec::new(),
                _ => return Err(format!("no such fault of the log: {how}")),
            };
            let path = m.tombstone_log_path();
            let started = m.start_on_log(presented.clone()).await?;
            if let Some(r) = ctx.roster.as_mut() {
                r.woke(at);
            }
            if ctx.oracle {
                let tags: Vec<String> = ctx.owned.docs.values().map(|d| d.tag.clone()).collect();
                entry.checks.extend(super::tomb::judge_start(
                    how, &own, &presented, &path, &started, &tags,
                ));
            }
        }
        Event::SnapshotBucket { how, .. } => {
            trace.with(|all| ctx.reconciling.observe(all));
            ctx.reconciling.interrupted(super::roster::now_ms());
            let at = super::roster::now_ms();
            let generation = match how.as_str() {
                "generation-deleted" => m.damage_bucket(true).await?,
                "blob-damaged" => m.damage_bucket(false).await?,
                _ => return Err(format!("no such fault of the bucket: {how}")),
            };
            if generation.is_some() {
                ctx.retention.reset();
            }
            if let Some(r) = ctx.roster.as_mut() {
                r.woke(at);
            }
        }
        Event::Restart { .. } => {
            trace.with(|all| ctx.reconciling.observe(all));
            ctx.reconciling.interrupted(super::roster::now_ms());
            ctx.cause.interrupted(super::roster::now_ms());
            let from = super::roster::now_ms();
            m.restart().await;
            if let Some(r) = ctx.roster.as_mut() {
                r.woke(from);
            }
        }
        Event::AdvanceHours { hours, .. } => {
            m.advance_s(hours * 3_600);
            if let Some(r) = ctx.roster.as_mut() {
                r.skipped(hours.unsigned_abs() * 3_600 * 1_000);
            }
        }
        Event::SiblingRemoves {
            app, reader, keep, ..
        } => {
            let who = address(reader);
            fake(app)?
                .model()
                .with(|mm| {
                    let ids: Vec<String> = mm
                        .items()
                        .filter(|i| !keep.contains(&i.item_id))
                        .map(|i| i.item_id.clone())
                        .collect();
                    ids.iter().try_for_each(|id| mm.set_removed(id, &who, true))
                })
                .map_err(|e| format!("{app}: {e:?}"))?;
        }
        Event::AdvanceDays { days, .. } => {
            m.advance_days(*days);
            if let Some(r) = ctx.roster.as_mut() {
                r.skipped(days.unsigned_abs() * crate::SECONDS_PER_DAY.unsigned_abs() * 1_000);
            }
        }
        Event::ExpectCalls { .. }
        | Event::ExpectHeld { .. }
        | Event::ExpectSources { .. }
        | Event::ExpectReannounce { .. } => {
            entry.checks = expect(m, event, trace, since).await?;
        }
    }
    // Every sibling call since the last event, judged for the handover.
    if let Some(r) = ctx.rotation.as_mut() {
        entry.checks.extend(trace.with(|all| r.judge_calls(all)));
    }
    // And for the token files that could not be read (§6.2).
    if let Some(t) = ctx.token_files.as_mut() {
        let rotation = ctx.rotation.as_ref();
        entry.checks.extend(trace.with(|all| {
            t.judge_calls(m, all, super::roster::now_ms(), |i| {
                rotation.is_some_and(|r| r.is_probe(i))
            })
        }));
    }
    let checkpoint = matches!(
        event,
        Event::Restart { .. }
            | Event::MemoriaBackup { .. }
            | Event::MemoriaRestore { .. }
            | Event::TombstoneLog { .. }
            | Event::SnapshotBucket { .. }
            | Event::ExpectConverged { .. }
    ) || entry.index % AT_REST_EVERY_EVENTS == AT_REST_EVERY_EVENTS - 1;
    if ctx.oracle && checkpoint {
        let words = at_rest_words(ctx, fakes);
        entry
            .checks
            .extend(super::oracle::judge_at_rest(m.data_dir(), &words));
        let now_s = m.calendar_unix_s();
        entry
            .checks
            .extend(ctx.retention.judge(m.data_dir(), now_s));
    }
    Ok(())
}

/// Asks `q` as `who` on `surface`: the response (for the timeline's
/// summary) and what it showed. A removed person asks with the session
/// they held (the page and the brief) or as themselves (JSON, MCP).
async fn ask(
    m: &mut Memoria,
    ctx: &Ctx,
    who: &str,
    q: &str,
    surface: Surface,
) -> Result<(crate::world::Page, super::surfaces::Rendered), String> {
    let uri = match surface {
        Surface::Page => format!("/?q={}", memoria::testkit::form_encode(q)),
        Surface::Brief => format!(
            "/brief?task={}&scope=team",
            memoria::testkit::form_encode(q)
        ),
        Surface::Json | Surface::Mcp => {
            let state = m.state();
            let start = tokio::time::Instant::now();
            let json = if surface == Surface::Json {
                let client = state.siblings();
                memoria::ruled_search(state.shared_instance(), client.as_deref(), who, q, 1)
                    .await
                    .ok()
                    .and_then(|r| serde_json::to_value(&r.page).ok())
            } else {
                let (_, result) = super::documents::mcp_server(&state, who)
                    .search_call(
                        memoria::SearchArgs {
                            query: q.to_string(),
                            page: None,
                        },
                        true,
                    )
                    .await;
                result.structured_content
            };
            let seen = json
                .as_ref()
                .map(super::surfaces::from_json)
                .unwrap_or_default();
            let page = crate::world::Page {
                response: memoria::testkit::TestResponse {
                    status: if json.is_some() {
                        http::StatusCode::OK
                    } else {
                        http::StatusCode::FORBIDDEN
                    },
                    headers: http::HeaderMap::new(),
                    body: String::new(),
                },
                elapsed: start.elapsed(),
            };
            return Ok((page, seen));
        }
    };
    let page = match ctx.held_session(m, who) {
        Some(cookie) => m.get_with(&cookie, &uri).await?,
        None => m.get(who, &uri).await,
    };
    let seen = match surface {
        Surface::Brief => super::surfaces::from_brief(&page.response.body),
        _ => super::surfaces::from_page(&page.response.body),
    };
    Ok((page, seen))
}

/// `owner` opens the roster page and, if it holds the confirmation form,
/// posts it as a browser does (every field it carries: the CSRF token and
/// the generation it names). Returns the generation the form named, if
/// there was one, whether memoria adopted it (303 to the roster page), and
/// what happened, for the timeline.
async fn confirm_roster(
    m: &mut Memoria,
    owner: &str,
) -> Result<(Option<String>, bool, String), String> {
    let cookie = m.session(owner).await?;
    let page = m.get_with(&cookie, "/roster").await?;
    let form = memoria_page::Page::parse(&page.response.body)
        .forms()
        .into_iter()
        .find(|f| f.action == "/roster/confirm");
    let Some(form) = form else {
        return Ok((
            None,
            false,
            format!(
                "the roster page ({}) holds no form",
                page.response.status.as_u16()
            ),
        ));
    };
    let generation = form.value("generation").map(str::to_string);
    let fields: Vec<(&str, &str)> = form
        .inputs
        .iter()
        .map(|(n, _, v)| (n.as_str(), v.as_str()))
        .collect();
    let posted = m
        .post_form_with(&cookie, "/roster/confirm", &fields)
        .await?;
    let status = posted.response.status.as_u16();
    let adopted = status == 303;
    Ok((
        generation.clone(),
        adopted,
        format!(
            "the form naming {} answered {status}",
            generation.as_deref().unwrap_or("no generation")
        ),
    ))
}

/// The CSRF token of the first form on `body` that carries one.
fn csrf_of(body: &str) -> Option<String> {
    memoria_page::Page::parse(body)
        .forms()
        .iter()
        .find_map(|f| f.value("csrf").map(str::to_string))
}

/// Uploads `text` as `<doc>.md` through the home page's form, as `who`
/// (with the session they held, once removed); the stored document's id,
/// or `None` when memoria stored nothing (a person no longer admitted).
async fn upload(
    m: &mut Memoria,
    ctx: &Ctx,
    who: &str,
    doc: &str,
    text: &str,
) -> Result<Option<String>, String> {
    let cookie = match ctx.held_session(m, who) {
        Some(c) => c,
        None => m.session(who).await?,
    };
    let home = m.get_with(&cookie, "/").await?;
    let Some(token) = csrf_of(&home.response.body) else {
        return Ok(None);
    };
    let boundary = "explore-boundary-7c1d";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{token}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{doc}.md\"\r\nContent-Type: text/markdown\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(text.as_bytes());
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let posted = m
        .post_with(
            &cookie,
            "/documents",
            &format!("multipart/form-data; boundary={boundary}"),
            body,
        )
        .await?;
    Ok(posted
        .response
        .location()
        .and_then(|l| l.strip_prefix("/documents/"))
        .map(str::to_string))
}

/// What a person's deletion of a memoria-owned document came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deletion {
    /// memoria answered that it deleted it (303 to the search page).
    Deleted,
    /// Its delete form answered 404: memoria holds no such document.
    Gone,
    /// Anything else: refused, or no form.
    Refused,
}

/// Deletes document `id` through its delete form, as `who`.
async fn delete_upload(
    m: &mut Memoria,
    ctx: &Ctx,
    who: &str,
    id: &str,
) -> Result<Deletion, String> {
    let cookie = match ctx.held_session(m, who) {
        Some(c) => c,
        None => m.session(who).await?,
    };
    let uri = format!("/documents/{id}/delete");
    let confirm = m.get_with(&cookie, &uri).await?;
    let Some(token) = csrf_of(&confirm.response.body) else {
        return Ok(if confirm.response.status == http::StatusCode::NOT_FOUND {
            Deletion::Gone
        } else {
            Deletion::Refused
        });
    };
    let done = m
        .post_form_with(&cookie, &uri, &[("csrf", token.as_str())])
        .await?;
    Ok(
        if done
            .response
            .location()
            .is_some_and(|l| l.starts_with("/?deleted"))
        {
            Deletion::Deleted
        } else {
            Deletion::Refused
        },
    )
}

/// Suite shape, after the liveness check: each person the home removed,
/// and memoria has pulled the change since, asks with the session they
/// held for every team-visible item, each found by a member in the check
/// just made (the presence), and is shown nothing (§4.3). Returns the
/// failed checks, plus one passing check when there was someone to ask.
async fn converge_refused(
    m: &mut Memoria,
    ctx: &Ctx,
    fakes: &BTreeMap<String, crate::fake::server::FakeSibling>,
) -> Result<Vec<Check>, String> {
    let Some(r) = &ctx.roster else {
        return Ok(vec![]);
    };
    let refused: Vec<(String, String)> = r
        .changed
        .iter()
        .filter(|(who, _)| r.refused(who))
        .filter_map(|(who, _)| Some((who.clone(), r.sessions.get(who)?.clone())))
        .collect();
    let tags: Vec<String> = fakes
        .values()
        .flat_map(|f| {
            f.model().with(|mm| {
                mm.items()
                    .filter(|i| i.team_visible())
                    .filter_map(|i| {
                        i.current()
                            .title
                            .split_whitespace()
                            .last()
                            .map(String::from)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut out = vec![];
    let mut asked = 0usize;
    for (who, cookie) in &refused {
        for q in &tags {
            let uri = format!("/?q={}", memoria::testkit::form_encode(q));
            let page = m.get_with(cookie, &uri).await?;
            let seen = super::surfaces::from_page(&page.response.body);
            out.extend(super::roster::judge_roster(r, who, &seen));
            asked += 1;
        }
    }
    if out.is_empty() && asked > 0 {
        out.push(Check {
            expected: format!(
                "{} every person the home removed is shown nothing once memoria pulled the change",
                super::roster::SAFETY_ROSTER
            ),
            actual: format!(
                "{asked} questions by {} people, nothing shown",
                refused.len()
            ),
            ok: true,
        });
    }
    Ok(out)
}
