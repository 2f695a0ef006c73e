//! Gate 10's race between the embedding queue and a deletion (§7.4, §7.2, issue 26): a vector that lands after its chunk's document was deleted is stored nowhere.
//!
//! memoria's drain (`app/queue.rs`) reads a batch of queued chunks, sends
//! their text to the provider with no lock held, and stores what comes
//! back. A document deleted while its chunk is at the provider must not get
//! the vector when it lands: not sealed at rest, where a restore or a wake
//! would find it, and not in the dense matrix, which a search scans. The
//! case makes the race as production makes it: the drain
//! ([`memoria::AppState::drain_embeddings`]) through the provider client,
//! against the stub provider over a simulated network, answering
//! [`PROVIDER_LATENCY_MS`] late (inside memoria's ingest deadline, so the
//! answer is used), and the document deleted through the instance while the
//! call is in flight. Each absence is asserted after the presence that makes
//! it meaningful: the chunk was queued, its text reached the provider, the
//! other chunk of the same call got its vector.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use memoria::{DB_FILE_NAME, DENSE_TOP_K, NewDocument, quantise_embedding};

use super::fail;
use crate::rigs::dense::{wake_ai_on, with_stub_provider};
use crate::rigs::support::dek;
use crate::{Ctx, Failure, ensure};

/// How late the stub provider answers the drain's call, in simulated ms:
/// inside memoria's ingest deadline (`memoria::EMBED_INGEST_DEADLINE_MS`,
/// 20 s), so the vectors are used, and long enough to delete meanwhile.
/// Our choice.
pub const PROVIDER_LATENCY_MS: u64 = 5_000;
const _: () = assert!(PROVIDER_LATENCY_MS < memoria::EMBED_INGEST_DEADLINE_MS);

/// How often the case looks for the drain's call at the stub, in simulated ms.
const POLL_MS: u64 = 10;

/// One passage naming `word`.
fn passage(word: &str, name: &str) -> NewDocument {
    NewDocument {
        source_key: format!("upload:{name}.txt"),
        title: format!("Notes {name}"),
        path: format!("{name}.txt"),
        body: format!("The {word} entry records the quarterly review."),
        date: None,
    }
}

/// `10/a-vector-landing-after-its-deletion-is-stored-nowhere`.
pub(super) fn a_vector_landing_after_its_deletion_is_stored_nowhere(
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let doomed_word = ctx.canary();
    let kept_word = ctx.canary();
    let dir = ctx.dir("data");
    let sealer = memoria::Sealer::new(&dek(ctx.rng()));
    let mut m = wake_ai_on(&dir, sealer.clone())?;
    let mut one_chunk = |word: &str, name: &str| -> Result<(String, i64), Failure> {
        let outcome = m
            .ingest(&passage(word, name))
            .map_err(fail("a one-passage document ingests"))?;
        ensure(
            outcome.added.len() == 1,
            "each document is one passage",
            format!("{} passages", outcome.added.len()),
        )?;
        Ok((outcome.id, outcome.added[0].chunk_id))
    };
    let (doomed, doomed_chunk) = one_chunk(&doomed_word, "doomed")?;
    let (_, kept_chunk) = one_chunk(&kept_word, "kept")?;
    // Presence: both chunks await their vectors, and the text each is
    // embedded from (the doomed one's gives the query below).
    let queued = m
        .embedding_batch(0)
        .map_err(fail("the embedding queue reads"))?;
    let ids: Vec<i64> = queued.iter().map(|(id, _)| *id).collect();
    ensure(
        ids == [doomed_chunk, kept_chunk],
        "both chunks are queued for a vector (presence)",
        format!("{ids:?}"),
    )?;
    let doomed_text = queued[0].1.clone();
    m.write_snapshot()
        .map_err(fail("the snapshot before the drain is written"))?;

    let stub = memoria_simulator::StubProvider::new();
    stub.set_slow(Some(PROVIDER_LATENCY_MS));
    let at_stub = stub.clone();
    with_stub_provider(ctx.seed(), &stub, m, move |app| async move {
        let drained = Rc::new(Cell::new(false));
        let done = drained.clone();
        let drain = async {
            let report = app.state().drain_embeddings().await;
            done.set(true);
            report
        };
        let delete = async {
            while at_stub.calls() == 0 && !drained.get() {
                tokio::time::sleep(Duration::from_millis(POLL_MS)).await;
            }
            let sent = at_stub
                .requests()
                .first()
                .map(|r| r.inputs.clone())
                .unwrap_or_default();
            ensure(
                !drained.get() && sent.len() == 2 && sent.iter().any(|t| t.contains(&doomed_word)),
                "the drain's one call, both chunks' text in it, is at the provider (presence)",
                format!("finished {}, {} inputs", drained.get(), sent.len()),
            )?;
            let deletion = app
                .state()
                .instance()
                .lock()
                .expect("the instance's lock")
                .delete(&doomed)
                .map_err(fail("the doomed document is deleted"))?;
            ensure(
                deletion.removed == [doomed_chunk] && deletion.complete && !drained.get(),
                "the document is deleted, complete, while its chunk is at the provider",
                format!("{deletion:?}, drain finished {}", drained.get()),
            )
        };
        let (report, deleted) = tokio::join!(drain, delete);
        deleted?;
        ensure(
            report.batches == 1
                && report.stored == 1
                && report.awaiting == 0
                && report.failure.is_none(),
            "the late answer is used: one call, the kept chunk's vector stored, the deleted one's not, nothing left queued",
            format!("{report:?}"),
        )?;
        let shared = app.state().instance();
        let live = shared.lock().expect("the instance's lock");
        ensure(
            live.dense().contains(kept_chunk),
            "the live matrix holds the kept chunk's vector (presence)",
            "it does not",
        )?;
        ensure(
            !live.dense().contains(doomed_chunk) && live.dense().len() == 1,
            "the live matrix holds no vector for the deleted chunk",
            format!(
                "{} rows, the deleted among them: {}",
                live.dense().len(),
                live.dense().contains(doomed_chunk)
            ),
        )
    })?;

    // At rest: one sealed vector row, the kept chunk's.
    let rows: Vec<i64> = rusqlite::Connection::open(dir.join(DB_FILE_NAME))
        .and_then(|c| {
            c.prepare("SELECT chunk_id FROM chunk_vectors ORDER BY chunk_id")
                .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
        })
        .map_err(|e| Failure::new("the vector rows read", e.to_string()))?;
    ensure(
        rows == [kept_chunk],
        "the database holds the kept chunk's sealed vector and none for the deleted chunk",
        format!("{rows:?}"),
    )?;
    // A wake: what the dense half can return for the deleted passage's own
    // text is the kept passage alone.
    let woken = wake_ai_on(&dir, sealer)?;
    let query = quantise_embedding(&memoria_simulator::stub_embed_text(&doomed_text))
        .map_err(|e| Failure::new("the deleted passage's vector quantises", e.to_string()))?;
    let hits: Vec<i64> = woken
        .dense()
        .top_k(&query, DENSE_TOP_K)
        .iter()
        .map(|h| h.chunk_id)
        .collect();
    ensure(
        hits == [kept_chunk],
        "woken, the dense scan for the deleted passage's own vector returns the kept chunk alone",
        format!("{hits:?}"),
    )
}
