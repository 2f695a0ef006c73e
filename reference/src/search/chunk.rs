//! The chunker: splits a Markdown or plain-text document into the passages memoria indexes, seals and cites.
//!
//! Size: over 800 lines because the rules below, and the counted words and
//! cuts that bound a passage, are one algorithm over one document state;
//! its tests live in `chunk/tests.rs`.
//!
//! memoria-design.md §7.2 made the chunker line-based after three bugs: a
//! heading immediately above its text was filed as body, a `#` comment in a
//! fenced code block became a heading, and a file with no blank lines became
//! one chunk of the whole file. So fences are tracked, headings close a chunk
//! without needing a blank line, and [`CHUNK_WORDS_MAX`] (`MaxWords`) is a hard
//! ceiling on both a paragraph and a chunk. Chunks target
//! [`CHUNK_WORDS_TARGET`] words, fold runts, and never straddle a heading.
//!
//! Which lines are headings, code, HTML or front matter is not decided here:
//! a CommonMark parser ([`pulldown_cmark`], with [`PARSE_OPTIONS`]) reads the
//! block structure and gives each block's byte range. A hand-written line
//! scanner read it before, and disagreed with CommonMark on real files
//! (issue 11): a `#` line inside an HTML comment, `<pre>` or `<script>`, or
//! a `# comment` in YAML front matter, became a heading; headings inside
//! block quotes and list items, and multi-line setext headings, were body.
//! The passages are still made of the document's own lines, as below.
//!
//! The rules, in the order [`chunk`] applies them:
//!
//! - **Line endings.** A leading byte-order mark is dropped, then CRLF and lone
//!   CR become LF, so a CRLF file and its LF twin chunk identically.
//! - **Lines.** Every line loses its trailing whitespace (as [`str::trim_end`]:
//!   spaces, tabs, and Unicode white space such as a trailing no-break space)
//!   and is otherwise kept verbatim: leading indentation and interior white
//!   space, no-break spaces included, are never touched (§8.8). A line with
//!   nothing left is blank.
//! - **Counted words.** Packing and the ceiling count words as
//!   [`word_spans`] cuts them: a whitespace-separated token is one word,
//!   except that each Chinese or Japanese character
//!   ([`is_unspaced`](crate::search::text::is_unspaced)) is a word of its own
//!   (those scripts put no spaces between words), and a run of other
//!   characters longer than [`WORD_BYTES_MAX`] counts one word per
//!   [`WORD_BYTES_MAX`] bytes, its pieces taken between grapheme clusters
//!   (issue 32: a ZWJ emoji sequence, a flag or an accented letter is never
//!   cut). So a passage is bounded in characters and
//!   bytes as well as in words: text without spaces (Japanese prose, a 300 KB
//!   base64 line, minified code) is cut like any long paragraph, and
//!   [`CHUNK_BYTES_MAX`] is a last ceiling that white space alone can reach.
//!   [`Chunk::words`] stays the plain whitespace-token count (§7.2's
//!   measured 202 words), never more than the counted words.
//! - **Headings** are CommonMark's: ATX (`## Revenue`) and setext (one or more
//!   lines over `===` or `---`), at the top level or inside a block quote or a
//!   list item. Nothing inside a code block, an HTML block or front matter is
//!   a heading. A heading's lines (its container markers, such as `> `,
//!   included) are not body. Its trail text is its inline content as plain
//!   text: emphasis and link markup, escapes and the closing `#` run are
//!   dropped, and runs of white space become one space. Inline HTML is kept
//!   as written: it is the document's own text, and every page escapes it.
//! - **Raw blocks.** A fenced or indented code block, an HTML block (a comment,
//!   `<pre>`, `<script>`, `<div>`, ...) and YAML (`---`) or TOML (`+++`) front
//!   matter (only at the document's first byte: a `---` pair further down
//!   is a thematic break or a setext underline, issue 32) are body, kept
//!   whole: a blank line inside one does not end the
//!   paragraph, and an unclosed fence or comment runs to the end of the
//!   document (blank lines at its end are dropped).
//! - **Headings and the trail.** A heading closes the current paragraph and
//!   chunk whether or not a blank line follows it. A level-n heading drops the
//!   trail entries of level n or deeper and pushes its own text; a heading
//!   with empty text only drops. Text before the first heading has an empty
//!   trail.
//! - **A heading with no body of its own** still gets found: if its section
//!   is empty and the next heading is not deeper (or there is none), and some
//!   heading in the trail is in no passage's trail yet, the heading's own
//!   lines (`## 1.2.1`) become a passage under that trail. So in `## A`,
//!   `## B`, text, `A` is the trail (and the text) of a passage of its own,
//!   as a release heading with no entries in a changelog is. A heading whose
//!   next heading is deeper needs none: it is in that heading's trail.
//! - **Paragraphs** are runs of non-blank lines (raw blocks included) separated
//!   by blank lines. Within a chunk, paragraphs are joined by exactly one
//!   blank line (`"\n\n"`) and the lines of a paragraph by `'\n'`.
//! - **Packing.** Within one heading section, a chunk takes whole paragraphs
//!   until the next would take it past [`CHUNK_WORDS_TARGET`]; a paragraph
//!   bigger than the target but within the ceiling stands alone.
//! - **The ceiling.** A paragraph over [`CHUNK_WORDS_MAX`] words (a CSV, a log,
//!   hard-wrapped prose) is cut into the fewest near-equal pieces the ceiling
//!   allows, at line boundaries, never inside a raw block that itself fits
//!   under the ceiling. A raw block over the ceiling is cut between its lines,
//!   and a single line over the ceiling (a minified script, a one-line JSON
//!   export, a base64 blob) is cut between counted words, and there between
//!   index tokens (at white space or punctuation) whenever one lies in the
//!   part's last three quarters, so a word that would straddle the cut moves
//!   whole to the next passage (issue 32); only a run of letters and digits
//!   longer than that is cut inside, between grapheme clusters. No chunk
//!   ever exceeds [`CHUNK_WORDS_MAX`] counted words.
//! - **The byte ceiling.** A chunk still over [`CHUNK_BYTES_MAX`] bytes (only
//!   white space can take it there: a fence of blank lines, a line padded
//!   with spaces) is cut at the last line break, else the last white space,
//!   else the last character boundary under the ceiling, and the white space
//!   at each cut is dropped.
//! - **Runts.** A chunk of at most [`RUNT_WORDS_MAX`] words is folded into the
//!   previous chunk of the same heading section, or, when it comes first (or
//!   the previous one is too full), into the next one, provided the fold stays
//!   within [`CHUNK_WORDS_MAX`]. The fold keeps the separator the two had in
//!   the source. Folds never cross a heading, so a short section stays one
//!   short chunk.
//!
//! The work is one CommonMark parse (linear in the input), one pass over the
//! lines and one pass over each section's drafts. Lines are borrowed from the
//! input (or from its LF copy when it had CRs); only chunk texts and trails
//! allocate.

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Tag, TagEnd};

use unicode_segmentation::UnicodeSegmentation as _;

use crate::search::markdown::events;
use crate::search::query::is_word_char;
use crate::search::text::is_unspaced;

/// The word count a chunk grows toward before it closes (§7.2).
pub const CHUNK_WORDS_TARGET: usize = 400;

/// §7.2 "MaxWords": the hard ceiling on a paragraph and on a chunk.
pub const CHUNK_WORDS_MAX: usize = 1000;

/// A chunk of at most this many words is a runt, folded into its neighbour
/// within the same heading section when the fold fits under [`CHUNK_WORDS_MAX`].
///
/// 50 is an eighth of [`CHUNK_WORDS_TARGET`]: two or three sentences, the
/// usual closing remark that greedy packing strands after a full chunk. Such
/// a tail is a poor passage on its own, and folding it costs little (a chunk
/// packed to the target grows to at most 450 words); anything longer stands.
pub const RUNT_WORDS_MAX: usize = 50;

/// The longest run of spaced-script characters that counts as one word, in
/// bytes: a longer run (a URL, a hash, a base64 line) counts one word per
/// this many bytes, so a passage's bytes are bounded by its counted words.
///
/// 16 bytes is longer than 99% of the words in English prose and in the
/// 90k-chunk corpus the benches measure, so ordinary text counts as before;
/// at the ceiling a passage holds at most 16,000 bytes of non-space text.
pub const WORD_BYTES_MAX: usize = 16;

/// The last ceiling on a chunk's text, in bytes (and so in characters):
/// counted words bound everything but white space, and this bounds that.
///
/// Twice the 16,000 bytes of non-space text [`CHUNK_WORDS_MAX`] counted words
/// can hold, and under the fact box's per-passage bound (§8.8,
/// `FACT_PASSAGE_BYTES_MAX`), so every passage the chunker makes is read by
/// the fact box.
pub const CHUNK_BYTES_MAX: usize = 32 * 1024;

/// The deepest heading: `######` (CommonMark's six levels).
pub const HEADING_LEVEL_MAX: usize = 6;

/// The CommonMark extensions the chunker reads blocks with: GitHub tables (so
/// a table is one block, as the documents' authors see it). YAML or TOML
/// front matter (so a `# comment` there is not a heading) is read at the
/// document's first byte only
/// ([`front_matter_len`](crate::search::markdown::front_matter_len)): anywhere else `---` is
/// a thematic break or a setext underline. No other option changes which
/// lines are headings.
pub const PARSE_OPTIONS: Options = Options::ENABLE_TABLES;

/// One passage: the unit memoria indexes, seals and cites (§7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// 0-based position in the document; citations render it as `#p{ordinal}`.
    pub ordinal: u32,
    /// Heading texts in effect, outermost first (e.g. ["Budget", "Q3"]), without the `#` marks.
    pub trail: Vec<String>,
    /// The passage text: source lines verbatim, joined by '\n' (never "\r\n").
    pub text: String,
    /// Word count of `text`: whitespace-separated tokens, as
    /// [`str::split_whitespace`] counts them. At most the counted words the
    /// ceiling bounds (module documentation), so at most [`CHUNK_WORDS_MAX`].
    pub words: u32,
}

/// Splits a Markdown or plain-text document into chunks. Total: never panics, any &str in.
///
/// See the module documentation for the rules. Empty or whitespace-only input
/// yields no chunks.
pub fn chunk(text: &str) -> Vec<Chunk> {
    let text = normalize_line_endings(text.strip_prefix('\u{feff}').unwrap_or(text));
    let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    let mut doc = Document::default();
    let mut blocks = blocks(&text).into_iter().peekable();
    let mut i = 0;
    while i < lines.len() {
        // Blocks start on distinct lines in CommonMark; one that starts on a
        // line already consumed is read as body there (total either way).
        while blocks.next_if(|b| b.lines.start < i).is_some() {}
        if let Some(block) = blocks.next_if(|b| b.lines.start == i) {
            let end = block.lines.end.min(lines.len());
            let lines = &lines[block.lines.start..end];
            match block.heading {
                Some((level, title)) => doc.heading(level, &title, lines),
                None => doc.para.push_raw(trim_blank_lines(lines)),
            }
            i = end.max(i + 1);
            continue;
        }
        let line = lines[i];
        if line.is_empty() {
            doc.end_paragraph();
        } else {
            doc.para.push_line(line);
        }
        i += 1;
    }
    doc.finish()
}

/// A heading or raw block, as the line range it covers.
struct Block {
    /// 0-based line indices, end exclusive.
    lines: Range<usize>,
    /// The heading's level and plain text; `None` for a raw block.
    heading: Option<(usize, String)>,
}

/// The document's headings and raw blocks (§7.2), in order, by line.
fn blocks(text: &str) -> Vec<Block> {
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    // The line holding byte `at`: the last line start at or before it.
    let line_of = |at: usize| line_starts.partition_point(|&s| s <= at).saturating_sub(1);
    let lines_of = |range: &Range<usize>| {
        line_of(range.start)..line_of(range.end.max(range.start + 1) - 1) + 1
    };
    let mut out = Vec::new();
    let mut title: Option<(usize, Range<usize>, String)> = None;
    let mut raw_depth = 0usize;
    for (event, range) in events(text, PARSE_OPTIONS, true) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                title = Some((level as usize, range, String::new()));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, range, text)) = title.take() {
                    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
                    out.push(Block {
                        lines: lines_of(&range),
                        heading: Some((level, text)),
                    });
                }
            }
            Event::Text(t) | Event::Code(t) | Event::InlineHtml(t) => {
                if let Some((_, _, text)) = title.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, _, text)) = title.as_mut() {
                    text.push(' ');
                }
            }
            Event::Start(Tag::CodeBlock(_) | Tag::HtmlBlock | Tag::MetadataBlock(_)) => {
                if raw_depth == 0 {
                    out.push(Block {
                        lines: lines_of(&range),
                        heading: None,
                    });
                }
                raw_depth += 1;
            }
            Event::End(TagEnd::CodeBlock | TagEnd::HtmlBlock | TagEnd::MetadataBlock(_)) => {
                raw_depth = raw_depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    out
}

/// `lines` less the blank lines at either end: an unclosed block collects
/// them at its end, and a line blank here (trailing Unicode white space is
/// trimmed) may open an indented code block in CommonMark.
fn trim_blank_lines<'l, 'a>(mut lines: &'l [&'a str]) -> &'l [&'a str] {
    while let [rest @ .., ""] | ["", rest @ ..] = lines {
        lines = rest;
    }
    lines
}

/// Turns CRLF and lone CR into LF, borrowing when there is no CR at all.
fn normalize_line_endings(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    // '\r' and '\n' are ASCII, so every index here is a char boundary.
    while let Some(i) = rest.find('\r') {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix('\n') {
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Counted words in a line: [`word_spans`] without building them, each
/// span counting one word per [`WORD_BYTES_MAX`] bytes begun.
fn count_words(line: &str) -> usize {
    line.split_whitespace()
        .map(|token| {
            if token.is_ascii() {
                token.len().div_ceil(WORD_BYTES_MAX)
            } else {
                let mut n = 0;
                for_each_span(token, |span| n += span_words(span));
                n
            }
        })
        .sum()
}

/// The counted words one span of [`word_spans`] stands for: one, or one per
/// [`WORD_BYTES_MAX`] bytes begun for a grapheme cluster longer than that
/// (a family emoji is 25 bytes), so counted words bound bytes.
fn span_words(span: &str) -> usize {
    span.len().div_ceil(WORD_BYTES_MAX).max(1)
}

/// The counted words of `line`, in order, as subslices of it: each
/// whitespace-separated token, cut into its Chinese and Japanese characters
/// (one word each) and its runs of other characters, each run cut from its
/// start into pieces of at most [`WORD_BYTES_MAX`] bytes between grapheme
/// clusters, so no accent, emoji sequence or flag is ever cut (a cluster
/// longer than that is a piece of its own, and counts as several words,
/// [`span_words`]; one longer than [`GRAPHEME_BYTES_MAX`] is cut between
/// characters). Cutting a line between two of its spans and reading each
/// part again gives the same spans (the pieces are taken from a run's
/// start).
pub fn word_spans(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for token in line.split_whitespace() {
        for_each_span(token, |span| out.push(span));
    }
    out
}

/// The longest grapheme cluster kept whole, in bytes: longer ones (a base
/// under a stack of hundreds of combining marks; no writing system needs
/// one) are cut between characters like any run, so a passage stays
/// within [`CHUNK_WORDS_MAX`] counted words whatever the input.
pub const GRAPHEME_BYTES_MAX: usize = 256;

/// Calls `f` with each counted word of one whitespace-free `token`.
fn for_each_span<'t>(token: &'t str, mut f: impl FnMut(&'t str)) {
    if token.is_ascii() {
        // One character per cluster: pieces of WORD_BYTES_MAX bytes.
        let mut rest = token;
        while rest.len() > WORD_BYTES_MAX {
            let (piece, after) = rest.split_at(WORD_BYTES_MAX);
            f(piece);
            rest = after;
        }
        if !rest.is_empty() {
            f(rest);
        }
        return;
    }
    // The piece being built: its start, and its end so far.
    let (mut start, mut end) = (0, 0);
    for (i, cluster) in token.grapheme_indices(true) {
        let unspaced = cluster
            .chars()
            .next()
            .is_some_and(|c| u32::from(c) >= UNSPACED_CHAR_MIN && is_unspaced(c));
        if unspaced || i + cluster.len() - start > WORD_BYTES_MAX {
            if start < end {
                f(&token[start..end]);
            }
            start = i;
        }
        if unspaced {
            f(cluster);
            start = i + cluster.len();
        } else if cluster.len() > GRAPHEME_BYTES_MAX {
            for_each_char_piece(cluster, &mut f);
            start = i + cluster.len();
        }
        end = i + cluster.len();
    }
    if start < end {
        f(&token[start..end]);
    }
}

/// Calls `f` with `text` cut from its start into pieces of at most
/// [`WORD_BYTES_MAX`] bytes between characters (one longer character is a
/// piece of its own).
fn for_each_char_piece<'t>(text: &'t str, f: &mut impl FnMut(&'t str)) {
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if i > start && i + c.len_utf8() - start > WORD_BYTES_MAX {
            f(&text[start..i]);
            start = i;
        }
    }
    if start < text.len() {
        f(&text[start..]);
    }
}

/// The lowest code point [`is_unspaced`] can accept (U+2E80, the first CJK
/// radical): below it the script lookup is skipped.
const UNSPACED_CHAR_MIN: u32 = 0x2E80;

/// How a draft or piece attaches to the one before it, which decides the
/// separator when two of them are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Join {
    /// It starts a new paragraph: one blank line between.
    Paragraph,
    /// It continues a paragraph at a new line.
    Line,
    /// It continues a line cut between words.
    Word,
    /// It continues a token cut between two of its counted words.
    Glued,
}

impl Join {
    fn separator(self) -> &'static str {
        match self {
            Join::Paragraph => "\n\n",
            Join::Line => "\n",
            Join::Word => " ",
            Join::Glued => "",
        }
    }
}

/// A run of lines that stays together unless it alone exceeds the ceiling:
/// one line, or a whole raw block (a fence, an HTML block, front matter).
#[derive(Debug, Clone, Copy)]
struct Unit {
    start: usize,
    end: usize,
    words: usize,
}

/// The paragraph being read: its lines, their word counts, and its units.
#[derive(Debug, Default)]
struct Paragraph<'a> {
    lines: Vec<&'a str>,
    line_words: Vec<usize>,
    units: Vec<Unit>,
    words: usize,
}

impl<'a> Paragraph<'a> {
    fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Appends `lines` as one unit: a single line, or a whole raw block.
    fn push_raw(&mut self, lines: &[&'a str]) {
        let start = self.lines.len();
        let mut words = 0;
        for &line in lines {
            let n = count_words(line);
            self.lines.push(line);
            self.line_words.push(n);
            words += n;
        }
        self.words += words;
        self.units.push(Unit {
            start,
            end: self.lines.len(),
            words,
        });
    }

    fn push_line(&mut self, line: &'a str) {
        self.push_raw(&[line]);
    }

    fn clear(&mut self) {
        self.lines.clear();
        self.line_words.clear();
        self.units.clear();
        self.words = 0;
    }
}

/// A chunk in the making: text, word count, and how it joins its predecessor.
#[derive(Debug)]
struct Draft {
    text: String,
    words: usize,
    join: Join,
}

impl Draft {
    fn new(join: Join) -> Self {
        Draft {
            text: String::new(),
            words: 0,
            join,
        }
    }

    fn push_lines(&mut self, lines: &[&str]) {
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                self.text.push('\n');
            }
            self.text.push_str(line);
        }
    }
}

/// A heading in the trail: its level, its text, and whether any passage has
/// carried it in its trail yet.
#[derive(Debug)]
struct TrailEntry {
    level: usize,
    text: String,
    cited: bool,
}

/// The heading that opened the current section: its level and its lines.
#[derive(Debug)]
struct SectionHeading<'a> {
    level: usize,
    lines: Vec<&'a str>,
}

/// The whole document being chunked: the trail, the current section's drafts,
/// the current paragraph, and the chunks emitted so far.
#[derive(Debug)]
struct Document<'a> {
    /// Headings in effect, outermost first.
    trail: Vec<TrailEntry>,
    /// The heading of the current section, if one opened it.
    section: Option<SectionHeading<'a>>,
    /// Closed drafts of the current section.
    drafts: Vec<Draft>,
    /// The draft taking whole paragraphs.
    current: Draft,
    para: Paragraph<'a>,
    chunks: Vec<Chunk>,
}

impl Default for Document<'_> {
    fn default() -> Self {
        Document {
            trail: Vec::new(),
            section: None,
            drafts: Vec::new(),
            current: Draft::new(Join::Paragraph),
            para: Paragraph::default(),
            chunks: Vec::new(),
        }
    }
}

impl<'a> Document<'a> {
    /// A heading: ends the paragraph and the section, then updates the trail.
    fn heading(&mut self, level: usize, title: &str, lines: &[&'a str]) {
        self.end_section(Some(level));
        while self.trail.last().is_some_and(|t| t.level >= level) {
            self.trail.pop();
        }
        if !title.is_empty() {
            self.trail.push(TrailEntry {
                level,
                text: title.to_owned(),
                cited: false,
            });
        }
        self.section = Some(SectionHeading {
            level,
            lines: lines.to_vec(),
        });
    }

    /// Packs the current paragraph (if any) into the section's drafts.
    fn end_paragraph(&mut self) {
        if self.para.is_empty() {
            return;
        }
        let words = self.para.words;
        if words > CHUNK_WORDS_MAX {
            self.close_current();
            self.split_oversized_paragraph();
        } else if words > 0 {
            if self.current.words > 0 && self.current.words + words > CHUNK_WORDS_TARGET {
                self.close_current();
            }
            if self.current.words > 0 {
                self.current.text.push_str(Join::Paragraph.separator());
            }
            self.current.push_lines(&self.para.lines);
            self.current.words += words;
        }
        self.para.clear();
    }

    fn close_current(&mut self) {
        if self.current.words > 0 {
            let draft = std::mem::replace(&mut self.current, Draft::new(Join::Paragraph));
            self.drafts.push(draft);
        }
    }

    /// Cuts a paragraph over the ceiling into near-equal pieces, each a draft.
    fn split_oversized_paragraph(&mut self) {
        let para = &self.para;
        let pieces = para.words.div_ceil(CHUNK_WORDS_MAX);
        let mut cutter = Cutter {
            budget: para.words.div_ceil(pieces),
            piece: Draft::new(Join::Paragraph),
            pending_blank_lines: 0,
            out: &mut self.drafts,
        };
        for unit in &para.units {
            if unit.words <= CHUNK_WORDS_MAX {
                cutter.push(Join::Line, &para.lines[unit.start..unit.end], unit.words);
                continue;
            }
            for i in unit.start..unit.end {
                let (line, words) = (para.lines[i], para.line_words[i]);
                if words <= CHUNK_WORDS_MAX {
                    cutter.push(Join::Line, &[line], words);
                } else {
                    split_line_between_words(line, words, |join, part, part_words| {
                        cutter.push(join, &[part], part_words);
                    });
                }
            }
        }
        cutter.finish();
    }

    /// Ends the section before a heading of `next_level` (`None`: the end of
    /// the document): packs the last paragraph, folds runts, and emits the
    /// section's chunks under the current trail. An empty section whose
    /// heading would otherwise be in no passage's trail becomes a passage of
    /// the heading's own lines.
    fn end_section(&mut self, next_level: Option<usize>) {
        self.end_paragraph();
        self.close_current();
        let section = self.section.take();
        if self.drafts.is_empty()
            && let Some(section) = section
            && next_level.is_none_or(|next| next <= section.level)
            && self.trail.iter().any(|t| !t.cited)
        {
            self.para.push_raw(trim_blank_lines(&section.lines));
            self.end_paragraph();
            self.close_current();
        }
        if self.drafts.is_empty() {
            return;
        }
        for entry in &mut self.trail {
            entry.cited = true;
        }
        let trail: Vec<String> = self.trail.iter().map(|t| t.text.clone()).collect();
        let mut folded: Vec<Draft> = Vec::with_capacity(self.drafts.len());
        for draft in self.drafts.drain(..) {
            if let Some(last) = folded.last_mut()
                && (draft.words <= RUNT_WORDS_MAX || last.words <= RUNT_WORDS_MAX)
                && last.words + draft.words <= CHUNK_WORDS_MAX
            {
                last.text.push_str(draft.join.separator());
                last.text.push_str(&draft.text);
                last.words += draft.words;
                continue;
            }
            folded.push(draft);
        }
        for draft in folded {
            for text in cut_at_byte_ceiling(draft.text) {
                let words = text.split_whitespace().count();
                self.chunks.push(Chunk {
                    ordinal: u32::try_from(self.chunks.len()).unwrap_or(u32::MAX),
                    trail: trail.clone(),
                    text,
                    words: u32::try_from(words).unwrap_or(u32::MAX),
                });
            }
        }
    }

    fn finish(mut self) -> Vec<Chunk> {
        self.end_section(None);
        self.chunks
    }
}

/// Packs the atoms of an oversized paragraph (units, lines, or parts of
/// lines, each within the ceiling) into pieces near `budget` words.
struct Cutter<'o> {
    budget: usize,
    piece: Draft,
    /// Blank lines (inside a fence) seen since the last atom with words; kept
    /// only if the piece goes on, dropped at a cut.
    pending_blank_lines: usize,
    out: &'o mut Vec<Draft>,
}

impl Cutter<'_> {
    fn push(&mut self, join: Join, lines: &[&str], words: usize) {
        if words == 0 {
            if self.piece.words > 0 {
                self.pending_blank_lines += lines.len();
            }
            return;
        }
        let have = self.piece.words;
        if have > 0 && self.should_cut(have, words) {
            let next = Draft::new(join);
            self.out.push(std::mem::replace(&mut self.piece, next));
        }
        if self.piece.words > 0 {
            for _ in 0..self.pending_blank_lines {
                self.piece.text.push('\n');
            }
            self.piece.text.push_str(join.separator());
        }
        self.pending_blank_lines = 0;
        self.piece.push_lines(lines);
        self.piece.words += words;
    }

    /// Cut before an atom that would break the ceiling, or that would take the
    /// piece further past the budget than stopping short of it.
    fn should_cut(&self, have: usize, words: usize) -> bool {
        let after = have + words;
        after > CHUNK_WORDS_MAX
            || have >= self.budget
            || (after > self.budget && after - self.budget > self.budget - have)
    }

    fn finish(self) {
        if self.piece.words > 0 {
            self.out.push(self.piece);
        }
    }
}

/// Cuts a line of `words` counted words (more than the ceiling) into parts
/// within the ceiling, each aiming at an equal share of what is left among
/// the `⌈words / CHUNK_WORDS_MAX⌉` parts planned (so the fewest near-equal
/// parts when every cut is clean), between counted words, and between
/// index tokens where it can (issue 32): a
/// part closes at the last boundary in it with white space or punctuation
/// on one side ([`is_token_boundary`]) when at least a quarter of the part
/// lies before it, so a word that would straddle the cut moves whole to the
/// next part; only a run of letters and digits longer than three quarters of
/// a part (a base64 blob, a hash of kilobytes) is cut inside, and then
/// between grapheme clusters. The first part keeps the line's indentation;
/// the white space at each cut is dropped, and a part that starts inside a
/// token joins its predecessor with nothing between ([`Join::Glued`]).
fn split_line_between_words(line: &str, words: usize, mut part: impl FnMut(Join, &str, usize)) {
    let parts = words.div_ceil(CHUNK_WORDS_MAX);
    // The size the next part aims at: what is left shared among the parts
    // left, so clean cuts give near-equal parts; within the ceiling.
    let target_of = |emitted: usize, left: usize| {
        left.div_ceil(parts.saturating_sub(emitted).max(1))
            .min(CHUNK_WORDS_MAX)
    };
    // Each span's byte range; a span is a subslice of `line`.
    let spans: Vec<Range<usize>> = word_spans(line)
        .into_iter()
        .map(|w| {
            let at = w.as_ptr() as usize - line.as_ptr() as usize;
            at..at + w.len()
        })
        .collect();
    let weight = |k: usize| span_words(&line[spans[k].clone()]);
    let mut emit = |from: usize, to: usize, words: usize| {
        let start = if from == 0 { 0 } else { spans[from].start };
        let join = if from == 0 {
            Join::Line
        } else if line[..start].ends_with(char::is_whitespace) {
            Join::Word
        } else {
            Join::Glued
        };
        part(join, &line[start..spans[to - 1].end], words);
    };
    // The current part: its first span and counted words; the latest token
    // boundary in it, as (span index, counted words before it).
    let (mut first, mut taken, mut emitted, mut left) = (0, 0, 0, words);
    let mut target = target_of(0, words);
    let mut boundary: Option<(usize, usize)> = None;
    for k in 0..spans.len() {
        let w = weight(k);
        if taken > 0 && taken + w > target {
            if is_token_boundary(line, &spans, k) {
                boundary = Some((k, taken));
            }
            let (cut, before) = match boundary {
                Some((at, before)) if before * 4 >= target => (at, before),
                _ => (k, taken),
            };
            emit(first, cut, before);
            emitted += 1;
            left -= before;
            target = target_of(emitted, left);
            (first, taken, boundary) = (cut, 0, None);
            for j in cut..k {
                if j > first && is_token_boundary(line, &spans, j) {
                    boundary = Some((j, taken));
                }
                taken += weight(j);
            }
        }
        if k > first && is_token_boundary(line, &spans, k) {
            boundary = Some((k, taken));
        }
        taken += w;
    }
    if first < spans.len() {
        emit(first, spans.len(), taken);
    }
}

/// True if a cut before span `k` of `line` splits no index token: white
/// space stands between it and the span before, or the character on one
/// side is not a letter or digit ([`is_word_char`]).
fn is_token_boundary(line: &str, spans: &[Range<usize>], k: usize) -> bool {
    let at = spans[k].start;
    if spans[k - 1].end < at {
        return true;
    }
    let before = line[..at].chars().next_back();
    let after = line[at..].chars().next();
    !(before.is_some_and(is_word_char) && after.is_some_and(is_word_char))
}

/// `text` cut into pieces of at most [`CHUNK_BYTES_MAX`] bytes: each cut at
/// the last line break in the piece's second half, else its last white
/// space there, else the last character boundary under the ceiling; white
/// space either side of a cut is dropped, and so is a piece of nothing else.
/// A text within the ceiling comes back whole.
fn cut_at_byte_ceiling(text: String) -> Vec<String> {
    if text.len() <= CHUNK_BYTES_MAX {
        return vec![text];
    }
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while rest.len() > CHUNK_BYTES_MAX {
        let mut limit = CHUNK_BYTES_MAX;
        while !rest.is_char_boundary(limit) {
            limit -= 1;
        }
        let window = &rest[..limit];
        let half = CHUNK_BYTES_MAX / 2;
        let cut = window
            .rfind('\n')
            .filter(|&i| i >= half)
            .or_else(|| window.rfind(char::is_whitespace).filter(|&i| i >= half))
            .unwrap_or(limit);
        let piece = rest[..cut].trim_end();
        if !piece.is_empty() {
            out.push(piece.to_owned());
        }
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() {
        out.push(rest.to_owned());
    }
    out
}

#[cfg(test)]
mod tests;
