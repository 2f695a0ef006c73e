//! Email addresses: local@domain, the domain carrying a dot, no whitespace — pattern-spotting more than validation, and kept with that weakness stated (§8.8).
//!
//! On a corpus of uploads and Notion pages one support address, cited, is
//! useful. On a corpus of forwarded mail every signature qualifies, the cap
//! is passed and the box is inert for this kind: the cap working, failing
//! towards silence rather than a wrong address (§8.8).
//!
//! Two refusals on top of the pattern, each because ordinary text matched
//! it: an image file name with an `@` (`logo@2x.png`, a density suffix, or
//! any domain ending in an image extension), and an address glued to a
//! path or a second `@` (`https://a@b.example/x`, `a@b@c.example`).
//!
//! And one on the bytes after it: a host followed by a colon and a path or
//! a port is a remote, not a mailbox. `git@github.com:owner/repo.git` is an
//! SSH-style repository address (git, scp and rsync all write it), and
//! `user@example.com:8042` a URL's authority; neither is boxed as email. A
//! colon followed by white space or the end (`Write to a@b.example: …`) is
//! punctuation and ends the address as before.

use super::{Budget, Kind, Span, char_before};

/// Most characters before the `@` (RFC 5321's local-part limit).
pub const EMAIL_LOCAL_CHARS_MAX: usize = 64;
/// Most characters after the `@` (RFC 1035's name limit).
pub const EMAIL_DOMAIN_CHARS_MAX: usize = 253;
/// Top-level labels that are file extensions of images, never mail domains
/// here: `icon@2x.png` is an image, whatever its shape.
pub const IMAGE_EXTENSIONS: [&str; 12] = [
    "avif", "bmp", "gif", "heic", "ico", "jpeg", "jpg", "png", "svg", "tif", "tiff", "webp",
];

/// Why a string is not an email address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No `@` with a local part and a dotted domain around it.
    Shape,
    /// An image file name: a density suffix or an image extension.
    ImageName,
    /// Glued to a path, a second `@` or a word.
    NoBoundary,
    /// A host followed by `:` and a path or a port: `user@host:path` (an
    /// SSH-style repository address) or `user@host:port`, a remote.
    Remote,
}

/// True if `after` (the bytes right after a domain) opens a path or a port
/// with a colon: `:owner/repo.git`, `:~/src`, `:8042`, `:{{name}}`.
fn remote_after(after: &str) -> bool {
    let mut it = after.chars();
    it.next() == Some(':')
        && it
            .next()
            .is_some_and(|c| c.is_alphanumeric() || "/~._-{$%".contains(c))
}

fn local_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"._%+-".contains(&c)
}

fn domain_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'.' || c == b'-'
}

/// Reads the address around the `@` at `at`: (start, end), or why not.
fn read(text: &str, at: usize) -> Result<(usize, usize), Refusal> {
    let b = text.as_bytes();
    let mut start = at;
    while start > 0 && local_char(b[start - 1]) && at - start < EMAIL_LOCAL_CHARS_MAX + 1 {
        start -= 1;
    }
    let mut end = at + 1;
    while end < b.len() && domain_char(b[end]) && end - at <= EMAIL_DOMAIN_CHARS_MAX + 1 {
        end += 1;
    }
    // A sentence's full stop (or a hyphen) after the domain is not part of it.
    while end > at + 1 && matches!(b[end - 1], b'.' | b'-') {
        end -= 1;
    }
    let local = &text[start..at];
    let domain = &text[at + 1..end];
    if local.is_empty()
        || local.len() > EMAIL_LOCAL_CHARS_MAX
        || local.starts_with('.')
        || local.ends_with('.')
        || local.contains("..")
        || domain.len() > EMAIL_DOMAIN_CHARS_MAX
    {
        return Err(Refusal::Shape);
    }
    let labels: Vec<&str> = domain.split('.').collect();
    let well_formed = labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && !l.ends_with('-'));
    let tld = labels.last().copied().unwrap_or("");
    if !well_formed || tld.len() < 2 || !tld.bytes().all(|c| c.is_ascii_alphabetic()) {
        return Err(Refusal::Shape);
    }
    let density = |l: &str| {
        l.strip_suffix(['x', 'X'])
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    };
    if IMAGE_EXTENSIONS.contains(&tld.to_ascii_lowercase().as_str())
        || labels.iter().any(|l| density(l))
    {
        return Err(Refusal::ImageName);
    }
    // Before: not glued to a path, a word or another address.
    let before_ok =
        char_before(text, start).is_none_or(|c| !(c.is_alphanumeric() || "/@_&=?#\\".contains(c)));
    // After: white space, or punctuation that is not more of an address or a path.
    let after = &text[end..];
    let after_ok = after
        .chars()
        .next()
        .is_none_or(|c| !(c.is_alphanumeric() || "/@_&=?#\\".contains(c)))
        && !(after.starts_with(['.', '-'])
            && after[1..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric()));
    if !before_ok || !after_ok {
        return Err(Refusal::NoBoundary);
    }
    if remote_after(after) {
        return Err(Refusal::Remote);
    }
    Ok((start, end))
}

/// Checks one candidate string as a whole: the canonical form, or why not.
///
/// # Errors
/// The [`Refusal`].
pub fn check(candidate: &str) -> Result<String, Refusal> {
    let at = candidate.find('@').ok_or(Refusal::Shape)?;
    let (start, end) = read(candidate, at)?;
    if start != 0 || end != candidate.len() {
        return Err(Refusal::NoBoundary);
    }
    Ok(candidate.to_lowercase())
}

/// Appends every email address in `text` to `out`.
pub fn find(text: &str, budget: &mut Budget, out: &mut Vec<Span>) {
    let mut from = 0;
    while let Some(off) = text[from..].find('@') {
        let at = from + off;
        from = at + 1;
        if let Ok((start, end)) = read(text, at) {
            if !budget.spend() {
                return;
            }
            out.push(Span {
                kind: Kind::Email,
                start,
                end,
                canonical: text[start..end].to_lowercase(),
            });
            from = end;
        }
    }
}
