//! Sealing: the DEK, its HKDF-SHA256 purpose keys, and AES-256-GCM cells bound to their row (§3, §0).
//!
//! Every value memoria stores that a person wrote (chunk text, heading trails,
//! titles, paths, the serialised index) is sealed here before it reaches the
//! store or the bucket. The construction is the suite's: one data-encryption
//! key (the DEK), one HKDF-SHA256 key per [`Purpose`], AES-256-GCM with a fresh
//! random 96-bit nonce per seal, and associated data that names both the
//! purpose and the row the cell belongs to. A sealed value copied into another
//! row, or opened under another purpose, fails to open.
//!
//! Identifiers derived from content (the document `external_id`, the lookup
//! fingerprint of a source path) are HMAC-SHA256 under their own purpose key,
//! never a bare hash of the content (§3.2, gate 26).
//!
//! Sealed layout: `[SEAL_VERSION][nonce: 12][ciphertext ‖ tag: 16]`.

use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use rand::rngs::OsRng;
use sha2::Sha256;
use zeroize::Zeroize;

use crate::error::{Error, ErrorKind};

/// Length of the DEK in bytes (AES-256, §3).
pub const DEK_BYTES: usize = 32;
/// Length of an AES-GCM nonce in bytes (96 bits, NIST SP 800-38D).
pub const NONCE_BYTES: usize = 12;
/// Length of the AES-GCM authentication tag in bytes.
pub const TAG_BYTES: usize = 16;
/// The first byte of every sealed value; bumped if the layout ever changes.
pub const SEAL_VERSION: u8 = 1;
/// Bytes a sealed value adds to its plaintext: version, nonce and tag.
pub const SEALED_OVERHEAD_BYTES: usize = 1 + NONCE_BYTES + TAG_BYTES;
/// Length of a fingerprint (HMAC-SHA256 output) in bytes.
pub const FINGERPRINT_BYTES: usize = 32;

/// HKDF salt: fixed and public, it separates memoria's derivations from any
/// other use of the same DEK.
const HKDF_SALT: &[u8] = b"memoria/seal/v1";

/// What a key is for. Each purpose gets its own HKDF-derived key (§3).
///
/// The label of a purpose is part of both the HKDF `info` and the AAD, so a
/// value sealed under one purpose never opens under another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Purpose {
    /// Chunk bodies, their heading trails and a Markdown passage's plain
    /// text (§3.1), each in a row of its own (`chunks/{id}/body`, `/trail`,
    /// `/plain`): one kind of content, so one key, and the row in the AAD
    /// keeps a cell from opening in another's column.
    Chunk,
    /// Document titles.
    Title,
    /// Source paths and upload file names.
    Path,
    /// Keyed fingerprint of a source path, used to find a document again on re-import.
    PathFingerprint,
    /// Keyed fingerprint of a document body: the `external_id` (§3.2, gate 26).
    ExternalId,
    /// The serialised lexical index snapshot (§3.1, §7.4).
    IndexSnapshot,
    /// The refusal and S3 breaker counters (§8.1): their sealed integers.
    BreakerCounters,
    /// Keyed fingerprint of an asker's address, the key of the refusal
    /// breaker's per-person counters (§8.1, §3.2): never stored in plaintext.
    BreakerAsker,
    /// One chunk's embedding, int8 at 512 dimensions (§3.1: embeddings are
    /// content), in the store: what the dense index is rebuilt from.
    Vector,
    /// The serialised dense index, sealed beside the lexical snapshot of the
    /// same generation (§3.1, §7.3, §7.4).
    VectorSnapshot,
    /// The embedding canary's vectors (§8.2, gate 30): public sentences, but
    /// still a provider's output, sealed like every other vector.
    Canary,
    /// A document's own date and where it came from
    /// ([`crate::date::DocumentDate`]): a front matter date is text a
    /// person wrote, so every kind is sealed alike (issue 31).
    DocumentDate,
}

impl Purpose {
    /// Every purpose, in a fixed order.
    pub const ALL: [Purpose; 12] = [
        Purpose::Chunk,
        Purpose::Title,
        Purpose::Path,
        Purpose::PathFingerprint,
        Purpose::ExternalId,
        Purpose::IndexSnapshot,
        Purpose::BreakerCounters,
        Purpose::BreakerAsker,
        Purpose::Vector,
        Purpose::VectorSnapshot,
        Purpose::Canary,
        Purpose::DocumentDate,
    ];

    /// The stable label used in HKDF `info` and in the AAD.
    pub fn label(self) -> &'static str {
        match self {
            Purpose::Chunk => "chunk",
            Purpose::Title => "title",
            Purpose::Path => "path",
            Purpose::PathFingerprint => "path-fingerprint",
            Purpose::ExternalId => "external-id",
            Purpose::IndexSnapshot => "index-snapshot",
            Purpose::BreakerCounters => "breaker-counters",
            Purpose::BreakerAsker => "breaker-asker",
            Purpose::Vector => "vector",
            Purpose::VectorSnapshot => "vector-snapshot",
            Purpose::Canary => "canary",
            Purpose::DocumentDate => "document-date",
        }
    }

    fn index(self) -> usize {
        Purpose::ALL
            .iter()
            .position(|p| *p == self)
            .expect("every purpose is listed in Purpose::ALL")
    }
}

/// The data-encryption key. Zeroed on drop; never printed.
#[derive(Clone, zeroize::Zeroize, zeroize::ZeroizeOnDrop)]
pub struct Dek([u8; DEK_BYTES]);

impl Dek {
    /// Wraps 32 raw bytes.
    pub fn from_bytes(bytes: [u8; DEK_BYTES]) -> Dek {
        Dek(bytes)
    }

    /// A fresh random DEK from the operating system's CSPRNG.
    pub fn generate() -> Dek {
        let mut bytes = [0u8; DEK_BYTES];
        rand::RngCore::fill_bytes(&mut OsRng, &mut bytes);
        Dek(bytes)
    }

    /// Parses the standard base64 encoding of exactly 32 bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] if the text is not base64 or does not decode to 32 bytes.
    pub fn from_base64(text: &str) -> Result<Dek, Error> {
        use base64::Engine as _;
        let mut decoded = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| Error::new(ErrorKind::Config, "the DEK is not valid base64"))?;
        if decoded.len() != DEK_BYTES {
            let len = decoded.len();
            decoded.zeroize();
            return Err(Error::new(
                ErrorKind::Config,
                format!("the DEK must decode to {DEK_BYTES} bytes, not {len}"),
            ));
        }
        let mut bytes = [0u8; DEK_BYTES];
        bytes.copy_from_slice(&decoded);
        decoded.zeroize();
        Ok(Dek(bytes))
    }

    /// The standard base64 encoding, for writing the development key file.
    pub fn to_base64(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(self.0)
    }
}

impl std::fmt::Debug for Dek {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Dek(<redacted>)")
    }
}

/// Seals and opens cells, and computes keyed fingerprints (§3).
///
/// Holds one derived key per [`Purpose`], and each key's AES-256-GCM
/// schedule expanded once (issue 30: a search opens six cells a hit, and
/// expanding the key on every open was about a tenth of it); the DEK
/// itself is not kept.
#[derive(Clone, zeroize::ZeroizeOnDrop)]
pub struct Sealer {
    keys: [[u8; DEK_BYTES]; Purpose::ALL.len()],
    /// `keys`, expanded, by the same index. Zeroed by its own drop
    /// (`memoria_gcm::Key`), so the derive leaves it alone.
    #[zeroize(skip)]
    ciphers: [memoria_gcm::Key; Purpose::ALL.len()],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(<keys redacted>)")
    }
}

impl Sealer {
    /// Derives every purpose key from the DEK with HKDF-SHA256.
    pub fn new(dek: &Dek) -> Sealer {
        let hk = Hkdf::<Sha256>::new(Some(HKDF_SALT), &dek.0);
        let mut keys = [[0u8; DEK_BYTES]; Purpose::ALL.len()];
        for purpose in Purpose::ALL {
            let info = format!("memoria/purpose/{}", purpose.label());
            hk.expand(info.as_bytes(), &mut keys[purpose.index()])
                .expect("32 bytes is a valid HKDF-SHA256 output length");
        }
        let ciphers = std::array::from_fn(|i| memoria_gcm::Key::new(&keys[i]));
        Sealer { keys, ciphers }
    }

    /// The purpose's key, for a keyed fingerprint.
    fn key(&self, purpose: Purpose) -> &[u8; DEK_BYTES] {
        &self.keys[purpose.index()]
    }

    /// The purpose's key, expanded, for sealing and opening.
    fn cipher(&self, purpose: Purpose) -> &memoria_gcm::Key {
        &self.ciphers[purpose.index()]
    }

    fn aad(purpose: Purpose, row: &str) -> Vec<u8> {
        let mut aad = Vec::with_capacity(16 + purpose.label().len() + row.len());
        aad.extend_from_slice(b"memoria/aad/v1\0");
        aad.extend_from_slice(purpose.label().as_bytes());
        aad.push(0);
        aad.extend_from_slice(row.as_bytes());
        aad
    }

    /// The nonce and the tag of a sealed value at least
    /// [`SEALED_OVERHEAD_BYTES`] long: `[version][nonce][body][tag]`.
    fn nonce_and_tag(sealed: &[u8]) -> ([u8; NONCE_BYTES], [u8; TAG_BYTES]) {
        let mut nonce = [0u8; NONCE_BYTES];
        nonce.copy_from_slice(&sealed[1..1 + NONCE_BYTES]);
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&sealed[sealed.len() - TAG_BYTES..]);
        (nonce, tag)
    }

    /// The error of a cell that failed authentication; it names the purpose,
    /// never the row (a row can be a path, which is content).
    fn refused(purpose: Purpose) -> Error {
        Error::new(
            ErrorKind::Seal,
            format!(
                "sealed {} cell failed to open (wrong key, row or purpose, or tampered)",
                purpose.label()
            ),
        )
    }

    /// Seals `plaintext` as the cell `row` under `purpose`.
    ///
    /// `row` names the cell's place, e.g. `"chunks/42/body"`; the same string
    /// must be given to [`Sealer::open`]. Output is
    /// `plaintext.len() + SEALED_OVERHEAD_BYTES` bytes long, with a fresh
    /// random nonce every call.
    ///
    /// # Panics
    /// Only if AES-GCM refuses a plaintext longer than its 64 GiB limit.
    pub fn seal(&self, purpose: Purpose, row: &str, plaintext: &[u8]) -> Vec<u8> {
        let nonce = memoria_gcm::random_nonce();
        let aad = Sealer::aad(purpose, row);
        let mut out = Vec::with_capacity(plaintext.len() + SEALED_OVERHEAD_BYTES);
        out.push(SEAL_VERSION);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(plaintext);
        let tag = memoria_gcm::seal_in_place(
            self.cipher(purpose),
            &nonce,
            &aad,
            &mut out[1 + NONCE_BYTES..],
        );
        out.extend_from_slice(&tag);
        debug_assert_eq!(out.len(), plaintext.len() + SEALED_OVERHEAD_BYTES);
        out
    }

    /// Opens a cell sealed by [`Sealer::seal`] with the same purpose and row.
    ///
    /// # Errors
    /// [`ErrorKind::Seal`] if the value is truncated, carries an unknown
    /// version, or fails authentication (wrong key, purpose, row, or tampered bytes).
    pub fn open(&self, purpose: Purpose, row: &str, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        if sealed.len() < SEALED_OVERHEAD_BYTES {
            return Err(Error::new(ErrorKind::Seal, "sealed value is truncated"));
        }
        if sealed[0] != SEAL_VERSION {
            return Err(Error::new(
                ErrorKind::Seal,
                format!("sealed value has unknown version {}", sealed[0]),
            ));
        }
        let (nonce, tag) = Sealer::nonce_and_tag(sealed);
        let mut body = sealed[1 + NONCE_BYTES..sealed.len() - TAG_BYTES].to_vec();
        let aad = Sealer::aad(purpose, row);
        memoria_gcm::open_in_place(self.cipher(purpose), &nonce, &aad, &mut body, &tag)
            .map_err(|_| Sealer::refused(purpose))?;
        Ok(body)
    }

    /// As [`Sealer::open`], in place: `sealed` is opened where it lies and
    /// the plaintext is the returned range of it. Used for the index
    /// snapshot, so a wake holds one copy of the image, not two (issue 11).
    ///
    /// # Errors
    /// As [`Sealer::open`]; the buffer's contents are then unspecified.
    pub fn open_in_place(
        &self,
        purpose: Purpose,
        row: &str,
        sealed: &mut [u8],
    ) -> Result<std::ops::Range<usize>, Error> {
        if sealed.len() < SEALED_OVERHEAD_BYTES {
            return Err(Error::new(ErrorKind::Seal, "sealed value is truncated"));
        }
        if sealed[0] != SEAL_VERSION {
            return Err(Error::new(
                ErrorKind::Seal,
                format!("sealed value has unknown version {}", sealed[0]),
            ));
        }
        let (nonce, tag) = Sealer::nonce_and_tag(sealed);
        let end = sealed.len() - TAG_BYTES;
        let aad = Sealer::aad(purpose, row);
        memoria_gcm::open_in_place(
            self.cipher(purpose),
            &nonce,
            &aad,
            &mut sealed[1 + NONCE_BYTES..end],
            &tag,
        )
        .map_err(|_| Sealer::refused(purpose))?;
        Ok(1 + NONCE_BYTES..sealed.len() - TAG_BYTES)
    }

    /// Opens a cell and decodes it as UTF-8.
    ///
    /// # Errors
    /// As [`Sealer::open`], plus [`ErrorKind::Seal`] if the plaintext is not UTF-8.
    pub fn open_string(&self, purpose: Purpose, row: &str, sealed: &[u8]) -> Result<String, Error> {
        let bytes = self.open(purpose, row, sealed)?;
        String::from_utf8(bytes)
            .map_err(|_| Error::new(ErrorKind::Seal, "sealed text is not UTF-8"))
    }

    /// HMAC-SHA256 of `message` under the purpose key: a keyed fingerprint.
    ///
    /// Deterministic for one DEK (so re-ingest is idempotent) and unlinkable
    /// across DEKs (so it is no oracle for "does this team hold this file"), §3.2.
    pub fn fingerprint(&self, purpose: Purpose, message: &[u8]) -> [u8; FINGERPRINT_BYTES] {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(self.key(purpose)).expect("any key length");
        mac.update(message);
        mac.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer() -> Sealer {
        Sealer::new(&Dek::from_bytes([7u8; DEK_BYTES]))
    }

    #[test]
    fn a_sealed_cell_opens_back_to_its_plaintext() {
        let s = sealer();
        let sealed = s.seal(Purpose::Chunk, "chunks/1/body", b"the office phone");
        assert_eq!(sealed.len(), 16 + SEALED_OVERHEAD_BYTES);
        let opened = s.open(Purpose::Chunk, "chunks/1/body", &sealed).unwrap();
        assert_eq!(opened, b"the office phone");
    }

    #[test]
    fn a_cell_opened_in_place_is_its_plaintext_and_a_moved_one_fails() {
        let s = sealer();
        let mut sealed = s.seal(Purpose::IndexSnapshot, "snapshots/2", b"index image");
        let mut copy = sealed.clone();
        let range = s
            .open_in_place(Purpose::IndexSnapshot, "snapshots/2", &mut sealed)
            .unwrap();
        assert_eq!(&sealed[range], b"index image");
        assert!(
            s.open_in_place(Purpose::IndexSnapshot, "snapshots/3", &mut copy)
                .is_err()
        );
        assert!(
            s.open_in_place(
                Purpose::IndexSnapshot,
                "snapshots/2",
                &mut [SEAL_VERSION; 8]
            )
            .is_err()
        );
    }

    #[test]
    fn an_empty_plaintext_seals_and_opens() {
        let s = sealer();
        let sealed = s.seal(Purpose::Title, "documents/x/title", b"");
        assert_eq!(sealed.len(), SEALED_OVERHEAD_BYTES);
        assert_eq!(
            s.open(Purpose::Title, "documents/x/title", &sealed)
                .unwrap(),
            b""
        );
    }

    #[test]
    fn two_seals_of_the_same_value_differ_because_the_nonce_is_fresh() {
        let s = sealer();
        let a = s.seal(Purpose::Title, "documents/x/title", b"Budget");
        let b = s.seal(Purpose::Title, "documents/x/title", b"Budget");
        assert_ne!(a, b);
    }

    #[test]
    fn a_cell_moved_to_another_row_fails_to_open() {
        let s = sealer();
        let sealed = s.seal(Purpose::Chunk, "chunks/1/body", b"secret");
        let err = s
            .open(Purpose::Chunk, "chunks/2/body", &sealed)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Seal);
    }

    #[test]
    fn a_cell_opened_under_another_purpose_fails_to_open() {
        let s = sealer();
        let sealed = s.seal(Purpose::Chunk, "documents/1/title", b"secret");
        let err = s
            .open(Purpose::Title, "documents/1/title", &sealed)
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Seal);
    }

    #[test]
    fn a_cell_sealed_under_another_dek_fails_to_open() {
        let other = Sealer::new(&Dek::from_bytes([8u8; DEK_BYTES]));
        let sealed = other.seal(Purpose::Chunk, "r", b"secret");
        assert!(sealer().open(Purpose::Chunk, "r", &sealed).is_err());
    }

    #[test]
    fn truncated_and_tampered_cells_are_errors_not_panics() {
        let s = sealer();
        let mut sealed = s.seal(Purpose::Chunk, "r", b"secret");
        for len in 0..sealed.len() {
            assert!(s.open(Purpose::Chunk, "r", &sealed[..len]).is_err());
        }
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        assert!(s.open(Purpose::Chunk, "r", &sealed).is_err());
        sealed[0] = 9;
        assert!(s.open(Purpose::Chunk, "r", &sealed).is_err());
    }

    #[test]
    fn fingerprints_are_stable_per_dek_and_differ_across_deks_and_purposes() {
        let a = sealer();
        let b = Sealer::new(&Dek::from_bytes([8u8; DEK_BYTES]));
        let body = b"same body";
        assert_eq!(
            a.fingerprint(Purpose::ExternalId, body),
            a.fingerprint(Purpose::ExternalId, body)
        );
        assert_ne!(
            a.fingerprint(Purpose::ExternalId, body),
            b.fingerprint(Purpose::ExternalId, body)
        );
        assert_ne!(
            a.fingerprint(Purpose::ExternalId, body),
            a.fingerprint(Purpose::PathFingerprint, body)
        );
    }

    #[test]
    fn a_dek_parses_from_base64_only_at_32_bytes() {
        let dek = Dek::generate();
        let text = dek.to_base64();
        assert!(Dek::from_base64(&text).is_ok());
        assert_eq!(
            Dek::from_base64("c2hvcnQ=").unwrap_err().kind(),
            ErrorKind::Config
        );
        assert_eq!(
            Dek::from_base64("not base64!").unwrap_err().kind(),
            ErrorKind::Config
        );
        assert_eq!(format!("{dek:?}"), "Dek(<redacted>)");
    }
}
