//! The one S2 path: every surface that renders or sends a passage rules it here (§8.1, §4.1, §6.5).
//!
//! §8.1: "Every path that renders a passage calls §4.1 first", and it is the
//! same §4.1 on every path. The search page, the document page, the JSON
//! search, the CLI's search and everything built on them later (answers,
//! fact boxes, briefs) rule sibling passages through [`rule`], which alone
//! calls the sibling client's S2 and alone applies what follows from an
//! answer:
//!
//! - the refusal breaker's tallies (VISIBLE and NOT_VISIBLE per app, §8.1);
//! - AHEAD marks the app for re-announce and deletes nothing (§4.1 rule 2);
//! - STALE and AHEAD name the app in [`FollowUps`], for the caller to start
//!   (the refetch, the re-announce) and await;
//! - STALE, AHEAD and UNKNOWN are withheld with the shared [`Withheld`]
//!   sentences; NOT_VISIBLE is omitted and counted nowhere a reader sees.
//!
//! The instance lock is never held across a sibling call: candidates are
//! taken under it, the siblings are asked without it, and the tallies and
//! AHEAD's mark are written under it again. Each of those store steps goes
//! through [`SharedInstance::run`], off the async worker threads in
//! production (issue 10).
//!
//! Architecture Invariant: outside this file and `client.rs`, nothing in the
//! crate calls `SiblingClient::check` or `SiblingClient::check_all`
//! (`gates/tests/tidy.rs` fails the build of any other call site).

use std::collections::{BTreeMap, BTreeSet};

use super::client::{SiblingClient, unknown_for};
use crate::ai::embed::EmbedClient;
use crate::brief::{Brief, BriefError, BriefRequest, Scopes};
use crate::dense::quantise_embedding;
use crate::error::Error;
use crate::instance::QuerySemantic;
use crate::net::wire::{Pair, S2Decoded, S2Fault, Subject, Verdict};
use crate::offload::SharedInstance;
use crate::page::{SearchError, SearchPage, Verdicts, Withheld, WithheldReason};
use crate::policy::breaker::S2Tally;
use crate::storage::store::{DocumentSummary, Passage, Provenance};

/// The syncs one ruling asks for, by app (§4.1): the caller starts them and
/// can await them (`web::AppState::settle_follow_ups`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowUps {
    /// Apps that answered STALE for some pair: refetch them (§4.1).
    pub refetch: BTreeSet<String>,
    /// Apps that answered AHEAD for some pair: now marked for re-announce
    /// (§4.1 rule 2); their next sync reads S1a.
    pub reannounce: BTreeSet<String>,
    /// A derived artefact was withheld because a source changed (STALE,
    /// or a memoria-owned revision superseded): write them again (§5.2).
    pub regenerate: bool,
}

impl FollowUps {
    /// Every app to sync, once each, in name order.
    pub fn apps(&self) -> BTreeSet<String> {
        self.refetch.union(&self.reannounce).cloned().collect()
    }
}

/// One request's S2 answers and the follow-ups they ask for.
#[derive(Debug, Clone, Default)]
pub struct Ruling {
    /// The verdict per (app, item, revision) asked; a pair not asked is UNKNOWN.
    pub verdicts: Verdicts,
    /// The syncs the answers ask for.
    pub follow_ups: FollowUps,
}

/// A ruled page and the follow-ups it asks for.
#[derive(Debug, Clone)]
pub struct RuledSearch {
    /// The page to render.
    pub page: SearchPage,
    /// The syncs the answers ask for.
    pub follow_ups: FollowUps,
}

/// What a document page may show after S2 (§8.1).
#[derive(Debug, Clone)]
pub enum DocumentRuling {
    /// Render it: memoria-owned (§4.2, already applied), or VISIBLE now.
    Shown {
        /// The document.
        doc: DocumentSummary,
        /// Its passages, in order.
        passages: Vec<Passage>,
    },
    /// Not found, deleted, or NOT_VISIBLE: the same 404, with no trace of why.
    Absent,
    /// STALE, AHEAD or UNKNOWN: withheld loudly, with the sentence the
    /// search page uses for the same app and reason.
    Withheld(Withheld),
}

/// A ruled document page and the follow-ups it asks for.
#[derive(Debug, Clone)]
pub struct RuledDocument {
    /// What the page may show.
    pub ruling: DocumentRuling,
    /// The syncs the answers ask for.
    pub follow_ups: FollowUps,
}

/// Adds this call's VISIBLE and NOT_VISIBLE counts per app to the refusal
/// breaker's durable counters (§8.1), after the verdicts are in. Written
/// here, on the path that made the call, and never read at query time. An
/// app that answered neither (an outage's UNKNOWNs) writes nothing.
async fn record_breaker_counters(
    instance: &SharedInstance,
    asker: &str,
    decoded: &BTreeMap<String, S2Decoded>,
) {
    let tallies: Vec<(String, S2Tally)> = decoded
        .iter()
        .map(|(app, d)| {
            let count = |want: Verdict| d.verdicts.iter().filter(|v| **v == want).count() as u64;
            let tally = S2Tally {
                visible: count(Verdict::Visible),
                not_visible: count(Verdict::NotVisible),
            };
            (app.clone(), tally)
        })
        .collect();
    let asker = asker.to_string();
    let written = instance
        .run(move |guard| {
            let now = guard.clock().now_unix_s();
            for (app, tally) in tallies {
                if let Err(e) = guard.store().record_s2_tally(&app, &asker, tally, now) {
                    tracing::error!(app, error = %e, "could not write the refusal breaker's counters");
                }
            }
        })
        .await;
    if let Err(e) = written {
        tracing::error!(error = %e, "could not write the refusal breaker's counters");
    }
}

/// Asks every app about its pairs at once, as `asker`, in this request
/// (§4.1, §6.5), and applies what the answers mean: the breaker's tallies,
/// AHEAD's re-announce mark (nothing deleted), and the follow-ups STALE and
/// AHEAD ask for. Without a client every pair is UNKNOWN and no call is made.
///
/// This is the crate's one S2 call site (§8.1). `by_app` holds each app's
/// pairs in first-ranked order, deduplicated; an empty map asks nobody.
pub async fn rule(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    asker: &str,
    by_app: &BTreeMap<String, Vec<Pair>>,
) -> Ruling {
    let mut ruling = Ruling::default();
    if by_app.is_empty() {
        return ruling;
    }
    let subject = Subject::address(asker);
    let decoded = match client {
        Some(c) => c.check_all(&subject, by_app).await,
        None => by_app
            .iter()
            .map(|(app, pairs)| (app.clone(), unknown_for(pairs, S2Fault::NoAnswer)))
            .collect(),
    };
    for (app, d) in &decoded {
        ruling.verdicts.record(app, &by_app[app], &d.verdicts);
    }
    record_breaker_counters(instance, asker, &decoded).await;
    ruling.follow_ups = FollowUps {
        refetch: ruling.verdicts.apps_with(Verdict::Stale),
        reannounce: ruling.verdicts.apps_with(Verdict::Ahead),
        regenerate: false,
    };
    if !ruling.follow_ups.reannounce.is_empty() {
        let reannounce = ruling.follow_ups.reannounce.clone();
        let marked = instance
            .run(move |guard| {
                for app in &reannounce {
                    if let Err(e) = guard.store().mark_reannounce(app) {
                        tracing::error!(app, error = %e, "could not mark a sibling for re-announce");
                    } else {
                        tracing::warn!(app, "sibling answered AHEAD: marked for re-announce");
                    }
                }
            })
            .await;
        if let Err(e) = marked {
            tracing::error!(error = %e, "could not mark a sibling for re-announce");
        }
    }
    ruling
}

/// S6 on the one sibling path (§8.7, §6.1): `function` over `cells` at
/// `app`, as `asker`, now. Never cached. Without a client, UNKNOWN and no
/// call. The numeric route calls this only after every slot is filled and
/// every operand certified ([`super::numeric`]); the operands'
/// passages were ruled through [`rule`] first.
pub async fn aggregate(
    client: Option<&SiblingClient>,
    asker: &str,
    app: &str,
    function: crate::net::s6::Aggregate,
    cells: &[crate::net::s6::CellRef],
) -> crate::net::s6::S6Result {
    match client {
        Some(c) => {
            c.aggregate(app, &Subject::address(asker), function, cells)
                .await
        }
        None => crate::net::s6::S6Result::Unknown,
    }
}

/// Searches as `asker` and rules every sibling passage through S2 in this
/// request (§8.1). Without a client, every sibling passage is UNKNOWN.
///
/// # Errors
/// As [`crate::Instance::candidates`]; [`SearchError::Store`] with
/// [`crate::ErrorKind::Abandoned`] if the store work panicked.
pub async fn ruled_search(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    asker: &str,
    text: &str,
    page: u32,
) -> Result<RuledSearch, SearchError> {
    ruled_search_embedded(instance, client, None, asker, text, page).await
}

/// As [`ruled_search`], with AI on when `embedder` is given: the query is
/// embedded on the request path, after admission and the query's own checks
/// (nothing leaves for an asker not admitted or a query refused), and the
/// page is ranked by BM25 and the dense scan fused (§7). A provider that
/// fails or misses its deadline gives a lexical page that says so
/// ([`crate::SemanticRanking::Unavailable`]), never an error page. Every
/// passage on the page, fused or not, is ruled exactly as a lexical one.
///
/// # Errors
/// As [`ruled_search`].
pub async fn ruled_search_embedded(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    embedder: Option<&EmbedClient>,
    asker: &str,
    text: &str,
    page: u32,
) -> Result<RuledSearch, SearchError> {
    let semantic = query_semantic(instance, embedder, asker, text, page).await?;
    ruled_search_semantic(instance, client, asker, text, page, semantic).await
}

/// The query's meaning for a search as `asker`: [`QuerySemantic::Off`]
/// with AI off; with it on, the query embedded on the request path, after
/// admission and the query's own checks (nothing leaves for an asker not
/// admitted or a query refused), or [`QuerySemantic::Unavailable`] when the
/// provider fails or misses its deadline (§7, §8.3). The first half of
/// [`ruled_search_embedded`]: a caller that rules something else beside the
/// results (the numeric route) asks for this first, so that both rulings
/// go out in one round (§6.5).
///
/// # Errors
/// [`SearchError::Store`] if the store cannot say whether the query may be
/// embedded.
pub async fn query_semantic(
    instance: &SharedInstance,
    embedder: Option<&EmbedClient>,
    asker: &str,
    text: &str,
    page: u32,
) -> Result<QuerySemantic, SearchError> {
    Ok(match embedder {
        None => QuerySemantic::Off,
        Some(e) => {
            let (who, q) = (asker.to_string(), text.to_string());
            let may = instance
                .run(move |i| i.may_embed_query(&who, &q, page))
                .await
                .map_err(SearchError::Store)?;
            if may {
                embed_query(e, text).await
            } else {
                QuerySemantic::Unavailable
            }
        }
    })
}

/// The second half of [`ruled_search_embedded`]: ranks `text` for `asker`
/// with `semantic` ([`query_semantic`]) and rules every sibling passage on
/// the page through S2 now, in one round (§4.1, §6.5).
///
/// # Errors
/// As [`ruled_search`].
pub async fn ruled_search_semantic(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    asker: &str,
    text: &str,
    page: u32,
    semantic: QuerySemantic,
) -> Result<RuledSearch, SearchError> {
    let (who, text) = (asker.to_string(), text.to_string());
    // A lexical page reads on a read handle, beside other searches; a
    // fused one reads the dense matrix, which only the writer holds.
    let candidates = match semantic {
        QuerySemantic::Off | QuerySemantic::Unavailable => {
            let ranking = semantic.ranking();
            instance
                .read(move |v| v.lexical_candidates(&who, &text, page, ranking))
                .await
        }
        QuerySemantic::Vector(_) => {
            instance
                .run(move |i| i.candidates_with(&who, &text, page, &semantic))
                .await
        }
    }
    .map_err(SearchError::Store)??;
    let ruling = rule(instance, client, asker, &candidates.pairs_by_app()).await;
    let page = candidates.rule(&ruling.verdicts);
    let follow_ups = FollowUps {
        regenerate: page.regenerate,
        ..ruling.follow_ups
    };
    Ok(RuledSearch { page, follow_ups })
}

/// A brief ruled and the follow-ups it asks for.
#[derive(Debug, Clone)]
pub struct RuledBrief {
    /// The brief to return.
    pub brief: Brief,
    /// The syncs the answers ask for.
    pub follow_ups: FollowUps,
}

/// Builds a brief for `asker` and rules every sibling passage in its pool
/// through S2 in this request, on the one ruling path (§8.1,
/// `brief-material.md`): a passage NOT_VISIBLE is in no brief, STALE, AHEAD
/// and UNKNOWN are withheld with the search page's sentences. With
/// `embedder` the task is embedded as a search's query is (after admission
/// and the request's own checks) and the meaning term is the dense cosine;
/// a provider that fails leaves meaning at 0 and the brief says so.
///
/// # Errors
/// As [`crate::Instance::brief_candidates`]; [`BriefError::Store`] with
/// [`crate::ErrorKind::Abandoned`] if the store work panicked. No sibling
/// is asked then.
pub async fn ruled_brief(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    embedder: Option<&EmbedClient>,
    asker: &str,
    request: &BriefRequest,
    scopes: &Scopes,
) -> Result<RuledBrief, BriefError> {
    let semantic = match embedder {
        None => QuerySemantic::Off,
        Some(e) => {
            let (who, req, sc) = (asker.to_string(), request.clone(), scopes.clone());
            let may = instance
                .run(move |i| {
                    i.embeds()
                        && i.admit(&who).is_some()
                        && crate::brief::check_request(&req).is_ok()
                        && sc.named(&req.scope).is_some()
                })
                .await
                .map_err(BriefError::Store)?;
            if may {
                embed_query(e, &request.task).await
            } else {
                QuerySemantic::Unavailable
            }
        }
    };
    let (who, req, sc) = (asker.to_string(), request.clone(), scopes.clone());
    let candidates = instance
        .run(move |i| i.brief_candidates(&who, &req, &sc, &semantic))
        .await
        .map_err(BriefError::Store)??;
    let ruling = rule(instance, client, asker, &candidates.pairs_by_app()).await;
    let brief = candidates.rule(&ruling.verdicts);
    tracing::info!(
        status = brief.status.word(),
        excerpts = brief.excerpts.len(),
        relations = brief.relations.len(),
        grounds = brief.grounds.len(),
        withheld = brief.withheld.iter().map(|w| w.count).sum::<usize>(),
        "brief assembled"
    );
    Ok(RuledBrief {
        brief,
        follow_ups: ruling.follow_ups,
    })
}

/// The query's vector, or [`QuerySemantic::Unavailable`] with the failure's
/// kind logged (never the query, never the response).
async fn embed_query(embedder: &EmbedClient, text: &str) -> QuerySemantic {
    match embedder.embed_query(text).await {
        Ok(e) => match quantise_embedding(e.values()) {
            Ok(v) => QuerySemantic::Vector(Box::new(v)),
            Err(r) => {
                tracing::warn!(refusal = %r, "the query's vector was refused; ranking lexically");
                QuerySemantic::Unavailable
            }
        },
        Err(err) => {
            tracing::warn!(kind = ?err.kind(), "the query could not be embedded; ranking lexically");
            QuerySemantic::Unavailable
        }
    }
}

/// A sibling document's one pair, keyed by its app, as [`rule`] takes it.
fn pair_of(p: &Provenance) -> BTreeMap<String, Vec<Pair>> {
    BTreeMap::from([(
        p.app.clone(),
        vec![Pair {
            item_id: p.item_id.clone(),
            revision: p.revision.clone(),
        }],
    )])
}

/// Opens document `id` for `asker` and, for a sibling's document, rules its
/// (item, revision) through S2 in this request (§8.1): VISIBLE shows it,
/// NOT_VISIBLE is [`DocumentRuling::Absent`] exactly as a missing id is,
/// and STALE, AHEAD and UNKNOWN withhold it with the search page's sentence
/// for that app and reason (one result). A memoria-owned document is shown
/// on §4.2's two facts alone.
///
/// # Errors
/// As [`crate::Instance::document`]: [`crate::ErrorKind::NotAdmitted`] for
/// an asker not admitted, a store error otherwise
/// ([`crate::ErrorKind::Abandoned`] if the store work panicked). No sibling
/// is asked then.
pub async fn ruled_document(
    instance: &SharedInstance,
    client: Option<&SiblingClient>,
    asker: &str,
    id: &str,
) -> Result<RuledDocument, Error> {
    let (who, id) = (asker.to_string(), id.to_string());
    // It only reads: on a read handle, beside searches and any write.
    let found = instance.read(move |v| v.document(&who, &id)).await??;
    let Some((doc, passages)) = found else {
        return Ok(RuledDocument {
            ruling: DocumentRuling::Absent,
            follow_ups: FollowUps::default(),
        });
    };
    let Some(p) = doc.provenance.clone() else {
        return Ok(RuledDocument {
            ruling: DocumentRuling::Shown { doc, passages },
            follow_ups: FollowUps::default(),
        });
    };
    let ruling = rule(instance, client, asker, &pair_of(&p)).await;
    let withheld = |reason| DocumentRuling::Withheld(Withheld::one(&p.app, reason));
    let shown = match ruling.verdicts.get(&p) {
        Verdict::Visible => DocumentRuling::Shown { doc, passages },
        Verdict::NotVisible => DocumentRuling::Absent,
        Verdict::Stale => withheld(WithheldReason::Stale),
        Verdict::Ahead => withheld(WithheldReason::Ahead),
        Verdict::Unknown => withheld(WithheldReason::NoAnswer),
    };
    Ok(RuledDocument {
        ruling: shown,
        follow_ups: ruling.follow_ups,
    })
}
