//! One simulated world: memoria and its siblings as turmoil hosts, every setting drawn from one seed (§6.5, §10).
//!
//! Size: the World, its boot and the Memoria handle are one lifecycle; the browser client is the piece issue 29 names to move out.
//!
//! A [`World`] holds the fake siblings, their shared [`Trace`] and the
//! settings the seed chose. [`World::run`] builds a turmoil simulation with
//! one host per fake, one host for memoria serving through
//! [`memoria::serve`] (the function `memoria serve` runs, which starts
//! the warm-up), and a browser host where the scenario runs: it reaches
//! memoria over HTTP through a [`Memoria`]. Time is turmoil's: `tokio::time` inside
//! the scenario is simulated, and nothing reads the wall clock.
//!
//! memoria admits from an owners file ([`memoria::Admission::file`]) the
//! world writes before the run and a scenario may rewrite or remove during
//! it ([`Memoria::set_owners`], [`Memoria::remove_owners_file`]): admission
//! is read on every request (§4.3, gates 21 and 33).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use memoria::Admission;
use memoria::AppState;
use memoria::Clock as MemoriaClock;
use memoria::EgressMode;
use memoria::testkit::CapturedDelivery;
use memoria::testkit::TestResponse;
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig};
use memoria::{SiblingClient, SiblingConfig, SiblingToken};
use rand::{Rng as _, SeedableRng as _};

use crate::fake::SubjectKind;
use crate::fake::home::{FakeHome, HOME_LABEL};
use crate::fake::model::ModelHandle;
use crate::fake::provider::StubProvider;
use crate::fake::server::{FakeConfig, FakeSibling};
use crate::fake::trace::{Clock, Trace};
use crate::guard::{GuardedDialer, NetGuard};
use crate::keymail::{KEYMAIL_PORT, KeymailClassifier, MailDomain};
use crate::net::{TurmoilDialer, TurmoilListener, serve_turmoil};

/// memoria's team label (§6.3).
pub const TEAM: &str = "acme";
/// Another team's label, for hostile hosts (gate 11).
pub const OTHER_TEAM: &str = "beta";
/// memoria's own host in the simulation.
pub const MEMORIA_HOST: &str = "acme.memoria.oficina.works";
/// The simulated browser's host: people reach memoria from here.
pub const BROWSER_HOST: &str = "browser.acme.test";
/// The port memoria serves on in the simulation.
pub const MEMORIA_PORT: u16 = 80;
/// The port every fake listens on.
pub const SIBLING_PORT: u16 = 80;
/// The consumer name memoria's token is recorded under in traces.
pub const MEMORIA_CONSUMER: &str = "memoria";
/// Simulated start of every run: 2026-11-30T09:00:00Z, in Unix seconds.
pub const EPOCH_UNIX_S: i64 = 1_796_029_200;
/// The longest a simulated run may last, in simulated seconds: room for a
/// suite-shape run (§4.3), whose roster loop pulls every 300 s
/// (`ROSTER_REFRESH_S`) and whose liveness check waits for up to two more
/// pulls, and for the explorer's home spell that runs past one pull
/// (`explore`'s `home.rs`, 305 s more).
pub const SIMULATION_DURATION_S: u64 = 1_800;
/// One turmoil tick, in simulated milliseconds: every world's unless it
/// sets its own ([`World::set_tick_ms`]). Gate 23's deadlines are 10 ms
/// apart, so the gates keep 1 ms.
pub const TICK_MS: u64 = 1;
/// The coarsest tick a world may set ([`World::set_tick_ms`]), in simulated
/// ms: an eighth of memoria's sibling deadline
/// ([`memoria::SIBLING_DEADLINE_MS`], 800 ms), so a call's few network
/// hops, each delivered at a tick's end, stay well inside it.
pub const TICK_MS_MAX: u64 = 100;
/// The seed draws each link's one-way latency from this range, in simulated ms.
pub const LINK_LATENCY_MS: std::ops::RangeInclusive<u64> = 1..=3;
/// The owners memoria admits in every world: two people, for gate 5.
pub const OWNERS: [&str; 2] = ["ana@acme.test", "bea@acme.test"];
/// The home's host in a suite-shape world ([`World::use_home`], §4.3).
pub const HOME_HOST: &str = "acme.home.oficina.works";
/// The roster generation a suite-shape world's home starts in.
pub const HOME_GENERATION: &str = "gen-1";

/// memoria's clock inside a simulation: the epoch, plus whole days a
/// scenario skipped ([`Memoria::advance_days`]), plus turmoil's elapsed time.
/// Skipping days moves memoria's calendar (UTC days for the breakers)
/// without simulating a week of ticks.
#[derive(Debug, Clone, Default)]
pub struct SimClock {
    skipped_s: Arc<std::sync::atomic::AtomicI64>,
}

impl SimClock {
    /// Moves this clock (and every clone) forward by `days` whole days.
    pub fn advance_days(&self, days: i64) {
        self.advance_s(days * SECONDS_PER_DAY);
    }

    /// Moves this clock (and every clone) forward by `seconds`: memoria's
    /// calendar only (a roster copy ages past its TTL), not turmoil's timers.
    pub fn advance_s(&self, seconds: i64) {
        self.skipped_s
            .fetch_add(seconds, std::sync::atomic::Ordering::SeqCst);
    }
}

/// What [`Memoria::question_pulls`] searches for: a word no corpus holds, so
/// the question rules nothing; any question starts the
/// pulls that are due, whatever it finds.
pub const QUESTION_PULL_WORDS: &str = "xqpullquestion";

/// Seconds in a UTC day.
pub const SECONDS_PER_DAY: i64 = 86_400;

impl MemoriaClock for SimClock {
    fn now_unix_s(&self) -> i64 {
        let elapsed = turmoil::sim_elapsed().unwrap_or_default();
        EPOCH_UNIX_S
            + self.skipped_s.load(std::sync::atomic::Ordering::SeqCst)
            + i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
    }
}

/// A simulated run that failed: the seed, why, and how to replay it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("simulation failed at seed {seed}: {message}")]
pub struct SimFailure {
    /// The seed that drove the run.
    pub seed: u64,
    /// What went wrong, for a person to read: never branch on it.
    pub message: String,
    /// Set when memoria refused a configured sibling URL (§6.3): the typed
    /// refusal a caller matches on instead of the message.
    pub refused: Option<memoria::ConfigRefusal>,
}

/// One sibling to stand up: its team and app labels and the subject kind it keys on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiblingSpec {
    /// Team label; [`TEAM`] for memoria's own siblings.
    pub team: String,
    /// App label, e.g. `sheets`.
    pub app: String,
    /// What S2 keys on.
    pub keys_on: SubjectKind,
    /// Whether memoria is configured with this sibling.
    pub configured: bool,
}

impl SiblingSpec {
    /// One of memoria's own siblings, keyed on addresses.
    pub fn own(app: &str) -> SiblingSpec {
        SiblingSpec {
            team: TEAM.into(),
            app: app.into(),
            keys_on: SubjectKind::Address,
            configured: true,
        }
    }

    /// Another team's sibling: it runs, and memoria is not configured with it.
    pub fn foreign(app: &str) -> SiblingSpec {
        SiblingSpec {
            team: OTHER_TEAM.into(),
            app: app.into(),
            keys_on: SubjectKind::Address,
            configured: false,
        }
    }

    /// The host name, e.g. `acme.sheets.oficina.works`.
    pub fn host(&self) -> String {
        format!("{}.{}.oficina.works", self.team, self.app)
    }
}

/// A world: fakes, a shared trace, and the settings the seed chose.
pub struct World {
    seed: u64,
    specs: Vec<SiblingSpec>,
    fakes: BTreeMap<String, FakeSibling>,
    trace: Trace,
    settings: BTreeMap<String, String>,
    tokens: BTreeMap<String, String>,
    consumers: Vec<Consumer>,
    token_files: bool,
    extra_urls: Vec<String>,
    owners: Vec<String>,
    guard: NetGuard,
    mail_domains: BTreeMap<String, MailDomain>,
    keymail: bool,
    home: Option<(FakeHome, String)>,
    /// The stub provider on [`memoria::PROVIDER_HOST`], and whether memoria
    /// wakes with AI on and its chat client pointed at it.
    provider: Option<(StubProvider, EgressMode)>,
    /// With AI on, whether memoria also embeds through the stub, as
    /// `memoria serve` does ([`World::embed_with_provider`]).
    embeds: bool,
    /// memoria's idle eviction (§3.5), when a world sets one other than
    /// production's default ([`World::idle_evict`]).
    idle_evict: Option<Option<Duration>>,
    /// memoria keeps Calendar's bodies (`MEMORIA_CALENDAR_BODIES=on`);
    /// `None`: the sibling client's own default (off, §3.5), as production
    /// with the variable unset; else [`World::calendar_bodies`]'s choice.
    calendar_bodies: Option<bool>,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("seed", &self.seed)
            .field("hosts", &self.fakes.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl World {
    /// A world for `seed` with these siblings. Every fake admits the
    /// [`OWNERS`] as members and accepts memoria's token (one per host,
    /// drawn from the seed).
    pub fn new(seed: u64, specs: Vec<SiblingSpec>) -> World {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let trace = Trace::new();
        let mut fakes = BTreeMap::new();
        let mut settings = BTreeMap::new();
        let mut tokens = BTreeMap::new();
        settings.insert("seed".into(), seed.to_string());
        let latency = rng.gen_range(LINK_LATENCY_MS);
        settings.insert("link_latency_ms".into(), latency.to_string());
        for spec in &specs {
            let token = format!("tok-{:016x}", rng.r#gen::<u64>());
            let model = ModelHandle::new(Clock::turmoil());
            model.with(|m| {
                for owner in OWNERS {
                    let local = owner.split('@').next().unwrap_or(owner);
                    m.add_member(owner, Some(&format!("prs_{local}")));
                }
            });
            let fake = FakeSibling::new(
                FakeConfig {
                    team: spec.team.clone(),
                    app: spec.app.clone(),
                    keys_on: spec.keys_on,
                    tokens: vec![(MEMORIA_CONSUMER.into(), token.clone())],
                },
                model,
                trace.clone(),
                Clock::turmoil(),
            );
            settings.insert(
                format!("host.{}.keys_on", spec.host()),
                format!("{:?}", spec.keys_on),
            );
            tokens.insert(spec.host(), token);
            fakes.insert(spec.host(), fake);
        }
        World {
            seed,
            specs,
            fakes,
            trace,
            settings,
            tokens,
            consumers: vec![],
            token_files: false,
            extra_urls: vec![],
            owners: OWNERS.iter().map(|o| o.to_string()).collect(),
            guard: NetGuard::default(),
            mail_domains: BTreeMap::new(),
            keymail: false,
            home: None,
            provider: None,
            embeds: false,
            idle_evict: None,
            calendar_bodies: None,
        }
    }

    /// Stands up `stub` as the provider, on a host named as §8.3's
    /// ([`memoria::PROVIDER_HOST`], port [`PROVIDER_STUB_PORT`]), and wakes
    /// memoria in `egress` mode: with [`EgressMode::AiOn`] its chat client
    /// dials the stub in plain HTTP (the testkit-only stand-in) through the
    /// world's guarded dialer, and with [`EgressMode::AiOff`] it has no
    /// provider client at all, so the stub hears what AI off sends: nothing
    /// (§8.9, gate 39). No embedder unless [`World::embed_with_provider`]
    /// asks for one: the ranking stays lexical.
    pub fn use_stub_provider(&mut self, stub: &StubProvider, egress: EgressMode) {
        self.provider = Some((stub.clone(), egress));
    }

    /// [`World::use_stub_provider`] with AI on: the answer gates' world
    /// (§8.4; gates 14, 31, 32).
    pub fn use_provider(&mut self, stub: &StubProvider) {
        self.use_stub_provider(stub, EgressMode::AiOn);
    }

    /// The stub provider, if the world stood one up.
    pub fn provider(&self) -> Option<&StubProvider> {
        self.provider.as_ref().map(|(stub, _)| stub)
    }

    /// With AI on ([`World::use_provider`]), memoria also embeds every
    /// passage and query through the stub, and its embedding loop runs
    /// beside the server as `memoria serve` starts it (§7, §8.3): the
    /// ranking fuses BM25 with the dense scan, and the queue drains on the
    /// loop's own interval. The answer gates' worlds leave it off (chat
    /// only, the ranking lexical); the scenarios with `ai = true` and the
    /// explorer's AI-on worlds turn it on.
    pub fn embed_with_provider(&mut self) {
        self.embeds = true;
        self.settings
            .insert("embeddings".into(), "the stub provider".into());
    }

    /// memoria evicts its decrypted index after `idle` without a request
    /// (§3.5, `MEMORIA_IDLE_EVICT_S`), or never with `None`; production's
    /// [`memoria::IDLE_EVICT_DEFAULT_S`] is longer than a simulation runs.
    pub fn idle_evict(&mut self, idle: Option<Duration>) {
        self.idle_evict = Some(idle);
        self.settings.insert(
            "idle_evict_s".into(),
            idle.map_or("never".into(), |d| d.as_secs().to_string()),
        );
    }

    /// memoria keeps the Calendar sibling's bodies (`on`), as an owner
    /// who sets `MEMORIA_CALENDAR_BODIES=on` does; production's default is
    /// off (§3.5), and then an event is held as its title alone.
    pub fn calendar_bodies(&mut self, on: bool) {
        self.calendar_bodies = Some(on);
        self.settings.insert(
            "calendar_bodies".into(),
            if on { "on" } else { "off" }.into(),
        );
    }

    /// Runs memoria in suite shape (§4.3): a fake home on [`HOME_HOST`]
    /// serves the roster, generation [`HOME_GENERATION`], listing
    /// `members` (each also made a member at every fake sibling); memoria
    /// admits its [`OWNERS`] first and then the roster's pulled copy, and
    /// pulls it on wake. Returns the home's handle, whose roster and
    /// faults a scenario changes mid-run.
    pub fn use_home(&mut self, members: &[&str]) -> FakeHome {
        for fake in self.fakes.values() {
            fake.model().with(|m| {
                for member in members {
                    let local = member.split('@').next().unwrap_or(member);
                    m.add_member(member, Some(&format!("prs_{local}")));
                }
            });
        }
        let token = format!("home-{:016x}", self.seed.rotate_left(17) ^ 0x686f_6d65);
        let home = FakeHome::new(TEAM, &token, HOME_GENERATION, members, Clock::turmoil());
        self.home = Some((home.clone(), token));
        home
    }

    /// The fake home, in suite shape ([`World::use_home`]).
    pub fn home(&self) -> Option<&FakeHome> {
        self.home.as_ref().map(|(h, _)| h)
    }

    /// Runs memoria with the suite's sign-in classifier as rastrillo's
    /// behaves ([`KeymailClassifier`]): `POST /auth/begin` for an owner
    /// resolves and fetches the address's domain, through a dialer behind
    /// this world's [`NetGuard`] (§3.2, gate 33).
    pub fn use_keymail_classifier(&mut self) {
        self.keymail = true;
    }

    /// Configures memoria's token at each sibling as a token file
    /// (`MEMORIA_SIBLING_TOKEN_<APP>_FILE`, [`memoria::SiblingToken::File`])
    /// the world writes before the run and a scenario (or a [`crate::Drain`])
    /// may rewrite or remove during it ([`Memoria::set_sibling_token`]):
    /// memoria reads it on every sibling call (§6.2). In suite shape
    /// memoria's token at the home is a file too
    /// (`MEMORIA_HOME_TOKEN_FILE`), under the app key [`HOME_LABEL`],
    /// read on every roster pull.
    pub fn use_token_files(&mut self) {
        self.token_files = true;
    }

    /// Adds a second consumer of every sibling: another memoria, on its
    /// own host `<TEAM>.<name>.oficina.works`, with its own token at every
    /// fake (drawn from the seed and `name`, so it is the same whichever
    /// consumers a run stands up) and its own data directory (gate 13).
    /// [`World::run_consumers`] runs it.
    ///
    /// # Panics
    /// If `name` is [`MEMORIA_CONSUMER`] or already added: a scenario bug.
    pub fn add_consumer(&mut self, name: &str) {
        assert!(
            name != MEMORIA_CONSUMER && self.consumers.iter().all(|c| c.name != name),
            "consumer {name} is already in the world"
        );
        let mut seed = self.seed;
        for b in name.bytes() {
            seed = seed.rotate_left(5) ^ u64::from(b);
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut tokens = BTreeMap::new();
        for (host, fake) in &self.fakes {
            let token = format!("tok-{name}-{:016x}", rng.r#gen::<u64>());
            fake.accept_token(name, &token)
                .expect("a new consumer's first token is accepted");
            tokens.insert(host.clone(), token);
        }
        self.consumers.push(Consumer {
            name: name.to_owned(),
            host: consumer_host(name),
            tokens,
        });
    }

    /// Stands up a host for the mail domain `domain` (e.g. `acme.test`),
    /// answering the classifier's fetch at [`KEYMAIL_PORT`]; returns its
    /// handle, which counts what it received.
    pub fn add_mail_domain(&mut self, domain: &str) -> MailDomain {
        self.mail_domains
            .entry(domain.to_string())
            .or_default()
            .clone()
    }

    /// Admits these owners in memoria and adds each as a member at every
    /// fake (in addition to [`OWNERS`], who are always members).
    pub fn set_owners(&mut self, owners: &[String]) {
        for fake in self.fakes.values() {
            fake.model().with(|m| {
                for owner in owners {
                    if !OWNERS.contains(&owner.as_str()) {
                        let local = owner.split('@').next().unwrap_or(owner);
                        m.add_member(owner, Some(&format!("prs_{local}")));
                    }
                }
            });
        }
        self.owners = owners.to_vec();
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// memoria's own sibling for `app`.
    ///
    /// # Panics
    /// If the world has no such sibling: a scenario bug.
    pub fn fake(&self, app: &str) -> &FakeSibling {
        self.host(&format!("{TEAM}.{app}.oficina.works"))
    }

    /// The fake at `host`.
    ///
    /// # Panics
    /// If the world has no such host.
    pub fn host(&self, host: &str) -> &FakeSibling {
        self.fakes
            .get(host)
            .unwrap_or_else(|| panic!("no fake at {host}"))
    }

    /// memoria's token at `host`.
    ///
    /// # Panics
    /// If the world has no such host.
    pub fn token(&self, host: &str) -> &str {
        &self.tokens[host]
    }

    /// Consumer `consumer`'s first token at `host` ([`MEMORIA_CONSUMER`]'s
    /// is [`World::token`]'s).
    ///
    /// # Panics
    /// If the world has no such consumer or host.
    pub fn consumer_token(&self, consumer: &str, host: &str) -> &str {
        if consumer == MEMORIA_CONSUMER {
            return self.token(host);
        }
        let c = self
            .consumers
            .iter()
            .find(|c| c.name == consumer)
            .unwrap_or_else(|| panic!("no consumer {consumer}"));
        &c.tokens[host]
    }

    /// The network guard: every name lookup and connection memoria made in
    /// this world's runs, by host name and port (gate 15).
    pub fn net_guard(&self) -> &NetGuard {
        &self.guard
    }

    /// The shared trace of every S-call every fake received.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Records one more setting a scenario derived from the seed.
    pub fn set(&mut self, key: &str, value: impl ToString) {
        self.settings.insert(key.into(), value.to_string());
    }

    /// Steps turmoil `ms` simulated milliseconds a tick in this world, not
    /// [`TICK_MS`], and records it as the setting `tick_ms`. Inside a host
    /// every timer still fires at its own millisecond; what coarsens is the
    /// network: a message is delivered at the end of the tick it arrives
    /// in, so each hop takes its link latency rounded up to a tick. A world
    /// whose latencies and deadlines are multiples of `ms` runs as it would
    /// at 1 ms, but for those hops, in `ms` times fewer steps.
    ///
    /// # Panics
    /// If `ms` is 0 or over [`TICK_MS_MAX`]: a scenario bug.
    pub fn set_tick_ms(&mut self, ms: u64) {
        assert!(
            (1..=TICK_MS_MAX).contains(&ms),
            "a tick of {ms} ms is outside 1..={TICK_MS_MAX}"
        );
        self.set("tick_ms", ms);
    }

    /// This world's tick, in simulated ms ([`World::set_tick_ms`]).
    pub fn tick_ms(&self) -> u64 {
        self.settings
            .get("tick_ms")
            .and_then(|v| v.parse().ok())
            .unwrap_or(TICK_MS)
    }

    /// Also configures memoria with `url` (e.g. another team's host), with
    /// a token, to prove it is refused (gate 11).
    pub fn configure_extra_url(&mut self, url: &str) {
        self.extra_urls.push(url.into());
    }

    /// Every setting derived from the seed, one `key=value` per line, sorted.
    pub fn settings(&self) -> String {
        self.settings
            .iter()
            .map(|(k, v)| format!("{k}={v}\n"))
            .collect()
    }

    /// The settings followed by the trace: what two runs of one seed must
    /// print byte for byte.
    pub fn transcript(&self) -> String {
        format!("{}---\n{}", self.settings(), self.trace.render())
    }

    /// The consumer named `name`: memoria's own, or one
    /// [`World::add_consumer`] added.
    fn consumer(&self, name: &str) -> Option<Consumer> {
        if name == MEMORIA_CONSUMER {
            return Some(Consumer {
                name: MEMORIA_CONSUMER.to_owned(),
                host: MEMORIA_HOST.to_owned(),
                tokens: self.tokens.clone(),
            });
        }
        self.consumers.iter().find(|c| c.name == name).cloned()
    }

    /// The configured siblings, each with `consumer`'s token: given at
    /// start, or a file in `token_dir` (one per app, written now).
    fn sibling_configs(
        &self,
        consumer: &Consumer,
        token_dir: &std::path::Path,
    ) -> std::io::Result<(Vec<SiblingConfig>, BTreeMap<String, std::path::PathBuf>)> {
        let mut files = BTreeMap::new();
        let mut out = vec![];
        for s in self.specs.iter().filter(|s| s.configured) {
            let token = consumer.tokens[&s.host()].clone();
            let source = if self.token_files {
                let path = token_dir.join(format!("{}.token", s.app));
                write_atomically(&path, &format!("{token}\n"))?;
                files.insert(s.app.clone(), path.clone());
                SiblingToken::File(path)
            } else {
                SiblingToken::Fixed(token)
            };
            out.push(SiblingConfig {
                url: format!("http://{}:{SIBLING_PORT}", s.host()),
                token: source,
            });
        }
        out.extend(self.extra_urls.iter().map(|u| SiblingConfig {
            url: u.clone(),
            token: "tok-extra".into(),
        }));
        Ok((out, files))
    }

    /// Runs `scenario` against memoria in this world, in simulated time.
    ///
    /// memoria wakes on its own host with a fresh data directory, its
    /// sibling client dialling through turmoil behind the world's
    /// [`NetGuard`], and starts its warm-up.
    ///
    /// # Errors
    /// A [`SimFailure`] carrying the seed if memoria cannot be configured
    /// (e.g. a refused sibling URL), the scenario returns an error, or the
    /// simulation itself fails.
    pub fn run<F, Fut>(&self, scenario: F) -> Result<(), SimFailure>
    where
        F: FnOnce(Memoria) -> Fut + 'static,
        Fut: Future<Output = Result<(), String>> + 'static,
    {
        self.run_consumers(&[MEMORIA_CONSUMER], move |mut all| {
            let memoria = all.remove(0);
            scenario(memoria)
        })
    }

    /// Runs `scenario` against one memoria per named consumer, in the
    /// order named ([`MEMORIA_CONSUMER`], or one [`World::add_consumer`]
    /// added), each on its own host with its own data directory, owners
    /// file and tokens, all against the same fakes (gate 13). A consumer
    /// not named is absent from the run: its token is still accepted and
    /// nothing calls with it.
    ///
    /// # Errors
    /// As [`World::run`].
    ///
    /// # Panics
    /// If a name is no consumer of this world: a scenario bug.
    pub fn run_consumers<F, Fut>(&self, names: &[&str], scenario: F) -> Result<(), SimFailure>
    where
        F: FnOnce(Vec<Memoria>) -> Fut + 'static,
        Fut: Future<Output = Result<(), String>> + 'static,
    {
        let fail = |message: String| SimFailure {
            seed: self.seed,
            message,
            refused: None,
        };
        for (key, value) in &self.settings {
            tracing::info!(seed = self.seed, setting = %key, value = %value, "simulation setting");
        }
        let latency = Duration::from_millis(
            self.settings["link_latency_ms"]
                .parse()
                .expect("latency setting"),
        );
        let mut sim = turmoil::Builder::new()
            .rng_seed(self.seed)
            .simulation_duration(Duration::from_secs(SIMULATION_DURATION_S))
            .tick_duration(Duration::from_millis(self.tick_ms()))
            .min_message_latency(latency)
            .max_message_latency(latency)
            .build();
        for (host, fake) in &self.fakes {
            let router = fake.router();
            sim.host(host.as_str(), move || {
                let router = router.clone();
                async move {
                    serve_turmoil(router, SIBLING_PORT)
                        .await
                        .map_err(|e| e.to_string().into())
                }
            });
        }
        if let Some((home, _)) = &self.home {
            let router = home.router();
            sim.host(HOME_HOST, move || {
                let router = router.clone();
                async move {
                    serve_turmoil(router, SIBLING_PORT)
                        .await
                        .map_err(|e| e.to_string().into())
                }
            });
        }
        for (domain, mail) in &self.mail_domains {
            let router = mail.router();
            sim.host(domain.as_str(), move || {
                let router = router.clone();
                async move {
                    serve_turmoil(router, KEYMAIL_PORT)
                        .await
                        .map_err(|e| e.to_string().into())
                }
            });
        }
        if let Some((stub, _)) = &self.provider {
            let router = stub.router();
            sim.host(memoria::PROVIDER_HOST, move || {
                let router = router.clone();
                async move {
                    serve_turmoil(router, PROVIDER_STUB_PORT)
                        .await
                        .map_err(|e| e.to_string().into())
                }
            });
        }
        let mut handles = vec![];
        let mut keep = vec![];
        for name in names {
            let consumer = self
                .consumer(name)
                .unwrap_or_else(|| panic!("no consumer {name} in this world"));
            let (memoria, dirs) = self.stand_up(&mut sim, &consumer)?;
            handles.push(memoria);
            keep.push(dirs);
        }
        sim.client(BROWSER_HOST, async move {
            let _keep = keep;
            scenario(handles).await.map_err(Into::into)
        });
        sim.run().map_err(|e| fail(e.to_string()))
    }

    /// Wakes one memoria for `consumer` and adds its host to `sim`;
    /// returns the scenario's handle on it and the directories it lives
    /// in, which must outlive the run.
    fn stand_up(
        &self,
        sim: &mut turmoil::Sim<'_>,
        consumer: &Consumer,
    ) -> Result<(Memoria, [tempfile::TempDir; 2]), SimFailure> {
        let fail = |message: String| SimFailure {
            seed: self.seed,
            message,
            refused: None,
        };
        let data = tempfile::Builder::new()
            .prefix("memoria-sim-")
            .tempdir()
            .map_err(|e| fail(e.to_string()))?;
        let owners_dir = tempfile::Builder::new()
            .prefix("memoria-sim-owners-")
            .tempdir()
            .map_err(|e| fail(e.to_string()))?;
        // memoria's one way out, behind the guard (gate 15).
        let dialer = GuardedDialer::new(TurmoilDialer, self.guard.clone());
        let classifier: Option<Arc<dyn memoria::SignInClassifier>> = self.keymail.then(|| {
            Arc::new(KeymailClassifier::new(Arc::new(dialer.clone())))
                as Arc<dyn memoria::SignInClassifier>
        });
        let (configs, mut token_files) = self
            .sibling_configs(consumer, owners_dir.path())
            .map_err(|e| fail(e.to_string()))?;
        let home = match &self.home {
            Some((_, token)) => {
                // With token files, memoria's token at the home is one too
                // (`MEMORIA_HOME_TOKEN_FILE`), under the key [`HOME_LABEL`].
                let source = if self.token_files {
                    let path = owners_dir.path().join(format!("{HOME_LABEL}.token"));
                    write_atomically(&path, &format!("{token}\n"))
                        .map_err(|e| fail(e.to_string()))?;
                    token_files.insert(HOME_LABEL.to_owned(), path.clone());
                    SiblingToken::File(path)
                } else {
                    SiblingToken::Fixed(token.clone())
                };
                Some(
                    memoria::HomeClient::with_token(
                        TEAM,
                        &format!("http://{HOME_HOST}:{SIBLING_PORT}"),
                        source,
                        Arc::new(dialer.clone()),
                    )
                    .map_err(|e| fail(e.to_string()))?,
                )
            }
            None => None,
        };
        let embed = match &self.provider {
            Some((_, EgressMode::AiOn)) if self.embeds => {
                Some(memoria::EmbedClient::plain_http_stand_in(
                    Arc::new(dialer.clone()),
                    memoria::PROVIDER_HOST,
                    PROVIDER_STUB_PORT,
                    memoria::ProviderKey::parse(PROVIDER_STUB_KEY)
                        .map_err(|e| fail(e.to_string()))?,
                ))
            }
            _ => None,
        };
        let chat = match &self.provider {
            Some((_, EgressMode::AiOn)) => Some(memoria::ChatClient::plain_http_stand_in(
                Arc::new(dialer.clone()),
                memoria::PROVIDER_HOST,
                PROVIDER_STUB_PORT,
                memoria::ProviderKey::parse(PROVIDER_STUB_KEY).map_err(|e| fail(e.to_string()))?,
            )),
            _ => None,
        };
        let client =
            SiblingClient::new(TEAM, &configs, Arc::new(dialer)).map_err(|e| SimFailure {
                refused: Some(e.clone()),
                ..fail(e.to_string())
            })?;
        let client = match self.calendar_bodies {
            Some(on) => client.with_calendar_bodies(on),
            None => client,
        };
        let owners_file = owners_dir.path().join(OWNERS_FILE_NAME);
        write_owners(&owners_file, &self.owners).map_err(|e| fail(e.to_string()))?;
        let clock = SimClock::default();
        let admission = Admission::file(&owners_file).map_err(|e| fail(e.to_string()))?;
        // Suite shape: the owners first, then the roster's pulled copy (§4.3).
        let admission = match &home {
            Some(_) => {
                admission.with_roster(memoria::RosterCopy::new(TEAM, Arc::new(clock.clone())))
            }
            None => admission,
        };
        let delivery = Arc::new(CapturedDelivery::default());
        let boot = Boot {
            data_dir: data.path().to_path_buf(),
            admission,
            clock: clock.clone(),
            client,
            delivery: delivery.clone(),
            classifier,
            host: consumer.host.clone(),
            home,
            chat,
            embed,
            idle_evict: self.idle_evict,
        };
        // Fail fast, outside the simulation, if memoria cannot wake at all.
        let first = boot.wake().map_err(|e| fail(e.to_string()))?;
        let slot: Arc<std::sync::Mutex<Option<AppState>>> =
            Arc::new(std::sync::Mutex::new(Some(first)));
        let restart = Arc::new(tokio::sync::Notify::new());
        let restore: Arc<std::sync::Mutex<Option<std::path::PathBuf>>> = Arc::default();
        let (host_slot, host_restart, host_restore) =
            (slot.clone(), restart.clone(), restore.clone());
        sim.host(consumer.host.as_str(), move || {
            let (slot, restart, boot, restore) = (
                host_slot.clone(),
                host_restart.clone(),
                boot.clone(),
                host_restore.clone(),
            );
            async move {
                loop {
                    // Bound first: a guard in the match scrutinee would live
                    // through the arms and deadlock the re-lock below.
                    let current = slot.lock().map_err(|_| "slot")?.clone();
                    let state = match current {
                        Some(s) => s,
                        None => {
                            // A restore asked for while memoria was down:
                            // its data directory is put back before it wakes.
                            let pending = restore.lock().map_err(|_| "restore")?.take();
                            if let Some(backup) = pending {
                                copy_data(&backup, &boot.data_dir, true)?;
                            }
                            let s = boot.wake()?;
                            *slot.lock().map_err(|_| "slot")? = Some(s.clone());
                            s
                        }
                    };
                    let listener = TurmoilListener::bind(MEMORIA_PORT).await?;
                    let stop = restart.clone();
                    memoria::serve(listener, state, async move { stop.notified().await }).await?;
                    // A restart: drop this instance; the next loop wakes a new
                    // one from the same data directory.
                    *slot.lock().map_err(|_| "slot")? = None;
                }
            }
        });
        let memoria = Memoria {
            slot,
            restart,
            restore,
            data_dir: data.path().to_path_buf(),
            backups_dir: owners_dir.path().join("backups"),
            clock,
            delivery,
            cookies: BTreeMap::new(),
            owners_file,
            host: consumer.host.clone(),
            consumer: consumer.name.clone(),
            token_files,
        };
        Ok((memoria, [data, owners_dir]))
    }
}

/// One consumer of the siblings: a memoria, its host and its token at
/// each sibling host.
#[derive(Debug, Clone)]
struct Consumer {
    name: String,
    host: String,
    tokens: BTreeMap<String, String>,
}

/// The host a consumer added by [`World::add_consumer`] runs on.
fn consumer_host(name: &str) -> String {
    format!("{TEAM}.{name}.oficina.works")
}

/// What memoria's host needs to wake (again) from its data directory.
#[derive(Clone)]
struct Boot {
    data_dir: std::path::PathBuf,
    admission: Admission,
    clock: SimClock,
    client: SiblingClient,
    delivery: Arc<CapturedDelivery>,
    classifier: Option<Arc<dyn memoria::SignInClassifier>>,
    host: String,
    home: Option<memoria::HomeClient>,
    /// With AI on, the chat client to the stub provider.
    chat: Option<memoria::ChatClient>,
    /// With [`World::embed_with_provider`], the embedding client to the stub.
    embed: Option<memoria::EmbedClient>,
    /// [`World::idle_evict`]'s setting, if the world made one.
    idle_evict: Option<Option<Duration>>,
}

impl Boot {
    fn wake(&self) -> Result<AppState, memoria::Error> {
        // A process wakes with no roster copy, as a real restart does:
        // memory does not survive it, only the data directory (§4.3).
        let admission = match self.admission.roster() {
            Some(copy) => self.admission.clone().with_roster(memoria::RosterCopy::new(
                copy.team(),
                Arc::new(self.clock.clone()),
            )),
            None => self.admission.clone(),
        };
        let instance = Instance::wake(
            InstanceConfig {
                data_dir: self.data_dir.clone(),
                admission,
                egress: if self.chat.is_some() {
                    EgressMode::AiOn
                } else {
                    EgressMode::AiOff
                },
            },
            Sealer::new(&Dek::from_bytes(SIM_DEK_BYTES)),
            Arc::new(self.clock.clone()),
        )?;
        // Inline: a real thread pool would finish store work at wall-clock
        // moments and break the seed's replay.
        let state = AppState::new(
            instance,
            self.delivery.clone(),
            format!("http://{}", self.host),
            memoria::Offload::Inline,
        )
        .with_siblings(self.client.clone());
        let state = match self.idle_evict {
            Some(idle) => state.with_idle_evict(idle),
            None => state,
        };
        let state = match &self.home {
            Some(h) => state.with_home(h.clone()),
            None => state,
        };
        let state = match &self.chat {
            Some(c) => state.with_chat(c.clone()),
            None => state,
        };
        let state = match &self.embed {
            Some(e) => state.with_embedder(e.clone()),
            None => state,
        };
        Ok(match &self.classifier {
            Some(c) => state.with_sign_in_classifier(c.clone()),
            None => state,
        })
    }
}

/// The port the stub provider serves on inside a world ([`World::use_stub_provider`]).
pub const PROVIDER_STUB_PORT: u16 = 80;

/// The key memoria presents to the stub provider (any bearer passes it).
pub const PROVIDER_STUB_KEY: &str = "stub-provider-key";

/// The DEK every simulated memoria seals under: a fixed test key.
pub const SIM_DEK_BYTES: [u8; 32] = [7u8; 32];

/// Copies the data files of `from` into `to`, never the tombstone log,
/// the roster mark beside it (the tombstone directory's, backed up apart,
/// §7.4) nor SQLite's write-ahead log and shared-memory index (the backup is taken
/// checkpointed); with `replace`, first removes from `to` every such file
/// `from` lacks, the logs included.
fn copy_data(from: &std::path::Path, to: &std::path::Path, replace: bool) -> Result<(), String> {
    let wal = |name: &std::ffi::OsStr| {
        let n = name.to_string_lossy();
        n.ends_with("-shm") || n.ends_with("-wal")
    };
    let keep = |name: &std::ffi::OsStr| {
        let n = name.to_string_lossy();
        n != memoria::TOMBSTONE_LOG_FILE_NAME && n != memoria::ROSTER_MARK_FILE_NAME && !wal(name)
    };
    let io = |p: &std::path::Path, e: std::io::Error| format!("{}: {e}", p.display());
    if replace {
        for e in std::fs::read_dir(to).map_err(|e| io(to, e))? {
            let e = e.map_err(|e| io(to, e))?;
            let stale =
                wal(&e.file_name()) || (keep(&e.file_name()) && !from.join(e.file_name()).exists());
            if e.path().is_file() && stale {
                std::fs::remove_file(e.path()).map_err(|x| io(&e.path(), x))?;
            }
        }
    }
    for e in std::fs::read_dir(from).map_err(|e| io(from, e))? {
        let e = e.map_err(|e| io(from, e))?;
        let path = e.path();
        if path.is_dir() {
            let sub = to.join(e.file_name());
            std::fs::create_dir_all(&sub).map_err(|x| io(&sub, x))?;
            copy_data(&path, &sub, replace)?;
        } else if keep(&e.file_name()) {
            // A new file renamed over the old: a connection the old
            // instance still holds keeps its own inode.
            let next = to.join(format!("{}.next", e.file_name().to_string_lossy()));
            std::fs::copy(&path, &next).map_err(|x| io(&path, x))?;
            std::fs::rename(&next, to.join(e.file_name())).map_err(|x| io(&next, x))?;
        }
    }
    Ok(())
}

/// The owners file's name in its run's own temporary directory.
pub const OWNERS_FILE_NAME: &str = "owners";

/// Writes `owners` to `path`, one a line, as an operator replaces the
/// file: a new file renamed over the old, so no reader meets half of it.
fn write_owners(path: &std::path::Path, owners: &[String]) -> std::io::Result<()> {
    write_atomically(path, &(owners.join("\n") + "\n"))
}

/// Writes `text` to `path` as an operator replaces a config file: a new
/// file renamed over the old, so no reader meets half of it.
fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let next = path.with_extension("next");
    std::fs::write(&next, text)?;
    std::fs::rename(&next, path)
}

/// memoria inside a running simulation, as a scenario drives it: a
/// browser on [`BROWSER_HOST`] speaking HTTP to memoria's host, plus a
/// handle on memoria's state for assertions about its store.
pub struct Memoria {
    slot: Arc<std::sync::Mutex<Option<AppState>>>,
    restart: Arc<tokio::sync::Notify>,
    /// A backup to restore the data directory from at the next wake.
    restore: Arc<std::sync::Mutex<Option<std::path::PathBuf>>>,
    data_dir: std::path::PathBuf,
    backups_dir: std::path::PathBuf,
    clock: SimClock,
    delivery: Arc<CapturedDelivery>,
    cookies: BTreeMap<String, String>,
    owners_file: std::path::PathBuf,
    host: String,
    consumer: String,
    token_files: BTreeMap<String, std::path::PathBuf>,
}

impl std::fmt::Debug for Memoria {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memoria").finish_non_exhaustive()
    }
}

/// A page as a person saw it, and how long it took in simulated time.
#[derive(Debug, Clone)]
pub struct Page {
    /// The response.
    pub response: TestResponse,
    /// Simulated time from request to whole response.
    pub elapsed: Duration,
}

impl Memoria {
    /// Waits for the wake warm-up `memoria::serve` started, and returns
    /// its reports; waits for the server to start it first.
    ///
    /// # Errors
    /// If the warm-up task failed.
    pub async fn warmed_up(&mut self) -> Result<Vec<memoria::SyncReport>, String> {
        loop {
            if let Some(h) = self.try_state().and_then(|s| s.take_warm_up()) {
                return h.await.map_err(|e| e.to_string());
            }
            tokio::time::sleep(Duration::from_millis(TICK_MS)).await;
        }
    }

    /// Pulls memoria's siblings the way production does after its wake:
    /// by asking it questions (§6.1). Waits (simulated) until a question is
    /// due to pull, [`memoria::S1_PULL_INTERVAL_MIN_S`] after
    /// the last pull started, has `reader` search, and awaits the pulls that
    /// question started; while some sibling is still in its backoff after a
    /// failed pull, asks again after twice the wait, up to
    /// [`memoria::S1_PULL_BACKOFF_MAX_S`]. Returns the newest
    /// report of each sibling pulled, in the order they finished.
    ///
    /// Nothing here is a hook production lacks: the search is a reader's
    /// request over HTTP, and awaiting what it started only observes it.
    ///
    /// # Panics
    /// As [`Memoria::search`]: if `reader` cannot sign in.
    pub async fn question_pulls(&mut self, reader: &str) -> Vec<memoria::SyncReport> {
        use memoria::{S1_PULL_BACKOFF_MAX_S, S1_PULL_INTERVAL_MIN_S};
        let apps = self
            .state()
            .siblings()
            .map(|c| c.apps())
            .unwrap_or_default();
        let mut reports: Vec<memoria::SyncReport> = Vec::new();
        let mut wait_s = S1_PULL_INTERVAL_MIN_S;
        loop {
            tokio::time::sleep(Duration::from_secs(wait_s.unsigned_abs())).await;
            self.search(reader, QUESTION_PULL_WORDS).await;
            for r in self.settle_follow_ups().await {
                reports.retain(|old| old.app != r.app);
                reports.push(r);
            }
            let pulled_all = apps.iter().all(|a| reports.iter().any(|r| &r.app == a));
            if pulled_all || wait_s >= S1_PULL_BACKOFF_MAX_S {
                return reports;
            }
            wait_s = (wait_s * 2).min(S1_PULL_BACKOFF_MAX_S);
        }
    }

    /// Awaits every follow-up sync memoria started from a ruling (the
    /// refetch STALE asks for, the re-announce AHEAD marked, §4.1), and any
    /// they led to; returns their reports. Await this, never a guessed time.
    pub async fn settle_follow_ups(&self) -> Vec<memoria::SyncReport> {
        self.state().settle_follow_ups().await
    }

    fn try_state(&self) -> Option<AppState> {
        self.slot.lock().ok().and_then(|s| s.clone())
    }

    /// memoria's current state, e.g. to reach the instance or the sibling client.
    ///
    /// # Panics
    /// While memoria is restarting: call [`Memoria::restart`], which waits.
    pub fn state(&self) -> AppState {
        self.try_state().expect("memoria is up")
    }

    /// Restarts memoria: the running instance is dropped and a new one
    /// wakes from the same data directory (sessions are lost, so every
    /// reader signs in again), and its warm-up runs. Waits until it is up.
    pub async fn restart(&mut self) {
        let old = self.try_state();
        self.restart.notify_one();
        self.cookies.clear();
        loop {
            tokio::time::sleep(Duration::from_millis(TICK_MS)).await;
            if let (Some(new), Some(old)) = (self.try_state(), &old)
                && !Arc::ptr_eq(&new.instance(), &old.instance())
            {
                break;
            }
        }
    }

    /// Moves memoria's calendar forward by `days` whole UTC days.
    pub fn advance_days(&self, days: i64) {
        self.clock.advance_days(days);
    }

    /// memoria's data directory: its database, snapshot bucket and (in a
    /// simulated world) its tombstone log, for a grep at rest.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_dir
    }

    /// Copies memoria's data directory aside as backup `name`, leaving out
    /// the tombstone log (backed up apart and never restored with the
    /// data, as `MEMORIA_TOMBSTONES` says). memoria's store work runs on
    /// the simulation's one thread, so no transaction is half written.
    ///
    /// # Errors
    /// If a file cannot be copied (the message names its path).
    pub fn backup_data(&self, name: &str) -> Result<(), String> {
        let to = self.backups_dir.join(name);
        std::fs::create_dir_all(&to).map_err(|e| format!("{}: {e}", to.display()))?;
        // The write-ahead log folded into the database first, so the file
        // copied is whole without it.
        self.state()
            .instance()
            .lock()
            .map_err(|_| "instance lock".to_string())?
            .store()
            .checkpoint()
            .map_err(|e| e.to_string())?;
        copy_data(&self.data_dir, &to, false)
    }

    /// Restores memoria's data directory from backup `name` as an operator
    /// does: memoria stops, the data files are replaced (the tombstone log
    /// is kept), and it wakes from them (§7.4: a restore found at wake
    /// replays the deletions). Waits until it is up.
    ///
    /// # Errors
    /// If there is no such backup.
    pub async fn restore_data(&mut self, name: &str) -> Result<(), String> {
        let from = self.backups_dir.join(name);
        if !from.is_dir() {
            return Err(format!("no backup {name} of memoria's data"));
        }
        *self.restore.lock().map_err(|_| "restore")? = Some(from);
        self.restart().await;
        Ok(())
    }

    /// Moves memoria's calendar forward by `seconds` (a roster copy ages;
    /// turmoil's timers do not move).
    pub fn advance_s(&self, seconds: i64) {
        self.clock.advance_s(seconds);
    }

    /// Pulls the roster from the home now and applies it, as memoria's
    /// roster loop does (suite shape; `None` in lone shape).
    pub async fn pull_roster(&self) -> Option<Result<(String, u64), memoria::RosterFault>> {
        self.state().pull_roster().await
    }

    /// The roster copy memoria admits from, in suite shape.
    pub fn roster(&self) -> Option<memoria::RosterCopy> {
        self.state().admission().roster().cloned()
    }

    /// Signs `address` in from a fresh browser: a link delivered as the
    /// sign-in form would deliver it (admission asked), followed. The
    /// session cookie (`name=value`), or why none was set.
    ///
    /// # Errors
    /// If memoria does not admit `address` now, or the link sets no session.
    pub async fn sign_in(&self, address: &str) -> Result<String, String> {
        let who = self
            .state()
            .admission()
            .admit(address)
            .ok_or_else(|| format!("{address} is not admitted"))?;
        self.state().deliver_sign_in_link(&who);
        let (_, url) = self
            .delivery
            .links()
            .into_iter()
            .rev()
            .find(|(o, _)| o == who.address())
            .ok_or("no sign-in link was delivered")?;
        let r = self.follow_sign_in_link(&url).await?.response;
        r.headers
            .get(http::header::SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.split(';').next())
            .filter(|c| c.split_once('=').is_some_and(|(_, v)| !v.is_empty()))
            .map(str::to_string)
            .ok_or_else(|| format!("sign-in answered {} without a cookie", r.status))
    }

    /// GETs `uri` with the session `cookie`, as that browser would: no
    /// signing in again on a 401.
    ///
    /// # Errors
    /// If memoria cannot be reached.
    pub async fn get_with(&self, cookie: &str, uri: &str) -> Result<Page, String> {
        let start = tokio::time::Instant::now();
        let response = self.http_get(uri, Some(cookie)).await?;
        Ok(Page {
            response,
            elapsed: start.elapsed(),
        })
    }

    /// POSTs the form `fields` to `uri` with the session `cookie`.
    ///
    /// # Errors
    /// If memoria cannot be reached.
    pub async fn post_form_with(
        &self,
        cookie: &str,
        uri: &str,
        fields: &[(&str, &str)],
    ) -> Result<Page, String> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        for (k, v) in fields {
            form.append_pair(k, v);
        }
        self.post_with(
            cookie,
            uri,
            "application/x-www-form-urlencoded",
            form.finish().into_bytes(),
        )
        .await
    }

    /// POSTs `body` of `content_type` to `uri` with the session `cookie`
    /// (a form with a file, as a browser submits it); the response is not
    /// followed.
    ///
    /// # Errors
    /// If memoria cannot be reached.
    pub async fn post_with(
        &self,
        cookie: &str,
        uri: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Result<Page, String> {
        let start = tokio::time::Instant::now();
        let response = self
            .http_send(
                http::Method::POST,
                uri,
                Some(cookie),
                Some((content_type, body)),
            )
            .await?;
        Ok(Page {
            response,
            elapsed: start.elapsed(),
        })
    }

    /// The owners file memoria admits from, read on every request.
    pub fn owners_file(&self) -> &std::path::Path {
        &self.owners_file
    }

    /// Rewrites the owners file to name exactly `owners` (a new file
    /// renamed over the old): memoria's next request reads it (§4.3).
    ///
    /// # Errors
    /// If the file cannot be written.
    pub fn set_owners(&self, owners: &[&str]) -> Result<(), String> {
        let owners: Vec<String> = owners.iter().map(|o| o.to_string()).collect();
        write_owners(&self.owners_file, &owners).map_err(|e| e.to_string())
    }

    /// The host this memoria serves on ([`MEMORIA_HOST`] for
    /// [`MEMORIA_CONSUMER`]).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The consumer name its tokens are accepted under at every sibling.
    pub fn consumer(&self) -> &str {
        &self.consumer
    }

    /// The token file memoria reads for `app` on every call to it, when
    /// the world uses token files ([`World::use_token_files`]).
    pub fn token_file(&self, app: &str) -> Option<&std::path::Path> {
        self.token_files.get(app).map(std::path::PathBuf::as_path)
    }

    /// Delivers `token` as memoria's token for `app` (§6.2 phase 2: the
    /// platform config rewritten, a new file renamed over the old); true
    /// if the file held another token before. memoria's next call to
    /// `app` carries it.
    ///
    /// # Errors
    /// If the world does not use token files, or the file cannot be written.
    pub fn set_sibling_token(&self, app: &str, token: &str) -> Result<bool, String> {
        let path = self
            .token_file(app)
            .ok_or_else(|| format!("no token file for {app}: call World::use_token_files"))?;
        let before = std::fs::read_to_string(path).unwrap_or_default();
        if before.trim() == token {
            return Ok(false);
        }
        write_atomically(path, &format!("{token}\n")).map_err(|e| e.to_string())?;
        Ok(true)
    }

    /// Writes `text` over `app`'s token file as it stands (an empty or
    /// broken delivery).
    ///
    /// # Errors
    /// As [`Memoria::set_sibling_token`].
    pub fn write_token_file(&self, app: &str, text: &str) -> Result<(), String> {
        let path = self
            .token_file(app)
            .ok_or_else(|| format!("no token file for {app}"))?;
        write_atomically(path, text).map_err(|e| e.to_string())
    }

    /// Removes `app`'s token file: while it is gone memoria calls `app`
    /// with no token at all, which is to say not at all.
    ///
    /// # Errors
    /// As [`Memoria::set_sibling_token`].
    pub fn remove_token_file(&self, app: &str) -> Result<(), String> {
        let path = self
            .token_file(app)
            .ok_or_else(|| format!("no token file for {app}"))?;
        std::fs::remove_file(path).map_err(|e| e.to_string())
    }

    /// Removes the owners file: while it is gone memoria admits nobody.
    ///
    /// # Errors
    /// If the file cannot be removed.
    pub fn remove_owners_file(&self) -> Result<(), String> {
        std::fs::remove_file(&self.owners_file).map_err(|e| e.to_string())
    }

    /// Every sign-in link memoria has delivered so far: (owner, url).
    pub fn delivered_links(&self) -> Vec<(String, String)> {
        self.delivery.links()
    }

    /// Submits the sign-in form for `address` from the browser, signed out
    /// (`POST /auth/begin`, §3.2), timing it in simulated time.
    ///
    /// # Errors
    /// If memoria cannot be reached.
    pub async fn begin_sign_in(&self, address: &str) -> Result<Page, String> {
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("address", address)
            .finish();
        let start = tokio::time::Instant::now();
        let response = self
            .http_send(
                http::Method::POST,
                "/auth/begin",
                None,
                Some(("application/x-www-form-urlencoded", body.into_bytes())),
            )
            .await?;
        Ok(Page {
            response,
            elapsed: start.elapsed(),
        })
    }

    /// Follows a delivered sign-in link `url` from the browser, signed out
    /// (`GET /auth/login`, §3.2); the response is not followed.
    ///
    /// # Errors
    /// If the link is not memoria's, or memoria cannot be reached.
    pub async fn follow_sign_in_link(&self, url: &str) -> Result<Page, String> {
        let path = url
            .strip_prefix(&format!("http://{}", self.host))
            .ok_or("the link is not memoria's")?;
        let start = tokio::time::Instant::now();
        let response = self.http_get(path, None).await?;
        Ok(Page {
            response,
            elapsed: start.elapsed(),
        })
    }

    async fn http_get(&self, path: &str, cookie: Option<&str>) -> Result<TestResponse, String> {
        self.http_send(http::Method::GET, path, cookie, None).await
    }

    /// One exchange from the browser host; `body` is (content type, bytes).
    async fn http_send(
        &self,
        method: http::Method,
        path: &str,
        cookie: Option<&str>,
        body: Option<(&str, Vec<u8>)>,
    ) -> Result<TestResponse, String> {
        let mut req = http::Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::HOST, self.host.as_str());
        if let Some(c) = cookie {
            req = req.header(http::header::COOKIE, c);
        }
        let bytes = match body {
            Some((content_type, bytes)) => {
                req = req.header(http::header::CONTENT_TYPE, content_type);
                bytes::Bytes::from(bytes)
            }
            None => bytes::Bytes::new(),
        };
        let req = req
            .body(http_body_util::Full::new(bytes))
            .map_err(|e| e.to_string())?;
        let r = memoria::exchange(&TurmoilDialer, &self.host, MEMORIA_PORT, req)
            .await
            .map_err(|e| e.to_string())?;
        Ok(TestResponse {
            status: http::StatusCode::from_u16(r.status).map_err(|e| e.to_string())?,
            headers: r.headers,
            body: String::from_utf8_lossy(&r.body).into_owned(),
        })
    }

    /// The session cookie `owner` browses with (signing in first if
    /// needed): a scenario keeps it to use after `owner` is removed.
    ///
    /// # Errors
    /// If `owner` is not admitted now, or the sign-in sets no session.
    pub async fn session(&mut self, owner: &str) -> Result<String, String> {
        self.cookie(owner).await
    }

    async fn cookie(&mut self, owner: &str) -> Result<String, String> {
        if let Some(c) = self.cookies.get(owner) {
            return Ok(c.clone());
        }
        let who = self
            .state()
            .instance()
            .lock()
            .map_err(|_| "instance lock".to_string())?
            .admit(owner)
            .ok_or_else(|| format!("{owner} is not an owner"))?;
        self.state().deliver_sign_in_link(&who);
        let (_, url) = self
            .delivery
            .links()
            .into_iter()
            .rev()
            .find(|(o, _)| o == who.address())
            .ok_or("no sign-in link was delivered")?;
        let path = url
            .strip_prefix(&format!("http://{}", self.host))
            .ok_or("the link is not memoria's")?
            .to_string();
        let r = self.http_get(&path, None).await?;
        let cookie = r
            .headers
            .get(http::header::SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.split(';').next())
            .ok_or_else(|| format!("sign-in answered {} without a cookie", r.status))?
            .to_string();
        self.cookies.insert(owner.to_string(), cookie.clone());
        Ok(cookie)
    }

    /// Searches as `owner` through the web page over HTTP, timing it in
    /// simulated time (signing in first, untimed, if needed).
    ///
    /// # Panics
    /// If `owner` cannot sign in or memoria cannot be reached: a scenario
    /// that cannot search has nothing to assert.
    pub async fn search(&mut self, owner: &str, q: &str) -> Page {
        let uri = format!("/?q={}", memoria::testkit::form_encode(q));
        self.get(owner, &uri).await
    }

    /// POSTs `body` of `content_type` to `uri` as `owner` over HTTP, as a
    /// browser submits a form (a scriptless upload, gate 15), timing it in
    /// simulated time; the response is not followed.
    ///
    /// # Panics
    /// As [`Memoria::search`].
    pub async fn post(
        &mut self,
        owner: &str,
        uri: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Page {
        let cookie = self.cookie(owner).await.expect("signed in");
        let start = tokio::time::Instant::now();
        let response = self
            .http_send(
                http::Method::POST,
                uri,
                Some(&cookie),
                Some((content_type, body)),
            )
            .await
            .expect("memoria answers");
        Page {
            response,
            elapsed: start.elapsed(),
        }
    }

    /// GETs `uri` as `owner` over HTTP, timing it in simulated time.
    ///
    /// # Panics
    /// As [`Memoria::search`].
    pub async fn get(&mut self, owner: &str, uri: &str) -> Page {
        let mut retried = false;
        loop {
            let cookie = self.cookie(owner).await.expect("signed in");
            let start = tokio::time::Instant::now();
            let response = self
                .http_get(uri, Some(&cookie))
                .await
                .expect("memoria answers");
            let elapsed = start.elapsed();
            // A session that expired (a scenario skipped a day) signs in again, untimed.
            if response.status == http::StatusCode::UNAUTHORIZED && !retried {
                self.cookies.remove(owner);
                retried = true;
                continue;
            }
            return Page { response, elapsed };
        }
    }
}
