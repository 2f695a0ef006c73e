//! The numbered gates of memoria-design.md §10, each an executable claim with stable case ids.
//!
//! A gate is a claim about the world, not a test that happens to pass. Each
//! one lives in its own file under `src/gates/` named after its number and
//! subject (`g01_plaintext_grep.rs`), and carries its id, title, the spec
//! sections it holds, a one-paragraph requirement, and its cases. Each case
//! has a stable id (`1/database-and-wal`), a description of what the harness
//! does, and one body: the same function runs under `cargo test`
//! (`tests/gates.rs`) and from the `memoria-harness` CLI.
//!
//! Ids follow `shared/spec/GATES.md` and are never reused. A gate that
//! asserts an absence first asserts the presence that makes it meaningful,
//! and a count that failed is reported as a failure, never as zero.
//!
//! ```
//! let gate = memoria_gates::gate("26").expect("gate 26 is registered");
//! assert!(gate.cases.iter().any(|c| c.id == "26/sha256-absent-at-rest"));
//! ```

#![deny(missing_docs)]

pub mod conform;
pub mod gates;
pub mod mutants;
pub mod report;
pub mod select;
pub mod sim;
pub mod support;

use std::panic::AssertUnwindSafe;

/// A case's body: `Ok(())` when the claim holds, a [`Failure`] saying what was
/// expected and what was seen when it does not.
pub type CaseFn = fn(&mut Ctx) -> Result<(), Failure>;

/// One numbered gate.
#[derive(Debug)]
pub struct Gate {
    /// The gate's number as GATES.md gives it, e.g. `"17"`.
    pub id: &'static str,
    /// A short title.
    pub title: &'static str,
    /// The spec sections it holds, e.g. `["§10", "§9.1"]`.
    pub sections: &'static [&'static str],
    /// What MUST hold, in one paragraph.
    pub requirement: &'static str,
    /// Its cases.
    pub cases: &'static [Case],
}

/// One case of a gate.
#[derive(Debug)]
pub struct Case {
    /// Stable id: `<gate>/<slug>`.
    pub id: &'static str,
    /// What the harness does.
    pub desc: &'static str,
    /// The one body.
    pub run: CaseFn,
}

/// Why a case failed: what it expected and what it saw. Never content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What the claim required.
    pub expected: String,
    /// What the harness observed.
    pub actual: String,
}

impl Failure {
    /// Builds a failure.
    pub fn new(expected: impl Into<String>, actual: impl Into<String>) -> Failure {
        Failure {
            expected: expected.into(),
            actual: actual.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "expected: {}\n  actual: {}", self.expected, self.actual)
    }
}

/// Fails with `expected`/`actual` unless `cond` holds.
///
/// # Errors
/// The [`Failure`] when `cond` is false.
pub fn ensure(
    cond: bool,
    expected: impl Into<String>,
    actual: impl Into<String>,
) -> Result<(), Failure> {
    if cond {
        Ok(())
    } else {
        Err(Failure::new(expected, actual))
    }
}

/// What a case may use: the run's seed and a scratch directory of its own.
#[derive(Debug)]
pub struct Ctx {
    seed: u64,
    rng: rand::rngs::StdRng,
    scratch: tempfile::TempDir,
}

impl Ctx {
    /// A context for one case, driven by `seed`.
    ///
    /// # Panics
    /// If no temporary directory can be created: nothing can run then.
    pub fn new(seed: u64, case_id: &str) -> Ctx {
        use rand::SeedableRng as _;
        // Each case gets its own stream, so selecting cases never shifts another's choices.
        let mut mix = seed ^ 0x9e37_79b9_7f4a_7c15;
        for b in case_id.bytes() {
            mix = mix.rotate_left(5) ^ u64::from(b);
            mix = mix.wrapping_mul(0x100_0000_01b3);
        }
        Ctx {
            seed,
            rng: rand::rngs::StdRng::seed_from_u64(mix),
            scratch: tempfile::Builder::new()
                .prefix("memoria-gate-")
                .tempdir()
                .expect("a scratch directory"),
        }
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The case's random stream, derived from the seed and the case id.
    pub fn rng(&mut self) -> &mut rand::rngs::StdRng {
        &mut self.rng
    }

    /// The case's scratch root: every file the case makes lives under it.
    pub fn root(&self) -> &std::path::Path {
        self.scratch.path()
    }

    /// A fresh subdirectory of the case's scratch directory.
    ///
    /// # Panics
    /// If the directory cannot be created.
    pub fn dir(&self, name: &str) -> std::path::PathBuf {
        let p = self.scratch.path().join(name);
        std::fs::create_dir_all(&p).expect("scratch subdirectory");
        p
    }

    /// A canary word: lowercase consonants that no stemmer rewrites, unique
    /// per seed and case, [`CANARY_CHARS`] long. Grep for [`canary_tail`] too:
    /// FTS5 stores a term after its sorted neighbour with their shared prefix
    /// removed, so a plaintext index image holds only a canary's tail.
    pub fn canary(&mut self) -> String {
        use rand::Rng as _;
        const LETTERS: &[u8] = b"bcdfghjkmnpqrtvwxz";
        let tail: String = (0..CANARY_CHARS - 3)
            .map(|_| LETTERS[self.rng.gen_range(0..LETTERS.len())] as char)
            .collect();
        format!("qzv{tail}")
    }
}

/// Length of a canary word, in characters.
pub const CANARY_CHARS: usize = 17;
/// Length of the canary tail that is grepped as well, in characters. A
/// neighbouring term would have to share the first 7 random characters for
/// prefix compression to hide the tail: odds of 18^-4 per pair.
pub const CANARY_TAIL_CHARS: usize = 10;

/// The last [`CANARY_TAIL_CHARS`] characters of a canary.
pub fn canary_tail(canary: &str) -> &str {
    &canary[canary.len().saturating_sub(CANARY_TAIL_CHARS)..]
}

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The claim held.
    Pass,
    /// The claim did not hold.
    Fail(Failure),
}

/// Every registered gate, in id order.
pub fn registry() -> &'static [&'static Gate] {
    gates::ALL
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

/// The command that replays case `id` under `seed` from the CLI.
pub fn replay_command(id: &str, seed: u64) -> String {
    format!("cargo run -p memoria-gates --bin memoria-harness -- run {id} --seed {seed}")
}

/// Runs the case `id` under `seed`: what `tests/gates.rs` runs as one trial.
///
/// # Errors
/// A report naming the case, the seed, expected and actual, and the
/// [`replay_command`], if the case is unknown or fails.
pub fn check_case(id: &str, seed: u64) -> Result<(), String> {
    let (_, case) = case(id).ok_or_else(|| format!("no case {id} is registered"))?;
    match run_case(case, seed) {
        Status::Pass => Ok(()),
        Status::Fail(f) => Err(format!(
            "gate case {id} failed (seed {seed})\n  {f}\nreplay: {}",
            replay_command(id, seed)
        )),
    }
}

/// Runs the case `id` under the seed from [`support::SEED_ENV`] (else a
/// random one) and panics with [`check_case`]'s report if it fails.
///
/// # Panics
/// If the case is unknown or fails.
pub fn assert_case(id: &str) {
    if let Err(report) = check_case(id, support::seed_from_env()) {
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
