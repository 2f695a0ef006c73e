//! The numeric route (§8.2, §8.7): slots resolved by exact lookup, operands counted and ruled, units certified before S6, S6's display shown byte for byte, or the slot table and no number.
//!
//! The order is the ruling's, and gate 22 holds it to it:
//!
//! 1. the question is read ([`super::question`]); top-k (the lexical
//!    candidates for the measure and months) only finds candidate sheets;
//! 2. each slot (measure × period) is an exact lookup in those sheets'
//!    sealed catalogues: row label and canonical period;
//! 3. every operand's sheet is ruled through S2 on the one path
//!    ([`crate::sibling::ruled::rule`]): NOT_VISIBLE drops the operand
//!    unsaid, STALE / AHEAD / UNKNOWN withhold its slot;
//! 4. per slot: one operand filled, zero a named gap, two or more an
//!    ambiguity, never collapsed;
//! 5. any gap, ambiguity or withholding: the slot table, no S6 call;
//! 6. every operand certified ([`super::units`]), or UNIT_UNKNOWN; all
//!    one token, or MIXED_UNITS; both before any S6 call;
//! 7. one S6 call ([`crate::sibling::ruled::aggregate`]); VALUE is
//!    re-certified against the format codes indexed: a disagreement shows
//!    no number and marks the sheet for re-ingest (§8.7).
//!
//! Calls no model: works with AI off.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::question::{Question, parse};
use super::sheet::{Catalogue, CatalogueCell, column_letters};
use super::units::{Certification, UnitSource, certify, token_in_words};
use crate::offload::SharedInstance;
use crate::sibling::SiblingClient;
use crate::sibling::ruled::FollowUps;
use crate::sibling::s6::{Aggregate, CellRef, S6Result};
use crate::sibling::wire::{Pair, Verdict};

/// Most sheets the candidates may bring to one lookup (§8.7: top-k only
/// finds candidate regions). This project's number.
pub const CANDIDATE_SHEETS_MAX: usize = 8;

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

/// One candidate sheet: its coordinates and catalogue.
struct SheetDoc {
    doc_id: String,
    app: String,
    item_id: String,
    sibling_rev: String,
    catalogue: Catalogue,
    passages: BTreeMap<u32, String>,
}

fn label_words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| super::units::word_token(w).is_none() && !crate::search::query::is_stop_word(w))
        .collect()
}

/// Whether a row label names the measure: every word of the label is a
/// word of the question's measure (exact, after lowercasing).
fn names_measure(label: &str, measure: &[String]) -> bool {
    let words = label_words(label);
    !words.is_empty() && words.iter().all(|w| measure.contains(w))
}

/// The numeric route for `q` as `asker` (module documentation). `None`
/// when `q` is not a numeric question. The follow-ups are the ruling's,
/// plus the refetch S6's STALE asks for and the re-announce a reformat
/// marked: the caller starts them.
pub async fn numeric_answer(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    asker: &str,
    q: &str,
) -> (Option<NumericAnswer>, FollowUps) {
    let (asker_s, q_s) = (asker.to_string(), q.to_string());
    let read = instance
        .run(
            move |i| -> Result<Option<(Question, Vec<SheetDoc>)>, crate::Error> {
                let today = crate::clock::iso_date(i.clock().now_unix_s());
                let Some(question) = parse(&q_s, &today) else {
                    return Ok(None);
                };
                let mut search: Vec<String> = question.measure.clone();
                search.extend(question.periods.iter().map(|p| p.label.clone()));
                let found = i
                    .candidates(&asker_s, &search.join(" "), 1)
                    .map_err(|e| crate::Error::new(crate::ErrorKind::Query, format!("{e:?}")))?;
                let mut docs: Vec<SheetDoc> = vec![];
                for r in &found.results {
                    if docs.iter().any(|d| d.doc_id == r.document_id)
                        || docs.len() >= CANDIDATE_SHEETS_MAX
                    {
                        continue;
                    }
                    let Some(p) = &r.provenance else { continue };
                    let Some(catalogue) = i.store().sheet_catalogue(&r.document_id, r.revision)?
                    else {
                        continue;
                    };
                    let passages = i
                        .store()
                        .passages(&r.document_id)?
                        .into_iter()
                        .map(|p| (p.ordinal as u32, p.body))
                        .collect();
                    docs.push(SheetDoc {
                        doc_id: r.document_id.clone(),
                        app: p.app.clone(),
                        item_id: p.item_id.clone(),
                        sibling_rev: p.revision.clone(),
                        catalogue,
                        passages,
                    });
                }
                Ok(Some((question, docs)))
            },
        )
        .await;
    let (question, docs) = match read {
        Ok(Ok(Some(x))) => x,
        Ok(Ok(None)) => return (None, FollowUps::default()),
        Ok(Err(e)) | Err(e) => {
            tracing::warn!(kind = ?e.kind(), "the numeric route could not read its catalogues");
            return (None, FollowUps::default());
        }
    };
    // Exact lookup: slot → (doc index, cell).
    let mut found: Vec<Vec<(usize, &CatalogueCell)>> = vec![];
    for period in &question.periods {
        let mut hits = vec![];
        for (d, doc) in docs.iter().enumerate() {
            for cell in &doc.catalogue.cells {
                if cell.period.as_deref() == Some(period.canonical.as_str())
                    && names_measure(&cell.row_label, &question.measure)
                {
                    hits.push((d, cell));
                }
            }
        }
        found.push(hits);
    }
    // Rule every operand's sheet through S2, on the one path.
    let mut by_app: BTreeMap<String, Vec<Pair>> = BTreeMap::new();
    for &(d, _) in found.iter().flatten() {
        let pair = Pair {
            item_id: docs[d].item_id.clone(),
            revision: docs[d].sibling_rev.clone(),
        };
        let pairs = by_app.entry(docs[d].app.clone()).or_default();
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    let ruling = crate::sibling::ruled::rule(instance, client, asker, &by_app).await;
    let mut follow_ups = ruling.follow_ups.clone();
    let verdict = |d: usize| {
        ruling.verdicts.get(&crate::storage::store::Provenance {
            app: docs[d].app.clone(),
            item_id: docs[d].item_id.clone(),
            revision: docs[d].sibling_rev.clone(),
        })
    };
    let measure = question.measure.join(" ");
    let mut slots = vec![];
    let mut chosen: Vec<(usize, &CatalogueCell)> = vec![];
    for (period, hits) in question.periods.iter().zip(&found) {
        let mut state = None;
        let mut operands = vec![];
        let mut shown = vec![];
        for &(d, cell) in hits {
            match verdict(d) {
                Verdict::Visible => {
                    shown.push((d, cell));
                    operands.push(operand(&docs[d], cell));
                }
                Verdict::NotVisible => {}
                Verdict::Stale => state = state.or(Some(SlotState::Stale)),
                Verdict::Ahead => state = state.or(Some(SlotState::Ahead)),
                Verdict::Unknown => state = state.or(Some(SlotState::Unknown)),
            }
        }
        let state = state.unwrap_or(match shown.len() {
            0 => SlotState::Gap,
            1 => SlotState::Filled,
            _ => SlotState::Ambiguous,
        });
        if state == SlotState::Filled {
            chosen.extend(shown);
        }
        slots.push(Slot {
            label: format!("{measure}, {}", period.label),
            state,
            operands,
        });
    }
    let mut answer = NumericAnswer {
        function: question.function,
        measure,
        basis: question.basis.clone(),
        slots,
        outcome: Outcome::SlotTable,
        s6_called: false,
    };
    if answer.slots.is_empty() || answer.slots.iter().any(|s| s.state != SlotState::Filled) {
        return (Some(answer), follow_ups);
    }
    // Certification, before any S6 call (§8.7).
    let certs: Vec<&Certification> = answer.operands().map(|o| &o.certification).collect();
    if certs.iter().any(|c| c.token().is_none()) {
        answer.outcome = Outcome::UnitUnknown;
        return (Some(answer), follow_ups);
    }
    let tokens: BTreeSet<&str> = certs.iter().filter_map(|c| c.token()).collect();
    if tokens.len() > 1 {
        answer.outcome = Outcome::MixedUnits;
        return (Some(answer), follow_ups);
    }
    let unit = tokens.into_iter().next().unwrap_or_default().to_string();
    let apps: BTreeSet<&str> = chosen.iter().map(|(d, _)| docs[*d].app.as_str()).collect();
    let [app] = apps.into_iter().collect::<Vec<_>>()[..] else {
        // Operands in two siblings: no one S6 can compute over them.
        answer.outcome = Outcome::Unknown;
        return (Some(answer), follow_ups);
    };
    let cells: Vec<CellRef> = chosen
        .iter()
        .map(|(d, c)| CellRef {
            sheet: docs[*d].item_id.clone(),
            tab: c.tab.clone(),
            row: c.row,
            col: c.col,
            revision: docs[*d].sibling_rev.clone(),
        })
        .collect();
    answer.s6_called = true;
    let result =
        crate::sibling::ruled::aggregate(client, asker, app, question.function, &cells).await;
    let name_of = |sheet: &str, tab: &str, row: u32, col: u32| {
        let _ = sheet;
        format!("{tab}!{}{row}", column_letters(col))
    };
    answer.outcome = match result {
        S6Result::Value {
            display,
            format_code,
            ..
        } => {
            // A count is in General whatever it counts (the S6 wire);
            // anything else must come back in a format code indexed.
            let indexed: BTreeSet<String> = if question.function == Aggregate::Count {
                BTreeSet::from(["General".to_string()])
            } else {
                chosen.iter().map(|(_, c)| c.format_code.clone()).collect()
            };
            if indexed.contains(&format_code) {
                let mut unit_sources: Vec<UnitSource> = vec![];
                for o in answer.operands() {
                    if let Certification::Certified { source, .. } = &o.certification
                        && !unit_sources.contains(source)
                    {
                        unit_sources.push(source.clone());
                    }
                }
                Outcome::Value {
                    display,
                    unit,
                    unit_sources,
                }
            } else {
                let marked: Vec<(String, String)> = chosen
                    .iter()
                    .map(|(d, _)| (docs[*d].app.clone(), docs[*d].doc_id.clone()))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                for (app, _) in &marked {
                    follow_ups.reannounce.insert(app.clone());
                }
                let written = instance
                    .run(move |i| {
                        for (app, doc) in &marked {
                            if let Err(e) = i.store().mark_sheet_reingest(app, doc) {
                                tracing::error!(app, error = %e, "could not mark a sheet for re-ingest");
                            }
                        }
                    })
                    .await;
                if let Err(e) = written {
                    tracing::error!(error = %e, "could not mark a sheet for re-ingest");
                }
                tracing::warn!(
                    app,
                    "S6's format code disagrees with the one indexed: re-ingest"
                );
                Outcome::Reformatted {
                    indexed: indexed.into_iter().collect(),
                    returned: format_code,
                }
            }
        }
        S6Result::Stale { cell } => {
            follow_ups.refetch.insert(app.to_string());
            Outcome::S6Stale {
                cell: name_of(&cell.sheet, &cell.tab, cell.row, cell.col),
            }
        }
        S6Result::NonNumeric { cell } => Outcome::NonNumeric {
            cell: name_of(&cell.sheet, &cell.tab, cell.row, cell.col),
        },
        S6Result::NotVisible => Outcome::NotVisible,
        S6Result::Unknown => Outcome::Unknown,
    };
    (Some(answer), follow_ups)
}

fn operand(doc: &SheetDoc, cell: &CatalogueCell) -> Operand {
    Operand {
        sheet_title: doc.catalogue.title.clone(),
        cell: format!(
            "{} › {}!{}{}",
            doc.catalogue.title,
            cell.tab,
            column_letters(cell.col),
            cell.row
        ),
        row_label: cell.row_label.clone(),
        column_header: cell.column_header.clone(),
        display: cell.display.clone(),
        format_code: cell.format_code.clone(),
        certification: certify(&cell.format_code, &cell.column_header, &cell.row_label),
        citation: Citation {
            document_id: doc.doc_id.clone(),
            ordinal: cell.ordinal,
            link: crate::search::page::passage_link(&doc.doc_id, i64::from(cell.ordinal)),
            text: doc.passages.get(&cell.ordinal).cloned().unwrap_or_default(),
        },
    }
}
