//! The fact box as a reader sees it: inside the results region, below the notices and above the list, scriptless, every value text (§8.8, "Where it sits on the page").
//!
//! Nothing in a box is an anchor except its citation, to
//! `/documents/{id}#p{n}`: no `mailto:`, no `tel:`, no link built from a
//! document's bytes. A value is escaped text. Zero candidates renders
//! nothing at all, never "no phone number found": the corpus is not the
//! world. The box adds no form and no focus, so it never changes what Enter
//! does.

use maud::{Markup, html};

use crate::search::facts::FactBox;

/// The boxes, in the order the query named their kinds; empty markup for none.
pub(crate) fn fact_boxes(boxes: &[FactBox]) -> Markup {
    html! {
        @if !boxes.is_empty() {
            section.facts aria-label="Facts found in these results" {
                @for b in boxes {
                    div.fact data-kind=(b.kind.name()) {
                        h2 { (b.kind.heading()) }
                        ul {
                            @for row in &b.rows {
                                li.fact-row {
                                    span.fact-label { (row.label) } ": "
                                    strong.fact-value { (row.value) }
                                    " · "
                                    a.fact-cite href=(row.link) {
                                        (row.title)
                                        @for t in &row.trail { " › " (t) }
                                    }
                                }
                            }
                        }
                        @if let Some(n) = &b.narrowed {
                            p.fact-narrowed { (n.sentence(b.kind)) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::fact_boxes;
    use crate::search::facts::{FactBox, FactRow, Kind, Narrowed};

    fn row(value: &str, label: &str, title: &str, trail: &[&str], link: &str) -> FactRow {
        FactRow {
            value: value.into(),
            label: label.into(),
            title: title.into(),
            trail: trail.iter().map(|s| s.to_string()).collect(),
            rank: 1,
            link: link.into(),
        }
    }

    #[test]
    fn no_box_renders_no_markup_at_all() {
        assert_eq!(fact_boxes(&[]).into_string(), "");
    }

    #[test]
    fn a_box_is_text_with_one_link_its_citation_and_escapes_the_documents_bytes() {
        let boxes = [
            FactBox {
                kind: Kind::Phone,
                rows: vec![row(
                    "+353 (0)1 547 7854",
                    "The office phone number is",
                    "Office <b>",
                    &["Contact"],
                    "/documents/abc#p2",
                )],
                narrowed: Some(Narrowed {
                    matched: vec!["office".into()],
                    others: 3,
                }),
            },
            FactBox {
                kind: Kind::Email,
                rows: vec![row(
                    "support@almendra.example",
                    "Support",
                    "Help",
                    &[],
                    "/documents/def#p0",
                )],
                narrowed: None,
            },
        ];
        let html = fact_boxes(&boxes).into_string();
        expect![[r#"<section class="facts" aria-label="Facts found in these results"><div class="fact" data-kind="phone"><h2>Phone</h2><ul><li class="fact-row"><span class="fact-label">The office phone number is</span>: <strong class="fact-value">+353 (0)1 547 7854</strong> · <a class="fact-cite" href="/documents/abc#p2">Office &lt;b&gt; › Contact</a></li></ul><p class="fact-narrowed">Matched “office”. 3 other phone numbers are in these results.</p></div><div class="fact" data-kind="email"><h2>Email</h2><ul><li class="fact-row"><span class="fact-label">Support</span>: <strong class="fact-value">support@almendra.example</strong> · <a class="fact-cite" href="/documents/def#p0">Help</a></li></ul></div></section>"#]].assert_eq(&html);
        assert_eq!(
            html.matches("<a ").count(),
            2,
            "one link per row: the citation"
        );
        assert!(!html.contains("mailto:") && !html.contains("tel:"));
    }
}
