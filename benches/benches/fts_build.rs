//! Bench: building a `memoria::LexicalIndex` from every chunk of the imported corpus, in one transaction and one merge, as a rebuild does.
//!
//! The corpus is imported once (decode, chunk, seal) and its live chunks
//! opened; each iteration then builds a fresh in-memory FTS5 index from them,
//! as `Instance::wake` does when it rebuilds. Time per build is the number.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use memoria::IndexedChunk;
use memoria::LexicalIndex;
use memoria_benches::{Corpus, imported};

/// Samples: one build of the full corpus takes on the order of a second.
const SAMPLE_SIZE: usize = 10;
/// Time spent measuring, in seconds.
const MEASUREMENT_TIME_S: u64 = 20;
/// Warm-up, in seconds.
const WARM_UP_TIME_S: u64 = 2;

fn build(chunks: &[IndexedChunk]) -> LexicalIndex {
    let mut index = LexicalIndex::new().expect("an in-memory FTS5 table");
    for c in chunks {
        index
            .insert_new(c.chunk_id, &c.title, &c.trail, &c.body)
            .expect("insert");
    }
    index.optimize().expect("one transaction, one merge");
    index
}

fn bench(c: &mut Criterion) {
    let corpus = Corpus::load();
    let (_dir, instance) = imported(&corpus);
    let chunks = instance.store().live_chunks().expect("live chunks open");
    let text_bytes: usize = chunks
        .iter()
        .map(|c| c.title.len() + c.trail.len() + c.body.len())
        .sum();
    eprintln!(
        "fts_build: {} chunks, {text_bytes} bytes of title+trail+body per build",
        chunks.len()
    );
    drop(instance);

    let mut g = c.benchmark_group("fts_build");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLE_SIZE)
        .measurement_time(Duration::from_secs(MEASUREMENT_TIME_S))
        .warm_up_time(Duration::from_secs(WARM_UP_TIME_S));
    g.throughput(Throughput::Elements(chunks.len() as u64));
    g.bench_function("all_chunks", |b| {
        b.iter(|| black_box(build(black_box(&chunks))));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
