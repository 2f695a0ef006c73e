//! Issue 32's classes of input over real text nobody here wrote: the crates' own Markdown (`fixtures/corpus/fetch crate-docs`), read as UTF-16, squeezed into one unspaced line, folded, and cut into snippets.
//!
//! The corpus is fetched, never committed; without it every test here fails
//! naming the command that brings it (a test over nothing proves nothing).

use std::path::{Path, PathBuf};

use memoria::{
    CHUNK_WORDS_MAX, Highlighter, SNIPPET_CHARS_MAX, SourceKind, chunk, decode, plain_text,
};

/// Where the fetch script puts the crates' Markdown, relative to the workspace root.
const CRATE_DOCS_RELATIVE: &str = "fixtures/corpus/crate-docs";

/// Every Markdown file of the corpus, as `(path, bytes)`, sorted by path.
fn crate_docs() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(CRATE_DOCS_RELATIVE);
    assert!(
        root.join("SOURCE").is_file(),
        "{CRATE_DOCS_RELATIVE} is missing: run fixtures/corpus/fetch crate-docs first"
    );
    let mut out = Vec::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("md"))
            {
                let bytes =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    assert!(out.len() > 100, "only {} Markdown files", out.len());
    out
}

/// Runs of letters and digits, as the index's tokenizer cuts them.
fn index_tokens(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect()
}

#[test]
fn every_crate_doc_reads_the_same_from_utf16_with_a_byte_order_mark() {
    let mut compared = 0;
    for (path, bytes) in crate_docs() {
        let Ok(utf8) = decode("doc.md", &bytes) else {
            continue;
        };
        for little in [true, false] {
            let mut utf16 = if little {
                vec![0xFF, 0xFE]
            } else {
                vec![0xFE, 0xFF]
            };
            for unit in std::str::from_utf8(&bytes).unwrap().encode_utf16() {
                utf16.extend(if little {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                });
            }
            let read =
                decode("doc.md", &utf16).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(read.kind, SourceKind::Markdown);
            assert_eq!(read.title, utf8.title, "{}", path.display());
            assert_eq!(read.body, utf8.body, "{}", path.display());
        }
        compared += 1;
    }
    assert!(compared > 100, "{compared} files compared");
}

#[test]
fn a_crate_doc_squeezed_into_one_unspaced_line_is_cut_between_its_tokens() {
    // Each file with its white space removed: a minified line of real
    // words and punctuation, many times the ceiling for the larger files.
    let (mut long_lines, mut cut_inside) = (0, 0);
    for (path, bytes) in crate_docs() {
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let line: String = text.split_whitespace().collect();
        let chunks = chunk(&line);
        if chunks.len() < 2 {
            continue;
        }
        long_lines += 1;
        let rejoined: String = chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(rejoined, line, "{}", path.display());
        let got: Vec<&str> = chunks.iter().flat_map(|c| index_tokens(&c.text)).collect();
        let want = index_tokens(&line);
        if got != want {
            // A token longer than three quarters of a passage has no cut
            // between tokens near enough: allowed, and counted.
            let longest = want.iter().map(|w| w.len()).max().unwrap_or(0);
            assert!(
                longest > CHUNK_WORDS_MAX * 16 / 4,
                "{}: a token was cut though none is that long",
                path.display()
            );
            cut_inside += 1;
        }
    }
    assert!(long_lines >= 40, "{long_lines} lines over the ceiling");
    assert_eq!(
        cut_inside, 0,
        "{cut_inside} of {long_lines} lines cut inside a token"
    );
}

#[test]
fn every_snippet_of_a_crate_doc_passage_holds_at_most_the_character_cap() {
    let words = vec!["the".to_owned(), "fn".to_owned(), "version".to_owned()];
    let highlighter = Highlighter::new(&words);
    let (mut passages, mut squeezed) = (0, 0);
    for (_, bytes) in crate_docs() {
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let squeezed_line: String = text.split_whitespace().collect();
        for source in [text.as_str(), squeezed_line.as_str()] {
            for c in chunk(source) {
                let plain = plain_text(&c.text, c.ordinal == 0);
                let s = highlighter.snippet(&plain);
                let shown: usize = s.segments.iter().map(|g| g.text.chars().count()).sum();
                assert!(shown <= SNIPPET_CHARS_MAX, "{shown} characters");
                passages += 1;
                squeezed +=
                    usize::from(!source.contains(' ') && plain.chars().count() > SNIPPET_CHARS_MAX);
            }
        }
    }
    // Presence: passages long enough for the cap to act.
    assert!(
        passages > 1000 && squeezed > 100,
        "{passages} passages, {squeezed} long"
    );
}
