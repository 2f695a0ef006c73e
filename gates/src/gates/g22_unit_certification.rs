//! Gate 22 (§10, §8.7): unit certification, and memoria is what certifies: seven cases, and the first assertion in each is whether S6 was called.
//!
//! End to end in the simulator against the fake Sheets (cells, format codes,
//! S6 traced): memoria ingests the sheets through S1/S3, a reader asks a
//! numeric question on the search page, and the fake's trace says whether
//! memoria called `POST /s6/aggregate`. §8.7's ruling is that MIXED_UNITS
//! and UNIT_UNKNOWN are memoria's verdicts, reached before the call, so
//! "S6 was never called" is asserted first, and only after it what the
//! page says. The number, when there is one, is S6's display string byte
//! for byte (the fake renders it in the cells' own format), with the unit
//! named beside it and attributed, never folded in.

use memoria_simulator::{
    CallKind, Memoria, Model, OWNERS, Revise, Rung, Sheet, SiblingSpec, Tab, Trace, World,
};

use crate::rigs::page::Page;
use crate::rigs::sim::{check, run_world};
use crate::{Case, Ctx, Failure, Gate};

/// Gate 22.
pub static GATE: Gate = Gate {
    id: "22",
    title: "Unit certification",
    gates_md: &["Unit certification (five cases; S6 called or not called is the first assertion)"],
    sections: &["§10", "§8.7"],
    requirement: "memoria certifies every operand's unit by §8.7's fixed table before any S6 call: €#,##0 × 3 is computed and shown as S6's display; €#,##0 against k€#,##0 is MIXED_UNITS and General under a wordless header UNIT_UNKNOWN, neither calling S6; a General cell under a €k header is computed with the unit named from the header; a format code S6 returns unlike the one indexed shows no number and marks the sheet for re-ingest; and the table's other rows: 0.0% is %, a scaling comma thousands, and a format code against a header word that disagrees certifies to nothing; a slot two cells match, or none, gives the slot table with citations, no number and no S6 call.",
    cases: &[
        Case {
            id: "22/three-euro-cells-aggregate",
            desc: "§8.7's worked example (FY2024..FY2026, Revenue in €#,##0): \"what's average revenue in June the last 3 years\" calls S6 once with AVERAGE over the three June cells, and the page shows S6's display €1,350,000 byte for byte, its unit €, the basis (2024, 2025, 2026) and a citation per operand.",
            run: three_euro_cells,
        },
        Case {
            id: "22/euro-against-k-euro-is-mixed-units",
            desc: "FY2025's June revenue reformatted k€#,##0 before ingest: S6 is never called; the page shows MIXED_UNITS, no number, and names both format codes.",
            run: mixed_units,
        },
        Case {
            id: "22/general-under-a-wordless-header-is-unit-unknown",
            desc: "Headcount is General under \"Jun 2024\"-style headers: \"average headcount in June the last 3 years\" never calls S6; the page shows UNIT_UNKNOWN, no number, and names the three cells: the case draft 3 would have averaged.",
            run: unit_unknown,
        },
        Case {
            id: "22/general-under-a-k-euro-header-aggregates",
            desc: "Three General cells under headers \"Jun 2024 €k\" … \"Jun 2026 €k\": S6 is called, the page shows its display 1350 unchanged, with €k named beside it and attributed to the column header, not folded into the figure.",
            run: header_unit,
        },
        Case {
            id: "22/a-reformat-since-ingest-shows-no-number-and-re-ingests",
            desc: "FY2024's June column reformatted k€#,##0 in place (no new revision) after ingest: S6 is called and returns k€#,##0 against the €#,##0 indexed; the page shows no number and says the cells were reformatted, and the sheet is refetched through the re-announce.",
            run: reformatted,
        },
        Case {
            id: "22/the-rest-of-the-fixed-table",
            desc: "§8.7's table beyond the worked example, one row each: Margin in 0.0% is computed with % named from its format code; three cells in €#,##0, (a scaling comma) under wordless headers with €k named from the format code; three cells in €#,##0 under \"Jun 2024 €k\" headers are UNIT_UNKNOWN, S6 never called, the notice naming both.",
            run: rest_of_the_table,
        },
        Case {
            id: "22/a-gap-or-an-ambiguity-gives-the-slot-table",
            desc: "§8.7: \"Any gap, ambiguity … gives the slot table with citations and no number\", one row each: a second sheet also holding June 2025 revenue makes that slot match two cells, both shown and cited, never collapsed to one; a sheet holding only June 2025 and 2026 leaves June 2024 a named gap. Each time S6 is never called, the page shows SLOT_TABLE, says which slot and why, cites every operand found, and shows no number.",
            run: gaps_and_ambiguities,
        },
    ],
};

const JUNE_REVENUE: &str = "what's average revenue in June the last 3 years";

/// How many S6 calls the trace holds.
fn s6_calls(trace: &Trace) -> usize {
    trace
        .events()
        .into_iter()
        .filter(|e| e.call == CallKind::S6)
        .count()
}

/// A world whose Sheets `fill` stocks before memoria first pulls.
fn sheets_world(ctx: &Ctx, fill: impl FnOnce(&mut Model)) -> World {
    let world = World::new(ctx.seed(), vec![SiblingSpec::own("sheets")]);
    world.fake("sheets").model().with(fill);
    world
}

/// A world holding §8.7's worked example in Sheets, with `change` made to
/// the model before memoria first pulls.
fn worked_world(ctx: &Ctx, change: impl FnOnce(&mut Model)) -> World {
    sheets_world(ctx, |m| {
        m.add_worked_example().expect("the worked example");
        change(m);
    })
}

/// Adds the sheet `sh-june` ("June summary") to `m`: one tab, Summary,
/// whose Revenue row holds `values` under the column headers `headers`,
/// every cell in `format` (General when `None`).
fn june_summary(m: &mut Model, headers: &[&str], values: &[&str], format: Option<&str>) {
    let header: Vec<&str> = std::iter::once("").chain(headers.iter().copied()).collect();
    let tab = Tab::table("Summary", &header, &[("Revenue", values)], format);
    m.add_sheet("sh-june", Rung::Team, Sheet::new("June summary", vec![tab]))
        .expect("sheet");
}

/// Runs `scenario` in `world` once memoria has warmed up, handing it the
/// world's trace.
fn warmed<F, Fut>(world: &World, scenario: F) -> Result<(), Failure>
where
    F: FnOnce(Memoria, Trace) -> Fut + 'static,
    Fut: Future<Output = Result<(), String>> + 'static,
{
    let w = world.trace().clone();
    run_world(world, move |mut m| async move {
        m.warmed_up().await?;
        scenario(m, w).await
    })
}

fn numeric(page: &Page) -> (Option<String>, String) {
    (
        page.tags("section.numeric").first().and_then(|t| {
            t.attrs
                .iter()
                .find(|(k, _)| k == "data-outcome")
                .map(|(_, v)| v.clone())
        }),
        page.section("section.numeric").unwrap_or_default(),
    )
}

/// Ana asks `question`; S6 must have been called `s6` times (checked first,
/// so no outcome is read from a path that did not run) and the numeric
/// answer's outcome (`data-outcome`) must be `outcome`. The page, and the
/// answer's text. `what` names the row in a failure.
async fn asked(
    m: &mut Memoria,
    w: &Trace,
    question: &str,
    what: &str,
    s6: usize,
    outcome: &str,
) -> Result<(Page, String), String> {
    let page = Page::parse(&m.search(OWNERS[0], question).await.response.body);
    check(
        s6_calls(w) == s6,
        format!("{what}: S6 called {s6} times"),
        format!("{} calls; {}", s6_calls(w), numeric(&page).1),
    )?;
    let (seen, text) = numeric(&page);
    check(
        seen.as_deref() == Some(outcome),
        format!("{what}: {outcome}"),
        format!("{seen:?}: {text}"),
    )?;
    Ok((page, text))
}

/// Requires the numeric answer `text` of `page` to show no figure and to
/// say `says` (how it tells the reader so). `what` names the row.
fn no_number(page: &Page, text: &str, what: &str, says: &str) -> Result<(), String> {
    check(
        page.texts(".numeric-figure").is_empty() && text.contains(says),
        format!("{what}: no number"),
        text,
    )
}

/// Requires the figure shown to be `figure`, byte for byte. `what` names
/// the row.
fn figure_is(page: &Page, what: &str, figure: &str) -> Result<(), String> {
    check(
        page.texts(".numeric-figure") == [figure],
        format!("{what}: the figure is S6's display {figure}, unchanged"),
        format!("{:?}", page.texts(".numeric-figure")),
    )
}

/// Requires the numeric answer `text` to hold each of `says` (`what`
/// names the row; each entry's own words say why).
fn says_each(text: &str, what: &str, says: &[(&str, &str)]) -> Result<(), String> {
    for (words, why) in says {
        check(
            text.contains(words),
            format!("{what}: {why}: says {words}"),
            text,
        )?;
    }
    Ok(())
}

fn three_euro_cells(ctx: &mut Ctx) -> Result<(), Failure> {
    warmed(&worked_world(ctx, |_| {}), |mut m, w| async move {
        let what = "three € cells";
        let (page, text) = asked(&mut m, &w, JUNE_REVENUE, what, 1, "VALUE").await?;
        figure_is(&page, what, "€1,350,000")?;
        says_each(
            &text,
            what,
            &[
                (
                    "(€, from the format code €#,##0)",
                    "the unit named beside the figure, attributed to the format code",
                ),
                (
                    "2024, 2025, 2026",
                    "the basis names which years \"the last 3 years\" meant",
                ),
            ],
        )?;
        check(
            page.hrefs("a.numeric-cite").len() == 3,
            "every operand cited",
            format!("{:?}", page.hrefs("a.numeric-cite")),
        )
    })
}

fn mixed_units(ctx: &mut Ctx) -> Result<(), Failure> {
    let world = worked_world(ctx, |m| {
        m.reformat_cell("sh-fy2025", "P&L", (2, 7), Some("k€#,##0"), Revise::New)
            .expect("reformat");
    });
    warmed(&world, |mut m, w| async move {
        let what = "€ against k€";
        let (page, text) = asked(&mut m, &w, JUNE_REVENUE, what, 0, "MIXED_UNITS").await?;
        no_number(&page, &text, what, "no number")?;
        says_each(
            &text,
            what,
            &[
                ("format code €#,##0", "the notice names both format codes"),
                ("format code k€#,##0", "the notice names both format codes"),
            ],
        )
    })
}

fn unit_unknown(ctx: &mut Ctx) -> Result<(), Failure> {
    warmed(&worked_world(ctx, |_| {}), |mut m, w| async move {
        let what = "General under wordless headers";
        let question = "average headcount in June the last 3 years";
        let (page, text) = asked(&mut m, &w, question, what, 0, "UNIT_UNKNOWN").await?;
        no_number(&page, &text, what, "no number")?;
        check(
            text.matches("P&L!G5").count() >= 3,
            "the notice names the three cells (P&L!G5 of each year's sheet)",
            &text,
        )
    })
}

fn header_unit(ctx: &mut Ctx) -> Result<(), Failure> {
    let world = sheets_world(ctx, |m| {
        june_summary(
            m,
            &["Jun 2024 €k", "Jun 2025 €k", "Jun 2026 €k"],
            &["1300", "1350", "1400"],
            None,
        );
    });
    warmed(&world, |mut m, w| async move {
        let what = "General under €k headers";
        let (page, text) = asked(&mut m, &w, JUNE_REVENUE, what, 1, "VALUE").await?;
        figure_is(&page, what, "1350")?;
        says_each(
            &text,
            what,
            &[(
                "(€k, from the column header \"Jun 2024 €k\"",
                "€k named beside the figure and attributed to the column header",
            )],
        )
    })
}

fn reformatted(ctx: &mut Ctx) -> Result<(), Failure> {
    let world = worked_world(ctx, |_| {});
    let sheets = world.fake("sheets").clone();
    warmed(&world, move |mut m, w| async move {
        sheets
            .model()
            .with(|m| m.reformat_column("sh-fy2024", "P&L", 7, Some("k€#,##0"), Revise::InPlace))
            .expect("reformat in place");
        let what = "reformatted in place since ingest";
        let (page, text) = asked(&mut m, &w, JUNE_REVENUE, what, 1, "REFORMATTED").await?;
        no_number(&page, &text, what, "no number")?;
        w.clear();
        m.settle_follow_ups().await;
        let refetched = w
            .events()
            .into_iter()
            .filter(|e| e.call == CallKind::S3)
            .count();
        check(
            refetched >= 1,
            "the sheet is re-ingested: the follow-up refetches it through S3",
            format!("{refetched} S3 fetches"),
        )?;
        let after = Page::parse(&m.search(OWNERS[0], JUNE_REVENUE).await.response.body);
        let (outcome, text) = numeric(&after);
        check(
            outcome.as_deref() == Some("MIXED_UNITS"),
            "after the re-ingest, the new format is what is certified: k€ against €, MIXED_UNITS",
            format!("{outcome:?}: {text}"),
        )
    })
}

/// One row of §8.7's table: a sheet of three June cells in `format` under
/// `headers`, asked the June revenue question, and what the page says.
struct TableRow {
    what: &'static str,
    format: &'static str,
    headers: [&'static str; 3],
    question: &'static str,
    s6: usize,
    outcome: &'static str,
    says: &'static [&'static str],
}

const TABLE_ROWS: &[TableRow] = &[
    TableRow {
        what: "a percent format code is %",
        format: "",
        headers: ["", "", ""],
        question: "what's average margin in June the last 3 years",
        s6: 1,
        outcome: "VALUE",
        says: &["(%, from the format code 0.0%)"],
    },
    TableRow {
        what: "a scaling comma is thousands",
        format: "€#,##0,",
        headers: ["Jun 2024", "Jun 2025", "Jun 2026"],
        question: JUNE_REVENUE,
        s6: 1,
        outcome: "VALUE",
        says: &["(€k, from the format code €#,##0,)"],
    },
    TableRow {
        what: "a format code and a header word that disagree certify to nothing",
        format: "€#,##0",
        headers: ["Jun 2024 €k", "Jun 2025 €k", "Jun 2026 €k"],
        question: JUNE_REVENUE,
        s6: 0,
        outcome: "UNIT_UNKNOWN",
        says: &["no number", "says € and its header says €k"],
    },
];

fn rest_of_the_table(ctx: &mut Ctx) -> Result<(), Failure> {
    for row in TABLE_ROWS {
        one_table_row(ctx, row)?;
    }
    Ok(())
}

fn one_table_row(ctx: &mut Ctx, row: &'static TableRow) -> Result<(), Failure> {
    let world = if row.format.is_empty() {
        worked_world(ctx, |_| {})
    } else {
        sheets_world(ctx, |m| {
            june_summary(
                m,
                &row.headers,
                &["1300000", "1350000", "1400000"],
                Some(row.format),
            );
        })
    };
    warmed(&world, move |mut m, w| async move {
        let (_, text) = asked(&mut m, &w, row.question, row.what, row.s6, row.outcome).await?;
        for says in row.says {
            check(
                text.contains(says),
                format!("{}: says {says}", row.what),
                &text,
            )?;
        }
        Ok(())
    })
}

/// One row of the slot-table case: a world's sheets, and what the page
/// must say of the June revenue question.
struct SlotRow {
    what: &'static str,
    sheets: fn(&mut Model),
    /// The state the slot table gives the odd slot (`data-state`), and how
    /// many rows it has there.
    state: &'static str,
    rows: usize,
    /// What the headline says of it.
    says: &'static str,
    /// Operands cited in all.
    cited: usize,
}

/// June 2025's revenue once more, in a sheet of its own (beside July's:
/// a header band is two columns at least).
fn second_june_2025(m: &mut Model) {
    m.add_worked_example().expect("the worked example");
    june_summary(
        m,
        &["Jun 2025", "Jul 2025"],
        &["1350000", "1380000"],
        Some("€#,##0"),
    );
}

/// June revenue for 2025 and 2026 only.
fn no_june_2024(m: &mut Model) {
    june_summary(
        m,
        &["Jun 2025", "Jun 2026"],
        &["1350000", "1400000"],
        Some("€#,##0"),
    );
}

const SLOT_ROWS: &[SlotRow] = &[
    SlotRow {
        what: "two cells match June 2025",
        sheets: second_june_2025,
        state: "Ambiguous",
        rows: 2,
        says: "more than one cell matched: revenue, Jun 2025",
        cited: 4,
    },
    SlotRow {
        what: "no cell matches June 2024",
        sheets: no_june_2024,
        state: "Gap",
        rows: 1,
        says: "nothing matched: revenue, Jun 2024",
        cited: 2,
    },
];

fn gaps_and_ambiguities(ctx: &mut Ctx) -> Result<(), Failure> {
    for row in SLOT_ROWS {
        one_slot_row(ctx, row)?;
    }
    Ok(())
}

fn one_slot_row(ctx: &mut Ctx, row: &'static SlotRow) -> Result<(), Failure> {
    warmed(&sheets_world(ctx, row.sheets), move |mut m, w| async move {
        // The slot table is the numeric answer's presence, for the
        // absence of a number below.
        let (page, text) = asked(&mut m, &w, JUNE_REVENUE, row.what, 0, "SLOT_TABLE").await?;
        no_number(&page, &text, row.what, "No number is shown.")?;
        check(
            text.contains(row.says),
            format!("{}: the headline says {}", row.what, row.says),
            &text,
        )?;
        let odd = page.tags(&format!("table.numeric-slots tr[data-state={}]", row.state));
        check(
            odd.len() == row.rows,
            format!(
                "{}: the table has {} {} row(s)",
                row.what, row.rows, row.state
            ),
            format!("{}", odd.len()),
        )?;
        check(
            page.hrefs("a.numeric-cite").len() == row.cited,
            format!("{}: every operand found is cited ({})", row.what, row.cited),
            format!("{:?}", page.hrefs("a.numeric-cite")),
        )
    })
}
