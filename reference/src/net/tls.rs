//! TLS over a stream the [`Dialer`] opened: how an `https://` sibling, the home and the provider are reached without a socket of their own (§6.1, §8.3, gate 15).
//!
//! Every TLS connection memoria makes goes through the [`Dialer`] the
//! instance was given (production's `TcpDialer`; the simulator's guarded
//! turmoil dialer), and rustls runs over that stream. So every name lookup
//! and connection passes the dialer, where gate 15's network guard hears it.
//! The crypto is `ring`'s. Only HTTP/1.1 is offered by ALPN, the one
//! protocol the transport speaks.
//!
//! What a connection trusts is a [`TlsTrust`]: Mozilla's roots, compiled in
//! (`webpki-roots`), so no trust store is read at run time; for siblings and
//! the home, plus the certificates of a team's private CA that the operator
//! names in a PEM file (`MEMORIA_SIBLING_CA_FILE`). The provider trusts
//! Mozilla's roots alone. A certificate that chains to none of them, or that
//! does not name the host dialled, ends the handshake with a
//! [`TlsRefusal`] before any byte of HTTP is sent.
//!
//! Which URLs take TLS is the scheme's business ([`SiblingScheme`]):
//! `https://` always, `http://` never, whatever the dialer.

use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, CertificateError, ClientConfig, RootCertStore};

use super::host::SiblingScheme;
pub use super::transport::TlsRefusal;
use super::transport::{Connection, DialFuture, Dialer};
use crate::error::{Error, ErrorKind};

/// The largest private-CA PEM file memoria reads, in bytes: a CA bundle is a
/// few kilobytes; this project's number.
pub const SIBLING_CA_FILE_BYTES_MAX: u64 = 1024 * 1024;

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

/// Why a private CA's PEM text was not taken (§6.1). The source of the
/// [`ErrorKind::Config`] error [`TlsTrust::from_ca_file`] returns.
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
    /// sibling's when no private CA is configured. Built once.
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
    /// most [`SIBLING_CA_FILE_BYTES_MAX`] bytes.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] naming `path`: it cannot be read (the I/O error
    /// is the source), it is over the cap, or its text is refused (the
    /// [`CaRefusal`] is the source).
    pub fn from_ca_file(path: &Path) -> Result<TlsTrust, Error> {
        let named = |what: &str| format!("the private CA file {}: {what}", path.display());
        let len = std::fs::metadata(path)
            .map_err(|e| Error::with_source(ErrorKind::Config, named("cannot be read"), e))?
            .len();
        if len > SIBLING_CA_FILE_BYTES_MAX {
            return Err(Error::new(
                ErrorKind::Config,
                named(&format!(
                    "is over {SIBLING_CA_FILE_BYTES_MAX} bytes ({len} bytes)"
                )),
            ));
        }
        let pem = std::fs::read(path)
            .map_err(|e| Error::with_source(ErrorKind::Config, named("cannot be read"), e))?;
        TlsTrust::with_ca_pem(&pem)
            .map_err(|r| Error::with_source(ErrorKind::Config, named("is refused"), r))
    }

    /// How many private CA certificates are trusted beside Mozilla's roots.
    pub fn private_ca_certs(&self) -> usize {
        self.private_ca_certs
    }

    fn config(&self) -> io::Result<Arc<ClientConfig>> {
        self.config.clone().map_err(io::Error::other)
    }
}

/// A [`Dialer`] that dials through `inner` and then runs a TLS handshake,
/// verifying the certificate against its [`TlsTrust`] and the host name
/// dialled. A refused handshake is an I/O error whose inner error is a
/// [`TlsRefusal`] (the transport reports it as
/// [`crate::TransportError::Tls`]).
pub struct TlsDialer {
    inner: Arc<dyn Dialer>,
    trust: TlsTrust,
}

impl TlsDialer {
    /// TLS over `inner`'s streams, trusting `trust`.
    pub fn new(inner: Arc<dyn Dialer>, trust: TlsTrust) -> TlsDialer {
        TlsDialer { inner, trust }
    }
}

impl Dialer for TlsDialer {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let name = ServerName::try_from(host.to_owned())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let config = self.trust.config()?;
            let stream = self.inner.dial(host, port).await?;
            let tls = TlsConnector::from(config)
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
                })?;
            Ok(Box::new(tls) as Box<dyn Connection>)
        })
    }
}

/// The dialer a URL of `scheme` is reached through: `plain` itself for
/// `http://`, TLS over `plain` trusting `trust` for `https://` (§6.1).
/// The siblings' client and the home's use it, so the scheme decides the
/// same way for both.
pub(crate) fn dialer_for(
    scheme: SiblingScheme,
    plain: &Arc<dyn Dialer>,
    trust: &TlsTrust,
) -> Arc<dyn Dialer> {
    match scheme {
        SiblingScheme::Http => Arc::clone(plain),
        SiblingScheme::Https => Arc::new(TlsDialer::new(Arc::clone(plain), trust.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_trust_builds_with_mozillas_roots_and_http_1_1_only() {
        let c = TlsTrust::public().config().unwrap();
        assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(!webpki_roots::TLS_SERVER_ROOTS.is_empty());
        assert_eq!(TlsTrust::public().private_ca_certs(), 0);
    }

    #[test]
    fn pem_text_without_a_certificate_is_refused_by_name() {
        for (pem, want) in [
            (&b""[..], CaRefusal::NoCertificate),
            (b"not pem at all\n", CaRefusal::NoCertificate),
        ] {
            assert_eq!(TlsTrust::with_ca_pem(pem).unwrap_err(), want);
        }
    }

    #[test]
    fn a_ca_file_that_is_missing_is_a_config_error_naming_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("team-ca.pem");
        let e = TlsTrust::from_ca_file(&path).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        assert!(e.to_string().contains("team-ca.pem"), "{e}");
    }
}
