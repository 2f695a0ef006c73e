//! The `memoria-kit` binary a sibling implementer installs: conform's flags without `--fake`, its list of cases, and its exit codes for usage and an unreachable target.
//!
//! The run itself is the library's, which the harness's `tests/harness/conform.rs`
//! drives against the fake sibling over loopback and TLS; this is the
//! binary's own surface.

use std::process::{Command, Output};

fn kit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memoria-kit"))
        .args(args)
        .env_remove("MEMORIA_CONFORM_TOKEN")
        .env_remove("MEMORIA_CONFORM_SECOND_TOKEN")
        .output()
        .expect("memoria-kit runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_names_every_flag_of_a_run_and_no_fake() {
    let out = kit(&["--help"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let help = text(&out.stdout);
    for flag in [
        "--target",
        "--ca-file",
        "--token",
        "--second-token",
        "--control",
        "--list",
        "--run",
        "--skip",
        "--strict",
        "--format",
        "--known-failing",
        "--trace",
        "--manifest",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    assert!(!help.contains("--fake"), "{help}");
}

#[test]
fn list_prints_every_case_id_in_order() {
    let out = kit(&["--list", "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("--list --format json is JSON");
    let ids: Vec<&str> = listed.iter().filter_map(|c| c["id"].as_str()).collect();
    let want: Vec<&str> = memoria_kit::cases::all().iter().map(|c| c.id).collect();
    assert_eq!(ids, want);
}

#[test]
fn a_run_without_a_target_is_a_usage_error_naming_what_is_missing() {
    let out = kit(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim_end(),
        "memoria-kit: --target URL and --token T are required (or --list)"
    );
}

#[test]
fn an_unreachable_target_exits_3_with_its_url_and_cause() {
    // Bind then drop a listener: its port is closed now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = kit(&["--target", &url, "--token", "t"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.starts_with("memoria-kit: "), "{said}");
    assert!(said.contains(&url), "{said}");
    assert!(said.contains("connection refused"), "{said}");
}
