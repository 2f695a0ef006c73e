//! TLS over a stream the [`Dialer`] opened: how the provider client reaches HTTPS without a socket of its own (§8.3, gate 15).
//!
//! The provider is reached as any sibling is, through the [`Dialer`] the
//! instance was given (production's `TcpDialer`; the simulator's guarded
//! turmoil dialer), and rustls runs over that stream. So every name lookup
//! and connection the provider client makes passes the dialer, where gate
//! 15's network guard hears it. Roots are Mozilla's, compiled in
//! (`webpki-roots`), so no trust store is read at run time; the crypto is
//! `ring`'s. Only HTTP/1.1 is offered by ALPN, the one protocol the
//! transport speaks.

use std::io;
use std::sync::{Arc, OnceLock};

use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore};

use crate::sibling::transport::{Connection, DialFuture, Dialer};

/// A [`Dialer`] that dials through `inner` and then runs a TLS handshake,
/// verifying the certificate against the host name dialed.
pub(crate) struct TlsDialer {
    inner: Arc<dyn Dialer>,
}

impl TlsDialer {
    /// TLS over `inner`'s streams.
    pub(crate) fn new(inner: Arc<dyn Dialer>) -> TlsDialer {
        TlsDialer { inner }
    }
}

/// The client configuration, built once: ring, the default safe protocol
/// versions, Mozilla's roots, no client certificate, ALPN `http/1.1`.
fn config() -> io::Result<Arc<ClientConfig>> {
    static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let mut config = ClientConfig::builder_with_provider(Arc::new(
                tokio_rustls::rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(Arc::new(config))
        })
        .clone()
        .map_err(io::Error::other)
}

impl Dialer for TlsDialer {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let name = ServerName::try_from(host.to_owned())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let stream = self.inner.dial(host, port).await?;
            let tls = TlsConnector::from(config()?).connect(name, stream).await?;
            Ok(Box::new(tls) as Box<dyn Connection>)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_configuration_builds_with_roots_and_http_1_1_only() {
        let c = config().unwrap();
        assert_eq!(c.alpn_protocols, vec![b"http/1.1".to_vec()]);
        assert!(!webpki_roots::TLS_SERVER_ROOTS.is_empty());
    }
}
