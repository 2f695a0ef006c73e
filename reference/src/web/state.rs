//! The state behind the router: the instance, sessions, the sibling client, the follow-up syncs a ruling started, the scopes a brief reads, and with AI on the provider client and the embedding loop (§8.1, §6.5, §8.3).
//!
//! Size: the router's state and its background tasks (pulls, roster, embedding, idle eviction); issue 29's application layer takes the use-cases out of it.
//!
//! A handler never locks the instance: store work goes through
//! [`AppState::blocking`], which runs it where the state's [`Offload`] says
//! (off the async worker threads in production, issue 10). What a request
//! needs before it reaches the store is copied here when the instance
//! wakes, so the session check and every footer read no lock at all: the
//! clock and the egress mode, fixed at wake, and the owners list's source,
//! a handle that reads the list again on every question (§4.3: admission
//! is read, not held).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;

use super::SIGN_IN_LINK_TTL_S;
use crate::access::admission::{Admission, Owner, Standing};
use crate::access::classifier::{NoClassifier, SignInClassifier};
use crate::access::connector::Connectors;
use crate::access::home::HomeClient;
use crate::access::roster::{ROSTER_REFRESH_S, ROSTER_RETRY_S, RosterFault, RosterLack};
use crate::access::session::{
    Auth, Session, SignInDelivery, cookie, prune, random_token, token_hash,
};
use crate::ai::canary::CanaryState;
use crate::ai::chat::ChatClient;
use crate::ai::embed::EmbedClient;
use crate::app::queue::DrainReport;
use crate::brief::{Brief, BriefError, BriefRequest, Scopes};
use crate::clock::Clock;
use crate::error::Error;
use crate::instance::{Instance, ReadView};
use crate::offload::{Offload, SharedInstance};
use crate::page::Freshness;
use crate::page::{SearchError, SearchPage, SearchResult};
use crate::policy::egress::EgressMode;
use crate::search::facts::FactQuery;
use crate::search::facts::model::{self, MODEL_KINDS, MODEL_TIER, ModelFailure};
use crate::sibling::sync::SyncReport;
use crate::sibling::{Puller, SiblingClient};
use crate::web::SESSION_COOKIE;

/// How long the embedding loop waits for [`AppState::embed_soon`] before it
/// drains the queue anyway, in seconds: a failed drain (the provider down)
/// is retried at this pace, which is also the most a chunk waits behind an
/// ingest nobody announced. A chosen figure: one minute keeps a down
/// provider from being called more than 60 times an hour.
pub const EMBED_DRAIN_INTERVAL_S: u64 = 60;

pub use crate::config::IDLE_EVICT_DEFAULT_S;

/// One background task a running server keeps (the roster loop, the
/// embedding loop, the idle watch), shared by every clone of the state:
/// starting it again aborts the one before, and stopping it aborts it, as a
/// process's tasks end when it exits.
#[derive(Clone, Default)]
struct TaskSlot(Arc<Mutex<Option<tokio::task::JoinHandle<()>>>>);

impl TaskSlot {
    /// Keeps `handle`, aborting the task it replaces.
    fn set(&self, handle: tokio::task::JoinHandle<()>) {
        if let Some(old) = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(handle)
        {
            old.abort();
        }
    }

    /// Aborts the task kept, if any.
    fn stop(&self) {
        if let Some(h) = self.0.lock().unwrap_or_else(|p| p.into_inner()).take() {
            h.abort();
        }
    }
}

/// Shared state behind the router.
#[derive(Clone)]
pub struct AppState {
    pub(crate) instance: SharedInstance,
    /// The instance's clock and egress mode, fixed at wake.
    clock: Arc<dyn Clock>,
    /// The instance's owners source: the same handle, read on every question.
    admission: Admission,
    egress: EgressMode,
    pub(crate) auth: Arc<Mutex<Auth>>,
    pub(crate) delivery: Arc<dyn SignInDelivery>,
    /// What the suite's sign-in does with an admitted address before its
    /// link is sent (§3.2); [`NoClassifier`] unless
    /// [`AppState::with_sign_in_classifier`] names one.
    classifier: Arc<dyn SignInClassifier>,
    pub(crate) base_url: String,
    pub(crate) siblings: Option<Arc<SiblingClient>>,
    /// Starts every sibling pull: on wake, on each question, and as a
    /// ruling's follow-up (§6.1, [`Puller`]); `None` without siblings.
    puller: Option<Puller>,
    pub(crate) warm_up: Arc<Mutex<Option<tokio::task::JoinHandle<Vec<SyncReport>>>>>,
    /// The provider client, with AI on (§8.3); `None` with AI off, and then
    /// nothing is ever embedded or sent.
    pub(crate) embedder: Option<Arc<EmbedClient>>,
    /// The provider's chat client, with AI on (§8.2, §8.3): answers and
    /// §8.9's extraction; `None` with AI off, and then no prompt is built.
    pub(crate) chat: Option<Arc<ChatClient>>,
    /// Wakes the embedding loop after an ingest ([`AppState::embed_soon`]).
    embed_wake: Arc<tokio::sync::Notify>,
    /// The passages the provider refuses to embed, set aside by the drains
    /// and counted on the sources page (`app/queue.rs`).
    embed_aside: crate::app::queue::SetAside,
    /// Writes the derived artefacts with AI on (§5.2): after every pull,
    /// upload and connector sync, and when a ruling asks.
    artefacts: crate::app::artefacts::ArtefactWriter,
    /// What the embedding canary found on this start (§8.2, gate 30).
    canary: Arc<Mutex<CanaryState>>,
    /// The projects and the organisation collection `/brief` reads
    /// (`brief-organisation-read.md` §1); [`Scopes::none`] unless
    /// [`AppState::with_scopes`] names them.
    scopes: Arc<Scopes>,
    /// The connectors and their credentials (§9.1); [`Connectors::none`]
    /// unless [`AppState::with_connectors`] names them.
    connectors: Arc<Connectors>,
    /// The home's client, in suite shape (§4.3): the roster is pulled from
    /// it into the admission's roster copy.
    home: Option<Arc<HomeClient>>,
    /// The roster loop [`AppState::wake_home`] started, stopped by
    /// [`AppState::stop_home`].
    roster_loop: TaskSlot,
    /// The embedding loop, with AI on, while the server runs
    /// ([`AppState::start_embedding`], [`AppState::stop_embedding`]).
    embed_loop: TaskSlot,
    /// The idle watch, while the server runs
    /// ([`AppState::start_idle_eviction`], [`AppState::stop_idle_eviction`]).
    idle_loop: TaskSlot,
    /// How long without a request before the decrypted index is evicted
    /// (§3.5, `MEMORIA_IDLE_EVICT_S`); `None` keeps it for good.
    idle_evict: Option<std::time::Duration>,
}

/// What the session check found for one request's cookie (§4.3).
#[derive(Debug, Clone)]
pub(crate) enum SessionCheck {
    /// A live session of a person admitted now.
    Admitted(Session),
    /// A live session of a person whose team standing cannot be
    /// established now (suite shape: the roster copy is missing or stale).
    Lacking(Session, RosterLack),
    /// No live session, or one of a person refused now.
    None,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// State for an instance; `base_url` is what sign-in links start with,
    /// e.g. `http://127.0.0.1:7878`. `offload` is where store work runs:
    /// [`Offload::Pool`] for `memoria serve`, [`Offload::Inline`] inside a
    /// simulation.
    pub fn new(
        instance: Instance,
        delivery: Arc<dyn SignInDelivery>,
        base_url: impl Into<String>,
        offload: Offload,
    ) -> AppState {
        let clock = instance.clock().clone();
        let admission = instance.admission().clone();
        let egress = instance.egress();
        let instance = SharedInstance::new(instance, offload);
        AppState {
            clock,
            admission,
            egress,
            artefacts: crate::app::artefacts::ArtefactWriter::new(instance.clone()),
            instance,
            auth: Arc::new(Mutex::new(Auth::default())),
            delivery,
            classifier: Arc::new(NoClassifier),
            base_url: base_url.into(),
            siblings: None,
            puller: None,
            warm_up: Arc::default(),
            embedder: None,
            chat: None,
            embed_wake: Arc::default(),
            embed_aside: crate::app::queue::SetAside::default(),
            canary: Arc::new(Mutex::new(CanaryState::Unchecked)),
            scopes: Arc::new(Scopes::none()),
            connectors: Arc::new(Connectors::none()),
            home: None,
            roster_loop: TaskSlot::default(),
            embed_loop: TaskSlot::default(),
            idle_loop: TaskSlot::default(),
            idle_evict: Some(std::time::Duration::from_secs(IDLE_EVICT_DEFAULT_S)),
        }
    }

    /// The same state, evicting the decrypted index after `idle` without a
    /// request (§3.5), or never with `None`; [`IDLE_EVICT_DEFAULT_S`] unless
    /// this names another.
    pub fn with_idle_evict(mut self, idle: Option<std::time::Duration>) -> AppState {
        self.idle_evict = idle;
        self
    }

    /// How many times an idle spell has evicted the decrypted index since
    /// this state started (§3.5, [`AppState::start_idle_eviction`]).
    pub fn idle_evictions(&self) -> u64 {
        self.instance.evictions()
    }

    /// Counts a request (the router calls this on every one): the instance
    /// is not idle.
    pub(crate) fn touch(&self) {
        self.instance.touch();
    }

    /// Starts the idle watch `memoria serve` runs (§3.5): once
    /// [`AppState::with_idle_evict`]'s time passes with no request, the
    /// decrypted index and vectors are evicted ([`Instance::evict`]); the
    /// next request wakes them ([`SharedInstance::run`]). Background work
    /// (embedding, the roster) neither counts as a request nor wakes it.
    pub fn start_idle_eviction(&self) {
        let Some(idle) = self.idle_evict else {
            return;
        };
        let instance = self.instance.clone();
        let handle = tokio::spawn(async move {
            loop {
                let seen = instance.uses();
                tokio::time::sleep(idle).await;
                if instance.uses() == seen
                    && !instance.is_evicted()
                    && let Err(e) = instance.evict().await
                {
                    tracing::warn!(kind = ?e.kind(), "the idle index could not be evicted");
                }
            }
        });
        self.idle_loop.set(handle);
    }

    /// Stops the idle watch (the server is stopping). A process that exits
    /// ends its watch; a simulated restart must too, or the stopped
    /// server's watch would go on and, after an idle spell, seal its own
    /// stale index into the data directory the new server wakes from.
    pub fn stop_idle_eviction(&self) {
        self.idle_loop.stop();
    }

    /// The same state in suite shape: the roster is pulled from `home`
    /// into the admission's roster copy, on wake beside the siblings'
    /// warm-up ([`AppState::wake_home`], §6.5) and again every
    /// [`ROSTER_REFRESH_S`] ([`ROSTER_RETRY_S`] after a failure, so a copy
    /// past its TTL is pulled again at once). An instance whose admission
    /// has no roster copy ([`Admission::with_roster`]) pulls nothing.
    pub fn with_home(mut self, home: HomeClient) -> AppState {
        self.home = Some(Arc::new(home));
        self
    }

    /// Pulls the roster once and applies it to the copy (suite call 8):
    /// `None` in lone shape, else the outcome as applied (`Ok` with the
    /// generation and epoch adopted only when the copy was refreshed).
    pub async fn pull_roster(&self) -> Option<Result<(String, u64), RosterFault>> {
        let (home, copy) = (self.home.as_ref()?, self.admission.roster()?);
        // Nothing adopted yet since start: judge this pull against what
        // the store kept from before it.
        if copy.adopted().is_none() {
            self.remember_roster_coordinates().await;
        }
        let pulled = home.pull().await;
        let applied = copy.apply(pulled);
        if applied.is_ok() {
            self.keep_roster_coordinates().await;
        }
        Some(applied)
    }

    /// Writes the roster copy's adopted generation and epoch to the store
    /// and to the roster mark beside the tombstone log
    /// ([`crate::storage::roster_mark`]), so that a restart, or a restore
    /// of the data directory, judges the next pull against them (§4.3,
    /// §7.4). A failed write is logged, its kind only; the copy in memory
    /// stands.
    pub(crate) async fn keep_roster_coordinates(&self) {
        let Some(copy) = self.admission.roster() else {
            return;
        };
        let Some((generation, epoch)) = copy.adopted() else {
            return;
        };
        let team = copy.team().to_owned();
        let written = self
            .instance
            .run_cold(move |i| {
                i.store().set_roster_held(&team, &generation, epoch)?;
                crate::storage::roster_mark::write(i.tombstone_dir(), &team, &generation, epoch)
            })
            .await
            .and_then(|r| r);
        if let Err(e) = written {
            tracing::warn!(kind = ?e.kind(), "the roster's coordinates were not kept in the store");
        }
    }

    /// Remembers the roster coordinates kept from before this start
    /// ([`crate::access::roster::RosterCopy::remember`]): the roster mark
    /// beside the tombstone log when there is one, which a restore of the
    /// data directory does not rewind (§7.4), else the store's row; a mark
    /// or a store that cannot be read remembers nothing (logged, its kind
    /// only).
    pub(crate) async fn remember_roster_coordinates(&self) {
        let Some(copy) = self.admission.roster() else {
            return;
        };
        let team = copy.team().to_owned();
        match self
            .instance
            .run_cold(
                move |i| match crate::storage::roster_mark::read(i.tombstone_dir(), &team)? {
                    Some(mark) => Ok(Some(mark)),
                    None => i.store().roster_held(&team),
                },
            )
            .await
            .and_then(|r| r)
        {
            Ok(Some((generation, epoch))) => copy.remember(&generation, epoch),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(kind = ?e.kind(), "the roster's kept coordinates could not be read");
            }
        }
    }

    /// Starts the roster loop in suite shape: a pull now, on wake and
    /// before anyone has asked (§6.5), then one every [`ROSTER_REFRESH_S`]
    /// while pulls succeed and every [`ROSTER_RETRY_S`] while they fail.
    /// In lone shape, starts nothing.
    pub fn wake_home(&self) {
        if self.home.is_none() || self.admission.roster().is_none() {
            return;
        }
        let state = self.clone();
        let handle = tokio::spawn(async move {
            loop {
                let ok = matches!(state.pull_roster().await, Some(Ok(_)));
                let wait = if ok { ROSTER_REFRESH_S } else { ROSTER_RETRY_S };
                tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
            }
        });
        self.roster_loop.set(handle);
    }

    /// Stops the wake's warm-up and every sibling pull still running (the
    /// server is stopping, [`Puller::stop`]).
    pub fn stop_pulls(&self) {
        if let Some(h) = self
            .warm_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            h.abort();
        }
        if let Some(p) = &self.puller {
            p.stop();
        }
    }

    /// Stops the roster loop, if one runs (the server is stopping).
    pub fn stop_home(&self) {
        self.roster_loop.stop();
    }

    /// The admission this state asks: the owners source, and in suite
    /// shape the roster copy.
    pub fn admission(&self) -> &Admission {
        &self.admission
    }

    /// The same state with the scopes a brief may name: the projects and
    /// the organisation collection (`memoria serve` reads them with
    /// [`Scopes::from_env`]). Without it every document is the team's and
    /// only the scope `team` is known.
    pub fn with_scopes(mut self, scopes: Scopes) -> AppState {
        self.scopes = Arc::new(scopes);
        self
    }

    /// The same state with the suite's sign-in classifier (§3.2): what
    /// `POST /auth/begin` runs over an admitted owner's address before the
    /// link is sent, and never over any other address (gate 33).
    pub fn with_sign_in_classifier(mut self, classifier: Arc<dyn SignInClassifier>) -> AppState {
        self.classifier = classifier;
        self
    }

    /// The sign-in classifier.
    pub(crate) fn classifier(&self) -> &dyn SignInClassifier {
        self.classifier.as_ref()
    }

    /// The same state with the connectors the ingest surface admits
    /// (§9.1; `memoria serve` reads them with [`Connectors::from_env`]).
    /// Without it every connector route refuses every request.
    pub fn with_connectors(mut self, connectors: Connectors) -> AppState {
        self.connectors = Arc::new(connectors);
        self
    }

    /// The connectors the ingest surface admits.
    pub(crate) fn connectors(&self) -> &Connectors {
        &self.connectors
    }

    /// The scopes a brief may name.
    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }

    /// The same state with AI on: every search embeds its query and ranks
    /// hybrid (§7), and the embedding loop [`serve`] starts drains the queue
    /// of chunks awaiting vectors. Only for an instance woken with AI on
    /// ([`EgressMode::AiOn`]), whose footer says what leaves.
    ///
    /// # Panics
    /// If the instance's egress mode is AI off: AI off means no egress, so a
    /// provider client beside it is a bug, never a configuration.
    pub fn with_embedder(mut self, client: EmbedClient) -> AppState {
        assert!(
            self.egress.embeds(),
            "a provider client needs an instance woken with AI on"
        );
        self.embedder = Some(Arc::new(client));
        self
    }

    /// The same state with the provider's chat client (§8.2, §8.3): with
    /// it, a search's page may carry a cited 🤖 answer (§8.4) and a model
    /// row in the address box (§8.9). Only for an instance woken with AI on.
    ///
    /// # Panics
    /// If the instance's egress mode is AI off, as [`AppState::with_embedder`].
    pub fn with_chat(mut self, client: ChatClient) -> AppState {
        assert!(
            self.egress.embeds(),
            "a provider client needs an instance woken with AI on"
        );
        let client = Arc::new(client);
        self.artefacts.set_chat(client.clone());
        self.chat = Some(client);
        self
    }

    /// The chat client, with AI on and one configured; `None` otherwise.
    pub fn chat(&self) -> Option<&ChatClient> {
        self.chat.as_deref()
    }

    /// Drains the embedding queue once ([`crate::app::queue::drain`]); with
    /// AI off, does nothing. What the loop runs, and what a gate awaits.
    pub async fn drain_embeddings(&self) -> DrainReport {
        match &self.embedder {
            Some(e) => {
                let now = self.clock.now_unix_s();
                crate::app::queue::drain(&self.instance, e, &self.embed_aside, now).await
            }
            None => DrainReport::default(),
        }
    }

    /// The passages the provider refuses to embed, set aside by the
    /// drains (`app/queue.rs`); empty with AI off.
    pub fn embeddings_set_aside(&self) -> &crate::app::queue::SetAside {
        &self.embed_aside
    }

    /// Checks the embedding canary now (§8.2: re-embedded on wake; recorded
    /// at first configuration) and keeps what it found for the sources
    /// page; with AI off, does nothing and returns [`CanaryState::Unchecked`].
    pub async fn check_canary(&self) -> CanaryState {
        let Some(e) = &self.embedder else {
            return CanaryState::Unchecked;
        };
        let state = crate::app::canary::check(&self.instance, e).await;
        *self.canary.lock().unwrap_or_else(|p| p.into_inner()) = state.clone();
        state
    }

    /// What the embedding canary found on this start.
    pub fn canary(&self) -> CanaryState {
        self.canary
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Asks the embedding loop to drain the queue now (after an ingest),
    /// and the derived artefacts to be brought up to date (§5.2).
    pub fn embed_soon(&self) {
        if self.embedder.is_some() {
            self.embed_wake.notify_one();
        }
        self.artefacts.soon();
    }

    /// Starts the embedding loop beside the server, with AI on: the canary
    /// checked once (§8.2), a drain now,
    /// then one whenever [`AppState::embed_soon`] asks, and at least every
    /// [`EMBED_DRAIN_INTERVAL_S`] (a failed drain is retried then). With AI
    /// off, starts nothing.
    pub fn start_embedding(&self) {
        if self.embedder.is_none() {
            return;
        }
        let state = self.clone();
        let handle = tokio::spawn(async move {
            state.check_canary().await;
            loop {
                // An evicted index has no vectors to add to; the request
                // that wakes it queues what it brings (§3.5).
                if !state.instance.is_evicted() {
                    state.drain_embeddings().await;
                }
                let wait = std::time::Duration::from_secs(EMBED_DRAIN_INTERVAL_S);
                let _ = tokio::time::timeout(wait, state.embed_wake.notified()).await;
            }
        });
        self.embed_loop.set(handle);
    }

    /// Stops the embedding loop (the server is stopping): a process that
    /// exits ends its loop, and a simulated restart must too, or the old
    /// instance's loop would go on draining beside the new one's.
    pub fn stop_embedding(&self) {
        self.embed_loop.stop();
    }

    /// The same state with a sibling client: sibling passages are ruled
    /// through S2 on every search (§8.1). Without one, each is UNKNOWN.
    pub fn with_siblings(mut self, client: SiblingClient) -> AppState {
        let client = Arc::new(client);
        // Every pull wakes the embedding loop: what it ingested is queued
        // (a permit no loop takes, with AI off, costs nothing).
        // And the artefacts are brought up to date (with AI off, a no-op).
        let embed_wake = self.embed_wake.clone();
        let artefacts = self.artefacts.clone();
        let puller = Puller::new(self.instance.clone(), client.clone(), self.clock.clone())
            .with_after(Arc::new(move || {
                embed_wake.notify_one();
                artefacts.soon();
            }));
        self.siblings = Some(client);
        self.puller = Some(puller);
        self
    }

    /// The puller behind every sibling pull, if siblings are configured.
    pub fn puller(&self) -> Option<&Puller> {
        self.puller.as_ref()
    }

    /// A question was asked: starts the pull of every sibling that is due
    /// (§6.1, [`Puller::question`]). Never waits. Called once the request
    /// is ruled, so its answer is what was held when it was asked, the
    /// same on every run, and the next question sees what the pull brought.
    pub(crate) fn questioned(&self) {
        if let Some(p) = &self.puller {
            p.question();
        }
    }

    /// The siblings a results page names as behind (§8.1,
    /// [`Puller::freshness`]); empty without siblings.
    pub(crate) async fn freshness(&self) -> Vec<Freshness> {
        match &self.puller {
            Some(p) => p.freshness().await,
            None => vec![],
        }
    }

    /// The sibling client, if configured.
    pub fn siblings(&self) -> Option<Arc<SiblingClient>> {
        self.siblings.clone()
    }

    /// The wake warm-up (§6.5): an S1 poll to every configured sibling, at
    /// once, with no query issued. Returns when every poll has finished;
    /// spawn it to run beside the server.
    pub async fn warm_up(&self) -> Vec<SyncReport> {
        match &self.puller {
            Some(p) => p.wake().await,
            None => vec![],
        }
    }

    /// Runs `work` on the instance where this state's [`Offload`] says, and
    /// returns its result: the one way a handler reaches the store.
    ///
    /// # Errors
    /// As [`SharedInstance::run`]: [`crate::ErrorKind::Abandoned`] if `work` panicked.
    pub async fn blocking<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce(&mut Instance) -> T + Send + 'static,
        T: Send + 'static,
    {
        self.instance.run(work).await
    }

    /// Runs `work`, which only reads, on a read handle beside other reads
    /// and any write, or on the writer's view under the lock while no image
    /// is published ([`SharedInstance::read`], issue 30): what a page that
    /// writes nothing reads through.
    ///
    /// # Errors
    /// As [`SharedInstance::read`].
    pub async fn read<T, F>(&self, work: F) -> Result<T, Error>
    where
        F: FnOnce(ReadView<'_>) -> T + Send + 'static,
        T: Send + 'static,
    {
        self.instance.read(work).await
    }

    /// Where this state runs store work.
    pub fn offload(&self) -> Offload {
        self.instance.offload()
    }

    /// The egress mode every page's footer states (§3.6).
    pub(crate) fn egress(&self) -> EgressMode {
        self.egress
    }

    /// Starts the wake warm-up beside the server (§6.5): every configured
    /// sibling gets an S1 poll now, unprompted, while nobody is waiting.
    /// [`serve`] calls this once, before it accepts the first request.
    pub fn wake_siblings(&self) {
        let state = self.clone();
        let handle = tokio::spawn(async move { state.warm_up().await });
        *self.warm_up.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
    }

    /// The running warm-up's handle, once: await it to know every sibling's
    /// first poll has finished. `None` before [`serve`] started one.
    pub fn take_warm_up(&self) -> Option<tokio::task::JoinHandle<Vec<SyncReport>>> {
        self.warm_up
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Searches as `asker`, ruling every sibling passage through S2 now
    /// (§8.1, [`crate::sibling::ruled`]), and starts the follow-ups: the
    /// refetch STALE asks for and the re-announce AHEAD marked (§4.1). With
    /// AI on, the query is embedded first and the ranking fused (§7).
    ///
    /// # Errors
    /// As [`crate::sibling::ruled::ruled_search_embedded`].
    pub async fn ruled_search(
        &self,
        asker: &str,
        q: &str,
        page: u32,
    ) -> Result<SearchPage, SearchError> {
        let semantic = crate::sibling::ruled::query_semantic(
            &self.instance,
            self.embedder.as_deref(),
            asker,
            q,
            page,
        )
        .await?;
        let results = crate::sibling::ruled::ruled_search_semantic(
            &self.instance,
            self.siblings.as_deref(),
            asker,
            q,
            page,
            semantic,
        );
        // §8.7: the numeric route, model-free, above the results of the
        // first page. It rules its operands' sheets itself, so it runs
        // beside the results' ruling, once the query is embedded, not after
        // the ruling: §6.5's "one page of results is one round of calls",
        // so a slow sibling costs the page one deadline, not two (the
        // explorer's `[safety:deadline]`).
        let numeric = async {
            if page <= 1 {
                Some(
                    crate::sibling::numeric::numeric_answer(
                        &self.instance,
                        self.siblings.as_deref(),
                        asker,
                        q,
                    )
                    .await,
                )
            } else {
                None
            }
        };
        let (ruled, numeric) = tokio::join!(results, numeric);
        let ruled = ruled?;
        self.start_follow_ups(&ruled.follow_ups);
        let mut page = ruled.page;
        if let Some((numeric, numeric_follow_ups)) = numeric {
            self.start_follow_ups(&numeric_follow_ups);
            page.numeric = numeric;
        }
        page.freshness = self.freshness().await;
        // After the ruling, so the page is what was held when it was asked.
        self.questioned();
        if let Some(chat) = &self.chat {
            self.model_facts(chat, q, &mut page).await;
        }
        Ok(page)
    }

    /// §8.9's model half, after the ruling and with AI on: for each model
    /// kind `q` names ([`MODEL_KINDS`]; a validator-backed kind has no way
    /// in), the top [`crate::search::facts::model::MODEL_PASSAGES_MAX`]
    /// ruled results still present are sent to the cheap model, and the
    /// proposals memoria can locate become a box on `page`. A failed call
    /// or a reply rejected whole leaves the box out and puts one loud line
    /// on the page ([`SearchPage::model_failure`]); never an error page.
    /// Logged: counts and error kinds only, never the query, a passage, an
    /// address or the reply (gates 4, 31).
    async fn model_facts(&self, chat: &ChatClient, q: &str, page: &mut SearchPage) {
        let query = FactQuery::parse(q);
        for kind in query.models.iter().filter(|k| MODEL_KINDS.contains(k)) {
            let gone = self.gone_since_ruling(&page.results).await;
            let sent = model::select(&page.results, |r| {
                !gone.contains(&(r.document_id.clone(), r.revision))
            });
            if sent.is_empty() {
                continue;
            }
            let outcome = match chat.complete(MODEL_TIER, &model::prompt(&sent)).await {
                Err(e) => Err(ModelFailure::Provider(e.kind())),
                Ok(reply) => model::decode_reply(&reply).map_err(ModelFailure::Reply),
            };
            match outcome {
                Err(failure) => {
                    tracing::warn!(sent = sent.len(), failed = ?failure, "the model half showed nothing");
                    page.model_failure = Some(failure);
                }
                Ok(proposals) => {
                    let made = model::model_box(*kind, &sent, &proposals, chat.models());
                    tracing::info!(
                        sent = sent.len(),
                        proposals = proposals.len(),
                        located = made.located,
                        refused = ?made.refused,
                        rows = made.facts.as_ref().map_or(0, |b| b.rows.len()),
                        "the model half ran"
                    );
                    page.facts.extend(made.facts);
                }
            }
        }
    }

    /// Which of `results`' top-ranked documents are gone now, or at another
    /// revision than the result carries: §8.9's thinning, read after the
    /// ruling. A store that cannot be read counts every one gone (logged,
    /// its kind): nothing is sent that could not be checked.
    async fn gone_since_ruling(&self, results: &[SearchResult]) -> BTreeSet<(String, i64)> {
        let top: Vec<(String, i64)> = results
            .iter()
            .filter(|r| r.rank <= model::MODEL_PASSAGES_MAX)
            .map(|r| (r.document_id.clone(), r.revision))
            .collect();
        let all = top.clone();
        let read = self
            .blocking(move |i| {
                top.into_iter()
                    .filter(|(id, revision)| {
                        !matches!(i.store().document(id), Ok(Some(d)) if d.revision == *revision)
                    })
                    .collect::<BTreeSet<_>>()
            })
            .await;
        read.unwrap_or_else(|e| {
            tracing::warn!(kind = ?e.kind(), "the model half could not read which results are present");
            all.into_iter().collect()
        })
    }

    /// Builds a brief for `asker` over this state's scopes, ruling every
    /// sibling passage in its pool through S2 now (§8.1,
    /// [`crate::sibling::ruled::ruled_brief`]), and starts the follow-ups
    /// as a search does. With AI on, the task is embedded first.
    ///
    /// # Errors
    /// As [`crate::sibling::ruled::ruled_brief`].
    pub async fn ruled_brief(
        &self,
        asker: &str,
        request: &BriefRequest,
    ) -> Result<Brief, BriefError> {
        let ruled = crate::sibling::ruled::ruled_brief(
            &self.instance,
            self.siblings.as_deref(),
            self.embedder.as_deref(),
            asker,
            request,
            &self.scopes,
        )
        .await?;
        self.start_follow_ups(&ruled.follow_ups);
        self.questioned();
        Ok(ruled.brief)
    }

    /// Opens a document for `asker`, ruling a sibling's through S2 now
    /// (§8.1, [`crate::sibling::ruled`]), and starts its follow-ups.
    pub(crate) async fn ruled_document(
        &self,
        asker: &str,
        id: &str,
    ) -> Result<crate::sibling::ruled::DocumentRuling, Error> {
        let ruled = crate::sibling::ruled::ruled_document(
            &self.instance,
            self.siblings.as_deref(),
            asker,
            id,
        )
        .await?;
        self.start_follow_ups(&ruled.follow_ups);
        self.questioned();
        Ok(ruled.ruling)
    }

    /// Starts the syncs `follow_ups` names, beside the request
    /// ([`Puller::follow_up`]).
    pub(crate) fn start_follow_ups(&self, follow_ups: &crate::sibling::ruled::FollowUps) {
        if let Some(p) = &self.puller {
            p.follow_up(follow_ups.apps());
        }
        if follow_ups.regenerate {
            self.artefacts.soon();
        }
    }

    /// Awaits every pull a question or a ruling's follow-up started so far,
    /// and any each led to, then the derived-artefact refreshes they and
    /// the rulings started (§5.2), and returns the pulls' reports in start
    /// order ([`Puller::settle`]). What a gate awaits instead of guessing how
    /// long a refetch takes; production never needs it.
    pub async fn settle_follow_ups(&self) -> Vec<SyncReport> {
        let reports = match &self.puller {
            Some(p) => p.settle().await,
            None => vec![],
        };
        // The artefacts the pulls and rulings asked for (§5.2).
        self.artefacts.settle().await;
        reports
    }

    /// The instance, shared with the router, for tests and gates that
    /// inspect it from their own thread; handlers use [`AppState::blocking`].
    pub fn instance(&self) -> Arc<Mutex<Instance>> {
        self.instance.instance()
    }

    /// The instance as handlers reach it, for gates and tools that rule a
    /// search through the one S2 path themselves ([`crate::ruled_search`]).
    pub fn shared_instance(&self) -> &SharedInstance {
        &self.instance
    }

    pub(crate) fn now(&self) -> i64 {
        self.clock.now_unix_s()
    }

    /// The admitted owner for `address` now, or `None`: the owners list
    /// read from its source on every call (§4.3), the source
    /// [`Instance::admit`] reads. `None` for everyone while the source
    /// cannot be read (fail closed).
    pub(crate) fn admit(&self, address: &str) -> Option<Owner> {
        self.admission.admit(address)
    }

    pub(crate) fn lock_auth(&self) -> std::sync::MutexGuard<'_, Auth> {
        self.auth.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Mints a one-time sign-in link for every owner on the list now and
    /// delivers each.
    pub fn deliver_sign_in_links(&self) {
        for owner in self.admission.owners() {
            self.deliver_sign_in_link(&owner);
        }
    }

    /// Mints a one-time sign-in link for `owner` and delivers it.
    pub fn deliver_sign_in_link(&self, owner: &Owner) {
        let token = random_token();
        let now = self.now();
        {
            let mut auth = self.lock_auth();
            prune(&mut auth.links, now, |(_, exp)| *exp);
            auth.links.insert(
                token_hash(&token),
                (owner.clone(), now + SIGN_IN_LINK_TTL_S),
            );
        }
        let url = format!("{}/auth/login?token={token}", self.base_url);
        self.delivery.deliver(owner, &url);
        tracing::info!("sign-in link delivered");
    }

    pub(crate) fn session(&self, headers: &HeaderMap) -> Option<Session> {
        match self.session_check(headers) {
            SessionCheck::Admitted(s) => Some(s),
            SessionCheck::Lacking(..) | SessionCheck::None => None,
        }
    }

    /// The session check: the cookie's live session, and its person's
    /// standing read now, never held by the session (§4.3).
    pub(crate) fn session_check(&self, headers: &HeaderMap) -> SessionCheck {
        let Some(id) = cookie(headers, SESSION_COOKIE) else {
            return SessionCheck::None;
        };
        let now = self.now();
        let s = {
            let auth = self.lock_auth();
            match auth.sessions.get(&token_hash(&id)) {
                Some(s) if s.expires_at > now => s.clone(),
                _ => return SessionCheck::None,
            }
        };
        // Admission is read, not held: a session whose person left the
        // owners list or the roster is refused; one whose standing cannot
        // be established (a stale roster) is withheld, sessions included.
        match self.admission.standing(s.owner.address()) {
            Standing::Admitted(_) => SessionCheck::Admitted(s),
            Standing::Lacking(lack) => SessionCheck::Lacking(s, lack),
            Standing::Refused => SessionCheck::None,
        }
    }
}
