//! The `memoria-harness` command as a newcomer meets it: progress on stderr and the report alone on stdout, a run of nothing is a usage error, an unreachable target names its URL and cause, `replay --shrink` on a passing scenario says there is nothing to shrink, `demo` prints fake-control commands that run, and a listing piped into a reader that has gone ends quietly with success.

use std::io::BufRead as _;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `memoria-harness`'s exit code for a usage or harness error (see `main.rs`).
const EXIT_USAGE: i32 = 2;
/// `conform`'s exit code for a target that cannot be reached.
const EXIT_UNREACHABLE: i32 = 3;

fn harness(args: &[&str]) -> (Output, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_memoria-harness"))
        .args(args)
        .env_remove("MEMORIA_CONFORM_TOKEN")
        .env_remove("MEMORIA_CONFORM_SECOND_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("memoria-harness runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stdout, stderr)
}

#[test]
fn a_sweep_over_zero_seeds_is_a_usage_error_not_a_pass() {
    let (out, _, stderr) = harness(&["sweep", "26", "--seeds", "0"]);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
    assert!(stderr.contains("--seeds 0 runs nothing"), "{stderr}");
}

#[test]
fn a_sweep_past_the_last_seed_is_a_usage_error() {
    let from = u64::MAX.to_string();
    let (out, _, stderr) = harness(&["sweep", "26", "--from", &from, "--seeds", "2"]);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
}

#[test]
fn a_run_or_sweep_whose_skips_leave_no_case_is_a_usage_error() {
    for args in [
        &["run", "26", "--skip", "26/*"][..],
        &["sweep", "--skip", "*", "--seeds", "1"][..],
    ] {
        let (out, _, stderr) = harness(args);
        assert_eq!(out.status.code(), Some(EXIT_USAGE), "{args:?}: {stderr}");
        assert!(stderr.contains("runs no case"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_selector_matching_no_case_is_a_usage_error_for_run_and_sweep() {
    for args in [&["run", "99"][..], &["sweep", "nope/*", "--seeds", "1"][..]] {
        let (out, _, stderr) = harness(args);
        assert_eq!(out.status.code(), Some(EXIT_USAGE), "{args:?}: {stderr}");
        assert!(
            stderr.contains("no registered gate or case"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn conform_against_a_closed_port_exits_3_naming_the_url_and_connection_refused() {
    // Bind then drop a listener: its port is closed now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let (out, _, stderr) = harness(&["conform", "--target", &url, "--token", "t"]);
    assert_eq!(out.status.code(), Some(EXIT_UNREACHABLE), "{stderr}");
    assert!(stderr.contains(&url), "names the URL: {stderr}");
    assert!(
        stderr.contains("connection refused"),
        "names the cause: {stderr}"
    );
}

/// The gate whose cases the progress tests run: a quick one.
const QUICK_GATE: &str = "26";

#[test]
fn run_prints_a_line_per_finished_case_on_stderr_and_stdout_is_the_json_report_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("run.json");
    let report_arg = report.display().to_string();
    let (out, stdout, stderr) = harness(&[
        "run",
        QUICK_GATE,
        "--seed",
        "7",
        "--format",
        "json",
        "--json-report",
        &report_arg,
    ]);
    assert!(out.status.success(), "{stderr}");
    let written = std::fs::read(&report).expect("the report file is written");
    assert_eq!(
        out.stdout, written,
        "stdout holds the report and nothing else"
    );
    let gate = memoria_gates::gate(QUICK_GATE).expect("registered");
    let total = gate.cases.len();
    assert!(total > 0, "the gate has cases");
    for (n, c) in gate.cases.iter().enumerate() {
        let line = format!(
            "run [{:>w$}/{total}] pass {} (",
            n + 1,
            c.id,
            w = total.to_string().len()
        );
        assert!(
            stderr.contains(&line),
            "{line:?} missing from stderr:\n{stderr}"
        );
    }
    assert!(!stdout.contains("run ["), "a progress line reached stdout");
}

#[test]
fn run_as_junit_and_replay_keep_progress_off_stdout() {
    let (out, stdout, stderr) = harness(&["run", QUICK_GATE, "--seed", "7", "--format", "junit"]);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("<?xml"), "{stdout}");
    assert!(stdout.trim_end().ends_with("</testsuites>"), "{stdout}");
    assert!(
        stderr.contains("run [") && !stdout.contains("run ["),
        "{stderr}"
    );

    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/cold-morning.toml"
    );
    let (out, stdout, stderr) = harness(&["replay", file, "--format", "json"]);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_str::<serde_json::Value>(&stdout).expect("stdout is one JSON document");
    assert!(
        stderr.contains("replay [1/1] pass ") && stderr.contains("cold-morning.toml"),
        "{stderr}"
    );
}

#[test]
fn shrinking_a_passing_scenario_says_there_is_nothing_to_shrink() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../scenarios/cold-morning.toml"
    );
    let (out, stdout, stderr) = harness(&["replay", "--shrink", file]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("nothing to shrink: the scenario passes"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("t="),
        "the plain replay was printed: {stdout}"
    );
}

#[test]
fn a_scenario_with_a_typo_is_a_usage_error_pointing_at_the_typo_s_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("typo.toml");
    std::fs::write(
        &file,
        "title = \"t\"\nreaders = [\"ana\"]\n[[sibling]]\napp = \"docs\"\n[[event]]\ndo = \"warmed-up\"\n[[event]]\ndo = \"query\"\nreader = \"ana\"\nqq = \"x\"\n",
    )
    .expect("writes");
    let (out, _, stderr) = harness(&["replay", file.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
    assert!(stderr.contains("line 10, column 1"), "{stderr}");
    assert!(stderr.contains("qq"), "{stderr}");
}

/// How long `memoria-harness demo` may take to print its instructions: it
/// starts four fakes, wakes memoria and arranges the faults; this bounds
/// the polling of its stdout, it is not a sleep.
const DEMO_DEADLINE: Duration = Duration::from_secs(60);

/// A child process killed when the test ends, passing or failing.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_harness_demo_prints_its_sign_in_link_and_fake_control_commands_that_run() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memoria-harness"))
        .args(["demo", "--addr", "127.0.0.1:0"])
        .env("MEMORIA_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map(KilledOnDrop)
        .expect("memoria-harness demo starts");
    let stdout = child.0.stdout.take().expect("stdout is piped");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + DEMO_DEADLINE;
    let mut lines = vec![];
    while !lines
        .iter()
        .any(|l: &String| l.starts_with("every sibling's control takes"))
    {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => lines.push(line),
            Err(_) => panic!(
                "memoria-harness demo --addr 127.0.0.1:0 printed no instructions within {DEMO_DEADLINE:?}:\n{}",
                lines.join("\n")
            ),
        }
    }
    let printed = lines.join("\n");
    assert!(
        lines.iter().any(|l| l.contains("/auth/login?token=")),
        "a sign-in link: {printed}"
    );
    let command = |action: &str| {
        lines
            .iter()
            .map(|l| l.trim())
            .find(|l| l.contains(" fake-control --url ") && l.ends_with(action))
            .unwrap_or_else(|| panic!("no printed `{action}` command: {printed}"))
            .to_owned()
    };
    for action in ["outage off", "announce whole"] {
        let line = command(action);
        let words: Vec<&str> = line.split_whitespace().collect();
        let out = Command::new(words[0])
            .args(&words[1..])
            .stdin(Stdio::null())
            .output()
            .expect("the printed command runs");
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{line}: {} {said} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn guards_names_the_gates_and_mutations_that_stand_on_a_file_and_refuses_a_path_that_is_not_there()
{
    let (out, stdout, stderr) = harness(&["guards", "reference/src/sibling/sync.rs"]);
    assert!(out.status.success(), "{stderr}");
    for want in [
        "gate 27 ",
        "mutants/g27/author-omitted-items-kept.toml  (fn reannounce)",
        "gate scenario ",
    ] {
        assert!(stdout.contains(want), "{want:?} missing from:\n{stdout}");
    }
    let (out, _, stderr) = harness(&["guards", "reference/src/no-such-file.rs"]);
    assert_eq!(out.status.code(), Some(EXIT_USAGE), "{stderr}");
    assert!(stderr.contains("no-such-file.rs"), "{stderr}");
}

#[test]
fn list_counts_each_gates_mutations_and_the_files_they_touch() {
    let (out, stdout, stderr) = harness(&["list"]);
    assert!(out.status.success(), "{stderr}");
    let gate27 = stdout
        .split("\ngate ")
        .find(|g| g.starts_with("27 "))
        .expect("gate 27 is listed");
    assert!(
        gate27.contains("  mutations: ") && gate27.contains("reference/src/sibling/sync.rs"),
        "{gate27}"
    );
    assert!(stdout.contains("the conformance kit's broken fakes (conform): "));
}

#[test]
fn mutants_show_makes_an_item_anchored_mutation_into_a_diff_against_the_tree() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mutants/g06/adversary-any-2xx-status-decoded.toml"
    );
    let (out, stdout, stderr) = harness(&["mutants", "show", file]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("--- a/reference/src/net/wire.rs\n+++ b/reference/src/net/wire.rs\n@@ -")
            && stdout.contains("\n-        S2Answer::Http { status: 200, body } => body,\n"),
        "{stdout}"
    );
}

#[test]
fn a_listing_whose_reader_has_gone_ends_quietly_with_success() {
    let mutation = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../mutants/g06/adversary-any-2xx-status-decoded.toml"
    );
    for args in [
        &["list"][..],
        &["list", "--format", "json"],
        &["list", "--format", "markdown"],
        &["guards", "simulator/src/fake"],
        &["guards", "simulator/src/fake", "--format", "json"],
        &["conform", "--list"],
        &["mutants", "show", mutation],
    ] {
        // The read end closed before the command starts: its first write
        // meets a broken pipe, as `memoria-harness guards PATH | head` does
        // once head has read its lines.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_memoria-harness"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("memoria-harness runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}\n{stderr}", out.status);
        assert!(stderr.is_empty(), "{args:?} said on stderr:\n{stderr}");
    }
}
