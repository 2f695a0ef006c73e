//! memoria's token files broken and mended in a scenario, and the oracle's check that a token that cannot be read is sent to nobody (§6.2, §4.3, §6.5).
//!
//! A scenario's `token-file` events act on the file memoria reads its token
//! at one sibling from (`MEMORIA_SIBLING_TOKEN_<APP>_FILE`, read on every
//! call, as `serve` reads it): `unreadable` puts a directory in its place,
//! `missing` removes it, `garbage` writes text a bearer header cannot carry,
//! and `restored` writes back the token it held before it broke (unless
//! something wrote a token there since, the drain's phase 2: then it is
//! left as it stands). memoria is never told: its next call reads the file.
//!
//! What the spec says, as code ([`SAFETY_TOKEN_FILE`]). §6.2 makes the
//! token platform config: the drain delivers it, and the sender switches
//! only by a delivery (phase 2), so what memoria may send is what the
//! config holds now, never one it read before. §4.3 and §10's gate 21 state
//! the same rule for the other credential-shaped input memoria reads
//! ("admission is read, not held … an unreadable roster refuses rather
//! than admits": fail closed, no remembered copy standing in). And a
//! sibling memoria cannot ask is §6.5's UNKNOWN, withheld loudly, which
//! the oracle's page checks already judge. So: while a sibling's token file
//! cannot be read, no call of memoria's reaches that sibling at all, with
//! a remembered token or with the file's bytes
//! ([`TokenFileTruth::judge_calls`]). A call that read the file just before
//! it broke may still arrive within [`IN_FLIGHT_MS`]; it is not judged.
//! The spec has no sentence about an unreadable token file itself; this is
//! the reading the reference documents (`reference/src/net/token.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::checks::Check;
use super::oracle::app_of;
use crate::fake::trace::TraceEvent;
use crate::world::Memoria;

/// A call reached a sibling while memoria's token file for it could not be
/// read (§6.2, §4.3's fail closed).
pub const SAFETY_TOKEN_FILE: &str = "[safety:token-file]";

/// How long after a token file breaks a call of memoria's may still
/// arrive at the sibling having read the file before, in simulated ms: one
/// sibling deadline (`memoria::SIBLING_DEADLINE_MS`, §6.5), far above the
/// links' latency.
pub const IN_FLIGHT_MS: u64 = memoria::SIBLING_DEADLINE_MS;

/// What a garbage token file holds: spaces, which no bearer token carries.
const GARBAGE: &str = "not a bearer token\n";

/// Calls a failed check names, at most; the rest are counted.
const CALLS_SHOWN_MAX: usize = 6;

/// What a `token-file` event does to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TokenFileState {
    /// A directory in the file's place: it cannot be read.
    Unreadable,
    /// The file removed.
    Missing,
    /// The file holds text that is no bearer token (spaces in it).
    Garbage,
    /// The token it held before it broke, written back (left alone if a
    /// token was written there since).
    Restored,
}

impl TokenFileState {
    /// Its name in the timeline.
    pub fn name(self) -> &'static str {
        match self {
            TokenFileState::Unreadable => "made unreadable (a directory in its place)",
            TokenFileState::Missing => "removed",
            TokenFileState::Garbage => "overwritten with garbage",
            TokenFileState::Restored => "restored",
        }
    }
}

/// A token file's text as a bearer token, read as the spec's config: the
/// trimmed text, non-empty, visible ASCII only. The oracle's own reading,
/// not the reference's.
fn token_in(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let token = text.trim();
    (!token.is_empty() && token.bytes().all(|b| b.is_ascii_graphic())).then(|| token.to_owned())
}

/// Removes whatever stands at `path`: a file or a directory.
fn clear(path: &std::path::Path) -> Result<(), String> {
    let gone = if path.is_dir() {
        std::fs::remove_dir(path)
    } else if path.exists() {
        std::fs::remove_file(path)
    } else {
        Ok(())
    };
    gone.map_err(|e| format!("{}: {e}", path.display()))
}

/// What the oracle knows of memoria's token files beside them.
#[derive(Debug, Default)]
pub(super) struct TokenFileTruth {
    /// Per app whose file is broken now: the token it held before (if it
    /// held one), and since when (simulated ms).
    broken: BTreeMap<String, (Option<String>, u64)>,
    /// Every spell over: (app, from, to), simulated ms.
    spells: Vec<(String, u64, u64)>,
    /// Trace position judged so far.
    scanned: usize,
}

impl TokenFileTruth {
    /// Runs one `token-file` event on `app`'s file at `now_ms`.
    ///
    /// # Errors
    /// If the world uses no token file for `app`, or the file cannot be
    /// changed (the message names its path).
    pub(super) fn apply(
        &mut self,
        m: &Memoria,
        app: &str,
        state: TokenFileState,
        now_ms: u64,
    ) -> Result<(), String> {
        let path = m
            .token_file(app)
            .ok_or(format!("no token file for {app}"))?
            .to_path_buf();
        if state == TokenFileState::Restored {
            let Some((held, since)) = self.broken.remove(app) else {
                return Ok(());
            };
            self.spells.push((app.to_owned(), since, now_ms));
            if token_in(&path).is_none()
                && let Some(token) = held
            {
                clear(&path)?;
                m.write_token_file(app, &format!("{token}\n"))?;
            }
            return Ok(());
        }
        if !self.broken.contains_key(app) {
            self.broken
                .insert(app.to_owned(), (token_in(&path), now_ms));
        }
        clear(&path)?;
        match state {
            TokenFileState::Unreadable => {
                std::fs::create_dir(&path).map_err(|e| format!("{}: {e}", path.display()))
            }
            TokenFileState::Garbage => m.write_token_file(app, GARBAGE),
            TokenFileState::Missing | TokenFileState::Restored => Ok(()),
        }
    }

    /// The apps whose token file is broken now: memoria asks them nothing.
    pub(super) fn unasked(&self) -> std::collections::BTreeSet<String> {
        self.broken.keys().cloned().collect()
    }

    /// Ends every spell whose file holds a token again, written by someone
    /// else (the drain's phase 2), as of `now_ms`.
    fn mended(&mut self, m: &Memoria, now_ms: u64) {
        let mended: Vec<String> = self
            .broken
            .keys()
            .filter(|app| m.token_file(app).and_then(token_in).is_some())
            .cloned()
            .collect();
        for app in mended {
            if let Some((_, since)) = self.broken.remove(&app) {
                self.spells.push((app, since, now_ms));
            }
        }
    }

    /// Restores every file still broken (the faults stop before liveness
    /// is judged).
    ///
    /// # Errors
    /// As [`TokenFileTruth::apply`].
    pub(super) fn restore_all(&mut self, m: &Memoria, now_ms: u64) -> Result<(), String> {
        for app in self.broken.keys().cloned().collect::<Vec<_>>() {
            self.apply(m, &app, TokenFileState::Restored, now_ms)?;
        }
        Ok(())
    }

    /// Whether `app`'s file was broken at `at_ms`, past the grace of a
    /// call in flight.
    fn broken_at(&self, app: &str, at_ms: u64) -> bool {
        let within = |from: u64| at_ms >= from.saturating_add(IN_FLIGHT_MS);
        self.broken.get(app).is_some_and(|(_, from)| within(*from))
            || self
                .spells
                .iter()
                .any(|(a, from, to)| a == app && within(*from) && at_ms < *to)
    }

    /// Judges every sibling call since the last judgement, as of `now_ms`:
    /// none reaches a sibling whose token file memoria could not read
    /// then, except the oracle's own (`own(i)`, the rotation's probes).
    /// Returns only a failed check.
    pub(super) fn judge_calls(
        &mut self,
        m: &Memoria,
        all: &[TraceEvent],
        now_ms: u64,
        own: impl Fn(usize) -> bool,
    ) -> Vec<Check> {
        self.mended(m, now_ms);
        let from = self.scanned.min(all.len());
        self.scanned = all.len();
        let calls: Vec<String> = all
            .iter()
            .enumerate()
            .skip(from)
            .filter(|(i, e)| !own(*i) && self.broken_at(app_of(&e.callee), e.at_ms))
            .map(|(_, e)| format!("{} {:?} as {}", app_of(&e.callee), e.call, e.caller))
            .collect();
        if calls.is_empty() {
            return vec![];
        }
        let more = calls.len().saturating_sub(CALLS_SHOWN_MAX);
        let mut shown: Vec<String> = calls.into_iter().take(CALLS_SHOWN_MAX).collect();
        if more > 0 {
            shown.push(format!("{more} more"));
        }
        vec![Check {
            expected: format!(
                "{SAFETY_TOKEN_FILE} while memoria's token file for a sibling cannot be read, memoria calls it not at all: never with a token it read before, never with the file's bytes (§6.2: the token is platform config as delivered; §4.3 and gate 21: read, not held; the sibling's passages are UNKNOWN, §6.5)"
            ),
            actual: format!("calls {}", shown.join(", ")),
            ok: false,
        }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_reads_as_a_token_only_when_it_holds_one() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("sheets.token");
        assert_eq!(token_in(&path), None);
        for (text, token) in [("tok-a\n", Some("tok-a")), (GARBAGE, None), (" \n", None)] {
            std::fs::write(&path, text).expect("writes");
            assert_eq!(token_in(&path).as_deref(), token, "{text:?}");
        }
        clear(&path).expect("clears a file");
        std::fs::create_dir(&path).expect("a directory in its place");
        assert_eq!(token_in(&path), None);
        clear(&path).expect("clears a directory");
        assert!(!path.exists());
    }

    #[test]
    fn a_call_is_judged_only_past_the_grace_of_one_in_flight_and_before_the_mend() {
        let mut t = TokenFileTruth::default();
        t.spells.push(("docs".into(), 1_000, 5_000));
        let cases = [
            (1_000 + IN_FLIGHT_MS - 1, false),
            (1_000 + IN_FLIGHT_MS, true),
            (4_999, true),
            (5_000, false),
        ];
        for (at, broken) in cases {
            assert_eq!(t.broken_at("docs", at), broken, "at {at} ms");
            assert!(!t.broken_at("sheets", at), "another app at {at} ms");
        }
    }
}
