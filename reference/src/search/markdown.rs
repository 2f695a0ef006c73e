//! How a passage reads, Markdown or plain text, and a Markdown passage's plain text, which snippets are cut from (§8.1, §7.2).
//!
//! A passage is stored as the document's own lines (§7.2), markup and all.
//! A memoria-owned document read from `.md`, `.markdown`, `.html` or `.htm`
//! (HTML arrives converted to Markdown, [`crate::ingest::decode`]) is
//! Markdown, and so is a sibling's body; any other file is plain text, where
//! a `#` line or a leading `-` is the author's text and not markup
//! ([`TextForm::of_source`]). The document page renders Markdown (`web/markdown.rs`)
//! and shows plain text as it is. A snippet is cut from a Markdown
//! passage's [`plain_text`]: what a reader sees of it rendered, so a result
//! never shows backticks, `#`, bullets, table pipes, emphasis marks or link
//! syntax, and a highlight falls on the words the page shows.

use std::borrow::Cow;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

// Front matter is where a document may name its own date, so its bounds
// are read where that date is (`crate::date`).
pub use crate::date::{FRONT_MATTER_OPTIONS, front_matter_len};

/// What a file was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// `.md`, `.markdown`.
    Markdown,
    /// `.txt` or an unknown extension holding text.
    PlainText,
    /// `.html`, `.htm`, converted to Markdown.
    Html,
}

/// What a file named `name` (a path or upload file name) is read as: by
/// its extension, `.md`/`.markdown` Markdown, `.html`/`.htm` HTML, anything
/// else plain text. The document page reads a stored path with it too, so
/// a `.txt` is shown as the text it is (§8.1).
pub fn source_kind(name: &str) -> SourceKind {
    match extension(name).as_deref() {
        Some("md" | "markdown") => SourceKind::Markdown,
        Some("html" | "htm") => SourceKind::Html,
        _ => SourceKind::PlainText,
    }
}

/// A name's extension, lowercased, if it has one.
pub(crate) fn extension(name: &str) -> Option<String> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    base.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .filter(|e| !e.is_empty())
}

/// The CommonMark extensions a passage is read with for display: GitHub
/// tables, as the chunker reads blocks ([`crate::search::chunk`]), and
/// strikethrough. Front matter is read only at the very start of a
/// document's first passage ([`events`]). Nothing that renders a form
/// control (task lists) or needs a second pass over the document
/// (footnotes).
pub const READ_OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// The CommonMark events of `markdown` with their byte ranges, read with
/// `options` (which should not hold [`FRONT_MATTER_OPTIONS`]) and with front
/// matter read only where it can stand: at the first byte, when `first`
/// (the text is a whole document, or a document's first passage).
pub fn events(
    markdown: &str,
    options: Options,
    first: bool,
) -> impl Iterator<Item = (Event<'_>, Range<usize>)> {
    let split = if first { front_matter_len(markdown) } else { 0 };
    let options = options.difference(FRONT_MATTER_OPTIONS);
    let head = Parser::new_ext(&markdown[..split], options.union(FRONT_MATTER_OPTIONS));
    let tail = Parser::new_ext(&markdown[split..], options);
    head.into_offset_iter().chain(
        tail.into_offset_iter()
            .map(move |(event, range)| (event, range.start + split..range.end + split)),
    )
}

/// A passage's events as the page and snippets read it: [`events`] with
/// [`READ_OPTIONS`]. `first`: the passage is the document's first.
pub fn read(markdown: &str, first: bool) -> impl Iterator<Item = Event<'_>> {
    events(markdown, READ_OPTIONS, first).map(|(event, _)| event)
}

/// How a document's passages read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextForm {
    /// CommonMark: rendered on the document page, stripped for snippets.
    Markdown,
    /// Plain text: shown as it is, everywhere.
    Plain,
}

impl TextForm {
    /// How a document's passages read, from its recorded `path` and
    /// whether a sibling owns it (`sibling`): a memoria-owned document by
    /// its path's extension, as it was decoded ([`source_kind`]); a
    /// sibling's body as Markdown (the path of a sibling item is `app:item`,
    /// with no extension, and its media type is not stored). A summarised
    /// document answers it itself (`DocumentSummary::text_form`).
    pub fn of_source(path: &str, sibling: bool) -> TextForm {
        if sibling {
            return TextForm::Markdown;
        }
        match source_kind(path) {
            SourceKind::Markdown | SourceKind::Html => TextForm::Markdown,
            SourceKind::PlainText => TextForm::Plain,
        }
    }

    /// The text a snippet of `passage` is cut from: a Markdown passage's
    /// [`plain_text`], plain text as it is. `first`: the passage is the
    /// document's first (ordinal 0).
    pub fn snippet_text(self, passage: &str, first: bool) -> String {
        match self {
            TextForm::Markdown => plain_text(passage, first),
            TextForm::Plain => passage.to_string(),
        }
    }

    /// The text the index holds of `passage`: a Markdown passage less what
    /// a rendered page never shows ([`visible`]), plain text as it is, so
    /// no search finds a passage by a word its reader cannot see. `first`:
    /// the passage is the document's first (ordinal 0).
    pub fn index_text(self, passage: &str, first: bool) -> Cow<'_, str> {
        match self {
            TextForm::Markdown => visible(passage, first),
            TextForm::Plain => Cow::Borrowed(passage),
        }
    }

    /// [`TextForm::index_text`] of `passage` and, for a Markdown passage,
    /// its [`plain_text`] (what an ingest seals beside it), read in one
    /// parse where [`visible_and_plain`] can (issue 30).
    pub fn index_and_plain_text(
        self,
        passage: &str,
        first: bool,
    ) -> (Cow<'_, str>, Option<String>) {
        match self {
            TextForm::Markdown => {
                let (index, plain) = visible_and_plain(passage, first);
                (index, Some(plain))
            }
            TextForm::Plain => (Cow::Borrowed(passage), None),
        }
    }
}

/// Elements whose content a browser never renders, whatever their
/// attributes: scripts, style sheets and templates.
pub const UNRENDERED_ELEMENTS: [&str; 3] = ["script", "style", "template"];

/// HTML's void elements (WHATWG HTML, "void elements"): they have no
/// content and no end tag, so a hidden one hides only itself.
const VOID_ELEMENTS: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param",
];

/// A Markdown passage less what a rendered page never shows (issue 32): the
/// document's HTML comments (`<!-- … -->`, an unclosed one to the end), and
/// every element marked hidden (a `hidden` attribute, or a `style` that says
/// `display: none`) or never rendered ([`UNRENDERED_ELEMENTS`]), its tags and
/// everything inside it, Markdown included, to its matching end tag (or the
/// end of the passage). Which text is HTML is CommonMark's reading
/// ([`events`]): a `<!--` in a code span or a code block is code, shown.
/// Everything else is kept byte for byte, the rest of the document's raw
/// HTML included (the page shows it as text). Borrowed when nothing is cut.
/// Total over any `&str`.
pub fn visible(markdown: &str, first: bool) -> Cow<'_, str> {
    if !markdown.contains('<') {
        return Cow::Borrowed(markdown);
    }
    let mut hidden = Hidden::default();
    for (event, range) in events(markdown, READ_OPTIONS, first) {
        hidden.read(markdown, &event, range);
    }
    hidden.cut(markdown)
}

/// [`visible`] and [`plain_text`] of a passage together, as an ingest
/// stores them (issue 30): where [`visible`] cuts nothing, the plain text is
/// made from the events of the same parse (the text and the reading are
/// [`plain_text_of_visible`]'s own), so a passage is parsed once, not
/// twice; where it cuts, the plain text is read from what is left, as
/// [`plain_text`] does.
pub fn visible_and_plain(markdown: &str, first: bool) -> (Cow<'_, str>, String) {
    if !markdown.contains('<') {
        return (
            Cow::Borrowed(markdown),
            plain_text_of_visible(markdown, first),
        );
    }
    let mut hidden = Hidden::default();
    let mut plain = PlainText::with_capacity(markdown.len());
    for (event, range) in events(markdown, READ_OPTIONS, first) {
        hidden.read(markdown, &event, range);
        plain.push(&event);
    }
    match hidden.cut(markdown) {
        Cow::Borrowed(kept) => (Cow::Borrowed(kept), plain.finish()),
        Cow::Owned(kept) => {
            let plain = plain_text_of_visible(&kept, first);
            (Cow::Owned(kept), plain)
        }
    }
}

/// What [`visible`] cuts from a passage, gathered event by event.
#[derive(Debug, Default)]
struct Hidden {
    cuts: Vec<Range<usize>>,
    state: HiddenHtml,
}

impl Hidden {
    /// Reads one event of `markdown` standing at `range`.
    fn read(&mut self, markdown: &str, event: &Event<'_>, range: Range<usize>) {
        match event {
            Event::Html(_) | Event::InlineHtml(_) => {
                let html = &markdown[range.clone()];
                self.state.scan(html, range.start, &mut self.cuts);
            }
            // Text inside hidden HTML (Markdown's own markup between its
            // words may stay: it shows nothing by itself).
            Event::Text(_)
            | Event::Code(_)
            | Event::InlineMath(_)
            | Event::DisplayMath(_)
            | Event::FootnoteReference(_)
                if self.state.is_hiding() =>
            {
                self.cuts.push(range);
            }
            _ => {}
        }
    }

    /// `markdown` less the cuts read; borrowed when there are none.
    fn cut(self, markdown: &str) -> Cow<'_, str> {
        let mut cuts = self.cuts;
        if cuts.is_empty() {
            return Cow::Borrowed(markdown);
        }
        cuts.sort_by_key(|r| r.start);
        let mut out = String::with_capacity(markdown.len());
        let mut at = 0;
        for cut in cuts {
            if cut.start > at {
                out.push_str(&markdown[at..cut.start]);
            }
            at = at.max(cut.end);
        }
        out.push_str(&markdown[at.min(markdown.len())..]);
        Cow::Owned(out)
    }
}

/// Where [`visible`] stands in the document's HTML: inside a comment, or
/// inside a hidden element (its name and how many of that name are open).
#[derive(Debug, Default)]
struct HiddenHtml {
    comment: bool,
    element: Option<(String, usize)>,
}

impl HiddenHtml {
    fn is_hiding(&self) -> bool {
        self.comment || self.element.is_some()
    }

    /// Reads one run of the document's HTML standing at byte `offset`,
    /// pushing the byte ranges of it to cut.
    fn scan(&mut self, html: &str, offset: usize, cuts: &mut Vec<Range<usize>>) {
        let mut hidden_from = self.is_hiding().then_some(0);
        let mut at = 0;
        while at < html.len() {
            if self.comment {
                let Some(end) = html[at..].find("-->") else {
                    break;
                };
                at += end + 3;
                self.comment = false;
            } else if let Some(lt) = html[at..].find('<').map(|i| at + i) {
                if html[lt..].starts_with("<!--") {
                    hidden_from.get_or_insert(lt);
                    self.comment = true;
                    at = lt + 4;
                    continue;
                }
                let end = html[lt..].find('>').map_or(html.len(), |i| lt + i + 1);
                let tag = &html[lt..end];
                at = end;
                let Some((closing, name, attributes)) = parse_tag(tag) else {
                    continue;
                };
                let self_closing = tag.ends_with("/>") || VOID_ELEMENTS.contains(&name.as_str());
                match self.element.as_mut() {
                    Some((open, depth)) if *open == name && !self_closing => {
                        if closing {
                            *depth -= 1;
                        } else {
                            *depth += 1;
                        }
                        if *depth == 0 {
                            self.element = None;
                        }
                    }
                    Some(_) => {}
                    None if !closing && is_hidden(&name, attributes) => {
                        hidden_from.get_or_insert(lt);
                        if !self_closing {
                            self.element = Some((name, 1));
                        }
                    }
                    None => {}
                }
            } else {
                at = html.len();
            }
            if !self.is_hiding()
                && let Some(from) = hidden_from.take()
            {
                cuts.push(offset + from..offset + at);
            }
        }
        if let Some(from) = hidden_from {
            cuts.push(offset + from..offset + html.len());
        }
    }
}

/// A tag's `(closing, lowercased name, attribute text)`; `None` when `tag`
/// is not a start or end tag (a declaration, a processing instruction, a
/// lone `<`).
fn parse_tag(tag: &str) -> Option<(bool, String, &str)> {
    let inner = tag.strip_prefix('<')?;
    let (closing, inner) = match inner.strip_prefix('/') {
        Some(rest) => (true, rest),
        None => (false, inner),
    };
    let name_len = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(inner.len());
    if name_len == 0 || !inner.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    Some((
        closing,
        inner[..name_len].to_ascii_lowercase(),
        &inner[name_len..],
    ))
}

/// True if an element named `name` with `attributes` is never rendered: one
/// of [`UNRENDERED_ELEMENTS`], or marked `hidden`, or styled `display: none`.
fn is_hidden(name: &str, attributes: &str) -> bool {
    if UNRENDERED_ELEMENTS.contains(&name) {
        return true;
    }
    let lower = attributes.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let hidden_attribute = lower.match_indices("hidden").any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + "hidden".len()).copied();
        before.is_some_and(|b| b.is_ascii_whitespace())
            && after.is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'=' | b'>' | b'/'))
    });
    let squeezed: String = lower.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    hidden_attribute || squeezed.contains("display:none")
}

/// The text a reader sees of a Markdown passage, without its markup: text,
/// inline code, link text (never the target), an image's alt text, and the
/// document's raw HTML as the text it is (the page escapes it), less the
/// comments and hidden elements no rendered page shows ([`visible`]). Blocks,
/// list items and table cells are separated by one space, and every run of
/// ASCII white space becomes one space (a no-break space is text and is
/// kept). `first`: the passage is the document's first, where front matter
/// may stand ([`events`]). Total over any `&str`.
pub fn plain_text(markdown: &str, first: bool) -> String {
    plain_text_of_visible(&visible(markdown, first), first)
}

/// [`plain_text`] of a passage already passed through [`visible`]: an
/// ingest reads a passage's [`visible`] text once for the index and cuts
/// the plain text from the same (issue 30: one parse fewer per passage).
pub fn plain_text_of_visible(markdown: &str, first: bool) -> String {
    let mut plain = PlainText::with_capacity(markdown.len());
    for event in read(markdown, first) {
        plain.push(&event);
    }
    plain.finish()
}

/// [`plain_text_of_visible`]'s text, gathered event by event.
struct PlainText {
    raw: String,
}

impl PlainText {
    fn with_capacity(bytes: usize) -> PlainText {
        PlainText {
            raw: String::with_capacity(bytes),
        }
    }

    /// Reads one event of the passage.
    fn push(&mut self, event: &Event<'_>) {
        let raw = &mut self.raw;
        match event {
            Event::Text(t)
            | Event::Code(t)
            | Event::Html(t)
            | Event::InlineHtml(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t)
            | Event::FootnoteReference(t) => raw.push_str(t),
            Event::SoftBreak | Event::HardBreak | Event::Rule => raw.push(' '),
            Event::Start(Tag::TableCell | Tag::Item) => raw.push(' '),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::Item
                | TagEnd::TableCell
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::BlockQuote(_)
                | TagEnd::CodeBlock
                | TagEnd::HtmlBlock
                | TagEnd::MetadataBlock(_),
            ) => raw.push(' '),
            _ => {}
        }
    }

    /// The text read, every run of ASCII white space one space, none at
    /// either end.
    fn finish(self) -> String {
        let mut out = String::with_capacity(self.raw.len());
        for piece in self.raw.split(|c: char| c.is_ascii_whitespace()) {
            if piece.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(piece);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passage_loses_its_markup_and_keeps_its_words() {
        let md = "Run `cargo test` **first**, then _see_ [the guide](https://example.org/x).\n\n\
                  - one\n- two\n1. three\n\n\
                  | Name | Phone |\n|---|---|\n| Ana | 555 |\n\n\
                  > quoted ~~gone~~\n\n\
                  ```sh\nmake all\n```\n\n\
                  ![a diagram](https://evil.example/p.png) and \\*stars\\*";
        assert_eq!(
            plain_text(md, false),
            "Run cargo test first, then see the guide. one two three Name Phone Ana 555 \
             quoted gone make all a diagram and *stars*"
        );
    }

    #[test]
    fn the_documents_raw_html_is_kept_as_the_text_it_is() {
        assert_eq!(
            plain_text("A <b>bold</b> claim.\n\n<div>\nblock\n</div>\n", false),
            "A <b>bold</b> claim. <div> block </div>"
        );
    }

    #[test]
    fn a_no_break_space_is_text_and_is_kept() {
        assert_eq!(plain_text("01\u{a0}555  1234\n", false), "01\u{a0}555 1234");
    }

    #[test]
    fn front_matter_is_read_at_the_first_byte_of_a_first_passage_only() {
        let doc = "---\ntitle: Plan\n---\n# Plan\n\ntext\n\n---\n\n## Part\n\nmore\n\n---\n";
        assert_eq!(front_matter_len(doc), "---\ntitle: Plan\n---\n".len());
        assert_eq!(front_matter_len(&doc[1..]), 0);
        // The later pair is two thematic breaks: the heading between them
        // is a heading, not front matter.
        assert_eq!(plain_text(doc, true), "title: Plan Plan text Part more");
        assert_eq!(front_matter_len("---\n\ntitle: x\n---\n"), 0);
        assert_eq!(front_matter_len("---\n---\n"), 0);
        assert_eq!(
            front_matter_len("+++\ntitle = 'x'\n+++\nbody"),
            "+++\ntitle = 'x'\n+++\n".len()
        );
        assert_eq!(
            front_matter_len("---\ntitle: x\n...\nbody"),
            "---\ntitle: x\n...\n".len()
        );
    }

    #[test]
    fn what_a_rendered_page_never_shows_is_not_in_the_plain_text() {
        // (Markdown, plain text)
        let rows = [
            ("Visible <!-- a secret note --> text.", "Visible text."),
            (
                "Before\n\n<!--\nsecret\n\n# secret heading\n-->\n\nAfter",
                "Before After",
            ),
            // Inline, an unclosed `<!--` is no comment in CommonMark: text.
            ("Open <!-- never closed", "Open <!-- never closed"),
            // Opening a block, it runs to the end.
            ("Open\n\n<!-- never closed\n\nsecret", "Open"),
            ("A <span hidden>secret</span> word.", "A word."),
            (
                "<div hidden>\n\nsecret **words**\n\n</div>\n\nshown",
                "shown",
            ),
            ("<p style=\"display: none\">secret</p>\n\nshown", "shown"),
            (
                "<div hidden><div>secret</div> still secret</div>\nshown",
                "shown",
            ),
            ("<script>\nsecret()\n</script>\n\nshown", "shown"),
            ("<input hidden value=x> shown <img hidden src=y>", "shown"),
            ("`<!-- code -->` is code", "<!-- code --> is code"),
            (
                "A <b>bold</b> <span data-hidden=\"1\">kept</span>",
                "A <b>bold</b> <span data-hidden=\"1\">kept</span>",
            ),
        ];
        for (markdown, plain) in rows {
            assert_eq!(plain_text(markdown, false), plain, "{markdown:?}");
        }
    }

    #[test]
    fn a_markdown_passage_is_indexed_without_its_hidden_text_and_plain_text_as_it_is() {
        let passage = "Shown <!-- hidden --> and <span hidden>gone</span>.";
        assert_eq!(
            TextForm::Markdown.index_text(passage, false),
            "Shown  and ."
        );
        assert_eq!(TextForm::Plain.index_text(passage, false), passage);
        assert!(matches!(visible("no html at all", false), Cow::Borrowed(_)));
    }

    proptest::proptest! {
        #[test]
        fn hidden_text_never_reaches_the_plain_text_and_visible_text_always_does(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "shown", " ", "\n", "\n\n", "<!--", "-->", "<span hidden>", "</span>",
                    "<div hidden>", "</div>", "<div>", "<b>", "</b>", "secret", "*", "`", "# ",
                ]),
                0..60,
            ),
        ) {
            let text = pieces.concat();
            let out = plain_text(&text, false);
            // Every word left is from the document, and no word of the
            // text appears more often than it was written.
            proptest::prop_assert!(out.matches("shown").count() <= text.matches("shown").count());
            proptest::prop_assert!(out.matches("secret").count() <= text.matches("secret").count());
            // With nothing that hides, nothing is cut.
            if !text.contains("<!--") && !text.contains("hidden") {
                proptest::prop_assert_eq!(visible(&text, false), text.as_str());
            }
        }

        #[test]
        fn the_one_parse_an_ingest_reads_gives_what_visible_and_plain_text_give_apart(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "shown", " ", "\n", "\n\n", "<!--", "-->", "<span hidden>", "</span>",
                    "<div hidden>", "</div>", "<div>", "<b>", "`", "# ", "---\n", "| a |\n",
                    "|---|\n", "- ", "<script>", "</script>", "[x](y)",
                ]),
                0..60,
            ),
            first in proptest::bool::ANY,
        ) {
            let text = pieces.concat();
            let (index, plain) = visible_and_plain(&text, first);
            proptest::prop_assert_eq!(&index, &visible(&text, first));
            proptest::prop_assert_eq!(plain, plain_text(&text, first));
        }

        #[test]
        fn any_text_gives_plain_text_without_panicking(text in "\\PC{0,300}") {
            let out = plain_text(&text, true);
            proptest::prop_assert!(!out.starts_with(' ') && !out.ends_with(' '));
        }
    }
}
