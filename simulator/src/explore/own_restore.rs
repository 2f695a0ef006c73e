//! memoria's own restore, drawn harder (issue 26, gate 10, §7.4): orders of uploads, re-uploads, deletions and a restore that reach the tombstone replay, an operator's copy of the whole data directory, a tombstone log rewound, short or another store's, and a snapshot bucket that lost or damaged a generation.
//!
//! Drawn from a generator of its own (the seed under another constant),
//! after every other drawing but seed 74's pair (which stays last, right
//! before the convergence rounds), so a seed that draws none of it is the
//! run it was before. Each part is drawn apart, and each adds its events at
//! the run's end (before a long provider outage, which stays last),
//! at no time of their own, memoria-owned documents only, all by the
//! world's first reader (a member), so every other event of the run is
//! unchanged:
//!
//! - [`FaultKind::RestoreOrders`] (half the worlds): two documents
//!   uploaded, a backup, then a scratch document uploaded and deleted (a
//!   tombstone the restored database never held: replay must go on past
//!   it), one of the two uploaded again under its name with other words (a
//!   newer revision: replay must delete the backup's older one) and
//!   deleted, the other deleted (on half of these worlds with a crash
//!   aimed at `snapshot:before-rename` of that deletion, `crash` then in
//!   the swarm, and the deletion
//!   asked again to settle it), memoria restored from the backup, and each
//!   of the three asked for by its tag (gate 10's cases
//!   `replay-continues-past-a-no-op-tombstone`,
//!   `replay-deletes-a-revision-the-backup-predates`).
//! - [`FaultKind::WholeBackup`] (half of those): that backup is the whole
//!   data directory, as an operator copies it, and memoria is configured
//!   as `memoria serve` reads its environment, the tombstone directory
//!   its default (`whole-data-directory-restore-keeps-the-deletion`).
//! - [`FaultKind::TombstoneLog`] (half the worlds): memoria started on its
//!   log rewound to the copy taken with a backup before a deletion, one
//!   entry short, or another store's log as far along, one to three of
//!   these, and on half of these worlds (a coin of its own, so the rest is
//!   drawn as before) another store's log one entry further along too, and
//!   on half (another coin of that generator) an empty log, as a lost
//!   tombstone directory leaves it (`rewound-tombstone-log-is-refused`).
//! - [`FaultKind::SnapshotBucket`] (half the worlds): the newest
//!   generation's blob deleted, or one byte of it flipped, memoria woken,
//!   and a document stored before it asked for
//!   (`missing-generation-rebuilds`, `damaged-generation-rebuilds`).
//!
//! What the oracle asks of them is `[safety:owned]` (a deleted document
//! never comes back, a stored one is found), `[safety:tombstones]` and
//! `[safety:retention]` (`crate::scenario`'s `tomb.rs`).

use rand::seq::SliceRandom as _;
use rand::{Rng as _, SeedableRng as _};

use super::{FaultKind, Swarm, surface};
use crate::scenario::{Event, owned_tag};

/// The share of worlds that draw each part.
pub const ORDERS_SHARE: f64 = 0.5;
/// The share of worlds with the orders whose backup is the whole directory.
pub const WHOLE_SHARE: f64 = 0.5;
/// The share of worlds that start memoria on a log not its own.
pub const LOG_SHARE: f64 = 0.5;
/// The share of worlds whose snapshot bucket loses or damages a generation.
pub const BUCKET_SHARE: f64 = 0.5;
/// The faults of the log, as `tombstone-log`'s `how` names them.
const LOG_FAULTS: [&str; 3] = ["rewound", "behind-one", "foreign"];
/// The share of worlds starting memoria on a log not its own that also
/// start it on another store's log one entry further along than its own
/// (`foreign-ahead`: past the database's sequence, so it reads as a
/// restore). Drawn from a generator of its own, added after the others.
pub const FOREIGN_AHEAD_SHARE: f64 = 0.5;
/// The share of the same worlds (those starting memoria on a log not its
/// own) that also start it on an empty log (`missing`: the tombstone
/// directory lost, which the next open leaves empty), whether or not they
/// drew `foreign-ahead`. Drawn from the same generator, after its coin.
pub const MISSING_SHARE: f64 = 0.5;
/// The faults of the bucket, as `snapshot-bucket`'s `how` names them.
const BUCKET_FAULTS: [&str; 2] = ["generation-deleted", "blob-damaged"];

/// Adds the parts drawn to `swarm` and their events at the end of
/// `events` (which does not yet hold `expect-converged`); `reader` does
/// and asks everything.
pub(super) fn add(seed: u64, swarm: &mut Swarm, reader: &str, events: &mut Vec<Event>) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x746f_6d62_7374_6f6e);
    let orders = rng.gen_bool(ORDERS_SHARE);
    let whole = orders && rng.gen_bool(WHOLE_SHARE);
    let log = rng.gen_bool(LOG_SHARE);
    let bucket = rng.gen_bool(BUCKET_SHARE);
    let mut out = vec![];
    let upload = |doc: &str, words: &str| Event::Upload {
        at_ms: None,
        reader: reader.to_string(),
        doc: doc.to_string(),
        words: words.to_string(),
        sections: None,
    };
    let delete = |doc: &str| Event::DeleteUpload {
        at_ms: None,
        reader: reader.to_string(),
        doc: doc.to_string(),
    };
    let ask = |rng: &mut rand::rngs::StdRng, doc: &str| Event::Query {
        at_ms: None,
        reader: reader.to_string(),
        q: owned_tag(doc),
        expect: None,
        surface: surface(rng),
    };
    // The backup a rewound log is taken from: before some deletion.
    let mut rewind_from = None;
    if orders {
        swarm.0.push((FaultKind::RestoreOrders, 1));
        if whole {
            swarm.0.push((FaultKind::WholeBackup, 1));
        }
        out.push(upload("tmk", "rota"));
        out.push(upload("tmr", "budget"));
        out.push(Event::MemoriaBackup {
            at_ms: None,
            name: "t0".into(),
            whole,
        });
        out.push(upload("tms", "hiring"));
        out.push(ask(&mut rng, "tms"));
        out.push(delete("tms"));
        out.push(upload("tmr", "invoice"));
        out.push(ask(&mut rng, "tmr"));
        out.push(delete("tmr"));
        if rng.gen_bool(0.5) {
            if !swarm.0.iter().any(|(k, _)| *k == FaultKind::Crash) {
                swarm.0.push((FaultKind::Crash, 1));
            }
            out.push(Event::Crash {
                at_ms: None,
                point: "snapshot:before-rename".into(),
            });
            out.push(delete("tmk"));
        }
        out.push(delete("tmk"));
        out.push(Event::MemoriaRestore {
            at_ms: None,
            name: "t0".into(),
        });
        for doc in ["tmk", "tmr", "tms"] {
            out.push(ask(&mut rng, doc));
        }
        rewind_from = Some("t0");
    }
    if log {
        let mut hows: Vec<&str> = LOG_FAULTS
            .iter()
            .copied()
            .filter(|_| rng.gen_bool(0.5))
            .collect();
        if hows.is_empty() {
            hows.push(LOG_FAULTS.choose(&mut rng).copied().unwrap_or("rewound"));
        }
        let mut ahead = rand::rngs::StdRng::seed_from_u64(seed ^ 0x666f_7265_6967_6e2b);
        if ahead.gen_bool(FOREIGN_AHEAD_SHARE) {
            hows.push("foreign-ahead");
        }
        if ahead.gen_bool(MISSING_SHARE) {
            hows.push("missing");
        }
        swarm.0.push((FaultKind::TombstoneLog, hows.len() as u32));
        if rewind_from.is_none() {
            // A backup, then a deletion after it: the log is ahead of the copy.
            out.push(Event::MemoriaBackup {
                at_ms: None,
                name: "t1".into(),
                whole: false,
            });
            out.push(upload("tmx", "backlog"));
            out.push(delete("tmx"));
            rewind_from = Some("t1");
        }
        for how in hows {
            out.push(Event::TombstoneLog {
                at_ms: None,
                how: how.into(),
                from: (how == "rewound").then(|| rewind_from.unwrap_or("t1").to_string()),
            });
        }
    }
    if bucket {
        let how = *BUCKET_FAULTS.choose(&mut rng).unwrap_or(&BUCKET_FAULTS[0]);
        swarm.0.push((FaultKind::SnapshotBucket, 1));
        out.push(upload("tml", "release"));
        out.push(Event::SnapshotBucket {
            at_ms: None,
            how: how.into(),
        });
        out.push(ask(&mut rng, "tml"));
    }
    // Before a long provider outage, which `provider.rs` keeps last: its
    // failing state, the upload into it, a restart perhaps, its end.
    let at = events
        .iter()
        .position(|e| matches!(e, Event::Upload { doc, .. } if doc == "upoutage"))
        .map_or(events.len(), |i| i.saturating_sub(1));
    events.splice(at..at, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_that_draws_none_of_it_adds_nothing_and_one_that_does_names_each_part_in_its_swarm() {
        let ours = [
            FaultKind::RestoreOrders,
            FaultKind::WholeBackup,
            FaultKind::TombstoneLog,
            FaultKind::SnapshotBucket,
        ];
        let mut drawn = [0usize; 4];
        for seed in 0..40 {
            let x = super::super::generate(seed);
            let events = &x.scenario.events;
            for (i, k) in ours.iter().enumerate() {
                drawn[i] += usize::from(x.swarm.0.iter().any(|(s, _)| s == k));
            }
            let logs = events
                .iter()
                .filter(|e| matches!(e, Event::TombstoneLog { .. }))
                .count() as u32;
            let weight = x
                .swarm
                .0
                .iter()
                .find(|(k, _)| *k == FaultKind::TombstoneLog)
                .map_or(0, |(_, w)| *w);
            assert_eq!(logs, weight, "seed {seed}");
            let whole = events
                .iter()
                .any(|e| matches!(e, Event::MemoriaBackup { whole: true, .. }));
            assert_eq!(
                whole,
                x.swarm.0.iter().any(|(k, _)| *k == FaultKind::WholeBackup),
                "seed {seed}"
            );
            // A rewound log names a backup taken before it.
            for (i, e) in events.iter().enumerate() {
                if let Event::TombstoneLog { from: Some(b), .. } = e {
                    assert!(
                        events[..i]
                            .iter()
                            .any(|x| matches!(x, Event::MemoriaBackup { name, .. } if name == b)),
                        "seed {seed}: {b}"
                    );
                }
            }
            let ours_on = x.swarm.0.iter().any(|(k, _)| ours.contains(k));
            let ours_drawn = events.iter().any(|e| match e {
                Event::Upload { doc, .. } | Event::DeleteUpload { doc, .. } => {
                    doc.starts_with("tm")
                }
                Event::TombstoneLog { .. } | Event::SnapshotBucket { .. } => true,
                _ => false,
            });
            assert_eq!(ours_on, ours_drawn, "seed {seed}");
            let text = super::super::to_toml(&x.scenario).expect("writes");
            let back = crate::scenario::parse(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            assert_eq!(back.events.len(), events.len(), "seed {seed}");
        }
        assert!(drawn.iter().all(|n| *n > 0), "{drawn:?}");
    }
}
