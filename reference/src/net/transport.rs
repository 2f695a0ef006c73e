//! The pluggable HTTP transport under every client that dials (the siblings', the home's, the provider's): production dials TCP, the simulator dials turmoil (§6.1, §6.3).
//!
//! The client speaks HTTP/1.1 with hyper over whatever [`Dialer`] hands it.
//! One connection per exchange, no pooling, and redirects are never followed:
//! a 3xx is returned to the caller as a status like any other, and every
//! caller treats it as a failed call (§6.3). An `https://` sibling is
//! dialled through a [`super::tls::TlsDialer`] over the same dialer, so TLS
//! changes the stream and nothing else here.

use std::future::Future;
use std::io;
use std::pin::Pin;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use tokio::io::{AsyncRead, AsyncWrite};

/// The largest response body the client reads from a sibling, in bytes: one
/// S3 body (1 MiB, the upload cap) plus JSON framing.
pub const SIBLING_RESPONSE_BYTES_MAX: usize = 2 * 1024 * 1024;

/// The S2 deadline per sibling, in milliseconds, covering all its batches (§6.5).
pub const SIBLING_DEADLINE_MS: u64 = 800;
/// The deadline for one S1, S1a page or S3 call, in milliseconds. Ingest has
/// nobody waiting, so it allows a cold sibling's wake (§6.5); this project's
/// number, not the spec's.
pub const INGEST_CALL_DEADLINE_MS: u64 = 10_000;

/// Why a TLS handshake refused the server, before any HTTP was sent
/// (§6.1): `memoria-tls`'s, which the conformance kit names refusals by
/// too. Carried by [`TransportError::Tls`].
pub use memoria_tls::TlsRefusal;

/// A byte stream to one sibling host.
pub trait Connection: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Connection for T {}

/// The future a [`Dialer`] returns.
pub type DialFuture<'a> =
    Pin<Box<dyn Future<Output = io::Result<Box<dyn Connection>>> + Send + 'a>>;

/// Opens byte streams to hosts. Production: [`TcpDialer`]. The simulator
/// supplies one over turmoil; the reference never depends on it.
pub trait Dialer: Send + Sync + 'static {
    /// Opens a stream to `host:port`. `host` has already passed the
    /// same-team check ([`super::host::SiblingUrl`]).
    ///
    /// # Errors
    /// Any I/O error opening the stream.
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a>;
}

/// Dials real TCP with tokio.
#[derive(Debug, Clone, Copy, Default)]
pub struct TcpDialer;

impl Dialer for TcpDialer {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let stream = tokio::net::TcpStream::connect((host, port)).await?;
            stream.set_nodelay(true)?;
            Ok(Box::new(stream) as Box<dyn Connection>)
        })
    }
}

/// How an exchange failed before a whole response arrived.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The stream could not be opened.
    #[error("could not connect: {0}")]
    Connect(io::Error),
    /// The stream opened, and the TLS handshake refused the server before
    /// any HTTP was sent (an `https://` URL, §6.1).
    #[error("TLS refused: {0}")]
    Tls(TlsRefusal),
    /// HTTP failed mid-exchange (reset, bad framing).
    #[error("the exchange failed: {0}")]
    Http(String),
    /// The response body is over the exchange's cap
    /// ([`SIBLING_RESPONSE_BYTES_MAX`] for a sibling).
    #[error("the response body is over its byte cap")]
    TooLarge,
}

impl TransportError {
    /// A dial's I/O error: [`TransportError::Tls`] when its inner error is
    /// the [`TlsRefusal`] a TLS dialer put there, else
    /// [`TransportError::Connect`].
    fn from_dial(e: io::Error) -> TransportError {
        match e
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<TlsRefusal>())
        {
            Some(refusal) => TransportError::Tls(refusal.clone()),
            None => TransportError::Connect(e),
        }
    }
}

/// A whole response: status and body bytes.
#[derive(Debug, Clone)]
pub struct RawResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The response headers.
    pub headers: http::HeaderMap,
    /// The body, at most the exchange's cap ([`SIBLING_RESPONSE_BYTES_MAX`] for a sibling).
    pub body: Bytes,
}

/// Sends one request over a fresh connection from `dialer` and reads the
/// whole response. Never follows a redirect.
///
/// # Errors
/// [`TransportError`] when no whole response arrived. A non-2xx status is not
/// an error here: it is a [`RawResponse`] the caller judges.
pub async fn exchange(
    dialer: &dyn Dialer,
    host: &str,
    port: u16,
    request: http::Request<Full<Bytes>>,
) -> Result<RawResponse, TransportError> {
    exchange_within(dialer, host, port, request, SIBLING_RESPONSE_BYTES_MAX).await
}

/// As [`exchange`], reading at most `body_bytes_max` bytes of body: the
/// embedding provider's responses have a cap of their own (§7.2).
///
/// # Errors
/// As [`exchange`]; [`TransportError::TooLarge`] past `body_bytes_max`.
pub(crate) async fn exchange_within(
    dialer: &dyn Dialer,
    host: &str,
    port: u16,
    request: http::Request<Full<Bytes>>,
    body_bytes_max: usize,
) -> Result<RawResponse, TransportError> {
    let stream = dialer
        .dial(host, port)
        .await
        .map_err(TransportError::from_dial)?;
    let io = hyper_util::rt::TokioIo::new(stream);
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| TransportError::Http(e.to_string()))?;
    let driver = async move {
        // The connection ends when the exchange does; its error, if any,
        // surfaces through `send_request` below.
        let _ = conn.await;
    };
    let exchange = async move {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| TransportError::Http(e.to_string()))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = Limited::new(response.into_body(), body_bytes_max)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    TransportError::TooLarge
                } else {
                    TransportError::Http(e.to_string())
                }
            })?
            .to_bytes();
        Ok(RawResponse {
            status,
            headers,
            body,
        })
    };
    let (_, result) = futures::join!(driver, exchange);
    result
}
