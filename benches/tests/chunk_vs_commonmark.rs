//! The chunker beside CommonMark over the crates' own Markdown (issue 11): runs the `chunk-vs-commonmark` binary over `fixtures/corpus/crate-docs` and fails on any disagreement.
//!
//! The corpus is fetched, never committed (`fixtures/corpus/fetch
//! crate-docs`); the README's test command and `.ci/run` fetch it first.
//! Without it the test fails naming the script: a differential over
//! nothing proves nothing. Being a test, it is built by `cargo test --workspace`
//! with everything else, so CI compiles nothing extra for it.

use std::path::PathBuf;
use std::process::Command;

/// Where the fetch script puts the crates' Markdown, relative to the workspace root.
const CRATE_DOCS_RELATIVE: &str = "fixtures/corpus/crate-docs";

#[test]
fn every_heading_commonmark_reads_in_the_crates_markdown_starts_a_passage_trail() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let docs = root.join(CRATE_DOCS_RELATIVE);
    assert!(
        docs.join("SOURCE").is_file(),
        "{CRATE_DOCS_RELATIVE} is missing: run fixtures/corpus/fetch crate-docs first"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_chunk-vs-commonmark"))
        .arg(&docs)
        .output()
        .expect("the chunk-vs-commonmark binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Presence: the differential compared files and headings at all.
    assert!(
        stdout.contains("compared ") && !stdout.contains("compared 0 files"),
        "the differential compared no file:\n{stdout}\n{stderr}"
    );
    // Presence: the corpus holds thematic breaks past the first line, the
    // class a mid-document `---` pair read as front matter broke (issue 32).
    let breaks = stdout
        .lines()
        .find_map(|l| {
            l.split("a thematic break after the front matter in ")
                .nth(1)
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok());
    assert!(
        breaks.is_some_and(|n| n > 0),
        "the differential saw no thematic break after a file's first line:\n{stdout}"
    );
    assert!(
        out.status.success(),
        "the chunker and CommonMark disagree (exit {:?}):\n{stdout}\n{stderr}",
        out.status.code()
    );
    println!(
        "{}",
        stdout.lines().rev().take(3).collect::<Vec<_>>().join("\n")
    );
}
