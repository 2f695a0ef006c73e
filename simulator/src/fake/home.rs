//! The fake home: the team's roster served as suite call 8, with fault knobs (§4.3, §6.5).
//!
//! A [`FakeHome`] holds one team's roster (a generation, an epoch and the
//! members' addresses) and serves `GET /roster` with a consumer's bearer
//! token, in the shape `fixtures/contract/` gives (`roster-response`). Its
//! own serde types, independent of the reference's decoder. The roster
//! changes as a home's does: [`FakeHome::remove`] and [`FakeHome::add`]
//! bump the epoch; [`FakeHome::new_generation`] starts a generation (a
//! home restored or re-provisioned), its epoch counting from 1 again.
//! Faults ([`HomeFault`]), switchable mid-run: down (503), slow past
//! memoria's deadline, a stale epoch (a lagging replica answering the
//! roster as it was one change ago), garbage bodies ([`Garbage`]),
//! another team's well-formed roster ([`HomeFault::OtherTeam`]), a
//! connection dropped unanswered ([`HomeFault::Refuse`], as the fake
//! sibling's `refuse` outage) and a request accepted and never answered
//! ([`HomeFault::Hang`], past any deadline).
//! Every pull is counted, content-free ([`FakeHome::pulls`]).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::trace::Clock;

/// The home's host label: `<team>.home.oficina.works`.
pub const HOME_LABEL: &str = "home";

/// The status a [`Pull`] records when the home answered none (a dropped
/// connection, [`HomeFault::Refuse`], or a hung request, [`HomeFault::Hang`]).
pub const PULL_UNANSWERED: u16 = 0;

/// A garbage body the home can answer with, status 200.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Garbage {
    /// Not JSON at all: an HTML error page from a proxy.
    Html,
    /// The roster cut off half-way.
    Truncated,
    /// A JSON object with none of the roster's fields.
    EmptyObject,
    /// A member entry that is not an address.
    NotAnAddress,
    /// The members field missing, the rest present.
    NoMembers,
}

/// Every garbage body, for a case that tries each.
pub const GARBAGE: [Garbage; 5] = [
    Garbage::Html,
    Garbage::Truncated,
    Garbage::EmptyObject,
    Garbage::NotAnAddress,
    Garbage::NoMembers,
];

/// How the home answers now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HomeFault {
    /// It answers the roster as it stands.
    #[default]
    None,
    /// It answers 503 to every pull.
    Down,
    /// It answers, after this many simulated milliseconds.
    Slow(u64),
    /// It answers the roster as it was before its last change, at that
    /// epoch (a lagging replica).
    StaleEpoch,
    /// It answers 200 with a garbage body.
    Garbage(Garbage),
    /// It answers 200 with a well-formed roster of another team
    /// ([`crate::OTHER_TEAM`]) listing the same members: a misrouted answer.
    OtherTeam,
    /// It drops the connection without answering (a refused connection, as
    /// the fake sibling's [`crate::fake::faults::Outage::Refuse`]): memoria
    /// sees the exchange break.
    Refuse,
    /// It accepts the request and never answers: memoria's pull runs past
    /// its deadline.
    Hang,
}

/// One pull the home received: content-free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pull {
    /// Simulated milliseconds since the run began.
    pub at_ms: u64,
    /// The status answered; [`PULL_UNANSWERED`] when the connection was
    /// dropped or the request hung.
    pub status: u16,
    /// The epoch answered, if a roster was.
    pub epoch: Option<u64>,
    /// The generation answered, if this team's roster was (not another
    /// team's, [`HomeFault::OtherTeam`]).
    pub generation: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Roster {
    generation: String,
    epoch: u64,
    members: BTreeSet<String>,
}

#[derive(Debug)]
struct HomeState {
    team: String,
    token: String,
    roster: Roster,
    previous: Option<Roster>,
    fault: HomeFault,
    pulls: Vec<Pull>,
    /// Every roster the home has held, in order, the first included.
    history: Vec<Roster>,
}

/// The roster as the home answers it (suite call 8,
/// `roster-response.schema.json`): the team, the generation, the epoch and
/// the members' addresses, in this field order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RosterResponse {
    /// The team label.
    pub team: String,
    /// The roster's generation: opaque.
    pub generation: String,
    /// The epoch within the generation.
    pub epoch: u64,
    /// The members' addresses.
    pub members: Vec<String>,
}

/// The fake home; clones share it.
#[derive(Clone)]
pub struct FakeHome {
    state: Arc<Mutex<HomeState>>,
    clock: Clock,
}

impl std::fmt::Debug for FakeHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeHome").finish_non_exhaustive()
    }
}

impl FakeHome {
    /// A home for team `team` accepting memoria's consumer `token`, whose
    /// roster is generation `generation`, epoch 1, listing `members`.
    pub fn new(team: &str, token: &str, generation: &str, members: &[&str], clock: Clock) -> Self {
        let roster = Roster {
            generation: generation.into(),
            epoch: 1,
            members: members.iter().map(|m| m.to_string()).collect(),
        };
        FakeHome {
            state: Arc::new(Mutex::new(HomeState {
                team: team.into(),
                token: token.into(),
                roster: roster.clone(),
                previous: None,
                fault: HomeFault::None,
                pulls: vec![],
                history: vec![roster],
            })),
            clock,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HomeState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn change(&self, f: impl FnOnce(&mut BTreeSet<String>)) {
        let mut s = self.lock();
        let before = s.roster.clone();
        f(&mut s.roster.members);
        s.roster.epoch += 1;
        s.previous = Some(before);
        let now = s.roster.clone();
        s.history.push(now);
    }

    /// Accepts `token` as memoria's consumer token from now on, and no
    /// other (a rotation at the home, §6.2): a pull with the old one is
    /// refused with 401.
    pub fn set_token(&self, token: &str) {
        self.lock().token = token.to_owned();
    }

    /// Removes `address` from the roster: the epoch moves on.
    pub fn remove(&self, address: &str) {
        self.change(|m| {
            m.remove(address);
        });
    }

    /// Adds `address` to the roster: the epoch moves on.
    pub fn add(&self, address: &str) {
        self.change(|m| {
            m.insert(address.to_string());
        });
    }

    /// Starts generation `generation` listing `members`, at epoch 1: what a
    /// home restored or re-provisioned answers.
    pub fn new_generation(&self, generation: &str, members: &[&str]) {
        let mut s = self.lock();
        s.previous = None;
        s.roster = Roster {
            generation: generation.into(),
            epoch: 1,
            members: members.iter().map(|m| m.to_string()).collect(),
        };
        let now = s.roster.clone();
        s.history.push(now);
    }

    /// The members the home listed in generation `generation` at `epoch`,
    /// if it ever held that roster (its own record, for the oracle).
    pub fn members_at(&self, generation: &str, epoch: u64) -> Option<BTreeSet<String>> {
        self.lock()
            .history
            .iter()
            .rev()
            .find(|r| r.generation == generation && r.epoch == epoch)
            .map(|r| r.members.clone())
    }

    /// Sets how the home answers from now on.
    pub fn set_fault(&self, fault: HomeFault) {
        self.lock().fault = fault;
    }

    /// The roster's generation and epoch now.
    pub fn coordinates(&self) -> (String, u64) {
        let s = self.lock();
        (s.roster.generation.clone(), s.roster.epoch)
    }

    /// Every pull received so far.
    pub fn pulls(&self) -> Vec<Pull> {
        self.lock().pulls.clone()
    }

    /// The router: `GET /roster`.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/roster", get(roster))
            .with_state(self.clone())
    }
}

fn body_of(s: &HomeState, r: &Roster) -> Vec<u8> {
    serde_json::to_vec(&RosterResponse {
        team: s.team.clone(),
        generation: r.generation.clone(),
        epoch: r.epoch,
        members: r.members.iter().cloned().collect(),
    })
    .unwrap_or_default()
}

fn garbage(s: &HomeState, g: Garbage) -> Vec<u8> {
    match g {
        Garbage::Html => b"<html><body>502 Bad Gateway</body></html>".to_vec(),
        Garbage::Truncated => {
            let whole = body_of(s, &s.roster);
            whole[..whole.len() / 2].to_vec()
        }
        Garbage::EmptyObject => b"{}".to_vec(),
        Garbage::NotAnAddress => serde_json::to_vec(&RosterResponse {
            team: s.team.clone(),
            generation: s.roster.generation.clone(),
            epoch: s.roster.epoch,
            members: vec!["not an address".into()],
        })
        .unwrap_or_default(),
        Garbage::NoMembers => serde_json::to_vec(&serde_json::json!({
            "team": s.team, "generation": s.roster.generation, "epoch": s.roster.epoch,
        }))
        .unwrap_or_default(),
    }
}

async fn roster(State(home): State<FakeHome>, headers: HeaderMap) -> Response {
    let fault = home.lock().fault;
    if matches!(fault, HomeFault::Refuse | HomeFault::Hang) {
        let at_ms = home.clock.now_ms();
        home.lock().pulls.push(Pull {
            at_ms,
            status: PULL_UNANSWERED,
            epoch: None,
            generation: None,
        });
        if fault == HomeFault::Hang {
            std::future::pending::<()>().await;
        }
        let mut response = StatusCode::SERVICE_UNAVAILABLE.into_response();
        response
            .extensions_mut()
            .insert(crate::fake::faults::RefuseConnection);
        return response;
    }
    if let HomeFault::Slow(ms) = fault {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    let at_ms = home.clock.now_ms();
    let mut s = home.lock();
    let authorized = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| t == s.token);
    let (status, body, answered) = if !authorized {
        (
            StatusCode::UNAUTHORIZED,
            br#"{"error":"unauthorized"}"#.to_vec(),
            None,
        )
    } else {
        match fault {
            HomeFault::Down => (
                StatusCode::SERVICE_UNAVAILABLE,
                br#"{"error":"unavailable"}"#.to_vec(),
                None,
            ),
            HomeFault::Garbage(g) => (StatusCode::OK, garbage(&s, g), None),
            HomeFault::OtherTeam => {
                let body = serde_json::to_vec(&RosterResponse {
                    team: crate::OTHER_TEAM.into(),
                    generation: s.roster.generation.clone(),
                    epoch: s.roster.epoch,
                    members: s.roster.members.iter().cloned().collect(),
                })
                .unwrap_or_default();
                (StatusCode::OK, body, Some((s.roster.epoch, None)))
            }
            HomeFault::StaleEpoch => {
                let r = s.previous.clone().unwrap_or_else(|| s.roster.clone());
                let body = body_of(&s, &r);
                (StatusCode::OK, body, Some((r.epoch, Some(r.generation))))
            }
            HomeFault::None | HomeFault::Slow(_) | HomeFault::Refuse | HomeFault::Hang => {
                let r = s.roster.clone();
                let body = body_of(&s, &r);
                (StatusCode::OK, body, Some((r.epoch, Some(r.generation))))
            }
        }
    };
    let (epoch, generation) = answered.map_or((None, None), |(e, g)| (Some(e), g));
    s.pulls.push(Pull {
        at_ms,
        status: status.as_u16(),
        epoch,
        generation,
    });
    (
        status,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}
