//! Bench: the sealed index snapshot: serialise + seal + write, and read + open + deserialise, over the imported corpus.
//!
//! `seal_write` is the real write path (`LexicalIndex::serialize`, then
//! `snapshot::write`: seal, temporary file, fsync, rename, fsync the
//! directory); `load` is the real wake path (`snapshot::read`: read and
//! open, then `LexicalIndex::deserialize`). `serialize`, `seal` and `open`
//! isolate the SQLite image copy and the AES-GCM steps in memory. Criterion reports no sizes, so the sealed size is
//! printed once on stderr.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use memoria::LexicalIndex;
use memoria::snapshot::{self, SnapshotHeader};
use memoria_benches::{Corpus, imported};

/// Samples per bench.
const SAMPLE_SIZE: usize = 20;
/// Time spent measuring each bench, in seconds.
const MEASUREMENT_TIME_S: u64 = 6;
/// Warm-up per bench, in seconds.
const WARM_UP_TIME_S: u64 = 1;
/// The generation the bench writes and reads (overwritten each iteration).
const BENCH_GENERATION: i64 = 1;

fn bench(c: &mut Criterion) {
    let corpus = Corpus::load();
    let (_dir, instance) = imported(&corpus);
    let index = instance.index();
    let sealer = instance.store().sealer();
    let header = SnapshotHeader {
        generation: BENCH_GENERATION,
        store_seq: instance.store().store_seq().expect("store_seq"),
        tombstone_seq: 0,
    };
    let image = index.serialize().expect("serialise");
    let sealed = snapshot::seal(sealer, header, &image);
    let out = tempfile::tempdir().expect("a temporary directory");
    let written = snapshot::write(out.path(), sealer, header, &image).expect("write");
    eprintln!(
        "snapshot: {} chunks; index image {} bytes; sealed blob {} bytes ({written} on disk)",
        index.len().expect("len"),
        image.len(),
        sealed.len()
    );

    let mut g = c.benchmark_group("snapshot");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLE_SIZE)
        .measurement_time(Duration::from_secs(MEASUREMENT_TIME_S))
        .warm_up_time(Duration::from_secs(WARM_UP_TIME_S));
    g.throughput(Throughput::BytesDecimal(sealed.len() as u64));
    g.bench_function("seal_write", |b| {
        b.iter(|| {
            let image = index.serialize().expect("serialise");
            black_box(snapshot::write(out.path(), sealer, header, &image).expect("write"))
        });
    });
    g.bench_function("load", |b| {
        b.iter(|| {
            let loaded = snapshot::read(out.path(), sealer, BENCH_GENERATION)
                .expect("read")
                .expect("present");
            black_box(LexicalIndex::deserialize(&loaded.image).expect("deserialise"))
        });
    });
    g.bench_function("serialize", |b| {
        b.iter(|| black_box(index.serialize().expect("serialise")));
    });
    g.bench_function("seal", |b| {
        b.iter(|| black_box(snapshot::seal(sealer, header, black_box(&image))));
    });
    g.bench_function("open", |b| {
        b.iter(|| {
            black_box(snapshot::open(sealer, BENCH_GENERATION, black_box(&sealed)).expect("open"))
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
