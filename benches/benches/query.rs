//! Bench: latency of `Instance::search` (first page) for realistic queries over the imported corpus (ten; fifteen over the 90k corpus).
//!
//! Each query is its own bench, so criterion's median for it is that
//! query's p50. A search is the whole path a person's query takes: parse,
//! FTS5 BM25 over the in-memory index, opening each hit's sealed passage
//! and document, and building its highlighted snippet. Two more benches
//! run all the queries per iteration, once through `Instance::search` and
//! once through the index alone (the query's tiers, `LexicalIndex::ranked`,
//! the same page size), so the share of the time spent opening and
//! highlighting passages shows. With `MEMORIA_BENCH_CORPUS=debian-docs` the
//! corpus is the 90k one (`fixtures/corpus/fetch-debian-docs`) and the
//! queries are `QUERIES_90K`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memoria::PAGE_SIZE_RESULTS;
use memoria_benches::{BENCH_OWNER, Corpus, imported};

/// Samples per query.
const SAMPLE_SIZE: usize = 30;
/// Time spent measuring each query, in seconds.
const MEASUREMENT_TIME_S: u64 = 3;
/// Warm-up per query, in seconds.
const WARM_UP_TIME_S: u64 = 1;

fn bench(c: &mut Criterion) {
    let corpus = Corpus::load();
    let (_dir, instance) = imported(&corpus);
    let queries = corpus.queries();
    for q in queries {
        let page = instance.search(BENCH_OWNER, q, 1).expect("search");
        eprintln!(
            "query {q:?}: {} results on page 1, next page: {}",
            page.results.len(),
            page.has_next
        );
    }

    let mut g = c.benchmark_group("query");
    g.sample_size(SAMPLE_SIZE)
        .measurement_time(Duration::from_secs(MEASUREMENT_TIME_S))
        .warm_up_time(Duration::from_secs(WARM_UP_TIME_S));
    for q in queries {
        g.bench_with_input(BenchmarkId::from_parameter(q), q, |b, q| {
            b.iter(|| {
                black_box(
                    instance
                        .search(BENCH_OWNER, black_box(q), 1)
                        .expect("search"),
                )
            });
        });
    }
    g.finish();

    let plans: Vec<memoria::Plan> = queries
        .iter()
        .filter_map(|q| memoria::plan_query(q))
        .collect();
    let mut g = c.benchmark_group(format!("query_all_{}", queries.len()));
    g.sample_size(SAMPLE_SIZE)
        .measurement_time(Duration::from_secs(MEASUREMENT_TIME_S))
        .warm_up_time(Duration::from_secs(WARM_UP_TIME_S));
    g.throughput(Throughput::Elements(queries.len() as u64));
    g.bench_function("full_search", |b| {
        b.iter(|| {
            for q in queries {
                black_box(
                    instance
                        .search(BENCH_OWNER, black_box(q), 1)
                        .expect("search"),
                );
            }
        });
    });
    g.bench_function("index_only", |b| {
        b.iter(|| {
            for p in &plans {
                black_box(
                    instance
                        .index()
                        .ranked(black_box(p), PAGE_SIZE_RESULTS + 1, 0, &[])
                        .expect("index search"),
                );
            }
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
