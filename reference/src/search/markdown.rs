//! How a passage reads, Markdown or plain text, and a Markdown passage's plain text, which snippets are cut from (§8.1, §7.2).
//!
//! A passage is stored as the document's own lines (§7.2), markup and all.
//! A memoria-owned document read from `.md`, `.markdown`, `.html` or `.htm`
//! (HTML arrives converted to Markdown, [`crate::ingest::decode`]) is
//! Markdown, and so is a sibling's body; any other file is plain text, where
//! a `#` line or a leading `-` is the author's text and not markup
//! ([`TextForm::of`]). The document page renders Markdown (`web/markdown.rs`)
//! and shows plain text as it is. A snippet is cut from a Markdown
//! passage's [`plain_text`]: what a reader sees of it rendered, so a result
//! never shows backticks, `#`, bullets, table pipes, emphasis marks or link
//! syntax, and a highlight falls on the words the page shows.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::ingest::decode::{SourceKind, source_kind};
use crate::storage::store::DocumentSummary;

/// The CommonMark extensions a passage is read with for display: GitHub
/// tables, as the chunker reads blocks ([`crate::ingest::chunk`]), and
/// strikethrough. Front matter is added for a document's first passage
/// only ([`read_options`]). Nothing that renders a form control (task
/// lists) or needs a second pass over the document (footnotes).
pub const READ_OPTIONS: Options = Options::ENABLE_TABLES.union(Options::ENABLE_STRIKETHROUGH);

/// The options a passage is read with: [`READ_OPTIONS`], and YAML or TOML
/// front matter when the passage is the document's first (`first`), the
/// only place a document can hold it.
pub fn read_options(first: bool) -> Options {
    if first {
        READ_OPTIONS
            .union(Options::ENABLE_YAML_STYLE_METADATA_BLOCKS)
            .union(Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS)
    } else {
        READ_OPTIONS
    }
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
    /// How `doc`'s passages read: a memoria-owned document by its path's
    /// extension, as it was decoded ([`source_kind`]); a sibling's body as
    /// Markdown (the path of a sibling item is `app:item`, with no
    /// extension, and its media type is not stored).
    pub fn of(doc: &DocumentSummary) -> TextForm {
        if doc.provenance.is_some() {
            return TextForm::Markdown;
        }
        match source_kind(&doc.path) {
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
}

/// The text a reader sees of a Markdown passage, without its markup: text,
/// inline code, link text (never the target), an image's alt text, and the
/// document's raw HTML as the text it is (the page escapes it). Blocks,
/// list items and table cells are separated by one space, and every run of
/// ASCII white space becomes one space (a no-break space is text and is
/// kept). `first`: the passage is the document's first, where front matter
/// may stand ([`read_options`]). Total over any `&str`.
pub fn plain_text(markdown: &str, first: bool) -> String {
    let mut raw = String::with_capacity(markdown.len());
    for event in Parser::new_ext(markdown, read_options(first)) {
        match event {
            Event::Text(t)
            | Event::Code(t)
            | Event::Html(t)
            | Event::InlineHtml(t)
            | Event::InlineMath(t)
            | Event::DisplayMath(t)
            | Event::FootnoteReference(t) => raw.push_str(&t),
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
    let mut out = String::with_capacity(raw.len());
    for piece in raw.split(|c: char| c.is_ascii_whitespace()) {
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

    proptest::proptest! {
        #[test]
        fn any_text_gives_plain_text_without_panicking(text in "\\PC{0,300}") {
            let out = plain_text(&text, true);
            proptest::prop_assert!(!out.starts_with(' ') && !out.ends_with(' '));
        }
    }
}
