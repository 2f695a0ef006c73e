//! A simulated SIGKILL of one memoria at a named crash point: aimed by the scenario, landed in memoria's own code, ended and woken again by the world (issue 26).
//!
//! A scenario aims a point ([`Memoria::aim_crash`](super::Memoria::aim_crash))
//! at its memoria's data directory ([`memoria::testkit::aim_crash`]); when
//! memoria's code reaches that point for a file there, the point panics,
//! and that instance never returns from any store work again (its callers
//! answer, write and call nothing more; `reference/src/crashpoint.rs`
//! says what the unwinding does that a kill does not, and why it leaves
//! the same bytes on disk). At the end of that turmoil step the world
//! ([`Crashable::end_if_landed`]) bounces memoria's host, which drops
//! every task the host runs, as the kernel ends a killed process, and
//! starts its software again: at its first poll, in the next step and
//! before the browser's (turmoil ticks hosts in the order they were
//! added, the browser last), it wakes a new memoria from the same data
//! directory, as the supervisor of a real process would start it again,
//! on the simulation's clock.
//!
//! Between the landing and the end of its step, the host's other tasks
//! may still run, as a real process's other threads do between a thread
//! reaching the point and the kill: none of them reaches the dead
//! instance.

use std::sync::{Arc, Mutex, PoisonError};

use memoria::AppState;
use memoria::testkit::AimedCrash;

/// What a scenario and the world share of one memoria's crashes.
#[derive(Debug, Clone, Default)]
pub struct CrashWatch(Arc<Mutex<CrashState>>);

#[derive(Debug, Default)]
struct CrashState {
    /// The crash aimed now, landed or not.
    aim: Option<AimedCrash>,
    /// Crashes landed so far, each followed by a wake.
    landings: u64,
}

impl CrashWatch {
    fn state(&self) -> std::sync::MutexGuard<'_, CrashState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Aims `point` at the memoria whose data directory is `dir`,
    /// replacing an aim not yet landed.
    ///
    /// # Errors
    /// If `point` is no crash point the reference defines.
    pub(super) fn aim(&self, dir: &std::path::Path, point: &str) -> Result<(), String> {
        let mut s = self.state();
        if let Some(before) = s.aim.as_ref()
            && before.landed()
        {
            return Err(format!(
                "{} landed and memoria is not woken yet",
                before.point()
            ));
        }
        let aim = memoria::testkit::aim_crash(dir, point)
            .ok_or_else(|| format!("no crash point {point}"))?;
        if let Some(before) = s.aim.replace(aim) {
            before.disarm();
        }
        Ok(())
    }

    /// Takes an aim that has not landed away; returns its point, if one
    /// was. One that landed stays for the world to end and wake.
    pub(super) fn disarm(&self) -> Option<&'static str> {
        let mut s = self.state();
        if s.aim.as_ref().is_some_and(AimedCrash::landed) {
            return None;
        }
        let aim = s.aim.take()?;
        aim.disarm();
        Some(aim.point())
    }

    /// True while a crash has landed and the world has not yet woken the
    /// next memoria (until the end of the step it landed in).
    pub(super) fn landing_pending(&self) -> bool {
        self.state().aim.as_ref().is_some_and(AimedCrash::landed)
    }

    /// Crashes landed so far.
    pub(super) fn landings(&self) -> u64 {
        self.state().landings
    }

    /// The aim, once it has landed, counted and taken.
    fn take_landed(&self) -> Option<AimedCrash> {
        let mut s = self.state();
        if !s.aim.as_ref().is_some_and(AimedCrash::landed) {
            return None;
        }
        s.landings += 1;
        s.aim.take()
    }
}

/// One memoria's host as the world ends it after a crash.
pub(super) struct Crashable {
    /// memoria's host in the simulation.
    pub(super) host: String,
    /// The state its software serves; empty, it wakes a new one.
    pub(super) slot: Arc<Mutex<Option<AppState>>>,
    /// The crashes a scenario aims at it.
    pub(super) watch: CrashWatch,
}

impl Crashable {
    /// Between two steps: if a crash landed on this memoria, drops every
    /// task of its host (turmoil's bounce), so its software starts again
    /// with no state and wakes a new memoria from the data directory.
    pub(super) fn end_if_landed(&self, sim: &mut turmoil::Sim<'_>) {
        let Some(aim) = self.watch.take_landed() else {
            return;
        };
        tracing::info!(host = %self.host, point = aim.point(), "a simulated crash landed; memoria is killed");
        *self.slot.lock().unwrap_or_else(PoisonError::into_inner) = None;
        sim.bounce(self.host.as_str());
        // The dead instance went with its host: the next one is alive.
        aim.disarm();
    }
}
