//! A spreadsheet's S3 body as the wire carries it (§8.7): `application/vnd.oficina.sheet+json`, tabs of rows of cells, and its total decoder.
//!
//! The shape is the wire the lead decided (`fixtures/contract/README.md`):
//! each cell a display string and an optional format code (missing means
//! `General`). [`super::wire::decode_s3`] refuses a sheet body that does not
//! decode here (an S3 failure for that item); `numeric/sheet.rs` chunks one
//! that does.

use serde::Deserialize;

/// The S3 media type of a spreadsheet body (the S6 wire, decided by the lead).
pub const SHEET_MEDIA_TYPE: &str = "application/vnd.oficina.sheet+json";

/// One cell of the S3 body: its display string and format code.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireCell {
    /// What Sheets shows; empty is an empty cell.
    pub display: String,
    /// The format code; missing means `General`.
    #[serde(default)]
    pub format_code: Option<String>,
}

/// One tab of the S3 body.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WireTab {
    /// The tab's name.
    pub name: String,
    /// `rows[r][c]` is row r+1, column c+1.
    pub rows: Vec<Vec<WireCell>>,
}

/// A spreadsheet's S3 body.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SheetBody {
    /// The spreadsheet's title.
    pub title: String,
    /// Its tabs, in order.
    pub tabs: Vec<WireTab>,
}

/// Why a sheet body was refused: an S3 failure for that item.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the sheet body does not decode: {0}")]
pub struct SheetDecodeError(pub String);

impl SheetBody {
    /// Decodes the S3 `body` text of a sheet. Total.
    ///
    /// # Errors
    /// [`SheetDecodeError`] for anything but the wire's shape.
    pub fn decode(body: &str) -> Result<SheetBody, SheetDecodeError> {
        serde_json::from_str(body).map_err(|e| SheetDecodeError(e.to_string()))
    }
}
