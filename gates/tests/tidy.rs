//! Tidy checks over the whole workspace: every Rust file opens with a `//!` doc line.

use std::path::Path;

#[test]
fn every_rust_file_in_the_workspace_starts_with_a_module_doc_comment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    let mut missing = Vec::new();
    for entry in walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_entry(|e| {
            let n = e.file_name().to_string_lossy();
            !(n == "target" || n.starts_with('.') && n != "." && n != "..")
        })
        .filter_map(Result::ok)
    {
        let p = entry.path();
        if p.extension().is_none_or(|x| x != "rs") {
            continue;
        }
        checked += 1;
        let text = std::fs::read_to_string(p).unwrap_or_default();
        if !text.starts_with("//!") {
            missing.push(p.strip_prefix(&root).unwrap_or(p).display().to_string());
        }
    }
    assert!(
        checked >= 30,
        "the walk found the workspace's sources ({checked})"
    );
    assert!(
        missing.is_empty(),
        "files without a leading //! line: {missing:?}"
    );
}

#[test]
fn every_registered_gate_case_has_its_own_cargo_test_and_every_test_names_a_real_case() {
    let tests = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gates.rs"),
    )
    .expect("tests/gates.rs reads");
    let mut listed = std::collections::BTreeSet::new();
    // Every string literal in the file: the odd pieces between quotes.
    for (i, piece) in tests.split('"').enumerate() {
        if i % 2 == 1 && piece.contains('/') && !piece.contains(' ') {
            listed.insert(piece.to_string());
        }
    }
    let registered: std::collections::BTreeSet<String> = memoria_gates::registry()
        .iter()
        .flat_map(|g| g.cases.iter().map(|c| c.id.to_string()))
        .collect();
    assert!(!registered.is_empty(), "the registry holds no case");
    let untested: Vec<&String> = registered.difference(&listed).collect();
    let unknown: Vec<&String> = listed.difference(&registered).collect();
    assert!(
        untested.is_empty() && unknown.is_empty(),
        "cases without a test: {untested:?}; tests naming no case: {unknown:?}"
    );
}
