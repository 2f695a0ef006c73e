//! Which gates and recorded mutations stand on a file: `memoria-harness guards PATH`, and the per-gate counts `list` shows.
//!
//! A recorded mutation stands on the files it changes: if one of them
//! changes, the mutation is what says the gate still notices. `guards`
//! answers for a file (or every file under a folder) with the mutations
//! whose edits or diff touch it, grouped by the gate that must kill them,
//! and the items they are anchored to.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::parse::{Mutation, discover, parse};

/// One recorded mutation as `guards` and `list` show it.
#[derive(Debug, Clone, Serialize)]
pub struct Standing {
    /// The mutation file, relative to the workspace.
    pub file: String,
    /// The files it changes.
    pub touches: Vec<String>,
    /// Its anchors, `file: item` (an item-anchored mutation's edits; none
    /// for a diff).
    pub anchors: Vec<String>,
}

/// Every recorded mutation under `workspace/mutants`, by gate (`gate:`
/// value), each group in file order; files that do not parse are left out
/// (the tidy test names them).
pub fn by_gate(workspace: &Path) -> BTreeMap<String, Vec<Standing>> {
    let mut out: BTreeMap<String, Vec<Standing>> = BTreeMap::new();
    for f in discover(&workspace.join("mutants")) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(m) = parse(&f, &text) else { continue };
        out.entry(m.gate.clone())
            .or_default()
            .push(standing(workspace, &f, &m));
    }
    out
}

fn standing(workspace: &Path, f: &Path, m: &Mutation) -> Standing {
    Standing {
        file: f.strip_prefix(workspace).unwrap_or(f).display().to_string(),
        touches: m.touches.clone(),
        anchors: m.edits.iter().map(super::edits::Edit::place).collect(),
    }
}

/// `path` as a workspace-relative path with `/` separators: as given if it
/// is already relative to the workspace, else resolved from the current
/// directory.
pub fn relative(workspace: &Path, path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else if workspace.join(path).exists() {
        workspace.join(path)
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let abs = abs.canonicalize().unwrap_or(abs);
    abs.strip_prefix(workspace)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// The mutations of each gate that touch `rel` (a file, or any file under
/// it if it is a folder), gates with none left out.
pub fn guarding(
    all: &BTreeMap<String, Vec<Standing>>,
    rel: &Path,
) -> BTreeMap<String, Vec<Standing>> {
    let rel = rel.to_string_lossy().trim_end_matches('/').to_string();
    let hits = |t: &String| rel.is_empty() || *t == rel || t.starts_with(&format!("{rel}/"));
    all.iter()
        .filter_map(|(gate, ms)| {
            let mine: Vec<Standing> = ms
                .iter()
                .filter(|m| m.touches.iter().any(hits))
                .map(|m| Standing {
                    anchors: m
                        .anchors
                        .iter()
                        .filter(|a| hits(&a.split(": ").next().unwrap_or_default().to_string()))
                        .cloned()
                        .collect(),
                    ..m.clone()
                })
                .collect();
            (!mine.is_empty()).then(|| (gate.clone(), mine))
        })
        .collect()
}

/// The files a gate's mutations touch, sorted, each once.
pub fn files_of(ms: &[Standing]) -> Vec<String> {
    let mut v: Vec<String> = ms.iter().flat_map(|m| m.touches.clone()).collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_guarded_by_the_mutations_that_touch_it_or_anything_under_a_folder() {
        let m = |file: &str, touches: &[&str]| Standing {
            file: file.into(),
            touches: touches.iter().map(|t| t.to_string()).collect(),
            anchors: touches.iter().map(|t| format!("{t}: fn x")).collect(),
        };
        let all = BTreeMap::from([
            (
                "6".to_string(),
                vec![
                    m("mutants/g06/a.toml", &["reference/src/sibling/ruled.rs"]),
                    m("mutants/g06/b.toml", &["reference/src/web/state.rs"]),
                ],
            ),
            (
                "conform".to_string(),
                vec![m(
                    "mutants/conform/c.toml",
                    &["simulator/src/fake/model.rs"],
                )],
            ),
        ]);
        let g = guarding(&all, Path::new("reference/src/sibling/ruled.rs"));
        assert_eq!(g.keys().collect::<Vec<_>>(), ["6"]);
        assert_eq!(g["6"].len(), 1);
        let folder = guarding(&all, Path::new("reference/src/"));
        assert_eq!(folder["6"].len(), 2);
        assert!(guarding(&all, Path::new("reference/src/sib")).is_empty());
        assert_eq!(
            files_of(&all["6"]),
            [
                "reference/src/sibling/ruled.rs",
                "reference/src/web/state.rs"
            ]
        );
    }
}
