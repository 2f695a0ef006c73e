//! The `memoria` command as a newcomer meets it: bad input is a usage or configuration error (exit 2) with its cause printed, a wrong DEK changes nothing on disk, a brief prints its status first and refuses what it cannot read, and `demo` answers its sign-in link before its import is done and keeps a named data directory.
//!
//! Size: the `memoria` command's behaviour as a newcomer meets it, one test per friction; splitting by subcommand would scatter one story.
//!
//! The demo tests run the real binary on a loopback port the kernel picks
//! (`--addr 127.0.0.1:0`) and read the address it prints. A failure names
//! the command line and the port.

use std::collections::BTreeMap;
use std::io::{BufRead as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use memoria::Dek;
use wait_timeout::ChildExt as _;

use crate::{OWNER, memoria};
/// `memoria`'s exit code for a usage or configuration error (see `main.rs`).
const EXIT_USAGE: i32 = 2;

fn run(mut cmd: Command) -> (Output, String) {
    let out = cmd.output().expect("memoria runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

/// Every file under `dir` with its bytes.
fn files_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("lists") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).expect("reads");
                out.insert(p.strip_prefix(dir).expect("inside").to_path_buf(), bytes);
            }
        }
    }
    out
}

#[test]
fn importing_a_path_that_does_not_exist_is_a_usage_error_and_touches_no_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let missing = dir.path().join("no-such-notes");
    let mut cmd = memoria(&data, &Dek::generate());
    cmd.arg("import").arg(&missing);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
    assert!(stderr.contains("no-such-notes"), "names the path: {stderr}");
    assert!(!data.exists(), "the data directory was created");
}

#[test]
fn a_command_that_only_reads_refuses_a_data_directory_that_does_not_exist_and_creates_nothing() {
    let rows: &[&[&str]] = &[
        &["search", "--as", OWNER, "kettle"],
        &["list"],
        &[
            "brief",
            "--as",
            OWNER,
            "--scope",
            "team",
            "descale the kettle",
        ],
        &["mcp", "--as", OWNER],
        &["serve", "--addr", "127.0.0.1:0"],
        &["delete", "0123456789abcdef0123456789abcdef"],
    ];
    for args in rows {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("typo-data");
        let mut cmd = memoria(&data, &Dek::generate());
        // No DEK configured: the path that would make a development key.
        cmd.env_remove("MEMORIA_DEK").args(*args);
        let (out, stderr) = run(cmd);
        assert_eq!(out.status.code(), Some(EXIT_USAGE), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{} does not exist", data.display())),
            "{args:?} names the path: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?} printed an answer");
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("lists").collect();
        assert!(left.is_empty(), "{args:?} created {left:?}");
    }
}

#[test]
fn a_data_path_naming_a_file_is_refused_with_exit_2_naming_it_and_the_file_is_untouched() {
    let rows: &[&[&str]] = &[
        &["list"],
        &["search", "--as", OWNER, "kettle"],
        &["import", "NOTES"],
        &["sync-folder", "NOTES"],
        &["serve", "--init", "--addr", "127.0.0.1:0"],
    ];
    for args in rows {
        let dir = tempfile::tempdir().expect("tempdir");
        let notes = dir.path().join("notes");
        std::fs::create_dir(&notes).expect("creates");
        std::fs::write(notes.join("kettle.md"), "# Kettle\n\nDescale it.\n").expect("writes");
        let data = dir.path().join("data.txt");
        std::fs::write(&data, "not a store\n").expect("writes");
        let mut cmd = memoria(&data, &Dek::generate());
        cmd.env_remove("MEMORIA_DEK");
        for a in *args {
            if *a == "NOTES" {
                cmd.arg(&notes);
            } else {
                cmd.arg(a);
            }
        }
        let (out, stderr) = run(cmd);
        assert_eq!(out.status.code(), Some(EXIT_USAGE), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{} is not a directory", data.display())),
            "{args:?} names the path: {stderr}"
        );
        assert!(!stderr.contains("os error 17"), "{args:?}: {stderr}");
        assert_eq!(std::fs::read(&data).expect("reads"), b"not a store\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("lists").count(),
            2,
            "{args:?} created something beside the file"
        );
    }
}

#[test]
fn import_names_each_entry_it_skips_with_why_and_counts_them_in_its_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(notes.join("locked")).expect("creates");
    std::fs::write(notes.join("kettle.md"), "# Kettle\n\nDescale it monthly.\n").expect("writes");
    std::fs::write(
        notes.join("locked/inside.md"),
        "# Inside\n\nBehind a lock.\n",
    )
    .expect("writes");
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).expect("creates");
    std::fs::write(outside.join("far.md"), "# Far\n\nOutside the tree.\n").expect("writes");
    std::os::unix::fs::symlink(notes.join("kettle.md"), notes.join("link-to-file.md"))
        .expect("links");
    std::os::unix::fs::symlink(&outside, notes.join("link-to-dir")).expect("links");
    std::os::unix::fs::symlink(dir.path().join("gone.md"), notes.join("dangling.md"))
        .expect("links");
    use std::os::unix::fs::PermissionsExt as _;
    let locked = notes.join("locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmods");
    // Root lists a directory whatever its mode: then nothing is unreadable.
    let lock_holds = std::fs::read_dir(&locked).is_err();

    let mut cmd = memoria(&dir.path().join("data"), &Dek::generate());
    cmd.arg("import").arg(&notes);
    let (out, stderr) = run(cmd);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("chmods");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    // (the entry, the reason printed for it)
    let rows = [
        ("link-to-file.md", "symlink"),
        ("link-to-dir", "symlink"),
        ("dangling.md", "symlink"),
    ];
    for (entry, why) in rows {
        let line = format!("skipped    {}: {why}", notes.join(entry).display());
        assert!(stdout.contains(&line), "{line:?} missing from:\n{stdout}");
    }
    assert!(!stdout.contains("far.md"), "a link was followed: {stdout}");
    let summary = stdout.lines().last().unwrap_or_default();
    if lock_holds {
        let line = format!("skipped    {}: unreadable", locked.display());
        assert!(stdout.contains(&line), "{line:?} missing from:\n{stdout}");
        assert!(
            summary.ends_with("3 symlinks skipped, 1 unreadable skipped"),
            "{summary}"
        );
        assert_eq!(
            out.status.code(),
            Some(1),
            "a walk error is partial: {stderr}"
        );
    } else {
        assert!(stdout.contains("inside.md"), "{stdout}");
        assert!(
            summary.ends_with("3 symlinks skipped, 0 unreadable skipped"),
            "{summary}"
        );
        assert_eq!(out.status.code(), Some(0), "{stderr}");
    }
    assert!(
        summary.starts_with("1 created") || summary.starts_with("2 created"),
        "{summary}"
    );
}

#[test]
fn ai_on_without_a_key_is_refused_and_ai_on_with_one_never_prints_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `list` only reads: its data directory must exist.
    std::fs::create_dir(dir.path().join("data")).expect("creates");
    let mut cmd = memoria(&dir.path().join("data"), &Dek::generate());
    cmd.env("MEMORIA_AI", "on").arg("list");
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
    assert!(stderr.contains("MEMORIA_PROVIDER_KEY"), "{stderr}");
    let mut cmd = memoria(&dir.path().join("data"), &Dek::generate());
    cmd.env("MEMORIA_AI", "on")
        .env("MEMORIA_PROVIDER_KEY", "tx-cli-key-5150")
        .arg("list");
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stderr.contains("tx-cli-key-5150") && !stdout.contains("tx-cli-key-5150"));
}

#[test]
fn a_dek_file_that_does_not_exist_is_a_configuration_error_and_its_cause_is_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.key");
    std::fs::create_dir(dir.path().join("data")).expect("creates");
    let mut cmd = memoria(&dir.path().join("data"), &Dek::generate());
    cmd.env_remove("MEMORIA_DEK")
        .env("MEMORIA_DEK_FILE", &missing)
        .arg("list");
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
    assert!(stderr.contains("MEMORIA_DEK_FILE"), "{stderr}");
    // The nested cause (the I/O error) is printed after the message.
    let cause = std::io::Error::from_raw_os_error(2).to_string();
    assert!(
        stderr.contains(&format!("cannot be read: {cause}")),
        "the chain ends in the I/O cause: {stderr}"
    );
}

#[test]
fn a_wrong_dek_on_an_existing_store_is_refused_with_exit_2_and_leaves_every_file_byte_identical() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let src = dir.path().join("notes.md");
    std::fs::write(&src, "# Kettle\n\nDescale the office kettle every month.\n").expect("writes");
    let right = Dek::generate();
    let mut cmd = memoria(&data, &right);
    cmd.arg("import").arg(&src);
    let (out, stderr) = run(cmd);
    assert!(out.status.success(), "the import succeeds: {stderr}");
    let before = files_of(&data);
    assert!(!before.is_empty());

    for args in [&["list"][..], &["search", "--as", OWNER, "kettle"][..]] {
        let mut cmd = memoria(&data, &Dek::generate());
        cmd.args(args);
        let (out, stderr) = run(cmd);
        assert_eq!(out.status.code(), Some(EXIT_USAGE), "{args:?}: {stderr}");
        assert!(
            stderr.contains("the DEK does not open the store"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("Nothing was changed"), "{args:?}: {stderr}");
        assert!(!stderr.contains("sealed title cell"), "{args:?}: {stderr}");
        assert_eq!(
            files_of(&data),
            before,
            "{args:?} changed the data directory"
        );
    }

    let mut cmd = memoria(&data, &right);
    cmd.arg("list");
    let (out, stderr) = run(cmd);
    assert!(
        out.status.success(),
        "the right DEK still opens it: {stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Kettle"));
}

// ---------------------------------------------------------------------------
// `memoria demo`: a real process on a loopback port.

/// How long a demo process may take to print a line the test waits for: a
/// debug build waking and seeding on a busy 2-core machine takes a few
/// seconds; this bounds the polling, it is not a sleep.
const DEMO_LINE_DEADLINE: Duration = Duration::from_secs(60);

/// The `memoria` binary as a person runs `demo` for the first time: the
/// development default (no DEK, no owners), nothing else inherited.
fn demo_command(args: &[&std::ffi::OsStr]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memoria"));
    cmd.arg("demo")
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("MEMORIA_LOG", "warn")
        .env_remove("MEMORIA_DEK")
        .env_remove("MEMORIA_DEK_FILE")
        .env_remove("MEMORIA_OWNERS")
        .env_remove("MEMORIA_DATA")
        .env_remove("MEMORIA_SIBLINGS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    cmd
}

/// A running `memoria demo`, its stdout read line by line; killed on drop.
struct Demo {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    /// The command line, for failure messages.
    shown: String,
}

impl Demo {
    fn start(mut cmd: Command) -> Demo {
        let shown = format!("{cmd:?}");
        let mut child = cmd.spawn().expect("memoria demo starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Demo {
            child,
            lines,
            seen: vec![],
            shown,
        }
    }

    /// The first line printed that satisfies `want`, already read or
    /// printed within [`DEMO_LINE_DEADLINE`].
    fn line(&mut self, what: &str, want: impl Fn(&str) -> bool) -> String {
        if let Some(line) = self.seen.iter().find(|l| want(l)) {
            return line.clone();
        }
        let deadline = Instant::now() + DEMO_LINE_DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if want(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "{} printed no {what} within {DEMO_LINE_DEADLINE:?}; stdout so far:\n{}",
                    self.shown,
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// The sign-in link it printed next, as (address, path).
    fn sign_in_link(&mut self) -> (String, String) {
        let line = self.line("sign-in link", |l| l.contains("/auth/login?token="));
        let url = &line[line.find("http://").expect("the link is a URL")..];
        let rest = &url["http://".len()..];
        let slash = rest.find('/').expect("the link has a path");
        (rest[..slash].to_string(), rest[slash..].to_string())
    }

    /// Every line read so far.
    fn stdout(&self) -> String {
        self.seen.join("\n")
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 GET to `addr` (`127.0.0.1:PORT`): status, headers, body.
fn get(addr: &str, path: &str, cookie: Option<&str>) -> (u16, String, String) {
    let mut stream = std::net::TcpStream::connect(addr)
        .unwrap_or_else(|e| panic!("connecting to the demo on {addr}: {e}"));
    stream
        .set_read_timeout(Some(DEMO_LINE_DEADLINE))
        .expect("a read timeout");
    let cookie = cookie
        .map(|c| format!("Cookie: {c}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{cookie}Connection: close\r\n\r\n"
    )
    .expect("the request is sent");
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .unwrap_or_else(|e| panic!("reading the answer from {addr}{path}: {e}"));
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{addr}{path} answered no status line: {head}"));
    (status, head.to_string(), body.to_string())
}

/// Follows a sign-in link; returns the session cookie (`name=value`).
fn sign_in(addr: &str, path: &str) -> String {
    let (status, head, _) = get(addr, path, None);
    assert_eq!(
        status, 303,
        "the sign-in link on {addr} answers 303: {head}"
    );
    let set = head
        .lines()
        .find_map(|l| {
            l.strip_prefix("set-cookie: ")
                .or(l.strip_prefix("Set-Cookie: "))
        })
        .unwrap_or_else(|| panic!("the sign-in on {addr} sets no cookie: {head}"));
    set.split(';').next().expect("a cookie pair").to_string()
}

const EGRESS_FOOTER: &str = "No document leaves this instance";

#[test]
fn the_demo_answers_its_sign_in_link_while_its_import_is_still_reading_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A named pipe: reading it blocks until the test writes, so the import
    // is provably still running while the page is asked for.
    let fifo = dir.path().join("slow-notes.md");
    let made = Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", fifo.display());
    let data = dir.path().join("data");
    let mut demo = Demo::start(demo_command(&[
        "--data".as_ref(),
        data.as_os_str(),
        fifo.as_os_str(),
    ]));
    let (addr, link) = demo.sign_in_link();
    let cookie = sign_in(&addr, &link);
    let (status, _, body) = get(&addr, "/", Some(&cookie));
    assert_eq!(status, 200, "{} on {addr}: the home page", demo.shown);
    assert!(
        body.contains(EGRESS_FOOTER),
        "the page has its footer: {body}"
    );
    demo.line("line saying the import is running", |l| {
        l.starts_with("demo: importing 1 files")
    });
    assert!(
        !demo.stdout().contains("import done"),
        "the import cannot be done while its file is unread:\n{}",
        demo.stdout()
    );

    let writer = std::thread::spawn(move || {
        std::fs::write(
            &fifo,
            "# Slow notes\n\nThe zebra crossing outside the studio was repainted.\n",
        )
    });
    let done = demo.line("import-done line", |l| l.starts_with("demo: import done"));
    writer
        .join()
        .expect("the writer ends")
        .expect("the pipe takes the text");
    assert!(done.contains("1 created"), "{done}");
    let (status, _, body) = get(&addr, "/?q=zebra", Some(&cookie));
    assert_eq!(status, 200, "{} on {addr}: a search", demo.shown);
    assert!(
        body.contains("Slow notes"),
        "the imported file is found: {body}"
    );
}

#[test]
fn a_demo_on_a_named_data_directory_creates_it_and_a_second_run_imports_nothing_twice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).expect("mkdir");
    std::fs::write(
        notes.join("kettle.md"),
        "# Kettle\n\nDescale the office kettle every month.\n",
    )
    .expect("writes");
    let data = dir.path().join("absent").join("data");
    let args = ["--data".as_ref(), data.as_os_str(), notes.as_os_str()];

    let mut first = Demo::start(demo_command(&args));
    let seeded = first.line("seeding line", |l| l.contains("Almendra Studio corpus"));
    assert!(seeded.contains("12 created, 0 unchanged"), "{seeded}");
    let done = first.line("import-done line", |l| l.starts_with("demo: import done"));
    assert!(done.contains("1 created, 0 revised, 0 unchanged"), "{done}");
    drop(first);
    assert!(
        data.join("memoria.sqlite3").exists(),
        "the store is in --data"
    );

    let mut second = Demo::start(demo_command(&args));
    let seeded = second.line("seeding line", |l| l.contains("Almendra Studio corpus"));
    assert!(seeded.contains("0 created, 12 unchanged"), "{seeded}");
    let done = second.line("import-done line", |l| l.starts_with("demo: import done"));
    assert!(done.contains("0 created, 0 revised, 1 unchanged"), "{done}");
    drop(second);

    // The same store under the development default, as `memoria` reads it.
    let on_data = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_memoria"))
            .arg("--data")
            .arg(&data)
            .args(args)
            .env("MEMORIA_LOG", "warn")
            .env_remove("MEMORIA_DEK")
            .env_remove("MEMORIA_DEK_FILE")
            .env_remove("MEMORIA_OWNERS")
            .output()
            .expect("memoria runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let listed = on_data(&["list"]);
    assert!(
        listed.contains("13 documents"),
        "twelve fixtures and one note, once each: {listed}"
    );
    // The demo keyed the note as `memoria import` keys it: one document.
    let imported = on_data(&["import", notes.to_str().expect("a UTF-8 path")]);
    assert!(
        imported.contains("0 created, 0 revised, 1 unchanged"),
        "memoria import after the demo: {imported}"
    );
}

#[test]
fn a_demo_without_a_data_directory_keeps_its_store_in_a_throwaway_one_removed_on_ctrl_c() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut cmd = demo_command(&[]);
    cmd.env("TMPDIR", tmp.path())
        .env("MEMORIA_DATA", tmp.path().join("never"));
    let mut demo = Demo::start(cmd);
    let (addr, link) = demo.sign_in_link();
    let cookie = sign_in(&addr, &link);
    let (status, _, _) = get(&addr, "/?q=budget", Some(&cookie));
    assert_eq!(status, 200, "{} on {addr}", demo.shown);
    let held: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("lists")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(held.len(), 1, "one throwaway directory: {held:?}");
    assert!(
        held[0].to_string_lossy().starts_with("memoria-demo-"),
        "MEMORIA_DATA is not read by demo: {held:?}"
    );

    let pid = demo.child.id().to_string();
    let sent = Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill -INT {pid}");
    // The process's exit wakes the wait; the deadline only bounds it.
    let status = demo
        .child
        .wait_timeout(DEMO_LINE_DEADLINE)
        .expect("waits")
        .unwrap_or_else(|| {
            panic!(
                "{} did not stop within {DEMO_LINE_DEADLINE:?} of Ctrl-C",
                demo.shown
            )
        });
    assert!(
        status.success(),
        "{}: Ctrl-C exits 0, got {status}",
        demo.shown
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("lists")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(
        left.is_empty(),
        "the throwaway directory is removed: {left:?}"
    );
}

/// A store under `dir` with two notes imported from `dir/docs` (recorded
/// paths under that root, the project `docs`), and the DEK that opens it.
fn imported_notes(dir: &Path) -> (PathBuf, Dek, PathBuf) {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).expect("mkdir");
    std::fs::write(
        docs.join("kettle.md"),
        "# Kettle\n\nDescale the office kettle every month with citric acid.\n",
    )
    .expect("writes");
    std::fs::write(
        docs.join("budget.md"),
        "# Budget\n\nThe travel budget for 2026 is frozen until March.\n",
    )
    .expect("writes");
    let data = dir.join("data");
    let dek = Dek::generate();
    let mut cmd = memoria(&data, &dek);
    cmd.arg("import").arg(&docs);
    let (out, stderr) = run(cmd);
    assert!(out.status.success(), "the import succeeds: {stderr}");
    (data, dek, docs)
}

#[test]
fn a_brief_over_imported_files_prints_resolved_first_and_its_json_carries_the_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek, docs) = imported_notes(dir.path());
    let projects = format!("docs={}", docs.display());
    let mut cmd = memoria(&data, &dek);
    cmd.env("MEMORIA_PROJECTS", &projects).args([
        "brief",
        "--as",
        OWNER,
        "--scope",
        "docs",
        "descale the office kettle",
    ]);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next(), Some("resolved"), "{text}");
    assert!(text.contains("item: Kettle ("), "{text}");
    assert!(
        text.contains("\"Descale the office kettle every month with citric acid.\""),
        "{text}"
    );
    let mut cmd = memoria(&data, &dek);
    cmd.env("MEMORIA_PROJECTS", &projects).args([
        "brief",
        "--as",
        OWNER,
        "--scope",
        "docs",
        "--budget",
        "500",
        "--format",
        "json",
        "descale the office kettle",
    ]);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["status"], "resolved", "{json}");
    assert_eq!(json["budget_chars"], 500, "{json}");
    assert_eq!(json["item"]["title"], "Kettle", "{json}");
    // Without the project configured, the same files are the team's.
    let mut cmd = memoria(&data, &dek);
    cmd.args([
        "brief",
        "--as",
        OWNER,
        "--scope",
        "team",
        "the travel budget",
    ]);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next(), Some("resolved"), "{text}");
    assert!(text.contains("item: Budget ("), "{text}");
}

#[test]
fn each_brief_it_cannot_read_exits_2_with_the_reason_and_prints_no_brief() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek, _) = imported_notes(dir.path());
    let long = "a".repeat(memoria::QUERY_BYTES_MAX + 1);
    let many: Vec<String> = (0..=memoria::QUERY_WORDS_MAX)
        .map(|i| format!("w{i}"))
        .collect();
    let many = many.join(" ");
    let cases: Vec<(Vec<&str>, Option<&str>, &str)> = vec![
        (
            vec!["--scope", "team", ""],
            None,
            "the task holds no word to read for",
        ),
        (
            vec!["--scope", "team", "?!"],
            None,
            "the task holds no word to read for",
        ),
        (
            vec!["--scope", "team", &long],
            None,
            "a brief reads at most 1024 bytes",
        ),
        (
            vec!["--scope", "team", &many],
            None,
            "a brief reads at most 64",
        ),
        (
            vec!["--scope", "team", "--budget", "0", "kettle"],
            None,
            "a brief's budget is 1 to 16000 characters",
        ),
        (
            vec!["--scope", "team", "--budget", "16001", "kettle"],
            None,
            "a brief's budget is 1 to 16000 characters",
        ),
        (
            vec!["--scope", "nowhere", "kettle"],
            None,
            "the scopes here are: team",
        ),
        (
            vec!["--scope", "organisation", "kettle"],
            None,
            "nor a configured 'organisation' (MEMORIA_ORGANISATION)",
        ),
        (
            vec!["--scope", "team", "kettle"],
            Some("Docs=docs"),
            "a project name is 1 to 64 lower-case letters",
        ),
        (
            vec!["--scope", "team", "kettle"],
            Some("docs"),
            "a MEMORIA_PROJECTS entry is not name=PATH",
        ),
    ];
    for (args, projects, says) in &cases {
        let mut cmd = memoria(&data, &dek);
        if let Some(p) = projects {
            cmd.env("MEMORIA_PROJECTS", p);
        }
        cmd.args(["brief", "--as", OWNER]).args(args);
        let (out, stderr) = run(cmd);
        let what = format!("{:?} {projects:?}", &args[..args.len() - 1]);
        assert_eq!(out.status.code(), Some(EXIT_USAGE), "{what}: {stderr}");
        assert!(stderr.contains(says), "{what}: {stderr}");
        assert!(out.stdout.is_empty(), "{what}: no brief is printed");
    }
}

#[test]
fn a_brief_as_someone_not_on_the_owners_list_exits_3_and_prints_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (data, dek, _) = imported_notes(dir.path());
    let mut cmd = memoria(&data, &dek);
    cmd.args([
        "brief",
        "--as",
        "eve@example.org",
        "--scope",
        "team",
        "kettle",
    ]);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("eve@example.org is not an owner"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn import_dates_a_note_by_its_front_matter_else_its_file_and_search_says_which_in_text_and_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).expect("mkdir");
    std::fs::write(
        notes.join("standup.md"),
        "---\ntitle: Standup\ndate: 2026-03-03\n---\n# Standup\n\nThe kettle rota starts on Monday.\n",
    )
    .expect("writes");
    let retro = notes.join("retro.md");
    std::fs::write(&retro, "# Retro\n\nThe kettle broke twice in February.\n").expect("writes");
    // 2026-02-14T12:00:00Z, as the file's own modification time.
    let modified = std::time::UNIX_EPOCH + Duration::from_secs(1_771_070_400);
    std::fs::File::options()
        .write(true)
        .open(&retro)
        .and_then(|f| f.set_modified(modified))
        .expect("sets the modification time");
    let data = dir.path().join("data");
    let dek = Dek::generate();
    let mut cmd = memoria(&data, &dek);
    cmd.arg("import").arg(&notes);
    let (out, stderr) = run(cmd);
    assert!(out.status.success(), "the import succeeds: {stderr}");

    let mut cmd = memoria(&data, &dek);
    cmd.args(["search", "--as", OWNER, "--format", "json", "kettle"]);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let results = json["results"].as_array().expect("results");
    let dated: BTreeMap<String, (String, String)> = results
        .iter()
        .map(|r| {
            (
                r["title"].as_str().unwrap_or_default().to_string(),
                (
                    r["date"].as_str().unwrap_or_default().to_string(),
                    r["date_kind"].as_str().unwrap_or_default().to_string(),
                ),
            )
        })
        .collect();
    assert_eq!(
        dated,
        BTreeMap::from([
            (
                "Retro".to_string(),
                ("2026-02-14".to_string(), "file_modified".to_string())
            ),
            (
                "Standup".to_string(),
                ("2026-03-03".to_string(), "front_matter".to_string())
            ),
        ]),
        "{json}"
    );

    let mut cmd = memoria(&data, &dek);
    cmd.args(["search", "--as", OWNER, "kettle"]);
    let (out, stderr) = run(cmd);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    for words in [
        "dated 3 March 2026 in its front matter",
        "file modified 14 February 2026",
    ] {
        assert!(text.contains(words), "{words:?} is not in:\n{text}");
    }
}
