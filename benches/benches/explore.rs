//! The explorer's throughput: seeds per second of `memoria-harness explore`'s loop (draw a seed's run, replay it, judge it), two seeds an iteration.
//!
//! Criterion prints the throughput in seeds a second; times 60 is the
//! seeds per minute issue 26 asks 100 of, on one core of the debug build
//! CI runs (`benches/RESULTS.md`, "The explorer at 100 seeds a minute").
//! Seeds 0 and 1 are CI's first two: lone shape, no suite. Time is read
//! here, outside the simulation; nothing inside it reads the wall clock.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memoria_simulator::explore;

/// The seeds one iteration runs, from 0.
const SEEDS_PER_ITERATION: u64 = 2;

fn run() {
    for seed in 0..SEEDS_PER_ITERATION {
        let x = explore::generate(seed);
        let r = explore::explore(&x).expect("the seed replays");
        if let Some(f) = explore::failure(&x.scenario, &r) {
            panic!("seed {seed} failed {}: {}", f.invariant, f.detail);
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("explore");
    g.sample_size(10);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(30));
    g.throughput(Throughput::Elements(SEEDS_PER_ITERATION));
    g.bench_function("seeds-0-and-1", |b| b.iter(run));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
