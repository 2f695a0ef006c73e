//! Gate 11 (§10, §6.3): memoria never dials across a team label, and never follows a redirect there.
//!
//! Four cases. The table: every hostile URL in `fixtures/contract/hostile-hosts.json`
//! (`http://` and `https://`) is refused at configuration and every
//! same-team one accepted. The configuration half in the simulator:
//! another team's Sheets is up and answers a direct probe (presence),
//! memoria configured with it refuses to start its client, and that host
//! never hears from memoria. The redirect half: memoria's own Sheets
//! answers 307 to the other team's host; the page withholds loudly and the
//! other host receives nothing. The `https://` half (§6.1), on real
//! loopback because the simulator's transport stays plain: the client
//! speaks TLS to an `https://` sibling, trusts the team's private CA and
//! nothing unsigned, and the host check still comes before any connection.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use memoria::exchange;
use memoria::wire::FeedError;
use memoria::{
    Dialer, HostRefusal, Pair, SiblingClient, SiblingConfig, Subject, TlsDialer, TlsRefusal,
    TlsTrust, TransportError, Verdict,
};
use memoria_simulator::{
    CallKind, Clock, FakeConfig, FakeSibling, ModelHandle, OWNERS, Redirect, Rung, SIBLING_PORT,
    SiblingSpec, TEAM, Trace, TurmoilDialer, World,
};

use crate::demo::LoopbackDialer;
use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world, tagged_body};
use crate::rigs::support::block_on;
use crate::rigs::tls::{ThrowawayCa, TlsServed, serve_tls_loopback};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 11.
pub static GATE: Gate = Gate {
    id: "11",
    title: "Cross-team dial refusal, including redirects",
    gates_md: &["Cross-team dial refusal, including redirects"],
    sections: &["§10", "§6.3"],
    requirement: "memoria's client refuses any host whose <team> label differs from its own, before any connection, and never follows a redirect.",
    cases: &[
        Case {
            id: "11/hostile-hosts",
            desc: "Configure a client in team acme with each URL of fixtures/contract/hostile-hosts.json: every 'refuse' URL is refused, every 'accept' URL accepted.",
            run: hostile_hosts,
        },
        Case {
            id: "11/other-team-never-dialled",
            desc: "beta.sheets runs and answers a direct probe (presence); memoria configured with it refuses to start; unconfigured, memoria's warm-up reaches acme.sheets and nothing reaches beta.sheets but the probe.",
            run: other_team_never_dialled,
        },
        Case {
            id: "11/redirect-not-followed",
            desc: "acme.sheets answers every call with 307 to beta.sheets; a search withholds the Sheets passage loudly, the trace shows the 307 served (presence), and beta.sheets receives no call; then a 307 to acme.sheets itself is not followed either (one S2 call per search).",
            run: redirect_not_followed,
        },
        Case {
            id: "11/https-sibling-verified",
            desc: "acme.sheets serves over TLS on loopback with a certificate the team's throwaway private CA signed: memoria's client given that CA (in a PEM bundle between two other CAs) pulls S1 and gets VISIBLE from S2 over https (the fake hears both); without the CA, and against a second acme.sheets whose certificate another CA signed, the handshake is refused as UntrustedCertificate, the feed gets no answer and that fake hears no call though it accepted the connection; a certificate the team's CA signed for beta.sheets, served as acme.sheets, is refused as WrongHost; an https:// URL of beta.sheets is refused at configuration, and its server, up and answering a direct TLS probe (presence), had accepted no connection before it.",
            run: https_sibling_verified,
        },
    ],
};

fn hostile_hosts(_ctx: &mut Ctx) -> Result<(), Failure> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/contract/hostile-hosts.json");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Failure::new("the table reads", e.to_string()))?;
    let t: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::new("the table is JSON", e.to_string()))?;
    let team = t["team"].as_str().unwrap_or("");
    let urls = |k: &str| -> Vec<String> {
        t[k].as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let configure = |url: &str| {
        SiblingClient::new(
            team,
            &[SiblingConfig {
                url: url.into(),
                token: "t".into(),
            }],
            Arc::new(TurmoilDialer),
        )
        .is_ok()
    };
    let accept = urls("accept");
    let refuse = urls("refuse");
    ensure(
        accept.len() >= 3 && refuse.len() >= 15,
        "a table of at least 3 accepted and 15 refused URLs",
        format!("{} and {}", accept.len(), refuse.len()),
    )?;
    let refused_good: Vec<&String> = accept.iter().filter(|u| !configure(u)).collect();
    ensure(
        refused_good.is_empty(),
        "every same-team URL is accepted (presence)",
        format!("refused {refused_good:?}"),
    )?;
    let accepted_bad: Vec<&String> = refuse.iter().filter(|u| configure(u)).collect();
    ensure(
        accepted_bad.is_empty(),
        "every hostile URL is refused",
        format!("accepted {accepted_bad:?}"),
    )
}

fn other_team_never_dialled(ctx: &mut Ctx) -> Result<(), Failure> {
    let specs = vec![SiblingSpec::own("sheets"), SiblingSpec::foreign("sheets")];
    let beta = SiblingSpec::foreign("sheets").host();
    let mut refused = World::new(ctx.seed(), specs.clone());
    refused.configure_extra_url(&format!("http://{beta}:{SIBLING_PORT}"));
    let outcome = refused.run(|_m| async { Ok(()) });
    ensure(
        outcome.as_ref().is_err_and(|e| {
            e.refused
                .as_ref()
                .is_some_and(|r| r.refusal == memoria::HostRefusal::OtherTeam)
        }),
        "memoria configured with another team's host refuses to start its client",
        format!("{outcome:?}"),
    )?;
    let world = World::new(ctx.seed(), specs);
    let trace = world.trace().clone();
    let beta_host = beta.clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let probe = http::Request::builder()
            .uri("/s1/feed")
            .header(http::header::HOST, beta_host.as_str())
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let r = exchange(&TurmoilDialer, &beta_host, SIBLING_PORT, probe)
            .await
            .map_err(|e| e.to_string())?;
        check(
            r.status == 401,
            "beta.sheets is up and answers a direct probe (presence)",
            format!("status {}", r.status),
        )?;
        let to_beta: Vec<_> = trace
            .events()
            .into_iter()
            .filter(|e| e.callee == beta_host)
            .collect();
        let to_acme = trace
            .events()
            .into_iter()
            .filter(|e| {
                e.callee == format!("{TEAM}.sheets.oficina.works") && e.call == CallKind::S1
            })
            .count();
        check(
            to_acme >= 1,
            "memoria's warm-up reached acme.sheets (presence)",
            "no S1 reached it",
        )?;
        check(
            to_beta.len() == 1 && to_beta[0].caller == "unauthenticated",
            "beta.sheets received only the probe",
            format!(
                "{} calls: {:?}",
                to_beta.len(),
                to_beta.iter().map(|e| &e.caller).collect::<Vec<_>>()
            ),
        )
    })
}

fn redirect_not_followed(ctx: &mut Ctx) -> Result<(), Failure> {
    let canary = ctx.canary();
    let world = World::new(
        ctx.seed(),
        vec![SiblingSpec::own("sheets"), SiblingSpec::foreign("sheets")],
    );
    let beta = SiblingSpec::foreign("sheets").host();
    let sheets = world.fake("sheets").clone();
    sheets
        .model()
        .with(|m| {
            m.add_item(
                "sh-1",
                Rung::Team,
                "Q",
                &tagged_body(&canary, "tagredirect"),
            )
            .map(drop)
        })
        .map_err(|e| Failure::new("item", format!("{e:?}")))?;
    let trace = world.trace().clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        sheets.faults().set_redirect(Some(Redirect {
            location: format!("http://{beta}:{SIBLING_PORT}/s2/check"),
        }));
        let page = m.search(OWNERS[0], &canary).await.response.body;
        let served_307 = trace
            .events()
            .iter()
            .any(|e| e.call == CallKind::S2 && e.status == Some(307) && e.caller == "memoria");
        check(
            served_307,
            "acme.sheets served memoria a 307 (presence)",
            "no redirect was served",
        )?;
        check(
            !page.contains("tagredirect"),
            "the passage is withheld",
            "it renders",
        )?;
        check(
            Page::parse(&page).withheld() == ["Sheets did not answer; 1 result withheld."],
            "one loud line naming Sheets",
            format!("{:?}", Page::parse(&page).withheld()),
        )?;
        let to_beta = trace.events().iter().filter(|e| e.callee == beta).count();
        check(
            to_beta == 0,
            "beta.sheets received nothing",
            format!("{to_beta} calls"),
        )?;
        // Not even to itself: a redirect to the same host is not followed either.
        let acme = SiblingSpec::own("sheets").host();
        sheets.faults().set_redirect(Some(Redirect {
            location: format!("http://{acme}:{SIBLING_PORT}/s2/check"),
        }));
        let before = trace.events().len();
        let page = m.search(OWNERS[0], &canary).await.response.body;
        let s2_calls = trace.events()[before..]
            .iter()
            .filter(|e| e.call == CallKind::S2)
            .count();
        check(
            s2_calls == 1 && !page.contains("tagredirect"),
            "a same-host redirect is not followed: one S2 call, passage withheld",
            format!("{s2_calls} S2 calls"),
        )
    })
}

/// The token the TLS fakes accept from memoria (a local fake's, not a secret).
const TLS_FAKE_TOKEN: &str = "tls-case-token";

/// A fake `app` of `team` holding one team-visible item, served over TLS on
/// loopback with a certificate `ca` signed for `cert_team`'s host of the
/// same app (its own, or another's). Returns the fake, the served server
/// and the item's revision.
async fn serve_tls_fake(
    ca: &ThrowawayCa,
    team: &str,
    app: &str,
    cert_team: &str,
) -> Result<(FakeSibling, TlsServed, String), Failure> {
    let clock = Clock::tokio();
    let model = ModelHandle::new(clock.clone());
    model.add_member(OWNERS[0], None);
    let revision = model
        .add_item("sh-tls", Rung::Team, "Q", "A passage served over TLS.")
        .map_err(|e| Failure::new("the fake holds an item", format!("{e:?}")))?;
    let fake = FakeSibling::new(
        FakeConfig {
            team: team.into(),
            app: app.into(),
            keys_on: memoria_simulator::SubjectKind::Address,
            tokens: vec![("memoria".into(), TLS_FAKE_TOKEN.into())],
        },
        model,
        Trace::new(),
        clock,
    );
    let config = ca
        .server_config(&[&format!("{cert_team}.{app}.oficina.works")])
        .map_err(|e| Failure::new("a server certificate", e))?;
    let served = serve_tls_loopback(fake.router(), config)
        .await
        .map_err(|e| Failure::new("a TLS server on loopback", e.to_string()))?;
    Ok((fake, served, revision))
}

fn https_sibling_verified(_ctx: &mut Ctx) -> Result<(), Failure> {
    let team_ca =
        ThrowawayCa::new("acme private CA").map_err(|e| Failure::new("a throwaway CA", e))?;
    let other_ca =
        ThrowawayCa::new("nobody's CA").map_err(|e| Failure::new("a second throwaway CA", e))?;
    // The team's CA file is a bundle, as in a rotation: the team's CA
    // between two others that sign nothing here, so every certificate of
    // the file must be trusted, not only its first or its last.
    let retired_ca = ThrowawayCa::new("acme's retired CA")
        .map_err(|e| Failure::new("a third throwaway CA", e))?;
    let next_ca =
        ThrowawayCa::new("acme's next CA").map_err(|e| Failure::new("a fourth throwaway CA", e))?;
    let bundle = format!("{}\n{}\n{}", retired_ca.pem(), team_ca.pem(), next_ca.pem());
    let trust = TlsTrust::with_ca_pem(bundle.as_bytes())
        .map_err(|e| Failure::new("the team's CA bundle is taken", e.to_string()))?;
    ensure(
        trust.private_ca_certs() == 3,
        "the bundle's three certificates are trusted beside Mozilla's roots",
        format!("{} private CA certificates", trust.private_ca_certs()),
    )?;
    block_on(async move {
        let (sheets, served, revision) = serve_tls_fake(&team_ca, TEAM, "sheets", TEAM).await?;
        let (impostor, impostor_served, _) =
            serve_tls_fake(&other_ca, TEAM, "sheets", TEAM).await?;
        let (misnamed, misnamed_served, _) =
            serve_tls_fake(&team_ca, TEAM, "sheets", "beta").await?;
        let (beta_fake, beta_served, _) =
            serve_tls_fake(&team_ca, "beta", "sheets", "beta").await?;
        let acme = sheets.host().to_owned();
        let beta = beta_fake.host().to_owned();
        let dialer: Arc<dyn Dialer> = Arc::new(LoopbackDialer::new([acme.clone(), beta.clone()]));
        let client = |port: u16, trust: Option<&TlsTrust>| {
            let c = SiblingClient::new(
                TEAM,
                &[SiblingConfig {
                    url: format!("https://{acme}:{port}"),
                    token: TLS_FAKE_TOKEN.into(),
                }],
                Arc::clone(&dialer),
            )
            .map_err(|e| Failure::new("an https:// same-team URL is accepted", e.to_string()))?;
            Ok::<_, Failure>(match trust {
                Some(t) => c.with_trust(t.clone()),
                None => c,
            })
        };

        // S1 and S2 over https, trusting the team's CA.
        let trusted = client(served.addr.port(), Some(&trust))?;
        let page = trusted.feed("sheets", None).await;
        ensure(
            page.as_ref()
                .is_ok_and(|p| p.rows.iter().any(|r| r.item_id == "sh-tls")),
            "S1 over https returns the fake's item",
            format!("{:?}", page.as_ref().map(|p| p.rows.len())),
        )?;
        let subject = Subject {
            kind: memoria::SubjectKind::Address,
            value: OWNERS[0].into(),
        };
        let pair = Pair {
            item_id: "sh-tls".into(),
            revision,
        };
        let verdicts = trusted.check("sheets", &subject, &[pair]).await.verdicts;
        ensure(
            verdicts == [Verdict::Visible],
            "S2 over https answers VISIBLE",
            format!("{verdicts:?}"),
        )?;
        let heard: Vec<CallKind> = sheets.trace().events().iter().map(|e| e.call).collect();
        ensure(
            heard.contains(&CallKind::S1) && heard.contains(&CallKind::S2),
            "the TLS fake heard S1 and S2 from memoria (presence)",
            format!("{heard:?}"),
        )?;

        // The same server without the team's CA: Mozilla's roots do not sign it.
        let untrusting = client(served.addr.port(), None)?;
        let before = sheets.trace().events().len();
        let refused = untrusting.feed("sheets", None).await;
        ensure(
            matches!(refused, Err(FeedError::NoAnswer)) && sheets.trace().events().len() == before,
            "without the team's CA the feed gets no answer and the fake hears nothing",
            format!("{:?}", refused.map(|p| p.rows.len())),
        )?;

        // A server whose certificate another CA signed, for the right host.
        let fooled = client(impostor_served.addr.port(), Some(&trust))?;
        let refused = fooled.feed("sheets", None).await;
        ensure(
            impostor_served.accepted() >= 1,
            "memoria connected to the impostor (presence)",
            "no connection",
        )?;
        ensure(
            matches!(refused, Err(FeedError::NoAnswer)) && impostor.trace().events().is_empty(),
            "a certificate no trusted CA signed is refused: no answer, no call heard",
            format!(
                "{:?}, {} calls heard",
                refused.map(|p| p.rows.len()),
                impostor.trace().events().len()
            ),
        )?;
        let tls = TlsDialer::new(Arc::clone(&dialer), trust.clone());
        let probe = |host: &str| {
            http::Request::builder()
                .uri("/s1/feed")
                .header(http::header::HOST, host)
                .body(Full::new(Bytes::new()))
                .map_err(|e| Failure::new("a probe request", e.to_string()))
        };
        let typed = exchange(&tls, &acme, impostor_served.addr.port(), probe(&acme)?).await;
        ensure(
            matches!(
                typed,
                Err(TransportError::Tls(TlsRefusal::UntrustedCertificate))
            ),
            "the refusal is typed: TransportError::Tls(UntrustedCertificate)",
            format!("{:?}", typed.map(|r| r.status)),
        )?;

        // The team's CA, but a certificate for beta.sheets: not this host.
        let misled = client(misnamed_served.addr.port(), Some(&trust))?;
        let refused = misled.feed("sheets", None).await;
        let typed = exchange(&tls, &acme, misnamed_served.addr.port(), probe(&acme)?).await;
        ensure(
            matches!(refused, Err(FeedError::NoAnswer))
                && misnamed.trace().events().is_empty()
                && matches!(typed, Err(TransportError::Tls(TlsRefusal::WrongHost))),
            "a certificate the team's CA signed for another host is refused as WrongHost",
            format!(
                "{:?}, {} calls heard, {:?}",
                refused.map(|p| p.rows.len()),
                misnamed.trace().events().len(),
                typed.map(|r| r.status)
            ),
        )?;

        // Another team's https:// URL: refused before any connection.
        let other_team = SiblingClient::new(
            TEAM,
            &[SiblingConfig {
                url: format!("https://{beta}:{}", beta_served.addr.port()),
                token: TLS_FAKE_TOKEN.into(),
            }],
            Arc::clone(&dialer),
        );
        ensure(
            other_team
                .as_ref()
                .is_err_and(|e| e.refusal == HostRefusal::OtherTeam),
            "an https:// URL of beta.sheets is refused as another team's",
            format!("{:?}", other_team.map(|_| "a client")),
        )?;
        let accepted_before_probe = beta_served.accepted();
        let answer = exchange(&tls, &beta, beta_served.addr.port(), probe(&beta)?).await;
        ensure(
            answer.as_ref().is_ok_and(|r| r.status == 401),
            "beta.sheets is up and answers a direct TLS probe (presence)",
            format!("{:?}", answer.map(|r| r.status)),
        )?;
        ensure(
            accepted_before_probe == 0,
            "beta.sheets accepted no connection before the probe",
            format!("{accepted_before_probe} connections"),
        )
    })
}
