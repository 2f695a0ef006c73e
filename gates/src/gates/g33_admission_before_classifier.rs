//! Gate 33 (§3.2): the admission predicate runs before the sign-in classifier — an unadmitted address causes no DNS query and no fetch, asserted by a network guard.
//!
//! §3.2: rastrillo's classifier "resolves and fetches the submitted
//! address's domain when a sign-in begins", and the destination is the
//! submitter's to choose; "memoria's half is closed (gate 33): the
//! admission predicate now runs before the classifier, so an unadmitted
//! address produces no DNS query and no fetch." Each case runs a simulated
//! world where memoria's sign-in classifier is the simulator's stand-in for
//! rastrillo's ([`memoria_simulator::KeymailClassifier`]: it looks the
//! address's domain up and fetches its keymail statement through memoria's
//! dialer, behind the world's [`memoria_simulator::NetGuard`]), and the
//! owners' domain and a stranger's are both hosts that would answer. The
//! browser submits the sign-in form (`POST /auth/begin`). Presence first,
//! in the same world: an owner's address makes the guard hear a lookup and
//! a connection to its domain, the domain's host count one fetch, and a
//! link go out; only then is an unadmitted address shown to cause no
//! lookup, no connection, no fetch and no link, and an answer
//! byte-identical to the owner's.

use memoria_simulator::{
    DialOutcome, KEYMAIL_PORT, MailDomain, Memoria, NetEvent, NetGuard, SiblingSpec, World,
};

use crate::rigs::sim::{check, fail, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// The owners' mail domain: every world's owners are `…@acme.test`.
const OWNERS_DOMAIN: &str = "acme.test";
/// A stranger's mail domain, a host in the world that would answer a fetch.
const STRANGER_DOMAIN: &str = "elsewhere.test";
const ANA: &str = memoria_simulator::OWNERS[0];
const BEA: &str = memoria_simulator::OWNERS[1];

/// Addresses that are not an owner's, each a way a stranger might aim the
/// classifier: their own domain, the same in capitals, the owners' own
/// domain under another name, and a sibling's host inside the team.
const UNADMITTED: &[&str] = &[
    "eve@elsewhere.test",
    "EVE@Elsewhere.Test",
    "cy@acme.test",
    "eve@acme.sheets.oficina.works",
];

/// Addresses that differ from Ana's only by a normalisation an implementer
/// might apply (a subaddress, a dot in the local part, a trailing dot on the
/// domain): none is an owner's, so none may reach the classifier.
const NEAR_ANA: &[&str] = &["ana+x@acme.test", "a.na@acme.test", "ana@acme.test."];

/// Gate 33.
pub static GATE: Gate = Gate {
    id: "33",
    title: "Admission before the sign-in classifier: an unadmitted address dials nothing",
    gates_md: &[
        "The admission predicate runs before the sign-in classifier: an unadmitted address causes no DNS query and no fetch",
    ],
    sections: &["§3.2", "§4.3"],
    requirement: "The admission predicate runs before the sign-in classifier: a sign-in begun for an address that is not an owner's now causes no DNS query and no fetch (no lookup or connection in the network guard, no request at any mail domain), sends no link, and is answered exactly as an owner's is; an owner's address, in the same world, is classified (its domain looked up and fetched) and sent a link.",
    cases: &[
        Case {
            id: "33/an-owners-address-is-classified-and-sent-a-link",
            desc: "Presence: the sign-in form submitted for Ana's address answers 200; the guard holds a lookup of acme.test and a connection to it at the keymail port, acme.test's host counts one fetch, the stranger's none, and one link went to Ana.",
            run: owner_classified,
        },
        Case {
            id: "33/an-unadmitted-address-causes-no-dns-query-and-no-fetch",
            desc: "After Ana's sign-in has made the guard hear the classifier (presence, same world): the form submitted for eve@elsewhere.test, the same in capitals, cy@acme.test (a stranger at the owners' domain) and eve@acme.sheets.oficina.works (a sibling's host) adds no event to the guard, no fetch at either mail domain and no link, and each answer is byte for byte the page Ana's got.",
            run: unadmitted_dials_nothing,
        },
        Case {
            id: "33/an-address-that-only-normalises-to-an-owners-causes-no-dial",
            desc: "After Ana's own address has been classified and sent a link (presence, same world): the form submitted for ana+x@acme.test (a subaddress), a.na@acme.test (a dot in the local part) and ana@acme.test. (a trailing dot on the domain) adds no event to the guard, no fetch at either mail domain and no link, and each answer is byte for byte the page Ana's got.",
            run: near_owner_dials_nothing,
        },
        Case {
            id: "33/an-owner-removed-from-the-list-causes-no-dial",
            desc: "Admission is read at the door, not held: Ana's sign-in is classified (presence); Ana is removed from the owners file; her next sign-in adds no guard event, no fetch and no link; Bea's, after the same change, is classified and sent a link.",
            run: removed_owner_dials_nothing,
        },
        Case {
            id: "33/a-link-followed-after-its-owners-removal-causes-no-dial",
            desc: "The second door: Ana's and Bea's sign-ins are classified and each is sent a link (presence); Ana is removed from the owners file; her link, followed, answers 403 and adds no event to the guard and no fetch at either mail domain; Bea's, followed after the same change, answers 303.",
            run: link_after_removal_dials_nothing,
        },
        Case {
            id: "33/an-unreadable-owners-source-causes-no-dial",
            desc: "Fail closed at the door: with the owners file removed, Ana's sign-in adds no guard event, no fetch and no link, and answers the same page; the file restored, her next sign-in is classified and sent a link.",
            run: unreadable_source_dials_nothing,
        },
        Case {
            id: "33/the-guard-hears-a-lookup-that-finds-nothing",
            desc: "What lets the absence stand for no DNS query: an owner at a domain the world does not hold (zed@nowhere.test) is classified, and the guard records the lookup of nowhere.test and the connection attempt that found nothing, so a dial to an unresolvable domain would not go unheard.",
            run: guard_hears_an_unresolved_lookup,
        },
    ],
};

/// A world with Sheets, the keymail classifier, and the owners' and a
/// stranger's mail domains: (world, owners' domain, stranger's domain).
fn world(ctx: &Ctx) -> (World, MailDomain, MailDomain) {
    let mut w = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    w.use_keymail_classifier();
    let owners = w.add_mail_domain(OWNERS_DOMAIN);
    let stranger = w.add_mail_domain(STRANGER_DOMAIN);
    (w, owners, stranger)
}

/// The guard's events that name `domain`.
fn dials_to(guard: &NetGuard, domain: &str) -> Vec<NetEvent> {
    guard
        .events()
        .into_iter()
        .filter(|e| e.host().eq_ignore_ascii_case(domain))
        .collect()
}

/// Submits the form for `address`; its status and body.
async fn begin(m: &Memoria, address: &str) -> Result<(u16, String), String> {
    let page = m.begin_sign_in(address).await?;
    Ok((page.response.status.as_u16(), page.response.body))
}

/// Links delivered to `owner` so far.
fn links_to(m: &Memoria, owner: &str) -> usize {
    m.delivered_links()
        .iter()
        .filter(|(o, _)| o == owner)
        .count()
}

/// Requires that `address`'s sign-in was classified: one more lookup of and
/// connection to `domain` at the keymail port, one more fetch at its host,
/// one more link to `address`. Returns the answer.
async fn classified(
    m: &Memoria,
    guard: &NetGuard,
    address: &str,
    domain: &MailDomain,
    domain_name: &str,
) -> Result<(u16, String), String> {
    let (dials, fetches, links) = (
        dials_to(guard, domain_name).len(),
        domain.fetches(),
        links_to(m, address),
    );
    let answer = begin(m, address).await?;
    check(
        answer.0 == 200,
        format!("the sign-in form for {address} answers 200"),
        answer.0.to_string(),
    )?;
    let new: Vec<NetEvent> = dials_to(guard, domain_name).split_off(dials);
    let heard = new.contains(&NetEvent::Lookup {
        host: domain_name.into(),
    }) && new.contains(&NetEvent::Connect {
        host: domain_name.into(),
        port: KEYMAIL_PORT,
        outcome: DialOutcome::Connected,
    });
    check(
        heard,
        format!(
            "the guard hears {address}'s domain looked up and connected to at the keymail port (presence)"
        ),
        format!("{new:?}"),
    )?;
    check(
        domain.fetches() == fetches + 1,
        format!("{domain_name}'s host counts one fetch for {address}"),
        format!("{} new", domain.fetches() - fetches),
    )?;
    check(
        links_to(m, address) == links + 1,
        format!("one sign-in link went to {address}"),
        format!("{} new", links_to(m, address) - links),
    )?;
    Ok(answer)
}

/// Requires that `address`'s sign-in dialed nothing: no guard event at
/// all, no fetch at either domain, no link to anyone. Returns the answer.
async fn dials_nothing(
    m: &Memoria,
    guard: &NetGuard,
    address: &str,
    domains: &[&MailDomain],
) -> Result<(u16, String), String> {
    let events = guard.events().len();
    let fetches: Vec<usize> = domains.iter().map(|d| d.fetches()).collect();
    let links = m.delivered_links().len();
    let answer = begin(m, address).await?;
    check(
        guard.events().len() == events,
        format!("the sign-in form for {address} causes no DNS query and no connection"),
        format!("{:?}", &guard.events()[events..]),
    )?;
    let after: Vec<usize> = domains.iter().map(|d| d.fetches()).collect();
    check(
        after == fetches,
        format!("no mail domain is fetched for {address}"),
        format!("fetches {fetches:?} became {after:?}"),
    )?;
    check(
        m.delivered_links().len() == links,
        format!("no sign-in link is sent for {address}"),
        format!("{} new", m.delivered_links().len() - links),
    )?;
    Ok(answer)
}

fn owner_classified(ctx: &mut Ctx) -> Result<(), Failure> {
    let (w, owners, stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN).await?;
        check(
            stranger.fetches() == 0 && dials_to(&guard, STRANGER_DOMAIN).is_empty(),
            "nothing reached the stranger's domain",
            format!("{} fetches", stranger.fetches()),
        )
    })
}

fn unadmitted_dials_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let (w, owners, stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        let owner_answer = classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN).await?;
        for address in UNADMITTED {
            let answer = dials_nothing(&m, &guard, address, &[&owners, &stranger]).await?;
            check(
                answer == owner_answer,
                format!("{address} is answered byte for byte as Ana was"),
                format!("status {} and a body of {} bytes", answer.0, answer.1.len()),
            )?;
        }
        check(
            dials_to(&guard, STRANGER_DOMAIN).is_empty() && stranger.fetches() == 0,
            "the stranger's domain was never looked up or fetched",
            format!("{:?}", dials_to(&guard, STRANGER_DOMAIN)),
        )
    })
}

fn near_owner_dials_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let (w, owners, stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        let owner_answer = classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN).await?;
        for address in NEAR_ANA {
            let answer = dials_nothing(&m, &guard, address, &[&owners, &stranger]).await?;
            check(
                answer == owner_answer,
                format!("{address} is answered byte for byte as Ana was"),
                format!("status {} and a body of {} bytes", answer.0, answer.1.len()),
            )?;
        }
        Ok(())
    })
}

fn removed_owner_dials_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let (w, owners, stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN).await?;
        m.set_owners(&[BEA])?;
        dials_nothing(&m, &guard, ANA, &[&owners, &stranger]).await?;
        classified(&m, &guard, BEA, &owners, OWNERS_DOMAIN)
            .await
            .map_err(|e| fail("after Ana's removal, Bea's sign-in is still classified", e))?;
        Ok(())
    })
}

/// The last link delivered to `owner`.
fn last_link(m: &Memoria, owner: &str) -> Result<String, String> {
    m.delivered_links()
        .into_iter()
        .rev()
        .find(|(o, _)| o == owner)
        .map(|(_, url)| url)
        .ok_or_else(|| format!("no link was delivered to {owner}"))
}

fn link_after_removal_dials_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let (w, owners, stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN).await?;
        classified(&m, &guard, BEA, &owners, OWNERS_DOMAIN).await?;
        let (ana_link, bea_link) = (last_link(&m, ANA)?, last_link(&m, BEA)?);
        m.set_owners(&[BEA])?;
        let events = guard.events().len();
        let fetches = (owners.fetches(), stranger.fetches());
        let followed = m.follow_sign_in_link(&ana_link).await?;
        check(
            followed.response.status.as_u16() == 403,
            "Ana's link, followed after her removal, answers 403",
            followed.response.status.to_string(),
        )?;
        check(
            guard.events().len() == events,
            "following Ana's link after her removal causes no DNS query and no connection",
            format!("{:?}", &guard.events()[events..]),
        )?;
        check(
            (owners.fetches(), stranger.fetches()) == fetches,
            "following Ana's link after her removal fetches no mail domain",
            format!(
                "fetches {fetches:?} became {:?}",
                (owners.fetches(), stranger.fetches())
            ),
        )?;
        let admitted = m.follow_sign_in_link(&bea_link).await?;
        check(
            admitted.response.status.as_u16() == 303,
            "Bea's link, followed after the same change, answers 303 (two-sided)",
            admitted.response.status.to_string(),
        )
    })
}

fn unreadable_source_dials_nothing(ctx: &mut Ctx) -> Result<(), Failure> {
    let (w, owners, stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        let owner_answer = classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN).await?;
        m.remove_owners_file()?;
        let answer = dials_nothing(&m, &guard, ANA, &[&owners, &stranger]).await?;
        check(
            answer == owner_answer,
            "with the owners file removed, Ana is answered the same page",
            format!("status {}", answer.0),
        )?;
        m.set_owners(&[ANA, BEA])?;
        classified(&m, &guard, ANA, &owners, OWNERS_DOMAIN)
            .await
            .map_err(|e| fail("the file restored, Ana's sign-in is classified again", e))?;
        Ok(())
    })
}

fn guard_hears_an_unresolved_lookup(ctx: &mut Ctx) -> Result<(), Failure> {
    const ZED: &str = "zed@nowhere.test";
    const NOWHERE: &str = "nowhere.test";
    let (w, _owners, _stranger) = world(ctx);
    let guard = w.net_guard().clone();
    run_world(&w, move |mut m| async move {
        m.warmed_up().await?;
        m.set_owners(&[ANA, ZED])?;
        let links = links_to(&m, ZED);
        let (status, _) = begin(&m, ZED).await?;
        let heard = dials_to(&guard, NOWHERE);
        check(
            status == 200
                && heard.contains(&NetEvent::Lookup {
                    host: NOWHERE.into(),
                })
                && heard.iter().any(|e| {
                    matches!(e, NetEvent::Connect { port, outcome, .. }
                        if *port == KEYMAIL_PORT && *outcome == DialOutcome::Unresolved)
                }),
            format!("the guard records the lookup of {NOWHERE} and the attempt that found nothing"),
            format!("{heard:?}"),
        )?;
        check(
            links_to(&m, ZED) == links + 1,
            "the owner at an unresolvable domain is still sent a link",
            format!("{} new", links_to(&m, ZED) - links),
        )
    })
}
