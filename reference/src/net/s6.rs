//! S6, the aggregate call (§6.1 S6 row, §8.7): the request memoria writes and the total decoder of the answer.
//!
//! `POST /s6/aggregate` with `{subject, fn, cells}`; the answer is exactly
//! one `result`: VALUE `{value, display, format_code}`, `STALE(cell)`,
//! `NON_NUMERIC(cell)`, `NOT_VISIBLE` or `UNKNOWN` (the wire the lead
//! decided, `fixtures/contract/README.md`). The decoder is total: a
//! timeout, a non-2xx, a malformed body, an unknown `type` or a subject
//! kind other than the one asked are all UNKNOWN. memoria never reads
//! `value` for display (it shows `display` byte for byte) and never caches
//! a result: it outlives its cells (§8.7).

use serde::{Deserialize, Serialize};

use super::wire::{Subject, SubjectKind, TOKEN_BYTES_MAX};

/// At most this many cells in one S6 call (§6.1: "Cap 64 cells").
pub const S6_CELLS_PER_CALL_MAX: usize = 64;

/// The enumerated functions S6 computes (decision 10: never expression text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Aggregate {
    /// `SUM`.
    #[serde(rename = "SUM")]
    Sum,
    /// `AVERAGE`.
    #[serde(rename = "AVERAGE")]
    Average,
    /// `MIN`.
    #[serde(rename = "MIN")]
    Min,
    /// `MAX`.
    #[serde(rename = "MAX")]
    Max,
    /// `COUNT`.
    #[serde(rename = "COUNT")]
    Count,
}

impl Aggregate {
    /// The wire spelling, e.g. `AVERAGE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Aggregate::Sum => "SUM",
            Aggregate::Average => "AVERAGE",
            Aggregate::Min => "MIN",
            Aggregate::Max => "MAX",
            Aggregate::Count => "COUNT",
        }
    }

    /// How the page names it: `Average`, `Total`, `Highest`, `Lowest`, `Count`.
    pub fn word(self) -> &'static str {
        match self {
            Aggregate::Sum => "Total",
            Aggregate::Average => "Average",
            Aggregate::Min => "Lowest",
            Aggregate::Max => "Highest",
            Aggregate::Count => "Count",
        }
    }
}

/// One operand cell as S6 takes it: 1-based row and column, at the
/// revision memoria indexed (opaque, equality only).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct CellRef {
    /// The sheet's S1/S3 item id.
    pub sheet: String,
    /// The tab's name.
    pub tab: String,
    /// 1-based row.
    pub row: u32,
    /// 1-based column.
    pub col: u32,
    /// The item revision memoria indexed.
    pub revision: String,
}

/// A cell an answer names (STALE, NON_NUMERIC): no revision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedCell {
    /// The sheet's item id.
    pub sheet: String,
    /// The tab's name.
    pub tab: String,
    /// 1-based row.
    pub row: u32,
    /// 1-based column.
    pub col: u32,
}

/// The S6 request body.
#[derive(Debug, Serialize)]
pub struct S6Request<'a> {
    /// The asker, typed as S2's.
    pub subject: &'a Subject,
    /// The function.
    #[serde(rename = "fn")]
    pub function: Aggregate,
    /// 1..=[`S6_CELLS_PER_CALL_MAX`] cells.
    pub cells: &'a [CellRef],
}

/// What S6 answered, decoded: exactly one of five (§6.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum S6Result {
    /// The value Sheets computed.
    Value {
        /// A decimal string; never read for display.
        value: String,
        /// What Sheets would show, shown byte for byte.
        display: String,
        /// The format of the result as Sheets renders it.
        format_code: String,
    },
    /// The first cell whose sheet is not at the revision asked.
    Stale {
        /// That cell.
        cell: NamedCell,
    },
    /// The first cell that holds text or is empty.
    NonNumeric {
        /// That cell.
        cell: NamedCell,
    },
    /// Some cell's sheet is not visible to the subject (which, unsaid).
    NotVisible,
    /// No usable answer.
    Unknown,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WireAnswer {
    subject_kind: SubjectKind,
    result: WireResult,
}

#[derive(Deserialize)]
#[serde(tag = "type", deny_unknown_fields)]
enum WireResult {
    #[serde(rename = "VALUE")]
    Value {
        value: String,
        display: String,
        format_code: String,
    },
    #[serde(rename = "STALE")]
    Stale { cell: NamedCell },
    #[serde(rename = "NON_NUMERIC")]
    NonNumeric { cell: NamedCell },
    #[serde(rename = "NOT_VISIBLE")]
    NotVisible {},
    #[serde(rename = "UNKNOWN")]
    Unknown {},
}

/// True for a decimal string: an optional `-`, digits, an optional `.` and digits.
fn is_decimal(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    !int.is_empty()
        && !frac.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// Decodes one S6 answer to a call that asked as `asked` about `cells`.
/// Total: `None` (no answer: a timeout or a transport error), any status
/// and any bytes give one [`S6Result`]; everything unusable is UNKNOWN. A
/// named cell that was not asked is UNKNOWN too.
pub fn decode_s6(asked: SubjectKind, cells: &[CellRef], answer: Option<(u16, &[u8])>) -> S6Result {
    let Some((200, body)) = answer else {
        return S6Result::Unknown;
    };
    let Ok(wire) = serde_json::from_slice::<WireAnswer>(body) else {
        return S6Result::Unknown;
    };
    if wire.subject_kind != asked {
        return S6Result::Unknown;
    }
    let asked_cell = |c: &NamedCell| {
        cells
            .iter()
            .any(|a| a.sheet == c.sheet && a.tab == c.tab && a.row == c.row && a.col == c.col)
    };
    match wire.result {
        WireResult::Value {
            value,
            display,
            format_code,
        } if is_decimal(&value) && format_code.len() <= TOKEN_BYTES_MAX => S6Result::Value {
            value,
            display,
            format_code,
        },
        WireResult::Value { .. } => S6Result::Unknown,
        WireResult::Stale { cell } if asked_cell(&cell) => S6Result::Stale { cell },
        WireResult::NonNumeric { cell } if asked_cell(&cell) => S6Result::NonNumeric { cell },
        WireResult::Stale { .. } | WireResult::NonNumeric { .. } => S6Result::Unknown,
        WireResult::NotVisible {} => S6Result::NotVisible,
        WireResult::Unknown {} => S6Result::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells() -> Vec<CellRef> {
        vec![CellRef {
            sheet: "sh-4f1a".into(),
            tab: "P&L".into(),
            row: 4,
            col: 7,
            revision: "r7".into(),
        }]
    }

    #[test]
    fn every_answer_decodes_to_one_result_as_the_table_says() {
        let rows: [(Option<(u16, &str)>, &str); 14] = [
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"VALUE","value":"1350000","display":"€1,350,000","format_code":"€#,##0"}}"#,
                )),
                "Value",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"STALE","cell":{"sheet":"sh-4f1a","tab":"P&L","row":4,"col":7}}}"#,
                )),
                "Stale",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"NON_NUMERIC","cell":{"sheet":"sh-4f1a","tab":"P&L","row":4,"col":7}}}"#,
                )),
                "NonNumeric",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"NOT_VISIBLE"}}"#,
                )),
                "NotVisible",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"UNKNOWN"}}"#,
                )),
                "Unknown",
            ),
            (None, "Unknown"),
            (Some((500, "{}")), "Unknown"),
            (Some((400, r#"{"error":"too_many_cells"}"#)), "Unknown"),
            (Some((200, "not json")), "Unknown"),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"PERHAPS"}}"#,
                )),
                "Unknown",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"person_ref","result":{"type":"NOT_VISIBLE"}}"#,
                )),
                "Unknown",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"VALUE","value":"1.3e6","display":"x","format_code":"General"}}"#,
                )),
                "Unknown",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"STALE","cell":{"sheet":"other","tab":"P&L","row":4,"col":7}}}"#,
                )),
                "Unknown",
            ),
            (
                Some((
                    200,
                    r#"{"subject_kind":"address","result":{"type":"NOT_VISIBLE"},"extra":1}"#,
                )),
                "Unknown",
            ),
        ];
        for (answer, want) in rows {
            let got = decode_s6(
                SubjectKind::Address,
                &cells(),
                answer.map(|(s, b)| (s, b.as_bytes())),
            );
            let name = format!("{got:?}");
            assert!(name.starts_with(want), "{answer:?}: {name}");
        }
    }

    #[test]
    fn the_request_is_the_wire_shape() {
        let subject = Subject::address("Ana@Almendra.Studio");
        let body = serde_json::to_string(&S6Request {
            subject: &subject,
            function: Aggregate::Average,
            cells: &cells(),
        })
        .unwrap();
        assert_eq!(
            body,
            r#"{"subject":{"kind":"address","value":"ana@almendra.studio"},"fn":"AVERAGE","cells":[{"sheet":"sh-4f1a","tab":"P&L","row":4,"col":7,"revision":"r7"}]}"#
        );
    }
}
