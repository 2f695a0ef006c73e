//! An optional control endpoint for a fake served over loopback: `POST /_control` drives the state transitions the conformance kit needs (§4.1, §6.2).
//!
//! Only the fake has it, and only when a caller merges [`Controller::router`]
//! into the served router: the contract's paths (`/s1`, `/s1a`, `/s2`,
//! `/s3`) never carry it. The request body is
//! `{"action":"<name>","args":["..."]}`; the answer is `200 {"value":V}`
//! (`V` a string or `null`), `404` for an unknown action, `409` when the
//! model refuses (an unknown item or revision).
//!
//! Actions: `reset`, `downgrade-to-granted ITEM ADDRESS`, `bump-revision
//! ITEM` (value: the new revision), `bump-revisions ITEM N` (value: the N
//! new revisions, one a line), `delete ITEM`, `set-link-shared ITEM`,
//! `set-guest-only ITEM` (an item made link-shared-not-team or guest-only
//! after ingest), `empty-team-set` (every team-visible item deleted),
//! `partial-restore ITEM REVISION`, `whole-log-restore`, `rotate-begin`
//! (value: a second token accepted beside the first consumer's own, §6.2
//! phase 1), `rotate-retire` (phase 3: the first consumer's original token
//! retired, the rotated one kept). `reset` and `whole-log-restore` both
//! return to the state the controller was made with, in a new log epoch;
//! `reset` also restores the tokens the controller was made with.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use http::StatusCode;
use serde::Deserialize;

use crate::fake::faults::{ForcedS6, MalformedS6, Outage, Slow};
use crate::fake::model::{Revise, Rung, Snapshot};
use crate::fake::server::FakeSibling;
use crate::fake::trace::CallKind;

/// The control route's path: off the contract's paths (§6.1).
pub const CONTROL_PATH: &str = "/_control";

/// The token [`Controller`] adds on `rotate-begin`'s first call (§6.2).
pub const ROTATED_TOKEN: &str = "rotated-token-2";

/// Most revisions one `bump-revisions` call may add: a bound on one
/// control request's work (the kit asks for 150, `S1_PAGE_PROBE_BUMPS`).
pub const BUMPS_PER_CALL_MAX: usize = 1000;

/// One control request.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlRequest {
    /// The action name, e.g. `delete`.
    pub action: String,
    /// Its arguments, in order.
    #[serde(default)]
    pub args: Vec<String>,
}

struct Inner {
    fake: FakeSibling,
    initial: Snapshot,
    tokens: Vec<(String, String)>,
}

/// Drives one fake's transitions; `reset` returns it to the state it held
/// when the controller was made.
#[derive(Clone)]
pub struct Controller(Arc<Inner>);

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller").finish_non_exhaustive()
    }
}

impl Controller {
    /// A controller over `fake`, remembering its current state and
    /// `tokens` (the accepted tokens, as the fake was configured) as the
    /// state `reset` returns to.
    #[must_use]
    pub fn new(fake: FakeSibling, tokens: Vec<(String, String)>) -> Self {
        let initial = fake.model().snapshot();
        Self(Arc::new(Inner {
            fake,
            initial,
            tokens,
        }))
    }

    /// `POST /_control` on its own router, to merge beside the fake's.
    pub fn router(&self) -> Router {
        Router::new()
            .route(CONTROL_PATH, post(control))
            .with_state(self.clone())
    }

    /// Applies one action.
    ///
    /// # Errors
    /// `(404, why)` for an unknown action or wrong arity, `(409, why)` when
    /// the model refuses it.
    pub fn apply(&self, action: &str, args: &[String]) -> Result<Option<String>, (u16, String)> {
        let model = self.0.fake.model();
        let refused = |e: crate::fake::ModelError| (409, e.to_string());
        match (action, args) {
            ("reset", []) => {
                model.restore_whole(&self.0.initial);
                self.0.fake.set_tokens(self.0.tokens.clone());
                Ok(None)
            }
            ("downgrade-to-granted", [item, address]) => model
                .set_rung(
                    item,
                    Rung::Granted {
                        to: BTreeSet::from([address.clone()]),
                    },
                )
                .map(|()| None)
                .map_err(refused),
            ("bump-revision", [item]) => model
                .revise(item, "Bumped", "A bumped revision.")
                .map(Some)
                .map_err(refused),
            ("bump-revisions", [item, n]) => {
                let n: usize = n
                    .parse()
                    .ok()
                    .filter(|n| (1..=BUMPS_PER_CALL_MAX).contains(n))
                    .ok_or((409, format!("a count from 1 to {BUMPS_PER_CALL_MAX}")))?;
                let mut made = Vec::with_capacity(n);
                for _ in 0..n {
                    made.push(
                        model
                            .revise(item, "Bumped", "A bumped revision.")
                            .map_err(refused)?,
                    );
                }
                Ok(Some(made.join("\n")))
            }
            ("delete", [item]) => model.delete(item).map(|()| None).map_err(refused),
            // A new team item, titled and worded by `words`: what a person
            // creating a document in the sibling does while memoria runs.
            ("create", [item, words @ ..]) if !words.is_empty() => {
                let words = words.join(" ");
                model
                    .add_item(
                        item,
                        Rung::Team,
                        &words,
                        &format!("# {words}\n\nCreated while memoria runs: {words}.\n"),
                    )
                    .map(Some)
                    .map_err(refused)
            }
            ("set-link-shared", [item]) => model
                .set_link_shared(item, true)
                .map(|()| None)
                .map_err(refused),
            ("set-guest-only", [item]) => model
                .set_guest_only(item, true)
                .map(|()| None)
                .map_err(refused),
            ("empty-team-set", []) => {
                let team: Vec<String> = model.with(|m| m.team_visible_ids());
                for item in &team {
                    model.delete(item).map_err(refused)?;
                }
                Ok(None)
            }
            ("partial-restore", [item, revision]) => model
                .restore_item_to(item, revision)
                .map(|()| None)
                .map_err(refused),
            ("whole-log-restore", []) => {
                // Back to the seeded log in a new epoch: every cursor
                // issued since is rewound (§6.1's 410).
                model.restore_whole(&self.0.initial);
                Ok(None)
            }
            ("rotate-begin", []) => {
                let Some((consumer, _)) = self.0.tokens.first() else {
                    return Err((409, "no consumer to rotate".to_owned()));
                };
                let mut tokens = self.0.tokens.clone();
                tokens.push((consumer.clone(), ROTATED_TOKEN.to_owned()));
                self.0.fake.set_tokens(tokens);
                Ok(Some(ROTATED_TOKEN.to_owned()))
            }
            ("rotate-retire", []) => {
                // Phase 3 (§6.2): the consumer's original token is retired;
                // the rotated one and every other consumer's stay.
                let Some((consumer, original)) = self.0.tokens.first() else {
                    return Err((409, "no consumer to rotate".to_owned()));
                };
                let mut tokens: Vec<(String, String)> = self
                    .0
                    .tokens
                    .iter()
                    .filter(|(_, t)| t != original)
                    .cloned()
                    .collect();
                tokens.push((consumer.clone(), ROTATED_TOKEN.to_owned()));
                self.0.fake.set_tokens(tokens);
                Ok(None)
            }
            ("reformat-cell", [item, tab, row, col, format, revise]) => {
                let at = (number(row)?, number(col)?);
                let revise = revise_arg(revise)?;
                model
                    .with(|m| m.reformat_cell(item, tab, at, format_arg(format), revise))
                    .map(Some)
                    .map_err(refused)
            }
            ("reformat-column", [item, tab, col, format, revise]) => {
                let col = number(col)?;
                let revise = revise_arg(revise)?;
                model
                    .with(|m| m.reformat_column(item, tab, col, format_arg(format), revise))
                    .map(Some)
                    .map_err(refused)
            }
            ("set-cell", [item, tab, row, col, value]) => {
                let at = (number(row)?, number(col)?);
                model
                    .with(|m| m.set_cell(item, tab, at, value))
                    .map(Some)
                    .map_err(refused)
            }
            ("s6-fault", [knob, rest @ ..]) => {
                self.s6_fault(knob, rest)?;
                Ok(None)
            }
            _ => Err((
                404,
                "unknown action or wrong number of arguments".to_owned(),
            )),
        }
    }

    /// `s6-fault KNOB [ARG]`: one S6 knob on, or `off` for all of them.
    fn s6_fault(&self, knob: &str, rest: &[String]) -> Result<(), (u16, String)> {
        let faults = self.0.fake.faults();
        match (knob, rest) {
            ("off", []) => {
                faults.set_forced_s6(None);
                faults.set_malformed_s6(None);
                if faults.get().outage_only == Some(CallKind::S6) {
                    faults.set_outage_for(None, None);
                }
                if faults
                    .get()
                    .slow
                    .is_some_and(|s| s.only == Some(CallKind::S6))
                {
                    faults.set_slow(None);
                }
            }
            ("down", []) => faults.set_outage_for(Some(Outage::Status(503)), Some(CallKind::S6)),
            ("slow", [ms]) => faults.set_slow(Some(Slow {
                latency_ms: ms
                    .parse()
                    .map_err(|_| (409, "slow takes milliseconds".to_owned()))?,
                only: Some(CallKind::S6),
            })),
            ("stale", []) => faults.set_forced_s6(Some(ForcedS6::Stale)),
            ("non-numeric", []) => faults.set_forced_s6(Some(ForcedS6::NonNumeric)),
            ("malformed", [kind]) => faults.set_malformed_s6(Some(match kind.as_str() {
                "not-json" => MalformedS6::NotJson,
                "empty" => MalformedS6::Empty,
                "truncated" => MalformedS6::Truncated,
                "trailing-bytes" => MalformedS6::TrailingBytes,
                "unknown-type" => MalformedS6::UnknownType,
                "kind-mismatch" => MalformedS6::KindMismatch,
                "value-as-number" => MalformedS6::ValueAsNumber,
                "extra-field" => MalformedS6::ExtraField,
                _ => return Err((404, "no such malformed S6 answer".to_owned())),
            })),
            _ => return Err((404, "no such S6 fault".to_owned())),
        }
        Ok(())
    }
}

/// A 1-based row or column from a control argument.
fn number(arg: &str) -> Result<u32, (u16, String)> {
    arg.parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or((409, "rows and columns are 1-based numbers".to_owned()))
}

/// `General` is no format code at all (`sheet-body.schema.json`).
fn format_arg(format: &str) -> Option<&str> {
    (format != crate::fake::sheet::GENERAL).then_some(format)
}

/// `same` (in place, the revision unchanged) or `new` (a new revision).
fn revise_arg(revise: &str) -> Result<Revise, (u16, String)> {
    match revise {
        "same" => Ok(Revise::InPlace),
        "new" => Ok(Revise::New),
        _ => Err((409, "same or new".to_owned())),
    }
}

async fn control(
    State(controller): State<Controller>,
    Json(request): Json<ControlRequest>,
) -> (StatusCode, Json<serde_json::Value>) {
    match controller.apply(&request.action, &request.args) {
        Ok(value) => (StatusCode::OK, Json(serde_json::json!({ "value": value }))),
        Err((status, why)) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            Json(serde_json::json!({ "error": why })),
        ),
    }
}
