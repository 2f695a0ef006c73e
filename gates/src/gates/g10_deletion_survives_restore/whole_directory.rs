//! Gate 10's restores of the whole data directory (§7.4, issue 28): the tombstone log lives apart, a rewound log is refused, and a restore takes the re-announce path.
//!
//! Each case configures memoria as `memoria serve` does
//! ([`memoria::resolve_config`] with a DEK and the owner, `MEMORIA_TOMBSTONES`
//! unset, so the tombstone directory is its default) and wakes it the way
//! the command does ([`Instance::wake_from`]). A backup here is what an
//! operator makes of the data directory: the whole tree (database,
//! snapshot bucket, anything else in it) copied aside with memoria stopped,
//! and a restore puts that tree back in place of the live one. Nothing
//! outside the data directory is restored, except where a case rewinds the
//! tombstone log itself.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memoria::{Config, DB_FILE_NAME, ErrorKind, Instance, NewDocument, Provenance};

use super::{OWNER, T0_S, deletion_holds, doc, fail, finds, opens};
use crate::rigs::clock::HandClock;
use crate::rigs::support::dek;
use crate::{Ctx, Failure, ensure};

/// The sibling app whose item the re-announce case holds.
const SIBLING_APP: &str = "sheets";

/// A data directory configured as `memoria serve` reads it, with two
/// documents (and, when asked, a sibling's item) ingested and snapshotted;
/// presence of each asserted.
struct Served {
    config: Config,
    clock: Arc<HandClock>,
    s: super::Setup,
}

fn served(ctx: &mut Ctx, name: &str, with_sibling: bool) -> Result<(Served, Instance), Failure> {
    let root = ctx.dir(name);
    let data = root.join("memoria-data");
    let key = dek(ctx.rng()).to_base64();
    let env = move |k: &str| match k {
        memoria::DEK_ENV => Some(key.clone()),
        memoria::OWNERS_ENV => Some(OWNER.to_string()),
        _ => None,
    };
    let config = memoria::resolve_config(&data, &env)
        .map_err(fail("memoria is configured as `serve` reads it"))?;
    ensure(
        !config.tombstone_dir.starts_with(&data),
        "the default tombstone directory is outside the data directory",
        config.tombstone_dir.display().to_string(),
    )?;
    let clock = Arc::new(HandClock::at(T0_S));
    let mut m = Instance::wake_from(&config, clock.clone()).map_err(fail("the instance wakes"))?;
    let doomed_word = ctx.canary();
    let kept_word = ctx.canary();
    let doomed = m
        .ingest(&doc(&doomed_word, "doomed"))
        .map_err(fail("the doomed document ingests"))?
        .id;
    m.ingest(&doc(&kept_word, "kept"))
        .map_err(fail("the kept document ingests"))?;
    if with_sibling {
        let item = NewDocument {
            source_key: format!("{SIBLING_APP}:item-1"),
            title: "Budget sheet".into(),
            path: "budget".into(),
            body: "# Budget sheet\n\nThe quarterly budget lives here.\n".into(),
            date: None,
        };
        let provenance = Provenance {
            app: SIBLING_APP.into(),
            item_id: "item-1".into(),
            revision: "r1".into(),
        };
        m.ingest_sibling(&item, &provenance)
            .map_err(fail("the sibling's item ingests"))?;
        m.store()
            .set_sibling_cursor(SIBLING_APP, "c1", T0_S)
            .map_err(fail("the sibling's cursor is recorded"))?;
    }
    m.write_snapshot()
        .map_err(fail("the first snapshot is written"))?;
    let s = super::Setup {
        dir: data,
        sealer: memoria::Sealer::new(&config.dek),
        clock: clock.clone(),
        doomed,
        doomed_word,
        kept_word,
    };
    ensure(
        finds(&m, &s.doomed_word)? && finds(&m, &s.kept_word)? && opens(&m, &s.doomed)?,
        "both canaries are searchable and the doomed document opens before any deletion (presence)",
        "one is not",
    )?;
    Ok((Served { config, clock, s }, m))
}

fn wake(v: &Served) -> Result<Instance, memoria::Error> {
    Instance::wake_from(&v.config, v.clock.clone())
}

/// Copies the tree at `from` to `to` (which must not exist), files and
/// directories only: what `cp -a` makes of a data directory.
fn copy_tree(from: &Path, to: &Path) -> Result<(), Failure> {
    let io = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| Failure::new(what.clone(), e.to_string())
    };
    std::fs::create_dir_all(to).map_err(io("a backup directory is made"))?;
    for entry in std::fs::read_dir(from).map_err(io("the data directory lists"))? {
        let entry = entry.map_err(io("an entry reads"))?;
        let target = to.join(entry.file_name());
        if entry
            .file_type()
            .map_err(io("an entry's type reads"))?
            .is_dir()
        {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(io("a file is copied"))?;
        }
    }
    Ok(())
}

/// Stops `m` after a checkpoint and copies the whole data directory aside.
fn back_up_tree(v: &Served, m: Instance) -> Result<PathBuf, Failure> {
    m.store()
        .checkpoint()
        .map_err(fail("the database checkpoints"))?;
    drop(m);
    let backup = v.s.dir.with_file_name("memoria-data.backup");
    copy_tree(&v.s.dir, &backup)?;
    Ok(backup)
}

/// Puts the backup tree back in place of the live data directory.
fn restore_tree(v: &Served, backup: &Path) -> Result<(), Failure> {
    std::fs::remove_dir_all(&v.s.dir)
        .map_err(|e| Failure::new("the live data directory is removed", e.to_string()))?;
    copy_tree(backup, &v.s.dir)
}

/// True if the database file in `data` holds `id` live: what a backup
/// from before its deletion brings back.
fn live_in_database(data: &Path, id: &str) -> Result<bool, Failure> {
    let conn = rusqlite::Connection::open(data.join(DB_FILE_NAME))
        .map_err(|e| Failure::new("the restored database opens", e.to_string()))?;
    conn.query_row(
        "SELECT count(*) FROM documents WHERE id = ?1 AND deleted_at IS NULL",
        [id],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n == 1)
    .map_err(|e| Failure::new("the restored database reads", e.to_string()))
}

/// Ingests and deletes a scratch document (searchable first): a deletion
/// the backup taken next already holds.
fn delete_a_scratch_document(ctx: &mut Ctx, m: &mut Instance) -> Result<(), Failure> {
    let word = ctx.canary();
    let scratch = m
        .ingest(&doc(&word, "scratch"))
        .map_err(fail("the scratch document ingests"))?
        .id;
    ensure(
        finds(m, &word)?,
        "the scratch document is searchable (presence)",
        "it is not",
    )?;
    m.delete(&scratch)
        .map_err(fail("the scratch document is deleted"))?;
    Ok(())
}

pub(super) fn whole_data_directory_restore_keeps_the_deletion(
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let (v, mut m) = served(ctx, "srv", false)?;
    delete_a_scratch_document(ctx, &mut m)?;
    let backup = back_up_tree(&v, m)?;
    v.clock.set(T0_S + 60);
    let mut m = wake(&v).map_err(fail("the instance wakes again after the backup"))?;
    ensure(
        m.wake_report().restore.is_none() && m.wake_report().tombstones_replayed == 0,
        "a wake with nothing restored finds no restore and replays nothing",
        format!("{:?}", m.wake_report()),
    )?;
    m.delete(&v.s.doomed).map_err(fail("the delete succeeds"))?;
    deletion_holds(&v.s, &m)?;
    drop(m);
    restore_tree(&v, &backup)?;
    ensure(
        live_in_database(&v.s.dir, &v.s.doomed)?,
        "the restored data directory holds the deleted document live (presence)",
        "it does not",
    )?;
    v.clock.set(T0_S + 120);
    let woken = wake(&v).map_err(fail("the restored data directory wakes"))?;
    let report = woken.wake_report();
    ensure(
        report.tombstones_replayed == 1,
        "exactly the one tombstone after the restored database's sequence is replayed (not the log from its start)",
        format!("{} replayed", report.tombstones_replayed),
    )?;
    ensure(
        report.restore.is_some(),
        "the wake reports the restore",
        "it reports none",
    )?;
    deletion_holds(&v.s, &woken)
}

/// How a case rewinds the tombstone log.
#[derive(Clone, Copy, Debug)]
enum Rewind {
    /// The log file put back from a copy taken before the last delete.
    EarlierCopy,
    /// The tombstone directory gone.
    Missing,
    /// Another store's log put in its place, as far along as this one
    /// (two deletions of its own): it reaches the database's sequence but
    /// does not hold its deletions.
    Foreign,
    /// Another store's log one deletion further along than this one
    /// (three of its own): past the database's sequence, so it reads as a
    /// restore, and its entry at the database's sequence is not the
    /// database's.
    ForeignAhead,
}

pub(super) fn rewound_tombstone_log_is_refused(ctx: &mut Ctx) -> Result<(), Failure> {
    // (how, the sequence the rewound log stops at; None: it reaches the
    // database's but holds other deletions)
    let rows: [(Rewind, Option<i64>); 4] = [
        (Rewind::EarlierCopy, Some(1)),
        (Rewind::Missing, Some(0)),
        (Rewind::Foreign, None),
        (Rewind::ForeignAhead, None),
    ];
    for (how, stops_at) in rows {
        let (v, mut m) = served(ctx, &format!("srv-{how:?}"), false)?;
        let foreign = match how {
            Rewind::Foreign | Rewind::ForeignAhead => {
                let (other, mut o) = served(ctx, &format!("srv-other-store-{how:?}"), false)?;
                delete_a_scratch_document(ctx, &mut o)?;
                if matches!(how, Rewind::ForeignAhead) {
                    delete_a_scratch_document(ctx, &mut o)?;
                }
                o.delete(&other.s.doomed)
                    .map_err(fail("the other store's delete succeeds"))?;
                let path = o.tombstone_log().path().to_path_buf();
                drop(o);
                Some(path)
            }
            _ => None,
        };
        delete_a_scratch_document(ctx, &mut m)?;
        let log_path = m.tombstone_log().path().to_path_buf();
        let earlier = log_path.with_extension("earlier");
        std::fs::copy(&log_path, &earlier)
            .map_err(|e| Failure::new("the log is copied aside", e.to_string()))?;
        m.delete(&v.s.doomed).map_err(fail("the delete succeeds"))?;
        let database_at = m.store().tombstone_seq().map_err(fail("sequence"))?;
        drop(m);
        let again = wake(&v).map_err(fail("the intact log wakes (presence)"))?;
        deletion_holds(&v.s, &again)?;
        drop(again);
        match how {
            Rewind::EarlierCopy => std::fs::copy(&earlier, &log_path).map(|_| ()),
            Rewind::Missing => std::fs::remove_dir_all(&v.config.tombstone_dir),
            Rewind::Foreign | Rewind::ForeignAhead => foreign
                .as_ref()
                .map_or(Ok(()), |other| std::fs::copy(other, &log_path).map(|_| ())),
        }
        .map_err(|e| Failure::new(format!("the log is rewound ({how:?})"), e.to_string()))?;
        let refused = wake(&v);
        let err = match refused {
            Ok(m) => {
                let served_it = finds(&m, &v.s.doomed_word)?;
                return Err(Failure::new(
                    format!("with the tombstone log rewound ({how:?}), memoria refuses to wake"),
                    format!("it woke (the deleted passage served: {served_it})"),
                ));
            }
            Err(e) => e,
        };
        let said = format!("{err:#}");
        let sequences = match stops_at {
            Some(stops_at) => {
                said.contains(&format!("stops at sequence {stops_at}"))
                    && said.contains(&format!("up to sequence {database_at}"))
            }
            None => said.contains(&format!(
                "does not hold the deletion the database records at sequence {database_at}"
            )),
        };
        ensure(
            err.kind() == ErrorKind::TombstonesBehind
                && said.contains(&log_path.display().to_string())
                && sequences,
            format!(
                "with the log rewound ({how:?}), the refusal is TombstonesBehind naming the log's path, where it stops ({stops_at:?}) and the database's sequence {database_at}"
            ),
            format!("{:?}: {said}", err.kind()),
        )?;
        ensure(
            !said.contains(&v.s.doomed_word) && !said.contains("Notes"),
            "the refusal quotes no content",
            said.clone(),
        )?;
    }
    Ok(())
}

pub(super) fn restore_marks_siblings_for_reannounce(ctx: &mut Ctx) -> Result<(), Failure> {
    // Two restores: the whole data directory with a deletion since the
    // backup (the log is ahead), and the database file alone with no
    // deletion since (the bucket holds a newer generation).
    for whole in [true, false] {
        let (v, mut m) = served(ctx, if whole { "srv-whole" } else { "srv-database" }, true)?;
        let marked = |m: &Instance| -> Result<Vec<String>, Failure> {
            m.store()
                .reannouncing_apps()
                .map_err(fail("the re-announce marks read"))
        };
        ensure(
            marked(&m)?.is_empty()
                && m.store()
                    .known_sibling_apps()
                    .map_err(fail("the known siblings read"))?
                    == vec![SIBLING_APP.to_string()],
            "before any restore the sibling is known and not marked (presence of the sibling)",
            format!("marked: {:?}", marked(&m)?),
        )?;
        if whole {
            let backup = back_up_tree(&v, m)?;
            let mut m = wake(&v).map_err(fail("the instance wakes after the backup"))?;
            m.delete(&v.s.doomed).map_err(fail("the delete succeeds"))?;
            drop(m);
            restore_tree(&v, &backup)?;
        } else {
            m.store()
                .checkpoint()
                .map_err(fail("the database checkpoints"))?;
            let backup = v.s.dir.with_file_name("database.backup");
            std::fs::copy(v.s.dir.join(DB_FILE_NAME), &backup)
                .map_err(|e| Failure::new("the database is copied aside", e.to_string()))?;
            m.ingest(&doc(&ctx.canary(), "later"))
                .map_err(fail("a later document ingests"))?;
            m.write_snapshot()
                .map_err(fail("a later snapshot is written"))?;
            drop(m);
            super::restore(&v.s.dir, &backup)?;
        }
        let how = if whole {
            "the whole data directory"
        } else {
            "the database alone"
        };
        let woken = wake(&v).map_err(fail("the restored store wakes"))?;
        ensure(
            woken.wake_report().restore.is_some(),
            format!("a restore of {how} is found at wake"),
            "none is reported",
        )?;
        ensure(
            marked(&woken)? == vec![SIBLING_APP.to_string()],
            format!("after a restore of {how}, every known sibling is marked for re-announce"),
            format!("marked: {:?}", marked(&woken)?),
        )?;
        let page = woken
            .candidates(OWNER, &v.s.kept_word, 1)
            .map_err(|e| Failure::new("the search runs", e.to_string()))?;
        ensure(
            page.reconciling == vec![SIBLING_APP.to_string()] && !page.results.is_empty(),
            format!(
                "after a restore of {how}, the page names the sibling as reconciling and still finds the kept document"
            ),
            format!(
                "reconciling {:?}, {} results",
                page.reconciling,
                page.results.len()
            ),
        )?;
        drop(woken);
        let next = wake(&v).map_err(fail("the store wakes once more"))?;
        ensure(
            next.wake_report().restore.is_none() && marked(&next)? == vec![SIBLING_APP.to_string()],
            format!(
                "the next wake after a restore of {how} finds no new restore, and the mark stands until a re-announce completes"
            ),
            format!(
                "{:?}, marked {:?}",
                next.wake_report().restore,
                marked(&next)?
            ),
        )?;
    }
    Ok(())
}
