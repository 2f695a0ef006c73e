//! memoria's bearer token at one sibling, and where it is read from: read where it is sent, on every call (§6.2).
//!
//! §6.2's rotation has the drain deliver a new token to memoria as platform
//! config (phase 2) and retire the old one at the sibling only once memoria
//! is seen using the new (phase 3). A token read once at start would make
//! phase 2 a restart; so a token can come from a file
//! (`MEMORIA_SIBLING_TOKEN_<APP>_FILE`, [`SiblingToken::File`]) that is read
//! again on every call to that sibling, the way `MEMORIA_OWNERS_FILE` is
//! read on every request (§4.3). The environment's form
//! (`MEMORIA_SIBLING_TOKEN_<APP>`, [`SiblingToken::Fixed`]) is a token given
//! at start: changing it is a restart.
//!
//! Fail closed: a token that cannot be read now (no file, a directory, not
//! UTF-8, empty, over [`SIBLING_TOKEN_BYTES_MAX`], or holding a byte a
//! header cannot carry) makes no call at all, never one with an empty or a
//! remembered token. The sibling's pairs are UNKNOWN and the page withholds
//! them loudly, as for a sibling that refused the token. Nothing here keeps
//! the last token it read, and a token is never logged or printed.

use std::io::Read as _;
use std::path::PathBuf;

/// The prefix of the environment variable holding memoria's token at one
/// sibling, followed by the app's label in capitals:
/// `MEMORIA_SIBLING_TOKEN_SHEETS` (§6.2).
pub const SIBLING_TOKEN_ENV_PREFIX: &str = "MEMORIA_SIBLING_TOKEN_";

/// The suffix that makes that variable name a file holding the token, read
/// on every call: `MEMORIA_SIBLING_TOKEN_SHEETS_FILE` (§6.2).
pub const SIBLING_TOKEN_FILE_SUFFIX: &str = "_FILE";

/// The longest token memoria sends, in bytes, after trimming the file's
/// surrounding whitespace; a longer one is refused and no call is made.
/// This project's number (§6.2 gives none): a bearer token is a few dozen
/// bytes, and 4 KiB is well inside any server's header limit.
pub const SIBLING_TOKEN_BYTES_MAX: usize = 4096;

/// Where memoria's token at one sibling comes from (§6.2). Clones share
/// nothing but the path.
#[derive(Clone, PartialEq, Eq)]
pub enum SiblingToken {
    /// Given at start (`MEMORIA_SIBLING_TOKEN_<APP>`): the same for the
    /// life of the process.
    Fixed(String),
    /// A file holding the token (`MEMORIA_SIBLING_TOKEN_<APP>_FILE`), read
    /// again on every call. Replace it by renaming a new file over it.
    File(PathBuf),
}

impl std::fmt::Debug for SiblingToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The token is never printed (§3.2); a file's path is not a secret.
        match self {
            SiblingToken::Fixed(_) => f.write_str("SiblingToken::Fixed(..)"),
            SiblingToken::File(path) => f.debug_tuple("SiblingToken::File").field(path).finish(),
        }
    }
}

impl From<String> for SiblingToken {
    fn from(token: String) -> Self {
        SiblingToken::Fixed(token)
    }
}

impl From<&str> for SiblingToken {
    fn from(token: &str) -> Self {
        SiblingToken::Fixed(token.to_owned())
    }
}

/// Why memoria has no token to send a sibling now: no call is made (§6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenUnreadable {
    /// The file cannot be opened or read (missing, a directory, no permission).
    #[error("the token file cannot be read")]
    Unreadable,
    /// The file is not UTF-8 text.
    #[error("the token file is not UTF-8 text")]
    NotText,
    /// Nothing but whitespace.
    #[error("the token is empty")]
    Empty,
    /// Over [`SIBLING_TOKEN_BYTES_MAX`] bytes.
    #[error("the token is over {SIBLING_TOKEN_BYTES_MAX} bytes")]
    TooLong,
    /// A byte outside visible ASCII, which a bearer header cannot carry.
    #[error("the token holds a byte a bearer header cannot carry")]
    NotHeaderText,
}

/// Checks one token as it would be sent: trimmed, non-empty, at most
/// [`SIBLING_TOKEN_BYTES_MAX`] bytes, visible ASCII only.
fn checked(raw: &str) -> Result<String, TokenUnreadable> {
    let token = raw.trim();
    if token.is_empty() {
        return Err(TokenUnreadable::Empty);
    }
    if token.len() > SIBLING_TOKEN_BYTES_MAX {
        return Err(TokenUnreadable::TooLong);
    }
    if !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(TokenUnreadable::NotHeaderText);
    }
    Ok(token.to_owned())
}

impl SiblingToken {
    /// The token to send now: the one given at start, or the file read now,
    /// whole (at most [`SIBLING_TOKEN_BYTES_MAX`] bytes plus its
    /// surrounding whitespace are read).
    ///
    /// # Errors
    /// [`TokenUnreadable`]: then no call may be made with any token.
    pub fn current(&self) -> Result<String, TokenUnreadable> {
        match self {
            SiblingToken::Fixed(token) => checked(token),
            SiblingToken::File(path) => {
                // Room for a token of the maximum size and a line break or two.
                let cap = SIBLING_TOKEN_BYTES_MAX as u64 + SIBLING_TOKEN_FILE_SLACK_BYTES;
                let file = std::fs::File::open(path).map_err(|_| TokenUnreadable::Unreadable)?;
                let mut bytes = Vec::new();
                file.take(cap + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|_| TokenUnreadable::Unreadable)?;
                if bytes.len() as u64 > cap {
                    return Err(TokenUnreadable::TooLong);
                }
                let text = String::from_utf8(bytes).map_err(|_| TokenUnreadable::NotText)?;
                checked(&text)
            }
        }
    }

    /// The file this token is read from, if it is read from one.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            SiblingToken::Fixed(_) => None,
            SiblingToken::File(path) => Some(path),
        }
    }
}

/// Whitespace a token file may carry around its token, in bytes, beyond
/// [`SIBLING_TOKEN_BYTES_MAX`]: a line break, or two with a carriage return.
pub const SIBLING_TOKEN_FILE_SLACK_BYTES: u64 = 4;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_file_is_read_again_on_every_call_and_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "tok-old\n").unwrap();
        let source = SiblingToken::File(path.clone());
        assert_eq!(source.current().as_deref(), Ok("tok-old"));
        std::fs::write(&path, "tok-new\r\n").unwrap();
        assert_eq!(source.current().as_deref(), Ok("tok-new"));
    }

    #[test]
    fn a_token_file_that_cannot_be_used_gives_no_token_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let source = SiblingToken::File(path.clone());
        assert_eq!(source.current(), Err(TokenUnreadable::Unreadable));
        std::fs::write(&path, " \n").unwrap();
        assert_eq!(source.current(), Err(TokenUnreadable::Empty));
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert_eq!(source.current(), Err(TokenUnreadable::NotText));
        std::fs::write(&path, "tok with space").unwrap();
        assert_eq!(source.current(), Err(TokenUnreadable::NotHeaderText));
        std::fs::write(&path, "a".repeat(SIBLING_TOKEN_BYTES_MAX + 1)).unwrap();
        assert_eq!(source.current(), Err(TokenUnreadable::TooLong));
        std::fs::write(&path, "a".repeat(SIBLING_TOKEN_BYTES_MAX)).unwrap();
        assert!(source.current().is_ok());
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert_eq!(source.current(), Err(TokenUnreadable::Unreadable));
    }

    #[test]
    fn a_token_given_at_start_is_checked_as_a_file_is_and_never_printed() {
        assert_eq!(
            SiblingToken::from("tok-a").current().as_deref(),
            Ok("tok-a")
        );
        assert_eq!(
            SiblingToken::from("").current(),
            Err(TokenUnreadable::Empty)
        );
        assert_eq!(
            format!("{:?}", SiblingToken::from("tok-secret")),
            "SiblingToken::Fixed(..)"
        );
    }
}
