//! `memoria-harness demo`: the reference memoria served on loopback beside four fake siblings left in faults, so a person sees every withheld and reconciling line the results page can say (§8.1, §4.1, §6.5).
//!
//! [`start`] serves each of [`SIBLINGS`] (the simulator's `FakeSibling`
//! over real loopback TCP, as `serve-fake` serves one, with the demo's
//! control route beside it), wakes memoria in a throwaway data directory
//! with the embedded Almendra Studio corpus, and serves the reference's own
//! router on `addr` with a `SiblingClient` whose dialer is the
//! [`LoopbackDialer`]. Then it arranges the faults, in this order, each
//! checked against memoria's store so a failed arrangement is an error and
//! never a page that quietly shows less:
//!
//! 1. memoria polls every sibling's S1 (the warm-up, §6.5) and holds every
//!    item at its last revision;
//! 2. Drive's log is restored whole and its announce cut short; a second
//!    poll gets `410` and marks Drive for re-announce, which cannot complete;
//! 3. Sheets revises one item (memoria's copy is now STALE), Docs restores
//!    one item to an older revision than memoria holds (AHEAD), and
//!    Calendar drops every call unanswered (UNKNOWN).
//!
//! A search for [`DEMO_QUERY`] then shows all four lines beside the visible
//! results. The warm-ups are the demo's own calls of `AppState::warm_up`:
//! `memoria::serve` would start one more beside the first request and undo
//! step 3, so the demo serves `memoria::router` itself.
//!
//! This is not a simulated run: real sockets and the wall clock are fine
//! here, and nothing in the simulator uses this module.

mod control;
mod siblings;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use memoria::{
    Admission, AppState, Dek, EgressMode, Instance, InstanceConfig, Offload, Owner, Sealer,
    SiblingClient, SiblingConfig, SignInDelivery, SystemClock,
};
use memoria_simulator::{
    Clock, Controller, FakeConfig, FakeSibling, ModelHandle, Outage, Rung, SubjectKind, Trace,
    TruncateAnnounce,
};
use tokio::task::JoinHandle;

pub use control::{ControlRequest, DemoControl, FAULT_ACTIONS, LoopbackDialer};
pub use siblings::{
    DEMO_QUERY, DEMO_TEAM, DemoItem, DemoSibling, Role, SIBLINGS, STALE_REVISION_BODY,
};

/// memoria's bearer token at every demo fake (a local fake's, not a secret).
pub const DEMO_TOKEN: &str = "demo-token";

/// The consumer name the fakes record memoria's token under.
pub const DEMO_CONSUMER: &str = "memoria";

/// The revision [`Role::Ahead`]'s item is restored to: its first (§4.1).
pub const AHEAD_RESTORED_REVISION: &str = "r1";

/// One fake sibling serving on loopback.
#[derive(Debug)]
pub struct ServedSibling {
    /// What it holds and the state it was left in.
    pub spec: DemoSibling,
    /// Its host as memoria dials it, `acme.<app>.oficina.works`.
    pub host: String,
    /// Where it listens, `http://127.0.0.1:PORT`: the `--url` of `fake-control`.
    pub url: String,
    /// The bound address.
    pub addr: SocketAddr,
    /// The fake itself, to flip faults from the same process.
    pub fake: FakeSibling,
    handle: JoinHandle<()>,
}

/// Sign-in links as memoria delivers them: printed on stdout when asked
/// (the terminal, as `memoria serve` prints them), and the last one kept.
#[derive(Debug, Default)]
struct Links {
    print: bool,
    last: Mutex<Option<String>>,
}

impl SignInDelivery for Links {
    fn deliver(&self, owner: &Owner, url: &str) {
        if self.print {
            println!("sign-in link for {}: {url}", owner.address());
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(url.to_owned());
    }
}

/// A running demo: memoria and its four fakes. Dropping it stops them all
/// and removes the data directory.
#[derive(Debug)]
pub struct Demo {
    /// memoria's address, `http://127.0.0.1:PORT`.
    pub url: String,
    /// The siblings, in [`SIBLINGS`]'s order.
    pub siblings: Vec<ServedSibling>,
    state: AppState,
    links: Arc<Links>,
    server: JoinHandle<()>,
    /// With AI on: the stub provider, where it listens (loopback), and
    /// whether it answers a real model's vectors.
    pub provider: Option<(memoria_simulator::StubProvider, SocketAddr, bool)>,
    _data: tempfile::TempDir,
}

impl Demo {
    /// memoria's state, as its router serves it.
    #[must_use]
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Mints one sign-in link per owner (one owner, `owner@localhost`) and
    /// delivers it: printed, if [`start`] was asked to print.
    pub fn deliver_sign_in_links(&self) {
        self.state.deliver_sign_in_links();
    }

    /// The last sign-in link delivered. Following a link delivers the next.
    #[must_use]
    pub fn last_sign_in_link(&self) -> Option<String> {
        self.links
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The sibling left in `role`.
    ///
    /// # Panics
    /// Never for the shipped [`SIBLINGS`], which hold one sibling per role.
    #[must_use]
    pub fn sibling(&self, role: Role) -> &ServedSibling {
        self.siblings
            .iter()
            .find(|s| s.spec.role == role)
            .expect("one sibling per role")
    }

    /// What to print for a designer: each sibling with its state and the
    /// `fake-control` commands that bring its line back, then every action.
    /// `exe` is the `memoria-harness` to name.
    #[must_use]
    pub fn instructions(&self, exe: &str) -> String {
        let control = |role: Role, action: &str| {
            let s = self.sibling(role);
            format!("    {exe} fake-control --url {} {action}\n", s.url)
        };
        let mut out = format!(
            "search \"{DEMO_QUERY}\" to see every line. The siblings, and commands that flip them live:\n"
        );
        for s in &self.siblings {
            out.push_str(&format!(
                "  {} {}\n",
                app_name(s.spec.app),
                s.spec.role.shows()
            ));
            let item = s.spec.fault_item;
            match s.spec.role {
                Role::NoAnswer => {
                    out.push_str(&control(Role::NoAnswer, "outage off"));
                    out.push_str(&control(Role::NoAnswer, "outage hang"));
                }
                Role::Stale => {
                    out.push_str(&control(Role::Stale, &format!("bump-revision {item}")));
                }
                Role::Ahead => {
                    // A revision memoria then refetches on STALE, and a
                    // restore behind it: AHEAD on the search after next.
                    out.push_str(&control(Role::Ahead, &format!("bump-revision {item}")));
                    out.push_str("    (search once: STALE, and memoria refetches it), then\n");
                    out.push_str(&control(
                        Role::Ahead,
                        &format!("partial-restore {item} {AHEAD_RESTORED_REVISION}"),
                    ));
                }
                Role::Reconciling => {
                    out.push_str(
                        "    reconciled (then search twice: the first search pulls it):\n",
                    );
                    out.push_str(&control(Role::Reconciling, "announce whole"));
                    out.push_str("    reconciling again (then search twice):\n");
                    out.push_str(&control(Role::Reconciling, "announce truncate"));
                    out.push_str(&control(Role::Reconciling, "whole-log-restore"));
                }
            }
        }
        if let Some((_, at, semantic)) = &self.provider {
            let what = if *semantic {
                "answering all-MiniLM-L6-v2's vectors (a real model)"
            } else {
                "(NOT semantic)"
            };
            out.push_str(&format!(
                "  the stub embedding provider {what} on http://{at}: searches rank by words and meaning; take it down and a search says it ranked by words alone:\n"
            ));
            out.push_str(&format!(
                "    {exe} fake-control --url http://{at} down 503\n"
            ));
            out.push_str(&format!(
                "    {exe} fake-control --url http://{at} down off\n"
            ));
        }
        out.push_str("every sibling's control takes:\n");
        for (action, what) in FAULT_ACTIONS {
            out.push_str(&format!("  {action:<30} {what}\n"));
        }
        out.push_str(&format!(
            "  {:<30} the fake's own: a new item, a new revision, a partial or whole-log restore, a deletion, the seeded state\n",
            "create ITEM WORDS… | bump-revision ITEM | partial-restore ITEM REV | whole-log-restore | delete ITEM | reset"
        ));
        out
    }
}

/// An app's name as the page shows it: `sheets` → `Sheets`.
fn app_name(app: &str) -> String {
    memoria::app_display_name(app)
}

impl Drop for Demo {
    fn drop(&mut self) {
        self.server.abort();
        for s in &self.siblings {
            s.handle.abort();
        }
    }
}

/// memoria's S2 subject for the demo's one owner, known to every fake as a member.
fn owner() -> &'static str {
    memoria::DEV_OWNER
}

/// Serves the four fakes, wakes and serves memoria on `addr`, and arranges
/// the faults (the module's steps 1–3). `print_links`: sign-in links go to
/// stdout as well. Call inside a multi-thread tokio runtime.
///
/// # Errors
/// A message for a failed bind, store, or arrangement step, naming the
/// sibling and what memoria's store held instead.
pub async fn start(addr: SocketAddr, print_links: bool) -> Result<Demo, String> {
    start_with(addr, print_links, false).await
}

/// The key the demo's memoria presents to the stub provider.
pub const DEMO_PROVIDER_KEY: &str = "demo-stub-provider-key";

/// As [`start`]; with `ai`, memoria wakes with AI on and embeds through the
/// stub provider, served on loopback beside the fakes (its vectors are NOT
/// semantic): searches rank by words and meaning fused, and with the stub
/// taken down (`fake-control --url PROVIDER down 503`) a search still
/// answers, by words alone, with the loud line.
///
/// # Errors
/// As [`start`], and a failed bind of the stub provider.
pub async fn start_with(addr: SocketAddr, print_links: bool, ai: bool) -> Result<Demo, String> {
    start_with_model(addr, print_links, ai, None).await
}

/// As [`start_with`], the stub answering `model`'s vectors when given (a
/// real model, all-MiniLM-L6-v2: searches rank by meaning, not only by
/// shared words; `memoria-harness demo --ai --model minilm`).
///
/// # Errors
/// As [`start_with`].
pub async fn start_with_model(
    addr: SocketAddr,
    print_links: bool,
    ai: bool,
    model: Option<memoria_simulator::ModelEmbedder>,
) -> Result<Demo, String> {
    let semantic = model.is_some();
    let mut siblings = Vec::new();
    for spec in SIBLINGS {
        siblings.push(serve_sibling(*spec).await?);
    }

    let data = tempfile::Builder::new()
        .prefix("memoria-harness-demo-")
        .tempdir()
        .map_err(|e| format!("creating the demo data directory: {e}"))?;
    let dir = data.path().to_path_buf();
    let instance = tokio::task::spawn_blocking(move || {
        let mut instance = Instance::wake(
            InstanceConfig {
                data_dir: dir,
                admission: Admission::dev_default(),
                egress: if ai {
                    EgressMode::AiOn
                } else {
                    EgressMode::AiOff
                },
            },
            Sealer::new(&Dek::generate()),
            Arc::new(SystemClock),
        )?;
        memoria::demo::seed(&mut instance)?;
        Ok::<_, memoria::Error>(instance)
    })
    .await
    .map_err(|e| format!("waking memoria: {e}"))?
    .map_err(|e| format!("waking memoria: {e}"))?;

    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("binding {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("reading the bound address: {e}"))?;
    let configs: Vec<SiblingConfig> = siblings
        .iter()
        .map(|s| SiblingConfig {
            url: format!("http://{}:{}", s.host, s.addr.port()),
            token: DEMO_TOKEN.into(),
        })
        .collect();
    let dialer = LoopbackDialer::new(siblings.iter().map(|s| s.host.clone()));
    let client = SiblingClient::new(DEMO_TEAM, &configs, Arc::new(dialer))
        .map_err(|e| format!("configuring the sibling client: {e}"))?;
    let links = Arc::new(Links {
        print: print_links,
        last: Mutex::default(),
    });
    let state = AppState::new(
        instance,
        links.clone(),
        format!("http://{local}"),
        Offload::Pool,
    )
    .with_siblings(client);
    let mut provider = None;
    let state = if ai {
        let stub = match model {
            Some(m) => memoria_simulator::StubProvider::new().with_model(m),
            None => memoria_simulator::StubProvider::new(),
        };
        let (at, _) = memoria_simulator::serve_loopback(stub.router(), ([127, 0, 0, 1], 0).into())
            .await
            .map_err(|e| format!("serving the stub provider: {e}"))?;
        let key = memoria::ProviderKey::parse(DEMO_PROVIDER_KEY)
            .map_err(|e| format!("the stub provider's key: {e}"))?;
        // The stub answers chat calls by quoting the passages it was sent,
        // cited: a cited 🤖 paragraph without a model (issue 14's demo).
        stub.set_chat_extractive(true);
        provider = Some((stub, at, semantic));
        let state = state
            .with_embedder(memoria::EmbedClient::plain_http_stand_in(
                Arc::new(memoria::TcpDialer),
                &at.ip().to_string(),
                at.port(),
                key.clone(),
            ))
            .with_chat(memoria::ChatClient::plain_http_stand_in(
                Arc::new(memoria::TcpDialer),
                &at.ip().to_string(),
                at.port(),
                key,
            ));
        // The canary, then the embedding queue, beside the page (as `serve`).
        state.start_embedding();
        state
    } else {
        state
    };
    let router = memoria::router(state.clone());
    let server = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            eprintln!("memoria-harness demo: serving memoria stopped: {e}");
        }
    });

    let demo = Demo {
        url: format!("http://{local}"),
        siblings,
        state,
        links,
        server,
        provider,
        _data: data,
    };
    arrange(&demo).await?;
    Ok(demo)
}

async fn serve_sibling(spec: DemoSibling) -> Result<ServedSibling, String> {
    let clock = Clock::tokio();
    let model = ModelHandle::new(clock.clone());
    model.add_member(owner(), Some("prs_owner"));
    for item in spec.items {
        let (first, later) = item
            .bodies
            .split_first()
            .ok_or_else(|| format!("{}: item {} has no body", spec.app, item.id))?;
        model
            .add_item(item.id, Rung::Team, item.title, first)
            .map_err(|e| format!("{}: {}: {e}", spec.app, item.id))?;
        for body in later {
            model
                .revise(item.id, item.title, body)
                .map_err(|e| format!("{}: {}: {e}", spec.app, item.id))?;
        }
    }
    // The team's spreadsheets: §8.7's worked example (FY2024..FY2026), so
    // a numeric question on the page ("average revenue in June the last 3
    // years") shows S6's number, and one about General cells the refusal.
    if spec.app == "sheets" {
        model
            .with(|m| m.add_worked_example())
            .map_err(|e| format!("{}: the worked example: {e}", spec.app))?;
    }
    let tokens = vec![(DEMO_CONSUMER.to_owned(), DEMO_TOKEN.to_owned())];
    let fake = FakeSibling::new(
        FakeConfig {
            team: DEMO_TEAM.into(),
            app: spec.app.into(),
            keys_on: SubjectKind::Address,
            tokens: tokens.clone(),
        },
        model,
        Trace::new(),
        clock,
    );
    let control = DemoControl::new(fake.clone(), Controller::new(fake.clone(), tokens));
    let served = crate::conform::fake::serve_fake(
        &fake,
        control.router(),
        SocketAddr::from(([127, 0, 0, 1], 0)),
    )
    .await
    .map_err(|e| format!("{}: {e}", spec.app))?;
    Ok(ServedSibling {
        spec,
        host: fake.host().to_owned(),
        url: served.url,
        addr: served.addr,
        fake,
        handle: served.handle,
    })
}

/// The revision memoria holds of `item`, or `None`.
async fn held_revision(state: &AppState, app: &str, item: &str) -> Result<Option<String>, String> {
    let (a, i) = (app.to_owned(), item.to_owned());
    let held = state
        .blocking(move |instance| instance.store().sibling_document(&a, &i))
        .await
        .and_then(|r| r)
        .map_err(|e| format!("{app}: reading memoria's copy of {item}: {e}"))?;
    Ok(held.and_then(|d| d.provenance).map(|p| p.revision))
}

/// The module's steps 1–3, each checked in memoria's store.
async fn arrange(demo: &Demo) -> Result<(), String> {
    let state = &demo.state;
    // 1. Every item at its last revision.
    for report in state.warm_up().await {
        if let Some(e) = &report.feed_error {
            return Err(format!("{}: the first S1 poll failed: {e}", report.app));
        }
    }
    for s in &demo.siblings {
        for item in s.spec.items {
            let want = format!("r{}", item.bodies.len());
            let held = held_revision(state, s.spec.app, item.id).await?;
            if held.as_deref() != Some(want.as_str()) {
                return Err(format!(
                    "{}: memoria holds {:?} of {} after the warm-up, not {want}",
                    s.spec.app, held, item.id
                ));
            }
        }
    }
    // 2. The reconciling sibling: a whole-log restore, an announce that
    //    never closes, and a poll that reads the 410.
    let drive = demo.sibling(Role::Reconciling);
    drive
        .fake
        .faults()
        .set_truncate_announce(Some(TruncateAnnounce::NoClose));
    let restored = drive.fake.model().snapshot();
    drive.fake.model().restore_whole(&restored);
    state.warm_up().await;
    let app = drive.spec.app.to_owned();
    let marked = state
        .blocking(move |i| i.store().sibling_state(&app).map(|s| s.reannounce))
        .await
        .and_then(|r| r)
        .map_err(|e| format!("{}: reading the re-announce mark: {e}", drive.spec.app))?;
    if !marked {
        return Err(format!(
            "{}: a poll after a whole-log restore did not mark it for re-announce",
            drive.spec.app
        ));
    }
    // 3. STALE, AHEAD, UNKNOWN.
    let stale = demo.sibling(Role::Stale);
    let title = stale
        .spec
        .items
        .iter()
        .find(|i| i.id == stale.spec.fault_item)
        .map_or("", |i| i.title);
    stale
        .fake
        .model()
        .revise(stale.spec.fault_item, title, STALE_REVISION_BODY)
        .map_err(|e| format!("{}: {e}", stale.spec.app))?;
    let ahead = demo.sibling(Role::Ahead);
    ahead
        .fake
        .model()
        .restore_item_to(ahead.spec.fault_item, AHEAD_RESTORED_REVISION)
        .map_err(|e| format!("{}: {e}", ahead.spec.app))?;
    demo.sibling(Role::NoAnswer)
        .fake
        .faults()
        .set_outage(Some(Outage::Refuse));
    Ok(())
}
