//! Gate 41 (`brief-organisation-read.md` §1-§3): the organisation's own read seats its memories at places 2 and 4 when the combined read leaves it no room.
//!
//! GATES.md lists the brief papers' checks without numbers; 41 is this
//! project's number for `brief-organisation-read.md`'s. The paper's own
//! figures run through the reference's seating function; the paper's test
//! ("forty repository memories that alone fill the candidate list, one
//! organisation memory on the same topic") runs end to end through a real
//! instance and the one ruling path.

use memoria::brief::score::{
    CANDIDATES_MAX, ORGANISATION_READ_K, PROXIMITY_ORGANISATION, PROXIMITY_OWN, PROXIMITY_TEAM,
    SEAT_BAR_FRACTION, WEIGHT_LAYER, WEIGHT_MEANING, WEIGHT_PATH, WEIGHT_RECENCY, WEIGHT_SCOPE,
    WEIGHT_WORDS, seat,
};
use memoria::brief::{POOL_PASSAGES, Scope, Scored, Seat, Terms};

use crate::rigs::brief::{Doc, brief, instance_with, request, scopes, texts};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 41.
pub static GATE: Gate = Gate {
    id: "41",
    title: "The organisation's own read",
    gates_md: &[
        "Forty repository memories that fill the candidate list alone, one organisation memory on the same topic: the organisation memory reaches the first two places (fails against the in-list seat, passes with the second read)",
    ],
    sections: &[
        "brief-organisation-read.md §1",
        "brief-organisation-read.md §2",
        "brief-organisation-read.md §3",
    ],
    requirement: "Every candidate is scored 0.55 meaning + 0.17 words + 0.06 recency + 0.05 layer + 0.09 scope + 0.08 path, scope proximity 1.0 for the asked scope, 0.5 for a named team, 0.0 for the organisation; the combined read keeps 32; a second read over the organisation alone, four deep, scores it as the nearest scope, and its best two hits within 0.85 of the combined top take places 2 and 4, judged by their own read's score.",
    cases: &[
        Case {
            id: "41/weights-and-proximities-as-the-paper",
            desc: "The six weights, the three proximities, the list of 32, the read of 4 and the bar of 0.85 are the paper's; a memory perfect on one term scores exactly that term's weight.",
            run: weights,
        },
        Case {
            id: "41/the-papers-seats-by-its-figures",
            desc: "§2: 32 repository candidates 0.578 … 0.539, the organisation read 0.541, 0.495, 0.485, 0.459; bar 0.491: 0.541 and 0.495 take places 2 and 4, the other two are left out. §3's second prompt: bar 0.85 × 0.654 = 0.556, the next hit at 0.507 falls short and place 4 stays with the repository.",
            run: papers_figures,
        },
        Case {
            id: "41/a-hit-in-both-lists-is-seated-once-by-its-own-score",
            desc: "§3: \"an organisation memory that also made the combined list is judged by its score from the organisation read, never by the lower one it carries there\": a hit at 0.45 in the combined list and 0.54 in its own read, against a top of 0.6 (bar 0.51), is seated once, at place 2, at 0.54; and a hit exactly at the bar (0.85 of a top of 1.0) is seated.",
            run: hit_in_both_lists,
        },
        Case {
            id: "41/forty-project-memories-one-organisation-memory",
            desc: "Forty project memories fill the combined list (32 of 32, none the organisation's); one organisation memory on the same topic reaches the brief's first two places, seated by its own read.",
            run: forty_and_one,
        },
        Case {
            id: "41/the-organisations-read-takes-its-pool-from-the-organisation-alone",
            desc: "Sixty-one project notes each hold every word of the task, so the combined read's 48-passage pool is all project passages; the organisation's rule lacks one of them and is in no such pool. Its own read, over the organisation alone, still finds it, and it is seated in the brief's first two places.",
            run: pool_of_its_own,
        },
        Case {
            id: "41/the-bar-stops-a-weak-seat",
            desc: "The same forty beside an organisation memory that shares three of the task's seven words: its own read scores it under 0.85 of the top, and it takes no seat.",
            run: bar_stops_weak_seat,
        },
        Case {
            id: "41/a-named-team-sits-between",
            desc: "A team document is read only when the team is named, and then at proximity 0.5 (its excerpt's scope term), between the project's 1.0 and the organisation's 0.0.",
            run: team_sits_between,
        },
    ],
};

fn weights(_ctx: &mut Ctx) -> Result<(), Failure> {
    let w = [
        WEIGHT_MEANING,
        WEIGHT_WORDS,
        WEIGHT_RECENCY,
        WEIGHT_LAYER,
        WEIGHT_SCOPE,
        WEIGHT_PATH,
    ];
    ensure(
        w == [0.55, 0.17, 0.06, 0.05, 0.09, 0.08],
        "0.55, 0.17, 0.06, 0.05, 0.09, 0.08",
        format!("{w:?}"),
    )?;
    let one = |f: fn(&mut Terms)| {
        let mut t = Terms::default();
        f(&mut t);
        t.score()
    };
    let each = [
        one(|t| t.meaning = 1.0),
        one(|t| t.words = 1.0),
        one(|t| t.recency = 1.0),
        one(|t| t.layer = 1.0),
        one(|t| t.scope = 1.0),
        one(|t| t.path = 1.0),
    ];
    ensure(
        each.iter().zip(w).all(|(s, w)| (s - w).abs() < 1e-12),
        "a memory perfect on one term scores that term's weight",
        format!("{each:?}"),
    )?;
    ensure(
        (PROXIMITY_OWN, PROXIMITY_TEAM, PROXIMITY_ORGANISATION) == (1.0, 0.5, 0.0),
        "proximities 1.0, 0.5, 0.0",
        format!("{PROXIMITY_OWN}, {PROXIMITY_TEAM}, {PROXIMITY_ORGANISATION}"),
    )?;
    ensure(
        (CANDIDATES_MAX, ORGANISATION_READ_K, SEAT_BAR_FRACTION) == (32, 4, 0.85),
        "32 candidates, a read of 4, a bar of 0.85",
        format!("{CANDIDATES_MAX}, {ORGANISATION_READ_K}, {SEAT_BAR_FRACTION}"),
    )
}

fn papers_figures(_ctx: &mut Ctx) -> Result<(), Failure> {
    let combined: Vec<Scored> = (0..32)
        .map(|i| Scored {
            block: i,
            score: 0.578 - (0.578 - 0.539) * i as f64 / 31.0,
        })
        .collect();
    let org: Vec<Scored> = [0.541, 0.495, 0.485, 0.459]
        .iter()
        .enumerate()
        .map(|(i, &score)| Scored {
            block: 100 + i,
            score,
        })
        .collect();
    let order = seat(&combined, &org, |b| b >= 100);
    let places: Vec<(usize, Seat)> = order.iter().take(4).map(|o| (o.0, o.2)).collect();
    ensure(
        places
            == [
                (0, Seat::Read),
                (100, Seat::Organisation),
                (1, Seat::Read),
                (101, Seat::Organisation),
            ],
        "0.541 at place 2, 0.495 at place 4",
        format!("{places:?}"),
    )?;
    ensure(
        !order.iter().any(|o| o.0 == 102 || o.0 == 103),
        "0.485 and 0.459 fall below the bar of 0.491 and are left out",
        format!("{:?}", order.iter().map(|o| o.0).collect::<Vec<_>>()),
    )?;
    let combined: Vec<Scored> = (0..5)
        .map(|i| Scored {
            block: i,
            score: 0.654 - 0.01 * i as f64,
        })
        .collect();
    let org = [
        Scored {
            block: 100,
            score: 0.60,
        },
        Scored {
            block: 101,
            score: 0.507,
        },
    ];
    let order = seat(&combined, &org, |b| b >= 100);
    ensure(
        order[1].0 == 100 && order[3].2 == Seat::Read && !order.iter().any(|o| o.0 == 101),
        "the rule at place 2; 0.507 short of 0.556, so place 4 stays with the repository",
        format!("{:?}", order.iter().map(|o| (o.0, o.2)).collect::<Vec<_>>()),
    )
}

fn hit_in_both_lists(_ctx: &mut Ctx) -> Result<(), Failure> {
    let sc = |block, score| Scored { block, score };
    let order = seat(&[sc(0, 0.6), sc(7, 0.45)], &[sc(7, 0.54)], |b| b == 7);
    ensure(
        order == vec![(0, 0.6, Seat::Read), (7, 0.54, Seat::Organisation)],
        "[(0, 0.6, Read), (7, 0.54, Organisation)]: seated once, by its own read's score",
        format!("{order:?}"),
    )?;
    let order = seat(&[sc(0, 1.0)], &[sc(100, 0.85)], |b| b == 100);
    ensure(
        order
            .get(1)
            .is_some_and(|o| o.0 == 100 && o.2 == Seat::Organisation),
        "a hit exactly at the bar is seated at place 2",
        format!("{order:?}"),
    )
}

/// The task of the paper's first prompt: seven content tokens.
const TASK: &str = "write a new Foundation paper about shared agent memory";
/// The project memory holding all seven.
const LEAD: &str =
    "To write a new foundation paper on shared agent memory, start from the outline template.";

/// Forty project documents: the lead, and 39 drafts sharing four of the
/// task's seven tokens (each scores 0.297 against the organisation's 0.256
/// in the combined read).
fn forty() -> Vec<(String, String, String)> {
    let mut out = vec![(
        "Note 00".to_string(),
        "repo/notes/n00.md".to_string(),
        LEAD.to_string(),
    )];
    for i in 1..40 {
        out.push((
            format!("Note {i:02}"),
            format!("repo/notes/n{i:02}.md"),
            format!(
                "Draft {i:02} of the foundation paper measured agent memory on cluster k{i:02}."
            ),
        ));
    }
    out
}

fn with_forty<'a>(owned: &'a [(String, String, String)], bodies: &'a [String]) -> Vec<Doc<'a>> {
    owned
        .iter()
        .zip(bodies)
        .map(|((t, p, _), b)| Doc {
            title: t,
            path: p,
            body: b,
        })
        .collect()
}

fn bodies(owned: &[(String, String, String)]) -> Vec<String> {
    owned
        .iter()
        .map(|(t, _, s)| format!("# {t}\n\n{s}\n"))
        .collect()
}

fn forty_and_one(ctx: &mut Ctx) -> Result<(), Failure> {
    let rule = "Papers here make one claim, and a new foundation paper on shared agent memory keeps to that shape.";
    let owned = forty();
    let b = bodies(&owned);
    let mut docs = with_forty(&owned, &b);
    let org_body = format!("# Paper rules\n\n{rule}\n");
    docs.push(Doc {
        title: "Paper rules",
        path: "org/papers.md",
        body: &org_body,
    });
    let m = instance_with(ctx, &docs)?;
    let brief = brief(&m, &scopes(), &request(TASK, "repo", 2000))?;
    ensure(
        brief.read.combined == 32 && brief.read.combined_from_organisation == 0,
        "the combined list is 32 project memories and none of the organisation's (the paper's world)",
        format!("{:?}", brief.read),
    )?;
    ensure(
        brief.read.organisation >= 1,
        "the organisation's own read found its memory",
        format!("{:?}", brief.read),
    )?;
    let first_two: Vec<&str> = texts(&brief).into_iter().take(2).collect();
    ensure(
        first_two.contains(&rule),
        "the organisation memory is in the brief's first two places",
        format!("{:?}: {first_two:?}", brief.status),
    )?;
    let e = brief
        .excerpts
        .iter()
        .find(|e| e.text == rule)
        .expect("found above");
    ensure(
        e.seat == Seat::Organisation
            && e.scope == Scope::Organisation
            && e.terms.scope == PROXIMITY_OWN,
        "it sits in an organisation seat, scored in its own read as the nearest scope",
        format!("{:?} {:?} scope term {}", e.seat, e.scope, e.terms.scope),
    )
}

/// Project notes that hold every one of [`TASK`]'s searched words, more
/// than the combined read's pool takes ([`POOL_PASSAGES`]).
const CROWD_NOTES: usize = 61;

fn pool_of_its_own(ctx: &mut Ctx) -> Result<(), Failure> {
    // The lead holds the task as typed (the phrase tier); each draft holds
    // every searched word across two sentences (the all-words tier), so
    // BM25 over the combined read fills its 48 with project passages first.
    let lead = "To write a new foundation paper about shared agent memory, start from the outline template.";
    // Every searched word but "write": the all-but-one tier, below them all.
    let rule = "Papers here make one claim, and a new foundation paper about shared agent memory keeps to that shape.";
    let mut owned = vec![(
        "Note 00".to_string(),
        "repo/notes/n00.md".to_string(),
        format!("# Note 00\n\n{lead}\n"),
    )];
    for i in 1..CROWD_NOTES {
        owned.push((
            format!("Note {i:02}"),
            format!("repo/notes/n{i:02}.md"),
            format!(
                "# Note {i:02}\n\nDraft {i:02} of the foundation paper measured agent memory on cluster k{i:02}.\n\n\
                 Someone will write a new section about it once it is shared.\n"
            ),
        ));
    }
    let mut docs: Vec<Doc<'_>> = owned
        .iter()
        .map(|(t, p, b)| Doc {
            title: t,
            path: p,
            body: b,
        })
        .collect();
    let org_body = format!("# Paper rules\n\n{rule}\n");
    docs.push(Doc {
        title: "Paper rules",
        path: "org/papers.md",
        body: &org_body,
    });
    ensure(
        CROWD_NOTES > POOL_PASSAGES,
        "more project notes than the combined read's pool",
        format!("{CROWD_NOTES} of {POOL_PASSAGES}"),
    )?;
    let m = instance_with(ctx, &docs)?;
    let brief = brief(&m, &scopes(), &request(TASK, "repo", 2000))?;
    ensure(
        brief.read.combined == 32 && brief.read.combined_from_organisation == 0,
        "the combined list is 32 project memories and none of the organisation's",
        format!("{:?}", brief.read),
    )?;
    ensure(
        brief.read.organisation >= 1 && brief.read.seated >= 1,
        "the organisation's own read found its rule and seated it",
        format!("{:?}", brief.read),
    )?;
    let first_two: Vec<&str> = texts(&brief).into_iter().take(2).collect();
    ensure(
        first_two.contains(&rule),
        "the organisation's rule is in the brief's first two places",
        format!("{:?}: {first_two:?}", brief.status),
    )
}

fn bar_stops_weak_seat(ctx: &mut Ctx) -> Result<(), Failure> {
    let weak = "Shared agent memory lives in the organisation wiki, far from any draft.";
    let owned = forty();
    let b = bodies(&owned);
    let mut docs = with_forty(&owned, &b);
    let org_body = format!("# Wiki\n\n{weak}\n");
    docs.push(Doc {
        title: "Wiki",
        path: "org/wiki.md",
        body: &org_body,
    });
    let m = instance_with(ctx, &docs)?;
    let brief = brief(&m, &scopes(), &request(TASK, "repo", 2000))?;
    ensure(
        brief.read.organisation >= 1 && brief.read.combined == 32,
        "the organisation's read found its memory (presence)",
        format!("{:?}", brief.read),
    )?;
    ensure(
        brief.read.seated == 0 && !texts(&brief).contains(&weak),
        "under the bar: no seat, and not in the brief",
        format!("{:?}: {:?}", brief.read, texts(&brief)),
    )
}

fn team_sits_between(ctx: &mut Ctx) -> Result<(), Failure> {
    let project = "The release train leaves every Tuesday from the main branch.";
    let team = "The team runs the release train retrospective every month.";
    let docs = [
        Doc {
            title: "Release train",
            path: "repo/train.md",
            body: &format!("# Release train\n\n{project}\n"),
        },
        Doc {
            title: "Retrospectives",
            path: "handbook/retro.md",
            body: &format!("# Retrospectives\n\n{team}\n"),
        },
    ];
    let m = instance_with(ctx, &docs)?;
    let mut req = request("Release train", "repo", 2000);
    let without = brief(&m, &scopes(), &req)?;
    ensure(
        !texts(&without).contains(&team) && !without.reads.contains(&Scope::Team),
        "without the team named, its document is not read",
        format!("{:?}", texts(&without)),
    )?;
    req.with_team = true;
    let with = brief(&m, &scopes(), &req)?;
    let e = with.excerpts.iter().find(|e| e.text == team);
    ensure(
        e.is_some_and(|e| e.scope == Scope::Team && e.terms.scope == PROXIMITY_TEAM),
        "named, the team's memory is read at proximity 0.5",
        format!(
            "{:?}",
            with.excerpts
                .iter()
                .map(|e| (&e.text, e.terms.scope))
                .collect::<Vec<_>>()
        ),
    )
}
