//! The fact box as a reader sees it: inside the results region, below the notices and above the list, scriptless, every value text (§8.8, "Where it sits on the page").
//!
//! Nothing in a box is an anchor except its citation, to
//! `/documents/{id}#p{n}`: no `mailto:`, no `tel:`, no link built from a
//! document's bytes. A value is escaped text. Zero candidates renders
//! nothing at all, never "no phone number found": the corpus is not the
//! world. The box adds no form and no focus, so it never changes what Enter
//! does.
//!
//! A model box (§8.9) never borrows a validated box's look: it is classed
//! `fact-model`, each row is marked 🤖 and names both the provider and the
//! model ("TensorX · deepseek/deepseek-v4-flash-0731"), and one line says
//! what memoria checked and what it did not, so a reader can tell
//! "validated" from "a model pointed here, and the text really is in the
//! document" at a glance.

use maud::{Markup, html};

use super::marker::model_marker;
use crate::page::MARKER_MODEL_FOUND_LABEL;
use crate::search::facts::{Attribution, FactBox};

/// The line under a model box: what the check guarantees and what it does
/// not (§8.9, "What the checks do guarantee, narrowly").
pub(crate) const MODEL_CAVEAT: &str = "Not validated: a model pointed at this text, and memoria checked it is in the cited passage, byte for byte. That it is an address, the whole address and the only one is the model's judgement.";

/// The boxes, in the order the query named their kinds; empty markup for none.
pub(crate) fn fact_boxes(boxes: &[FactBox]) -> Markup {
    html! {
        @if !boxes.is_empty() {
            section.facts aria-label="Facts found in these results" {
                @for b in boxes {
                    @match b.attribution {
                        Attribution::Validated => {
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
                        Attribution::Model { provider, model } => {
                            div.fact.fact-model data-kind=(b.kind.name()) data-by="model" {
                                h2 { (b.kind.heading()) }
                                ul {
                                    @for row in &b.rows {
                                        li.fact-row.fact-row-model {
                                            span.fact-by { (model_marker(MARKER_MODEL_FOUND_LABEL)) ", " (provider) " · " (model) } " "
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
                                p.fact-caveat { (MODEL_CAVEAT) }
                            }
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
    use crate::search::facts::{Attribution, FactBox, FactRow, Kind, Narrowed};

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
                attribution: Attribution::Validated,
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
                attribution: Attribution::Validated,
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

    #[test]
    fn a_model_box_is_marked_names_the_provider_and_the_model_and_says_it_is_not_validated() {
        let boxes = [
            FactBox {
                kind: Kind::Phone,
                rows: vec![row(
                    "01 547 7854",
                    "Reception",
                    "Office",
                    &[],
                    "/documents/abc#p0",
                )],
                narrowed: None,
                attribution: Attribution::Validated,
            },
            FactBox {
                kind: Kind::Address,
                rows: vec![row(
                    "1 Main <St>, Dublin 2",
                    "Our office",
                    "Office",
                    &["Visit"],
                    "/documents/abc#p1",
                )],
                narrowed: None,
                attribution: Attribution::Model {
                    provider: "TensorX",
                    model: "deepseek/deepseek-v4-flash-0731",
                },
            },
        ];
        let html = fact_boxes(&boxes).into_string();
        expect![[r##"<section class="facts" aria-label="Facts found in these results"><div class="fact" data-kind="phone"><h2>Phone</h2><ul><li class="fact-row"><span class="fact-label">Reception</span>: <strong class="fact-value">01 547 7854</strong> · <a class="fact-cite" href="/documents/abc#p0">Office</a></li></ul></div><div class="fact fact-model" data-kind="address" data-by="model"><h2>Address</h2><ul><li class="fact-row fact-row-model"><span class="fact-by"><span class="marker marker-model" data-marker="model"><svg class="marker-figure" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false"><circle cx="8" cy="1.6" r="1.4" fill="currentColor"></circle><rect x="6.8" y="2.4" width="2.4" height="2.6" fill="currentColor"></rect><rect x="2" y="4.6" width="12" height="10.8" rx="2.4" fill="currentColor"></rect><circle cx="5.4" cy="9" r="1.6" fill="#fff"></circle><circle cx="10.6" cy="9" r="1.6" fill="#fff"></circle><rect x="5" y="12.2" width="6" height="1.3" rx=".6" fill="#fff"></rect></svg><span class="marker-label">found by a model</span></span>, TensorX · deepseek/deepseek-v4-flash-0731</span> <span class="fact-label">Our office</span>: <strong class="fact-value">1 Main &lt;St&gt;, Dublin 2</strong> · <a class="fact-cite" href="/documents/abc#p1">Office › Visit</a></li></ul><p class="fact-caveat">Not validated: a model pointed at this text, and memoria checked it is in the cited passage, byte for byte. That it is an address, the whole address and the only one is the model's judgement.</p></div></section>"##]].assert_eq(&html);
        assert_eq!(
            html.matches("<a ").count(),
            2,
            "the only links are citations"
        );
        assert_eq!(
            html.matches(r#"data-marker="model""#).count(),
            1,
            "the validated row is unmarked"
        );
        assert!(
            !html.contains('🤖'),
            "the marker is drawn, never a font's emoji"
        );
    }
}
