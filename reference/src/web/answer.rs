//! The answer as a reader sees it: one 🤖 paragraph above the list, every sentence ending in citations that open its passages, the route and the model named, and what was sent said (§8.2, §8.4, §8.5, decision 4).
//!
//! Every string the model wrote is escaped text; the only links are the
//! citations, built from the page's own results (`/documents/{id}#p{n}`),
//! never from the reply. With AI off nothing here renders at all: the
//! page is the list, exactly as before.

use maud::{Markup, html};

use super::marker::model_marker;
use crate::ai::provider::PROVIDER_NAME;
use crate::answer::{Answer, Outcome, Route};
use crate::page::{MARKER_MODEL_LABEL, SearchPage};

/// The sentence that names what an answer sent and why (decision 4, §8.3).
fn sent_line(a: &Answer) -> String {
    let passages = if a.sent == 1 {
        "the passage ranked 1 below".to_string()
    } else {
        format!("the {} passages ranked 1–{} below", a.sent, a.sent)
    };
    format!(
        "Sent to {PROVIDER_NAME} to write this paragraph: your query and {passages}. Written by a model: check each sentence against the passage it cites."
    )
}

/// The line naming the route and, for a model route, the provider and the
/// pinned model (§8.2: "the route printed on the answer").
fn route_line(route: Route, model: Option<&str>) -> String {
    match model {
        Some(m) => format!("Route: {} · {PROVIDER_NAME} · {m}", route.name()),
        None => format!("Route: {} · no model called", route.name()),
    }
}

/// The answer region for `outcome` over `page`; empty markup for `None`.
pub(crate) fn answer_region(outcome: Option<&Outcome>, page: &SearchPage) -> Markup {
    let link = |rank: usize| {
        page.results
            .iter()
            .find(|r| r.rank == rank)
            .map(|r| r.link.clone())
    };
    let Some(outcome) = outcome else {
        return html! {};
    };
    match outcome {
        Outcome::NoModel { route, people } => html! {
            p.answer-route data-route=(route.name()) {
                (route_line(*route, None)) ". "
                @match route {
                    Route::Numeric => "This asks for a computed value. memoria never does arithmetic, and its numeric path (§8.7, through the sheet's own engine) is not built yet, so the list below is the answer.",
                    Route::WhoKnows => {
                        @if let Some((passages, documents)) = people {
                            "memoria holds no author names. Of these results, " (passages) " passage" @if *passages != 1 { "s" } " in " (documents) " document" @if *documents != 1 { "s" } " were written by a person (" (super::marker::person_marker()) "); the list below names the documents."
                        }
                    }
                    _ => "The list below is the answer.",
                }
            }
        },
        Outcome::Failed { route, model, what } => html! {
            p.withheld.answer-failed role="status" data-route=(route.name()) {
                "No answer: " (PROVIDER_NAME) " · " (model) " failed: " (what) ". The list below is the search, as with AI off."
            }
        },
        Outcome::Answered(a) => answered(a, link),
    }
}

/// The answered arm: bound outside the template, because gate 17 reads a
/// field access named like a registration inside a macro as one.
fn answered(a: &Answer, link: impl Fn(usize) -> Option<String>) -> Markup {
    let (way, line) = (a.route.name(), route_line(a.route, Some(a.model)));
    html! {
            section.answer aria-label="Answer written by a model, with citations" data-route=(way) {
                @if a.all_dropped() {
                    p.answer-empty role="status" {
                        (model_marker(MARKER_MODEL_LABEL)) " · The model's answer was dropped whole: "
                        @if a.judged.dropped.total() == 0 { "it held no sentence." }
                        @else { "none of its " (a.judged.dropped.total()) " sentence" @if a.judged.dropped.total() != 1 { "s" } " cited a passage on this list with every number it holds." }
                    }
                } @else {
                    p.answer-text {
                        (model_marker(MARKER_MODEL_LABEL)) " "
                        @for s in &a.judged.sentences {
                            span.sentence {
                                (s.text)
                                @for c in &s.cites {
                                    " "
                                    @if let Some(href) = link(*c) { a.cite href=(href) { "[" (c) "]" } }
                                    @else { "[" (c) "]" }
                                }
                            }
                            " "
                        }
                    }
                    @if a.judged.dropped.total() > 0 {
                        p.answer-dropped {
                            (a.judged.dropped.total()) " sentence" @if a.judged.dropped.total() != 1 { "s" }
                            " of the model's answer dropped: each cited no passage on this list, or held a number no passage it cites holds."
                        }
                    }
                }
                @if a.judged.stripped.any() {
                    p.answer-stripped { "Markup in the model's answer was removed: images, links and HTML from a model are never shown." }
                }
                p.answer-meta { (line) ". " (sent_line(a)) }
            }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::answer::{Dropped, Judged, Sentence, Stripped};
    use crate::page::SemanticRanking;

    fn page() -> SearchPage {
        SearchPage {
            query_words: 2,
            page: 1,
            results: vec![],
            has_next: false,
            withheld: vec![],
            reconciling: vec![],
            freshness: vec![],
            facts: vec![],
            semantic: SemanticRanking::Off,
            artefacts: vec![],
            artefacts_withheld: vec![],
            regenerate: false,
            model_failure: None,
            numeric: None,
        }
    }

    #[test]
    fn an_answer_escapes_the_models_words_and_links_only_its_citations() {
        let a = Answer {
            route: Route::Synthesis,
            model: "deepseek/deepseek-v4-pro-0813",
            sent: 3,
            documents: 3,
            judged: Judged {
                sentences: vec![Sentence {
                    text: "Travel <b>is</b> capped.".into(),
                    cites: vec![1, 4],
                }],
                dropped: Dropped {
                    uncited: 1,
                    ..Dropped::default()
                },
                stripped: Stripped {
                    images: 1,
                    ..Stripped::default()
                },
            },
        };
        let html = answer_region(Some(&Outcome::Answered(a)), &page()).into_string();
        expect![[r##"<section class="answer" aria-label="Answer written by a model, with citations" data-route="synthesis"><p class="answer-text"><span class="marker marker-model" data-marker="model"><svg class="marker-figure" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false"><circle cx="8" cy="1.6" r="1.4" fill="currentColor"></circle><rect x="6.8" y="2.4" width="2.4" height="2.6" fill="currentColor"></rect><rect x="2" y="4.6" width="12" height="10.8" rx="2.4" fill="currentColor"></rect><circle cx="5.4" cy="9" r="1.6" fill="#fff"></circle><circle cx="10.6" cy="9" r="1.6" fill="#fff"></circle><rect x="5" y="12.2" width="6" height="1.3" rx=".6" fill="#fff"></rect></svg><span class="marker-label">written by a model</span></span> <span class="sentence">Travel &lt;b&gt;is&lt;/b&gt; capped. [1] [4]</span> </p><p class="answer-dropped">1 sentence of the model's answer dropped: each cited no passage on this list, or held a number no passage it cites holds.</p><p class="answer-stripped">Markup in the model's answer was removed: images, links and HTML from a model are never shown.</p><p class="answer-meta">Route: synthesis · TensorX · deepseek/deepseek-v4-pro-0813. Sent to TensorX to write this paragraph: your query and the 3 passages ranked 1–3 below. Written by a model: check each sentence against the passage it cites.</p></section>"##]].assert_eq(&html);
    }

    #[test]
    fn no_outcome_renders_no_markup_at_all() {
        assert_eq!(answer_region(None, &page()).into_string(), "");
    }
}
