//! Configuration from the environment: the data directory, the DEK, and the owners list (§3, §4.3).
//!
//! Size: every setting's resolution and its table of tests; the tests are about half of it.
//!
//! - `MEMORIA_DEK` (standard base64 of 32 bytes) or `MEMORIA_DEK_FILE` (a
//!   file holding that text) supplies the DEK in real use.
//! - With neither set, the **development default** applies: a DEK is
//!   generated on first run and stored in `<data>/dek.key` with mode 0600, and
//!   a warning says so every time. If `MEMORIA_OWNERS` is also unset, the
//!   development default makes one owner, [`DEV_OWNER`], and names it.
//! - The owners list is `MEMORIA_OWNERS` (the list itself, read at start:
//!   removing an owner is a restart) or `MEMORIA_OWNERS_FILE` (a file
//!   holding it, read again on every request: removing an owner from the
//!   file refuses them on their next request, and a file that cannot be
//!   read admits nobody until it can). Not both (§4.3).
//! - Outside the development default, missing owners are a configuration
//!   error: memoria refuses to start without them (§4.3), and with an owners
//!   file it cannot read.
//! - `MEMORIA_AI` is the team owner's one AI choice, `on` or `off` (§8.3,
//!   decision 13): on or off, never which provider. Unset or empty is off,
//!   and off means no egress at all: no provider client is built (§8.1).
//!   On requires the provider key, `MEMORIA_PROVIDER_KEY` or
//!   `MEMORIA_PROVIDER_KEY_FILE` (a file holding it). Nothing here names a
//!   host, a URL or a model: those are fixed in code (§8.3).
//! - `MEMORIA_TOMBSTONES` names the tombstone directory, where the durable
//!   tombstone log lives (§7.4), apart from the data directory so that a
//!   restore of the data does not rewind it. Unset, it is the directory
//!   beside the data directory named after it with
//!   [`TOMBSTONE_DIR_SUFFIX`] (`./memoria-data.tombstones` for the default
//!   data directory): outside the data directory, and needing no setup.
//!   Set inside the data directory, memoria warns on every start.
//! - `MEMORIA_SIBLING_CA_FILE` names a PEM file of a team's private CA
//!   certificates: an `https://` sibling or home is trusted if its
//!   certificate chains to Mozilla's roots or to one of these (§6.1). Unset
//!   means Mozilla's roots alone; a file that cannot be used refuses to
//!   start. The provider never trusts it.

use std::path::{Path, PathBuf};

use crate::access::admission::{Admission, DEV_OWNER, OWNERS_ENV, OWNERS_FILE_ENV};
use crate::ai::provider::ProviderKey;
use crate::error::{Error, ErrorKind};
use crate::policy::egress::EgressMode;
use crate::storage::seal::Dek;

/// Environment variable holding the DEK as base64.
pub const DEK_ENV: &str = "MEMORIA_DEK";
/// Environment variable naming a file that holds the DEK as base64.
pub const DEK_FILE_ENV: &str = "MEMORIA_DEK_FILE";
/// Environment variable naming the data directory.
pub const DATA_ENV: &str = "MEMORIA_DATA";
/// The data directory when none is given.
pub const DATA_DIR_DEFAULT: &str = "./memoria-data";
/// The development DEK's file name inside the data directory.
pub const DEV_DEK_FILE_NAME: &str = "dek.key";

/// Environment variable naming the tombstone directory, where the durable
/// tombstone log lives (§7.4).
pub const TOMBSTONES_ENV: &str = "MEMORIA_TOMBSTONES";
/// The default tombstone directory's name is the data directory's with this
/// appended, beside it (our choice: outside the data directory, so a
/// restore of the data directory leaves it alone, §7.4).
pub const TOMBSTONE_DIR_SUFFIX: &str = ".tombstones";

/// Environment variable holding the team owner's AI choice: `on` or `off`
/// (case-insensitive); unset or empty is off (§8.1, §8.3).
pub const AI_ENV: &str = "MEMORIA_AI";
/// Environment variable holding the provider's API key (§8.3).
pub const PROVIDER_KEY_ENV: &str = "MEMORIA_PROVIDER_KEY";
/// Environment variable naming a file that holds the provider's API key.
pub const PROVIDER_KEY_FILE_ENV: &str = "MEMORIA_PROVIDER_KEY_FILE";

/// Environment variable naming a PEM file of the team's private CA
/// certificates, trusted for `https://` siblings and the home beside
/// Mozilla's roots (§6.1).
pub const SIBLING_CA_FILE_ENV: &str = "MEMORIA_SIBLING_CA_FILE";

/// The variable that keeps Calendar's bodies: `on`, or `off` (the
/// default, §3.5: "Calendar bodies off by default"), when an event is kept
/// as its title alone.
pub const CALENDAR_BODIES_ENV: &str = "MEMORIA_CALENDAR_BODIES";

/// The variable naming how many seconds `memoria serve` goes without a
/// request before it evicts the decrypted index (§3.5); `0` never evicts.
/// Unset: [`IDLE_EVICT_DEFAULT_S`].
pub const IDLE_EVICT_ENV: &str = "MEMORIA_IDLE_EVICT_S";

/// How long `memoria serve` goes without a request before it evicts the
/// decrypted index and vectors from memory (§3.5: "idle eviction of the
/// decrypted handle — the mitigation that matters most"). The spec names
/// no figure; 15 minutes is ours: past a working session's pauses, so a
/// team at work rarely waits for a wake, and short enough that an idle
/// night holds no plaintext index. `MEMORIA_IDLE_EVICT_S` overrides it
/// (0: never).
pub const IDLE_EVICT_DEFAULT_S: u64 = 15 * 60;

/// The team owner's AI choice (§8.3): off, or on with the key to the one
/// provider. Its `Debug` never shows the key.
#[derive(Debug, Clone, Default)]
pub enum Ai {
    /// AI off: nothing leaves the instance, and no provider client is built.
    #[default]
    Off,
    /// AI on: queries and passages are embedded by TensorX.
    On {
        /// The provider key.
        key: ProviderKey,
    },
}

/// Where the DEK came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DekSource {
    /// `MEMORIA_DEK`.
    Env,
    /// `MEMORIA_DEK_FILE`.
    File(PathBuf),
    /// The development default's key file; `created` if this run generated it.
    DevDefault {
        /// The key file.
        path: PathBuf,
        /// True if this run generated the key.
        created: bool,
    },
}

/// Resolved configuration.
#[derive(Debug)]
pub struct Config {
    /// The data directory.
    pub data_dir: PathBuf,
    /// The tombstone directory (`MEMORIA_TOMBSTONES`, or beside the data
    /// directory): where the durable tombstone log lives (§7.4).
    pub tombstone_dir: PathBuf,
    /// The DEK.
    pub dek: Dek,
    /// Where it came from.
    pub dek_source: DekSource,
    /// The owners list's source, read on every question (§4.3).
    pub admission: Admission,
    /// True if the owners list is the development default's made owner.
    pub dev_owner: bool,
    /// Suite shape (§4.3): the home's client (`MEMORIA_HOME`, its token
    /// `MEMORIA_HOME_TOKEN` or `MEMORIA_HOME_TOKEN_FILE`, `MEMORIA_TEAM`),
    /// whose roster [`Config::admission`] admits from after the owners.
    /// `None` in lone shape.
    pub home: Option<crate::access::home::HomeClient>,
    /// The AI choice (`MEMORIA_AI`).
    pub ai: Ai,
    /// What an `https://` sibling or home is verified against: Mozilla's
    /// roots, plus `MEMORIA_SIBLING_CA_FILE`'s certificates (§6.1).
    pub sibling_trust: crate::net::tls::TlsTrust,
    /// True if a provider key is configured while AI is off (a warning: it
    /// is not used).
    key_unused: bool,
    /// True if `MEMORIA_TOMBSTONES` names the data directory or a directory
    /// inside it (a warning: a restore of the data rewinds the log).
    tombstones_in_data: bool,
}

impl Config {
    /// True under the development default (no DEK configured).
    pub fn is_dev_default(&self) -> bool {
        matches!(self.dek_source, DekSource::DevDefault { .. })
    }

    /// The egress mode the footer states: [`EgressMode::AiOn`] exactly when
    /// `MEMORIA_AI=on`.
    pub fn egress(&self) -> EgressMode {
        match self.ai {
            Ai::Off => EgressMode::AiOff,
            Ai::On { .. } => EgressMode::AiOn,
        }
    }

    /// The provider key, when AI is on.
    pub fn provider_key(&self) -> Option<&ProviderKey> {
        match &self.ai {
            Ai::Off => None,
            Ai::On { key } => Some(key),
        }
    }

    /// Warnings to print at start-up; content-free.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let DekSource::DevDefault { path, created } = &self.dek_source {
            w.push(format!(
                "development default: the DEK {} {} (mode 0600). Set {DEK_ENV} or {DEK_FILE_ENV} in real use.",
                if *created { "was generated at" } else { "is read from" },
                path.display()
            ));
        }
        if self.dev_owner {
            w.push(format!(
                "development default: {OWNERS_ENV} and {OWNERS_FILE_ENV} are unset, so the one owner is {DEV_OWNER}."
            ));
        }
        if self.tombstones_in_data {
            w.push(format!(
                "{TOMBSTONES_ENV} names {}, inside the data directory: restoring the data directory from a backup also rewinds the tombstone log, and memoria cannot then tell what was deleted since (§7.4). Name a directory outside it, backed up apart.",
                self.tombstone_dir.display()
            ));
        }
        if self.key_unused {
            w.push(format!(
                "a provider key is configured but {AI_ENV} is off, so it is not used and nothing is sent."
            ));
        }
        w
    }
}

/// Resolves configuration from `env` (a lookup, so tests need not touch the process environment).
///
/// # Errors
/// [`ErrorKind::Config`] for a malformed DEK or owners list, for a
/// `MEMORIA_DEK_FILE` or `MEMORIA_OWNERS_FILE` that cannot be read (the I/O
/// error is its source), for both `MEMORIA_OWNERS` and `MEMORIA_OWNERS_FILE`
/// set, or for missing owners outside the development default, or for a development
/// key file that is missing beside an existing store (no new key is made);
/// [`ErrorKind::Io`] if the development default's key file cannot be read or
/// written.
pub fn resolve(data_dir: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Config, Error> {
    let (dek, dek_source) = if let Some(text) = env(DEK_ENV).filter(|s| !s.trim().is_empty()) {
        (Dek::from_base64(&text)?, DekSource::Env)
    } else if let Some(file) = env(DEK_FILE_ENV).filter(|s| !s.trim().is_empty()) {
        let path = PathBuf::from(file);
        // A key file that cannot be read is the operator's configuration, not storage.
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::with_source(
                ErrorKind::Config,
                format!(
                    "{DEK_FILE_ENV} names {}, which cannot be read",
                    path.display()
                ),
                e,
            )
        })?;
        (Dek::from_base64(&text)?, DekSource::File(path))
    } else {
        let path = data_dir.join(DEV_DEK_FILE_NAME);
        let (dek, created) = dev_dek(&path)?;
        (dek, DekSource::DevDefault { path, created })
    };
    let dev = matches!(dek_source, DekSource::DevDefault { .. });
    let list = env(OWNERS_ENV).filter(|s| !s.trim().is_empty());
    let file = env(OWNERS_FILE_ENV).filter(|s| !s.trim().is_empty());
    let (admission, dev_owner) = match (list, file) {
        (Some(_), Some(_)) => {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "{OWNERS_ENV} and {OWNERS_FILE_ENV} are both set: name the owners in one of them"
                ),
            ));
        }
        (Some(list), None) => (Admission::parse(&list)?, false),
        (None, Some(path)) => (Admission::file(path.trim())?, false),
        (None, None) if dev => (Admission::dev_default(), true),
        (None, None) => {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "{OWNERS_ENV} and {OWNERS_FILE_ENV} are unset: memoria refuses to start without owners (a comma-separated list of addresses, or a file holding one)"
                ),
            ));
        }
    };
    let (ai, key_unused) = resolve_ai(env)?;
    let sibling_trust = resolve_sibling_trust(env)?;
    let home = resolve_home(env)?.map(|h| h.with_trust(sibling_trust.clone()));
    let tombstone_dir = match env(TOMBSTONES_ENV).filter(|s| !s.trim().is_empty()) {
        Some(dir) => PathBuf::from(dir.trim()),
        None => tombstone_dir_default(data_dir)?,
    };
    let tombstones_in_data = within(&tombstone_dir, data_dir);
    let admission = match &home {
        Some(h) => admission.with_roster(crate::access::roster::RosterCopy::new(
            h.team(),
            std::sync::Arc::new(crate::clock::SystemClock),
        )),
        None => admission,
    };
    Ok(Config {
        data_dir: data_dir.to_path_buf(),
        tombstone_dir,
        tombstones_in_data,
        dek,
        dek_source,
        admission,
        dev_owner,
        home,
        ai,
        sibling_trust,
        key_unused,
    })
}

/// The tombstone directory when `MEMORIA_TOMBSTONES` is unset: beside the
/// data directory, named after it with [`TOMBSTONE_DIR_SUFFIX`]
/// (`/srv/memoria-data` → `/srv/memoria-data.tombstones`), never inside it
/// (§7.4).
///
/// # Errors
/// [`ErrorKind::Config`] if the data directory has no name to take (the
/// file system's root): then `MEMORIA_TOMBSTONES` must be set.
pub fn tombstone_dir_default(data_dir: &Path) -> Result<PathBuf, Error> {
    let absolute = std::path::absolute(data_dir).map_err(|e| {
        Error::with_source(
            ErrorKind::Config,
            format!(
                "the data directory {} has no absolute form",
                data_dir.display()
            ),
            e,
        )
    })?;
    // `absolute` keeps `..`, whose path has no file name: refused below.
    let normal: PathBuf = absolute.components().collect();
    match normal.file_name() {
        Some(name) => {
            let mut name = name.to_os_string();
            name.push(TOMBSTONE_DIR_SUFFIX);
            Ok(normal.with_file_name(name))
        }
        _ => Err(Error::new(
            ErrorKind::Config,
            format!(
                "the data directory {} has no name to put the tombstone directory beside: set {TOMBSTONES_ENV}",
                data_dir.display()
            ),
        )),
    }
}

/// True if `dir` is `data_dir` or lies inside it, compared as absolute
/// paths, component by component (no symlink is resolved).
fn within(dir: &Path, data_dir: &Path) -> bool {
    match (std::path::absolute(dir), std::path::absolute(data_dir)) {
        (Ok(d), Ok(data)) => {
            let d: PathBuf = d.components().collect();
            let data: PathBuf = data.components().collect();
            d.starts_with(&data)
        }
        _ => false,
    }
}

/// Suite shape's home (§4.3): `MEMORIA_HOME`, with `MEMORIA_TEAM` (the
/// host must be `<team>.home.oficina.works`, §6.3) and memoria's consumer
/// token at the home, `MEMORIA_HOME_TOKEN` or a file `MEMORIA_HOME_TOKEN_FILE`
/// names (read again on every pull, §6.2). Unset `MEMORIA_HOME` is lone shape.
fn resolve_home(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<crate::access::home::HomeClient>, Error> {
    use crate::access::home::{HOME_ENV, HOME_TOKEN_ENV, HOME_TOKEN_FILE_ENV, HomeClient};
    let set = |k: &str| env(k).filter(|s| !s.trim().is_empty());
    let Some(url) = set(HOME_ENV) else {
        return Ok(None);
    };
    let team = set("MEMORIA_TEAM")
        .ok_or_else(|| Error::new(ErrorKind::Config, format!("{HOME_ENV} needs MEMORIA_TEAM")))?;
    let token = match (set(HOME_TOKEN_ENV), set(HOME_TOKEN_FILE_ENV)) {
        (Some(_), Some(_)) => {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{HOME_TOKEN_ENV} and {HOME_TOKEN_FILE_ENV} are both set"),
            ));
        }
        (Some(t), None) => crate::net::token::SiblingToken::Fixed(t),
        (None, Some(path)) => {
            // Read once now, so that a start with a file that cannot be
            // used is refused; then again on every pull (§6.2).
            let file = crate::net::token::SiblingToken::File(path.trim().into());
            file.current().map_err(|e| {
                Error::with_source(
                    ErrorKind::Config,
                    format!("the file {HOME_TOKEN_FILE_ENV} names cannot be used"),
                    e,
                )
            })?;
            file
        }
        (None, None) => {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{HOME_ENV} needs {HOME_TOKEN_ENV} or {HOME_TOKEN_FILE_ENV}"),
            ));
        }
    };
    HomeClient::with_token(
        team.trim(),
        url.trim(),
        token,
        std::sync::Arc::new(crate::net::transport::TcpDialer),
    )
    .map(Some)
}

/// What `https://` siblings and the home are verified against (§6.1):
/// Mozilla's roots, plus the certificates of the PEM file
/// `MEMORIA_SIBLING_CA_FILE` names, if it is set and not blank.
///
/// # Errors
/// [`ErrorKind::Config`] naming the file, when it cannot be read, is over
/// [`crate::net::tls::SIBLING_CA_FILE_BYTES_MAX`], or holds no usable
/// certificate (the [`memoria_tls::CaFileError`] is the source).
pub fn resolve_sibling_trust(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<crate::net::tls::TlsTrust, Error> {
    use crate::net::tls::TlsTrust;
    match env(SIBLING_CA_FILE_ENV).filter(|s| !s.trim().is_empty()) {
        None => Ok(TlsTrust::public()),
        Some(path) => TlsTrust::from_ca_file(Path::new(path.trim())).map_err(|e| {
            Error::with_source(
                ErrorKind::Config,
                format!("{SIBLING_CA_FILE_ENV} is refused"),
                e,
            )
        }),
    }
}

/// `MEMORIA_CALENDAR_BODIES` (§3.5): `Some(true)` for `on`, `Some(false)`
/// for `off`, `None` when unset, and then the sibling client's own default
/// stands ([`crate::BODIES_REFUSED_BY_DEFAULT`]: off). One default, in one
/// place.
///
/// # Errors
/// [`ErrorKind::Config`] for any value but `on` or `off`.
pub fn resolve_calendar_bodies(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<bool>, Error> {
    match env(CALENDAR_BODIES_ENV).as_deref().map(str::trim) {
        None => Ok(None),
        Some("off") => Ok(Some(false)),
        Some("on") => Ok(Some(true)),
        Some(_) => Err(Error::new(
            ErrorKind::Config,
            format!("{CALENDAR_BODIES_ENV} must be on or off"),
        )),
    }
}

/// `MEMORIA_IDLE_EVICT_S` (§3.5): how long without a request before the
/// decrypted index is evicted; `None` (the value `0`) never evicts.
///
/// # Errors
/// [`ErrorKind::Config`] if the value is not a whole number of seconds.
pub fn resolve_idle_evict(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<std::time::Duration>, Error> {
    let seconds = match env(IDLE_EVICT_ENV) {
        None => IDLE_EVICT_DEFAULT_S,
        Some(v) => v.trim().parse::<u64>().map_err(|_| {
            Error::new(
                ErrorKind::Config,
                format!("{IDLE_EVICT_ENV} must be a whole number of seconds (0: never evict)"),
            )
        })?,
    };
    Ok((seconds > 0).then(|| std::time::Duration::from_secs(seconds)))
}

/// `MEMORIA_AI` and, when on, the provider key; and whether a key is set
/// with AI off.
fn resolve_ai(env: &dyn Fn(&str) -> Option<String>) -> Result<(Ai, bool), Error> {
    let set = |k: &str| env(k).filter(|s| !s.trim().is_empty());
    let on = match set(AI_ENV)
        .map(|s| s.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("off") => false,
        Some("on") => true,
        Some(_) => {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{AI_ENV} must be on or off"),
            ));
        }
    };
    let key_set = set(PROVIDER_KEY_ENV).is_some() || set(PROVIDER_KEY_FILE_ENV).is_some();
    if !on {
        return Ok((Ai::Off, key_set));
    }
    let (text, from) = if let Some(text) = set(PROVIDER_KEY_ENV) {
        (text, PROVIDER_KEY_ENV.to_owned())
    } else if let Some(file) = set(PROVIDER_KEY_FILE_ENV) {
        let path = PathBuf::from(file);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::with_source(
                ErrorKind::Config,
                format!(
                    "{PROVIDER_KEY_FILE_ENV} names {}, which cannot be read",
                    path.display()
                ),
                e,
            )
        })?;
        (text, format!("the file {PROVIDER_KEY_FILE_ENV} names"))
    } else {
        return Err(Error::new(
            ErrorKind::Config,
            format!(
                "{AI_ENV}=on needs the provider key: set {PROVIDER_KEY_ENV} or {PROVIDER_KEY_FILE_ENV}"
            ),
        ));
    };
    let key = ProviderKey::parse(&text).map_err(|refusal| {
        Error::with_source(
            ErrorKind::Config,
            format!("the provider key in {from} cannot be used"),
            refusal,
        )
    })?;
    Ok((Ai::On { key }, false))
}

fn dev_dek(path: &Path) -> Result<(Dek, bool), Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => return Ok((Dek::from_base64(&text)?, false)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::with_source(
                ErrorKind::Io,
                format!("the development key file {} cannot be read", path.display()),
                e,
            ));
        }
    }
    if let Some(parent) = path.parent() {
        // A store without its key: a new key would not open it, and writing
        // one would change the data directory (§3).
        if parent.join(crate::storage::store::DB_FILE_NAME).exists() {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the development key file {} is missing, but {} holds a store sealed under it; a new key would not open it. Nothing was changed. Put the key file back, or set {DEK_ENV} or {DEK_FILE_ENV} to the store's DEK.",
                    path.display(),
                    parent.display()
                ),
            ));
        }
        std::fs::create_dir_all(parent).map_err(|e| {
            Error::with_source(
                ErrorKind::Io,
                format!("the data directory {} cannot be created", parent.display()),
                e,
            )
        })?;
    }
    let dek = Dek::generate();
    write_private(path, dek.to_base64().as_bytes())?;
    Ok((dek, true))
}

/// Creates `path` with mode 0600 and writes `bytes`; refuses to overwrite.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    use std::io::Write as _;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(|e| {
        Error::with_source(
            ErrorKind::Io,
            format!("{} cannot be created", path.display()),
            e,
        )
    })?;
    f.write_all(bytes)
        .and_then(|()| f.sync_all())
        .map_err(|e| {
            Error::with_source(
                ErrorKind::Io,
                format!("{} cannot be written", path.display()),
                e,
            )
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table row's environment: variable and value pairs.
    type Env = &'static [(&'static str, &'static str)];

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_tombstone_directory_defaults_to_beside_the_data_directory_never_inside_it() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("memoria-data");
        let c = resolve(&data, &env_of(&[])).unwrap();
        assert_eq!(c.tombstone_dir, root.path().join("memoria-data.tombstones"));
        assert!(!c.tombstone_dir.starts_with(&data));
        assert!(!c.warnings().iter().any(|w| w.contains(TOMBSTONES_ENV)));
        let dotted = tombstone_dir_default(&data.join("sub").join("..")).unwrap_err();
        assert_eq!(dotted.kind(), ErrorKind::Config);
        assert!(tombstone_dir_default(Path::new("/")).is_err());
    }

    #[test]
    fn a_tombstone_directory_named_inside_the_data_directory_is_used_and_warned_about() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let inside = data.join("tomb").to_string_lossy().into_owned();
        let outside = root.path().join("tomb").to_string_lossy().into_owned();
        for (dir, warned) in [(inside, true), (outside, false)] {
            let d = dir.clone();
            let c = resolve(&data, &move |k| (k == TOMBSTONES_ENV).then(|| d.clone())).unwrap();
            assert_eq!(c.tombstone_dir, PathBuf::from(&dir));
            assert_eq!(
                c.warnings().iter().any(|w| w.contains(TOMBSTONES_ENV)),
                warned,
                "{dir}"
            );
        }
    }

    #[test]
    fn the_development_default_generates_a_private_dek_and_names_its_owner() {
        let dir = tempfile::tempdir().unwrap();
        let c = resolve(dir.path(), &env_of(&[])).unwrap();
        assert!(c.is_dev_default() && c.dev_owner);
        assert!(c.admission.admit(DEV_OWNER).is_some());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.path().join(DEV_DEK_FILE_NAME))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = resolve(dir.path(), &env_of(&[])).unwrap();
        assert_eq!(
            again.dek_source,
            DekSource::DevDefault {
                path: dir.path().join(DEV_DEK_FILE_NAME),
                created: false
            }
        );
        assert_eq!(again.dek.to_base64(), c.dek.to_base64());
    }

    #[test]
    fn a_configured_dek_without_owners_refuses_to_start() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve(
            dir.path(),
            &env_of(&[(DEK_ENV, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")]),
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
    }

    #[test]
    fn configured_owners_replace_the_development_owner() {
        let dir = tempfile::tempdir().unwrap();
        let c = resolve(dir.path(), &env_of(&[(OWNERS_ENV, "ana@example.org")])).unwrap();
        assert!(!c.dev_owner);
        assert!(c.admission.admit(DEV_OWNER).is_none());
    }

    #[test]
    fn an_owners_file_is_read_on_every_question_and_one_source_only_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("owners");
        std::fs::write(&file, "ana@example.org\nbo@example.org\n").unwrap();
        let path = file.to_str().unwrap().to_string();
        let env = |both: bool| {
            let path = path.clone();
            move |k: &str| match k {
                OWNERS_FILE_ENV => Some(path.clone()),
                OWNERS_ENV if both => Some("ana@example.org".to_string()),
                _ => None,
            }
        };
        let c = resolve(dir.path(), &env(false)).unwrap();
        assert!(!c.dev_owner);
        assert!(c.admission.admit("bo@example.org").is_some());
        std::fs::write(&file, "ana@example.org\n").unwrap();
        assert!(c.admission.admit("bo@example.org").is_none());
        let both = resolve(dir.path(), &env(true)).unwrap_err();
        assert_eq!(both.kind(), ErrorKind::Config);
        std::fs::remove_file(&file).unwrap();
        let gone = resolve(dir.path(), &env(false)).unwrap_err();
        assert_eq!(gone.kind(), ErrorKind::Config);
        assert!(!format!("{gone:#}").contains("ana@"), "{gone:#}");
    }

    #[test]
    fn a_dek_file_that_does_not_exist_is_a_configuration_error_with_its_cause() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("no-such.key");
        let missing = missing.to_str().unwrap().to_string();
        let env = move |k: &str| (k == DEK_FILE_ENV).then(|| missing.clone());
        let err = resolve(dir.path(), &env).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        let cause = std::error::Error::source(&err)
            .and_then(|s| s.downcast_ref::<std::io::Error>())
            .map(std::io::Error::kind);
        assert_eq!(cause, Some(std::io::ErrorKind::NotFound));
        assert!(
            !dir.path().join(DEV_DEK_FILE_NAME).exists(),
            "no development key was made"
        );
    }

    #[test]
    fn the_sibling_ca_file_is_optional_and_one_that_cannot_be_used_refuses_to_start() {
        let dir = tempfile::tempdir().unwrap();
        let unset = resolve_sibling_trust(&env_of(&[])).unwrap();
        assert_eq!(unset.private_ca_certs(), 0);
        let blank = resolve_sibling_trust(&env_of(&[(SIBLING_CA_FILE_ENV, " ")])).unwrap();
        assert_eq!(blank.private_ca_certs(), 0);
        let not_pem = dir.path().join("team-ca.pem");
        std::fs::write(&not_pem, "not a certificate\n").unwrap();
        let missing = dir.path().join("missing-ca.pem");
        for path in [not_pem, missing] {
            let path = path.to_str().unwrap().to_string();
            let env = move |k: &str| (k == SIBLING_CA_FILE_ENV).then(|| path.clone());
            let err = resolve(dir.path(), &env).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::Config);
            assert!(format!("{err:#}").contains("-ca.pem"), "{err:#}");
        }
    }

    #[test]
    fn calendar_bodies_are_the_clients_default_unless_named_on_or_off() {
        let rows: [(Env, Option<Option<bool>>); 4] = [
            (&[], Some(None)),
            (&[("MEMORIA_CALENDAR_BODIES", "off")], Some(Some(false))),
            (&[("MEMORIA_CALENDAR_BODIES", "on")], Some(Some(true))),
            (&[("MEMORIA_CALENDAR_BODIES", "yes")], None),
        ];
        for (env, want) in rows {
            assert_eq!(resolve_calendar_bodies(&env_of(env)).ok(), want, "{env:?}");
        }
    }

    #[test]
    fn the_idle_eviction_defaults_to_a_quarter_hour_and_zero_switches_it_off() {
        use std::time::Duration;
        let rows: [(Env, Option<Option<Duration>>); 5] = [
            (&[], Some(Some(Duration::from_secs(IDLE_EVICT_DEFAULT_S)))),
            (
                &[("MEMORIA_IDLE_EVICT_S", "60")],
                Some(Some(Duration::from_secs(60))),
            ),
            (&[("MEMORIA_IDLE_EVICT_S", " 0 ")], Some(None)),
            (&[("MEMORIA_IDLE_EVICT_S", "soon")], None),
            (&[("MEMORIA_IDLE_EVICT_S", "-5")], None),
        ];
        for (env, want) in rows {
            let got = resolve_idle_evict(&env_of(env));
            match want {
                Some(w) => assert_eq!(got.ok(), Some(w), "{env:?}"),
                None => assert_eq!(got.map_err(|e| e.kind()), Err(ErrorKind::Config), "{env:?}"),
            }
        }
    }

    #[test]
    fn ai_is_off_unless_the_owner_switches_it_on_and_on_needs_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let off = resolve(dir.path(), &env_of(&[])).unwrap();
        assert!(matches!(off.ai, Ai::Off));
        assert_eq!(off.egress(), EgressMode::AiOff);
        let keyless = resolve(dir.path(), &env_of(&[(AI_ENV, "on")])).unwrap_err();
        assert_eq!(keyless.kind(), ErrorKind::Config);
        let on = resolve(
            dir.path(),
            &env_of(&[(AI_ENV, " ON "), (PROVIDER_KEY_ENV, "tx-key-1\n")]),
        )
        .unwrap();
        assert_eq!(on.egress(), EgressMode::AiOn);
        assert!(on.provider_key().is_some());
        assert!(
            !format!("{on:?}").contains("tx-key-1"),
            "the key is never printed"
        );
        let unsure = resolve(dir.path(), &env_of(&[(AI_ENV, "yes")])).unwrap_err();
        assert_eq!(unsure.kind(), ErrorKind::Config);
    }

    #[test]
    fn a_provider_key_with_ai_off_is_not_used_and_the_warning_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let c = resolve(
            dir.path(),
            &env_of(&[(AI_ENV, "off"), (PROVIDER_KEY_ENV, "tx-key-1")]),
        )
        .unwrap();
        assert!(c.provider_key().is_none());
        assert!(c.warnings().iter().any(|w| w.contains("not used")));
        assert!(!c.warnings().concat().contains("tx-key-1"));
    }

    #[test]
    fn a_provider_key_file_is_read_and_an_unusable_key_is_refused_without_quoting_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("provider.key");
        std::fs::write(&file, "tx key with spaces\n").unwrap();
        let path = file.to_str().unwrap().to_string();
        let env = move |k: &str| match k {
            AI_ENV => Some("on".to_string()),
            PROVIDER_KEY_FILE_ENV => Some(path.clone()),
            _ => None,
        };
        let err = resolve(dir.path(), &env).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        assert!(!format!("{err:#}").contains("spaces"), "{err:#}");
        std::fs::write(&file, "tx-key-2\n").unwrap();
        assert!(resolve(dir.path(), &env).unwrap().provider_key().is_some());
    }

    #[test]
    fn a_lost_development_key_beside_an_existing_store_is_refused_and_no_new_key_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(crate::storage::store::DB_FILE_NAME),
            b"a store",
        )
        .unwrap();
        let err = resolve(dir.path(), &env_of(&[])).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        assert!(err.message().contains("Nothing was changed"), "{err}");
        assert!(!dir.path().join(DEV_DEK_FILE_NAME).exists());
    }
}
