//! AES-256-GCM over byte slices in place, for memoria's sealing: one key, one nonce, associated data, a detached tag.
//!
//! A [`Key`] and three plain functions over `aes-gcm`'s `Aes256Gcm`, so its
//! generic cipher and GHASH code is compiled here, optimised even in the dev
//! profile (the root `Cargo.toml` says so), rather than inside every crate
//! that seals. A [`Key`] expands its AES round keys and GHASH key once, when
//! it is made, not on every seal and open (issue 30: a search opens six
//! cells a hit, and the schedule was about a tenth of each open).
//! The construction is NIST SP 800-38D's with a 96-bit nonce and a 128-bit
//! tag; what is sealed, under which key and with which associated data is the
//! caller's business (memoria's `storage/seal.rs`, §3 of the design).

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::{AeadInPlace, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Nonce, Tag};

/// Length of an AES-256 key in bytes.
pub const KEY_BYTES: usize = 32;
/// Length of a GCM nonce in bytes (96 bits, NIST SP 800-38D §8.2).
pub const NONCE_BYTES: usize = 12;
/// Length of a GCM authentication tag in bytes (128 bits).
pub const TAG_BYTES: usize = 16;

/// The tag did not verify: wrong key, nonce or associated data, or tampered
/// bytes. It carries nothing else on purpose: GCM cannot tell which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AES-GCM tag did not verify")
    }
}

impl std::error::Error for Refused {}

/// An AES-256-GCM key, its round keys and GHASH key expanded once.
///
/// Cloning copies the expanded schedule. Dropping it zeroes the schedule
/// (`aes`' and `polyval`'s `zeroize` features, this crate's `Cargo.toml`).
/// Its `Debug` shows no key material.
#[derive(Clone)]
pub struct Key {
    cipher: Aes256Gcm,
}

impl Key {
    /// Expands `key` into its schedule.
    pub fn new(key: &[u8; KEY_BYTES]) -> Key {
        Key {
            cipher: Aes256Gcm::new(key.into()),
        }
    }
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(<redacted>)")
    }
}

/// A fresh random nonce from the operating system's generator.
///
/// # Panics
/// If the operating system's random source fails (as `OsRng` does).
pub fn random_nonce() -> [u8; NONCE_BYTES] {
    let mut nonce = [0u8; NONCE_BYTES];
    OsRng.fill_bytes(&mut nonce);
    nonce
}

/// Encrypts `buf` where it lies under `key` and `nonce`, authenticating
/// `aad` with it, and returns the tag.
///
/// The same key and nonce must never seal two different values: draw the
/// nonce with [`random_nonce`].
///
/// # Panics
/// Only if `buf` is longer than GCM's limit of about 64 GiB.
pub fn seal_in_place(
    key: &Key,
    nonce: &[u8; NONCE_BYTES],
    aad: &[u8],
    buf: &mut [u8],
) -> [u8; TAG_BYTES] {
    let tag = key
        .cipher
        .encrypt_in_place_detached(Nonce::from_slice(nonce), aad, buf)
        .expect("AES-GCM encrypts any buffer under its length limit");
    tag.into()
}

/// Decrypts `buf` where it lies, if `tag` verifies over it and `aad` under
/// `key` and `nonce`.
///
/// # Errors
/// [`Refused`] if the tag does not verify; `buf` is then left as it was
/// given (still ciphertext).
pub fn open_in_place(
    key: &Key,
    nonce: &[u8; NONCE_BYTES],
    aad: &[u8],
    buf: &mut [u8],
    tag: &[u8; TAG_BYTES],
) -> Result<(), Refused> {
    key.cipher
        .decrypt_in_place_detached(Nonce::from_slice(nonce), aad, buf, Tag::from_slice(tag))
        .map_err(|_| Refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NIST's GCM test case 16 (McGrew and Viega, "The Galois/Counter Mode
    /// of Operation", appendix B): AES-256, 96-bit IV, 60 bytes of
    /// plaintext and 20 of associated data.
    const KEY: &str = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308";
    const NONCE: &str = "cafebabefacedbaddecaf888";
    const PLAINTEXT: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
    const AAD: &str = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
    const CIPHERTEXT: &str = "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662";
    const TAG: &str = "76fc6ece0f4e1768cddf8853bb2d551b";

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("test vectors are hex"))
            .collect()
    }

    fn key_bytes() -> [u8; KEY_BYTES] {
        hex(KEY).try_into().expect("32 bytes")
    }

    fn key() -> Key {
        Key::new(&key_bytes())
    }

    fn nonce() -> [u8; NONCE_BYTES] {
        hex(NONCE).try_into().expect("12 bytes")
    }

    #[test]
    fn sealing_nists_test_case_16_gives_its_ciphertext_and_tag() {
        let mut buf = hex(PLAINTEXT);
        let tag = seal_in_place(&key(), &nonce(), &hex(AAD), &mut buf);
        assert_eq!(buf, hex(CIPHERTEXT));
        assert_eq!(tag.to_vec(), hex(TAG));
    }

    #[test]
    fn opening_nists_test_case_16_gives_its_plaintext() {
        let mut buf = hex(CIPHERTEXT);
        let tag: [u8; TAG_BYTES] = hex(TAG).try_into().expect("16 bytes");
        open_in_place(&key(), &nonce(), &hex(AAD), &mut buf, &tag).expect("the vector opens");
        assert_eq!(buf, hex(PLAINTEXT));
    }

    #[test]
    fn one_key_seals_and_opens_value_after_value_as_a_fresh_key_does() {
        let key = key();
        let tag: [u8; TAG_BYTES] = hex(TAG).try_into().expect("16 bytes");
        for round in 0..3 {
            let mut buf = hex(PLAINTEXT);
            assert_eq!(
                seal_in_place(&key, &nonce(), &hex(AAD), &mut buf),
                tag,
                "round {round}"
            );
            assert_eq!(buf, hex(CIPHERTEXT), "round {round}");
            open_in_place(&key, &nonce(), &hex(AAD), &mut buf, &tag).expect("the vector opens");
            assert_eq!(buf, hex(PLAINTEXT), "round {round}");
        }
    }

    #[test]
    fn a_changed_byte_anywhere_is_refused_and_leaves_the_ciphertext() {
        let tag: [u8; TAG_BYTES] = hex(TAG).try_into().expect("16 bytes");
        // (which input is changed, at which byte) as one row each.
        for (part, at) in [
            ("ciphertext", 0),
            ("ciphertext", 59),
            ("aad", 19),
            ("tag", 15),
            ("nonce", 11),
            ("key", 31),
        ] {
            let (mut key, mut nonce, mut aad, mut buf, mut tag) =
                (key_bytes(), nonce(), hex(AAD), hex(CIPHERTEXT), tag);
            match part {
                "ciphertext" => buf[at] ^= 1,
                "aad" => aad[at] ^= 1,
                "tag" => tag[at] ^= 1,
                "nonce" => nonce[at] ^= 1,
                _ => key[at] ^= 1,
            }
            let before = buf.clone();
            assert_eq!(
                open_in_place(&Key::new(&key), &nonce, &aad, &mut buf, &tag),
                Err(Refused),
                "{part}[{at}]"
            );
            assert_eq!(
                buf, before,
                "{part}[{at}]: a refused open leaves the buffer as given"
            );
        }
    }

    #[test]
    fn two_random_nonces_differ() {
        assert_ne!(random_nonce(), random_nonce());
    }
}
