//! The numeric route (§8.2, §8.7): slots resolved by exact lookup, operands counted and ruled, units certified before S6, S6's display shown byte for byte, or the slot table and no number.
//!
//! The order is the ruling's, and gate 22 holds it to it:
//!
//! 1. the question is read ([`crate::numeric::question`]); top-k (the lexical
//!    candidates for the measure and months) only finds candidate sheets;
//! 2. each slot (measure × period) is an exact lookup in those sheets'
//!    sealed catalogues: row label and canonical period;
//! 3. every operand's sheet is ruled through S2 on the one path
//!    ([`super::ruled::rule`]): NOT_VISIBLE drops the operand
//!    unsaid, STALE / AHEAD / UNKNOWN withhold its slot;
//! 4. per slot: one operand filled, zero a named gap, two or more an
//!    ambiguity, never collapsed;
//! 5. any gap, ambiguity or withholding: the slot table, no S6 call;
//! 6. every operand certified ([`crate::numeric::units`]), or UNIT_UNKNOWN; all
//!    one token, or MIXED_UNITS; both before any S6 call;
//! 7. one S6 call ([`super::ruled::aggregate`]); VALUE is
//!    re-certified against the format codes indexed: a disagreement shows
//!    no number and marks the sheet for re-ingest (§8.7).
//!
//! Calls no model: works with AI off. The answer's shape is
//! [`crate::numeric::answer`]; the question, the catalogue and the units
//! are the rest of `numeric/`, which calls nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::SiblingClient;
use super::ruled::FollowUps;
use crate::net::s6::{Aggregate, CellRef, S6Result};
use crate::net::wire::{Pair, Verdict};
use crate::numeric::answer::{Citation, NumericAnswer, Operand, Outcome, Slot, SlotState};
use crate::numeric::question::{Question, parse};
use crate::numeric::sheet::{Catalogue, CatalogueCell, column_letters};
use crate::numeric::units::{Certification, UnitSource, certify};
use crate::offload::SharedInstance;

/// Most sheets the candidates may bring to one lookup (§8.7: top-k only
/// finds candidate regions). This project's number.
pub const CANDIDATE_SHEETS_MAX: usize = 8;

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
        .filter(|w| {
            crate::numeric::units::word_token(w).is_none() && !crate::search::query::is_stop_word(w)
        })
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
    // Only reads: on a read handle, beside other searches (issue 30).
    let read = instance
        .read(
            move |i| -> Result<Option<(Question, Vec<SheetDoc>)>, crate::error::Error> {
                let today = crate::clock::iso_date(i.clock.now_unix_s());
                let Some(question) = parse(&q_s, &today) else {
                    return Ok(None);
                };
                let mut search: Vec<String> = question.measure.clone();
                search.extend(question.periods.iter().map(|p| p.label.clone()));
                let found = i
                    .lexical_candidates(
                        &asker_s,
                        &search.join(" "),
                        1,
                        crate::page::SemanticRanking::Off,
                    )
                    .map_err(|e| {
                        crate::error::Error::new(crate::error::ErrorKind::Query, format!("{e:?}"))
                    })?;
                let mut docs: Vec<SheetDoc> = vec![];
                for r in &found.results {
                    if docs.iter().any(|d| d.doc_id == r.document_id)
                        || docs.len() >= CANDIDATE_SHEETS_MAX
                    {
                        continue;
                    }
                    let Some(p) = &r.provenance else { continue };
                    let Some(catalogue) = i.store.sheet_catalogue(&r.document_id, r.revision)?
                    else {
                        continue;
                    };
                    let passages = i
                        .store
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
            link: crate::page::passage_link(&doc.doc_id, i64::from(cell.ordinal)),
            text: doc.passages.get(&cell.ordinal).cloned().unwrap_or_default(),
        },
    }
}
