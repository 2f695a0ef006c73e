//! `memoria-peers`: times SQLite FTS5 (contentless; AND and OR) and tantivy (three boosted fields; OR and AND) over the exact chunks memoria produced, for the 90k bench's ratios (issue 11, §7.2).
//!
//! ```sh
//! memoria-peers --chunks chunks.jsonl --queries queries.txt --repeats 20 --limit 21
//! ```
//!
//! `chunks.jsonl` is what `bench-90k` exports from its throwaway store: one
//! JSON object per line, `{"id", "title", "trail", "body"}`. Each engine
//! indexes every chunk in memory (FTS5 in one transaction, with memoria's
//! own schema: `title, trail, body`, `content=''`, `porter unicode61`;
//! tantivy with the `en_stem` tokenizer, one 200 MB writer), then runs every
//! query `--repeats` times after one warm-up, asking for the top `--limit`
//! ids, best first (BM25; column weights 4, 2, 1 in both, as memoria's
//! `BM25_WEIGHTS`). A query's words are split as memoria splits them (runs
//! of letters and digits), so no engine sees syntax.
//!
//! It prints one JSON object on stdout: per engine and mode, the build
//! seconds (wall and CPU), p50 and p90 of the per-query time in
//! milliseconds over every sample (CPU time of the process, as `bench-90k`
//! measures memoria, and wall time), and the mean number of hits returned.

use std::io::BufRead as _;
use std::time::Instant;

use anyhow::Context as _;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::{FAST, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::{Index, IndexWriter, TantivyDocument, doc};

/// BM25 column weights: title, trail, body (memoria's `BM25_WEIGHTS`).
const WEIGHTS: (f32, f32, f32) = (4.0, 2.0, 1.0);
/// tantivy's writer memory budget, in bytes: enough to index 90,000 chunks in one segment run.
const TANTIVY_WRITER_BYTES: usize = 200_000_000;

#[derive(serde::Deserialize)]
struct ChunkRow {
    id: i64,
    title: String,
    trail: String,
    body: String,
}

struct Args {
    chunks: String,
    queries: String,
    repeats: usize,
    limit: usize,
}

fn args() -> anyhow::Result<Args> {
    let mut a = Args {
        chunks: String::new(),
        queries: String::new(),
        repeats: 20,
        limit: 21,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().with_context(|| format!("{k} needs a value"))?;
        match k.as_str() {
            "--chunks" => a.chunks = v,
            "--queries" => a.queries = v,
            "--repeats" => a.repeats = v.parse()?,
            "--limit" => a.limit = v.parse()?,
            _ => anyhow::bail!("unknown argument {k}"),
        }
    }
    anyhow::ensure!(
        !a.chunks.is_empty() && !a.queries.is_empty(),
        "usage: memoria-peers --chunks FILE --queries FILE [--repeats N] [--limit N]"
    );
    Ok(a)
}

/// Words as memoria's query parser splits them: runs of alphanumerics, lowercased.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// p50 and p90 of `samples` (milliseconds), nearest rank.
fn percentiles(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |p: usize| {
        let rank = (p * samples.len()).div_ceil(100).max(1);
        samples[rank - 1]
    };
    (at(50), at(90))
}

/// CPU seconds of this process (all threads).
fn cpu_s() -> f64 {
    cpu_time::ProcessTime::now().as_duration().as_secs_f64()
}

/// Times `run` over every query, `repeats` times after one warm-up: p50 and
/// p90 of CPU and wall time (ms), and the mean hits.
fn time_queries(
    queries: &[String],
    repeats: usize,
    mut run: impl FnMut(&str) -> anyhow::Result<usize>,
) -> anyhow::Result<serde_json::Value> {
    let mut cpu = Vec::with_capacity(queries.len() * repeats);
    let mut wall = Vec::with_capacity(queries.len() * repeats);
    let mut hits = 0usize;
    for q in queries {
        run(q)?;
        for _ in 0..repeats {
            let c = cpu_s();
            let t = Instant::now();
            let n = run(q)?;
            wall.push(t.elapsed().as_secs_f64() * 1e3);
            cpu.push((cpu_s() - c) * 1e3);
            hits += n;
        }
    }
    let n = cpu.len();
    let (cpu_p50, cpu_p90) = percentiles(&mut cpu);
    let (wall_p50, wall_p90) = percentiles(&mut wall);
    Ok(serde_json::json!({
        "cpu_p50_ms": cpu_p50, "cpu_p90_ms": cpu_p90,
        "wall_p50_ms": wall_p50, "wall_p90_ms": wall_p90,
        "mean_hits": hits as f64 / n.max(1) as f64,
        "samples": n,
    }))
}

fn fts5(chunks: &[ChunkRow], a: &Args, queries: &[String]) -> anyhow::Result<serde_json::Value> {
    let conn = rusqlite::Connection::open_in_memory()?;
    conn.execute_batch(
        "PRAGMA temp_store = MEMORY;
         CREATE VIRTUAL TABLE fts USING fts5(title, trail, body, content='', tokenize='porter unicode61');",
    )?;
    let (t, c) = (Instant::now(), cpu_s());
    conn.execute_batch("BEGIN")?;
    {
        let mut ins =
            conn.prepare("INSERT INTO fts(rowid, title, trail, body) VALUES (?1, ?2, ?3, ?4)")?;
        for c in chunks {
            ins.execute(rusqlite::params![c.id, c.title, c.trail, c.body])?;
        }
    }
    conn.execute_batch("COMMIT")?;
    let build_s = t.elapsed().as_secs_f64();
    let build_cpu_s = cpu_s() - c;
    let image_bytes = conn.serialize(rusqlite::MAIN_DB)?.len();
    let (wt, wr, wb) = WEIGHTS;
    let sql = format!(
        "SELECT rowid, bm25(fts, {wt:.1}, {wr:.1}, {wb:.1}) AS s FROM fts WHERE fts MATCH ?1 ORDER BY s LIMIT ?2"
    );
    let mut out = serde_json::json!({ "build_s": build_s, "build_cpu_s": build_cpu_s, "image_bytes": image_bytes });
    for (mode, join) in [("and", " AND "), ("or", " OR ")] {
        let r = time_queries(queries, a.repeats, |q| {
            let expr = words(q)
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(join);
            if expr.is_empty() {
                return Ok(0);
            }
            let mut stmt = conn.prepare_cached(&sql)?;
            let ids = stmt
                .query_map(rusqlite::params![expr, a.limit as i64], |r| {
                    r.get::<_, i64>(0)
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(ids.len())
        })?;
        out[mode] = r;
    }
    Ok(out)
}

fn tantivy(chunks: &[ChunkRow], a: &Args, queries: &[String]) -> anyhow::Result<serde_json::Value> {
    let mut sb = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("en_stem")
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let id = sb.add_u64_field("id", FAST);
    let title = sb.add_text_field("title", text.clone());
    let trail = sb.add_text_field("trail", text.clone());
    let body = sb.add_text_field("body", text);
    let index = Index::create_in_ram(sb.build());
    let (t, c) = (Instant::now(), cpu_s());
    let mut writer: IndexWriter = index.writer(TANTIVY_WRITER_BYTES)?;
    for c in chunks {
        writer.add_document(doc!(
            id => c.id as u64,
            title => c.title.as_str(),
            trail => c.trail.as_str(),
            body => c.body.as_str(),
        ))?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    let build_s = t.elapsed().as_secs_f64();
    let build_cpu_s = cpu_s() - c;
    let reader = index.reader()?;
    let searcher = reader.searcher();
    let mut out = serde_json::json!({ "build_s": build_s, "build_cpu_s": build_cpu_s, "segments": searcher.segment_readers().len() });
    for (mode, conjunction) in [("or", false), ("and", true)] {
        let mut qp = QueryParser::for_index(&index, vec![title, trail, body]);
        qp.set_field_boost(title, WEIGHTS.0);
        qp.set_field_boost(trail, WEIGHTS.1);
        qp.set_field_boost(body, WEIGHTS.2);
        if conjunction {
            qp.set_conjunction_by_default();
        }
        let r = time_queries(queries, a.repeats, |q| {
            let text = words(q).join(" ");
            if text.is_empty() {
                return Ok(0);
            }
            let (query, _) = qp.parse_query_lenient(&text);
            let top = searcher.search(&query, &TopDocs::with_limit(a.limit))?;
            let mut ids = Vec::with_capacity(top.len());
            for (_, addr) in top {
                let col = searcher
                    .segment_reader(addr.segment_ord)
                    .fast_fields()
                    .u64("id")?;
                ids.push(col.first(addr.doc_id));
            }
            Ok(ids.len())
        })?;
        out[mode] = r;
    }
    let _: Option<TantivyDocument> = None;
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let a = args()?;
    let file = std::fs::File::open(&a.chunks).with_context(|| format!("opening {}", a.chunks))?;
    let mut chunks = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        chunks.push(serde_json::from_str::<ChunkRow>(&line?)?);
    }
    let queries: Vec<String> = std::fs::read_to_string(&a.queries)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    eprintln!(
        "memoria-peers: {} chunks, {} queries × {} repeats",
        chunks.len(),
        queries.len(),
        a.repeats
    );
    let out = serde_json::json!({
        "chunks": chunks.len(),
        "fts5": fts5(&chunks, &a, &queries)?,
        "tantivy": tantivy(&chunks, &a, &queries)?,
    });
    println!("{out}");
    Ok(())
}
