//! Running cases: finding a gate or case in the registry, running one body to a verdict under a seed, and the replay line a failure prints.

use std::panic::AssertUnwindSafe;

use super::ctx::Ctx;
use super::gate::{Case, Failure, Gate, Status};
use super::report::CaseReport;

/// Every registered gate, in id order.
pub fn registry() -> &'static [&'static Gate] {
    crate::gates::ALL
}

/// The gate with this id.
pub fn gate(id: &str) -> Option<&'static Gate> {
    registry().iter().copied().find(|g| g.id == id)
}

/// The case with this id, and its gate.
pub fn case(id: &str) -> Option<(&'static Gate, &'static Case)> {
    registry()
        .iter()
        .flat_map(|g| g.cases.iter().map(move |c| (*g, c)))
        .find(|(_, c)| c.id == id)
}

/// Runs one case under `seed`. A panic inside the body is a failure, not a crash.
pub fn run_case(case: &Case, seed: u64) -> Status {
    let mut ctx = Ctx::new(seed, case.id);
    match std::panic::catch_unwind(AssertUnwindSafe(|| (case.run)(&mut ctx))) {
        Ok(Ok(())) => Status::Pass,
        Ok(Err(f)) => Status::Fail(f),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".to_string());
            Status::Fail(Failure::new(
                "the case runs to a verdict",
                format!("it panicked: {msg}"),
            ))
        }
    }
}

/// The command that replays case `id` under `seed` from the CLI; an id
/// with a space in it (a suite gate's, `suite 5/…`) is quoted for the shell.
pub fn replay_command(id: &str, seed: u64) -> String {
    let id = if id.contains(' ') {
        format!("'{id}'")
    } else {
        id.to_string()
    };
    format!("cargo run -p memoria-gates --bin memoria-harness -- run {id} --seed {seed}")
}

/// Runs the case `id` under `seed`: what `tests/gates.rs` runs as one trial.
///
/// # Errors
/// A report naming the case, the seed, expected and actual, and the
/// [`replay_command`], if the case is unknown or fails.
pub fn check_case(id: &str, seed: u64) -> Result<(), String> {
    check_case_reported(id, seed).1
}

/// [`check_case`], with the case's [`CaseReport`] (its verdict and wall
/// time) beside the result; `None` if no case `id` is registered.
pub fn check_case_reported(id: &str, seed: u64) -> (Option<CaseReport>, Result<(), String>) {
    let Some((_, case)) = case(id) else {
        return (None, Err(format!("no case {id} is registered")));
    };
    let t0 = std::time::Instant::now();
    let status = run_case(case, seed);
    let time_ms = t0.elapsed().as_millis() as u64;
    let verdict = match &status {
        Status::Pass => Ok(()),
        Status::Fail(f) => Err(format!(
            "gate case {id} failed (seed {seed})\n  {f}\nreplay: {}",
            replay_command(id, seed)
        )),
    };
    (Some(CaseReport::of(case, status, time_ms)), verdict)
}

/// Runs the case `id` under the seed from [`SEED_ENV`](crate::SEED_ENV) (else a
/// random one) and panics with [`check_case`]'s report if it fails.
///
/// # Panics
/// If the case is unknown or fails.
pub fn assert_case(id: &str) {
    if let Err(report) = check_case(id, crate::rigs::support::seed_from_env()) {
        panic!("{report}");
    }
}

/// Whether a `cargo test --test gates` filter picks the case `id`: the
/// filter must occur in the id at its start or right after a `/` or `-`, so
/// `6/` picks gate 6 and not 26, and `document-page` picks every case whose
/// slug has those words. (libtest's own substring match cannot tell `6/`
/// from `26/`.)
pub fn filter_picks(filter: &str, id: &str) -> bool {
    id.match_indices(filter)
        .any(|(at, _)| at == 0 || id[..at].ends_with(['/', '-']))
}

#[cfg(test)]
mod tests {
    use super::filter_picks;

    #[test]
    fn a_gate_filter_picks_its_own_cases_and_not_a_longer_gate_id_ending_in_it() {
        assert!(filter_picks("6/", "6/document-page-values"));
        assert!(!filter_picks("6/", "26/sha256-absent-at-rest"));
        assert!(!filter_picks("6/", "16/anything"));
    }

    #[test]
    fn a_word_filter_picks_cases_whose_slug_has_the_word_and_not_inside_another_word() {
        assert!(filter_picks("document-page", "6/document-page-values"));
        assert!(filter_picks("values", "6/five-values"));
        assert!(filter_picks("sha256", "26/sha256-absent-at-rest"));
        assert!(!filter_picks("256", "26/sha256-absent-at-rest"));
    }
}
