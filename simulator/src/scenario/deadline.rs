//! The oracle's judge of §6.5's availability rules on every question: one round of concurrent S2 calls, and no sibling waited for past its deadline.
//!
//! §6.5: "Deadline: 800 ms per sibling, all siblings called concurrently.
//! One page of results is one round of calls, so the page's floor is the
//! slowest sibling, not their sum." Gate 23 holds this on two fixtures;
//! here it is judged on whatever the explorer draws (slow siblings at and
//! past the deadline, cold ones, hangs), from the fakes' own record of when
//! each call arrived, never from memoria's internals:
//!
//! - **One round.** Every S2 call memoria makes while answering one
//!   question arrives within [`S2_ROUND_SPREAD_MS_MAX`] of the first. A
//!   client that asks the siblings one by one, two at a time, or asks one
//!   again after its deadline, makes a second round that arrives a
//!   sibling's latency later.
//! - **The deadline.** The answer arrives at most [`SIBLING_DEADLINE_MS`]
//!   plus [`ROUND_OVERHEAD_MS_MAX`] after the round's first S2 call, unless
//!   the question also needed an S6 call (§8.7's numeric answer, a second
//!   round of its own after the ruling): then that later round is judged
//!   from its own first call. A client that waits for a slow sibling past
//!   the deadline answers late.
//!
//! Both are `[safety:deadline]`. A question with no S2 call (nothing from a
//! sibling to rule) is not judged. With AI on, a question the answer model
//! was called for is judged by the first rule only: the model's call
//! follows the ruling under its own deadline (§8.4, §8.9), and the stub
//! provider does not record when a call arrived.

use crate::fake::trace::{CallKind, TraceEvent};

use super::checks::Check;

/// The invariant's name, first in each failed check's text.
pub const SAFETY_DEADLINE: &str = "[safety:deadline]";

/// The per-sibling deadline, in ms (§6.5). Stated here, not read from the
/// reference, so a change to the reference's constant is one the oracle sees.
pub const SIBLING_DEADLINE_MS: u64 = 800;

/// What an answer may add to its last round's deadline, in simulated ms:
/// the network's hops to the browser, the ranking and the render (gate 23's
/// `PAGE_OVERHEAD_MS_MAX`).
pub const ROUND_OVERHEAD_MS_MAX: u64 = 100;

/// The most the S2 calls of one question may be apart on arrival, in
/// simulated ms: "all siblings called concurrently" (§6.5; gate 23's
/// `S2_ARRIVAL_SPREAD_MS_MAX`).
pub const S2_ROUND_SPREAD_MS_MAX: u64 = 20;

/// Judges one question answered between `start_ms` and `end_ms` (simulated
/// ms since the run started, the fakes' trace's clock) against the sibling
/// calls in `window` that `caller` made meanwhile; `chatted` when the answer
/// model was called meanwhile (the deadline rule is then not judged).
/// Returns only failed checks.
pub(super) fn judge_deadline(
    window: &[TraceEvent],
    caller: &str,
    start_ms: u64,
    end_ms: u64,
    chatted: bool,
) -> Vec<Check> {
    let of = |kind: CallKind| -> Vec<&TraceEvent> {
        window
            .iter()
            .filter(|e| e.call == kind && e.caller == caller && e.at_ms >= start_ms)
            .collect()
    };
    let s2 = of(CallKind::S2);
    let Some(first) = s2.iter().map(|e| e.at_ms).min() else {
        return vec![];
    };
    let mut out = vec![];
    if let Some(late) = s2.iter().find(|e| e.at_ms > first + S2_ROUND_SPREAD_MS_MAX) {
        out.push(Check {
            expected: format!(
                "{SAFETY_DEADLINE} one question is one round of S2 calls, every one within {S2_ROUND_SPREAD_MS_MAX} ms of the first (§6.5)"
            ),
            actual: format!(
                "{} S2 calls; one to {} arrived {} ms after the first",
                s2.len(),
                e_app(late),
                late.at_ms - first
            ),
            ok: false,
        });
    }
    // The last round's first call: S6 follows the ruling (§8.7).
    let round = of(CallKind::S6)
        .iter()
        .map(|e| e.at_ms)
        .filter(|&at| at > first)
        .min()
        .unwrap_or(first);
    let bound = SIBLING_DEADLINE_MS + ROUND_OVERHEAD_MS_MAX;
    if !chatted && end_ms > round + bound {
        out.push(Check {
            expected: format!(
                "{SAFETY_DEADLINE} the answer arrives within {bound} ms of its last round's first call: no sibling is waited for past its {SIBLING_DEADLINE_MS} ms deadline (§6.5)"
            ),
            actual: format!("{} ms after it", end_ms - round),
            ok: false,
        });
    }
    out
}

/// The app label of a call's sibling (`acme.sheets.oficina.works` → `sheets`).
fn e_app(e: &TraceEvent) -> &str {
    e.callee.split('.').nth(1).unwrap_or(&e.callee)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::trace::CallDetail;

    fn call(kind: CallKind, app: &str, at_ms: u64) -> TraceEvent {
        TraceEvent {
            at_ms,
            caller: "memoria".into(),
            epoch: Some(1),
            callee: format!("acme.{app}.oficina.works"),
            call: kind,
            status: Some(200),
            faults: vec![],
            detail: CallDetail::NotServed,
        }
    }

    /// (what, calls as (kind, app, arrival ms), start ms, end ms, failures).
    type Row<'a> = (&'a str, &'a [(CallKind, &'a str, u64)], u64, u64, usize);

    #[test]
    fn each_row_of_the_table_is_judged_as_it_says() {
        use CallKind::{S2, S6};
        let rows: &[Row] = &[
            ("no S2 call: not judged", &[], 0, 9_000, 0),
            (
                "one round, answered at the deadline",
                &[(S2, "sheets", 10), (S2, "docs", 12)],
                0,
                910,
                0,
            ),
            (
                "one round, answered past it",
                &[(S2, "sheets", 10), (S2, "docs", 12)],
                0,
                911,
                1,
            ),
            (
                "asked one by one",
                &[(S2, "sheets", 10), (S2, "docs", 320)],
                0,
                700,
                1,
            ),
            (
                "asked again after the deadline, and late",
                &[(S2, "sheets", 10), (S2, "sheets", 810)],
                0,
                1_620,
                2,
            ),
            (
                "an S6 round after the ruling",
                &[(S2, "sheets", 10), (S6, "sheets", 400)],
                0,
                1_300,
                0,
            ),
            (
                "an S6 round, answered past its deadline",
                &[(S2, "sheets", 10), (S6, "sheets", 400)],
                0,
                1_301,
                1,
            ),
            (
                "calls before the question are not its own",
                &[(S2, "sheets", 5), (S2, "docs", 500)],
                400,
                1_400,
                0,
            ),
        ];
        for (what, calls, start, end, failures) in rows {
            let window: Vec<TraceEvent> = calls.iter().map(|(k, a, at)| call(*k, a, *at)).collect();
            let got = judge_deadline(&window, "memoria", *start, *end, false);
            assert_eq!(got.len(), *failures, "{what}: {got:?}");
            assert!(
                got.iter()
                    .all(|c| !c.ok && c.expected.starts_with(SAFETY_DEADLINE))
            );
        }
        // The answer model called: only the round is judged.
        let late = [call(S2, "sheets", 10)];
        assert!(judge_deadline(&late, "memoria", 0, 5_000, true).is_empty());
        let two = [call(S2, "sheets", 10), call(S2, "docs", 320)];
        assert_eq!(judge_deadline(&two, "memoria", 0, 400, true).len(), 1);
    }
}
