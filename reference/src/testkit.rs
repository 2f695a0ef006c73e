//! Drives the web surface in-process, with no socket: the one helper tests and gates use to touch it.
//!
//! [`TestApp`] wakes an [`Instance`] in a data directory, builds the real
//! router ([`crate::web::router`]) over a [`CapturedDelivery`], and sends
//! requests through `tower::ServiceExt::oneshot`. Signing in follows the
//! captured one-time link exactly as a browser would. It exists only with
//! the `testkit` feature, which the test and harness crates turn on and a
//! release build of the binary does not.

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{HeaderMap, StatusCode, header};
use tower::ServiceExt as _;

use crate::access::admission::Admission;
use crate::clock::{Clock, SystemClock};
use crate::error::Error;
use crate::instance::{Instance, InstanceConfig};
use crate::offload::Offload;
use crate::policy::egress::EgressMode;
use crate::storage::seal::{Dek, Sealer};
use crate::web::{self, AppState};

pub use crate::crashpoint::{AimedCrash, CRASHPOINT_ENV, CRASHPOINTS, CrashLanded, aim_crash};
pub use crate::web::CapturedDelivery;

/// A request the testkit sends.
pub type Request = axum::http::Request<Body>;

/// A bodiless request with any method, e.g. `request("DELETE", "/")`.
///
/// # Panics
/// If `method` is not a valid HTTP method or `uri` not a valid URI.
pub fn request(method: &str, uri: &str) -> Request {
    axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .body(Body::empty())
        .expect("valid request")
}

/// The largest response body a test reads, in bytes.
pub const RESPONSE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// A response, read whole.
#[derive(Debug, Clone)]
pub struct TestResponse {
    /// Status code.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body, decoded as UTF-8 (lossily).
    pub body: String,
}

impl TestResponse {
    /// The `Location` header, if any.
    pub fn location(&self) -> Option<&str> {
        self.headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
    }
}

/// An in-process memoria web app with a signed-in (or not) client.
pub struct TestApp {
    state: AppState,
    router: Router,
    delivery: Arc<CapturedDelivery>,
    cookie: Option<String>,
    csrf: Option<String>,
}

impl std::fmt::Debug for TestApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestApp")
            .field("signed_in", &self.cookie.is_some())
            .finish_non_exhaustive()
    }
}

impl TestApp {
    /// Wakes an instance in `data_dir` under `dek`, admitting `owners`
    /// (comma-separated), and builds the router.
    ///
    /// # Errors
    /// As [`Instance::wake`], and [`crate::ErrorKind::Config`] for a bad owners list.
    pub fn new(data_dir: &Path, dek: &Dek, owners: &str) -> Result<TestApp, Error> {
        TestApp::with_clock(data_dir, dek, owners, Arc::new(SystemClock))
    }

    /// As [`TestApp::new`] with a given clock.
    ///
    /// # Errors
    /// As [`TestApp::new`].
    pub fn with_clock(
        data_dir: &Path,
        dek: &Dek,
        owners: &str,
        clock: Arc<dyn Clock>,
    ) -> Result<TestApp, Error> {
        TestApp::with_admission(data_dir, dek, Admission::parse(owners)?, clock)
    }

    /// As [`TestApp::with_clock`], admitting from `admission`: e.g. an
    /// owners file ([`Admission::file`]) a test rewrites while the app runs.
    ///
    /// # Errors
    /// As [`Instance::wake`].
    pub fn with_admission(
        data_dir: &Path,
        dek: &Dek,
        admission: Admission,
        clock: Arc<dyn Clock>,
    ) -> Result<TestApp, Error> {
        let instance = Instance::wake(
            InstanceConfig {
                data_dir: data_dir.to_path_buf(),
                admission,
                egress: EgressMode::AiOff,
            },
            Sealer::new(dek),
            clock,
        )?;
        Ok(TestApp::from_instance(instance))
    }

    /// Wraps an already-awake instance. Store work runs inline
    /// ([`Offload::Inline`]), on the test's own thread, as in a simulation.
    pub fn from_instance(instance: Instance) -> TestApp {
        TestApp::from_instance_with(instance, Offload::Inline)
    }

    /// As [`TestApp::from_instance`], with store work run where `offload`
    /// says ([`Offload::Pool`] is `memoria serve`'s mode).
    pub fn from_instance_with(instance: Instance, offload: Offload) -> TestApp {
        let delivery = Arc::new(CapturedDelivery::default());
        let state = AppState::new(instance, delivery.clone(), "http://memoria.test", offload);
        let router = web::router(state.clone());
        TestApp {
            state,
            router,
            delivery,
            cookie: None,
            csrf: None,
        }
    }

    /// The same app with a sibling client: searches rule sibling passages
    /// through S2 (§8.1). Call before signing in.
    pub fn with_siblings(mut self, client: crate::sibling::SiblingClient) -> TestApp {
        self.state = self.state.clone().with_siblings(client);
        self.router = web::router(self.state.clone());
        self
    }

    /// The same app with the scopes a brief may name (`/brief`). Call
    /// before signing in.
    pub fn with_scopes(mut self, scopes: crate::brief::Scopes) -> TestApp {
        self.state = self.state.clone().with_scopes(scopes);
        self.router = web::router(self.state.clone());
        self
    }

    /// The same app with AI on's provider client (the instance must be
    /// woken with AI on): searches embed their query and rank hybrid, and
    /// [`AppState::drain_embeddings`] and [`AppState::check_canary`] reach
    /// the provider. Call before signing in.
    pub fn with_embedder(mut self, client: crate::ai::embed::EmbedClient) -> TestApp {
        self.state = self.state.clone().with_embedder(client);
        self.router = web::router(self.state.clone());
        self
    }

    /// The same app with AI on's chat client (the instance must be woken
    /// with AI on): searches may answer (§8.4) and extract (§8.9). Call
    /// before signing in.
    pub fn with_chat(mut self, client: crate::ai::chat::ChatClient) -> TestApp {
        self.state = self.state.clone().with_chat(client);
        self.router = web::router(self.state.clone());
        self
    }

    /// The same app with the suite's sign-in classifier (§3.2), which
    /// `POST /auth/begin` runs over an owner's address only. Call before
    /// signing in.
    pub fn with_sign_in_classifier(
        mut self,
        classifier: Arc<dyn crate::access::classifier::SignInClassifier>,
    ) -> TestApp {
        self.state = self.state.clone().with_sign_in_classifier(classifier);
        self.router = web::router(self.state.clone());
        self
    }

    /// The same app with the connectors the ingest surface admits
    /// (`/connectors/…`, §9.1). Call before signing in.
    pub fn with_connectors(mut self, connectors: crate::Connectors) -> TestApp {
        self.state = self.state.clone().with_connectors(connectors);
        self.router = web::router(self.state.clone());
        self
    }

    /// A second browser on the same app: the same state, router and
    /// captured links, its own cookie (none yet). Two people side by side.
    pub fn beside(&self) -> TestApp {
        TestApp {
            state: self.state.clone(),
            router: self.router.clone(),
            delivery: self.delivery.clone(),
            cookie: None,
            csrf: None,
        }
    }

    /// The session cookie pair (`memoria_session=…`) once signed in, to
    /// present it on a request sent with [`TestApp::send_bare`].
    pub fn session_cookie(&self) -> Option<&str> {
        self.cookie.as_deref()
    }

    /// Sends `req` exactly as given, without this client's session cookie
    /// (only a `Host` is added): a caller holding whatever credential the
    /// request itself carries, or none.
    pub async fn send_bare(&self, req: Request) -> TestResponse {
        self.dispatch(req).await
    }

    /// The shared state, e.g. to reach the instance.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Every sign-in link delivered so far: (owner, url).
    pub fn delivered_links(&self) -> Vec<(String, String)> {
        self.delivery.links()
    }

    /// The session's CSRF token, once signed in.
    pub fn csrf(&self) -> Option<&str> {
        self.csrf.as_deref()
    }

    /// Forgets the session cookie: later requests are signed out.
    pub fn sign_out_locally(&mut self) {
        self.cookie = None;
        self.csrf = None;
    }

    /// Delivers a sign-in link to `owner`, follows it, and keeps the session
    /// cookie and CSRF token. Returns the link that was followed.
    ///
    /// # Panics
    /// If `owner` is not admitted, or the link does not yield a session: a
    /// test that cannot sign in has nothing to assert.
    pub async fn sign_in(&mut self, owner: &str) -> String {
        let owner = self
            .state
            .instance()
            .lock()
            .expect("instance lock")
            .admit(owner)
            .expect("sign_in needs an admitted owner");
        self.state.deliver_sign_in_link(&owner);
        let (_, url) = self
            .delivery
            .links()
            .into_iter()
            .rev()
            .find(|(o, _)| o == owner.address())
            .expect("a link was delivered");
        let resp = self.follow_sign_in_link(&url).await;
        assert_eq!(resp.status, StatusCode::SEE_OTHER, "sign-in link followed");
        assert!(self.cookie.is_some(), "sign-in sets a cookie");
        assert!(
            self.csrf.is_some(),
            "the signed-in page carries a CSRF token"
        );
        url
    }

    /// `POST /auth/begin` with `address`, as the sign-in form submits it,
    /// carrying no cookie: asks for a sign-in link (§3.2).
    pub async fn begin_sign_in(&self, address: &str) -> TestResponse {
        let body = form_urlencoded::Serializer::new(String::new())
            .append_pair("address", address)
            .finish();
        self.dispatch(
            axum::http::Request::post("/auth/begin")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(body))
                .expect("valid request"),
        )
        .await
    }

    /// Follows a delivered sign-in link `url` as a browser would, carrying
    /// no cookie. If the response sets a session cookie this client keeps
    /// it, with the CSRF token of the page it lands on; otherwise this
    /// client's session is left as it was. Returns the link's response.
    ///
    /// # Panics
    /// If `url` does not start with the app's base URL.
    pub async fn follow_sign_in_link(&mut self, url: &str) -> TestResponse {
        let path = url
            .strip_prefix("http://memoria.test")
            .expect("links start with the base url");
        let resp = self.dispatch(request("GET", path)).await;
        let pair = resp
            .headers
            .get(header::SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.split(';').next())
            .filter(|p| p.split_once('=').is_some_and(|(_, v)| !v.is_empty()))
            .map(str::to_string);
        if let Some(pair) = pair {
            self.cookie = Some(pair);
            let home = self.get("/").await;
            self.csrf = extract_csrf(&home.body);
        }
        resp
    }

    /// Sends any request and reads the whole response.
    ///
    /// # Panics
    /// If the router fails to answer (it is infallible) or the body exceeds
    /// [`RESPONSE_BYTES_MAX`].
    pub async fn send(&self, mut req: Request) -> TestResponse {
        if let Some(c) = &self.cookie {
            req.headers_mut()
                .insert(header::COOKIE, c.parse().expect("cookie header"));
        }
        self.dispatch(req).await
    }

    /// Sends `req` with no cookie of this client's, adding only a `Host`.
    async fn dispatch(&self, mut req: Request) -> TestResponse {
        if !req.headers().contains_key(header::HOST) {
            req.headers_mut()
                .insert(header::HOST, "memoria.test".parse().expect("host"));
        }
        let resp = self
            .router
            .clone()
            .oneshot(req)
            .await
            .expect("the router is infallible");
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = to_bytes(resp.into_body(), RESPONSE_BYTES_MAX)
            .await
            .expect("body fits");
        TestResponse {
            status,
            headers,
            body: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// `GET uri` carrying only the cookie that `from` set (not this client's
    /// own session), as a browser following `from`'s redirect would.
    pub async fn get_with_set_cookie(&self, uri: &str, from: &TestResponse) -> TestResponse {
        let mut req = request("GET", uri);
        if let Some(pair) = from
            .headers
            .get(header::SET_COOKIE)
            .and_then(|v| v.to_str().ok())
            .and_then(|s| s.split(';').next())
        {
            req.headers_mut()
                .insert(header::COOKIE, pair.parse().expect("cookie header"));
        }
        self.dispatch(req).await
    }

    /// `GET uri`.
    pub async fn get(&self, uri: &str) -> TestResponse {
        self.send(request("GET", uri)).await
    }

    /// `POST uri` with an urlencoded form.
    pub async fn post_form(&self, uri: &str, fields: &[(&str, &str)]) -> TestResponse {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        self.send(
            axum::http::Request::post(uri)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(body))
                .expect("valid request"),
        )
        .await
    }

    /// `POST /documents` with a multipart upload of `bytes` named `name`,
    /// carrying the session's CSRF token (or `csrf` if given).
    pub async fn upload(&self, name: &str, bytes: &[u8], csrf: Option<&str>) -> TestResponse {
        let boundary = "memoria-test-boundary-7f3a";
        let token = csrf.or(self.csrf.as_deref()).unwrap_or("");
        let mut body = Vec::new();
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n{token}\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        self.send(
            axum::http::Request::post("/documents")
                .header(
                    header::CONTENT_TYPE,
                    format!("multipart/form-data; boundary={boundary}"),
                )
                .body(Body::from(body))
                .expect("valid request"),
        )
        .await
    }
}

/// Encodes a form or query-string value as `application/x-www-form-urlencoded`
/// (`form_urlencoded`), the encoding the router's `Query` and `Form`
/// extractors decode: any value comes back byte for byte.
pub fn form_encode(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// The CSRF token from a page's hidden `csrf` input.
pub fn extract_csrf(body: &str) -> Option<String> {
    let at = body.find("name=\"csrf\" value=\"")?;
    let rest = &body[at + "name=\"csrf\" value=\"".len()..];
    Some(rest[..rest.find('"')?].to_string())
}
