//! Test-only: a sibling's traced calls written as a line of words, and the one fake Sheets they come from, for the unit tables of `reconciling.rs` and `reconciling_cause.rs` (§4.1, §6.1).

use std::collections::BTreeMap;

use crate::fake::SubjectKind;
use crate::fake::model::ModelHandle;
use crate::fake::server::{FakeConfig, FakeSibling};
use crate::fake::trace::{CallDetail, CallKind, Clock, Trace, TraceEvent, TracedPair, TracedRow};
use crate::world::MEMORIA_CONSUMER;

/// Sheets (team `acme`, keyed on addresses, memoria's consumer token
/// `t`) over `model` and `clock`, by its app name.
pub(super) fn sheets_with(model: ModelHandle, clock: Clock) -> BTreeMap<String, FakeSibling> {
    let fake = FakeSibling::new(
        FakeConfig {
            team: "acme".into(),
            app: "sheets".into(),
            keys_on: SubjectKind::Address,
            tokens: vec![(MEMORIA_CONSUMER.into(), "t".into())],
        },
        model,
        Trace::new(),
        clock,
    );
    BTreeMap::from([("sheets".to_string(), fake)])
}

/// Sheets' calls from a line of words, each `WHAT[!FAULT]@MS` (no `@`:
/// at 0 ms), every pair and row about `item`:
/// - `410`: an S1 answered 410; `head`: an S1 page with one row (`item`
///   at `r2`), no `more`; `empty`: one with no rows;
/// - `announce`: an announce's first page, no items and no close record;
///   `close` or `open`: one listing `item` at `r1`, with or without its
///   close record (a count of 1);
/// - `s6`: an S6 answer;
/// - `404:ITEM:REV`: S3's 404 of `ITEM` at `REV`;
/// - anything else: an S2 value (`AHEAD`, `STALE`, `VISIBLE`), one pair
///   (`item` at `r2`) answered 200.
pub(super) fn calls(line: &str, item: &str) -> Vec<TraceEvent> {
    line.split_whitespace()
        .map(|w| {
            let (what, at) = w.split_once('@').unwrap_or((w, "0"));
            let (what, fault) = what.split_once('!').unwrap_or((what, ""));
            let s1 = |rows: usize| CallDetail::S1 {
                cursor_given: true,
                rows: (0..rows)
                    .map(|_| TracedRow {
                        item_id: item.into(),
                        revision: "r2".into(),
                        gone: false,
                    })
                    .collect(),
                more: false,
            };
            let announce = |items: Vec<TracedRow>, close_count: Option<u64>| CallDetail::S1a {
                first_page: true,
                items,
                close_count,
            };
            let (call, status, detail) = match what.split(':').collect::<Vec<_>>()[..] {
                ["410"] => (CallKind::S1, 410, s1(0)),
                ["head"] => (CallKind::S1, 200, s1(1)),
                ["empty"] => (CallKind::S1, 200, s1(0)),
                ["s6"] => (CallKind::S6, 200, CallDetail::NotServed),
                ["announce"] => (CallKind::S1a, 200, announce(vec![], None)),
                ["close" | "open"] => (
                    CallKind::S1a,
                    200,
                    announce(
                        vec![TracedRow {
                            item_id: item.into(),
                            revision: "r1".into(),
                            gone: false,
                        }],
                        (what == "close").then_some(1),
                    ),
                ),
                ["404", id, revision] => (
                    CallKind::S3,
                    404,
                    CallDetail::S3 {
                        item_id: Some(id.into()),
                        revision: Some(revision.into()),
                        unexpected_fields: vec![],
                        served: false,
                    },
                ),
                _ => (
                    CallKind::S2,
                    200,
                    CallDetail::S2 {
                        subject_kind: Some("address".into()),
                        subject: Some("member-1".into()),
                        pairs: vec![TracedPair {
                            item_id: item.into(),
                            revision: "r2".into(),
                            result: what.into(),
                        }],
                    },
                ),
            };
            TraceEvent {
                at_ms: at.parse().unwrap_or(0),
                caller: MEMORIA_CONSUMER.into(),
                epoch: Some(1),
                callee: "acme.sheets.oficina.works".into(),
                call,
                status: Some(status),
                faults: (!fault.is_empty())
                    .then(|| fault.to_string())
                    .into_iter()
                    .collect(),
                detail,
            }
        })
        .collect()
}
