//! Admission in suite shape: the pulled copy of the home's roster, its epoch, its TTL and its generation (§4.3, §6.5, suite call 8).
//!
//! memoria holds the home's roster as a pulled copy and authors none of it
//! (§2, §4.3). A [`RosterCopy`] is that copy, shared by every clone of the
//! [`crate::Admission`] that reads it and by the puller that writes it
//! (`web::AppState::pull_roster`). What it answers for one address now
//! ([`RosterCopy::standing`]):
//!
//! - **no copy** (the home never answered since start): nobody is admitted
//!   from the roster. §4.3's fail closed: an outage, where the alternative
//!   is admitting someone nobody can vouch for;
//! - **within [`ROSTER_TTL_S`] of the last successful pull**: the copy as it
//!   stands. On it, admitted; off it, refused;
//! - **past the TTL** with no successful pull since: **stale**. Nobody's
//!   team standing can be established, sessions included ([`RosterLack`]);
//!   the web surface withholds loudly rather than refusing or rendering an
//!   empty page.
//!
//! A pull succeeds only when the home answers this team's roster, decoded
//! whole by [`decode_roster`] (total: any bytes become a roster or a
//! [`RosterFault`], never a panic and never an empty roster made of
//! garbage), in the generation memoria already holds, at an epoch no older
//! than the copy's. An older epoch (a lagging home replica) is a failed
//! pull: adopting it would re-admit a person removed since. An answer in a
//! **generation memoria has not seen** (the home restored or re-provisioned)
//! is not adopted: it waits as pending, the copy held goes on ageing toward
//! stale, and only an owner's confirmation ([`RosterCopy::confirm`], the
//! form `POST /roster/confirm`) adopts it. The generation and epoch adopted
//! last are kept in the store (`roster_held`, coordinates only, never a
//! member) and remembered at start ([`RosterCopy::remember`]), so a restart
//! does not make an unfamiliar generation or an older epoch familiar: the
//! first copy after start is adopted as it comes only when the store holds
//! no coordinates (a first start).
//!
//! The owners list is not here: it bypasses the roster in suite shape too
//! (decision 11), and [`crate::Admission`] asks it first.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;

/// How long a pulled roster copy is enforced as it stands without a
/// successful pull, in seconds: 15 minutes. The spec asks the cache to
/// have a number and gives none (§4.3, §5.2 step 2); this is the figure
/// the spec used for S7's membership cache before ruling 4 retired it, and
/// the sign-in link's lifetime (`SIGN_IN_LINK_TTL_S`). It is the most a
/// home outage lets a removed person go on reading, and the least an
/// outage costs before everyone's team standing stops.
pub const ROSTER_TTL_S: i64 = 15 * 60;
/// How often the roster is pulled while pulls succeed, in seconds: a third
/// of [`ROSTER_TTL_S`], so two pulls can fail in a row before the copy goes
/// stale, and a removal reaches memoria within five minutes.
pub const ROSTER_REFRESH_S: u64 = 5 * 60;
/// How soon a failed pull is tried again, in seconds: a chosen figure that
/// calls a down home at most twice a minute, and lets a copy that went
/// stale in an outage be fresh again within 30 s of the home answering.
pub const ROSTER_RETRY_S: u64 = 30;
/// The deadline of one roster pull, exchange and body, in milliseconds:
/// §6.5's sibling deadline (`SIBLING_DEADLINE_MS`), for the same reason (a
/// call made while a reader may be waiting on the answer it feeds).
pub const ROSTER_DEADLINE_MS: u64 = 800;
/// The most members one roster may list: a chosen cap, far above a team's
/// size, that bounds what a pull may hold in memory.
pub const ROSTER_MEMBERS_MAX: usize = 4096;
/// The longest roster generation accepted, in bytes: the contract's cap on
/// every opaque string (`fixtures/contract/README.md`).
pub const ROSTER_GENERATION_BYTES_MAX: usize = 256;
/// The largest roster body read, in bytes: [`ROSTER_MEMBERS_MAX`] addresses
/// of `OWNER_ADDRESS_BYTES_MAX` bytes, each quoted and separated, and 4 KiB
/// for the rest of the object.
pub const ROSTER_BODY_BYTES_MAX: usize =
    ROSTER_MEMBERS_MAX * (crate::access::address::OWNER_ADDRESS_BYTES_MAX + 3) + 4096;

/// Why a roster pull failed: kinds only, never an address or a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RosterFault {
    /// No whole answer: the home could not be dialled or the exchange broke.
    #[error("the home could not be reached")]
    Unreachable,
    /// No answer within [`ROSTER_DEADLINE_MS`].
    #[error("the home did not answer within {ROSTER_DEADLINE_MS} ms")]
    Deadline,
    /// memoria has no consumer token to send the home now (its token file
    /// cannot be read or holds no token): no call was made (§6.2, fail
    /// closed).
    #[error("no consumer token to send the home: {0}")]
    NoToken(crate::net::token::TokenUnreadable),
    /// The home answered a status other than 200.
    #[error("the home answered status {0}")]
    Status(u16),
    /// The body is over [`ROSTER_BODY_BYTES_MAX`].
    #[error("the roster is over {ROSTER_BODY_BYTES_MAX} bytes")]
    TooLarge,
    /// The body is not a roster as the contract writes one; the reason is
    /// the decoder's, without the bytes.
    #[error("the roster does not decode: {0}")]
    Malformed(&'static str),
    /// A roster of another team (§6.3).
    #[error("the roster is another team's")]
    OtherTeam,
    /// The home answered an epoch older than the copy held: never adopted.
    #[error("the home answered epoch {answered}, behind the copy's {held}")]
    EpochBehind {
        /// The copy's epoch.
        held: u64,
        /// The answer's.
        answered: u64,
    },
    /// The home answered a generation memoria has not seen; it waits for an
    /// owner's confirmation and the copy held is not refreshed.
    #[error("the home answered a roster generation no owner has confirmed")]
    UnfamiliarGeneration,
}

/// One roster as the home sent it (suite call 8), decoded whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PulledRoster {
    /// The team label it is the roster of.
    pub team: String,
    /// The roster's generation: opaque, compared for equality only.
    pub generation: String,
    /// The roster epoch: the home's counter of changes within a generation.
    pub epoch: u64,
    /// Every member's address, lowercased.
    pub members: BTreeSet<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WireRoster {
    team: String,
    generation: String,
    epoch: u64,
    members: Vec<String>,
}

/// Decodes a roster answer of `status` with `body` for team `team` (the
/// contract's `roster-response`). Total: any bytes give a roster or a
/// [`RosterFault`]. A body that is not JSON, misses a field, carries one
/// the contract does not name, lists an entry that is not an address or
/// lists one twice, holds more than [`ROSTER_MEMBERS_MAX`] members or an
/// empty or over-long generation, is [`RosterFault::Malformed`]: a failed
/// pull, never an empty roster.
///
/// # Errors
/// The [`RosterFault`] naming why.
pub fn decode_roster(status: u16, body: &[u8], team: &str) -> Result<PulledRoster, RosterFault> {
    if status != 200 {
        return Err(RosterFault::Status(status));
    }
    if body.len() > ROSTER_BODY_BYTES_MAX {
        return Err(RosterFault::TooLarge);
    }
    let wire: WireRoster =
        serde_json::from_slice(body).map_err(|_| RosterFault::Malformed("not a roster object"))?;
    if wire.generation.is_empty() || wire.generation.len() > ROSTER_GENERATION_BYTES_MAX {
        return Err(RosterFault::Malformed(
            "the generation is empty or too long",
        ));
    }
    if wire.members.len() > ROSTER_MEMBERS_MAX {
        return Err(RosterFault::Malformed("too many members"));
    }
    if !wire.team.eq_ignore_ascii_case(team) {
        return Err(RosterFault::OtherTeam);
    }
    let mut members = BTreeSet::new();
    for m in &wire.members {
        let a = m.to_lowercase();
        if !crate::access::address::is_address(&a) {
            return Err(RosterFault::Malformed("a member is not an address"));
        }
        if !members.insert(a) {
            return Err(RosterFault::Malformed("a member is listed twice"));
        }
    }
    Ok(PulledRoster {
        team: wire.team.to_ascii_lowercase(),
        generation: wire.generation,
        epoch: wire.epoch,
        members,
    })
}

/// Why nobody's team standing can be established now (§4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosterLack {
    /// The home has not answered since start: there is no copy.
    NoCopy,
    /// The copy is past [`ROSTER_TTL_S`] with no successful pull since.
    Stale {
        /// A new generation waits for an owner's confirmation.
        awaiting_confirmation: bool,
    },
}

/// The roster's answer for one address now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RosterStanding {
    /// On the copy, which is within its TTL.
    Member,
    /// Not on the copy, which is within its TTL.
    NotMember,
    /// Nobody's standing can be established.
    Lacking(RosterLack),
}

/// A copy and when the pull that brought it (or last confirmed it) ended.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Held {
    roster: PulledRoster,
    pulled_at_s: i64,
}

#[derive(Debug, Default)]
struct State {
    current: Option<Held>,
    pending: Option<Held>,
    last_fault: Option<RosterFault>,
    /// The generation and epoch adopted last, the copy's or remembered
    /// from before a restart ([`RosterCopy::remember`]): what a pull is
    /// judged against while there is no copy yet.
    known: Option<(String, u64)>,
}

/// What an owner sees of the copy (the `/roster` page): coordinates only,
/// never a member's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterStatus {
    /// The copy's generation and epoch, if there is a copy.
    pub current: Option<(String, u64)>,
    /// Seconds since the copy was last pulled or confirmed.
    pub age_s: Option<i64>,
    /// Why nobody's standing can be established, if so.
    pub lack: Option<RosterLack>,
    /// The generation waiting for an owner's confirmation, and its epoch.
    pub pending: Option<(String, u64)>,
    /// The last pull's failure, if the last pull failed.
    pub last_fault: Option<RosterFault>,
}

/// The pulled copy of the home's roster, shared by its clones (§4.3).
#[derive(Clone)]
pub struct RosterCopy {
    team: String,
    clock: Arc<dyn Clock>,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for RosterCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RosterCopy")
            .field("team", &self.team)
            .finish_non_exhaustive()
    }
}

impl PartialEq for RosterCopy {
    fn eq(&self, other: &RosterCopy) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }
}

impl Eq for RosterCopy {}

impl RosterCopy {
    /// An empty copy for team `team`, aged by `clock`: nobody is admitted
    /// from it until a pull succeeds.
    pub fn new(team: &str, clock: Arc<dyn Clock>) -> RosterCopy {
        RosterCopy {
            team: team.to_ascii_lowercase(),
            clock,
            state: Arc::default(),
        }
    }

    /// The team label the copy is for.
    pub fn team(&self) -> &str {
        &self.team
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lack(&self, s: &State, now: i64) -> Option<RosterLack> {
        match &s.current {
            None => Some(RosterLack::NoCopy),
            Some(h) if now - h.pulled_at_s > ROSTER_TTL_S => Some(RosterLack::Stale {
                awaiting_confirmation: s.pending.is_some(),
            }),
            Some(_) => None,
        }
    }

    /// The roster's answer for `address` (lowercased) now.
    pub fn standing(&self, address: &str) -> RosterStanding {
        let now = self.clock.now_unix_s();
        let s = self.lock();
        if let Some(lack) = self.lack(&s, now) {
            return RosterStanding::Lacking(lack);
        }
        match &s.current {
            Some(h) if h.roster.members.contains(address) => RosterStanding::Member,
            _ => RosterStanding::NotMember,
        }
    }

    /// Why nobody's standing can be established now, or `None` while the
    /// copy is within its TTL.
    pub fn lacking(&self) -> Option<RosterLack> {
        let now = self.clock.now_unix_s();
        let s = self.lock();
        self.lack(&s, now)
    }

    /// Applies one pull's outcome: adopts a roster of the generation held
    /// (or the first one), at an epoch no older than the copy's; holds an
    /// unfamiliar generation as pending; records anything else as the
    /// failure it is. Returns the outcome as applied: `Ok` only when the
    /// copy was refreshed.
    ///
    /// # Errors
    /// The pull's [`RosterFault`], [`RosterFault::EpochBehind`] or
    /// [`RosterFault::UnfamiliarGeneration`]: the copy was not refreshed.
    pub fn apply(
        &self,
        pulled: Result<PulledRoster, RosterFault>,
    ) -> Result<(String, u64), RosterFault> {
        let now = self.clock.now_unix_s();
        let mut s = self.lock();
        // Judged against the copy, or with no copy yet against the
        // coordinates remembered from before a restart.
        let held = s
            .current
            .as_ref()
            .map(|h| (h.roster.generation.clone(), h.roster.epoch))
            .or_else(|| s.known.clone());
        let outcome = match pulled {
            Err(f) => Err(f),
            Ok(r) if !r.team.eq_ignore_ascii_case(&self.team) => Err(RosterFault::OtherTeam),
            Ok(r) => match held {
                Some((generation, _)) if generation != r.generation => {
                    // A lagging replica of the pending generation never
                    // replaces what an owner would confirm.
                    match &s.pending {
                        Some(p)
                            if p.roster.generation == r.generation && r.epoch < p.roster.epoch => {}
                        _ => {
                            s.pending = Some(Held {
                                roster: r,
                                pulled_at_s: now,
                            });
                        }
                    }
                    Err(RosterFault::UnfamiliarGeneration)
                }
                Some((_, epoch)) if r.epoch < epoch => Err(RosterFault::EpochBehind {
                    held: epoch,
                    answered: r.epoch,
                }),
                _ => {
                    let adopted = (r.generation.clone(), r.epoch);
                    s.current = Some(Held {
                        roster: r,
                        pulled_at_s: now,
                    });
                    s.pending = None;
                    s.known = Some(adopted.clone());
                    Ok(adopted)
                }
            },
        };
        s.last_fault = outcome.as_ref().err().cloned();
        match &outcome {
            Ok((_, epoch)) => tracing::info!(epoch, "roster pulled"),
            Err(e) => tracing::warn!(fault = %e, "roster pull did not refresh the copy"),
        }
        outcome
    }

    /// An owner confirms the pending generation `generation`: it becomes
    /// the copy, aged from the pull that brought it. Returns whether it was
    /// the one pending (a confirmation of any other generation, or with
    /// none pending, adopts nothing).
    pub fn confirm(&self, generation: &str) -> bool {
        let mut s = self.lock();
        match s.pending.take() {
            Some(p) if p.roster.generation == generation => {
                tracing::warn!(
                    epoch = p.roster.epoch,
                    "an owner confirmed a new roster generation"
                );
                s.known = Some((p.roster.generation.clone(), p.roster.epoch));
                s.current = Some(p);
                s.last_fault = None;
                true
            }
            other => {
                s.pending = other;
                false
            }
        }
    }

    /// Remembers `generation` at `epoch` as adopted before a restart (the
    /// store's `roster_held` row): until a pull succeeds there is still no
    /// copy and nobody is admitted from the roster, but a pull in another
    /// generation waits for an owner's confirmation and one at an older
    /// epoch fails, as they would have without the restart (§4.3). Does
    /// nothing once a copy or a remembered pair is held.
    pub fn remember(&self, generation: &str, epoch: u64) {
        let mut s = self.lock();
        if s.current.is_none() && s.known.is_none() {
            s.known = Some((generation.to_owned(), epoch));
        }
    }

    /// The generation and epoch adopted last (the copy's, or remembered),
    /// for the store to keep across a restart.
    pub fn adopted(&self) -> Option<(String, u64)> {
        self.lock().known.clone()
    }

    /// The copy's coordinates for an owner's page.
    pub fn status(&self) -> RosterStatus {
        let now = self.clock.now_unix_s();
        let s = self.lock();
        RosterStatus {
            current: s
                .current
                .as_ref()
                .map(|h| (h.roster.generation.clone(), h.roster.epoch)),
            age_s: s.current.as_ref().map(|h| now - h.pulled_at_s),
            lack: self.lack(&s, now),
            pending: s
                .pending
                .as_ref()
                .map(|h| (h.roster.generation.clone(), h.roster.epoch)),
            last_fault: s.last_fault.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    #[derive(Clone, Debug, Default)]
    struct HandClock(Arc<AtomicI64>);

    impl HandClock {
        fn advance(&self, s: i64) {
            self.0.fetch_add(s, Ordering::SeqCst);
        }
    }

    impl Clock for HandClock {
        fn now_unix_s(&self) -> i64 {
            1_000_000 + self.0.load(Ordering::SeqCst)
        }
    }

    fn body(team: &str, generation: &str, epoch: u64, members: &[&str]) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "team": team, "generation": generation, "epoch": epoch, "members": members,
        }))
        .unwrap()
    }

    #[test]
    fn a_roster_decodes_with_its_members_lowercased() {
        let r = decode_roster(200, &body("acme", "g1", 3, &["Ana@Acme.test"]), "acme").unwrap();
        assert_eq!((r.generation.as_str(), r.epoch), ("g1", 3));
        assert!(r.members.contains("ana@acme.test"));
        let empty = decode_roster(200, &body("acme", "g1", 3, &[]), "acme").unwrap();
        assert!(empty.members.is_empty(), "an empty roster is a roster");
    }

    #[test]
    fn garbage_is_a_fault_and_never_an_empty_roster() {
        for bad in [
            &b""[..],
            b"null",
            b"{}",
            b"[]",
            b"<html>",
            b"{\"team\":\"acme\",\"generation\":\"g\",\"epoch\":1}",
            b"{\"team\":\"acme\",\"generation\":\"g\",\"epoch\":-1,\"members\":[]}",
            b"{\"team\":\"acme\",\"generation\":\"\",\"epoch\":1,\"members\":[]}",
            b"{\"team\":\"acme\",\"generation\":\"g\",\"epoch\":1,\"members\":[],\"x\":1}",
            b"{\"team\":\"acme\",\"generation\":\"g\",\"epoch\":1,\"members\":[\"nobody\"]}",
            b"{\"team\":\"acme\",\"generation\":\"g\",\"epoch\":1,\"members\":[\"a@b\",\"A@b\"]}",
            b"\xff\xfe",
        ] {
            assert!(
                matches!(
                    decode_roster(200, bad, "acme"),
                    Err(RosterFault::Malformed(_))
                ),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            decode_roster(503, &body("acme", "g", 1, &[]), "acme"),
            Err(RosterFault::Status(503))
        );
        assert_eq!(
            decode_roster(200, &body("beta", "g", 1, &[]), "acme"),
            Err(RosterFault::OtherTeam)
        );
    }

    fn copy() -> (RosterCopy, HandClock) {
        let clock = HandClock::default();
        (RosterCopy::new("acme", Arc::new(clock.clone())), clock)
    }

    fn roster(generation: &str, epoch: u64, members: &[&str]) -> PulledRoster {
        decode_roster(200, &body("acme", generation, epoch, members), "acme").unwrap()
    }

    #[test]
    fn no_copy_admits_nobody_and_a_copy_is_enforced_as_it_stands_within_its_ttl() {
        let (c, clock) = copy();
        assert_eq!(
            c.standing("ana@acme.test"),
            RosterStanding::Lacking(RosterLack::NoCopy)
        );
        c.apply(Ok(roster("g1", 1, &["ana@acme.test"]))).unwrap();
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::Member);
        assert_eq!(c.standing("bo@acme.test"), RosterStanding::NotMember);
        clock.advance(ROSTER_TTL_S);
        assert!(c.apply(Err(RosterFault::Unreachable)).is_err());
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::Member);
        clock.advance(1);
        assert_eq!(
            c.standing("ana@acme.test"),
            RosterStanding::Lacking(RosterLack::Stale {
                awaiting_confirmation: false
            })
        );
        c.apply(Ok(roster("g1", 2, &[]))).unwrap();
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::NotMember);
    }

    #[test]
    fn an_older_epoch_is_never_adopted() {
        let (c, _) = copy();
        c.apply(Ok(roster("g1", 5, &[]))).unwrap();
        assert_eq!(
            c.apply(Ok(roster("g1", 4, &["ana@acme.test"]))),
            Err(RosterFault::EpochBehind {
                held: 5,
                answered: 4
            })
        );
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::NotMember);
    }

    #[test]
    fn an_unfamiliar_generation_waits_for_an_owner() {
        let (c, clock) = copy();
        c.apply(Ok(roster("g1", 9, &["ana@acme.test"]))).unwrap();
        assert_eq!(
            c.apply(Ok(roster("g2", 1, &["bo@acme.test"]))),
            Err(RosterFault::UnfamiliarGeneration)
        );
        assert_eq!(c.standing("bo@acme.test"), RosterStanding::NotMember);
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::Member);
        clock.advance(ROSTER_TTL_S + 1);
        assert_eq!(
            c.standing("ana@acme.test"),
            RosterStanding::Lacking(RosterLack::Stale {
                awaiting_confirmation: true
            })
        );
        assert!(!c.confirm("g3"), "only the pending generation is adopted");
        c.apply(Ok(roster("g2", 2, &["bo@acme.test"]))).unwrap_err();
        assert!(c.confirm("g2"));
        assert_eq!(c.standing("bo@acme.test"), RosterStanding::Member);
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::NotMember);
    }

    #[test]
    fn coordinates_remembered_from_before_a_restart_judge_the_first_pull() {
        let (c, _) = copy();
        c.remember("g1", 5);
        assert_eq!(c.adopted(), Some(("g1".into(), 5)));
        assert_eq!(
            c.standing("ana@acme.test"),
            RosterStanding::Lacking(RosterLack::NoCopy)
        );
        assert_eq!(
            c.apply(Ok(roster("g1", 4, &["ana@acme.test"]))),
            Err(RosterFault::EpochBehind {
                held: 5,
                answered: 4
            })
        );
        assert_eq!(
            c.apply(Ok(roster("g2", 1, &["ana@acme.test"]))),
            Err(RosterFault::UnfamiliarGeneration)
        );
        assert_eq!(
            c.standing("ana@acme.test"),
            RosterStanding::Lacking(RosterLack::NoCopy)
        );
        assert!(c.confirm("g2"));
        assert_eq!(c.adopted(), Some(("g2".into(), 1)));
        assert_eq!(c.standing("ana@acme.test"), RosterStanding::Member);
        c.remember("g9", 1);
        assert_eq!(
            c.adopted(),
            Some(("g2".into(), 1)),
            "a copy held is never overwritten by a remembered pair"
        );
    }

    #[test]
    fn with_nothing_remembered_the_first_pull_is_adopted_as_it_comes() {
        let (c, _) = copy();
        assert_eq!(c.adopted(), None);
        assert_eq!(c.apply(Ok(roster("g7", 2, &[]))), Ok(("g7".into(), 2)));
        assert_eq!(c.adopted(), Some(("g7".into(), 2)));
    }

    #[test]
    fn a_lagging_answer_of_the_pending_generation_never_replaces_it() {
        let (c, _) = copy();
        c.apply(Ok(roster("g1", 9, &["ana@acme.test"]))).unwrap();
        let _ = c.apply(Ok(roster("g2", 3, &["bo@acme.test", "cy@acme.test"])));
        let _ = c.apply(Ok(roster("g2", 2, &["bo@acme.test"])));
        assert_eq!(c.status().pending, Some(("g2".into(), 3)));
        assert!(c.confirm("g2"));
        assert_eq!(c.standing("cy@acme.test"), RosterStanding::Member);
    }
}
