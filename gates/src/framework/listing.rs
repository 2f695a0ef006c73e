//! The counts the README and ARCHITECTURE.md state, generated from the registry: the gate table `memoria-harness list --format markdown` prints, and the marked blocks a tidy test keeps true.
//!
//! A document marks a generated block as
//! `<!-- generated: NAME -->…<!-- /generated -->`; [`refresh`] rewrites
//! every such block from [`block`], and `gates/tests/tidy.rs` fails with a
//! diff when a committed document differs from its refreshed self. Nothing
//! else in those documents is a typed count.

use super::run::registry;

/// The highest gate number `shared/spec/GATES.md` gives (its list ends at
/// gate 39); the numbers above it are this project's own (40 to 42, the
/// brief papers' checks, which GATES.md lists unnumbered).
pub const GATES_MD_NUMBER_MAX: u32 = 39;

/// The command that rewrites the marked blocks in place.
pub const REFRESH_COMMAND: &str =
    "target/debug/memoria-harness list --refresh README.md ARCHITECTURE.md";

/// Where a generated block starts: `<!-- generated: NAME -->`.
const OPEN: &str = "<!-- generated: ";
/// Where every generated block ends.
const CLOSE: &str = "<!-- /generated -->";

/// The gate table: one row per registered gate, in id order, with its
/// number, title and case count, then a total row.
pub fn gates_markdown() -> String {
    let mut out = String::from("| gate | title | cases |\n|---|---|---:|\n");
    for g in registry() {
        out.push_str(&format!("| {} | {} | {} |\n", g.id, g.title, g.cases.len()));
    }
    out.push_str(&format!(
        "| | **{} gates** | **{}** |\n",
        registry().len(),
        case_count()
    ));
    out
}

fn case_count() -> usize {
    registry().iter().map(|g| g.cases.len()).sum()
}

/// The numbered gates of GATES.md (1 to [`GATES_MD_NUMBER_MAX`]) that no
/// registered gate holds yet, in order.
pub fn gates_to_come() -> Vec<u32> {
    (1..=GATES_MD_NUMBER_MAX)
        .filter(|n| !registry().iter().any(|g| g.id == n.to_string()))
        .collect()
}

/// The text of the generated block `name`, or `None` for a name no
/// generator knows. Blocks: `gates` (the [`gates_markdown`] table),
/// `gate-count` (`41 gates, 269 cases`), `gates-to-come` (`9, 19 and 22`),
/// `conform-count` (the conformance kit's cases).
pub fn block(name: &str) -> Option<String> {
    match name {
        "gates" => Some(format!("\n{}", gates_markdown())),
        "gate-count" => Some(format!(
            "{} gates, {} cases",
            registry().len(),
            case_count()
        )),
        "gates-to-come" => {
            let n: Vec<String> = gates_to_come().iter().map(u32::to_string).collect();
            Some(match n.as_slice() {
                [] => "none".to_owned(),
                [one] => one.clone(),
                [init @ .., last] => format!("{} and {last}", init.join(", ")),
            })
        }
        "conform-count" => Some(crate::conform::cases::all().len().to_string()),
        _ => None,
    }
}

/// `doc` with every generated block's text replaced by [`block`]'s.
///
/// # Errors
/// A message naming the block and its byte offset when a block has no
/// end marker or names no generator.
pub fn refresh(doc: &str) -> Result<String, String> {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(at) = rest.find(OPEN) {
        let after_open = at + OPEN.len();
        let Some(name_end) = rest[after_open..].find(" -->") else {
            return Err(format!(
                "a generated block at byte {} has no ` -->` after its name",
                doc.len() - rest.len() + at
            ));
        };
        let name = &rest[after_open..after_open + name_end];
        let body_start = after_open + name_end + " -->".len();
        let Some(body_len) = rest[body_start..].find(CLOSE) else {
            return Err(format!("the generated block {name:?} has no {CLOSE}"));
        };
        let Some(text) = block(name) else {
            return Err(format!("no generator is named {name:?}"));
        };
        out.push_str(&rest[..body_start]);
        out.push_str(&text);
        out.push_str(CLOSE);
        rest = &rest[body_start + body_len + CLOSE.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marked_block_is_rewritten_and_the_text_around_it_kept() {
        let doc = "Built: <!-- generated: gate-count -->old<!-- /generated -->. End.\n";
        let refreshed = refresh(doc).expect("refreshes");
        let count = block("gate-count").expect("known");
        assert_eq!(
            refreshed,
            format!("Built: <!-- generated: gate-count -->{count}<!-- /generated -->. End.\n")
        );
        assert_eq!(refresh(&refreshed).expect("refreshes"), refreshed);
    }

    #[test]
    fn an_unknown_or_unclosed_block_is_an_error_naming_it() {
        let unknown = refresh("<!-- generated: nope -->x<!-- /generated -->").unwrap_err();
        assert!(unknown.contains("\"nope\""), "{unknown}");
        let unclosed = refresh("<!-- generated: gates -->x").unwrap_err();
        assert!(unclosed.contains("\"gates\""), "{unclosed}");
    }

    #[test]
    fn the_gate_table_has_a_row_per_registered_gate_and_a_total() {
        let table = gates_markdown();
        assert_eq!(table.lines().count(), registry().len() + 3);
        assert!(table.contains("| 26 | "), "{table}");
    }
}
