//! Gate 11 (§10, §6.3): memoria never dials across a team label, and never follows a redirect there.
//!
//! Three cases. The table: every hostile URL in `fixtures/contract/hostile-hosts.json`
//! is refused at configuration and every same-team one accepted. The
//! configuration half in the simulator: another team's Sheets is up and
//! answers a direct probe (presence), memoria configured with it refuses
//! to start its client, and that host never hears from memoria. The
//! redirect half: memoria's own Sheets answers 307 to the other team's
//! host; the page withholds loudly and the other host receives nothing.

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use memoria::exchange;
use memoria::{SiblingClient, SiblingConfig};
use memoria_simulator::{
    CallKind, OWNERS, Redirect, Rung, SIBLING_PORT, SiblingSpec, TEAM, TurmoilDialer, World,
};

use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world, tagged_body};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 11.
pub static GATE: Gate = Gate {
    id: "11",
    title: "Cross-team dial refusal, including redirects",
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
