//! One simulated world: memoria and its siblings as turmoil hosts, every setting drawn from one seed (§6.5, §10).
//!
//! Size: just over 700 lines because every knob of a world (the stub
//! provider, a home, token files, consumers, mail domains, the owners) is
//! one method of one builder; the hosts' boot is `world/boot.rs` and the
//! browser client `world/browser.rs`.
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
//!
//! This file is the world: its settings, its fakes and the run. Standing
//! memoria up on its host, and waking it again, is `boot.rs`; the browser
//! client a scenario holds, [`Memoria`], is `browser.rs`.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use memoria::Clock as MemoriaClock;
use memoria::EgressMode;
use rand::{Rng as _, SeedableRng as _};

use crate::fake::SubjectKind;
use crate::fake::home::FakeHome;
use crate::fake::model::ModelHandle;
use crate::fake::provider::StubProvider;
use crate::fake::server::{FakeConfig, FakeSibling};
use crate::fake::trace::{Clock, Trace};
use crate::guard::NetGuard;
use crate::keymail::{KEYMAIL_PORT, MailDomain};
use crate::net::serve_turmoil;

mod boot;
mod browser;
mod crash;
mod operator;

pub use browser::{Memoria, Page};

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
/// (`explore`'s `home.rs`, 305 s more) or past the roster copy's TTL
/// (1,020 s more), and for the explorer's new roster generation
/// (`explore`'s `generation.rs`: up to 375 s of pulls and two spells past
/// the TTL, 2,655 s more). A run that finishes earlier is not changed by
/// it; one that never finishes fails at this bound.
pub const SIMULATION_DURATION_S: u64 = 7_200;
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
    /// memoria configured as `memoria serve` reads its environment, its
    /// tombstone directory the default beside the data directory
    /// ([`World::configure_as_serve`]).
    serve_config: bool,
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
            serve_config: false,
        }
    }

    /// Wakes memoria as the `memoria` command does
    /// ([`memoria::resolve_config`], `MEMORIA_TOMBSTONES` unset, then
    /// [`memoria::Instance::wake_from`]): its data directory is
    /// `memoria-data` in a directory of its own, and the tombstone log
    /// lives where the configuration puts it, by default beside the data
    /// directory (§7.4). The world's admission, DEK and AI choice stand.
    pub fn configure_as_serve(&mut self) {
        self.serve_config = true;
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
    /// behaves ([`KeymailClassifier`](crate::KeymailClassifier)): `POST /auth/begin` for an owner
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
    /// (`MEMORIA_HOME_TOKEN_FILE`), under the app key [`HOME_LABEL`](crate::HOME_LABEL),
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
        let mut crashables = vec![];
        for name in names {
            let consumer = self
                .consumer(name)
                .unwrap_or_else(|| panic!("no consumer {name} in this world"));
            let (memoria, dirs, crashable) = self.stand_up(&mut sim, &consumer)?;
            handles.push(memoria);
            keep.push(dirs);
            crashables.push(crashable);
        }
        sim.client(BROWSER_HOST, async move {
            let _keep = keep;
            scenario(handles).await.map_err(Into::into)
        });
        // turmoil's own run loop, with a simulated crash's kill between
        // two steps (`world/crash.rs`).
        while !sim.step().map_err(|e| fail(e.to_string()))? {
            for c in &crashables {
                c.end_if_landed(&mut sim);
            }
        }
        Ok(())
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

/// The port the stub provider serves on inside a world ([`World::use_stub_provider`]).
pub const PROVIDER_STUB_PORT: u16 = 80;

/// The key memoria presents to the stub provider (any bearer passes it).
pub const PROVIDER_STUB_KEY: &str = "stub-provider-key";

/// The DEK every simulated memoria seals under: a fixed test key.
pub const SIM_DEK_BYTES: [u8; 32] = [7u8; 32];

/// The owners file's name in its run's own temporary directory.
pub const OWNERS_FILE_NAME: &str = "owners";
