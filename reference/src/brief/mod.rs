//! Briefs for agents: a bounded, cited body of material about one task, every sentence quoted from a passage its person may read now (`brief-material.md`, `brief-repeats.md`, `brief-organisation-read.md`).
//!
//! Size: the brief's one use-case, assembly through rendering, in one place; the house issue's application layer is where it splits.
//!
//! An agent starting a task in one of the team's projects asks for a brief
//! from one [`Scope`]. [`crate::Instance::brief_candidates`] validates the
//! request, reads the pool (the combined read over the asked scope and the
//! organisation, and the organisation's own read beside it), cuts each
//! passage into sentences ([`blocks`]) and scores every sentence on the six
//! terms ([`score`]); `sibling::ruled::ruled_brief` asks S2 about every
//! sibling passage in the pool in this request, through the one ruling path
//! (§8.1); [`BriefCandidates::rule`] then keeps what is VISIBLE (or
//! memoria-owned), withholds the rest loudly as the search page does, and
//! assembles the [`Brief`]:
//!
//! 1. the order: the combined read's top [`score::CANDIDATES_MAX`], with
//!    the organisation's best hits seated at places 2 and 4 when they clear
//!    the bar ([`score::seat`]);
//! 2. the status ([`Status`]): `resolved` when one document leads by
//!    [`RESOLVE_MARGIN`] or its title is the task, `choose` with the tied
//!    candidates and no material, `none` saying why;
//! 3. the material around the resolved document: its description quoted
//!    with where it came from, excerpts chosen in order without repeats and
//!    at most two per first source ([`repeats::carry`]), relations (the
//!    document's own links to other documents, with the sentence that makes
//!    them), and the grounds: every id the material stands on;
//! 4. the budget: over it, excerpts go first (lowest placed first), then
//!    relations; the grounds stay whole; the brief says it shrank.
//!
//! Nothing is generated and no model runs. A brief is stored nowhere
//! (§8.4's invariant): it is built per request and returned.

pub mod blocks;
pub mod repeats;
pub mod scope;
pub mod score;
pub mod tokens;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::error::Error;
use crate::net::wire::{Pair, Verdict};
use crate::page::{SemanticRanking, Verdicts, Withheld, WithheldReason};
use crate::search::query;
use crate::storage::store::DocumentSummary;

pub use repeats::{BlockRef, Skip, carry};
pub use scope::{Scope, Scopes};
pub use score::{Scored, Seat, Terms};
pub use tokens::{content_tokens, is_negated, overlap};

/// The largest budget a brief may be asked for, in characters of material:
/// about 4,000 tokens of an agent's context, four times the search page's
/// twenty snippets. A larger one is refused, not cut.
pub const BUDGET_CHARS_MAX: usize = 16_000;
/// The budget `memoria brief` uses when none is given, in characters.
pub const BUDGET_CHARS_DEFAULT: usize = 2_000;
/// Passages the combined read takes from each ranking (BM25, and the dense
/// scan with AI on) before its sentences are scored: room for the
/// [`score::CANDIDATES_MAX`] sentences from more documents than a page shows.
pub const POOL_PASSAGES: usize = 48;
/// Passages the organisation's own read takes from each ranking.
pub const ORGANISATION_POOL_PASSAGES: usize = 16;
/// How far the first document must lead the next, in score, to be
/// resolved (`brief-material.md` §4: "the leading candidates tied" is
/// `choose`). One hundredth of the score's range: less than one shared word
/// of a five-word task (0.034) and less than one layer step (0.025).
pub const RESOLVE_MARGIN: f64 = 0.01;
/// The most candidates a `choose` brief lists.
pub const CHOOSE_CANDIDATES_MAX: usize = 5;
/// The most excerpts a brief carries before its budget is applied.
pub const EXCERPTS_MAX: usize = 12;
/// The most relations a brief carries before its budget is applied.
pub const RELATIONS_MAX: usize = 8;
/// Recency halves every this many days since a document's last revision.
pub const RECENCY_HALF_LIFE_DAYS: f64 = 90.0;
/// The layer term by heading depth below the title: the document's lead
/// stands highest, a section below it, a subsection lower.
pub const LAYER_BY_DEPTH: [f64; 3] = [1.0, 0.5, 0.25];

/// What an agent asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BriefRequest {
    /// The task, in the agent's words: a query (§9.1's limits apply).
    pub task: String,
    /// The scope it works in: a project's name, `team` or `organisation`.
    pub scope: String,
    /// The material's budget, in characters, 1 to [`BUDGET_CHARS_MAX`].
    pub budget_chars: usize,
    /// Read the team beside the scope and the organisation, at proximity
    /// [`score::PROXIMITY_TEAM`] (`brief-organisation-read.md` §1: "a team,
    /// when named").
    pub with_team: bool,
}

/// Why no brief was built. Each is a refusal a caller shows as it is; none
/// is an empty `resolved` brief.
#[derive(Debug)]
pub enum BriefError {
    /// The asker is not admitted (§4.3).
    NotAdmitted,
    /// The task holds no word to read for.
    EmptyTask,
    /// The task is over [`query::QUERY_BYTES_MAX`].
    TooLong {
        /// Bytes of UTF-8.
        bytes: usize,
        /// Characters.
        chars: usize,
    },
    /// The task holds more than [`query::QUERY_WORDS_MAX`] different words.
    TooManyWords {
        /// How many.
        words: usize,
    },
    /// The budget is 0 or over [`BUDGET_CHARS_MAX`].
    Budget {
        /// The budget asked, in characters.
        chars: usize,
    },
    /// The scope names no configured project, nor `team`, nor a configured
    /// `organisation`.
    UnknownScope,
    /// The index failed.
    Engine(Error),
    /// The store failed.
    Store(Error),
}

impl std::fmt::Display for BriefError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BriefError::NotAdmitted => f.write_str("not admitted"),
            BriefError::EmptyTask => f.write_str("the task holds no word to read for"),
            BriefError::TooLong { bytes, chars } => write!(
                f,
                "the task is {bytes} bytes ({chars} characters); a brief reads at most {} bytes",
                query::QUERY_BYTES_MAX
            ),
            BriefError::TooManyWords { words } => write!(
                f,
                "the task holds {words} different words; a brief reads at most {}",
                query::QUERY_WORDS_MAX
            ),
            BriefError::Budget { chars } => write!(
                f,
                "a budget of {chars} characters: a brief's budget is 1 to {BUDGET_CHARS_MAX} characters"
            ),
            BriefError::UnknownScope => f.write_str(
                "the scope names no configured project (MEMORIA_PROJECTS), nor 'team', nor a configured 'organisation' (MEMORIA_ORGANISATION)",
            ),
            BriefError::Engine(e) => write!(f, "the search engine failed: {e}"),
            BriefError::Store(e) => write!(f, "the store failed: {e}"),
        }
    }
}

impl std::error::Error for BriefError {}

/// Checks a request's own shape, before anything is read (bad input is
/// refused, never answered with an empty brief).
///
/// # Errors
/// [`BriefError::EmptyTask`], [`BriefError::TooLong`],
/// [`BriefError::TooManyWords`] or [`BriefError::Budget`].
pub fn check_request(req: &BriefRequest) -> Result<(), BriefError> {
    if req.budget_chars == 0 || req.budget_chars > BUDGET_CHARS_MAX {
        return Err(BriefError::Budget {
            chars: req.budget_chars,
        });
    }
    let q = query::parse(&req.task).map_err(|r| match r {
        query::QueryRefusal::TooLong { bytes, chars } => BriefError::TooLong { bytes, chars },
        query::QueryRefusal::TooManyWords { words } => BriefError::TooManyWords { words },
    })?;
    if q.word_count() == 0 || query::plan(&req.task).is_none() {
        return Err(BriefError::EmptyTask);
    }
    Ok(())
}

/// A passage in the pool, opened, not yet ruled.
#[derive(Debug, Clone)]
pub struct PoolPassage {
    /// The chunk's row id.
    pub chunk_id: i64,
    /// Its document.
    pub document: DocumentSummary,
    /// The passage's 0-based position.
    pub ordinal: i64,
    /// Its heading trail below the title.
    pub section: Vec<String>,
    /// The scope its document is filed under.
    pub scope: Scope,
    /// The document's own links to other live memoria-owned documents
    /// found in this passage: `(target, the sentence that makes it)`.
    pub links: Vec<(DocumentSummary, String)>,
}

impl PoolPassage {
    /// The passage's id as a brief cites it: `{document}#p{n}`, `n` its
    /// number from 1 ([`crate::page::passage_anchor`]).
    pub fn id(&self) -> String {
        format!(
            "{}#{}",
            self.document.id,
            crate::page::passage_anchor(self.ordinal)
        )
    }
}

/// One sentence of the pool, scored.
#[derive(Debug, Clone)]
pub struct PoolBlock {
    /// Index into [`BriefCandidates::passages`].
    pub passage: usize,
    /// The sentence, as the passage holds it.
    pub text: String,
    /// Its terms in the combined read; `None` if its scope is not in it.
    pub read: Option<Terms>,
    /// Its terms in the organisation's own read; `None` if it is not the
    /// organisation's, or that read does not run.
    pub organisation: Option<Terms>,
}

/// A document's description, as the store holds it: the lead sentence of
/// its first passage, when it shares a word with the title
/// (`brief-material.md` §3: only a sentence already on the item, "an
/// excerpt linked by its title", is promoted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Description {
    /// The sentence, quoted.
    pub text: String,
    /// Where it came from: always `lead_sentence` here.
    pub from: &'static str,
    /// The passage it was quoted from.
    pub passage: String,
}

/// The opened, scored pool of one brief, before S2 (§8.1). Assemble only
/// what [`BriefCandidates::rule`] returns.
#[derive(Debug, Clone)]
pub struct BriefCandidates {
    /// The request.
    pub request: BriefRequest,
    /// The asked scope.
    pub scope: Scope,
    /// The scopes the combined read spans, nearest first.
    pub reads: Vec<Scope>,
    /// True if the organisation's own read ran beside it.
    pub organisation_read: bool,
    /// Documents filed under the read's scopes (0: the scope holds nothing).
    pub documents_in_scope: usize,
    /// The pool's passages.
    pub passages: Vec<PoolPassage>,
    /// The pool's sentences.
    pub blocks: Vec<PoolBlock>,
    /// Each pool document's description, when it has one.
    pub descriptions: BTreeMap<String, Description>,
    /// The document whose title is the task, if one is in the pool.
    pub title_match: Option<String>,
    /// Apps marked for re-announce, left out of the read (§4.1 rule 1).
    pub reconciling: Vec<String>,
    /// How the pool was ranked (§7).
    pub semantic: SemanticRanking,
}

/// A brief's first line (`brief-material.md` §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// One document won; the material is filled.
    Resolved,
    /// The leading candidates tied: a candidate list, no material.
    Choose,
    /// Nothing matched (or nothing readable): said why.
    None,
}

impl Status {
    /// The word the first line holds.
    pub fn word(self) -> &'static str {
        match self {
            Status::Resolved => "resolved",
            Status::Choose => "choose",
            Status::None => "none",
        }
    }
}

/// The resolved document, or one candidate of a `choose`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// The document's id.
    pub document_id: String,
    /// Its title.
    pub title: String,
    /// Its app of record.
    pub app: String,
    /// Its revision.
    pub revision: i64,
    /// The scope it is filed under.
    pub scope: Scope,
    /// Its best score in the brief's order.
    pub score: f64,
}

/// One quoted excerpt (`brief-material.md` §2: "which document, which section").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excerpt {
    /// The sentence, quoted whole.
    pub text: String,
    /// Its document.
    pub document_id: String,
    /// The document's title.
    pub title: String,
    /// The section: the heading trail below the title.
    pub section: Vec<String>,
    /// The passage it is quoted from: `{document}#p{n}`, `n` from 1.
    pub passage: String,
    /// The document's app of record.
    pub app: String,
    /// The scope the document is filed under.
    pub scope: Scope,
    /// Its score in the read that placed it.
    pub score: f64,
    /// The six terms behind the score.
    pub terms: Terms,
    /// Whether the combined read placed it or it won an organisation seat.
    pub seat: Seat,
}

/// One relation of the resolved document (`brief-material.md` §2: "kind,
/// direction, evidence, confidence"). memoria's relations are the links a
/// document makes to other documents of this instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Relation {
    /// Always `links_to`.
    pub kind: &'static str,
    /// Always `out`: from the resolved document.
    pub direction: &'static str,
    /// The document linked to.
    pub target_id: String,
    /// Its title.
    pub target_title: String,
    /// The sentence that makes the link, quoted.
    pub evidence: String,
    /// The passage the evidence is quoted from.
    pub evidence_passage: String,
    /// Always `stated`: the document makes the link itself.
    pub confidence: &'static str,
}

/// What the budget took (`brief-material.md` §5: "the response says it was shrunk").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shrink {
    /// Excerpts left out, lowest placed first.
    pub excerpts_left_out: usize,
    /// Relations left out, last first.
    pub relations_left_out: usize,
    /// True if the material is over the budget even with every excerpt and
    /// relation left out (the description alone is longer).
    pub still_over: bool,
}

/// What the two reads found, for the reader who checks a brief by hand
/// (`brief-organisation-read.md` §2's figures).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ReadFigures {
    /// Candidates in the combined read's list (at most [`score::CANDIDATES_MAX`]).
    pub combined: usize,
    /// How many of them are the organisation's.
    pub combined_from_organisation: usize,
    /// Candidates of the organisation's own read (at most [`score::ORGANISATION_READ_K`]).
    pub organisation: usize,
    /// The combined read's top score.
    pub top_score: f64,
    /// The seat's bar: [`score::SEAT_BAR_FRACTION`] of the top score.
    pub bar: f64,
    /// Organisation hits seated at places 2 and 4.
    pub seated: usize,
}

/// A brief (`brief-material.md`): status first, then the material.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Brief {
    /// The first line.
    pub status: Status,
    /// Why the status is `none`, or what a `choose` needs.
    pub note: Option<String>,
    /// The asked scope.
    pub scope: Scope,
    /// The scopes the combined read spanned, nearest first.
    pub reads: Vec<Scope>,
    /// True if the organisation's own read ran.
    pub organisation_read: bool,
    /// The resolved document.
    pub item: Option<Item>,
    /// Its description, quoted, with where it came from.
    pub description: Option<Description>,
    /// Excerpts, in the brief's order.
    pub excerpts: Vec<Excerpt>,
    /// Relations.
    pub relations: Vec<Relation>,
    /// The tied candidates of a `choose`.
    pub candidates: Vec<Item>,
    /// Every id the material stands on, before any shrinking: documents as
    /// `{id}@{revision}`, passages as `{id}#p{n}` (`n` from 1). Never shrunk.
    pub grounds: Vec<String>,
    /// Sibling passages withheld loudly, per app and reason (§8.1).
    pub withheld: Vec<Withheld>,
    /// Sources out of the read while they reconcile (§4.1 rule 1).
    pub reconciling: Vec<String>,
    /// The budget, in characters.
    pub budget_chars: usize,
    /// The material's size, in characters: description, excerpts and
    /// relation evidence as quoted.
    pub material_chars: usize,
    /// What the budget took, if anything.
    pub shrink: Option<Shrink>,
    /// How the pool was ranked.
    pub semantic: SemanticRanking,
    /// What the two reads found.
    pub read: ReadFigures,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

impl BriefCandidates {
    /// The pairs to put to S2, per app: one per sibling item in the pool,
    /// in pool order (§4.1).
    pub fn pairs_by_app(&self) -> BTreeMap<String, Vec<Pair>> {
        let mut out: BTreeMap<String, Vec<Pair>> = BTreeMap::new();
        for p in &self.passages {
            if let Some(prov) = &p.document.provenance {
                let pair = Pair {
                    item_id: prov.item_id.clone(),
                    revision: prov.revision.clone(),
                };
                let pairs = out.entry(prov.app.clone()).or_default();
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
        out
    }

    /// Applies §8.1 to the pool and assembles the brief: a memoria-owned
    /// passage stays (§4.2, already applied); a sibling passage stays only
    /// on VISIBLE for its exact (item, revision); NOT_VISIBLE leaves
    /// without a trace; STALE, AHEAD and UNKNOWN are withheld and counted
    /// per app and reason, with the search page's sentences.
    pub fn rule(self, verdicts: &Verdicts) -> Brief {
        let mut withheld: BTreeMap<(String, WithheldReason), usize> = BTreeMap::new();
        let mut allowed = vec![true; self.passages.len()];
        for (i, p) in self.passages.iter().enumerate() {
            let Some(prov) = &p.document.provenance else {
                continue;
            };
            let reason = match verdicts.get(prov) {
                Verdict::Visible => continue,
                Verdict::NotVisible => None,
                Verdict::Stale => Some(WithheldReason::Stale),
                Verdict::Ahead => Some(WithheldReason::Ahead),
                Verdict::Unknown => Some(WithheldReason::NoAnswer),
            };
            allowed[i] = false;
            if let Some(reason) = reason {
                *withheld.entry((prov.app.clone(), reason)).or_insert(0) += 1;
            }
        }
        let withheld: Vec<Withheld> = withheld
            .into_iter()
            .map(|((app, reason), count)| Withheld { app, reason, count })
            .collect();
        let brief = Brief {
            status: Status::None,
            note: None,
            scope: self.scope.clone(),
            reads: self.reads.clone(),
            organisation_read: self.organisation_read,
            item: None,
            description: None,
            excerpts: vec![],
            relations: vec![],
            candidates: vec![],
            grounds: vec![],
            withheld,
            reconciling: self.reconciling.clone(),
            budget_chars: self.request.budget_chars,
            material_chars: 0,
            shrink: None,
            semantic: self.semantic,
            read: ReadFigures::default(),
        };
        self.assemble(brief, &allowed)
    }

    fn assemble(&self, mut brief: Brief, allowed: &[bool]) -> Brief {
        let live = |b: &PoolBlock| allowed[b.passage];
        let combined = score::top(
            self.blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| live(b))
                .filter_map(|(i, b)| {
                    b.read.map(|t| Scored {
                        block: i,
                        score: t.score(),
                    })
                })
                .collect(),
            score::CANDIDATES_MAX,
        );
        let organisation = score::top(
            self.blocks
                .iter()
                .enumerate()
                .filter(|(_, b)| live(b))
                .filter_map(|(i, b)| {
                    b.organisation.map(|t| Scored {
                        block: i,
                        score: t.score(),
                    })
                })
                .collect(),
            score::ORGANISATION_READ_K,
        );
        let order = score::seat(&combined, &organisation, |i| {
            self.blocks[i].organisation.is_some()
        });
        let top_score = combined.first().map_or(0.0, |s| s.score);
        brief.read = ReadFigures {
            combined: combined.len(),
            combined_from_organisation: combined
                .iter()
                .filter(|c| {
                    self.passages[self.blocks[c.block].passage].scope == Scope::Organisation
                })
                .count(),
            organisation: organisation.len(),
            top_score,
            bar: score::SEAT_BAR_FRACTION * top_score,
            seated: order.iter().filter(|o| o.2 == Seat::Organisation).count(),
        };
        if order.is_empty() {
            brief.note = Some(self.why_none(&brief));
            return brief;
        }
        // The documents in order of their first place, with their best score.
        let mut docs: Vec<(usize, f64)> = Vec::new();
        for &(b, s, _) in &order {
            let p = self.blocks[b].passage;
            let doc = &self.passages[p].document.id;
            match docs
                .iter_mut()
                .find(|(q, _)| &self.passages[*q].document.id == doc)
            {
                Some((_, best)) => *best = best.max(s),
                None => docs.push((p, s)),
            }
        }
        docs.sort_by(|a, b| b.1.total_cmp(&a.1));
        let item_of = |p: usize, score: f64| {
            let d = &self.passages[p].document;
            Item {
                document_id: d.id.clone(),
                title: d.title.clone(),
                app: d.app.clone(),
                revision: d.revision,
                scope: self.passages[p].scope.clone(),
                score,
            }
        };
        let titled = self.title_match.as_ref().and_then(|id| {
            docs.iter()
                .find(|(p, _)| &self.passages[*p].document.id == id)
                .copied()
        });
        let (lead, lead_score) = docs[0];
        let tied: Vec<(usize, f64)> = docs
            .iter()
            .copied()
            .filter(|&(_, s)| lead_score - s < RESOLVE_MARGIN)
            .collect();
        let resolved = match titled {
            Some(t) => t,
            None if tied.len() == 1 => (lead, lead_score),
            None => {
                brief.status = Status::Choose;
                brief.candidates = tied
                    .iter()
                    .take(CHOOSE_CANDIDATES_MAX)
                    .map(|&(p, s)| item_of(p, s))
                    .collect();
                brief.note = Some(format!(
                    "{} documents tie for the lead; ask again with one of their titles as the task.",
                    tied.len()
                ));
                let mut grounds: BTreeSet<String> = BTreeSet::new();
                for c in &brief.candidates {
                    grounds.insert(format!("{}@{}", c.document_id, c.revision));
                }
                brief.grounds = grounds.into_iter().collect();
                return brief;
            }
        };
        brief.status = Status::Resolved;
        let item = item_of(resolved.0, resolved.1);
        brief.description = self.descriptions.get(&item.document_id).cloned();
        // Excerpts: in order, repeats skipped, at most two per first source.
        // The description is the brief's first block: an excerpt repeating
        // it is a repeat, and it speaks for its document under the cap.
        let description_ref = brief.description.as_ref().map(|d| BlockRef {
            text: &d.text,
            first_source: Some(&item.document_id),
        });
        let refs: Vec<BlockRef<'_>> = description_ref
            .into_iter()
            .chain(order.iter().map(|&(b, _, _)| BlockRef {
                text: &self.blocks[b].text,
                first_source: Some(&self.passages[self.blocks[b].passage].document.id),
            }))
            .collect();
        let decisions = carry(&refs);
        let decisions = &decisions[usize::from(brief.description.is_some())..];
        let mut excerpts: Vec<Excerpt> = Vec::new();
        for (&(b, s, seat), skip) in order.iter().zip(decisions) {
            if skip.is_some() || excerpts.len() >= EXCERPTS_MAX {
                continue;
            }
            let block = &self.blocks[b];
            let p = &self.passages[block.passage];
            let terms = match seat {
                Seat::Organisation => block.organisation,
                Seat::Read => block.read,
            }
            .unwrap_or_default();
            excerpts.push(Excerpt {
                text: block.text.clone(),
                document_id: p.document.id.clone(),
                title: p.document.title.clone(),
                section: p.section.clone(),
                passage: p.id(),
                app: p.document.app.clone(),
                scope: p.scope.clone(),
                score: s,
                terms,
                seat,
            });
        }
        // Relations: the resolved document's own links, from its allowed passages.
        let mut relations: Vec<Relation> = Vec::new();
        for (i, p) in self.passages.iter().enumerate() {
            if !allowed[i] || p.document.id != item.document_id {
                continue;
            }
            for (target, evidence) in &p.links {
                if relations.len() >= RELATIONS_MAX
                    || relations.iter().any(|r| r.target_id == target.id)
                {
                    continue;
                }
                relations.push(Relation {
                    kind: "links_to",
                    direction: "out",
                    target_id: target.id.clone(),
                    target_title: target.title.clone(),
                    evidence: evidence.clone(),
                    evidence_passage: p.id(),
                    confidence: "stated",
                });
            }
        }
        // The grounds, before any shrinking: never shrunk.
        let mut grounds: BTreeSet<String> = BTreeSet::new();
        grounds.insert(format!("{}@{}", item.document_id, item.revision));
        if let Some(d) = &brief.description {
            grounds.insert(d.passage.clone());
        }
        for e in &excerpts {
            let p = self.passages.iter().find(|p| p.id() == e.passage);
            if let Some(p) = p {
                grounds.insert(format!("{}@{}", p.document.id, p.document.revision));
            }
            grounds.insert(e.passage.clone());
        }
        for r in &relations {
            grounds.insert(r.evidence_passage.clone());
            if let Some((t, _)) = self
                .passages
                .iter()
                .flat_map(|p| &p.links)
                .find(|(t, _)| t.id == r.target_id)
            {
                grounds.insert(format!("{}@{}", t.id, t.revision));
            }
        }
        brief.grounds = grounds.into_iter().collect();
        // The budget: excerpts first, lowest placed first; then relations.
        let size = |d: &Option<Description>, e: &[Excerpt], r: &[Relation]| {
            d.as_ref().map_or(0, |d| chars(&d.text))
                + e.iter().map(|e| chars(&e.text)).sum::<usize>()
                + r.iter().map(|r| chars(&r.evidence)).sum::<usize>()
        };
        let budget = self.request.budget_chars;
        let mut shrink = Shrink {
            excerpts_left_out: 0,
            relations_left_out: 0,
            still_over: false,
        };
        while size(&brief.description, &excerpts, &relations) > budget && !excerpts.is_empty() {
            excerpts.pop();
            shrink.excerpts_left_out += 1;
        }
        while size(&brief.description, &excerpts, &relations) > budget && !relations.is_empty() {
            relations.pop();
            shrink.relations_left_out += 1;
        }
        brief.material_chars = size(&brief.description, &excerpts, &relations);
        shrink.still_over = brief.material_chars > budget;
        if shrink.excerpts_left_out + shrink.relations_left_out > 0 || shrink.still_over {
            brief.shrink = Some(shrink);
        }
        brief.item = Some(item);
        brief.excerpts = excerpts;
        brief.relations = relations;
        brief
    }

    fn why_none(&self, brief: &Brief) -> String {
        let reads = self
            .reads
            .iter()
            .map(Scope::to_string)
            .collect::<Vec<_>>()
            .join(" and ");
        if self.documents_in_scope == 0 {
            return format!("{reads} hold no document yet.");
        }
        if !brief.withheld.is_empty() {
            return format!(
                "Nothing readable matched the task in {reads}; passages that matched could not be read now (see the withheld lines)."
            );
        }
        format!("Nothing in {reads} matched the task.")
    }
}

impl Brief {
    /// The brief as text, for a terminal or an agent's context: the status
    /// on the first line, then the item, its description, the excerpts,
    /// the relations, the withheld and shrink lines, and the grounds.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(out, "{}", self.status.word());
        let reads = self
            .reads
            .iter()
            .map(Scope::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "scope: {} (read: {reads}{}) · budget {} characters, material {}",
            self.scope,
            if self.organisation_read {
                "; and the organisation's own read"
            } else {
                ""
            },
            self.budget_chars,
            self.material_chars
        );
        if let Some(note) = &self.note {
            let _ = writeln!(out, "{note}");
        }
        for c in &self.candidates {
            let _ = writeln!(
                out,
                "  candidate: {} ({}, revision {}, {}) · {} · score {:.3}",
                c.title, c.document_id, c.revision, c.app, c.scope, c.score
            );
        }
        if let Some(item) = &self.item {
            let _ = writeln!(
                out,
                "item: {} ({}, revision {}, {}) · {}",
                item.title, item.document_id, item.revision, item.app, item.scope
            );
            match &self.description {
                Some(d) => {
                    let _ = writeln!(
                        out,
                        "description ({}, {}): \"{}\"",
                        d.from, d.passage, d.text
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "description: none (no lead sentence of the document shares a word with its title)"
                    );
                }
            }
        }
        if !self.excerpts.is_empty() {
            let _ = writeln!(out, "excerpts:");
        }
        for (i, e) in self.excerpts.iter().enumerate() {
            let section = if e.section.is_empty() {
                String::new()
            } else {
                format!(" › {}", e.section.join(" › "))
            };
            let seat = match e.seat {
                Seat::Organisation => " · organisation seat",
                Seat::Read => "",
            };
            let _ = writeln!(
                out,
                "  {}. \"{}\"\n     {}{section} · {} · {} · score {:.3}{seat}",
                i + 1,
                e.text,
                e.title,
                e.passage,
                e.scope,
                e.score
            );
        }
        if !self.relations.is_empty() {
            let _ = writeln!(out, "relations:");
        }
        for r in &self.relations {
            let _ = writeln!(
                out,
                "  - links to {} ({}): \"{}\" · {} · {}",
                r.target_title, r.target_id, r.evidence, r.evidence_passage, r.confidence
            );
        }
        for w in &self.withheld {
            let _ = writeln!(out, "withheld: {}", w.sentence());
        }
        for app in &self.reconciling {
            let _ = writeln!(
                out,
                "reconciling: {} is re-announcing: its passages are temporarily out of this brief.",
                crate::page::app_display_name(app)
            );
        }
        if self.semantic == SemanticRanking::Unavailable {
            let _ = writeln!(out, "ranking: {}", SemanticRanking::UNAVAILABLE_SENTENCE);
        }
        if let Some(s) = &self.shrink {
            let _ = writeln!(
                out,
                "shrank: {} left out to fit the budget{}; every ground is kept.",
                shrink_words(s),
                if s.still_over {
                    ", and the description alone is over it"
                } else {
                    ""
                }
            );
        }
        let _ = writeln!(out, "grounds: {}", self.grounds.join(" "));
        out
    }
}

fn shrink_words(s: &Shrink) -> String {
    let e = crate::page::counted(s.excerpts_left_out, "excerpt", "excerpts");
    let r = crate::page::counted(s.relations_left_out, "relation", "relations");
    match (s.excerpts_left_out, s.relations_left_out) {
        (_, 0) => e,
        (0, _) => r,
        _ => format!("{e} and {r}"),
    }
}

/// The six terms of one sentence of `passage` for `task_tokens`, in a read
/// where the passage's scope has proximity `proximity` (§1). `meaning` is
/// the passage's dense cosine (0 with AI off), `now` the instance's clock.
///
/// The words term reads the sentence as a brief quotes it: under its
/// document's title and its section (`brief-material.md` §2: "which
/// document, which section"), as the index ranks a passage by its title,
/// heading trail and body together. A task that is a word of a title alone
/// therefore finds that document's sentences, as the search page and the
/// dense term (which reads the whole passage) do; read from the sentence
/// alone it found nothing and said "Nothing … matched" of a document the
/// same words find on the search page.
pub fn terms_of(
    task_tokens: &BTreeSet<String>,
    sentence: &str,
    passage: &PoolPassage,
    relative_path: &[String],
    meaning: f64,
    proximity: f64,
    now_unix_s: i64,
) -> Terms {
    PassageTerms::new(task_tokens, passage, relative_path, meaning, now_unix_s).of(
        task_tokens,
        sentence,
        proximity,
    )
}

/// What [`terms_of`] reads of a passage apart from the sentence and the
/// read's proximity: the same for every sentence of the passage and both
/// reads, so a brief works it out once per passage (issue 30: the title's,
/// headings' and path's tokens were made again for each sentence, twice).
#[derive(Debug, Clone)]
pub struct PassageTerms {
    /// The content tokens of the document's title and the passage's section.
    under: BTreeSet<String>,
    /// All six terms but words and scope.
    base: Terms,
}

impl PassageTerms {
    /// `passage`'s share of [`terms_of`], with the arguments it takes.
    pub fn new(
        task_tokens: &BTreeSet<String>,
        passage: &PoolPassage,
        relative_path: &[String],
        meaning: f64,
        now_unix_s: i64,
    ) -> PassageTerms {
        let mut under = content_tokens(&passage.document.title);
        for heading in &passage.section {
            under.extend(content_tokens(heading));
        }
        let path_text = relative_path
            .iter()
            .map(|c| c.rsplit_once('.').map_or(c.as_str(), |(stem, _)| stem))
            .collect::<Vec<_>>()
            .join(" ");
        let path_tokens = content_tokens(&path_text);
        let path = share(task_tokens, |t| path_tokens.contains(t));
        let age_days = (now_unix_s - passage.document.updated_at).max(0) as f64 / 86_400.0;
        let recency = 0.5f64.powf(age_days / RECENCY_HALF_LIFE_DAYS);
        let depth = passage.section.len().min(LAYER_BY_DEPTH.len() - 1);
        PassageTerms {
            under,
            base: Terms {
                meaning: meaning.clamp(0.0, 1.0),
                words: 0.0,
                recency,
                layer: LAYER_BY_DEPTH[depth],
                scope: 0.0,
                path,
            },
        }
    }

    /// The six terms of `sentence` (one of the passage's) in a read where
    /// the passage's scope has proximity `proximity`: [`terms_of`]'s.
    pub fn of(&self, task_tokens: &BTreeSet<String>, sentence: &str, proximity: f64) -> Terms {
        let quoted = content_tokens(sentence);
        Terms {
            words: share(task_tokens, |t| {
                quoted.contains(t) || self.under.contains(t)
            }),
            scope: proximity,
            ..self.base
        }
    }
}

/// The share of `task_tokens` that `holds`, in `[0, 1]`; 0 for no tokens.
fn share(task_tokens: &BTreeSet<String>, holds: impl Fn(&String) -> bool) -> f64 {
    if task_tokens.is_empty() {
        0.0
    } else {
        task_tokens.iter().filter(|t| holds(t)).count() as f64 / task_tokens.len() as f64
    }
}
