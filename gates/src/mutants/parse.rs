//! Reading a mutation file: its `key: value` header and the diff beneath it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
    /// The unified diff.
    pub diff: String,
    /// Workspace-relative paths the diff touches.
    pub touches: Vec<String>,
}

/// Parses a mutation file's text.
///
/// # Errors
/// A message for a missing `gate`, `author` or `breaks`, an unknown author,
/// an empty diff, or a diff touching a forbidden path.
pub fn parse(file: &Path, text: &str) -> Result<Mutation, String> {
    let mut gate = None;
    let mut case = None;
    let mut author = None;
    let mut breaks = None;
    let mut conform: Vec<String> = Vec::new();
    let mut scenario = None;
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
                _ => {}
            }
        }
        offset += line.len();
    }
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
    let diff = text[diff_start.ok_or("no unified diff (no `--- a/…` line)")?..].to_string();
    let touches: Vec<String> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("+++ "))
        .map(|p| p.trim().trim_start_matches("b/").to_string())
        .collect();
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
        if let Some(bad) = conform.iter().find(|id| {
            !crate::conform::cases::all()
                .iter()
                .any(|c| c.id == id.as_str())
        }) {
            return Err(format!("conform: {bad} is no conformance case id"));
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
    })
}

/// Every `*.diff` directly in `dir` (not in subfolders such as
/// `survivors/`, which hold attempts awaiting a stronger gate), sorted.
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .max_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "diff"))
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
        assert!(
            parse(
                Path::new("x"),
                &c.replace("s1/four-fields", "s1/five-fields")
            )
            .is_err()
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
