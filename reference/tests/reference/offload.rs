//! Where the web surface's store work runs: off the runtime's thread in production, so a slow store operation stalls no other request (issue 10), and searches beside it and each other (issue 30).
//!
//! Every test drives the real router through [`TestApp`] on a
//! current-thread runtime, the hardest case: one thread serves every
//! request, so store work run on it would stall them all.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use axum::http::StatusCode;
use memoria::testkit::TestApp;
use memoria::{
    Admission, Dek, EgressMode, FixedClock, Instance, InstanceConfig, Offload, Sealer,
    SharedInstance,
};

/// The one owner every test signs in as.
const OWNER: &str = "ana@example.org";
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
fn a_search_answers_while_a_slow_write_holds_the_writer_in_production() {
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
        // A search reads on a read handle (issue 30): answered while the
        // writer holds the lock, by the one thread and the blocking pool.
        let reads_before = app.state().shared_instance().reads();
        let found = app.get("/?q=descale").await;
        assert_eq!(found.status, StatusCode::OK);
        assert!(found.body.contains("Kettle"), "{}", found.body);
        assert!(found.body.contains(EgressMode::AiOff.footer()));
        assert!(
            app.state().shared_instance().reads() > reads_before,
            "the search was served on a read handle"
        );
        assert!(!slow.is_finished(), "the slow write is still in flight");
        release_tx.send(()).expect("release");
        let (released, generation) = slow.await.expect("joined").expect("ran");
        assert!(released, "the slow write was released, not timed out");
        assert!(generation.expect("snapshot") >= 1);
    });
}

/// Two reads meeting inside the read path: each waits there, up to
/// [`HELD_S_MAX`] seconds, for the other to arrive.
#[derive(Default)]
struct Rendezvous {
    inside: Mutex<usize>,
    arrived: Condvar,
    met: Mutex<Vec<bool>>,
}

impl Rendezvous {
    fn meet(&self) {
        let mut inside = self.inside.lock().expect("rendezvous");
        *inside += 1;
        self.arrived.notify_all();
        let (inside, waited) = self
            .arrived
            .wait_timeout_while(inside, Duration::from_secs(HELD_S_MAX), |n| *n < 2)
            .expect("rendezvous");
        drop(inside);
        self.met.lock().expect("met").push(!waited.timed_out());
    }
}

#[test]
fn two_searches_run_at_the_same_time_on_two_threads_each_inside_the_read_path() {
    for offload in [Offload::Pool, Offload::Inline] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let mut instance = Instance::wake(
            InstanceConfig {
                data_dir: tmp.path().to_path_buf(),
                admission: Admission::parse(OWNER).expect("owners"),
                egress: EgressMode::AiOff,
            },
            Sealer::new(&Dek::generate()),
            Arc::new(FixedClock(1_767_225_600)),
        )
        .expect("wake");
        memoria::ingest_bytes(
            &mut instance,
            "upload:kettle.md",
            "kettle.md",
            b"# Kettle\n\nDescale the kettle monthly.",
            None,
        )
        .expect("ingest");
        instance.write_snapshot().expect("snapshot");
        let shared = SharedInstance::new(instance, offload);
        let rendezvous = Arc::new(Rendezvous::default());
        let hook = Arc::clone(&rendezvous);
        shared.set_read_hook(Some(Arc::new(move || hook.meet())));
        let searches: Vec<_> = (0..2)
            .map(|_| {
                let shared = shared.clone();
                std::thread::spawn(move || {
                    current_thread()
                        .block_on(memoria::ruled_search(&shared, None, OWNER, "descale", 1))
                        .expect("search")
                        .page
                })
            })
            .collect();
        for s in searches {
            let page = s.join().expect("joined");
            assert_eq!(page.results.len(), 1, "{offload:?}");
            assert_eq!(page.results[0].title, "Kettle", "{offload:?}");
        }
        assert_eq!(
            *rendezvous.met.lock().expect("met"),
            [true, true],
            "{offload:?}: both searches were inside the read path at once"
        );
        assert_eq!(shared.reads(), 2, "{offload:?}");
    }
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
