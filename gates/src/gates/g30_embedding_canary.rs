//! Gate 30 (§8.2): the embedding canary: fixed public sentences embedded at first configuration, sealed, re-embedded on wake, and drift beyond a stated ε stated on the sources page, never silent.
//!
//! Every case runs in a simulation: the stub provider on §8.3's host, memoria
//! in process beside it with AI on, the provider client dialing through the
//! simulated network. "A wake" is a second app woken on the same store.
//! The stub's drift knob moves every vector it returns by a seeded
//! perturbation of a stated magnitude before it renormalises.

use std::sync::Arc;

use memoria::{
    Admission, CANARY_DRIFT_MAX, CANARY_SENTENCES, CanaryState, EgressMode, Instance,
    InstanceConfig, Sealer,
};
use memoria_simulator::{Drift, StubProvider};

use crate::rigs::clock::HandClock;
use crate::rigs::dense::with_stub_provider;
use crate::rigs::support::dek;
use crate::{Case, Ctx, Failure, Gate, ensure};

/// A drift magnitude the canary must flag: a perturbation of norm 0.6
/// against a unit 4,096-value vector, about an eighth of whose energy lands
/// in the 512 values compared; against a sentence's prefix (about half its
/// vector's energy) that is a drift near 0.045, four times the bound.
pub const DRIFT_FLAGGED: f32 = 0.6;
/// A drift the canary must let pass: a cosine of about 0.99998.
pub const DRIFT_TOLERATED: f32 = 0.005;

const OWNER: &str = "ana@example.org";

/// Gate 30.
pub static GATE: Gate = Gate {
    id: "30",
    title: "Embedding canary",
    gates_md: &[
        "Embedding canary: fixed public sentences re-embedded on wake, drift over epsilon is stated",
    ],
    sections: &["§8.2", "§7.2"],
    requirement: "With AI on, fixed public sentences are embedded at first configuration and their vectors sealed; on each wake they are embedded again, and a drift past the stated ε (1 − cosine > CANARY_DRIFT_MAX) is stated on the sources page; a steady provider is not flagged; a provider that does not answer is stated too.",
    cases: &[
        Case {
            id: "30/first-configuration-records-the-canary",
            desc: "Wake with AI on and check the canary: it is recorded, the store holds one sealed vector per sentence under the pinned model id, each opening to 512 f32 values of unit norm, and the stub received exactly the canary's sentences.",
            run: first_configuration_records,
        },
        Case {
            id: "30/a-steady-provider-is-steady",
            desc: "Record the canary, wake a second app on the same store, check again: steady, largest drift under 1e-6; the sources page says it is steady.",
            run: steady_is_steady,
        },
        Case {
            id: "30/drift-is-stated-on-the-sources-page",
            desc: "Record the canary, turn the stub's drift to 0.6, wake again and check: drifted, every sentence past ε; the sources page states the drift in its canary line.",
            run: drift_is_stated,
        },
        Case {
            id: "30/drift-within-epsilon-is-not-flagged",
            desc: "Record the canary, turn the stub's drift to 0.005, wake again and check: steady, its largest drift above zero and within ε.",
            run: small_drift_is_not_flagged,
        },
        Case {
            id: "30/the-server-checks-the-canary-when-it-starts",
            desc: "Start the state's embedding loop as `serve` does, let 5 s of simulated time pass, and require the sources page to say the canary was recorded and the provider to have received the canary's sentences.",
            run: server_checks_on_start,
        },
        Case {
            id: "30/a-silent-provider-is-stated",
            desc: "Record the canary, take the stub down, wake again and check: the canary could not be checked, and the sources page says so.",
            run: silent_provider_is_stated,
        },
    ],
};

fn wake(dir: &std::path::Path, sealer: Sealer) -> Result<Instance, Failure> {
    Instance::wake(
        InstanceConfig {
            data_dir: dir.to_path_buf(),
            admission: Admission::parse(OWNER).expect("owners"),
            egress: EgressMode::AiOn,
        },
        sealer,
        Arc::new(HandClock::at(1_790_000_000)),
    )
    .map_err(|e| Failure::new("memoria wakes with AI on", e.to_string()))
}

/// Records the canary in a first app, then runs `after` on a second app
/// woken on the same store, with `knob` applied to the stub in between.
fn recorded_then<K, F, Fut>(ctx: &mut Ctx, knob: K, after: F) -> Result<(), Failure>
where
    K: FnOnce(&StubProvider) + 'static,
    F: FnOnce(memoria::testkit::TestApp) -> Fut + 'static,
    Fut: std::future::Future<Output = Result<(), Failure>> + 'static,
{
    let dir = ctx.dir("data");
    let sealer = Sealer::new(&dek(ctx.rng()));
    let stub = StubProvider::new();
    with_stub_provider(
        ctx.seed(),
        &stub,
        wake(&dir, sealer.clone())?,
        |app| async move {
            let first = app.state().check_canary().await;
            ensure(
                matches!(first, CanaryState::Recorded { .. }),
                "the first check records the canary",
                format!("{first:?}"),
            )
        },
    )?;
    knob(&stub);
    with_stub_provider(ctx.seed(), &stub, wake(&dir, sealer)?, after)
}

async fn sources_canary_line(mut app: memoria::testkit::TestApp) -> Result<String, Failure> {
    app.sign_in(OWNER).await;
    let page = crate::rigs::page::of(&app.get("/sources").await);
    let lines = page.texts("p.canary");
    ensure(
        lines.len() == 1,
        "the sources page has one canary line",
        format!("{lines:?}"),
    )?;
    Ok(lines[0].clone())
}

fn first_configuration_records(ctx: &mut Ctx) -> Result<(), Failure> {
    let dir = ctx.dir("data");
    let stub = StubProvider::new();
    let seen = stub.clone();
    let instance = wake(&dir, Sealer::new(&dek(ctx.rng())))?;
    with_stub_provider(ctx.seed(), &stub, instance, move |app| async move {
        let state = app.state().check_canary().await;
        ensure(
            state
                == CanaryState::Recorded {
                    sentences: CANARY_SENTENCES.len(),
                },
            "the canary is recorded at first configuration",
            format!("{state:?}"),
        )?;
        let rows = app
            .state()
            .blocking(|i| i.store().canary())
            .await
            .map_err(|e| Failure::new("the store answers", e.to_string()))?
            .map_err(|e| Failure::new("the canary opens through the seal", e.to_string()))?;
        ensure(
            rows.len() == CANARY_SENTENCES.len(),
            format!("{} sealed canary vectors", CANARY_SENTENCES.len()),
            format!("{}", rows.len()),
        )?;
        for (model, bytes) in &rows {
            ensure(
                model == memoria::EMBED_MODEL,
                "each is recorded under the pinned model id",
                model.clone(),
            )?;
            ensure(
                bytes.len() == memoria::EMBED_DIM_STORED * 4,
                "each opens to 512 f32 values",
                format!("{} bytes", bytes.len()),
            )?;
            let norm: f64 = bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4"))).powi(2))
                .sum::<f64>()
                .sqrt();
            ensure(
                (norm - 1.0).abs() < 1e-4,
                "each recorded vector is unit",
                format!("norm {norm}"),
            )?;
        }
        let asked: Vec<String> = seen
            .requests()
            .iter()
            .flat_map(|r| r.inputs.clone())
            .collect();
        ensure(
            asked == CANARY_SENTENCES.map(String::from),
            "the provider was sent the canary's sentences and nothing else",
            format!("{} inputs", asked.len()),
        )
    })
}

fn steady_is_steady(ctx: &mut Ctx) -> Result<(), Failure> {
    recorded_then(
        ctx,
        |_| {},
        |app| async move {
            let state = app.state().check_canary().await;
            let CanaryState::Steady { max_drift } = state else {
                return Err(Failure::new(
                    "a steady provider is steady",
                    format!("{state:?}"),
                ));
            };
            ensure(
                max_drift < 1e-6,
                "the largest drift is float noise",
                format!("{max_drift}"),
            )?;
            let line = sources_canary_line(app).await?;
            ensure(
                line.contains("steady"),
                "the sources page says the canary is steady",
                line,
            )
        },
    )
}

fn drift_is_stated(ctx: &mut Ctx) -> Result<(), Failure> {
    let seed = ctx.seed();
    recorded_then(
        ctx,
        move |stub| {
            stub.set_drift(Some(Drift {
                seed,
                delta: DRIFT_FLAGGED,
            }))
        },
        |app| async move {
            let state = app.state().check_canary().await;
            let CanaryState::Drifted {
                drifted,
                sentences,
                max_drift,
            } = state
            else {
                return Err(Failure::new(
                    "a drifted provider is flagged",
                    format!("{state:?}"),
                ));
            };
            ensure(
                drifted == sentences && max_drift > CANARY_DRIFT_MAX,
                "every sentence drifted past ε",
                format!("{drifted} of {sentences}, largest {max_drift}"),
            )?;
            let line = sources_canary_line(app).await?;
            ensure(
                line.contains("drifted") && line.contains(memoria::EMBED_MODEL),
                "the sources page states the drift and names the model",
                line,
            )
        },
    )
}

fn small_drift_is_not_flagged(ctx: &mut Ctx) -> Result<(), Failure> {
    let seed = ctx.seed();
    recorded_then(
        ctx,
        move |stub| {
            stub.set_drift(Some(Drift {
                seed,
                delta: DRIFT_TOLERATED,
            }))
        },
        |app| async move {
            let state = app.state().check_canary().await;
            let CanaryState::Steady { max_drift } = state else {
                return Err(Failure::new(
                    "a drift within ε is not flagged",
                    format!("{state:?}"),
                ));
            };
            ensure(
                max_drift > 0.0 && max_drift <= CANARY_DRIFT_MAX,
                "the drift was seen and is within ε",
                format!("{max_drift}"),
            )
        },
    )
}

fn silent_provider_is_stated(ctx: &mut Ctx) -> Result<(), Failure> {
    recorded_then(
        ctx,
        |stub| stub.set_down(Some(memoria_simulator::ProviderDown::Status(503))),
        |app| async move {
            let state = app.state().check_canary().await;
            ensure(
                matches!(state, CanaryState::Unavailable { .. }),
                "a provider that does not answer leaves the canary unchecked",
                format!("{state:?}"),
            )?;
            let line = sources_canary_line(app).await?;
            ensure(
                line.contains("could not be checked"),
                "the sources page says the canary could not be checked",
                line,
            )
        },
    )
}

fn server_checks_on_start(ctx: &mut Ctx) -> Result<(), Failure> {
    let dir = ctx.dir("data");
    let stub = StubProvider::new();
    let seen = stub.clone();
    let instance = wake(&dir, Sealer::new(&dek(ctx.rng())))?;
    with_stub_provider(ctx.seed(), &stub, instance, move |app| async move {
        app.state().start_embedding();
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
        let asked: Vec<String> = seen
            .requests()
            .iter()
            .flat_map(|r| r.inputs.clone())
            .collect();
        ensure(
            CANARY_SENTENCES
                .iter()
                .all(|s| asked.iter().any(|a| a == s)),
            "the embedding loop sent the canary's sentences on start",
            format!("{} inputs", asked.len()),
        )?;
        let line = sources_canary_line(app).await?;
        ensure(
            line.contains("recorded"),
            "the sources page says the canary was recorded",
            line,
        )
    })
}
