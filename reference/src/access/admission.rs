//! Admission: the owners list in lone shape, and in suite shape the owners list first and then the pulled copy of the home's roster (§4.3, §4.2 fact 1).
//!
//! Admission is read, not held (§4.3, gate 21). An [`Admission`] is a
//! handle on where the owners list comes from, and every question asked of
//! it ([`Admission::admit`], [`Admission::owners`]) reads that source again;
//! nothing keeps an answer, not a session, not a sign-in link, not the web
//! state. There are two sources:
//!
//! - **a list given at start** ([`Admission::parse`], `MEMORIA_OWNERS`). A
//!   running process's environment does not change, so reading it again
//!   would read the same list: removing an owner from it is a restart, the
//!   redeploy decision 11 names as the honest tail;
//! - **a file** ([`Admission::file`], `MEMORIA_OWNERS_FILE`), read again on
//!   every question. An owner removed from the file is refused on the next
//!   request: at verification of a link sent while they were admitted, and
//!   in a session they already hold. No restart, no reload signal, no cache.
//!   A file that cannot be read, is over [`OWNERS_FILE_BYTES_MAX`], is not
//!   UTF-8 or does not parse as a list admits nobody until it does (fail
//!   closed, §4.3's "no roster, no admission"); the refusal is logged, its
//!   kind only. Replace the file by renaming a new one over it: a reader
//!   that meets a half-written file refuses for that request.
//!
//! Either way the list is lowercased and trimmed, comma- or
//! newline-separated, at most [`OWNERS_MAX`] addresses. It does not grow by
//! itself: the list admits operators, not a team (§4.3). Clones share the
//! source.
//!
//! **Suite shape** ([`Admission::with_roster`], `MEMORIA_HOME`): the owners
//! list still bypasses the roster (decision 11) and is asked first; anyone
//! else is admitted only by the pulled copy of the home's roster
//! ([`crate::access::roster`]), on it and within its TTL. While the copy
//! is missing or stale nobody's team standing can be established
//! ([`Standing::Lacking`]): [`Admission::admit`] answers `None` for them,
//! so every read of memoria-owned content refuses (§4.2 fact 1), and the
//! session check withholds loudly rather than serving.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::access::address::is_address;
use crate::access::roster::{RosterCopy, RosterLack, RosterStanding};
use crate::error::{Error, ErrorKind};

/// The environment variable holding the owners list (§4.3).
pub const OWNERS_ENV: &str = "MEMORIA_OWNERS";
/// The environment variable naming a file that holds the owners list,
/// read again on every request (§4.3: admission is read, not held).
pub const OWNERS_FILE_ENV: &str = "MEMORIA_OWNERS_FILE";
/// The owner the development default makes when no list is configured.
pub const DEV_OWNER: &str = "owner@localhost";
/// The most owners one list may name; the list admits operators, not a team.
pub const OWNERS_MAX: usize = 64;
pub use crate::access::address::OWNER_ADDRESS_BYTES_MAX;
/// The largest owners file read, in bytes: [`OWNERS_MAX`] addresses of
/// [`OWNER_ADDRESS_BYTES_MAX`] bytes, each with a separator and a carriage
/// return. A larger file is refused, and then nobody is admitted.
pub const OWNERS_FILE_BYTES_MAX: usize = OWNERS_MAX * (OWNER_ADDRESS_BYTES_MAX + 2);

/// An admitted person's address, lowercased.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Owner(String);

impl Owner {
    /// The address.
    pub fn address(&self) -> &str {
        &self.0
    }
}

/// Where the owners list is read from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// Given at start, whole: the environment's list, or the development default.
    Listed(Vec<Owner>),
    /// A file, read again on every question.
    File(PathBuf),
}

/// Admission: a handle on the owners list's source, read on every
/// question, and in suite shape the roster's pulled copy (§4.3). Clones
/// share both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    source: Source,
    roster: Option<RosterCopy>,
}

/// One person's standing now (§4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Admitted: on the owners list, or on a roster copy within its TTL.
    Admitted(Owner),
    /// Not admitted: on neither (or the owners source cannot be used, in
    /// lone shape).
    Refused,
    /// Suite shape, not an owner: nobody's team standing can be
    /// established, because the roster copy is missing or stale.
    Lacking(RosterLack),
}

/// Parses a list of addresses separated by commas or line breaks; `from`
/// names where the list came from, for the error.
fn parse_list(list: &str, from: &str) -> Result<Vec<Owner>, Error> {
    let mut owners: Vec<Owner> = Vec::new();
    for raw in list.split([',', '\n']) {
        let a = raw.trim().to_lowercase();
        if a.is_empty() {
            continue;
        }
        if !is_address(&a) {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{from} holds an entry that is not an address"),
            ));
        }
        let owner = Owner(a);
        if !owners.contains(&owner) {
            owners.push(owner);
        }
    }
    if owners.is_empty() {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{from} names no owner"),
        ));
    }
    if owners.len() > OWNERS_MAX {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{from} names more than {OWNERS_MAX} owners"),
        ));
    }
    Ok(owners)
}

/// Reads and parses the owners file at `path`, whole, now.
fn read_file(path: &Path) -> Result<Vec<Owner>, Error> {
    let from = format!("the file {OWNERS_FILE_ENV} names");
    let unreadable = |e: std::io::Error| {
        Error::with_source(ErrorKind::Config, format!("{from} cannot be read"), e)
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(OWNERS_FILE_BYTES_MAX as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > OWNERS_FILE_BYTES_MAX {
        return Err(Error::new(
            ErrorKind::Config,
            format!("{from} is over {OWNERS_FILE_BYTES_MAX} bytes"),
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::new(ErrorKind::Config, format!("{from} is not UTF-8 text")))?;
    parse_list(&text, &from)
}

impl Admission {
    /// A list given at start: addresses separated by commas (or line
    /// breaks), as `MEMORIA_OWNERS` holds them.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] if the list is empty, longer than [`OWNERS_MAX`],
    /// or holds something that is not an address.
    pub fn parse(list: &str) -> Result<Admission, Error> {
        Ok(Admission {
            source: Source::Listed(parse_list(list, OWNERS_ENV)?),
            roster: None,
        })
    }

    /// The development default: one owner, [`DEV_OWNER`].
    pub fn dev_default() -> Admission {
        Admission {
            source: Source::Listed(vec![Owner(DEV_OWNER.to_string())]),
            roster: None,
        }
    }

    /// The owners file at `path` (`MEMORIA_OWNERS_FILE`), read again on
    /// every question; read once here, so that a start with a file that
    /// cannot be used is refused rather than served admitting nobody.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] if the file cannot be read (the I/O error is
    /// its source), is over [`OWNERS_FILE_BYTES_MAX`], is not UTF-8, or
    /// does not parse as [`Admission::parse`] would parse it.
    pub fn file(path: impl Into<PathBuf>) -> Result<Admission, Error> {
        let path = path.into();
        read_file(&path)?;
        Ok(Admission {
            source: Source::File(path),
            roster: None,
        })
    }

    /// The same owners, in suite shape: anyone not on the owners list is
    /// admitted from `roster`, the pulled copy of the home's roster (§4.3).
    pub fn with_roster(mut self, roster: RosterCopy) -> Admission {
        self.roster = Some(roster);
        self
    }

    /// The roster copy this admission reads, in suite shape.
    pub fn roster(&self) -> Option<&RosterCopy> {
        self.roster.as_ref()
    }

    /// The owners file this admission reads, if it reads one.
    pub fn owners_file(&self) -> Option<&Path> {
        match &self.source {
            Source::Listed(_) => None,
            Source::File(path) => Some(path),
        }
    }

    /// The owners list as its source holds it now: the list given at
    /// start, or the file read now.
    ///
    /// # Errors
    /// As [`Admission::file`], for a file that cannot be used now.
    pub fn current(&self) -> Result<Vec<Owner>, Error> {
        match &self.source {
            Source::Listed(owners) => Ok(owners.clone()),
            Source::File(path) => read_file(path),
        }
    }

    /// The list now, or nobody if its source cannot be used (logged, its
    /// kind only: fail closed).
    fn now(&self) -> Vec<Owner> {
        self.current().unwrap_or_else(|e| {
            tracing::warn!(
                kind = ?e.kind(),
                "the owners source cannot be used: nobody is admitted until it can"
            );
            vec![]
        })
    }

    /// The owner on the owners list with this address now
    /// (case-insensitive), or `None`: the roster is not asked. What an
    /// owner-only affordance asks (the roster's confirmation form).
    pub fn owner(&self, address: &str) -> Option<Owner> {
        let a = address.trim().to_lowercase();
        self.now().into_iter().find(|o| o.0 == a)
    }

    /// This address's standing now: the owners list first (it bypasses the
    /// roster, decision 11), then in suite shape the roster's copy.
    pub fn standing(&self, address: &str) -> Standing {
        if let Some(owner) = self.owner(address) {
            return Standing::Admitted(owner);
        }
        let Some(roster) = &self.roster else {
            return Standing::Refused;
        };
        let a = address.trim().to_lowercase();
        match roster.standing(&a) {
            RosterStanding::Member => Standing::Admitted(Owner(a)),
            RosterStanding::NotMember => Standing::Refused,
            RosterStanding::Lacking(lack) => Standing::Lacking(lack),
        }
    }

    /// The admitted person with this address now (case-insensitive), or
    /// `None`: also `None` for everyone while the owners source cannot be
    /// used, and in suite shape for everyone but the owners while the
    /// roster's copy is missing or stale.
    pub fn admit(&self, address: &str) -> Option<Owner> {
        match self.standing(address) {
            Standing::Admitted(o) => Some(o),
            Standing::Refused | Standing::Lacking(_) => None,
        }
    }

    /// Every owner now; empty while the source cannot be used.
    pub fn owners(&self) -> Vec<Owner> {
        self.now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_trimmed_lowercased_and_deduplicated() {
        let a = Admission::parse(" Ana@Example.org, bo@example.org ,ana@example.org,").unwrap();
        assert_eq!(a.owners().len(), 2);
        assert!(a.admit("ANA@example.org").is_some());
        assert!(a.admit("eve@example.org").is_none());
    }

    #[test]
    fn an_empty_or_malformed_list_is_refused() {
        assert!(Admission::parse("").is_err());
        assert!(Admission::parse(" , ").is_err());
        assert!(Admission::parse("not-an-address").is_err());
        assert!(Admission::parse("a b@example.org").is_err());
        assert!(
            Admission::parse("@example.org").is_err(),
            "empty local part"
        );
        assert!(Admission::parse("ana@").is_err(), "empty domain");
    }

    #[test]
    fn the_owners_list_is_capped_at_its_maximum() {
        let list = |n: usize| {
            (0..n)
                .map(|i| format!("o{i}@example.org"))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert_eq!(
            Admission::parse(&list(OWNERS_MAX)).unwrap().owners().len(),
            OWNERS_MAX
        );
        assert!(Admission::parse(&list(OWNERS_MAX + 1)).is_err());
    }

    #[test]
    fn an_owners_file_is_read_again_on_every_question() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("owners");
        std::fs::write(&path, "ana@example.org\nbo@example.org\n").unwrap();
        let a = Admission::file(&path).unwrap();
        let shared = a.clone();
        assert!(a.admit("bo@example.org").is_some());
        std::fs::write(&path, "ana@example.org\r\n").unwrap();
        assert!(a.admit("bo@example.org").is_none(), "removed: refused now");
        assert!(shared.admit("bo@example.org").is_none(), "clones share it");
        assert!(a.admit("Ana@Example.org").is_some());
        assert_eq!(a.owners_file(), Some(path.as_path()));
    }

    #[test]
    fn an_owners_file_that_cannot_be_used_admits_nobody_until_it_can() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("owners");
        std::fs::write(&path, "ana@example.org").unwrap();
        let a = Admission::file(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(a.admit("ana@example.org").is_none(), "missing");
        assert!(a.owners().is_empty());
        std::fs::write(&path, "ana@example.org, not an address").unwrap();
        assert!(a.admit("ana@example.org").is_none(), "malformed");
        std::fs::write(&path, b"ana@example.org\xff").unwrap();
        assert!(a.admit("ana@example.org").is_none(), "not UTF-8");
        std::fs::write(&path, "a".repeat(OWNERS_FILE_BYTES_MAX + 1)).unwrap();
        assert!(a.admit("ana@example.org").is_none(), "over the cap");
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(a.admit("ana@example.org").is_none(), "a directory");
        std::fs::remove_dir(&path).unwrap();
        std::fs::write(&path, "ana@example.org").unwrap();
        assert!(a.admit("ana@example.org").is_some(), "readable again");
    }

    #[test]
    fn a_start_with_an_owners_file_that_cannot_be_used_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = Admission::file(dir.path().join("absent")).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config);
        std::fs::write(dir.path().join("empty"), "\n").unwrap();
        assert!(Admission::file(dir.path().join("empty")).is_err());
    }
}
