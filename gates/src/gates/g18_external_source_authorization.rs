//! Gate 18 (§10, §4.2): external-source authorization — for memoria-owned content admission is the only door and presence the other fact, and an upstream revocation removes nothing.
//!
//! §4.2: memoria is the app of record for uploads and connector content,
//! and "the test is two facts and nothing else: the asker is admitted …
//! and the document is present in memoria and not deleted." So
//! memoria-owned content is team-wide by construction, and "the only
//! revocation is deletion". §10 asks for both facts, each able to fail on
//! its own: two admitted people both see a memoria-owned document (no
//! per-person filter distinguishes them); one no longer admitted sees
//! nothing memoria-owned at all; a document deleted in memoria is gone for
//! everyone; one revoked upstream ("disconnect the Notion integration,
//! remove memoria's Drive access") is still served.
//!
//! In lone shape admission is the owners list, so "no longer admitted" is
//! a removal from the owners file memoria reads on every request (there is
//! no cache to wait past). The documents are an upload and an item of the
//! simulator's fake connector (a Drive's folder). A revocation is what a
//! source says when memoria's access is taken away: every call answering
//! 401 (the integration disconnected) or the folder answering 403 (its
//! access removed). An item deleted upstream and left out of a complete
//! enumeration is a deletion at the source, which gate 7 covers.

use memoria::connector::{FailureKind, SyncReport, sync};
use memoria::testkit::{TestApp, TestResponse};
use memoria::{ErrorKind, SearchError};
use memoria_simulator::connector::{ConnectorFaults, FakeConnector};

use crate::rigs::app::{OwnersFile, app_with_owners_file};
use crate::rigs::support::block_on;
use crate::{Case, Ctx, Failure, Gate, ensure};

const ANA: &str = "ana@example.org";
const BEA: &str = "bea@example.org";
/// An owner at another mail domain than the first owner's (a contractor).
const CY: &str = "cy@contractor.test";
/// The fake connector's folder the item lives in.
const FOLDER: &str = "shared-drive";
/// The upload's and the connector item's titles, as the home page lists them.
const UPLOAD_TITLE: &str = "Offsite minutes";
const ITEM_TITLE: &str = "Hiring plan";

/// Gate 18.
pub static GATE: Gate = Gate {
    id: "18",
    title: "External-source authorization: admission is the only door, presence the other",
    gates_md: &[
        "External-source authorization: admission is the only door; presence is the other; upstream revocation does not remove",
    ],
    sections: &["§10", "§4.2"],
    requirement: "For memoria-owned content (uploads, connector items): two admitted people both see the same document, neither being its uploader a condition; a person no longer admitted sees nothing memoria-owned on any page or through the library; a document deleted in memoria is gone for everyone while the others stay; a document whose source revoked memoria's access (401 on every call, 403 on its folder) is still served to everyone admitted.",
    cases: &[
        Case {
            id: "18/two-admitted-people-see-the-same-memoria-owned-document",
            desc: "Ana uploads a document and a connector sync brings a Drive item in; Ana and Bea each search for each, get the same one result with the same citation, open both document pages (200, the passage's words on them), and find both titles on the home page: no per-person condition, not even the uploader's.",
            run: two_admitted_see_the_same,
        },
        Case {
            id: "18/an-owner-at-another-mail-domain-sees-the-same-memoria-owned-document",
            desc: "The owners file names ana@example.org and cy@contractor.test (an owner at another domain than the first owner's); Ana uploads a document and a connector sync brings a Drive item in; Ana and Cy each find each, open both document pages and find both titles on the home page, and get the same one result with the same citation: admission is the owners list, not a mail domain.",
            run: owner_at_another_domain_sees_the_same,
        },
        Case {
            id: "18/a-person-no-longer-admitted-sees-nothing-memoria-owned",
            desc: "Both documents served to Ana and Bea (presence); Bea is removed from the owners file; her search pages, document pages and home page each answer the sign-in page (401) naming neither document, the sign-in form sends her no link, and the library (search, the document list, a document, the ruled search) refuses her as not admitted; Ana, at the same moment, still finds and opens both.",
            run: no_longer_admitted_sees_nothing,
        },
        Case {
            id: "18/a-document-deleted-in-memoria-is-gone-for-everyone",
            desc: "Ana deletes the upload through its delete form (303); for Ana, who deleted it, and for Bea alike: the search for it finds nothing, its page answers 404, the home page no longer lists it and its count drops with it (the count it states is what its pages list, 1 document), and the store holds no live document by its id; the connector item is still found and opened by both.",
            run: deleted_is_gone_for_everyone,
        },
        Case {
            id: "18/a-document-revoked-upstream-is-still-served",
            desc: "The connector item is served to both (presence); the source then answers 401 to every call (the integration disconnected): the sync fails as credential_expired and deletes nothing, and both still find and open it; then the item's folder answers 403 (memoria's access removed): the sync fails as permission_denied, deletes nothing, and both still find and open it.",
            run: revoked_upstream_still_served,
        },
    ],
};

/// The app, the owners file, Ana's and Bea's signed-in browsers, the fake
/// connector, and the two documents: (canary, path) of the upload and of
/// the connector item.
struct Team {
    app: TestApp,
    owners: OwnersFile,
    ana: TestApp,
    bea: TestApp,
    drive: FakeConnector,
    upload: (String, String),
    item: (String, String),
}

/// Runs one connector sync on the app's instance.
fn synced(app: &TestApp, drive: &FakeConnector) -> Result<SyncReport, Failure> {
    let instance = app.state().instance();
    let mut guard = instance
        .lock()
        .map_err(|_| Failure::new("the instance lock is whole", "poisoned"))?;
    block_on(sync(&mut guard, drive))
        .map_err(|e| Failure::new("the connector sync runs to a report", e.to_string()))
}

/// The document paths a search for `canary` cites, as `who` gets them;
/// the search page must answer 200.
fn found(who: &TestApp, canary: &str) -> Result<Vec<String>, Failure> {
    let r = block_on(who.get(&format!("/?q={}", memoria::testkit::form_encode(canary))));
    ensure(
        r.status == 200,
        "the search page answers 200",
        r.status.to_string(),
    )?;
    Ok(crate::rigs::page::of(&r)
        .citations()
        .into_iter()
        .map(|c| c.link.split('#').next().unwrap_or_default().to_string())
        .collect())
}

/// Requires `who` to find `doc` by its canary and open its page with the
/// canary on it, and to see `title` on the home page.
fn sees(who: &TestApp, name: &str, doc: &(String, String), title: &str) -> Result<(), Failure> {
    let (canary, path) = doc;
    let links = found(who, canary)?;
    ensure(
        links == [path.clone()],
        format!("{name}'s search finds exactly {path}"),
        format!("{links:?}"),
    )?;
    let opened = block_on(who.get(path));
    ensure(
        opened.status == 200 && opened.body.contains(canary.as_str()),
        format!("{name} opens {path}, its passage's words on it"),
        opened.status.to_string(),
    )?;
    let (_, titles) = home_list(who)?;
    ensure(
        titles.iter().any(|t| t == title),
        format!("{name}'s home page lists {title:?}"),
        format!("{titles:?}"),
    )
}

/// The most pages of the home page's list a check walks: the team's two
/// documents are one page.
const HOME_PAGES_MAX: usize = 20;

/// The home page's list as `who` reads it, across its pages (issue 30:
/// the list is paged): the count its first page states ("2 documents.")
/// and every title listed, in order.
fn home_list(who: &TestApp) -> Result<(Option<usize>, Vec<String>), Failure> {
    let mut uri = "/".to_string();
    let mut stated = None;
    let mut titles = Vec::new();
    for _ in 0..HOME_PAGES_MAX {
        let page = crate::rigs::page::of(&block_on(who.get(&uri)));
        ensure(
            page.status() == Some(200),
            format!("the home page's list at {uri} answers 200"),
            format!("{:?}", page.status()),
        )?;
        if stated.is_none() {
            stated = page
                .texts("p")
                .iter()
                .filter(|t| t.contains("Every passage found here is one of them"))
                .find_map(|t| t.split(' ').next()?.parse::<usize>().ok());
        }
        titles.extend(page.texts("ul.documents li > a"));
        let next = page
            .links("nav.documents-pages a")
            .into_iter()
            .find(|l| l.text == "Next ›");
        match next {
            Some(l) => uri = l.href.split('#').next().unwrap_or_default().to_string(),
            None => return Ok((stated, titles)),
        }
    }
    Err(Failure::new(
        format!("the home page's list ends within {HOME_PAGES_MAX} pages"),
        "it does not",
    ))
}

/// Two owners signed in, an upload by Ana and a connector item synced in.
fn team(ctx: &mut Ctx) -> Result<Team, Failure> {
    team_with(ctx, BEA)
}

/// As [`team`], the owners file naming Ana then `second`, who is signed in
/// in the `bea` browser.
fn team_with(ctx: &mut Ctx, second: &str) -> Result<Team, Failure> {
    let upload_canary = ctx.canary();
    let item_canary = ctx.canary();
    let (app, owners) = app_with_owners_file(ctx, &[ANA, second])?;
    let mut ana = app.beside();
    let mut bea = app.beside();
    block_on(ana.sign_in(ANA));
    block_on(bea.sign_in(second));
    let up = block_on(ana.upload(
        "offsite.md",
        format!("# {UPLOAD_TITLE}\n\nThe {upload_canary} venue was chosen.\n").as_bytes(),
        None,
    ));
    let upload_path = up
        .location()
        .map(str::to_string)
        .filter(|l| l.starts_with("/documents/"))
        .ok_or_else(|| Failure::new("Ana's upload is stored", up.status.to_string()))?;
    let drive = FakeConnector::new(2);
    drive.put(
        "hiring",
        FOLDER,
        ITEM_TITLE,
        &format!("The {item_canary} roles open in spring."),
    );
    let first = synced(&app, &drive)?;
    ensure(
        first.is_complete() && first.created == 1,
        "the connector's first sync is complete and brings the item in",
        format!("{first:?}"),
    )?;
    let links = found(&ana, &item_canary)?;
    let item_path = links
        .first()
        .cloned()
        .ok_or_else(|| Failure::new("the connector item is searchable", "no result"))?;
    Ok(Team {
        app,
        owners,
        ana,
        bea,
        drive,
        upload: (upload_canary, upload_path),
        item: (item_canary, item_path),
    })
}

/// Both Ana and Bea see both documents.
fn both_see_both(t: &Team) -> Result<(), Failure> {
    for (name, who) in [("Ana", &t.ana), ("Bea", &t.bea)] {
        sees(who, name, &t.upload, UPLOAD_TITLE)?;
        sees(who, name, &t.item, ITEM_TITLE)?;
    }
    Ok(())
}

fn two_admitted_see_the_same(ctx: &mut Ctx) -> Result<(), Failure> {
    let t = team(ctx)?;
    both_see_both(&t)?;
    same_citations(&t)
}

fn owner_at_another_domain_sees_the_same(ctx: &mut Ctx) -> Result<(), Failure> {
    let t = team_with(ctx, CY)?;
    for (name, who) in [("Ana", &t.ana), ("Cy", &t.bea)] {
        sees(who, name, &t.upload, UPLOAD_TITLE)?;
        sees(who, name, &t.item, ITEM_TITLE)?;
    }
    same_citations(&t)
}

/// Both signed-in owners get the same one result, with the same citation,
/// for each document.
fn same_citations(t: &Team) -> Result<(), Failure> {
    for (canary, _) in [&t.upload, &t.item] {
        let q = format!("/?q={}", memoria::testkit::form_encode(canary));
        let (a, b) = (
            crate::rigs::page::of(&block_on(t.ana.get(&q))).citations(),
            crate::rigs::page::of(&block_on(t.bea.get(&q))).citations(),
        );
        ensure(
            a == b && a.len() == 1,
            "both owners get the same one result with the same citation",
            format!("Ana {a:?}, the other {b:?}"),
        )?;
    }
    Ok(())
}

/// Requires `r` to be the sign-in page (401) naming neither document.
fn refused(r: &TestResponse, what: &str, t: &Team) -> Result<(), Failure> {
    ensure(
        r.status == 401 && crate::rigs::page::of(r).texts("h1") == ["Sign in"],
        format!("{what} answers the sign-in page (401)"),
        r.status.to_string(),
    )?;
    let named = [
        t.upload.0.as_str(),
        t.item.0.as_str(),
        UPLOAD_TITLE,
        ITEM_TITLE,
    ]
    .iter()
    .any(|s| r.body.contains(s));
    ensure(
        !named,
        format!("{what} names nothing memoria-owned"),
        "it holds a document's words or title",
    )
}

/// Requires the library to refuse `asker` as not admitted, everywhere.
fn library_refuses(t: &Team, asker: &str) -> Result<(), Failure> {
    let instance = t.app.state().instance();
    let guard = instance
        .lock()
        .map_err(|_| Failure::new("the instance lock is whole", "poisoned"))?;
    let id = t.upload.1.trim_start_matches("/documents/");
    let search = guard.search(asker, &t.upload.0, 1);
    ensure(
        matches!(search, Err(SearchError::NotAdmitted)),
        format!("Instance::search refuses {asker} as not admitted"),
        format!("{:?}", search.map(|p| p.results.len())),
    )?;
    let list = guard.documents_page(asker, 1);
    ensure(
        list.as_ref().err().map(memoria::Error::kind) == Some(ErrorKind::NotAdmitted),
        format!("Instance::documents_page refuses {asker} as not admitted"),
        format!("{:?}", list.map(|l| l.total)),
    )?;
    let one = guard.document(asker, id);
    ensure(
        one.as_ref().err().map(memoria::Error::kind) == Some(ErrorKind::NotAdmitted),
        format!("Instance::document refuses {asker} as not admitted"),
        format!("{:?}", one.map(|d| d.is_some())),
    )?;
    drop(guard);
    let ruled = block_on(memoria::ruled_search(
        t.app.state().shared_instance(),
        None,
        asker,
        &t.item.0,
        1,
    ));
    ensure(
        matches!(ruled, Err(SearchError::NotAdmitted)),
        format!("the ruled search (the web's, the CLI's, MCP's) refuses {asker}"),
        format!("{:?}", ruled.map(|r| r.page.results.len())),
    )
}

fn no_longer_admitted_sees_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let t = team(ctx)?;
    both_see_both(&t)?;
    t.owners.write(&[ANA]);
    for (canary, path) in [&t.upload, &t.item] {
        let q = format!("/?q={}", memoria::testkit::form_encode(canary));
        refused(&block_on(t.bea.get(&q)), "Bea's search page", &t)?;
        refused(&block_on(t.bea.get(path)), "Bea's document page", &t)?;
    }
    refused(&block_on(t.bea.get("/")), "Bea's home page", &t)?;
    let links = t.app.delivered_links().len();
    let asked = block_on(t.app.begin_sign_in(BEA));
    ensure(
        asked.status == 200 && t.app.delivered_links().len() == links,
        "the sign-in form sends Bea no link",
        format!("{} new links", t.app.delivered_links().len() - links),
    )?;
    library_refuses(&t, BEA)?;
    sees(&t.ana, "Ana", &t.upload, UPLOAD_TITLE)?;
    sees(&t.ana, "Ana", &t.item, ITEM_TITLE)
}

fn deleted_is_gone_for_everyone(ctx: &mut Ctx) -> Result<(), Failure> {
    let t = team(ctx)?;
    both_see_both(&t)?;
    let csrf = t.ana.csrf().unwrap_or_default().to_string();
    let deleted = block_on(
        t.ana
            .post_form(&format!("{}/delete", t.upload.1), &[("csrf", &csrf)]),
    );
    ensure(
        deleted.status == 303,
        "Ana's delete form answers 303",
        deleted.status.to_string(),
    )?;
    for (name, who) in [("Ana", &t.ana), ("Bea", &t.bea)] {
        let links = found(who, &t.upload.0)?;
        ensure(
            links.is_empty(),
            format!("{name}'s search no longer finds the deleted upload"),
            format!("{links:?}"),
        )?;
        let opened = block_on(who.get(&t.upload.1));
        ensure(
            opened.status == 404 && !opened.body.contains(t.upload.0.as_str()),
            format!("{name}'s page for the deleted upload answers 404"),
            opened.status.to_string(),
        )?;
        let (stated, titles) = home_list(who)?;
        ensure(
            !titles.iter().any(|t| t == UPLOAD_TITLE),
            format!("{name}'s home page no longer lists the deleted upload"),
            format!("{titles:?}"),
        )?;
        ensure(
            stated == Some(1) && titles.len() == 1,
            format!("{name}'s home page counts what it lists across its pages: 1 document"),
            format!("it says {stated:?} and lists {titles:?}"),
        )?;
        sees(who, name, &t.item, ITEM_TITLE)?;
    }
    let id = t.upload.1.trim_start_matches("/documents/").to_string();
    let live = t
        .app
        .state()
        .instance()
        .lock()
        .map_err(|_| Failure::new("the instance lock is whole", "poisoned"))?
        .store()
        .document(&id)
        .map_err(|e| Failure::new("the store reads", e.to_string()))?;
    ensure(
        live.is_none(),
        "the store holds no live document by the deleted upload's id",
        "it does",
    )
}

fn revoked_upstream_still_served(ctx: &mut Ctx) -> Result<(), Failure> {
    let t = team(ctx)?;
    both_see_both(&t)?;
    for (faults, kind, how) in [
        (
            ConnectorFaults {
                credential_expired: true,
                ..ConnectorFaults::default()
            },
            FailureKind::CredentialExpired,
            "with the integration disconnected (401 on every call)",
        ),
        (
            ConnectorFaults {
                forbidden_collection: Some(FOLDER.into()),
                ..ConnectorFaults::default()
            },
            FailureKind::PermissionDenied,
            "with memoria's access to the item's folder removed (403)",
        ),
    ] {
        t.drive.set_faults(faults);
        let report = synced(&t.app, &t.drive)?;
        ensure(
            report.failure == Some(kind) && report.deleted == 0,
            format!(
                "{how}, the sync fails as {} and deletes nothing",
                kind.as_str()
            ),
            format!("{report:?}"),
        )?;
        for (name, who) in [("Ana", &t.ana), ("Bea", &t.bea)] {
            sees(who, name, &t.item, ITEM_TITLE)
                .map_err(|f| Failure::new(format!("{how}: {}", f.expected), f.actual))?;
        }
    }
    Ok(())
}
