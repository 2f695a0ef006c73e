//! Validation: what parsing cannot check, that every reader, app, call and fault a scenario names exists and that its timeline checks something.
//!
//! The names a timeline uses resolve here too, once: a call's name to the
//! trace's [`CallKind`], a fault to the fake's knob ([`FaultSetter`]). The
//! replay uses the same resolutions, so a file that validates replays.

use super::parse::{Event, FaultDecl, ProviderState, Scenario, ScenarioError, Surface};
use crate::fake::faults::{Cold, MalformedS2, Outage, Redirect, Slow, TruncateAnnounce};
use crate::fake::trace::CallKind;

/// The crash points a `crash` event may aim at: every one the reference
/// defines ([`memoria::testkit::CRASHPOINTS`]) but the import's, which
/// only `memoria import` reaches, never a world.
pub const CRASH_POINTS: [&str; 5] = [
    "ingest:before-commit",
    "ingest:after-commit",
    "snapshot:before-rename",
    "tombstone:mid-append",
    "tombstone:after-append",
];

/// Checks what parsing cannot: every reader, app, call and fault an event
/// names exists. `event_lines` is each event's line in the file, for the
/// message.
pub(super) fn validate(s: &Scenario, event_lines: &[usize]) -> Result<(), ScenarioError> {
    let apps: Vec<&str> = s.siblings.iter().map(|x| x.app.as_str()).collect();
    let bad = |m: String| Err(ScenarioError::Invalid(m));
    if s.readers.is_empty() {
        return bad("no readers".into());
    }
    if let Some(ms) = s.tick_ms
        && !(1..=crate::world::TICK_MS_MAX).contains(&ms)
    {
        return bad(format!(
            "tick_ms = {ms}: a tick is 1 to {} ms",
            crate::world::TICK_MS_MAX
        ));
    }
    for x in &s.siblings {
        for i in &x.items {
            for r in i.granted_to.iter().chain(&i.removed) {
                if !s.readers.contains(r) {
                    return bad(format!(
                        "item {} names reader {r}, who is not declared",
                        i.id
                    ));
                }
            }
        }
    }
    for (i, e) in s.events.iter().enumerate() {
        let at = |m: String| {
            let line = event_lines
                .get(i)
                .map_or(String::new(), |l| format!(" (line {l})"));
            Err(ScenarioError::Invalid(format!("event #{i}{line}: {m}")))
        };
        let app = match e {
            Event::Fault { app, .. }
            | Event::Clear { app, .. }
            | Event::Revise { app, .. }
            | Event::Create { app, .. }
            | Event::Delete { app, .. }
            | Event::Downgrade { app, .. }
            | Event::SiblingRemoves { app, .. }
            | Event::PartialRestore { app, .. }
            | Event::Backup { app, .. }
            | Event::WholeRestore { app, .. }
            | Event::Upgrade { app, .. }
            | Event::Reformat { app, .. }
            | Event::TokenFile { app, .. }
            | Event::ExpectCalls { app, .. }
            | Event::ExpectHeld { app, .. }
            | Event::ExpectSources { app, .. }
            | Event::ExpectReannounce { app, .. } => Some(app),
            _ => None,
        };
        if let Some(app) = app
            && !apps.contains(&app.as_str())
        {
            return at(format!("it names app {app}, which is not declared"));
        }
        if let Event::ConnectorPut {
            connector, item, ..
        }
        | Event::ConnectorRemove {
            connector, item, ..
        } = e
            && let Err(m) = super::connector::check_item(connector, item)
        {
            return at(m);
        }
        if let Event::ConnectorFault {
            connector, mode, ..
        } = e
            && let Err(m) = super::connector::check_fault(connector, mode)
        {
            return at(m);
        }
        if let Event::Query { reader, .. }
        | Event::Upload { reader, .. }
        | Event::DeleteUpload { reader, .. }
        | Event::OpenDocument { reader, .. }
        | Event::OpenSources { reader, .. } = e
            && !s.readers.contains(reader)
            && !s.guests.contains(reader)
            && !s.strangers.contains(reader)
        {
            return at(format!("it names reader {reader}, who is not declared"));
        }
        if let Event::OpenDocument {
            app,
            item,
            doc,
            surface,
            ..
        } = e
        {
            match (app, item, doc) {
                (Some(app), Some(_), None) if !apps.contains(&app.as_str()) => {
                    return at(format!("it names app {app}, which is not declared"));
                }
                (Some(_), Some(_), None) | (None, None, Some(_)) => {}
                _ => {
                    return at(
                        "an open-document names a sibling's `app` and `item`, or memoria's own `doc`"
                            .into(),
                    );
                }
            }
            if matches!(surface, Some(Surface::Brief | Surface::Json)) {
                return at("a document opens on its page or over MCP (`surface = \"mcp\"`)".into());
            }
        }
        if let Event::ExpectSources { reader, .. }
        | Event::RemoveReader { reader, .. }
        | Event::SiblingRemoves { reader, .. } = e
            && !s.readers.contains(reader)
        {
            return at(format!("it names reader {reader}, who is not declared"));
        }
        if let Event::RosterRemove { reader, .. } | Event::RosterAdd { reader, .. } = e {
            if !s.home {
                return at("a roster event needs `home = true` (suite shape)".into());
            }
            if !s.readers.contains(reader) || s.readers.first() == Some(reader) {
                return at(format!(
                    "it names {reader}, who is not a reader on the roster (every reader but the first, an owner)"
                ));
            }
        }
        if matches!(
            e,
            Event::RosterNewGeneration { .. } | Event::RosterConfirm { .. }
        ) && !s.home
        {
            return at("a roster event needs `home = true` (suite shape)".into());
        }
        if let Event::RosterNewGeneration { members, .. } = e
            && let Some(reader) = members
                .iter()
                .find(|r| !s.readers.contains(r) || s.readers.first() == Some(*r))
        {
            return at(format!(
                "it names {reader}, who is not a reader on the roster (every reader but the first, an owner)"
            ));
        }
        if let Event::Crash { point, .. } = e
            && !CRASH_POINTS.contains(&point.as_str())
        {
            return at(format!(
                "unknown crash point {point}: {} (the import's point is not reached in a world)",
                CRASH_POINTS.join(", ")
            ));
        }
        if matches!(e, Event::Provider { .. }) && !s.ai {
            return at("a provider event needs `ai = true` (AI on)".into());
        }
        if let Event::Provider {
            state,
            retry_after_s: Some(_),
            ..
        } = e
            && *state != ProviderState::RateLimited
        {
            return at("`retry_after_s` goes with `state = \"rate-limited\"` only".into());
        }
        if let Event::RosterFault { mode, .. } = e {
            if !s.home {
                return at("a roster event needs `home = true` (suite shape)".into());
            }
            if super::parse::home_fault(mode).is_none() {
                return at(format!(
                    "unknown roster fault {mode}: none, down, stale-epoch, other-team, garbage-…, refuse or hang"
                ));
            }
        }
        if let Event::ExpectCalls { call, .. } = e
            && call_kind(call).is_none()
        {
            return at(format!("unknown call {call}: S1, S1a, S2 or S3"));
        }
        if let Event::Fault { fault, .. } = e
            && let Err(m) = fault_knob(fault)
        {
            return at(m);
        }
    }
    let checks = |e: &Event| {
        e.is_expectation()
            || matches!(
                e,
                Event::Query {
                    expect: Some(_),
                    ..
                }
            )
    };
    if !s.oracle && !s.events.iter().any(checks) {
        return bad(
            "the timeline checks nothing (no expect-* event and no query with an expect), so a replay could only pass vacuously".into(),
        );
    }
    Ok(())
}

pub(super) fn call_kind(s: &str) -> Option<CallKind> {
    match s {
        "S1" => Some(CallKind::S1),
        "S1a" => Some(CallKind::S1a),
        "S2" => Some(CallKind::S2),
        "S3" => Some(CallKind::S3),
        "S6" => Some(CallKind::S6),
        _ => None,
    }
}

pub(super) fn fault_knob(f: &FaultDecl) -> Result<FaultSetter, String> {
    Ok(match f.clone() {
        FaultDecl::Cold { idle_ms, wake_ms } => FaultSetter::Cold(Cold { idle_ms, wake_ms }),
        FaultDecl::Slow { latency_ms, all } => FaultSetter::Slow(Slow {
            latency_ms,
            only: if all { None } else { Some(CallKind::S2) },
        }),
        FaultDecl::Outage { mode, only } => FaultSetter::Outage(
            match mode.as_str() {
                "hang" => Outage::Hang,
                "refuse" => Outage::Refuse,
                s => Outage::Status(
                    s.parse()
                        .map_err(|_| format!("outage mode {s}: hang, refuse or a status"))?,
                ),
            },
            match only.as_deref() {
                None => None,
                Some("S1") => Some(CallKind::S1),
                Some("S1a") => Some(CallKind::S1a),
                Some("S2") => Some(CallKind::S2),
                Some("S3") => Some(CallKind::S3),
                Some("S6") => Some(CallKind::S6),
                Some(c) => return Err(format!("outage of {c}: S1, S1a, S2, S3 or S6")),
            },
        ),
        FaultDecl::LieVisible => FaultSetter::LieVisible,
        FaultDecl::MalformedS2 { shape } => FaultSetter::Malformed(match shape.as_str() {
            "not-json" => MalformedS2::NotJson,
            "empty" => MalformedS2::Empty,
            "truncated" => MalformedS2::Truncated,
            "trailing-bytes" => MalformedS2::TrailingBytes,
            "missing-item" => MalformedS2::MissingItem,
            "short-response" => MalformedS2::ShortResponse,
            "duplicate-item" => MalformedS2::DuplicateItem,
            "unknown-value" => MalformedS2::UnknownValue,
            "kind-mismatch" => MalformedS2::KindMismatch,
            "extra-field" => MalformedS2::ExtraField,
            "status-203" => MalformedS2::Not200(203),
            "kind-capitals" => MalformedS2::KindInCapitals,
            "duplicate-same-value" => MalformedS2::DuplicateSameValue,
            s => return Err(format!("malformed S2 shape {s} is not one the fake knows")),
        }),
        FaultDecl::AnnounceNoClose => FaultSetter::Announce(TruncateAnnounce::NoClose),
        FaultDecl::AnnounceHang => FaultSetter::Announce(TruncateAnnounce::HangAfterFirstPage),
        FaultDecl::AnnounceWrongCount { delta } => {
            FaultSetter::Announce(TruncateAnnounce::WrongCount(delta))
        }
        FaultDecl::Redirect { location } => FaultSetter::Redirect(Redirect { location }),
        FaultDecl::FeedPages { rows, fail_next } => FaultSetter::FeedPages(rows, fail_next),
        FaultDecl::S3FailsOnce { item, revision } => FaultSetter::S3FailsOnce(item, revision),
    })
}

pub(super) enum FaultSetter {
    Cold(Cold),
    Slow(Slow),
    Outage(Outage, Option<CallKind>),
    LieVisible,
    Malformed(MalformedS2),
    Announce(TruncateAnnounce),
    Redirect(Redirect),
    /// Rows per S1 page, and whether the next page past the head fails.
    FeedPages(usize, bool),
    /// S3's first answer for (item, revision) fails.
    S3FailsOnce(String, String),
}
