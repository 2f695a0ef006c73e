//! Bench: the line-based chunker (`memoria::chunk`) over the whole corpus text, in MB/s of decoded text.
//!
//! The chunker sees what the decoder hands it (HTML is already Markdown by
//! then), so decoding happens once, outside the measurement. One bench runs
//! the whole corpus; one per source separates Markdown from converted HTML.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use memoria::chunk;
use memoria_benches::{Corpus, DecodedFile};

/// Samples per bench: one sample chunks the whole corpus (tens of milliseconds).
const SAMPLE_SIZE: usize = 20;
/// Time spent measuring each bench, in seconds.
const MEASUREMENT_TIME_S: u64 = 8;
/// Warm-up per bench, in seconds.
const WARM_UP_TIME_S: u64 = 2;

fn chunk_all(files: &[&DecodedFile]) -> usize {
    files
        .iter()
        .map(|f| black_box(chunk(black_box(&f.body))).len())
        .sum()
}

fn bench(c: &mut Criterion) {
    let corpus = Corpus::load();
    let (decoded, refused) = corpus.decoded();
    let all: Vec<&DecodedFile> = decoded.iter().collect();
    let bytes: u64 = all.iter().map(|f| f.body.len() as u64).sum();
    eprintln!(
        "chunker: {} documents ({refused} refused by the decoder), {bytes} bytes of decoded text, {} chunks",
        all.len(),
        chunk_all(&all)
    );

    let mut g = c.benchmark_group("chunker");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(SAMPLE_SIZE)
        .measurement_time(Duration::from_secs(MEASUREMENT_TIME_S))
        .warm_up_time(Duration::from_secs(WARM_UP_TIME_S));
    g.throughput(Throughput::BytesDecimal(bytes));
    g.bench_function("whole_corpus", |b| b.iter(|| chunk_all(&all)));

    let mut sources: Vec<&str> = decoded.iter().map(|f| f.source.as_str()).collect();
    sources.dedup();
    if sources.len() > 1 {
        for source in sources {
            let part: Vec<&DecodedFile> =
                all.iter().copied().filter(|f| f.source == source).collect();
            let part_bytes: u64 = part.iter().map(|f| f.body.len() as u64).sum();
            g.throughput(Throughput::BytesDecimal(part_bytes));
            g.bench_function(source, |b| b.iter(|| chunk_all(&part)));
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
