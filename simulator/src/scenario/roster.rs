//! Suite shape in a scenario: the home's roster as the fake home holds it, and the oracle's admission checks read from it (§4.3, §6.5).
//!
//! A scenario with `home = true` runs memoria beside a fake home
//! (`crate::fake::home`) whose roster lists every reader but the first.
//! [`RosterTruth`] keeps what the oracle needs beside it: each change the
//! timeline made at the home and when, each fault the home answered with
//! and since when, and when memoria last woke (or its calendar skipped),
//! after which its copy must be pulled again. The pulls themselves are the
//! fake home's own record ([`FakeHome::pulls`]), never memoria's copy.
//!
//! What §4.3 says, as code:
//!
//! - "Within the TTL the pulled copy is enforced as it stands": a person
//!   removed from the roster is refused once a pull the home answered
//!   with the roster as it stands (status 200, no fault) has happened
//!   after the removal ([`RosterTruth::refused`]). Until then memoria may
//!   go on admitting them: the spec's stated tail is the roster loop's
//!   interval (`ROSTER_REFRESH_S`).
//! - An outage (down, garbage, another team's roster, a lagging replica's
//!   older epoch) keeps the last good copy: a failed pull refreshes
//!   nothing, so nobody removed is admitted again by it, and a member on
//!   the copy stays admitted while it is within its TTL
//!   ([`RosterTruth::surely_admitted`]).
//! - "Past the TTL with no successful fetch it is stale, and team standing
//!   stops being established for anyone — including people already in a
//!   session": once the last pull memoria may have adopted is older than
//!   `ROSTER_TTL_S` and a margin ([`RosterTruth::surely_stale`]), a roster
//!   reader sees no passage on any surface, and the search page says the
//!   roster is stale or missing; a reader is judged surely admitted only
//!   inside the TTL.
//! - "No roster, no admission": after a wake with the home failing there
//!   is no copy, and a roster member's standing cannot be established, so
//!   the oracle asserts nothing about finding things until a clean pull
//!   after the wake.
//! - "An unfamiliar roster generation holds the stale copy until an owner
//!   confirms it": once the home has started a new generation
//!   ([`RosterTruth::new_generation`]), the checks above read every state
//!   memoria's copy may be in (`Possible`), replayed from the home's record
//!   of its pulls (each with its generation and epoch), memoria's wakes and
//!   the owner's confirmations through the roster page's form, with §4.3's
//!   rules: a pull in the generation held, at an epoch no older, is
//!   adopted; one in another generation waits pending, never replaced by an
//!   older epoch of itself, and refreshes nothing; a confirmation adopts
//!   the pending copy as old as the pull that brought it (the spec's "Past
//!   the TTL with no successful fetch it is stale": a click is no fetch). A
//!   pull answered within `FLEX_MS` of a wake, a confirmation or the
//!   question is followed on both sides of it. What every state agrees on
//!   is judged; a page or an answer to the confirmation no state explains
//!   fails (`RosterTruth::confirmed`).

use std::collections::BTreeMap;
use std::time::Duration;

use super::checks::Check;
use super::possible::{Barrier, Standing};
use super::surfaces::Rendered;
use crate::fake::home::{FakeHome, HomeFault};

/// A roster member's passage shown though the home removed them and
/// memoria has pulled the change since (§4.3).
pub const SAFETY_ROSTER: &str = "[safety:roster]";

/// The longest the oracle lets simulated time run for memoria's roster
/// loop to pull again, in seconds: its refresh interval while pulls
/// succeed, 300 s (`memoria::ROSTER_REFRESH_S` in
/// `reference/src/access/roster.rs`, §6.5), plus a pull's deadline and
/// the links' latency, rounded up.
pub const ROSTER_PULL_WAIT_MAX_S: u64 = 300 + 5;

/// What the oracle knows of the home's roster beside the fake home.
#[derive(Debug, Clone)]
pub(super) struct RosterTruth {
    /// The fake home.
    pub(super) home: FakeHome,
    /// The session each roster reader held at the first warm-up, by
    /// address: their questions use it, admitted or not.
    pub(super) sessions: BTreeMap<String, String>,
    /// Every address the timeline changed at the home: when (simulated
    /// ms) and whether it is on the roster since.
    pub(super) changed: BTreeMap<String, (u64, bool)>,
    /// The home's fault since each instant (simulated ms), in order.
    pub(super) faults: Vec<(u64, HomeFault)>,
    /// When memoria last woke or its calendar skipped (simulated ms): its
    /// copy is known to hold only after a clean pull since.
    pub(super) fresh_from_ms: u64,
    /// The addresses on the roster at the start.
    pub(super) members: Vec<String>,
    /// The owners list's addresses: it bypasses the roster (decision 11).
    pub(super) owners: Vec<String>,
    /// The home's generation at the start.
    initial_generation: String,
    /// Each new generation the home started: when (simulated ms) and its
    /// name. Once there is one, the oracle judges by `Possible` copies.
    pub(super) generations: Vec<(u64, String)>,
    /// memoria's wakes and an owner's confirmations, in order.
    pub(super) barriers: Vec<Barrier>,
    /// Each skip of memoria's calendar: when (simulated ms) and by how
    /// many ms, which ages a copy pulled before it.
    pub(super) skips: Vec<(u64, u64)>,
    /// When the question being judged was asked (simulated ms): a pull
    /// answered from a second before it on may not have been applied yet.
    pub(super) asked_ms: u64,
    /// Whether the browser held a session of the asker's own, taken since
    /// memoria last woke, when they asked: else they ask with one a wake
    /// ended, and the sign-in page is their answer.
    pub(super) asked_live: bool,
}

impl RosterTruth {
    /// The truth beside `home`, whose roster lists `members` at the start.
    pub(super) fn new(home: FakeHome, members: Vec<String>, owners: Vec<String>) -> RosterTruth {
        let initial_generation = home.coordinates().0;
        RosterTruth {
            home,
            sessions: BTreeMap::new(),
            changed: BTreeMap::new(),
            faults: vec![],
            fresh_from_ms: 0,
            members,
            owners,
            initial_generation,
            generations: vec![],
            barriers: vec![],
            skips: vec![],
            asked_ms: 0,
            asked_live: false,
        }
    }

    /// memoria stopped at `from_ms` and is up again now: its copy is known
    /// to hold only after a pull since.
    pub(super) fn woke(&mut self, from_ms: u64) {
        let now = now_ms();
        self.fresh_from_ms = now;
        self.barriers.push(Barrier::Wake {
            from_ms,
            to_ms: now,
        });
    }

    /// memoria's calendar skipped `by_ms` now: every copy is that much older.
    pub(super) fn skipped(&mut self, by_ms: u64) {
        let now = now_ms();
        self.fresh_from_ms = now;
        self.skips.push((now, by_ms));
    }

    /// The home starts generation `gen-N` (N counting from 2) listing
    /// `members` now; returns its name.
    pub(super) fn new_generation(&mut self, members: &[String]) -> String {
        let name = format!("gen-{}", self.generations.len() + 2);
        let listed: Vec<&str> = members.iter().map(String::as_str).collect();
        self.home.new_generation(&name, &listed);
        let now = now_ms();
        for who in self.members.clone().iter().chain(members) {
            let on = members.contains(who);
            self.changed.insert(who.clone(), (now, on));
        }
        self.generations.push((now, name.clone()));
        name
    }

    /// An owner's confirmation, the page asked at `from_ms`: the form named
    /// `form` if the page held one, and memoria answered `adopted`.
    /// Returns a failed check when no state memoria's copy may be in
    /// agrees (a generation that waits with no form to confirm it, one
    /// adopted that never waited).
    pub(super) fn confirmed(
        &mut self,
        from_ms: u64,
        form: Option<String>,
        adopted: bool,
    ) -> Option<Check> {
        let what = match &form {
            None => "no confirmation form".to_string(),
            Some(g) if adopted => format!("the form naming {g}, answered as adopted (303)"),
            Some(g) => format!("the form naming {g}, answered as not adopted"),
        };
        self.barriers.push(Barrier::Confirm {
            from_ms,
            to_ms: now_ms(),
            form,
            adopted,
        });
        let now = now_ms();
        match self.possible(now, now) {
            Err(()) => Some(Check {
                expected: format!(
                    "{SAFETY_ROSTER} the owner's roster page offers to confirm the generation the home answered, which waits unconfirmed once memoria has pulled it, and only that one (§4.3, suite gate 5)"
                ),
                actual: format!(
                    "{what} (the home's last pulls, ms and status: {})",
                    self.recent_pulls()
                ),
                ok: false,
            }),
            Ok(_) => None,
        }
    }

    /// The generation memoria holds by the timeline: the one an owner last
    /// confirmed, else the home's first.
    fn adopted_generation(&self) -> &str {
        self.barriers
            .iter()
            .rev()
            .find_map(|b| match b {
                Barrier::Confirm {
                    form: Some(g),
                    adopted: true,
                    ..
                } => Some(g.as_str()),
                _ => None,
            })
            .unwrap_or(&self.initial_generation)
    }

    /// Whether the home answers a generation no owner has confirmed.
    pub(super) fn awaiting_confirmation(&self) -> bool {
        self.home.coordinates().0 != self.adopted_generation()
    }

    /// Whether the oracle judges by `Possible` copies: once the home has
    /// started a new generation.
    pub(super) fn by_generation(&self) -> bool {
        !self.generations.is_empty()
    }

    /// The home's fault at `at_ms`: `None` when a change happened at that
    /// very instant (the oracle cannot tell which came first).
    pub(super) fn fault_at(&self, at_ms: u64) -> Option<HomeFault> {
        if self.faults.iter().any(|(t, _)| *t == at_ms) {
            return None;
        }
        Some(
            self.faults
                .iter()
                .rev()
                .find(|(t, _)| *t < at_ms)
                .map_or(HomeFault::None, |(_, f)| *f),
        )
    }

    /// Whether the home answered a pull with its roster as it stood
    /// (status 200, an epoch, no fault) strictly after `after_ms`.
    pub(super) fn clean_pull_after(&self, after_ms: u64) -> bool {
        let adopted = self.adopted_generation();
        self.home.pulls().iter().any(|p| {
            p.at_ms > after_ms
                && p.status == 200
                && p.epoch.is_some()
                && p.generation.as_deref() == Some(adopted)
                && self.fault_at(p.at_ms) == Some(HomeFault::None)
        })
    }

    /// When the last clean pull since memoria's last wake (or calendar
    /// skip) was answered, in simulated ms, if there was one.
    pub(super) fn last_clean_pull_ms(&self) -> Option<u64> {
        self.home
            .pulls()
            .iter()
            .filter(|p| {
                p.at_ms > self.fresh_from_ms
                    && p.status == 200
                    && p.epoch.is_some()
                    && self.fault_at(p.at_ms) == Some(HomeFault::None)
            })
            .map(|p| p.at_ms)
            .max()
    }

    /// When the last pull memoria may have adopted since its last wake (or
    /// calendar skip) was answered, in simulated ms: status 200 with an
    /// epoch, under no fault the oracle knows of or a slow home (a change at
    /// that very instant counts as possibly clean, the generous reading), or under a
    /// lagging replica that had no older roster to answer with (its epoch
    /// no older than any answered before: an answer memoria may adopt).
    fn last_possibly_clean_pull_ms(&self) -> Option<u64> {
        let pulls = self.home.pulls();
        let mut newest: Option<u64> = None;
        let mut last = None;
        for p in &pulls {
            let Some(epoch) = p.epoch.filter(|_| p.status == 200) else {
                continue;
            };
            let adoptable = match self.fault_at(p.at_ms) {
                // A slow answer may still come inside memoria's deadline.
                None | Some(HomeFault::None | HomeFault::Slow(_)) => true,
                Some(HomeFault::StaleEpoch) => newest.is_none_or(|n| epoch >= n),
                Some(_) => false,
            };
            if adoptable && p.at_ms > self.fresh_from_ms {
                last = Some(p.at_ms);
            }
            newest = Some(newest.map_or(epoch, |n| n.max(epoch)));
        }
        last
    }

    /// Whether the copy memoria holds is surely stale now: it pulled one
    /// since its last wake, and no pull it may have adopted was answered
    /// in the last `ROSTER_TTL_S` and [`STALE_MARGIN_S`] (§4.3: "Past the
    /// TTL with no successful fetch it is stale").
    pub(super) fn surely_stale(&self) -> bool {
        self.last_possibly_clean_pull_ms()
            .is_some_and(|t| now_ms() > t + STALE_AFTER_S * 1_000)
    }

    /// The home's last few pulls, `at_ms:status`, for a failure's message.
    pub(super) fn recent_pulls(&self) -> String {
        let pulls = self.home.pulls();
        let from = pulls.len().saturating_sub(4);
        let mut out: Vec<String> = pulls[from..]
            .iter()
            .map(|p| format!("{}:{}", p.at_ms, p.status))
            .collect();
        out.push(format!("memoria fresh from {}", self.fresh_from_ms));
        out.join(" ")
    }

    /// Whether `address` must be refused now: the home removed them and
    /// has not added them back, and a clean pull has happened since
    /// (§4.3: the copy as it stands; a failed pull keeps it).
    pub(super) fn refused(&self, address: &str) -> bool {
        if self.by_generation() {
            let owner = self.owners.iter().any(|o| o == address);
            return !owner
                && self.is_roster_reader(address)
                && self.standings(address).is_some_and(|all| {
                    !all.is_empty() && all.iter().all(|(s, _)| *s == Standing::Refused)
                });
        }
        matches!(self.changed.get(address), Some((at, false)) if self.clean_pull_after(*at))
    }

    /// Whether `address`, a roster reader, is certainly admitted now: on
    /// the roster, with a clean pull since their last change and since
    /// memoria last woke or its calendar skipped, the last one inside the
    /// copy's TTL.
    pub(super) fn surely_admitted(&self, address: &str) -> bool {
        if self.by_generation() {
            return self.standings(address).is_some_and(|all| {
                !all.is_empty() && all.iter().all(|(s, _)| *s == Standing::Admitted)
            });
        }
        let fresh = self
            .last_clean_pull_ms()
            .is_some_and(|t| now_ms() < t + KEPT_WITHIN_S * 1_000);
        fresh && self.admitted_by_the_copy(address)
    }

    /// Whether the copy memoria pulled last admits `address`, whatever its age.
    fn admitted_by_the_copy(&self, address: &str) -> bool {
        let since = match self.changed.get(address) {
            Some((_, false)) => return false,
            Some((at, true)) => (*at).max(self.fresh_from_ms),
            None if self.members.iter().any(|m| m == address) => self.fresh_from_ms,
            None => return true,
        };
        self.clean_pull_after(since)
    }

    /// Whether `address` is a reader the roster admits (not an owner).
    pub(super) fn is_roster_reader(&self, address: &str) -> bool {
        self.members.iter().any(|m| m == address) || self.changed.contains_key(address)
    }

    /// The home's fault from `at_ms` on.
    pub(super) fn set_fault(&mut self, at_ms: u64, fault: HomeFault) {
        self.home.set_fault(fault);
        self.faults.push((at_ms, fault));
    }
}

/// Judges what `address` saw against the roster's truth: a person the home
/// removed, after a clean pull since, sees no passage (§4.3). Returns only
/// a failed check.
pub(super) fn judge_roster(truth: &RosterTruth, address: &str, seen: &Rendered) -> Vec<Check> {
    if truth.by_generation() {
        return super::possible::judge_generation(truth, address, seen);
    }
    let mut out = vec![];
    if truth.refused(address) && !seen.shown.is_empty() {
        out.push(Check {
            expected: format!(
                "{SAFETY_ROSTER} a person the home removed from the roster sees no passage once memoria's roster loop has pulled the change (§4.3, §6.5)"
            ),
            actual: format!("{} results", seen.shown.len()),
            ok: false,
        });
    }
    // A stale roster stops team standing for everybody, sessions included
    // (§4.3, suite gate 5): past the TTL with no pull the home answered, a
    // roster reader sees no passage, and the page says why.
    // The owners list bypasses the roster (decision 11): an owner the
    // timeline also put on or off the roster stays admitted.
    let owner = truth.owners.iter().any(|o| o == address);
    if !owner && truth.is_roster_reader(address) && truth.surely_stale() {
        if !seen.shown.is_empty() {
            out.push(Check {
                expected: format!(
                    "{SAFETY_ROSTER} past the roster copy's TTL with no pull the home answered (over {STALE_AFTER_S} s), nobody's team standing can be established, sessions included: a roster reader sees no passage (§4.3, suite gate 5)"
                ),
                actual: format!("{} results", seen.shown.len()),
                ok: false,
            });
        }
        // A reader the home removed holds no live session to withhold
        // from: memoria refused them before the copy went stale, and the
        // sign-in page is their answer.
        if seen.standing_lack_said == Some(false) && !truth.refused(address) {
            out.push(Check {
                expected: format!(
                    "{SAFETY_ROSTER} the search page withholds loudly while the roster copy is stale: it says the roster is stale (§4.3, §8.1)"
                ),
                actual: format!(
                    "the page does not say why nothing is shown (the home's last pulls, ms and status: {})",
                    truth.recent_pulls()
                ),
                ok: false,
            });
        }
    }
    // A failed pull keeps the last good copy: while a clean pull since
    // memoria's last wake is well inside the TTL, memoria holds a copy.
    let kept = truth
        .last_clean_pull_ms()
        .is_some_and(|t| now_ms() < t + KEPT_WITHIN_S * 1_000);
    if kept && seen.no_roster {
        out.push(Check {
            expected: format!(
                "{SAFETY_ROSTER} a failed pull keeps the last good copy within its TTL, so the page never says memoria holds no roster while a clean pull since its last wake is under {KEPT_WITHIN_S} s old (§4.3, §6.5)"
            ),
            actual: "the page says memoria has not been able to fetch the roster".into(),
            ok: false,
        });
    }
    out
}

/// How long after a clean pull the oracle holds memoria to a copy, in
/// simulated s: `ROSTER_TTL_S` (900 s) less a minute, so the copy's own
/// expiry on memoria's calendar is never judged.
pub(super) const KEPT_WITHIN_S: u64 = memoria::ROSTER_TTL_S.unsigned_abs() - 60;

/// The oracle's margin past the copy's TTL, in simulated s: a pull's
/// deadline and the links' latency, rounded up to a minute, so the edge of
/// the TTL on memoria's calendar is never judged.
pub(super) const STALE_MARGIN_S: u64 = 60;

/// How long after the last pull memoria may have adopted its copy is
/// surely stale, in simulated s: `ROSTER_TTL_S` (900 s) and
/// [`STALE_MARGIN_S`].
pub(super) const STALE_AFTER_S: u64 = memoria::ROSTER_TTL_S.unsigned_abs() + STALE_MARGIN_S;

/// Lets simulated time run, in steps of a second, until the home has
/// answered a clean pull after now, for at most
/// [`ROSTER_PULL_WAIT_MAX_S`]: memoria's own roster loop, never a pull the
/// oracle makes. Returns whether it happened.
pub(super) async fn await_clean_pull(truth: &RosterTruth) -> bool {
    // A generation no owner confirmed: no pull refreshes the copy.
    if truth.awaiting_confirmation() {
        return false;
    }
    let now = now_ms();
    for _ in 0..ROSTER_PULL_WAIT_MAX_S {
        if truth.clean_pull_after(now) {
            return true;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    truth.clean_pull_after(now)
}

/// Simulated milliseconds since the run began.
pub(super) fn now_ms() -> u64 {
    turmoil::sim_elapsed().unwrap_or_default().as_millis() as u64
}

/// Whether the last pull the home answered was clean (or none was made).
pub(super) fn last_pull_clean(truth: &RosterTruth) -> bool {
    let adopted = truth.adopted_generation();
    truth.home.pulls().last().is_none_or(|p| {
        p.status == 200
            && p.epoch.is_some()
            && p.generation.as_deref() == Some(adopted)
            && truth.fault_at(p.at_ms) == Some(HomeFault::None)
    })
}
