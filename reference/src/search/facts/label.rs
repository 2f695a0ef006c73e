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
/// start, ascending. Built once per passage, so labelling is a search.
#[derive(Debug, Clone)]
pub struct RunStarts(Vec<usize>);

impl RunStarts {
    /// The run starts of `text`, in one pass.
    pub fn of(text: &str) -> RunStarts {
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
        RunStarts(out)
    }

    /// The last run start at or before `at`.
    fn before(&self, at: usize) -> usize {
        match self.0.binary_search(&at) {
            Ok(i) => self.0[i],
            Err(0) => 0,
            Err(i) => self.0[i - 1],
        }
    }
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
/// `earlier_end` is where the nearest earlier span (of any kind) ends;
/// `trail` and `title` are the chunk's heading trail and its document's title.
pub fn label(
    text: &str,
    starts: &RunStarts,
    start: usize,
    earlier_end: Option<usize>,
    trail: &[String],
    title: &str,
) -> Label {
    let mut run_start = starts.before(start);
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
