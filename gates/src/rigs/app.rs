//! The one in-process app: the reference memoria behind its router ([`TestApp`]), woken in the case's scratch directory under a DEK from the case's stream, on a [`HandClock`] rather than the wall clock.

use std::sync::Arc;

use memoria::testkit::TestApp;

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
