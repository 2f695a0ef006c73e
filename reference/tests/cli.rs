//! The `memoria` command as a newcomer meets it: bad input is a usage or configuration error (exit 2) with its cause printed, and a wrong DEK changes nothing on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use memoria::Dek;

const OWNER: &str = "ana@example.org";
/// `memoria`'s exit code for a usage or configuration error (see `main.rs`).
const EXIT_USAGE: i32 = 2;

/// The `memoria` binary for `data`, with `dek` as its DEK and nothing inherited.
fn memoria(data: &Path, dek: &Dek) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memoria"));
    cmd.arg("--data")
        .arg(data)
        .env("MEMORIA_DEK", dek.to_base64())
        .env("MEMORIA_OWNERS", OWNER)
        .env("MEMORIA_LOG", "warn")
        .env_remove("MEMORIA_DEK_FILE")
        .env_remove("MEMORIA_DATA")
        .env_remove("MEMORIA_SIBLINGS")
        .stdin(Stdio::null());
    cmd
}

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
fn a_dek_file_that_does_not_exist_is_a_configuration_error_and_its_cause_is_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.key");
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
