//! What the simulated gates share: stocking fakes with text and running a world (pages are read with [`super::page::Page`]).
//!
//! A scenario reports a failed claim as [`fail`]'s string, which
//! [`run_world`] turns back into a [`Failure`] carrying the seed, so every
//! simulated gate fails with expected and actual like every other.

use std::future::Future;

use memoria_simulator::{Memoria, Rung, World, load_corpus};

use crate::Failure;

const SEP: char = '\u{1f}';

/// Encodes a failed claim for [`run_world`] to decode.
pub fn fail(expected: impl AsRef<str>, actual: impl AsRef<str>) -> String {
    format!("{}{SEP}{}", expected.as_ref(), actual.as_ref())
}

/// `Err(fail(..))` unless `cond` holds.
///
/// # Errors
/// The encoded failure.
pub fn check(cond: bool, expected: impl AsRef<str>, actual: impl AsRef<str>) -> Result<(), String> {
    if cond {
        Ok(())
    } else {
        Err(fail(expected, actual))
    }
}

/// Runs `scenario` in `world` and maps its outcome to a gate verdict.
///
/// # Errors
/// The scenario's [`Failure`], or one naming the seed if the simulation
/// itself failed.
pub fn run_world<F, Fut>(world: &World, scenario: F) -> Result<(), Failure>
where
    F: FnOnce(Memoria) -> Fut + 'static,
    Fut: Future<Output = Result<(), String>> + 'static,
{
    world.run(scenario).map_err(verdict)
}

/// Runs `scenario` against one memoria per named consumer in `world`
/// ([`World::run_consumers`]) and maps its outcome as [`run_world`] does.
///
/// # Errors
/// As [`run_world`].
pub fn run_consumers<F, Fut>(world: &World, names: &[&str], scenario: F) -> Result<(), Failure>
where
    F: FnOnce(Vec<Memoria>) -> Fut + 'static,
    Fut: Future<Output = Result<(), String>> + 'static,
{
    world.run_consumers(names, scenario).map_err(verdict)
}

/// A failed run as a gate verdict: the scenario's encoded claim, or the
/// simulation's own failure naming the seed.
fn verdict(e: memoria_simulator::SimFailure) -> Failure {
    match e.message.split_once(SEP) {
        Some((expected, actual)) => Failure::new(expected, actual),
        None => Failure::new(
            "the simulated run completes",
            format!("seed {}: {}", e.seed, e.message),
        ),
    }
}

/// Stocks `app`'s fake with `n` team-visible items of real text from the
/// fetched public corpus (or the project's fixtures when it is absent), ids
/// `<app>-c<i>`. Returns how many were added.
///
/// # Panics
/// If the fake refuses an item: a scenario bug.
pub fn stock(world: &World, app: &str, n: usize) -> usize {
    let items = load_corpus(n).items;
    let fake = world.fake(app);
    fake.model().with(|m| {
        for (i, (title, body)) in items.iter().enumerate() {
            m.add_item(&format!("{app}-c{i}"), Rung::Team, title, body)
                .expect("a corpus item");
        }
    });
    items.len()
}

/// A short Markdown body carrying `canary` and a `tag` word next to it, so
/// a snippet around the canary shows the tag.
pub fn tagged_body(canary: &str, tag: &str) -> String {
    format!("# Notes {tag}\n\nThe {canary} figure is {tag} this quarter.\n")
}
