//! Admission in lone shape: the owners list, and nothing else (§4.3, §4.2 fact 1).
//!
//! Until a home exists, the only people admitted are the configured owners.
//! The list is read from `MEMORIA_OWNERS` (comma-separated addresses),
//! lowercased and trimmed. It does not grow at run time.

use crate::error::{Error, ErrorKind};

/// The environment variable holding the owners list (§4.3).
pub const OWNERS_ENV: &str = "MEMORIA_OWNERS";
/// The owner the development default makes when no list is configured.
pub const DEV_OWNER: &str = "owner@localhost";
/// The most owners one list may name; the list admits operators, not a team.
pub const OWNERS_MAX: usize = 64;
/// The longest owner address accepted, in bytes (RFC 5321's path limit).
pub const OWNER_ADDRESS_BYTES_MAX: usize = 256;

/// An admitted person's address, lowercased.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Owner(String);

impl Owner {
    /// The address.
    pub fn address(&self) -> &str {
        &self.0
    }
}

/// The owners list: admission in lone shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    owners: Vec<Owner>,
}

impl Admission {
    /// Parses a comma-separated list of addresses.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] if the list is empty, longer than [`OWNERS_MAX`],
    /// or holds something that is not an address.
    pub fn parse(list: &str) -> Result<Admission, Error> {
        let mut owners: Vec<Owner> = Vec::new();
        for raw in list.split(',') {
            let a = raw.trim().to_lowercase();
            if a.is_empty() {
                continue;
            }
            let valid = a.len() <= OWNER_ADDRESS_BYTES_MAX
                && a.split_once('@')
                    .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty())
                && !a.chars().any(|c| c.is_whitespace() || c.is_control());
            if !valid {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!("{OWNERS_ENV} holds an entry that is not an address"),
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
                format!("{OWNERS_ENV} names no owner"),
            ));
        }
        if owners.len() > OWNERS_MAX {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{OWNERS_ENV} names more than {OWNERS_MAX} owners"),
            ));
        }
        Ok(Admission { owners })
    }

    /// The development default: one owner, [`DEV_OWNER`].
    pub fn dev_default() -> Admission {
        Admission {
            owners: vec![Owner(DEV_OWNER.to_string())],
        }
    }

    /// The admitted owner with this address, if any (case-insensitive).
    pub fn admit(&self, address: &str) -> Option<&Owner> {
        let a = address.trim().to_lowercase();
        self.owners.iter().find(|o| o.0 == a)
    }

    /// Every owner.
    pub fn owners(&self) -> &[Owner] {
        &self.owners
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
}
