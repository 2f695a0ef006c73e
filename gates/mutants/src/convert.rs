//! Converting a recorded `*.diff` into an item-anchored `*.toml` mutation, and proving the two make the same files.
//!
//! For each file the diff touches, the converter applies the diff to a copy
//! of the file as it is in the tree (`git apply`), asks `git diff -U0` for
//! the blocks of lines that changed, and gives each block the innermost
//! item (`anchor.rs`) whose lines hold it, one that no other item of the
//! file shares a path with; a block no such item holds (a `use` line, an
//! item added between two others) is anchored to the whole file. The
//! block's old lines are its `find`, its new lines its `replace`; where the
//! old lines are empty (an insertion) or occur more than once in the item,
//! a line of context above, then below, is added until they occur once.
//! Blocks whose finds would touch become one edit.
//!
//! **Equivalence.** The TOML is written, parsed back, and its edits made
//! against the tree's file (`edits::apply`); the result must be byte for
//! byte the file `git apply` of the old diff gives. Only then is the TOML
//! kept; otherwise the diff stays, with a `kept-as-diff:` line saying why.
//! Being the same change to the same tree, the new form kills what the old
//! one killed.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::anchor::{self, Anchor};
use super::edits::{self, Edit};
use super::parse::{Author, Mutation, parse};
use super::scratch::git_apply;
use super::{CONFORM_GATE, SCENARIO_GATE};

/// What converting one file gave.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The file converted.
    pub from: PathBuf,
    /// Where its new form goes: `mutants/<folder>/<name>.toml`, or `.diff`
    /// when it was kept as a diff.
    pub to: PathBuf,
    /// The new file's text.
    pub text: String,
    /// Why the diff was kept, if it was.
    pub kept: Option<String>,
    /// The anchors of its edits (`file: item`), for the report.
    pub anchors: Vec<String>,
}

/// The folder under `mutants/` a gate's mutations live in: `g01` … `g42`,
/// `s05` for `suite 5`, `conform`, `scenario`.
pub fn folder_of(gate: &str) -> String {
    if gate == CONFORM_GATE || gate == SCENARIO_GATE {
        return gate.to_string();
    }
    if let Some(n) = gate.strip_prefix("suite ")
        && let Ok(n) = n.trim().parse::<u32>()
    {
        return format!("s{n:02}");
    }
    match gate.parse::<u32>() {
        Ok(n) => format!("g{n:02}"),
        Err(_) => gate.replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    }
}

/// A mutation's name in its gate's folder: the file's stem without the
/// flat layout's prefix (`g01-`, `gC-`, `sc-`, `s05-`).
pub fn short_name(file: &Path) -> String {
    let stem = file
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let prefix_len = stem.find('-').unwrap_or(0);
    let prefix = &stem[..prefix_len];
    let flat = prefix == "gC"
        || prefix == "sc"
        || (prefix.len() == 3
            && (prefix.starts_with('g') || prefix.starts_with('s'))
            && prefix[1..].bytes().all(|b| b.is_ascii_digit()));
    if flat {
        stem[prefix_len + 1..].to_string()
    } else {
        stem
    }
}

/// Converts the `*.diff` mutation `file` against the tree at `root` (see the
/// module docs). Writes nothing: the caller writes [`Conversion::text`] to
/// [`Conversion::to`] and removes the old file.
///
/// # Errors
/// The file cannot be read or parsed, or its diff does not apply to the
/// tree (a stale diff is re-recorded by hand, not converted).
pub fn convert(root: &Path, mutants_dir: &Path, file: &Path) -> Result<Conversion, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let m = parse(file, &text)?;
    if m.diff.is_empty() {
        return Err("not a diff mutation (already item-anchored?)".into());
    }
    let folder = mutants_dir.join(folder_of(&m.gate));
    let name = short_name(file);
    let tmp = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    let (old_dir, new_dir) = (tmp.path().join("old"), tmp.path().join("new"));
    for t in &m.touches {
        for d in [&old_dir, &new_dir] {
            let to = d.join(t);
            if let Some(p) = to.parent() {
                std::fs::create_dir_all(p).map_err(|e| format!("{}: {e}", p.display()))?;
            }
            let from = root.join(t);
            std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
        }
    }
    git_apply(&new_dir, &m.diff, &[])
        .map_err(|e| format!("the diff does not apply to the tree: {e}"))?;
    let keep = |why: String| -> Conversion {
        Conversion {
            from: file.to_path_buf(),
            to: folder.join(format!("{name}.diff")),
            text: with_kept_line(&text, &why),
            kept: Some(why),
            anchors: Vec::new(),
        }
    };
    let mut all: Vec<Edit> = Vec::new();
    let mut originals: Vec<(String, String, String)> = Vec::new();
    for t in &m.touches {
        if !t.ends_with(".rs") {
            return Ok(keep(format!("it changes {t}, which is not Rust")));
        }
        let read = |d: &Path| {
            std::fs::read_to_string(d.join(t)).map_err(|e| format!("{}: {e}", d.join(t).display()))
        };
        let (old, new) = (read(&old_dir)?, read(&new_dir)?);
        let blocks = changed_blocks(tmp.path(), t)?;
        all.extend(derive(t, &old, &new, &blocks));
        originals.push((t.clone(), old, new));
    }
    let toml = render(&m, &all);
    // The proof: the TOML, read back, makes exactly the diff's files.
    let back = parse(Path::new("converted.toml"), &toml)
        .map_err(|e| format!("the converter wrote TOML it cannot read: {e}"))?;
    for (t, old, new) in &originals {
        match edits::apply(old, t, &back.edits) {
            Ok(made) if made == *new => {}
            Ok(_) => {
                return Ok(keep(format!(
                    "its item-anchored form did not make the same {t} as the diff"
                )));
            }
            Err(e) => return Ok(keep(format!("its item-anchored form does not apply: {e}"))),
        }
    }
    Ok(Conversion {
        from: file.to_path_buf(),
        to: folder.join(format!("{name}.toml")),
        text: toml,
        kept: None,
        anchors: back.edits.iter().map(Edit::place).collect(),
    })
}

/// The mutation file's text with a `kept-as-diff:` line after its header
/// (replacing one it had).
fn with_kept_line(text: &str, why: &str) -> String {
    let mut out = String::new();
    let mut added = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("kept-as-diff:") {
            continue;
        }
        if !added && line.trim().is_empty() {
            out.push_str(&format!("kept-as-diff: {why}\n"));
            added = true;
        }
        out.push_str(line);
    }
    out
}

/// A block of changed lines: 0-based line ranges in the old and new text
/// (an empty old range is an insertion before that line).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Block {
    old: Range<usize>,
    new: Range<usize>,
}

/// `git diff -U0` between `old/<rel>` and `new/<rel>` under `dir`, as blocks.
fn changed_blocks(dir: &Path, rel: &str) -> Result<Vec<Block>, String> {
    let out = Command::new("git")
        .args(["diff", "--no-index", "--no-color", "--no-ext-diff", "-U0"])
        .arg(Path::new("old").join(rel))
        .arg(Path::new("new").join(rel))
        .current_dir(dir)
        .env("GIT_CEILING_DIRECTORIES", dir)
        .output()
        .map_err(|e| format!("git diff: {e}"))?;
    if out.status.code() != Some(1) {
        return Err(format!(
            "git diff --no-index on {rel} found no change or failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let side = |s: &str| -> Option<Range<usize>> {
        let (start, count) = match s.split_once(',') {
            Some((a, b)) => (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?),
            None => (s.parse::<usize>().ok()?, 1),
        };
        // `-s,0` inserts after line s (1-based): before 0-based line s.
        Some(if count == 0 {
            start..start
        } else {
            start - 1..start - 1 + count
        })
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("@@ -"))
        .map(|l| {
            let mut parts = l.split_whitespace();
            let old = parts.next().and_then(side);
            let new = parts
                .next()
                .and_then(|n| n.strip_prefix('+'))
                .and_then(side);
            match (old, new) {
                (Some(old), Some(new)) => Ok(Block { old, new }),
                _ => Err(format!("an unreadable hunk header in git diff: @@ -{l}")),
            }
        })
        .collect()
}

/// Byte offset of each line start of `s`, and `s.len()` last.
fn offsets(s: &str) -> Vec<usize> {
    let mut v = vec![0];
    let mut at = 0;
    for l in s.split_inclusive('\n') {
        at += l.len();
        v.push(at);
    }
    v
}

/// A range of old lines that becomes one edit, and the anchor it lies in
/// (`None`: the whole file).
#[derive(Debug, Clone)]
struct Span {
    lines: Range<usize>,
    scope: Option<usize>,
    /// Context lines added so far, to alternate above and below.
    grown: usize,
}

/// The edits that turn `old` into `new` in `file`, given `git diff`'s blocks.
fn derive(file: &str, old: &str, new: &str, blocks: &[Block]) -> Vec<Edit> {
    let (oo, no) = (offsets(old), offsets(new));
    let n_lines = oo.len() - 1;
    // Anchors as line ranges, only those whose path is the file's only one.
    let anchors: Vec<(String, Range<usize>)> = {
        let all: Vec<Anchor> = anchor::anchors(old).unwrap_or_default();
        let line_of = |b: usize| oo.partition_point(|&o| o < b);
        all.iter()
            .filter(|a| all.iter().filter(|x| x.path == a.path).count() == 1)
            .map(|a| (a.path.clone(), line_of(a.lines.start)..line_of(a.lines.end)))
            .collect()
    };
    let holds = |scope: &Range<usize>, b: &Range<usize>| {
        if b.is_empty() {
            scope.start < b.start && b.start < scope.end
        } else {
            scope.start <= b.start && b.end <= scope.end
        }
    };
    let scope_of = |ranges: &[Range<usize>]| -> Option<usize> {
        anchors
            .iter()
            .enumerate()
            .filter(|(_, (_, l))| ranges.iter().all(|r| holds(l, r)))
            .min_by_key(|(_, (_, l))| l.len())
            .map(|(i, _)| i)
    };
    let scope_lines = |s: Option<usize>| s.map_or(0..n_lines, |i| anchors[i].1.clone());
    let text_of = |r: &Range<usize>| &old[oo[r.start]..oo[r.end]];
    // The blocks a line range holds.
    let blocks_in = |r: &Range<usize>| -> Vec<Range<usize>> {
        blocks
            .iter()
            .map(|b| b.old.clone())
            .filter(|b| r.start <= b.start && b.end <= r.end)
            .collect()
    };
    let mut spans: Vec<Span> = blocks
        .iter()
        .map(|b| Span {
            lines: b.old.clone(),
            scope: scope_of(std::slice::from_ref(&b.old)),
            grown: 0,
        })
        .collect();
    loop {
        // Widen any span whose edge cuts a block, then merge spans that meet.
        for s in &mut spans {
            for b in blocks {
                if b.old.start < s.lines.start && s.lines.start < b.old.end {
                    s.lines.start = b.old.start;
                }
                if b.old.start < s.lines.end && s.lines.end < b.old.end {
                    s.lines.end = b.old.end;
                }
            }
        }
        spans.sort_by_key(|s| (s.lines.start, s.lines.end));
        let mut merged: Vec<Span> = Vec::new();
        let mut changed = false;
        for s in spans {
            match merged.last_mut() {
                Some(last) if s.lines.start <= last.lines.end => {
                    last.lines.end = last.lines.end.max(s.lines.end);
                    let held = blocks_in(&last.lines);
                    last.scope = scope_of(&held);
                    last.grown = last.grown.max(s.grown);
                    changed = true;
                }
                _ => merged.push(s),
            }
        }
        spans = merged;
        // Grow every span whose old lines are empty or not unique in its scope.
        for s in &mut spans {
            let scope = scope_lines(s.scope);
            let hay = text_of(&scope);
            let needle = text_of(&s.lines);
            let unique = !needle.is_empty() && hay.find(needle) == hay.rfind(needle);
            if unique {
                continue;
            }
            let up = s.lines.start > scope.start;
            let down = s.lines.end < scope.end;
            if (s.grown % 2 == 0 || !down) && up {
                s.lines.start -= 1;
            } else if down {
                s.lines.end += 1;
            } else {
                continue; // the whole scope: unique by being all of it
            }
            s.grown += 1;
            changed = true;
        }
        if !changed {
            break;
        }
    }
    // Old line boundaries to new: past every block wholly before (an
    // insertion at a span's start belongs to the span).
    let to_new = |line: usize, is_end: bool| -> usize {
        let mut delta: isize = 0;
        for b in blocks {
            let before = if is_end {
                b.old.end <= line
            } else {
                b.old.end <= line && !(b.old.is_empty() && b.old.start == line)
            };
            if before {
                delta += b.new.len() as isize - b.old.len() as isize;
            }
        }
        line.saturating_add_signed(delta)
    };
    spans
        .iter()
        .map(|s| {
            let (ns, ne) = (to_new(s.lines.start, false), to_new(s.lines.end, true));
            Edit {
                file: file.to_string(),
                item: s.scope.map(|i| anchors[i].0.clone()),
                find: Some(text_of(&s.lines).to_string()),
                replace: Some(new[no[ns]..no[ne]].to_string()),
                replace_item: None,
            }
        })
        .collect()
}

/// The TOML text of mutation `m` with `edits` in place of its diff.
fn render(m: &Mutation, edits: &[Edit]) -> String {
    let mut out = String::new();
    let kv = |out: &mut String, k: &str, v: &str| {
        out.push_str(&format!("{k} = {}\n", basic(v)));
    };
    kv(&mut out, "gate", &m.gate);
    if let Some(c) = &m.case {
        kv(&mut out, "case", c);
    }
    if !m.conform.is_empty() {
        let ids: Vec<String> = m.conform.iter().map(|c| basic(c)).collect();
        out.push_str(&format!("conform = [{}]\n", ids.join(", ")));
    }
    if let Some(s) = &m.scenario {
        kv(&mut out, "scenario", s);
    }
    kv(
        &mut out,
        "author",
        match m.author {
            Author::Author => "author",
            Author::Adversary => "adversary",
        },
    );
    kv(&mut out, "breaks", &m.breaks);
    for e in edits {
        out.push_str("\n[[edit]]\n");
        kv(&mut out, "file", &e.file);
        if let Some(i) = &e.item {
            kv(&mut out, "item", i);
        }
        out.push_str(&format!(
            "find = {}\n",
            multiline(e.find.as_deref().unwrap_or_default())
        ));
        out.push_str(&format!(
            "replace = {}\n",
            multiline(e.replace.as_deref().unwrap_or_default())
        ));
    }
    out
}

/// A one-line TOML basic string.
fn basic(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML string for source lines: a multi-line literal string (`'''`,
/// every byte as it is) where the text allows one, else a basic string.
fn multiline(s: &str) -> String {
    let literal_ok = !s.contains("'''")
        && !s.ends_with('\'')
        && s.ends_with('\n')
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t');
    if literal_ok {
        format!("'''\n{s}'''")
    } else {
        basic(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "use std::fmt;\n\nfn a() -> u8 {\n    let x = 1;\n    x + 1\n}\n\nimpl B {\n    fn c(&self) -> u8 {\n        let x = 1;\n        x\n    }\n}\n";

    fn blocks(old: &str, new: &str) -> Vec<Block> {
        let dir = tempfile::tempdir().unwrap();
        for (d, t) in [("old", old), ("new", new)] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
            std::fs::write(dir.path().join(d).join("f.rs"), t).unwrap();
        }
        changed_blocks(dir.path(), "f.rs").unwrap()
    }

    fn converted(new: &str) -> Vec<Edit> {
        let edits = derive("f.rs", OLD, new, &blocks(OLD, new));
        assert_eq!(edits::apply(OLD, "f.rs", &edits).unwrap(), new);
        edits
    }

    #[test]
    fn a_changed_line_becomes_a_find_in_the_innermost_item_widened_until_it_is_unique() {
        let e = converted(&OLD.replace("        x\n", "        x + 7\n"));
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].item.as_deref(), Some("impl B / fn c"));
        assert_eq!(e[0].find.as_deref(), Some("        x\n"));
        // `let x = 1;` is in `fn c` once, so no context is needed there …
        let e = converted(&OLD.replace("        let x = 1;\n", "        let x = 2;\n"));
        assert_eq!(e[0].find.as_deref(), Some("        let x = 1;\n"));
        // … but an insertion takes the line above as its find.
        let e = converted(&OLD.replace("    x + 1\n", "    x + 1;\n    0\n"));
        assert_eq!(e[0].item.as_deref(), Some("fn a"));
    }

    #[test]
    fn changes_in_two_items_are_two_edits_and_an_added_item_anchors_to_the_file() {
        let two = OLD
            .replace("    x + 1\n", "    x + 2\n")
            .replace("        x\n", "        0\n");
        let e = converted(&two);
        let items: Vec<Option<&str>> = e.iter().map(|e| e.item.as_deref()).collect();
        assert_eq!(items, [Some("fn a"), Some("impl B / fn c")]);
        let added = OLD.replace("\nimpl B", "\nfn extra() {}\n\nimpl B");
        let e = converted(&added);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].item, None);
    }

    #[test]
    fn names_lose_the_flat_prefix_and_gates_name_their_folder() {
        for (name, short) in [
            ("g01-adversary-x.diff", "adversary-x"),
            ("gC-author-s1-y.diff", "author-s1-y"),
            (
                "sc-partial-restore-author-z.diff",
                "partial-restore-author-z",
            ),
            ("s05-adversary-w.diff", "adversary-w"),
            ("author-v.toml", "author-v"),
        ] {
            assert_eq!(short_name(Path::new(name)), short);
        }
        let folders: Vec<String> = ["7", "38", "suite 5", "conform", "scenario"]
            .iter()
            .map(|g| folder_of(g))
            .collect();
        assert_eq!(folders, ["g07", "g38", "s05", "conform", "scenario"]);
    }

    #[test]
    fn source_text_is_written_as_a_literal_string_where_toml_allows_one() {
        assert_eq!(multiline("    x\n"), "'''\n    x\n'''");
        assert!(!multiline("a ''' b\n").starts_with("'''"));
        for s in ["    x\n", "a ''' b\n", "'\n'", "\t\"q\"\\\n", ""] {
            let t = format!("v = {}\n", multiline(s));
            let back: toml::Table = toml::from_str(&t).unwrap();
            assert_eq!(back["v"].as_str(), Some(s), "{t}");
        }
    }
}
