//! Every registered gate case as one `cargo test` trial, read from the registry: the same body the `memoria-harness` CLI runs.
//!
//! This target has `harness = false`: `libtest-mimic` gives it libtest's
//! command line and output, and the trials are built from
//! [`memoria_gates::registry`] at run time, so a case registered in
//! `src/gates/mod.rs` is a test with no second list to keep in step.
//!
//! **Names.** A trial is named by its case id, `6/document-page-values`:
//! the one name the CLI (`memoria-harness run 6/document-page-values`),
//! the replay line, JUnit reports and the mutations' `case:` headers already
//! use, so a name read in one place can be pasted into any other. The id's
//! slug is a phrase of the claim ("27/docs-fill-the-page"); the sentence is
//! the case's description, which `memoria-harness list` prints.
//!
//! **Filtering.** `cargo test -p memoria-gates --test gates -- 6/` runs gate
//! 6's cases and not gate 26's: a filter matches where it starts the id or
//! follows a `/` or `-` in it ([`memoria_gates::filter_picks`]), so
//! `-- document-page` picks every document-page case. `--exact ID` runs one
//! case, `--skip` and `--list` behave as libtest's do.
//!
//! **Seeds.** One seed drives the whole run: `MEMORIA_SEED=N` fixes it,
//! else it is random. Each case draws its own stream from the seed and its
//! id, so the subset a filter picks never changes a case's choices. A
//! failure prints the seed and the exact replay command, for the CLI and
//! for this target.

use libtest_mimic::{Arguments, Failed, Trial};
use memoria_gates::{check_case, filter_picks, registry, seed_from_env};

fn main() {
    let mut args = Arguments::from_args();
    // libtest-mimic matches substrings; `--exact` it may keep, the rest is ours.
    let filter = if args.exact { None } else { args.filter.take() };
    let seed = seed_from_env();
    let cases: Vec<&'static str> = registry()
        .iter()
        .flat_map(|g| g.cases.iter().map(|c| c.id))
        .collect();
    assert!(!cases.is_empty(), "the registry holds no case");
    let picked: Vec<&'static str> = cases
        .iter()
        .copied()
        .filter(|id| filter.as_deref().is_none_or(|f| filter_picks(f, id)))
        .collect();
    if let Some(f) = &filter
        && !args.list
    {
        eprintln!(
            "filter {f:?} picks {} of {} gate cases",
            picked.len(),
            cases.len()
        );
    }
    let trials = picked
        .into_iter()
        .map(|id| {
            Trial::test(id, move || {
                check_case(id, seed).map_err(|report| {
                    Failed::from(format!(
                        "{report}\n    or: MEMORIA_SEED={seed} cargo test -p memoria-gates --test gates -- --exact {id}"
                    ))
                })
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
