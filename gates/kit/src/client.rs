//! The kit's HTTP/1.1 client: one exchange per call over real TCP, raw response bytes kept, and a content-free `--trace` (§6.1, §6.2).
//!
//! HTTP/1.1 with hyper over a fresh tokio TCP connection per exchange (no
//! pooling, redirects never followed: a 3xx is a status like any other),
//! for an `https://` target with rustls over it, trusting Mozilla's roots
//! and an optional private CA, as `memoria serve` does ([`TlsTrust`],
//! §6.1). It blocks on its own current-thread runtime, so the cases are
//! plain functions. The trace prints method, path, status and
//! body sizes, and ids and values of S2 and S1 bodies, but never a token,
//! a subject value, a title or a body.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use tokio::io::{AsyncRead, AsyncWrite};

use memoria_tls::{TlsRefusal, TlsTrust, refusal_of};

/// How long one exchange may take before the kit calls it failed, in
/// milliseconds: generous for a loopback or LAN server.
pub const EXCHANGE_TIMEOUT_MS: u64 = 10_000;

/// The largest response body the kit reads, in bytes: one S3 body (1 MiB,
/// the reference's upload cap) plus JSON framing, the reference's
/// `SIBLING_RESPONSE_BYTES_MAX`.
pub const RESPONSE_BYTES_MAX: usize = 2 * 1024 * 1024;

/// Which bearer token a request carries (§6.2).
#[derive(Debug, Clone, Copy)]
pub enum Auth<'a> {
    /// `authorization: Bearer <token>`.
    Bearer(&'a str),
    /// No authorization header at all.
    Missing,
}

/// A whole response: status and the raw body bytes.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status.
    pub status: u16,
    /// Response headers, names lower-cased, values as received (a value
    /// that is not visible ASCII is kept as its bytes, lossily).
    pub headers: Vec<(String, String)>,
    /// Raw body, exactly as received.
    pub body: Bytes,
}

/// Why no whole response arrived.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The TCP connection could not be opened.
    #[error("the target cannot be reached")]
    Unreachable,
    /// HTTP failed mid-exchange, or the body was too large.
    #[error("the exchange failed: {0}")]
    Exchange(String),
    /// An `https://` target's TLS handshake refused the server.
    #[error("TLS refused: {0}")]
    Tls(TlsRefusal),
    /// No answer within [`EXCHANGE_TIMEOUT_MS`].
    #[error("no answer within {EXCHANGE_TIMEOUT_MS} ms")]
    Timeout,
}

/// Why no TCP connection to the target opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreachable {
    /// The host name does not resolve (DNS failure); the resolver's words.
    #[error("the name {host} does not resolve ({why})")]
    Dns {
        /// The host name.
        host: String,
        /// The resolver's error.
        why: String,
    },
    /// Something answered and refused the connection: nothing listens there.
    #[error("connection refused (nothing listens on port {port})")]
    Refused {
        /// The TCP port.
        port: u16,
    },
    /// No connection within [`EXCHANGE_TIMEOUT_MS`].
    #[error("no connection within {EXCHANGE_TIMEOUT_MS} ms (timeout)")]
    Timeout,
    /// Another operating-system error, in its own words.
    #[error("{0}")]
    Other(String),
}

/// The target: `http://host:port` or `https://host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Host to dial, to send as `host:` and, over TLS, to verify the
    /// certificate against.
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// True for `https://`: every exchange runs over TLS.
    pub tls: bool,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        write!(f, "{scheme}://{}:{}", self.host, self.port)
    }
}

impl Target {
    /// Parses `http://host[:port]` (port 80 if absent) or
    /// `https://host[:port]` (port 443 if absent). A path is ignored.
    ///
    /// # Errors
    /// A message for another scheme or an unparseable URL.
    pub fn parse(url: &str) -> Result<Target, String> {
        let uri: http::Uri = url.parse().map_err(|_| format!("not a URL: {url:?}"))?;
        let (tls, port) = match uri.scheme_str() {
            Some("http") => (false, 80),
            Some("https") => (true, 443),
            _ => return Err("the target must be http://host:port or https://host:port".into()),
        };
        let host = uri.host().ok_or("the target URL has no host")?.to_string();
        Ok(Target {
            host,
            port: uri.port_u16().unwrap_or(port),
            tls,
        })
    }
}

/// A blocking client for one target.
pub struct Client {
    target: Target,
    runtime: tokio::runtime::Runtime,
    trace: bool,
    trust: TlsTrust,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("target", &self.target)
            .field("trace", &self.trace)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `target`; `trace` prints every exchange to stderr. An
    /// `https://` target is verified against Mozilla's roots until
    /// [`Client::with_trust`] adds a private CA.
    ///
    /// # Panics
    /// If a current-thread tokio runtime cannot be built (out of resources).
    #[must_use]
    pub fn new(target: Target, trace: bool) -> Client {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime builds");
        Client {
            trust: TlsTrust::public(),
            target,
            runtime,
            trace,
        }
    }

    /// The same client, an `https://` target verified against `trust`
    /// (e.g. [`TlsTrust::from_ca_file`] for a team's private CA).
    #[must_use]
    pub fn with_trust(mut self, trust: TlsTrust) -> Client {
        self.trust = trust;
        self
    }

    /// For an `https://` target, opens one connection and completes the
    /// TLS handshake, within [`EXCHANGE_TIMEOUT_MS`]; for `http://`, nothing.
    ///
    /// # Errors
    /// The [`TlsRefusal`] that ended the handshake, or
    /// [`TlsRefusal::Handshake`] for a connection that failed or timed out
    /// during it.
    pub fn handshake(&self) -> Result<(), TlsRefusal> {
        if !self.target.tls {
            return Ok(());
        }
        let (host, port) = (self.target.host.as_str(), self.target.port);
        self.runtime.block_on(async {
            let dialed = tokio::time::timeout(Duration::from_millis(EXCHANGE_TIMEOUT_MS), async {
                let tcp = dial_tcp(host, port).await?;
                self.trust.connect(host, tcp).await
            })
            .await;
            match dialed {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(e)) => {
                    Err(refusal_of(&e).unwrap_or_else(|| TlsRefusal::Handshake(e.to_string())))
                }
                Err(_) => Err(TlsRefusal::Handshake(format!(
                    "no handshake within {EXCHANGE_TIMEOUT_MS} ms"
                ))),
            }
        })
    }

    /// Opens (and closes) one TCP connection to the target, within
    /// [`EXCHANGE_TIMEOUT_MS`] in all, resolving its name first.
    ///
    /// # Errors
    /// [`Unreachable`] saying why no connection opened.
    pub fn connect(&self) -> Result<(), Unreachable> {
        let (host, port) = (self.target.host.clone(), self.target.port);
        self.runtime.block_on(async move {
            let attempt = async {
                let addrs: Vec<std::net::SocketAddr> =
                    match tokio::net::lookup_host((host.as_str(), port)).await {
                        Ok(a) => a.collect(),
                        Err(e) => {
                            return Err(Unreachable::Dns {
                                host: host.clone(),
                                why: e.to_string(),
                            });
                        }
                    };
                let mut last = Unreachable::Dns {
                    host: host.clone(),
                    why: "no address".into(),
                };
                for addr in addrs {
                    match tokio::net::TcpStream::connect(addr).await {
                        Ok(_) => return Ok(()),
                        Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                            last = Unreachable::Refused { port };
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                            last = Unreachable::Timeout;
                        }
                        Err(e) => last = Unreachable::Other(e.to_string()),
                    }
                }
                Err(last)
            };
            tokio::time::timeout(Duration::from_millis(EXCHANGE_TIMEOUT_MS), attempt)
                .await
                .unwrap_or(Err(Unreachable::Timeout))
        })
    }

    /// `GET path_and_query`.
    ///
    /// # Errors
    /// [`ClientError`] when no whole response arrived.
    pub fn get(&self, path_and_query: &str, auth: Auth<'_>) -> Result<Response, ClientError> {
        self.send("GET", path_and_query, None, auth, &[])
    }

    /// `POST path` with a JSON body.
    ///
    /// # Errors
    /// [`ClientError`] when no whole response arrived.
    pub fn post(&self, path: &str, body: Vec<u8>, auth: Auth<'_>) -> Result<Response, ClientError> {
        self.send("POST", path, Some(body), auth, &[])
    }

    /// `POST path` with a JSON body and extra request headers `(name, value)`.
    ///
    /// # Errors
    /// [`ClientError`] when no whole response arrived, or a header is not
    /// a valid HTTP header.
    pub fn post_with_headers(
        &self,
        path: &str,
        body: Vec<u8>,
        auth: Auth<'_>,
        extra: &[(&str, &str)],
    ) -> Result<Response, ClientError> {
        self.send("POST", path, Some(body), auth, extra)
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Vec<u8>>,
        auth: Auth<'_>,
        extra: &[(&str, &str)],
    ) -> Result<Response, ClientError> {
        let host_header = if self.target.port == 80 {
            self.target.host.clone()
        } else {
            format!("{}:{}", self.target.host, self.target.port)
        };
        let mut builder = http::Request::builder()
            .method(method)
            .uri(path)
            .header(http::header::HOST, host_header);
        if let Auth::Bearer(token) = auth {
            builder = builder.header(http::header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if body.is_some() {
            builder = builder.header(http::header::CONTENT_TYPE, "application/json");
        }
        for (name, value) in extra {
            builder = builder.header(*name, *value);
        }
        let sent = body.clone().unwrap_or_default();
        let request = builder
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| ClientError::Exchange(e.to_string()))?;
        let result = self.runtime.block_on(async {
            tokio::time::timeout(
                Duration::from_millis(EXCHANGE_TIMEOUT_MS),
                self.exchange(request),
            )
            .await
        });
        let out = match result {
            Err(_) => Err(ClientError::Timeout),
            Ok(r) => r,
        };
        if self.trace {
            eprintln!("{}", trace_line(method, path, &sent, auth, &out));
        }
        out
    }
}

impl Client {
    /// Sends `request` over a fresh connection to the target (TLS over it
    /// for `https://`) and reads the whole response.
    async fn exchange(&self, request: http::Request<Full<Bytes>>) -> Result<Response, ClientError> {
        let (host, port) = (self.target.host.as_str(), self.target.port);
        let tcp = dial_tcp(host, port)
            .await
            .map_err(|_| ClientError::Unreachable)?;
        if !self.target.tls {
            return exchange_over(tcp, request).await;
        }
        let tls = self
            .trust
            .connect(host, tcp)
            .await
            .map_err(|e| refusal_of(&e).map_or(ClientError::Unreachable, ClientError::Tls))?;
        exchange_over(tls, request).await
    }
}

/// A TCP connection to `host:port`, Nagle off.
async fn dial_tcp(host: &str, port: u16) -> io::Result<tokio::net::TcpStream> {
    let stream = tokio::net::TcpStream::connect((host, port)).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

/// One HTTP/1.1 exchange over `stream`: the whole response, its body at
/// most [`RESPONSE_BYTES_MAX`]. A non-2xx status is a response, not an
/// error.
async fn exchange_over<S>(
    stream: S,
    request: http::Request<Full<Bytes>>,
) -> Result<Response, ClientError>
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    // The reference's transport words, so a failure reads as it did.
    let failed =
        |e: &dyn std::fmt::Display| ClientError::Exchange(format!("the exchange failed: {e}"));
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|e| failed(&e))?;
    // The connection's own errors surface through `send_request`; it is
    // dropped with the exchange.
    let driver = tokio::spawn(async move {
        let _ = conn.await;
    });
    let exchanged = async {
        let response = sender.send_request(request).await.map_err(|e| failed(&e))?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let body = Limited::new(response.into_body(), RESPONSE_BYTES_MAX)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    ClientError::Exchange("the response body is over its byte cap".into())
                } else {
                    failed(&e)
                }
            })?
            .to_bytes();
        Ok(Response {
            status,
            headers,
            body,
        })
    }
    .await;
    driver.abort();
    exchanged
}

/// One `--trace` line: no token, subject value, title or body (conventions: no content in logs).
fn trace_line(
    method: &str,
    path: &str,
    sent: &[u8],
    auth: Auth<'_>,
    out: &Result<Response, ClientError>,
) -> String {
    let auth = match auth {
        Auth::Bearer(_) => "bearer",
        Auth::Missing => "no-token",
    };
    let path = path.split('?').next().unwrap_or(path);
    let request = redact(sent);
    match out {
        Ok(r) => {
            let body = if path == "/s3/fetch" && r.status == 200 {
                format!("<s3 body, {} bytes>", r.body.len())
            } else {
                redact(&r.body)
            };
            format!(
                "trace: {method} {path} ({auth}) {request} -> {} {body}",
                r.status
            )
        }
        Err(e) => format!("trace: {method} {path} ({auth}) {request} -> {e}"),
    }
}

/// A body for the trace: JSON with `value`, `title`, `body` and `cursor`
/// fields replaced by their length; anything else by its length alone.
fn redact(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return format!("<{} bytes, not JSON>", bytes.len());
    };
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map.iter_mut() {
                    if matches!(k.as_str(), "value" | "title" | "body" | "cursor") {
                        let n = x.as_str().map_or(0, str::len);
                        *x = serde_json::Value::String(format!("<{n} bytes>"));
                    } else {
                        walk(x);
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    let s = v.to_string();
    if s.len() > TRACE_BODY_CHARS_MAX {
        format!(
            "{}… ({} bytes)",
            &s[..s.floor_char_boundary(TRACE_BODY_CHARS_MAX)],
            bytes.len()
        )
    } else {
        s
    }
}

/// The longest body the trace prints, in characters; longer ones are cut.
pub const TRACE_BODY_CHARS_MAX: usize = 600;

/// What a query-string token keeps unescaped: RFC 3986's unreserved
/// characters (§2.3), so the target reads the token back as it issued it
/// whichever percent-decoder it uses (a space is `%20`, never `+`).
const TOKEN_KEPT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes an opaque token for a query string (RFC 3986 unreserved kept).
#[must_use]
pub fn encode_query(token: &str) -> String {
    percent_encoding::utf8_percent_encode(token, TOKEN_KEPT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_never_prints_a_subject_value_a_title_or_a_body() {
        let s = redact(br#"{"subject":{"kind":"address","value":"ana@acme.test"},"title":"Secret plan","body":"x"}"#);
        assert!(!s.contains("ana@"), "{s}");
        assert!(!s.contains("Secret"), "{s}");
        assert!(s.contains("address"), "{s}");
    }

    #[test]
    fn a_target_is_http_or_https_with_a_host_and_its_schemes_default_port() {
        let rows = [
            ("http://127.0.0.1:8080", "127.0.0.1", 8080, false),
            ("http://x.test", "x.test", 80, false),
            ("https://x.test", "x.test", 443, true),
            ("https://localhost:8443/", "localhost", 8443, true),
        ];
        for (url, host, port, tls) in rows {
            let want = Target {
                host: host.into(),
                port,
                tls,
            };
            assert_eq!(Target::parse(url).as_ref(), Ok(&want), "{url}");
        }
        for url in ["ftp://x.test", "nonsense"] {
            assert!(Target::parse(url).is_err(), "{url}");
        }
    }

    #[test]
    fn a_query_token_keeps_only_the_unreserved_characters() {
        assert_eq!(encode_query("AZaz09-_.~"), "AZaz09-_.~");
        assert_eq!(
            encode_query("a b+c&d=e#f%/é"),
            "a%20b%2Bc%26d%3De%23f%25%2F%C3%A9"
        );
    }
}
