//! A throwaway CA made in the run and a TLS server on real loopback: what gate 11's `https://` case and the kit's tests serve a fake sibling with (§6.1).
//!
//! The CA and every certificate it signs live in memory for one run
//! (`rcgen`, keys from `ring`), so nothing here is a secret and nothing is
//! committed. [`serve_tls_loopback`] serves any router over TLS on
//! `127.0.0.1`, counting the TCP connections it accepts, so a case can
//! assert that a refused URL made none. Real sockets: never inside a
//! simulated run.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA made for one run: its certificate as PEM (what an operator's
/// `MEMORIA_SIBLING_CA_FILE` would hold) and the means to sign server
/// certificates with it.
pub struct ThrowawayCa {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl std::fmt::Debug for ThrowawayCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThrowawayCa").finish_non_exhaustive()
    }
}

impl ThrowawayCa {
    /// A fresh self-signed CA named `name`.
    ///
    /// # Errors
    /// rcgen's words, when a key or the certificate cannot be made.
    pub fn new(name: &str) -> Result<ThrowawayCa, String> {
        let key = KeyPair::generate().map_err(|e| e.to_string())?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(|e| e.to_string())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
        Ok(ThrowawayCa {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        })
    }

    /// The CA's certificate, PEM.
    #[must_use]
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// A TLS server configuration whose certificate this CA signed for
    /// `names` (host names or IP literals), offering ALPN `http/1.1`.
    ///
    /// # Errors
    /// rcgen's or rustls's words.
    pub fn server_config(&self, names: &[&str]) -> Result<Arc<ServerConfig>, String> {
        let key = KeyPair::generate().map_err(|e| e.to_string())?;
        let params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .map_err(|e| e.to_string())?;
        let cert = params
            .signed_by(&key, &self.issuer)
            .map_err(|e| e.to_string())?;
        let chain: Vec<CertificateDer<'static>> = vec![cert.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let mut config = ServerConfig::builder_with_provider(Arc::new(
            tokio_rustls::rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| e.to_string())?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// A TLS server on loopback.
#[derive(Debug)]
pub struct TlsServed {
    /// The bound address, `127.0.0.1:PORT`.
    pub addr: SocketAddr,
    /// TCP connections accepted so far, handshake completed or not.
    pub accepted: Arc<AtomicUsize>,
    /// The accept loop, aborted when this is dropped.
    pub handle: JoinHandle<()>,
}

impl Drop for TlsServed {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

impl TlsServed {
    /// TCP connections accepted so far.
    #[must_use]
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// Serves `router` over TLS with `config` on `127.0.0.1`, an ephemeral
/// port. Call inside a tokio runtime; never inside a simulated run. A
/// connection whose handshake fails is dropped and serves nothing.
///
/// # Errors
/// The bind's I/O error.
pub async fn serve_tls_loopback(
    router: axum::Router,
    config: Arc<ServerConfig>,
) -> std::io::Result<TlsServed> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&accepted);
    let acceptor = TlsAcceptor::from(config);
    let handle = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let acceptor = acceptor.clone();
            let router = router.clone();
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(stream).await {
                    memoria_simulator::serve_connection(tls, router).await;
                }
            });
        }
    });
    Ok(TlsServed {
        addr,
        accepted,
        handle,
    })
}
