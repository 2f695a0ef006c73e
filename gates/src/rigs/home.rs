//! What the suite-shape gates share (gate 21's roster half, suite 5): a world whose memoria admits from a fake home's roster, with a Sheets item and a memoria-owned document to find.
//!
//! Two roster members (Cai and Dan) beside the world's two owners (Ana and
//! Bea, on the owners list, which bypasses the roster). Sheets holds one
//! team item whose passage carries the case's canary and the word
//! `tagsheets`; memoria holds one document of its own carrying the canary
//! and `tagowned`. Pages are read with [`super::page::Page`].

use memoria_simulator::{FakeHome, Memoria, OWNERS, Rung, SiblingSpec, World};

use super::page::Page;
use super::sim::check;

/// A roster member.
pub const CAI: &str = "cai@acme.test";
/// Another roster member.
pub const DAN: &str = "dan@acme.test";
/// A person on no roster until a new generation lists her.
pub const EVE: &str = "eve@acme.test";
/// An owner (the owners list): admitted whatever the roster says.
pub const ANA: &str = OWNERS[0];
/// The word beside the canary in the Sheets passage.
pub const SHEETS_TAG: &str = "tagsheets";
/// The word beside the canary in the memoria-owned document.
pub const OWNED_TAG: &str = "tagowned";

/// A world in suite shape: Sheets with one item carrying `canary`, and a
/// home whose roster lists Cai and Dan (and Eve, as a Sheets member only,
/// so a new generation listing her lets her see the item).
pub fn suite_world(seed: u64, canary: &str) -> (World, FakeHome) {
    let mut world = World::new(seed, vec![SiblingSpec::own("sheets")]);
    world.fake("sheets").model().with(|m| {
        m.add_item(
            "sh-roster",
            Rung::Team,
            "Roster figures",
            &format!(
                "# Figures {SHEETS_TAG}\n\nThe {canary} figure is {SHEETS_TAG} this quarter.\n"
            ),
        )
        .expect("item");
        m.add_member(EVE, Some("prs_eve"));
    });
    let home = world.use_home(&[CAI, DAN]);
    (world, home)
}

/// Waits for the warm-up, pulls the roster (which must succeed: presence),
/// and stores the memoria-owned document carrying `canary`.
///
/// # Errors
/// The encoded failure if the pull fails or the document cannot be stored.
pub async fn up(m: &mut Memoria, canary: &str) -> Result<(), String> {
    m.warmed_up().await?;
    let pulled = m.pull_roster().await;
    check(
        matches!(pulled, Some(Ok(_))),
        "memoria pulls the home's roster (presence)",
        format!("{pulled:?}"),
    )?;
    let state = m.state();
    let instance = state.instance();
    let mut i = instance.lock().map_err(|_| "the instance lock")?;
    i.ingest(&memoria::NewDocument {
        source_key: "upload:minutes.md".into(),
        title: "Minutes".into(),
        path: "minutes.md".into(),
        body: format!("# Minutes {OWNED_TAG}\n\nThe {canary} venue is {OWNED_TAG}.\n"),
        date: None,
    })
    .map_err(|e| e.to_string())?;
    Ok(())
}

/// The search page for `canary` as the session `cookie` sees it: (status,
/// page).
///
/// # Errors
/// If memoria cannot be reached.
pub async fn search(m: &Memoria, cookie: &str, canary: &str) -> Result<(u16, Page), String> {
    let uri = format!("/?q={}", memoria::testkit::form_encode(canary));
    let r = m.get_with(cookie, &uri).await?.response;
    Ok((r.status.as_u16(), crate::rigs::page::of(&r)))
}

/// Requires the session `cookie` (of `who`) to find both the Sheets
/// passage and the memoria-owned document for `canary`.
///
/// # Errors
/// The encoded failure.
pub async fn finds_both(m: &Memoria, cookie: &str, who: &str, canary: &str) -> Result<(), String> {
    let (status, page) = search(m, cookie, canary).await?;
    let text: Vec<String> = page.results().into_iter().map(|r| r.text).collect();
    check(
        status == 200
            && text.iter().any(|t| t.contains(SHEETS_TAG))
            && text.iter().any(|t| t.contains(OWNED_TAG)),
        format!("{who}'s session finds the Sheets passage and memoria's own document"),
        format!("{status}: {text:?}; withheld {:?}", page.withheld()),
    )
}

/// Whether the sign-in form, submitted for `address`, delivered a link.
///
/// # Errors
/// If memoria cannot be reached.
pub async fn form_delivers(m: &Memoria, address: &str) -> Result<Option<String>, String> {
    let before = m.delivered_links().len();
    let r = m.begin_sign_in(address).await?.response;
    check(
        r.status == 200,
        "the sign-in form answers 200",
        r.status.to_string(),
    )?;
    Ok(m.delivered_links()
        .into_iter()
        .skip(before)
        .find(|(o, _)| o == address)
        .map(|(_, url)| url))
}
