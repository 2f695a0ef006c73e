//! Gate 10 (§10, §7.4): deletion survives a restore — a tombstone applied, a snapshot superseded, then a restore from before the delete must not serve the deleted passage.
//!
//! Size: over 800 lines because gate 10's cases share one rig (a data
//! directory, a delete, a backup to restore); the whole-directory cases
//! already live apart in `whole_directory.rs`.
//!
//! Every case works on a real data directory: two documents, each carrying
//! a seed-derived canary word, so "the deleted passage is not served" is a
//! search for a word that was searchable a moment before (presence before
//! absence), and "nothing matched" over a full corpus is told apart from a
//! correct deletion by the second document, which must still be found.
//!
//! A database restore is simulated the way an operator performs one: the
//! database file is checkpointed and copied aside (the backup), and later
//! copied back over the live file with its WAL and shared-memory files
//! removed. The tombstone log and the snapshot bucket are not restored: §7.4
//! keeps them apart from the database for exactly this reason.
//!
//! The restores of the whole data directory, a rewound tombstone log and
//! the re-announce a restore starts are `whole_directory.rs`'s cases, which
//! configure memoria as the `memoria` command reads its environment.
//!
//! Size: over 800 lines because gate 10's cases share one fixture (two
//! canaried documents, a hand clock, the backup and restore helpers); the
//! whole-directory cases live in their own file beside it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memoria::Admission;
use memoria::EgressMode;
use memoria::LexicalIndex;
use memoria::Sealer;
use memoria::snapshot::{self, BACKUP_RETENTION_WINDOW_S};
use memoria::{DB_FILE_NAME, NewDocument, TombstoneLog};
use memoria::{Instance, InstanceConfig, WakeKind};
use memoria_simulator::scenario::BACKUPS_KEPT_S;

use crate::rigs::clock::HandClock;
use crate::rigs::support::dek;
use crate::{Case, Ctx, Failure, Gate, ensure};

mod vector_race;
mod whole_directory;

/// The one owner every case searches as.
const OWNER: &str = "ana@example.org";
/// The clock's starting instant, unix seconds (2026-09-21).
const T0_S: i64 = 1_790_000_000;
/// How far from the end of a snapshot blob the damaged byte sits, in bytes:
/// inside the sealed image's authentication tag or ciphertext. Our choice.
const DAMAGED_BYTE_FROM_END: usize = 5;

/// Gate 10.
pub static GATE: Gate = Gate {
    id: "10",
    title: "Deletion survives a restore",
    gates_md: &["Deletion survives a restore (durable tombstone log, generations, retirement)"],
    sections: &["§10", "§7.4"],
    requirement: "A deletion is written to a durable tombstone log outside the database and is complete only once a superseding snapshot exists; a database restored from a backup taken before the deletion, woken with the prior snapshot generation or with no blob at all, replays the log before serving and never serves the deleted passage, and never serves an empty index over a full corpus; a generation a restorable backup could point at is not retired. The log lives outside the data directory, so restoring the whole data directory replays exactly the deletions after the restored database's sequence; a log that went backwards (rewound or missing) is refused loudly rather than served from; and a restore marks every known sibling for re-announce. A vector the provider returns after its chunk's document was deleted is stored nowhere: not sealed at rest, not in the dense matrix.",
    cases: &[
        Case {
            id: "10/tombstone-logged-and-snapshot-superseded",
            desc: "Two documents are searchable; delete one; require a line for it in the tombstone log file, a new snapshot generation whose header includes the tombstone, the deletion reported complete with none incomplete, the deleted canary gone and the other still found.",
            run: tombstone_logged_and_snapshot_superseded,
        },
        Case {
            id: "10/incomplete-until-a-superseding-snapshot",
            desc: "Block the snapshot directory and delete: the delete fails after the log append and the deletion is listed as incomplete; unblock, write a snapshot, and it is complete.",
            run: incomplete_until_a_superseding_snapshot,
        },
        Case {
            id: "10/restored-database-replays-the-log",
            desc: "Back the database up, delete, restore the backup file and wake: the wake report says one tombstone was replayed, the deleted passage is neither searchable nor openable, and the other document is.",
            run: restored_database_replays_the_log,
        },
        Case {
            id: "10/prior-generation-does-not-serve-the-deletion",
            desc: "Back up the database, delete, then restore both the database and the bucket to the prior generation (the blob from before the delete, shown to hold the passage): after waking, the in-memory index holds none of the deleted chunks and the passage is not served.",
            run: prior_generation_does_not_serve_the_deletion,
        },
        Case {
            id: "10/missing-generation-rebuilds",
            desc: "Restore a database that points at a generation whose blob is gone: the wake rebuilds (saying the generation is missing), never an empty index; the other document is found and the deleted one is not.",
            run: missing_generation_rebuilds,
        },
        Case {
            id: "10/retention-keeps-the-backup-window",
            desc: "Supersede a generation, advance the clock to one second inside the backup window and write again: the generation a backup could point at is still on disk; past the window it is retired and the newer ones stay.",
            run: retention_keeps_the_backup_window,
        },
        Case {
            id: "10/retention-outlasts-a-month-of-daily-backups",
            desc: "Supersede a generation, advance the clock 30 days (the daily backups kept 30 days that the backup window's own source names: the harness's literal `BACKUPS_KEPT_S`, which `[safety:retention]` holds memoria to too, not read from the reference) and write again: the superseded generation is still on disk, so a backup from the day before it was superseded still finds its index.",
            run: retention_outlasts_a_month_of_daily_backups,
        },
        Case {
            id: "10/retention-counts-from-the-superseding-write-with-vectors",
            desc: "With AI on, a generation and its dense blob are written, the clock passes one backup window and more, and a delete supersedes it: the generation is still on disk (its window runs from the write that superseded it, not from its own, nor from its dense blob's beside it).",
            run: retention_counts_from_the_superseding_write_with_vectors,
        },
        Case {
            id: "10/replay-deletes-a-revision-the-backup-predates",
            desc: "Back the database up, re-upload the doomed document (a new revision, still searchable), delete it, restore the backup (which holds the older revision) and wake: the replayed tombstone deletes the older revision too; the deleted passage is neither searchable nor openable, and the other document is.",
            run: replay_deletes_a_revision_the_backup_predates,
        },
        Case {
            id: "10/replay-continues-past-a-no-op-tombstone",
            desc: "Back the database up, then upload a scratch document (searchable) and delete it, and delete the doomed one: restored, the first tombstone names a document the backup never held and deletes nothing; replay goes on to the second, so the deleted passage is not served and the other document is.",
            run: replay_continues_past_a_no_op_tombstone,
        },
        Case {
            id: "10/damaged-generation-rebuilds",
            desc: "Damage the bytes of the current snapshot blob (it exists but does not open) and wake: the wake rebuilds, saying the generation cannot be opened, never an empty index; the index holds every live chunk and both documents are found.",
            run: damaged_generation_rebuilds,
        },
        Case {
            id: "10/restore-with-vectors-keeps-the-deletion",
            desc: "With AI on: 200 passages embedded and snapshotted; back the database up, delete 7 documents, then restore the database and the bucket to the prior generation (its dense blob shown to hold the deleted chunks' vectors) and wake: 7 tombstones replayed, the prior dense blob loaded (not rebuilt), and the woken matrix holds the 193 live vectors, each of unit norm, and none of the deleted.",
            run: restore_with_vectors_keeps_the_deletion,
        },
        Case {
            id: "10/whole-data-directory-restore-keeps-the-deletion",
            desc: "Configured as `memoria serve` reads it (the tombstone directory its default, outside the data directory): delete a scratch document, copy the whole data directory aside, delete the doomed one, put the copy back (shown to hold the doomed document live) and wake: exactly one tombstone replayed, a restore reported, the deleted passage neither searchable nor openable, the other document found.",
            run: whole_directory::whole_data_directory_restore_keeps_the_deletion,
        },
        Case {
            id: "10/rewound-tombstone-log-is-refused",
            desc: "Delete twice, wake once with the intact log (the deletion holds), then rewind the log (a row each: put back a copy from before the last delete; the tombstone directory gone; another store's log, as far along or one deletion further, put in its place) and wake: refused with TombstonesBehind naming the log's path, where it stops (or that it does not hold the database's last deletion) and where the database is, quoting no content.",
            run: whole_directory::rewound_tombstone_log_is_refused,
        },
        Case {
            id: "10/restore-marks-siblings-for-reannounce",
            desc: "Hold a sibling's item and cursor (known, not marked); restore the whole data directory after a delete, and in a second row the database alone after a newer snapshot: the wake reports the restore, the sibling is marked for re-announce and a search names it reconciling while still finding the kept document; the next wake finds no new restore and the mark stands.",
            run: whole_directory::restore_marks_siblings_for_reannounce,
        },
        Case {
            id: "10/a-vector-landing-after-its-deletion-is-stored-nowhere",
            desc: "With AI on, two one-passage documents queued; the drain sends both to the stub provider, which answers 5 s late (inside the ingest deadline); while the call is in flight one document is deleted: the late answer stores the other's vector only, the live matrix holds no row for the deleted chunk, the database holds no sealed vector for it, and woken again the dense scan for its own vector returns the other chunk alone.",
            run: vector_race::a_vector_landing_after_its_deletion_is_stored_nowhere,
        },
    ],
};

struct Setup {
    dir: PathBuf,
    sealer: Sealer,
    clock: Arc<HandClock>,
    /// The document that gets deleted, and its canary.
    doomed: String,
    doomed_word: String,
    /// The document that stays, and its canary.
    kept_word: String,
}

fn fail(what: &str) -> impl Fn(memoria::Error) -> Failure + '_ {
    move |e| Failure::new(what.to_string(), e.to_string())
}

fn wake(dir: &Path, sealer: &Sealer, clock: &Arc<HandClock>) -> Result<Instance, Failure> {
    wake_with(dir, sealer, clock, EgressMode::AiOff).map_err(fail("the instance wakes"))
}

/// Wakes an instance of [`OWNER`] on `dir` with `egress`.
fn wake_with(
    dir: &Path,
    sealer: &Sealer,
    clock: &Arc<HandClock>,
    egress: EgressMode,
) -> Result<Instance, memoria::Error> {
    Instance::wake(
        InstanceConfig {
            data_dir: dir.to_path_buf(),
            admission: Admission::parse(OWNER).expect("owners"),
            egress,
        },
        sealer.clone(),
        clock.clone(),
    )
}

fn doc(word: &str, name: &str) -> NewDocument {
    NewDocument {
        source_key: format!("upload:{name}.md"),
        title: format!("Notes {name}"),
        path: format!("{name}.md"),
        body: format!(
            "# Notes {name}\n\nThe {word} entry records the quarterly review.\n\nA second paragraph mentions the kettle.\n"
        ),
        date: None,
    }
}

/// Two documents ingested and snapshotted; presence of both asserted.
fn setup(ctx: &mut Ctx) -> Result<(Setup, Instance), Failure> {
    let doomed_word = ctx.canary();
    let kept_word = ctx.canary();
    let dir = ctx.dir("data");
    let sealer = Sealer::new(&dek(ctx.rng()));
    let clock = Arc::new(HandClock::at(T0_S));
    let mut instance = wake(&dir, &sealer, &clock)?;
    let doomed = instance
        .ingest(&doc(&doomed_word, "doomed"))
        .map_err(fail("the doomed document ingests"))?
        .id;
    instance
        .ingest(&doc(&kept_word, "kept"))
        .map_err(fail("the kept document ingests"))?;
    instance
        .write_snapshot()
        .map_err(fail("the first snapshot is written"))?;
    let s = Setup {
        dir,
        sealer,
        clock,
        doomed,
        doomed_word,
        kept_word,
    };
    ensure(
        finds(&instance, &s.doomed_word)? && finds(&instance, &s.kept_word)?,
        "both canaries are searchable before any deletion (presence)",
        "one is not",
    )?;
    ensure(
        opens(&instance, &s.doomed)?,
        "the doomed document opens before the deletion (presence)",
        "it does not",
    )?;
    Ok((s, instance))
}

fn finds(instance: &Instance, word: &str) -> Result<bool, Failure> {
    let page = instance
        .search(OWNER, word, 1)
        .map_err(|e| Failure::new("the search runs", e.to_string()))?;
    Ok(!page.results.is_empty())
}

fn opens(instance: &Instance, id: &str) -> Result<bool, Failure> {
    Ok(instance
        .document(OWNER, id)
        .map_err(fail("the document page reads"))?
        .is_some())
}

/// Checkpoints the database and copies it aside: the backup.
fn back_up(s: &Setup, instance: &Instance) -> Result<PathBuf, Failure> {
    instance
        .store()
        .checkpoint()
        .map_err(fail("the database checkpoints"))?;
    let backup = s.dir.with_file_name("backup.sqlite3");
    std::fs::copy(s.dir.join(DB_FILE_NAME), &backup)
        .map_err(|e| Failure::new("the backup is copied", e.to_string()))?;
    Ok(backup)
}

/// Copies the backup over the live database, removing its WAL and shared memory.
fn restore(dir: &Path, backup: &Path) -> Result<(), Failure> {
    for suffix in ["-wal", "-shm"] {
        let p = dir.join(format!("{DB_FILE_NAME}{suffix}"));
        if p.exists() {
            std::fs::remove_file(&p)
                .map_err(|e| Failure::new("the WAL is removed", e.to_string()))?;
        }
    }
    std::fs::copy(backup, dir.join(DB_FILE_NAME))
        .map_err(|e| Failure::new("the backup is restored", e.to_string()))?;
    Ok(())
}

/// The deleted passage is neither searchable nor openable, and the kept one is searchable.
fn deletion_holds(s: &Setup, instance: &Instance) -> Result<(), Failure> {
    ensure(
        finds(instance, &s.kept_word)?,
        "the kept document is still searchable (the index is not empty)",
        "it is not",
    )?;
    ensure(
        !finds(instance, &s.doomed_word)?,
        "the deleted passage is not searchable",
        "a search returned it",
    )?;
    ensure(
        !opens(instance, &s.doomed)?,
        "the deleted document does not open",
        "its page opened",
    )
}

fn tombstone_logged_and_snapshot_superseded(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let before = m.wake_report().generation;
    let d = m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    let log_text = std::fs::read_to_string(TombstoneLog::path_in(&s.dir))
        .map_err(|e| Failure::new("the tombstone log file exists", e.to_string()))?;
    ensure(
        log_text
            .lines()
            .any(|l| l.starts_with(&format!("{} {} ", d.tombstone_seq, s.doomed))),
        "a line for the deleted document in the tombstone log file",
        format!("{} lines, none for it", log_text.lines().count()),
    )?;
    let reopened = TombstoneLog::open(&s.dir).map_err(fail("the log reopens"))?;
    ensure(
        reopened.last_seq() == d.tombstone_seq,
        format!("the log reopens at sequence {}", d.tombstone_seq),
        format!("sequence {}", reopened.last_seq()),
    )?;
    let after = m.wake_report().generation;
    ensure(
        after > before,
        format!("a superseding generation above {before}"),
        format!("generation {after}"),
    )?;
    let loaded = snapshot::read(&s.dir, &s.sealer, after)
        .map_err(fail("the superseding snapshot opens"))?
        .ok_or_else(|| Failure::new("the superseding blob exists", "it is missing"))?;
    ensure(
        loaded.header.tombstone_seq >= d.tombstone_seq,
        format!(
            "the superseding snapshot includes tombstone {}",
            d.tombstone_seq
        ),
        format!("it includes {}", loaded.header.tombstone_seq),
    )?;
    ensure(
        d.complete && m.incomplete_deletions().is_empty(),
        "the deletion is complete and none is incomplete",
        format!(
            "complete = {}, {} incomplete",
            d.complete,
            m.incomplete_deletions().len()
        ),
    )?;
    deletion_holds(&s, &m)
}

fn incomplete_until_a_superseding_snapshot(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let snaps = snapshot::dir(&s.dir);
    let aside = s.dir.join("snapshots-aside");
    std::fs::rename(&snaps, &aside).map_err(|e| Failure::new("move blobs", e.to_string()))?;
    // A file where the directory was: no snapshot can be written.
    std::fs::write(&snaps, b"").map_err(|e| Failure::new("block", e.to_string()))?;
    let result = m.delete(&s.doomed);
    ensure(
        result.is_err(),
        "the delete reports the failed snapshot",
        "it reported success",
    )?;
    let incomplete: Vec<String> = m
        .incomplete_deletions()
        .iter()
        .map(|t| t.doc_id.clone())
        .collect();
    ensure(
        incomplete == vec![s.doomed.clone()],
        "the deletion is listed as incomplete while no snapshot includes it",
        format!("{} incomplete", incomplete.len()),
    )?;
    ensure(
        !m.deletion_complete(m.tombstone_log().last_seq()),
        "its tombstone is not complete",
        "it is marked complete",
    )?;
    std::fs::remove_file(&snaps).map_err(|e| Failure::new("unblock", e.to_string()))?;
    std::fs::rename(&aside, &snaps).map_err(|e| Failure::new("restore blobs", e.to_string()))?;
    m.write_snapshot()
        .map_err(fail("the snapshot is written once unblocked"))?;
    ensure(
        m.incomplete_deletions().is_empty() && m.deletion_complete(m.tombstone_log().last_seq()),
        "the deletion is complete once a superseding snapshot is written",
        format!("{} incomplete", m.incomplete_deletions().len()),
    )?;
    deletion_holds(&s, &m)
}

fn restored_database_replays_the_log(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let backup = back_up(&s, &m)?;
    s.clock.set(T0_S + 60);
    m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    deletion_holds(&s, &m)?;
    let (dir, sealer, clock) = (s.dir.clone(), s.sealer.clone(), s.clock.clone());
    drop(m);
    restore(&dir, &backup)?;
    s.clock.set(T0_S + 120);
    let woken = wake(&dir, &sealer, &clock)?;
    deletion_holds(&s, &woken)?;
    let report = woken.wake_report();
    ensure(
        report.tombstones_replayed == 1,
        "the wake report says one tombstone was replayed",
        format!("{} replayed", report.tombstones_replayed),
    )?;
    ensure(
        woken.incomplete_deletions().is_empty(),
        "the replayed deletion is complete: the wake wrote a snapshot including it",
        format!("{} incomplete", woken.incomplete_deletions().len()),
    )
}

fn prior_generation_does_not_serve_the_deletion(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let prior = m.wake_report().generation;
    let backup = back_up(&s, &m)?;
    s.clock.set(T0_S + 60);
    let d = m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    ensure(
        !d.removed.is_empty(),
        "the deletion removed chunks",
        "it removed none",
    )?;
    // Presence: the prior generation's blob holds the deleted passage.
    let old = snapshot::read(&s.dir, &s.sealer, prior)
        .map_err(fail("the prior generation opens"))?
        .ok_or_else(|| Failure::new("the prior generation is on disk", "it is gone"))?;
    let old_ids = LexicalIndex::deserialize(&old.image)
        .and_then(|i| i.chunk_ids())
        .map_err(fail("the prior image loads"))?;
    ensure(
        d.removed.iter().all(|c| old_ids.contains(c)),
        "the prior generation holds the deleted chunks (presence)",
        "it does not",
    )?;
    let (dir, sealer, clock) = (s.dir.clone(), s.sealer.clone(), s.clock.clone());
    drop(m);
    // The database and the bucket as they were: generations after the prior one are gone.
    for (g, _) in snapshot::generations(&dir).map_err(fail("list generations"))? {
        if g > prior {
            std::fs::remove_file(snapshot::blob_path(&dir, g))
                .map_err(|e| Failure::new("remove a newer blob", e.to_string()))?;
        }
    }
    restore(&dir, &backup)?;
    let woken = wake(&dir, &sealer, &clock)?;
    ensure(
        woken.wake_report().tombstones_replayed == 1,
        "one tombstone replayed",
        format!("{}", woken.wake_report().tombstones_replayed),
    )?;
    let ids = woken
        .index()
        .chunk_ids()
        .map_err(fail("the index lists its chunks"))?;
    ensure(
        !d.removed.iter().any(|c| ids.contains(c)),
        "the woken index holds none of the deleted chunks",
        "it holds some",
    )?;
    deletion_holds(&s, &woken)?;
    let current = woken.wake_report().generation;
    ensure(
        current > prior,
        format!("a superseding generation above the prior {prior}"),
        format!("generation {current}"),
    )
}

fn missing_generation_rebuilds(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let prior = m.wake_report().generation;
    let backup = back_up(&s, &m)?;
    m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    let (dir, sealer, clock) = (s.dir.clone(), s.sealer.clone(), s.clock.clone());
    drop(m);
    std::fs::remove_file(snapshot::blob_path(&dir, prior))
        .map_err(|e| Failure::new("the prior blob is removed", e.to_string()))?;
    restore(&dir, &backup)?;
    let woken = wake(&dir, &sealer, &clock)?;
    let expected = WakeKind::Rebuilt {
        reason: format!("snapshot generation {prior} is missing"),
    };
    ensure(
        woken.wake_report().kind == expected,
        format!("{expected:?}"),
        format!("{:?}", woken.wake_report().kind),
    )?;
    let (_, live) = woken.store().counts().map_err(fail("counts"))?;
    let held = woken
        .index()
        .chunk_ids()
        .map_err(fail("the index lists its chunks"))?
        .len() as u64;
    ensure(
        live > 0 && held == live,
        format!("the index holds every live chunk ({live})"),
        format!("it holds {held}"),
    )?;
    deletion_holds(&s, &woken)
}

/// The snapshot generations on disk in `dir`, oldest first.
fn on_disk(dir: &Path) -> Result<Vec<i64>, Failure> {
    Ok(snapshot::generations(dir)
        .map_err(fail("list generations"))?
        .into_iter()
        .map(|(g, _)| g)
        .collect())
}

fn retention_keeps_the_backup_window(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let prior = m.wake_report().generation;
    let superseded_at = T0_S + 60;
    s.clock.set(superseded_at);
    m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    ensure(
        on_disk(&s.dir)?.contains(&prior),
        format!("generation {prior} is kept right after it is superseded"),
        format!("on disk: {:?}", on_disk(&s.dir)?),
    )?;
    s.clock.set(superseded_at + BACKUP_RETENTION_WINDOW_S - 1);
    m.write_snapshot()
        .map_err(fail("a snapshot is written inside the window"))?;
    ensure(
        on_disk(&s.dir)?.contains(&prior),
        format!("generation {prior} is kept one second inside the backup window"),
        format!("on disk: {:?}", on_disk(&s.dir)?),
    )?;
    s.clock.set(superseded_at + BACKUP_RETENTION_WINDOW_S + 1);
    let last = m
        .write_snapshot()
        .map_err(fail("a snapshot is written past the window"))?;
    let gens = on_disk(&s.dir)?;
    ensure(
        !gens.contains(&prior),
        format!("generation {prior} is retired once superseded longer ago than the window"),
        format!("on disk: {gens:?}"),
    )?;
    ensure(
        gens.contains(&(prior + 1)) && gens.contains(&last.generation),
        "the generations superseded inside the window, and the current one, stay",
        format!("on disk: {gens:?}"),
    )
}

fn retention_outlasts_a_month_of_daily_backups(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let prior = m.wake_report().generation;
    let superseded_at = T0_S + 60;
    s.clock.set(superseded_at);
    m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    s.clock.set(superseded_at + BACKUPS_KEPT_S);
    m.write_snapshot()
        .map_err(fail("a snapshot is written 30 days later"))?;
    let gens = on_disk(&s.dir)?;
    ensure(
        gens.contains(&prior),
        format!(
            "generation {prior}, superseded 30 days ago, is still on disk for a backup from the day before"
        ),
        format!("on disk: {gens:?}"),
    )
}

fn retention_counts_from_the_superseding_write_with_vectors(ctx: &mut Ctx) -> Result<(), Failure> {
    let dir = ctx.dir("data-ai-on");
    let sealer = Sealer::new(&dek(ctx.rng()));
    let clock = Arc::new(HandClock::at(T0_S));
    let mut m = wake_with(&dir, &sealer, &clock, EgressMode::AiOn)
        .map_err(fail("an instance with AI on wakes"))?;
    let doomed = m
        .ingest(&doc(&ctx.canary(), "doomed"))
        .map_err(fail("the doomed document ingests"))?
        .id;
    m.ingest(&doc(&ctx.canary(), "kept"))
        .map_err(fail("the kept document ingests"))?;
    crate::rigs::dense::embed_queue(&mut m)?;
    let prior = m.wake_report().generation;
    ensure(
        snapshot::vectors_blob_path(&dir, prior).exists(),
        format!("with AI on, generation {prior} has its dense blob beside it (presence)"),
        "it has none",
    )?;
    clock.set(T0_S + BACKUP_RETENTION_WINDOW_S + 60);
    m.delete(&doomed).map_err(fail("the delete succeeds"))?;
    let gens = on_disk(&dir)?;
    ensure(
        gens.contains(&prior) && gens.len() >= 2,
        format!(
            "generation {prior}, written more than a window ago and superseded just now, is still on disk"
        ),
        format!("on disk: {gens:?}"),
    )
}

/// Restores `backup` over the live database of `m` and wakes it.
fn restore_and_wake(s: &Setup, m: Instance, backup: &Path) -> Result<Instance, Failure> {
    drop(m);
    restore(&s.dir, backup)?;
    wake(&s.dir, &s.sealer, &s.clock)
}

fn replay_deletes_a_revision_the_backup_predates(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let backup = back_up(&s, &m)?;
    let first = m
        .store()
        .live_revision(&s.doomed)
        .map_err(fail("the doomed document's revision reads"))?;
    s.clock.set(T0_S + 60);
    let mut revised = doc(&s.doomed_word, "doomed");
    revised
        .body
        .push_str("\nA third paragraph was added on re-upload.\n");
    let again = m
        .ingest(&revised)
        .map_err(fail("the doomed document is re-uploaded"))?;
    ensure(
        again.id == s.doomed && first.is_some_and(|r| again.revision > r),
        "the re-upload is a newer revision of the same document",
        format!("revision {first:?} then {}", again.revision),
    )?;
    ensure(
        finds(&m, &s.doomed_word)?,
        "the re-uploaded revision is searchable (presence)",
        "it is not",
    )?;
    s.clock.set(T0_S + 120);
    m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    deletion_holds(&s, &m)?;
    s.clock.set(T0_S + 180);
    let woken = restore_and_wake(&s, m, &backup)?;
    ensure(
        woken.wake_report().tombstones_replayed == 1,
        "the wake report says one tombstone was replayed",
        format!("{} replayed", woken.wake_report().tombstones_replayed),
    )?;
    deletion_holds(&s, &woken)
}

fn replay_continues_past_a_no_op_tombstone(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, mut m) = setup(ctx)?;
    let backup = back_up(&s, &m)?;
    let scratch_word = ctx.canary();
    s.clock.set(T0_S + 60);
    let scratch = m
        .ingest(&doc(&scratch_word, "scratch"))
        .map_err(fail("the scratch document ingests"))?
        .id;
    ensure(
        finds(&m, &scratch_word)?,
        "the scratch document is searchable (presence)",
        "it is not",
    )?;
    m.delete(&scratch)
        .map_err(fail("the scratch document is deleted"))?;
    s.clock.set(T0_S + 120);
    m.delete(&s.doomed).map_err(fail("the delete succeeds"))?;
    deletion_holds(&s, &m)?;
    s.clock.set(T0_S + 180);
    let woken = restore_and_wake(&s, m, &backup)?;
    ensure(
        woken.wake_report().tombstones_replayed == 2,
        "the wake report says both tombstones were replayed",
        format!("{} replayed", woken.wake_report().tombstones_replayed),
    )?;
    ensure(
        !finds(&woken, &scratch_word)?,
        "the scratch document, which the backup never held, is not served",
        "a search returned it",
    )?;
    deletion_holds(&s, &woken)
}

fn damaged_generation_rebuilds(ctx: &mut Ctx) -> Result<(), Failure> {
    let (s, m) = setup(ctx)?;
    let current = m.wake_report().generation;
    drop(m);
    let blob = snapshot::blob_path(&s.dir, current);
    let mut bytes =
        std::fs::read(&blob).map_err(|e| Failure::new("the blob reads", e.to_string()))?;
    // One byte near the end flipped: inside the sealed image, past any header.
    let at = bytes.len().saturating_sub(DAMAGED_BYTE_FROM_END);
    ensure(
        at > 0,
        "the blob is longer than the damaged offset",
        format!("{} bytes", bytes.len()),
    )?;
    bytes[at] ^= 0xff;
    std::fs::write(&blob, &bytes)
        .map_err(|e| Failure::new("the damaged blob is written", e.to_string()))?;
    ensure(
        snapshot::read(&s.dir, &s.sealer, current).is_err(),
        format!("the damaged generation {current} exists but does not open"),
        "it opens",
    )?;
    let woken = wake(&s.dir, &s.sealer, &s.clock)?;
    let reason = format!("snapshot generation {current} cannot be opened");
    ensure(
        matches!(&woken.wake_report().kind, WakeKind::Rebuilt { reason: r } if r.starts_with(&reason)),
        format!("the wake rebuilds because {reason}"),
        format!("{:?}", woken.wake_report().kind),
    )?;
    let (_, live) = woken.store().counts().map_err(fail("counts"))?;
    let held = woken
        .index()
        .chunk_ids()
        .map_err(fail("the index lists its chunks"))?
        .len() as u64;
    ensure(
        live > 0 && held == live,
        format!("the index holds every live chunk ({live})"),
        format!("it holds {held}"),
    )?;
    ensure(
        finds(&woken, &s.doomed_word)? && finds(&woken, &s.kept_word)?,
        "both documents are found after the rebuild",
        "one is not",
    )
}

/// The vectors of a restore (§7.4, issue 12): a tombstone the restored
/// database missed removes the deleted chunks' vectors too, before the
/// dense matrix serves a query, and the rows that stay keep their scales.
/// How far a row's score for its own vector may sit from `v·v` recomputed
/// here: f32 rounding of a 512-term sum (as gate 28's tolerance).
const SCORE_TOLERANCE: f64 = 1e-4;

fn restore_with_vectors_keeps_the_deletion(ctx: &mut Ctx) -> Result<(), Failure> {
    use crate::rigs::dense::{SEEDED_CHUNKS, seeded, wake_ai_on};
    const DELETED_DOCUMENTS: usize = 7;
    let e = seeded(ctx, "data")?;
    let (dir, sealer) = (e.dir.clone(), e.sealer.clone());
    let mut m = e.instance;
    let prior = m.wake_report().generation;
    m.store()
        .checkpoint()
        .map_err(fail("the database checkpoints"))?;
    let backup = dir.with_file_name("backup.sqlite3");
    std::fs::copy(dir.join(DB_FILE_NAME), &backup)
        .map_err(|e| Failure::new("the backup is copied", e.to_string()))?;
    // The truth, from the store's own sealed rows (one vector a row, so no
    // matrix layout can pair an id with another row's vector).
    let mut stored = std::collections::HashMap::new();
    for (id, bytes) in m
        .store()
        .live_vectors()
        .map_err(fail("the stored vectors read"))?
    {
        let one = memoria::DenseMatrix::decode(&bytes)
            .map_err(|e| Failure::new("a stored vector decodes", e.to_string()))?;
        let v = one
            .get(id)
            .ok_or_else(|| Failure::new("a stored vector names its chunk", format!("{id}")))?;
        stored.insert(id, v);
    }
    ensure(
        stored.len() == SEEDED_CHUNKS,
        format!("the store holds {SEEDED_CHUNKS} sealed vectors (presence)"),
        format!("{}", stored.len()),
    )?;
    let sentinel_doc = m
        .store()
        .passage_hit(e.sentinel_chunk)
        .map_err(fail("the sentinel passage opens"))?
        .map(|p| p.document.id)
        .unwrap_or_default();
    let doomed: Vec<String> = m
        .store()
        .documents()
        .map_err(fail("the documents list"))?
        .into_iter()
        .map(|d| d.id)
        .filter(|id| *id != sentinel_doc)
        .take(DELETED_DOCUMENTS)
        .collect();
    let mut removed = Vec::new();
    for id in &doomed {
        removed.extend(m.delete(id).map_err(fail("a delete succeeds"))?.removed);
    }
    ensure(
        removed.len() == DELETED_DOCUMENTS,
        format!("the {DELETED_DOCUMENTS} deletions removed one chunk each"),
        format!("{} chunks", removed.len()),
    )?;
    ensure(
        !removed.iter().any(|c| m.dense().contains(*c)),
        "the live matrix dropped the deleted vectors at once",
        "it still holds some",
    )?;
    for (id, v) in m.dense().vectors() {
        ensure(
            m.dense().get(id).as_ref() == Some(&v) && stored.get(&id) == Some(&v),
            "after the deletes every live row is found by its chunk id and is the stored vector",
            format!("chunk {id}"),
        )?;
    }
    same_as_rebuilt(m.dense(), "after the deletes")?;
    drop(m);
    // Presence: the prior generation's dense blob holds the deleted vectors.
    let old = snapshot::read_vectors(&dir, &sealer, prior)
        .map_err(fail("the prior dense blob opens"))?
        .ok_or_else(|| Failure::new("the prior dense blob is on disk", "it is gone"))?;
    let old = memoria::DenseMatrix::decode_owned(old.matrix)
        .map_err(|e| Failure::new("the prior dense blob decodes", e.to_string()))?;
    let backup_rows: i64 = rusqlite::Connection::open(&backup)
        .and_then(|c| c.query_row("SELECT count(*) FROM chunk_vectors", [], |r| r.get(0)))
        .map_err(|e| Failure::new("the backup's vector rows count", e.to_string()))?;
    ensure(
        backup_rows == SEEDED_CHUNKS as i64,
        format!("the backup holds {SEEDED_CHUNKS} vector rows (presence)"),
        format!("{backup_rows}"),
    )?;
    ensure(
        old.len() == SEEDED_CHUNKS && removed.iter().all(|c| old.contains(*c)),
        format!(
            "the prior dense blob holds all {SEEDED_CHUNKS} vectors, the deleted among them (presence)"
        ),
        format!("{} vectors", old.len()),
    )?;
    // The database and the bucket as they were: every newer blob is gone.
    for (g, _) in snapshot::generations(&dir).map_err(fail("list generations"))? {
        if g > prior {
            for p in [
                snapshot::blob_path(&dir, g),
                snapshot::vectors_blob_path(&dir, g),
            ] {
                if p.exists() {
                    std::fs::remove_file(&p)
                        .map_err(|e| Failure::new("remove a newer blob", e.to_string()))?;
                }
            }
        }
    }
    restore(&dir, &backup)?;
    let woken = wake_ai_on(&dir, sealer)?;
    let report = woken.wake_report();
    ensure(
        report.tombstones_replayed == DELETED_DOCUMENTS as u64,
        format!("{DELETED_DOCUMENTS} tombstones replayed"),
        format!("{}", report.tombstones_replayed),
    )?;
    ensure(
        report.dense == memoria::DenseWake::Loaded,
        "the prior dense blob is loaded, not rebuilt (the path under test)",
        format!("{:?}", report.dense),
    )?;
    let dense = woken.dense();
    ensure(
        dense.len() == SEEDED_CHUNKS - DELETED_DOCUMENTS,
        format!(
            "the woken matrix holds the {} live vectors",
            SEEDED_CHUNKS - DELETED_DOCUMENTS
        ),
        format!("{}", dense.len()),
    )?;
    ensure(
        !removed.iter().any(|c| dense.contains(*c)),
        "the woken matrix holds none of the deleted vectors",
        "it holds some",
    )?;
    same_as_rebuilt(dense, "after the wake")?;
    for (id, v) in dense.vectors() {
        let same = stored.get(&id) == Some(&v);
        ensure(
            same && (v.norm() - 1.0).abs() <= v.norm_tolerance(),
            "every vector left is the one the store sealed for its chunk, of unit norm",
            format!("chunk {id}: norm {}", v.norm()),
        )?;
        // The scan ranks each row first for its own vector, scored as the
        // raw dot product (row sums and scales as the kernel reads them).
        let top = dense.top_k(&v, 1);
        let own: f64 = v
            .dequantised()
            .iter()
            .map(|x| f64::from(*x) * f64::from(*x))
            .sum();
        ensure(
            top.first().is_some_and(|h| {
                h.chunk_id == id && (f64::from(h.score) - own).abs() <= SCORE_TOLERANCE
            }),
            "the woken scan ranks every row first for its own vector, at its own dot product",
            format!("chunk {id}: {top:?}, expected score {own}"),
        )?;
    }
    // At rest: the restored database keeps no sealed vector of a deleted
    // chunk (the replay deletes them with their chunks, §7.4).
    let conn = rusqlite::Connection::open(dir.join(DB_FILE_NAME))
        .map_err(|e| Failure::new("the restored database opens", e.to_string()))?;
    let rows: Vec<i64> = conn
        .prepare("SELECT chunk_id FROM chunk_vectors")
        .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        .map_err(|e| Failure::new("the vector rows read", e.to_string()))?;
    ensure(
        rows.len() == SEEDED_CHUNKS - DELETED_DOCUMENTS
            && !removed.iter().any(|c| rows.contains(c)),
        "the restored database holds the 193 live vectors' rows and none of the deleted",
        format!(
            "{} rows, deleted among them: {}",
            rows.len(),
            removed.iter().any(|c| rows.contains(c))
        ),
    )?;
    Ok(())
}

/// Fails unless `matrix` equals the matrix its own rows build afresh, in the
/// same order: the derived state (the row index and each row's level sum, the
/// AVX-512 kernel's correction term) agrees with the rows. This holds on every
/// CPU, where a scan only exercises the kernel this CPU has.
fn same_as_rebuilt(matrix: &memoria::DenseMatrix, when: &str) -> Result<(), Failure> {
    let mut rebuilt = memoria::DenseMatrix::new();
    for (id, v) in matrix.vectors() {
        rebuilt
            .push(id, &v)
            .map_err(|e| Failure::new("a live row pushes onto a fresh matrix", e.to_string()))?;
    }
    ensure(
        rebuilt.len() == matrix.len() && !rebuilt.is_empty(),
        format!("{when}, the rebuilt matrix holds every live row (presence)"),
        format!("{} of {}", rebuilt.len(), matrix.len()),
    )?;
    ensure(
        rebuilt == *matrix,
        format!(
            "{when}, the live matrix equals the one its rows build afresh (row index and level sums included)"
        ),
        "its derived state disagrees with its rows",
    )
}
