//! One instance with AI on, its chunks embedded by the stub provider's embedder, for the dense half's gates (2, 28; §3.1, §7.2).
//!
//! [`seeded`] embeds as `serve` does: the drain
//! ([`memoria::AppState::drain_embeddings`]) through the provider client,
//! against the stub provider over a simulated network
//! ([`with_stub_provider`]); then a second instance wakes on the store, so
//! what a gate reads is what the drain wrote and a wake loaded.
//! [`embed_queue`] is the in-process shortcut for a large corpus (gate 20):
//! the queue read from the instance ([`Instance::embedding_batch`]),
//! embedded by [`memoria_simulator::stub_embed_text`] (the function the
//! stub serves; deterministic, NOT semantic) and handed back to
//! [`Instance::store_vectors`]. The corpus is seeded from the case's stream: documents of one
//! passage each, drawn from a fixed word list with a topic each, so their
//! vectors have structure; one carries [`memoria_simulator::SENTINEL_MARKER`]
//! and so gets the stub's sentinel vector.

use std::path::PathBuf;
use std::sync::Arc;

use memoria::{Admission, EgressMode, FixedClock, Instance, InstanceConfig, NewDocument, Sealer};
use rand::Rng as _;

use crate::rigs::support::dek;
use crate::{Ctx, Failure, ensure};

/// Documents (one passage each) in the seeded corpus (§10 gate 2: "a
/// 200-chunk corpus of known text").
pub const SEEDED_CHUNKS: usize = 200;

/// Words per seeded passage.
const WORDS_PER_PASSAGE: usize = 14;

/// The word list: six topics of ten words, written for this project.
const TOPICS: [[&str; 10]; 6] = [
    [
        "invoice", "ledger", "quarter", "budget", "payroll", "expense", "audit", "margin",
        "forecast", "revenue",
    ],
    [
        "kernel", "socket", "thread", "compiler", "cache", "latency", "buffer", "driver", "mutex",
        "syscall",
    ],
    [
        "harbour",
        "ferry",
        "tide",
        "anchor",
        "sail",
        "pier",
        "lighthouse",
        "rope",
        "hull",
        "compass",
    ],
    [
        "orchard", "apple", "harvest", "pruning", "blossom", "cider", "ladder", "basket", "frost",
        "graft",
    ],
    [
        "violin",
        "chorus",
        "tempo",
        "rehearsal",
        "score",
        "concert",
        "tuning",
        "bow",
        "anthem",
        "duet",
    ],
    [
        "glacier",
        "summit",
        "crampon",
        "ridge",
        "altitude",
        "blizzard",
        "cairn",
        "rope-team",
        "icefall",
        "bivouac",
    ],
];

/// An instance with AI on and every seeded chunk embedded and snapshotted.
pub struct Embedded {
    /// The data directory.
    pub dir: PathBuf,
    /// The instance, awake.
    pub instance: Instance,
    /// The chunk id of the passage that carries the sentinel marker.
    pub sentinel_chunk: i64,
    /// The sealer's DEK, to wake the same store again.
    pub sealer: Sealer,
}

/// Wakes an instance with AI on in `dir` (§8.3).
///
/// # Errors
/// A [`Failure`] if it does not wake.
pub fn wake_ai_on(dir: &std::path::Path, sealer: Sealer) -> Result<Instance, Failure> {
    Instance::wake(
        InstanceConfig {
            data_dir: dir.to_path_buf(),
            admission: Admission::parse("ana@example.org").expect("owners"),
            egress: EgressMode::AiOn,
        },
        sealer,
        Arc::new(FixedClock(1_790_000_000)),
    )
    .map_err(|e| Failure::new("an instance with AI on wakes", e.to_string()))
}

/// Embeds every chunk the instance's queue holds with the stub's embedder,
/// through [`Instance::store_vectors`], and writes a snapshot. Returns how
/// many vectors were stored.
///
/// # Errors
/// A [`Failure`] if the queue cannot be read or a vector is not stored.
pub fn embed_queue(instance: &mut Instance) -> Result<usize, Failure> {
    let mut stored = 0;
    let mut after = 0;
    loop {
        let batch = instance
            .embedding_batch(after)
            .map_err(|e| Failure::new("the embedding queue reads", e.to_string()))?;
        if batch.is_empty() {
            break;
        }
        after = batch.last().map_or(after, |(id, _)| *id);
        let vectors: Vec<(i64, Vec<f32>)> = batch
            .iter()
            .map(|(id, text)| (*id, memoria_simulator::stub_embed_text(text)))
            .collect();
        let (n, refused) = instance
            .store_vectors(vectors)
            .map_err(|e| Failure::new("the vectors are stored", e.to_string()))?;
        ensure(
            refused == 0,
            "no stub vector is refused",
            format!("{refused} refused"),
        )?;
        ensure(
            n > 0,
            "a batch stores its vectors",
            "a batch stored none and stayed queued",
        )?;
        stored += n;
    }
    instance
        .write_snapshot()
        .map_err(|e| Failure::new("a snapshot is written after embedding", e.to_string()))?;
    Ok(stored)
}

/// Seeds [`SEEDED_CHUNKS`] one-passage documents in a fresh AI-on instance,
/// embeds them all (see the module doc), and writes a snapshot.
///
/// # Errors
/// A [`Failure`] if any step does not happen as stated.
pub fn seeded(ctx: &mut Ctx, name: &str) -> Result<Embedded, Failure> {
    let dir = ctx.dir(name);
    let sealer = Sealer::new(&dek(ctx.rng()));
    let mut instance = wake_ai_on(&dir, sealer.clone())?;
    let sentinel_at = ctx.rng().gen_range(0..SEEDED_CHUNKS);
    let mut sentinel_chunk = None;
    for k in 0..SEEDED_CHUNKS {
        // Drawn, not `k % 6`: a periodic corpus gives its pairwise cosines
        // a period, and a file at rest with a period of its own (SQLite's
        // 4 KiB page is two rows of 512 f32) then correlates with it by
        // layout alone: above r = 0.20 on 2 seeds in 40 (CI's seed
        // 13353194707809713113 among them), on none in 60 once drawn.
        let topic = &TOPICS[ctx.rng().gen_range(0..TOPICS.len())];
        let words: Vec<&str> = (0..WORDS_PER_PASSAGE)
            .map(|_| {
                if ctx.rng().gen_bool(0.8) {
                    topic[ctx.rng().gen_range(0..topic.len())]
                } else {
                    let other = &TOPICS[ctx.rng().gen_range(0..TOPICS.len())];
                    other[ctx.rng().gen_range(0..other.len())]
                }
            })
            .collect();
        let mut body = format!("{}.", words.join(" "));
        if k == sentinel_at {
            body = format!("{body} {}", memoria_simulator::SENTINEL_MARKER);
        }
        let outcome = instance
            .ingest(&NewDocument {
                source_key: format!("upload:passage-{k}.txt"),
                title: format!("Passage {k}"),
                path: format!("passage-{k}.txt"),
                body,
                date: None,
            })
            .map_err(|e| Failure::new("a seeded passage is ingested", e.to_string()))?;
        ensure(
            outcome.added.len() == 1,
            "each seeded document is one passage",
            format!("{} passages", outcome.added.len()),
        )?;
        if k == sentinel_at {
            sentinel_chunk = outcome.added.first().map(|c| c.chunk_id);
        }
    }
    instance
        .write_snapshot()
        .map_err(|e| Failure::new("the seeded corpus snapshots", e.to_string()))?;
    drop(instance);
    // Embedded as `serve` embeds: the drain, through the provider client,
    // against the stub over the simulated network; it writes the snapshot.
    let stub = memoria_simulator::StubProvider::new();
    let drained: std::rc::Rc<std::cell::RefCell<Option<memoria::DrainReport>>> =
        std::rc::Rc::default();
    let slot = drained.clone();
    with_stub_provider(
        ctx.seed(),
        &stub,
        wake_ai_on(&dir, sealer.clone())?,
        |app| async move {
            *slot.borrow_mut() = Some(app.state().drain_embeddings().await);
            Ok(())
        },
    )?;
    let report = drained.take().unwrap_or_default();
    ensure(
        report.stored == SEEDED_CHUNKS as u64 && report.awaiting == 0 && report.failure.is_none(),
        format!("the drain embeds all {SEEDED_CHUNKS} seeded passages"),
        format!("{report:?}"),
    )?;
    let instance = wake_ai_on(&dir, sealer.clone())?;
    ensure(
        instance.wake_report().dense == memoria::DenseWake::Loaded,
        "the wake after the drain loads the dense snapshot the drain wrote",
        format!("{:?}", instance.wake_report().dense),
    )?;
    let sentinel_chunk = sentinel_chunk
        .ok_or_else(|| Failure::new("the sentinel passage has a chunk id", "none recorded"))?;
    Ok(Embedded {
        dir,
        instance,
        sentinel_chunk,
        sealer,
    })
}

/// The key memoria presents to the stub provider (any bearer passes it).
pub const STUB_PROVIDER_KEY: &str = "stub-provider-key";

/// How much simulated time a stub-provider simulation may run, in seconds:
/// far past any retry ladder or drain interval a case waits on.
pub const STUB_SIMULATION_S: u64 = 3_600;

/// The port the stub provider serves on inside a simulation.
pub const STUB_PROVIDER_PORT: u16 = 80;

/// Runs `scenario` in a turmoil simulation seeded with `seed`: the stub
/// provider serving on a host named as §8.3's provider, and memoria in
/// process on a client host, as a [`memoria::testkit::TestApp`] over
/// `instance` (woken with AI on) whose provider client dials the stub
/// through the simulated network, in plain HTTP (the testkit-only stand-in
/// constructor). Simulated time throughout; no real socket.
///
/// # Errors
/// The scenario's [`Failure`], or one naming the simulation's own error.
pub fn with_stub_provider<F, Fut>(
    seed: u64,
    stub: &memoria_simulator::StubProvider,
    instance: Instance,
    scenario: F,
) -> Result<(), Failure>
where
    F: FnOnce(memoria::testkit::TestApp) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), Failure>> + 'static,
{
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut sim = turmoil::Builder::new()
        .rng_seed(seed)
        .simulation_duration(std::time::Duration::from_secs(STUB_SIMULATION_S))
        .build();
    let router = stub.router();
    sim.host(memoria::PROVIDER_HOST, move || {
        let r = router.clone();
        async move { memoria_simulator::serve_turmoil(r, STUB_PROVIDER_PORT).await }
    });
    let out: Rc<RefCell<Option<Result<(), Failure>>>> = Rc::default();
    let slot = out.clone();
    sim.client("memoria", async move {
        let key = memoria::ProviderKey::parse(STUB_PROVIDER_KEY).expect("a valid key");
        let client = memoria::EmbedClient::plain_http_stand_in(
            Arc::new(memoria_simulator::TurmoilDialer),
            memoria::PROVIDER_HOST,
            STUB_PROVIDER_PORT,
            key,
        );
        let app = memoria::testkit::TestApp::from_instance(instance).with_embedder(client);
        *slot.borrow_mut() = Some(scenario(app).await);
        Ok(())
    });
    sim.run()
        .map_err(|e| Failure::new("the simulation runs to its end", e.to_string()))?;
    out.take()
        .unwrap_or_else(|| Err(Failure::new("the scenario finished", "it never ran")))
}
