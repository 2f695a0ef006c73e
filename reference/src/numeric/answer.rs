//! The numeric route's answer (§8.2, §8.7): the slots, their operands and citations, and what is shown, a number S6 gave or the slot table and no number.
//!
//! The shape only: `sibling::numeric` fills it (the slots looked
//! up, the operands ruled through S2, certified, then one S6 call), the
//! search page carries it and `web/numeric.rs` renders it.

use serde::Serialize;

use super::units::{Certification, UnitSource, token_in_words};
use crate::net::s6::Aggregate;

/// A passage an operand cites: its sheet's region-row chunk, ruled VISIBLE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Citation {
    /// The document.
    pub document_id: String,
    /// The passage's ordinal.
    pub ordinal: u32,
    /// `/documents/{id}#p{ordinal}`.
    pub link: String,
    /// The passage text, as indexed.
    pub text: String,
}

/// One operand of a slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Operand {
    /// The sheet's title.
    pub sheet_title: String,
    /// The cell with its sheet, e.g. `FY2024 › P&L!C2`: three sheets may
    /// share a tab name and a coordinate.
    pub cell: String,
    /// The row label, as displayed.
    pub row_label: String,
    /// The column header, as displayed.
    pub column_header: String,
    /// The display string as indexed.
    pub display: String,
    /// The format code as indexed.
    pub format_code: String,
    /// Its unit, by §8.7's table.
    pub certification: Certification,
    /// The passage it cites.
    pub citation: Citation,
}

/// A slot's count (§8.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SlotState {
    /// Exactly one current, authorized operand.
    Filled,
    /// None: a named gap.
    Gap,
    /// Two or more: never collapsed.
    Ambiguous,
    /// The sibling answered STALE for a sheet this slot needs.
    Stale,
    /// The sibling answered AHEAD.
    Ahead,
    /// The sibling did not answer usefully.
    Unknown,
}

/// One slot: measure × period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// E.g. `revenue, Jun 2024`.
    pub label: String,
    /// Its count.
    pub state: SlotState,
    /// Its operands, VISIBLE only (a withheld one is counted, never shown).
    pub operands: Vec<Operand>,
}

/// What the route shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    /// S6's number: `display` byte for byte, the unit beside it.
    Value {
        /// S6's display string, unchanged.
        display: String,
        /// The certified token, e.g. `€k`.
        unit: String,
        /// Where the unit came from, each distinct source once.
        unit_sources: Vec<UnitSource>,
    },
    /// A gap, an ambiguity or a withholding: the slot table, no S6 call.
    SlotTable,
    /// Every operand certified, to different tokens: no S6 call.
    MixedUnits,
    /// Some operand certified to no token: no S6 call.
    UnitUnknown,
    /// S6 answered STALE for a cell: the sheet is refetched.
    S6Stale {
        /// The cell, e.g. `P&L!C2`.
        cell: String,
    },
    /// S6 answered NON_NUMERIC for a cell.
    NonNumeric {
        /// The cell.
        cell: String,
    },
    /// S6 answered NOT_VISIBLE: no number, and nothing about which cell.
    NotVisible,
    /// S6 did not answer usefully.
    Unknown,
    /// S6's format code is not the one indexed: reformatted since ingest;
    /// no number, the sheet marked for re-ingest.
    Reformatted {
        /// The format codes indexed.
        indexed: Vec<String>,
        /// The one S6 returned.
        returned: String,
    },
}

/// The numeric route's answer, rendered above the results.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NumericAnswer {
    /// The function asked.
    #[serde(rename = "fn")]
    pub function: Aggregate,
    /// The measure's words.
    pub measure: String,
    /// Which periods the question meant.
    pub basis: String,
    /// One per period.
    pub slots: Vec<Slot>,
    /// What is shown.
    pub outcome: Outcome,
    /// Whether S6 was called (at most once).
    pub s6_called: bool,
}

impl NumericAnswer {
    /// The headline, e.g. `Average revenue, Jun 2024 – Jun 2026: 1,350 (€k: thousands of euros, from the column header "Jun 2024 €k")`,
    /// or the sentence that says why there is no number.
    pub fn headline(&self) -> String {
        let what = format!(
            "{} {}{}",
            self.function.word(),
            self.measure,
            match (self.slots.first(), self.slots.last()) {
                (Some(a), Some(b)) if self.slots.len() > 1 => format!(
                    ", {} – {}",
                    a.label.rsplit(", ").next().unwrap_or(""),
                    b.label.rsplit(", ").next().unwrap_or("")
                ),
                (Some(a), _) => format!(", {}", a.label.rsplit(", ").next().unwrap_or("")),
                _ => String::new(),
            }
        );
        match &self.outcome {
            Outcome::Value {
                display,
                unit,
                unit_sources,
            } => format!(
                "{what}: {display} ({unit}: {}, from {})",
                token_in_words(unit),
                unit_sources
                    .iter()
                    .map(UnitSource::phrase)
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            Outcome::SlotTable => {
                let mut parts = vec![];
                for (state, says) in [
                    (SlotState::Filled, "found"),
                    (SlotState::Gap, "nothing matched"),
                    (SlotState::Ambiguous, "more than one cell matched"),
                    (SlotState::Stale, "Sheets has a newer version; refetching"),
                    (SlotState::Ahead, "Sheets is behind what memoria holds"),
                    (SlotState::Unknown, "Sheets did not answer"),
                ] {
                    let slots: Vec<&str> = self
                        .slots
                        .iter()
                        .filter(|s| s.state == state)
                        .map(|s| s.label.as_str())
                        .collect();
                    if !slots.is_empty() {
                        parts.push(format!("{says}: {}", slots.join("; ")));
                    }
                }
                if parts.is_empty() {
                    parts.push("the question names no period to look up".into());
                }
                format!(
                    "{what}: no {} shown. {}.",
                    self.function.word().to_lowercase(),
                    parts.join(". ")
                )
            }
            Outcome::MixedUnits => {
                let named: Vec<String> = self
                    .operands()
                    .map(|o| {
                        format!(
                            "{} is {} (format code {})",
                            o.cell,
                            o.certification.token().unwrap_or("?"),
                            o.format_code
                        )
                    })
                    .collect();
                format!(
                    "{what}: no number. MIXED_UNITS: {}. memoria does not convert between units; format the cells alike in Sheets.",
                    named.join("; ")
                )
            }
            Outcome::UnitUnknown => {
                let named: Vec<String> = self
                    .operands()
                    .filter_map(|o| match &o.certification {
                        Certification::Uncertified { why } => Some(format!("{}: {why}", o.cell)),
                        Certification::Certified { .. } => None,
                    })
                    .collect();
                format!(
                    "{what}: no number. UNIT_UNKNOWN: {}. Give the cells a currency, percent or scaled format in Sheets, or write the unit (€k, thousands, %) in the column header.",
                    named.join("; ")
                )
            }
            Outcome::S6Stale { cell } => format!(
                "{what}: no number. Sheets has a newer version of the sheet holding {cell}; memoria is refetching it."
            ),
            Outcome::NonNumeric { cell } => {
                format!("{what}: no number. Sheets says {cell} holds text or is empty.")
            }
            Outcome::NotVisible => {
                format!("{what}: no number. Sheets would not compute over these cells for you now.")
            }
            Outcome::Unknown => format!("{what}: no number. Sheets did not answer usefully."),
            Outcome::Reformatted { indexed, returned } => format!(
                "{what}: no number. The cells were reformatted since memoria read them (indexed {}, Sheets now says {returned}); the sheet is marked for re-ingest.",
                indexed.join(", ")
            ),
        }
    }

    /// Every operand shown, slot by slot.
    pub fn operands(&self) -> impl Iterator<Item = &Operand> {
        self.slots.iter().flat_map(|s| s.operands.iter())
    }
}
