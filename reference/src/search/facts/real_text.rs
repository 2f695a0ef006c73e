//! The fact box over real text nobody here wrote: the Markdown of this workspace's dependencies, which `fixtures/corpus/fetch crate-docs` copies from cargo's registry cache and never commits (§8.8, issue 32).
//!
//! Two classes issue 32 found are held to it here, each as a property of
//! every instance the corpus holds rather than of one string:
//!
//! - an SSH-style remote (`git@github.com:owner/repo.git`) or a URL's
//!   `user@host:port` is never an email address, while the corpus's real
//!   addresses still are (the presence that makes the absence mean
//!   something);
//! - a value in a Markdown table row is labelled from the row's own cells,
//!   never with table syntax in it, and two rows of one table share a label
//!   only when the cells it came from say the same thing. Every real table
//!   is used: each body row's last cell becomes a distinct valid phone
//!   number, in the whole table and in its body alone (a table the chunker
//!   cut before its header).
//!
//! The tests always run, and fail naming the fetch script when the corpus
//! is absent: a property over nothing proves nothing. Counts are floors,
//! not pins: the corpus follows `Cargo.lock`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pulldown_cmark::{Event, Parser, Tag};

use super::{Kind, label::SEPARATORS, scan, spans};

/// Where `fixtures/corpus/fetch crate-docs` writes the crates' Markdown.
const CRATE_DOCS_RELATIVE: &str = "../fixtures/corpus/crate-docs";

/// Fewest SSH-style remotes or `user@host:port` the corpus holds (seven
/// when this was written, in five crates' files).
const REMOTES_MIN: usize = 5;

/// Fewest real email addresses the corpus holds (the presence).
const EMAILS_MIN: usize = 20;

/// Fewest real table body rows the property runs over.
const TABLE_ROWS_MIN: usize = 200;

/// Most body rows one test passage carries: well under
/// `FACT_SPANS_PER_PASSAGE_MAX`, over which a passage is refused whole.
const ROWS_PER_PASSAGE: usize = 32;

/// Every Markdown file of the corpus as (path, text), or a panic naming
/// the fetch script.
fn corpus() -> Vec<(PathBuf, String)> {
    let root: PathBuf = [env!("CARGO_MANIFEST_DIR"), CRATE_DOCS_RELATIVE]
        .iter()
        .collect();
    let mut out: Vec<(PathBuf, String)> = walkdir::WalkDir::new(&root)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path()).ok()?;
            Some((e.path().to_path_buf(), text))
        })
        .collect();
    out.sort();
    assert!(
        !out.is_empty(),
        "{}: no Markdown; run fixtures/corpus/fetch crate-docs first",
        root.display()
    );
    out
}

/// The byte offsets of every `@` in `line` that is followed by a host, a
/// colon and a path or a port: `user@host:path`, `user@host:8042`.
fn remotes(line: &str) -> Vec<usize> {
    line.match_indices('@')
        .filter_map(|(at, _)| {
            let host = line[at + 1..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
                .map_or(line.len(), |i| at + 1 + i);
            let rest = &line[host..];
            let path = rest.strip_prefix(':')?.chars().next()?;
            let local = line[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric());
            (local
                && line[at + 1..host].contains('.')
                && (path.is_ascii_alphanumeric() || "/~{".contains(path)))
            .then_some(at)
        })
        .collect()
}

#[test]
fn an_ssh_style_remote_in_real_text_is_never_an_email_address() {
    let mut remotes_seen = Vec::new();
    let mut emails = 0;
    for (path, text) in corpus() {
        for line in text.lines() {
            let Ok(found) = spans(line) else { continue };
            emails += found.iter().filter(|s| s.kind == Kind::Email).count();
            for at in remotes(line) {
                let boxed = found
                    .iter()
                    .find(|s| s.kind == Kind::Email && s.start <= at && at < s.end);
                assert!(
                    boxed.is_none(),
                    "{}: the remote in {line:?} is boxed as an email address",
                    path.display()
                );
                remotes_seen.push(line.to_string());
            }
        }
    }
    assert!(
        remotes_seen.len() >= REMOTES_MIN,
        "only {} remotes in the corpus: {remotes_seen:?}",
        remotes_seen.len()
    );
    assert!(
        emails >= EMAILS_MIN,
        "only {emails} email addresses boxed in the corpus: the absence above means nothing without them"
    );
}

/// The cells of a table row as GitHub reads them: split at every `|` no
/// backslash escapes, less the blank ends a leading and a trailing pipe
/// leave; each trimmed.
fn row_cells(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut escaped = false;
    for c in line.chars() {
        if c == '|' && !escaped {
            cells.push(String::new());
        } else if let Some(last) = cells.last_mut() {
            last.push(c);
        }
        escaped = c == '\\' && !escaped;
    }
    let mut cells: Vec<String> = cells.into_iter().map(|c| c.trim().to_string()).collect();
    if line.trim_start().starts_with('|') {
        cells.remove(0);
    }
    if line.trim_end().ends_with('|') && !line.trim_end().ends_with("\\|") {
        cells.pop();
    }
    cells
}

/// The label §8.8 and issue 32 ask for from a row's cells (before the
/// value in the last one): the cell before, else the first cell, each less
/// one trailing separator, when not empty; `None` for the trail.
fn expected_label(cells: &[String]) -> Option<String> {
    let words = |c: &String| {
        let w = c
            .strip_suffix(|s: char| SEPARATORS.contains(&s))
            .unwrap_or(c);
        Some(w.trim().to_string()).filter(|w| !w.is_empty())
    };
    let value = cells.len().checked_sub(1)?;
    let before = value.checked_sub(1).and_then(|i| words(&cells[i]));
    before.or_else(|| (value > 0).then(|| words(&cells[0])).flatten())
}

/// Every table of `text` (by GitHub's table extension, with the chunker's
/// options), as its lines.
fn tables(text: &str) -> Vec<Vec<&str>> {
    let mut out = Vec::new();
    let parser = Parser::new_ext(text, crate::search::chunk::PARSE_OPTIONS);
    for (event, range) in parser.into_offset_iter() {
        if let Event::Start(Tag::Table(_)) = event {
            let lines: Vec<&str> = text[range].lines().collect();
            if lines.len() > 2 {
                out.push(lines);
            }
        }
    }
    out
}

#[test]
fn a_value_in_a_real_markdown_table_is_labelled_from_its_rows_own_cells() {
    let mut rows_checked = 0;
    let mut own = 0;
    for (path, text) in corpus() {
        for table in tables(&text) {
            // Only plain rows: a row that blockquote or list markup opens,
            // or that spans more than a line, is left as the document wrote it.
            if table.iter().any(|l| l.trim_start().starts_with('>')) {
                continue;
            }
            let mut body: Vec<(String, String, Option<String>)> = Vec::new();
            for (k, line) in table[2..].iter().enumerate() {
                let mut cells = row_cells(line);
                if cells.is_empty() || cells.iter().any(|c| spans(c).is_ok_and(|s| !s.is_empty())) {
                    continue;
                }
                let number = format!("01 547 {:04}", 7000 + k);
                let last = cells.len() - 1;
                cells[last] = number.clone();
                let row = format!("| {} |", cells.join(" | "));
                body.push((row, number, expected_label(&cells)));
            }
            // Passages of at most ROWS_PER_PASSAGE rows, so no passage is
            // over FACT_SPANS_PER_PASSAGE_MAX (a longer table is refused whole).
            for body in body.chunks(ROWS_PER_PASSAGE) {
                let rows: Vec<&str> = body.iter().map(|(r, ..)| r.as_str()).collect();
                let whole = format!("{}\n{}\n{}", table[0], table[1], rows.join("\n"));
                for passage in [whole, rows.join("\n")] {
                    let found = scan(&passage, &["Trail".to_string()], "Title")
                        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
                    let mut by_label: BTreeMap<String, Vec<&Option<String>>> = BTreeMap::new();
                    for (row, number, expected) in body {
                        let f = found
                            .iter()
                            .find(|f| f.kind == Kind::Phone && &f.span == number)
                            .unwrap_or_else(|| {
                                panic!("{}: {number} not found in {row:?}", path.display())
                            });
                        let l = &f.label;
                        assert!(
                            !l.text.contains('|')
                                || expected.as_ref().is_some_and(|e| e == &l.text),
                            "{}: {row:?} is labelled {:?}, with table syntax",
                            path.display(),
                            l.text
                        );
                        let want = expected.clone().unwrap_or_else(|| "Trail".to_string());
                        assert_eq!(
                            (l.text.as_str(), l.own),
                            (want.as_str(), expected.is_some()),
                            "{}: {row:?}",
                            path.display()
                        );
                        own += usize::from(l.own);
                        rows_checked += 1;
                        by_label.entry(l.text.clone()).or_default().push(expected);
                    }
                    // Two rows share a label only when their cells say the same.
                    for (label, sources) in by_label {
                        assert!(
                            sources.windows(2).all(|w| w[0] == w[1]),
                            "{}: rows from different cells collide on {label:?}",
                            path.display()
                        );
                    }
                }
            }
        }
    }
    assert!(
        rows_checked >= TABLE_ROWS_MIN && own * 2 > rows_checked,
        "{rows_checked} table rows checked, {own} labelled from their cells"
    );
}
