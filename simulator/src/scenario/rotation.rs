//! Token rotation in a scenario: the operator drain's three phases (§6.2) driven by the timeline, and the oracle's rotation checks read from the fakes' own consumers rows and trace.
//!
//! A scenario's `rotation` events move the simulator's [`Drain`] (the same
//! one gate 12 runs) over memoria's tokens at the scenario's siblings, in
//! the order the file declares them: `begin` starts a rotation (the first
//! from memoria's own tokens, each later one from the last one's new
//! tokens, [`Drain::next`]); `expand`, `switch` and `contract` run a phase,
//! stopped after the first `reach` siblings when the event gives one (an
//! interrupted run), and each may be run again to resume it. memoria reads
//! its tokens from token files, read on every call (§6.2 phase 2 is a file
//! rewritten under it, no restart). A `begin` while a rotation is still in
//! flight begins nothing: the drain finishes one handover before the next.
//!
//! What §6.2 says, as code ([`ROTATION_SAFETY`], [`ROTATION_LIVENESS`]):
//!
//! - "A single-token row cannot rotate without a window in which one side
//!   is wrong": the three phases leave no such window, so no sibling ever
//!   answers memoria 401 while the drain keeps to them, interrupted or not
//!   ([`RotationTruth::judge_calls`], over every call of the run).
//! - A sibling accepts no token it should not: no call is accepted on a
//!   token whose epoch phase 3 retired there before it, none as a consumer
//!   other than memoria (the world's one), and a probe with the retired
//!   token, made once phase 3 retires it, is answered 401
//!   ([`RotationTruth::phase`]).
//! - "Contracts acceptance … only after memoria is observed using the new
//!   one", and "each phase is idempotent and re-runnable": once the faults
//!   stop, the liveness check resumes the rotation in flight as the drain
//!   would (every phase to the end, [`RotationTruth::resume`]), lets the
//!   convergence rounds run, and then phase 3 must retire the old token
//!   everywhere, and every sibling's rulings come back on the new token:
//!   memoria calls it at the new epoch and is answered, and a member finds
//!   a team-visible item there with no line withheld
//!   ([`RotationTruth::complete`]).

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use serde::{Deserialize, Serialize};

use super::checks::Check;
use super::oracle::app_of;
use super::surfaces::from_page;
use crate::drain::{Drain, PhaseReport, Stop};
use crate::fake::faults::Faults;
use crate::fake::model::Role;
use crate::fake::server::{FakeSibling, UNAUTHENTICATED};
use crate::fake::trace::{CallKind, TraceEvent};
use crate::world::{MEMORIA_CONSUMER, Memoria, SIBLING_PORT, World};

/// A rotation check failed: a sibling answered memoria 401, or accepted a
/// token it should not (§6.2).
pub const ROTATION_SAFETY: &str = "[safety:rotation]";
/// Once the faults stop, the rotation did not complete, or a sibling's
/// rulings did not come back on the new token (§6.2).
pub const ROTATION_LIVENESS: &str = "[liveness:rotation]";

/// Mixed into the scenario's seed for the tokens the drain mints, so a
/// rotation's tokens are the seed's and no other stream's.
const DRAIN_SEED: u64 = 0x726f_7461_7465_2121;

/// Simulated time the completing check gives memoria's pulls after the
/// question that starts them, in ms: as the oracle's own
/// [`super::oracle::PULL_SETTLE_MS`].
const SETTLE_MS: u64 = super::oracle::PULL_SETTLE_MS;

/// Calls a failed check names, at most; the rest are counted.
const CALLS_SHOWN_MAX: usize = 6;

/// One step of the operator drain's rotation (§6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RotationPhase {
    /// A new rotation of memoria's tokens at every sibling begins (nothing
    /// is written yet).
    Begin,
    /// Phase 1: the new token accepted beside the old.
    Expand,
    /// Phase 2: the new token delivered to memoria as its token file.
    Switch,
    /// Phase 3: the old token retired where memoria was seen using the new.
    Contract,
}

impl RotationPhase {
    /// Its name in the timeline.
    pub fn name(self) -> &'static str {
        match self {
            RotationPhase::Begin => "begins",
            RotationPhase::Expand => "phase 1 (expand)",
            RotationPhase::Switch => "phase 2 (switch)",
            RotationPhase::Contract => "phase 3 (contract)",
        }
    }
}

/// What the oracle knows of the rotations beside the fakes.
pub(super) struct RotationTruth {
    /// The first rotation's drain, made before the run (its old tokens are
    /// the world's).
    first: Drain,
    /// The rotation in flight, or the last one.
    current: Option<Drain>,
    /// Rotations begun.
    begun: u64,
    seed: u64,
    /// Per app: each epoch phase 3 retired there for memoria, and when
    /// (simulated ms).
    retired: BTreeMap<String, Vec<(u32, u64)>>,
    /// Trace positions of the oracle's own probes: their 401 is expected.
    probes: Vec<usize>,
    /// Trace position judged so far.
    scanned: usize,
}

fn fail(invariant: &str, what: String, saw: String) -> Check {
    Check {
        expected: format!("{invariant} {what}"),
        actual: saw,
        ok: false,
    }
}

/// A passing check that says what the drain did: the timeline shows a
/// passing check's `expected` only, so the report goes there.
fn note(what: String, saw: String) -> Check {
    Check {
        expected: format!("{what}: {saw}"),
        actual: saw,
        ok: true,
    }
}

/// A phase's report, content-free: apps only, never a token.
fn shown(r: &PhaseReport) -> String {
    let mut parts = vec![];
    for (label, apps) in [
        ("changed", &r.changed),
        ("unchanged", &r.unchanged),
        ("not reached", &r.not_reached),
    ] {
        if !apps.is_empty() {
            parts.push(format!("{label} {}", apps.join(" ")));
        }
    }
    for (app, why) in &r.refused {
        parts.push(format!("refused {app} ({why})"));
    }
    if parts.is_empty() {
        "nothing to do".into()
    } else {
        parts.join("; ")
    }
}

impl RotationTruth {
    /// The truth beside `world`'s siblings `apps`, in the drain's order,
    /// its tokens minted from `seed`.
    pub(super) fn new(world: &World, apps: &[String], seed: u64) -> RotationTruth {
        let apps: Vec<&str> = apps.iter().map(String::as_str).collect();
        RotationTruth {
            first: Drain::new(world, MEMORIA_CONSUMER, &apps, seed ^ DRAIN_SEED),
            current: None,
            begun: 0,
            seed,
            retired: BTreeMap::new(),
            probes: vec![],
            scanned: 0,
        }
    }

    /// Whether the rotation in flight is done: at every sibling the new
    /// token is accepted and the old one is not (the fakes' own rows).
    fn done(&self, fakes: &BTreeMap<String, FakeSibling>) -> bool {
        let Some(d) = &self.current else {
            return true;
        };
        d.apps().iter().all(|app| {
            fakes.get(app).is_none_or(|f| {
                f.token_epoch(MEMORIA_CONSUMER, d.old_token(app)).is_none()
                    && f.token_epoch(MEMORIA_CONSUMER, d.new_token(app)).is_some()
            })
        })
    }

    /// Runs one `rotation` event: `phase`, stopped after `reach` siblings
    /// when given. Returns a note of what the drain did, and the failed
    /// checks of the probes phase 3 makes.
    ///
    /// # Errors
    /// If memoria cannot be reached.
    pub(super) async fn phase(
        &mut self,
        m: &Memoria,
        fakes: &BTreeMap<String, FakeSibling>,
        trace: &crate::fake::trace::Trace,
        phase: RotationPhase,
        reach: Option<usize>,
    ) -> Result<Vec<Check>, String> {
        let stop = reach.map_or(Stop::AtEnd, Stop::After);
        if phase == RotationPhase::Begin {
            if !self.done(fakes) {
                return Ok(vec![note(
                    "drain: a rotation is still in flight, so none begins".into(),
                    "not begun".into(),
                )]);
            }
            self.begun += 1;
            let next = match &self.current {
                None => self.first.clone(),
                Some(d) => d.next(self.seed ^ DRAIN_SEED ^ self.begun),
            };
            self.current = Some(next);
            return Ok(vec![note(
                format!("drain: rotation {} begins", self.begun),
                "begun".into(),
            )]);
        }
        let Some(d) = self.current.clone() else {
            return Ok(vec![note(
                format!("drain: {} with no rotation begun", phase.name()),
                "nothing to do".into(),
            )]);
        };
        let report = match phase {
            RotationPhase::Expand => d.expand(stop),
            RotationPhase::Switch => d.switch(m, stop),
            _ => return self.contract(&d, fakes, trace, stop).await,
        };
        Ok(vec![note(
            format!("drain: rotation {} {}", self.begun, phase.name()),
            shown(&report),
        )])
    }

    /// Phase 3 with `stop`: the retirements recorded, and each sibling it
    /// retired at probed with the retired token.
    async fn contract(
        &mut self,
        d: &Drain,
        fakes: &BTreeMap<String, FakeSibling>,
        trace: &crate::fake::trace::Trace,
        stop: Stop,
    ) -> Result<Vec<Check>, String> {
        let epochs: BTreeMap<String, Option<u32>> = d
            .apps()
            .into_iter()
            .map(|app| {
                let e = fakes
                    .get(&app)
                    .and_then(|f| f.token_epoch(MEMORIA_CONSUMER, d.old_token(&app)));
                (app, e)
            })
            .collect();
        let report = d.contract(stop);
        let now = super::roster::now_ms();
        let mut out = vec![note(
            format!(
                "drain: rotation {} {}",
                self.begun,
                RotationPhase::Contract.name()
            ),
            shown(&report),
        )];
        for app in &report.changed {
            if let Some(Some(epoch)) = epochs.get(app) {
                self.retired
                    .entry(app.clone())
                    .or_default()
                    .push((*epoch, now));
            }
            let Some(fake) = fakes.get(app) else { continue };
            out.extend(self.probe(fake, d.old_token(app), trace).await);
        }
        Ok(out)
    }

    /// A sibling refuses the token phase 3 just retired there (§6.2): one
    /// S1 call carrying it, answered 401, unless a fault is on at the
    /// sibling (the probe would be answered by the fault, or wake a cold
    /// sibling memoria is about to call). Returns only a failed check.
    async fn probe(
        &mut self,
        fake: &FakeSibling,
        retired: &str,
        trace: &crate::fake::trace::Trace,
    ) -> Vec<Check> {
        if fake.faults().get() != Faults::default() {
            return vec![];
        }
        let host = fake.host().to_owned();
        let from = trace.len();
        let Ok(request) = http::Request::builder()
            .method("GET")
            .uri("/s1/feed")
            .header(http::header::HOST, host.as_str())
            .header(http::header::AUTHORIZATION, format!("Bearer {retired}"))
            .body(Full::new(Bytes::new()))
        else {
            return vec![];
        };
        let status = memoria::exchange(&crate::net::TurmoilDialer, &host, SIBLING_PORT, request)
            .await
            .map(|r| r.status);
        if let Some(i) = trace.with(|all| {
            (from..all.len()).find(|i| {
                all[*i].callee == host
                    && all[*i].call == CallKind::S1
                    && all[*i].caller == UNAUTHENTICATED
            })
        }) {
            self.probes.push(i);
        }
        match status {
            Ok(401) => vec![],
            other => vec![fail(
                ROTATION_SAFETY,
                format!(
                    "{} refuses memoria's token once phase 3 retired it there (§6.2)",
                    app_of(&host)
                ),
                format!("{other:?}"),
            )],
        }
    }

    /// Whether trace position `i` is one of the oracle's own probes.
    pub(super) fn is_probe(&self, i: usize) -> bool {
        self.probes.contains(&i)
    }

    /// Judges every sibling call since the last judgement (§6.2): none is
    /// answered 401 but the oracle's own probes (the handover leaves no
    /// window in which one side is wrong); none is accepted as another
    /// consumer; none is accepted on an epoch phase 3 retired there before
    /// it arrived. Returns only failed checks, one per kind.
    pub(super) fn judge_calls(&mut self, all: &[TraceEvent]) -> Vec<Check> {
        let from = self.scanned.min(all.len());
        self.scanned = all.len();
        let (mut refused, mut other, mut stale) = (vec![], vec![], vec![]);
        for (i, e) in all.iter().enumerate().skip(from) {
            let app = app_of(&e.callee).to_owned();
            if e.status == Some(401) && !self.probes.contains(&i) {
                refused.push(format!("{app} {:?}", e.call));
            }
            if e.caller != UNAUTHENTICATED && e.caller != MEMORIA_CONSUMER {
                other.push(format!("{app} as {}", e.caller));
            }
            if e.caller == MEMORIA_CONSUMER
                && let Some(epoch) = e.epoch
                && self
                    .retired
                    .get(&app)
                    .is_some_and(|r| r.iter().any(|(x, t)| *x == epoch && *t < e.at_ms))
            {
                stale.push(format!("{app} {:?} at epoch {epoch}", e.call));
            }
        }
        // The first few of each, and how many more.
        let few = |v: Vec<String>| {
            let more = v.len().saturating_sub(CALLS_SHOWN_MAX);
            let mut shown: Vec<String> = v.into_iter().take(CALLS_SHOWN_MAX).collect();
            if more > 0 {
                shown.push(format!("{more} more"));
            }
            shown
        };
        let (refused, other, stale) = (few(refused), few(other), few(stale));
        let mut out = vec![];
        if !refused.is_empty() {
            out.push(fail(
                ROTATION_SAFETY,
                "no sibling answers memoria 401 while the drain keeps to §6.2's three phases, interrupted or not: the handover leaves no window in which one side is wrong".into(),
                format!("401 on {}", refused.join(", ")),
            ));
        }
        if !other.is_empty() {
            out.push(fail(
                ROTATION_SAFETY,
                "a sibling accepts memoria's calls as memoria, never on another consumer's token (§6.2, §6.3)".into(),
                other.join(", "),
            ));
        }
        if !stale.is_empty() {
            out.push(fail(
                ROTATION_SAFETY,
                "a sibling accepts no call on a token phase 3 retired there (§6.2)".into(),
                stale.join(", "),
            ));
        }
        out
    }

    /// Before the liveness check: the rotation in flight resumed as the
    /// drain resumes one, phases 1 and 2 run again to the end (§6.2: each
    /// idempotent and re-runnable). Returns a note per phase.
    pub(super) fn resume(&self, m: &Memoria) -> Vec<Check> {
        let Some(d) = &self.current else {
            return vec![];
        };
        vec![
            note(
                format!("drain: rotation {} resumed, phase 1 to the end", self.begun),
                shown(&d.expand(Stop::AtEnd)),
            ),
            note(
                format!("drain: rotation {} resumed, phase 2 to the end", self.begun),
                shown(&d.switch(m, Stop::AtEnd)),
            ),
        ]
    }

    /// After the convergence rounds (memoria has called every sibling with
    /// the token delivered in [`RotationTruth::resume`]): phase 3 to the
    /// end must retire the old token everywhere (memoria was seen using the
    /// new one), and then each sibling's rulings come back on the new
    /// token: memoria calls it at the new epoch and is answered 200, and a
    /// member of `readers` asking for a team-visible item there finds it
    /// with no line for its app. Returns the failed checks, or one passing.
    ///
    /// # Errors
    /// If memoria cannot be reached.
    pub(super) async fn complete(
        &mut self,
        m: &mut Memoria,
        fakes: &BTreeMap<String, FakeSibling>,
        trace: &crate::fake::trace::Trace,
        readers: &[String],
    ) -> Result<Vec<Check>, String> {
        let Some(d) = self.current.clone() else {
            return Ok(vec![]);
        };
        let mut out = self.contract(&d, fakes, trace, Stop::AtEnd).await?;
        if !self.done(fakes) {
            out.push(fail(
                ROTATION_LIVENESS,
                format!(
                    "once the faults stop and rotation {} is resumed, memoria is seen using its new token at every sibling, so phase 3 retires the old one everywhere (§6.2)",
                    self.begun
                ),
                out.last().map_or(String::new(), |c| c.actual.clone()),
            ));
            return Ok(out);
        }
        let from = trace.len();
        // Simulated time only, no calendar skip (a suite-shape roster copy
        // is not aged past its TTL here): past memoria's least interval
        // between pulls, a question starts a pull of every sibling (§6.1).
        if let Some(first) = readers.first() {
            tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
            let _ = m.search(first, "rotation").await;
            tokio::time::sleep(Duration::from_millis(SETTLE_MS)).await;
        }
        let mut answered = 0usize;
        for app in d.apps() {
            let Some(fake) = fakes.get(&app) else {
                continue;
            };
            let Some(epoch) = fake.token_epoch(MEMORIA_CONSUMER, d.new_token(&app)) else {
                continue;
            };
            let ask: Option<(String, String, String)> = fake.model().with(|mm| {
                mm.items().filter(|i| i.team_visible()).find_map(|i| {
                    let r = readers.iter().find(|r| {
                        !i.removed.contains(*r)
                            && mm.person(r).map(|p| p.role) == Some(Role::Member)
                    })?;
                    let tag = i.current().title.split_whitespace().last()?.to_string();
                    Some((r.clone(), tag, i.current().title.clone()))
                })
            });
            let mut found = true;
            if let Some((reader, q, title)) = &ask {
                let page = m.search(reader, q).await;
                let seen = from_page(&page.response.body);
                found = seen.shown.iter().any(|r| r.app == app && r.title == *title)
                    && !seen.names(&app);
            }
            let all = trace.since(from);
            let calls: Vec<&TraceEvent> = all
                .iter()
                .filter(|e| app_of(&e.callee) == app && e.caller == MEMORIA_CONSUMER)
                .collect();
            let on_new = calls
                .iter()
                .any(|e| e.epoch == Some(epoch) && e.status == Some(200));
            if on_new && found {
                answered += 1;
            } else {
                out.push(fail(
                    ROTATION_LIVENESS,
                    format!(
                        "once rotation {} is complete, {app}'s rulings come back: memoria calls it on the new token and is answered, and a member finds its item with no line withheld (§6.2, §4.1)",
                        self.begun
                    ),
                    format!(
                        "{} calls by memoria, answered on the new token {on_new}, the item {}",
                        calls.len(),
                        if ask.is_none() {
                            "not asked (none team-visible)"
                        } else if found {
                            "found"
                        } else {
                            "not found, or its app named"
                        }
                    ),
                ));
            }
        }
        if !out.iter().any(|c| !c.ok) {
            out.push(note(
                format!(
                    "{ROTATION_LIVENESS} rotation {} complete: the old token retired everywhere, every sibling answers memoria on the new",
                    self.begun
                ),
                format!("{answered} siblings answered"),
            ));
        }
        Ok(out)
    }
}
