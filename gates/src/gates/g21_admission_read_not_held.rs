//! Gate 21 (§10, §4.3): admission is read, not held — a person removed from the owners list or the home's roster is refused at verification and in the session they hold, and an owners source or a roster that cannot be read refuses rather than admits.
//!
//! Requirement: "A person absent from the roster is refused, and an
//! unreadable roster refuses rather than admits." Two halves.
//!
//! **The roster half** (suite shape, the `21/...-roster-...` cases) runs in
//! the simulator: memoria admits its owners and then the pulled copy of a
//! fake home's roster (suite call 8). A member asks for a link through the
//! sign-in form while listed, the home removes them, memoria pulls the
//! removal, and the link answers 403 with no session while another member's
//! signs in; a member's session is refused (401) on its next request once
//! the removal is pulled, and works again once the home lists them again;
//! a home that is down, or answers garbage, before any copy was pulled
//! admits no member (no link, no session) while an owner still signs in,
//! and once the home answers the same member is admitted.
//!
//! **The lone half**: memoria admits from an owners file
//! (`MEMORIA_OWNERS_FILE`, [`memoria::Admission::file`]) that the case
//! rewrites while the app runs, with no restart. The gate asserts at the
//! moment that decides, which is verification, not submission: a link is
//! asked for through the sign-in form while the address is an owner's, the
//! owner is removed, and the link, followed, must answer 403 and set no
//! session. Two-sided throughout: in the same app and the same steps, an
//! owner still on the list reaches a session, or "no session" could be a
//! broken link, a mailer that never fired, or state that did not survive.
//! Every refusal is also shown to be the source's: restored, the same owner
//! is admitted again.

use memoria::testkit::{TestApp, TestResponse};
use memoria::{Admission, DekSource, ErrorKind, OWNERS_FILE_ENV, SearchError};

use memoria_simulator::{GARBAGE, HomeFault, Memoria};

use crate::rigs::app::{OwnersFile, app_with_owners_file};
use crate::rigs::home::{
    ANA, CAI, DAN, OWNED_TAG, SHEETS_TAG, finds_both, form_delivers, search, suite_world, up,
};
use crate::rigs::sim::{check, run_world};
use crate::rigs::support::block_on;
use crate::{Case, Ctx, Failure, Gate, ensure};

const ANA_LONE: &str = "ana@example.org";
const BEA: &str = "bea@example.org";

/// Gate 21.
pub static GATE: Gate = Gate {
    id: "21",
    title: "Admission is read, not held",
    gates_md: &[
        "Admission is read, not held: a removed owner is refused at verification; an unreadable roster refuses",
    ],
    sections: &["§10", "§4.3"],
    requirement: "A person removed from the owners list, or from the home's roster once the removal is pulled, is refused at verification (403, no session) after following a link sent while they were admitted, and on the next request of a session they hold; an owners source that cannot be read refuses everyone, and a roster that cannot be read (the home down, garbage, or another team's roster, with no copy held) admits no member, at verification, in sessions and at the sign-in form, until it can be read; a person still listed is admitted through the same steps.",
    cases: &[
        Case {
            id: "21/an-owner-removed-after-asking-for-a-link-is-refused-at-verification",
            desc: "Ana and Bea each ask for a link through the sign-in form (POST /auth/begin) and each is delivered one (presence); Ana is removed from the owners file; Ana's link, followed, answers 403 and sets no session cookie, and her browser is still signed out; Bea's answers 303 with a session that opens the search page. Ana put back on the list, her spent link still signs nobody in.",
            run: removed_owner_refused_at_verification,
        },
        Case {
            id: "21/a-removed-owner-is-refused-on-the-next-request-of-a-session-they-hold",
            desc: "Ana and Bea are signed in and both open the search page and an uploaded document (presence); Ana is removed from the owners file; her next requests (the search page, the document, the results fragment, the brief page, an upload) are each refused with the sign-in page (401) naming nothing of the document, and the library's search, which the CLI and MCP call, refuses her as not admitted; Bea's session goes on as before, and Ana's, put back on the list, works again.",
            run: removed_owner_refused_in_session,
        },
        Case {
            id: "21/a-removed-owner-cannot-delete-from-a-session-they-hold",
            desc: "Ana and Bea are signed in and both open Ana's upload (presence); Ana is removed from the owners file; her POST to the document's delete form, with her session's own CSRF token, answers the sign-in page (401), and Bea still opens the document; Bea's POST to the same form with her token answers 303 and the document is gone (the form works: Ana's refusal was admission's).",
            run: removed_owner_cannot_delete,
        },
        Case {
            id: "21/an-owner-replaced-by-an-address-of-the-same-length-is-refused",
            desc: "The list is read, not a stat of it: Ana is signed in, her session opens the search page and a link is delivered to her (presence); the owners file is replaced, in one rename, by one naming bea@example.org instead (the same length, the old file's modification time); Ana's session answers 401 on its next request and her link 403 with no session; Bea, in the same app, is sent a link that signs her in.",
            run: same_length_replacement_refused,
        },
        Case {
            id: "21/an-unreadable-owners-source-refuses",
            desc: "For each way the owners file can stop being a list (removed, a directory in its place, a line that is not an address, not UTF-8, over its size cap): Ana's session is refused (401), a link delivered to her while the file was readable answers 403 with no session, and the sign-in form delivers her no link; restored, her session opens the search page again and the form delivers a link.",
            run: unreadable_source_refuses,
        },
        Case {
            id: "21/a-start-with-an-unreadable-owners-source-is-refused",
            desc: "Configuration: MEMORIA_OWNERS_FILE naming a readable list starts with its owners admitted (presence); naming a file that is missing, or holds a line that is not an address, refuses to start as a configuration error that quotes no address.",
            run: start_with_unreadable_source_refused,
        },
        Case {
            id: "21/a-person-removed-from-the-roster-is-refused-at-verification",
            desc: "Suite shape: Cai and Dan are on the home's roster and memoria has pulled it (presence); each asks for a link through the sign-in form and is delivered one; the home removes Cai and memoria pulls the removal; Cai's link, followed, answers 403 and sets no session, and the sign-in form delivers him no new link; Dan's answers 303 with a session that finds the Sheets passage and memoria's own document.",
            run: roster_removal_refused_at_verification,
        },
        Case {
            id: "21/a-person-removed-from-the-roster-is-refused-in-the-session-they-hold",
            desc: "Suite shape: Cai and Dan are signed in from the roster and each finds the Sheets passage and memoria's own document (presence); the home removes Cai and memoria pulls it; Cai's next requests (the search page, the results fragment, the document page, the brief page, the roster page) answer 401 with nothing of either passage, while Dan's session goes on finding both; the home lists Cai again, memoria pulls it, and Cai's same session finds both again: standing was read, not held by the session.",
            run: roster_removal_refused_in_session,
        },
        Case {
            id: "21/an-unreadable-roster-refuses",
            desc: "Suite shape with the home down from the start, then answering each garbage body (HTML, a cut-off roster, an empty object, a member that is not an address, no members field), then a well-formed roster listing Cai but of another team: every pull fails, no copy is held, the sign-in form delivers Cai no link, and an owner (Ana) is still delivered one that signs her in; the home answers its roster, memoria pulls it, and the form delivers Cai a link that signs him in (the refusal was the roster's).",
            run: unreadable_roster_refuses,
        },
    ],
};

/// The session cookie a response sets, if it sets one with a value.
fn session_set(r: &TestResponse) -> Option<String> {
    r.headers
        .get_all(axum::http::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| {
            c.starts_with(&format!("{}=", memoria::SESSION_COOKIE))
                && c.split(';')
                    .next()
                    .and_then(|p| p.split_once('='))
                    .is_some_and(|(_, v)| !v.is_empty())
        })
        .map(str::to_string)
}

/// Asks for a link for `owner` through the form; the one link it delivered.
fn ask_link(app: &TestApp, owner: &str) -> Result<String, Failure> {
    let before = app.delivered_links().len();
    let r = block_on(app.begin_sign_in(owner));
    let after = app.delivered_links();
    ensure(
        r.status == 200 && after.len() == before + 1 && after[before].0 == owner,
        format!("the sign-in form delivers {owner} one link (presence)"),
        format!("{} and {} new links", r.status, after.len() - before),
    )?;
    Ok(after[before].1.clone())
}

/// Follows `link` in `browser`: requires the refusal at verification (403)
/// that sets no session, and says `what` it was.
fn refused_at_verification(browser: &mut TestApp, link: &str, what: &str) -> Result<(), Failure> {
    let r = block_on(browser.follow_sign_in_link(link));
    ensure(
        r.status == 403 && session_set(&r).is_none(),
        format!("{what} answers 403 with no session"),
        format!("{} {:?}", r.status, session_set(&r)),
    )
}

/// Follows `link` in `browser`: requires a 303 that sets a session.
fn admitted_at_verification(browser: &mut TestApp, link: &str, what: &str) -> Result<(), Failure> {
    let r = block_on(browser.follow_sign_in_link(link));
    ensure(
        r.status == 303 && session_set(&r).is_some(),
        format!("{what} answers 303 with a session"),
        format!("{} {:?}", r.status, session_set(&r)),
    )
}

/// Two owners' app: Ana and Bea signed in, each in a browser of her own,
/// and Ana's upload of a minutes document holding `canary` at `doc`.
struct Minutes {
    app: TestApp,
    owners: OwnersFile,
    ana: TestApp,
    bea: TestApp,
    canary: String,
    doc: String,
}

fn minutes_of_two_owners(ctx: &mut Ctx) -> Result<Minutes, Failure> {
    let canary = ctx.canary();
    let (app, owners) = app_with_owners_file(ctx, &[ANA_LONE, BEA])?;
    let mut ana = app.beside();
    let mut bea = app.beside();
    block_on(ana.sign_in(ANA_LONE));
    block_on(bea.sign_in(BEA));
    let up = block_on(ana.upload(
        "minutes.md",
        format!("# Minutes\n\nThe {canary} budget was agreed.\n").as_bytes(),
        None,
    ));
    let doc = up
        .location()
        .map(str::to_string)
        .filter(|l| l.starts_with("/documents/"))
        .ok_or_else(|| Failure::new("Ana's upload is stored", up.status.to_string()))?;
    Ok(Minutes {
        app,
        owners,
        ana,
        bea,
        canary,
        doc,
    })
}

/// Requires `r` to be a refusal asking to sign in (401): the sign-in page,
/// or the results fragment's own line; holding no `secret`.
fn refused_with_sign_in(r: &TestResponse, what: &str, secret: &str) -> Result<(), Failure> {
    let page = crate::rigs::page::of(r);
    let asks = page.texts("h1") == ["Sign in"] || page.refusals() == ["Sign in to search."];
    ensure(
        r.status == 401 && asks,
        format!("{what} answers 401, asking to sign in"),
        format!("{} {:?} {:?}", r.status, page.texts("h1"), page.refusals()),
    )?;
    ensure(
        !r.body.contains(secret),
        format!("{what}'s refusal names nothing of the document"),
        "it holds the document's words",
    )
}

fn removed_owner_refused_at_verification(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, owners) = app_with_owners_file(ctx, &[ANA_LONE, BEA])?;
    let mut ana = app.beside();
    let mut bea = app.beside();
    let ana_link = ask_link(&app, ANA_LONE)?;
    let bea_link = ask_link(&app, BEA)?;
    owners.write(&[BEA]);

    refused_at_verification(
        &mut ana,
        &ana_link,
        "Ana's link, followed after her removal,",
    )?;
    let home = block_on(ana.get("/"));
    ensure(
        home.status == 401,
        "Ana's browser is still signed out after the refusal",
        home.status.to_string(),
    )?;

    admitted_at_verification(
        &mut bea,
        &bea_link,
        "Bea's link, followed in the same app after the same change (two-sided),",
    )?;
    let home = block_on(bea.get("/"));
    ensure(
        home.status == 200,
        "Bea's session opens the search page",
        home.status.to_string(),
    )?;

    owners.write(&[ANA_LONE, BEA]);
    let again = block_on(ana.follow_sign_in_link(&ana_link));
    ensure(
        again.status == 400 && session_set(&again).is_none(),
        "the refused link was spent: with Ana listed again it still signs nobody in",
        format!("{} {:?}", again.status, session_set(&again)),
    )
}

fn removed_owner_refused_in_session(ctx: &mut Ctx) -> Result<(), Failure> {
    let Minutes {
        app,
        owners,
        ana,
        bea,
        canary,
        doc,
    } = minutes_of_two_owners(ctx)?;
    let search = format!("/?q={}", memoria::testkit::form_encode(&canary));
    for (who, client) in [("Ana", &ana), ("Bea", &bea)] {
        let page = block_on(client.get(&search));
        let opened = block_on(client.get(&doc));
        ensure(
            page.status == 200
                && crate::rigs::page::of(&page).results().len() == 1
                && opened.status == 200
                && opened.body.contains(&canary),
            format!("{who} finds and opens the document (presence)"),
            format!("search {}, document {}", page.status, opened.status),
        )?;
    }

    owners.write(&[BEA]);
    let fragment = format!("/search?q={}", memoria::testkit::form_encode(&canary));
    let brief = format!(
        "/brief?task={}&scope=team",
        memoria::testkit::form_encode(&canary)
    );
    for (what, uri) in [
        ("the search page", search.as_str()),
        ("the document page", doc.as_str()),
        ("the results fragment", fragment.as_str()),
        ("the brief page", brief.as_str()),
        ("the home page", "/"),
    ] {
        refused_with_sign_in(&block_on(ana.get(uri)), &format!("Ana's {what}"), &canary)?;
    }
    let upload = block_on(ana.upload("later.md", b"# Later\n\nwords\n", None));
    refused_with_sign_in(&upload, "Ana's upload", &canary)?;
    let library = block_on(memoria::ruled_search(
        app.state().shared_instance(),
        None,
        ANA_LONE,
        &canary,
        1,
    ));
    ensure(
        matches!(library, Err(SearchError::NotAdmitted)),
        "the library's search (what the CLI and MCP call) refuses Ana as not admitted",
        format!("{:?}", library.map(|r| r.page.results.len())),
    )?;

    let page = block_on(bea.get(&search));
    ensure(
        page.status == 200 && crate::rigs::page::of(&page).results().len() == 1,
        "Bea's session goes on as before (two-sided)",
        page.status.to_string(),
    )?;
    owners.write(&[ANA_LONE, BEA]);
    let back = block_on(ana.get(&search));
    ensure(
        back.status == 200 && crate::rigs::page::of(&back).results().len() == 1,
        "listed again, Ana's session opens the search page: the list was read, not the session",
        back.status.to_string(),
    )
}

fn removed_owner_cannot_delete(ctx: &mut Ctx) -> Result<(), Failure> {
    let Minutes {
        app: _,
        owners,
        ana,
        bea,
        canary,
        doc,
    } = minutes_of_two_owners(ctx)?;
    for (who, client) in [("Ana", &ana), ("Bea", &bea)] {
        let opened = block_on(client.get(&doc));
        ensure(
            opened.status == 200 && opened.body.contains(&canary),
            format!("{who} opens the upload (presence)"),
            opened.status.to_string(),
        )?;
    }

    owners.write(&[BEA]);
    let delete = format!("{doc}/delete");
    let ana_csrf = ana.csrf().unwrap_or_default().to_string();
    ensure(
        !ana_csrf.is_empty(),
        "Ana's session holds a CSRF token",
        "none",
    )?;
    let refused = block_on(ana.post_form(&delete, &[("csrf", &ana_csrf)]));
    refused_with_sign_in(&refused, "Ana's delete form, after her removal", &canary)?;
    let opened = block_on(bea.get(&doc));
    ensure(
        opened.status == 200 && opened.body.contains(&canary),
        "after Ana's refused delete, Bea still opens the document",
        opened.status.to_string(),
    )?;

    let bea_csrf = bea.csrf().unwrap_or_default().to_string();
    let deleted = block_on(bea.post_form(&delete, &[("csrf", &bea_csrf)]));
    ensure(
        deleted.status == 303,
        "Bea's delete form, in the same app, answers 303 (two-sided)",
        deleted.status.to_string(),
    )?;
    let gone = block_on(bea.get(&doc));
    ensure(
        gone.status == 404,
        "after Bea's delete, the document's page answers 404",
        gone.status.to_string(),
    )
}

fn same_length_replacement_refused(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, owners) = app_with_owners_file(ctx, &[ANA_LONE])?;
    let mut ana = app.beside();
    block_on(ana.sign_in(ANA_LONE));
    let home = block_on(ana.get("/"));
    ensure(
        home.status == 200,
        "Ana's session opens the search page (presence)",
        home.status.to_string(),
    )?;
    let link = ask_link(&app, ANA_LONE)?;
    let stat = |what: &str| {
        std::fs::metadata(owners.path())
            .and_then(|m| Ok((m.len(), m.modified()?)))
            .map_err(|e| {
                Failure::new(
                    format!("the owners file can be stat'd {what}"),
                    e.to_string(),
                )
            })
    };
    let before = stat("before the change")?;
    owners.write_keeping_mtime(&[BEA]);
    let after = stat("after the change")?;
    ensure(
        before == after,
        "the replaced file has the old one's length and modification time",
        "they differ",
    )?;

    let home = block_on(ana.get("/"));
    ensure(
        home.status == 401,
        "after the same-length replacement, Ana's session is refused (401)",
        home.status.to_string(),
    )?;
    refused_at_verification(
        &mut app.beside(),
        &link,
        "after the same-length replacement, Ana's link",
    )?;
    let bea_link = ask_link(&app, BEA)?;
    admitted_at_verification(
        &mut app.beside(),
        &bea_link,
        "Bea, now listed, is sent a link; followed (two-sided), it",
    )
}

fn unreadable_source_refuses(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, owners) = app_with_owners_file(ctx, &[ANA_LONE])?;
    let mut ana = app.beside();
    block_on(ana.sign_in(ANA_LONE));
    for how in OwnersFile::SPOILS {
        let home = block_on(ana.get("/"));
        ensure(
            home.status == 200,
            format!(
                "before the owners file is {how}, Ana's session opens the search page (presence)"
            ),
            home.status.to_string(),
        )?;
        let link = ask_link(&app, ANA_LONE)?;
        owners.spoil(how, &[ANA_LONE]);
        let home = block_on(ana.get("/"));
        ensure(
            home.status == 401,
            format!("with the owners file {how}, Ana's session is refused"),
            home.status.to_string(),
        )?;
        refused_at_verification(
            &mut app.beside(),
            &link,
            &format!("with the owners file {how}, a link sent while it was readable"),
        )?;
        let before = app.delivered_links().len();
        let asked = block_on(app.begin_sign_in(ANA_LONE));
        ensure(
            asked.status == 200 && app.delivered_links().len() == before,
            format!("with the owners file {how}, the sign-in form delivers no link"),
            format!(
                "{} and {} links",
                asked.status,
                app.delivered_links().len() - before
            ),
        )?;
        owners.write(&[ANA_LONE]);
        let home = block_on(ana.get("/"));
        ensure(
            home.status == 200,
            format!(
                "the owners file restored after being {how}, Ana's session opens the search page again"
            ),
            home.status.to_string(),
        )?;
    }
    Ok(())
}

fn start_with_unreadable_source_refused(ctx: &mut Ctx) -> Result<(), Failure> {
    let owners = OwnersFile::new(ctx, &[ANA_LONE]);
    let data = ctx.dir("data");
    let path = owners.path().to_string_lossy().into_owned();
    let dek = memoria::Dek::generate().to_base64();
    let env = move |k: &str| match k {
        OWNERS_FILE_ENV => Some(path.clone()),
        memoria::DEK_ENV => Some(dek.clone()),
        _ => None,
    };
    let started = memoria::resolve_config(&data, &env)
        .map_err(|e| Failure::new("a readable owners file starts (presence)", e.to_string()))?;
    ensure(
        started.dek_source == DekSource::Env
            && started.admission.admit(ANA_LONE).is_some()
            && started.admission.owners_file() == Some(owners.path()),
        "the configuration admits from the owners file it names",
        format!("{:?}", started.admission.owners_file()),
    )?;
    for how in ["removed", "a line that is not an address"] {
        owners.spoil(how, &[ANA_LONE]);
        let refused = memoria::resolve_config(&data, &env);
        let err = match refused {
            Ok(_) => {
                return Err(Failure::new(
                    format!("with the owners file {how}, memoria refuses to start"),
                    "it started",
                ));
            }
            Err(e) => e,
        };
        ensure(
            err.kind() == ErrorKind::Config && !format!("{err:#}").contains(ANA_LONE),
            format!(
                "with the owners file {how}, the refusal is a configuration error quoting no address"
            ),
            format!("{:?}", err.kind()),
        )?;
        ensure(
            Admission::file(owners.path()).is_err(),
            format!("with the owners file {how}, an Admission cannot be made of it"),
            "it can",
        )?;
    }
    Ok(())
}

/// The session cookie a sign-in answer sets, if it sets one with a value.
fn cookie_of(r: &memoria::testkit::TestResponse) -> Option<String> {
    session_set(r).and_then(|c| c.split(';').next().map(str::to_string))
}

/// Asks the sign-in form for `who`'s link and follows it: the session it
/// set, or `None` when no link came or it set none.
async fn signs_in_by_link(m: &Memoria, who: &str) -> Result<Option<String>, String> {
    Ok(match form_delivers(m, who).await? {
        Some(url) => cookie_of(&m.follow_sign_in_link(&url).await?.response),
        None => None,
    })
}

/// Pulls the roster now; `Ok` only when the copy was refreshed.
async fn pulled(m: &Memoria, what: &str) -> Result<(), String> {
    let r = m.pull_roster().await;
    check(
        matches!(r, Some(Ok(_))),
        format!("memoria pulls the roster {what}"),
        format!("{r:?}"),
    )
}

fn roster_removal_refused_at_verification(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, home) = suite_world(ctx.seed(), &canary);
    run_world(&world, move |mut m| async move {
        up(&mut m, &canary).await?;
        let cai_link = form_delivers(&m, CAI).await?;
        let dan_link = form_delivers(&m, DAN).await?;
        let (Some(cai_link), Some(dan_link)) = (cai_link, dan_link) else {
            return Err(crate::rigs::sim::fail(
                "the sign-in form delivers Cai and Dan, on the roster, a link each (presence)",
                "a link is missing",
            ));
        };
        home.remove(CAI);
        pulled(&m, "after the home removed Cai").await?;
        let refused = m.follow_sign_in_link(&cai_link).await?.response;
        check(
            refused.status == 403 && session_set(&refused).is_none(),
            "Cai's link, followed after the removal was pulled, answers 403 with no session",
            format!("{} {:?}", refused.status, session_set(&refused)),
        )?;
        check(
            form_delivers(&m, CAI).await?.is_none(),
            "the sign-in form delivers Cai, removed, no new link",
            "it delivered one",
        )?;
        let admitted = m.follow_sign_in_link(&dan_link).await?.response;
        let cookie = cookie_of(&admitted).unwrap_or_default();
        check(
            admitted.status == 303 && !cookie.is_empty(),
            "Dan's link, followed after the same pull, answers 303 with a session (two-sided)",
            format!("{} {:?}", admitted.status, session_set(&admitted)),
        )?;
        finds_both(&m, &cookie, "Dan", &canary).await
    })
}

fn roster_removal_refused_in_session(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, home) = suite_world(ctx.seed(), &canary);
    run_world(&world, move |mut m| async move {
        up(&mut m, &canary).await?;
        let cai = m.sign_in(CAI).await?;
        let dan = m.sign_in(DAN).await?;
        finds_both(&m, &cai, "Cai", &canary).await?;
        finds_both(&m, &dan, "Dan", &canary).await?;
        let (_, page) = search(&m, &cai, &canary).await?;
        let doc = page
            .citations()
            .into_iter()
            .map(|c| c.link)
            .find(|l| l.starts_with("/documents/") && !l.is_empty())
            .unwrap_or_default();
        let doc = doc.split('#').next().unwrap_or_default().to_string();

        home.remove(CAI);
        pulled(&m, "after the home removed Cai").await?;
        let q = memoria::testkit::form_encode(&canary);
        for (what, uri) in [
            ("search page", format!("/?q={q}")),
            ("results fragment", format!("/search?q={q}")),
            ("document page", doc.clone()),
            ("brief page", format!("/brief?task={q}&scope=team")),
            ("roster page", "/roster".to_string()),
        ] {
            let r = m.get_with(&cai, &uri).await?.response;
            check(
                r.status == 401 && !r.body.contains(SHEETS_TAG) && !r.body.contains(OWNED_TAG),
                format!(
                    "Cai's {what}, after his removal was pulled, answers 401 with nothing of either passage"
                ),
                format!("{} ({} bytes)", r.status, r.body.len()),
            )?;
        }
        finds_both(&m, &dan, "Dan, still on the roster,", &canary).await?;
        home.add(CAI);
        pulled(&m, "after the home listed Cai again").await?;
        finds_both(&m, &cai, "Cai, listed again, in his same", &canary).await
    })
}

fn unreadable_roster_refuses(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (world, home) = suite_world(ctx.seed(), &canary);
    home.set_fault(HomeFault::Down);
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let mut faults = vec![HomeFault::Down];
        faults.extend(GARBAGE.iter().map(|g| HomeFault::Garbage(*g)));
        // Well formed, listing Cai, but another team's: not this roster.
        faults.push(HomeFault::OtherTeam);
        for fault in faults {
            home.set_fault(fault);
            let r = m.pull_roster().await;
            check(
                matches!(r, Some(Err(_))),
                format!("with the home {fault:?}, the pull fails"),
                format!("{r:?}"),
            )?;
            check(
                m.roster().and_then(|c| c.status().current).is_none(),
                format!("with the home {fault:?}, no copy is held"),
                "a copy is held",
            )?;
            check(
                form_delivers(&m, CAI).await?.is_none(),
                format!(
                    "with the home {fault:?} and no copy, the sign-in form delivers Cai no link"
                ),
                "it delivered one",
            )?;
            check(
                signs_in_by_link(&m, ANA).await?.is_some(),
                format!(
                    "with the home {fault:?}, Ana, an owner, is delivered a link that signs her in (two-sided)"
                ),
                "no link or no session",
            )?;
        }
        home.set_fault(HomeFault::None);
        pulled(&m, "once the home answers").await?;
        check(
            signs_in_by_link(&m, CAI).await?.is_some(),
            "once the roster is pulled, the sign-in form delivers Cai a link that signs him in",
            "no link or no session",
        )
    })
}
