//! Gate 24 (§10, §6.5): on wake, every configured sibling gets an S1 poll unprompted, with no query issued.
//!
//! memoria comes up in the simulator exactly as `memoria serve` does
//! ([`memoria::AppState::wake_siblings`]); the scenario then issues no
//! request at all, waits [`WARM_UP_WITHIN_MS`] of simulated time, and reads
//! the trace. The siblings are cold, so each wake costs real (simulated)
//! time, which is what the warm-up exists to spend while nobody waits.

use std::time::Duration;

use memoria_simulator::{CallKind, Cold, MEMORIA_CONSUMER, SiblingSpec, World};

use crate::rigs::sim::{check, run_world, stock};
use crate::{Case, Ctx, Failure, Gate};

/// Every sibling must have received memoria's S1 poll within this long of
/// memoria coming up, in simulated ms: "a stated few seconds" (§10 gate 24).
pub const WARM_UP_WITHIN_MS: u64 = 3_000;
/// How long each cold sibling takes to wake, in ms.
pub const COLD_WAKE_MS: u64 = 1_500;

/// Gate 24.
pub static GATE: Gate = Gate {
    id: "24",
    title: "Wake warm-up",
    gates_md: &[
        "Wake warm-up: every configured sibling gets an S1 poll unprompted, no query issued",
    ],
    sections: &["§10", "§6.5"],
    requirement: "Every configured sibling receives an S1 poll from memoria within a stated few seconds of memoria coming up, with no query issued.",
    cases: &[Case {
        id: "24/every-sibling-polled-unprompted",
        desc: "Three cold siblings; memoria wakes and nobody sends it a request; within 3 s of simulated time each sibling has received memoria's S1 poll, and no S2 call was made.",
        run: every_sibling_polled,
    }],
};

const APPS: [&str; 3] = ["sheets", "docs", "calendar"];

fn every_sibling_polled(ctx: &mut Ctx) -> Result<(), Failure> {
    let world = World::new(
        ctx.seed(),
        APPS.iter().map(|a| SiblingSpec::own(a)).collect(),
    );
    for app in APPS {
        stock(&world, app, 3);
        world.fake(app).faults().set_cold(Some(Cold {
            idle_ms: 0,
            wake_ms: COLD_WAKE_MS,
        }));
    }
    let trace = world.trace().clone();
    let hosts: Vec<String> = APPS.iter().map(|a| SiblingSpec::own(a).host()).collect();
    run_world(&world, move |_m| async move {
        let up = turmoil::sim_elapsed().unwrap_or_default();
        tokio::time::sleep(Duration::from_millis(WARM_UP_WITHIN_MS)).await;
        let deadline_ms = up.as_millis() as u64 + WARM_UP_WITHIN_MS;
        let events = trace.events();
        for host in &hosts {
            let polled = events.iter().any(|e| {
                &e.callee == host
                    && e.call == CallKind::S1
                    && e.caller == MEMORIA_CONSUMER
                    && e.at_ms <= deadline_ms
            });
            check(
                polled,
                format!("{host} received memoria's S1 poll within {WARM_UP_WITHIN_MS} ms"),
                "it did not",
            )?;
        }
        let s2 = events.iter().filter(|e| e.call == CallKind::S2).count();
        check(
            s2 == 0,
            "no S2 call: no query was issued",
            format!("{s2} S2 calls"),
        )
    })
}
