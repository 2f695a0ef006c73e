//! The one in-process app: the reference memoria behind its router ([`TestApp`]), woken in the case's scratch directory under a DEK from the case's stream, on a [`HandClock`] rather than the wall clock.

use std::sync::Arc;

use memoria::testkit::TestApp;
use memoria::{Admission, EgressMode, Instance, InstanceConfig, Sealer};

use super::clock::HandClock;
use super::support::dek;
use crate::{Ctx, Failure};

/// The instant an in-process app's clock reads, Unix seconds (2026-09-21 14:13:20 UTC).
pub const APP_T0_S: i64 = 1_790_000_000;

/// memoria in process for `owners` (comma-separated addresses, §4.3), its
/// data under the case's `data` scratch directory, its DEK drawn from the
/// case's stream, its clock a [`HandClock`] at [`APP_T0_S`].
///
/// # Errors
/// A [`Failure`] if memoria does not wake.
pub fn app(ctx: &mut Ctx, owners: &str) -> Result<TestApp, Failure> {
    TestApp::with_clock(
        &ctx.dir("data"),
        &dek(ctx.rng()),
        owners,
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(|e| Failure::new("memoria wakes in process", e.to_string()))
}

/// As [`app`], in egress mode `egress` (§8.3: AI on or off), its data under
/// the scratch directory `dir` (so one case can wake one app per mode).
/// Only the mode differs: an AI-on app here builds no provider client and
/// sends nothing; what it changes is what every page says.
///
/// # Errors
/// A [`Failure`] if memoria does not wake.
pub fn app_in_mode(
    ctx: &mut Ctx,
    owners: &str,
    egress: EgressMode,
    dir: &str,
) -> Result<TestApp, Failure> {
    let wake = |e: memoria::Error| Failure::new("memoria wakes in process", e.to_string());
    let instance = Instance::wake(
        InstanceConfig {
            data_dir: ctx.dir(dir),
            admission: Admission::parse(owners).map_err(wake)?,
            egress,
        },
        Sealer::new(&dek(ctx.rng())),
        Arc::new(HandClock::at(APP_T0_S)),
    )
    .map_err(wake)?;
    Ok(TestApp::from_instance(instance))
}
