//! Gate 25 (§10, §6.1): S3 carries no person, asserted end to end rather than by spelling.
//!
//! Sheets holds an item individually granted to Ana and not team-visible,
//! beside a team item. memoria's warm-up reads the feed, which announces the
//! granted item's brief team life and then its `gone`, so memoria does ask
//! S3 for it (presence). It must 404, never 403; it must never reach
//! memoria's store or any page; and the fake, which decodes S3 into its
//! own struct with unknown fields rejected, must record that no S3 request
//! carried a field it did not expect. A direct probe with a `person_ref`
//! proves that record can see a field. The meaningful mutation takes two
//! edits: memoria sends a person, and the fake honours it.

use bytes::Bytes;
use http_body_util::Full;
use memoria::exchange;
use memoria_simulator::{
    CallDetail, CallKind, MEMORIA_CONSUMER, OWNERS, Rung, SIBLING_PORT, SiblingSpec, TurmoilDialer,
    World,
};

use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world, tagged_body};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 25.
pub static GATE: Gate = Gate {
    id: "25",
    title: "S3 carries no person",
    gates_md: &[
        "S3 carries no person: fixture decodes S3 with unknown fields rejected; the meaningful mutation takes two edits",
    ],
    sections: &["§10", "§6.1"],
    requirement: "An item granted individually to the asker and not team-visible 404s on S3, never enters memoria's store, and no S3 request carries any field beyond item_id and revision.",
    cases: &[Case {
        id: "25/granted-item-never-fetched",
        desc: "Sheets holds a team item and an item granted to Ana only; after the warm-up the team item is served by S3 and searchable, the granted item was asked for and answered 404, is absent from the store and from Ana's page, and no S3 request memoria sent carried an unexpected field, while a probe with person_ref is recorded as one.",
        run: granted_item_never_fetched,
    }],
};

/// (item id, status, unexpected fields, served, caller) of one S3 call the fake saw.
type S3Seen = (Option<String>, Option<u16>, Vec<String>, bool, String);

fn granted_item_never_fetched(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let (team_canary, granted_canary) = (ctx.canary(), ctx.canary());
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    let sheets = world.fake("sheets").clone();
    sheets.model().with(|m| {
        m.add_item(
            "sh-team",
            Rung::Team,
            "T",
            &tagged_body(&team_canary, "tagteam"),
        )
        .expect("item");
        m.add_item(
            "sh-granted",
            Rung::Team,
            "G",
            &tagged_body(&granted_canary, "taggranted"),
        )
        .expect("item");
        m.set_rung(
            "sh-granted",
            Rung::Granted {
                to: [ana.to_string()].into(),
            },
        )
        .expect("grant");
    });
    let trace = world.trace().clone();
    let host = SiblingSpec::own("sheets").host();
    let token = world.token(&host).to_string();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let s3: Vec<S3Seen> = trace
            .events()
            .into_iter()
            .filter(|e| e.call == CallKind::S3)
            .filter_map(|e| match e.detail {
                CallDetail::S3 {
                    item_id,
                    unexpected_fields,
                    served,
                    ..
                } => Some((item_id, e.status, unexpected_fields, served, e.caller)),
                _ => None,
            })
            .collect();
        let team = s3.iter().any(|(i, s, _, served, _)| {
            i.as_deref() == Some("sh-team") && *s == Some(200) && *served
        });
        check(
            team,
            "S3 served the team item (presence)",
            format!("{s3:?}"),
        )?;
        let granted: Vec<_> = s3
            .iter()
            .filter(|(i, ..)| i.as_deref() == Some("sh-granted"))
            .collect();
        check(
            !granted.is_empty(),
            "memoria asked S3 for the granted item (presence)",
            "it never asked",
        )?;
        check(
            granted
                .iter()
                .all(|(_, s, _, served, _)| *s == Some(404) && !served),
            "S3 answered 404, never 403 and never a body, for the granted item",
            format!("{granted:?}"),
        )?;
        let extra: Vec<_> = s3
            .iter()
            .filter(|(.., f, _, c)| c == MEMORIA_CONSUMER && !f.is_empty())
            .collect();
        check(
            extra.is_empty(),
            "no S3 request from memoria carried an unexpected field",
            format!("{extra:?}"),
        )?;
        let page = m.search(ana, &granted_canary).await.response.body;
        check(
            !page.contains("taggranted") && Page::parse(&page).withheld().is_empty(),
            "the granted item is on no page, not even as a withheld count",
            format!("withheld {:?}", Page::parse(&page).withheld()),
        )?;
        let team_page = m.search(ana, &team_canary).await.response.body;
        check(
            team_page.contains("tagteam"),
            "the team item is searchable (presence)",
            "it is not",
        )?;
        {
            let instance = m.state().instance();
            let guard = instance.lock().map_err(|_| "instance lock".to_string())?;
            let held = guard
                .store()
                .sibling_document("sheets", "sh-granted")
                .map_err(|e| e.to_string())?;
            check(
                held.is_none(),
                "the granted item is not in memoria's store",
                "it is held",
            )?;
        }
        let probe = http::Request::builder()
            .method("POST")
            .uri("/s3/fetch")
            .header(http::header::HOST, host.as_str())
            .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(
                r#"{"item_id":"sh-granted","revision":"r1","person_ref":"prs_ana"}"#,
            )))
            .map_err(|e| e.to_string())?;
        let r = exchange(&TurmoilDialer, &host, SIBLING_PORT, probe)
            .await
            .map_err(|e| e.to_string())?;
        let seen = trace.events().iter().any(|e| matches!(&e.detail, CallDetail::S3 { unexpected_fields, .. } if unexpected_fields.iter().any(|f| f == "person_ref")));
        check(
            r.status == 400 && seen,
            "a probe carrying person_ref is refused and recorded as an unexpected field (the record can see one)",
            format!("status {}, recorded {seen}", r.status),
        )
    })
}
