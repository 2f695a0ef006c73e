//! The egress mode, and the footer sentence every page carries (§3.6, §8.3, §8.9).
//!
//! With AI off, no document leaves this instance, and the footer says exactly
//! that. The reference has no AI mode yet, so [`EgressMode::AiOff`] is the
//! only mode; the footer is still rendered from the mode, never hard-coded in
//! a template, so the day a second mode exists the footer cannot lag it.

/// What this instance may send outside itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EgressMode {
    /// AI off: nothing leaves the instance, at query time or at ingest (§3.2, decision 5).
    #[default]
    AiOff,
}

impl EgressMode {
    /// The footer sentence stating this mode, for every page (gate 38).
    pub fn footer(self) -> &'static str {
        match self {
            EgressMode::AiOff => {
                "Egress: AI is off. No document leaves this instance: memoria searches your content where it sits."
            }
        }
    }
}
