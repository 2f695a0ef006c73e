//! Every conformance case: stable ids grouped by section, level, requirement, spec section, and one body each (§4.1, §6.1, §6.2, GATES.md suite gates 2 and 3).
//!
//! One file per section of the case ids, each with its cases and its own
//! table: [`suite2`], [`suite3`], [`s2`], [`s3`], [`s1`], [`s1a`],
//! [`s6`], [`tokens`] and [`transport`]; what several share (S2 calls and parsing, byte comparisons,
//! feed walks, schema checks) is in `wire.rs`. [`all`] concatenates the
//! tables in that order, which is the order every run and report lists.
//! A new case goes in its section's table; a new section is a file, a
//! `mod` line and an entry in `SECTIONS`.
//!
//! Bodies compare raw response bytes where the contract fixes bytes
//! (suite gate 3) and parse leniently everywhere else, so that one broken
//! property fails the case that names it and no other. Failures carry ids,
//! revisions, statuses and values: never a title, a body or a token.

use std::sync::OnceLock;

use super::ConformCase;

/// Most S2 pairs one call may carry (`S2_PAIRS_PER_CALL_MAX`, §4.1).
pub const S2_PAIRS_PER_CALL_MAX: usize = 256;

/// Most S1 or S1a pages the kit follows before calling a feed endless.
pub const PAGES_MAX: usize = 1000;

/// The exactly four fields of an S1 row (gate 3, `s1-response.schema.json`).
pub const S1_ROW_FIELDS: [&str; 4] = ["gone", "item_id", "revision", "touched_at"];

/// A revision no sibling has issued for the team item, for S3's 404 case.
pub const NEVER_ISSUED_REVISION: &str = "conform-never-issued-revision";

/// Two revisions no sibling has issued for the team item, one sorting
/// before any `r…` token and one after, for `s2/never-issued-revision-ahead`:
/// a sibling that orders revisions instead of looking them up in its log
/// answers one of them STALE (§4.1: revisions are compared for equality
/// only, never ordered).
pub const NEVER_ISSUED_BOTH_SIDES: [&str; 2] = ["0-conform-never-issued", "~-conform-never-issued"];

/// The local part of an address (and the person ref) nobody at the sibling
/// holds: the stranger of `s2/stranger-not-visible`. The address takes
/// member_a's domain, so it looks like a colleague who is not on the roster
/// (§4.1, the grants join).
pub const STRANGER_LOCAL_PART: &str = "conform-not-on-the-roster";

/// New revisions `s1/pages-lose-no-row` makes, so that the feed after them
/// spans a page boundary of any sibling whose S1 page holds fewer rows
/// (the fake's holds 100). A count of revisions (§6.1, S1 paging).
pub const S1_PAGE_PROBE_BUMPS: usize = 150;

/// Most new revisions `s1/more-false-only-when-nothing-is-left` makes to
/// leave exactly one row behind a full page: a sibling whose S1 page holds
/// more rows than this less one is skipped there. A count of revisions.
pub const S1_MORE_PROBE_BUMPS_MAX: usize = 1000;

/// The most rows one S1 page may hold: `s1-response.schema.json`'s
/// `maxItems` on `rows`. `s1/pages-hold-at-most-500-rows` makes one more
/// than this behind a cursor. A count of rows.
pub const S1_PAGE_ROWS_MAX: usize = 500;

/// Response headers that may differ between two identical requests and are
/// left out of byte comparisons before the volatile ones are even measured
/// (suite gate 3: byte identity is of what depends on the item's state).
pub const HEADERS_NEVER_COMPARED: &[&str] = &["date", "content-length"];

/// One table entry: `case!(id, Level, "section", Needs, "requirement", body)`.
macro_rules! case {
    ($id:literal, $level:ident, $section:literal, $needs:ident, $req:literal, $run:path) => {
        $crate::ConformCase {
            id: $id,
            level: $crate::Level::$level,
            section: $section,
            requirement: $req,
            needs: $crate::Needs::$needs,
            run: $run,
        }
    };
}

// Declared after `case!`, so that every section's table can use it.
pub mod s1;
pub mod s1a;
pub mod s2;
pub mod s3;
pub mod s6;
pub mod suite2;
pub mod suite3;
pub mod tokens;
pub mod transport;
mod wire;

/// Every section's table, in list order.
const SECTIONS: &[&[ConformCase]] = &[
    suite2::CASES,
    suite3::CASES,
    s2::CASES,
    s3::CASES,
    s6::CASES,
    s1::CASES,
    s1a::CASES,
    tokens::CASES,
    transport::CASES,
];

/// Every case, in list order: each section's table in turn, `suite2` to `transport`.
#[must_use]
pub fn all() -> &'static [ConformCase] {
    static ALL: OnceLock<Vec<ConformCase>> = OnceLock::new();
    ALL.get_or_init(|| SECTIONS.iter().flat_map(|s| s.iter().cloned()).collect())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn each_section_table_holds_only_its_own_sections_ids() {
        let tables = [
            ("suite2", suite2::CASES),
            ("suite3", suite3::CASES),
            ("s2", s2::CASES),
            ("s3", s3::CASES),
            ("s6", s6::CASES),
            ("s1", s1::CASES),
            ("s1a", s1a::CASES),
            ("tokens", tokens::CASES),
            ("transport", transport::CASES),
        ];
        for (section, table) in tables {
            assert!(!table.is_empty(), "{section} has no case");
            for c in table {
                assert!(
                    c.id.starts_with(&format!("{section}/")),
                    "{} in {section}'s table",
                    c.id
                );
            }
        }
        assert_eq!(
            all().len(),
            tables.iter().map(|(_, t)| t.len()).sum::<usize>()
        );
    }

    #[test]
    fn case_ids_are_unique_and_grouped_by_section() {
        let mut seen = BTreeSet::new();
        for c in all() {
            assert!(seen.insert(c.id), "duplicate id {}", c.id);
            let group = c.id.split('/').next().unwrap_or("");
            assert!(
                [
                    "suite2",
                    "suite3",
                    "s1",
                    "s1a",
                    "s2",
                    "s3",
                    "s6",
                    "tokens",
                    "transport"
                ]
                .contains(&group),
                "{}",
                c.id
            );
        }
    }
}
