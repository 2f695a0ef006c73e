//! The browser client a scenario drives memoria through: [`Memoria`], a browser on [`BROWSER_HOST`](super::BROWSER_HOST) speaking HTTP to memoria's host, with a handle on memoria's state, clock, data directory and files for what a scenario asserts or changes.
//!
//! Every request is a person's: signing in through the captured link,
//! searching, getting and posting pages, all over turmoil in simulated time.
//! The world that boots memoria is [`World`](super::World).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use memoria::AppState;
use memoria::testkit::CapturedDelivery;
use memoria::testkit::TestResponse;

use super::boot::{copy_data, write_atomically, write_owners};
use super::{MEMORIA_PORT, QUESTION_PULL_WORDS, SimClock, TICK_MS};
use crate::net::TurmoilDialer;

/// memoria inside a running simulation, as a scenario drives it: a
/// browser on [`BROWSER_HOST`](super::BROWSER_HOST) speaking HTTP to memoria's host, plus a
/// handle on memoria's state for assertions about its store.
pub struct Memoria {
    pub(super) slot: Arc<std::sync::Mutex<Option<AppState>>>,
    pub(super) restart: Arc<tokio::sync::Notify>,
    /// A backup to restore the data directory from at the next wake, and
    /// whether it is a copy of the whole directory.
    pub(super) restore: Arc<std::sync::Mutex<Option<(std::path::PathBuf, bool)>>>,
    /// What an operator or a disk does to memoria's files at the next wake.
    pub(super) operator: Arc<std::sync::Mutex<Option<super::boot::Operator>>>,
    /// What came of it.
    pub(super) outcome: Arc<std::sync::Mutex<Option<super::boot::OperatorOutcome>>>,
    /// The directory memoria's tombstone log lives in.
    pub(super) tombstone_dir: std::path::PathBuf,
    /// The directory a crash is aimed under: the data directory's, or its
    /// parent's when the tombstone directory lies beside it.
    pub(super) crash_dir: std::path::PathBuf,
    pub(super) data_dir: std::path::PathBuf,
    pub(super) backups_dir: std::path::PathBuf,
    pub(super) clock: SimClock,
    pub(super) delivery: Arc<CapturedDelivery>,
    pub(super) cookies: BTreeMap<String, String>,
    pub(super) owners_file: std::path::PathBuf,
    pub(super) host: String,
    pub(super) consumer: String,
    pub(super) token_files: BTreeMap<String, std::path::PathBuf>,
    /// The crash a scenario aimed at this memoria, shared with the world
    /// that ends and wakes it ([`Memoria::aim_crash`]).
    pub(super) crash: super::crash::CrashWatch,
    /// Crashes landed when the browser last dropped its sessions.
    pub(super) landings_seen: u64,
    /// The backups that copied the whole data directory.
    pub(super) whole_backups: std::sync::Mutex<std::collections::BTreeSet<String>>,
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

    /// Aims crash point `point` (one of [`memoria::testkit::CRASHPOINTS`])
    /// at this memoria (issue 26): when its code reaches the point, it
    /// does nothing more, and the world kills its host, whose software
    /// wakes a new memoria from the same data directory in the next step,
    /// as after a SIGKILL there (`world/crash.rs`). Sessions die with it.
    ///
    /// # Errors
    /// If `point` is no crash point, or one landed and memoria is not
    /// woken yet.
    pub fn aim_crash(&self, point: &str) -> Result<(), String> {
        self.crash.aim(&self.crash_dir, point)
    }

    /// Takes away a crash aimed and not landed; its point, if one was.
    pub fn disarm_crash(&self) -> Option<&'static str> {
        self.crash.disarm()
    }

    /// How many aimed crashes have landed so far (each followed by a wake).
    pub fn crash_landings(&self) -> u64 {
        self.crash.landings()
    }

    /// Waits, in simulated time, until a crash that landed has been
    /// followed by the new memoria's wake (the end of the step it landed
    /// in); at once if none is pending. Sessions held before are dropped.
    pub async fn settle_crash(&mut self) {
        while self.crash.landing_pending() || self.try_state().is_none() {
            tokio::time::sleep(Duration::from_millis(TICK_MS)).await;
        }
        self.forget_sessions_of_the_dead();
    }

    /// Drops the sessions a crashed memoria held: they died with it.
    fn forget_sessions_of_the_dead(&mut self) {
        let landings = self.crash.landings();
        if landings != self.landings_seen {
            self.landings_seen = landings;
            self.cookies.clear();
        }
    }

    /// Moves memoria's calendar forward by `days` whole UTC days.
    pub fn advance_days(&self, days: i64) {
        self.clock.advance_days(days);
    }

    /// memoria's calendar now, in Unix seconds: the run's epoch, the days
    /// and seconds skipped, and the simulation's elapsed time ([`SimClock`]).
    pub fn calendar_unix_s(&self) -> i64 {
        memoria::Clock::now_unix_s(&self.clock)
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
    pub fn backup_data(&self, name: &str, whole: bool) -> Result<(), String> {
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
        copy_data(&self.data_dir, &to, false, whole)?;
        // The log, backed up apart: a copy beside the backup, which only
        // a fault of the log puts back (`Memoria::start_on_log`).
        let log = self.tombstone_log_path();
        if log.is_file() {
            let aside = self.backups_dir.join(format!("{name}.tombstones"));
            std::fs::copy(&log, &aside).map_err(|e| format!("{}: {e}", log.display()))?;
        }
        if whole {
            self.whole_backups
                .lock()
                .map_err(|_| "backups")?
                .insert(name.to_string());
        }
        Ok(())
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
        let whole = self
            .whole_backups
            .lock()
            .map_err(|_| "backups")?
            .contains(name);
        *self.restore.lock().map_err(|_| "restore")? = Some((from, whole));
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
        let (content_type, bytes) = match body {
            Some((content_type, bytes)) => (Some(content_type), bytes::Bytes::from(bytes)),
            None => (None, bytes::Bytes::new()),
        };
        let get = method == http::Method::GET;
        let request = || {
            let mut req = http::Request::builder()
                .method(method.clone())
                .uri(path)
                .header(http::header::HOST, self.host.as_str());
            if let Some(c) = cookie {
                req = req.header(http::header::COOKIE, c);
            }
            if let Some(t) = content_type {
                req = req.header(http::header::CONTENT_TYPE, t);
            }
            req.body(http_body_util::Full::new(bytes.clone()))
                .map_err(|e| e.to_string())
        };
        let landings = self.crash.landings();
        let r = match memoria::exchange(&TurmoilDialer, &self.host, MEMORIA_PORT, request()?).await
        {
            Ok(r) => r,
            // memoria was killed under a GET (a simulated crash): the
            // browser sends it again, once, to the memoria woken since,
            // with the session it had, which died with the old one.
            Err(_) if get && self.settled_crash_since(landings).await => {
                memoria::exchange(&TurmoilDialer, &self.host, MEMORIA_PORT, request()?)
                    .await
                    .map_err(|e| e.to_string())?
            }
            Err(e) => return Err(e.to_string()),
        };
        Ok(TestResponse {
            status: http::StatusCode::from_u16(r.status).map_err(|e| e.to_string())?,
            headers: r.headers,
            body: String::from_utf8_lossy(&r.body).into_owned(),
        })
    }

    /// True if a crash has landed since `landings` were counted, once the
    /// memoria woken after it is up.
    async fn settled_crash_since(&self, landings: u64) -> bool {
        while self.crash.landing_pending() || self.try_state().is_none() {
            tokio::time::sleep(Duration::from_millis(TICK_MS)).await;
        }
        self.crash.landings() > landings
    }

    /// The session cookie `owner` browses with (signing in first if
    /// needed): a scenario keeps it to use after `owner` is removed.
    ///
    /// # Errors
    /// If `owner` is not admitted now, or the sign-in sets no session.
    pub async fn session(&mut self, owner: &str) -> Result<String, String> {
        self.cookie(owner).await
    }

    /// Whether the browser holds a session cookie for `owner` now (taken
    /// since memoria last woke: a restart or a crash ends them).
    pub fn holds_session(&mut self, owner: &str) -> bool {
        self.forget_sessions_of_the_dead();
        self.cookies.contains_key(owner)
    }

    async fn cookie(&mut self, owner: &str) -> Result<String, String> {
        self.forget_sessions_of_the_dead();
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
