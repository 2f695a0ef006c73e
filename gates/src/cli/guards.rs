//! `memoria-harness guards PATH`: the gates and recorded mutations that stand on a file or folder, with the items they are anchored to.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use memoria_gates::{mutants, registry};

use super::{EXIT_USAGE, workspace_root};
use crate::Format;

/// Prints the mutations standing on `path` by gate, as text or JSON; exit 0,
/// or 2 when the workspace or `path` is not there.
pub fn guards(path: &Path, workspace: Option<PathBuf>, format: Format) -> ExitCode {
    let workspace = match workspace_root(workspace) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("memoria-harness: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let rel = mutants::guards::relative(&workspace, path);
    if !workspace.join(&rel).exists() {
        eprintln!(
            "memoria-harness: {} is no file or folder of the workspace {}",
            rel.display(),
            workspace.display()
        );
        return ExitCode::from(EXIT_USAGE);
    }
    let mut on: Vec<(String, Vec<mutants::guards::Standing>)> =
        mutants::guards::guarding(&mutants::guards::by_gate(&workspace), &rel)
            .into_iter()
            .collect();
    // Gates in their numeric order, then suite 5, the kit and the scenarios.
    on.sort_by_key(|(gate, _)| (gate.parse::<u32>().unwrap_or(u32::MAX), gate.clone()));
    let title = |gate: &str| {
        registry().iter().find(|g| g.id == gate).map_or_else(
            || match gate {
                mutants::CONFORM_GATE => "the conformance kit against a broken fake".to_string(),
                mutants::SCENARIO_GATE => "incident scenarios".to_string(),
                _ => String::new(),
            },
            |g| g.title.to_string(),
        )
    };
    match format {
        Format::Json => {
            let v: Vec<serde_json::Value> = on
                .iter()
                .map(|(gate, ms)| serde_json::json!({"gate": gate, "title": title(gate), "mutations": ms}))
                .collect();
            outln!("{}", serde_json::to_string_pretty(&v).expect("serialises"));
        }
        Format::Text | Format::Junit => {
            let n: usize = on.iter().map(|(_, ms)| ms.len()).sum();
            outln!(
                "{}: {n} recorded mutation{} of {} gate{} stand on it",
                rel.display(),
                if n == 1 { "" } else { "s" },
                on.len(),
                if on.len() == 1 { "" } else { "s" }
            );
            for (gate, ms) in &on {
                outln!(
                    "\ngate {gate} · {} · {} mutation{}",
                    title(gate),
                    ms.len(),
                    if ms.len() == 1 { "" } else { "s" }
                );
                for m in ms {
                    let mut anchors: Vec<&str> = m
                        .anchors
                        .iter()
                        .map(|a| a.split_once(": ").map_or(a.as_str(), |(_, i)| i))
                        .collect();
                    anchors.dedup();
                    if anchors.is_empty() {
                        outln!("  {}  (a diff)", m.file);
                    } else {
                        outln!("  {}  ({})", m.file, anchors.join("; "));
                    }
                }
            }
        }
    }
    ExitCode::SUCCESS
}
