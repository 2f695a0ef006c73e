//! The fake Sheets' cell model: tabs of cells holding text or an exact decimal value under a format code, rendered to display strings as Sheets would, and S6's five functions over them (§6.1 S6, §8.7, decision 10).
//!
//! Size: the cell model, its format-code renderer and S6's five functions
//! belong together (a rendered display must be the one S6 returns); the
//! worked example and the statistics table are its fixtures.
//!
//! Sheets computes and memoria never does: this is the Sheets side, so the
//! fake holds a value per numeric cell and evaluates SUM, AVERAGE, MIN, MAX
//! and COUNT over exact rationals (`num`), never floats. Display strings are
//! rendered from the value and the cell's format code by a small subset of
//! Sheets' number-format grammar: a literal prefix and suffix (quoted or
//! not), `#`/`0` digit placeholders, a grouping comma, decimals, trailing
//! scaling commas (`#,##0,` is thousands) and `%`. `General` (or no code)
//! renders the plain decimal. The S3 body carries display strings and format
//! codes only (`sheet-body.schema.json`).
//!
//! [`Tab::table`] builds a tab from a table (a header band and labelled
//! rows) for gates; [`worked_example`] is §8.7's FY2024..FY2026 P&L with
//! Revenue by month, the contract's `sheet-body--fy2024.json` byte for byte.

use num::bigint::BigInt;
use num::rational::BigRational;
use num::traits::{One as _, Signed as _, Zero as _};

use crate::fake::wire::{BodyCell, BodyTab, S6Fn, S6Result, SheetBody, to_compact};

/// The format code of a cell without one, and of every COUNT result
/// (`sheet-body.schema.json`: a missing `format_code` means General).
pub const GENERAL: &str = "General";

/// Most decimal places in an S6 `value` string and in a General display,
/// rounded half away from zero: an AVERAGE such as 4/3 does not terminate.
/// A count of digits (this fake's choice; the wire only says "decimal string").
pub const DECIMALS_MAX: usize = 10;

/// Why a sheet could not be built or changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SheetError {
    /// No tab has this name.
    #[error("no such tab")]
    UnknownTab,
    /// The row or column is outside the tab's grid (1-based).
    #[error("no cell at row {row}, col {col}")]
    OutOfGrid {
        /// 1-based row asked.
        row: u32,
        /// 1-based column asked.
        col: u32,
    },
    /// A value that is not a decimal string (`-?digits(.digits)?`).
    #[error("not a decimal: {0:?}")]
    NotDecimal(String),
}

/// What a cell holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Nothing: displays as the empty string.
    Empty,
    /// Text, displayed as it is (content: never traced).
    Text(String),
    /// An exact decimal value, displayed through the cell's format code.
    Number(BigRational),
}

/// One cell: its content and its format code (`None` is General).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Text, a number, or nothing.
    pub content: Content,
    /// The format code, e.g. `€#,##0`; `None` is General.
    pub format_code: Option<String>,
}

impl Cell {
    /// An empty cell under `format_code`.
    #[must_use]
    pub fn empty(format_code: Option<&str>) -> Self {
        Self {
            content: Content::Empty,
            format_code: format_code.map(str::to_owned),
        }
    }

    /// A text cell, General.
    #[must_use]
    pub fn text(text: &str) -> Self {
        Self {
            content: Content::Text(text.to_owned()),
            format_code: None,
        }
    }

    /// A number cell from a decimal string, e.g. `1350000` or `0.183`.
    ///
    /// # Errors
    /// [`SheetError::NotDecimal`] for anything else.
    pub fn number(decimal: &str, format_code: Option<&str>) -> Result<Self, SheetError> {
        Ok(Self {
            content: Content::Number(
                parse_decimal(decimal).ok_or_else(|| SheetError::NotDecimal(decimal.to_owned()))?,
            ),
            format_code: format_code.map(str::to_owned),
        })
    }

    /// What Sheets shows: the text, the value rendered in the format code,
    /// or the empty string.
    #[must_use]
    pub fn display(&self) -> String {
        match &self.content {
            Content::Empty => String::new(),
            Content::Text(t) => t.clone(),
            Content::Number(v) => render(v, self.format_code.as_deref().unwrap_or(GENERAL)),
        }
    }

    /// The cell's value, when it holds a number.
    #[must_use]
    pub fn value(&self) -> Option<&BigRational> {
        match &self.content {
            Content::Number(v) => Some(v),
            _ => None,
        }
    }
}

/// One tab: a name and a grid of cells, `rows[r][c]` being row r+1, col c+1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tab {
    /// The tab's name, e.g. `P&L` (content: never traced).
    pub name: String,
    /// The grid, top down, left to right; rows may differ in length.
    pub rows: Vec<Vec<Cell>>,
}

impl Tab {
    /// A tab from a table: row 1 is the header band (`header`, text; `""`
    /// is an empty cell), then one row per `(label, values)`: the label in
    /// column 1, then each value in `format_code` — a decimal string is a
    /// number, `""` an empty cell, anything else text.
    #[must_use]
    pub fn table(
        name: &str,
        header: &[&str],
        rows: &[(&str, &[&str])],
        format_code: Option<&str>,
    ) -> Self {
        let text_or_empty = |s: &str| {
            if s.is_empty() {
                Cell::empty(None)
            } else {
                Cell::text(s)
            }
        };
        let mut grid = vec![header.iter().map(|h| text_or_empty(h)).collect::<Vec<_>>()];
        for (label, values) in rows {
            let mut row = vec![text_or_empty(label)];
            row.extend(values.iter().map(|v| {
                if v.is_empty() {
                    Cell::empty(format_code)
                } else {
                    Cell::number(v, format_code).unwrap_or_else(|_| Cell::text(v))
                }
            }));
            grid.push(row);
        }
        Self {
            name: name.to_owned(),
            rows: grid,
        }
    }

    /// The cell at 1-based `row`, `col`, if the grid has one.
    #[must_use]
    pub fn cell(&self, row: u32, col: u32) -> Option<&Cell> {
        let (r, c) = (
            usize::try_from(row).ok()?.checked_sub(1)?,
            usize::try_from(col).ok()?.checked_sub(1)?,
        );
        self.rows.get(r)?.get(c)
    }

    /// The cell at 1-based `row`, `col`, to change it.
    ///
    /// # Errors
    /// [`SheetError::OutOfGrid`].
    pub fn cell_mut(&mut self, row: u32, col: u32) -> Result<&mut Cell, SheetError> {
        let out = SheetError::OutOfGrid { row, col };
        let r = usize::try_from(row)
            .ok()
            .and_then(|r| r.checked_sub(1))
            .ok_or(out.clone())?;
        let c = usize::try_from(col)
            .ok()
            .and_then(|c| c.checked_sub(1))
            .ok_or(out.clone())?;
        self.rows
            .get_mut(r)
            .and_then(|cells| cells.get_mut(c))
            .ok_or(out)
    }

    /// Reformats one column: every cell of column `col` that is not text
    /// (numbers and empty cells; the header band's text stays) takes
    /// `format_code` (`None`: General). Returns how many cells changed.
    pub fn format_column(&mut self, col: u32, format_code: Option<&str>) -> usize {
        let Some(c) = usize::try_from(col).ok().and_then(|c| c.checked_sub(1)) else {
            return 0;
        };
        let mut changed = 0;
        for cell in self.rows.iter_mut().filter_map(|r| r.get_mut(c)) {
            if !matches!(cell.content, Content::Text(_)) {
                cell.format_code = format_code.map(str::to_owned);
                changed += 1;
            }
        }
        changed
    }
}

/// A spreadsheet: a title and its tabs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sheet {
    /// The sheet's title, e.g. `FY2024` (content: never traced).
    pub title: String,
    /// Its tabs, in order.
    pub tabs: Vec<Tab>,
}

impl Sheet {
    /// A sheet of these tabs.
    #[must_use]
    pub fn new(title: &str, tabs: Vec<Tab>) -> Self {
        Self {
            title: title.to_owned(),
            tabs,
        }
    }

    /// The tab named `name`.
    #[must_use]
    pub fn tab(&self, name: &str) -> Option<&Tab> {
        self.tabs.iter().find(|t| t.name == name)
    }

    /// The tab named `name`, to change it.
    ///
    /// # Errors
    /// [`SheetError::UnknownTab`].
    pub fn tab_mut(&mut self, name: &str) -> Result<&mut Tab, SheetError> {
        self.tabs
            .iter_mut()
            .find(|t| t.name == name)
            .ok_or(SheetError::UnknownTab)
    }

    /// The cell at (`tab`, 1-based `row`, `col`), if there is one.
    #[must_use]
    pub fn cell(&self, tab: &str, row: u32, col: u32) -> Option<&Cell> {
        self.tab(tab)?.cell(row, col)
    }

    /// The S3 body (`sheet-body.schema.json`): display strings and format
    /// codes, no values.
    #[must_use]
    pub fn body(&self) -> SheetBody {
        SheetBody {
            title: self.title.clone(),
            tabs: self
                .tabs
                .iter()
                .map(|t| BodyTab {
                    name: t.name.clone(),
                    rows: t
                        .rows
                        .iter()
                        .map(|r| {
                            r.iter()
                                .map(|c| BodyCell {
                                    display: c.display(),
                                    format_code: c.format_code.clone(),
                                })
                                .collect()
                        })
                        .collect(),
                })
                .collect(),
        }
    }

    /// [`Sheet::body`] as the compact JSON text S3's `body` carries.
    #[must_use]
    pub fn body_json(&self) -> String {
        String::from_utf8(to_compact(&self.body())).expect("serde_json writes UTF-8")
    }
}

/// An exact value from a decimal string: `-?digits(.digits)?`, nothing else
/// (no exponent, no grouping, no sign on zero-length digits).
#[must_use]
pub fn parse_decimal(s: &str) -> Option<BigRational> {
    let (negative, unsigned) = s.strip_prefix('-').map_or((false, s), |rest| (true, rest));
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let all_digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty()
        || !all_digits(int)
        || !all_digits(frac)
        || (unsigned.contains('.') && frac.is_empty())
    {
        return None;
    }
    let digits: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = BigInt::from(10u8).pow(u32::try_from(frac.len()).ok()?);
    let v = BigRational::new(digits, scale);
    Some(if negative { -v } else { v })
}

/// `|v|` rounded half away from zero to `decimals` places, as
/// `(integer digits, fraction digits)`, the fraction zero-padded.
fn digits(v: &BigRational, decimals: usize) -> (String, String) {
    let scale = BigInt::from(10u8).pow(u32::try_from(decimals).unwrap_or(u32::MAX));
    let scaled = (v.abs() * BigRational::from_integer(scale.clone()))
        .round()
        .to_integer();
    let int = (&scaled / &scale).to_string();
    let frac = if decimals == 0 {
        String::new()
    } else {
        let frac = (&scaled % &scale).to_string();
        format!("{frac:0>decimals$}")
    };
    (int, frac)
}

/// The wire's decimal string for `v` (`s6-response.schema.json`'s `value`):
/// at most [`DECIMALS_MAX`] places, rounded half away from zero, trailing
/// zeros dropped, no `-0`.
#[must_use]
pub fn decimal_string(v: &BigRational) -> String {
    let (int, frac) = digits(v, DECIMALS_MAX);
    let frac = frac.trim_end_matches('0');
    let zero = int == "0" && frac.is_empty();
    let sign = if v.is_negative() && !zero { "-" } else { "" };
    if frac.is_empty() {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{frac}")
    }
}

/// A parsed number format: literal prefix and suffix, grouping, decimals,
/// thousands scaling and percent.
#[derive(Debug, Default)]
struct Format {
    prefix: String,
    suffix: String,
    group: bool,
    int_zeros: usize,
    decimals_min: usize,
    decimals_max: usize,
    scale_thousands: u32,
    percent: bool,
}

fn parse_format(code: &str) -> Format {
    let mut f = Format::default();
    let section = code.split(';').next().unwrap_or("");
    let mut chars = section.chars();
    let mut phase = 0; // 0 prefix, 1 number, 2 suffix
    let mut after_point = false;
    let mut pending_commas = 0u32;
    let mut seen_digit = false;
    while let Some(ch) = chars.next() {
        let literal = match ch {
            '"' => {
                let mut quoted = String::new();
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                    quoted.push(q);
                }
                Some(quoted)
            }
            '\\' => chars.next().map(String::from),
            '%' => {
                f.percent = true;
                Some("%".to_owned())
            }
            '#' | '0' | '.' if phase < 2 => {
                phase = 1;
                if pending_commas > 0 && seen_digit {
                    f.group = true;
                    pending_commas = 0;
                }
                match ch {
                    '.' => after_point = true,
                    '0' if after_point => {
                        f.decimals_min += 1;
                        f.decimals_max += 1;
                    }
                    '#' if after_point => f.decimals_max += 1,
                    '0' => {
                        f.int_zeros += 1;
                        seen_digit = true;
                    }
                    _ => seen_digit = true,
                }
                None
            }
            ',' if phase == 1 => {
                pending_commas += 1;
                None
            }
            other => Some(other.to_string()),
        };
        if let Some(text) = literal {
            if phase == 1 {
                phase = 2;
            }
            if phase == 0 {
                f.prefix.push_str(&text);
            } else {
                f.suffix.push_str(&text);
            }
        }
    }
    f.scale_thousands = pending_commas;
    f
}

/// `v` as Sheets displays it under `format_code` (the subset this module
/// names); `General` renders [`decimal_string`].
#[must_use]
pub fn render(v: &BigRational, format_code: &str) -> String {
    if format_code.eq_ignore_ascii_case(GENERAL) || format_code.is_empty() {
        return decimal_string(v);
    }
    let f = parse_format(format_code);
    let mut x = v.clone();
    if f.percent {
        x *= BigRational::from_integer(BigInt::from(100u8));
    }
    for _ in 0..f.scale_thousands {
        x /= BigRational::from_integer(BigInt::from(1000u16));
    }
    let (int, frac) = digits(&x, f.decimals_max);
    let mut frac = frac;
    while frac.len() > f.decimals_min && frac.ends_with('0') {
        frac.pop();
    }
    let int = if int == "0" && f.int_zeros == 0 {
        String::new()
    } else {
        format!("{int:0>width$}", width = f.int_zeros)
    };
    let int = if f.group { group_thousands(&int) } else { int };
    let number = if frac.is_empty() {
        int
    } else {
        format!("{int}.{frac}")
    };
    let zero = number.bytes().all(|b| !(b'1'..=b'9').contains(&b));
    let sign = if x.is_negative() && !zero { "-" } else { "" };
    format!("{sign}{}{number}{}", f.prefix, f.suffix)
}

fn group_thousands(int: &str) -> String {
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// S6's value over operands already checked numeric, in request order:
/// the function applied to exact values, rendered in the first operand's
/// format code (one format for a single-format set; for a mixed set, this
/// fake's choice), COUNT in General (§6.1, this project's wire).
///
/// # Panics
/// Never for a non-empty `operands`; an empty one answers COUNT 0 or SUM 0
/// and UNKNOWN for the rest.
#[must_use]
pub fn aggregate(function: S6Fn, operands: &[(&BigRational, Option<&str>)]) -> S6Result {
    let Some(first) = operands.first() else {
        return match function {
            S6Fn::Count | S6Fn::Sum => value(&BigRational::zero(), GENERAL),
            _ => S6Result::Unknown,
        };
    };
    let values = operands.iter().map(|(v, _)| (*v).clone());
    let result = match function {
        S6Fn::Sum => values.fold(BigRational::zero(), |a, b| a + b),
        S6Fn::Average => {
            values.fold(BigRational::zero(), |a, b| a + b)
                / BigRational::from_integer(BigInt::from(operands.len()))
        }
        S6Fn::Min => values.min().unwrap_or_else(BigRational::zero),
        S6Fn::Max => values.max().unwrap_or_else(BigRational::zero),
        S6Fn::Count => BigRational::from_integer(BigInt::from(operands.len())),
    };
    let format = if function == S6Fn::Count {
        GENERAL
    } else {
        first.1.unwrap_or(GENERAL)
    };
    value(&result, format)
}

fn value(v: &BigRational, format_code: &str) -> S6Result {
    S6Result::Value {
        value: decimal_string(v),
        display: render(v, format_code),
        format_code: format_code.to_owned(),
    }
}

/// The months of §8.7's worked example, as the header band spells them.
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Revenue by month, in euros, FY2024..FY2026 (made up for this fixture;
/// December 2026 not yet booked at the fake's epoch, 2026-11-30).
const REVENUE: [[&str; 12]; 3] = [
    [
        "1200000", "1150000", "1240000", "1280000", "1310000", "1350000", "1390000", "1180000",
        "1300000", "1330000", "1370000", "1450000",
    ],
    [
        "1250000", "1210000", "1290000", "1330000", "1360000", "1400000", "1440000", "1230000",
        "1350000", "1380000", "1420000", "1500000",
    ],
    [
        "1290000", "1260000", "1310000", "1350000", "1280000", "1300000", "1470000", "1260000",
        "1380000", "1410000", "1440000", "",
    ],
];

/// Costs by month, in euros.
const COSTS: [[&str; 12]; 3] = [
    [
        "980000", "950000", "1010000", "1040000", "1060000", "1090000", "1120000", "990000",
        "1060000", "1080000", "1110000", "1170000",
    ],
    [
        "1020000", "990000", "1050000", "1080000", "1100000", "1130000", "1160000", "1030000",
        "1100000", "1120000", "1150000", "1210000",
    ],
    [
        "1050000", "1020000", "1080000", "1110000", "1130000", "1160000", "1190000", "1060000",
        "1130000", "1150000", "1180000", "",
    ],
];

/// Margin by month, as a fraction (typed in, not a formula: the fake holds values).
const MARGIN: [[&str; 12]; 3] = [
    [
        "0.183", "0.174", "0.185", "0.188", "0.191", "0.193", "0.194", "0.161", "0.185", "0.188",
        "0.190", "0.193",
    ],
    [
        "0.184", "0.182", "0.186", "0.188", "0.191", "0.193", "0.194", "0.163", "0.185", "0.188",
        "0.190", "0.193",
    ],
    [
        "0.186", "0.190", "0.176", "0.178", "0.117", "0.108", "0.190", "0.159", "0.181", "0.184",
        "0.181", "",
    ],
];

/// Headcount by month, General.
const HEADCOUNT: [[&str; 12]; 3] = [
    [
        "12", "12", "12", "13", "13", "13", "14", "14", "14", "14", "15", "15",
    ],
    [
        "15", "15", "16", "16", "16", "17", "17", "17", "17", "18", "18", "18",
    ],
    [
        "18", "18", "19", "19", "19", "19", "20", "20", "20", "21", "21", "",
    ],
];

/// The worked example's years, in order.
pub const WORKED_EXAMPLE_YEARS: [u16; 3] = [2024, 2025, 2026];

/// §8.7's worked example: one sheet per year, `(item id, sheet)` —
/// `sh-fy2024`, `sh-fy2025`, `sh-fy2026` — each titled `FY<year>` with one
/// tab `P&L`: a header band of months (`Jan 2024` … `Dec 2024`) in row 1,
/// then Revenue (row 2) and Costs (row 3) in `€#,##0`, Margin (row 4) in
/// `0.0%` and Headcount (row 5) in General. June is column 7. Average June
/// revenue over the three years is €1,350,000.
#[must_use]
pub fn worked_example() -> Vec<(String, Sheet)> {
    WORKED_EXAMPLE_YEARS
        .iter()
        .enumerate()
        .map(|(i, year)| {
            let header: Vec<String> = std::iter::once(String::new())
                .chain(MONTHS.iter().map(|m| format!("{m} {year}")))
                .collect();
            let header: Vec<&str> = header.iter().map(String::as_str).collect();
            let mut tab = Tab::table(
                "P&L",
                &header,
                &[("Revenue", &REVENUE[i]), ("Costs", &COSTS[i])],
                Some("€#,##0"),
            );
            let margin = Tab::table("", &[], &[("Margin", &MARGIN[i])], Some("0.0%"));
            let heads = Tab::table("", &[], &[("Headcount", &HEADCOUNT[i])], None);
            tab.rows.extend(margin.rows.into_iter().skip(1));
            tab.rows.extend(heads.rows.into_iter().skip(1));
            (
                format!("sh-fy{year}"),
                Sheet::new(&format!("FY{year}"), vec![tab]),
            )
        })
        .collect()
}

/// A sheet from a monthly statistics table in CSV (the shape of
/// `fixtures/corpus/fetch-sheets-stats`'s table): a header line whose
/// first field names the month column and whose others name series, then
/// one line per month, `YYYY-MM-DD,<decimal>,…`. One tab per year, named
/// for it; row 1 the header band (`Jan 2006` … as the months present);
/// one row per series, labelled `<series> (thousands)`, its cells in
/// `format_code`. No quoting: a field holding a comma or a quote is
/// refused.
///
/// # Errors
/// [`SheetError::NotDecimal`] naming the first field that is not a
/// decimal, a month that is not `YYYY-MM-DD`, or a line of the wrong width.
pub fn sheet_from_monthly_csv(
    title: &str,
    csv: &str,
    format_code: &str,
) -> Result<Sheet, SheetError> {
    let mut lines = csv.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let series = header.get(1..).unwrap_or_default();
    // year -> (month labels, per-series values)
    let mut years: Vec<(String, Vec<String>, Vec<Vec<String>>)> = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != header.len() || line.contains('"') {
            return Err(SheetError::NotDecimal(format!(
                "a line of {} fields",
                fields.len()
            )));
        }
        let date = fields[0];
        let (year, month) = date
            .get(0..4)
            .zip(date.get(5..7).and_then(|m| m.parse::<usize>().ok()))
            .filter(|(y, m)| y.bytes().all(|b| b.is_ascii_digit()) && (1..=12).contains(m))
            .ok_or_else(|| SheetError::NotDecimal(date.to_owned()))?;
        if years.last().is_none_or(|(y, _, _)| y != year) {
            years.push((year.to_owned(), Vec::new(), vec![Vec::new(); series.len()]));
        }
        let (_, months, values) = years.last_mut().expect("pushed above");
        months.push(format!("{} {year}", MONTHS[month - 1]));
        for (column, field) in values.iter_mut().zip(&fields[1..]) {
            parse_decimal(field).ok_or_else(|| SheetError::NotDecimal((*field).to_owned()))?;
            column.push((*field).to_owned());
        }
    }
    let tabs = years
        .into_iter()
        .map(|(year, months, values)| {
            let header: Vec<&str> = std::iter::once("")
                .chain(months.iter().map(String::as_str))
                .collect();
            let labels: Vec<String> = series
                .iter()
                .map(|s| format!("{} (thousands)", s.replace('_', " ")))
                .collect();
            let cells: Vec<Vec<&str>> = values
                .iter()
                .map(|v| v.iter().map(String::as_str).collect())
                .collect();
            let rows: Vec<(&str, &[&str])> = labels
                .iter()
                .map(String::as_str)
                .zip(cells.iter().map(Vec::as_slice))
                .collect();
            Tab::table(&year, &header, &rows, Some(format_code))
        })
        .collect();
    Ok(Sheet::new(title, tabs))
}

/// Whether `v` is a whole number (for callers that want to say so).
#[must_use]
pub fn is_whole(v: &BigRational) -> bool {
    v.denom().is_one()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> BigRational {
        parse_decimal(s).expect("a decimal")
    }

    #[test]
    fn each_format_code_renders_as_sheets_displays_it() {
        let table = [
            ("1350000", "€#,##0", "€1,350,000"),
            ("1350000.5", "€#,##0", "€1,350,001"),
            ("-1200", "€#,##0", "-€1,200"),
            ("1350", "k€#,##0", "k€1,350"),
            ("1350000", "#,##0,\"k€\"", "1,350k€"),
            ("1350000", "#,##0,", "1,350"),
            ("0.183", "0.0%", "18.3%"),
            ("0.19", "0.0%", "19.0%"),
            ("0.0005", "0.0%", "0.1%"),
            ("1234.5", "#,##0.00", "1,234.50"),
            ("1234.5", "#,##0.##", "1,234.5"),
            ("1234", "0", "1234"),
            ("1350", "General", "1350"),
            ("4.5", "General", "4.5"),
            ("0", "€#,##0", "€0"),
            ("-0.4", "€#,##0", "€0"),
        ];
        for (v, code, want) in table {
            assert_eq!(render(&d(v), code), want, "{v} in {code}");
        }
    }

    #[test]
    fn a_value_string_is_a_decimal_of_at_most_ten_places_without_exponent_or_negative_zero() {
        let third = d("4") / d("3");
        assert_eq!(decimal_string(&third), "1.3333333333");
        assert_eq!(decimal_string(&d("1350000")), "1350000");
        assert_eq!(decimal_string(&d("0.1900")), "0.19");
        assert_eq!(decimal_string(&d("-0.00000000001")), "0");
        assert_eq!(decimal_string(&d("-2.5")), "-2.5");
        for bad in ["", "1.", ".5", "1e6", "1,000", "--1", "+1", " 1"] {
            assert!(parse_decimal(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn the_five_functions_answer_in_the_first_operands_format_and_count_in_general() {
        let (a, b, c) = (d("1350000"), d("1400000"), d("1300000"));
        let eur = Some("€#,##0");
        let ops = [(&a, eur), (&b, eur), (&c, eur)];
        let shown = |f| match aggregate(f, &ops) {
            S6Result::Value {
                value,
                display,
                format_code,
            } => format!("{value} {display} {format_code}"),
            other => format!("{other:?}"),
        };
        assert_eq!(shown(S6Fn::Average), "1350000 €1,350,000 €#,##0");
        assert_eq!(shown(S6Fn::Sum), "4050000 €4,050,000 €#,##0");
        assert_eq!(shown(S6Fn::Min), "1300000 €1,300,000 €#,##0");
        assert_eq!(shown(S6Fn::Max), "1400000 €1,400,000 €#,##0");
        assert_eq!(shown(S6Fn::Count), "3 3 General");
    }

    #[test]
    fn the_worked_example_s_fy2024_body_is_the_contract_example_byte_for_byte() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/contract/examples/sheet-body--fy2024.json"
        );
        let want = std::fs::read_to_string(path).expect("the contract example");
        let sheets = worked_example();
        assert_eq!(sheets[0].0, "sh-fy2024");
        assert_eq!(sheets[0].1.body_json(), want.trim_end());
        let june = sheets.iter().map(|(_, s)| {
            s.cell("P&L", 2, 7)
                .and_then(Cell::value)
                .cloned()
                .expect("June revenue")
        });
        let june: Vec<BigRational> = june.collect();
        let ops: Vec<(&BigRational, Option<&str>)> =
            june.iter().map(|v| (v, Some("€#,##0"))).collect();
        assert_eq!(
            aggregate(S6Fn::Average, &ops),
            S6Result::Value {
                value: "1350000".into(),
                display: "€1,350,000".into(),
                format_code: "€#,##0".into()
            }
        );
        assert_eq!(
            sheets[2].1.cell("P&L", 2, 13).map(Cell::display).as_deref(),
            Some("")
        );
    }

    #[test]
    fn reformatting_a_column_changes_numbers_and_empty_cells_and_leaves_the_header_text() {
        let mut tab = Tab::table(
            "T",
            &["", "Jun 2024"],
            &[("Revenue", &["1350"])],
            Some("€#,##0"),
        );
        assert_eq!(tab.format_column(2, Some("k€#,##0")), 1);
        assert_eq!(
            tab.cell(2, 2).map(Cell::display).as_deref(),
            Some("k€1,350")
        );
        assert_eq!(
            tab.cell(1, 2).map(Cell::display).as_deref(),
            Some("Jun 2024")
        );
        assert!(tab.cell_mut(3, 1).is_err());
        assert!(tab.cell(0, 1).is_none());
    }
}
