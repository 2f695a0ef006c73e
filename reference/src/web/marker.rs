//! The two markers a page draws beside what it shows: 👨 for a passage a person wrote and 🤖 for what a model wrote, each an inline SVG figure with its words (§8.1, §8.9).
//!
//! The results page, the answer region and the fact boxes all draw them, so
//! they live below all three (the page once held them, and the answer and
//! the fact boxes imported the page that imports them: a circle).

use maud::{Markup, html};

/// The 👨 marker as the page draws it: an inline SVG figure (no font's
/// emoji, so it renders the same on every machine) hidden from assistive
/// technology, and its words beside it, which are what a screen reader
/// reads (§8.1; issue 31: an emoji rendered as an empty box).
pub(crate) fn person_marker() -> Markup {
    html! {
        span.marker data-marker="person" {
            svg.marker-figure viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false" {
                circle cx="8" cy="4.5" r="3.2" fill="currentColor" {}
                path d="M1.5 15.5c0-3.9 2.9-6.6 6.5-6.6s6.5 2.7 6.5 6.6z" fill="currentColor" {}
            }
            span.marker-label { (crate::page::MARKER_PERSON_LABEL) }
        }
    }
}

/// The 🤖 marker as the page draws it, as [`person_marker`] draws 👨: an
/// inline SVG figure (a robot's head: antenna, face, two eyes and a
/// mouth) hidden from assistive technology, and `label` beside it, the
/// words a screen reader reads ([`MARKER_MODEL_LABEL`](crate::page::MARKER_MODEL_LABEL)
/// or [`MARKER_MODEL_FOUND_LABEL`](crate::page::MARKER_MODEL_FOUND_LABEL);
/// §8.1, §8.9; issue 31: an emoji renders as an empty box without an
/// emoji font).
pub(crate) fn model_marker(label: &str) -> Markup {
    html! {
        span.marker.marker-model data-marker="model" {
            svg.marker-figure viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false" {
                circle cx="8" cy="1.6" r="1.4" fill="currentColor" {}
                rect x="6.8" y="2.4" width="2.4" height="2.6" fill="currentColor" {}
                rect x="2" y="4.6" width="12" height="10.8" rx="2.4" fill="currentColor" {}
                circle cx="5.4" cy="9" r="1.6" fill="#fff" {}
                circle cx="10.6" cy="9" r="1.6" fill="#fff" {}
                rect x="5" y="12.2" width="6" height="1.3" rx=".6" fill="#fff" {}
            }
            span.marker-label { (label) }
        }
    }
}
