//! The crate's one error type: an [`ErrorKind`] plus a message that never carries content.
//!
//! Messages name what failed and where (a row id, a path the operator typed,
//! a limit), never a passage, title, query or key (§3.2).

use std::fmt;

/// What kind of failure an [`Error`] is. Callers branch on this, not on text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A sealed value failed to open: wrong key, row or purpose, truncated or tampered.
    Seal,
    /// The embedded database refused an operation.
    Storage,
    /// The sealed index snapshot could not be written, read or loaded.
    Snapshot,
    /// A file or upload could not be read or decoded as text.
    Decode,
    /// An input exceeded a named limit.
    TooLarge,
    /// An upload or file was empty.
    Empty,
    /// The thing asked for does not exist (or is deleted).
    NotFound,
    /// The asker is not admitted (§4.3).
    NotAdmitted,
    /// The search engine rejected a query even after sanitising.
    Query,
    /// Configuration is missing or malformed (DEK, owners, data directory).
    Config,
    /// An operating-system I/O failure.
    Io,
}

/// An error with a kind and a content-free message.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    /// Builds an error. `message` must not contain content (§3.2).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The content-free message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Error {
        // rusqlite's Display carries SQL and error codes, never bound parameter values.
        Error::new(ErrorKind::Storage, format!("database: {err}"))
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, format!("i/o: {err}"))
    }
}
