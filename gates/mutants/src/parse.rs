//! Reading a mutation file: an item-anchored `*.toml` (header keys and `[[edit]]` tables), or a `*.diff` (a `key: value` header and the diff beneath it).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::edits::Edit;
use super::{CONFORM_GATE, FORBIDDEN_PREFIXES, SCENARIO_GATE};

/// Who chose a mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Author {
    /// The gate's writer.
    Author,
    /// Someone who did not write the gate.
    Adversary,
}

/// A parsed mutation file.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// The file it came from.
    pub file: PathBuf,
    /// The gate that must kill it.
    pub gate: String,
    /// The case, if one is named.
    pub case: Option<String>,
    /// For `gate: conform`, the conformance case ids that must fail, exactly.
    pub conform: Vec<String>,
    /// For `gate: scenario`, the workspace-relative scenario file whose
    /// replay must fail (`scenarios/<name>.toml`).
    pub scenario: Option<String>,
    /// Who chose it.
    pub author: Author,
    /// One line on what it breaks.
    pub breaks: String,
    /// The unified diff: a `*.diff` file's own, or, for an item-anchored
    /// mutation, the one [`Mutation::resolve`] makes against a tree (empty
    /// until then).
    pub diff: String,
    /// Workspace-relative paths the mutation touches.
    pub touches: Vec<String>,
    /// An item-anchored mutation's edits (`edits.rs`); empty for a diff.
    pub edits: Vec<Edit>,
    /// A `*.diff` file's `kept-as-diff:` line: why it is not item-anchored.
    pub kept_as_diff: Option<String>,
}

impl Mutation {
    /// For an item-anchored mutation, makes its edits against the files
    /// under `root` and keeps the result as [`Mutation::diff`]; a diff
    /// mutation is left as it is.
    ///
    /// # Errors
    /// A file cannot be read, an item path names no item or several, a
    /// `find` does not occur exactly once in its item, or edits overlap:
    /// the mutation is then `invalid` (`edits::apply`).
    pub fn resolve(&mut self, root: &Path) -> Result<(), String> {
        if !self.edits.is_empty() {
            self.diff = super::edits::to_diff(root, &self.edits)?;
        }
        Ok(())
    }

    /// Checks the `conform:` line against `known`, the conformance kit's
    /// case ids. The caller passes them ([`crate::Options::conform_cases`]):
    /// the runner reads the kit's reports by their shape and never builds
    /// the kit.
    ///
    /// # Errors
    /// The first id on the line that is not in `known`: the mutation is
    /// then `invalid`.
    pub fn check_conform_cases(&self, known: &[String]) -> Result<(), String> {
        match self.conform.iter().find(|id| !known.contains(id)) {
            Some(bad) => Err(format!("conform: {bad} is no conformance case id")),
            None => Ok(()),
        }
    }
}

/// The header keys of a mutation file, in either form.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct Header {
    gate: Option<String>,
    case: Option<String>,
    author: Option<String>,
    breaks: Option<String>,
    #[serde(default)]
    conform: Vec<String>,
    scenario: Option<String>,
    #[serde(default)]
    edit: Vec<Edit>,
}

/// Parses a mutation file's text: TOML if `file` ends in `.toml`, else a
/// header and a diff.
///
/// # Errors
/// A message for a missing `gate`, `author` or `breaks`, an unknown author,
/// an empty diff or no `[[edit]]`, a misshapen edit, or a path touching a
/// forbidden folder.
pub fn parse(file: &Path, text: &str) -> Result<Mutation, String> {
    if file.extension().is_some_and(|x| x == "toml") {
        let h: Header = toml::from_str(text).map_err(|e| format!("not a mutation's TOML: {e}"))?;
        if h.edit.is_empty() {
            return Err("no `[[edit]]`".into());
        }
        for e in &h.edit {
            e.check()?;
        }
        let touches = super::edits::files(&h.edit);
        return checked(file, h, String::new(), touches, None);
    }
    let mut gate = None;
    let mut case = None;
    let mut author = None;
    let mut breaks = None;
    let mut conform: Vec<String> = Vec::new();
    let mut scenario = None;
    let mut kept_as_diff = None;
    let mut diff_start = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end();
        if l.starts_with("--- ") || l.starts_with("diff --git ") {
            diff_start = Some(offset);
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim().to_string();
            match k.trim() {
                "gate" => gate = Some(v),
                "case" => case = Some(v).filter(|c| !c.is_empty()),
                "author" => author = Some(v),
                "breaks" => breaks = Some(v),
                "conform" => conform = v.split_whitespace().map(str::to_owned).collect(),
                "scenario" => scenario = Some(v).filter(|s| !s.is_empty()),
                "kept-as-diff" => kept_as_diff = Some(v),
                _ => {}
            }
        }
        offset += line.len();
    }
    let diff = text[diff_start.ok_or("no unified diff (no `--- a/…` line)")?..].to_string();
    let touches: Vec<String> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("+++ "))
        .map(|p| p.trim().trim_start_matches("b/").to_string())
        .collect();
    let header = Header {
        gate,
        case,
        author,
        breaks,
        conform,
        scenario,
        edit: Vec::new(),
    };
    checked(file, header, diff, touches, kept_as_diff)
}

/// The header's rules, for both forms.
fn checked(
    file: &Path,
    h: Header,
    diff: String,
    touches: Vec<String>,
    kept_as_diff: Option<String>,
) -> Result<Mutation, String> {
    let Header {
        gate,
        case,
        author,
        breaks,
        conform,
        scenario,
        edit: edits,
    } = h;
    let case = case.filter(|c| !c.is_empty());
    let scenario = scenario.filter(|s| !s.is_empty());
    let gate = gate.ok_or("no `gate:` line")?;
    let author = match author.as_deref() {
        Some("author") => Author::Author,
        Some("adversary") => Author::Adversary,
        Some(other) => {
            return Err(format!(
                "author must be `author` or `adversary`, not {other:?}"
            ));
        }
        None => return Err("no `author:` line".into()),
    };
    let breaks = breaks.ok_or("no `breaks:` line")?;
    if touches.is_empty() {
        return Err("the diff touches no file".into());
    }
    if let Some(bad) = touches
        .iter()
        .find(|p| FORBIDDEN_PREFIXES.iter().any(|f| p.starts_with(f)))
    {
        return Err(format!(
            "a mutation changes the code under test, never a gate: it touches {bad}"
        ));
    }
    if gate == CONFORM_GATE {
        if conform.is_empty() {
            return Err(
                "a `gate: conform` mutation names its failing cases on a `conform:` line".into(),
            );
        }
    } else if !conform.is_empty() {
        return Err("`conform:` belongs to `gate: conform` mutations only".into());
    }
    if gate == SCENARIO_GATE {
        let Some(f) = &scenario else {
            return Err(
                "a `gate: scenario` mutation names its scenario on a `scenario:` line".into(),
            );
        };
        if !f.starts_with("scenarios/") || !f.ends_with(".toml") || f.contains("..") {
            return Err(format!(
                "scenario: {f} is not a file of the form scenarios/<name>.toml"
            ));
        }
        if case.is_some() {
            return Err("a `gate: scenario` mutation names no `case:`".into());
        }
    } else if scenario.is_some() {
        return Err("`scenario:` belongs to `gate: scenario` mutations only".into());
    }
    if let Some(c) = &case
        && gate != CONFORM_GATE
        && !c.starts_with(&format!("{gate}/"))
    {
        return Err(format!("case {c} is not a case of gate {gate}"));
    }
    Ok(Mutation {
        file: file.to_path_buf(),
        gate,
        case,
        conform,
        scenario,
        author,
        breaks,
        diff,
        touches,
        edits,
        kept_as_diff,
    })
}

/// A folder under `mutants/` whose files are not recorded mutations:
/// attempts awaiting a stronger gate.
pub const SURVIVORS_DIR: &str = "survivors";

/// Every `*.toml` and `*.diff` under `dir`, in any folder (the gate folders
/// `g01/`, `conform/`, `scenario/`, …) but [`SURVIVORS_DIR`], sorted.
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != SURVIVORS_DIR)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "diff" || x == "toml")
        })
        .map(|e| e.into_path())
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "gate: 26\ncase: 26/second-dek-different-id\nauthor: adversary\nbreaks: bare sha\n\n--- a/reference/src/store.rs\n+++ b/reference/src/store.rs\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn a_well_formed_mutation_parses_with_its_header() {
        let m = parse(Path::new("x.diff"), GOOD).unwrap();
        assert_eq!(m.gate, "26");
        assert_eq!(m.author, Author::Adversary);
        assert_eq!(m.touches, vec!["reference/src/store.rs"]);
        assert!(m.diff.starts_with("--- a/"));
    }

    const GOOD_TOML: &str = r#"gate = "26"
case = "26/second-dek-different-id"
author = "adversary"
breaks = "bare sha"

[[edit]]
file = "reference/src/store.rs"
item = "fn id"
find = '''
    hmac(k, b)
'''
replace = '''
    sha(b)
'''
"#;

    #[test]
    fn an_item_anchored_mutation_parses_with_its_edits_and_no_diff_yet() {
        let m = parse(Path::new("x.toml"), GOOD_TOML).unwrap();
        assert_eq!((m.gate.as_str(), m.author), ("26", Author::Adversary));
        assert_eq!(m.touches, vec!["reference/src/store.rs"]);
        assert_eq!(m.edits[0].find.as_deref(), Some("    hmac(k, b)\n"));
        assert!(m.diff.is_empty());
        for (from, to) in [
            ("reference/src/store.rs", "gates/src/lib.rs"),
            ("item = ", "items = "),
            ("replace = ", "replace-item = "),
        ] {
            let e = parse(Path::new("x.toml"), &GOOD_TOML.replace(from, to));
            assert!(e.is_err(), "{to} accepted");
        }
        let no_edit = &GOOD_TOML[..GOOD_TOML.find("[[edit]]").unwrap()];
        assert!(
            parse(Path::new("x.toml"), no_edit)
                .unwrap_err()
                .contains("no `[[edit]]`")
        );
    }

    #[test]
    fn a_mutation_that_touches_a_gate_is_invalid() {
        let bad = GOOD.replace("reference/src/store.rs", "gates/src/lib.rs");
        assert!(
            parse(Path::new("x.diff"), &bad)
                .unwrap_err()
                .contains("never a gate")
        );
    }

    #[test]
    fn a_conform_mutation_names_existing_conformance_cases_and_only_it_may() {
        let c = GOOD.replace(
            "gate: 26\ncase: 26/second-dek-different-id\n",
            "gate: conform\nconform: s1/four-fields s1a/close-count\n",
        );
        let m = parse(Path::new("x.diff"), &c).unwrap();
        assert_eq!(m.conform, vec!["s1/four-fields", "s1a/close-count"]);
        let known: Vec<String> = ["s1/four-fields", "s1a/close-count", "s2/other"]
            .map(String::from)
            .into();
        assert_eq!(m.check_conform_cases(&known), Ok(()));
        let unknown = parse(
            Path::new("x"),
            &c.replace("s1/four-fields", "s1/five-fields"),
        )
        .unwrap();
        assert_eq!(
            unknown.check_conform_cases(&known),
            Err("conform: s1/five-fields is no conformance case id".to_string())
        );
        assert!(
            parse(
                Path::new("x"),
                &c.replace("conform: s1/four-fields s1a/close-count\n", "")
            )
            .is_err()
        );
        assert!(
            parse(
                Path::new("x"),
                &GOOD.replace("author:", "conform: s1/four-fields\nauthor:")
            )
            .is_err()
        );
    }

    #[test]
    fn a_scenario_mutation_names_a_scenario_file_and_only_it_may() {
        let s = GOOD.replace(
            "gate: 26\ncase: 26/second-dek-different-id\n",
            "gate: scenario\nscenario: scenarios/partial-restore.toml\n",
        );
        let m = parse(Path::new("x.diff"), &s).unwrap();
        assert_eq!(
            m.scenario.as_deref(),
            Some("scenarios/partial-restore.toml")
        );
        for bad in ["scenarios/../x.toml", "fixtures/a.toml", "scenarios/a.json"] {
            assert!(
                parse(
                    Path::new("x"),
                    &s.replace("scenarios/partial-restore.toml", bad)
                )
                .is_err(),
                "{bad} accepted"
            );
        }
        assert!(
            parse(
                Path::new("x"),
                &s.replace("scenario: scenarios/partial-restore.toml\n", "")
            )
            .is_err()
        );
        assert!(
            parse(
                Path::new("x"),
                &GOOD.replace("author:", "scenario: scenarios/a.toml\nauthor:")
            )
            .is_err()
        );
        let touches_scenario =
            s.replace("reference/src/store.rs", "scenarios/partial-restore.toml");
        assert!(parse(Path::new("x"), &touches_scenario).is_err());
    }

    #[test]
    fn a_header_without_author_or_with_a_foreign_case_is_invalid() {
        assert!(parse(Path::new("x"), &GOOD.replace("author: adversary\n", "")).is_err());
        assert!(parse(Path::new("x"), &GOOD.replace("26/second", "27/second")).is_err());
        assert!(parse(Path::new("x"), "gate: 1\nauthor: author\nbreaks: x\n").is_err());
    }
}
