//! A document's own date: the time its source gives (a sibling's revision time, a front matter `date:`, a file's modification time), the import time only when it gives none, and the words that say which (§8.1 "date"; issue 31).
//!
//! A sibling's S1 row and S1a item carry `touched_at`, the time of the
//! revision memoria fetches (§6.1); an imported file has a modification
//! time; a Markdown document may name its own date in its front matter.
//! What a person wrote in a document is content, so the store keeps the
//! date sealed whatever its kind ([`crate::storage::seal::Purpose::DocumentDate`]);
//! the plaintext `created_at`/`updated_at` stay what §3.2 lists, ingest
//! and update timestamps.
//!
//! The front matter is read for one key only, a top-level `date:` (YAML) or
//! `date =` (TOML) whose value is a calendar date, optionally with a time
//! and a `Z` or `±HH:MM` offset. A YAML parser for one scalar would be a
//! new dependency; anything this reader does not take is no date, and the
//! next source in line is used.

use pulldown_cmark::{Event, Options, Parser, Tag};

/// YAML (`---`) and TOML (`+++`) front matter: read at a document's first
/// byte only ([`front_matter_len`]).
pub const FRONT_MATTER_OPTIONS: Options = Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
    .union(Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS);

/// The length in bytes of the front matter `text` opens with, through the
/// end of its closing line; 0 when it opens with none.
///
/// Front matter exists only at the very start of a file (issue 32; CommonMark
/// tools and static-site generators agree): a `---` or `+++` first line, then
/// a line that is not blank, up to the first `---` or `...` (`+++` for TOML)
/// line, as `pulldown-cmark` reads a metadata block. `pulldown-cmark` itself
/// opens one at any block start, so a thematic break in the middle of a
/// document would swallow the headings up to the next `---`: every reader
/// here gives it only this prefix with [`FRONT_MATTER_OPTIONS`] ([`events`]).
/// Total; parses at most the prefix up to the first closing line.
pub fn front_matter_len(text: &str) -> usize {
    let fence = match text.as_bytes().get(..3) {
        Some(b"---") => "---",
        Some(b"+++") => "+++",
        _ => return 0,
    };
    // The first closing line after the opening one bounds what is parsed.
    let mut end = None;
    let mut at = text.find('\n').map_or(text.len(), |i| i + 1);
    while at < text.len() {
        let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
        let line = text[at..line_end]
            .trim_end_matches(['\n', '\r'])
            .trim_end_matches(' ');
        if line == fence || (fence == "---" && line == "...") {
            end = Some(line_end);
            break;
        }
        at = line_end;
    }
    let Some(end) = end else { return 0 };
    match Parser::new_ext(&text[..end], FRONT_MATTER_OPTIONS)
        .into_offset_iter()
        .next()
    {
        Some((Event::Start(Tag::MetadataBlock(_)), range)) if range.start == 0 => end,
        _ => 0,
    }
}

/// Where a document's date came from, and so the words a page shows with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DateKind {
    /// The sibling's revision time (`touched_at`, §6.1): "edited … in Docs".
    Edited,
    /// The document's own front matter `date:`: "dated … in its front matter".
    FrontMatter,
    /// The imported file's modification time: "file modified …".
    FileModified,
    /// None of those: the time memoria stored this revision, "imported …".
    Imported,
}

impl DateKind {
    /// The kind's stable name, as the JSON output and the sealed cell write it.
    pub fn name(self) -> &'static str {
        match self {
            DateKind::Edited => "edited",
            DateKind::FrontMatter => "front_matter",
            DateKind::FileModified => "file_modified",
            DateKind::Imported => "imported",
        }
    }

    fn from_name(name: &str) -> Option<DateKind> {
        [
            DateKind::Edited,
            DateKind::FrontMatter,
            DateKind::FileModified,
            DateKind::Imported,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// A document's date: an instant and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DocumentDate {
    /// Where it came from.
    pub kind: DateKind,
    /// Unix seconds, UTC.
    pub at: i64,
}

impl DocumentDate {
    /// The cell the store seals: `"{kind} {unix seconds}"`, e.g. `edited 1772496000`.
    pub fn to_cell(self) -> String {
        format!("{} {}", self.kind.name(), self.at)
    }

    /// Reads [`DocumentDate::to_cell`]'s form back; `None` for anything else. Total.
    pub fn from_cell(cell: &str) -> Option<DocumentDate> {
        let (kind, at) = cell.split_once(' ')?;
        Some(DocumentDate {
            kind: DateKind::from_name(kind)?,
            at: at.parse().ok()?,
        })
    }

    /// The date as a calendar day, ISO 8601 (`2026-03-03`), UTC.
    pub fn iso(self) -> String {
        crate::clock::iso_date(self.at)
    }

    /// The words a page shows: "edited 3 March 2026 in Docs", "dated 3
    /// March 2026 in its front matter", "file modified 3 March 2026",
    /// "imported 3 March 2026". `app_name` names the sibling an edit was
    /// made in as a reader sees it (`crate::page::app_display_name`:
    /// `Docs`); it is not read for other kinds.
    pub fn phrase(self, app_name: &str) -> String {
        let day = long_date(self.at);
        match self.kind {
            DateKind::Edited => format!("edited {day} in {app_name}"),
            DateKind::FrontMatter => format!("dated {day} in its front matter"),
            DateKind::FileModified => format!("file modified {day}"),
            DateKind::Imported => format!("imported {day}"),
        }
    }
}

/// Unix seconds as "3 March 2026", UTC.
pub fn long_date(unix_s: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix_s)
        .ok()
        .and_then(|t| {
            t.format(time::macros::format_description!(
                "[day padding:none] [month repr:long] [year]"
            ))
            .ok()
        })
        .unwrap_or_else(|| "an unknown date".to_string())
}

/// The date a memoria-owned document's body names for itself in its front
/// matter, as Unix seconds (a date alone is its midnight UTC); `None` if it
/// has no front matter, no top-level `date`, or one this reader does not
/// take. Total.
pub fn front_matter_date(body: &str) -> Option<i64> {
    let len = front_matter_len(body);
    if len == 0 {
        return None;
    }
    body[..len].lines().skip(1).find_map(|line| {
        let rest = line.strip_prefix("date")?;
        let value = rest
            .trim_start_matches(' ')
            .strip_prefix(':')
            .or_else(|| rest.trim_start_matches(' ').strip_prefix('='))?;
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        parse_timestamp(value)
    })
}

/// Reads `YYYY-MM-DD`, optionally followed by `T` or a space and
/// `HH:MM[:SS[.fraction]]` and an optional `Z` or `±HH:MM`, as Unix
/// seconds (no offset: UTC). RFC 3339 and the contract's `touched_at`
/// (`defs.schema.json#/$defs/time`) are of this shape. `None` for
/// anything else, including a day the calendar lacks. Total.
pub fn parse_timestamp(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = b.get(r)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let year = i32::try_from(num(0..4)?).ok()?;
    let month = time::Month::try_from(u8::try_from(num(5..7)?).ok()?).ok()?;
    let day = u8::try_from(num(8..10)?).ok()?;
    let date = time::Date::from_calendar_date(year, month, day).ok()?;
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(date.midnight().assume_utc().unix_timestamp());
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let rb = rest.as_bytes();
    let field = |r: std::ops::Range<usize>| -> Option<u8> {
        let part = rb.get(r)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if rb.get(2) != Some(&b':') {
        return None;
    }
    let (hour, minute) = (field(0..2)?, field(3..5)?);
    let mut at = 5;
    let mut second = 0;
    if rb.get(5) == Some(&b':') {
        second = field(6..8)?;
        at = 8;
        if rb.get(8) == Some(&b'.') {
            at = 9;
            while rb.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            if at == 9 {
                return None;
            }
        }
    }
    let time = time::Time::from_hms(hour, minute, second).ok()?;
    let offset_s: i64 = match &rest[at..] {
        "" | "Z" | "z" => 0,
        zone => {
            let zb = zone.as_bytes();
            let sign = match zb.first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if zb.len() != 6 || zb[3] != b':' {
                return None;
            }
            let zh = i64::from(std::str::from_utf8(&zb[1..3]).ok()?.parse::<u8>().ok()?);
            let zm = i64::from(std::str::from_utf8(&zb[4..6]).ok()?.parse::<u8>().ok()?);
            if zh > 23 || zm > 59 {
                return None;
            }
            sign * (zh * 3600 + zm * 60)
        }
    };
    Some(
        time::PrimitiveDateTime::new(date, time)
            .assume_utc()
            .unix_timestamp()
            - offset_s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-03-03T00:00:00Z.
    const MARCH_3: i64 = 1_772_496_000;

    #[test]
    fn each_kind_says_where_its_date_came_from() {
        let rows = [
            // The app as a reader sees it (`crate::page::app_display_name`).
            (DateKind::Edited, "Docs", "edited 3 March 2026 in Docs"),
            (
                DateKind::FrontMatter,
                "memoria",
                "dated 3 March 2026 in its front matter",
            ),
            (
                DateKind::FileModified,
                "memoria",
                "file modified 3 March 2026",
            ),
            (DateKind::Imported, "memoria", "imported 3 March 2026"),
        ];
        for (kind, app, words) in rows {
            let date = DocumentDate {
                kind,
                at: MARCH_3 + 3600,
            };
            assert_eq!(date.phrase(app), words);
            assert_eq!(date.iso(), "2026-03-03");
            assert_eq!(DocumentDate::from_cell(&date.to_cell()), Some(date));
        }
    }

    #[test]
    fn a_cell_that_is_not_a_kind_and_a_number_reads_as_no_date() {
        for cell in ["", "edited", "edited x", "typed 5", "edited 5 6", " 5"] {
            assert_eq!(DocumentDate::from_cell(cell), None, "{cell:?}");
        }
    }

    #[test]
    fn timestamps_are_read_in_the_shapes_front_matter_and_the_contract_use() {
        let rows: [(&str, Option<i64>); 12] = [
            ("2026-03-03", Some(MARCH_3)),
            ("2026-03-03T09:30:00Z", Some(MARCH_3 + 9 * 3600 + 30 * 60)),
            (
                "2026-03-03T09:30:00.250Z",
                Some(MARCH_3 + 9 * 3600 + 30 * 60),
            ),
            ("2026-03-03 09:30", Some(MARCH_3 + 9 * 3600 + 30 * 60)),
            (
                "2026-03-03T09:30:00+01:00",
                Some(MARCH_3 + 8 * 3600 + 30 * 60),
            ),
            ("2026-03-03T09:30:00-00:30", Some(MARCH_3 + 10 * 3600)),
            ("2026-02-30", None),
            ("2026-3-3", None),
            ("3 March 2026", None),
            ("2026-03-03T25:00:00Z", None),
            ("2026-03-03T09:30:00.Z", None),
            ("2026-03-03T09:30:00+1", None),
        ];
        for (text, want) in rows {
            assert_eq!(parse_timestamp(text), want, "{text:?}");
        }
    }

    #[test]
    fn a_front_matter_date_is_read_from_its_top_level_key_only() {
        let rows: [(&str, Option<i64>); 8] = [
            (
                "---\ntitle: Plan\ndate: 2026-03-03\n---\n# Plan\n",
                Some(MARCH_3),
            ),
            ("---\ndate: \"2026-03-03\"\n---\nBody.\n", Some(MARCH_3)),
            (
                "+++\ndate = 2026-03-03T00:00:00Z\n+++\nBody.\n",
                Some(MARCH_3),
            ),
            ("---\nmeta:\n  date: 2026-03-03\n---\nBody.\n", None),
            ("---\nupdated: 2026-03-03\n---\nBody.\n", None),
            ("---\ndate: next Tuesday\n---\nBody.\n", None),
            ("# Plan\n\ndate: 2026-03-03\n", None),
            ("Intro.\n\n---\ndate: 2026-03-03\n---\n", None),
        ];
        for (body, want) in rows {
            assert_eq!(front_matter_date(body), want, "{body:?}");
        }
    }
}
