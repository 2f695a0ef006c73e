//! Network plumbing for fakes: serving a router over turmoil or loopback TCP, and a turmoil [`Dialer`] for the reference's sibling client (§6.1, §6.3).
//!
//! Each connection is HTTP/1.1 over hyper. A response carrying
//! [`RefuseConnection`] (the `Outage::Refuse` knob) makes the server drop the
//! connection without writing it.

use std::error::Error;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::Router;
use memoria::{Connection, DialFuture, Dialer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tower::ServiceExt as _;

use crate::fake::faults::RefuseConnection;

/// Serves `router` on `0.0.0.0:port` inside a turmoil host, one task per
/// connection. Use as a host's body:
/// `sim.host("acme.sheets.oficina.works", move || serve_turmoil(router.clone(), 443))`.
///
/// # Errors
/// Binding or accepting failed.
pub async fn serve_turmoil(router: Router, port: u16) -> Result<(), Box<dyn Error>> {
    let listener =
        turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        tokio::spawn(serve_connection(stream, router.clone()));
    }
}

/// Serves `router` on real loopback TCP at `addr` (e.g. `127.0.0.1:0`), for
/// a conformance CLI. Never used inside a simulation.
///
/// # Errors
/// Binding failed.
pub async fn serve_loopback(
    router: Router,
    addr: SocketAddr,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let handle = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_connection(stream, router.clone()));
        }
    });
    Ok((local, handle))
}

/// Serves HTTP/1.1 on one connection until it closes, or drops it unanswered
/// when the router marks a response [`RefuseConnection`].
pub async fn serve_connection<S>(stream: S, router: Router)
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let refuse = Arc::new(Notify::new());
    let signal = Arc::clone(&refuse);
    let service = hyper::service::service_fn(move |request| {
        let router = router.clone();
        let signal = Arc::clone(&signal);
        async move {
            let response = router.oneshot(request).await?;
            if response.extensions().get::<RefuseConnection>().is_some() {
                signal.notify_one();
                std::future::pending::<()>().await;
            }
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::select! {
        // A failed connection is the peer's problem; the fake just stops.
        _ = connection => {}
        () = refuse.notified() => {}
    }
}

/// Dials turmoil TCP: the simulator's [`Dialer`] for the reference's
/// sibling client.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurmoilDialer;

impl Dialer for TurmoilDialer {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            let stream = turmoil::net::TcpStream::connect((host, port)).await?;
            Ok(Box::new(stream) as Box<dyn Connection>)
        })
    }
}

/// A turmoil listener that axum can serve on: memoria's own host in a run
/// serves through [`memoria::serve`] exactly as `memoria serve` does.
pub struct TurmoilListener(turmoil::net::TcpListener);

impl std::fmt::Debug for TurmoilListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TurmoilListener")
            .field(&self.0.local_addr().ok())
            .finish()
    }
}

impl TurmoilListener {
    /// Binds `0.0.0.0:port` inside the current turmoil host.
    ///
    /// # Errors
    /// Binding failed (the port is taken on this host).
    pub async fn bind(port: u16) -> std::io::Result<TurmoilListener> {
        turmoil::net::TcpListener::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), port))
            .await
            .map(TurmoilListener)
    }
}

impl axum::serve::Listener for TurmoilListener {
    type Io = turmoil::net::TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok(pair) => return pair,
                // A failed accept is the peer's problem; keep listening.
                Err(_) => tokio::task::yield_now().await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.0.local_addr()
    }
}
