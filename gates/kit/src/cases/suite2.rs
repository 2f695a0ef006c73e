//! Suite gate 2 (§4.1): S2 keys on the subject kind sent on the wire, and a subject of any other kind is UNKNOWN for every pair of the call.

use super::wire::{Outcome, fail, parse_s2, post_s2};
use crate::{ConformCase, Ctx};

fn kind_on_the_wire(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let team = m.item("team");
    let a = m.person("member_a");
    let r = post_s2(
        ctx,
        &m.keys_on,
        m.subject_value(a, &m.keys_on),
        &[(&team.item_id, team.current())],
    )?;
    let ans = parse_s2(&r)?;
    if ans.kind != m.keys_on {
        return Err(fail(
            format!("subject_kind {:?} echoed", m.keys_on),
            format!("{:?}", ans.kind),
        ));
    }
    let got = ans
        .results
        .get(&(team.item_id.clone(), team.current().to_owned()));
    if got.map(Vec::as_slice) != Some(&["VISIBLE".to_owned()][..]) {
        return Err(fail(
            "VISIBLE for member_a on the team item, asked by the keyed kind",
            format!("{got:?}"),
        ));
    }
    Ok(())
}

fn other_kind_unknown(ctx: &mut Ctx<'_>) -> Outcome {
    let m = ctx.manifest;
    let other = m.other_kind();
    let a = m.person("member_a");
    let (team, hist, private) = (m.item("team"), m.item("team_history"), m.item("private"));
    let pairs = [
        (team.item_id.as_str(), team.current()),
        (hist.item_id.as_str(), hist.current()),
        (private.item_id.as_str(), private.current()),
        (m.no_row.item_id.as_str(), m.no_row.revision.as_str()),
    ];
    let r = post_s2(ctx, other, m.subject_value(a, other), &pairs)?;
    let ans = parse_s2(&r)?;
    let mut wrong = Vec::new();
    for (i, rev) in pairs {
        let got = ans.results.get(&(i.to_owned(), rev.to_owned()));
        if got.map(Vec::as_slice) != Some(&["UNKNOWN".to_owned()][..]) {
            wrong.push(format!("({i}, {rev}) -> {got:?}"));
        }
    }
    if wrong.is_empty() && ans.count == pairs.len() {
        Ok(())
    } else {
        Err(fail(
            format!(
                "UNKNOWN for every pair when the subject is a {other}, which the server does not key on"
            ),
            format!("{} results; {}", ans.count, wrong.join("; ")),
        ))
    }
}

/// The suite gate 2 cases, in list order.
pub(super) static CASES: &[ConformCase] = &[
    case!(
        "suite2/kind-on-the-wire",
        Must,
        "§4.1, suite gate 2",
        Nothing,
        "S2 keys on the subject kind sent on the wire and echoes it as subject_kind: a member asked by the keyed kind sees a team item VISIBLE.",
        kind_on_the_wire
    ),
    case!(
        "suite2/other-kind-unknown-for-whole-call",
        Must,
        "§4.1, suite gate 2",
        Nothing,
        "A subject of the kind the server does not key on gets UNKNOWN for every pair of the call, team items and no-row ids alike.",
        other_kind_unknown
    ),
];
