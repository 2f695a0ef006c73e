//! memoria as it ships has no crash point: the string that arms one is in the workspace's testkit build of the binary, and not in this package's.
//!
//! `memoria-ship` is the reference's sources built without the `testkit`
//! feature (`Cargo.toml` says why it is a package of its own); the
//! workspace's `memoria`, built beside it in the same target directory with
//! the feature the harness turns on, is where the presence is seen first.

use std::path::Path;

/// The environment variable that arms a crash point (`reference/src/crashpoint.rs`).
const CRASHPOINT_ENV: &[u8] = b"MEMORIA_CRASHPOINT";

/// How many times `needle` occurs in the file at `path`.
///
/// # Panics
/// The file cannot be read; the message names it and the build that makes it.
fn occurrences(path: &Path, needle: &[u8]) -> usize {
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        panic!(
            "reading {}: {e} (the workspace's one build makes it: cargo test --workspace --all-targets --no-run)",
            path.display()
        )
    });
    bytes.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn a_build_without_the_testkit_feature_carries_no_crash_point() {
    let shipped = Path::new(env!("CARGO_BIN_EXE_memoria-ship"));
    let with_testkit = shipped.with_file_name(format!("memoria{}", std::env::consts::EXE_SUFFIX));
    let with = occurrences(&with_testkit, CRASHPOINT_ENV);
    assert!(
        with >= 1,
        "the check cannot see a crash point even in the testkit build {}",
        with_testkit.display()
    );
    let without = occurrences(shipped, CRASHPOINT_ENV);
    assert_eq!(
        without,
        0,
        "{} (no testkit) carries the crash points' variable {without} times; {} (testkit) {with}",
        shipped.display(),
        with_testkit.display()
    );
}
