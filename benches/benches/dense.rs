//! Bench: the dense half (issue 12, §7.2): the top-25 scan at 10k, 90k and 250k rows on each kernel this CPU has, reciprocal rank fusion of two 100-item lists, and the embedding pipeline's throughput.
//!
//! The vectors are seeded Gaussian unit vectors ([`memoria_benches::Gaussian`],
//! seed [`DENSE_SEED`]), not embeddings of text: a brute-force scan reads
//! every row whatever its values, so its cost does not depend on what the
//! vectors mean. The pipeline bench is truncate, renormalise and quantise
//! ([`memoria::quantise_embedding`]) on a full 4,096-value Gaussian
//! response; sealing the matrix under its purpose key joins it when the
//! vectors are sealed in the snapshot (issue 12, wired later).
//!
//! `benches/run-dense` times the same scan beside faiss and numpy on the
//! same vectors, in one process per tool; this file is criterion's view.

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use memoria::{
    DENSE_TOP_K, DenseKernel, EMBED_DIM_NATIVE, EMBED_DIM_STORED, fuse_reciprocal_rank,
    quantise_embedding,
};
use memoria_benches::{DENSE_SEED, Gaussian, dense_matrix, quantised};

/// Row counts scanned: §7.2's table's 10k, 90k (the ceiling, §7.3) and 250k.
const SCAN_ROWS: [usize; 3] = [10_000, 90_000, 250_000];
/// Distinct queries cycled through, so no one query's top-k stays cached.
const QUERIES: usize = 16;
/// Items in each list fused (issue 12: "fusion of two 100-item lists").
const FUSED_LIST_ITEMS: usize = 100;
/// Samples per bench.
const SAMPLE_SIZE: usize = 30;
/// Time spent measuring each bench, in seconds.
const MEASUREMENT_TIME_S: u64 = 5;
/// Warm-up per bench, in seconds.
const WARM_UP_TIME_S: u64 = 1;

fn scan(c: &mut Criterion) {
    let mut g = Gaussian::new(DENSE_SEED ^ 0x51);
    let queries: Vec<_> = (0..QUERIES)
        .map(|_| quantised(&g.unit_vector(EMBED_DIM_STORED)))
        .collect();
    let mut group = c.benchmark_group("dense_scan_top25");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLE_SIZE)
        .measurement_time(Duration::from_secs(MEASUREMENT_TIME_S))
        .warm_up_time(Duration::from_secs(WARM_UP_TIME_S));
    for rows in SCAN_ROWS {
        let matrix = dense_matrix(DENSE_SEED, rows);
        group.throughput(Throughput::Bytes((rows * EMBED_DIM_STORED) as u64));
        for kernel in DenseKernel::available() {
            // The scalar path at 250k only says what the 90k one says, slower.
            if kernel == DenseKernel::scalar() && rows > 90_000 {
                continue;
            }
            let mut i = 0;
            group.bench_with_input(BenchmarkId::new(kernel.name(), rows), &rows, |b, _| {
                b.iter(|| {
                    i = (i + 1) % QUERIES;
                    black_box(matrix.top_k_with(kernel, &queries[i], DENSE_TOP_K))
                });
            });
        }
    }
    group.finish();
}

fn fusion(c: &mut Criterion) {
    // Two 100-item lists over 150 chunks: half of each list is in the other.
    let lexical: Vec<i64> = (0..FUSED_LIST_ITEMS as i64).map(|i| i * 3 % 150).collect();
    let dense: Vec<i64> = (0..FUSED_LIST_ITEMS as i64)
        .map(|i| (i * 7 + 50) % 150)
        .collect();
    let mut group = c.benchmark_group("dense_fusion");
    group.sample_size(SAMPLE_SIZE);
    group.bench_function("rrf_100x100", |b| {
        b.iter(|| black_box(fuse_reciprocal_rank(black_box(&lexical), black_box(&dense))));
    });
    group.finish();
}

fn pipeline(c: &mut Criterion) {
    let mut g = Gaussian::new(DENSE_SEED ^ 0x77);
    let responses: Vec<Vec<f32>> = (0..QUERIES)
        .map(|_| g.unit_vector(EMBED_DIM_NATIVE))
        .collect();
    let mut group = c.benchmark_group("dense_pipeline");
    group.sample_size(SAMPLE_SIZE);
    group.throughput(Throughput::Elements(1));
    let mut i = 0;
    group.bench_function("truncate_renormalise_quantise", |b| {
        b.iter(|| {
            i = (i + 1) % QUERIES;
            black_box(quantise_embedding(black_box(&responses[i])).expect("quantises"))
        });
    });
    group.finish();
}

criterion_group!(benches, scan, fusion, pipeline);
criterion_main!(benches);
