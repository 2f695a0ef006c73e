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
//! With the `testkit` feature, a simulated crash at a named crash point
//! kills the instance instead ([`crate::crashpoint`], issue 26).
//! The current `tracing` dispatcher and span follow the work onto the pool
//! thread, so its log lines land where the request's do.
//!
//! A search reads without the instance lock (issue 30):
//! [`SharedInstance::read`] runs it on a *read handle*, a store connection
//! of its own (the store is in WAL mode, so it reads beside the writer)
//! and a read-only connection over the index image the writer last
//! published ([`ImageSlot`]), so searches run on every core at once. Every
//! write (ingest, deletion, tombstone replay, snapshot, wake, eviction)
//! still runs under the one lock. The writer's first change to its index
//! empties the slot before it changes anything, and each snapshot
//! publishes the image it sealed, so a published image is always the
//! writer's index exactly; while the slot is empty (a write batch not yet
//! sealed, or an evicted instance) a search takes the writer's index under
//! the lock, as every search did before. A read handle opens one store
//! read transaction per request, so a request that starts after a
//! deletion returned reads a store without it (§7.4); the image it
//! searches was published after that deletion, or a hit whose row is gone
//! is skipped as on the writer's path.
//!
//! **Architecture Invariant:** in production, no SQLite call, fsync or
//! snapshot seal runs on an async worker thread; `web/` and `sibling/`
//! never lock the instance themselves, and every write to the store or
//! the index runs under the instance lock.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::access::admission::Admission;
use crate::clock::Clock;
use crate::error::{Error, ErrorKind};
use crate::instance::{Instance, ReadView};
use crate::search::index::{ImageSlot, LexicalIndex, SharedImage};
use crate::storage::store::Store;

/// How many idle read handles are kept for the next search: one per core
/// of the 2-core machine the load bench measures, and two spare. A search
/// that finds none idle opens one (a SQLite connection to the store and
/// one over the image already in memory: no copy), and the spare is closed
/// when it is given back past this many. It also bounds the reads inside
/// the read path at once ([`SharedInstance::read`] waits, in order, for one
/// of this many permits), so a burst never opens handles only to close
/// them: at 32 connections over HTTP, without the bound, the server spent
/// 9.2 ms of CPU a search and served 213 a second; with it, 2.9 ms and
/// 611 (benches/RESULTS.md, issue 30).
pub const READ_HANDLES_IDLE_MAX: usize = 4;

/// A test's hook, run on the read path with a read handle held.
#[cfg(any(test, feature = "testkit"))]
pub type ReadHook = Arc<dyn Fn() + Send + Sync>;

/// One read handle: its own store connection and its own connection over
/// one published image.
struct ReadHandle {
    store: Store,
    index: LexicalIndex,
    admission: Admission,
    clock: Arc<dyn Clock>,
    image: Arc<SharedImage>,
}

impl ReadHandle {
    fn view(&self) -> ReadView<'_> {
        ReadView {
            admission: &self.admission,
            store: &self.store,
            index: &self.index,
            clock: &self.clock,
        }
    }
}

/// The read handles of one shared instance and where they find the image.
struct Readers {
    slot: Arc<ImageSlot>,
    /// A store connection that only reads, the one new handles are opened
    /// beside ([`Store::open_reader`]).
    seed: Mutex<Store>,
    admission: Admission,
    clock: Arc<dyn Clock>,
    idle: Mutex<Vec<ReadHandle>>,
    /// Requests served on a read handle.
    reads: AtomicU64,
    /// The reads inside the read path at once, at most
    /// [`READ_HANDLES_IDLE_MAX`]; tokio's semaphore is fair, so a read
    /// waits its turn.
    permits: tokio::sync::Semaphore,
    #[cfg(any(test, feature = "testkit"))]
    hook: Mutex<Option<ReadHook>>,
}

impl Readers {
    fn idle(&self) -> MutexGuard<'_, Vec<ReadHandle>> {
        // The list holds whole handles; a panic cannot leave one half made.
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A handle over `image`: an idle one if any is, else a new one.
    fn take(&self, image: &Arc<SharedImage>) -> Result<ReadHandle, Error> {
        {
            let mut idle = self.idle();
            idle.retain(|h| Arc::ptr_eq(&h.image, image));
            if let Some(h) = idle.pop() {
                return Ok(h);
            }
        }
        let store = self
            .seed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open_reader()?;
        Ok(ReadHandle {
            store,
            index: LexicalIndex::over(Arc::clone(image))?,
            admission: self.admission.clone(),
            clock: Arc::clone(&self.clock),
            image: Arc::clone(image),
        })
    }

    /// Keeps `handle` for the next search if its image is still the
    /// published one and there is room; else closes it.
    fn give_back(&self, handle: ReadHandle) {
        if self.slot.holds(&handle.image) {
            let mut idle = self.idle();
            if idle.len() < READ_HANDLES_IDLE_MAX {
                idle.push(handle);
            }
        }
    }

    /// Runs `work` on a read handle, or gives it back untouched when no
    /// image is published or no handle opens: the caller then runs it on
    /// the writer.
    fn try_read<T, F>(&self, work: F) -> Result<T, F>
    where
        F: FnOnce(ReadView<'_>) -> T,
    {
        let Some(image) = self.slot.current() else {
            return Err(work);
        };
        let handle = match self.take(&image) {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(kind = ?e.kind(), "a read handle did not open; the search reads under the lock");
                return Err(work);
            }
        };
        drop(image);
        self.reads.fetch_add(1, Ordering::Relaxed);
        #[cfg(any(test, feature = "testkit"))]
        {
            let hook = self
                .hook
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some(hook) = hook {
                hook();
            }
        }
        let out = work(handle.view());
        self.give_back(handle);
        Ok(out)
    }
}

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
    readers: Arc<Readers>,
    offload: Offload,
    /// Requests served so far ([`SharedInstance::touch`]): what the idle
    /// eviction watches (§3.5).
    uses: Arc<std::sync::atomic::AtomicU64>,
    /// Idle evictions so far ([`SharedInstance::evict`]).
    evictions: Arc<std::sync::atomic::AtomicU64>,
    /// Its data directory, where a simulated crash is aimed.
    #[cfg(feature = "testkit")]
    dir: Arc<std::path::Path>,
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

/// What a caught panic returns; with the `testkit` feature, a simulated
/// crash's panic returns never, as the killed process would not.
async fn abandoned_by_panic(payload: Box<dyn std::any::Any + Send>) -> Error {
    #[cfg(feature = "testkit")]
    let payload = crate::crashpoint::unless_crash_landed(payload).await;
    // The panic's payload is not kept: its text may quote content (§3.2).
    drop(payload);
    tracing::error!(
        kind = ?ErrorKind::Abandoned,
        "store work panicked; the server serves on"
    );
    Error::new(ErrorKind::Abandoned, "store work panicked")
}

impl SharedInstance {
    /// Shares `instance`; every [`SharedInstance::run`] runs where `offload` says.
    ///
    /// # Panics
    /// If the store cannot be opened a second time to read (the file was
    /// opened a moment ago by the instance itself).
    pub fn new(mut instance: Instance, offload: Offload) -> SharedInstance {
        #[cfg(feature = "testkit")]
        let dir = Arc::from(instance.data_dir());
        let slot = Arc::new(ImageSlot::default());
        instance.share_index(Arc::clone(&slot));
        let readers = Readers {
            slot,
            seed: Mutex::new(
                instance
                    .store()
                    .open_reader()
                    .expect("the store the instance holds opens to read"),
            ),
            admission: instance.admission().clone(),
            clock: Arc::clone(instance.clock()),
            idle: Mutex::default(),
            reads: AtomicU64::new(0),
            permits: tokio::sync::Semaphore::new(READ_HANDLES_IDLE_MAX),
            #[cfg(any(test, feature = "testkit"))]
            hook: Mutex::default(),
        };
        SharedInstance {
            instance: Arc::new(Mutex::new(instance)),
            readers: Arc::new(readers),
            offload,
            uses: Arc::default(),
            evictions: Arc::default(),
            #[cfg(feature = "testkit")]
            dir,
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
        // The instance emptied the slot; the idle handles' image goes too.
        self.readers.idle().clear();
        if evicted_now {
            self.evictions
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// Requests served so far on a read handle ([`SharedInstance::read`]),
    /// not under the instance lock.
    pub fn reads(&self) -> u64 {
        self.readers.reads.load(Ordering::Relaxed)
    }

    /// What the read path holds of the decrypted index now: whether an
    /// image is published to the read handles, and how many idle read
    /// handles are kept, each a connection over one. Both are nothing
    /// while the instance is evicted (§3.5).
    pub fn read_path_holds(&self) -> (bool, usize) {
        (
            self.readers.slot.current().is_some(),
            self.readers.idle().len(),
        )
    }

    /// Sets (or, with `None`, removes) a hook every read on a read handle
    /// runs while it holds the handle, before its work: for tests that
    /// show two reads inside the read path at once.
    #[cfg(any(test, feature = "testkit"))]
    pub fn set_read_hook(&self, hook: Option<ReadHook>) {
        *self
            .readers
            .hook
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = hook;
    }

    /// Runs `work` on what a search reads, where the [`Offload`] says: on a
    /// read handle, beside other reads and any write, when the writer has
    /// published its index's image; else on the writer's own view, under
    /// the instance lock, as [`SharedInstance::run`] (which wakes an
    /// evicted instance). `work` must only read. At most
    /// [`READ_HANDLES_IDLE_MAX`] reads are inside at once; the next waits.
    ///
    /// # Errors
    /// As [`SharedInstance::run`].
    ///
    /// # Panics
    /// With [`Offload::Pool`], if called outside a tokio runtime.
    pub async fn read<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce(ReadView<'_>) -> T + Send + 'static,
        T: Send + 'static,
    {
        let _permit = self.readers.permits.acquire().await;
        let readers = Arc::clone(&self.readers);
        match self.offloaded(move || readers.try_read(work)).await? {
            Ok(t) => Ok(t),
            Err(work) => self.run(move |i| work(i.view())).await,
        }
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
        let instance = self.instance.clone();
        self.offloaded(move || {
            let mut i = lock(&instance);
            if wake {
                i.rewake()?;
            }
            Ok(work(&mut i))
        })
        .await?
    }

    /// Runs `work` where the [`Offload`] says, with a panic caught.
    async fn offloaded<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        #[cfg(feature = "testkit")]
        crate::crashpoint::unless_dead(&self.dir).await;
        match self.offload {
            Offload::Inline => match catch_unwind(AssertUnwindSafe(work)) {
                Ok(t) => Ok(t),
                Err(payload) => Err(abandoned_by_panic(payload).await),
            },
            Offload::Pool => {
                let dispatch = tracing::dispatcher::get_default(|d| d.clone());
                let span = tracing::Span::current();
                let joined = tokio::task::spawn_blocking(move || {
                    tracing::dispatcher::with_default(&dispatch, || span.in_scope(work))
                })
                .await;
                match joined {
                    Ok(t) => Ok(t),
                    Err(e) if e.is_panic() => Err(abandoned_by_panic(e.into_panic()).await),
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

    /// An instance holding two documents, sealed in a snapshot (so its
    /// image is published), shared inline; and the kettle document's id.
    fn two_documents(dir: &std::path::Path) -> (SharedInstance, String) {
        let mut instance = crate::instance::instance_for_tests(dir);
        let (kettle, _) = crate::app::import::ingest_bytes(
            &mut instance,
            "upload:kettle.md",
            "kettle.md",
            b"# Kettle\n\nDescale the kettle monthly.",
            None,
        )
        .unwrap();
        crate::app::import::ingest_bytes(
            &mut instance,
            "upload:boiler.md",
            "boiler.md",
            b"# Boiler\n\nDescale the boiler yearly.",
            None,
        )
        .unwrap();
        instance.write_snapshot().unwrap();
        (SharedInstance::new(instance, Offload::Inline), kettle.id)
    }

    /// The titles on page 1 for `q`, searched as the production path does.
    fn titles(m: &SharedInstance, q: &str) -> Vec<String> {
        let page = current_thread()
            .block_on(crate::sibling::ruled::ruled_search(
                m,
                None,
                "ana@example.org",
                q,
                1,
            ))
            .unwrap()
            .page;
        page.results.into_iter().map(|r| r.title).collect()
    }

    /// A deletion, done under the instance lock.
    type Delete = fn(&mut Instance, &str);

    #[test]
    fn a_document_deleted_before_a_search_starts_is_never_in_its_page() {
        // The second row leaves the published image holding the deleted
        // passages, so only the store read decides: the handle that served
        // the first search (its connection read the store before the
        // deletion) is reused, and its request opens a fresh read
        // transaction, after the deletion's commit.
        let rows: [(&str, Delete, bool); 2] = [
            (
                "deleted through the instance: log, store, index, snapshot",
                |i, id| {
                    i.delete(id).unwrap();
                },
                false,
            ),
            (
                "deleted in the store alone: the published image still holds it",
                |i, id| {
                    let revision = i.store().live_revision(id).unwrap().unwrap();
                    let t = crate::storage::tombstone::Tombstone {
                        seq: 1,
                        doc_id: id.to_string(),
                        revision,
                        at: 1_000,
                    };
                    assert!(i.store_mut().apply_tombstone(&t).unwrap().deleted);
                },
                true,
            ),
        ];
        for (row, delete, same_image) in rows {
            let tmp = tempfile::tempdir().unwrap();
            let (m, kettle) = two_documents(tmp.path());
            assert_eq!(titles(&m, "descale").len(), 2, "{row}: presence");
            assert_eq!(m.reads(), 1, "{row}: served on a read handle");
            let before = m.readers.slot.current().unwrap();
            current_thread()
                .block_on(m.run(move |i| delete(i, &kettle)))
                .unwrap();
            let after = m.readers.slot.current().unwrap();
            assert_eq!(Arc::ptr_eq(&before, &after), same_image, "{row}");
            assert_eq!(titles(&m, "descale"), ["Boiler"], "{row}: absence");
            assert_eq!(m.reads(), 2, "{row}: served on a read handle");
        }
    }

    #[test]
    fn every_write_empties_the_published_image_until_a_snapshot_publishes_the_next() {
        let tmp = tempfile::tempdir().unwrap();
        let (m, _) = two_documents(tmp.path());
        assert!(m.readers.slot.current().is_some(), "published at sharing");
        let rt = current_thread();
        rt.block_on(m.run(|i| {
            crate::app::import::ingest_bytes(
                i,
                "upload:kettle-2.md",
                "kettle-2.md",
                b"# Percolator\n\nDescale the percolator weekly.",
                None,
            )
            .unwrap()
        }))
        .unwrap();
        assert!(m.readers.slot.current().is_none(), "the ingest emptied it");
        // Not yet in a snapshot: found on the writer's own index.
        assert!(titles(&m, "percolator").contains(&"Percolator".to_string()));
        assert_eq!(m.reads(), 0, "served under the lock");
        rt.block_on(m.run(|i| i.write_snapshot().unwrap())).unwrap();
        assert!(m.readers.slot.current().is_some(), "the snapshot published");
        assert!(titles(&m, "percolator").contains(&"Percolator".to_string()));
        assert_eq!(m.reads(), 1, "served on a read handle");
        rt.block_on(m.evict()).unwrap();
        assert!(m.readers.slot.current().is_none(), "eviction empties it");
        assert!(m.readers.idle().is_empty(), "and closes the idle handles");
        assert!(titles(&m, "percolator").contains(&"Percolator".to_string()));
        assert!(m.readers.slot.current().is_some(), "the re-wake published");
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
