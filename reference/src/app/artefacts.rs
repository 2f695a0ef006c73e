//! Writing derived artefacts through the provider, with AI on (§5.2, §8.2): which exist, when they are written, and their roots flattened as they are.
//!
//! What is written, deterministically, from what the store holds:
//!
//! - A document whose title carries a topic tag (`#` then letters, digits
//!   or `-`, e.g. "Offsite plan #offsite") gets a **summary**, written by
//!   `model.cheap` from its first [`ARTEFACT_INPUTS_MAX`] passages. Its
//!   one root is the document itself: a sibling's (app, item, revision), or
//!   memoria's (`memoria`, document id, revision).
//! - Each tag gets an **overview** ("Overview of #offsite"), written by
//!   `model.frontier` from the summaries of the documents that carry it,
//!   in document-id order. A tag on more than [`ARTEFACT_INPUTS_MAX`]
//!   documents is summarised in **parts** of that many summaries, and
//!   parts of parts, until one call can take them all.
//!
//! An artefact's `roots` are flattened as it is written ([`crate::artefact::flatten`]):
//! a summary's are its document; a part's or an overview's are the union
//! of its inputs' roots, read from their records, never their ids. An
//! artefact is written again when its desired roots or `built_from` differ
//! from its record's, so a source's new revision rewrites its summary,
//! and that rewrites every part and overview above it (propagation down
//! `built_from`); an artefact no longer wanted (its document deleted or
//! untagged) is deleted. An input that cannot be flattened leaves the
//! artefact unwritten (§5.2).
//!
//! When: [`ArtefactWriter::soon`] starts a refresh after every sibling
//! pull, every upload and connector sync, and when a ruling withheld an
//! artefact because a source changed (`FollowUps::regenerate`). With AI
//! off there is no chat client and nothing is started: no egress.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::ai::chat::{CHAT_PASSAGES_MAX, ChatClient, ChatPassage, ChatPrompt, ModelTier};
use crate::artefact::{ArtefactKind, ArtefactRecord, Input, Root, flatten};
use crate::error::Error;
use crate::instance::Instance;
use crate::offload::SharedInstance;
use crate::storage::store::{APP_ARTEFACT, APP_MEMORIA, DocumentSummary, NewDocument};

/// The most inputs one artefact is written from: one chat call's passages
/// (`CHAT_PASSAGES_MAX`, §8.4). A topic with more is written in parts.
pub const ARTEFACT_INPUTS_MAX: usize = CHAT_PASSAGES_MAX;

/// The most bytes of one input sent, cut at a character boundary: eight
/// of them stay under the chat call's body cap (`CHAT_REQUEST_BYTES_MAX`,
/// 64 KiB) with room for the instructions.
pub const ARTEFACT_INPUT_BYTES_MAX: usize = 6 * 1024;

/// The longest topic tag read from a title, in bytes (after the `#`).
pub const TOPIC_TAG_BYTES_MAX: usize = 64;

const _: () = assert!(
    ARTEFACT_INPUTS_MAX * ARTEFACT_INPUT_BYTES_MAX < crate::ai::chat::CHAT_REQUEST_BYTES_MAX
);

/// What the model is told to do (the system message).
pub const ARTEFACT_INSTRUCTIONS: &str = "Summarise the numbered passages below in a few plain sentences, using only what they say. Do not add facts, links or images.";

/// The question every artefact's prompt ends with.
pub const ARTEFACT_QUESTION: &str = "Summarise these passages.";

/// The topic tags in `title`: each `#` at the start or after whitespace,
/// followed by 1 to [`TOPIC_TAG_BYTES_MAX`] ASCII letters, digits or `-`,
/// lower-cased; sorted, deduplicated.
pub fn topic_tags(title: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    for word in title.split_whitespace() {
        let Some(tag) = word.strip_prefix('#') else {
            continue;
        };
        let tag: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !tag.is_empty() && tag.len() <= TOPIC_TAG_BYTES_MAX {
            out.insert(tag.to_ascii_lowercase());
        }
    }
    out.into_iter().collect()
}

/// What one refresh did, in counts (logged; never a title or a text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefreshReport {
    /// Artefacts written (new or again).
    pub written: usize,
    /// Artefacts already current.
    pub current: usize,
    /// Artefacts deleted: no longer wanted.
    pub deleted: usize,
    /// Artefacts not written: the provider failed.
    pub failed: usize,
    /// Artefacts not written: an input could not be flattened.
    pub unflattenable: usize,
}

/// A document the refresh reads as a source.
#[derive(Debug, Clone)]
struct Source {
    id: String,
    title: String,
    root: Root,
    tags: Vec<String>,
}

impl Source {
    fn of(d: &DocumentSummary) -> Option<Source> {
        if d.app == APP_ARTEFACT {
            return None;
        }
        let tags = topic_tags(&d.title);
        if tags.is_empty() {
            return None;
        }
        let root = match &d.provenance {
            Some(p) => Root {
                owner: p.app.clone(),
                id: p.item_id.clone(),
                revision: p.revision.clone(),
            },
            None => Root {
                owner: APP_MEMORIA.to_string(),
                id: d.id.clone(),
                revision: d.revision.to_string(),
            },
        };
        Some(Source {
            id: d.id.clone(),
            title: d.title.clone(),
            root,
            tags,
        })
    }
}

/// One artefact to bring up to date: its key, title, kind, and inputs
/// (the document whose passages it reads, or the artefacts it reads).
#[derive(Debug, Clone)]
struct Wanted {
    key: String,
    title: String,
    kind: ArtefactKind,
    from: From,
}

#[derive(Debug, Clone)]
enum From {
    Document(Source),
    Artefacts(Vec<String>),
}

/// The texts to send and the record to store, when an artefact is due.
struct Due {
    wanted: Wanted,
    texts: Vec<String>,
    roots: Vec<Root>,
    built_from: Vec<String>,
}

/// Plans `wanted` under the lock: its id if current, `Ok(None)` if it
/// cannot be flattened, or what to send.
fn plan(i: &Instance, wanted: &Wanted) -> Result<Planned, Error> {
    let store = i.store();
    let existing = store.artefact_by_key(&wanted.key)?;
    let record = match &existing {
        Some(id) => store.artefact_record(id)?,
        None => None,
    };
    let (inputs, built_from, read): (Vec<Input>, Vec<String>, Vec<String>) = match &wanted.from {
        From::Document(s) => (
            vec![Input::Source(s.root.clone())],
            vec![],
            vec![s.id.clone()],
        ),
        From::Artefacts(ids) => {
            let mut inputs = Vec::new();
            for id in ids {
                inputs.push(Input::Artefact(id.clone(), store.artefact_record(id)?));
            }
            (inputs, ids.clone(), ids.clone())
        }
    };
    let Ok(roots) = flatten(&inputs) else {
        return Ok(Planned::Unflattenable);
    };
    if let (Some(id), Some(r)) = (&existing, &record)
        && r.roots == roots
        && r.built_from == built_from
    {
        return Ok(Planned::Current(id.clone()));
    }
    let mut texts = Vec::new();
    for id in &read {
        let passages = store.passages(id)?;
        let joined = passages
            .iter()
            .map(|p| p.body.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        match &wanted.from {
            From::Document(_) => texts.extend(
                passages
                    .iter()
                    .take(ARTEFACT_INPUTS_MAX)
                    .map(|p| cut(&p.body)),
            ),
            From::Artefacts(_) => texts.push(cut(&joined)),
        }
    }
    Ok(Planned::Due(Box::new(Due {
        wanted: wanted.clone(),
        texts,
        roots,
        built_from,
    })))
}

enum Planned {
    Current(String),
    Unflattenable,
    Due(Box<Due>),
}

/// `text` cut to at most [`ARTEFACT_INPUT_BYTES_MAX`] bytes at a character boundary.
fn cut(text: &str) -> String {
    let mut end = text.len().min(ARTEFACT_INPUT_BYTES_MAX);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// Brings every artefact up to date once (see the module's doc): plans
/// under the instance lock, calls the provider without it, writes under it
/// again, level by level, so a part or an overview is flattened from the
/// records its inputs were just written with. Errors are logged by kind
/// and counted; a store that cannot be read ends the refresh.
pub async fn refresh(instance: &SharedInstance, chat: &ChatClient) -> RefreshReport {
    let mut report = RefreshReport::default();
    let sources = instance
        .run(|i| -> Result<Vec<Source>, Error> {
            Ok(i.store()
                .documents()?
                .iter()
                .filter_map(Source::of)
                .collect())
        })
        .await
        .and_then(|r| r);
    let mut sources = match sources {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "derived artefacts: the store could not be read");
            return report;
        }
    };
    sources.sort_by(|a, b| a.id.cmp(&b.id));
    let mut kept: BTreeSet<String> = BTreeSet::new();
    // Level 0: each tagged document's summary.
    let summaries: Vec<Wanted> = sources
        .iter()
        .map(|s| Wanted {
            key: format!("artefact:document:{}", s.id),
            title: format!("Summary of {}", s.title),
            kind: ArtefactKind::Document,
            from: From::Document(s.clone()),
        })
        .collect();
    let ids = bring_up(instance, chat, summaries, &mut report).await;
    let summary_of: BTreeMap<String, String> = sources
        .iter()
        .zip(&ids)
        .filter_map(|(s, id)| Some((s.id.clone(), id.clone()?)))
        .collect();
    kept.extend(summary_of.values().cloned());
    // Each tag's overview, in parts while it has too many inputs.
    let mut tags: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in &sources {
        for t in &s.tags {
            tags.entry(t.clone()).or_default().push(s.id.clone());
        }
    }
    for (tag, members) in tags {
        let Some(mut inputs) = members
            .iter()
            .map(|m| summary_of.get(m).cloned())
            .collect::<Option<Vec<String>>>()
        else {
            // A member's summary is not written: the overview waits for
            // it rather than rest on a part of the topic.
            continue;
        };
        let mut level = 1;
        while inputs.len() > ARTEFACT_INPUTS_MAX {
            let parts: Vec<Wanted> = inputs
                .chunks(ARTEFACT_INPUTS_MAX)
                .enumerate()
                .map(|(n, group)| Wanted {
                    key: format!("artefact:part:{tag}:{level}:{n}"),
                    title: format!("Part {} of #{tag}, level {level}", n + 1),
                    kind: ArtefactKind::Part,
                    from: From::Artefacts(group.to_vec()),
                })
                .collect();
            let ids = bring_up(instance, chat, parts, &mut report).await;
            let Some(ids) = ids.into_iter().collect::<Option<Vec<String>>>() else {
                inputs.clear();
                break;
            };
            kept.extend(ids.iter().cloned());
            inputs = ids;
            level += 1;
        }
        if inputs.is_empty() {
            continue;
        }
        let overview = Wanted {
            key: format!("artefact:topic:{tag}"),
            title: format!("Overview of #{tag}"),
            kind: ArtefactKind::Topic,
            from: From::Artefacts(inputs),
        };
        let ids = bring_up(instance, chat, vec![overview], &mut report).await;
        kept.extend(ids.into_iter().flatten());
    }
    // Whatever is no longer wanted goes: its source is gone or untagged,
    // or its topic shrank below a part.
    let deleted = instance
        .run(move |i| -> Result<usize, Error> {
            let gone: Vec<String> = i
                .store()
                .documents()?
                .into_iter()
                .filter(|d| d.app == APP_ARTEFACT && !kept.contains(&d.id))
                .map(|d| d.id)
                .collect();
            for id in &gone {
                i.delete(id)?;
            }
            Ok(gone.len())
        })
        .await
        .and_then(|r| r);
    match deleted {
        Ok(n) => report.deleted = n,
        Err(e) => {
            tracing::error!(kind = ?e.kind(), "derived artefacts: a stale one could not be deleted")
        }
    }
    if report.written > 0 {
        let snapshot = instance
            .run(|i| i.write_snapshot().map(|_| ()))
            .await
            .and_then(|r| r);
        if let Err(e) = snapshot {
            tracing::error!(kind = ?e.kind(), "derived artefacts: the snapshot could not be written");
        }
    }
    tracing::info!(
        written = report.written,
        current = report.current,
        deleted = report.deleted,
        failed = report.failed,
        unflattenable = report.unflattenable,
        "derived artefacts refreshed"
    );
    report
}

/// Plans, writes and stores each of `wanted`; returns each one's id, or
/// `None` where it is neither current nor written.
async fn bring_up(
    instance: &SharedInstance,
    chat: &ChatClient,
    wanted: Vec<Wanted>,
    report: &mut RefreshReport,
) -> Vec<Option<String>> {
    let mut out = Vec::with_capacity(wanted.len());
    for w in wanted {
        let planned = instance.run(move |i| plan(i, &w)).await.and_then(|r| r);
        let due = match planned {
            Ok(Planned::Current(id)) => {
                report.current += 1;
                out.push(Some(id));
                continue;
            }
            Ok(Planned::Unflattenable) => {
                tracing::error!("derived artefacts: an input's roots do not resolve; not written");
                report.unflattenable += 1;
                out.push(None);
                continue;
            }
            Ok(Planned::Due(d)) => *d,
            Err(e) => {
                tracing::error!(kind = ?e.kind(), "derived artefacts: the store could not be read");
                out.push(None);
                continue;
            }
        };
        let tier = match due.wanted.kind {
            ArtefactKind::Document => ModelTier::Cheap,
            ArtefactKind::Part | ArtefactKind::Topic => ModelTier::Frontier,
        };
        let prompt = ChatPrompt {
            instructions: ARTEFACT_INSTRUCTIONS.to_string(),
            passages: due
                .texts
                .iter()
                .enumerate()
                .map(|(n, text)| ChatPassage {
                    id: (n + 1).to_string(),
                    text: text.clone(),
                })
                .collect(),
            question: ARTEFACT_QUESTION.to_string(),
        };
        let reply = match chat.complete(tier, &prompt).await {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(kind = ?e.kind(), "derived artefacts: the provider did not write one");
                report.failed += 1;
                out.push(None);
                continue;
            }
        };
        let record = ArtefactRecord {
            model: chat.models().id(tier).to_string(),
            roots: due.roots,
            built_from: due.built_from,
        };
        let doc = NewDocument {
            source_key: due.wanted.key.clone(),
            title: due.wanted.title.clone(),
            path: format!("{}.md", due.wanted.key),
            body: format!("# {}\n\n{}\n", due.wanted.title, reply.text.trim()),
            date: None,
        };
        let written = instance
            .run(move |i| i.ingest_artefact(&doc, &record).map(|o| o.id))
            .await
            .and_then(|r| r);
        match written {
            Ok(id) => {
                report.written += 1;
                out.push(Some(id));
            }
            Err(e) => {
                tracing::error!(kind = ?e.kind(), "derived artefacts: one could not be stored");
                out.push(None);
            }
        }
    }
    out
}

/// Starts and awaits artefact refreshes for the web state (§5.2): one at
/// a time, and at most one waiting behind it. Holds the chat client once
/// AI is on; without it [`ArtefactWriter::soon`] starts nothing.
#[derive(Clone)]
pub struct ArtefactWriter {
    instance: SharedInstance,
    chat: Arc<OnceLock<Arc<ChatClient>>>,
    running: Arc<tokio::sync::Mutex<()>>,
    queued: Arc<AtomicBool>,
    tasks: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl std::fmt::Debug for ArtefactWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArtefactWriter")
            .field("on", &self.chat.get().is_some())
            .finish_non_exhaustive()
    }
}

impl ArtefactWriter {
    /// A writer for `instance`, off until [`ArtefactWriter::set_chat`].
    pub fn new(instance: SharedInstance) -> ArtefactWriter {
        ArtefactWriter {
            instance,
            chat: Arc::default(),
            running: Arc::default(),
            queued: Arc::default(),
            tasks: Arc::default(),
        }
    }

    /// Turns the writer on with AI's chat client (§8.3). A second call
    /// keeps the first client.
    pub fn set_chat(&self, chat: Arc<ChatClient>) {
        let _ = self.chat.set(chat);
    }

    /// Starts a refresh beside the caller, unless one is already waiting
    /// to start (it will read the store as it is then). With AI off, does
    /// nothing.
    pub fn soon(&self) {
        let Some(chat) = self.chat.get().cloned() else {
            return;
        };
        if self.queued.swap(true, Ordering::SeqCst) {
            return;
        }
        let me = self.clone();
        let handle = tokio::spawn(async move {
            let _running = me.running.lock().await;
            me.queued.store(false, Ordering::SeqCst);
            refresh(&me.instance, &chat).await;
        });
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        tasks.retain(|h| !h.is_finished());
        tasks.push(handle);
    }

    /// Awaits every refresh started so far, and any started meanwhile.
    pub async fn settle(&self) {
        loop {
            let tasks: Vec<_> =
                std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
            if tasks.is_empty() {
                return;
            }
            for t in tasks {
                let _ = t.await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_s_topic_tags_are_read_lower_cased_and_deduplicated() {
        let table: [(&str, &[&str]); 6] = [
            ("Offsite plan #offsite", &["offsite"]),
            ("#Budget and #budget #q3-plan", &["budget", "q3-plan"]),
            ("Issue#12 is not a tag", &[]),
            ("# alone", &[]),
            ("Plain title", &[]),
            ("#tag, then words", &["tag"]),
        ];
        for (title, want) in table {
            assert_eq!(topic_tags(title), want, "{title}");
        }
    }

    #[test]
    fn an_input_is_cut_at_a_character_boundary() {
        let long = "é".repeat(ARTEFACT_INPUT_BYTES_MAX);
        let cut = cut(&long);
        assert!(cut.len() <= ARTEFACT_INPUT_BYTES_MAX && cut.len() >= ARTEFACT_INPUT_BYTES_MAX - 1);
    }
}
