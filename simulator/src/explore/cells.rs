//! The explorer's cells (issue 27): a world's Sheets may hold §8.7's worked example, its swarm may reformat a column in place or with a new revision, and numeric questions join the workload; the oracle judges every number a person is shown.
//!
//! Drawn from a generator of its own (the seed under another constant), and
//! only after the rest of the run, so a seed whose world gets no cells is
//! the run it was before cells existed. The events are slipped between the
//! run's own at random places, each at the instant of the one before it.
//!
//! The draw (issue 27): half the worlds that have Sheets give it §8.7's
//! worked example, with 4 to 10 numeric questions (average, total, highest,
//! lowest or how many of revenue, costs, margin or headcount in a month of
//! the last 1 to 3 years) by anybody, up to two revisions of a sheet,
//! sometimes a downgrade, and, when the swarm draws `reformat`, 3 per unit
//! of its weight of month columns reformatted (§8.7's format codes and
//! General), in place or with a new revision.
//! `explore-cells-number-is-s6s-display.toml` writes the judgement down
//! (the oracle's `[safety:number]`), with a mutation only the oracle kills.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{Event, SiblingDecl};

/// The worked example's sheets (`crate::fake::sheet::worked_example`).
pub const SHEETS: [&str; 3] = ["sh-fy2024", "sh-fy2025", "sh-fy2026"];
/// Their one tab.
const TAB: &str = "P&L";
/// Their month columns: 2 (January) to 13 (December).
const MONTH_COLS: std::ops::RangeInclusive<u32> = 2..=13;
/// Format codes a reformat draws from (§8.7's table, and General).
const FORMATS: [&str; 6] = ["k€#,##0", "€#,##0", "#,##0", "€#,##0,", "0.0%", "General"];
/// The aggregate words a question draws from (`numeric::question`).
const FUNCTIONS: [&str; 5] = ["average", "total", "highest", "lowest", "how many"];
/// The worked example's row labels, as a question names them.
const MEASURES: [&str; 4] = ["revenue", "costs", "margin", "headcount"];
/// The months a question draws from.
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Numeric questions in a run with cells, inclusive range.
pub const NUMERIC_QUESTIONS: std::ops::RangeInclusive<usize> = 4..=10;
/// Reformats per unit of the kind's swarm weight.
const REFORMATS_PER_WEIGHT: usize = 3;

/// Gives `siblings`' Sheets the worked example on about half the seeds
/// whose world has Sheets, and then: numeric questions by `everybody`, a
/// few revisions and one downgrade of a sheet to some of `readers`, and,
/// when the swarm draws [`FaultKind::Reformat`], reformats of a month
/// column, in place or with a new revision; all slipped into `events`
/// (which holds at least its opening event).
pub(super) fn add(
    seed: u64,
    siblings: &mut [SiblingDecl],
    swarm: &mut Swarm,
    everybody: &[String],
    readers: &[String],
    events: &mut Vec<Event>,
) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x6365_6c6c_7321_2121);
    let Some(sheets) = siblings.iter_mut().find(|s| s.app == "sheets") else {
        return;
    };
    if !rng.gen_bool(0.5) {
        return;
    }
    sheets.worked_example = true;
    let app = sheets.app.clone();
    let mut extra: Vec<Event> = vec![];
    for _ in 0..rng.gen_range(NUMERIC_QUESTIONS) {
        let q = format!(
            "{} {} in {} the last {} years",
            FUNCTIONS.choose(&mut rng).unwrap_or(&"average"),
            MEASURES.choose(&mut rng).unwrap_or(&"revenue"),
            MONTHS.choose(&mut rng).unwrap_or(&"June"),
            rng.gen_range(1..=3)
        );
        extra.push(Event::Query {
            at_ms: None,
            reader: everybody.choose(&mut rng).cloned().unwrap_or_default(),
            q,
            expect: None,
            // The search page: the one surface with the numeric answer.
            surface: None,
        });
    }
    let sheet = |rng: &mut rand::rngs::StdRng| SHEETS.choose(rng).unwrap_or(&SHEETS[0]).to_string();
    for _ in 0..rng.gen_range(0..=2) {
        extra.push(Event::Revise {
            at_ms: None,
            app: app.clone(),
            item: sheet(&mut rng),
            words: None,
        });
    }
    if rng.gen_bool(0.3) {
        let item = sheet(&mut rng);
        extra.push(Event::Downgrade {
            at_ms: None,
            app: app.clone(),
            item: item.clone(),
            to: readers
                .iter()
                .filter(|_| rng.gen_bool(0.5))
                .cloned()
                .collect(),
        });
        extra.push(Event::Upgrade {
            at_ms: None,
            app: app.clone(),
            item,
        });
    }
    if rng.gen_bool(0.5) {
        let weight = rng.gen_range(1..=4);
        swarm.0.push((FaultKind::Reformat, weight));
        for _ in 0..weight as usize * REFORMATS_PER_WEIGHT {
            extra.push(Event::Reformat {
                at_ms: None,
                app: app.clone(),
                item: sheet(&mut rng),
                tab: TAB.into(),
                col: rng.gen_range(MONTH_COLS),
                format_code: FORMATS.choose(&mut rng).unwrap_or(&"General").to_string(),
                in_place: rng.gen_bool(0.5),
            });
        }
    }
    extra.shuffle(&mut rng);
    for event in extra {
        let at = rng.gen_range(1..=events.len());
        events.insert(at, event);
    }
}
