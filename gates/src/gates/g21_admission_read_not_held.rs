//! Gate 21 (§10, §4.3): admission is read, not held — an owner removed from the list is refused at verification and in the session they hold, and an owners source that cannot be read refuses rather than admits.
//!
//! Requirement, lone half (the suite half, the home's roster, is owed at
//! slice 1): "A person absent from the roster is refused, and an unreadable
//! roster refuses rather than admits." memoria admits from an owners file
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

use crate::rigs::app::{OwnersFile, app_with_owners_file};
use crate::rigs::page::Page;
use crate::rigs::support::block_on;
use crate::{Case, Ctx, Failure, Gate, ensure};

const ANA: &str = "ana@example.org";
const BEA: &str = "bea@example.org";

/// Gate 21.
pub static GATE: Gate = Gate {
    id: "21",
    title: "Admission is read, not held",
    sections: &["§10", "§4.3"],
    requirement: "A person removed from the owners list is refused at verification (403, no session) after following a link sent while they were admitted, and on the next request of a session they hold; an owners source that cannot be read refuses everyone, at verification, in sessions and at the sign-in form, until it can be read; an owner still listed is admitted through the same steps.",
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

/// Requires `r` to be a refusal asking to sign in (401): the sign-in page,
/// or the results fragment's own line; holding no `secret`.
fn refused_with_sign_in(r: &TestResponse, what: &str, secret: &str) -> Result<(), Failure> {
    let page = Page::of(r);
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
    let (app, owners) = app_with_owners_file(ctx, &[ANA, BEA])?;
    let mut ana = app.beside();
    let mut bea = app.beside();
    let ana_link = ask_link(&app, ANA)?;
    let bea_link = ask_link(&app, BEA)?;
    owners.write(&[BEA]);

    let refused = block_on(ana.follow_sign_in_link(&ana_link));
    ensure(
        refused.status == 403,
        "Ana's link, followed after her removal, answers 403",
        refused.status.to_string(),
    )?;
    ensure(
        session_set(&refused).is_none(),
        "the refusal sets no session cookie",
        format!("{:?}", session_set(&refused)),
    )?;
    let home = block_on(ana.get("/"));
    ensure(
        home.status == 401,
        "Ana's browser is still signed out after the refusal",
        home.status.to_string(),
    )?;

    let admitted = block_on(bea.follow_sign_in_link(&bea_link));
    ensure(
        admitted.status == 303 && session_set(&admitted).is_some(),
        "Bea's link, followed in the same app after the same change, answers 303 with a session (two-sided)",
        format!("{} {:?}", admitted.status, session_set(&admitted)),
    )?;
    let home = block_on(bea.get("/"));
    ensure(
        home.status == 200,
        "Bea's session opens the search page",
        home.status.to_string(),
    )?;

    owners.write(&[ANA, BEA]);
    let again = block_on(ana.follow_sign_in_link(&ana_link));
    ensure(
        again.status == 400 && session_set(&again).is_none(),
        "the refused link was spent: with Ana listed again it still signs nobody in",
        format!("{} {:?}", again.status, session_set(&again)),
    )
}

fn removed_owner_refused_in_session(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (app, owners) = app_with_owners_file(ctx, &[ANA, BEA])?;
    let mut ana = app.beside();
    let mut bea = app.beside();
    block_on(ana.sign_in(ANA));
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
    let search = format!("/?q={}", memoria::testkit::form_encode(&canary));
    for (who, client) in [("Ana", &ana), ("Bea", &bea)] {
        let page = block_on(client.get(&search));
        let opened = block_on(client.get(&doc));
        ensure(
            page.status == 200
                && Page::of(&page).results().len() == 1
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
        ANA,
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
        page.status == 200 && Page::of(&page).results().len() == 1,
        "Bea's session goes on as before (two-sided)",
        page.status.to_string(),
    )?;
    owners.write(&[ANA, BEA]);
    let back = block_on(ana.get(&search));
    ensure(
        back.status == 200 && Page::of(&back).results().len() == 1,
        "listed again, Ana's session opens the search page: the list was read, not the session",
        back.status.to_string(),
    )
}

fn removed_owner_cannot_delete(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let (app, owners) = app_with_owners_file(ctx, &[ANA, BEA])?;
    let mut ana = app.beside();
    let mut bea = app.beside();
    block_on(ana.sign_in(ANA));
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
    let (app, owners) = app_with_owners_file(ctx, &[ANA])?;
    let mut ana = app.beside();
    block_on(ana.sign_in(ANA));
    let home = block_on(ana.get("/"));
    ensure(
        home.status == 200,
        "Ana's session opens the search page (presence)",
        home.status.to_string(),
    )?;
    let link = ask_link(&app, ANA)?;
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
    let mut browser = app.beside();
    let followed = block_on(browser.follow_sign_in_link(&link));
    ensure(
        followed.status == 403 && session_set(&followed).is_none(),
        "after the same-length replacement, Ana's link answers 403 with no session",
        format!("{} {:?}", followed.status, session_set(&followed)),
    )?;
    let bea_link = ask_link(&app, BEA)?;
    let mut bea = app.beside();
    let admitted = block_on(bea.follow_sign_in_link(&bea_link));
    ensure(
        admitted.status == 303 && session_set(&admitted).is_some(),
        "Bea, now listed, is sent a link that signs her in (two-sided)",
        format!("{} {:?}", admitted.status, session_set(&admitted)),
    )
}

fn unreadable_source_refuses(ctx: &mut Ctx) -> Result<(), Failure> {
    let (app, owners) = app_with_owners_file(ctx, &[ANA])?;
    let mut ana = app.beside();
    block_on(ana.sign_in(ANA));
    for how in OwnersFile::SPOILS {
        let home = block_on(ana.get("/"));
        ensure(
            home.status == 200,
            format!(
                "before the owners file is {how}, Ana's session opens the search page (presence)"
            ),
            home.status.to_string(),
        )?;
        let link = ask_link(&app, ANA)?;
        owners.spoil(how, &[ANA]);
        let home = block_on(ana.get("/"));
        ensure(
            home.status == 401,
            format!("with the owners file {how}, Ana's session is refused"),
            home.status.to_string(),
        )?;
        let mut browser = app.beside();
        let followed = block_on(browser.follow_sign_in_link(&link));
        ensure(
            followed.status == 403 && session_set(&followed).is_none(),
            format!(
                "with the owners file {how}, a link sent while it was readable answers 403 with no session"
            ),
            format!("{} {:?}", followed.status, session_set(&followed)),
        )?;
        let before = app.delivered_links().len();
        let asked = block_on(app.begin_sign_in(ANA));
        ensure(
            asked.status == 200 && app.delivered_links().len() == before,
            format!("with the owners file {how}, the sign-in form delivers no link"),
            format!(
                "{} and {} links",
                asked.status,
                app.delivered_links().len() - before
            ),
        )?;
        owners.write(&[ANA]);
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
    let owners = OwnersFile::new(ctx, &[ANA]);
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
            && started.admission.admit(ANA).is_some()
            && started.admission.owners_file() == Some(owners.path()),
        "the configuration admits from the owners file it names",
        format!("{:?}", started.admission.owners_file()),
    )?;
    for how in ["removed", "a line that is not an address"] {
        owners.spoil(how, &[ANA]);
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
            err.kind() == ErrorKind::Config && !format!("{err:#}").contains(ANA),
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
