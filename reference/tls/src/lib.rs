//! What an `https://` connection trusts, and why a handshake refused the server: rustls on `ring`, Mozilla's roots plus a team's private CA, for the reference and the conformance kit alike (§6.1).
//!
//! The reference dials an `https://` sibling, the home and the provider
//! through this crate (its `TlsDialer`, over whatever stream its dialer
//! opened), and the conformance kit (`gates/kit`) dials a sibling under
//! test through it, so the two verify a certificate by one set of rules
//! and name a refusal in one set of words, and the kit builds without the
//! reference. The rules: rustls on `ring`, the default safe protocol
//! versions, ALPN `http/1.1` only (the one protocol either client speaks),
//! no client certificate, Mozilla's roots compiled in (`webpki-roots`), so
//! no trust store is read at run time, plus the `CERTIFICATE` blocks of a
//! PEM file for a team's private CA (the reference's
//! `MEMORIA_SIBLING_CA_FILE`, the kit's `--ca-file`). A certificate that
//! chains to none of them, or does not name the host dialled, ends the
//! handshake with a [`TlsRefusal`] before any byte of HTTP is sent.
//!
//! ```
//! use memoria_tls::{CaRefusal, TlsTrust};
//! assert_eq!(TlsTrust::public().private_ca_certs(), 0);
//! assert_eq!(
//!     TlsTrust::with_ca_pem(b"not pem").unwrap_err(),
//!     CaRefusal::NoCertificate
//! );
//! ```

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{CertificateError, ClientConfig, RootCertStore};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;

/// The stream a finished handshake yields: the TLS session over `S`.
pub type TlsStream<S> = tokio_rustls::client::TlsStream<S>;

/// The largest private-CA PEM file read, in bytes: a CA bundle is a few
/// kilobytes; this project's number.
pub const CA_FILE_BYTES_MAX: u64 = 1024 * 1024;

/// Why a TLS handshake refused the server, before any HTTP was sent (§6.1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsRefusal {
    /// The certificate chains to no trusted root: not Mozilla's, not the
    /// team's private CA.
    #[error("the server's certificate is not signed by a trusted CA")]
    UntrustedCertificate,
    /// The certificate is valid but does not name the host dialled.
    #[error("the server's certificate does not name the host dialled")]
    WrongHost,
    /// The certificate is expired or not yet valid.
    #[error("the server's certificate is outside its validity period")]
    OutsideValidity,
    /// Another certificate fault, in rustls's words.
    #[error("the server's certificate is refused: {0}")]
    BadCertificate(String),
    /// The handshake failed for a reason other than the certificate.
    #[error("the TLS handshake failed: {0}")]
    Handshake(String),
}

impl TlsRefusal {
    fn from_rustls(e: &rustls::Error) -> TlsRefusal {
        match e {
            rustls::Error::InvalidCertificate(c) => match c {
                CertificateError::UnknownIssuer => TlsRefusal::UntrustedCertificate,
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => TlsRefusal::WrongHost,
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => TlsRefusal::OutsideValidity,
                other => TlsRefusal::BadCertificate(format!("{other:?}")),
            },
            other => TlsRefusal::Handshake(other.to_string()),
        }
    }
}

/// Why a private CA's PEM text was not taken (§6.1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CaRefusal {
    /// The text holds no `CERTIFICATE` block.
    #[error("it holds no PEM CERTIFICATE block")]
    NoCertificate,
    /// A `CERTIFICATE` block is not valid PEM.
    #[error("a PEM block cannot be read: {0}")]
    Pem(String),
    /// A certificate is not one rustls can use as a root.
    #[error("a certificate cannot be a root: {0}")]
    NotARoot(String),
}

/// Why a private CA file was not taken: the file, and what was wrong with
/// it (its message says both, for a person reading one line).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaFileError {
    /// The file cannot be read.
    #[error("the private CA file {}: cannot be read: {source}", path.display())]
    Unreadable {
        /// The file named.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The file is over [`CA_FILE_BYTES_MAX`].
    #[error("the private CA file {}: is over {CA_FILE_BYTES_MAX} bytes ({len} bytes)", path.display())]
    TooLarge {
        /// The file named.
        path: PathBuf,
        /// Its length, in bytes.
        len: u64,
    },
    /// Its text is refused.
    #[error("the private CA file {}: is refused: {source}", path.display())]
    Refused {
        /// The file named.
        path: PathBuf,
        /// Why.
        source: CaRefusal,
    },
}

/// What a TLS connection trusts: Mozilla's roots, plus any private CA
/// certificates (§6.1). Cheap to clone; its `Debug` shows counts only.
#[derive(Clone)]
pub struct TlsTrust {
    config: Result<Arc<ClientConfig>, String>,
    private_ca_certs: usize,
}

impl std::fmt::Debug for TlsTrust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTrust")
            .field("private_ca_certs", &self.private_ca_certs)
            .finish_non_exhaustive()
    }
}

impl Default for TlsTrust {
    fn default() -> TlsTrust {
        TlsTrust::public()
    }
}

/// A client configuration over `roots`: ring, the default safe protocol
/// versions, no client certificate, ALPN `http/1.1`.
fn client_config(roots: RootCertStore) -> Result<Arc<ClientConfig>, String> {
    let mut config = ClientConfig::builder_with_provider(Arc::new(
        tokio_rustls::rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn mozilla_roots() -> RootCertStore {
    RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    }
}

impl TlsTrust {
    /// Mozilla's roots alone: what the provider client trusts, and a
    /// sibling's when no private CA is given. Built once.
    #[must_use]
    pub fn public() -> TlsTrust {
        static PUBLIC: OnceLock<TlsTrust> = OnceLock::new();
        PUBLIC
            .get_or_init(|| TlsTrust {
                config: client_config(mozilla_roots()),
                private_ca_certs: 0,
            })
            .clone()
    }

    /// Mozilla's roots plus every `CERTIFICATE` block of `pem`, a team's
    /// private CA (one or more certificates, PEM, other blocks ignored).
    ///
    /// # Errors
    /// A [`CaRefusal`]: no certificate, a block that is not PEM, or a
    /// certificate that cannot be a root.
    pub fn with_ca_pem(pem: &[u8]) -> Result<TlsTrust, CaRefusal> {
        let mut roots = mozilla_roots();
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| CaRefusal::Pem(e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| CaRefusal::NotARoot(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(CaRefusal::NoCertificate);
        }
        let config = client_config(roots).map_err(CaRefusal::NotARoot)?;
        Ok(TlsTrust {
            config: Ok(config),
            private_ca_certs: added,
        })
    }

    /// As [`TlsTrust::with_ca_pem`], reading the PEM file at `path`, of at
    /// most [`CA_FILE_BYTES_MAX`] bytes.
    ///
    /// # Errors
    /// A [`CaFileError`] naming `path`: it cannot be read (the I/O error is
    /// the source), it is over the cap, or its text is refused (the
    /// [`CaRefusal`] is the source).
    pub fn from_ca_file(path: &Path) -> Result<TlsTrust, CaFileError> {
        let unreadable = |source| CaFileError::Unreadable {
            path: path.to_owned(),
            source,
        };
        let len = std::fs::metadata(path).map_err(unreadable)?.len();
        if len > CA_FILE_BYTES_MAX {
            return Err(CaFileError::TooLarge {
                path: path.to_owned(),
                len,
            });
        }
        let pem = std::fs::read(path).map_err(unreadable)?;
        TlsTrust::with_ca_pem(&pem).map_err(|source| CaFileError::Refused {
            path: path.to_owned(),
            source,
        })
    }

    /// How many private CA certificates are trusted beside Mozilla's roots.
    #[must_use]
    pub fn private_ca_certs(&self) -> usize {
        self.private_ca_certs
    }

    /// A handshake for `host`, made before any stream is opened, so a name
    /// TLS cannot verify is refused without dialling it.
    ///
    /// # Errors
    /// `InvalidInput` when `host` is neither a DNS name nor an IP address;
    /// any I/O error when the trust's configuration could not be built.
    pub fn handshake_for(&self, host: &str) -> io::Result<Handshake> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let config = self.config.clone().map_err(io::Error::other)?;
        Ok(Handshake { name, config })
    }

    /// Runs the TLS handshake over `stream` for `host`, verifying the
    /// certificate against this trust and the host name: [`TlsTrust::handshake_for`]
    /// then [`Handshake::over`].
    ///
    /// # Errors
    /// As those two.
    pub async fn connect<S>(&self, host: &str, stream: S) -> io::Result<TlsStream<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        self.handshake_for(host)?.over(stream).await
    }
}

/// A TLS handshake ready to run for one host name under one [`TlsTrust`].
pub struct Handshake {
    name: ServerName<'static>,
    config: Arc<ClientConfig>,
}

impl std::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handshake")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Handshake {
    /// Runs the handshake over `stream`, verifying the certificate against
    /// the trust and the host name.
    ///
    /// # Errors
    /// An I/O error; when the handshake refused the server, its inner error
    /// is the [`TlsRefusal`] ([`refusal_of`] reads it back).
    pub async fn over<S>(self, stream: S) -> io::Result<TlsStream<S>>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        TlsConnector::from(self.config)
            .connect(self.name, stream)
            .await
            .map_err(|e| {
                match e
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
                {
                    Some(refused) => io::Error::new(e.kind(), TlsRefusal::from_rustls(refused)),
                    None => e,
                }
            })
    }
}

/// The [`TlsRefusal`] a handshake's I/O error carries, if it carries one.
#[must_use]
pub fn refusal_of(e: &io::Error) -> Option<TlsRefusal> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<TlsRefusal>())
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_trust_builds_with_mozillas_roots_and_http_1_1_only() {
        let c = TlsTrust::public().config.unwrap();
        assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(!webpki_roots::TLS_SERVER_ROOTS.is_empty());
        assert_eq!(TlsTrust::public().private_ca_certs(), 0);
    }

    #[test]
    fn pem_text_without_a_certificate_is_refused_by_name() {
        for pem in [
            &b""[..],
            b"not pem at all\n",
            // A whole PEM block that is not a certificate is passed over.
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        ] {
            assert_eq!(
                TlsTrust::with_ca_pem(pem).unwrap_err(),
                CaRefusal::NoCertificate,
                "{}",
                String::from_utf8_lossy(pem)
            );
        }
    }

    #[test]
    fn a_ca_file_that_is_missing_or_too_large_is_refused_naming_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("team-ca.pem");
        let e = TlsTrust::from_ca_file(&missing).unwrap_err();
        assert!(matches!(e, CaFileError::Unreadable { .. }), "{e:?}");
        assert!(e.to_string().contains("team-ca.pem"), "{e}");
        let large = dir.path().join("large-ca.pem");
        std::fs::write(&large, vec![b'x'; CA_FILE_BYTES_MAX as usize + 1]).unwrap();
        let e = TlsTrust::from_ca_file(&large).unwrap_err();
        assert!(matches!(e, CaFileError::TooLarge { .. }), "{e:?}");
        assert!(e.to_string().contains("large-ca.pem"), "{e}");
    }

    #[test]
    fn each_certificate_fault_is_named_as_the_refusal_a_person_reads() {
        use rustls::pki_types::UnixTime;
        let now = UnixTime::now();
        let rows: [(CertificateError, TlsRefusal); 6] = [
            (
                CertificateError::UnknownIssuer,
                TlsRefusal::UntrustedCertificate,
            ),
            (CertificateError::NotValidForName, TlsRefusal::WrongHost),
            (CertificateError::Expired, TlsRefusal::OutsideValidity),
            (CertificateError::NotValidYet, TlsRefusal::OutsideValidity),
            (
                CertificateError::ExpiredContext {
                    time: now,
                    not_after: now,
                },
                TlsRefusal::OutsideValidity,
            ),
            (
                CertificateError::BadSignature,
                TlsRefusal::BadCertificate("BadSignature".to_string()),
            ),
        ];
        for (fault, want) in rows {
            let e = rustls::Error::InvalidCertificate(fault.clone());
            assert_eq!(TlsRefusal::from_rustls(&e), want, "{fault:?}");
        }
        let other = TlsRefusal::from_rustls(&rustls::Error::HandshakeNotComplete);
        assert!(matches!(other, TlsRefusal::Handshake(_)), "{other:?}");
    }

    #[test]
    fn a_refusal_put_in_an_io_error_is_read_back_and_no_other_error_is_taken_for_one() {
        let e = io::Error::new(io::ErrorKind::InvalidData, TlsRefusal::WrongHost);
        assert_eq!(refusal_of(&e), Some(TlsRefusal::WrongHost));
        let plain = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(refusal_of(&plain), None);
    }

    #[test]
    fn a_host_tls_cannot_name_is_refused_before_any_stream_is_opened() {
        let trust = TlsTrust::public();
        assert!(trust.handshake_for("acme.sheets.example").is_ok());
        assert!(trust.handshake_for("127.0.0.1").is_ok());
        let e = trust.handshake_for("not a host").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
