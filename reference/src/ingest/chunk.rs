//! The line-based chunker: splits a Markdown or plain-text document into the passages memoria indexes, seals and cites.
//!
//! memoria-design.md §7.2 made the chunker line-based after three bugs: a
//! heading immediately above its text was filed as body, a `#` comment in a
//! fenced code block became a heading, and a file with no blank lines became
//! one chunk of the whole file. So fences are tracked, headings close a chunk
//! without needing a blank line, and [`CHUNK_WORDS_MAX`] (`MaxWords`) is a hard
//! ceiling on both a paragraph and a chunk. Chunks target
//! [`CHUNK_WORDS_TARGET`] words, fold runts, and never straddle a heading.
//!
//! The rules, in the order [`chunk`] applies them:
//!
//! - **Line endings.** A leading byte-order mark is dropped, then CRLF and lone
//!   CR become LF, so a CRLF file and its LF twin chunk identically.
//! - **Lines.** Every line loses its trailing whitespace (as [`str::trim_end`]:
//!   spaces, tabs, and Unicode white space such as a trailing no-break space)
//!   and is otherwise kept verbatim: leading indentation and interior white
//!   space, no-break spaces included, are never touched (§8.8). A line with
//!   nothing left is blank. A word is a whitespace-separated token, as
//!   [`str::split_whitespace`] counts them.
//! - **Fences.** A line of three or more backticks or tildes, indented at most
//!   three spaces, opens a fenced code block (a backtick fence's info string
//!   may not contain a backtick, so inline code such as ```` ```x``` ```` opens
//!   nothing). It closes at a line of the same character, at least as long,
//!   with nothing after it; an unclosed fence runs to the end of the document.
//!   Everything inside a fence is body: a `# comment` there is not a heading
//!   and a blank line there does not end the paragraph.
//! - **ATX headings.** Outside fences, a line of one to [`HEADING_LEVEL_MAX`]
//!   `#` marks, indented at most three spaces and followed by a space, a tab or
//!   the end of the line, is a heading (`#hashtag` is not). Its text is trimmed
//!   and a closing run of `#` marks (preceded by a space) is stripped.
//! - **Setext headings.** A one-line paragraph (the line right after a blank
//!   line, a heading or the start of the document, indented at most three
//!   spaces, and not a list item, a block quote or itself an underline)
//!   directly followed by a line of three or more `=` (level 1) or `-`
//!   (level 2) is a heading. A multi-line paragraph above an underline is left
//!   as body, and so is YAML front matter between `---` lines.
//! - **Headings and the trail.** A heading closes the current paragraph and
//!   chunk whether or not a blank line follows it, and is not part of any
//!   chunk's text: it lives in the trail. A level-n heading drops the trail
//!   entries of level n or deeper and pushes its own text; a heading with empty
//!   text only drops. Text before the first heading has an empty trail, and a
//!   heading with no body below it yields no chunk.
//! - **Paragraphs** are runs of non-blank lines (fences included) separated by
//!   blank lines. Within a chunk, paragraphs are joined by exactly one blank
//!   line (`"\n\n"`) and the lines of a paragraph by `'\n'`.
//! - **Packing.** Within one heading section, a chunk takes whole paragraphs
//!   until the next would take it past [`CHUNK_WORDS_TARGET`]; a paragraph
//!   bigger than the target but within the ceiling stands alone.
//! - **The ceiling.** A paragraph over [`CHUNK_WORDS_MAX`] words (a CSV, a log,
//!   hard-wrapped prose) is cut into the fewest near-equal pieces the ceiling
//!   allows, at line boundaries, never inside a fence that itself fits under the
//!   ceiling. A fence over the ceiling is cut between its lines, and a single
//!   line over the ceiling is cut between words (whole words, so never inside a
//!   UTF-8 character). No chunk ever exceeds [`CHUNK_WORDS_MAX`] words.
//! - **Runts.** A chunk of at most [`RUNT_WORDS_MAX`] words is folded into the
//!   previous chunk of the same heading section, or, when it comes first (or
//!   the previous one is too full), into the next one, provided the fold stays
//!   within [`CHUNK_WORDS_MAX`]. The fold keeps the separator the two had in
//!   the source. Folds never cross a heading, so a short section stays one
//!   short chunk.
//!
//! The work is one pass over the lines plus one pass over each section's
//! drafts: linear time and no regex. Lines are borrowed from the input (or
//! from its LF copy when it had CRs); only chunk texts and trails allocate.

use std::borrow::Cow;

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

/// The deepest ATX heading: `######`.
pub const HEADING_LEVEL_MAX: usize = 6;

/// One passage: the unit memoria indexes, seals and cites (§7.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// 0-based position in the document; citations render it as `#p{ordinal}`.
    pub ordinal: u32,
    /// Heading texts in effect, outermost first (e.g. ["Budget", "Q3"]), without the `#` marks.
    pub trail: Vec<String>,
    /// The passage text: source lines verbatim, joined by '\n' (never "\r\n").
    pub text: String,
    /// Word count of `text` (whitespace-separated tokens).
    pub words: u32,
}

/// Splits a Markdown or plain-text document into chunks. Total: never panics, any &str in.
///
/// See the module documentation for the rules. Empty or whitespace-only input
/// yields no chunks.
pub fn chunk(text: &str) -> Vec<Chunk> {
    let text = normalize_line_endings(text.strip_prefix('\u{feff}').unwrap_or(text));
    let mut doc = Document::default();
    let mut lines = text.split('\n').map(str::trim_end).peekable();
    while let Some(line) = lines.next() {
        if let Some(fence) = doc.para.fence {
            doc.para.push_fence_line(line);
            if closes_fence(line, fence) {
                doc.para.close_fence();
            }
            continue;
        }
        if line.is_empty() {
            doc.end_paragraph();
            continue;
        }
        if let Some((level, title)) = atx_heading(line) {
            doc.heading(level, title);
            continue;
        }
        if let Some(fence) = opens_fence(line) {
            doc.para.open_fence(line, fence);
            continue;
        }
        if doc.para.is_empty()
            && can_be_setext_title(line)
            && let Some(level) = lines.peek().and_then(|next| setext_underline(next))
        {
            lines.next();
            doc.heading(level, line.trim());
            continue;
        }
        doc.para.push_line(line);
    }
    doc.finish()
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

/// Words in a line: whitespace-separated tokens.
fn count_words(line: &str) -> usize {
    line.split_whitespace().count()
}

/// Splits off up to three leading spaces; `None` if the line is indented more.
fn strip_indent(line: &str) -> Option<&str> {
    let body = line.trim_start_matches(' ');
    (line.len() - body.len() <= 3).then_some(body)
}

/// An ATX heading's level and text, if `line` (already right-trimmed) is one.
fn atx_heading(line: &str) -> Option<(usize, &str)> {
    let body = strip_indent(line)?;
    let marks = body.bytes().take_while(|&b| b == b'#').count();
    if marks == 0 || marks > HEADING_LEVEL_MAX {
        return None;
    }
    let rest = &body[marks..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let text = rest.trim();
    let open = text.trim_end_matches('#');
    let text = if open.is_empty() {
        ""
    } else if open.len() < text.len() && open.ends_with([' ', '\t']) {
        open.trim_end()
    } else {
        text
    };
    Some((marks, text))
}

/// A fence's character and length.
#[derive(Debug, Clone, Copy)]
struct Fence {
    mark: u8,
    len: usize,
}

/// The fence `line` opens, if it is an opening fence.
fn opens_fence(line: &str) -> Option<Fence> {
    let body = strip_indent(line)?;
    let mark = *body.as_bytes().first()?;
    if mark != b'`' && mark != b'~' {
        return None;
    }
    let len = body.bytes().take_while(|&b| b == mark).count();
    if len < 3 || (mark == b'`' && body[len..].contains('`')) {
        return None;
    }
    Some(Fence { mark, len })
}

/// True if `line` (already right-trimmed) closes `fence`.
fn closes_fence(line: &str, fence: Fence) -> bool {
    strip_indent(line).is_some_and(|body| {
        let len = body.bytes().take_while(|&b| b == fence.mark).count();
        len >= fence.len && len == body.len()
    })
}

/// True if `line` may be the title line of a setext heading.
fn can_be_setext_title(line: &str) -> bool {
    let Some(body) = strip_indent(line) else {
        return false;
    };
    if body.starts_with(['>', '\t']) || setext_underline(line).is_some() {
        return false;
    }
    let after_bullet = body.strip_prefix(['-', '*', '+']);
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let after_number = (1..=9)
        .contains(&digits)
        .then(|| body[digits..].strip_prefix(['.', ')']))
        .flatten();
    let is_list_item = after_bullet
        .or(after_number)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
    !is_list_item
}

/// The level of the setext underline `line` is, if it is one: three or more
/// `=` (level 1) or `-` (level 2), indented at most three spaces.
fn setext_underline(line: &str) -> Option<usize> {
    let body = strip_indent(line)?;
    let mark = *body.as_bytes().first()?;
    let level = match mark {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    (body.len() >= 3 && body.bytes().all(|b| b == mark)).then_some(level)
}

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
}

impl Join {
    fn separator(self) -> &'static str {
        match self {
            Join::Paragraph => "\n\n",
            Join::Line => "\n",
            Join::Word => " ",
        }
    }
}

/// A run of lines that stays together unless it alone exceeds the ceiling:
/// one line, or a whole fence.
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
    /// The open fence, if the last unit is a fence still being read.
    fence: Option<Fence>,
}

impl<'a> Paragraph<'a> {
    fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn add(&mut self, line: &'a str) -> usize {
        let words = count_words(line);
        self.lines.push(line);
        self.line_words.push(words);
        self.words += words;
        words
    }

    fn push_line(&mut self, line: &'a str) {
        let start = self.lines.len();
        let words = self.add(line);
        self.units.push(Unit {
            start,
            end: start + 1,
            words,
        });
    }

    fn open_fence(&mut self, line: &'a str, fence: Fence) {
        self.push_line(line);
        self.fence = Some(fence);
    }

    fn push_fence_line(&mut self, line: &'a str) {
        let words = self.add(line);
        if let Some(unit) = self.units.last_mut() {
            unit.end += 1;
            unit.words += words;
        }
    }

    fn close_fence(&mut self) {
        self.fence = None;
    }

    /// Drops the blank lines an unclosed fence collected at the end of the
    /// document (a closed fence ends on its closing line).
    fn trim_trailing_blank_lines(&mut self) {
        while self.line_words.last() == Some(&0) {
            self.lines.pop();
            self.line_words.pop();
            if let Some(unit) = self.units.last_mut() {
                unit.end -= 1;
            }
        }
    }

    fn clear(&mut self) {
        self.lines.clear();
        self.line_words.clear();
        self.units.clear();
        self.words = 0;
        self.fence = None;
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

/// The whole document being chunked: the trail, the current section's drafts,
/// the current paragraph, and the chunks emitted so far.
#[derive(Debug)]
struct Document<'a> {
    /// Headings in effect, outermost first, with their levels.
    trail: Vec<(usize, String)>,
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
            drafts: Vec::new(),
            current: Draft::new(Join::Paragraph),
            para: Paragraph::default(),
            chunks: Vec::new(),
        }
    }
}

impl Document<'_> {
    /// A heading: ends the paragraph and the section, then updates the trail.
    fn heading(&mut self, level: usize, title: &str) {
        self.end_section();
        while self.trail.last().is_some_and(|(l, _)| *l >= level) {
            self.trail.pop();
        }
        if !title.is_empty() {
            self.trail.push((level, title.to_owned()));
        }
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
        } else {
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

    /// Ends the section: packs the last paragraph, folds runts, and emits the
    /// section's chunks under the current trail.
    fn end_section(&mut self) {
        self.end_paragraph();
        self.close_current();
        if self.drafts.is_empty() {
            return;
        }
        let trail: Vec<String> = self.trail.iter().map(|(_, t)| t.clone()).collect();
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
            self.chunks.push(Chunk {
                ordinal: u32::try_from(self.chunks.len()).unwrap_or(u32::MAX),
                trail: trail.clone(),
                text: draft.text,
                words: u32::try_from(draft.words).unwrap_or(u32::MAX),
            });
        }
    }

    fn finish(mut self) -> Vec<Chunk> {
        if self.para.fence.is_some() {
            self.para.trim_trailing_blank_lines();
        }
        self.end_section();
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

/// Cuts a line of `words` words (more than the ceiling) into the fewest
/// near-equal parts the ceiling allows, at word boundaries. The first part
/// keeps the line's indentation; the white space at each cut is dropped.
fn split_line_between_words(line: &str, words: usize, mut part: impl FnMut(Join, &str, usize)) {
    let parts = words.div_ceil(CHUNK_WORDS_MAX);
    let (base, extra) = (words / parts, words % parts);
    let size_of = |index: usize| base + usize::from(index < extra);
    let (mut index, mut taken, mut start) = (0, 0, 0);
    for word in line.split_whitespace() {
        // `word` is a subslice of `line`: its offset is a char boundary.
        let offset = word.as_ptr() as usize - line.as_ptr() as usize;
        if taken == 0 && index > 0 {
            start = offset;
        }
        taken += 1;
        if taken == size_of(index) {
            let join = if index == 0 { Join::Line } else { Join::Word };
            part(join, &line[start..offset + word.len()], taken);
            index += 1;
            taken = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    /// One line per chunk: ordinal, trail, words, and the first 40 characters.
    fn render(chunks: &[Chunk]) -> String {
        chunks
            .iter()
            .map(|c| {
                let head: String = c.text.chars().take(40).collect();
                format!(
                    "#p{} [{}] {}w {:?}\n",
                    c.ordinal,
                    c.trail.join(" > "),
                    c.words,
                    head
                )
            })
            .collect()
    }

    fn check(text: &str, expected: Expect) {
        expected.assert_eq(&render(&chunk(text)));
    }

    /// `n` distinct words `prefix0 prefix1 …` on one line.
    fn words(prefix: &str, n: usize) -> String {
        (0..n)
            .map(|i| format!("{prefix}{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn tokens(text: &str) -> Vec<&str> {
        text.split_whitespace().collect()
    }

    fn trails(chunks: &[Chunk]) -> Vec<String> {
        chunks.iter().map(|c| c.trail.join(" > ")).collect()
    }

    #[test]
    fn heading_without_blank_line_still_closes_the_chunk() {
        let chunks = chunk("Intro text.\n## Revenue\nRevenue rose 4%.\n## Costs\nCosts fell.\n");
        assert_eq!(trails(&chunks), ["", "Revenue", "Costs"]);
        assert_eq!(chunks[0].text, "Intro text.");
        assert_eq!(chunks[1].text, "Revenue rose 4%.");
        assert_eq!(chunks[2].text, "Costs fell.");
    }

    #[test]
    fn hash_inside_a_fence_is_not_a_heading() {
        let doc = "# Deploy\nRun this:\n```sh\n# build first\nmake\n\n## not a heading\n```\nThen wait.\n";
        let chunks = chunk(doc);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].trail, ["Deploy"]);
        assert_eq!(
            chunks[0].text,
            "Run this:\n```sh\n# build first\nmake\n\n## not a heading\n```\nThen wait."
        );
    }

    #[test]
    fn tilde_fence_closes_only_on_a_run_at_least_as_long() {
        let doc = "~~~~\n# a\n~~~\n# b\n~~~~~\n# Real\nbody\n";
        let chunks = chunk(doc);
        assert_eq!(trails(&chunks), ["", "Real"]);
        assert_eq!(chunks[0].text, "~~~~\n# a\n~~~\n# b\n~~~~~");
    }

    #[test]
    fn inline_code_at_the_start_of_a_line_opens_no_fence() {
        let chunks = chunk("```x``` is inline\n# Heading\nbody\n");
        assert_eq!(trails(&chunks), ["", "Heading"]);
    }

    #[test]
    fn unclosed_fence_runs_to_the_end_of_the_document() {
        let chunks = chunk("# Script\n```\n# step one\nls\n\n# step two\n\n\n");
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].trail, ["Script"]);
        assert_eq!(chunks[0].text, "```\n# step one\nls\n\n# step two");
    }

    #[test]
    fn file_with_no_blank_lines_is_cut_at_the_word_ceiling() {
        // A CSV: 3000 lines of 1 word, no blank line. Three pieces of 1000.
        let csv: String = (0..3000).map(|i| format!("row{i},{i},x\n")).collect();
        let chunks = chunk(&csv);
        let sizes: Vec<u32> = chunks.iter().map(|c| c.words).collect();
        assert_eq!(sizes, [1000, 1000, 1000]);
        assert!(chunks[1].text.starts_with("row1000,1000,x\nrow1001,"));
        // Hard-wrapped prose of 1500 words in lines of 10: two pieces near 750.
        let prose: String = (0..150)
            .map(|i| words(&format!("l{i}w"), 10) + "\n")
            .collect();
        let sizes: Vec<u32> = chunk(&prose).iter().map(|c| c.words).collect();
        assert_eq!(sizes, [750, 750]);
    }

    #[test]
    fn a_single_line_longer_than_the_ceiling_is_cut_between_words() {
        let line = format!("  {}", words("w", 2500));
        let chunks = chunk(&line);
        let sizes: Vec<u32> = chunks.iter().map(|c| c.words).collect();
        assert_eq!(sizes, [834, 833, 833]);
        assert!(chunks[0].text.starts_with("  w0 w1 "));
        assert!(chunks[0].text.ends_with(" w833"));
        assert!(chunks[1].text.starts_with("w834 "));
        let rejoined: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
        assert_eq!(rejoined, tokens(&line));
    }

    #[test]
    fn a_fence_is_kept_whole_when_it_fits_under_the_ceiling() {
        // One paragraph of 1400 words: 700 of prose, a 600-word fence, 100 more.
        // The fence lands whole in one piece rather than being cut at 700.
        let prose: String = (0..70)
            .map(|i| words(&format!("a{i}w"), 10) + "\n")
            .collect();
        let fence: String = (0..60)
            .map(|i| words(&format!("f{i}w"), 10) + "\n")
            .collect();
        let tail: String = (0..10)
            .map(|i| words(&format!("z{i}w"), 10) + "\n")
            .collect();
        let doc = format!("{prose}```\n{fence}```\n{tail}");
        let chunks = chunk(&doc);
        let holding: Vec<&Chunk> = chunks.iter().filter(|c| c.text.contains("```")).collect();
        assert_eq!(holding.len(), 1);
        assert!(holding[0].text.contains(&format!("```\n{fence}```")));
        assert!(chunks.iter().all(|c| c.words as usize <= CHUNK_WORDS_MAX));
    }

    #[test]
    fn a_fence_over_the_ceiling_is_cut_between_its_lines() {
        let body: String = (0..300).map(|i| format!("echo {i} # step\n")).collect();
        let doc = format!("# Log\n```sh\n{body}```\n");
        let chunks = chunk(&doc);
        assert_eq!(chunks.len(), 2);
        assert!(chunks.iter().all(|c| c.words as usize <= CHUNK_WORDS_MAX));
        assert!(chunks.iter().all(|c| c.trail == ["Log"]));
        assert!(chunks[1].text.starts_with("echo "));
        assert!(chunks[1].text.ends_with("# step\n```"));
    }

    #[test]
    fn crlf_and_lf_files_chunk_identically() {
        let lf = format!(
            "Preamble line.\n\n# Budget\nOverview.\n## Q1\n{}\n\n```sh\n# not a heading\n```\n\n## Q2\nTitle\n=====\nLast words.\n",
            words("q", 450)
        );
        let crlf = lf.replace('\n', "\r\n");
        let cr = lf.replace('\n', "\r");
        let expected = chunk(&lf);
        assert_eq!(trails(&expected), ["", "Budget", "Budget > Q1", "Title"]);
        assert_eq!(chunk(&crlf), expected);
        assert_eq!(chunk(&cr), expected);
        assert!(expected.iter().all(|c| !c.text.contains('\r')));
    }

    #[test]
    fn runts_are_folded_but_never_across_a_heading() {
        // 390 + 20 closes at the target; the 20-word runt folds back.
        let doc = format!(
            "# A\n{}\n\n{}\n# B\n{}\n",
            words("a", 390),
            words("r", 20),
            words("b", 5)
        );
        let chunks = chunk(&doc);
        assert_eq!(trails(&chunks), ["A", "B"]);
        assert_eq!(chunks[0].words, 410);
        assert!(chunks[0].text.ends_with(&format!("\n\n{}", words("r", 20))));
        // The 5-word section stays its own chunk: no fold across `# B`.
        assert_eq!(chunks[1].words, 5);
    }

    #[test]
    fn a_runt_that_comes_first_folds_into_the_next_chunk() {
        let doc = format!("# A\n{}\n\n{}\n", words("r", 10), words("b", 600));
        let chunks = chunk(&doc);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].words, 610);
        assert!(chunks[0].text.starts_with("r0 r1"));
    }

    #[test]
    fn a_runt_stays_when_folding_would_break_the_ceiling() {
        let doc = format!("{}\n\n{}\n", words("a", 990), words("r", 20));
        let sizes: Vec<u32> = chunk(&doc).iter().map(|c| c.words).collect();
        assert_eq!(sizes, [990, 20]);
        // With a chunk after it, the runt folds forward instead.
        let doc = format!(
            "{}\n\n{}\n\n{}\n",
            words("a", 990),
            words("r", 20),
            words("b", 390)
        );
        let chunks = chunk(&doc);
        let sizes: Vec<u32> = chunks.iter().map(|c| c.words).collect();
        assert_eq!(sizes, [990, 410]);
        assert!(
            chunks[1]
                .text
                .starts_with(&format!("{}\n\nb0 ", words("r", 20)))
        );
    }

    #[test]
    fn chunks_fill_toward_the_target_then_close() {
        let paras: Vec<String> = (0..10).map(|i| words(&format!("p{i}w"), 150)).collect();
        let sizes: Vec<u32> = chunk(&paras.join("\n\n")).iter().map(|c| c.words).collect();
        assert_eq!(sizes, [300, 300, 300, 300, 300]);
    }

    #[test]
    fn trail_nests_and_pops_by_level() {
        let doc = "# Budget\na\n### Deep\nb\n## Q3\nc\n#### Q3 detail\nd\n## Q4\ne\n# Other\nf\n";
        let chunks = chunk(doc);
        assert_eq!(
            trails(&chunks),
            [
                "Budget",
                "Budget > Deep",
                "Budget > Q3",
                "Budget > Q3 > Q3 detail",
                "Budget > Q4",
                "Other"
            ]
        );
    }

    #[test]
    fn an_empty_heading_pops_the_trail_without_adding_to_it() {
        let chunks = chunk("# A\n## B\nb\n##\nafter\n");
        assert_eq!(trails(&chunks), ["A > B", "A"]);
    }

    #[test]
    fn closing_hashes_of_an_atx_heading_are_stripped() {
        let chunks = chunk("## Revenue ##\nx\n# C# #\ny\n#   Spaced   #####   \nz\n### ###\nw\n");
        assert_eq!(trails(&chunks), ["Revenue", "C#", "Spaced", "Spaced"]);
    }

    #[test]
    fn hashtag_without_a_space_is_not_a_heading() {
        let chunks = chunk("#hashtag is body\n####### seven is body\n    # indented is code\n");
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].trail.is_empty());
        assert_eq!(chunks[0].words, 11);
    }

    #[test]
    fn heading_with_no_body_yields_no_chunk() {
        let chunks = chunk("# Title\n## Empty\n\n## Full\nbody\n# Last\n");
        assert_eq!(trails(&chunks), ["Title > Full"]);
        assert!(chunk("# Only a heading\n\n").is_empty());
    }

    #[test]
    fn empty_and_whitespace_only_input_yield_no_chunks() {
        assert!(chunk("").is_empty());
        assert!(chunk(" \n\t\r\n\u{a0}\r\r\n").is_empty());
    }

    #[test]
    fn text_before_the_first_heading_has_an_empty_trail() {
        let chunks = chunk("Front text.\n# H\nbody\n");
        assert_eq!(chunks[0].trail, Vec::<String>::new());
        assert_eq!(chunks[0].ordinal, 0);
        assert_eq!(chunks[1].ordinal, 1);
    }

    #[test]
    fn paragraphs_join_with_one_blank_line_and_lines_stay_verbatim() {
        let doc =
            "Phone:   \n- +353 1 547 7854\n  - nested\u{a0}\u{a0}item\t\n\n\n\nNext\u{a0}para.\n";
        let chunks = chunk(doc);
        assert_eq!(chunks.len(), 1);
        assert_eq!(
            chunks[0].text,
            "Phone:\n- +353 1 547 7854\n  - nested\u{a0}\u{a0}item\n\nNext\u{a0}para."
        );
        assert_eq!(chunks[0].words, 11);
    }

    #[test]
    fn setext_headings_are_read_only_under_a_one_line_paragraph() {
        let doc = "Title\n=====\nbody\n\nSub\n---\nmore\n\nline one\nline two\n---\n- item\n---\n";
        let chunks = chunk(doc);
        assert_eq!(trails(&chunks), ["Title", "Title > Sub"]);
        assert_eq!(
            chunks[1].text,
            "more\n\nline one\nline two\n---\n- item\n---"
        );
    }

    #[test]
    fn yaml_front_matter_is_body_not_a_heading() {
        let chunks = chunk("---\ntitle: Budget\n---\n\n# Budget\nbody\n");
        assert_eq!(trails(&chunks), ["", "Budget"]);
        assert_eq!(chunks[0].text, "---\ntitle: Budget\n---");
    }

    #[test]
    fn byte_order_mark_does_not_hide_the_first_heading() {
        let chunks = chunk("\u{feff}# Title\r\nbody\r\n");
        assert_eq!(trails(&chunks), ["Title"]);
        assert_eq!(chunks[0].text, "body");
    }

    #[test]
    fn multibyte_text_is_never_split_inside_a_character() {
        // 2100 words of 3- and 4-byte characters, no blank line and no newline.
        let line = (0..2100)
            .map(|i| {
                if i % 2 == 0 {
                    "日本語"
                } else {
                    "€😀\u{a0}é"
                }
            })
            .collect::<Vec<_>>()
            .join(" ");
        let chunks = chunk(&line);
        assert!(chunks.len() >= 3);
        assert!(chunks.iter().all(|c| c.words as usize <= CHUNK_WORDS_MAX));
        let rejoined: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
        assert_eq!(rejoined, tokens(&line));
    }

    #[test]
    fn snapshot_of_a_typical_markdown_page() {
        let doc = format!(
            "# Budget 2026\n\
             Owner: Nuala Brennan. All amounts are in euro.\n\
             \n\
             ## Summary by line item\n\
             | Line item | Q1 | Year |\n\
             |-----------|---:|-----:|\n\
             | Salaries | €168,000 | €672,000 |\n\
             \n\
             {}\n\
             \n\
             {}\n\
             ## Q1 (January – March)\n\
             Q1 is the most expensive quarter.\n\
             ```sh\n\
             # export the ledger\n\
             ledger export --q1\n\
             ```\n\
             ### Hardware\n\
             Laptop for the new hire.\n\
             ## Q2\n\
             ## Contacts ##\n\
             - Accountant: +353 1 547 7854\n",
            words("salary", 250),
            words("rent", 300),
        );
        check(
            &doc,
            expect![[r##"
                #p0 [Budget 2026] 8w "Owner: Nuala Brennan. All amounts are in"
                #p1 [Budget 2026 > Summary by line item] 266w "| Line item | Q1 | Year |\n|-----------|-"
                #p2 [Budget 2026 > Summary by line item] 300w "rent0 rent1 rent2 rent3 rent4 rent5 rent"
                #p3 [Budget 2026 > Q1 (January – March)] 15w "Q1 is the most expensive quarter.\n```sh\n"
                #p4 [Budget 2026 > Q1 (January – March) > Hardware] 5w "Laptop for the new hire."
                #p5 [Budget 2026 > Contacts] 6w "- Accountant: +353 1 547 7854"
            "##]],
        );
    }

    #[test]
    fn snapshot_of_a_log_without_blank_lines() {
        let log: String = (0..260)
            .map(|i| {
                format!(
                    "2026-03-14T09:{:02}:{:02}Z INFO deploy step {i} ok\n",
                    i / 60,
                    i % 60
                )
            })
            .collect();
        check(
            &format!("# Incident log\r\n{}", log.replace('\n', "\r\n")),
            expect![[r##"
                #p0 [Incident log] 780w "2026-03-14T09:00:00Z INFO deploy step 0 "
                #p1 [Incident log] 780w "2026-03-14T09:02:10Z INFO deploy step 13"
            "##]],
        );
    }

    #[test]
    fn snapshot_of_runts_and_long_paragraphs() {
        let doc = format!(
            "Lead-in runt.\n\n{}\n\n{}\n\n{}\n# Section\n{}\n\n{}\n\nTail runt here.\n## Short\nJust this.\n",
            words("a", 380),
            words("b", 30),
            words("c", 1200),
            words("d", 700),
            words("e", 398),
        );
        check(
            &doc,
            expect![[r##"
                #p0 [] 412w "Lead-in runt.\n\na0 a1 a2 a3 a4 a5 a6 a7 a"
                #p1 [] 600w "c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c1"
                #p2 [] 600w "c600 c601 c602 c603 c604 c605 c606 c607 "
                #p3 [Section] 700w "d0 d1 d2 d3 d4 d5 d6 d7 d8 d9 d10 d11 d1"
                #p4 [Section] 401w "e0 e1 e2 e3 e4 e5 e6 e7 e8 e9 e10 e11 e1"
                #p5 [Section > Short] 2w "Just this."
            "##]],
        );
    }

    // ---- properties ----

    /// The right-trimmed `line` without up to three spaces of indentation.
    fn unindented(line: &str) -> Option<&str> {
        let body = line.trim_start_matches(' ');
        (line.len() - body.len() <= 3).then_some(body)
    }

    /// True if `line` is shaped like an ATX heading, fences aside.
    fn atx_shaped(line: &str) -> bool {
        unindented(line).is_some_and(|body| {
            let marks = body.bytes().take_while(|&b| b == b'#').count();
            (1..=6).contains(&marks)
                && matches!(body.as_bytes().get(marks), None | Some(b' ' | b'\t'))
        })
    }

    /// True if `line` is shaped like a setext underline.
    fn underline_shaped(line: &str) -> bool {
        unindented(line).is_some_and(|body| {
            body.len() >= 3 && (body.bytes().all(|b| b == b'=') || body.bytes().all(|b| b == b'-'))
        })
    }

    /// The input's lines (endings normalised, right-trimmed) as word lists,
    /// each flagged if the line could have become a heading: shaped like an
    /// ATX heading or an underline, or standing right above an underline.
    fn input_lines(text: &str) -> Vec<(Vec<String>, bool)> {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
        (0..lines.len())
            .map(|i| {
                let above_underline = lines.get(i + 1).is_some_and(|n| underline_shaped(n));
                let may_vanish =
                    atx_shaped(lines[i]) || underline_shaped(lines[i]) || above_underline;
                let words: Vec<String> = lines[i].split_whitespace().map(str::to_owned).collect();
                (words, may_vanish)
            })
            .filter(|(words, _)| !words.is_empty())
            .collect()
    }

    /// True if `got` is the words of `lines` with some whole lines flagged
    /// may-vanish left out. An NFA walk over positions (line, word), since a
    /// heading's words may also appear in the body.
    fn is_input_less_heading_lines(lines: &[(Vec<String>, bool)], got: &[&str]) -> bool {
        use std::collections::BTreeSet;
        // Close a set of positions under "skip a whole may-vanish line".
        let close = |mut set: BTreeSet<(usize, usize)>| {
            let mut todo: Vec<_> = set.iter().copied().collect();
            while let Some((line, word)) = todo.pop() {
                if word == 0
                    && lines.get(line).is_some_and(|(_, v)| *v)
                    && set.insert((line + 1, 0))
                {
                    todo.push((line + 1, 0));
                }
            }
            set
        };
        let mut states = close(BTreeSet::from([(0, 0)]));
        for want in got {
            let next = states
                .iter()
                .filter(|&&(line, word)| lines.get(line).is_some_and(|(ws, _)| ws[word] == *want))
                .map(|&(line, word)| {
                    if word + 1 == lines[line].0.len() {
                        (line + 1, 0)
                    } else {
                        (line, word + 1)
                    }
                })
                .collect();
            states = close(next);
            if states.is_empty() {
                return false;
            }
        }
        states.contains(&(lines.len(), 0))
    }

    fn soup() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            12 => "[a-z0-9]{1,8}",
            6 => Just(" ".to_owned()),
            5 => Just("\n".to_owned()),
            1 => Just("\r\n".to_owned()),
            1 => Just("\r".to_owned()),
            2 => Just("\n\n".to_owned()),
            3 => "#{1,7} ?",
            1 => "(```|~~~|````)[a-z`]{0,2}",
            2 => "(===|---|- |> |1. )",
            1 => "[\t\u{a0}\u{3000} ]{1,3}",
            2 => "[é€中😀\u{301}]{1,4}",
        ];
        prop::collection::vec(piece, 0..400).prop_map(|v| v.concat())
    }

    /// Soup with long runs, so the ceiling is reached.
    fn long_soup() -> impl Strategy<Value = String> {
        (soup(), 0usize..2500, 1usize..40, soup()).prop_map(|(a, n, per_line, b)| {
            let run: String = (0..n)
                .map(|i| {
                    if i % per_line == per_line - 1 {
                        format!("é{i}\n")
                    } else {
                        format!("w{i} ")
                    }
                })
                .collect();
            format!("{a}{run}{b}")
        })
    }

    fn assert_invariants(input: &str, chunks: &[Chunk]) -> Result<(), TestCaseError> {
        for (i, c) in chunks.iter().enumerate() {
            prop_assert_eq!(c.ordinal as usize, i);
            prop_assert!(c.words > 0);
            prop_assert!(c.words as usize <= CHUNK_WORDS_MAX);
            prop_assert_eq!(c.words as usize, c.text.split_whitespace().count());
            prop_assert!(!c.text.contains('\r'));
            prop_assert!(!c.text.starts_with('\n'));
            prop_assert!(!c.text.ends_with(char::is_whitespace));
            prop_assert!(c.trail.len() <= HEADING_LEVEL_MAX);
            prop_assert!(c.trail.iter().all(|t| !t.is_empty() && !t.contains('\n')));
        }
        // No word is lost or invented: the chunks' words, in order, are the
        // input's words less some whole lines that could be headings.
        let got: Vec<&str> = chunks
            .iter()
            .flat_map(|c| c.text.split_whitespace())
            .collect();
        prop_assert!(is_input_less_heading_lines(&input_lines(input), &got));
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn arbitrary_text_keeps_every_chunk_within_bounds_and_loses_no_body_word(text in soup()) {
            let chunks = chunk(&text);
            assert_invariants(&text, &chunks)?;
            if input_lines(&text).iter().all(|(_, may_vanish)| !may_vanish) {
                let all: Vec<&str> = chunks.iter().flat_map(|c| tokens(&c.text)).collect();
                prop_assert_eq!(all, tokens(&text));
            }
        }

        #[test]
        fn any_string_at_all_is_chunked_within_bounds(text in any::<String>()) {
            assert_invariants(&text, &chunk(&text))?;
        }

        #[test]
        fn long_runs_are_cut_at_the_ceiling_without_losing_words(text in long_soup()) {
            assert_invariants(&text, &chunk(&text))?;
        }
    }

    /// A generated document whose heading lines are known.
    #[derive(Debug, Clone)]
    enum Block {
        Heading {
            level: usize,
            indent: usize,
            title: String,
            closed: bool,
        },
        Para(Vec<String>),
        Fence(Vec<String>),
    }

    fn word() -> impl Strategy<Value = String> {
        "[a-z0-9é€中😀]{1,6}"
    }

    fn line_of(max: usize) -> impl Strategy<Value = String> {
        (
            prop::collection::vec(word(), 1..max),
            prop::sample::select(vec![" ", "\u{a0}", " \t "]),
        )
            .prop_map(|(ws, sep)| ws.join(sep))
    }

    fn block() -> impl Strategy<Value = Block> {
        prop_oneof![
            2 => (1usize..=6, 0usize..=3, prop::collection::vec(word(), 1..4), any::<bool>())
                .prop_map(|(level, indent, ws, closed)| Block::Heading { level, indent, title: ws.join(" "), closed }),
            4 => prop::collection::vec(line_of(12), 1..8).prop_map(Block::Para),
            1 => prop::collection::vec(line_of(1200), 1..3).prop_map(Block::Para),
            1 => prop::collection::vec(line_of(150), 1..20).prop_map(Block::Para),
            1 => prop::collection::vec(
                prop_oneof![line_of(8), Just("# comment".to_owned()), Just("## section?".to_owned()), Just(String::new())],
                0..10,
            ).prop_map(Block::Fence),
        ]
    }

    /// Renders blocks with the given line ending and gaps, returning the text
    /// and, for every body word, the trail it must be cited under.
    fn render_doc(
        blocks: &[Block],
        gaps: &[bool],
        eol: &str,
    ) -> (String, Vec<(String, Vec<String>)>) {
        let mut text = String::new();
        let mut expected = Vec::new();
        let mut trail: Vec<(usize, String)> = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            let lines: Vec<String> = match b {
                Block::Heading {
                    level,
                    indent,
                    title,
                    closed,
                } => {
                    trail.retain(|(l, _)| l < level);
                    trail.push((*level, title.clone()));
                    let close = if *closed { " ##" } else { "" };
                    vec![format!(
                        "{}{} {title}{close}",
                        " ".repeat(*indent),
                        "#".repeat(*level)
                    )]
                }
                Block::Para(lines) => lines.clone(),
                Block::Fence(lines) => {
                    let mut all = vec!["```sh".to_owned()];
                    all.extend(lines.iter().cloned());
                    all.push("```".to_owned());
                    all
                }
            };
            if !matches!(b, Block::Heading { .. }) {
                let names: Vec<String> = trail.iter().map(|(_, t)| t.clone()).collect();
                for l in &lines {
                    expected.extend(l.split_whitespace().map(|w| (w.to_owned(), names.clone())));
                }
            }
            for l in lines {
                text.push_str(&l);
                text.push_str(eol);
            }
            if gaps.get(i).copied().unwrap_or(false) {
                text.push_str(eol);
            }
        }
        (text, expected)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn every_body_word_is_kept_in_order_under_its_own_trail(
            blocks in prop::collection::vec(block(), 0..12),
            gaps in prop::collection::vec(any::<bool>(), 12),
        ) {
            let (text, expected) = render_doc(&blocks, &gaps, "\n");
            let chunks = chunk(&text);
            assert_invariants(&text, &chunks)?;
            let got: Vec<(String, Vec<String>)> = chunks
                .iter()
                .flat_map(|c| c.text.split_whitespace().map(|w| (w.to_owned(), c.trail.clone())))
                .collect();
            prop_assert_eq!(got, expected);
            for eol in ["\r\n", "\r"] {
                let (twin, _) = render_doc(&blocks, &gaps, eol);
                prop_assert_eq!(&chunk(&twin), &chunks);
            }
        }
    }
}
