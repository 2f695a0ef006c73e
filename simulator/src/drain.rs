//! The operator drain's token rotation for one consumer across its siblings: expand, switch, contract, and emergency revocation (§6.2, gates 12 and 13).
//!
//! §6.2's three phases, each over every sibling in order, each idempotent
//! and re-runnable, so a partial delivery is recovered by running the phase
//! again:
//!
//! 1. [`Drain::expand`] writes the new token beside the old at each
//!    sibling's consumers row: both are accepted.
//! 2. [`Drain::switch`] delivers the new token to the consumer as platform
//!    config (its token file, [`Memoria::set_sibling_token`]). It refuses a
//!    sibling that does not yet accept the new token: delivering it there
//!    would send a token the sibling refuses.
//! 3. [`Drain::contract`] retires the old token at each sibling, and only
//!    where the drain has *observed* the consumer call that sibling with the
//!    new one: a call in the sibling's trace from this consumer carrying the
//!    new token's epoch. Unobserved, it refuses and retires nothing there.
//!
//! Each phase takes a [`Stop`]: run to the end, or be interrupted after the
//! first k siblings, as a drain that crashed part-way would be. Emergency
//! revocation ([`Drain::revoke`]) skips to phase 3: the new token accepted
//! and the old one retired everywhere at once, observed or not, accepting
//! the outage until the new token is delivered.
//!
//! The drain mints the new tokens from a seed; it never prints one (a
//! [`PhaseReport`] names apps, never tokens).

use rand::{Rng as _, SeedableRng as _};

use crate::fake::server::{FakeSibling, TokenRefusal};
use crate::world::{Memoria, World};

/// Where a phase stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every sibling.
    AtEnd,
    /// After the first `k` siblings in the drain's order: an interrupted
    /// run. The rest are [`PhaseReport::not_reached`].
    After(usize),
}

/// Why the drain did not do a phase's step at one sibling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DrainRefusal {
    /// Phase 2 at a sibling that does not accept the new token yet (phase
    /// 1 has not reached it).
    #[error("the sibling does not accept the new token yet")]
    NotExpanded,
    /// Phase 3 at a sibling where the consumer has not been seen using the
    /// new token (§6.2: "only after memoria is observed using the new one").
    #[error("the consumer has not been observed using the new token there")]
    NotObserved,
    /// The sibling's consumers row refused the new token.
    #[error("the sibling refused the token: {0}")]
    Row(TokenRefusal),
    /// The consumer's config could not be written.
    #[error("the delivery failed: {0}")]
    Delivery(String),
}

/// What one run of one phase did, sibling by sibling (apps, in the
/// drain's order; never a token).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhaseReport {
    /// Siblings where this run changed something.
    pub changed: Vec<String>,
    /// Siblings where the phase had already been done: nothing changed.
    pub unchanged: Vec<String>,
    /// Siblings where the drain refused the step, and why.
    pub refused: Vec<(String, DrainRefusal)>,
    /// Siblings an interrupted run did not reach.
    pub not_reached: Vec<String>,
}

impl PhaseReport {
    /// True when this run changed nothing anywhere and refused nothing:
    /// the phase was already done everywhere it reached.
    #[must_use]
    pub fn is_no_op(&self) -> bool {
        self.changed.is_empty() && self.refused.is_empty()
    }
}

/// One sibling in a rotation: its app, its fake, and the consumer's old and
/// new tokens there.
#[derive(Clone)]
struct Leg {
    app: String,
    fake: FakeSibling,
    old: String,
    new: String,
}

/// One rotation of one consumer's tokens across its siblings (§6.2).
#[derive(Clone)]
pub struct Drain {
    consumer: String,
    legs: Vec<Leg>,
}

impl std::fmt::Debug for Drain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Drain")
            .field("consumer", &self.consumer)
            .field(
                "apps",
                &self.legs.iter().map(|l| l.app.as_str()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Drain {
    /// A rotation of `consumer`'s tokens at `apps`' siblings in `world`, in
    /// that order: the old token is the consumer's current one there, the
    /// new one is minted from `seed`.
    ///
    /// # Panics
    /// If `world` has no such consumer or sibling: a scenario bug.
    #[must_use]
    pub fn new(world: &World, consumer: &str, apps: &[&str], seed: u64) -> Self {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let legs = apps
            .iter()
            .map(|app| {
                let fake = world.fake(app).clone();
                let old = world.consumer_token(consumer, fake.host()).to_owned();
                let new = format!("tok-{consumer}-{app}-rot-{:016x}", rng.r#gen::<u64>());
                Leg {
                    app: (*app).to_owned(),
                    fake,
                    old,
                    new,
                }
            })
            .collect();
        Self {
            consumer: consumer.to_owned(),
            legs,
        }
    }

    /// The next rotation of the same consumer at the same siblings, in the
    /// same order: its old token at each is this rotation's new one, its
    /// new one minted from `seed` (a second rotation, after this one).
    #[must_use]
    pub fn next(&self, seed: u64) -> Self {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let legs = self
            .legs
            .iter()
            .map(|leg| Leg {
                app: leg.app.clone(),
                fake: leg.fake.clone(),
                old: leg.new.clone(),
                new: format!(
                    "tok-{}-{}-rot-{:016x}",
                    self.consumer,
                    leg.app,
                    rng.r#gen::<u64>()
                ),
            })
            .collect();
        Self {
            consumer: self.consumer.clone(),
            legs,
        }
    }

    /// The consumer this drain rotates.
    #[must_use]
    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// The apps, in the drain's order.
    #[must_use]
    pub fn apps(&self) -> Vec<String> {
        self.legs.iter().map(|l| l.app.clone()).collect()
    }

    /// The old token at `app`, to probe that a sibling refuses it.
    ///
    /// # Panics
    /// If `app` is not in this rotation.
    #[must_use]
    pub fn old_token(&self, app: &str) -> &str {
        &self.leg(app).old
    }

    /// The new token at `app`.
    ///
    /// # Panics
    /// If `app` is not in this rotation.
    #[must_use]
    pub fn new_token(&self, app: &str) -> &str {
        &self.leg(app).new
    }

    fn leg(&self, app: &str) -> &Leg {
        self.legs
            .iter()
            .find(|l| l.app == app)
            .unwrap_or_else(|| panic!("{app} is not in this rotation"))
    }

    /// Runs `step` over the legs up to `stop`.
    fn each(
        &self,
        stop: Stop,
        mut step: impl FnMut(&Leg) -> Result<bool, DrainRefusal>,
    ) -> PhaseReport {
        let reach = match stop {
            Stop::AtEnd => self.legs.len(),
            Stop::After(k) => k.min(self.legs.len()),
        };
        let mut report = PhaseReport::default();
        for (i, leg) in self.legs.iter().enumerate() {
            if i >= reach {
                report.not_reached.push(leg.app.clone());
                continue;
            }
            match step(leg) {
                Ok(true) => report.changed.push(leg.app.clone()),
                Ok(false) => report.unchanged.push(leg.app.clone()),
                Err(why) => report.refused.push((leg.app.clone(), why)),
            }
        }
        report
    }

    /// Phase 1, expand acceptance: the new token written beside the old at
    /// each sibling reached; a sibling that already accepts it is unchanged.
    pub fn expand(&self, stop: Stop) -> PhaseReport {
        self.each(stop, |leg| {
            if leg.fake.token_epoch(&self.consumer, &leg.new).is_some() {
                return Ok(false);
            }
            leg.fake
                .accept_token(&self.consumer, &leg.new)
                .map(|_| true)
                .map_err(DrainRefusal::Row)
        })
    }

    /// Phase 2, switch the sender: the new token delivered to `memoria` as
    /// its config for each sibling reached that accepts it; a sibling
    /// whose token file already holds it is unchanged.
    pub fn switch(&self, memoria: &Memoria, stop: Stop) -> PhaseReport {
        self.each(stop, |leg| {
            if leg.fake.token_epoch(&self.consumer, &leg.new).is_none() {
                return Err(DrainRefusal::NotExpanded);
            }
            memoria
                .set_sibling_token(&leg.app, &leg.new)
                .map_err(DrainRefusal::Delivery)
        })
    }

    /// True once `app`'s sibling has received a call from this consumer
    /// carrying the new token (by its epoch there, never the token).
    ///
    /// # Panics
    /// If `app` is not in this rotation.
    #[must_use]
    pub fn observed(&self, app: &str) -> bool {
        self.observed_at(self.leg(app))
    }

    fn observed_at(&self, leg: &Leg) -> bool {
        let Some(epoch) = leg.fake.token_epoch(&self.consumer, &leg.new) else {
            return false;
        };
        leg.fake.trace().events().iter().any(|e| {
            e.callee == leg.fake.host() && e.caller == self.consumer && e.epoch == Some(epoch)
        })
    }

    /// Phase 3, contract acceptance: the old token retired at each sibling
    /// reached where the consumer has been observed using the new one;
    /// refused, retiring nothing, where it has not. A sibling that no
    /// longer accepts the old token is unchanged.
    pub fn contract(&self, stop: Stop) -> PhaseReport {
        self.each(stop, |leg| {
            if leg.fake.token_epoch(&self.consumer, &leg.old).is_none() {
                return Ok(false);
            }
            if !self.observed_at(leg) {
                return Err(DrainRefusal::NotObserved);
            }
            Ok(leg.fake.retire_token(&self.consumer, &leg.old))
        })
    }

    /// Emergency revocation (§6.2: "skips to phase 3 and accepts the
    /// outage"): at every sibling the new token is accepted and the old
    /// retired at once, unobserved. Until [`Drain::switch`] delivers the new
    /// token, the consumer's calls are refused.
    pub fn revoke(&self) -> PhaseReport {
        self.each(Stop::AtEnd, |leg| {
            leg.fake
                .accept_token(&self.consumer, &leg.new)
                .map_err(DrainRefusal::Row)?;
            Ok(leg.fake.retire_token(&self.consumer, &leg.old))
        })
    }
}
