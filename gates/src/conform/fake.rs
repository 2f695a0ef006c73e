//! The simulator's fake sibling seeded from a manifest and served over real loopback TCP with its `/_control` route: the kit's own reference target (§4.1, §6.1).
//!
//! `memoria-harness serve-fake` and `conform --fake` use it; so does
//! `tests/harness/conform.rs`. The fake mints revisions `r1`, `r2`, … so a manifest
//! served here must use those tokens. [`serve_fake`], serving any fake with
//! a control route beside it, is what `memoria-harness demo` serves its
//! four siblings with (`crate::demo`). [`serve_tls`] serves the same fake
//! over TLS, for the kit's `https://` targets (§6.1).

use std::collections::BTreeSet;
use std::net::SocketAddr;

use memoria_simulator::{
    Clock, Controller, FakeConfig, FakeSibling, ModelHandle, Rung, Sheet, SubjectKind, Tab, Trace,
    serve_loopback,
};
use tokio::task::JoinHandle;

pub use crate::rigs::tls::{ThrowawayCa, TlsServed};
use memoria_kit::manifest::{self, Manifest};

/// The first consumer's token on the served fake (a local fake's, not a secret).
pub const FAKE_TOKEN: &str = "conform-token-1";
/// The second consumer's token on the served fake.
pub const FAKE_SECOND_TOKEN: &str = "conform-token-2";

/// Records per S1a page on the served fake: few, so that the shipped
/// manifest's announce (open, five items, close) spans three pages and the
/// kit's paging cases (`s1a/change-mid-announce-skips-nothing`,
/// `s1a/page-token-is-not-a-cursor`) run rather than skip (§6.1).
pub const FAKE_ANNOUNCE_PAGE_RECORDS: usize = 3;

/// A fake serving on loopback.
#[derive(Debug)]
pub struct ServedFake {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The bound address.
    pub addr: SocketAddr,
    /// The server task.
    pub handle: JoinHandle<()>,
}

/// Builds the fake's model from a manifest.
///
/// # Errors
/// A message when the manifest's revisions are not the `r1`, `r2`, … the
/// fake mints, or an id repeats.
pub fn seed(m: &Manifest, model: &ModelHandle) -> Result<(), String> {
    let address = |key: &str| m.person(key).address.clone();
    for p in &m.people {
        match p.role {
            manifest::Role::Member => model.add_member(&p.address, Some(&p.person_ref)),
            manifest::Role::Guest => model.add_guest(&p.address, Some(&p.person_ref)),
        };
    }
    for item in &m.items {
        let rung = match item.rung {
            manifest::Rung::Team => Rung::Team,
            manifest::Rung::Private => Rung::Private {
                owner: address(
                    item.owner
                        .as_deref()
                        .ok_or("a private item needs an owner")?,
                ),
            },
            manifest::Rung::Granted => Rung::Granted {
                to: item
                    .granted_to
                    .iter()
                    .map(|k| address(k))
                    .collect::<BTreeSet<_>>(),
            },
        };
        let mut minted = if let Some(grid) = &m.sheet {
            sheet_item(
                grid,
                &item.key,
                &item.item_id,
                rung,
                item.revisions.len(),
                model,
            )?
        } else {
            vec![
                model
                    .add_item(
                        &item.item_id,
                        rung,
                        &format!("Item {}", item.key),
                        "Revision 1.",
                    )
                    .map_err(|e| format!("{}: {e}", item.key))?,
            ]
        };
        for n in (minted.len() + 1)..=item.revisions.len() {
            minted.push(
                model
                    .revise(
                        &item.item_id,
                        &format!("Item {}", item.key),
                        &format!("Revision {n}."),
                    )
                    .map_err(|e| format!("{}: {e}", item.key))?,
            );
        }
        if minted != item.revisions {
            return Err(format!(
                "item {}: the fake mints revisions r1, r2, …; the manifest has others",
                item.key
            ));
        }
        let err = |e: memoria_simulator::ModelError| format!("{}: {e}", item.key);
        for k in &item.removed {
            model
                .set_removed(&item.item_id, &address(k), true)
                .map_err(err)?;
        }
        model
            .set_link_shared(&item.item_id, item.link_shared)
            .map_err(err)?;
        model
            .set_guest_only(&item.item_id, item.guest_only)
            .map_err(err)?;
        if item.deleted {
            model.delete(&item.item_id).map_err(err)?;
        }
    }
    Ok(())
}

/// One manifest item as a sheet holding `grid` (§8.7): revision N's note
/// cell (row 3, col 2) reads `Revision N.`, so revisions differ. Returns
/// the `revisions` minted.
fn sheet_item(
    grid: &manifest::SheetGrid,
    key: &str,
    item_id: &str,
    rung: Rung,
    revisions: usize,
    model: &ModelHandle,
) -> Result<Vec<String>, String> {
    let header: Vec<&str> = grid.header.iter().map(String::as_str).collect();
    let rows: Vec<(&str, Vec<&str>)> = grid
        .rows
        .iter()
        .map(|(label, cells)| (label.as_str(), cells.iter().map(String::as_str).collect()))
        .collect();
    let rows: Vec<(&str, &[&str])> = rows.iter().map(|(l, c)| (*l, c.as_slice())).collect();
    let tab = Tab::table(&grid.tab, &header, &rows, Some(&grid.format_code));
    let err = |e: memoria_simulator::ModelError| format!("{key}: {e}");
    let mut minted = vec![
        model
            .with(|m| m.add_sheet(item_id, rung, Sheet::new(&format!("Item {key}"), vec![tab])))
            .map_err(err)?,
    ];
    for n in 2..=revisions {
        minted.push(
            model
                .with(|m| m.set_cell(item_id, &grid.tab, (3, 2), &format!("Revision {n}.")))
                .map_err(err)?,
        );
    }
    Ok(minted)
}

/// Seeds a fake from `m` and serves it, with its control route, on `addr`.
/// Call inside a tokio runtime.
///
/// # Errors
/// A message for a manifest the fake cannot hold, or a failed bind.
pub async fn serve(m: &Manifest, addr: SocketAddr) -> Result<ServedFake, String> {
    let (fake, control) = seeded(m)?;
    serve_fake(&fake, control, addr).await
}

/// As [`serve`], over TLS with `config` on an ephemeral loopback port
/// (e.g. a [`crate::rigs::tls::ThrowawayCa`]'s certificate for
/// `localhost`). Returns the `https://localhost:PORT` URL and the server.
/// Call inside a tokio runtime; never inside a simulated run.
///
/// # Errors
/// A message for a manifest the fake cannot hold, or a failed bind.
pub async fn serve_tls(
    m: &Manifest,
    config: std::sync::Arc<tokio_rustls::rustls::ServerConfig>,
) -> Result<(String, crate::rigs::tls::TlsServed), String> {
    let (fake, control) = seeded(m)?;
    let served = crate::rigs::tls::serve_tls_loopback(fake.router().merge(control), config)
        .await
        .map_err(|e| format!("binding loopback for TLS: {e}"))?;
    Ok((format!("https://localhost:{}", served.addr.port()), served))
}

/// The fake seeded from `m`, and its control route.
fn seeded(m: &Manifest) -> Result<(FakeSibling, axum::Router), String> {
    let clock = Clock::tokio();
    let model = ModelHandle::new(clock.clone());
    model.with(|m| m.set_announce_page_records(FAKE_ANNOUNCE_PAGE_RECORDS));
    seed(m, &model)?;
    let keys_on = if m.keys_on == "address" {
        SubjectKind::Address
    } else {
        SubjectKind::PersonRef
    };
    let tokens = vec![
        ("memoria".to_owned(), FAKE_TOKEN.to_owned()),
        ("second-consumer".to_owned(), FAKE_SECOND_TOKEN.to_owned()),
    ];
    let fake = FakeSibling::new(
        FakeConfig {
            team: "acme".into(),
            app: "conform".into(),
            keys_on,
            tokens: tokens.clone(),
        },
        model,
        Trace::new(),
        clock,
    );
    let controller = Controller::new(fake.clone(), tokens);
    Ok((fake, controller.router()))
}

/// Serves `fake`'s contract routes with `control` (a `/_control` route)
/// merged beside them, over real loopback TCP on `addr`. Call inside a
/// tokio runtime; never inside a simulated run.
///
/// # Errors
/// A message naming `addr` when the bind fails.
pub async fn serve_fake(
    fake: &FakeSibling,
    control: axum::Router,
    addr: SocketAddr,
) -> Result<ServedFake, String> {
    let router = fake.router().merge(control);
    let (addr, handle) = serve_loopback(router, addr)
        .await
        .map_err(|e| format!("binding {addr}: {e}"))?;
    Ok(ServedFake {
        url: format!("http://{addr}"),
        addr,
        handle,
    })
}
