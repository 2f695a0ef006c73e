//! The roster copies memoria may hold once the home starts a new generation: §4.3's rules (suite gate 5) replayed on the fake home's own record of its pulls, memoria's wakes and the owner's confirmations.
//!
//! `roster.rs` judges by these once the home has started a new generation
//! ([`RosterTruth::new_generation`]). Every pull the home answered with
//! this team's roster (its generation and epoch in the record) is applied
//! as memoria must apply it ([`Possible`]); a pull answered within
//! [`FLEX_MS`] of a wake, an owner's confirmation or the question judged,
//! or under a slow home, is followed both ways (applied, applied after,
//! lost), so the states are a set, and what every state agrees on is what
//! [`judge_generation`] judges. Never memoria's own store or copy.

use super::checks::Check;
use super::roster::{
    KEPT_WITHIN_S, RosterTruth, SAFETY_ROSTER, STALE_AFTER_S, STALE_MARGIN_S, now_ms,
};
use super::surfaces::Rendered;
use crate::fake::home::HomeFault;

/// A moment whose order against the pulls around it is unknown within
/// [`FLEX_MS`]: memoria woke (a restart, a crash, a restore of its data
/// directory), or an owner opened the roster page and posted its form.
#[derive(Debug, Clone)]
pub(super) enum Barrier {
    /// memoria stopped at `from_ms` and was up again at `to_ms`.
    Wake { from_ms: u64, to_ms: u64 },
    /// An owner's confirmation: the page asked at `from_ms`, the form's
    /// answer at `to_ms`; the generation the form named, if the page held
    /// it, and whether memoria answered that it adopted it (303).
    Confirm {
        from_ms: u64,
        to_ms: u64,
        form: Option<String>,
        adopted: bool,
    },
}

impl Barrier {
    pub(super) fn starts_ms(&self) -> u64 {
        match self {
            Barrier::Wake { from_ms, .. } | Barrier::Confirm { from_ms, .. } => *from_ms,
        }
    }

    pub(super) fn ends_ms(&self) -> u64 {
        match self {
            Barrier::Wake { to_ms, .. } | Barrier::Confirm { to_ms, .. } => *to_ms,
        }
    }
}

/// How near a barrier or a question a pull may be answered and still be
/// applied on either side of it, in simulated ms: a link's latency and
/// the tick, well rounded up.
pub(super) const FLEX_MS: u64 = 1_000;

/// The most possible copies the oracle follows before it gives up judging
/// by them (asserting nothing, never guessing).
const POSSIBLE_MAX: usize = 256;

/// One roster memoria may hold, or hold pending: the generation, the epoch
/// and when the home answered the pull that brought it (simulated ms).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Copy {
    generation: String,
    epoch: u64,
    at_ms: u64,
}

/// One state memoria's roster copy may be in, given the home's record of
/// its pulls, memoria's wakes and the owner's confirmations: §4.3's rules
/// (suite gate 5) applied to the home's answers, never memoria's store.
/// A pull in the generation memoria holds, at an epoch no older than the
/// copy's, is adopted (the first after a first start as it comes); one in
/// another generation waits as pending, never replaced by an older epoch
/// of itself, and refreshes nothing; an owner's confirmation adopts the
/// pending copy as old as the pull that brought it ("Past the TTL with no
/// successful fetch it is stale": a confirmation is no fetch); a wake
/// drops the copy and the pending one, and keeps the coordinates.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Possible {
    current: Option<Copy>,
    pending: Option<Copy>,
    known: Option<(String, u64)>,
    /// Pulls answered around the next barrier, applied after it.
    deferred: Vec<Copy>,
}

impl Possible {
    fn pull(&mut self, c: Copy) {
        let held = self
            .current
            .as_ref()
            .map(|h| (h.generation.clone(), h.epoch))
            .or_else(|| self.known.clone());
        match held {
            Some((g, _)) if g != c.generation => {
                let lagging = matches!(&self.pending, Some(p) if p.generation == c.generation && c.epoch < p.epoch);
                if !lagging {
                    self.pending = Some(c);
                }
            }
            Some((_, e)) if c.epoch < e => {}
            _ => {
                self.known = Some((c.generation.clone(), c.epoch));
                self.current = Some(c);
                self.pending = None;
            }
        }
    }

    /// Applies `b`; `None` when this state cannot have been memoria's (the
    /// page or the confirmation's answer says otherwise).
    fn cross(mut self, b: &Barrier) -> Option<Possible> {
        match b {
            Barrier::Wake { .. } => {
                self.current = None;
                self.pending = None;
            }
            Barrier::Confirm { form: None, .. } => {
                if self.pending.is_some() {
                    return None;
                }
            }
            Barrier::Confirm {
                form: Some(g),
                adopted,
                ..
            } => {
                let waits = self.pending.as_ref().is_some_and(|p| p.generation == *g);
                if waits != *adopted {
                    return None;
                }
                if *adopted && let Some(p) = self.pending.take() {
                    self.known = Some((p.generation.clone(), p.epoch));
                    self.current = Some(p);
                }
            }
        }
        for c in std::mem::take(&mut self.deferred) {
            self.pull(c);
        }
        Some(self)
    }
}

/// A roster reader's standing in one [`Possible`] state, now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standing {
    /// On a copy well inside its TTL.
    Admitted,
    /// Off a copy well inside its TTL.
    Refused,
    /// The copy past its TTL and the margin.
    Stale,
    /// No copy since memoria woke.
    NoCopy,
    /// The copy at the edge of its TTL.
    Unsure,
}

impl RosterTruth {
    /// Every state memoria's copy may be in at `now`, for a question asked
    /// at `asked_ms`; `Err` when none agrees with the owner's pages (the
    /// confirmation's failed check says so), or when they are too many to
    /// follow.
    pub(super) fn possible(&self, now: u64, asked_ms: u64) -> Result<Vec<Possible>, ()> {
        let mut set = std::collections::BTreeSet::from([Possible::default()]);
        let mut next = 0;
        let barriers: Vec<&Barrier> = self
            .barriers
            .iter()
            .filter(|b| b.ends_ms() <= now)
            .collect();
        let cross = |set: std::collections::BTreeSet<Possible>, b: &Barrier| {
            set.into_iter()
                .filter_map(|p| p.cross(b))
                .collect::<std::collections::BTreeSet<_>>()
        };
        for p in self.home.pulls() {
            let (Some(epoch), Some(generation)) = (p.epoch, p.generation.clone()) else {
                continue;
            };
            if p.status != 200 || p.at_ms > now {
                continue;
            }
            while let Some(b) = barriers.get(next).filter(|b| b.ends_ms() < p.at_ms) {
                set = cross(set, b);
                next += 1;
                if set.is_empty() {
                    return Err(());
                }
            }
            let copy = Copy {
                generation,
                epoch,
                at_ms: p.at_ms,
            };
            let near = barriers
                .get(next)
                .filter(|b| p.at_ms + FLEX_MS >= b.starts_ms());
            let certain = matches!(
                self.fault_at(p.at_ms),
                Some(HomeFault::None | HomeFault::StaleEpoch)
            );
            let maybe_lost = !certain
                || p.at_ms + FLEX_MS >= asked_ms
                || matches!(near, Some(Barrier::Wake { .. }));
            let mut out = std::collections::BTreeSet::new();
            for s in set {
                let mut applied = s.clone();
                applied.pull(copy.clone());
                out.insert(applied);
                if near.is_some() {
                    let mut later = s.clone();
                    later.deferred.push(copy.clone());
                    out.insert(later);
                }
                if maybe_lost {
                    out.insert(s);
                }
            }
            set = out;
            if set.len() > POSSIBLE_MAX {
                return Err(());
            }
        }
        for b in &barriers[next..] {
            set = cross(set, b);
            if set.is_empty() {
                return Err(());
            }
        }
        Ok(set.into_iter().collect())
    }

    /// How old `c` is at `now` on memoria's calendar, in ms.
    fn age_ms(&self, c: &Copy, now: u64) -> u64 {
        let skipped: u64 = self
            .skips
            .iter()
            .filter(|(t, _)| *t > c.at_ms && *t <= now)
            .map(|(_, by)| by)
            .sum();
        now.saturating_sub(c.at_ms) + skipped
    }

    /// `address`'s standing in each state memoria's copy may be in now;
    /// `None` when the oracle cannot follow them.
    pub(super) fn standings(&self, address: &str) -> Option<Vec<(Standing, bool)>> {
        let now = now_ms();
        let states = self.possible(now, self.asked_ms.min(now)).ok()?;
        Some(
            states
                .iter()
                .map(|s| {
                    let Some(c) = &s.current else {
                        return (Standing::NoCopy, false);
                    };
                    let listed = self
                        .home
                        .members_at(&c.generation, c.epoch)
                        .is_some_and(|m| m.contains(address));
                    let age = self.age_ms(c, now);
                    let standing = if age > STALE_AFTER_S * 1_000 {
                        Standing::Stale
                    } else if age >= KEPT_WITHIN_S * 1_000 {
                        Standing::Unsure
                    } else if listed {
                        Standing::Admitted
                    } else {
                        Standing::Refused
                    };
                    (standing, listed)
                })
                .collect(),
        )
    }

    /// The copies memoria may hold now, `generation@epoch` and their age in
    /// s, for a failure's message.
    pub(super) fn describe_possible(&self) -> String {
        let now = now_ms();
        let Ok(states) = self.possible(now, self.asked_ms.min(now)) else {
            return "not followed".into();
        };
        let copies: Vec<String> = states
            .iter()
            .map(|s| match (&s.current, &s.pending) {
                (None, _) => "none".to_string(),
                (Some(c), p) => format!(
                    "{}@{} {} s old{}",
                    c.generation,
                    c.epoch,
                    self.age_ms(c, now) / 1_000,
                    p.as_ref().map_or(String::new(), |p| format!(
                        ", {}@{} pending",
                        p.generation, p.epoch
                    ))
                ),
            })
            .collect();
        copies.join("; ")
    }
}

/// `judge_roster` once the home has started a new generation: each
/// state memoria's copy may be in ([`Possible`]) gives the reader a
/// standing, and what every state agrees on is judged. No passage while
/// none admits them (the copy refuses them, is stale, or there is none: a
/// generation no owner has confirmed refreshes nothing, and a confirmed one
/// is as old as the pull that brought it); the page says why while every
/// state is stale and lists them; and never "no roster" while every state
/// holds a copy inside its TTL (§4.3, suite gate 5).
pub(super) fn judge_generation(truth: &RosterTruth, address: &str, seen: &Rendered) -> Vec<Check> {
    let mut out = vec![];
    let owner = truth.owners.iter().any(|o| o == address);
    if owner || !truth.is_roster_reader(address) {
        return out;
    }
    let Some(all) = truth.standings(address) else {
        return out;
    };
    if all.is_empty() {
        return out;
    }
    let none_admits = all
        .iter()
        .all(|(s, _)| matches!(s, Standing::Refused | Standing::Stale | Standing::NoCopy));
    if none_admits && !seen.shown.is_empty() {
        out.push(Check {
            expected: format!(
                "{SAFETY_ROSTER} a roster reader no copy memoria may hold admits (it refuses them, it is past its TTL and {STALE_MARGIN_S} s, or there is none: a new generation refreshes nothing until an owner confirms it, and a confirmed one is as old as the pull that brought it) sees no passage (§4.3, suite gate 5)"
            ),
            actual: format!(
                "{} results (the copies memoria may hold: {})",
                seen.shown.len(),
                truth.describe_possible()
            ),
            ok: false,
        });
    }
    let stale = truth.asked_live
        && all
            .iter()
            .all(|(s, listed)| *s == Standing::Stale && *listed);
    if stale && seen.standing_lack_said == Some(false) {
        out.push(Check {
            expected: format!(
                "{SAFETY_ROSTER} the search page withholds loudly while the roster copy is stale: it says the roster is stale (§4.3, §8.1)"
            ),
            actual: format!(
                "the page does not say why nothing is shown (the copies memoria may hold: {}; the home's last pulls, ms and status: {})",
                truth.describe_possible(),
                truth.recent_pulls()
            ),
            ok: false,
        });
    }
    let kept = all
        .iter()
        .all(|(s, _)| matches!(s, Standing::Admitted | Standing::Refused));
    if kept && seen.no_roster {
        out.push(Check {
            expected: format!(
                "{SAFETY_ROSTER} a failed pull keeps the last good copy within its TTL, so the page never says memoria holds no roster while every copy it may hold is under {KEPT_WITHIN_S} s old (§4.3, §6.5)"
            ),
            actual: "the page says memoria has not been able to fetch the roster".into(),
            ok: false,
        });
    }
    out
}
