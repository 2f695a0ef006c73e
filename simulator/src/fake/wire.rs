//! The fake sibling's own wire types for S1, S1a, S2, S3, S6 and the spreadsheet S3 body, in `fixtures/contract/schema` field order (§6.1, §4.1, §8.7).
//!
//! These are independent of the reference's client on purpose: both sides
//! are tested against the fixtures, never against each other (suite ruling
//! 7). Every struct declares its fields in the schema's order and is
//! serialised with [`to_compact`], so bytes depend only on values.

use serde::{Deserialize, Serialize};

/// The longest opaque token (item id, revision, cursor, page token), in
/// bytes (`defs.schema.json#/$defs/token`, §4.1).
pub const TOKEN_BYTES_MAX: usize = 256;

/// The longest S2 subject value, in bytes (`s2-request.schema.json`).
pub const SUBJECT_VALUE_BYTES_MAX: usize = 320;

/// Whether `token` is a well-formed opaque token: 1 to [`TOKEN_BYTES_MAX`]
/// bytes (§4.1).
#[must_use]
pub fn is_token(token: &str) -> bool {
    (1..=TOKEN_BYTES_MAX).contains(&token.len())
}

/// Serialises `value` as compact JSON (no whitespace) in declaration order.
///
/// # Panics
/// Never for this module's types: they hold only strings, integers, booleans
/// and enums, which `serde_json` always serialises.
#[must_use]
pub fn to_compact<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("wire types always serialise")
}

/// The kind of asker an S2 subject names (`defs.schema.json#/$defs/subject_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubjectKind {
    /// An email-style address, e.g. `ana@acme.test`.
    Address,
    /// An opaque person reference, e.g. `prs_ana`.
    PersonRef,
}

impl SubjectKind {
    /// The other kind: what a mis-keyed sibling would echo.
    #[must_use]
    pub fn other(self) -> Self {
        match self {
            Self::Address => Self::PersonRef,
            Self::PersonRef => Self::Address,
        }
    }

    /// The wire spelling: `address` or `person_ref`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Address => "address",
            Self::PersonRef => "person_ref",
        }
    }
}

/// One S2 value (`defs.schema.json#/$defs/value`, §4.1): five values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum S2Value {
    /// The asker may see this item at this revision.
    Visible,
    /// The asker may not see it, or it does not exist: one answer for both.
    NotVisible,
    /// The asker may see the item, but the revision asked is not current.
    Stale,
    /// The revision asked is unknown to a sibling that still admits the item (a restore rewound it).
    Ahead,
    /// The sibling cannot say.
    Unknown,
}

impl S2Value {
    /// The wire spelling, e.g. `NOT_VISIBLE`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Visible => "VISIBLE",
            Self::NotVisible => "NOT_VISIBLE",
            Self::Stale => "STALE",
            Self::Ahead => "AHEAD",
            Self::Unknown => "UNKNOWN",
        }
    }
}

/// An (item id, revision) pair (`defs.schema.json#/$defs/pair`); also the
/// whole S3 request (`s3-request.schema.json`). Unknown fields are rejected.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pair {
    /// Opaque item id, 1 to [`TOKEN_BYTES_MAX`] bytes.
    pub item_id: String,
    /// Opaque revision, 1 to [`TOKEN_BYTES_MAX`] bytes.
    pub revision: String,
}

/// The S3 request is exactly a pair: no person (§6.1, gate 25).
pub type S3Request = Pair;

/// The typed S2 subject (`s2-request.schema.json#/properties/subject`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Subject {
    /// Which kind of identifier `value` is.
    pub kind: SubjectKind,
    /// The identifier, 1 to [`SUBJECT_VALUE_BYTES_MAX`] bytes.
    pub value: String,
}

/// `POST /s2/check` request body (`s2-request.schema.json`, §4.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S2Request {
    /// Who is asking.
    pub subject: Subject,
    /// 1 to 256 pairs (`S2_PAIRS_PER_CALL_MAX`).
    pub pairs: Vec<Pair>,
}

/// One S2 result (`s2-response.schema.json#/properties/results/items`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S2Result {
    /// The asked item id, echoed.
    pub item_id: String,
    /// The asked revision, echoed.
    pub revision: String,
    /// The answer for this pair.
    pub result: S2Value,
}

/// `POST /s2/check` 200 body (`s2-response.schema.json`, §4.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S2Response {
    /// The kind this sibling keys on (not necessarily the kind asked).
    pub subject_kind: SubjectKind,
    /// One result per asked pair, in request order.
    pub results: Vec<S2Result>,
}

/// One S1 row: exactly four fields (`s1-response.schema.json`, gate 3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S1Row {
    /// Opaque item id.
    pub item_id: String,
    /// The item's revision at this event.
    pub revision: String,
    /// True for deletion and for leaving team-visibility alike.
    pub gone: bool,
    /// RFC 3339 UTC, `YYYY-MM-DDTHH:MM:SSZ`.
    pub touched_at: String,
}

/// `GET /s1/feed` 200 body (`s1-response.schema.json`, §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S1Response {
    /// The cursor to pass next time.
    pub cursor: String,
    /// True when more rows wait: ask again straight away.
    pub more: bool,
    /// At most 500 rows (schema `maxItems`).
    pub rows: Vec<S1Row>,
}

/// One S1a record (`s1a-page.schema.json#/properties/records/items`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum S1aRecord {
    /// `{"type":"open"}`: the first record of an announce.
    Open,
    /// One team-visible item.
    Item {
        /// Opaque item id.
        item_id: String,
        /// Its current revision.
        revision: String,
        /// RFC 3339 UTC.
        touched_at: String,
    },
    /// The last record: how many item records, and the new S1 cursor.
    Close {
        /// Number of `item` records in the whole announce.
        count: u64,
        /// The S1 cursor valid once this close is read.
        cursor: String,
    },
}

/// `GET /s1a/announce` 200 body (`s1a-page.schema.json`, §6.1, §4.1 rule 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S1aPage {
    /// At most 500 records (schema `maxItems`).
    pub records: Vec<S1aRecord>,
    /// The next page token, or `null` on the last page.
    pub next_page: Option<String>,
}

/// The media type of an S3 body (`s3-response.schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MediaType {
    /// `text/markdown`.
    #[serde(rename = "text/markdown")]
    Markdown,
    /// `text/plain`.
    #[serde(rename = "text/plain")]
    Plain,
    /// `application/vnd.oficina.sheet+json`: the body is a [`SheetBody`]
    /// as a JSON text (§8.7; this project's wire).
    #[serde(rename = "application/vnd.oficina.sheet+json")]
    Sheet,
}

/// `POST /s3/fetch` 200 body (`s3-response.schema.json`, §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Response {
    /// Opaque item id, echoed.
    pub item_id: String,
    /// The revision served, echoed.
    pub revision: String,
    /// At most 1024 characters.
    pub title: String,
    /// Markdown or plain text.
    pub media_type: MediaType,
    /// At most 1 MiB.
    pub body: String,
}

/// Every non-2xx body's code (`error.schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 401: missing or wrong bearer token (§6.2).
    Unauthorized,
    /// 404: S3 for anything not team-visible at that revision.
    NotFound,
    /// 410: S1 cursor past its TTL or rewound by a restore.
    ReannounceRequired,
    /// 400: over 256 S2 pairs.
    TooManyPairs,
    /// 400: a body that is not the request schema.
    BadRequest,
    /// 5xx: an outage.
    Unavailable,
    /// 400: over 64 S6 cells (`S6_CELLS_PER_CALL_MAX`).
    TooManyCells,
    /// 400: an S6 request with no cell.
    NoCells,
}

/// The body of every non-2xx answer: `{"error":"<code>"}` (`error.schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    /// The code.
    pub error: ErrorCode,
}

/// One cell of a spreadsheet's S3 body (`sheet-body.schema.json`): its
/// display string and, unless it is General, its format code (§8.7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyCell {
    /// What Sheets shows; empty for an empty cell.
    pub display: String,
    /// The format code, e.g. `€#,##0`; absent means General.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format_code: Option<String>,
}

/// One tab of a spreadsheet's S3 body: `rows[r][c]` is row r+1, col c+1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyTab {
    /// The tab's name, e.g. `P&L`.
    pub name: String,
    /// Rows, top down; each a row's cells, left to right.
    pub rows: Vec<Vec<BodyCell>>,
}

/// A spreadsheet's S3 body (`sheet-body.schema.json`, §8.7): display
/// strings and format codes only, no values, no formulas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SheetBody {
    /// The sheet's title.
    pub title: String,
    /// Its tabs, in order.
    pub tabs: Vec<BodyTab>,
}

/// One of S6's five functions (`s6-request.schema.json`, decision 10):
/// never expression text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum S6Fn {
    /// The sum.
    Sum,
    /// The arithmetic mean.
    Average,
    /// The least value.
    Min,
    /// The greatest value.
    Max,
    /// How many cells (all numeric, or the answer is `NON_NUMERIC`).
    Count,
}

impl S6Fn {
    /// The wire spelling, e.g. `AVERAGE`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sum => "SUM",
            Self::Average => "AVERAGE",
            Self::Min => "MIN",
            Self::Max => "MAX",
            Self::Count => "COUNT",
        }
    }
}

/// A cell as S6 names it in a result (`defs.schema.json#/$defs/cell`):
/// the sheet's item id, the tab, 1-based row and column.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellRef {
    /// The sheet's S1/S3 item id.
    pub sheet: String,
    /// The tab's name.
    pub tab: String,
    /// 1-based row (A1 is row 1).
    pub row: u32,
    /// 1-based column (A1 is col 1).
    pub col: u32,
}

/// A cell as S6 asks about it: a [`CellRef`] plus the revision of its
/// sheet memoria indexed (`s6-request.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S6Cell {
    /// The sheet's S1/S3 item id.
    pub sheet: String,
    /// The tab's name.
    pub tab: String,
    /// 1-based row.
    pub row: u32,
    /// 1-based column.
    pub col: u32,
    /// The sheet's revision memoria indexed (opaque, equality only).
    pub revision: String,
}

impl S6Cell {
    /// The cell without its revision, as a result names it.
    #[must_use]
    pub fn cell(&self) -> CellRef {
        CellRef {
            sheet: self.sheet.clone(),
            tab: self.tab.clone(),
            row: self.row,
            col: self.col,
        }
    }
}

/// `POST /s6/aggregate` request body (`s6-request.schema.json`, §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S6Request {
    /// Who is asking, typed as S2's subject.
    pub subject: Subject,
    /// One of the five functions.
    #[serde(rename = "fn")]
    pub function: S6Fn,
    /// 1 to 64 cells (`S6_CELLS_PER_CALL_MAX`).
    pub cells: Vec<S6Cell>,
}

/// S6's one result (`s6-response.schema.json#/properties/result`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE", deny_unknown_fields)]
pub enum S6Result {
    /// Sheets' answer.
    Value {
        /// A decimal string: `-?digits(.digits)?`, no exponent.
        value: String,
        /// The display string, as Sheets renders the value in `format_code`.
        display: String,
        /// The result's format code (`General` for COUNT).
        format_code: String,
    },
    /// The first cell whose sheet is not at the asked revision.
    Stale {
        /// That cell.
        cell: CellRef,
    },
    /// The first cell that holds text or is empty.
    NonNumeric {
        /// That cell.
        cell: CellRef,
    },
    /// Some cell's sheet is not visible to the subject: never which.
    NotVisible,
    /// The sibling cannot say.
    Unknown,
}

impl S6Result {
    /// The wire `type`, e.g. `NOT_VISIBLE`.
    #[must_use]
    pub fn type_str(&self) -> &'static str {
        match self {
            Self::Value { .. } => "VALUE",
            Self::Stale { .. } => "STALE",
            Self::NonNumeric { .. } => "NON_NUMERIC",
            Self::NotVisible => "NOT_VISIBLE",
            Self::Unknown => "UNKNOWN",
        }
    }
}

/// `POST /s6/aggregate` 200 body (`s6-response.schema.json`, §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S6Response {
    /// The kind this sibling keys on (not necessarily the kind asked).
    pub subject_kind: SubjectKind,
    /// Exactly one result.
    pub result: S6Result,
}
