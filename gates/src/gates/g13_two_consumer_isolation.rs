//! Gate 13 (§10, §6.1, §6.2): two-consumer isolation on the sibling endpoints — what one consumer does never changes what another sees.
//!
//! Requirement: "Two-consumer isolation on the sibling endpoints." Two
//! memoria instances, two consumers of the same fake siblings (Sheets and
//! Docs), each with its own token at each, its own data directory and its
//! own cursors. Consumer A is memoria's own ([`MEMORIA_CONSUMER`]);
//! consumer B is a second instance ([`CONSUMER_B`]). Each case runs one
//! script twice at one seed: once with A present and acting (advancing its
//! cursor, having its token revoked, rotating it, reading, re-announcing),
//! and once with A absent. What B saw (every call it made with what it was
//! answered: its S1 rows, its S1a items, its S2 answers, its S3 fetches,
//! each call's status and token epoch, and every page of results it was
//! shown) must be the same in both runs, step by step.
//!
//! Equality between two runs proves nothing if A did nothing, so each case
//! first asserts that A's action happened (A's own calls, A's own outage,
//! A's own new epoch, A's own re-announce), and that B saw something to
//! compare (rows, S2 answers and results on its pages). The fakes keep a
//! per-consumer retention TTL ([`FakeSibling::set_consumer_ttl_ms`], §6.1)
//! so that one consumer's contact keeping another's row alive is visible:
//! B idle past the TTL must be told to re-announce whether or not A is busy.
//!
//! Size: over 700 lines because gate 13's five cases share one rig (two
//! consumers, the watch that records B's view step by step, the two-run
//! comparison); split, a case would sit apart from the comparison it needs.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use memoria_simulator::{
    CallDetail, Drain, FakeSibling, MEMORIA_CONSUMER, Memoria, OWNERS, Rung, SiblingSpec, Stop,
    Trace, TraceEvent, World,
};

use crate::rigs::sim::{check, run_consumers};
use crate::{Case, Ctx, Failure, Gate};

/// The second consumer: another memoria of the same team.
pub const CONSUMER_B: &str = "memoria-b";
/// The siblings both consumers read.
pub const APPS: [&str; 2] = ["sheets", "docs"];
/// Team items each sibling holds that the query matches.
pub const ITEMS_PER_APP: usize = 3;
/// The fakes' per-consumer retention TTL in the cases that use it, in
/// simulated ms (§6.1): short enough to pass within one run.
pub const CONSUMER_TTL_MS: u64 = 60_000;
/// How long one idle round lasts, in simulated ms; four of them pass the TTL.
pub const ROUND_MS: u64 = 25_000;
/// Idle rounds: together past [`CONSUMER_TTL_MS`].
pub const ROUNDS: usize = 4;

/// Gate 13.
pub static GATE: Gate = Gate {
    id: "13",
    title: "Two-consumer isolation on the sibling endpoints",
    gates_md: &["Two-consumer isolation on the sibling endpoints"],
    sections: &["§10", "§6.1", "§6.2"],
    requirement: "With two memoria consumers of the same siblings, one consumer's cursor advance, token revocation, token rotation, reads and re-announce (also one opened while the other's is being read) never change what the other sees: its S1 rows, S1a items, S2 answers, S3 fetches, the status and token epoch of every call it makes, and its search results, step by step, are the same as in a run where the first consumer is absent.",
    cases: &[
        Case {
            id: "13/one-consumers-cursor-advance-never-changes-the-others-feed",
            desc: "Sheets and Docs keep a 60 s per-consumer TTL. B reads once and idles; meanwhile items are revised four times and A polls to the head after each (A's S1 rows carry the revisions, presence). B, past its TTL, polls: it is told to re-announce (410) exactly as when A is absent, and its rows, S2 answers and results match the run without A.",
            run: cursor,
        },
        Case {
            id: "13/one-consumers-token-revoked-never-refuses-the-other",
            desc: "A's token is revoked at both siblings and A is never given the new one: A's search names Sheets and Docs as withheld and the siblings answer A 401 (presence); A's Docs token file then removed, A calls Docs not at all. B's searches and polls before and after, its tokens' epoch and every answer it gets, match the run without A, and B's token is still accepted at both siblings.",
            run: token,
        },
        Case {
            id: "13/one-consumers-rotation-never-changes-what-the-other-sees",
            desc: "A's tokens are rotated through all three phases (phase 1 stopped after Sheets and resumed, phase 2, then phase 3 once A was seen using the new token), with B searching and polling between the steps. A ends on its new token at both siblings with its old one refused (presence); B's calls carry its own first token throughout and everything B sees matches the run without A.",
            run: rotation,
        },
        Case {
            id: "13/one-consumers-reads-and-re-announce-never-change-what-the-other-sees",
            desc: "A searches as Ana and as Bea, twice each (A's S2 calls with both subjects, presence); A then idles past its TTL while B keeps polling, and A's next poll is told to re-announce and A reads a whole S1a (presence). B's S1 rows, S2 answers for Ana and Bea, and results match the run without A.",
            run: reads,
        },
        Case {
            id: "13/one-consumers-re-announce-never-changes-the-pages-of-anothers",
            desc: "Sheets pages its S1a two records at a time. B opens a re-announce and reads its first page; a team item is added that sorts first; A opens a re-announce of its own, whose first page lists the new item (presence: A's snapshot differs from B's); B reads the rest of its re-announce by its page tokens to the close. B's S1a items, close count and statuses match the run without A: a page token continues the announce that issued it, never another consumer's.",
            run: announce,
        },
    ],
};

/// What B saw at one step: its calls (rendered without their time, sorted:
/// concurrent calls may arrive in either order) and the page it was shown.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Step {
    name: String,
    calls: Vec<String>,
    page: Option<Vec<String>>,
}

/// Every step B saw, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Seen(Vec<Step>);

/// One of B's calls without its arrival time.
fn render(e: &TraceEvent) -> String {
    let detail = serde_json::to_string(&e.detail).unwrap_or_default();
    format!(
        "{} {:?} status={:?} epoch={:?} faults={:?} {detail}",
        e.callee, e.call, e.status, e.epoch, e.faults
    )
}

/// Whether a rendered call of B's is an S1 read.
fn is_s1(rendered: &str) -> bool {
    rendered.contains(" S1 status=")
}

/// What a case's script is handed: the trace, the fakes, A's drain, B's
/// token at each app (for a case that calls a sibling as B directly).
#[derive(Clone)]
struct Rig {
    trace: Trace,
    fakes: Vec<FakeSibling>,
    drain: Drain,
    b_tokens: std::collections::BTreeMap<String, String>,
    canary: String,
}

/// Records B's view, step by step.
struct Watch {
    trace: Trace,
    from: usize,
    seen: Seen,
    /// B's S1 calls made during its searches, not yet noted. A question
    /// pulls when the last pull is old enough (§6.1), and A's own steps
    /// make simulated time pass, so with A present a search of B's may pull
    /// where without A it does not: these calls are noted with B's next
    /// poll instead, as part of the feed B read up to there.
    carried: Vec<String>,
}

impl Watch {
    fn new(trace: &Trace) -> Self {
        Self {
            trace: trace.clone(),
            from: trace.events().len(),
            seen: Seen::default(),
            carried: Vec::new(),
        }
    }

    /// Every event since the last note, and B's among them rendered.
    fn take(&mut self) -> (Vec<TraceEvent>, Vec<String>) {
        let events = self.trace.events();
        let new = events[self.from..].to_vec();
        self.from = events.len();
        let mut mine: Vec<String> = new
            .iter()
            .filter(|e| e.caller == CONSUMER_B)
            .map(render)
            .collect();
        mine.sort();
        (new, mine)
    }

    /// Notes B's calls since the last note under `name`.
    fn note(&mut self, name: &str, page: Option<Vec<String>>) {
        let (_, calls) = self.take();
        self.seen.0.push(Step {
            name: name.to_owned(),
            calls,
            page,
        });
    }

    /// Forgets what happened since the last note (A's own steps).
    fn skip(&mut self) -> Vec<TraceEvent> {
        let (events, _) = self.take();
        events
    }

    /// B searches as `owner`; notes what it called and the page, and
    /// carries the S1 calls its question's pull made to the next poll.
    async fn search(&mut self, b: &mut Memoria, owner: &str, q: &str, name: &str) {
        let page = b.search(owner, q).await;
        b.settle_follow_ups().await;
        let (_, calls) = self.take();
        let (s1, calls): (Vec<String>, Vec<String>) = calls.into_iter().partition(|c| is_s1(c));
        self.carried.extend(s1);
        let p = crate::rigs::page::of(&page.response);
        let mut shown = p.withheld();
        shown.extend(p.reconciling());
        shown.extend(
            p.results()
                .into_iter()
                .map(|r| format!("{}: {}", r.app, r.text)),
        );
        self.seen.0.push(Step {
            name: name.to_owned(),
            calls,
            page: Some(shown),
        });
    }

    /// B is asked a question, which pulls every sibling that is due (§6.1); notes what it called.
    async fn sync(&mut self, b: &mut Memoria, name: &str) {
        b.question_pulls(OWNERS[0]).await;
        b.settle_follow_ups().await;
        let (_, mut calls) = self.take();
        calls.append(&mut self.carried);
        // A poll that found nothing new says nothing about isolation, and
        // how many of them B made depends on the time A's steps took.
        calls.retain(|c| {
            !(is_s1(c) && c.contains("status=Some(200)") && c.contains(r#""rows":[]"#))
        });
        calls.sort();
        self.seen.0.push(Step {
            name: name.to_owned(),
            calls,
            page: None,
        });
    }
}

fn body(canary: &str, app: &str, i: usize) -> String {
    format!("# Note {i}\n\nThe {canary} figure is tag{app}{i} this quarter.\n")
}

fn host(app: &str) -> String {
    format!("acme.{app}.oficina.works")
}

/// Two siblings with [`ITEMS_PER_APP`] team items each, both consumers on
/// token files, B added; with `ttl`, the fakes keep [`CONSUMER_TTL_MS`].
fn fixture(seed: u64, canary: &str, ttl: bool) -> World {
    let mut world = World::new(seed, APPS.iter().map(|a| SiblingSpec::own(a)).collect());
    world.use_token_files();
    world.add_consumer(CONSUMER_B);
    for app in APPS {
        let fake = world.fake(app);
        if ttl {
            fake.set_consumer_ttl_ms(Some(CONSUMER_TTL_MS));
        }
        fake.model().with(|m| {
            for i in 0..ITEMS_PER_APP {
                m.add_item(
                    &format!("{app}-{i}"),
                    Rung::Team,
                    "Note",
                    &body(canary, app, i),
                )
                .expect("item");
            }
        });
    }
    world
}

/// Runs `script` with A present (`with_a`) or absent and returns what B saw.
fn observe<F, Fut>(
    ctx: &mut Ctx,
    canary: &str,
    ttl: bool,
    with_a: bool,
    script: F,
) -> Result<Seen, Failure>
where
    F: FnOnce(Option<Memoria>, Memoria, Rig) -> Fut + 'static,
    Fut: Future<Output = Result<Seen, String>> + 'static,
{
    let world = fixture(ctx.seed(), canary, ttl);
    let rig = Rig {
        trace: world.trace().clone(),
        fakes: APPS.iter().map(|a| world.fake(a).clone()).collect(),
        drain: Drain::new(&world, MEMORIA_CONSUMER, &APPS, ctx.seed() ^ 0x13),
        b_tokens: APPS
            .iter()
            .map(|a| {
                (
                    (*a).to_owned(),
                    world.consumer_token(CONSUMER_B, &host(a)).to_owned(),
                )
            })
            .collect(),
        canary: canary.to_owned(),
    };
    let names: &[&str] = if with_a {
        &[MEMORIA_CONSUMER, CONSUMER_B]
    } else {
        &[CONSUMER_B]
    };
    let out: Arc<Mutex<Option<Seen>>> = Arc::default();
    let slot = out.clone();
    run_consumers(&world, names, move |mut all| async move {
        let b = all.pop().ok_or("no consumer B")?;
        let a = all.pop();
        let seen = script(a, b, rig).await?;
        *slot.lock().map_err(|_| "the result slot")? = Some(seen);
        Ok(())
    })?;
    let seen = out.lock().ok().and_then(|mut s| s.take());
    seen.ok_or_else(|| Failure::new("the script returns what B saw", "nothing"))
}

/// B saw something to compare: S1 rows, S2 answers and results.
fn substantial(seen: &Seen) -> Result<(), Failure> {
    let calls: Vec<&String> = seen.0.iter().flat_map(|s| &s.calls).collect();
    let rows = calls.iter().any(|c| c.contains("\"rows\":[{"));
    let answers = calls.iter().any(|c| c.contains("\"result\":\"VISIBLE\""));
    let results = seen.0.iter().any(|s| {
        s.page
            .as_ref()
            .is_some_and(|p| p.iter().any(|l| l.contains("tag")))
    });
    if rows && answers && results {
        Ok(())
    } else {
        Err(Failure::new(
            "B saw S1 rows, S2 answers and results (presence: there is something to compare)",
            format!("rows {rows}, answers {answers}, results {results}"),
        ))
    }
}

/// B's view with A present equals B's view with A absent, step by step.
fn same(both: &Seen, alone: &Seen) -> Result<(), Failure> {
    substantial(alone)?;
    for (i, (x, y)) in both.0.iter().zip(&alone.0).enumerate() {
        if x != y {
            return Err(Failure::new(
                format!(
                    "step {i} ({}): B sees with A present what it sees with A absent",
                    y.name
                ),
                format!("with A: {x:?}\nwithout A: {y:?}"),
            ));
        }
    }
    if both.0.len() == alone.0.len() {
        Ok(())
    } else {
        Err(Failure::new(
            "B takes the same steps in both runs",
            format!("{} and {} steps", both.0.len(), alone.0.len()),
        ))
    }
}

/// Runs `script` both ways and compares.
fn compare<F, Fut>(ctx: &mut Ctx, ttl: bool, script: F) -> Result<(), Failure>
where
    F: Fn(Option<Memoria>, Memoria, Rig) -> Fut + Clone + 'static,
    Fut: Future<Output = Result<Seen, String>> + 'static,
{
    let canary = ctx.canary();
    let both = observe(ctx, &canary, ttl, true, script.clone())?;
    let alone = observe(ctx, &canary, ttl, false, script)?;
    same(&both, &alone)
}

/// Both consumers warmed up; B's wake noted.
async fn wake(a: &mut Option<Memoria>, b: &mut Memoria, w: &mut Watch) -> Result<(), String> {
    if let Some(a) = a.as_mut() {
        a.warmed_up().await?;
    }
    b.warmed_up().await?;
    w.note("wake", None);
    Ok(())
}

/// A's calls among `events`.
fn calls_of_a(events: &[TraceEvent]) -> Vec<&TraceEvent> {
    events
        .iter()
        .filter(|e| e.caller == MEMORIA_CONSUMER)
        .collect()
}

async fn cursor_script(mut a: Option<Memoria>, mut b: Memoria, rig: Rig) -> Result<Seen, String> {
    let mut w = Watch::new(&rig.trace);
    wake(&mut a, &mut b, &mut w).await?;
    w.search(&mut b, OWNERS[0], &rig.canary, "B's first search")
        .await;
    for round in 0..ROUNDS {
        for (fake, app) in rig.fakes.iter().zip(APPS) {
            fake.model()
                .with(|m| {
                    m.revise(
                        &format!("{app}-{}", round % ITEMS_PER_APP),
                        "Note",
                        &body(&rig.canary, app, round + 10),
                    )
                })
                .map_err(|e| e.to_string())?;
        }
        if let Some(a) = a.as_mut() {
            a.question_pulls(OWNERS[0]).await;
            let events = w.skip();
            let rows = calls_of_a(&events)
                .iter()
                .filter(|e| {
                    matches!(&e.detail, CallDetail::S1 { rows, .. } if !rows.is_empty())
                        && e.status == Some(200)
                })
                .count();
            check(
                rows == APPS.len(),
                format!(
                    "round {round}: A polled each sibling to the head and got the new rows (presence)"
                ),
                format!("{rows} S1 answers with rows"),
            )?;
        }
        tokio::time::sleep(Duration::from_millis(ROUND_MS)).await;
    }
    w.skip();
    b.question_pulls(OWNERS[0]).await;
    b.settle_follow_ups().await;
    let (_, calls) = w.take();
    let expired = calls
        .iter()
        .filter(|c| c.contains("status=Some(410)"))
        .count();
    check(
        expired == APPS.len(),
        "B, idle past its TTL, is told to re-announce by both siblings, whatever A did",
        format!("{expired} answers 410 in {calls:?}"),
    )?;
    w.seen.0.push(Step {
        name: "B polls past its TTL".to_owned(),
        calls,
        page: None,
    });
    w.sync(&mut b, "B polls again").await;
    w.search(
        &mut b,
        OWNERS[0],
        &rig.canary,
        "B searches after the re-announce",
    )
    .await;
    Ok(w.seen)
}

fn cursor(ctx: &mut Ctx) -> Result<(), Failure> {
    compare(ctx, true, cursor_script)
}

async fn token_script(mut a: Option<Memoria>, mut b: Memoria, rig: Rig) -> Result<Seen, String> {
    let mut w = Watch::new(&rig.trace);
    wake(&mut a, &mut b, &mut w).await?;
    w.search(&mut b, OWNERS[0], &rig.canary, "B before").await;
    if let Some(a) = a.as_mut() {
        rig.drain.revoke();
        let page = a.search(OWNERS[0], &rig.canary).await;
        let events = w.skip();
        let refused = events
            .iter()
            .filter(|e| e.caller == "unauthenticated" && e.status == Some(401))
            .count();
        let lines = crate::rigs::page::of(&page.response).withheld();
        check(
            lines.len() == APPS.len() && refused >= APPS.len(),
            "A's revoked token: A's page names both siblings as withheld and both answered 401 (presence)",
            format!("{lines:?}, {refused} refusals"),
        )?;
    }
    w.search(&mut b, OWNERS[0], &rig.canary, "B after A's revocation")
        .await;
    w.sync(&mut b, "B polls after A's revocation").await;
    if let Some(a) = a.as_mut() {
        a.remove_token_file("docs")?;
        a.search(OWNERS[0], &rig.canary).await;
        let events = w.skip();
        check(
            !events
                .iter()
                .any(|e| e.callee == host("docs") && e.caller != CONSUMER_B),
            "A, with no Docs token, calls Docs not at all",
            "a call reached Docs",
        )?;
    }
    w.search(
        &mut b,
        OWNERS[0],
        &rig.canary,
        "B after A lost its Docs token",
    )
    .await;
    let still = rig
        .fakes
        .iter()
        .all(|f| f.accepted_epochs().contains(&(CONSUMER_B.to_owned(), 1)));
    check(
        still,
        "B's own token is still accepted at both siblings",
        "one was retired",
    )?;
    Ok(w.seen)
}

fn token(ctx: &mut Ctx) -> Result<(), Failure> {
    compare(ctx, false, token_script)
}

async fn rotation_script(mut a: Option<Memoria>, mut b: Memoria, rig: Rig) -> Result<Seen, String> {
    let mut w = Watch::new(&rig.trace);
    wake(&mut a, &mut b, &mut w).await?;
    w.search(&mut b, OWNERS[0], &rig.canary, "B before").await;
    if a.is_some() {
        rig.drain.expand(Stop::After(1));
        w.skip();
    }
    w.search(
        &mut b,
        OWNERS[0],
        &rig.canary,
        "B after A's phase 1 at Sheets",
    )
    .await;
    if let Some(a) = a.as_mut() {
        rig.drain.expand(Stop::AtEnd);
        rig.drain.switch(a, Stop::AtEnd);
        a.search(OWNERS[0], &rig.canary).await;
        w.skip();
    }
    w.search(&mut b, OWNERS[0], &rig.canary, "B after A's phase 2")
        .await;
    w.sync(&mut b, "B polls after A's phase 2").await;
    if let Some(a) = a.as_mut() {
        let r = rig.drain.contract(Stop::AtEnd);
        check(
            r.changed.len() == APPS.len(),
            "A's phase 3 retires A's old token at both siblings",
            format!("{r:?}"),
        )?;
        a.search(OWNERS[0], &rig.canary).await;
        a.question_pulls(OWNERS[0]).await;
        let events = w.skip();
        let epochs: Vec<Option<u32>> = calls_of_a(&events).iter().map(|e| e.epoch).collect();
        check(
            !epochs.is_empty() && epochs.iter().all(|e| *e == Some(2)),
            "A's calls after its rotation carry its new token (epoch 2) (presence)",
            format!("{epochs:?}"),
        )?;
        let rows_a: Vec<Vec<u32>> = rig
            .fakes
            .iter()
            .map(|f| {
                f.accepted_epochs()
                    .into_iter()
                    .filter(|(c, _)| c == MEMORIA_CONSUMER)
                    .map(|(_, e)| e)
                    .collect()
            })
            .collect();
        check(
            rows_a.iter().all(|r| r == &[2]),
            "each sibling holds A's new token alone",
            format!("{rows_a:?}"),
        )?;
    }
    w.search(&mut b, OWNERS[0], &rig.canary, "B after A's phase 3")
        .await;
    w.sync(&mut b, "B polls after A's phase 3").await;
    Ok(w.seen)
}

fn rotation(ctx: &mut Ctx) -> Result<(), Failure> {
    compare(ctx, false, rotation_script)
}

async fn reads_script(mut a: Option<Memoria>, mut b: Memoria, rig: Rig) -> Result<Seen, String> {
    let mut w = Watch::new(&rig.trace);
    wake(&mut a, &mut b, &mut w).await?;
    if let Some(a) = a.as_mut() {
        for owner in OWNERS {
            a.search(owner, &rig.canary).await;
            a.search(owner, "tagsheets1").await;
        }
        let events = w.skip();
        let subjects: std::collections::BTreeSet<String> = calls_of_a(&events)
            .iter()
            .filter_map(|e| match &e.detail {
                CallDetail::S2 { subject, .. } => subject.clone(),
                _ => None,
            })
            .collect();
        check(
            subjects.len() == OWNERS.len(),
            "A asked S2 for Ana and for Bea (presence)",
            format!("{subjects:?}"),
        )?;
    }
    w.search(&mut b, OWNERS[0], &rig.canary, "B as Ana after A's reads")
        .await;
    w.search(&mut b, OWNERS[1], &rig.canary, "B as Bea after A's reads")
        .await;
    for round in 0..ROUNDS {
        w.sync(&mut b, &format!("B keeps polling, round {round}"))
            .await;
        tokio::time::sleep(Duration::from_millis(ROUND_MS)).await;
    }
    if let Some(a) = a.as_mut() {
        // The 410 marks the sibling; the next sync reads the announce.
        a.question_pulls(OWNERS[0]).await;
        a.question_pulls(OWNERS[0]).await;
        a.settle_follow_ups().await;
        let events = w.skip();
        let a_calls = calls_of_a(&events);
        let told = a_calls.iter().filter(|e| e.status == Some(410)).count();
        let closed = a_calls
            .iter()
            .filter(|e| {
                matches!(
                    &e.detail,
                    CallDetail::S1a {
                        close_count: Some(_),
                        ..
                    }
                )
            })
            .count();
        check(
            told == APPS.len() && closed == APPS.len(),
            "A, idle past its TTL while B polled, is told to re-announce and reads a whole S1a from both siblings (presence)",
            format!("{told} answers 410, {closed} closed announces"),
        )?;
    }
    w.sync(&mut b, "B polls after A's re-announce").await;
    w.search(
        &mut b,
        OWNERS[0],
        &rig.canary,
        "B as Ana after A's re-announce",
    )
    .await;
    w.search(
        &mut b,
        OWNERS[1],
        &rig.canary,
        "B as Bea after A's re-announce",
    )
    .await;
    Ok(w.seen)
}

fn reads(ctx: &mut Ctx) -> Result<(), Failure> {
    compare(ctx, true, reads_script)
}

/// Records per S1a page at Sheets in the announce case: small, so three
/// items and the markers span several pages.
pub const ANNOUNCE_PAGE_RECORDS: usize = 2;
/// The most S1a pages B reads in the announce case: its items and two
/// markers, two records a page, with room to spare.
pub const ANNOUNCE_PAGES_MAX: usize = 8;

/// One GET to `app`'s sibling with `token`, straight from the script (a
/// consumer's own client reads an announce in one go; this one stops
/// between pages): the status and the body as JSON.
async fn get_as(app: &str, token: &str, path: &str) -> Result<(u16, serde_json::Value), String> {
    let h = host(app);
    let request = http::Request::builder()
        .method("GET")
        .uri(path)
        .header(http::header::HOST, h.as_str())
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .map_err(|e| e.to_string())?;
    let r = memoria::exchange(
        &memoria_simulator::TurmoilDialer,
        &h,
        memoria_simulator::SIBLING_PORT,
        request,
    )
    .await
    .map_err(|e| e.to_string())?;
    let json = serde_json::from_slice(&r.body).unwrap_or(serde_json::Value::Null);
    Ok((r.status, json))
}

/// The next page token of an S1a page, if it has one.
fn next_page(page: &serde_json::Value) -> Option<String> {
    page.get("next_page")
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

async fn announce_script(mut a: Option<Memoria>, mut b: Memoria, rig: Rig) -> Result<Seen, String> {
    let mut w = Watch::new(&rig.trace);
    wake(&mut a, &mut b, &mut w).await?;
    w.search(&mut b, OWNERS[0], &rig.canary, "B's first search")
        .await;
    let sheets = &rig.fakes[0];
    sheets
        .model()
        .with(|m| m.set_announce_page_records(ANNOUNCE_PAGE_RECORDS));
    let b_token = rig.b_tokens.get("sheets").ok_or("B's Sheets token")?;
    let (status, first) = get_as("sheets", b_token, "/s1a/announce").await?;
    let mut next = next_page(&first);
    check(
        status == 200 && next.is_some(),
        "B's re-announce opens and spans more than one page (presence)",
        format!("{status}, next page {next:?}"),
    )?;
    w.note("B opens a re-announce", None);
    // Sorts before every `sheets-N`: it lands on the pages B has read.
    sheets
        .model()
        .with(|m| {
            m.add_item(
                "sheet-new",
                Rung::Team,
                "Note",
                &body(&rig.canary, "sheets", 9),
            )
        })
        .map_err(|e| e.to_string())?;
    if a.is_some() {
        let a_token = rig.drain.old_token("sheets");
        let (status, page) = get_as("sheets", a_token, "/s1a/announce").await?;
        check(
            status == 200 && page.to_string().contains("sheet-new"),
            "A's re-announce, opened after the item was added, lists it on its first page (presence)",
            format!("{status}"),
        )?;
        w.skip();
    }
    let mut closed = false;
    for _ in 0..ANNOUNCE_PAGES_MAX {
        let Some(token) = next.take() else {
            break;
        };
        let path = format!("/s1a/announce?page={token}");
        let (status, page) = get_as("sheets", b_token, &path).await?;
        if status != 200 {
            break;
        }
        next = next_page(&page);
        closed = next.is_none();
    }
    check(
        closed,
        "B reads its re-announce to the close by its page tokens",
        format!("still at {next:?}"),
    )?;
    w.note("B reads the rest of its re-announce", None);
    w.search(&mut b, OWNERS[0], &rig.canary, "B searches afterwards")
        .await;
    Ok(w.seen)
}

fn announce(ctx: &mut Ctx) -> Result<(), Failure> {
    compare(ctx, false, announce_script)
}

// The idle rounds together pass the TTL, or no consumer would expire.
const _: () = assert!(ROUNDS as u64 * ROUND_MS > CONSUMER_TTL_MS);
