//! Sentences a reader sees that are built from state rather than written into one page: the owner's breaker lines, with what a breaker lacks and why (§8.1).
//!
//! The results page's withheld and reconciling lines are `page.rs`'s
//! `Withheld::sentence` and `Reconciling::sentence`, beside the shapes they
//! describe; the footer is `policy/egress.rs`'s. New reader-facing
//! sentences go here.

use crate::clock::iso_date;
use crate::policy::breaker::{BreakerState, Lacking, SECONDS_PER_DAY, Undetermined};

/// The owner's sentence for a refusal breaker state, naming the source.
pub fn refusal_sentence(source: &str, state: &BreakerState) -> String {
    match state {
        BreakerState::Fires { count } => format!(
            "Refusal breaker: fired. {count} people who were shown {source} passages in the 7 days before today were refused every {source} passage they were asked about today. Nothing was purged."
        ),
        BreakerState::Silent => "Refusal breaker: no refusal anomaly.".into(),
        BreakerState::CannotDetermine { lacking, why } => format!(
            "Refusal breaker: cannot determine. The counters lack {}: {}.",
            lacking_words(*lacking),
            undetermined_words(*why)
        ),
    }
}

/// The owner's sentence for an S3 breaker state, naming the source.
pub fn s3_sentence(source: &str, state: &BreakerState) -> String {
    match state {
        BreakerState::Fires { count } => format!(
            "S3 breaker: fired. All {count} of today's fetches from {source} answered 404, after a successful fetch in the 7 days before. Nothing was purged."
        ),
        BreakerState::Silent => "S3 breaker: no S3 anomaly.".into(),
        BreakerState::CannotDetermine { lacking, why } => format!(
            "S3 breaker: cannot determine. The counters lack {}: {}.",
            lacking_words(*lacking),
            undetermined_words(*why)
        ),
    }
}

/// The words naming what a breaker lacks.
fn lacking_words(lacking: Lacking) -> &'static str {
    match lacking {
        Lacking::Window => "the window (today)",
        Lacking::Baseline => "the baseline (the 7 UTC days before today)",
        Lacking::WindowAndBaseline => {
            "both the window (today) and the baseline (the 7 UTC days before today)"
        }
    }
}

/// Why a breaker cannot determine, in words: no content, no person.
fn undetermined_words(why: Undetermined) -> String {
    match why {
        Undetermined::NoCounters => "no counters are held for this source".into(),
        Undetermined::CountingBegan { since } => format!(
            "counting began on {}, and a full baseline needs the 7 UTC days before today",
            iso_date(since * SECONDS_PER_DAY)
        ),
        Undetermined::Unopenable => "a counter could not be opened".into(),
        Undetermined::Unreadable(kind) => format!("the counters could not be read ({kind:?})"),
    }
}
