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

use pulldown_cmark::{Event, Tag, TagEnd};

use super::{Instance, QuerySemantic};
use crate::brief::blocks::sentences;
use crate::brief::score::{PROXIMITY_ORGANISATION, PROXIMITY_OWN, PROXIMITY_TEAM};
use crate::brief::tokens::content_tokens;
use crate::brief::{
    BriefCandidates, BriefError, BriefRequest, Description, ORGANISATION_POOL_PASSAGES,
    POOL_PASSAGES, PoolBlock, PoolPassage, Scope, Scopes, check_request, terms_of,
};
use crate::search::markdown::{TextForm, read};
use crate::search::query;

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
        let documents = self.store.document_paths().map_err(BriefError::Store)?;
        let scope_of: HashMap<&str, Scope> = documents
            .iter()
            .map(|(id, path, sibling)| (id.as_str(), scopes.of_path(path, *sibling)))
            .collect();
        let documents_in_scope = scope_of.values().filter(|s| reads.contains(s)).count();
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

        // Links resolve against the recorded paths of live memoria-owned documents.
        // Made on the first relative link a pool passage holds, not per brief.
        let by_path: std::cell::OnceCell<HashMap<Vec<String>, &str>> = std::cell::OnceCell::new();
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
            let form = TextForm::of(&doc);
            let first = ph.passage.ordinal == 0;
            let section = crate::search::page::trail_below(&doc.title, &ph.passage.trail).to_vec();
            let said = sentences(&ph.passage.body, form, first);
            let mut found_links = Vec::new();
            if doc.provenance.is_none() && form == TextForm::Markdown {
                let mut dir = path_parts(&doc.path);
                dir.pop();
                for (target, text) in links(&ph.passage.body, first) {
                    let resolved = normalised(dir.iter().cloned().chain(path_parts(&target)));
                    let by_path = by_path.get_or_init(|| {
                        documents
                            .iter()
                            .filter(|(_, _, sibling)| !sibling)
                            .map(|(id, path, _)| (path_parts(path), id.as_str()))
                            .collect()
                    });
                    let Some(&target_id) = by_path.get(&resolved) else {
                        continue;
                    };
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
                                passage: format!(
                                    "{}#{}",
                                    doc.id,
                                    crate::search::page::passage_anchor(0)
                                ),
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
            for text in said {
                let read = reads.contains(&scope).then(|| {
                    terms_of(
                        &task_tokens,
                        &text,
                        &passage,
                        &relative,
                        meaning,
                        proximity(&scope),
                        now,
                    )
                });
                let organisation = (organisation_read && scope == Scope::Organisation).then(|| {
                    terms_of(
                        &task_tokens,
                        &text,
                        &passage,
                        &relative,
                        meaning,
                        PROXIMITY_OWN,
                        now,
                    )
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

    #[test]
    fn dot_dot_takes_one_component_off_and_never_goes_above_the_start() {
        assert_eq!(normalised(path_parts("a/b/../c.md")), ["a", "c.md"]);
        assert_eq!(normalised(path_parts("../../c.md")), ["c.md"]);
    }
}
