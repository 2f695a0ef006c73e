//! What an `https://` target is trusted by, and why a handshake refused it: Mozilla's roots plus an optional private CA, as `memoria serve` trusts a sibling (§6.1).
//!
//! The kit's own copy of the reference's trust rules, so that it builds
//! without the reference: rustls on `ring`, the default safe protocol
//! versions, ALPN `http/1.1` only, Mozilla's roots compiled in
//! (`webpki-roots`, no trust store read at run time), and the `CERTIFICATE`
//! blocks of a PEM file for a team's private CA (`--ca-file`, as the
//! reference's `MEMORIA_SIBLING_CA_FILE`). A certificate that chains to
//! none of them, or does not name the host dialled, ends the handshake with
//! a [`TlsRefusal`] before any byte of HTTP is sent.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, CertificateError, ClientConfig, RootCertStore};

/// The largest private-CA PEM file the kit reads, in bytes: a CA bundle is
/// a few kilobytes (the reference's `SIBLING_CA_FILE_BYTES_MAX`).
pub const CA_FILE_BYTES_MAX: u64 = 1024 * 1024;

/// Why a TLS handshake refused the server, before any HTTP was sent (§6.1).
/// The same cases, in the same words, as the reference's `TlsRefusal`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TlsRefusal {
    /// The certificate chains to no trusted root: not Mozilla's, not the
    /// private CA given.
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

/// Why `--ca-file` was not taken: the file, and what was wrong with it.
#[derive(Debug, thiserror::Error)]
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
    let mut config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
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
    /// Mozilla's roots alone: what an `https://` target is verified
    /// against when no private CA is given. Built once.
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
    /// A [`CaFileError`] naming `path`: it cannot be read, it is over the
    /// cap, or its text is refused.
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

    /// Runs the TLS handshake over `stream` for `host`, verifying the
    /// certificate against this trust and the host name.
    ///
    /// # Errors
    /// An I/O error; when the handshake refused the server, its inner error
    /// is the [`TlsRefusal`] ([`refusal_of`] reads it back).
    pub(crate) async fn connect<S>(
        &self,
        host: &str,
        stream: S,
    ) -> io::Result<tokio_rustls::client::TlsStream<S>>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let config = self.config.clone().map_err(io::Error::other)?;
        tokio_rustls::TlsConnector::from(config)
            .connect(name, stream)
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
        for pem in [&b""[..], b"not pem at all\n"] {
            assert_eq!(
                TlsTrust::with_ca_pem(pem).unwrap_err(),
                CaRefusal::NoCertificate
            );
        }
    }

    #[test]
    fn a_ca_file_that_is_missing_is_refused_naming_its_path() {
        let path = std::env::temp_dir().join("memoria-kit-no-such-team-ca.pem");
        let e = TlsTrust::from_ca_file(&path).unwrap_err();
        assert!(matches!(e, CaFileError::Unreadable { .. }), "{e:?}");
        assert!(
            e.to_string().contains("memoria-kit-no-such-team-ca.pem"),
            "{e}"
        );
    }
}
