//! The instance's side of a brief: the request checked, the pool read per scope, each passage cut into scored sentences (`brief-organisation-read.md` §1-§3).
//!
//! The combined read spans the asked scope and the organisation (and the
//! team when asked); the organisation's own read runs beside it over the
//! organisation alone, with the organisation as the nearest scope. Each read
//! takes its passages from BM25 (and the dense scan with AI on) with every
//! chunk outside its scopes left out before the cut, so a large project
//! cannot crowd the organisation out of its own read's pool. The pool is
//! opened here and ruled by `sibling::ruled::ruled_brief`; nothing here
//! speaks a sibling's passage.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pulldown_cmark::{Event, Tag, TagEnd};

use super::{Instance, QuerySemantic};
use crate::brief::blocks::sentences;
use crate::brief::score::{PROXIMITY_ORGANISATION, PROXIMITY_OWN, PROXIMITY_TEAM};
use crate::brief::tokens::content_tokens;
use crate::brief::{
    BriefCandidates, BriefError, BriefRequest, Description, ORGANISATION_POOL_PASSAGES,
    POOL_PASSAGES, PassageTerms, PoolBlock, PoolPassage, Scope, Scopes, Terms, check_request,
};
use crate::search::markdown::{TextForm, read};
use crate::search::query;
use crate::storage::store::Store;

/// A path's components, lexically normalised: empty and `.` dropped, `..`
/// taking one off (never above the start).
fn normalised(parts: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in parts {
        match c.as_str() {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            _ => out.push(c),
        }
    }
    out
}

fn path_parts(path: &str) -> Vec<String> {
    normalised(path.split(['/', '\\']).map(str::to_string))
}

/// The links a Markdown passage makes, as `(target path, link text)`:
/// relative targets only (no scheme, no leading `/`, not a same-page `#`),
/// the fragment dropped, percent-decoded.
fn links(passage: &str, first: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for event in read(passage, first) {
        match event {
            Event::Start(Tag::Link { dest_url, .. }) => {
                open = Some((dest_url.to_string(), String::new()));
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text)) = open.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::End(TagEnd::Link) => {
                if let Some((dest, text)) = open.take() {
                    let dest = dest.split('#').next().unwrap_or("").to_string();
                    let scheme = dest
                        .split('/')
                        .next()
                        .is_some_and(|first| first.contains(':'));
                    if dest.is_empty() || dest.starts_with('/') || scheme {
                        continue;
                    }
                    let decoded = percent_encoding::percent_decode_str(&dest)
                        .decode_utf8_lossy()
                        .to_string();
                    out.push((decoded, text));
                }
            }
            _ => {}
        }
    }
    out
}

/// Every live document filed under its scope (`brief-organisation-read.md`
/// §1) at one value of the store's change counter, by one set of scopes.
struct Filing {
    /// The change counter it was filed at ([`Store::store_seq`]).
    seq: i64,
    /// The scopes it was filed by.
    scopes: Scopes,
    /// Every live document but derived artefacts: id, recorded path, and
    /// whether it is a sibling's item ([`Store::document_paths`]).
    documents: Vec<(String, String, bool)>,
    /// Each of those documents' scope, by id.
    scope_of: HashMap<String, Scope>,
    /// How many documents each scope holds.
    counts: HashMap<Scope, usize>,
    /// memoria-owned documents (indices into `documents`) by their
    /// normalised path, for a passage's relative links: made on the first
    /// link a brief resolves.
    by_path: OnceLock<HashMap<Vec<String>, usize>>,
}

impl Filing {
    /// How many filed documents are in one of `reads`.
    fn documents_in(&self, reads: &[Scope]) -> usize {
        // `reads` names each scope once.
        reads.iter().filter_map(|s| self.counts.get(s)).sum()
    }

    fn by_path(&self) -> &HashMap<Vec<String>, usize> {
        self.by_path.get_or_init(|| {
            self.documents
                .iter()
                .enumerate()
                .filter(|(_, (_, _, sibling))| !sibling)
                .map(|(i, (_, path, _))| (path_parts(path), i))
                .collect()
        })
    }
}

/// The filing a brief reads, kept in the instance between briefs (issue 30:
/// opening and filing all 8,513 paths took most of a brief at 90,000
/// chunks). It is used only while the store's change counter and the
/// scopes are the ones it was filed at: every ingest and every deletion
/// bumps the counter, so a brief never reads a document's scope from
/// before a change. Plaintext paths, so dropped with the index at idle
/// eviction (§3.5, [`Instance::evict`]).
#[derive(Default)]
pub(super) struct FilingCache(Mutex<Option<Arc<Filing>>>);

impl FilingCache {
    /// The filing at `seq` by `scopes`: the kept one if it is that, else
    /// every live document filed afresh (and kept).
    fn at(
        &self,
        store: &Store,
        seq: i64,
        scopes: &Scopes,
    ) -> Result<Arc<Filing>, crate::error::Error> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = kept.as_ref()
            && f.seq == seq
            && f.scopes == *scopes
        {
            return Ok(Arc::clone(f));
        }
        // Dropped before the refiling, so two filings never live at once.
        *kept = None;
        let documents = store.document_paths()?;
        let scope_of: HashMap<String, Scope> = documents
            .iter()
            .map(|(id, path, sibling)| (id.clone(), scopes.of_path(path, *sibling)))
            .collect();
        let mut counts: HashMap<Scope, usize> = HashMap::new();
        for s in scope_of.values() {
            *counts.entry(s.clone()).or_default() += 1;
        }
        let filing = Arc::new(Filing {
            seq,
            scopes: scopes.clone(),
            documents,
            scope_of,
            counts,
            by_path: OnceLock::new(),
        });
        *kept = Some(Arc::clone(&filing));
        Ok(filing)
    }

    /// Drops the kept filing (idle eviction, §3.5).
    pub(super) fn clear(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

impl Instance {
    /// The opened, scored pool of a brief for `asker`, before any sibling
    /// is asked (§8.1): render only what [`BriefCandidates::rule`] returns.
    ///
    /// `semantic` is the task's vector with AI on; with it each passage's
    /// meaning term is its dense cosine, and without it 0 (AI off, or the
    /// provider did not answer: the brief says so).
    ///
    /// # Errors
    /// [`BriefError::NotAdmitted`] first; then the request's own refusals
    /// ([`check_request`]); [`BriefError::UnknownScope`]; store and index
    /// failures.
    pub fn brief_candidates(
        &self,
        asker: &str,
        request: &BriefRequest,
        scopes: &Scopes,
        semantic: &QuerySemantic,
    ) -> Result<BriefCandidates, BriefError> {
        if self.admission.admit(asker).is_none() {
            return Err(BriefError::NotAdmitted);
        }
        check_request(request)?;
        // One read transaction for the whole pool (issue 30).
        let _read = self.store.read_together().map_err(BriefError::Store)?;
        let scope = scopes
            .named(&request.scope)
            .ok_or(BriefError::UnknownScope)?;
        let organisation_configured = scopes.has_organisation();
        let mut reads = vec![scope.clone()];
        if request.with_team && scope != Scope::Team {
            reads.push(Scope::Team);
        }
        if organisation_configured && scope != Scope::Organisation {
            reads.push(Scope::Organisation);
        }
        let organisation_read = organisation_configured && scope != Scope::Organisation;
        let proximity = |s: &Scope| {
            if *s == scope {
                PROXIMITY_OWN
            } else if *s == Scope::Team {
                PROXIMITY_TEAM
            } else {
                PROXIMITY_ORGANISATION
            }
        };

        // Every live document filed under its scope, and every chunk under its document's.
        // A derived artefact is in no brief: `document_paths` leaves it out.
        // Kept between briefs while the store's change counter stands still.
        let seq = self.store.store_seq().map_err(BriefError::Store)?;
        let filing = self
            .filing
            .at(&self.store, seq, scopes)
            .map_err(BriefError::Store)?;
        let scope_of = &filing.scope_of;
        let documents_in_scope = filing.documents_in(&reads);
        let reconciling = self.store.reannouncing_apps().map_err(BriefError::Store)?;
        let mut out_of_ranking: HashSet<i64> = HashSet::new();
        for app in &reconciling {
            out_of_ranking.extend(
                self.store
                    .sibling_chunk_ids(app)
                    .map_err(BriefError::Store)?,
            );
        }
        // A chunk is in a read if its document is filed under one of the
        // read's scopes and its source is not reconciling. Asked of each
        // ranked row as the index reads it (issue 30: listing every chunk
        // outside the scopes took most of a brief at 90,000 chunks).
        let in_scopes = |chunk: i64, wanted: &[Scope]| -> Result<bool, crate::error::Error> {
            if out_of_ranking.contains(&chunk) {
                return Ok(false);
            }
            Ok(self
                .store
                .chunk_document(chunk)?
                .and_then(|d| scope_of.get(d.as_str()))
                .is_some_and(|s| wanted.contains(s)))
        };

        let plan = query::plan(&request.task).ok_or(BriefError::EmptyTask)?;
        let vector = match semantic {
            QuerySemantic::Vector(v) => Some(v.as_ref()),
            _ => None,
        };
        let mut pool_ids: Vec<i64> = Vec::new();
        let mut read_into = |wanted: &[Scope], depth: usize| -> Result<(), BriefError> {
            let hits = self
                .index
                .ranked_where(&plan, depth, 0, &mut |c| in_scopes(c, wanted))
                .map_err(|e| match e.kind() {
                    crate::error::ErrorKind::Query => BriefError::Engine(e),
                    _ => BriefError::Store(e),
                })?;
            pool_ids.extend(hits.iter().map(|h| h.chunk_id));
            if let Some(v) = vector {
                // The dense scan takes its leave-out list whole: the
                // chunks of every document outside the read's scopes.
                let chunk_docs = self
                    .store
                    .live_chunk_documents()
                    .map_err(BriefError::Store)?;
                let set: HashSet<i64> = chunk_docs
                    .iter()
                    .filter(|(c, d)| {
                        out_of_ranking.contains(c)
                            || scope_of.get(d.as_str()).is_none_or(|s| !wanted.contains(s))
                    })
                    .map(|(c, _)| *c)
                    .collect();
                pool_ids.extend(
                    self.dense
                        .top_k_excluding(v, depth, &set)
                        .iter()
                        .map(|h| h.chunk_id),
                );
            }
            Ok(())
        };
        if documents_in_scope > 0 {
            read_into(&reads, POOL_PASSAGES)?;
            if organisation_read {
                read_into(&[Scope::Organisation], ORGANISATION_POOL_PASSAGES)?;
            }
        }
        let mut seen = HashSet::new();
        pool_ids.retain(|c| seen.insert(*c));

        // Links resolve against the recorded paths of live memoria-owned
        // documents (`Filing::by_path`, made on the first relative link).
        let task_tokens: BTreeSet<String> = content_tokens(&request.task);
        let now = self.clock.now_unix_s();
        let task_title = request.task.trim().to_lowercase();
        let mut title_match = None;
        let mut passages = Vec::new();
        let mut blocks = Vec::new();
        let mut descriptions: BTreeMap<String, Description> = BTreeMap::new();
        let mut lead_checked: HashSet<String> = HashSet::new();
        for chunk_id in pool_ids {
            // §4.2 fact 2: present and not deleted; a hit whose row is gone is skipped.
            let Some(ph) = self
                .store
                .passage_hit(chunk_id)
                .map_err(BriefError::Store)?
            else {
                continue;
            };
            let doc = ph.document;
            if doc.app == crate::storage::store::APP_ARTEFACT {
                continue;
            }
            let scope = scope_of
                .get(doc.id.as_str())
                .cloned()
                .unwrap_or(Scope::Team);
            let form = doc.text_form();
            let first = ph.passage.ordinal == 0;
            let section = crate::page::trail_below(&doc.title, &ph.passage.trail).to_vec();
            let said = sentences(&ph.passage.body, form, first);
            let mut found_links = Vec::new();
            if doc.provenance.is_none() && form == TextForm::Markdown {
                let mut dir = path_parts(&doc.path);
                dir.pop();
                for (target, text) in links(&ph.passage.body, first) {
                    let resolved = normalised(dir.iter().cloned().chain(path_parts(&target)));
                    let Some(&target) = filing.by_path().get(&resolved) else {
                        continue;
                    };
                    let target_id = filing.documents[target].0.as_str();
                    if target_id == doc.id {
                        continue;
                    }
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    let Some(evidence) =
                        said.iter().find(|s| !text.is_empty() && s.contains(&text))
                    else {
                        continue;
                    };
                    if let Some(t) = self.store.document(target_id).map_err(BriefError::Store)? {
                        found_links.push((t, evidence.clone()));
                    }
                }
            }
            if title_match.is_none() && doc.title.trim().to_lowercase() == task_title {
                title_match = Some(doc.id.clone());
            }
            // The description: the lead sentence of the document's first
            // passage, when it shares a word with the title.
            if lead_checked.insert(doc.id.clone()) {
                let lead = if first {
                    said.first().cloned()
                } else {
                    self.store
                        .first_passage(&doc.id)
                        .map_err(BriefError::Store)?
                        .and_then(|p| sentences(&p.body, form, true).into_iter().next())
                };
                if let Some(lead) = lead {
                    let title_tokens = content_tokens(&doc.title);
                    if content_tokens(&lead)
                        .intersection(&title_tokens)
                        .next()
                        .is_some()
                    {
                        descriptions.insert(
                            doc.id.clone(),
                            Description {
                                text: lead,
                                from: "lead_sentence",
                                passage: format!("{}#{}", doc.id, crate::page::passage_anchor(0)),
                            },
                        );
                    }
                }
            }
            let meaning = match (vector, self.dense.get(chunk_id)) {
                (Some(q), Some(p)) => dot(q, &p),
                _ => 0.0,
            };
            let passage = PoolPassage {
                chunk_id,
                ordinal: ph.passage.ordinal,
                section,
                scope: scope.clone(),
                links: found_links,
                document: doc,
            };
            let relative = scopes.relative_path(&passage.document);
            let index = passages.len();
            // One passage's terms, then each sentence's words (issue 30).
            let terms = PassageTerms::new(&task_tokens, &passage, &relative, meaning, now);
            let in_read = reads.contains(&scope);
            let in_organisation = organisation_read && scope == Scope::Organisation;
            for text in said {
                if !in_read && !in_organisation {
                    continue;
                }
                let t = terms.of(&task_tokens, &text, 0.0);
                let read = in_read.then_some(Terms {
                    scope: proximity(&scope),
                    ..t
                });
                let organisation = in_organisation.then_some(Terms {
                    scope: PROXIMITY_OWN,
                    ..t
                });
                let matched = read
                    .or(organisation)
                    .is_some_and(|t| t.words > 0.0 || t.meaning > 0.0);
                if matched {
                    blocks.push(PoolBlock {
                        passage: index,
                        text,
                        read,
                        organisation,
                    });
                }
            }
            passages.push(passage);
        }
        tracing::info!(
            passages = passages.len(),
            sentences = blocks.len(),
            documents_in_scope,
            "brief pool read"
        );
        Ok(BriefCandidates {
            request: request.clone(),
            scope,
            reads,
            organisation_read,
            documents_in_scope,
            passages,
            blocks,
            descriptions,
            title_match,
            reconciling,
            semantic: semantic.ranking(),
        })
    }
}

/// The cosine of two unit vectors from their int8 levels and scales.
fn dot(a: &crate::dense::QuantisedVector, b: &crate::dense::QuantisedVector) -> f64 {
    let s: i64 = a
        .levels()
        .iter()
        .zip(b.levels().iter())
        .map(|(x, y)| *x as i64 * *y as i64)
        .sum();
    s as f64 * a.scale() as f64 * b.scale() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_link_is_kept_and_a_url_or_anchor_is_not() {
        let l = links(
            "See [the deploy notes](../ops/deploy%20notes.md#box), [rust](https://rust-lang.org), [here](#top) and [abs](/x.md).",
            false,
        );
        assert_eq!(
            l,
            [(
                "../ops/deploy notes.md".to_string(),
                "the deploy notes".to_string()
            )]
        );
    }

    fn instance(dir: &std::path::Path) -> Instance {
        crate::instance::instance_for_tests(dir)
    }

    fn ingest(m: &mut Instance, path: &str) -> String {
        m.ingest(&crate::storage::store::NewDocument {
            source_key: format!("import:{path}"),
            title: "Descaling".into(),
            path: path.into(),
            body: "Descale the espresso machine every month.".into(),
            date: None,
        })
        .unwrap()
        .id
    }

    /// Documents a brief from `scope` files under its read.
    fn in_scope(m: &Instance, scopes: &Scopes, scope: &str) -> usize {
        let request = BriefRequest {
            task: "descale the espresso machine".into(),
            scope: scope.into(),
            budget_chars: crate::brief::BUDGET_CHARS_DEFAULT,
            with_team: false,
        };
        m.brief_candidates("ana@example.org", &request, scopes, &QuerySemantic::Off)
            .unwrap()
            .documents_in_scope
    }

    #[test]
    fn the_kept_filing_follows_every_ingest_deletion_and_change_of_scopes() {
        let tmp = tempfile::tempdir().unwrap();
        let mut m = instance(tmp.path());
        let kitchen = Scopes::parse("kitchen=kitchen", None).unwrap();
        let cafe = Scopes::parse("kitchen=cafe", None).unwrap();
        let first = ingest(&mut m, "kitchen/a.md");
        ingest(&mut m, "cafe/b.md");
        // Each row: the change made, then the documents the brief files
        // under project `kitchen` by `kitchen` and by `cafe`.
        type Change = Box<dyn Fn(&mut Instance)>;
        let rows: [(&str, Change, usize, usize); 4] = [
            ("nothing", Box::new(|_| {}), 1, 1),
            (
                "an ingest",
                Box::new(|m| drop(ingest(m, "kitchen/c.md"))),
                2,
                1,
            ),
            (
                "a deletion",
                Box::new(move |m| drop(m.delete(&first).unwrap())),
                1,
                1,
            ),
            ("an eviction", Box::new(|m| m.evict().unwrap()), 1, 1),
        ];
        for (change, make, by_kitchen, by_cafe) in rows {
            make(&mut m);
            m.rewake().unwrap();
            assert_eq!(
                in_scope(&m, &kitchen, "kitchen"),
                by_kitchen,
                "after {change}"
            );
            assert_eq!(in_scope(&m, &cafe, "kitchen"), by_cafe, "after {change}");
            assert_eq!(
                in_scope(&m, &kitchen, "kitchen"),
                by_kitchen,
                "again after {change}"
            );
        }
    }

    #[test]
    fn dot_dot_takes_one_component_off_and_never_goes_above_the_start() {
        assert_eq!(normalised(path_parts("a/b/../c.md")), ["a", "c.md"]);
        assert_eq!(normalised(path_parts("../../c.md")), ["c.md"]);
    }
}
