//! Suite gate 5 (§4.3, GATES.md's suite checks): a stale roster stops team standing for everybody, sessions included — sibling passages answer UNKNOWN (no sibling is asked) and the page withholds loudly; an unfamiliar generation holds the stale copy until an owner confirms, across a restart too; within the TTL the copy is enforced as it stands.
//!
//! Size: just over 700 lines because its cases share one suite-shaped
//! world (a fake home serving the roster) and the documented helpers that
//! read its pages; split, a case would sit apart from its world.
//!
//! GATES.md lists suite 5 among the checks a sibling must pass; §4.3 puts
//! its substance on memoria's side ("past the TTL with no successful fetch
//! it is stale, and team standing stops being established for anyone —
//! including people already in a session — so S2 answers UNKNOWN and the
//! page withholds loudly"), which is what this gate holds, in the
//! simulator, against a fake home serving the roster (suite call 8).
//! memoria asks no sibling on a standing nobody has, so "S2 answers
//! UNKNOWN" is memoria's UNKNOWN: every sibling named as not asked, and the
//! trace showing no S2 call. Presence first throughout: each member finds
//! the Sheets passage and memoria's own document before the copy goes
//! stale, and an owner (the owners list bypasses the roster, decision 11)
//! is served beside them while it is, the siblings asked for her.

use memoria::{ROSTER_DEADLINE_MS, ROSTER_TTL_S, RosterLack};
use memoria_simulator::{CallKind, FakeHome, GARBAGE, HOME_GENERATION, HomeFault, Memoria, Trace};

use crate::rigs::home::{
    ANA, CAI, DAN, EVE, OWNED_TAG, SHEETS_TAG, finds_both, form_delivers, search, suite_world, up,
};
use crate::rigs::page::Page;
use crate::rigs::sim::{check, fail, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Suite gate 5.
pub static GATE: Gate = Gate {
    id: "suite 5",
    title: "A stale roster stops team standing",
    gates_md: &["A stale roster stops team standing: S2 answers UNKNOWN"],
    sections: &["§4.3", "§6.5"],
    requirement: "Past the roster's TTL with no successful pull, nobody's team standing is established, sessions included: every page withholds loudly, naming the stale roster, memoria's own documents and every sibling (not asked: UNKNOWN), with no passage shown and no S2 made, while an owner is served as ever; nobody new signs in; an unfamiliar roster generation is not adopted and the copy held goes stale until an owner confirms the generation, and a confirmed generation is as old as the pull that brought it, a lagging answer of a pending generation never replaces it, and a restart changes neither which generation is familiar nor which epoch is behind; within the TTL the copy is enforced as it stands through every failed pull (down, slow past the deadline, an older epoch, garbage), and no failed pull, however recent, renews it.",
    cases: &[
        Case {
            id: "suite 5/a-stale-roster-stops-team-standing-for-everybody-sessions-included",
            desc: "Cai and Dan, signed in from the roster, each find the Sheets passage and memoria's own document (presence); the home goes down and memoria's clock passes the TTL; each one's search page answers 200 with no result, a withheld line naming the stale roster, one for memoria's own documents and one naming Sheets as not asked; the results fragment says the same; the document and brief pages answer 503 with the same lines and neither passage; no S2 call was made; the sign-in form delivers Cai no link; Ana, an owner, finds the Sheets passage and memoria's document, Sheets asked for her; the home answers again, memoria pulls, and Cai's same session finds both.",
            run: stale_stops_standing,
        },
        Case {
            id: "suite 5/an-unfamiliar-generation-holds-the-stale-copy-until-an-owner-confirms",
            desc: "The home starts a new generation listing Dan and Eve (not Cai); the pull does not adopt it: within the TTL Cai's session still finds both documents and the sign-in form delivers Eve no link; Dan, a member but no owner, posts the confirmation form and is refused (403) with the generation still pending; past the TTL Dan's search withholds with a line naming the unconfirmed generation; Ana, an owner, sees the pending generation on the roster page and confirms it through its form (303); then Eve is delivered a link that signs her in and finds both documents, Dan's session finds both again, and Cai's session is refused (401).",
            run: unfamiliar_generation_held_until_confirmed,
        },
        Case {
            id: "suite 5/a-lagging-answer-never-replaces-the-pending-generation",
            desc: "The home starts a new generation listing Dan and Eve, then adds Cai: memoria holds the newer epoch as pending (presence); the home answers the pending generation's older epoch (a lagging replica): the pull is not adopted and the pending epoch stays the newer one; Ana confirms through the roster page's form (303), and Cai, listed only at the newer epoch, is delivered a link.",
            run: lagging_answer_keeps_pending,
        },
        Case {
            id: "suite 5/a-restart-keeps-the-generation-and-the-epoch-it-adopted",
            desc: "memoria adopts Dan's removal (presence) and restarts; the home answers the older epoch that lists Dan: the pull fails as behind, and Dan is delivered no link; the home answers as it stands: the pull is adopted and Cai signs in and finds both (presence); the home starts a new generation listing Dan and Eve and memoria restarts again: the pull is not adopted, Eve and Cai are delivered no link; Ana confirms the generation through the roster page's form (303), and Eve is delivered a link.",
            run: restart_keeps_coordinates,
        },
        Case {
            id: "suite 5/within-the-ttl-the-copy-is-enforced-as-it-stands",
            desc: "The home removes Dan and memoria pulls it (Dan refused, Cai finds both: presence); then the home answers an older epoch listing Dan, then is down, then slow past the deadline, then answers each garbage body: every pull fails, the copy keeps its epoch, Cai's session finds both documents and Dan is delivered no link; one second inside the TTL Cai is still served; one second past it his search withholds.",
            run: copy_enforced_within_ttl,
        },
        Case {
            id: "suite 5/a-pull-that-fails-never-renews-the-copy-however-recently-the-home-answered",
            desc: "The home removes Dan and memoria pulls it (presence); then, spread across the TTL, the home answers an older epoch, is down, is slow past the deadline and answers each garbage body: after every failed pull the copy's age still counts from the last successful pull and Cai is served; one second inside the TTL of that pull Cai is still served, and one second past it, though the home answered a failed pull moments ago, his search withholds naming the stale roster.",
            run: failed_pulls_renew_nothing,
        },
        Case {
            id: "suite 5/a-confirmed-generation-is-as-old-as-the-pull-that-brought-it",
            desc: "The home starts a new generation listing Dan and Eve and memoria pulls it (pending); the home goes down and the clock passes the TTL; Ana, an owner, confirms the generation (303): the copy is adopted but, no pull having succeeded within the TTL, it is stale, Dan's search withholds naming the stale roster and Eve is delivered no link; once the home answers and memoria pulls, Dan's session finds both.",
            run: confirmation_renews_nothing,
        },
    ],
};

/// What a case's scenario is handed: memoria, [`up`] in a [`suite_world`]
/// whose home serves the roster, the world's trace and the case's canary.
struct Suite {
    m: Memoria,
    home: FakeHome,
    trace: Trace,
    canary: String,
}

/// Runs `scenario` in a suite world built for the case's seed and canary,
/// once memoria is [`up`] (the roster pulled, its own document stored).
fn in_suite_world<F, Fut>(ctx: &mut Ctx, scenario: F) -> Result<(), Failure>
where
    F: FnOnce(Suite) -> Fut + 'static,
    Fut: Future<Output = Result<(), String>> + 'static,
{
    let canary = ctx.canary();
    let (world, home) = suite_world(ctx.seed(), &canary);
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        up(&mut m, &canary).await?;
        scenario(Suite {
            m,
            home,
            trace,
            canary,
        })
        .await
    })
}

/// The S2 calls Sheets has received since the trace was last cleared.
fn s2_calls(trace: &Trace) -> usize {
    trace
        .events()
        .into_iter()
        .filter(|e| e.call == CallKind::S2)
        .count()
}

/// The pulls that fail while the home still answers something, in order:
/// an older epoch, down, slow past the deadline, then each garbage body.
fn failed_pulls() -> Vec<HomeFault> {
    let mut faults = vec![
        HomeFault::StaleEpoch,
        HomeFault::Down,
        HomeFault::Slow(ROSTER_DEADLINE_MS + 500),
    ];
    faults.extend(GARBAGE.iter().map(|g| HomeFault::Garbage(*g)));
    faults
}

/// Requires `page` (answered `status`) to be the standing page: `want`
/// status, no result, a withheld line holding `reason`, one for memoria's
/// own documents, one naming Sheets as not asked, and neither passage.
fn withholds(
    who: &str,
    status: u16,
    want: u16,
    page: &Page,
    body: &str,
    reason: &str,
) -> Result<(), String> {
    let lines = page.withheld();
    check(
        status == want
            && page.results().is_empty()
            && lines.iter().any(|l| l.contains(reason))
            && lines
                .iter()
                .any(|l| l.starts_with("memoria's own documents"))
            && lines
                .iter()
                .any(|l| l.starts_with("Sheets was not asked (unknown)")),
        format!(
            "{who} answers {want} withholding every result loudly: the roster ({reason}), memoria's own documents and Sheets, not asked"
        ),
        format!(
            "{status}: {} results, withheld {lines:?}",
            page.results().len()
        ),
    )?;
    check(
        !body.contains(SHEETS_TAG) && !body.contains(OWNED_TAG),
        format!("{who} shows nothing of either passage"),
        "a passage's words are on it",
    )
}

/// Requires the session `cookie`'s search page for `canary` (`who`, in a
/// failure) to answer 200 withholding for `reason`, as [`withholds`] says.
async fn search_withholds(
    m: &Memoria,
    cookie: &str,
    canary: &str,
    who: &str,
    reason: &str,
) -> Result<(), String> {
    let (status, page) = search(m, cookie, canary).await?;
    withholds(who, status, 200, &page, &page.text(), reason)
}

/// Requires the session `cookie`'s search, fragment, document and brief
/// pages to withhold for `reason`.
async fn every_page_withholds(
    m: &Memoria,
    cookie: &str,
    who: &str,
    canary: &str,
    doc: &str,
    reason: &str,
) -> Result<(), String> {
    let q = memoria::testkit::form_encode(canary);
    for (what, uri, want) in [
        ("search page", format!("/?q={q}"), 200),
        ("results fragment", format!("/search?q={q}"), 200),
        ("document page", doc.to_string(), 503),
        ("brief page", format!("/brief?task={q}&scope=team"), 503),
    ] {
        let r = m.get_with(cookie, &uri).await?.response;
        let page = crate::rigs::page::of(&r);
        withholds(
            &format!("{who}'s {what}"),
            r.status.as_u16(),
            want,
            &page,
            &r.body,
            reason,
        )?;
    }
    Ok(())
}

/// Requires the copy memoria holds to be stale, and not for want of a
/// confirmation (`what`, in a failure).
fn stale(m: &Memoria, what: &str) -> Result<(), String> {
    let lack = m.roster().and_then(|c| c.lacking());
    check(
        lack == Some(RosterLack::Stale {
            awaiting_confirmation: false,
        }),
        what,
        format!("{lack:?}"),
    )
}

/// The home removes Dan and memoria pulls it, which must succeed (`what`,
/// in a failure); the epoch adopted.
async fn pulls_dan_removal(m: &Memoria, home: &FakeHome, what: &str) -> Result<u64, String> {
    home.remove(DAN);
    match m.pull_roster().await {
        Some(Ok((_, epoch))) => Ok(epoch),
        other => Err(fail(what, format!("{other:?}"))),
    }
}

/// Requires memoria's pull to fail as an unfamiliar generation, not adopted
/// (`what`, in a failure).
async fn pull_is_unfamiliar(m: &Memoria, what: &str) -> Result<(), String> {
    let r = m.pull_roster().await;
    check(
        matches!(r, Some(Err(memoria::RosterFault::UnfamiliarGeneration))),
        what,
        format!("{r:?}"),
    )
}

/// The home answers again and memoria pulls, which must succeed (`what`, in
/// a failure); then the session `cookie` of `who` must find both.
async fn home_answers_again(
    m: &Memoria,
    home: &FakeHome,
    what: &str,
    cookie: &str,
    who: &str,
    canary: &str,
) -> Result<(), String> {
    home.set_fault(HomeFault::None);
    let r = m.pull_roster().await;
    check(matches!(r, Some(Ok(_))), what, format!("{r:?}"))?;
    finds_both(m, cookie, who, canary).await
}

/// The copy's age in seconds now (0 with no copy).
fn age_s(m: &Memoria) -> i64 {
    m.roster()
        .and_then(|c| c.status().age_s)
        .unwrap_or_default()
}

/// The clock goes to one second inside the TTL of the last successful pull,
/// where Cai's session `cai` must find both; then two seconds on, where his
/// search page (`who`, in a failure) must withhold naming the stale roster.
async fn served_to_the_ttl(m: &Memoria, cai: &str, canary: &str, who: &str) -> Result<(), String> {
    m.advance_s(ROSTER_TTL_S - age_s(m) - 1);
    finds_both(m, cai, "one second inside the TTL, Cai", canary).await?;
    m.advance_s(2);
    search_withholds(m, cai, canary, who, "roster is stale").await
}

/// The memoria-owned document's page, as the session `cookie` finds it.
async fn owned_doc(m: &Memoria, cookie: &str, canary: &str) -> Result<String, String> {
    let (_, page) = search(m, cookie, canary).await?;
    page.citations()
        .into_iter()
        .find(|c| c.title == "Minutes")
        .and_then(|c| c.link.split('#').next().map(str::to_string))
        .filter(|l| l.starts_with("/documents/"))
        .ok_or_else(|| fail("the search cites memoria's own document", "no citation"))
}

/// Ana, an owner, signs in and confirms `generation` through the form the
/// roster page holds for it, and the confirmation must answer 303. The
/// form must be there and name `generation` (presence of the pending
/// generation).
async fn owner_confirms(m: &Memoria, generation: &str) -> Result<(), String> {
    let ana = m.sign_in(ANA).await?;
    let roster = m.get_with(&ana, "/roster").await?.response;
    let form = crate::rigs::page::of(&roster)
        .forms()
        .into_iter()
        .find(|f| f.action == "/roster/confirm" && f.value("generation") == Some(generation))
        .ok_or_else(|| {
            fail(
                format!("Ana's roster page holds the confirmation form naming {generation}"),
                roster.status.to_string(),
            )
        })?;
    let fields: Vec<(&str, &str)> = form
        .inputs
        .iter()
        .map(|(n, _, v)| (n.as_str(), v.as_str()))
        .collect();
    let confirmed = m
        .post_form_with(&ana, "/roster/confirm", &fields)
        .await?
        .response;
    check(
        confirmed.status == 303,
        "Ana's confirmation answers 303",
        confirmed.status.to_string(),
    )
}

fn stale_stops_standing(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite {
            m,
            home,
            trace,
            canary,
        } = s;
        let cai = m.sign_in(CAI).await?;
        let dan = m.sign_in(DAN).await?;
        finds_both(&m, &cai, "Cai", &canary).await?;
        finds_both(&m, &dan, "Dan", &canary).await?;
        let doc = owned_doc(&m, &cai, &canary).await?;

        home.set_fault(HomeFault::Down);
        let r = m.pull_roster().await;
        check(
            matches!(r, Some(Err(_))),
            "with the home down, the pull fails",
            format!("{r:?}"),
        )?;
        m.advance_s(ROSTER_TTL_S + 1);
        stale(
            &m,
            "past the TTL with no successful pull, the copy is stale",
        )?;
        trace.clear();
        every_page_withholds(&m, &cai, "Cai", &canary, &doc, "roster is stale").await?;
        every_page_withholds(&m, &dan, "Dan", &canary, &doc, "roster is stale").await?;
        check(
            s2_calls(&trace) == 0,
            "no sibling is asked on a standing nobody has: no S2 call",
            format!("{} S2 calls", s2_calls(&trace)),
        )?;
        check(
            form_delivers(&m, CAI).await?.is_none(),
            "with the roster stale, the sign-in form delivers Cai no link: nobody new signs in",
            "it delivered one",
        )?;
        let ana = m.sign_in(ANA).await?;
        finds_both(&m, &ana, "Ana, an owner,", &canary).await?;
        check(
            s2_calls(&trace) > 0,
            "Sheets was asked for Ana, the owner (two-sided: the siblings answer)",
            "no S2 call",
        )?;
        home_answers_again(
            &m,
            &home,
            "once the home answers, the pull succeeds",
            &cai,
            "Cai, in his same session once the roster is fresh,",
            &canary,
        )
        .await
    })
}

fn unfamiliar_generation_held_until_confirmed(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite {
            m, home, canary, ..
        } = s;
        let cai = m.sign_in(CAI).await?;
        let dan = m.sign_in(DAN).await?;
        finds_both(&m, &cai, "Cai", &canary).await?;
        let next = format!("{HOME_GENERATION}-restored");
        home.new_generation(&next, &[DAN, EVE]);
        pull_is_unfamiliar(&m, "a pull answering a new generation is not adopted").await?;
        finds_both(&m, &cai, "Cai, within the TTL of the copy held,", &canary).await?;
        check(
            form_delivers(&m, EVE).await?.is_none(),
            "the sign-in form delivers Eve, listed only by the unconfirmed generation, no link",
            "it delivered one",
        )?;
        let roster = m.get_with(&dan, "/roster").await?.response;
        let page = crate::rigs::page::of(&roster);
        let csrf = page
            .forms()
            .iter()
            .find_map(|f| f.value("csrf").map(str::to_string))
            .unwrap_or_default();
        check(
            roster.status == 200
                && !csrf.is_empty()
                && !page.forms().iter().any(|f| f.action == "/roster/confirm"),
            "Dan's roster page answers 200 without the confirmation form",
            format!(
                "{} with forms {:?}",
                roster.status,
                page.forms()
                    .iter()
                    .map(|f| f.action.clone())
                    .collect::<Vec<_>>()
            ),
        )?;
        let refused = m
            .post_form_with(
                &dan,
                "/roster/confirm",
                &[("csrf", &csrf), ("generation", &next)],
            )
            .await?
            .response;
        let pending = m.roster().and_then(|c| c.status().pending).map(|p| p.0);
        check(
            refused.status == 403 && pending.as_deref() == Some(next.as_str()),
            "Dan, a member but no owner, is refused the confirmation (403) and the generation stays pending",
            format!("{} with pending {pending:?}", refused.status),
        )?;

        m.advance_s(ROSTER_TTL_S + 1);
        pull_is_unfamiliar(
            &m,
            "past the TTL, the pull still answers the unconfirmed generation",
        )
        .await?;
        search_withholds(
            &m,
            &dan,
            &canary,
            "Dan's search page past the TTL",
            "new roster generation that an owner has not confirmed",
        )
        .await?;

        owner_confirms(&m, &next).await?;
        let link = form_delivers(&m, EVE).await?;
        let eve = match link {
            Some(url) => m
                .follow_sign_in_link(&url)
                .await?
                .response
                .headers
                .get(axum::http::header::SET_COOKIE)
                .and_then(|v| v.to_str().ok())
                .and_then(|c| c.split(';').next())
                .map(str::to_string),
            None => None,
        }
        .ok_or_else(|| {
            fail(
                "once confirmed, Eve is delivered a link that signs her in",
                "no link or no session",
            )
        })?;
        finds_both(&m, &eve, "Eve", &canary).await?;
        finds_both(
            &m,
            &dan,
            "Dan, in his same session once confirmed,",
            &canary,
        )
        .await?;
        let (status, _) = search(&m, &cai, &canary).await?;
        check(
            status == 401,
            "Cai, not in the confirmed generation, is refused in his session (401)",
            status.to_string(),
        )
    })
}

fn lagging_answer_keeps_pending(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite { m, home, .. } = s;
        let next = format!("{HOME_GENERATION}-restored");
        home.new_generation(&next, &[DAN, EVE]);
        m.pull_roster().await;
        home.add(CAI);
        let newer = home.coordinates().1;
        let r = m.pull_roster().await;
        let pending = m.roster().and_then(|c| c.status().pending);
        check(
            matches!(r, Some(Err(memoria::RosterFault::UnfamiliarGeneration)))
                && pending == Some((next.clone(), newer)),
            format!("the new generation's epoch {newer} waits as pending (presence)"),
            format!("{r:?}, pending {pending:?}"),
        )?;
        home.set_fault(HomeFault::StaleEpoch);
        let r = m.pull_roster().await;
        let pending = m.roster().and_then(|c| c.status().pending);
        check(
            matches!(r, Some(Err(_))) && pending == Some((next.clone(), newer)),
            format!(
                "a lagging answer of the pending generation is not adopted and the pending epoch stays {newer}"
            ),
            format!("{r:?}, pending {pending:?}"),
        )?;
        home.set_fault(HomeFault::None);
        owner_confirms(&m, &next).await?;
        check(
            form_delivers(&m, CAI).await?.is_some(),
            "once confirmed, Cai, listed only at the newer epoch of the new generation, is delivered a link",
            "none",
        )
    })
}

fn restart_keeps_coordinates(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite {
            mut m,
            home,
            canary,
            ..
        } = s;
        let epoch = pulls_dan_removal(&m, &home, "memoria pulls Dan's removal").await?;
        m.restart().await;
        home.set_fault(HomeFault::StaleEpoch);
        let r = m.pull_roster().await;
        check(
            matches!(r, Some(Err(memoria::RosterFault::EpochBehind { held, .. })) if held == epoch),
            format!(
                "after a restart, a pull answering the epoch before Dan's removal fails as behind the epoch {epoch} adopted before it"
            ),
            format!("{r:?}"),
        )?;
        check(
            form_delivers(&m, DAN).await?.is_none(),
            "after the restart, Dan, removed before it, is delivered no link",
            "he was delivered one",
        )?;
        home.set_fault(HomeFault::None);
        let r = m.pull_roster().await;
        check(
            matches!(r, Some(Ok((_, e))) if e == epoch),
            format!(
                "the home answering as it stands, the pull is adopted at epoch {epoch} (presence)"
            ),
            format!("{r:?}"),
        )?;
        let cai = m.sign_in(CAI).await?;
        finds_both(&m, &cai, "Cai, after the restart", &canary).await?;

        let next = format!("{HOME_GENERATION}-reprovisioned");
        home.new_generation(&next, &[DAN, EVE]);
        m.restart().await;
        pull_is_unfamiliar(
            &m,
            "after a restart, a pull answering a generation memoria never adopted is not adopted",
        )
        .await?;
        for who in [EVE, CAI] {
            check(
                form_delivers(&m, who).await?.is_none(),
                format!(
                    "with the new generation unconfirmed after the restart, {who} is delivered no link"
                ),
                "a link was delivered",
            )?;
        }
        owner_confirms(&m, &next).await?;
        check(
            form_delivers(&m, EVE).await?.is_some(),
            "once Ana confirmed, Eve is delivered a link",
            "none",
        )
    })
}

fn copy_enforced_within_ttl(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite {
            m, home, canary, ..
        } = s;
        let cai = m.sign_in(CAI).await?;
        let epoch = pulls_dan_removal(&m, &home, "memoria pulls Dan's removal").await?;
        check(
            form_delivers(&m, DAN).await?.is_none(),
            "Dan, removed, is delivered no link (presence of the removal)",
            "he was delivered one",
        )?;
        finds_both(&m, &cai, "Cai", &canary).await?;
        for fault in failed_pulls() {
            home.set_fault(fault);
            let r = m.pull_roster().await;
            let held = m.roster().and_then(|c| c.status().current).map(|c| c.1);
            check(
                matches!(r, Some(Err(_))) && held == Some(epoch),
                format!(
                    "with the home {fault:?}, the pull fails and the copy keeps its epoch {epoch}"
                ),
                format!("{r:?}, epoch {held:?}"),
            )?;
            finds_both(&m, &cai, &format!("with the home {fault:?}, Cai"), &canary).await?;
            check(
                form_delivers(&m, DAN).await?.is_none(),
                format!("with the home {fault:?}, Dan is delivered no link"),
                "he was delivered one",
            )?;
        }
        served_to_the_ttl(
            &m,
            &cai,
            &canary,
            "one second past the TTL, Cai's search page",
        )
        .await
    })
}

fn failed_pulls_renew_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite {
            m, home, canary, ..
        } = s;
        let cai = m.sign_in(CAI).await?;
        pulls_dan_removal(
            &m,
            &home,
            "memoria pulls Dan's removal (presence: the home has an older epoch to lag to)",
        )
        .await?;
        finds_both(&m, &cai, "Cai", &canary).await?;
        let mut faults = failed_pulls();
        faults.push(HomeFault::StaleEpoch);
        let step = ROSTER_TTL_S / i64::try_from(faults.len() + 1).unwrap_or(i64::MAX);
        for fault in faults {
            let before = age_s(&m);
            m.advance_s(step);
            home.set_fault(fault);
            let r = m.pull_roster().await;
            let age = age_s(&m);
            check(
                matches!(r, Some(Err(_))) && age >= before + step,
                format!(
                    "with the home {fault:?}, the pull fails and the copy's age still counts from the last successful pull"
                ),
                format!("{r:?}, age {before} s then {age} s"),
            )?;
            finds_both(&m, &cai, &format!("with the home {fault:?}, Cai"), &canary).await?;
        }
        served_to_the_ttl(
            &m,
            &cai,
            &canary,
            "one second past the TTL of the last successful pull, the home having answered a failed one moments ago, Cai's search page",
        )
        .await
    })
}

fn confirmation_renews_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    in_suite_world(ctx, |s| async move {
        let Suite {
            m, home, canary, ..
        } = s;
        let dan = m.sign_in(DAN).await?;
        finds_both(&m, &dan, "Dan", &canary).await?;
        let next = format!("{HOME_GENERATION}-restored");
        home.new_generation(&next, &[DAN, EVE]);
        pull_is_unfamiliar(&m, "a pull answering a new generation holds it pending").await?;
        home.set_fault(HomeFault::Down);
        m.advance_s(ROSTER_TTL_S + 1);
        let r = m.pull_roster().await;
        check(
            matches!(r, Some(Err(_))),
            "with the home down past the TTL, the pull fails",
            format!("{r:?}"),
        )?;
        owner_confirms(&m, &next).await?;
        let current = m.roster().and_then(|c| c.status().current).map(|c| c.0);
        check(
            current.as_deref() == Some(next.as_str()),
            "Ana's confirmation adopts the generation (presence)",
            format!("{current:?}"),
        )?;
        stale(
            &m,
            "the confirmed copy is as old as the pull that brought it: past the TTL, stale",
        )?;
        search_withholds(
            &m,
            &dan,
            &canary,
            "Dan's search page, confirmed but with no pull within the TTL,",
            "roster is stale",
        )
        .await?;
        check(
            form_delivers(&m, EVE).await?.is_none(),
            "Eve, listed by the confirmed generation, is delivered no link while the copy is stale",
            "she was delivered one",
        )?;
        home_answers_again(
            &m,
            &home,
            "once the home answers, the pull in the confirmed generation succeeds",
            &dan,
            "Dan, in his same session once the copy is fresh,",
            &canary,
        )
        .await
    })
}
