//! The numeric answer as a reader sees it (§8.7): above the results like the fact box, S6's display string byte for byte with its unit named and attributed beside it, the basis, and the slot table with every operand cited.
//!
//! Scriptless. The only anchors are citations, to `/documents/{id}#p{n}`.
//! Without a number the headline says why (a gap, an ambiguity,
//! MIXED_UNITS, UNIT_UNKNOWN, a reformat) and the table shows what was
//! found; a withheld slot names its state and shows no passage.

use maud::{Markup, html};

use crate::numeric::answer::{NumericAnswer, Outcome, SlotState};

fn state_word(s: SlotState) -> &'static str {
    match s {
        SlotState::Filled => "found",
        SlotState::Gap => "nothing matched",
        SlotState::Ambiguous => "more than one cell matched",
        SlotState::Stale => "withheld: Sheets has a newer version",
        SlotState::Ahead => "withheld: Sheets is behind memoria",
        SlotState::Unknown => "withheld: Sheets did not answer",
    }
}

/// The numeric answer's section; empty markup for none.
pub(crate) fn numeric_box(answer: Option<&NumericAnswer>) -> Markup {
    let Some(a) = answer else {
        return html! {};
    };
    let number = matches!(a.outcome, Outcome::Value { .. });
    html! {
        section.numeric aria-label="Computed by Sheets" data-outcome=(outcome_name(&a.outcome)) {
            @if let Outcome::Value { display, unit, unit_sources } = &a.outcome {
                p.numeric-value {
                    (a.function.word()) " " (a.measure) ": "
                    strong.numeric-figure { (display) }
                    " "
                    span.numeric-unit { "(" (unit) ", from "
                        @for (i, s) in unit_sources.iter().enumerate() {
                            @if i > 0 { " and " }
                            (s.phrase())
                        }
                        ")"
                    }
                }
                p.numeric-by { "Computed by Sheets (" (a.function.as_str()) "); memoria does no arithmetic." }
            } @else {
                p.numeric-none role="status" { (a.headline()) }
            }
            p.numeric-basis { "Basis: " (a.basis) "." }
            table.numeric-slots {
                thead { tr { th { "Slot" } th { "State" } th { "Cell" } th { "Shows" } th { "Unit" } th { "Source" } } }
                tbody {
                    @for s in &a.slots {
                        @if s.operands.is_empty() {
                            tr data-state=(format!("{:?}", s.state)) {
                                td { (s.label) } td { (state_word(s.state)) } td {} td {} td {} td {}
                            }
                        }
                        @for o in &s.operands {
                            tr data-state=(format!("{:?}", s.state)) {
                                td { (s.label) }
                                td { (state_word(s.state)) }
                                td { (o.cell) }
                                td { (o.display) }
                                td { (o.certification.token().unwrap_or("none")) " (" (o.format_code) ")" }
                                td { a.numeric-cite href=(o.citation.link) { (o.sheet_title) " › " (o.row_label) " › " (o.column_header) } }
                            }
                        }
                    }
                }
            }
            @if !number { p.numeric-no-number { "No number is shown." } }
        }
    }
}

fn outcome_name(o: &Outcome) -> &'static str {
    match o {
        Outcome::Value { .. } => "VALUE",
        Outcome::SlotTable => "SLOT_TABLE",
        Outcome::MixedUnits => "MIXED_UNITS",
        Outcome::UnitUnknown => "UNIT_UNKNOWN",
        Outcome::S6Stale { .. } => "STALE",
        Outcome::NonNumeric { .. } => "NON_NUMERIC",
        Outcome::NotVisible => "NOT_VISIBLE",
        Outcome::Unknown => "UNKNOWN",
        Outcome::Reformatted { .. } => "REFORMATTED",
    }
}
