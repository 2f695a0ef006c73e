//! The crate's one error type: an [`ErrorKind`], a message that never carries content, and the cause it came from.
//!
//! Messages name what failed and where (a row id, a path the operator typed,
//! a limit), never a passage, title, query or key (§3.2). The cause (a
//! `rusqlite` or `std::io` error, or a typed detail such as
//! [`DecodeError`]) is kept as the error's [`source`](std::error::Error::source),
//! not pasted into the message, so a caller can inspect it and a binary can
//! print the whole chain. Callers branch on [`Error::kind`] or on a typed
//! detail ([`Error::decode_error`]), never on message text.
//!
//! `{}` prints the message alone; `{:#}` prints the message followed by
//! every cause, `": "`-separated, as `anyhow` does.

use std::fmt;

/// The cause an [`Error`] keeps: any error that can cross threads.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

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
    /// A file or upload could not be read or decoded as text; which way is
    /// [`Error::decode_error`].
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
    /// The configured DEK opens none of an existing store's sealed cells: it
    /// is not the key the store was sealed with (§3). Nothing was changed.
    WrongDek,
    /// The operator's own input cannot be used, e.g. a path named on the
    /// command line that does not exist.
    Usage,
    /// An operating-system I/O failure.
    Io,
    /// The durable tombstone log stops before the database's own record of
    /// deletions (§7.4): it was restored from a backup, replaced or lost.
    /// memoria refuses to wake rather than serve what was deleted; nothing
    /// was changed.
    TombstonesBehind,
    /// The AI provider's call failed (§8.3); the cause is a typed
    /// `EmbedError` naming what, never content.
    Provider,
    /// Store work handed to [`crate::SharedInstance::run`] did not return:
    /// it panicked (caught; the server serves on), or the runtime shut down
    /// before it ran. The instance is as its last committed transaction left it.
    Abandoned,
}

/// Why bytes are not text, for a caller that must tell the person which
/// (§9.1: an upload is refused with a reason). Carried as the source of an
/// [`ErrorKind::Decode`] error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// Binary: NUL bytes, or more control characters than text allows.
    Binary,
    /// Not valid UTF-8.
    NotUtf8,
    /// A UTF-16 byte-order mark, then not valid UTF-16: an odd byte count or
    /// an unpaired surrogate.
    NotUtf16,
    /// HTML that could not be converted to text.
    Html,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DecodeError::Binary => "binary content",
            DecodeError::NotUtf8 => "invalid UTF-8",
            DecodeError::NotUtf16 => "invalid UTF-16",
            DecodeError::Html => "unconvertible HTML",
        })
    }
}

impl std::error::Error for DecodeError {}

/// An error with a kind, a content-free message and, optionally, its cause.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<Source>,
}

impl Error {
    /// Builds an error with no cause. `message` must not contain content (§3.2).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Builds an error that keeps `source` as its cause.
    ///
    /// `message` must not contain content (§3.2); nor should `source`'s own
    /// message, since a binary prints the whole chain. A cause whose text may
    /// quote content (an FTS5 parse error quotes the query) is not kept.
    pub fn with_source(
        kind: ErrorKind,
        message: impl Into<String>,
        source: impl Into<Source>,
    ) -> Error {
        Error {
            kind,
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The content-free message, without its cause. For display only: never
    /// branch on it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For an [`ErrorKind::Decode`] error, why the bytes are not text.
    pub fn decode_error(&self) -> Option<DecodeError> {
        self.source
            .as_deref()
            .and_then(|s| s.downcast_ref::<DecodeError>())
            .copied()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if f.alternate() {
            let mut cause = std::error::Error::source(self);
            while let Some(c) = cause {
                write!(f, ": {c}")?;
                cause = c.source();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

impl From<rusqlite::Error> for Error {
    fn from(err: rusqlite::Error) -> Error {
        // rusqlite's Display carries SQL and error codes, never bound parameter values.
        Error::with_source(ErrorKind::Storage, "the database refused an operation", err)
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error::with_source(ErrorKind::Io, format!("i/o ({})", err.kind()), err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_keeps_its_cause_as_its_source_and_out_of_its_message() {
        let io = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = Error::with_source(ErrorKind::Io, "reading the key file", io);
        assert_eq!(e.message(), "reading the key file");
        assert_eq!(e.to_string(), "reading the key file");
        let source = std::error::Error::source(&e).expect("a source");
        assert_eq!(
            source
                .downcast_ref::<std::io::Error>()
                .map(std::io::Error::kind),
            Some(std::io::ErrorKind::PermissionDenied)
        );
        assert_eq!(format!("{e:#}"), format!("reading the key file: {source}"));
    }

    #[test]
    fn a_nested_cause_is_printed_by_the_alternate_form_and_by_anyhow() {
        let inner = Error::with_source(ErrorKind::Decode, "inner", DecodeError::Binary);
        let outer = Error::with_source(ErrorKind::Storage, "outer", inner);
        assert_eq!(format!("{outer:#}"), "outer: inner: binary content");
        let any = anyhow::Error::from(outer).context("waking the store");
        assert_eq!(
            format!("{any:#}"),
            "waking the store: outer: inner: binary content"
        );
    }

    #[test]
    fn a_decode_error_is_read_from_the_source_not_from_the_message() {
        let binary = Error::with_source(ErrorKind::Decode, "not text", DecodeError::Binary);
        assert_eq!(binary.decode_error(), Some(DecodeError::Binary));
        let plain = Error::new(ErrorKind::Decode, "the file is binary");
        assert_eq!(plain.decode_error(), None);
    }

    #[test]
    fn conversions_keep_the_underlying_error() {
        let e = Error::from(std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(e.kind(), ErrorKind::Io);
        assert!(std::error::Error::source(&e).is_some());
        let e = Error::from(rusqlite::Error::QueryReturnedNoRows);
        assert_eq!(e.kind(), ErrorKind::Storage);
        assert!(
            std::error::Error::source(&e)
                .and_then(|s| s.downcast_ref::<rusqlite::Error>())
                .is_some()
        );
    }
}
