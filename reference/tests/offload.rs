//! Where the web surface's store work runs: off the runtime's thread in production, so a slow store operation stalls no other request (issue 10).
//!
//! Every test drives the real router through [`TestApp`] on a
//! current-thread runtime, the hardest case: one thread serves every
//! request, so store work run on it would stall them all.

use std::sync::Arc;
use std::sync::mpsc;

use axum::http::StatusCode;
use memoria::testkit::TestApp;
use memoria::{Admission, Dek, EgressMode, FixedClock, Instance, InstanceConfig, Offload, Sealer};

/// The one owner every test signs in as.
const OWNER: &str = "ana@example.org";
/// How many times the runtime thread yields while checking that a request
/// stuck behind the slow operation has not finished; any number shows it.
const YIELDS_WHILE_HELD: usize = 50;
/// How long the slow operation waits to be released before it gives up, in
/// seconds: were it run on the runtime's thread, nothing could release it,
/// and the test fails instead of hanging.
const HELD_S_MAX: u64 = 10;

fn app(dir: &std::path::Path, offload: Offload) -> TestApp {
    let instance = Instance::wake(
        InstanceConfig {
            data_dir: dir.to_path_buf(),
            admission: Admission::parse(OWNER).expect("owners"),
            egress: EgressMode::AiOff,
        },
        Sealer::new(&Dek::generate()),
        Arc::new(FixedClock(1_767_225_600)),
    )
    .expect("wake");
    TestApp::from_instance_with(instance, offload)
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

#[test]
fn production_store_work_runs_off_the_thread_that_serves_requests() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut app = app(tmp.path(), Offload::Pool);
    let serving = std::thread::current().id();
    current_thread().block_on(async {
        app.sign_in(OWNER).await;
        let ran_on = app
            .state()
            .blocking(|_| std::thread::current().id())
            .await
            .expect("store work returns");
        assert_ne!(ran_on, serving, "pooled store work left the runtime thread");
        let up = app
            .upload(
                "kettle.md",
                b"# Kettle\n\nDescale the kettle monthly.",
                None,
            )
            .await;
        assert_eq!(up.status, StatusCode::SEE_OTHER, "{}", up.body);
        let found = app.get("/?q=descale").await;
        assert!(found.body.contains("Kettle"), "{}", found.body);
    });
}

#[test]
fn a_slow_store_operation_in_flight_does_not_stall_another_request_in_production() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut app = app(tmp.path(), Offload::Pool);
    current_thread().block_on(async move {
        app.sign_in(OWNER).await;
        let up = app
            .upload(
                "kettle.md",
                b"# Kettle\n\nDescale the kettle monthly.",
                None,
            )
            .await;
        assert_eq!(
            up.status,
            StatusCode::SEE_OTHER,
            "presence: the upload is stored"
        );
        let app = Arc::new(app);
        // A snapshot that takes as long as the test says, holding the lock.
        let (entered_tx, entered_rx) = mpsc::channel::<()>();
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let state = app.state().clone();
        let slow = tokio::spawn(async move {
            state
                .blocking(move |i| {
                    entered_tx.send(()).expect("entered");
                    let released = release_rx
                        .recv_timeout(std::time::Duration::from_secs(HELD_S_MAX))
                        .is_ok();
                    (released, i.write_snapshot().map(|h| h.generation))
                })
                .await
        });
        while entered_rx.try_recv().is_err() {
            tokio::task::yield_now().await;
        }
        // A search needs the store: it waits for the lock, on the pool.
        let searching = tokio::spawn({
            let app = app.clone();
            async move { app.get("/?q=descale").await }
        });
        // A page that needs no store is answered meanwhile, by the one thread.
        let missing = app.get("/no/such/page").await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert!(missing.body.contains(EgressMode::AiOff.footer()));
        for _ in 0..YIELDS_WHILE_HELD {
            tokio::task::yield_now().await;
        }
        assert!(!slow.is_finished(), "the slow operation is still in flight");
        assert!(!searching.is_finished(), "the search waits for the store");
        release_tx.send(()).expect("release");
        let (released, generation) = slow.await.expect("joined").expect("ran");
        assert!(released, "the slow operation was released, not timed out");
        assert!(generation.expect("snapshot") >= 1);
        let found = searching.await.expect("joined");
        assert_eq!(found.status, StatusCode::OK);
        assert!(found.body.contains("Kettle"), "{}", found.body);
    });
}

#[test]
fn the_testkit_runs_store_work_inline_on_the_awaiting_thread() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let app = TestApp::new(tmp.path(), &Dek::generate(), OWNER).expect("wake");
    assert_eq!(app.state().offload(), Offload::Inline);
    let serving = std::thread::current().id();
    let ran_on = current_thread()
        .block_on(app.state().blocking(|_| std::thread::current().id()))
        .expect("store work returns");
    assert_eq!(ran_on, serving);
}
