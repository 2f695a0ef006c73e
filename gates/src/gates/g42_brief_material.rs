//! Gate 42 (`brief-material.md` §3-§6, §8.1): a brief's first line is its status, its material shrinks by policy and keeps its grounds, bad input is refused, and every passage in it passed §4.1 in the request that built it.
//!
//! Size: over 700 lines because its cases share the brief rigs and the
//! fake siblings' per-item custody; each case is a claim of
//! `brief-material.md`, and split, a claim would sit apart from its rig.
//!
//! GATES.md lists the brief papers' checks without numbers; 42 is this
//! project's number for `brief-material.md`'s, with the authorization every
//! surface owes (§8.1: "every path that renders a passage calls §4.1
//! first") run end to end in the simulator against the fake siblings'
//! per-item custody.

use memoria::SharedInstance;
use memoria::brief::{BUDGET_CHARS_MAX, Brief, BriefError, BriefRequest, Scopes, Status};
use memoria_simulator::{CallKind, Memoria, OWNERS, Outage, Rung, SiblingSpec, World};

use crate::rigs::brief::{Doc, ask, brief, instance_with, request, scopes, texts};
use crate::rigs::sim::{check, fail, run_world};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 42.
pub static GATE: Gate = Gate {
    id: "42",
    title: "Brief material: status, budget, grounds, authorization",
    gates_md: &[
        "A brief's first line is its status: resolved, choose or none; over budget it shrinks excerpts first, then relations, keeps every ground, and says it shrank",
    ],
    sections: &[
        "brief-material.md §3",
        "brief-material.md §4",
        "brief-material.md §5",
        "brief-material.md §6",
        "§8.1",
        "§4.1",
    ],
    requirement: "A brief's first line is resolved, choose (the tied candidates, no material) or none (saying why, and saying so when what matched could not be read); the description is the lead sentence of the document's first passage, only when it shares a word with the title; every quoted sentence is whole (one over 500 characters is left out); over budget it leaves out excerpts first, lowest placed first, then relations, last placed first, keeps every ground (a relation's target among them) and says it shrank; an empty task, a task over the query limit, a budget of zero or over the maximum and an unknown scope are refused, never answered with an empty resolved brief; a sibling passage NOT_VISIBLE to the asker is in no brief of theirs, and one STALE or whose sibling did not answer is withheld loudly.",
    cases: &[
        Case {
            id: "42/first-line-is-the-status",
            desc: "A clear leader gives resolved with material; two documents saying the same thing tie and give choose with both candidates and no item, excerpt or description; a task nothing matches gives none, saying so.",
            run: statuses,
        },
        Case {
            id: "42/budget-shrinks-excerpts-then-relations-keeps-grounds",
            desc: "The runbook's brief with a description, at least three excerpts (one its own, the cap taking the rest of its voice; three from documents that follow it) and two relations: at a budget for one excerpt it leaves out three excerpts and no relation; at a budget for one relation, every excerpt and one relation; at one character, everything it may, saying the description alone is over. The grounds are the same set every time, and the text says it shrank.",
            run: shrink_order,
        },
        Case {
            id: "42/over-budget-the-last-relation-goes-first",
            desc: "The runbook's brief at a budget for its description and its first relation: the one relation kept is the first placed (Deploy notes), the escalation list's relation is left out.",
            run: last_relation_first,
        },
        Case {
            id: "42/a-relation-target-is-a-ground",
            desc: "The runbook links to a pager page that shares no word with the task: the link is a relation, the page is no excerpt, and its id at its revision is among the grounds.",
            run: relation_target_ground,
        },
        Case {
            id: "42/a-lead-sharing-no-word-with-its-title-is-no-description",
            desc: "\"Vault\", whose one sentence (the deploy key's rotation) shares no word with its title: resolved and quoting the sentence, with no description (brief-material.md §3: an excerpt linked only by provenance is not promoted).",
            run: lead_without_title_word,
        },
        Case {
            id: "42/the-description-is-the-first-passages-lead",
            desc: "A two-section ledger document whose second section alone matches the task: the excerpts quote that section, and the description is still the lead sentence of the first passage, cited as its #p1.",
            run: description_is_first_passages_lead,
        },
        Case {
            id: "42/a-sentence-over-500-characters-is-in-no-brief",
            desc: "A 600-character sentence that matches the task, beside a short one that does: the short one is quoted, and the long one is in no brief, neither whole nor cut to 500 characters.",
            run: long_sentence_left_out,
        },
        Case {
            id: "42/bad-input-is-refused-never-an-empty-brief",
            desc: "An empty task, one of punctuation, one over the query limit, a budget of 0 and one over the maximum, an unknown project and an organisation not configured are each refused with their own error; the same instance briefs a good request (presence).",
            run: refusals,
        },
        Case {
            id: "42/a-scope-holding-nothing-says-none-and-why",
            desc: "A configured project that holds no document: status none, saying the scope holds no document yet.",
            run: empty_scope,
        },
        Case {
            id: "42/not-visible-passage-is-in-no-brief",
            desc: "Sheets holds three team items; Sheets removes Ana from one. Bea's brief quotes all three (presence); Ana's quotes the two she may see and nothing of the third, with no withheld line (NOT_VISIBLE is silent).",
            run: not_visible,
        },
        Case {
            id: "42/stale-passage-is-withheld-not-quoted",
            desc: "Sheets holds three team items and revises one past the revision memoria holds: Ana's brief quotes the other two, nothing of the old revision, and says \"Sheets has a newer version of 1 result; withheld while memoria fetches it.\"",
            run: stale_withheld,
        },
        Case {
            id: "42/none-says-what-matched-could-not-be-read",
            desc: "Docs alone holds the matching items and answers S2 with 503: the brief is none, says what matched could not be read now (not that nothing matched), and says \"Docs did not answer; 2 results withheld.\"",
            run: none_could_not_be_read,
        },
        Case {
            id: "42/unanswered-sibling-is-withheld-loudly",
            desc: "Docs answers S2 with 503: Ana's brief quotes the Sheets items, nothing of Docs', and says \"Docs did not answer; 2 results withheld.\"",
            run: unanswered,
        },
    ],
};

fn doc<'a>(title: &'a str, path: &'a str, body: &'a str) -> Doc<'a> {
    Doc { title, path, body }
}

fn statuses(ctx: &mut Ctx) -> Result<(), Failure> {
    let same = "The deploy key rotates every quarter on the first Monday.";
    let a = format!("# Vault\n\n{same}\n");
    let b = format!("# Keys\n\n{same}\n");
    let docs = [
        doc("Vault", "repo/one.md", &a),
        doc("Keys", "repo/two.md", &b),
        doc(
            "Backups",
            "repo/backups.md",
            "# Backups\n\nBackups of the ledger run nightly to the cold bucket.\n",
        ),
    ];
    let m = instance_with(ctx, &docs)?;
    let s = scopes();
    let resolved = brief(&m, &s, &request("ledger backups cold bucket", "repo", 2000))?;
    ensure(
        resolved.status == Status::Resolved
            && resolved.to_text().lines().next() == Some("resolved")
            && resolved.item.as_ref().is_some_and(|i| i.title == "Backups")
            && resolved
                .description
                .as_ref()
                .is_some_and(|d| d.text.contains("cold bucket")),
        "a clear leader: first line resolved, the Backups document, its sentence quoted",
        format!(
            "{:?} {:?} {:?}",
            resolved.status, resolved.item, resolved.description
        ),
    )?;
    let choose = brief(&m, &s, &request("deploy key quarter", "repo", 2000))?;
    let titles: Vec<&str> = choose.candidates.iter().map(|c| c.title.as_str()).collect();
    ensure(
        choose.status == Status::Choose
            && choose.to_text().lines().next() == Some("choose")
            && titles.len() == 2
            && titles.contains(&"Vault")
            && titles.contains(&"Keys"),
        "a tie: first line choose, with both candidates",
        format!("{:?} {titles:?}", choose.status),
    )?;
    ensure(
        choose.item.is_none()
            && choose.excerpts.is_empty()
            && choose.description.is_none()
            && choose.relations.is_empty(),
        "choose carries no material around the first candidate",
        format!("{:?} {:?}", choose.item, texts(&choose)),
    )?;
    let none = brief(&m, &s, &request("zebra quantum", "repo", 2000))?;
    ensure(
        none.status == Status::None
            && none.to_text().lines().next() == Some("none")
            && none.note.as_deref().is_some_and(|n| n.contains("matched"))
            && none.excerpts.is_empty(),
        "nothing matches: first line none, saying nothing matched",
        format!("{:?} {:?}", none.status, none.note),
    )
}

fn runbook_docs() -> [(&'static str, &'static str, String); 4] {
    [
        (
            "Runbook",
            "repo/runbook.md",
            "# Runbook\n\nThis runbook covers the ledger service from boot to restore.\n\n\
             Read [the deploy notes](deploy.md) before any runbook step on the ledger.\n\n\
             The [escalation list](escalation.md) in this runbook names who is on call.\n\n\
             Every runbook step is logged to the ledger audit channel.\n\n\
             A runbook restore starts from the last sealed snapshot of the ledger.\n"
                .to_string(),
        ),
        (
            "Deploy notes",
            "repo/deploy.md",
            "# Deploy notes\n\nDeploys follow the runbook on Tuesdays only.\n".to_string(),
        ),
        (
            "Escalation",
            "repo/escalation.md",
            "# Escalation\n\nEscalation follows the call order the runbook gives.\n".to_string(),
        ),
        (
            "Audit",
            "repo/audit.md",
            "# Audit\n\nAuditors sample one runbook session each quarter.\n".to_string(),
        ),
    ]
}

/// An instance holding the runbook and the three documents it leads to.
fn runbook_instance(ctx: &mut Ctx) -> Result<SharedInstance, Failure> {
    let owned = runbook_docs();
    let docs: Vec<Doc<'_>> = owned.iter().map(|(t, p, b)| doc(t, p, b)).collect();
    instance_with(ctx, &docs)
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn shrink_order(ctx: &mut Ctx) -> Result<(), Failure> {
    let m = runbook_instance(ctx)?;
    let s = scopes();
    let at = |budget: usize| brief(&m, &s, &request("Runbook", "repo", budget));
    let full = at(BUDGET_CHARS_MAX)?;
    let desc = full.description.as_ref().map_or(0, |d| chars(&d.text));
    ensure(
        full.status == Status::Resolved
            && desc > 0
            && full.excerpts.len() >= 3
            && full.relations.len() == 2
            && full.shrink.is_none(),
        "in full: resolved, a description, at least three excerpts, two relations, nothing shrunk",
        format!(
            "{:?}, description {desc}, {} excerpts, {} relations, {:?}",
            full.status,
            full.excerpts.len(),
            full.relations.len(),
            full.shrink
        ),
    )?;
    let rel: usize = full.relations.iter().map(|r| chars(&r.evidence)).sum();
    let first = chars(&full.excerpts[0].text);
    let one_excerpt = at(desc + rel + first)?;
    ensure(
        one_excerpt.excerpts.len() == 1
            && one_excerpt.excerpts[0].text == full.excerpts[0].text
            && one_excerpt.relations.len() == 2
            && one_excerpt.shrink.as_ref().is_some_and(|k| {
                k.excerpts_left_out == full.excerpts.len() - 1 && k.relations_left_out == 0
            }),
        "excerpts go first, lowest placed first; the relations stay",
        format!(
            "{} excerpts, {} relations, {:?}",
            one_excerpt.excerpts.len(),
            one_excerpt.relations.len(),
            one_excerpt.shrink
        ),
    )?;
    let one_relation = at(desc + chars(&full.relations[0].evidence))?;
    ensure(
        one_relation.excerpts.is_empty()
            && one_relation.relations.len() == 1
            && one_relation
                .shrink
                .as_ref()
                .is_some_and(|k| k.relations_left_out == 1 && !k.still_over),
        "then relations, last first",
        format!(
            "{} excerpts, {} relations, {:?}",
            one_relation.excerpts.len(),
            one_relation.relations.len(),
            one_relation.shrink
        ),
    )?;
    let tiny = at(1)?;
    ensure(
        tiny.shrink.as_ref().is_some_and(|k| k.still_over) && tiny.description.is_some(),
        "at one character everything it may goes, and it says the description alone is over",
        format!("{:?}", tiny.shrink),
    )?;
    for (name, b) in [
        ("one excerpt", &one_excerpt),
        ("one relation", &one_relation),
        ("one character", &tiny),
    ] {
        ensure(
            b.grounds == full.grounds,
            format!(
                "at {name} the grounds are the full brief's {:?}",
                full.grounds
            ),
            format!("{:?}", b.grounds),
        )?;
        ensure(
            b.to_text().contains("shrank:") && b.material_chars <= b.budget_chars.max(desc),
            format!("at {name} the text says it shrank and the material fits"),
            format!("{} of {}", b.material_chars, b.budget_chars),
        )?;
    }
    Ok(())
}

fn last_relation_first(ctx: &mut Ctx) -> Result<(), Failure> {
    let m = runbook_instance(ctx)?;
    let s = scopes();
    let at = |budget: usize| brief(&m, &s, &request("Runbook", "repo", budget));
    let full = at(BUDGET_CHARS_MAX)?;
    let targets =
        |b: &Brief| -> Vec<String> { b.relations.iter().map(|r| r.target_title.clone()).collect() };
    ensure(
        targets(&full) == ["Deploy notes", "Escalation"],
        "in full, two relations: Deploy notes placed first, then Escalation",
        format!("{:?}", targets(&full)),
    )?;
    let desc = full.description.as_ref().map_or(0, |d| chars(&d.text));
    let first = chars(&full.relations[0].evidence);
    let second = chars(&full.relations[1].evidence);
    ensure(
        second <= first,
        "the second relation's evidence fits where the first's does (so the budget alone cannot pick)",
        format!("{second} and {first} characters"),
    )?;
    let one = at(desc + first)?;
    ensure(
        targets(&one) == ["Deploy notes"]
            && one
                .shrink
                .as_ref()
                .is_some_and(|k| k.relations_left_out == 1),
        "at one relation's budget the first placed is kept and the last left out",
        format!("{:?}, {:?}", targets(&one), one.shrink),
    )
}

fn relation_target_ground(ctx: &mut Ctx) -> Result<(), Failure> {
    let runbook = "# Runbook\n\nThis runbook covers the ledger service from boot to restore.\n\n\
                   Page the [pager rota](pager.md) when a runbook step fails.\n";
    let pager = "# Pager\n\nThe pager rota changes hands each Friday at noon.\n";
    let docs = [
        doc("Runbook", "repo/runbook.md", runbook),
        doc("Pager", "repo/pager.md", pager),
    ];
    let m = instance_with(ctx, &docs)?;
    let b = brief(&m, &scopes(), &request("Runbook", "repo", 2000))?;
    let Some(r) = b.relations.iter().find(|r| r.target_title == "Pager") else {
        return Err(Failure::new(
            "the runbook's link to the pager page is a relation (presence)",
            format!("{:?}: {:?}", b.status, b.relations),
        ));
    };
    ensure(
        !b.excerpts.iter().any(|e| e.document_id == r.target_id),
        "the pager page matches nothing of the task: no excerpt of it",
        format!("{:?}", texts(&b)),
    )?;
    let ground = format!("{}@", r.target_id);
    ensure(
        b.grounds.iter().any(|g| g.starts_with(&ground)),
        format!("the pager page ({}@revision) is a ground", r.target_id),
        format!("{:?}", b.grounds),
    )
}

fn lead_without_title_word(ctx: &mut Ctx) -> Result<(), Failure> {
    let sentence = "The deploy key rotates every quarter on the first Monday.";
    let body = format!("# Vault\n\n{sentence}\n");
    let docs = [doc("Vault", "repo/vault.md", &body)];
    let m = instance_with(ctx, &docs)?;
    let b = brief(&m, &scopes(), &request("deploy key quarter", "repo", 2000))?;
    ensure(
        b.status == Status::Resolved
            && b.item.as_ref().is_some_and(|i| i.title == "Vault")
            && quoted(&b).contains(sentence),
        "resolved on Vault, quoting its sentence (presence)",
        format!("{:?} {:?}: {:?}", b.status, b.item, quoted(&b)),
    )?;
    ensure(
        b.description.is_none(),
        "no description: the lead shares no word with the title",
        format!("{:?}", b.description),
    )
}

fn description_is_first_passages_lead(ctx: &mut Ctx) -> Result<(), Failure> {
    let lead = "The ledger holds every account balance of the team.";
    let restore = "A ledger restore starts from the last sealed snapshot.";
    let body = format!("# Ledger\n\n{lead}\n\n## Restore\n\n{restore}\n");
    let docs = [doc("Ledger", "repo/ledger.md", &body)];
    let m = instance_with(ctx, &docs)?;
    let b = brief(
        &m,
        &scopes(),
        &request("restore sealed snapshot", "repo", 2000),
    )?;
    let Some(item) = &b.item else {
        return Err(Failure::new(
            "resolved on the ledger document",
            format!("{:?}", b.status),
        ));
    };
    let second = format!("{}#p2", item.document_id);
    ensure(
        quoted(&b).contains(restore) && b.excerpts.iter().all(|e| e.passage == second),
        "the brief quotes the second section, and no excerpt the first (presence: only the second matched)",
        format!(
            "{:?}",
            b.excerpts
                .iter()
                .map(|e| (&e.text, &e.passage))
                .collect::<Vec<_>>()
        ),
    )?;
    let first = format!("{}#p1", item.document_id);
    ensure(
        b.description
            .as_ref()
            .is_some_and(|d| d.text == lead && d.passage == first),
        format!("the description is the first passage's lead, cited as {first}"),
        format!("{:?}", b.description),
    )
}

/// Characters of the over-long sentence: over the 500 a brief quotes.
const LONG_SENTENCE_CHARS: usize = 600;

fn long_sentence_left_out(ctx: &mut Ctx) -> Result<(), Failure> {
    use memoria::brief::blocks::BLOCK_CHARS_MAX;
    let short = "The ledger snapshot is sealed every night.";
    let mut long = String::from("The ledger snapshot run");
    let mut i = 0;
    while chars(&long) < LONG_SENTENCE_CHARS - 1 {
        long.push_str(&format!(", then shard {i:03} of the ledger is copied"));
        i += 1;
    }
    long.push('.');
    ensure(
        chars(&long) > BLOCK_CHARS_MAX && !long[..long.len() - 1].contains('.'),
        format!("one sentence over {BLOCK_CHARS_MAX} characters"),
        chars(&long).to_string(),
    )?;
    let long_body = format!("# Shards\n\n{long}\n");
    let short_body = format!("# Nightly\n\n{short}\n");
    let docs = [
        doc("Nightly", "repo/nightly.md", &short_body),
        doc("Shards", "repo/shards.md", &long_body),
    ];
    let m = instance_with(ctx, &docs)?;
    let b = brief(
        &m,
        &scopes(),
        &request("ledger snapshot sealed", "repo", BUDGET_CHARS_MAX),
    )?;
    let q = quoted(&b);
    ensure(
        b.status == Status::Resolved && q.contains(short),
        "the short sentence is quoted (presence)",
        format!("{:?}: {q:?}", b.status),
    )?;
    let head: String = long.chars().take(40).collect();
    ensure(
        !q.contains(&head) && !b.to_text().contains("shard 000"),
        "the long sentence is in no brief, whole or cut",
        q,
    )
}

/// Whether a refusal is the one a bad request must get.
type RefusalIs = fn(&BriefError) -> bool;

fn refusals(ctx: &mut Ctx) -> Result<(), Failure> {
    let m = runbook_instance(ctx)?;
    let s = scopes();
    let good = brief(&m, &s, &request("Runbook", "repo", 2000))?;
    ensure(
        good.status == Status::Resolved,
        "a good request is briefed (presence)",
        format!("{:?}", good.status),
    )?;
    let long = "ledger ".repeat(200);
    let bad: [(&str, BriefRequest, RefusalIs); 7] = [
        ("an empty task", request("", "repo", 2000), |e| {
            matches!(e, BriefError::EmptyTask)
        }),
        (
            "a task of punctuation",
            request(" ?! ", "repo", 2000),
            |e| matches!(e, BriefError::EmptyTask),
        ),
        (
            "a task over the query limit",
            request(&long, "repo", 2000),
            |e| {
                matches!(
                    e,
                    BriefError::TooLong { .. } | BriefError::TooManyWords { .. }
                )
            },
        ),
        ("a budget of 0", request("Runbook", "repo", 0), |e| {
            matches!(e, BriefError::Budget { chars: 0 })
        }),
        (
            "a budget over the maximum",
            request("Runbook", "repo", BUDGET_CHARS_MAX + 1),
            |e| matches!(e, BriefError::Budget { .. }),
        ),
        (
            "an unknown project",
            request("Runbook", "nope", 2000),
            |e| matches!(e, BriefError::UnknownScope),
        ),
        (
            "the organisation unconfigured",
            request("Runbook", "organisation", 2000),
            |e| matches!(e, BriefError::UnknownScope),
        ),
    ];
    let unconfigured = Scopes::parse("repo=repo", None).expect("scopes");
    for (what, req, want) in bad {
        let scopes = if req.scope == "organisation" {
            &unconfigured
        } else {
            &s
        };
        match ask(&m, scopes, &req) {
            Err(e) if want(&e) => {}
            Err(e) => {
                return Err(Failure::new(
                    format!("{what} is refused with its own error"),
                    e.to_string(),
                ));
            }
            Ok(b) => {
                return Err(Failure::new(
                    format!("{what} is refused"),
                    format!("a {} brief", b.status.word()),
                ));
            }
        }
    }
    Ok(())
}

fn empty_scope(ctx: &mut Ctx) -> Result<(), Failure> {
    let m = runbook_instance(ctx)?;
    let s = Scopes::parse("repo=repo,other=other", None).expect("scopes");
    let b = brief(&m, &s, &request("Runbook", "other", 2000))?;
    ensure(
        b.status == Status::None
            && b.note
                .as_deref()
                .is_some_and(|n| n.contains("hold no document")),
        "none, saying the scope holds no document yet",
        format!("{:?} {:?}", b.status, b.note),
    )
}

/// Ana's (or anyone's) brief from the team, through the one S2 path.
async fn ruled_brief(m: &Memoria, asker: &str, task: &str) -> Result<Brief, String> {
    let state = m.state();
    memoria::ruled_brief(
        state.shared_instance(),
        state.siblings().as_deref(),
        None,
        asker,
        &request(task, "team", 4000),
        &Scopes::none(),
    )
    .await
    .map(|r| r.brief)
    .map_err(|e| fail("the ruled brief is built", e.to_string()))
}

fn item_body(canary: &str, word: &str) -> String {
    let how = match word {
        "kitchen" => "is pinned by the door",
        "studio" => "is kept in the shared drive",
        "workshop" => "is read aloud each Monday",
        _ => "is posted beside the kettle",
    };
    format!("# Rota {word}\n\nThe {canary} rota for the {word} {how}.\n")
}

/// Every quoted text of a brief, description included.
fn quoted(b: &Brief) -> String {
    let mut all: Vec<&str> = texts(b);
    if let Some(d) = &b.description {
        all.push(&d.text);
    }
    all.join("\n")
}

const WORDS: [&str; 4] = ["kitchen", "studio", "workshop", "garden"];

/// A world of team-visible rotas: each sibling (its app, the prefix of its
/// item ids, the words of its rotas) holds one item per word. Returns the
/// world, the case's canary and the task that matches every rota.
fn rota_world(ctx: &mut Ctx, siblings: &[(&str, &str, &[&str])]) -> (World, String, String) {
    let canary = ctx.canary();
    let specs = siblings.iter().map(|(app, ..)| SiblingSpec::own(app));
    let world = World::new(ctx.seed(), specs.collect());
    for (app, prefix, words) in siblings {
        world.fake(app).model().with(|m| {
            for (i, w) in words.iter().enumerate() {
                m.add_item(
                    &format!("{prefix}-{i}"),
                    Rung::Team,
                    "Rota",
                    &item_body(&canary, w),
                )
                .expect("item");
            }
        });
    }
    let task = format!("{canary} rota kitchen");
    (world, canary, task)
}

/// A brief's text and its JSON, for absences that must hold in both.
fn everywhere(b: &Brief) -> String {
    format!(
        "{}{}",
        b.to_text(),
        serde_json::to_string(b).unwrap_or_default()
    )
}

/// The line a brief gives when Docs answers S2 with 503 over its two items.
const DOCS_WITHHELD: &str = "withheld: Docs did not answer; 2 results withheld.";

fn not_visible(ctx: &mut Ctx) -> Result<(), Failure> {
    let (ana, bea) = (OWNERS[0], OWNERS[1]);
    let (world, _, task) = rota_world(ctx, &[("sheets", "sh", &WORDS[..3])]);
    world
        .fake("sheets")
        .model()
        .with(|m| m.set_removed("sh-2", ana, true).expect("removed"));
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        let theirs = ruled_brief(&m, bea, &task).await?;
        let q = quoted(&theirs);
        check(
            WORDS[..3].iter().all(|w| q.contains(w)),
            "Bea's brief quotes all three rotas (presence)",
            format!("{:?}: {q:?}", theirs.status),
        )?;
        let hers = ruled_brief(&m, ana, &task).await?;
        let q = quoted(&hers);
        check(
            q.contains(WORDS[0]) && q.contains(WORDS[1]),
            "Ana's brief quotes the two rotas she may see",
            format!("{:?} {:?}: {q:?}", hers.status, hers.candidates),
        )?;
        check(
            !everywhere(&hers).contains(WORDS[2]),
            "nothing of the refused item is in Ana's brief, text or JSON",
            "it is",
        )?;
        check(
            hers.withheld.is_empty(),
            "NOT_VISIBLE is silent: no withheld line",
            format!("{:?}", hers.withheld),
        )
    })
}

fn unanswered(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let (world, _, task) = rota_world(
        ctx,
        &[("sheets", "sh", &WORDS[..2]), ("docs", "dc", &WORDS[2..])],
    );
    let docs = world.fake("docs").clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S2));
        let b = ruled_brief(&m, ana, &task).await?;
        let text = b.to_text();
        check(
            WORDS[..2].iter().any(|w| text.contains(w)),
            "the brief quotes Sheets' rotas (presence)",
            format!("{:?}", b.status),
        )?;
        check(
            !WORDS[2..].iter().any(|w| text.contains(w)),
            "nothing of Docs' items is in the brief",
            "it is",
        )?;
        check(
            text.contains(DOCS_WITHHELD),
            "the brief says Docs did not answer, with the count",
            format!("{:?}", b.withheld),
        )
    })
}

fn stale_withheld(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let (world, canary, task) = rota_world(ctx, &[("sheets", "sh", &WORDS[..3])]);
    let sheets = world.fake("sheets").clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        // STALE: Sheets moves sh-2 past the revision memoria holds; it is
        // still team-visible, so S2 admits Ana to the item at its new one.
        sheets.model().with(|mm| {
            mm.revise("sh-2", "Rota", &item_body(&canary, WORDS[3]))
                .expect("revise")
        });
        let b = ruled_brief(&m, ana, &task).await?;
        let q = quoted(&b);
        check(
            q.contains(WORDS[0]) && q.contains(WORDS[1]),
            "Ana's brief quotes the two rotas Sheets has not moved (presence)",
            format!("{:?}: {q:?}", b.status),
        )?;
        check(
            !everywhere(&b).contains(WORDS[2]),
            "nothing of the old revision is in Ana's brief, text or JSON",
            "it is",
        )?;
        check(
            b.to_text().contains(
                "withheld: Sheets has a newer version of 1 result; withheld while memoria fetches it.",
            ),
            "the brief withholds the STALE passage with the search page's sentence",
            format!("{:?}", b.withheld),
        )
    })
}

fn none_could_not_be_read(ctx: &mut Ctx) -> Result<(), Failure> {
    let ana = OWNERS[0];
    let (world, _, task) = rota_world(ctx, &[("docs", "dc", &WORDS[..2])]);
    let docs = world.fake("docs").clone();
    run_world(&world, move |mut m| async move {
        m.warmed_up().await?;
        docs.faults()
            .set_outage_for(Some(Outage::Status(503)), Some(CallKind::S2));
        let b = ruled_brief(&m, ana, &task).await?;
        let text = b.to_text();
        check(
            b.status == Status::None && text.contains(DOCS_WITHHELD),
            "none, with Docs' two matches withheld loudly (presence: they matched)",
            format!("{:?} {:?}", b.status, b.withheld),
        )?;
        check(
            b.note
                .as_deref()
                .is_some_and(|n| n.contains("could not be read") && !n.starts_with("Nothing in")),
            "the note says what matched could not be read now, not that nothing matched",
            format!("{:?}", b.note),
        )
    })
}
