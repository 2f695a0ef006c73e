//! The label: the document's own words before a value, taken and never composed (§8.8, "The label, and the four ways it goes wrong").
//!
//! Given the span's position in the chunk text:
//!
//! 1. Take the run back to the start of the enclosing sentence or line; if
//!    that run holds another recognised span (of every kind, whatever the
//!    query asked for), start after it.
//! 2. Before anything else, the run loses its leading indentation and one
//!    list marker (`- `, `* `, `+ `, `• `, `N. `, `N) `, either followed by
//!    `[ ] ` or `[x] `, or `> `): markup, not label.
//! 3. If what remains ends in a separator (`:`, `—`, `–`, `-`, `=`, tab)
//!    and is non-empty after removing it and trimming, and is at most
//!    [`LABEL_CHARS_MAX`] characters, that is the label: the document's own.
//! 4. Empty after the separator: fall through (a bare `- ` bullet).
//! 5. Longer than [`LABEL_CHARS_MAX`]: no box for that kind. The text is
//!    kept, marked [`Label::over_long`], for narrowing to match and never
//!    to render.
//! 6. Otherwise the chunk's heading trail (its innermost heading), and with
//!    no trail the document title: never the empty string, and never the
//!    document's own ([`Label::own`] is false), so narrowing never matches it.
//!
//! A value in a Markdown table row is labelled from the row's own cells,
//! never with table syntax in it (issue 32): a row is a line, not a
//! sentence, and its cell boundaries are its separators. In order: the
//! words before the value in its own cell, when they end in a separator
//! (rule 3 inside the cell); else the cell before the value's; else the
//! row's first cell; each trimmed, less one trailing separator, and only
//! when non-empty and holding no other recognised span (rule 1's clause).
//! A cell label is the document's own ([`Label::own`]) and rule 5 holds
//! for it. None of those, and the row falls through to rule 6 as a line
//! does. A row is a line GitHub's table extension reads as one (the same
//! parser options the chunker reads blocks with), or, for a table the
//! chunker cut before its header, a line that begins and ends with `|`.
//!
//! The sentence split is naive and says so: a full stop, `!` or `?`
//! followed by white space ends a sentence, except after one of the short
//! fixed list [`ABBREVIATIONS`]. It is incomplete, and must not grow into a
//! sentence tokeniser; where it is wrong it is wrong in the composing
//! direction (a label the document did not write), which is why it exists.

/// The longest label, in characters (§8.8: "60 characters is a guess. What
/// is not a guess is that it must clear the motivating fixture, whose longer
/// label is 47").
pub const LABEL_CHARS_MAX: usize = 60;

/// Words whose full stop does not end a sentence (§8.8's short fixed list,
/// stated as incomplete).
pub const ABBREVIATIONS: [&str; 9] = ["Dr", "Mr", "Mrs", "Ms", "St", "No", "ext", "Ltd", "Co"];

/// The characters that end a label (§8.8 rule 2).
pub const SEPARATORS: [char; 6] = [':', '—', '–', '-', '=', '\t'];

/// What a value is labelled, and where the words came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// The words. Never empty.
    pub text: String,
    /// True when the words are the document's own sentence-anchored label
    /// ending in a separator (§8.8 rule 2, `fact.Found.Own`); false for the
    /// trail or the title. Recorded here, never inferred from the text.
    pub own: bool,
    /// True when the document's own label is over [`LABEL_CHARS_MAX`]:
    /// kept for matching, never rendered, and it silences the kind (rule 4).
    pub over_long: bool,
}

/// Where runs may start in one passage: every line start and sentence
/// start, ascending; and the byte ranges of its Markdown table rows, each
/// from the row's first byte to its line's end. Built once per passage, so
/// labelling is a search.
#[derive(Debug, Clone)]
pub struct RunStarts {
    starts: Vec<usize>,
    rows: Vec<(usize, usize)>,
}

impl RunStarts {
    /// The run starts and table rows of `text`.
    pub fn of(text: &str) -> RunStarts {
        RunStarts {
            starts: RunStarts::starts_of(text),
            rows: table_rows(text),
        }
    }

    /// The last run start at or before `at`.
    fn before(&self, at: usize) -> usize {
        match self.starts.binary_search(&at) {
            Ok(i) => self.starts[i],
            Err(0) => 0,
            Err(i) => self.starts[i - 1],
        }
    }

    /// The table row holding byte `at`, if it is in one.
    fn row(&self, at: usize) -> Option<(usize, usize)> {
        let i = self.rows.partition_point(|(s, _)| *s <= at);
        i.checked_sub(1)
            .map(|i| self.rows[i])
            .filter(|(s, e)| *s <= at && at < *e)
    }

    /// Every line start and sentence start of `text`, ascending.
    fn starts_of(text: &str) -> Vec<usize> {
        let mut out = vec![0];
        let b = text.as_bytes();
        for (i, c) in text.char_indices() {
            match c {
                '\n' => out.push(i + 1),
                '.' | '!' | '?' => {
                    let next = text[i + 1..].chars().next();
                    if !next.is_some_and(char::is_whitespace) {
                        continue;
                    }
                    if c == '.' && is_abbreviation(&text[..i]) {
                        continue;
                    }
                    // The sentence starts after the white space that follows.
                    let mut j = i + 1;
                    while j < b.len() {
                        let w = text[j..].chars().next().unwrap_or('x');
                        if !w.is_whitespace() || w == '\n' {
                            break;
                        }
                        j += w.len_utf8();
                    }
                    out.push(j);
                }
                _ => {}
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// The byte ranges of the table rows in `text`, ascending: from a row's
/// first byte (after any container's marker) to its line's end. GitHub's
/// table extension decides what is a row, with the chunker's parser
/// options; a line that begins and ends with `|` is one too, for a table
/// the chunker cut before its header row (and so no table to a parser).
fn table_rows(text: &str) -> Vec<(usize, usize)> {
    use pulldown_cmark::{Event, Parser, Tag};
    let line_end = |at: usize| text[at..].find('\n').map_or(text.len(), |i| at + i);
    let mut rows: Vec<(usize, usize)> = Vec::new();
    if text.contains('|') {
        let parser = Parser::new_ext(text, crate::search::chunk::PARSE_OPTIONS);
        for (event, range) in parser.into_offset_iter() {
            if let Event::Start(Tag::TableHead | Tag::TableRow) = event {
                rows.push((range.start, line_end(range.start)));
            }
        }
        let mut at = 0;
        for line in text.split('\n') {
            let t = line.trim();
            if t.len() >= 2 && t.starts_with('|') && t.ends_with('|') {
                let start = at + (line.len() - line.trim_start().len());
                rows.push((start, at + line.len()));
            }
            at += line.len() + 1;
        }
    }
    rows.sort_unstable();
    // One row per line: a parser's row and a piped line are the same line.
    rows.dedup_by_key(|(_, end)| *end);
    rows
}

/// True if the word ending at the end of `before` is one of [`ABBREVIATIONS`].
fn is_abbreviation(before: &str) -> bool {
    let word_start = before
        .char_indices()
        .rev()
        .find(|(_, c)| !c.is_alphabetic())
        .map_or(0, |(i, c)| i + c.len_utf8());
    ABBREVIATIONS.contains(&&before[word_start..])
}

/// Strips one leading list marker (rule 2): `- `, `* `, `+ `, `• `, `N. `,
/// `N) `, either optionally followed by `[ ] ` or `[x] `, or `> `.
fn strip_marker(run: &str) -> &str {
    let bullet = ["- ", "* ", "+ ", "• "]
        .into_iter()
        .find_map(|m| run.strip_prefix(m))
        .or_else(|| {
            let digits = run.len() - run.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (digits > 0)
                .then(|| &run[digits..])
                .and_then(|r| r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")))
        });
    match bullet {
        Some(rest) => ["[ ] ", "[x] "]
            .into_iter()
            .find_map(|c| rest.strip_prefix(c))
            .unwrap_or(rest),
        None => run.strip_prefix("> ").unwrap_or(run),
    }
}

/// Labels the value starting at byte `start` of `text` (§8.8's rules).
/// `earlier` holds the byte ranges of every recognised span (of any kind)
/// ending at or before `start`, ascending by end; `trail` and `title` are
/// the chunk's heading trail and its document's title.
pub fn label(
    text: &str,
    starts: &RunStarts,
    start: usize,
    earlier: &[(usize, usize)],
    trail: &[String],
    title: &str,
) -> Label {
    if let Some(row) = starts.row(start) {
        return cell_label(text, starts, row, start, earlier)
            .unwrap_or_else(|| fallback(trail, title));
    }
    let mut run_start = starts.before(start);
    let earlier_end = earlier.iter().map(|(_, e)| *e).max();
    if let Some(e) = earlier_end.filter(|e| *e > run_start && *e <= start) {
        run_start = e;
    }
    let run = text[run_start..start].trim_start();
    let run = run.trim_end_matches(|c: char| c.is_whitespace() && c != '\t');
    let run = strip_marker(run);
    if let Some(sep) = run.chars().next_back().filter(|c| SEPARATORS.contains(c)) {
        let words = run[..run.len() - sep.len_utf8()].trim();
        if !words.is_empty() {
            return Label {
                text: words.to_string(),
                own: true,
                over_long: words.chars().count() > LABEL_CHARS_MAX,
            };
        }
    }
    fallback(trail, title)
}

/// Rules 3 and 5 on a run that ends right before the value: its words
/// before a trailing separator, the document's own, if there are any.
fn own_label(run: &str) -> Option<Label> {
    let run = run.trim_end_matches(|c: char| c.is_whitespace() && c != '\t');
    let sep = run.chars().next_back().filter(|c| SEPARATORS.contains(c))?;
    words_label(&run[..run.len() - sep.len_utf8()])
}

/// Trimmed `words` as the document's own label, unless empty (rule 4).
fn words_label(words: &str) -> Option<Label> {
    let words = words.trim();
    (!words.is_empty()).then(|| Label {
        text: words.to_string(),
        own: true,
        over_long: words.chars().count() > LABEL_CHARS_MAX,
    })
}

/// The label a table row's own cells give the value at `start`: the words
/// before it in its cell ending in a separator, else the cell before its
/// cell, else the row's first cell (module documentation).
fn cell_label(
    text: &str,
    starts: &RunStarts,
    row: (usize, usize),
    start: usize,
    earlier: &[(usize, usize)],
) -> Option<Label> {
    let cells = cells(text, row);
    let at = cells.iter().position(|(s, e)| *s <= start && start <= *e)?;
    let (cell_start, _) = cells[at];
    let mut run_start = starts.before(start).max(cell_start);
    if let Some(e) = earlier.iter().map(|(_, e)| *e).max() {
        run_start = run_start.max(e.min(start));
    }
    if let Some(l) = own_label(text[run_start..start].trim_start()) {
        return Some(l);
    }
    let holds_a_span = |(s, e): (usize, usize)| earlier.iter().any(|(a, b)| *a < e && s < *b);
    let cell = |i: usize| {
        let (s, e) = cells[i];
        if holds_a_span((s, e)) {
            return None;
        }
        let words = text[s..e].trim();
        let words = words
            .strip_suffix(|c: char| SEPARATORS.contains(&c))
            .unwrap_or(words);
        words_label(words)
    };
    at.checked_sub(1)
        .and_then(cell)
        .or_else(|| (at > 0).then(|| cell(0)).flatten())
}

/// The cells of the table row `row` of `text`, as byte ranges: split at
/// every `|` a backslash does not escape, less the blank ends a leading
/// and a trailing pipe leave.
fn cells(text: &str, (start, end): (usize, usize)) -> Vec<(usize, usize)> {
    let mut edges = vec![start];
    let mut escaped = false;
    for (i, c) in text[start..end].char_indices() {
        if c == '|' && !escaped {
            edges.push(start + i);
        }
        escaped = c == '\\' && !escaped;
    }
    edges.push(end);
    let last = edges.len() - 2;
    edges
        .windows(2)
        .enumerate()
        .map(|(i, w)| (if i == 0 { w[0] } else { w[0] + 1 }, w[1]))
        .enumerate()
        .filter(|(i, (s, e))| !((*i == 0 || *i == last) && text[*s..*e].trim().is_empty()))
        .map(|(_, c)| c)
        .collect()
}

/// Rule 6: the innermost heading, else the title, never the empty string.
fn fallback(trail: &[String], title: &str) -> Label {
    let fallback = trail
        .iter()
        .rev()
        .map(|t| t.trim())
        .find(|t| !t.is_empty())
        .unwrap_or(title.trim());
    Label {
        text: if fallback.is_empty() {
            "Untitled".to_string()
        } else {
            fallback.to_string()
        },
        own: false,
        over_long: false,
    }
}
