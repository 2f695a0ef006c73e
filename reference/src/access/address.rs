//! What an address is, as the owners list and the roster accept one (§4.3): shared by both, so neither reads the other for it.

/// The longest owner address accepted, in bytes (RFC 5321's path limit).
pub const OWNER_ADDRESS_BYTES_MAX: usize = 256;

/// Whether `a` (already trimmed and lowercased) is an address as the owners
/// list and the roster accept one: a local part, `@`, a domain, no
/// whitespace or control character, at most [`OWNER_ADDRESS_BYTES_MAX`].
pub(crate) fn is_address(a: &str) -> bool {
    a.len() <= OWNER_ADDRESS_BYTES_MAX
        && a.split_once('@')
            .is_some_and(|(l, d)| !l.is_empty() && !d.is_empty())
        && !a.chars().any(|c| c.is_whitespace() || c.is_control())
}
