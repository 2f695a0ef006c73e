//! Crash during import: a child `memoria import` is SIGKILLed at each named crash point, and the store must reopen consistent with no plaintext left on disk (§7.4).
//!
//! The issue: "Kill the process with SIGKILL in the middle of an import. The
//! store must reopen consistent: each document is either wholly in or absent,
//! the index agrees with the database, and no plaintext temporary file is
//! left behind. A test proves it by killing a child process."
//!
//! Each test spawns the real binary with `MEMORIA_CRASHPOINT` armed, reads its
//! stdout until the child says it reached the point, kills it with SIGKILL,
//! and reopens the data directory in process. No sleeps: the kill lands at the
//! named step because the child parks there until it is killed.
//!
//! The same is done to `memoria delete` around the tombstone log append
//! (§7.4): a torn line is ignored, and an append the database never saw is
//! replayed by the next wake.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, BufReader, Read as _};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use memoria::Admission;
use memoria::DB_FILE_NAME;
use memoria::EgressMode;
use memoria::FixedClock;
use memoria::TombstoneLog;
use memoria::testkit::{CRASHPOINT_ENV, CRASHPOINTS};
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig, WakeKind};

/// The one owner.
const OWNER: &str = "ana@example.org";
/// The fixed DEK every run of a test uses, parent and child alike.
const DEK_BYTES_FIXED: [u8; 32] = [0x5a; 32];
/// How many canary documents the crashed import carries.
const CANARY_DOCS: usize = 5;
/// SIGKILL's signal number on every unix.
const SIGKILL: i32 = 9;
/// The baseline document's canary word.
const BASELINE_CANARY: &str = "zqxbaseline";

fn dek_base64() -> String {
    Dek::from_bytes(DEK_BYTES_FIXED).to_base64()
}

fn canary(n: usize) -> String {
    format!("zqxcanary{n}")
}

fn canary_title(n: usize) -> String {
    format!("Field notes {}", canary(n))
}

/// A two-section Markdown document whose title, headings and body carry its canary.
fn canary_doc(n: usize) -> String {
    let c = canary(n);
    format!(
        "# Field notes {c}\n\n\
         The {c} survey opened at the harbour wall and counted the terns.\n\n\
         ## Findings {c}\n\n\
         Tides ran high all week; {c} marks the second section of these notes.\n"
    )
}

const BASELINE_TITLE: &str = "Baseline ledger zqxbaseline";
const BASELINE_DOC: &str =
    "# Baseline ledger zqxbaseline\n\nThe zqxbaseline ledger was imported before any crash.\n";

/// The source tree of one test: a baseline directory and the canary directory.
struct Sources {
    dir: tempfile::TempDir,
    baseline: PathBuf,
    canaries: PathBuf,
    /// title -> Markdown body, for every document either directory holds.
    bodies: BTreeMap<String, String>,
}

fn write_sources() -> Sources {
    let dir = tempfile::tempdir().expect("tempdir");
    let baseline = dir.path().join("baseline");
    let canaries = dir.path().join("canaries");
    std::fs::create_dir_all(&baseline).expect("mkdir");
    std::fs::create_dir_all(&canaries).expect("mkdir");
    let mut bodies = BTreeMap::new();
    std::fs::write(baseline.join("baseline.md"), BASELINE_DOC).expect("write");
    bodies.insert(BASELINE_TITLE.to_string(), BASELINE_DOC.to_string());
    for n in 1..=CANARY_DOCS {
        // Sorted names: the import walks them in this order.
        std::fs::write(canaries.join(format!("doc-{n}.md")), canary_doc(n)).expect("write");
        bodies.insert(canary_title(n), canary_doc(n));
    }
    Sources {
        dir,
        baseline,
        canaries,
        bodies,
    }
}

/// The `memoria` binary, configured for `data`, with no crash point armed.
fn memoria(data: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memoria"));
    cmd.arg("--data")
        .arg(data)
        .env("MEMORIA_DEK", dek_base64())
        .env("MEMORIA_OWNERS", OWNER)
        // The log where `wake` below reads it: these tests restore nothing.
        .env("MEMORIA_TOMBSTONES", data)
        .env("MEMORIA_LOG", "warn")
        .env_remove("MEMORIA_DEK_FILE")
        .env_remove("MEMORIA_DATA")
        .env_remove(CRASHPOINT_ENV)
        .stdin(Stdio::null());
    cmd
}

/// Runs `memoria import --format json src` to completion and returns its report.
fn import_to_completion(data: &Path, src: &Path) -> serde_json::Value {
    let out = memoria(data)
        .args(["import", "--format", "json"])
        .arg(src)
        .output()
        .expect("run memoria import");
    assert!(
        out.status.success(),
        "import exits 0: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON import report")
}

/// Statuses of an import report's files, counted.
fn status_counts(report: &serde_json::Value) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for f in report["files"].as_array().expect("files") {
        let s = f["status"].as_str().unwrap_or("refused").to_string();
        *counts.entry(s).or_insert(0) += 1;
    }
    counts
}

/// Spawns `memoria import src` armed at `point`, waits for it to say it
/// reached the point, and SIGKILLs it there.
fn import_and_kill_at(data: &Path, src: &Path, point: &str) {
    let mut cmd = memoria(data);
    cmd.arg("import").arg(src);
    kill_at(cmd, point);
}

/// Spawns `cmd` armed at `point`, waits for it to say it reached the point,
/// and SIGKILLs it there.
fn kill_at(mut cmd: Command, point: &str) {
    let mut child = cmd
        .env(CRASHPOINT_ENV, point)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memoria");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let want = format!("crashpoint {point} reached");
    let mut before = Vec::new();
    let mut reached = false;
    for line in BufReader::new(child.stdout.take().expect("piped stdout")).lines() {
        let line = line.expect("child stdout is UTF-8");
        if line == want {
            reached = true;
            break;
        }
        before.push(line);
    }
    if !reached {
        let status = child.wait().expect("wait");
        let err = drain.join().expect("stderr drained");
        panic!(
            "the child exited ({status:?}) without reaching {point}.\nstdout: {before:?}\nstderr: {err}"
        );
    }
    child.kill().expect("SIGKILL the child");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(SIGKILL), "the child died by SIGKILL");
    drain.join().expect("stderr drained");
    assert!(
        before.is_empty(),
        "the child printed nothing before parking: {before:?}"
    );
}

fn wake(data: &Path) -> Instance {
    Instance::wake(
        InstanceConfig {
            data_dir: data.to_path_buf(),
            admission: Admission::parse(OWNER).expect("owners"),
            egress: EgressMode::AiOff,
        },
        Sealer::new(&Dek::from_base64(&dek_base64()).expect("dek")),
        Arc::new(FixedClock(1_767_225_600)),
    )
    .expect("the store reopens after the crash")
}

/// Every file under `dir`, with its raw bytes.
fn files_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.expect("walk"))
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let bytes = std::fs::read(e.path()).expect("read");
            (e.into_path(), bytes)
        })
        .collect()
}

/// (file, canary) for every file under `dir` whose bytes hold a canary, case-insensitively.
fn plaintext_under(dir: &Path, canaries: &[String]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    for (path, bytes) in files_under(dir) {
        let lower = bytes.to_ascii_lowercase();
        for c in canaries {
            if memchr::memmem::find(&lower, c.as_bytes()).is_some() {
                found.push((path.clone(), c.clone()));
            }
        }
    }
    found
}

fn all_canaries() -> Vec<String> {
    let mut all: Vec<String> = (1..=CANARY_DOCS).map(canary).collect();
    all.push(BASELINE_CANARY.to_string());
    all
}

/// Asserts that no file under `data` holds plaintext, after proving the
/// scanner finds every canary in the sources it was written from.
fn assert_no_plaintext(data: &Path, sources: &Sources, when: &str) {
    let canaries = all_canaries();
    let in_sources: BTreeSet<String> = plaintext_under(sources.dir.path(), &canaries)
        .into_iter()
        .map(|(_, c)| c)
        .collect();
    assert_eq!(
        in_sources,
        canaries.iter().cloned().collect(),
        "presence: the scanner finds every canary in the source files"
    );
    let files: Vec<String> = files_under(data)
        .into_iter()
        .map(|(p, _)| {
            p.strip_prefix(data)
                .expect("under data")
                .display()
                .to_string()
        })
        .collect();
    assert!(
        files.contains(&DB_FILE_NAME.to_string()),
        "{when}: scanned {files:?}"
    );
    let leaks = plaintext_under(data, &canaries);
    assert!(
        leaks.is_empty(),
        "{when}: plaintext on disk {leaks:?} among {files:?}"
    );
}

/// Names of temporary files under `data`.
fn temporary_files(data: &Path) -> Vec<String> {
    files_under(data)
        .into_iter()
        .map(|(p, _)| p.file_name().expect("name").to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Asserts the store is consistent and returns the titles of live documents:
/// every document wholly in (exactly the passages its source chunks into),
/// no chunk outside a live document, and the index holding exactly the live chunks.
fn assert_consistent(instance: &Instance, sources: &Sources) -> BTreeSet<String> {
    let store = instance.store();
    let docs = store.documents().expect("documents");
    let mut union = Vec::new();
    let mut titles = BTreeSet::new();
    for d in &docs {
        let passages = store.passages(&d.id).expect("passages");
        assert_eq!(
            d.chunk_count as usize,
            passages.len(),
            "{}: its chunk count matches its passages",
            d.title
        );
        let body = sources
            .bodies
            .get(&d.title)
            .unwrap_or_else(|| panic!("an unknown document {:?}", d.title));
        let expected: Vec<(i64, Vec<String>, String)> = memoria::chunk(body)
            .into_iter()
            .map(|c| (i64::from(c.ordinal), c.trail, c.text))
            .collect();
        let actual: Vec<(i64, Vec<String>, String)> = passages
            .iter()
            .map(|p| (p.ordinal, p.trail.clone(), p.body.clone()))
            .collect();
        assert!(!expected.is_empty());
        assert_eq!(actual, expected, "{}: wholly in", d.title);
        union.extend(passages.iter().map(|p| p.chunk_id));
        titles.insert(d.title.clone());
    }
    union.sort_unstable();
    let live = store.live_chunk_ids().expect("live chunk ids");
    assert_eq!(
        live, union,
        "every live chunk belongs to a live document's passages"
    );
    assert_eq!(
        instance.index().chunk_ids().expect("index ids"),
        live,
        "the index agrees with the database"
    );
    let (n, c) = store.counts().expect("counts");
    assert_eq!(n as usize, docs.len());
    assert_eq!(c as usize, live.len());
    titles
}

/// The public API sees chunks only through live documents, so an orphan
/// chunk row would be invisible to it. Count the raw rows as well.
fn assert_no_orphan_rows(data: &Path, live_documents: usize, live_chunks: usize) {
    let conn = rusqlite::Connection::open(data.join(DB_FILE_NAME)).expect("open the store file");
    let count = |sql: &str| -> usize {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .expect("count") as usize
    };
    assert_eq!(
        count("SELECT count(*) FROM documents"),
        live_documents,
        "document rows"
    );
    assert_eq!(
        count("SELECT count(*) FROM chunks"),
        live_chunks,
        "chunk rows"
    );
}

/// Searches a canary and returns the titles of the results.
fn found_titles(instance: &Instance, word: &str) -> BTreeSet<String> {
    let page = instance.search(OWNER, word, 1).expect("search");
    assert_eq!(page.query_words, 1, "{word} is one word");
    page.results.into_iter().map(|r| r.title).collect()
}

/// What a crash at one point leaves behind, and how the store must wake.
struct Case {
    point: &'static str,
    /// Whether an earlier import completed (and wrote snapshot generation 1) first.
    baseline: bool,
    /// How many of the canary documents are committed when the child parks.
    committed: usize,
    /// The wake kind the reopened store must report.
    wake: WakeKind,
}

fn check(case: Case) {
    let sources = write_sources();
    let data_dir = tempfile::tempdir().expect("tempdir");
    let data = data_dir.path();
    if case.baseline {
        let report = import_to_completion(data, &sources.baseline);
        assert_eq!(
            status_counts(&report),
            BTreeMap::from([("created".to_string(), 1)])
        );
    }

    import_and_kill_at(data, &sources.canaries, case.point);

    // The crash state itself, before anything reopens it.
    let temporaries = temporary_files(data);
    if case.point == "snapshot:before-rename" {
        assert_eq!(
            temporaries.len(),
            1,
            "the unrenamed snapshot is on disk: {temporaries:?}"
        );
    } else {
        assert!(temporaries.is_empty(), "{temporaries:?}");
    }
    assert_no_plaintext(data, &sources, "right after the kill");

    let committed: Vec<usize> = (1..=case.committed).collect();
    let absent: Vec<usize> = (case.committed + 1..=CANARY_DOCS).collect();
    let mut expected_titles: BTreeSet<String> =
        committed.iter().map(|n| canary_title(*n)).collect();
    if case.baseline {
        expected_titles.insert(BASELINE_TITLE.to_string());
    }
    assert!(
        !expected_titles.is_empty(),
        "presence: at least one committed document makes the absences meaningful"
    );

    {
        let instance = wake(data);
        assert_eq!(instance.wake_report().kind, case.wake, "{}", case.point);
        let titles = assert_consistent(&instance, &sources);
        assert_eq!(
            titles, expected_titles,
            "exactly the committed documents are in"
        );

        // Presence first: each committed document's canary finds it, and only it.
        for n in &committed {
            assert_eq!(
                found_titles(&instance, &canary(*n)),
                BTreeSet::from([canary_title(*n)]),
                "{}",
                canary(*n)
            );
        }
        if case.baseline {
            assert_eq!(
                found_titles(&instance, BASELINE_CANARY),
                BTreeSet::from([BASELINE_TITLE.to_string()])
            );
        }
        for n in &absent {
            assert!(
                found_titles(&instance, &canary(*n)).is_empty(),
                "{}",
                canary(*n)
            );
        }
        let live = instance.store().live_chunk_ids().expect("ids").len();
        drop(instance);
        assert_no_orphan_rows(data, expected_titles.len(), live);
    }
    assert!(
        temporary_files(data).is_empty(),
        "no temporary file is left once the store has reopened"
    );
    assert_no_plaintext(data, &sources, "after reopening");

    // Re-running the import finishes the job: what was committed is unchanged,
    // the rest is created, and every document is in.
    let report = import_to_completion(data, &sources.canaries);
    let mut want = BTreeMap::new();
    if !committed.is_empty() {
        want.insert("unchanged".to_string(), committed.len());
    }
    if !absent.is_empty() {
        want.insert("created".to_string(), absent.len());
    }
    assert_eq!(status_counts(&report), want);

    let instance = wake(data);
    assert!(
        matches!(instance.wake_report().kind, WakeKind::Loaded { .. }),
        "{:?}",
        instance.wake_report().kind
    );
    let titles = assert_consistent(&instance, &sources);
    assert_eq!(titles.len(), CANARY_DOCS + usize::from(case.baseline));
    for n in 1..=CANARY_DOCS {
        assert_eq!(
            found_titles(&instance, &canary(n)),
            BTreeSet::from([canary_title(n)])
        );
    }
    let live = instance.store().live_chunk_ids().expect("ids").len();
    drop(instance);
    assert_no_orphan_rows(data, titles.len(), live);
    assert_no_plaintext(data, &sources, "after the import completed");
}

/// The wake a crash over the baseline causes once a canary document is
/// committed: the store's seq is ahead of snapshot generation 1's.
fn behind_baseline(store_seq: i64) -> WakeKind {
    WakeKind::Rebuilt {
        reason: format!("snapshot generation 1 is behind the store (seq 1 < {store_seq})"),
    }
}

/// The wake a crash into an empty store causes once something is committed:
/// the import never got as far as recording a snapshot.
fn no_snapshot_recorded() -> WakeKind {
    WakeKind::Rebuilt {
        reason: "no snapshot has been recorded".to_string(),
    }
}

#[test]
fn a_kill_before_the_first_commit_loses_only_the_open_document_and_loads_the_snapshot() {
    // Nothing the crashed run did was committed, so the store's seq still
    // equals snapshot generation 1's and the snapshot loads as it is.
    check(Case {
        point: "ingest:before-commit",
        baseline: true,
        committed: 0,
        wake: WakeKind::Loaded { generation: 1 },
    });
}

#[test]
fn a_kill_right_after_the_first_commit_keeps_that_document_whole_and_rebuilds_the_behind_snapshot()
{
    check(Case {
        point: "ingest:after-commit",
        baseline: true,
        committed: 1,
        wake: behind_baseline(2),
    });
}

#[test]
fn a_kill_right_after_the_first_commit_into_an_empty_store_rebuilds_because_no_snapshot_exists() {
    check(Case {
        point: "ingest:after-commit",
        baseline: false,
        committed: 1,
        wake: no_snapshot_recorded(),
    });
}

#[test]
fn a_kill_after_the_first_imported_document_keeps_it_whole_and_rebuilds_the_behind_snapshot() {
    check(Case {
        point: "import:after-first-document",
        baseline: true,
        committed: 1,
        wake: behind_baseline(2),
    });
}

#[test]
fn a_kill_after_the_first_imported_document_into_an_empty_store_keeps_it_whole() {
    check(Case {
        point: "import:after-first-document",
        baseline: false,
        committed: 1,
        wake: no_snapshot_recorded(),
    });
}

#[test]
fn a_kill_before_the_snapshot_rename_keeps_every_document_and_leaves_only_sealed_bytes() {
    // Every document committed, but the new generation was never renamed into
    // place or recorded, so the recorded generation 1 is five changes behind.
    check(Case {
        point: "snapshot:before-rename",
        baseline: true,
        committed: CANARY_DOCS,
        wake: behind_baseline(1 + CANARY_DOCS as i64),
    });
}

#[test]
fn a_kill_before_the_first_snapshot_rename_into_an_empty_store_keeps_every_document() {
    check(Case {
        point: "snapshot:before-rename",
        baseline: false,
        committed: CANARY_DOCS,
        wake: no_snapshot_recorded(),
    });
}

/// Imports the baseline, then runs `memoria delete` on it armed at `point`
/// and SIGKILLs it there. Returns the sources and the deleted document's id.
fn delete_baseline_and_kill_at(data: &Path, point: &str) -> (Sources, String) {
    let sources = write_sources();
    import_to_completion(data, &sources.baseline);
    let id = {
        let instance = wake(data);
        let docs = instance.store().documents().expect("documents");
        assert_eq!(docs.len(), 1, "the baseline is the one document");
        assert_eq!(
            found_titles(&instance, BASELINE_CANARY),
            BTreeSet::from([BASELINE_TITLE.to_string()]),
            "presence: the baseline is searchable before the delete"
        );
        docs[0].id.clone()
    };
    let mut cmd = memoria(data);
    cmd.arg("delete").arg(&id);
    kill_at(cmd, point);
    (sources, id)
}

#[test]
fn a_kill_in_the_middle_of_the_log_append_leaves_a_torn_line_that_is_ignored_and_deletes_nothing() {
    let data = tempfile::tempdir().expect("tempdir");
    let (sources, id) = delete_baseline_and_kill_at(data.path(), "tombstone:mid-append");
    let log_path = TombstoneLog::path_in(data.path());
    let raw = std::fs::read(&log_path).expect("the log file exists");
    assert!(
        !raw.is_empty() && !raw.ends_with(b"\n"),
        "presence: the crash left a torn line ({} bytes)",
        raw.len()
    );
    let mut instance = wake(data.path());
    assert_eq!(instance.wake_report().tombstones_replayed, 0);
    assert_eq!(instance.tombstone_log().last_seq(), 0);
    assert_eq!(
        instance.tombstone_log().torn_bytes_dropped(),
        raw.len() as u64
    );
    assert!(instance.incomplete_deletions().is_empty());
    // The delete was never acknowledged, so the document is still there.
    assert_eq!(
        found_titles(&instance, BASELINE_CANARY),
        BTreeSet::from([BASELINE_TITLE.to_string()])
    );
    let d = instance.delete(&id).expect("the delete runs again");
    assert_eq!(d.tombstone_seq, 1, "the torn line's sequence is reused");
    assert!(d.complete);
    drop(instance);
    let instance = wake(data.path());
    assert_eq!(instance.tombstone_log().last_seq(), 1);
    assert!(found_titles(&instance, BASELINE_CANARY).is_empty());
    assert_no_plaintext(data.path(), &sources, "after a torn tombstone append");
}

#[test]
fn a_kill_after_the_log_append_is_finished_by_the_next_wake_before_anything_is_served() {
    let data = tempfile::tempdir().expect("tempdir");
    let (sources, id) = delete_baseline_and_kill_at(data.path(), "tombstone:after-append");
    let instance = wake(data.path());
    assert_eq!(instance.wake_report().tombstones_replayed, 1);
    assert_eq!(instance.tombstone_log().last_seq(), 1);
    assert!(
        instance.incomplete_deletions().is_empty(),
        "the wake wrote a snapshot that includes the replayed tombstone"
    );
    assert!(found_titles(&instance, BASELINE_CANARY).is_empty());
    assert!(
        instance.document(OWNER, &id).expect("read").is_none(),
        "the deleted document does not open"
    );
    assert_no_plaintext(data.path(), &sources, "after a kill past the log append");
}

#[test]
fn every_crash_point_the_code_defines_is_killed_at_by_a_test_here() {
    // The points the tests above kill at. A new crash point fails this test
    // until a test kills the import there too.
    let covered: BTreeSet<&str> = [
        "ingest:before-commit",
        "ingest:after-commit",
        "import:after-first-document",
        "snapshot:before-rename",
        "tombstone:mid-append",
        "tombstone:after-append",
    ]
    .into_iter()
    .collect();
    let defined: BTreeSet<&str> = CRASHPOINTS.iter().copied().collect();
    assert_eq!(covered, defined);
}
