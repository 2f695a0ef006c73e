//! Wall time of simulated runs with three siblings: one wake and warm-up, and the same plus ten searches.
//!
//! The difference between the two, divided by ten, is the wall time of one
//! simulated search against three siblings (`benches/RESULTS.md`). Time is
//! read here, outside the simulation; nothing inside it reads the wall clock.

use criterion::{Criterion, criterion_group, criterion_main};
use memoria_simulator::{OWNERS, TOUR_QUERY, tour_world};

/// Searches per run in the second benchmark.
const SEARCHES_PER_RUN: usize = 10;

fn run(searches: usize) {
    let world = tour_world(7);
    world
        .run(move |mut m| async move {
            m.warmed_up().await?;
            for i in 0..searches {
                let page = m.search(OWNERS[i % 2], TOUR_QUERY).await;
                if page.response.status != 200 {
                    return Err(format!("status {}", page.response.status));
                }
            }
            Ok(())
        })
        .expect("simulated run");
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    g.bench_function("wake-and-warm-up", |b| b.iter(|| run(0)));
    g.bench_function("wake-warm-up-and-ten-searches", |b| {
        b.iter(|| run(SEARCHES_PER_RUN))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
