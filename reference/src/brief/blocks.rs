//! A passage cut into the blocks a brief quotes: whole sentences of its prose, never a cut one (`brief-material.md` §3).
//!
//! A brief quotes; it generates nothing. Its unit is the sentence: a
//! Markdown passage is read block by block (paragraphs, list items, table
//! cells and quotes; headings are the section, code and raw HTML are not
//! prose), a plain-text passage paragraph by paragraph, and each block is
//! split into sentences by Unicode's sentence boundaries (UAX #29, the
//! `unicode-segmentation` crate). A sentence over [`BLOCK_CHARS_MAX`] is not
//! quoted at all rather than cut.

use pulldown_cmark::{Event, Tag, TagEnd};
use unicode_segmentation::UnicodeSegmentation as _;

use crate::search::markdown::{TextForm, read};

/// The longest sentence a brief quotes, in characters: a longer one (a
/// flattened table, a run-on list) is left out whole, never cut, so every
/// quoted sentence is one the document holds.
pub const BLOCK_CHARS_MAX: usize = 500;
/// The fewest characters a quoted sentence has: a stray "1." or "See:" is
/// not a sentence a brief can stand on.
pub const BLOCK_CHARS_MIN: usize = 12;

/// The sentences of one passage, in reading order: each trimmed, inner
/// white space collapsed to one space, between [`BLOCK_CHARS_MIN`] and
/// [`BLOCK_CHARS_MAX`] characters. `first`: the passage is its document's
/// first (where Markdown front matter may stand). Total over any `&str`.
pub fn sentences(passage: &str, form: TextForm, first: bool) -> Vec<String> {
    let mut out = Vec::new();
    for block in prose_blocks(passage, form, first) {
        for s in block.split_sentence_bounds() {
            let s = collapse(s);
            let n = s.chars().count();
            if (BLOCK_CHARS_MIN..=BLOCK_CHARS_MAX).contains(&n)
                && s.chars().any(char::is_alphabetic)
            {
                out.push(s);
            }
        }
    }
    out
}

/// Every run of white space as one space, trimmed.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The passage's prose blocks: for Markdown, the text of each paragraph,
/// list item, table cell and quote (headings, code and HTML left out); for
/// plain text, each paragraph (blank-line separated).
fn prose_blocks(passage: &str, form: TextForm, first: bool) -> Vec<String> {
    match form {
        TextForm::Plain => passage
            .split("\n\n")
            .map(collapse)
            .filter(|b| !b.is_empty())
            .collect(),
        TextForm::Markdown => markdown_blocks(passage, first),
    }
}

fn markdown_blocks(passage: &str, first: bool) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current = String::new();
    // Inside a heading, a code block, front matter or raw HTML: not prose.
    let mut skip_depth = 0usize;
    let flush = |current: &mut String, blocks: &mut Vec<String>| {
        let b = collapse(current);
        if !b.is_empty() {
            blocks.push(b);
        }
        current.clear();
    };
    for event in read(passage, first) {
        match event {
            Event::Start(
                Tag::Heading { .. } | Tag::CodeBlock(_) | Tag::MetadataBlock(_) | Tag::HtmlBlock,
            ) => {
                flush(&mut current, &mut blocks);
                skip_depth += 1;
            }
            Event::End(
                TagEnd::Heading(_)
                | TagEnd::CodeBlock
                | TagEnd::MetadataBlock(_)
                | TagEnd::HtmlBlock,
            ) => {
                skip_depth = skip_depth.saturating_sub(1);
                current.clear();
            }
            Event::Start(
                Tag::Paragraph | Tag::Item | Tag::List(_) | Tag::TableCell | Tag::BlockQuote(_),
            ) => {
                flush(&mut current, &mut blocks);
            }
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::List(_)
                | TagEnd::TableCell
                | TagEnd::BlockQuote(_),
            ) => {
                flush(&mut current, &mut blocks);
            }
            Event::Text(t) | Event::Code(t) if skip_depth == 0 => current.push_str(&t),
            Event::SoftBreak | Event::HardBreak if skip_depth == 0 => current.push(' '),
            _ => {}
        }
    }
    flush(&mut current, &mut blocks);
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_markdown_passage_gives_its_sentences_and_not_its_heading_or_code() {
        let md = "## Deploying\n\nDeploys go through docker compose on the box. Run it twice.\n\n```\nrm -rf /\n```\n\n- Never run migrations by hand\n- Keep the notes current\n";
        let s = sentences(md, TextForm::Markdown, false);
        assert_eq!(
            s,
            [
                "Deploys go through docker compose on the box.",
                "Run it twice.",
                "Never run migrations by hand",
                "Keep the notes current",
            ]
        );
    }

    #[test]
    fn a_plain_passage_splits_by_paragraph_then_sentence() {
        let s = sentences(
            "First line of prose here.\nSame paragraph still.\n\nSecond paragraph now.",
            TextForm::Plain,
            false,
        );
        assert_eq!(
            s,
            [
                "First line of prose here.",
                "Same paragraph still.",
                "Second paragraph now."
            ]
        );
    }

    #[test]
    fn a_sentence_over_the_limit_is_left_out_whole() {
        let long = format!("{}.", "word ".repeat(BLOCK_CHARS_MAX / 4));
        assert!(sentences(&long, TextForm::Plain, false).is_empty());
    }

    #[test]
    fn any_bytes_as_text_give_sentences_without_a_panic() {
        for s in [
            "",
            "\u{0}",
            "# only a heading",
            "<div>html</div>",
            "```\nunterminated",
        ] {
            let _ = sentences(s, TextForm::Markdown, true);
            let _ = sentences(s, TextForm::Plain, true);
        }
    }
}
