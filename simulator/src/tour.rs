//! A representative simulated run over three siblings: the determinism self-check and the timing benchmark both drive it.
//!
//! Sheets, Docs and Calendar each hold real text plus one tagged item;
//! the seed also chooses each sibling's added latency and which one goes
//! cold. memoria wakes and warms up; Ana searches; Sheets is revised,
//! partially restored and made to answer a malformed S2; Docs answers
//! slowly; both people search again. [`tour`] returns the run's transcript:
//! every seed-derived setting, then every S-call the siblings received.

use std::time::Duration;

use rand::{Rng as _, SeedableRng as _};

use crate::corpus;
use crate::fake::faults::{Cold, MalformedS2, Slow};
use crate::fake::model::Rung;
use crate::fake::trace::CallKind;
use crate::world::{OWNERS, SiblingSpec, SimFailure, World};

/// The three apps of a tour.
pub const TOUR_APPS: [&str; 3] = ["sheets", "docs", "calendar"];
/// Corpus items stocked per sibling.
pub const TOUR_ITEMS_PER_SIBLING: usize = 12;
/// The query every tour search sends: a word the tagged items all hold.
pub const TOUR_QUERY: &str = "quarterly";
/// The most S2 latency the seed adds to a sibling, in ms.
pub const TOUR_LATENCY_MS_MAX: u64 = 400;

/// Builds the tour's world for `seed`, recording every choice in its settings.
pub fn tour_world(seed: u64) -> World {
    let mut world = World::new(
        seed,
        TOUR_APPS.iter().map(|a| SiblingSpec::own(a)).collect(),
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x746f_7572);
    let items = corpus::load_items(TOUR_ITEMS_PER_SIBLING * TOUR_APPS.len());
    world.set("corpus", format!("{:?}", items.source));
    let cold = rng.gen_range(0..TOUR_APPS.len());
    for (n, app) in TOUR_APPS.iter().enumerate() {
        let latency = rng.gen_range(0..=TOUR_LATENCY_MS_MAX);
        world.set(&format!("{app}.s2_latency_ms"), latency);
        let fake = world.fake(app).clone();
        fake.faults().set_slow(Some(Slow {
            latency_ms: latency,
            only: Some(CallKind::S2),
        }));
        if n == cold {
            world.set(&format!("{app}.cold_wake_ms"), 1_500);
            fake.faults().set_cold(Some(Cold {
                idle_ms: 60_000,
                wake_ms: 1_500,
            }));
        }
        fake.model().with(|m| {
            for (i, (title, body)) in items
                .items
                .iter()
                .skip(n * TOUR_ITEMS_PER_SIBLING)
                .take(TOUR_ITEMS_PER_SIBLING)
                .enumerate()
            {
                m.add_item(&format!("{app}-c{i}"), Rung::Team, title, body)
                    .expect("corpus item");
            }
            m.add_item(
                &format!("{app}-q"),
                Rung::Team,
                "Quarterly",
                &format!("# Quarterly {app}\n\nThe quarterly numbers for {app} are in.\n"),
            )
            .expect("tagged item");
            m.revise(
                &format!("{app}-q"),
                "Quarterly",
                &format!("# Quarterly {app}\n\nThe quarterly numbers for {app} are final.\n"),
            )
            .expect("revision");
        });
    }
    world
}

/// Runs the tour for `seed` and returns its transcript.
///
/// # Errors
/// A [`SimFailure`] carrying the seed if the run fails.
pub fn tour(seed: u64) -> Result<String, SimFailure> {
    let world = tour_world(seed);
    let sheets = world.fake("sheets").clone();
    let docs = world.fake("docs").clone();
    world.run(move |mut m| async move {
        m.warmed_up().await?;
        let first = m.search(OWNERS[0], TOUR_QUERY).await;
        if first.response.status != 200 {
            return Err(format!("search answered {}", first.response.status));
        }
        let r1 = sheets
            .model()
            .with(|mm| mm.item("sheets-q").map(|i| i.log[0].revision.clone()))
            .unwrap_or_default();
        sheets
            .model()
            .with(|mm| mm.restore_item_to("sheets-q", &r1))
            .map_err(|e| format!("{e:?}"))?;
        docs.faults().set_slow(Some(Slow {
            latency_ms: 2_000,
            only: Some(CallKind::S2),
        }));
        m.search(OWNERS[1], TOUR_QUERY).await;
        sheets
            .faults()
            .set_malformed_s2(Some(MalformedS2::DuplicateItem));
        m.search(OWNERS[0], TOUR_QUERY).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        m.question_pulls(OWNERS[0]).await;
        m.search(OWNERS[1], TOUR_QUERY).await;
        Ok(())
    })?;
    Ok(world.transcript())
}
