//! Sentences a reader sees that are built from state rather than written into one page: the owner's breaker lines (§8.1).
//!
//! The results page's withheld and reconciling lines are `search/page.rs`'s
//! `Withheld::sentence` and `Reconciling::sentence`, beside the shapes they
//! describe; the footer is `policy/egress.rs`'s. New reader-facing
//! sentences go here.

use crate::policy::breaker::BreakerState;

/// The owner's sentence for a refusal breaker state, naming the source.
pub fn refusal_sentence(source: &str, state: &BreakerState) -> String {
    match state {
        BreakerState::Fires { count } => format!(
            "Refusal breaker: fired. {count} people who were shown {source} passages in the 7 days before today were refused every {source} passage they were asked about today. Nothing was purged."
        ),
        BreakerState::Silent => "Refusal breaker: no refusal anomaly.".into(),
        BreakerState::CannotDetermine { lacking, why } => format!(
            "Refusal breaker: cannot determine. The counters lack {}: {why}.",
            lacking.words()
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
            "S3 breaker: cannot determine. The counters lack {}: {why}.",
            lacking.words()
        ),
    }
}
