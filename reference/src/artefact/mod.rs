//! Derived artefacts (§5.2, decisions 4 and 8): what one is, its provenance flattened to roots, and how a reader's right to it is ruled from those roots alone.
//!
//! An artefact is text memoria wrote through the provider with AI on (a
//! document's summary, a topic's overview; `app/artefacts.rs` writes them). Its
//! text is stored as a document of app [`crate::APP_ARTEFACT`], sealed and
//! indexed like any chunk; beside it the store keeps an
//! [`ArtefactRecord`]: the producing model, `roots` and `built_from`.
//!
//! - `roots` are the (owner, id, revision) triples the artefact rests on,
//!   sibling and memoria-owned alike, flattened at generation time
//!   ([`flatten`]): a contributing artefact's own roots replace its id, so
//!   no root is ever an artefact. This list alone authorizes.
//! - `built_from` are the artefacts it was written from, so a change to
//!   one propagates downstream; never consulted for authorization.
//!
//! Ruling an artefact for a reader ([`ArtefactCandidate::rule`]) follows
//! §5.2's steps: the roots are partitioned by owner; the sibling pairs go
//! to S2 on the one S2 path (`sibling::ruled::rule`, in batches of
//! [`crate::net::wire::S2_PAIRS_PER_CALL_MAX`], as many as needed),
//! and every pair must be VISIBLE; the memoria-owned pairs must be present
//! and at their current revision (admission is the search's own first
//! check); a mixed artefact needs both, ANDed. STALE, or a memoria-owned
//! revision superseded, is "the source changed": withheld and regenerated,
//! never spoken. AHEAD withholds (the app is marked for re-announce where
//! every AHEAD is). An artefact id in roots, a root with no owner, no
//! record at all, or a cycle in `built_from` withholds it and is logged as
//! a defect, with ids and no content.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::net::wire::{Pair, Verdict};
use crate::search::result::Verdicts;
use crate::storage::store::{APP_ARTEFACT, Provenance};

// The record and its roots are what the store keeps, so they sit below in
// `storage/store/artefacts.rs`; here is their home by name.
pub use crate::storage::store::{ArtefactRecord, Root};

/// What kind of artefact (§5.2): how `app/artefacts.rs` keys and titles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtefactKind {
    /// One document's summary.
    Document,
    /// A summary of at most `ARTEFACT_INPUTS_MAX` (`app/artefacts.rs`) of a topic's
    /// summaries, when the topic has more than that.
    Part,
    /// A topic's overview: a summary of its documents' summaries (or of
    /// its parts).
    Topic,
}

/// Why an artefact cannot be ruled at all (§5.2's defects): withheld, and
/// logged with the artefact's id and this kind only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Defect {
    /// The store holds no record for the artefact's text.
    NoRecord,
    /// No roots: provenance that cannot say where it came from.
    NoRoots,
    /// A root is an artefact: flattening did not run.
    ArtefactInRoots,
    /// A root names no owner: it cannot be partitioned.
    Unpartitionable,
    /// `built_from` leads back to the artefact itself.
    Cycle,
}

/// Where a memoria-owned root stands now (§5.2 step 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoriaRoot {
    /// Present, not deleted, at the recorded revision.
    Current,
    /// Present at another revision: the source changed; regenerate.
    Superseded,
    /// Deleted or unknown: the provenance stops resolving.
    Gone,
}

/// Why an artefact on a page was withheld loudly (§5.2); NOT_VISIBLE on
/// any root is not one: that artefact vanishes, counted nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtefactWithheldReason {
    /// A source changed (STALE, or a memoria-owned revision superseded or
    /// gone): memoria is writing it again.
    Regenerating,
    /// A sibling did not answer for a root (UNKNOWN).
    NoAnswer,
    /// A sibling is behind a root's revision (AHEAD): re-announcing.
    Ahead,
    /// Its provenance is a defect ([`Defect`]).
    Defect,
}

/// One line of loud withholding for artefacts: `count` of them, for `reason`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArtefactWithheld {
    /// Why.
    pub reason: ArtefactWithheldReason,
    /// How many artefacts on this page.
    pub count: usize,
}

impl ArtefactWithheld {
    /// The sentence the page shows.
    pub fn sentence(&self) -> String {
        let n = crate::search::result::counted(self.count, "summary", "summaries");
        match self.reason {
            ArtefactWithheldReason::Regenerating => {
                format!("{n} withheld: a source changed, and memoria is writing it again.")
            }
            ArtefactWithheldReason::NoAnswer => {
                format!("{n} withheld: an app its sources come from did not answer.")
            }
            ArtefactWithheldReason::Ahead => {
                format!("{n} withheld: an app its sources come from is behind, as after a restore.")
            }
            ArtefactWithheldReason::Defect => {
                format!("{n} withheld: memoria cannot say where it came from.")
            }
        }
    }
}

/// An artefact a search found, before S2: its text, its record, and what
/// the store said of its memoria-owned roots, read under the same lock as
/// the search (§4.2's presence, §5.2 step 3).
#[derive(Debug, Clone)]
pub struct ArtefactCandidate {
    /// The artefact's document id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
    /// The record, or the defect that stands in for it.
    pub record: Result<ArtefactRecord, Defect>,
    /// Each memoria-owned root's standing, in roots order.
    pub memoria: Vec<(Root, MemoriaRoot)>,
}

/// An artefact shown on a page, and the model that wrote it (decision 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShownArtefact {
    /// The artefact's document id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub text: String,
    /// The model id that wrote it.
    pub model: String,
    /// How many roots it rests on.
    pub roots: usize,
}

/// What one artefact's ruling decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtefactRuling {
    /// Every root passed under its owner's authority.
    Shown(ShownArtefact),
    /// A root is NOT_VISIBLE: gone from the page, counted nowhere.
    Vanished,
    /// Withheld loudly.
    Withheld(ArtefactWithheldReason),
}

impl ArtefactCandidate {
    /// The sibling pairs to put to S2, per app, in roots order (§5.2 step
    /// 2); none for a defect.
    pub fn sibling_pairs(&self) -> BTreeMap<String, Vec<Pair>> {
        let mut out: BTreeMap<String, Vec<Pair>> = BTreeMap::new();
        if let Ok(record) = &self.record {
            for root in record.roots.iter().filter(|r| !r.is_memoria()) {
                let pair = Pair {
                    item_id: root.id.clone(),
                    revision: root.revision.clone(),
                };
                let pairs = out.entry(root.owner.clone()).or_default();
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
        out
    }

    /// Rules the artefact (§5.2 steps 2 to 5): the sibling roots by
    /// `verdicts` (every one VISIBLE), the memoria-owned roots by their
    /// standing (every one current), ANDed. A refusal on either side wins
    /// over everything but a defect; then UNKNOWN, AHEAD, and last "the
    /// source changed" (STALE or a superseded memoria-owned revision).
    pub fn rule(&self, verdicts: &Verdicts) -> ArtefactRuling {
        let record = match &self.record {
            Ok(r) => r,
            Err(d) => {
                tracing::error!(artefact = %self.id, defect = ?d, "a derived artefact's provenance is a defect; withheld");
                return ArtefactRuling::Withheld(ArtefactWithheldReason::Defect);
            }
        };
        let sibling: BTreeSet<Verdict> = record
            .roots
            .iter()
            .filter(|r| !r.is_memoria())
            .map(|r| {
                verdicts.get(&Provenance {
                    app: r.owner.clone(),
                    item_id: r.id.clone(),
                    revision: r.revision.clone(),
                })
            })
            .collect();
        let memoria: BTreeSet<MemoriaRootKey> = self
            .memoria
            .iter()
            .map(|(_, s)| MemoriaRootKey::of(*s))
            .collect();
        if sibling.contains(&Verdict::NotVisible) {
            return ArtefactRuling::Vanished;
        }
        if sibling.contains(&Verdict::Unknown) {
            return ArtefactRuling::Withheld(ArtefactWithheldReason::NoAnswer);
        }
        if sibling.contains(&Verdict::Ahead) {
            return ArtefactRuling::Withheld(ArtefactWithheldReason::Ahead);
        }
        if sibling.contains(&Verdict::Stale)
            || memoria.iter().any(|m| *m != MemoriaRootKey::Current)
        {
            return ArtefactRuling::Withheld(ArtefactWithheldReason::Regenerating);
        }
        ArtefactRuling::Shown(ShownArtefact {
            id: self.id.clone(),
            title: self.title.clone(),
            text: self.text.clone(),
            model: record.model.clone(),
            roots: record.roots.len(),
        })
    }
}

/// [`MemoriaRoot`] as a set key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum MemoriaRootKey {
    Current,
    Superseded,
    Gone,
}

impl MemoriaRootKey {
    fn of(s: MemoriaRoot) -> MemoriaRootKey {
        match s {
            MemoriaRoot::Current => MemoriaRootKey::Current,
            MemoriaRoot::Superseded => MemoriaRootKey::Superseded,
            MemoriaRoot::Gone => MemoriaRootKey::Gone,
        }
    }
}

/// One input to an artefact being written: a source document, or an
/// artefact whose own record is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A source document: its root is itself.
    Source(Root),
    /// An artefact (its document id) and its record, if the store has one.
    Artefact(String, Option<ArtefactRecord>),
}

/// Why an artefact cannot be written: a contributing artefact's roots do
/// not resolve (§5.2: "an artefact whose sources cannot all be flattened
/// is not generated").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unflattenable;

/// Flattens `inputs` to roots at generation time (§5.2): a source is its
/// own root; an artefact contributes its own roots, never its id. Sorted
/// and deduplicated.
///
/// # Errors
/// [`Unflattenable`] if an input artefact has no record, no roots, or a
/// root that is itself an artefact or names no owner.
pub fn flatten(inputs: &[Input]) -> Result<Vec<Root>, Unflattenable> {
    let mut roots = BTreeSet::new();
    for input in inputs {
        match input {
            Input::Source(root) => {
                roots.insert(root.clone());
            }
            Input::Artefact(_, record) => {
                let record = record.as_ref().ok_or(Unflattenable)?;
                if record.roots.is_empty() {
                    return Err(Unflattenable);
                }
                for root in &record.roots {
                    if root.owner.is_empty() || root.owner == APP_ARTEFACT {
                        return Err(Unflattenable);
                    }
                    roots.insert(root.clone());
                }
            }
        }
    }
    Ok(roots.into_iter().collect())
}

/// The defect in `record`'s roots, if any (§5.2's three rules): no roots,
/// a root naming no owner, or a root that is an artefact (`is_artefact`
/// says whether a memoria document id is one).
pub fn roots_defect(record: &ArtefactRecord, is_artefact: impl Fn(&str) -> bool) -> Option<Defect> {
    if record.roots.is_empty() {
        return Some(Defect::NoRoots);
    }
    for root in &record.roots {
        if root.owner.is_empty() || root.id.is_empty() || root.revision.is_empty() {
            return Some(Defect::Unpartitionable);
        }
        if root.owner == APP_ARTEFACT || (root.is_memoria() && is_artefact(&root.id)) {
            return Some(Defect::ArtefactInRoots);
        }
    }
    None
}

/// True if `built_from`, followed from `start` through `records`, comes
/// back to `start` (§5.2: a cycle withholds every artefact on it).
pub fn on_cycle(start: &str, built_from: impl Fn(&str) -> Vec<String>) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = built_from(start);
    while let Some(id) = todo.pop() {
        if id == start {
            return true;
        }
        if seen.insert(id.clone()) {
            todo.extend(built_from(&id));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::store::APP_MEMORIA;

    fn root(owner: &str, id: &str, revision: &str) -> Root {
        Root {
            owner: owner.into(),
            id: id.into(),
            revision: revision.into(),
        }
    }

    fn record(roots: Vec<Root>) -> ArtefactRecord {
        ArtefactRecord {
            model: "m".into(),
            roots,
            built_from: vec![],
        }
    }

    #[test]
    fn an_artefact_input_contributes_its_roots_and_never_its_id() {
        let inner = record(vec![root("sheets", "sh-1", "r3")]);
        let flat = flatten(&[
            Input::Artefact("a1".into(), Some(inner)),
            Input::Source(root(APP_MEMORIA, "d1", "2")),
        ]);
        assert_eq!(
            flat,
            Ok(vec![
                root(APP_MEMORIA, "d1", "2"),
                root("sheets", "sh-1", "r3")
            ])
        );
    }

    #[test]
    fn an_input_artefact_without_roots_cannot_be_flattened() {
        let table: [(&str, Input); 3] = [
            ("no record", Input::Artefact("a".into(), None)),
            (
                "no roots",
                Input::Artefact("a".into(), Some(record(vec![]))),
            ),
            (
                "an artefact root",
                Input::Artefact("a".into(), Some(record(vec![root(APP_ARTEFACT, "b", "1")]))),
            ),
        ];
        for (name, input) in table {
            assert_eq!(flatten(&[input]), Err(Unflattenable), "{name}");
        }
    }

    #[test]
    fn a_root_that_is_an_artefact_or_names_no_owner_is_a_defect() {
        let is_artefact = |id: &str| id == "art";
        let table = [
            (vec![], Some(Defect::NoRoots)),
            (vec![root("", "x", "1")], Some(Defect::Unpartitionable)),
            (
                vec![root(APP_MEMORIA, "art", "1")],
                Some(Defect::ArtefactInRoots),
            ),
            (
                vec![root(APP_ARTEFACT, "x", "1")],
                Some(Defect::ArtefactInRoots),
            ),
            (
                vec![root(APP_MEMORIA, "doc", "1"), root("sheets", "s", "r")],
                None,
            ),
        ];
        for (roots, want) in table {
            assert_eq!(
                roots_defect(&record(roots.clone()), is_artefact),
                want,
                "{roots:?}"
            );
        }
    }

    #[test]
    fn a_cycle_through_built_from_is_found_and_a_chain_is_not() {
        let graph = |id: &str| match id {
            "a" => vec!["b".to_string()],
            "b" => vec!["c".to_string()],
            "c" => vec!["a".to_string()],
            "x" => vec!["y".to_string()],
            _ => vec![],
        };
        assert!(on_cycle("a", graph));
        assert!(!on_cycle("x", graph));
    }
}
