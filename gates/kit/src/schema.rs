//! The contract's JSON Schemas, built into the kit, and a content-free validator over them (`fixtures/contract/schema/`, suite ruling 7).
//!
//! The schemas come from `memoria-contract`, the one loader the reference's
//! and the simulator's contract tests use too; it compiles them in with
//! `include_str!`, so an implementer's run checks against exactly the files
//! this kit was built with. A violation is reported by keyword and instance
//! path (and, for an unexpected property, its name), never by the
//! offending value: a value may be a title or a body.

use serde_json::Value;

/// Every way `body` breaks the named schema, content-free: `keyword at
/// /instance/path`, plus the names of unexpected properties. Empty when it
/// conforms.
///
/// # Panics
/// If `schema` is not one of the built-in names ([`memoria_contract::SCHEMAS`]:
/// `error`, `s1-response`, `s1a-page`, `s2-response`, `s3-response` and the
/// two requests): a kit bug, not a target's.
#[must_use]
pub fn violations(schema: &str, body: &[u8]) -> Vec<String> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return vec![format!("not JSON ({} bytes)", body.len())];
    };
    let v = memoria_contract::validator(schema)
        .unwrap_or_else(|| panic!("no built-in schema {schema}"));
    v.iter_errors(&value)
        .map(|e| match e.kind() {
            jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } => {
                format!(
                    "unexpected properties {unexpected:?} at {}",
                    e.instance_path()
                )
            }
            k => format!("{} at {}", k.keyword(), e.instance_path()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_contract_example_conforms_to_its_schema_and_a_title_in_a_row_does_not() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/contract/examples");
        let mut checked = 0;
        for e in std::fs::read_dir(dir).expect("examples exist") {
            let p = e.expect("entry").path();
            let name = p
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned();
            let Some((schema, _)) = name.split_once("--") else {
                continue;
            };
            if !memoria_contract::SCHEMAS.contains(&schema) {
                continue;
            }
            let body = std::fs::read(&p).expect("reads");
            assert_eq!(violations(schema, &body), Vec::<String>::new(), "{name}");
            checked += 1;
        }
        assert!(checked >= 5, "only {checked} examples checked");
        let bad = br#"{"rows":[{"item_id":"a","revision":"r1","gone":false,"touched_at":"2026-11-30T09:00:00+00:00","title":"x"}],"cursor":"c","more":false}"#;
        let got = violations("s1-response", bad);
        assert!(got.iter().any(|v| v.contains("\"title\"")), "{got:?}");
        assert!(
            got.iter()
                .any(|v| v.starts_with("pattern at /rows/0/touched_at")),
            "{got:?}"
        );
        assert!(
            got.iter().all(|v| !v.contains("+00:00")),
            "a value leaked: {got:?}"
        );
    }
}
