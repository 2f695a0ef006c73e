//! The fact box's model half: which ruled passages go to the cheap model for a postal address, what its reply must be, and which of its proposals memoria can locate byte for byte in a passage it sent (§8.9).
//!
//! Pure logic: no call, no clock, no log. `AppState::ruled_search` makes
//! the one provider call between [`prompt`] and [`decode_reply`].
//!
//! - **Which kinds.** Eligibility is a property of the kind: the fixed
//!   allowlist [`MODEL_KINDS`], today exactly [`ModelKind::Address`]. A
//!   validator-backed kind ([`Kind`] but not [`Kind::Address`]) is a
//!   different type and has no way in, whatever §8.8's layer did with it.
//! - **What is sent** ([`select`], [`prompt`]). Of the ruled results,
//!   those ranked at most [`MODEL_PASSAGES_MAX`], then those still present:
//!   bounded by rank first and then thinned, never refilled, so a passage
//!   gone since the ruling makes the payload smaller and never lets result
//!   nine in. Each passage goes with its index (its rank) and nothing else
//!   about it: no title, no path, no id; and the query is not sent either.
//! - **What comes back** ([`decode_reply`]). A JSON list of
//!   `{"passage": <index>, "text": "<exact bytes>"}` and nothing else. A
//!   reply the provider marks truncated, or one that did not finish, or
//!   anything but that list, is rejected whole, never used in part.
//! - **What memoria checks** ([`locate`], [`model_box`]): §8.9's six
//!   checks per proposal; then identity is the byte-exact span (the same
//!   bytes in two passages are one candidate, cited to the better-ranked),
//!   and §8.8's cap, collision and over-long label apply through the same
//!   code as the deterministic layer's ([`super::boxes`]), without
//!   narrowing. The displayed span is sliced from the document at the
//!   coordinate; the model's own string is discarded.
//!
//! What the checks guarantee is narrow, and the page says so with the row's
//! 🤖 and the provider's and model's names: every accepted value is a
//! byte-exact span of a passage that passed §4.1 in this request and was
//! sent. Whether it is an address, the whole address, the relevant one, or
//! the only one are the model's judgements (§8.9, "What does not survive").

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

// What a question primes, a model kind among it, is read before the model
// half runs (lexicon.rs), so the kind lives there.
use super::boxes::{Attribution, FactBox, candidates, rule_box};
use super::label::{self, RunStarts};
pub use super::lexicon::ModelKind;
use super::{Found, Incomplete, Span, spans};
use crate::ai::chat::{
    CHAT_DEADLINE_MS, CHAT_PASSAGES_MAX, ChatErrorKind, ChatModels, ChatPassage, ChatPrompt,
    ChatReply, FinishReason, ModelTier,
};
use crate::ai::embed::JsonFault;
use crate::ai::provider::PROVIDER_NAME;
use crate::search::result::SearchResult;

/// The most ruled results sent, by rank: §8.9's "top eight ruled results",
/// matching §8.6's answer-time budget.
pub const MODEL_PASSAGES_MAX: usize = 8;

/// The shortest proposal accepted, in bytes (§8.9 check 2: "at least 12
/// bytes", so `Dublin` or `1` cannot pass because they occur somewhere).
pub const MODEL_SPAN_BYTES_MIN: usize = 12;

/// The most proposals one reply may hold, distinct or not; over it the
/// reply is rejected whole ([`ReplyError::TooManyProposals`]). The reply is
/// already at most `CHAT_REPLY_TOKENS_MAX` tokens; this bounds the work on
/// it, so validation stays far inside [`CHAT_DEADLINE_MS`] (§8.9, "Four
/// surfaces": a legal-sized response of repeated proposals). This
/// project's number: eight passages rarely hold more than a few addresses.
pub const MODEL_PROPOSALS_MAX: usize = 64;

/// The tier §8.9 sends to: `model.cheap` (§8.2, "Model and tier").
pub const MODEL_TIER: ModelTier = ModelTier::Cheap;

/// The deadline for the call, in ms: §6.5's sibling deadline, reused
/// (§8.9, "Deadline: 800 ms").
pub const MODEL_DEADLINE_MS: u64 = CHAT_DEADLINE_MS;

/// The model kinds: the fixed allowlist of kinds that may be sent to a
/// model (§8.9: "today exactly one, address").
pub const MODEL_KINDS: [ModelKind; 1] = [ModelKind::Address];

const _: () = assert!(MODEL_PASSAGES_MAX <= CHAT_PASSAGES_MAX);
const _: () = assert!(MODEL_SPAN_BYTES_MIN > 0);

/// The system message: the response contract, and nothing about the
/// reader or the query.
pub const MODEL_INSTRUCTIONS: &str = "You find postal addresses in passages. Each passage starts with its index in square brackets, like [3]. Reply with a JSON list holding every postal address in the passages, each as {\"passage\": <index>, \"text\": \"<the address>\"}, where text is copied from that passage exactly, byte for byte: the same characters, spaces, punctuation and line breaks. Reply with the JSON list and nothing else, and with [] if the passages hold no postal address.";

/// The user message's last line. Fixed: the reader's query is not sent.
pub const MODEL_QUESTION: &str = "List every postal address in the passages above.";

/// One passage to send: its index (its rank on the page) and the ruled
/// result it is. Its `Debug` prints the index only.
#[derive(Clone, Copy)]
pub struct Sent<'r> {
    /// The index the model sees and must name, from 1.
    pub index: usize,
    /// The ruled result.
    pub result: &'r SearchResult,
}

impl std::fmt::Debug for Sent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sent({})", self.index)
    }
}

/// The passages to send: of `results` (a ruled page, best first), those
/// ranked at most [`MODEL_PASSAGES_MAX`], then those `present` still holds.
/// Bounded by rank first and then thinned, never refilled (§8.9).
pub fn select<'r>(
    results: &'r [SearchResult],
    present: impl Fn(&SearchResult) -> bool,
) -> Vec<Sent<'r>> {
    results
        .iter()
        .filter(|r| r.rank >= 1 && r.rank <= MODEL_PASSAGES_MAX)
        .filter(|r| present(r))
        .map(|r| Sent {
            index: r.rank,
            result: r,
        })
        .collect()
}

/// The prompt for `sent`: [`MODEL_INSTRUCTIONS`], each passage's text under
/// its index and nothing else about it, and [`MODEL_QUESTION`].
pub fn prompt(sent: &[Sent<'_>]) -> ChatPrompt {
    ChatPrompt {
        instructions: MODEL_INSTRUCTIONS.to_owned(),
        passages: sent
            .iter()
            .map(|s| ChatPassage {
                id: s.index.to_string(),
                text: s.result.text.clone(),
            })
            .collect(),
        question: MODEL_QUESTION.to_owned(),
    }
}

/// One proposal as the model returned it. Its `Debug` prints the index
/// and the text's length, never the text.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Proposal {
    /// The index of the passage it names.
    pub passage: u64,
    /// What the model says the passage holds, byte for byte.
    pub text: String,
}

impl std::fmt::Debug for Proposal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Proposal({}, {} bytes)", self.passage, self.text.len())
    }
}

/// Why a reply was rejected whole. No variant carries the reply's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum ReplyError {
    /// The provider marked it truncated (`finish_reason: length`).
    #[error("the reply was cut off")]
    Truncated,
    /// It stopped for another reason than finishing (a filter, or none given).
    #[error("the reply did not finish")]
    Unfinished,
    /// Not a JSON list of `{"passage", "text"}` and nothing else.
    #[error("the reply is not the list asked for ({fault:?} at line {line}, column {column})")]
    Malformed {
        /// How it failed.
        #[serde(skip)]
        fault: JsonFault,
        /// Where, by `serde_json`'s count.
        line: usize,
        /// Where, by `serde_json`'s count.
        column: usize,
    },
    /// More than [`MODEL_PROPOSALS_MAX`] proposals.
    #[error("the reply holds {proposals} proposals, over {MODEL_PROPOSALS_MAX}")]
    TooManyProposals {
        /// Proposals in the reply.
        proposals: usize,
    },
}

/// Decodes the model's reply, totally: the proposals, or why the whole
/// reply is refused. Surrounding white space is allowed; anything else
/// around the list, a field beyond the two, or a wrong type is malformed.
///
/// # Errors
/// [`ReplyError::Truncated`] for `finish_reason: length`,
/// [`ReplyError::Unfinished`] for any finish but `stop`,
/// [`ReplyError::Malformed`] for anything but the list,
/// [`ReplyError::TooManyProposals`] over [`MODEL_PROPOSALS_MAX`].
pub fn decode_reply(reply: &ChatReply) -> Result<Vec<Proposal>, ReplyError> {
    match reply.finish {
        FinishReason::Stop => {}
        FinishReason::Length => return Err(ReplyError::Truncated),
        FinishReason::Other => return Err(ReplyError::Unfinished),
    }
    let proposals: Vec<Proposal> =
        serde_json::from_str(&reply.text).map_err(|e| ReplyError::Malformed {
            fault: match e.classify() {
                serde_json::error::Category::Eof => JsonFault::Truncated,
                serde_json::error::Category::Data => JsonFault::Shape,
                serde_json::error::Category::Syntax | serde_json::error::Category::Io => {
                    JsonFault::Syntax
                }
            },
            line: e.line(),
            column: e.column(),
        })?;
    if proposals.len() > MODEL_PROPOSALS_MAX {
        return Err(ReplyError::TooManyProposals {
            proposals: proposals.len(),
        });
    }
    Ok(proposals)
}

/// Why one proposal was dropped (§8.9's checks, in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// Check 1: it names no passage that was sent (result nine included).
    NotSent,
    /// Check 2: empty.
    Empty,
    /// Check 2: shorter than [`MODEL_SPAN_BYTES_MIN`] bytes.
    TooShort,
    /// Check 2: no digit, no comma and no line break.
    Unstructured,
    /// Check 3: its bytes are not in that passage, exactly.
    NotFound,
    /// Check 5: its first occurrence begins or ends inside a word.
    SplitsAWord,
    /// Check 5: its first occurrence lies inside, or cuts, a span §8.8's
    /// recognisers found (a street name inside an email address).
    InRecognisedSpan,
    /// Check 5 cannot be made: the passage is over §8.8's bounds.
    PassageUnreadable,
}

/// A located proposal: the immutable coordinate (check 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Coordinate {
    /// The sent passage's position in the sent list (its rank order).
    pub passage: usize,
    /// The first byte, in the passage's text.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// One passage's §8.8 spans and run starts, computed once per passage
/// however many proposals name it (§8.9: "the recognisers run once per
/// passage").
struct Read {
    spans: Result<Vec<Span>, Incomplete>,
    starts: RunStarts,
}

/// Runs checks 1 to 5 on one proposal against the sent passages, and
/// returns its coordinate (check 6) or why it was dropped.
fn locate_in(
    proposal: &Proposal,
    sent: &[Sent<'_>],
    reads: &mut BTreeMap<usize, Read>,
) -> Result<Coordinate, Refusal> {
    // 1. A passage that was sent.
    let position = sent
        .iter()
        .position(|s| u64::try_from(s.index).is_ok_and(|i| i == proposal.passage))
        .ok_or(Refusal::NotSent)?;
    // 2. Structural, not a validator.
    let needle = proposal.text.as_str();
    if needle.is_empty() {
        return Err(Refusal::Empty);
    }
    if needle.len() < MODEL_SPAN_BYTES_MIN {
        return Err(Refusal::TooShort);
    }
    if !needle.contains(|c: char| c.is_ascii_digit() || c == ',' || c == '\n') {
        return Err(Refusal::Unstructured);
    }
    // 3 and 4. Exact bytes, no normalisation; the first occurrence.
    let text = sent[position].result.text.as_str();
    let start = text.find(needle).ok_or(Refusal::NotFound)?;
    let end = start + needle.len();
    // 5. Word boundaries, and outside every recognised span.
    if splits_a_word(text, start, end) {
        return Err(Refusal::SplitsAWord);
    }
    let read = reads.entry(position).or_insert_with(|| Read {
        spans: spans(text),
        starts: RunStarts::of(text),
    });
    let found = read
        .spans
        .as_ref()
        .map_err(|_| Refusal::PassageUnreadable)?;
    // A span the proposal holds whole is an address's part (its eircode);
    // one it equals is that span itself (a phone number proposed as an
    // address), which lies inside it and is refused.
    let contains = |s: &Span| start <= s.start && s.end <= end && (s.start, s.end) != (start, end);
    if found
        .iter()
        .any(|s| s.start < end && start < s.end && !contains(s))
    {
        return Err(Refusal::InRecognisedSpan);
    }
    Ok(Coordinate {
        passage: position,
        start,
        end,
    })
}

/// §8.9's checks 1 to 6 on one proposal against the sent passages: its
/// coordinate, or why it was dropped.
///
/// # Errors
/// The [`Refusal`] naming the first check it fails.
pub fn locate(proposal: &Proposal, sent: &[Sent<'_>]) -> Result<Coordinate, Refusal> {
    locate_in(proposal, sent, &mut BTreeMap::new())
}

/// True if the span `start..end` of `text` begins or ends inside a word: a
/// letter or digit on both sides of either end.
fn splits_a_word(text: &str, start: usize, end: usize) -> bool {
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let span = &text[start..end];
    (word(text[..start].chars().next_back()) && word(span.chars().next()))
        || (word(span.chars().next_back()) && word(text[end..].chars().next()))
}

/// What the model half made of one reply: the box, if its rules let it
/// render, and counts for the content-free log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelBox {
    /// The box, or `None` (no proposal located, or §8.8's cap, collision
    /// or over-long label silenced the kind).
    pub facts: Option<FactBox>,
    /// Distinct proposals located.
    pub located: usize,
    /// Distinct proposals dropped, per check.
    pub refused: BTreeMap<Refusal, usize>,
}

/// The box `kind` gets from `proposals` against the `sent` passages: each
/// distinct proposal checked once ([`locate`]); the located ones in rank
/// order and then byte order (never the provider's order); each displayed
/// span sliced from the document and labelled by §8.8's rules at its start;
/// one candidate per byte-exact span, cited to the better-ranked passage;
/// then §8.8's cap, collision and over-long label, without narrowing.
/// `models` names the model the rows are attributed to.
pub fn model_box(
    kind: ModelKind,
    sent: &[Sent<'_>],
    proposals: &[Proposal],
    models: ChatModels,
) -> ModelBox {
    let distinct: BTreeSet<&Proposal> = proposals.iter().collect();
    let mut reads = BTreeMap::new();
    let mut refused: BTreeMap<Refusal, usize> = BTreeMap::new();
    let mut located = BTreeSet::new();
    for p in distinct {
        match locate_in(p, sent, &mut reads) {
            Ok(c) => {
                located.insert(c);
            }
            Err(r) => *refused.entry(r).or_insert(0) += 1,
        }
    }
    let found: Vec<(Found, &SearchResult)> = located
        .iter()
        .map(|c| {
            let result = sent[c.passage].result;
            let text = result.text.as_str();
            let read = &reads[&c.passage];
            let earlier: Vec<(usize, usize)> = read.spans.as_ref().map_or(vec![], |ss| {
                ss.iter()
                    .filter(|s| s.end <= c.start)
                    .map(|s| (s.start, s.end))
                    .collect()
            });
            let span = text[c.start..c.end].to_owned();
            let found = Found {
                kind: kind.kind(),
                canonical: span.clone(),
                label: label::label(
                    text,
                    &read.starts,
                    c.start,
                    &earlier,
                    &result.trail,
                    &result.title,
                ),
                span,
            };
            (found, result)
        })
        .collect();
    let facts = rule_box(
        kind.kind(),
        candidates(kind.kind(), &found),
        None,
        Attribution::Model {
            provider: PROVIDER_NAME,
            model: models.id(MODEL_TIER),
        },
    );
    ModelBox {
        facts,
        located: located.len(),
        refused,
    }
}

/// Why the model half showed nothing from the provider: the one loud line
/// the page carries (§8.9: "the box renders without model rows"; issue 14:
/// a line that names the provider and what failed). No variant carries
/// content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "failed", content = "kind")]
pub enum ModelFailure {
    /// The call failed: not reached, past the deadline, refused, or a body
    /// that is not a chat completion.
    Provider(ChatErrorKind),
    /// The call answered, and the reply was rejected whole.
    Reply(ReplyError),
}

impl ModelFailure {
    /// The page's line: plain words naming the provider and what failed.
    pub fn sentence(&self) -> String {
        let what = match self {
            ModelFailure::Provider(kind) => match kind {
                ChatErrorKind::Input => {
                    return format!(
                        "The address search was not sent to {PROVIDER_NAME}: these passages are over its size limit. No addresses are shown."
                    );
                }
                ChatErrorKind::Unreachable => "could not be reached for the address search",
                ChatErrorKind::Deadline => {
                    return format!(
                        "{PROVIDER_NAME} did not answer the address search within {MODEL_DEADLINE_MS} ms, so no addresses from it are shown."
                    );
                }
                ChatErrorKind::RateLimited => "refused the address search as rate limited",
                ChatErrorKind::Unavailable => "was unavailable for the address search",
                ChatErrorKind::Refused => "refused the address search",
                ChatErrorKind::TooLarge => "sent a reply too large to read",
                ChatErrorKind::Encoding | ChatErrorKind::Malformed | ChatErrorKind::Empty => {
                    "sent a reply that is not a chat completion"
                }
            },
            ModelFailure::Reply(ReplyError::Truncated) => {
                return format!(
                    "{PROVIDER_NAME}'s reply to the address search was cut off, so none of it is used."
                );
            }
            ModelFailure::Reply(ReplyError::Unfinished) => {
                return format!(
                    "{PROVIDER_NAME}'s reply to the address search did not finish, so none of it is used."
                );
            }
            ModelFailure::Reply(
                ReplyError::Malformed { .. } | ReplyError::TooManyProposals { .. },
            ) => {
                return format!(
                    "{PROVIDER_NAME}'s reply to the address search was not the list asked for, so none of it is used."
                );
            }
        };
        format!("{PROVIDER_NAME} {what}, so no addresses from it are shown.")
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
