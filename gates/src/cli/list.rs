//! `memoria-harness list`: every gate and case with its requirement, sections and mutations; `--refresh` rewrites the Markdown blocks generated from the registry.

use std::path::PathBuf;
use std::process::ExitCode;

use memoria_gates::{mutants, registry};

use super::{EXIT_USAGE, workspace_root};
use crate::ListFormat;

/// `list --refresh`: each file's generated blocks rewritten from the
/// registry; exit 2 naming the file on an I/O error or a malformed block.
pub fn refresh_docs(files: &[PathBuf]) -> ExitCode {
    for f in files {
        let refreshed = std::fs::read_to_string(f)
            .map_err(|e| format!("reading {}: {e}", f.display()))
            .and_then(|t| {
                memoria_gates::listing::refresh(&t)
                    .map(|r| (t, r))
                    .map_err(|e| format!("{}: {e}", f.display()))
            })
            .and_then(|(before, after)| {
                if before == after {
                    return Ok(false);
                }
                std::fs::write(f, after)
                    .map(|()| true)
                    .map_err(|e| format!("writing {}: {e}", f.display()))
            });
        match refreshed {
            Ok(changed) => eprintln!(
                "memoria-harness: {} {}",
                f.display(),
                if changed {
                    "refreshed"
                } else {
                    "already current"
                }
            ),
            Err(e) => {
                eprintln!("memoria-harness: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        }
    }
    ExitCode::SUCCESS
}

/// `list`: the registry as text, JSON or the README's Markdown table.
pub fn list(format: ListFormat) -> ExitCode {
    let recorded = workspace_root(None)
        .map(|w| mutants::guards::by_gate(&w))
        .unwrap_or_default();
    let of = |id: &str| recorded.get(id).map(Vec::as_slice).unwrap_or_default();
    match format {
        ListFormat::Markdown => out!("{}", memoria_gates::listing::gates_markdown()),
        ListFormat::Json => {
            let v: Vec<serde_json::Value> = registry()
                .iter()
                .map(|g| {
                    serde_json::json!({
                        "id": g.id,
                        "title": g.title,
                        "gates_md": g.gates_md,
                        "sections": g.sections,
                        "requirement": g.requirement,
                        "cases": g.cases.iter().map(|c| serde_json::json!({"id": c.id, "desc": c.desc})).collect::<Vec<_>>(),
                        "mutations": of(g.id).len(),
                        "guards": mutants::guards::files_of(of(g.id)),
                    })
                })
                .collect();
            outln!(
                "{}",
                serde_json::to_string_pretty(&v).expect("list serialises")
            );
        }
        ListFormat::Text => {
            for g in registry() {
                outln!("gate {} · {} · {}", g.id, g.title, g.sections.join(" "));
                for row in g.gates_md {
                    outln!("  GATES.md: {row}");
                }
                outln!("  requirement: {}", g.requirement);
                let ms = of(g.id);
                outln!(
                    "  mutations: {} touching {}",
                    ms.len(),
                    mutants::guards::files_of(ms).join(", ")
                );
                for c in g.cases {
                    outln!("  {:<36} {}", c.id, c.desc);
                }
                outln!();
            }
            for (gate, what) in [
                (mutants::CONFORM_GATE, "the conformance kit's broken fakes"),
                (mutants::SCENARIO_GATE, "the incident scenarios"),
            ] {
                let ms = of(gate);
                outln!(
                    "{what} ({gate}): {} mutations touching {}",
                    ms.len(),
                    mutants::guards::files_of(ms).join(", ")
                );
            }
        }
    }
    ExitCode::SUCCESS
}
