//! Standing memoria up inside a world: its data and owners directories, its clients to the fakes behind the world's guard, its host in the simulation, and every wake (again) from its data directory.
//!
//! [`World::run_consumers`] calls [`World::stand_up`] once per consumer;
//! the host it adds loops wake, serve, and on a restart wakes again, putting
//! back a backup the scenario asked to restore first.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use memoria::Admission;
use memoria::AppState;
use memoria::EgressMode;
use memoria::testkit::CapturedDelivery;
use memoria::{Dek, Sealer};
use memoria::{Instance, InstanceConfig};
use memoria::{SiblingClient, SiblingConfig, SiblingToken};

use super::crash::{CrashWatch, Crashable};
use super::{
    Consumer, HOME_HOST, MEMORIA_PORT, Memoria, OWNERS_FILE_NAME, PROVIDER_STUB_KEY,
    PROVIDER_STUB_PORT, SIBLING_PORT, SIM_DEK_BYTES, SimClock, SimFailure, TEAM, World,
};
use crate::fake::home::HOME_LABEL;
use crate::guard::GuardedDialer;
use crate::keymail::KeymailClassifier;
use crate::net::{TurmoilDialer, TurmoilListener};

impl World {
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

    /// Wakes one memoria for `consumer` and adds its host to `sim`;
    /// returns the scenario's handle on it, the directories it lives in,
    /// which must outlive the run, and what the world needs to end and
    /// wake it after a simulated crash ([`Crashable`]).
    pub(super) fn stand_up(
        &self,
        sim: &mut turmoil::Sim<'_>,
        consumer: &Consumer,
    ) -> Result<(Memoria, [tempfile::TempDir; 2], Crashable), SimFailure> {
        let fail = |message: String| SimFailure {
            seed: self.seed,
            message,
            refused: None,
        };
        let data = tempfile::Builder::new()
            .prefix("memoria-sim-")
            .tempdir()
            .map_err(|e| fail(e.to_string()))?;
        // Configured as `memoria serve`: the data directory one level down,
        // so the default tombstone directory beside it is inside the
        // world's own temporary directory (§7.4).
        let data_dir = if self.serve_config {
            let d = data.path().join(SERVE_DATA_DIR_NAME);
            std::fs::create_dir_all(&d).map_err(|e| fail(format!("{}: {e}", d.display())))?;
            d
        } else {
            data.path().to_path_buf()
        };
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
            data_dir: data_dir.clone(),
            serve: self.serve_config,
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
        let tombstone_dir = boot.tombstone_dir().map_err(|e| fail(e.to_string()))?;
        let slot: Arc<std::sync::Mutex<Option<AppState>>> =
            Arc::new(std::sync::Mutex::new(Some(first)));
        let restart = Arc::new(tokio::sync::Notify::new());
        let restore: Arc<std::sync::Mutex<Option<(std::path::PathBuf, bool)>>> = Arc::default();
        let operator: Arc<std::sync::Mutex<Option<Operator>>> = Arc::default();
        let outcome: Arc<std::sync::Mutex<Option<OperatorOutcome>>> = Arc::default();
        let (host_slot, host_restart, host_restore) =
            (slot.clone(), restart.clone(), restore.clone());
        let (host_operator, host_outcome) = (operator.clone(), outcome.clone());
        let crashable = Crashable {
            host: consumer.host.clone(),
            slot: slot.clone(),
            watch: CrashWatch::default(),
        };
        sim.host(consumer.host.as_str(), move || {
            let (slot, restart, boot, restore) = (
                host_slot.clone(),
                host_restart.clone(),
                boot.clone(),
                host_restore.clone(),
            );
            let (operator, outcome) = (host_operator.clone(), host_outcome.clone());
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
                            if let Some((backup, whole)) = pending {
                                copy_data(&backup, &boot.data_dir, true, whole)?;
                            }
                            // What an operator or a disk did while it was
                            // down (issue 26, gate 10).
                            let act = operator.lock().map_err(|_| "operator")?.take();
                            if let Some(act) = act {
                                let done = boot.operate(act)?;
                                *outcome.lock().map_err(|_| "outcome")? = Some(done);
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
            operator,
            outcome,
            tombstone_dir,
            crash_dir: data.path().to_path_buf(),
            data_dir,
            backups_dir: owners_dir.path().join("backups"),
            clock,
            delivery,
            cookies: BTreeMap::new(),
            owners_file,
            host: consumer.host.clone(),
            consumer: consumer.name.clone(),
            token_files,
            crash: crashable.watch.clone(),
            landings_seen: 0,
            whole_backups: std::sync::Mutex::default(),
        };
        Ok((memoria, [data, owners_dir], crashable))
    }
}

/// What memoria's host needs to wake (again) from its data directory.
#[derive(Clone)]
struct Boot {
    data_dir: std::path::PathBuf,
    /// Woken as `memoria serve` does ([`World::configure_as_serve`]).
    serve: bool,
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

/// The data directory's name in a world configured as `memoria serve`
/// (the gate's `memoria-data`; its tombstone directory is then
/// `memoria-data.tombstones` beside it). Our choice.
const SERVE_DATA_DIR_NAME: &str = "memoria-data";
/// How far from the end of a snapshot blob the damaged byte sits, in bytes:
/// inside the sealed image (gate 10's `DAMAGED_BYTE_FROM_END`).
const DAMAGED_BYTE_FROM_END: usize = 5;

/// What an operator or a disk does to memoria's files while it is down
/// (issue 26, gate 10; §7.4).
#[derive(Debug, Clone)]
pub enum Operator {
    /// memoria started once on a log with these bytes in place of its
    /// own, which is put back after.
    StartOnLog(Vec<u8>),
    /// The newest snapshot generation's blob deleted.
    DeleteGeneration,
    /// One byte of the newest snapshot generation's blob flipped.
    DamageBlob,
}

/// What came of an [`Operator`] act.
#[derive(Debug)]
pub enum OperatorOutcome {
    /// memoria started on the log given ([`Operator::StartOnLog`]): woken,
    /// or refused with this error.
    Started(Result<(), memoria::Error>),
    /// The generation whose blob was deleted or damaged, if the bucket held one.
    Bucket(Option<i64>),
}

impl Boot {
    /// The directory memoria's tombstone log lives in: the data directory
    /// in a world woken by [`Instance::wake`], else where the configuration
    /// puts it.
    fn tombstone_dir(&self) -> Result<std::path::PathBuf, memoria::Error> {
        if self.serve {
            Ok(self.config()?.tombstone_dir)
        } else {
            Ok(self.data_dir.clone())
        }
    }

    /// memoria's configuration as `memoria serve` resolves it from an
    /// environment holding the world's DEK and an owner (the world's
    /// admission replaces it), nothing else.
    fn config(&self) -> Result<memoria::Config, memoria::Error> {
        let key = Dek::from_bytes(SIM_DEK_BYTES).to_base64();
        let env = move |k: &str| match k {
            memoria::DEK_ENV => Some(key.clone()),
            memoria::OWNERS_ENV => Some(super::OWNERS[0].to_string()),
            _ => None,
        };
        memoria::resolve_config(&self.data_dir, &env)
    }

    /// Does `act` to memoria's files (memoria is down).
    fn operate(&self, act: Operator) -> Result<OperatorOutcome, String> {
        let io = |p: &std::path::Path, e: std::io::Error| format!("{}: {e}", p.display());
        match act {
            Operator::StartOnLog(bytes) => {
                let dir = self.tombstone_dir().map_err(|e| e.to_string())?;
                let path = memoria::TombstoneLog::path_in(&dir);
                let own = std::fs::read(&path).map_err(|e| io(&path, e))?;
                write_bytes_atomically(&path, &bytes).map_err(|e| io(&path, e))?;
                let started = self.wake().map(drop);
                write_bytes_atomically(&path, &own).map_err(|e| io(&path, e))?;
                Ok(OperatorOutcome::Started(started))
            }
            Operator::DeleteGeneration | Operator::DamageBlob => {
                let newest = memoria::snapshot::latest_generation(&self.data_dir)
                    .map_err(|e| e.to_string())?;
                if newest == 0 {
                    return Ok(OperatorOutcome::Bucket(None));
                }
                let blob = memoria::snapshot::blob_path(&self.data_dir, newest);
                if matches!(act, Operator::DeleteGeneration) {
                    std::fs::remove_file(&blob).map_err(|e| io(&blob, e))?;
                } else {
                    let mut bytes = std::fs::read(&blob).map_err(|e| io(&blob, e))?;
                    let at = bytes.len().saturating_sub(DAMAGED_BYTE_FROM_END);
                    if let Some(b) = bytes.get_mut(at) {
                        *b ^= 0xff;
                    }
                    write_bytes_atomically(&blob, &bytes).map_err(|e| io(&blob, e))?;
                }
                Ok(OperatorOutcome::Bucket(Some(newest)))
            }
        }
    }

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
        let instance = if self.serve {
            let mut config = self.config()?;
            config.admission = admission;
            if self.chat.is_some() {
                config.ai = memoria::Ai::On {
                    key: memoria::ProviderKey::parse(PROVIDER_STUB_KEY).map_err(|e| {
                        memoria::Error::new(memoria::ErrorKind::Config, format!("{e:?}"))
                    })?,
                };
            }
            Instance::wake_from(&config, Arc::new(self.clock.clone()))?
        } else {
            Instance::wake(
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
            )?
        };
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

/// Copies the data files of `from` into `to`, never the tombstone log,
/// the roster mark beside it (the tombstone directory's, backed up apart,
/// §7.4) nor SQLite's write-ahead log and shared-memory index (the backup is taken
/// checkpointed); with `replace`, first removes from `to` every such file
/// `from` lacks, the logs included. With `whole`, every file but SQLite's
/// two is copied, a tombstone log or roster mark inside too: what an
/// operator's copy of the whole directory holds.
pub(super) fn copy_data(
    from: &std::path::Path,
    to: &std::path::Path,
    replace: bool,
    whole: bool,
) -> Result<(), String> {
    let wal = |name: &std::ffi::OsStr| {
        let n = name.to_string_lossy();
        n.ends_with("-shm") || n.ends_with("-wal")
    };
    let keep = |name: &std::ffi::OsStr| {
        let n = name.to_string_lossy();
        (whole || (n != memoria::TOMBSTONE_LOG_FILE_NAME && n != memoria::ROSTER_MARK_FILE_NAME))
            && !wal(name)
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
            copy_data(&path, &sub, replace, whole)?;
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

/// Writes `bytes` to `path` as a new file renamed over the old.
fn write_bytes_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let next = path.with_extension("next");
    std::fs::write(&next, bytes)?;
    std::fs::rename(&next, path)
}

/// Writes `owners` to `path`, one a line, as an operator replaces the
/// file: a new file renamed over the old, so no reader meets half of it.
pub(super) fn write_owners(path: &std::path::Path, owners: &[String]) -> std::io::Result<()> {
    write_atomically(path, &(owners.join("\n") + "\n"))
}

/// Writes `text` to `path` as an operator replaces a config file: a new
/// file renamed over the old, so no reader meets half of it.
pub(super) fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let next = path.with_extension("next");
    std::fs::write(&next, text)?;
    std::fs::rename(&next, path)
}
