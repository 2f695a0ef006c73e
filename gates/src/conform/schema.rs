//! The contract's JSON Schemas, built into the kit, and a content-free validator over them (`fixtures/contract/schema/`, suite ruling 7).
//!
//! The schemas are compiled into the binary with `include_str!`, so an
//! implementer's run checks against exactly the files this kit was built
//! with. A violation is reported by keyword and instance path (and, for an
//! unexpected property, its name), never by the offending value: a value
//! may be a title or a body.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// `(name, schema text)` of every message schema, and the shared definitions.
const SCHEMAS: &[(&str, &str)] = &[
    (
        "error",
        include_str!("../../../fixtures/contract/schema/error.schema.json"),
    ),
    (
        "s1-response",
        include_str!("../../../fixtures/contract/schema/s1-response.schema.json"),
    ),
    (
        "s1a-page",
        include_str!("../../../fixtures/contract/schema/s1a-page.schema.json"),
    ),
    (
        "s2-response",
        include_str!("../../../fixtures/contract/schema/s2-response.schema.json"),
    ),
    (
        "s3-response",
        include_str!("../../../fixtures/contract/schema/s3-response.schema.json"),
    ),
];

const DEFS: &str = include_str!("../../../fixtures/contract/schema/defs.schema.json");

struct Defs(Value);

impl jsonschema::Retrieve for Defs {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        if uri.as_str().ends_with("/defs.schema.json") {
            Ok(self.0.clone())
        } else {
            Err(format!("no such schema: {}", uri.as_str()).into())
        }
    }
}

fn validators() -> &'static BTreeMap<&'static str, jsonschema::Validator> {
    static VALIDATORS: OnceLock<BTreeMap<&'static str, jsonschema::Validator>> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        let defs: Value = serde_json::from_str(DEFS).expect("defs.schema.json is JSON");
        SCHEMAS
            .iter()
            .map(|(name, text)| {
                let schema: Value = serde_json::from_str(text).expect("a contract schema is JSON");
                let v = jsonschema::options()
                    .with_retriever(Defs(defs.clone()))
                    .build(&schema)
                    .unwrap_or_else(|e| panic!("the {name} schema builds: {e}"));
                (*name, v)
            })
            .collect()
    })
}

/// Every way `body` breaks the named schema, content-free: `keyword at
/// /instance/path`, plus the names of unexpected properties. Empty when it
/// conforms.
///
/// # Panics
/// If `schema` is not one of the built-in names (`error`, `s1-response`,
/// `s1a-page`, `s2-response`, `s3-response`): a kit bug, not a target's.
#[must_use]
pub fn violations(schema: &str, body: &[u8]) -> Vec<String> {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return vec![format!("not JSON ({} bytes)", body.len())];
    };
    let v = validators()
        .get(schema)
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
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/contract/examples");
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
            if !SCHEMAS.iter().any(|(n, _)| *n == schema) {
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
