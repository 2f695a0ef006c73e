//! The sibling wire contract's JSON Schemas, compiled in, and one validator per message (`fixtures/contract/schema/`, suite ruling 7).
//!
//! The files in `fixtures/contract/` *are* the contract. Three consumers
//! check bytes against its schemas: the reference's contract test, the
//! simulator's fake-sibling contract test and the conformance kit
//! (`memoria-harness conform`). They load them here, one way: every
//! message schema is built once, with `defs.schema.json` registered under
//! its `$id` so the `$ref`s resolve offline. The text is embedded with
//! `include_str!`, so a kit binary checks against exactly the files it was
//! built with.
//!
//! ```
//! let row = serde_json::json!({"cursor": "c", "more": false, "rows": []});
//! let v = memoria_contract::validator("s1-response").expect("a contract schema");
//! assert!(v.is_valid(&row));
//! assert!(memoria_contract::validator("s9-response").is_none());
//! ```

#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// The message schemas by name: `<name>.schema.json` in `fixtures/contract/schema/`.
pub const SCHEMAS: [&str; 7] = [
    "error",
    "s1-response",
    "s1a-page",
    "s2-request",
    "s2-response",
    "s3-request",
    "s3-response",
];

/// `(name, text)` of every message schema, in [`SCHEMAS`]' order.
const TEXTS: [(&str, &str); 7] = [
    (
        "error",
        include_str!("../../fixtures/contract/schema/error.schema.json"),
    ),
    (
        "s1-response",
        include_str!("../../fixtures/contract/schema/s1-response.schema.json"),
    ),
    (
        "s1a-page",
        include_str!("../../fixtures/contract/schema/s1a-page.schema.json"),
    ),
    (
        "s2-request",
        include_str!("../../fixtures/contract/schema/s2-request.schema.json"),
    ),
    (
        "s2-response",
        include_str!("../../fixtures/contract/schema/s2-response.schema.json"),
    ),
    (
        "s3-request",
        include_str!("../../fixtures/contract/schema/s3-request.schema.json"),
    ),
    (
        "s3-response",
        include_str!("../../fixtures/contract/schema/s3-response.schema.json"),
    ),
];

/// The shared definitions every message schema refers to.
const DEFS: &str = include_str!("../../fixtures/contract/schema/defs.schema.json");

/// The validator for the message schema `name` (one of [`SCHEMAS`]), built
/// on first use and kept; `None` for any other name.
///
/// # Panics
/// If a compiled-in schema is not JSON or does not build: a broken fixture,
/// which this crate's own test catches before any consumer runs.
#[must_use]
pub fn validator(name: &str) -> Option<&'static jsonschema::Validator> {
    validators().get(name)
}

fn validators() -> &'static BTreeMap<&'static str, jsonschema::Validator> {
    static VALIDATORS: OnceLock<BTreeMap<&'static str, jsonschema::Validator>> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        let defs: Value = serde_json::from_str(DEFS).expect("defs.schema.json is JSON");
        let id = defs["$id"]
            .as_str()
            .expect("defs.schema.json has an $id")
            .to_owned();
        let registry = jsonschema::Registry::new()
            .add(id, defs)
            .and_then(jsonschema::RegistryBuilder::prepare)
            .expect("defs.schema.json registers under its $id");
        TEXTS
            .iter()
            .map(|(name, text)| {
                let schema: Value = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("{name}.schema.json is JSON: {e}"));
                let v = jsonschema::options()
                    .with_registry(&registry)
                    .build(&schema)
                    .unwrap_or_else(|e| panic!("the {name} schema builds: {e}"));
                (*name, v)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_in_the_folder_is_compiled_in_and_builds() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/contract/schema");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .expect("the schema folder")
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_suffix(".schema.json").map(str::to_owned)
            })
            .filter(|n| n != "defs")
            .collect();
        on_disk.sort();
        assert_eq!(on_disk, SCHEMAS, "a schema file is missing from SCHEMAS");
        assert_eq!(TEXTS.map(|(n, _)| n), SCHEMAS);
        for name in SCHEMAS {
            assert!(validator(name).is_some(), "{name}");
        }
    }

    #[test]
    fn a_reference_into_the_shared_definitions_is_enforced() {
        let v = validator("s1-response").expect("s1-response");
        let row = |touched_at: &str| {
            serde_json::json!({"cursor": "c", "more": false, "rows": [
                {"item_id": "a", "revision": "1", "gone": false, "touched_at": touched_at}
            ]})
        };
        assert!(v.is_valid(&row("2026-11-30T09:00:00Z")));
        assert!(
            !v.is_valid(&row("2026-11-30T09:00:00+00:00")),
            "defs' time pattern"
        );
        let empty_cursor = serde_json::json!({"cursor": "", "more": false, "rows": []});
        assert!(!v.is_valid(&empty_cursor), "defs' token is 1 to 256 bytes");
    }
}
