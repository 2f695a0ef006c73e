//! The fixture manifest: the people, items, rungs, revision histories and grants a sibling under test holds before the kit runs (§4.1, §6.1).
//!
//! The default is `fixtures/conformance/manifest.json`, compiled in; an
//! implementer whose server mints its own ids or revisions passes an edited
//! copy with `--manifest`. Keys (`member_a`, `team_history`) are the kit's
//! names; `item_id`, `revisions` and addresses travel on the wire.

use serde::Deserialize;

/// The manifest shipped with the kit (`fixtures/conformance/manifest.json`).
pub const DEFAULT_MANIFEST: &str = include_str!("../../../fixtures/conformance/manifest.json");

/// Item keys every manifest must define: the states the cases need (§4.1 suite gate 3).
pub const REQUIRED_ITEMS: &[&str] = &[
    "team",
    "team_history",
    "team_minus_b",
    "team_to_downgrade",
    "team_to_delete",
    "private",
    "granted",
    "link_shared",
    "guest_only",
    "deleted",
];

/// Person keys every manifest must define.
pub const REQUIRED_PEOPLE: &[&str] = &["member_a", "member_b", "guest"];

/// Whether someone is a team member or a guest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// A team member.
    Member,
    /// A guest: never sees team items.
    Guest,
}

/// One person the sibling knows.
#[derive(Debug, Clone, Deserialize)]
pub struct Person {
    /// The kit's name for them, e.g. `member_a`.
    pub key: String,
    /// Member or guest.
    pub role: Role,
    /// Their address (the `address` subject kind).
    pub address: String,
    /// Their person ref (the `person_ref` subject kind).
    pub person_ref: String,
}

/// A sharing rung (§4.1's grants join).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rung {
    /// Only the owner.
    Private,
    /// Individually granted.
    Granted,
    /// Every member: the only team-visible rung.
    Team,
}

/// One item and its state.
#[derive(Debug, Clone, Deserialize)]
pub struct Item {
    /// The kit's name for it, e.g. `team_history`.
    pub key: String,
    /// The wire id.
    pub item_id: String,
    /// Its rung.
    pub rung: Rung,
    /// Owner's person key (private items).
    #[serde(default)]
    pub owner: Option<String>,
    /// Grantees' person keys (granted items).
    #[serde(default)]
    pub granted_to: Vec<String>,
    /// Person keys removed from the item.
    #[serde(default)]
    pub removed: Vec<String>,
    /// Reachable by link, not shared with the team.
    #[serde(default)]
    pub link_shared: bool,
    /// Shared only with guests.
    #[serde(default)]
    pub guest_only: bool,
    /// Deleted (the row stays).
    #[serde(default)]
    pub deleted: bool,
    /// Revision tokens, oldest first; the last is current.
    pub revisions: Vec<String>,
}

impl Item {
    /// Team-visible: rung team and none of deleted, link-shared, guest-only (§4.1 custody).
    #[must_use]
    pub fn team_visible(&self) -> bool {
        self.rung == Rung::Team && !self.deleted && !self.link_shared && !self.guest_only
    }

    /// The current revision.
    ///
    /// # Panics
    /// Never after [`Manifest::parse`], which refuses an empty history.
    #[must_use]
    pub fn current(&self) -> &str {
        self.revisions.last().expect("validated: never empty")
    }
}

/// The id with no row at all.
#[derive(Debug, Clone, Deserialize)]
pub struct NoRow {
    /// An id the server has never held.
    pub item_id: String,
    /// A revision to ask about.
    pub revision: String,
}

/// An S6 answer the kit expects, as Sheets shows it (§6.1 S6).
#[derive(Debug, Clone, Deserialize)]
pub struct ExpectedValue {
    /// The decimal string.
    pub value: String,
    /// The display string.
    pub display: String,
    /// The format code.
    pub format_code: String,
}

/// A reformat the kit drives and the display it expects after it.
#[derive(Debug, Clone, Deserialize)]
pub struct Reformatted {
    /// The new format code.
    pub format_code: String,
    /// What the reformatted cell then shows.
    pub display: String,
}

/// The grid every item holds on a target that serves S6 (§8.7): row 1 is
/// `header`, then each row a label and its cells.
#[derive(Debug, Clone, Deserialize)]
pub struct SheetGrid {
    /// The one tab's name.
    pub tab: String,
    /// Row 1.
    pub header: Vec<String>,
    /// Rows 2…: a label (col 1) and its cells (cols 2…).
    pub rows: Vec<(String, Vec<String>)>,
    /// The number cells' format code.
    pub format_code: String,
    /// SUM over row 2's cells (Revenue).
    pub sum_revenue: ExpectedValue,
    /// Row 2 col 2 reformatted in place.
    pub jan_reformatted: Reformatted,
    /// AVERAGE, MIN, MAX and COUNT over row 2's cells, each as Sheets
    /// answers it (`s6/each-function`).
    pub revenue_aggregates: Vec<ExpectedAggregate>,
}

/// One function over some of row 2's cells and what Sheets answers.
#[derive(Debug, Clone, Deserialize)]
pub struct ExpectedAggregate {
    /// The function: `AVERAGE`, `MIN`, `MAX` or `COUNT`.
    #[serde(rename = "fn")]
    pub function: String,
    /// The 1-based columns of row 2 asked, in the order asked.
    pub cols: Vec<u32>,
    /// The answer.
    #[serde(flatten)]
    pub expected: ExpectedValue,
}

/// A whole manifest.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// The subject kind the server keys on: `address` or `person_ref` (suite gate 2).
    pub keys_on: String,
    /// Members and the guest.
    pub people: Vec<Person>,
    /// Items.
    pub items: Vec<Item>,
    /// The no-row id.
    pub no_row: NoRow,
    /// The grid, for a target that serves S6; `None`: the s6 cases skip.
    #[serde(default)]
    pub sheet: Option<SheetGrid>,
}

impl Manifest {
    /// Parses and checks a manifest.
    ///
    /// # Errors
    /// A message for malformed JSON, a missing required person or item, a
    /// reference to an unknown person, or an empty revision history.
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| format!("manifest: {e}"))?;
        if m.keys_on != "address" && m.keys_on != "person_ref" {
            return Err("manifest: keys_on must be address or person_ref".into());
        }
        for k in REQUIRED_PEOPLE {
            if !m.people.iter().any(|p| p.key == *k) {
                return Err(format!("manifest: no person {k}"));
            }
        }
        for k in REQUIRED_ITEMS {
            if !m.items.iter().any(|i| i.key == *k) {
                return Err(format!("manifest: no item {k}"));
            }
        }
        for i in &m.items {
            if i.revisions.is_empty() {
                return Err(format!("manifest: item {} has no revision", i.key));
            }
            for p in i.owner.iter().chain(&i.granted_to).chain(&i.removed) {
                if !m.people.iter().any(|q| &q.key == p) {
                    return Err(format!("manifest: item {} names unknown person {p}", i.key));
                }
            }
        }
        Ok(m)
    }

    /// The built-in manifest.
    ///
    /// # Panics
    /// Never: a unit test parses it.
    #[must_use]
    pub fn builtin() -> Manifest {
        Manifest::parse(DEFAULT_MANIFEST).expect("the shipped manifest parses")
    }

    /// The person with this key.
    ///
    /// # Panics
    /// For a key [`REQUIRED_PEOPLE`] does not guarantee.
    #[must_use]
    pub fn person(&self, key: &str) -> &Person {
        self.people
            .iter()
            .find(|p| p.key == key)
            .expect("validated person key")
    }

    /// The item with this key.
    ///
    /// # Panics
    /// For a key [`REQUIRED_ITEMS`] does not guarantee.
    #[must_use]
    pub fn item(&self, key: &str) -> &Item {
        self.items
            .iter()
            .find(|i| i.key == key)
            .expect("validated item key")
    }

    /// The kind the server does not key on.
    #[must_use]
    pub fn other_kind(&self) -> &'static str {
        if self.keys_on == "address" {
            "person_ref"
        } else {
            "address"
        }
    }

    /// A person's subject value in `kind`.
    #[must_use]
    pub fn subject_value<'a>(&self, person: &'a Person, kind: &str) -> &'a str {
        if kind == "address" {
            &person.address
        } else {
            &person.person_ref
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_manifest_parses_and_holds_every_state_the_cases_need() {
        let m = Manifest::builtin();
        assert_eq!(m.items.iter().filter(|i| i.team_visible()).count(), 5);
        assert!(!m.item("granted").team_visible());
        assert_eq!(m.item("team_history").current(), "r3");
    }
}
