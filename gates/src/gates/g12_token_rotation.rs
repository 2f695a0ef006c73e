//! Gate 12 (§10, §6.2): token rotation — all three phases, each interrupted and resumed, across a partial delivery to three siblings, with no search withheld for a credential; memoria's token at the home is read again on every pull too.
//!
//! Size: one gate's eleven cases over one rig (the drain, the phases, the token files); the house issue's cases-as-data split shrinks it, not a cut by line count.
//!
//! Requirement: "Token rotation — all three phases, each interrupted and
//! resumed, across a partial multi-sibling delivery." The world is memoria
//! and three fake siblings (Sheets, Docs, Calendar) in simulated time, one
//! seed; memoria reads its token at each sibling from a token file on
//! every call (`MEMORIA_SIBLING_TOKEN_<APP>_FILE`). The operator drain is
//! the simulator's [`Drain`]: phase 1 writes the new token beside the old
//! at each fake's consumers row, phase 2 rewrites memoria's token file,
//! phase 3 retires the old token only where the fake's trace shows memoria
//! calling with the new one. Each phase can stop after k of the three
//! siblings ([`Stop::After`]) and is run again to resume.
//!
//! What the cases read is the fakes' own record: every call's status and
//! the epoch of the token it carried (never the token). "No 401" is only
//! worth asserting where a 401 would be seen, so every clean search first
//! asserts that memoria called each sibling's S2 during it, and the walk
//! ends by probing each sibling with the retired token and seeing it
//! refused; the emergency case shows the same page withholding loudly
//! when the credential really is refused.
//!
//! Size: over 700 lines because gate 12's ten cases share one fixture
//! (three fakes, memoria on token files, the drain) and one clean-search
//! check, and each walks its phases step by step.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use memoria::exchange;
use memoria_simulator::{
    CallKind, Drain, DrainRefusal, FakeSibling, MEMORIA_CONSUMER, Memoria, OWNERS, PhaseReport,
    Rung, SIBLING_PORT, SiblingSpec, Stop, Trace, TurmoilDialer, World,
};

use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// The three siblings, in the drain's order.
pub const APPS: [&str; 3] = ["sheets", "docs", "calendar"];
/// Team items each sibling holds that the query matches.
pub const ITEMS_PER_APP: usize = 2;
/// memoria's first token at every sibling is epoch 1 there (§6.2).
const OLD_EPOCH: u32 = 1;
/// The rotated token is the next epoch.
const NEW_EPOCH: u32 = 2;

/// Gate 12.
pub static GATE: Gate = Gate {
    id: "12",
    title: "Token rotation: three phases, each interrupted and resumed, across a partial delivery",
    gates_md: &[
        "Token rotation: three phases, each interrupted and resumed, partial multi-sibling delivery",
    ],
    sections: &["§10", "§6.2"],
    requirement: "Across three siblings, each of §6.2's phases (expand acceptance, switch the sender, contract acceptance) interrupted after some siblings and resumed leaves every search at every step unwithheld, with no sibling answering memoria 401; memoria sends the new token once it is delivered, with no restart; the drain retires the old token at a sibling only after it has seen memoria use the new one there; phase 2 refuses a sibling that does not accept the new token yet; a rotation begun while a row holds two tokens is refused and evicts neither; a second rotation's new token takes a fresh epoch and is contracted for only once seen; re-running a phase changes nothing; an emergency revocation withholds loudly, naming each app, and recovers once the new token is delivered; a token that cannot be read makes no call and withholds that sibling loudly.",
    cases: &[
        Case {
            id: "12/searches-never-withhold-for-a-credential-through-every-interrupted-and-resumed-phase",
            desc: "Phase 1 stopped after Sheets, then resumed; phase 2 stopped after Sheets (a partial delivery), then resumed; phase 3 run while Docs and Calendar still carry the old token, then stopped after two siblings, then resumed. A search after every step shows all six passages and no withheld line, memoria called every sibling's S2 during it, and no sibling answered any call 401. At the end each sibling refuses the old token (401, recorded) and accepts the new.",
            run: walk,
        },
        Case {
            id: "12/memoria-sends-the-new-token-after-the-switch-with-no-restart",
            desc: "Before the switch every sibling sees memoria's old token (epoch 1), also once both are accepted; after phase 2 rewrites the token files, the same running memoria (no restart, the same instance) carries the new token (epoch 2) on its next S2 and S1 calls at every sibling.",
            run: new_token_without_restart,
        },
        Case {
            id: "12/the-drain-does-not-contract-before-it-observes-the-new-token",
            desc: "The new token is accepted everywhere and delivered for Sheets only. Before memoria has called anyone, phase 3 refuses at all three siblings as not observed and every old token is still accepted; after one search it retires Sheets' old token only, Docs and Calendar still refused and still accepting the old one, and the next search is clean. Presence half: once delivered everywhere and seen in use, phase 3 retires the old token at Docs and Calendar too.",
            run: no_contract_before_observation,
        },
        Case {
            id: "12/re-running-a-phase-changes-nothing",
            desc: "Each phase's first run changes all three siblings (presence); run again it changes nothing and refuses nothing: the accepted tokens and their epochs, and memoria's token files byte for byte, are as the first run left them; phase 1 run after phase 3 does not bring the old token back.",
            run: rerun_is_a_no_op,
        },
        Case {
            id: "12/an-emergency-revocation-is-loud-and-recovers",
            desc: "Emergency revocation retires the old token at every sibling before memoria has the new one: the next search shows no passage and one withheld line per app ('Sheets did not answer; 2 results withheld.', Docs, Calendar), and the siblings answered memoria 401. Delivered to Sheets only, Sheets renders and Docs and Calendar are still named; delivered everywhere, the page is whole again.",
            run: emergency_revocation,
        },
        Case {
            id: "12/phase-2-refuses-a-sibling-that-does-not-accept-the-new-token-yet",
            desc: "Phase 1 stopped after Sheets; phase 2 run to the end delivers to Sheets only and refuses Docs and Calendar as not expanded, their token files byte for byte as they were, and the next search is clean with the new token at Sheets and the old at Docs and Calendar. Phase 1 resumed, phase 2 delivers to Docs and Calendar (presence) and memoria carries the new token everywhere.",
            run: no_switch_before_expand,
        },
        Case {
            id: "12/a-rotation-begun-while-two-tokens-are-accepted-evicts-neither",
            desc: "Mid-rotation (the new token accepted everywhere, delivered to Sheets only), a second rotation's phase 1 is refused at every sibling as the consumers row being full: every row holds the two tokens it held, at their epochs, and the next search is clean, the new token at Sheets and the old at Docs and Calendar.",
            run: no_third_token,
        },
        Case {
            id: "12/a-second-rotation-contracts-only-once-it-observes-its-own-new-token",
            desc: "After one whole rotation, a second one: its phase 1 gives each sibling's new token an epoch no token there has held (3, never the current token's 2); delivered to Sheets only, phase 3 refuses at all three before memoria calls, and after a search retires the first rotation's token at Sheets only, every search clean; delivered everywhere and seen, it retires it at Docs and Calendar too (presence).",
            run: second_rotation,
        },
        Case {
            id: "12/a-token-file-that-cannot-be-read-makes-no-call-and-withholds-loudly",
            desc: "Docs answers a search first (presence). With Docs' token file removed, then empty, then only whitespace, a search makes no call to Docs at all (no call with an empty or remembered token) and names Docs as withheld while Sheets and Calendar render; the file restored, Docs renders again.",
            run: unreadable_token_file,
        },
        Case {
            id: "12/memorias-token-at-the-home-is-read-again-on-every-pull",
            desc: "Suite shape, memoria's token at the home in a token file: the roster pull succeeds (presence); the home switches to a new token and the next pull is refused (401, the check is real); the file is rewritten with the new token and the next pull is adopted, with no restart; the file emptied, no pull is made at all (the home sees none) and the pull fails for want of a token.",
            run: home_token_read_on_every_pull,
        },
    ],
};

fn body(canary: &str, app: &str, i: usize) -> String {
    format!("# Note {i}\n\nThe {canary} figure is tag{app}{i} this quarter.\n")
}

/// Three siblings with [`ITEMS_PER_APP`] team items each, memoria reading
/// token files; and the drain for memoria's tokens.
fn fixture(ctx: &mut Ctx) -> (World, Drain, String) {
    let canary = ctx.canary();
    let mut world = World::new(
        ctx.seed(),
        APPS.iter().map(|a| SiblingSpec::own(a)).collect(),
    );
    world.use_token_files();
    // Every sibling's passages are matched by their bodies, Calendar's too:
    // the owner has kept Calendar's bodies (§3.5's default is off).
    world.calendar_bodies(true);
    for app in APPS {
        world.fake(app).model().with(|m| {
            for i in 0..ITEMS_PER_APP {
                m.add_item(
                    &format!("{app}-{i}"),
                    Rung::Team,
                    "Note",
                    &body(&canary, app, i),
                )
                .expect("item");
            }
        });
    }
    let drain = Drain::new(&world, MEMORIA_CONSUMER, &APPS, ctx.seed() ^ 0x12);
    (world, drain, canary)
}

/// What every rotation case runs with: the fixture's trace and drain, the
/// canary its passages carry, the seed a second rotation is drawn from, and
/// each sibling's fake, in [`APPS`]' order.
struct Rig {
    trace: Trace,
    drain: Drain,
    canary: String,
    seed: u64,
    fakes: Vec<FakeSibling>,
}

impl Rig {
    /// A clean search ([`clean`]) after `step`.
    async fn clean(
        &self,
        m: &mut Memoria,
        step: &str,
    ) -> Result<BTreeMap<String, Option<u32>>, String> {
        clean(m, &self.trace, &self.canary, step).await
    }

    /// A clean search after `step`, after which memoria's S2 carried the
    /// epochs `at` at Sheets, Docs and Calendar (`claim` says so).
    async fn clean_at(
        &self,
        m: &mut Memoria,
        step: &str,
        at: [u32; 3],
        claim: impl AsRef<str>,
    ) -> Result<(), String> {
        let e = self.clean(m, step).await?;
        check(e == epochs(at), claim, format!("{e:?}"))
    }

    /// Each sibling's consumers row: the tokens it accepts for memoria, at
    /// their epochs.
    fn rows(&self) -> Vec<Vec<(String, u32)>> {
        self.fakes
            .iter()
            .map(FakeSibling::accepted_epochs)
            .collect()
    }

    /// The drain of a second rotation, from this one's new tokens.
    fn second(&self) -> Drain {
        self.drain.next(self.seed ^ 0x1212)
    }
}

/// Runs `scenario` in the fixture's world once memoria has warmed up.
fn rotating<F, Fut>(ctx: &mut Ctx, scenario: F) -> Result<(), Failure>
where
    F: FnOnce(Memoria, Rig) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + 'static,
{
    let (world, drain, canary) = fixture(ctx);
    let rig = Rig {
        trace: world.trace().clone(),
        drain,
        canary,
        seed: ctx.seed(),
        fakes: APPS.iter().map(|a| world.fake(a).clone()).collect(),
    };
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        scenario(m, rig).await
    })
}

fn host(app: &str) -> String {
    format!("acme.{app}.oficina.works")
}

fn display(app: &str) -> String {
    memoria::app_display_name(app)
}

/// The epoch of the token memoria's S2 carried at each app in `events`.
fn s2_epochs(events: &[memoria_simulator::TraceEvent]) -> BTreeMap<String, Option<u32>> {
    let mut out = BTreeMap::new();
    for app in APPS {
        if let Some(e) = events
            .iter()
            .rev()
            .find(|e| e.call == CallKind::S2 && e.callee == host(app))
        {
            out.insert(app.to_owned(), e.epoch);
        }
    }
    out
}

/// A search as Ana that must be whole: memoria called every sibling's S2
/// during it (presence), no call during it was answered 401, no line is
/// withheld, and every passage renders. Returns the epoch memoria's S2
/// carried at each app.
async fn clean(
    m: &mut Memoria,
    trace: &Trace,
    canary: &str,
    step: &str,
) -> Result<BTreeMap<String, Option<u32>>, String> {
    let from = trace.events().len();
    let page = m.search(OWNERS[0], canary).await;
    let events = trace.events()[from..].to_vec();
    let epochs = s2_epochs(&events);
    check(
        epochs.len() == APPS.len(),
        format!("{step}: memoria called every sibling's S2 during the search (presence)"),
        format!("S2 reached {:?}", epochs.keys().collect::<Vec<_>>()),
    )?;
    let refused: Vec<String> = events
        .iter()
        .filter(|e| e.status == Some(401))
        .map(|e| format!("{} {:?}", e.callee, e.call))
        .collect();
    check(
        refused.is_empty(),
        format!("{step}: no sibling answered any call 401"),
        format!("401 from {refused:?}"),
    )?;
    let p = crate::rigs::page::of(&page.response);
    check(
        p.withheld().is_empty(),
        format!("{step}: the page withholds nothing"),
        format!("{:?}", p.withheld()),
    )?;
    let missing: Vec<String> = APPS
        .iter()
        .flat_map(|a| (0..ITEMS_PER_APP).map(move |i| format!("tag{a}{i}")))
        .filter(|t| !page.response.body.contains(t.as_str()))
        .collect();
    check(
        missing.is_empty(),
        format!("{step}: all {} passages render", APPS.len() * ITEMS_PER_APP),
        format!("missing {missing:?}"),
    )?;
    Ok(epochs)
}

/// The epochs memoria's S2 carries at Sheets, Docs and Calendar, as
/// [`clean`] returns them.
fn epochs(at: [u32; 3]) -> BTreeMap<String, Option<u32>> {
    APPS.iter()
        .zip(at)
        .map(|(a, epoch)| ((*a).to_owned(), Some(epoch)))
        .collect()
}

/// What one run of a phase must report: the apps it changed, found
/// already done, did not reach, and refused as not observed (§6.2's phase
/// 3 before memoria is seen using the new token), each in the drain's order.
#[derive(Debug, Clone, Copy)]
struct Expect {
    changed: &'static [&'static str],
    unchanged: &'static [&'static str],
    not_reached: &'static [&'static str],
    not_observed: &'static [&'static str],
}

/// A run that refused nothing: `changed`, `unchanged` and `not_reached`.
const fn report(
    changed: &'static [&'static str],
    unchanged: &'static [&'static str],
    not_reached: &'static [&'static str],
) -> Expect {
    Expect {
        changed,
        unchanged,
        not_reached,
        not_observed: &[],
    }
}

impl Expect {
    /// The same run, refusing `apps` as not observed.
    const fn refusing(self, apps: &'static [&'static str]) -> Expect {
        Expect {
            not_observed: apps,
            ..self
        }
    }
}

/// A phase run at every sibling, changing each.
const EVERYWHERE: Expect = report(&APPS, &[], &[]);
/// A phase stopped after Sheets, changing it alone.
const SHEETS_ONLY: Expect = report(&["sheets"], &[], &["docs", "calendar"]);
/// A phase resumed after Sheets, changing Docs and Calendar.
const THE_REST: Expect = report(&["docs", "calendar"], &["sheets"], &[]);

fn report_is(step: &str, r: &PhaseReport, want: Expect) -> Result<(), String> {
    let refused: Vec<(String, DrainRefusal)> = want
        .not_observed
        .iter()
        .map(|a| ((*a).to_owned(), DrainRefusal::NotObserved))
        .collect();
    check(
        r.changed == want.changed
            && r.unchanged == want.unchanged
            && r.not_reached == want.not_reached
            && r.refused == refused,
        format!(
            "{step}: changed {:?}, unchanged {:?}, not reached {:?}, refused as not observed {:?}",
            want.changed, want.unchanged, want.not_reached, want.not_observed
        ),
        format!("{r:?}"),
    )
}

/// One phase of the operator drain (§6.2), stopped where its [`Stop`] says.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Phase 1: the new token accepted beside the old at each sibling.
    Expand(Stop),
    /// Phase 2: memoria's token file rewritten with the new token.
    Switch(Stop),
    /// Phase 3: the old token retired where memoria was seen using the new.
    Contract(Stop),
}

/// What follows a step.
#[derive(Debug, Clone, Copy)]
enum Then {
    /// Nothing: the next step follows at once.
    Next,
    /// A clean search as Ana ([`clean`]).
    Clean,
    /// A clean search, after which memoria's S2 carried these epochs at
    /// Sheets, Docs and Calendar.
    Epochs([u32; 3]),
}

/// One row of a walk through the phases: a phase, what it must report,
/// and what follows it.
#[derive(Debug, Clone, Copy)]
struct Step {
    label: &'static str,
    phase: Phase,
    expect: Expect,
    then: Then,
}

/// Runs `steps` with `drain` (the rig's, or a second rotation's) in order, judging each row; the first row
/// that does not hold fails the walk, naming its label.
async fn walk_steps(
    m: &mut Memoria,
    rig: &Rig,
    drain: &Drain,
    steps: &[Step],
) -> Result<(), String> {
    for s in steps {
        let r = match s.phase {
            Phase::Expand(stop) => drain.expand(stop),
            Phase::Switch(stop) => drain.switch(m, stop),
            Phase::Contract(stop) => drain.contract(stop),
        };
        report_is(s.label, &r, s.expect)?;
        match s.then {
            Then::Next => {}
            Then::Clean => {
                rig.clean(m, s.label).await?;
            }
            Then::Epochs(want) => {
                let claim = format!(
                    "{}: memoria's S2 carries the token epochs {:?}",
                    s.label,
                    epochs(want)
                );
                rig.clean_at(m, s.label, want, claim).await?;
            }
        }
    }
    Ok(())
}

/// One S1 call to `app`'s sibling from the scenario with `token`; its status.
async fn probe(app: &str, token: &str) -> Result<u16, String> {
    let h = host(app);
    let request = http::Request::builder()
        .method("GET")
        .uri("/s1/feed")
        .header(http::header::HOST, h.as_str())
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
        .body(Full::new(Bytes::new()))
        .map_err(|e| e.to_string())?;
    exchange(&TurmoilDialer, &h, SIBLING_PORT, request)
        .await
        .map(|r| r.status)
        .map_err(|e| e.to_string())
}

/// Every sibling refuses the old token (and the trace records the 401:
/// the record the clean searches read can see one) and accepts the new.
async fn old_refused_new_accepted(drain: &Drain, trace: &Trace) -> Result<(), String> {
    for app in APPS {
        let from = trace.events().len();
        let old = probe(app, drain.old_token(app)).await?;
        let recorded = trace.events()[from..]
            .iter()
            .any(|e| e.status == Some(401) && e.callee == host(app));
        check(
            old == 401 && recorded,
            format!("{app} refuses the retired token with a 401 the trace records"),
            format!("{old}, recorded {recorded}"),
        )?;
        let new = probe(app, drain.new_token(app)).await?;
        check(
            new == 200,
            format!("{app} accepts the new token"),
            new.to_string(),
        )?;
    }
    Ok(())
}

/// Gate 12's walk: every phase interrupted and resumed, across a partial
/// delivery, each step followed by a clean search.
const WALK: &[Step] = &[
    Step {
        label: "phase 1 stopped after Sheets",
        phase: Phase::Expand(Stop::After(1)),
        expect: SHEETS_ONLY,
        then: Then::Clean,
    },
    Step {
        label: "phase 1 resumed",
        phase: Phase::Expand(Stop::AtEnd),
        expect: THE_REST,
        then: Then::Clean,
    },
    Step {
        label: "phase 2 stopped after Sheets (a partial delivery)",
        phase: Phase::Switch(Stop::After(1)),
        expect: SHEETS_ONLY,
        then: Then::Epochs([NEW_EPOCH, OLD_EPOCH, OLD_EPOCH]),
    },
    Step {
        label: "phase 3 during the partial delivery",
        phase: Phase::Contract(Stop::AtEnd),
        expect: report(&["sheets"], &[], &[]).refusing(&["docs", "calendar"]),
        then: Then::Clean,
    },
    Step {
        label: "phase 2 resumed",
        phase: Phase::Switch(Stop::AtEnd),
        expect: THE_REST,
        then: Then::Epochs([NEW_EPOCH; 3]),
    },
    Step {
        label: "phase 3 stopped after two siblings",
        phase: Phase::Contract(Stop::After(2)),
        expect: report(&["docs"], &["sheets"], &["calendar"]),
        then: Then::Clean,
    },
    Step {
        label: "phase 3 resumed",
        phase: Phase::Contract(Stop::AtEnd),
        expect: report(&["calendar"], &["sheets", "docs"], &[]),
        then: Then::Clean,
    },
];

fn walk(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        rig.clean_at(
            &mut m,
            "before the rotation",
            [OLD_EPOCH; 3],
            "before the rotation memoria carries its old token everywhere",
        )
        .await?;
        walk_steps(&mut m, &rig, &rig.drain, WALK).await?;
        m.question_pulls(OWNERS[0]).await;
        let events = rig.trace.events();
        check(
            events
                .iter()
                .rev()
                .take_while(|e| e.call == CallKind::S1)
                .all(|e| e.status == Some(200)),
            "memoria's S1 polls after the rotation are answered",
            "an S1 poll was refused",
        )?;
        old_refused_new_accepted(&rig.drain, &rig.trace).await
    })
}

fn new_token_without_restart(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        rig.clean_at(
            &mut m,
            "before the rotation",
            [OLD_EPOCH; 3],
            "before the rotation every sibling sees memoria's old token (presence)",
        )
        .await?;
        report_is("phase 1", &rig.drain.expand(Stop::AtEnd), EVERYWHERE)?;
        rig.clean_at(
            &mut m,
            "both tokens accepted",
            [OLD_EPOCH; 3],
            "with both tokens accepted memoria still sends the old one: nothing was delivered",
        )
        .await?;
        let instance = m.state().instance();
        report_is("phase 2", &rig.drain.switch(&m, Stop::AtEnd), EVERYWHERE)?;
        rig.clean_at(
            &mut m,
            "after the switch",
            [NEW_EPOCH; 3],
            "after phase 2 memoria's next S2 at every sibling carries the new token",
        )
        .await?;
        let from = rig.trace.events().len();
        m.question_pulls(OWNERS[0]).await;
        let polls: Vec<(String, Option<u32>)> = rig.trace.events()[from..]
            .iter()
            .filter(|e| e.call == CallKind::S1)
            .map(|e| (e.callee.clone(), e.epoch))
            .collect();
        check(
            polls.len() >= APPS.len() && polls.iter().all(|(_, e)| *e == Some(NEW_EPOCH)),
            "memoria's next S1 poll at every sibling carries the new token",
            format!("{polls:?}"),
        )?;
        check(
            Arc::ptr_eq(&instance, &m.state().instance()),
            "the same memoria instance sent both: no restart",
            "memoria was restarted",
        )
    })
}

fn no_contract_before_observation(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        let old_accepted = |apps: &[&str]| {
            rig.fakes
                .iter()
                .zip(APPS)
                .filter(|(_, a)| apps.contains(a))
                .all(|(f, a)| {
                    f.token_epoch(MEMORIA_CONSUMER, rig.drain.old_token(a))
                        .is_some()
                })
        };
        report_is("phase 1", &rig.drain.expand(Stop::AtEnd), EVERYWHERE)?;
        report_is(
            "phase 2 for Sheets only",
            &rig.drain.switch(&m, Stop::After(1)),
            SHEETS_ONLY,
        )?;
        report_is(
            "before memoria has called with the new token, phase 3",
            &rig.drain.contract(Stop::AtEnd),
            report(&[], &[], &[]).refusing(&APPS),
        )?;
        check(
            old_accepted(&APPS),
            "every sibling still accepts the old token",
            "one was retired",
        )?;
        rig.clean(&mut m, "after the refused contract").await?;
        report_is(
            "once memoria was seen using the new token at Sheets, phase 3",
            &rig.drain.contract(Stop::AtEnd),
            report(&["sheets"], &[], &[]).refusing(&["docs", "calendar"]),
        )?;
        check(
            !old_accepted(&["sheets"]) && old_accepted(&["docs", "calendar"]),
            "Sheets no longer accepts the old token; Docs and Calendar still do",
            "the accepted tokens are otherwise",
        )?;
        rig.clean(&mut m, "after Sheets contracted").await?;
        report_is(
            "phase 2 resumed",
            &rig.drain.switch(&m, Stop::AtEnd),
            THE_REST,
        )?;
        rig.clean(&mut m, "after the whole delivery").await?;
        report_is(
            "phase 3 once observed everywhere",
            &rig.drain.contract(Stop::AtEnd),
            THE_REST,
        )?;
        check(
            !old_accepted(&["sheets"]) && !old_accepted(&["docs"]) && !old_accepted(&["calendar"]),
            "no sibling accepts the old token (presence: the drain does contract once it observed)",
            "one still does",
        )?;
        rig.clean(&mut m, "after the rotation").await?;
        old_refused_new_accepted(&rig.drain, &rig.trace).await
    })
}

fn rerun_is_a_no_op(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        let no_op = |step: &str, r: &PhaseReport| {
            check(
                r.is_no_op() && r.unchanged.len() == APPS.len(),
                format!("{step} again changes nothing and refuses nothing"),
                format!("{r:?}"),
            )
        };
        report_is("phase 1", &rig.drain.expand(Stop::AtEnd), EVERYWHERE)?;
        let after = rig.rows();
        no_op("phase 1", &rig.drain.expand(Stop::AtEnd))?;
        check(
            rig.rows() == after,
            "the consumers rows are as phase 1 left them",
            format!("{:?}", rig.rows()),
        )?;
        rig.clean(&mut m, "phase 1 run twice").await?;

        let before = token_files(&m, &APPS);
        report_is("phase 2", &rig.drain.switch(&m, Stop::AtEnd), EVERYWHERE)?;
        let delivered = token_files(&m, &APPS);
        check(
            delivered != before,
            "phase 2 rewrote memoria's token files (presence)",
            "they are unchanged",
        )?;
        no_op("phase 2", &rig.drain.switch(&m, Stop::AtEnd))?;
        check(
            token_files(&m, &APPS) == delivered,
            "memoria's token files are byte for byte as phase 2 left them",
            "they changed",
        )?;
        rig.clean_at(
            &mut m,
            "phase 2 run twice",
            [NEW_EPOCH; 3],
            "memoria carries the new token",
        )
        .await?;

        report_is("phase 3", &rig.drain.contract(Stop::AtEnd), EVERYWHERE)?;
        let after = rig.rows();
        no_op("phase 3", &rig.drain.contract(Stop::AtEnd))?;
        check(
            rig.rows() == after,
            "the consumers rows are as phase 3 left them",
            format!("{:?}", rig.rows()),
        )?;
        no_op("phase 1 after phase 3", &rig.drain.expand(Stop::AtEnd))?;
        check(
            rig.rows() == after
                && after
                    .iter()
                    .all(|r| r == &[(MEMORIA_CONSUMER.to_owned(), NEW_EPOCH)]),
            "phase 1 run after phase 3 brings no old token back: each row holds the new token alone",
            format!("{:?}", rig.rows()),
        )?;
        rig.clean(&mut m, "every phase run twice").await?;
        Ok(())
    })
}

/// The withheld lines a search as Ana shows, and the statuses memoria's
/// calls got during it.
async fn withheld(m: &mut Memoria, trace: &Trace, canary: &str) -> (Vec<String>, String, Vec<u16>) {
    let from = trace.events().len();
    let page = m.search(OWNERS[0], canary).await;
    let statuses = trace.events()[from..]
        .iter()
        .filter_map(|e| e.status)
        .collect();
    (
        crate::rigs::page::of(&page.response).withheld(),
        page.response.body,
        statuses,
    )
}

fn emergency_revocation(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        rig.clean(&mut m, "before the revocation").await?;
        report_is("the revocation", &rig.drain.revoke(), EVERYWHERE)?;
        let (lines, body, statuses) = withheld(&mut m, &rig.trace, &rig.canary).await;
        let expected: Vec<String> = APPS
            .iter()
            .map(|a| {
                format!(
                    "{} did not answer; {ITEMS_PER_APP} results withheld.",
                    display(a)
                )
            })
            .collect();
        let mut sorted = lines.clone();
        sorted.sort();
        let mut want = expected.clone();
        want.sort();
        check(
            sorted == want,
            "after the revocation the page names every app as withheld, with its count",
            format!("{lines:?}"),
        )?;
        check(
            statuses.contains(&401),
            "the siblings answered memoria's old token 401 (the outage is the credential's)",
            format!("{statuses:?}"),
        )?;
        check(
            !APPS.iter().any(|a| body.contains(&format!("tag{a}0"))),
            "no passage renders while memoria's token is refused",
            "a passage renders",
        )?;
        report_is(
            "delivery to Sheets",
            &rig.drain.switch(&m, Stop::After(1)),
            SHEETS_ONLY,
        )?;
        let (lines, body, _) = withheld(&mut m, &rig.trace, &rig.canary).await;
        let mut want: Vec<String> = expected[1..].to_vec();
        want.sort();
        let mut sorted = lines.clone();
        sorted.sort();
        check(
            sorted == want && body.contains("tagsheets0") && body.contains("tagsheets1"),
            "delivered to Sheets only, Sheets renders and Docs and Calendar are still named",
            format!("{lines:?}"),
        )?;
        report_is(
            "delivery everywhere",
            &rig.drain.switch(&m, Stop::AtEnd),
            THE_REST,
        )?;
        rig.clean(&mut m, "after the new token was delivered")
            .await?;
        Ok(())
    })
}

fn unreadable_token_file(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        rig.clean(&mut m, "before").await?;
        let docs_line = format!("Docs did not answer; {ITEMS_PER_APP} results withheld.");
        for (how, text) in [
            ("removed", None),
            ("empty", Some("")),
            ("whitespace", Some(" \n\t\n")),
        ] {
            match text {
                None => m.remove_token_file("docs")?,
                Some(t) => m.write_token_file("docs", t)?,
            }
            let from = rig.trace.events().len();
            let page = m.search(OWNERS[0], &rig.canary).await;
            let events = rig.trace.events()[from..].to_vec();
            let to_docs = events.iter().filter(|e| e.callee == host("docs")).count();
            check(
                to_docs == 0,
                format!("with Docs' token file {how}, memoria makes no call to Docs"),
                format!("{to_docs} calls"),
            )?;
            let p = crate::rigs::page::of(&page.response);
            check(
                p.withheld() == [docs_line.clone()],
                format!("with Docs' token file {how}, the page names Docs as withheld"),
                format!("{:?}", p.withheld()),
            )?;
            let others = ["sheets", "calendar"].iter().all(|a| {
                (0..ITEMS_PER_APP).all(|i| page.response.body.contains(&format!("tag{a}{i}")))
                    && events
                        .iter()
                        .any(|e| e.callee == host(a) && e.call == CallKind::S2)
            });
            check(
                others,
                format!("with Docs' token file {how}, Sheets and Calendar are asked and render"),
                "one is missing",
            )?;
        }
        m.set_sibling_token("docs", rig.drain.old_token("docs"))?;
        rig.clean(&mut m, "the token file restored").await?;
        Ok(())
    })
}

/// Memoria's token file at each of `apps`, byte for byte (empty if absent).
fn token_files(m: &Memoria, apps: &[&str]) -> Vec<Vec<u8>> {
    apps.iter()
        .map(|a| {
            m.token_file(a)
                .and_then(|p| std::fs::read(p).ok())
                .unwrap_or_default()
        })
        .collect()
}

fn no_switch_before_expand(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        rig.clean(&mut m, "before the rotation").await?;
        report_is(
            "phase 1 stopped after Sheets",
            &rig.drain.expand(Stop::After(1)),
            SHEETS_ONLY,
        )?;
        let before = token_files(&m, &["docs", "calendar"]);
        let r = rig.drain.switch(&m, Stop::AtEnd);
        check(
            r.changed == ["sheets"]
                && r.unchanged.is_empty()
                && r.not_reached.is_empty()
                && r.refused
                    == [
                        ("docs".to_owned(), DrainRefusal::NotExpanded),
                        ("calendar".to_owned(), DrainRefusal::NotExpanded),
                    ],
            "phase 2 delivers to Sheets and refuses Docs and Calendar, which do not accept the new token yet",
            format!("{r:?}"),
        )?;
        check(
            token_files(&m, &["docs", "calendar"]) == before,
            "Docs' and Calendar's token files are byte for byte as they were",
            "one was rewritten",
        )?;
        rig.clean_at(
            &mut m,
            "phase 2 ahead of phase 1",
            [NEW_EPOCH, OLD_EPOCH, OLD_EPOCH],
            "memoria carries the new token at Sheets and the old at Docs and Calendar",
        )
        .await?;
        report_is("phase 1 resumed", &rig.drain.expand(Stop::AtEnd), THE_REST)?;
        report_is(
            "phase 2 resumed",
            &rig.drain.switch(&m, Stop::AtEnd),
            THE_REST,
        )?;
        rig.clean_at(
            &mut m,
            "phase 2 resumed",
            [NEW_EPOCH; 3],
            "memoria carries the new token everywhere",
        )
        .await
    })
}

fn no_third_token(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        let second = rig.second();
        report_is("phase 1", &rig.drain.expand(Stop::AtEnd), EVERYWHERE)?;
        report_is(
            "phase 2 for Sheets only",
            &rig.drain.switch(&m, Stop::After(1)),
            SHEETS_ONLY,
        )?;
        rig.clean(&mut m, "mid-rotation").await?;
        let held = rig.rows();
        let both = vec![
            (MEMORIA_CONSUMER.to_owned(), OLD_EPOCH),
            (MEMORIA_CONSUMER.to_owned(), NEW_EPOCH),
        ];
        check(
            held.iter().all(|r| *r == both),
            "mid-rotation every consumers row holds the old and the new token (presence)",
            format!("{held:?}"),
        )?;
        let r = second.expand(Stop::AtEnd);
        check(
            r.changed.is_empty()
                && r.refused.len() == APPS.len()
                && r.refused.iter().all(|(_, why)| {
                    *why == DrainRefusal::Row(memoria_simulator::TokenRefusal::Full)
                }),
            "a second rotation's phase 1 is refused at every sibling: the row already holds two tokens",
            format!("{r:?}"),
        )?;
        check(
            rig.rows() == held,
            "every consumers row holds the two tokens it held, at their epochs",
            format!("{:?}", rig.rows()),
        )?;
        rig.clean_at(
            &mut m,
            "after the refused second expand",
            [NEW_EPOCH, OLD_EPOCH, OLD_EPOCH],
            "memoria still carries the new token at Sheets and the old at Docs and Calendar",
        )
        .await
    })
}

/// The second rotation's new token: one past the first's.
const NEXT_EPOCH: u32 = NEW_EPOCH + 1;

/// A whole first rotation, uninterrupted.
const FIRST_ROTATION: &[Step] = &[
    Step {
        label: "first phase 1",
        phase: Phase::Expand(Stop::AtEnd),
        expect: EVERYWHERE,
        then: Then::Next,
    },
    Step {
        label: "first phase 2",
        phase: Phase::Switch(Stop::AtEnd),
        expect: EVERYWHERE,
        then: Then::Clean,
    },
    Step {
        label: "first phase 3",
        phase: Phase::Contract(Stop::AtEnd),
        expect: EVERYWHERE,
        then: Then::Epochs([NEW_EPOCH; 3]),
    },
];

/// The second rotation after its phase 1: delivered to Sheets only, then
/// everywhere, phase 3 run before and after memoria is seen using it.
const SECOND_ROTATION: &[Step] = &[
    Step {
        label: "second phase 2 for Sheets only",
        phase: Phase::Switch(Stop::After(1)),
        expect: SHEETS_ONLY,
        then: Then::Next,
    },
    Step {
        label: "second phase 3 before memoria calls with its new token",
        phase: Phase::Contract(Stop::AtEnd),
        expect: report(&[], &[], &[]).refusing(&APPS),
        then: Then::Epochs([NEXT_EPOCH, NEW_EPOCH, NEW_EPOCH]),
    },
    Step {
        label: "second phase 3 once seen at Sheets: the first rotation's token retired there only",
        phase: Phase::Contract(Stop::AtEnd),
        expect: report(&["sheets"], &[], &[]).refusing(&["docs", "calendar"]),
        then: Then::Clean,
    },
    Step {
        label: "second phase 2 resumed",
        phase: Phase::Switch(Stop::AtEnd),
        expect: THE_REST,
        then: Then::Clean,
    },
    Step {
        label: "second phase 3 once observed everywhere",
        phase: Phase::Contract(Stop::AtEnd),
        expect: THE_REST,
        then: Then::Epochs([NEXT_EPOCH; 3]),
    },
];

fn second_rotation(ctx: &mut Ctx) -> Result<(), Failure> {
    rotating(ctx, |mut m, rig| async move {
        let second = rig.second();
        walk_steps(&mut m, &rig, &rig.drain, FIRST_ROTATION).await?;
        report_is("second phase 1", &second.expand(Stop::AtEnd), EVERYWHERE)?;
        let want = vec![
            (MEMORIA_CONSUMER.to_owned(), NEW_EPOCH),
            (MEMORIA_CONSUMER.to_owned(), NEXT_EPOCH),
        ];
        check(
            rig.rows().iter().all(|r| *r == want),
            "the second rotation's new token takes an epoch no token there has held",
            format!("{:?}", rig.rows()),
        )?;
        walk_steps(&mut m, &rig, &second, SECOND_ROTATION).await
    })
}

fn home_token_read_on_every_pull(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::home::{suite_world, up};
    let canary = ctx.canary();
    let (mut world, home) = suite_world(ctx.seed(), &canary);
    world.use_token_files();
    run_world(&world, move |mut m| async move {
        up(&mut m, &canary).await?;
        let rotated = "home-token-rotated";
        home.set_token(rotated);
        let r = m.pull_roster().await;
        check(
            matches!(r, Some(Err(memoria::RosterFault::Status(401)))),
            "with the home switched to a new token, a pull with memoria's old one is refused with 401 (presence: the home checks it)",
            format!("{r:?}"),
        )?;
        let changed = m.set_sibling_token(memoria_simulator::HOME_LABEL, rotated)?;
        let r = m.pull_roster().await;
        check(
            changed && matches!(r, Some(Ok(_))),
            "once memoria's token file at the home holds the new token, the next pull carries it and is adopted, with no restart",
            format!("file changed: {changed}; {r:?}"),
        )?;
        let pulls = home.pulls().len();
        m.write_token_file(memoria_simulator::HOME_LABEL, "\n")?;
        let r = m.pull_roster().await;
        check(
            matches!(r, Some(Err(memoria::RosterFault::NoToken(_)))) && home.pulls().len() == pulls,
            "with the token file emptied, no pull reaches the home and the pull fails for want of a token (fail closed)",
            format!(
                "{r:?}; the home saw {} new pulls",
                home.pulls().len() - pulls
            ),
        )
    })
}
