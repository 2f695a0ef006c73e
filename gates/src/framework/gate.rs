//! What a gate is: a numbered claim with its spec sections, a requirement and cases, each case one body that ends in a verdict.

use super::ctx::Ctx;

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
    /// GATES.md's own words for this gate, verbatim: the cell of the row
    /// that names it (gates 35 to 37 share one row; gate 40 quotes the
    /// three brief checks it holds). `gates/tests/tidy.rs` compares them
    /// with `../shared/spec/GATES.md` wherever that file is found.
    pub gates_md: &'static [&'static str],
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

/// Why a case failed: what it expected and what it saw, never content.
/// The conformance kit's own type (`memoria-kit`), so a kit case and a gate
/// case fail alike and the harness holds one definition.
pub use memoria_kit::Failure;

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

/// The outcome of one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// The claim held.
    Pass,
    /// The claim did not hold.
    Fail(Failure),
}
