//! Gate 40 (`brief-repeats.md` §2-§4): a brief carries one fact once, keeps a disagreement, measures overlap against the larger set, and lets one file speak at most twice.
//!
//! GATES.md lists the brief papers' checks without numbers; 40 is this
//! project's number for `brief-repeats.md`'s. Every case but three asks a
//! real instance for a brief through the one ruling path and asserts what
//! it carried; the first two hold the paper's worked numbers against the
//! reference's own token and overlap functions, and
//! `40/an-ies-plural-folds-to-y` holds the plural fold the same way.

use std::collections::BTreeSet;

use memoria::brief::{BlockRef, Skip, Status, carry, content_tokens, is_negated, overlap};

use crate::rigs::brief::{material, repo_brief, texts};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Gate 40.
pub static GATE: Gate = Gate {
    id: "40",
    title: "A brief without repeats",
    gates_md: &[
        "Three paraphrases of one fact are carried once; \"Run migrations by hand\" and \"Never run migrations by hand\" are both carried",
        "Overlap is shared tokens divided by the LARGER token set, threshold 0.6; a block under 3 content tokens is never skipped; a negation difference is never a repeat",
        "At most two blocks cite the same first source; six long paraphrases from one file against a 700-character brief carry at most two",
    ],
    sections: &[
        "brief-repeats.md §2",
        "brief-repeats.md §3",
        "brief-repeats.md §4",
    ],
    requirement: "Content tokens are lower-cased words of three or more characters, the fixed function words dropped, a plural folded; overlap is shared tokens over the LARGER set and a candidate at 0.6 or more against any carried block is skipped, except a block under three tokens and a negation difference; at most two blocks cite the same first source and the room left goes to other sources; a reversal with no negation word is skipped, as the paper says it is.",
    cases: &[
        Case {
            id: "40/tokens-as-the-paper-reads-them",
            desc: "The paper's example sentences reduce to its tokens: the carried stack sentence to its 11 (postgre, note: plural folded; see kept), the deploy line to its 5 (through kept), the pgvector pair to 5 and 6 sharing 2 (0.333), the migration pair to 4 and 5 sharing 3 (0.600).",
            run: tokens_as_the_paper,
        },
        Case {
            id: "40/sourceless-blocks-are-not-capped",
            desc: "\"Blocks with no source are not capped\": six distinct sourceless blocks are all carried, while six distinct blocks of one first source carry two.",
            run: sourceless_not_capped,
        },
        Case {
            id: "40/the-precise-line-survives-the-vague-one",
            desc: "The stack sentence is carried first; the deploy line overlaps it 4 ÷ 11 = 0.364 (4 ÷ 5 = 0.800 would have lost it) and is carried too.",
            run: precise_line_survives,
        },
        Case {
            id: "40/three-paraphrases-carried-once",
            desc: "Three paraphrases of the store's technology, from three files, are carried once; a distinct fact beside them is carried.",
            run: three_paraphrases_once,
        },
        Case {
            id: "40/a-rule-and-its-negation-both-carried",
            desc: "\"Run migrations by hand\" and \"Never run migrations by hand\" overlap 0.75 and are both carried: a negation difference is never a repeat.",
            run: polarity_pair,
        },
        Case {
            id: "40/a-contraction-in-nt-marks-a-negation",
            desc: "\"We run migrations by hand.\" and \"We don't run migrations by hand.\" overlap 0.75 and are both carried: don't is one word, a contraction ending in n't, and marks the negation (split at its apostrophe, don and t would not).",
            run: contraction_pair,
        },
        Case {
            id: "40/a-rule-after-its-negation-is-carried",
            desc: "The polarity pair the other way round: \"Never run migrations by hand.\" is the resolved document's description, carried first; \"Run migrations by hand.\" after it is carried too, the negation difference read from both blocks, not from the candidate alone.",
            run: rule_after_negation,
        },
        Case {
            id: "40/a-short-block-is-never-skipped",
            desc: "Two files each say \"Databases, always.\" (two content tokens): both are carried, the ratio means nothing under three tokens.",
            run: short_block,
        },
        Case {
            id: "40/one-file-speaks-at-most-twice",
            desc: "Six long paraphrases of one process from one file, longer together than a 700-character brief: at most two are carried, and the room left goes to other files and to the organisation's own fact.",
            run: one_file_twice,
        },
        Case {
            id: "40/two-files-of-one-title-are-two-sources",
            desc: "Two files both titled README, in two folders, each with two distinct ledger sentences: all four are carried, two per file, since the cap counts a file (its document), never a title.",
            run: two_files_one_title,
        },
        Case {
            id: "40/an-ies-plural-folds-to-y",
            desc: "\"Agent memories and policies\" reduces to agent, memory, policy: a plural in -ies folds to its -y singular, so it meets the singular it repeats.",
            run: ies_plural,
        },
        Case {
            id: "40/an-unmarked-reversal-is-skipped-today",
            desc: "The paper's stated limitation, as today's behaviour: \"Stop running migrations on API boot.\" overlaps \"Run migrations on API boot.\" at 0.600 with no negation word, and is skipped as a repeat.",
            run: unmarked_reversal,
        },
    ],
};

/// The paper's carried stack sentence.
const STACK: &str = "The stack is Postgres, Redis and the API, started with docker compose; see the deploy notes for the box.";

/// Requires `sentence` to reduce to the content tokens `want`, in order.
fn tokens_are(sentence: &str, want: &[&str]) -> Result<(), Failure> {
    let got: Vec<String> = content_tokens(sentence).into_iter().collect();
    ensure(got == want, format!("{want:?}"), format!("{got:?}"))
}

/// One pair of sentences the paper measures: how many content tokens each
/// has and the overlap between them. `what` names the row in a failure.
struct PairRow {
    what: &'static str,
    a: &'static str,
    b: &'static str,
    tokens: (usize, usize),
    overlap: f64,
}

/// The paper's worked pairs (§3).
const PAPER_PAIRS: &[PairRow] = &[
    PairRow {
        what: "the stack pair: 11 and 5 tokens, overlap 4 / 11 = 0.364",
        a: STACK,
        b: "Deploys go through docker compose on the box",
        tokens: (11, 5),
        overlap: 4.0 / 11.0,
    },
    PairRow {
        what: "the pgvector pair: 5 and 6 tokens, overlap 0.333",
        a: "The memory store is Postgres with the pgvector extension",
        b: "Embeddings live in a Postgres table indexed by pgvector",
        tokens: (5, 6),
        overlap: 2.0 / 6.0,
    },
    PairRow {
        what: "the migration pair: 4 and 5 tokens, overlap 0.600",
        a: "Run migrations on API boot.",
        b: "Stop running migrations on API boot.",
        tokens: (4, 5),
        overlap: 0.6,
    },
];

/// Requires `row`'s sentences to have its token counts and its overlap.
fn pair_row(row: &PairRow) -> Result<(), Failure> {
    let (a, b) = (content_tokens(row.a), content_tokens(row.b));
    ensure(
        (a.len(), b.len()) == row.tokens && (overlap(&a, &b) - row.overlap).abs() < 1e-9,
        row.what,
        format!("{} and {}, {:.3}", a.len(), b.len(), overlap(&a, &b)),
    )
}

fn tokens_as_the_paper(_ctx: &mut Ctx) -> Result<(), Failure> {
    tokens_are(
        STACK,
        &[
            "api", "box", "compose", "deploy", "docker", "note", "postgre", "redis", "see",
            "stack", "started",
        ],
    )?;
    tokens_are(
        "Deploys go through docker compose on the box",
        &["box", "compose", "deploy", "docker", "through"],
    )?;
    for row in PAPER_PAIRS {
        pair_row(row)?;
    }
    ensure(
        is_negated("Never run migrations by hand") && !is_negated("Run migrations by hand"),
        "never marks a negation; its absence does not",
        "it does not",
    )
}

fn sourceless_not_capped(_ctx: &mut Ctx) -> Result<(), Failure> {
    let texts = [
        "alpha beta gamma",
        "delta epsilon zeta",
        "kappa lambda sigma",
        "omicron upsilon omega",
        "theta rho phi",
        "chi psi iota",
    ];
    let blocks = |first_source: Option<&'static str>| -> Vec<BlockRef<'static>> {
        texts
            .iter()
            .map(|&text| BlockRef { text, first_source })
            .collect()
    };
    let one_file = blocks(Some("file"));
    let carried = carry(&one_file).iter().filter(|d| d.is_none()).count();
    ensure(
        carried == 2,
        "one first source carries two (presence of the cap)",
        carried.to_string(),
    )?;
    ensure(
        carry(&one_file)[2] == Some(Skip::SourceCap),
        "the third is skipped for its source",
        format!("{:?}", carry(&one_file)[2]),
    )?;
    let sourceless = blocks(None);
    let carried = carry(&sourceless).iter().filter(|d| d.is_none()).count();
    ensure(
        carried == 6,
        "all six sourceless blocks are carried",
        carried.to_string(),
    )
}

fn precise_line_survives(ctx: &mut Ctx) -> Result<(), Failure> {
    let deploy = "Deploys go through docker compose on the box.";
    let b = repo_brief(
        ctx,
        &[
            ("Platform", "repo/platform.md", &[STACK]),
            ("Operations", "repo/ops.md", &[deploy]),
        ],
        "stack postgres redis docker compose box",
        2000,
    )?;
    let t = texts(&b);
    ensure(
        t.first() == Some(&STACK),
        "the stack sentence is carried first",
        format!("{:?}: {t:?}", b.status),
    )?;
    ensure(
        t.contains(&deploy),
        "the deploy line is carried beside it (4 ÷ 11 = 0.364 < 0.6)",
        format!("{t:?}"),
    )
}

fn three_paraphrases_once(ctx: &mut Ctx) -> Result<(), Failure> {
    let p = [
        "Our memory store is Postgres with Redis in front.",
        "The memory store: Postgres, with Redis in front of it.",
        "Memory store is Postgres, and Redis sits in front.",
    ];
    let distinct = "Memory store backups run nightly to the bucket.";
    let b = repo_brief(
        ctx,
        &[
            ("Memory store", "repo/store.md", &[p[0], distinct]),
            ("Notes A", "repo/a.md", &[p[1]]),
            ("Notes B", "repo/b.md", &[p[2]]),
        ],
        "Memory store",
        2000,
    )?;
    let material = material(&b);
    let carried = p.iter().filter(|s| material.contains(s)).count();
    ensure(
        material.contains(&distinct),
        "the distinct fact is carried (presence)",
        format!("{:?}: {material:?}", b.status),
    )?;
    ensure(
        carried == 1,
        "one of the three paraphrases is carried",
        format!("{carried}: {material:?}"),
    )
}

/// The brief for "Migrations" from two files: Migrations saying
/// `migrations`, and Runbook saying `runbook`.
fn migrations_brief(
    ctx: &mut Ctx,
    migrations: &str,
    runbook: &str,
) -> Result<memoria::brief::Brief, Failure> {
    repo_brief(
        ctx,
        &[
            ("Migrations", "repo/migrations.md", &[migrations]),
            ("Runbook", "repo/runbook.md", &[runbook]),
        ],
        "Migrations",
        2000,
    )
}

/// Requires the brief for "Migrations" to carry both `rule` (in
/// Migrations) and `negation` (in Runbook); `what` names the pair.
fn both_carried(ctx: &mut Ctx, rule: &str, negation: &str, what: &str) -> Result<(), Failure> {
    let b = migrations_brief(ctx, rule, negation)?;
    let material = material(&b);
    ensure(
        material.contains(&rule) && material.contains(&negation),
        format!("both the rule and its {what} are carried"),
        format!("{:?}: {material:?}", b.status),
    )
}

fn polarity_pair(ctx: &mut Ctx) -> Result<(), Failure> {
    both_carried(
        ctx,
        "Run migrations by hand.",
        "Never run migrations by hand.",
        "negation",
    )
}

fn contraction_pair(ctx: &mut Ctx) -> Result<(), Failure> {
    let (rule, dont) = (
        "We run migrations by hand.",
        "We don't run migrations by hand.",
    );
    pair_row(&PairRow {
        what: "the pair: 3 and 4 tokens, overlap 3 / 4 = 0.75",
        a: rule,
        b: dont,
        tokens: (3, 4),
        overlap: 0.75,
    })?;
    ensure(
        is_negated(dont) && !is_negated(rule),
        "only the contraction is negated",
        format!("negated {} and {}", is_negated(rule), is_negated(dont)),
    )?;
    both_carried(ctx, rule, dont, "contracted negation")
}

fn rule_after_negation(ctx: &mut Ctx) -> Result<(), Failure> {
    let (never, rule) = ("Never run migrations by hand.", "Run migrations by hand.");
    let b = migrations_brief(ctx, never, rule)?;
    ensure(
        b.description.as_ref().is_some_and(|d| d.text == never),
        "the negation is the resolved document's description, the brief's first block (presence)",
        format!("{:?}: {:?}", b.status, b.description),
    )?;
    let t = texts(&b);
    ensure(
        t.contains(&rule),
        "the rule after it is carried: a negation difference is never a repeat, whichever side is carried",
        format!("{t:?}"),
    )
}

fn short_block(ctx: &mut Ctx) -> Result<(), Failure> {
    let short = "Databases, always.";
    let b = repo_brief(
        ctx,
        &[
            (
                "Databases",
                "repo/db.md",
                &["Databases: Postgres for everything we store.", short],
            ),
            ("Choices", "repo/choices.md", &[short]),
        ],
        "Databases",
        2000,
    )?;
    let n = b.excerpts.iter().filter(|e| e.text == short).count();
    ensure(
        n == 2,
        "both two-token blocks are carried",
        format!("{n}: {:?}: {:?}", b.status, texts(&b)),
    )
}

/// Six long paraphrases of one process, each under 0.6 against the others.
const SIX: [&str; 6] = [
    "Releases start when the coordinator tags the main branch, after the nightly suite has passed twice in a row on the staging cluster.",
    "A release begins once someone tags main; the staging cluster must have run the nightly suite cleanly on two consecutive evenings first.",
    "We cut a release by tagging the main branch, but only after two green nightly runs on staging, one after the other.",
    "Tagging main is how a release starts, and the prerequisite is a pair of consecutive nightly passes on the staging machines.",
    "Before the tag goes on main for a release, staging has to show the nightly tests passing two nights running.",
    "The release process opens with a tag on main, gated on consecutive successful nightly suites in the staging environment.",
];

fn one_file_twice(ctx: &mut Ctx) -> Result<(), Failure> {
    let other = "The release checklist lives beside the changelog and names who signs off.";
    let org = "Every release in the organisation is announced in the weekly notes with its tag.";
    let chars: usize = SIX.iter().map(|s| s.chars().count()).sum();
    ensure(
        chars > 700,
        "the six are longer together than the brief",
        chars.to_string(),
    )?;
    let b = repo_brief(
        ctx,
        &[
            ("Release process", "repo/release.md", &SIX),
            ("Checklist", "repo/checklist.md", &[other]),
            ("Announcements", "org/announcements.md", &[org]),
        ],
        "release tag main nightly staging",
        700,
    )?;
    let from_file = b
        .excerpts
        .iter()
        .filter(|e| e.title == "Release process")
        .count()
        + usize::from(b.description.is_some());
    ensure(
        from_file >= 1,
        "the file speaks (presence)",
        format!("{:?}: {:?}", b.status, texts(&b)),
    )?;
    ensure(
        from_file <= 2,
        "at most two blocks cite the release file",
        format!("{from_file}: {:?}", texts(&b)),
    )?;
    let t = texts(&b);
    ensure(
        t.contains(&other) && t.contains(&org),
        "the room left goes to the other file and to the organisation's fact",
        format!("{t:?}"),
    )?;
    ensure(
        b.material_chars <= 700,
        "the material fits the 700-character budget",
        b.material_chars.to_string(),
    )
}

fn two_files_one_title(ctx: &mut Ctx) -> Result<(), Failure> {
    let a = [
        "The ledger reconciliation runs nightly on the primary.",
        "Ledger audit exports land in the cold bucket.",
    ];
    let b = [
        "Ledger snapshots are kept for ninety days.",
        "The ledger schema changes only after a review.",
    ];
    let brief = repo_brief(
        ctx,
        &[
            ("README", "repo/billing/README.md", &a),
            ("README", "repo/archive/README.md", &b),
        ],
        "ledger reconciliation nightly audit",
        2000,
    )?;
    ensure(
        brief.status == Status::Resolved
            && brief.item.as_ref().is_some_and(|i| i.title == "README"),
        "resolved on a file titled README (presence)",
        format!("{:?}: {:?}", brief.status, brief.item),
    )?;
    let t = texts(&brief);
    let carried = a.iter().chain(&b).filter(|s| t.contains(s)).count();
    let files: BTreeSet<&str> = brief
        .excerpts
        .iter()
        .map(|e| e.document_id.as_str())
        .collect();
    ensure(
        carried == 4 && files.len() == 2,
        "all four sentences are carried, two from each file",
        format!("{carried} from {} files: {t:?}", files.len()),
    )
}

fn ies_plural(_ctx: &mut Ctx) -> Result<(), Failure> {
    tokens_are(
        "Agent memories and policies",
        &["agent", "memory", "policy"],
    )?;
    let (plural, singular) = (
        content_tokens("Agent memories and policies"),
        content_tokens("The agent memory policy"),
    );
    ensure(
        overlap(&plural, &singular) == 1.0,
        "the plurals meet their singulars: overlap 1.0",
        format!("{:.3}", overlap(&plural, &singular)),
    )
}

fn unmarked_reversal(ctx: &mut Ctx) -> Result<(), Failure> {
    let (run, stop) = (
        "Run migrations on API boot.",
        "Stop running migrations on API boot.",
    );
    let b = repo_brief(
        ctx,
        &[
            (
                "Boot",
                "repo/boot.md",
                &["What happens at boot of the API.", run],
            ),
            ("Decision", "repo/decision.md", &[stop]),
        ],
        "boot API migrations run",
        2000,
    )?;
    let t = texts(&b);
    ensure(
        t.contains(&run),
        "the rule is carried (presence)",
        format!("{:?}: {t:?}", b.status),
    )?;
    ensure(
        !t.contains(&stop),
        "the unmarked reversal is skipped as a repeat, as the paper says",
        format!("{t:?}"),
    )
}
