//! `chunk-vs-commonmark`: runs memoria's chunker beside a plain CommonMark parser over real Markdown and reports every file where their headings disagree (issue 11).
//!
//! ```sh
//! fixtures/corpus/fetch crate-docs     # and/or nodejs-doc
//! cargo run --release -p memoria-benches --bin chunk-vs-commonmark -- \
//!     fixtures/corpus/crate-docs fixtures/corpus/nodejs-doc
//! ```
//!
//! The oracle is `pulldown-cmark` with CommonMark only ([`ORACLE_OPTIONS`]),
//! read here, not through the chunker, after the file's front matter, which
//! the oracle finds as static-site tools do ([`front_matter`]): only at the
//! very start of a file. Anywhere else a `---` line is a thematic break or a
//! setext underline (issue 32: the chunker had read a `---` pair in the
//! middle of a file as front matter, and lost the headings between). The
//! summary counts the files with front matter and the files with a thematic
//! break after their first line, so a run over a corpus without either says
//! so. Its headings are
//! replayed as §7.2's trail rule says (a level-n heading drops the entries of
//! level n or deeper; one with empty text only drops), giving each heading
//! its *path*: the trail as it stands once the heading is pushed. A heading's
//! text is written again here by the chunker's documented rule (text, code
//! and inline HTML; breaks as spaces; white space collapsed). Two checks
//! per file, both on the chunker's public output alone:
//!
//! - **missing**: a heading whose path is the start of no passage's trail.
//!   Nobody can find it through the trail, or finds it under the wrong
//!   parents.
//! - **extra**: a passage trail that is no heading's path: a heading the
//!   chunker read that CommonMark does not (a `#` line in an HTML comment,
//!   say), or a wrong nesting.
//!
//! Repeats are not counted: two headings with the same path are one path.
//! Exit codes: 0 every file agrees; 1 some file disagrees (each is listed,
//! with its first paths; benches/RESULTS.md records the measured runs); 2 no
//! Markdown was found under the paths, which says so, since a differential
//! over nothing proves nothing, or a file could not be read.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::Parser as _;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Plain CommonMark: the oracle's reading of everything after the front
/// matter ([`front_matter`]). The chunker also reads GitHub tables; any file
/// where that changes a heading shows up as a disagreement.
const ORACLE_OPTIONS: Options = Options::empty();

/// Disagreeing paths printed per file.
const SHOWN_PER_FILE: usize = 3;

/// Compare memoria's chunker with CommonMark's headings over Markdown files.
#[derive(Debug, clap::Parser)]
#[command(name = "chunk-vs-commonmark")]
struct Args {
    /// Directories (searched recursively for `*.md`) or files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

/// One file's comparison.
#[derive(Debug, Default)]
struct FileReport {
    headings: usize,
    missing: Vec<Vec<String>>,
    extra: Vec<Vec<String>>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("chunk-vs-commonmark: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for path in &args.paths {
        collect(path, &mut files).with_context(|| format!("reading {}", path.display()))?;
    }
    files.sort();
    if files.is_empty() {
        eprintln!(
            "chunk-vs-commonmark: NO Markdown files under {:?}; nothing was compared. \
             Fetch a corpus first: fixtures/corpus/fetch crate-docs",
            args.paths
        );
        return Ok(ExitCode::from(2));
    }
    let (mut headings, mut missing, mut extra, mut disagreeing, mut not_utf8) = (0, 0, 0, 0, 0);
    let (mut with_front_matter, mut with_breaks) = (0, 0);
    let (mut chunking, mut bytes_chunked) = (Duration::ZERO, 0usize);
    for file in &files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let Ok(text) = String::from_utf8(bytes) else {
            not_utf8 += 1;
            continue;
        };
        let started = Instant::now();
        let trails: Vec<Vec<String>> = memoria::chunk(&text).into_iter().map(|c| c.trail).collect();
        chunking += started.elapsed();
        bytes_chunked += text.len();
        let report = compare(&text, &trails);
        let body = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let (front, rest) = front_matter(body);
        with_front_matter += usize::from(!front.is_empty());
        with_breaks += usize::from(
            Parser::new_ext(rest, ORACLE_OPTIONS).any(|event| matches!(event, Event::Rule)),
        );
        headings += report.headings;
        missing += report.missing.len();
        extra += report.extra.len();
        if !report.missing.is_empty() || !report.extra.is_empty() {
            disagreeing += 1;
            println!(
                "{}: {} headings, {} missing, {} extra",
                file.display(),
                report.headings,
                report.missing.len(),
                report.extra.len()
            );
            for path in report.missing.iter().take(SHOWN_PER_FILE) {
                println!("    missing {:?}", path.join(" > "));
            }
            for path in report.extra.iter().take(SHOWN_PER_FILE) {
                println!("    extra   {:?}", path.join(" > "));
            }
        }
    }
    println!(
        "compared {} files ({not_utf8} skipped as not UTF-8), {headings} headings: \
         {disagreeing} files disagree; {missing} heading paths missing from every trail, \
         {extra} trails that are no heading's path",
        files.len() - not_utf8
    );
    println!(
        "front matter in {with_front_matter} files; a thematic break after the front matter \
         in {with_breaks} files"
    );
    println!(
        "chunker: {bytes_chunked} bytes in {:.1} ms ({:.1} MB/s; one pass, this build's profile)",
        chunking.as_secs_f64() * 1e3,
        bytes_chunked as f64 / 1e6 / chunking.as_secs_f64().max(f64::MIN_POSITIVE)
    );
    Ok(if disagreeing == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_file() {
        out.push(path.to_owned());
        return Ok(());
    }
    for entry in std::fs::read_dir(path)? {
        let path = entry?.path();
        if path.is_dir() {
            collect(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The two checks of the module documentation, on one document.
fn compare(text: &str, trails: &[Vec<String>]) -> FileReport {
    let paths = heading_paths(text.strip_prefix('\u{feff}').unwrap_or(text));
    let known: HashSet<&[String]> = paths.iter().map(Vec::as_slice).collect();
    let mut seen = HashSet::new();
    let missing = paths
        .iter()
        .filter(|p| seen.insert(p.as_slice()))
        .filter(|p| !trails.iter().any(|t| t.starts_with(p)))
        .cloned()
        .collect();
    let mut seen = HashSet::new();
    let extra = trails
        .iter()
        .filter(|t| !t.is_empty() && seen.insert(t.as_slice()))
        .filter(|t| !known.contains(t.as_slice()))
        .cloned()
        .collect();
    FileReport {
        headings: paths.len(),
        missing,
        extra,
    }
}

/// `text` as `(front matter, the rest)`, front matter read as static-site
/// tools read it (Jekyll, Hugo): a first line of exactly `---` (YAML) or
/// `+++` (TOML), trailing spaces allowed, whose next line is neither blank
/// nor a closing line, up to and including the next line that is `---` or
/// `...` (`+++` for TOML).
/// No such line: no front matter. Nowhere but the first line opens one.
fn front_matter(text: &str) -> (&str, &str) {
    let mut lines = text.split_inclusive('\n');
    let bare = |line: &str| {
        line.trim_end_matches(['\n', '\r'])
            .trim_end_matches(' ')
            .to_owned()
    };
    let Some(first) = lines.next() else {
        return ("", text);
    };
    let fence = bare(first);
    if fence != "---" && fence != "+++" {
        return ("", text);
    }
    let mut end = first.len();
    for (i, line) in lines.enumerate() {
        let line_bare = bare(line);
        let closing = line_bare == fence || (fence == "---" && line_bare == "...");
        if i == 0 && (closing || line_bare.trim().is_empty()) {
            return ("", text);
        }
        end += line.len();
        if closing {
            return (&text[..end], &text[end..]);
        }
    }
    ("", text)
}

/// Each heading with text, as its path: the trail once it is pushed.
fn heading_paths(text: &str) -> Vec<Vec<String>> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut paths = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for event in Parser::new_ext(front_matter(text).1, ORACLE_OPTIONS) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                open = Some((level as usize, String::new()))
            }
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) => {
                if let Some((_, s)) = open.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, s)) = open.as_mut() {
                    s.push(' ');
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let Some((level, s)) = open.take() else {
                    continue;
                };
                stack.retain(|(l, _)| *l < level);
                let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
                if !s.is_empty() {
                    stack.push((level, s));
                    paths.push(stack.iter().map(|(_, t)| t.clone()).collect());
                }
            }
            _ => {}
        }
    }
    paths
}
