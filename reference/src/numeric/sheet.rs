//! Chunking a spreadsheet's S3 body (§8.7): one structure chunk per tab, one region-row chunk per row of a header-plus-block region, and the structure catalogue the numeric route looks slots up in.
//!
//! The body is `application/vnd.oficina.sheet+json`, decoded by
//! [`crate::net::sheet`] (the wire the lead decided,
//! `fixtures/contract/README.md`): tabs of rows of cells, each cell a
//! display string and an optional format code (missing means `General`).
//! memoria indexes display strings only; it never reads a value, never
//! parses a display string back into a number (§8.7: a second parser is a
//! second calculator), and never formats one.
//!
//! Header detection is deterministic and conservative. On each tab:
//!
//! - the **header band** is the first non-empty row; it is a header when
//!   every non-empty cell right of column A carries a letter or is a bare
//!   four-digit year, and there are at least two of them, all different;
//! - the **block** is the run of rows below it whose column A carries a
//!   letter (the row label, the leftmost text column) and which hold at
//!   least one non-empty cell under a header; it ends at the first row that
//!   is not so;
//! - **ambiguous** is a second header-like row straight under the band (two
//!   competing bands, e.g. years over months): then the tab is indexed as
//!   structure only and no fact is made.
//!
//! A region row renders as facts: `FY2024 › P&L › Revenue: Jan 2024 = 1,200; Jun 2024 €k = 1,350`.
//! Date-like headers (`Jun 2024`, `June 2024`, `2024-06`, `2024`) are
//! canonicalised (`2024-06`, `2024`) and both spellings go into the
//! structure chunk, so `2024-06` and `June` are both literal BM25 terms.

use crate::net::sheet::{SheetBody, WireCell};
use crate::search::chunk::Chunk;
// The catalogue and a chunked sheet are what the store seals, so they sit
// below in `storage/store/sheets.rs`; here is their home by name.
pub use crate::storage::store::{Catalogue, CatalogueCell, ChunkedSheet};

/// Most facts one region-row chunk carries; a longer row takes several
/// chunks, each with its label. This project's number: 60 facts of a few
/// words each stay under [`crate::search::chunk::CHUNK_WORDS_TARGET`].
pub const FACTS_PER_CHUNK_MAX: usize = 60;

/// Most rows and columns read from one tab; past them the tab is indexed
/// as structure only. This project's number, bounding a chunking pass.
pub const TAB_CELLS_MAX: usize = 100_000;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// The month (1..=12) a word names, as a prefix of at least three letters
/// of its English name (`Jun`, `June`, `Sept`), or `None`.
pub fn month_of(word: &str) -> Option<u32> {
    const FULL: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let w = word
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    if w.len() < 3 {
        return None;
    }
    FULL.iter()
        .position(|f| f.starts_with(&w))
        .filter(|i| MONTHS[*i] == &w[..3])
        .map(|i| i as u32 + 1)
}

/// A bare four-digit year 1900..=2199, or `None`.
pub fn year_of(word: &str) -> Option<u32> {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    (w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))
        .then(|| w.parse::<u32>().ok())
        .flatten()
        .filter(|y| (1900..=2199).contains(y))
}

/// The canonical period of a header: `Jun 2024`, `June 2024`, `2024 Jun`
/// and `2024-06` are `2024-06`; a bare `2024` is `2024`; other words in the
/// header (a unit such as `€k`) are allowed beside them. Two months or two
/// years in one header are not a period.
pub fn canonical_period(header: &str) -> Option<String> {
    let mut months = vec![];
    let mut years = vec![];
    for word in header.split(|c: char| c.is_whitespace() || c == '/') {
        if let Some((y, m)) = word.split_once('-')
            && let (Some(y), Some(m)) = (year_of(y), m.parse::<u32>().ok())
            && (1..=12).contains(&m)
        {
            years.push(y);
            months.push(m);
            continue;
        }
        if let Some(y) = year_of(word) {
            years.push(y);
        } else if let Some(m) = month_of(word) {
            months.push(m);
        }
    }
    match (years.as_slice(), months.as_slice()) {
        ([y], [m]) if (1..=12).contains(m) => Some(format!("{y:04}-{m:02}")),
        ([y], []) => Some(format!("{y:04}")),
        _ => None,
    }
}

fn has_letter(s: &str) -> bool {
    s.chars().any(char::is_alphabetic)
}

fn is_header_cell(s: &str) -> bool {
    let s = s.trim();
    !s.is_empty() && (has_letter(s) || year_of(s).is_some())
}

/// The column letters of a 1-based column: 1 is `A`, 27 is `AA`.
pub fn column_letters(mut col: u32) -> String {
    let mut out = Vec::new();
    while col > 0 {
        let rem = (col - 1) % 26;
        out.push(b'A' + rem as u8);
        col = (col - 1) / 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A format code named in words, for the structure chunk (§8.7: "number
/// formats named in words"), e.g. `€#,##0` is "euros, grouped".
pub fn format_in_words(code: &str) -> String {
    let mut words = vec![];
    let token = super::units::format_token(code);
    match token.as_deref() {
        Some(t) => words.push(super::units::token_in_words(t)),
        None if code == "General" => words.push("general (no unit)".to_string()),
        None => words.push("plain number".to_string()),
    }
    if code.contains(",##") || code.contains("#,#") {
        words.push("grouped".into());
    }
    if let Some(dot) = code.find('.') {
        let places = code[dot + 1..].chars().take_while(|c| *c == '0').count();
        if places > 0 {
            words.push(format!(
                "{places} decimal place{}",
                if places == 1 { "" } else { "s" }
            ));
        }
    }
    words.join(", ")
}

fn cell(rows: &[Vec<WireCell>], r: usize, c: usize) -> Option<&WireCell> {
    rows.get(r).and_then(|row| row.get(c))
}

fn display(rows: &[Vec<WireCell>], r: usize, c: usize) -> &str {
    cell(rows, r, c).map_or("", |x| x.display.trim())
}

fn row_is_empty(row: &[WireCell]) -> bool {
    row.iter().all(|c| c.display.trim().is_empty())
}

/// Whether row `r` reads as a header band: at least two non-empty cells
/// right of column A, every one a header cell, all different.
fn is_header_row(rows: &[Vec<WireCell>], r: usize) -> bool {
    let Some(row) = rows.get(r) else {
        return false;
    };
    let heads: Vec<&str> = row
        .iter()
        .skip(1)
        .map(|c| c.display.trim())
        .filter(|d| !d.is_empty())
        .collect();
    let mut unique = heads.clone();
    unique.sort_unstable();
    unique.dedup();
    heads.len() >= 2 && heads.iter().all(|h| is_header_cell(h)) && unique.len() == heads.len()
}

/// Chunks a decoded sheet (module documentation). Total; deterministic.
pub fn chunk_sheet(sheet: &SheetBody) -> ChunkedSheet {
    let mut chunks: Vec<Chunk> = vec![];
    let mut catalogue = Catalogue {
        title: sheet.title.clone(),
        cells: vec![],
    };
    for tab in &sheet.tabs {
        let trail = vec![sheet.title.clone(), tab.name.clone()];
        let prefix = format!("{} › {}", sheet.title, tab.name);
        let rows = &tab.rows;
        let width = rows.iter().map(Vec::len).max().unwrap_or(0);
        let too_big = rows.len().saturating_mul(width) > TAB_CELLS_MAX;
        let band = rows.iter().position(|r| !row_is_empty(r));
        let header = band.filter(|b| !too_big && is_header_row(rows, *b));
        let ambiguous = header.is_some_and(|b| is_header_row(rows, b + 1));
        // The block under an unambiguous header band.
        let mut block = vec![];
        if let (Some(h), false) = (header, ambiguous) {
            let mut r = h + 1;
            while r < rows.len() {
                let label = display(rows, r, 0);
                let any = (1..width)
                    .any(|c| !display(rows, h, c).is_empty() && !display(rows, r, c).is_empty());
                if !has_letter(label) || !any {
                    break;
                }
                block.push(r);
                r += 1;
            }
        }
        // The structure chunk.
        let mut s = vec![format!(
            "{prefix}: tab {} of sheet {}, {} rows × {} columns.",
            tab.name,
            sheet.title,
            rows.len(),
            width
        )];
        if let Some(b) = band {
            let heads: Vec<String> = (0..width)
                .map(|c| display(rows, b, c).to_string())
                .filter(|d| !d.is_empty())
                .collect();
            s.push(format!(
                "Header band (row {}): {}.",
                b + 1,
                heads.join(" | ")
            ));
            if ambiguous {
                let next: Vec<String> = (0..width)
                    .map(|c| display(rows, b + 1, c).to_string())
                    .filter(|d| !d.is_empty())
                    .collect();
                s.push(format!(
                    "A second header band (row {}): {}. Two bands compete, so no row is read as facts.",
                    b + 2,
                    next.join(" | ")
                ));
            }
            let dates: Vec<String> = (1..width)
                .filter_map(|c| {
                    let d = display(rows, b, c);
                    canonical_period(d).map(|p| format!("{d} ({p})"))
                })
                .collect();
            if !dates.is_empty() {
                s.push(format!("Dates: {}.", dates.join("; ")));
            }
        }
        let labels: Vec<&str> = rows
            .iter()
            .enumerate()
            .filter(|(r, _)| Some(*r) != band)
            .map(|(r, _)| display(rows, r, 0))
            .filter(|d| has_letter(d))
            .collect();
        if !labels.is_empty() {
            s.push(format!("Row labels (column A): {}.", labels.join("; ")));
        }
        let mut formats: Vec<String> = rows
            .iter()
            .flatten()
            .filter(|c| !c.display.trim().is_empty())
            .map(|c| c.format_code.clone().unwrap_or_else(|| "General".into()))
            .collect();
        formats.sort();
        formats.dedup();
        if !formats.is_empty() {
            let named: Vec<String> = formats
                .iter()
                .map(|f| format!("{f} ({})", format_in_words(f)))
                .collect();
            s.push(format!("Number formats: {}.", named.join("; ")));
        }
        push_chunk(&mut chunks, &trail, s.join("\n"));
        // The region-row chunks.
        let Some(h) = header.filter(|_| !ambiguous) else {
            continue;
        };
        for &r in &block {
            let label = display(rows, r, 0).to_string();
            let facts: Vec<(u32, String)> = (1..width)
                .filter_map(|c| {
                    let head = display(rows, h, c);
                    let value = display(rows, r, c);
                    (!head.is_empty() && !value.is_empty())
                        .then(|| (c as u32 + 1, format!("{head} = {value}")))
                })
                .collect();
            for piece in facts.chunks(FACTS_PER_CHUNK_MAX) {
                let ordinal = chunks.len() as u32;
                let text = format!(
                    "{prefix} › {label}: {}",
                    piece
                        .iter()
                        .map(|(_, f)| f.as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                );
                for (col, _) in piece {
                    let c = *col as usize - 1;
                    let wire = cell(rows, r, c);
                    let head = display(rows, h, c).to_string();
                    catalogue.cells.push(CatalogueCell {
                        tab: tab.name.clone(),
                        row: r as u32 + 1,
                        col: *col,
                        row_label: label.clone(),
                        period: canonical_period(&head),
                        column_header: head,
                        format_code: wire
                            .and_then(|w| w.format_code.clone())
                            .unwrap_or_else(|| "General".into()),
                        display: display(rows, r, c).to_string(),
                        ordinal,
                    });
                }
                push_chunk(&mut chunks, &trail, text);
            }
        }
    }
    ChunkedSheet { chunks, catalogue }
}

fn push_chunk(chunks: &mut Vec<Chunk>, trail: &[String], text: String) {
    chunks.push(Chunk {
        ordinal: chunks.len() as u32,
        trail: trail.to_vec(),
        words: text.split_whitespace().count() as u32,
        text,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::sheet::WireTab;
    use expect_test::expect;

    fn sheet(rows: &[&[(&str, Option<&str>)]]) -> SheetBody {
        SheetBody {
            title: "FY2024".into(),
            tabs: vec![WireTab {
                name: "P&L".into(),
                rows: rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|(d, f)| WireCell {
                                display: (*d).into(),
                                format_code: f.map(str::to_string),
                            })
                            .collect()
                    })
                    .collect(),
            }],
        }
    }

    #[test]
    fn a_header_plus_block_tab_gives_a_structure_chunk_and_one_fact_chunk_per_row() {
        let s = sheet(&[
            &[("", None), ("Jan 2024", None), ("Jun 2024 €k", None)],
            &[
                ("Revenue", None),
                ("1,200", Some("#,##0")),
                ("1,350", Some("General")),
            ],
            &[("Costs", None), ("900", None), ("950", None)],
        ]);
        let out = chunk_sheet(&s);
        let texts: Vec<&str> = out.chunks.iter().map(|c| c.text.as_str()).collect();
        expect![[r#"
            [
                "FY2024 › P&L: tab P&L of sheet FY2024, 3 rows × 3 columns.\nHeader band (row 1): Jan 2024 | Jun 2024 €k.\nDates: Jan 2024 (2024-01); Jun 2024 €k (2024-06).\nRow labels (column A): Revenue; Costs.\nNumber formats: #,##0 (plain number, grouped); General (general (no unit)).",
                "FY2024 › P&L › Revenue: Jan 2024 = 1,200; Jun 2024 €k = 1,350",
                "FY2024 › P&L › Costs: Jan 2024 = 900; Jun 2024 €k = 950",
            ]
        "#]]
        .assert_debug_eq(&texts);
        assert_eq!(out.catalogue.cells.len(), 4);
        let c = &out.catalogue.cells[1];
        assert_eq!(
            (c.row, c.col, c.period.as_deref(), c.ordinal),
            (2, 3, Some("2024-06"), 1)
        );
    }

    #[test]
    fn two_competing_header_bands_are_indexed_as_structure_and_make_no_fact() {
        let s = sheet(&[
            &[("", None), ("2024", None), ("2025", None)],
            &[("", None), ("Jun", None), ("Jul", None)],
            &[("Revenue", None), ("1", None), ("2", None)],
        ]);
        let out = chunk_sheet(&s);
        assert_eq!(out.chunks.len(), 1);
        assert!(out.chunks[0].text.contains("Two bands compete"));
        assert!(out.catalogue.cells.is_empty());
    }

    #[test]
    fn periods_canonicalise_as_a_table_says() {
        let rows = [
            ("Jun 2024", Some("2024-06")),
            ("June 2024", Some("2024-06")),
            ("2024-06", Some("2024-06")),
            ("2024 Sept", Some("2024-09")),
            ("Jun 2024 €k", Some("2024-06")),
            ("2024", Some("2024")),
            ("Revenue", None),
            ("Jun Jul 2024", None),
            ("Ju 2024", Some("2024")),
        ];
        for (header, want) in rows {
            assert_eq!(canonical_period(header).as_deref(), want, "{header}");
        }
    }

    #[test]
    fn a_body_that_is_not_the_wire_shape_is_refused() {
        assert!(SheetBody::decode("{\"title\":\"x\"}").is_err());
        assert!(SheetBody::decode("not json").is_err());
        assert!(
            SheetBody::decode(
                r#"{"title":"x","tabs":[{"name":"t","rows":[[{"display":"a","value":1}]]}]}"#
            )
            .is_err()
        );
    }
}
