//! Gate 1 (§10, §3): plaintext grep over the raw bytes at rest — database file, WAL, snapshot blobs — for an ingested canary.
//!
//! Requirement: no plaintext content reaches the database file, its WAL,
//! its journal, the sealed snapshot blobs, or any other file in the data
//! directory. The exempt list starts, and stays, empty. The gate first proves
//! the canary was ingested, is searchable, and is inside the sealed snapshot,
//! so that its absence from the raw bytes is an assertion and not a
//! description of an empty store.
//!
//! The grep hunts each canary whole, upper-cased, and by its tail: an FTS5
//! index image stores a term after its sorted neighbour with the shared
//! prefix removed, so a leaked index holds only the tail of most terms.

use std::path::PathBuf;
use std::sync::Arc;

use memoria::Admission;
use memoria::EgressMode;
use memoria::FixedClock;
use memoria::LexicalIndex;
use memoria::Sealer;
use memoria::{DB_FILE_NAME, NewDocument};
use memoria::{Instance, InstanceConfig};

use crate::rigs::support::{dek, grep_dir, listing};
use crate::{Case, Ctx, Failure, Gate, ensure};

/// Files allowed to hold plaintext content. Starts empty (§10 gate 1) and stays so.
pub const PLAINTEXT_EXEMPT: &[&str] = &[];

/// Gate 1.
pub static GATE: Gate = Gate {
    id: "1",
    title: "Plaintext grep over raw bytes at rest",
    gates_md: &[
        "Plaintext grep over raw SQLite bytes (file and WAL) and bucket objects; exempt list starts empty",
    ],
    sections: &["§10", "§3", "§3.1", "§7.1"],
    requirement: "A canary ingested in a document's title, path, heading and body is searchable, yet appears in no raw byte of the database file, its WAL, the sealed snapshot blobs, or any other file under the data directory. The exempt list is empty.",
    cases: &[
        Case {
            id: "1/presence",
            desc: "Ingest a document whose title, path, heading and body each carry a seed-derived canary; search each canary and require a hit; require the database, WAL and snapshot files to exist and be non-empty.",
            run: presence,
        },
        Case {
            id: "1/database-and-wal",
            desc: "Grep the SQLite file and its WAL (before any checkpoint) for every canary, then checkpoint and grep the file again.",
            run: database_and_wal,
        },
        Case {
            id: "1/snapshot-blobs",
            desc: "Open the sealed snapshot through the DEK and require its index to find the canary (presence), then grep the snapshot blobs' raw bytes for every canary.",
            run: snapshot_blobs,
        },
        Case {
            id: "1/rebuild-path",
            desc: "Remove the snapshot blobs, wake a second instance (it must say it rebuilt), search the canary, then grep every file under the case's whole scratch root.",
            run: rebuild_path,
        },
        Case {
            id: "1/nonces-never-repeat",
            desc: "Revise the document keeping its title, then require the title cell to change and no AES-GCM nonce to repeat across any sealed cell or snapshot blob at rest.",
            run: nonces_never_repeat,
        },
        Case {
            id: "1/cells-bound-to-rows",
            desc: "Copy one document's sealed title and chunk body into a second document's rows, and a chunk's trail into its own body column, in the database file; require every moved cell to fail to open rather than render under its new row.",
            run: cells_bound_to_rows,
        },
        Case {
            id: "1/every-file-at-rest",
            desc: "Revise, delete and re-ingest the document, wake a second instance from the same directory, then grep every file under the case's whole scratch root (the data directory and its neighbours) for every canary; only PLAINTEXT_EXEMPT (empty) may match.",
            run: every_file_at_rest,
        },
    ],
};

struct Seeded {
    root: PathBuf,
    dir: PathBuf,
    instance: Instance,
    canaries: Vec<(&'static str, String)>,
    body: String,
    sealer: Sealer,
}

fn seeded(ctx: &mut Ctx) -> Seeded {
    let body_c = ctx.canary();
    let title_c = ctx.canary();
    let path_c = ctx.canary();
    let head_c = ctx.canary();
    let dir = ctx.dir("data");
    let sealer = Sealer::new(&dek(ctx.rng()));
    let mut instance = Instance::wake(
        InstanceConfig {
            data_dir: dir.clone(),
            admission: Admission::parse("ana@example.org").expect("owners"),
            egress: EgressMode::AiOff,
        },
        sealer.clone(),
        Arc::new(FixedClock(1_790_000_000)),
    )
    .expect("wake");
    let body = format!(
        "# Budget {head_c}\n\nThe travel line for {body_c} is under review this quarter.\n\nA second paragraph mentions the office kettle.\n"
    );
    instance
        .ingest(&NewDocument {
            source_key: format!("upload:{path_c}.md"),
            title: format!("Report {title_c}"),
            path: format!("{path_c}.md"),
            body: body.clone(),
            date: None,
        })
        .expect("ingest");
    instance.write_snapshot().expect("snapshot");
    Seeded {
        root: ctx.root().to_path_buf(),
        dir,
        instance,
        canaries: vec![
            ("body", body_c),
            ("title", title_c),
            ("path", path_c),
            ("heading", head_c),
        ],
        body,
        sealer,
    }
}

fn search_finds(instance: &Instance, word: &str) -> bool {
    instance
        .search("ana@example.org", word, 1)
        .map(|p| !p.results.is_empty())
        .unwrap_or(false)
}

fn presence(ctx: &mut Ctx) -> Result<(), Failure> {
    let s = seeded(ctx);
    for (what, c) in &s.canaries {
        if *what == "path" {
            continue; // paths are shown, not indexed
        }
        ensure(
            search_finds(&s.instance, c),
            format!("the {what} canary is searchable"),
            "search found nothing",
        )?;
    }
    for name in [DB_FILE_NAME.to_string(), format!("{DB_FILE_NAME}-wal")] {
        let len = std::fs::metadata(s.dir.join(&name))
            .map(|m| m.len())
            .unwrap_or(0);
        ensure(
            len > 0,
            format!("{name} exists and is non-empty"),
            format!("{len} bytes"),
        )?;
    }
    let snaps = listing(&s.dir.join(memoria::snapshot::SNAPSHOT_DIR_NAME));
    ensure(
        !snaps.is_empty(),
        "at least one sealed snapshot blob exists",
        "none",
    )?;
    let doc_count = s.instance.store().counts().map(|c| c.0).unwrap_or(0);
    ensure(
        doc_count == 1,
        "one document stored",
        format!("{doc_count}"),
    )
}

fn grep_all(
    dir: &std::path::Path,
    canaries: &[(&'static str, String)],
    only: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut leaks = Vec::new();
    for (what, c) in canaries {
        // The tail catches FTS5's prefix-compressed terms in a leaked index image.
        let tail = crate::canary_tail(c).to_string();
        for needle in [c.clone(), c.to_uppercase(), tail] {
            for (file, at) in grep_dir(dir, needle.as_bytes()) {
                if only(&file) && !PLAINTEXT_EXEMPT.contains(&file.as_str()) {
                    leaks.push(format!("{what} canary in {file} at byte {at}"));
                }
            }
        }
    }
    leaks
}

fn database_and_wal(ctx: &mut Ctx) -> Result<(), Failure> {
    let s = seeded(ctx);
    let wal = s.dir.join(format!("{DB_FILE_NAME}-wal"));
    let wal_len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    ensure(
        wal_len > 0,
        "the WAL holds the uncheckpointed ingest",
        format!("{wal_len} bytes"),
    )?;
    let is_db = |f: &str| f.starts_with(DB_FILE_NAME);
    let leaks = grep_all(&s.dir, &s.canaries, is_db);
    ensure(
        leaks.is_empty(),
        "no canary in the database file or WAL",
        leaks.join("; "),
    )?;
    s.instance
        .store()
        .checkpoint()
        .map_err(|e| Failure::new("checkpoint succeeds", e.to_string()))?;
    let leaks = grep_all(&s.dir, &s.canaries, is_db);
    ensure(
        leaks.is_empty(),
        "no canary in the checkpointed database file",
        leaks.join("; "),
    )
}

fn snapshot_blobs(ctx: &mut Ctx) -> Result<(), Failure> {
    let s = seeded(ctx);
    let generation = s.instance.store().snapshot_generation().unwrap_or(0);
    let loaded = memoria::snapshot::read(&s.dir, &s.sealer, generation)
        .map_err(|e| Failure::new("the snapshot opens under the DEK", e.to_string()))?
        .ok_or_else(|| Failure::new("the recorded snapshot generation exists", "missing"))?;
    let index = LexicalIndex::deserialize(&loaded.image)
        .map_err(|e| Failure::new("the snapshot image loads", e.to_string()))?;
    let body_c = &s.canaries[0].1;
    let hits = index
        .search(&format!("\"{body_c}\""), 10, 0)
        .map_err(|e| Failure::new("the snapshot index answers", e.to_string()))?;
    ensure(
        hits.len() == 1,
        "the sealed snapshot's index finds the body canary",
        format!("{} hits", hits.len()),
    )?;
    ensure(
        s.body.contains(body_c.as_str()),
        "the ingested body carries the canary",
        "it does not",
    )?;
    let leaks = grep_all(&s.dir, &s.canaries, |f| {
        f.starts_with(memoria::snapshot::SNAPSHOT_DIR_NAME)
    });
    ensure(
        leaks.is_empty(),
        "no canary in any snapshot blob",
        leaks.join("; "),
    )
}

fn every_file_at_rest(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut s = seeded(ctx);
    let body_c = s.canaries[0].1.clone();
    let title_c = s.canaries[1].1.clone();
    let path_c = s.canaries[2].1.clone();
    let revised = format!("{}\nA revision adds a line about {body_c} again.\n", s.body);
    let doc = NewDocument {
        source_key: format!("upload:{path_c}.md"),
        title: format!("Report {title_c}"),
        path: format!("{path_c}.md"),
        body: revised,
        date: None,
    };
    let o = s
        .instance
        .ingest(&doc)
        .map_err(|e| Failure::new("revision ingests", e.to_string()))?;
    s.instance
        .write_snapshot()
        .map_err(|e| Failure::new("snapshot", e.to_string()))?;
    s.instance
        .delete(&o.id)
        .map_err(|e| Failure::new("delete", e.to_string()))?;
    s.instance
        .ingest(&doc)
        .map_err(|e| Failure::new("re-ingest", e.to_string()))?;
    s.instance
        .write_snapshot()
        .map_err(|e| Failure::new("snapshot", e.to_string()))?;
    let second = wake_again(&s, 1_790_000_100)?;
    ensure(
        search_finds(&second, &body_c),
        "the woken instance still finds the canary",
        "it does not",
    )?;
    let files = listing(&s.dir);
    ensure(
        files.len() >= 3,
        "database, WAL and snapshots at rest",
        files.join(", "),
    )?;
    let leaks = grep_all(&s.root, &s.canaries, |_| true);
    ensure(
        leaks.is_empty(),
        "no canary in any file at rest",
        leaks.join("; "),
    )
}

fn wake_again(s: &Seeded, at: i64) -> Result<Instance, Failure> {
    Instance::wake(
        InstanceConfig {
            data_dir: s.dir.clone(),
            admission: Admission::parse("ana@example.org").expect("owners"),
            egress: EgressMode::AiOff,
        },
        s.sealer.clone(),
        Arc::new(FixedClock(at)),
    )
    .map_err(|e| Failure::new("a second instance wakes", e.to_string()))
}

fn rebuild_path(ctx: &mut Ctx) -> Result<(), Failure> {
    let s = seeded(ctx);
    let snaps = s.dir.join(memoria::snapshot::SNAPSHOT_DIR_NAME);
    let removed = listing(&snaps).len();
    ensure(removed > 0, "a snapshot blob exists to remove", "none")?;
    std::fs::remove_dir_all(&snaps)
        .map_err(|e| Failure::new("the blobs can be removed", e.to_string()))?;
    let second = wake_again(&s, 1_790_000_200)?;
    let rebuilt = matches!(second.wake_report().kind, memoria::WakeKind::Rebuilt { .. });
    ensure(
        rebuilt,
        "the second wake rebuilds and says so",
        format!("{:?}", second.wake_report().kind),
    )?;
    ensure(
        search_finds(&second, &s.canaries[0].1),
        "the rebuilt index finds the canary",
        "it does not",
    )?;
    let leaks = grep_all(&s.root, &s.canaries, |_| true);
    ensure(
        leaks.is_empty(),
        "no canary in any file after a rebuild",
        leaks.join("; "),
    )
}

fn open_db(dir: &std::path::Path) -> Result<rusqlite::Connection, Failure> {
    rusqlite::Connection::open_with_flags(
        dir.join(DB_FILE_NAME),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .map_err(|e| Failure::new("the database opens read-only", e.to_string()))
}

/// Every sealed value at rest: the sealed columns of the database, and each snapshot blob.
fn sealed_cells(dir: &std::path::Path) -> Result<Vec<(String, Vec<u8>)>, Failure> {
    let conn = open_db(dir)?;
    let mut cells = Vec::new();
    for (table, col) in [
        ("documents", "title"),
        ("documents", "path"),
        ("chunks", "body"),
        ("chunks", "trail"),
    ] {
        let unreadable =
            |e: rusqlite::Error| Failure::new("the sealed columns are readable", e.to_string());
        let mut stmt = conn
            .prepare(&format!("SELECT rowid, {col} FROM {table}"))
            .map_err(unreadable)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(unreadable)?;
        for (id, blob) in rows {
            if !blob.is_empty() {
                cells.push((format!("{table}.{col}#{id}"), blob));
            }
        }
    }
    let snaps = dir.join(memoria::snapshot::SNAPSHOT_DIR_NAME);
    for f in listing(&snaps) {
        let bytes = std::fs::read(snaps.join(&f))
            .map_err(|e| Failure::new("snapshot blobs are readable", e.to_string()))?;
        cells.push((format!("snapshot {f}"), bytes));
    }
    Ok(cells)
}

fn title_cell(dir: &std::path::Path) -> Result<Vec<u8>, Failure> {
    open_db(dir)?
        .query_row("SELECT title FROM documents LIMIT 1", [], |r| r.get(0))
        .map_err(|e| Failure::new("a title cell exists", e.to_string()))
}

fn nonces_never_repeat(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut s = seeded(ctx);
    let title_before = title_cell(&s.dir)?;
    let revised = NewDocument {
        source_key: format!("upload:{}.md", s.canaries[2].1),
        title: format!("Report {}", s.canaries[1].1),
        path: format!("{}.md", s.canaries[2].1),
        body: format!("{}\nOne more line.\n", s.body),
        date: None,
    };
    s.instance
        .ingest(&revised)
        .map_err(|e| Failure::new("the revision ingests", e.to_string()))?;
    s.instance
        .write_snapshot()
        .map_err(|e| Failure::new("snapshot", e.to_string()))?;
    s.instance
        .store()
        .checkpoint()
        .map_err(|e| Failure::new("checkpoint", e.to_string()))?;
    let title_after = title_cell(&s.dir)?;
    ensure(
        title_before != title_after,
        "re-sealing the same title in a revision gives a different cell (fresh nonce)",
        "the sealed title cell is byte-identical across revisions",
    )?;
    let cells = sealed_cells(&s.dir)?;
    ensure(
        cells.len() >= 5,
        "at least five sealed values at rest",
        format!("{}", cells.len()),
    )?;
    let mut seen: std::collections::HashMap<Vec<u8>, String> = std::collections::HashMap::new();
    let mut repeats = Vec::new();
    let all =
        std::iter::once(("the title before the revision".to_string(), title_before)).chain(cells);
    for (name, cell) in all {
        let Some(nonce) = cell.get(1..1 + memoria::NONCE_BYTES) else {
            repeats.push(format!("{name} is too short to be sealed"));
            continue;
        };
        if let Some(prev) = seen.insert(nonce.to_vec(), name.clone()) {
            repeats.push(format!("{name} reuses the nonce of {prev}"));
        }
    }
    ensure(
        repeats.is_empty(),
        "no AES-GCM nonce repeats at rest",
        repeats.join("; "),
    )
}

fn cells_bound_to_rows(ctx: &mut Ctx) -> Result<(), Failure> {
    let mut s = seeded(ctx);
    let other = s
        .instance
        .ingest(&NewDocument {
            source_key: "upload:other.md".into(),
            title: "Other".into(),
            path: "other.md".into(),
            body: "# Other\n\nA second document about the kettle.\n".into(),
            date: None,
        })
        .map_err(|e| Failure::new("a second document ingests", e.to_string()))?;
    let first = s
        .instance
        .store()
        .documents()
        .map_err(|e| Failure::new("documents list", e.to_string()))?
        .into_iter()
        .find(|d| d.id != other.id)
        .ok_or_else(|| Failure::new("the seeded document is listed", "it is not"))?;
    ensure(
        s.instance
            .store()
            .document(&other.id)
            .map(|d| d.is_some())
            .unwrap_or(false),
        "the second document opens before tampering",
        "it does not",
    )?;
    let conn = rusqlite::Connection::open(s.dir.join(DB_FILE_NAME))
        .map_err(|e| Failure::new("the database opens", e.to_string()))?;
    let tamper = |sql: &str, a: &str, b: &str| {
        conn.execute(sql, [a, b])
            .map_err(|e| Failure::new("the cell can be moved", e.to_string()))
    };
    // A's title into B's row.
    tamper(
        "UPDATE documents SET title = (SELECT title FROM documents WHERE id = ?1) WHERE id = ?2",
        &first.id,
        &other.id,
    )?;
    let moved_title = s.instance.store().document(&other.id);
    ensure(
        moved_title.is_err(),
        "a title cell moved to another document's row fails to open",
        format!(
            "it opened: {:?}",
            moved_title.map(|d| d.map(|d| d.title == first.title))
        ),
    )?;
    // A's first chunk body into B's first chunk row, after restoring B's title is moot: B stays broken.
    tamper(
        "UPDATE chunks SET body = (SELECT body FROM chunks WHERE doc_id = ?1 ORDER BY ordinal LIMIT 1) \
         WHERE id = (SELECT id FROM chunks WHERE doc_id = ?2 ORDER BY ordinal LIMIT 1)",
        &first.id,
        &other.id,
    )?;
    let moved_body = s.instance.store().passages(&other.id);
    ensure(
        moved_body.is_err(),
        "a chunk body moved to another chunk's row fails to open",
        "it opened",
    )?;
    // A's own trail into its body column: same row, other column.
    tamper(
        "UPDATE chunks SET body = trail WHERE id = (SELECT id FROM chunks WHERE doc_id = ?1 ORDER BY ordinal LIMIT 1) AND ?2 = ?2",
        &first.id,
        "",
    )?;
    let swapped = s.instance.store().passages(&first.id);
    ensure(
        swapped.is_err(),
        "a trail cell moved into its chunk's body column fails to open",
        "it opened",
    )
}
