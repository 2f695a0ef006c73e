//! Where store work runs: off the async runtime's worker threads in production, inline in a simulation (issue 10).
//!
//! Everything an [`Instance`] does touches SQLite, and some of it fsyncs
//! (the tombstone log) or seals and writes a whole snapshot. None of that
//! may run on an async worker thread: one slow transaction would stall
//! every request that thread serves. [`SharedInstance::run`] is the one way
//! the web surface and the background syncs reach the instance, and the
//! [`Offload`] chosen at construction decides where the closure runs:
//!
//! - [`Offload::Pool`] (`memoria serve`, the CLI): on tokio's blocking pool
//!   (`tokio::task::spawn_blocking`), with an owned handle on the instance.
//!   The worker thread awaits and serves other requests meanwhile, even
//!   while the instance lock is held by a slow snapshot.
//! - [`Offload::Inline`] (the simulator, the testkit): on the awaiting task,
//!   now. turmoil drives every host on one thread in simulated time; a real
//!   thread pool would finish work at wall-clock moments and break a seed's
//!   replay.
//!
//! The instance's std mutex is taken inside the closure and released before
//! it returns, so no guard is ever held across an `.await`. A panic inside
//! the closure is caught in both modes and returned as
//! [`ErrorKind::Abandoned`]; the server serves on, and the instance is as
//! its last committed transaction left it (a poisoned lock is recovered).
//! The current `tracing` dispatcher and span follow the work onto the pool
//! thread, so its log lines land where the request's do.
//!
//! **Architecture Invariant:** in production, no SQLite call, fsync or
//! snapshot seal runs on an async worker thread; `web/` and `sibling/`
//! never lock the instance themselves.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Error, ErrorKind};
use crate::instance::Instance;

/// Where [`SharedInstance::run`] runs store work, chosen once at construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offload {
    /// On tokio's blocking pool: the production mode (`memoria serve`).
    /// Needs a tokio runtime, either flavour.
    Pool,
    /// On the awaiting task, before the first poll returns: the simulator's
    /// and the testkit's mode, deterministic under one seed.
    Inline,
}

/// An instance shared by the router and the background syncs, and the
/// [`Offload`] every access to it goes through. Cloning shares the instance.
#[derive(Clone)]
pub struct SharedInstance {
    instance: Arc<Mutex<Instance>>,
    offload: Offload,
    /// Requests served so far ([`SharedInstance::touch`]): what the idle
    /// eviction watches (§3.5).
    uses: Arc<std::sync::atomic::AtomicU64>,
    /// Idle evictions so far ([`SharedInstance::evict`]).
    evictions: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for SharedInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedInstance")
            .field("offload", &self.offload)
            .finish_non_exhaustive()
    }
}

fn lock(instance: &Mutex<Instance>) -> MutexGuard<'_, Instance> {
    // A panic while holding the lock leaves the instance as the last
    // committed transaction left it; serving on is safe.
    instance.lock().unwrap_or_else(|p| p.into_inner())
}

fn abandoned_by_panic() -> Error {
    // The panic's payload is not kept: its text may quote content (§3.2).
    tracing::error!(
        kind = ?ErrorKind::Abandoned,
        "store work panicked; the server serves on"
    );
    Error::new(ErrorKind::Abandoned, "store work panicked")
}

impl SharedInstance {
    /// Shares `instance`; every [`SharedInstance::run`] runs where `offload` says.
    pub fn new(instance: Instance, offload: Offload) -> SharedInstance {
        SharedInstance {
            instance: Arc::new(Mutex::new(instance)),
            offload,
            uses: Arc::default(),
            evictions: Arc::default(),
        }
    }

    /// Counts one request served: the instance is not idle (§3.5).
    pub fn touch(&self) {
        self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Requests served so far ([`SharedInstance::touch`]).
    pub fn uses(&self) -> u64 {
        self.uses.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// True while an idle spell has evicted the index ([`Instance::evict`]).
    pub fn is_evicted(&self) -> bool {
        lock(&self.instance).is_evicted()
    }

    /// Evicts the decrypted index ([`Instance::evict`], §3.5); the next
    /// [`SharedInstance::run`] wakes it again.
    ///
    /// # Errors
    /// As [`Instance::evict`], and as [`SharedInstance::run_cold`].
    pub async fn evict(&self) -> Result<(), Error> {
        let evicted_now = self
            .run_cold(|i| {
                let was = i.is_evicted();
                i.evict().map(|()| !was)
            })
            .await??;
        if evicted_now {
            self.evictions
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// How many times an idle spell has evicted the index since start.
    pub fn evictions(&self) -> u64 {
        self.evictions.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// As [`SharedInstance::run`], but an evicted instance is not woken
    /// first: for work that reads or writes the sealed store alone (the
    /// roster copy's record, §4.3), never the index or the vectors.
    ///
    /// # Errors
    /// As [`SharedInstance::run`].
    pub async fn run_cold<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce(&mut Instance) -> T + Send + 'static,
        T: Send + 'static,
    {
        self.run_where(false, work).await
    }

    /// Where this handle runs store work.
    pub fn offload(&self) -> Offload {
        self.offload
    }

    /// The instance itself, for tests and gates that inspect it from their
    /// own thread. Production code goes through [`SharedInstance::run`].
    pub fn instance(&self) -> Arc<Mutex<Instance>> {
        self.instance.clone()
    }

    /// Runs `work` on the instance, under its lock, where the [`Offload`]
    /// says, and returns what it returned. The lock is released before this
    /// resolves. Dropping the future does not cancel work already started
    /// on the pool: a transaction runs to its end.
    ///
    /// # Errors
    /// [`ErrorKind::Abandoned`] if `work` panicked (caught, logged by kind
    /// only), or if the runtime shut down before pooled work ran; as
    /// [`Instance::rewake`] if an idle spell evicted the index and it cannot
    /// be woken again (§3.5).
    ///
    /// # Panics
    /// With [`Offload::Pool`], if called outside a tokio runtime.
    pub async fn run<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce(&mut Instance) -> T + Send + 'static,
        T: Send + 'static,
    {
        self.run_where(true, work).await
    }

    async fn run_where<T, F>(&self, wake: bool, work: F) -> Result<T, Error>
    where
        F: FnOnce(&mut Instance) -> T + Send + 'static,
        T: Send + 'static,
    {
        let awake = move |i: &mut Instance| -> Result<T, Error> {
            if wake {
                i.rewake()?;
            }
            Ok(work(i))
        };
        match self.offload {
            Offload::Inline => catch_unwind(AssertUnwindSafe(|| awake(&mut lock(&self.instance))))
                .map_err(|_| abandoned_by_panic())?,
            Offload::Pool => {
                let instance = self.instance.clone();
                let dispatch = tracing::dispatcher::get_default(|d| d.clone());
                let span = tracing::Span::current();
                let joined = tokio::task::spawn_blocking(move || {
                    tracing::dispatcher::with_default(&dispatch, || {
                        span.in_scope(|| awake(&mut lock(&instance)))
                    })
                })
                .await;
                match joined {
                    Ok(t) => t,
                    Err(e) if e.is_panic() => Err(abandoned_by_panic()),
                    Err(_) => Err(Error::new(
                        ErrorKind::Abandoned,
                        "the runtime shut down before the store work ran",
                    )),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(dir: &std::path::Path, offload: Offload) -> SharedInstance {
        let instance = crate::instance::instance_for_tests(dir);
        SharedInstance::new(instance, offload)
    }

    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn pooled_store_work_runs_off_the_runtime_thread() {
        let tmp = tempfile::tempdir().unwrap();
        let m = shared(tmp.path(), Offload::Pool);
        let runtime_thread = std::thread::current().id();
        let (ran_on, counts) = current_thread()
            .block_on(m.run(|i| (std::thread::current().id(), i.store().counts())))
            .unwrap();
        assert_ne!(ran_on, runtime_thread, "the SQLite read ran on the pool");
        assert_eq!(counts.unwrap(), (0, 0));
    }

    #[test]
    fn inline_store_work_runs_on_the_awaiting_thread() {
        let tmp = tempfile::tempdir().unwrap();
        let m = shared(tmp.path(), Offload::Inline);
        let runtime_thread = std::thread::current().id();
        let ran_on = current_thread()
            .block_on(m.run(|_| std::thread::current().id()))
            .unwrap();
        assert_eq!(ran_on, runtime_thread);
    }

    #[test]
    fn a_panic_in_store_work_is_an_abandoned_error_and_the_instance_serves_on() {
        for offload in [Offload::Pool, Offload::Inline] {
            let tmp = tempfile::tempdir().unwrap();
            let m = shared(tmp.path(), offload);
            let rt = current_thread();
            let err = rt
                .block_on(m.run(|_| -> () { panic!("a store bug") }))
                .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Abandoned, "{offload:?}");
            assert!(!err.to_string().contains("a store bug"), "no payload kept");
            let counts = rt.block_on(m.run(|i| i.store().counts())).unwrap();
            assert_eq!(counts.unwrap(), (0, 0), "{offload:?}: serves on");
        }
    }

    #[test]
    fn a_slow_pooled_operation_leaves_a_current_thread_runtime_free_to_serve() {
        let tmp = tempfile::tempdir().unwrap();
        let m = shared(tmp.path(), Offload::Pool);
        let (entered_tx, entered_rx) = std::sync::mpsc::channel::<()>();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        current_thread().block_on(async move {
            // The slow operation holds the instance lock until released.
            let slow = tokio::spawn({
                let m = m.clone();
                async move {
                    m.run(move |i| {
                        entered_tx.send(()).unwrap();
                        // Bounded: run inline, nothing could release it.
                        let released = release_rx
                            .recv_timeout(std::time::Duration::from_secs(10))
                            .is_ok();
                        (released, i.store().counts().map(|c| c.0))
                    })
                    .await
                }
            });
            // Meanwhile the one runtime thread keeps running other tasks.
            let other = tokio::spawn(async { 42 });
            assert_eq!(other.await.unwrap(), 42);
            while entered_rx.try_recv().is_err() {
                tokio::task::yield_now().await;
            }
            assert!(!slow.is_finished(), "the slow operation is still in flight");
            let beside = tokio::spawn(async {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                "served"
            });
            assert_eq!(beside.await.unwrap(), "served");
            release_tx.send(()).unwrap();
            let (released, documents) = slow.await.unwrap().unwrap();
            assert!(released, "released, not timed out");
            assert_eq!(documents.unwrap(), 0);
        });
    }
}
