//! The one hand clock: a memoria [`Clock`] the case sets and advances itself, so no gate reads the wall clock or sleeps (the simulated runs use `world::SimClock` instead).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use memoria::Clock;

/// A memoria clock the case moves by hand, in Unix seconds (UTC). Clones
/// share one instant: hand one to memoria (`Arc::new(clock.clone())`) and
/// keep one to move it.
#[derive(Debug, Clone)]
pub struct HandClock(Arc<AtomicI64>);

impl HandClock {
    /// A clock reading `unix_s`.
    pub fn at(unix_s: i64) -> HandClock {
        HandClock(Arc::new(AtomicI64::new(unix_s)))
    }

    /// Sets the instant every clone reads to `unix_s`.
    pub fn set(&self, unix_s: i64) {
        self.0.store(unix_s, Ordering::SeqCst);
    }

    /// Moves the instant `secs` seconds on (back, if negative).
    pub fn advance(&self, secs: i64) {
        self.0.fetch_add(secs, Ordering::SeqCst);
    }
}

impl Clock for HandClock {
    fn now_unix_s(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_clone_reads_the_instant_the_case_sets_and_advances() {
        let clock = HandClock::at(1_000);
        let given: Arc<dyn Clock> = Arc::new(clock.clone());
        clock.advance(60);
        assert_eq!(given.now_unix_s(), 1_060);
        clock.set(5);
        assert_eq!(given.now_unix_s(), 5);
    }
}
