//! The contract's messages as memoria reads and writes them, and the total decoders (§4.1, §6.1; `fixtures/contract/`).
//!
//! Every decoder here is total: any status and any bytes give either a value
//! or a typed refusal, and the S2 decoder gives exactly one [`Verdict`] per
//! requested pair whatever arrived. Unknown fields are refused everywhere,
//! so a sibling that adds a title or a visibility flag to a feed row is
//! refused loudly rather than half-read (gate 3).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// At most this many pairs in one S2 call (§4.1); more pairs take more calls.
pub const S2_PAIRS_PER_CALL_MAX: usize = 256;
/// The longest opaque token (item id, revision, cursor, page token), in bytes
/// (`fixtures/contract/schema/defs.schema.json`).
pub const TOKEN_BYTES_MAX: usize = 256;

/// The kind of asker a subject names; it travels on the wire (suite §3, §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubjectKind {
    /// A lowercased address, in lone shape.
    Address,
    /// A person ref, in suite shape.
    PersonRef,
}

impl SubjectKind {
    /// The wire spelling, e.g. `address`.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Address => "address",
            SubjectKind::PersonRef => "person_ref",
        }
    }
}

/// The asker of an S2 call: typed (§4.1).
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    /// Which kind `value` is.
    pub kind: SubjectKind,
    /// The address or person ref.
    pub value: String,
}

impl std::fmt::Debug for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // An address identifies a person: never printed.
        write!(f, "Subject({})", self.kind.as_str())
    }
}

impl Subject {
    /// An address subject, lowercased (lone shape).
    pub fn address(address: &str) -> Subject {
        Subject {
            kind: SubjectKind::Address,
            value: address.trim().to_ascii_lowercase(),
        }
    }
}

/// One (item_id, revision) pair: what memoria holds of a sibling item.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    /// The sibling's item id (opaque).
    pub item_id: String,
    /// The revision memoria holds (opaque, compared for equality only).
    pub revision: String,
}

/// One S2 result (§4.1): five values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Verdict {
    /// This person may read this revision: render it.
    Visible,
    /// This person may not read it: omit it silently.
    NotVisible,
    /// The sibling moved past this revision: withhold loudly and refetch.
    Stale,
    /// The sibling's log stops short of this revision: withhold loudly,
    /// mark the source for re-announce, delete nothing.
    Ahead,
    /// No usable answer: withhold loudly.
    Unknown,
}

impl Verdict {
    /// Reads one wire value. Anything but the five exact spellings is `None`.
    pub fn from_wire(s: &str) -> Option<Verdict> {
        match s {
            "VISIBLE" => Some(Verdict::Visible),
            "NOT_VISIBLE" => Some(Verdict::NotVisible),
            "STALE" => Some(Verdict::Stale),
            "AHEAD" => Some(Verdict::Ahead),
            "UNKNOWN" => Some(Verdict::Unknown),
            _ => None,
        }
    }
}

/// The S2 request body (`s2-request.schema.json`).
#[derive(Debug, Clone, Serialize)]
pub struct S2Request<'a> {
    /// The asker.
    pub subject: &'a Subject,
    /// 1 to [`S2_PAIRS_PER_CALL_MAX`] pairs.
    pub pairs: &'a [Pair],
}

/// The S3 request body (`s3-request.schema.json`): a pair and no person (gate 25).
pub type S3Request = Pair;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct S2ResponseWire {
    subject_kind: String,
    results: Vec<S2ResultWire>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct S2ResultWire {
    item_id: String,
    revision: String,
    result: String,
}

/// What came back from one S2 call, before decoding.
#[derive(Debug, Clone)]
pub enum S2Answer {
    /// No whole HTTP answer: timeout, refused, reset, oversized.
    NoAnswer,
    /// A status and the raw body bytes.
    Http {
        /// The HTTP status.
        status: u16,
        /// The body as received.
        body: Vec<u8>,
    },
}

/// Why a whole S2 call decoded to UNKNOWN, or why single pairs did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum S2Fault {
    /// No answer before the deadline, or no answer at all.
    NoAnswer,
    /// memoria had no token to send (its token file cannot be read, or
    /// holds none): no call was made (§6.2, fail closed).
    NoToken,
    /// A status other than 200, redirects included.
    Status,
    /// A body that is not `s2-response.schema.json`.
    Malformed,
    /// The sibling keyed on another subject kind (suite gate 2).
    KindMismatch,
    /// A result for a pair that was not asked.
    Unasked,
    /// A requested pair with no result.
    Missing,
    /// A pair answered more than once.
    Duplicate,
    /// A value outside the five, e.g. `PERHAPS`.
    UnknownValue,
}

/// The decoded S2 answer: exactly one verdict per requested pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S2Decoded {
    /// One verdict per requested pair, in request order.
    pub verdicts: Vec<Verdict>,
    /// Every fault seen, with how many pairs it made UNKNOWN.
    pub faults: BTreeMap<S2Fault, usize>,
}

/// Decodes one S2 answer to `pairs` asked as `asked` (§4.1, gate 6).
///
/// Total: whatever `answer` holds, the result has `pairs.len()` verdicts.
/// A non-answer, a non-200 status, a malformed body, a kind mismatch or a
/// result for a pair not asked make every pair UNKNOWN; a missing pair, a
/// duplicate pair or an unknown value make that pair UNKNOWN.
pub fn decode_s2(pairs: &[Pair], asked: SubjectKind, answer: &S2Answer) -> S2Decoded {
    let all_unknown = |fault: S2Fault| S2Decoded {
        verdicts: vec![Verdict::Unknown; pairs.len()],
        faults: BTreeMap::from([(fault, pairs.len())]),
    };
    let body = match answer {
        S2Answer::NoAnswer => return all_unknown(S2Fault::NoAnswer),
        S2Answer::Http { status: 200, body } => body,
        S2Answer::Http { .. } => return all_unknown(S2Fault::Status),
    };
    let Ok(wire) = serde_json::from_slice::<S2ResponseWire>(body) else {
        return all_unknown(S2Fault::Malformed);
    };
    if wire.subject_kind != asked.as_str() {
        return all_unknown(S2Fault::KindMismatch);
    }
    let index: BTreeMap<&str, usize> = pairs
        .iter()
        .enumerate()
        .map(|(i, p)| (p.item_id.as_str(), i))
        .collect();
    let mut seen: Vec<Vec<Option<Verdict>>> = vec![Vec::new(); pairs.len()];
    for r in &wire.results {
        match index.get(r.item_id.as_str()) {
            Some(&i) if pairs[i].revision == r.revision => {
                seen[i].push(Verdict::from_wire(&r.result));
            }
            _ => return all_unknown(S2Fault::Unasked),
        }
    }
    let mut faults = BTreeMap::new();
    let verdicts = seen
        .into_iter()
        .map(|answers| {
            let (verdict, fault) = match answers.as_slice() {
                [] => (Verdict::Unknown, Some(S2Fault::Missing)),
                [Some(v)] => (*v, None),
                [None] => (Verdict::Unknown, Some(S2Fault::UnknownValue)),
                _ => (Verdict::Unknown, Some(S2Fault::Duplicate)),
            };
            if let Some(f) = fault {
                *faults.entry(f).or_insert(0) += 1;
            }
            verdict
        })
        .collect();
    S2Decoded { verdicts, faults }
}

/// One S1 row: exactly four fields (§6.1, gate 3).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S1Row {
    /// The sibling's item id.
    pub item_id: String,
    /// The item's revision at this event.
    pub revision: String,
    /// Deleted, or no longer team-visible: indistinguishable by design.
    pub gone: bool,
    /// When the event happened (RFC 3339, UTC).
    pub touched_at: String,
}

/// One S1 page (`s1-response.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S1Page {
    /// The cursor to store once these rows are applied.
    pub cursor: String,
    /// Ask again straight away.
    pub more: bool,
    /// The rows since the cursor asked with.
    pub rows: Vec<S1Row>,
}

/// Why a feed or announce call gave nothing usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedError {
    /// No whole answer: timeout, refused, reset, oversized.
    #[error("the sibling did not answer")]
    NoAnswer,
    /// `410`: the cursor is past its TTL or was rewound; take S1a (§6.1).
    #[error("the sibling asks for a full re-announce")]
    ReannounceRequired,
    /// Another non-2xx status, redirects included.
    #[error("the sibling answered status {0}")]
    Status(u16),
    /// The body is not the schema, e.g. a row carries a fifth field.
    #[error("the sibling's answer is malformed: {0}")]
    Malformed(String),
}

fn check_tokens<'a>(tokens: impl IntoIterator<Item = &'a str>) -> Result<(), FeedError> {
    for t in tokens {
        if t.is_empty() || t.len() > TOKEN_BYTES_MAX {
            return Err(FeedError::Malformed(format!(
                "a token is empty or over {TOKEN_BYTES_MAX} bytes"
            )));
        }
    }
    Ok(())
}

/// True for RFC 3339 in UTC as the contract writes it: `YYYY-MM-DDTHH:MM:SS[.f]Z`
/// (`defs.schema.json#/$defs/time`).
pub fn is_contract_time(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || !digits(5..7)
        || !digits(8..10)
        || !digits(11..13)
        || !digits(14..16)
        || !digits(17..19)
    {
        return false;
    }
    if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return false;
    }
    match &b[19..] {
        [b'Z'] => true,
        [b'.', frac @ .., b'Z'] => !frac.is_empty() && frac.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Decodes one S1 answer.
///
/// # Errors
/// [`FeedError`]: `410` is [`FeedError::ReannounceRequired`]; any other
/// non-200 is [`FeedError::Status`]; a body that is not the schema, or that
/// holds an empty or oversized token, is [`FeedError::Malformed`].
pub fn decode_s1(status: u16, body: &[u8]) -> Result<S1Page, FeedError> {
    match status {
        200 => {}
        410 => return Err(FeedError::ReannounceRequired),
        s => return Err(FeedError::Status(s)),
    }
    let page: S1Page =
        serde_json::from_slice(body).map_err(|e| FeedError::Malformed(e.to_string()))?;
    if page.rows.iter().any(|r| !is_contract_time(&r.touched_at)) {
        return Err(FeedError::Malformed(
            "a touched_at is not RFC 3339 UTC".into(),
        ));
    }
    check_tokens(
        std::iter::once(page.cursor.as_str()).chain(
            page.rows
                .iter()
                .flat_map(|r| [r.item_id.as_str(), r.revision.as_str()]),
        ),
    )?;
    Ok(page)
}

/// One S1a record (`s1a-page.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum S1aRecord {
    /// Opens the announce; first record of the first page.
    Open,
    /// One team-visible item.
    Item {
        /// The sibling's item id.
        item_id: String,
        /// Its current revision.
        revision: String,
        /// When it last changed.
        touched_at: String,
    },
    /// Closes the announce with the item count and the new S1 cursor.
    Close {
        /// How many item records the announce holds.
        count: u64,
        /// The S1 cursor, valid only because the close was read.
        cursor: String,
    },
}

/// One S1a page.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S1aPage {
    /// Records in order.
    pub records: Vec<S1aRecord>,
    /// The next page's token; `null` on the last page.
    pub next_page: Option<String>,
}

/// Decodes one S1a page.
///
/// # Errors
/// As [`decode_s1`].
pub fn decode_s1a_page(status: u16, body: &[u8]) -> Result<S1aPage, FeedError> {
    match status {
        200 => {}
        410 => return Err(FeedError::ReannounceRequired),
        s => return Err(FeedError::Status(s)),
    }
    let page: S1aPage =
        serde_json::from_slice(body).map_err(|e| FeedError::Malformed(e.to_string()))?;
    let bad_time = page
        .records
        .iter()
        .any(|r| matches!(r, S1aRecord::Item { touched_at, .. } if !is_contract_time(touched_at)));
    if bad_time {
        return Err(FeedError::Malformed(
            "a touched_at is not RFC 3339 UTC".into(),
        ));
    }
    let mut tokens: Vec<&str> = page.next_page.iter().map(String::as_str).collect();
    for r in &page.records {
        match r {
            S1aRecord::Open => {}
            S1aRecord::Item {
                item_id, revision, ..
            } => tokens.extend([item_id.as_str(), revision.as_str()]),
            S1aRecord::Close { cursor, .. } => tokens.push(cursor),
        }
    }
    check_tokens(tokens)?;
    Ok(page)
}

/// Why an announce failed and authorises nothing (§4.1 rule 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnounceFailure {
    /// A page could not be read.
    #[error("a page failed: {0}")]
    Page(FeedError),
    /// The first record was not the open marker.
    #[error("the announce did not open with its marker")]
    NoOpen,
    /// The pages ended without a close marker.
    #[error("the announce ended without its close marker")]
    NoClose,
    /// The close count differs from the items received.
    #[error("the announce closed with count {declared} after {received} items")]
    CountMismatch {
        /// The close marker's count.
        declared: u64,
        /// Item records received.
        received: u64,
    },
    /// A record after the close, a second open, or a page after the close.
    #[error("the announce's records are out of order")]
    OutOfOrder,
    /// More pages than [`ANNOUNCE_PAGES_MAX`].
    #[error("the announce ran past {ANNOUNCE_PAGES_MAX} pages")]
    TooLong,
}

/// The most pages memoria reads of one announce before calling it failed.
pub const ANNOUNCE_PAGES_MAX: usize = 10_000;

/// A completed announce: every team-visible item, and the cursor after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announce {
    /// Item id to revision, as announced.
    pub items: BTreeMap<String, String>,
    /// Item id to its `touched_at`, as announced: when the revision
    /// announced was made, a refetched item's own date (issue 31).
    pub touched_at: BTreeMap<String, String>,
    /// The S1 cursor the close carried.
    pub cursor: String,
}

/// Reads an announce page by page, and says "complete" only when it is (§4.1 rule 2).
#[derive(Debug, Default)]
pub struct AnnounceAssembler {
    opened: bool,
    closed: Option<(u64, String)>,
    received: u64,
    items: BTreeMap<String, String>,
    touched_at: BTreeMap<String, String>,
    pages: usize,
}

impl AnnounceAssembler {
    /// Feeds the next page. Returns the token of the page to ask for next,
    /// or `None` when the announce has ended (then call [`Self::finish`]).
    ///
    /// # Errors
    /// An [`AnnounceFailure`] as soon as the records are out of order.
    pub fn feed(&mut self, page: S1aPage) -> Result<Option<String>, AnnounceFailure> {
        self.pages += 1;
        if self.pages > ANNOUNCE_PAGES_MAX {
            return Err(AnnounceFailure::TooLong);
        }
        for record in page.records {
            if self.closed.is_some() {
                return Err(AnnounceFailure::OutOfOrder);
            }
            match record {
                S1aRecord::Open if !self.opened => self.opened = true,
                S1aRecord::Open => return Err(AnnounceFailure::OutOfOrder),
                _ if !self.opened => return Err(AnnounceFailure::NoOpen),
                S1aRecord::Item {
                    item_id,
                    revision,
                    touched_at,
                } => {
                    self.received += 1;
                    self.touched_at.insert(item_id.clone(), touched_at);
                    if self.items.insert(item_id, revision).is_some() {
                        return Err(AnnounceFailure::OutOfOrder);
                    }
                }
                S1aRecord::Close { count, cursor } => self.closed = Some((count, cursor)),
            }
        }
        if !self.opened {
            return Err(AnnounceFailure::NoOpen);
        }
        match (page.next_page, &self.closed) {
            (Some(_), Some(_)) => Err(AnnounceFailure::OutOfOrder),
            (next, _) => Ok(next),
        }
    }

    /// Ends the announce.
    ///
    /// # Errors
    /// [`AnnounceFailure::NoClose`] without a close marker;
    /// [`AnnounceFailure::CountMismatch`] when the count disagrees.
    pub fn finish(self) -> Result<Announce, AnnounceFailure> {
        let Some((declared, cursor)) = self.closed else {
            return Err(AnnounceFailure::NoClose);
        };
        if declared != self.received {
            return Err(AnnounceFailure::CountMismatch {
                declared,
                received: self.received,
            });
        }
        Ok(Announce {
            items: self.items,
            touched_at: self.touched_at,
            cursor,
        })
    }
}

/// The S3 response body (`s3-response.schema.json`).
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Body {
    /// The item id, which must be the one asked.
    pub item_id: String,
    /// The revision, which must be the one asked.
    pub revision: String,
    /// The item's title.
    pub title: String,
    /// `text/markdown` or `text/plain`.
    pub media_type: String,
    /// The plaintext body.
    pub body: String,
}

impl std::fmt::Debug for S3Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Content is never printed (gate 4).
        f.debug_struct("S3Body")
            .field("item_id", &self.item_id)
            .field("revision", &self.revision)
            .field("body_bytes", &self.body.len())
            .finish_non_exhaustive()
    }
}

/// Why an S3 fetch brought no body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// No whole answer.
    #[error("the sibling did not answer")]
    NoAnswer,
    /// `404`: not team-visible at that revision, or no such item (§6.1).
    #[error("not found")]
    NotFound,
    /// Another status (a `403` is a contract breach and lands here too).
    #[error("the sibling answered status {0}")]
    Status(u16),
    /// Not the schema, an unknown media type, or another item's body.
    #[error("the sibling's body is malformed: {0}")]
    Malformed(String),
}

/// The media types memoria ingests from S3: text, and a spreadsheet
/// ([`super::sheet::SHEET_MEDIA_TYPE`], §8.7).
pub const S3_MEDIA_TYPES: [&str; 3] = [
    "text/markdown",
    "text/plain",
    super::sheet::SHEET_MEDIA_TYPE,
];

/// Decodes one S3 answer to `asked`.
///
/// # Errors
/// [`FetchError`] for anything but a well-formed `200` body of the asked pair.
pub fn decode_s3(asked: &Pair, status: u16, body: &[u8]) -> Result<S3Body, FetchError> {
    match status {
        200 => {}
        404 => return Err(FetchError::NotFound),
        s => return Err(FetchError::Status(s)),
    }
    let b: S3Body =
        serde_json::from_slice(body).map_err(|e| FetchError::Malformed(e.to_string()))?;
    if b.item_id != asked.item_id || b.revision != asked.revision {
        return Err(FetchError::Malformed("the body is for another pair".into()));
    }
    if !S3_MEDIA_TYPES.contains(&b.media_type.as_str()) {
        return Err(FetchError::Malformed("unknown media type".into()));
    }
    // A sheet body that does not decode is an S3 failure for that item.
    if b.media_type == super::sheet::SHEET_MEDIA_TYPE {
        super::sheet::SheetBody::decode(&b.body)
            .map_err(|e| FetchError::Malformed(e.to_string()))?;
    }
    Ok(b)
}
