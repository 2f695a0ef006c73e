//! The explorer's connectors (issue 26, gate 7): some worlds hold a local folder and/or a paged source that memoria enumerates on its schedule, with files and items created, edited and removed over the run, and spells of the enumeration faults of §5.1.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing, so a seed that draws no connector is the
//! run it was before connectors. A world holds the folder with
//! probability [`FOLDER_SHARE`] and the paged source with
//! [`PAGED_SHARE`], independently. Each connector switches on each of its
//! fault kinds with probability one half, each with a weight of 1 to 3
//! spells (swarm testing; the kinds are printed with the seed):
//!
//! - folder: `folder-root-gone` (the root renamed away, an unmounted
//!   drive), `folder-unreadable` (a subfolder that cannot be read);
//! - paged: `paged-hang` (a page past the deadline), `paged-429`,
//!   `paged-401`, `paged-403` (a collection), `paged-partial-page` (the last
//!   page without its end marker), `paged-over-cap` (a listing past the
//!   cap).
//!
//! A spell starts somewhere after the first quarter of the run (when
//! memoria holds items) and most end after [`SPELL_EVENTS`] events;
//! the rest at `expect-converged`, which stops every fault. The source
//! starts with 2 to 5 items, and [`CHANGES`] edits, creations and removals
//! are slipped between the run's events; a connector never holds more than
//! [`CONNECTOR_ITEMS_MAX`] items over a run. What the oracle judges is
//! `crate::scenario`'s `connector.rs`.

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm};
use crate::scenario::{CONNECTOR_EVERY_MS_DEFAULT, Event, letters};

/// The share of worlds holding a connector folder.
pub const FOLDER_SHARE: f64 = 0.35;
/// The share of worlds holding a paged connector.
pub const PAGED_SHARE: f64 = 0.35;
/// Edits, creations and removals over a run, per connector, inclusive.
pub const CHANGES: std::ops::RangeInclusive<usize> = 6..=14;
/// Items a connector holds over a run at most (created, live or removed):
/// they fit one search page with the other connector's.
pub const CONNECTOR_ITEMS_MAX: usize = 10;
/// The events a spell spans, when it ends before the faults stop: at
/// least about one enumeration's interval (an event is about a simulated
/// second apart), so most spells cover one.
const SPELL_EVENTS: std::ops::RangeInclusive<usize> = 30..=120;
/// The share of spells that end in the run, not only when the faults stop.
const ENDED_SHARE: f64 = 0.7;
/// Words an item's body starts with: the connectors' own, never asked
/// by another event.
const WORDS: [&str; 3] = ["zmemo", "znotes", "zplan"];

/// Adds the connectors of `seed`'s world to `events` and their fault kinds
/// to `swarm`; returns the scenario's `connector_every_ms` and
/// `paged_page_size` (`None` for a world without them).
pub(super) fn add(
    seed: u64,
    swarm: &mut Swarm,
    events: &mut Vec<Event>,
) -> (Option<u64>, Option<usize>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x636f_6e6e_6563_7421);
    let folder = rng.gen_bool(FOLDER_SHARE);
    let paged = rng.gen_bool(PAGED_SHARE);
    if !folder && !paged {
        return (None, None);
    }
    let mut page_size = None;
    for (name, on) in [("folder", folder), ("paged", paged)] {
        if !on {
            continue;
        }
        let kinds: &[FaultKind] = if name == "folder" {
            &[FaultKind::FolderRootGone, FaultKind::FolderUnreadable]
        } else {
            page_size = Some(rng.gen_range(1..=3usize));
            &[
                FaultKind::PagedHang,
                FaultKind::PagedRateLimit,
                FaultKind::PagedUnauthorized,
                FaultKind::PagedForbidden,
                FaultKind::PagedPartialPage,
                FaultKind::PagedOverCap,
            ]
        };
        let mut on_kinds = vec![];
        for k in kinds {
            if rng.gen_bool(0.5) {
                let weight = rng.gen_range(1..=3u32);
                swarm.0.push((*k, weight));
                on_kinds.push((*k, weight));
            }
        }
        // The items: a few first, then changes slipped in anywhere.
        let letter = if name == "folder" { "zf" } else { "zp" };
        let place = |rng: &mut rand::rngs::StdRng, n: usize| -> String {
            let stem = format!("{letter}{}", letters(n));
            match rng.gen_range(0..3) {
                0 => stem,
                1 => format!("{}1/{stem}", if name == "folder" { "s" } else { "c" }),
                _ => format!("{}2/{stem}", if name == "folder" { "s" } else { "c" }),
            }
        };
        let mut live: Vec<String> = vec![];
        let mut made = 0usize;
        let mut changes = vec![];
        for _ in 0..rng.gen_range(2..=5) {
            let item = place(&mut rng, made);
            made += 1;
            live.push(item.clone());
            changes.push(put(name, &item, &mut rng));
        }
        let initial = changes.len();
        for _ in 0..rng.gen_range(CHANGES) {
            let change = match rng.gen_range(0..4) {
                0 if made < CONNECTOR_ITEMS_MAX => {
                    let item = place(&mut rng, made);
                    made += 1;
                    live.push(item.clone());
                    put(name, &item, &mut rng)
                }
                1 if live.len() > 1 => {
                    let i = rng.gen_range(0..live.len());
                    Event::ConnectorRemove {
                        at_ms: None,
                        connector: name.into(),
                        item: live.remove(i),
                    }
                }
                _ => {
                    let item = live.choose(&mut rng).cloned().unwrap_or_default();
                    put(name, &item, &mut rng)
                }
            };
            changes.push(change);
        }
        // The first items land right after the warm-up, in order; each
        // later change at a place drawn over the whole run, in order.
        let later = changes.split_off(initial);
        for (i, change) in changes.into_iter().enumerate() {
            events.insert((1 + i).min(events.len()), change);
        }
        let end = end_of_run(events);
        let mut places: Vec<usize> = later
            .iter()
            .map(|_| rng.gen_range(initial + 1..=end.max(initial + 1)))
            .collect();
        places.sort_unstable();
        // From the last place back, so each insert leaves the earlier places.
        for (place, change) in places.into_iter().zip(later).rev() {
            let at = fit(events, place);
            events.insert(at, change);
        }
        for (kind, weight) in on_kinds {
            for _ in 0..weight {
                let fault = match kind {
                    FaultKind::FolderRootGone => "root-gone".to_string(),
                    FaultKind::FolderUnreadable => format!("unreadable:s{}", rng.gen_range(1..=2)),
                    FaultKind::PagedHang => format!("hang:{}", rng.gen_range(0..=2)),
                    FaultKind::PagedRateLimit => format!("rate-limit:{}", rng.gen_range(0..=2)),
                    FaultKind::PagedUnauthorized => "credential-expired".into(),
                    FaultKind::PagedForbidden => format!("forbidden:c{}", rng.gen_range(1..=2)),
                    FaultKind::PagedPartialPage => "partial-last-page".into(),
                    _ => "over-cap".into(),
                };
                let end_of = end_of_run(events);
                let start = fit(events, rng.gen_range(end_of / 4..=end_of).max(1));
                events.insert(
                    start,
                    Event::ConnectorFault {
                        at_ms: None,
                        connector: name.into(),
                        mode: fault,
                    },
                );
                if rng.gen_bool(ENDED_SHARE) {
                    let end = fit(
                        events,
                        (start + rng.gen_range(SPELL_EVENTS)).min(end_of_run(events)),
                    );
                    events.insert(
                        end.max(start + 1),
                        Event::ConnectorFault {
                            at_ms: None,
                            connector: name.into(),
                            mode: "clear".into(),
                        },
                    );
                }
            }
        }
    }
    (Some(CONNECTOR_EVERY_MS_DEFAULT), page_size)
}

/// Where the run's own events end for this drawing: before an AI-on
/// world's long provider outage, which must stay the run's end
/// (`provider.rs`), else after the last event.
fn end_of_run(events: &[Event]) -> usize {
    let outage = events
        .iter()
        .position(|e| matches!(e, Event::Upload { doc, .. } if doc == "upoutage"));
    match outage {
        Some(p) => events[..p]
            .iter()
            .rposition(|e| matches!(e, Event::Provider { .. }))
            .unwrap_or(p),
        None => events.len(),
    }
}

/// `place`, moved before a crash it would follow: a crash aims at the
/// upload or deletion right after it (`crash.rs`).
fn fit(events: &[Event], place: usize) -> usize {
    let mut at = place.clamp(1, events.len());
    while at > 1 && matches!(events.get(at - 1), Some(Event::Crash { .. })) {
        at -= 1;
    }
    at
}

fn put(connector: &str, item: &str, rng: &mut rand::rngs::StdRng) -> Event {
    Event::ConnectorPut {
        at_ms: None,
        connector: connector.into(),
        item: item.into(),
        words: WORDS.choose(rng).unwrap_or(&"zmemo").to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_without_connectors_draws_no_connector_event_and_one_with_them_writes_a_file_that_replays()
     {
        let (mut with, mut without) = (0, 0);
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let events = x
                .scenario
                .events
                .iter()
                .filter(|e| {
                    matches!(
                        e,
                        Event::ConnectorPut { .. }
                            | Event::ConnectorRemove { .. }
                            | Event::ConnectorFault { .. }
                    )
                })
                .count();
            if x.scenario.connector_every_ms.is_some() {
                assert!(events > 0, "seed {seed}");
                with += 1;
                let text = super::super::to_toml(&x.scenario).expect("writes");
                let back = crate::scenario::parse(&text)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
                assert_eq!(back.connector_every_ms, x.scenario.connector_every_ms);
            } else {
                assert_eq!(events, 0, "seed {seed}");
                without += 1;
            }
        }
        assert!(with > 0 && without > 0, "{with} with, {without} without");
    }
}
