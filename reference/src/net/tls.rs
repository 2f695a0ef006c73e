//! TLS over a stream the [`Dialer`] opened: how an `https://` sibling, the home and the provider are reached without a socket of their own (§6.1, §8.3, gate 15).
//!
//! Every TLS connection memoria makes goes through the [`Dialer`] the
//! instance was given (production's `TcpDialer`; the simulator's guarded
//! turmoil dialer), and rustls runs over that stream. So every name lookup
//! and connection passes the dialer, where gate 15's network guard hears it.
//!
//! What a connection trusts, and the words a refused handshake is named
//! in, are the `memoria-tls` crate's (`reference/tls/`), which the
//! conformance kit shares: a [`TlsTrust`] is Mozilla's roots, compiled in,
//! for siblings and the home plus the certificates of a team's private CA
//! that the operator names in a PEM file (`MEMORIA_SIBLING_CA_FILE`); the
//! provider trusts Mozilla's roots alone. A certificate that chains to
//! none of them, or that does not name the host dialled, ends the
//! handshake with a [`TlsRefusal`] before any byte of HTTP is sent.
//!
//! Which URLs take TLS is the scheme's business ([`SiblingScheme`]):
//! `https://` always, `http://` never, whatever the dialer.

use std::sync::Arc;

pub use memoria_tls::{CaRefusal, TlsRefusal, TlsTrust};

use super::host::SiblingScheme;
use super::transport::{Connection, DialFuture, Dialer};

/// The largest private-CA PEM file memoria reads, in bytes
/// (`memoria_tls::CA_FILE_BYTES_MAX`): a CA bundle is a few kilobytes.
pub const SIBLING_CA_FILE_BYTES_MAX: u64 = memoria_tls::CA_FILE_BYTES_MAX;

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
            // The name is checked before the stream is opened.
            let handshake = self.trust.handshake_for(host)?;
            let stream = self.inner.dial(host, port).await?;
            let tls = handshake.over(stream).await?;
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
