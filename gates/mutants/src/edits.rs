//! Item-anchored mutations: edits named by file and item, made into a diff against the tree as it is when the run starts.
//!
//! A `*.toml` mutation holds its header as TOML keys and one `[[edit]]` per
//! change (the format is in `mutants/README.md`):
//!
//! ```toml
//! gate = "26"
//! case = "26/second-dek-different-id"
//! author = "adversary"
//! breaks = "external_id reverts to a bare SHA-256 of the body"
//!
//! [[edit]]
//! file = "reference/src/storage/store.rs"
//! item = "impl Store / fn external_id"
//! find = '''
//!         let mac = Hmac::new(&key);
//! '''
//! replace = '''
//!         let mac = Sha256::new();
//! '''
//! ```
//!
//! An edit names a workspace-relative file and, optionally, an item path
//! inside it (`anchor.rs`; none means the whole file). It is either `find`
//! and `replace`, where `find` must occur exactly once in the item's lines,
//! or `replace-item`, the item's new lines entire. Every edit of a file is
//! located in the file as it is, before any of them is made; two edits may
//! not overlap. [`apply`] makes the edits; [`unified_diff`] writes the
//! result as the one-hunk diff the rest of the runner applies and reverses,
//! so a mutation anchored to a function that has moved still applies.

use std::ops::Range;

use serde::{Deserialize, Serialize};

use super::anchor;

/// Lines of context around a generated diff's one hunk per file (git's default).
pub const DIFF_CONTEXT_LINES: usize = 3;

/// One edit of an item-anchored mutation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Edit {
    /// Workspace-relative path of the file.
    pub file: String,
    /// The item path inside it (`impl Puller / fn wake`); none: the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// Text that occurs exactly once in the item's lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub find: Option<String>,
    /// What `find` becomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<String>,
    /// The item's new lines, whole (instead of `find` and `replace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace_item: Option<String>,
}

impl Edit {
    /// Where the edit says it applies, for messages: `file` or `file: item`.
    pub fn place(&self) -> String {
        match &self.item {
            Some(i) => format!("{}: {}", self.file, anchor::normalise(i)),
            None => self.file.clone(),
        }
    }

    /// Checks the edit's shape: a relative path without `..`, and either
    /// `find` and `replace`, or `replace-item` with an `item`.
    ///
    /// # Errors
    /// Which rule the edit breaks.
    pub fn check(&self) -> Result<(), String> {
        if self.file.is_empty()
            || self.file.starts_with('/')
            || self.file.split('/').any(|c| c == ".." || c.is_empty())
        {
            return Err(format!(
                "edit file {:?} is not a workspace-relative path",
                self.file
            ));
        }
        match (&self.find, &self.replace, &self.replace_item) {
            (Some(f), Some(_), None) if !f.is_empty() => Ok(()),
            (Some(_), Some(_), None) => Err(format!("{}: `find` is empty", self.place())),
            (None, None, Some(_)) if self.item.is_some() => Ok(()),
            (None, None, Some(_)) => {
                Err(format!("{}: `replace-item` needs an `item`", self.place()))
            }
            _ => Err(format!(
                "{}: an edit is `find` and `replace`, or `replace-item`",
                self.place()
            )),
        }
    }
}

/// `src` (the text of `file`) with every edit of `edits` that names `file`
/// made, each located in `src` before any is made.
///
/// # Errors
/// An item path names no item or several, `find` does not occur exactly
/// once in the item's lines, or two edits overlap.
pub fn apply(src: &str, file: &str, edits: &[Edit]) -> Result<String, String> {
    let mut regions: Vec<(Range<usize>, &str)> = Vec::new();
    for e in edits.iter().filter(|e| e.file == file) {
        e.check()?;
        let scope = match &e.item {
            Some(item) => anchor::find(src, item).map_err(|why| format!("{file}: {why}"))?,
            None => 0..src.len(),
        };
        let region = match (&e.find, &e.replace, &e.replace_item) {
            (Some(find), Some(replace), None) => {
                let within = &src[scope.clone()];
                let (first, last) = (within.find(find.as_str()), within.rfind(find.as_str()));
                match (first, last) {
                    (Some(a), Some(b)) if a == b => (
                        scope.start + a..scope.start + a + find.len(),
                        replace.as_str(),
                    ),
                    (None, _) => {
                        return Err(format!("{}: `find` does not occur in the item", e.place()));
                    }
                    _ => {
                        return Err(format!(
                            "{}: `find` occurs more than once in the item",
                            e.place()
                        ));
                    }
                }
            }
            (None, None, Some(text)) => (scope, text.as_str()),
            _ => unreachable!("Edit::check passed"),
        };
        regions.push(region);
    }
    regions.sort_by_key(|(r, _)| (r.start, r.end));
    if let Some(w) = regions.windows(2).find(|w| w[0].0.end > w[1].0.start) {
        return Err(format!(
            "{file}: two edits overlap (bytes {:?} and {:?})",
            w[0].0, w[1].0
        ));
    }
    let mut out = src.to_string();
    for (r, text) in regions.into_iter().rev() {
        out.replace_range(r, text);
    }
    Ok(out)
}

/// The files `edits` touch, in the order they are first named.
pub fn files(edits: &[Edit]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for e in edits {
        if !v.contains(&e.file) {
            v.push(e.file.clone());
        }
    }
    v
}

/// Makes `edits` against the files under `root` and returns them as one
/// unified diff in `git diff` form (one hunk per file).
///
/// # Errors
/// A file cannot be read (the message names it), an edit does not resolve
/// ([`apply`]), or the edits change nothing.
pub fn to_diff(root: &std::path::Path, edits: &[Edit]) -> Result<String, String> {
    let mut diff = String::new();
    for file in files(edits) {
        let path = root.join(&file);
        let src = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mutated = apply(&src, &file, edits)?;
        diff.push_str(&unified_diff(&file, &src, &mutated));
    }
    if diff.is_empty() {
        return Err("the edits change nothing".into());
    }
    Ok(diff)
}

/// A `git diff`-form diff of `file` from `old` to `new`: one hunk from the
/// first line that differs to the last, with [`DIFF_CONTEXT_LINES`] around
/// it; empty if the texts are equal.
pub fn unified_diff(file: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let o: Vec<&str> = old.split_inclusive('\n').collect();
    let n: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = o.iter().zip(&n).take_while(|(a, b)| a == b).count();
    let suffix = o[prefix..]
        .iter()
        .rev()
        .zip(n[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let before = prefix.min(DIFF_CONTEXT_LINES);
    let after = suffix.min(DIFF_CONTEXT_LINES);
    let start = prefix - before;
    let (o_end, n_end) = (o.len() - suffix + after, n.len() - suffix + after);
    let header = |from: usize, count: usize| {
        // A hunk with no lines on one side starts at the line before it.
        if count == 0 {
            format!("{from},0")
        } else {
            format!("{},{count}", from + 1)
        }
    };
    let mut out = format!(
        "--- a/{file}\n+++ b/{file}\n@@ -{} +{} @@\n",
        header(start, o_end - start),
        header(start, n_end - start)
    );
    let mut line = |mark: char, l: &str| {
        out.push(mark);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for l in &o[start..prefix] {
        line(' ', l);
    }
    for l in &o[prefix..o.len() - suffix] {
        line('-', l);
    }
    for l in &n[prefix..n.len() - suffix] {
        line('+', l);
    }
    for l in &o[o.len() - suffix..o_end] {
        line(' ', l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str =
        "fn a() {\n    let x = 1;\n    x + 1\n}\n\nfn b() {\n    let x = 1;\n    x\n}\n";

    fn edit(item: Option<&str>, find: &str, replace: &str) -> Edit {
        Edit {
            file: "f.rs".into(),
            item: item.map(str::to_owned),
            find: Some(find.into()),
            replace: Some(replace.into()),
            replace_item: None,
        }
    }

    #[test]
    fn a_find_is_looked_for_in_its_item_alone() {
        let out = apply(
            SRC,
            "f.rs",
            &[edit(Some("fn b"), "let x = 1;", "let x = 2;")],
        )
        .unwrap();
        assert_eq!(
            out,
            SRC.replacen("let x = 1;\n    x\n", "let x = 2;\n    x\n", 1)
        );
        let whole_file = apply(SRC, "f.rs", &[edit(None, "let x = 1;", "let x = 2;")]);
        assert!(whole_file.unwrap_err().contains("more than once"));
        let absent = apply(SRC, "f.rs", &[edit(Some("fn a"), "x\n}", "y\n}")]);
        assert!(absent.unwrap_err().contains("does not occur"));
        let no_item = apply(SRC, "f.rs", &[edit(Some("fn c"), "x", "y")]);
        assert!(no_item.unwrap_err().contains("no item `fn c`"));
    }

    #[test]
    fn an_edit_still_applies_after_its_item_moved() {
        let moved =
            "fn b() {\n    let x = 1;\n    x\n}\n\nfn a() {\n    let x = 1;\n    x + 1\n}\n";
        let e = [edit(Some("fn a"), "x + 1", "x - 1")];
        assert_eq!(
            apply(moved, "f.rs", &e).unwrap(),
            moved.replace("x + 1", "x - 1")
        );
    }

    #[test]
    fn overlapping_edits_and_misshapen_edits_are_refused() {
        let two = [
            edit(Some("fn a"), "let x = 1;\n    x", "y"),
            edit(Some("fn a"), "x + 1", "z"),
        ];
        assert!(apply(SRC, "f.rs", &two).unwrap_err().contains("overlap"));
        let mut whole = edit(None, "a", "b");
        whole.find = None;
        whole.replace = None;
        whole.replace_item = Some("fn a() {}\n".into());
        assert!(whole.check().unwrap_err().contains("needs an `item`"));
        let escape = Edit {
            file: "../x.rs".into(),
            ..edit(None, "a", "b")
        };
        assert!(escape.check().is_err());
    }

    #[test]
    fn a_generated_diff_is_one_hunk_with_three_lines_of_context() {
        let new = apply(SRC, "f.rs", &[edit(Some("fn b"), "    x\n", "    -x\n")]).unwrap();
        assert_eq!(
            unified_diff("f.rs", SRC, &new),
            "--- a/f.rs\n+++ b/f.rs\n@@ -5,5 +5,5 @@\n \n fn b() {\n     let x = 1;\n-    x\n+    -x\n }\n"
        );
    }
}
