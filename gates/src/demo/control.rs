//! The demo's way to the fakes and the designer's way to flip them: a [`LoopbackDialer`] that maps the sibling hosts to loopback, and each fake's `/_control` route with fault actions beside the conformance hook's (§6.3, §6.5).
//!
//! The reference dials through its `Dialer` trait; production's `TcpDialer`
//! resolves names. The demo's dialer resolves nothing: it connects
//! `127.0.0.1` on the URL's port for exactly the demo's sibling hosts and
//! refuses every other name, so memoria's own host check (§6.3) still runs
//! on real `<team>.<app>.oficina.works` URLs and no lookup leaves the machine.
//!
//! `memoria-harness fake-control --url URL ACTION [ARGS]` posts
//! `{"action","args"}` here. The fault actions are the demo's; every other
//! action goes to the simulator's `Controller` (`reset`, `bump-revision
//! ITEM`, `partial-restore ITEM REVISION`, `whole-log-restore`, `delete
//! ITEM`, …). Answers are as the `Controller`'s: `200 {"value":V}`, `404`
//! for an unknown action, `409` when the model refuses.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use http::StatusCode;
use memoria::{Connection, DialFuture, Dialer};
use memoria_simulator::{CONTROL_PATH, Controller, FakeSibling, Outage, Slow, TruncateAnnounce};

/// One control request, as `fake-control` sends it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct ControlRequest {
    /// The action name, e.g. `outage`.
    pub action: String,
    /// Its arguments, in order.
    #[serde(default)]
    pub args: Vec<String>,
}

/// Dials `127.0.0.1:<port>` for the demo's sibling hosts, and nothing else.
#[derive(Debug, Clone)]
pub struct LoopbackDialer {
    hosts: BTreeSet<String>,
}

impl LoopbackDialer {
    /// A dialer for `hosts` (e.g. `acme.sheets.oficina.works`), lower case.
    #[must_use]
    pub fn new(hosts: impl IntoIterator<Item = String>) -> LoopbackDialer {
        LoopbackDialer {
            hosts: hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect(),
        }
    }
}

impl Dialer for LoopbackDialer {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            if !self.hosts.contains(&host.to_ascii_lowercase()) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "not one of the demo's sibling hosts",
                ));
            }
            let stream = tokio::net::TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await?;
            stream.set_nodelay(true)?;
            Ok(Box::new(stream) as Box<dyn Connection>)
        })
    }
}

/// The fault actions, with their arguments, as a designer types them.
pub const FAULT_ACTIONS: &[(&str, &str)] = &[
    (
        "outage hang|refuse|off|STATUS",
        "hang every call, drop it unanswered, answer STATUS (e.g. 503), or answer again",
    ),
    ("slow MS|off", "add MS milliseconds to every answer"),
    (
        "announce truncate|whole",
        "cut the S1a announce short (no close record), or serve it whole",
    ),
    ("faults-off", "every fault knob off"),
];

/// One fake's control: the demo's fault actions, then its `Controller`.
#[derive(Clone)]
pub struct DemoControl {
    fake: FakeSibling,
    controller: Controller,
}

impl std::fmt::Debug for DemoControl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoControl")
            .field("host", &self.fake.host())
            .finish_non_exhaustive()
    }
}

impl DemoControl {
    /// Control over `fake`; `controller` remembers its seeded state for
    /// `reset`. There is no action that makes memoria pull: it pulls on
    /// its own wake and on each question (§6.1), so a search is the lever.
    #[must_use]
    pub fn new(fake: FakeSibling, controller: Controller) -> DemoControl {
        DemoControl { fake, controller }
    }

    /// `POST /_control` on a router of its own, to serve beside the fake's.
    pub fn router(&self) -> Router {
        Router::new()
            .route(CONTROL_PATH, post(control))
            .with_state(self.clone())
    }

    /// Applies one action.
    ///
    /// # Errors
    /// `(404, why)` for an unknown action or arguments, `(409, why)` when
    /// the model refuses or memoria is not up yet.
    pub async fn apply(
        &self,
        action: &str,
        args: &[String],
    ) -> Result<Option<String>, (u16, String)> {
        let faults = self.fake.faults();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        match (action, args.as_slice()) {
            ("outage", [how]) => {
                let outage = match *how {
                    "off" => None,
                    "hang" => Some(Outage::Hang),
                    "refuse" => Some(Outage::Refuse),
                    status => Some(Outage::Status(
                        status
                            .parse()
                            .ok()
                            .filter(|s| (100..=599).contains(s))
                            .ok_or((404, "outage hang|refuse|off|STATUS".to_owned()))?,
                    )),
                };
                faults.set_outage(outage);
                Ok(None)
            }
            ("slow", ["off"]) => {
                faults.set_slow(None);
                Ok(None)
            }
            ("slow", [ms]) => {
                let latency_ms = ms.parse().map_err(|_| (404, "slow MS|off".to_owned()))?;
                faults.set_slow(Some(Slow {
                    latency_ms,
                    only: None,
                }));
                Ok(None)
            }
            ("announce", ["truncate"]) => {
                faults.set_truncate_announce(Some(TruncateAnnounce::NoClose));
                Ok(None)
            }
            ("announce", ["whole"]) => {
                faults.set_truncate_announce(None);
                Ok(None)
            }
            ("faults-off", []) => {
                faults.clear();
                Ok(None)
            }
            _ => {
                let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
                self.controller.apply(action, &args)
            }
        }
    }
}

async fn control(
    State(control): State<DemoControl>,
    Json(request): Json<ControlRequest>,
) -> (StatusCode, Json<serde_json::Value>) {
    match control.apply(&request.action, &request.args).await {
        Ok(value) => (StatusCode::OK, Json(serde_json::json!({ "value": value }))),
        Err((status, why)) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            Json(serde_json::json!({ "error": why })),
        ),
    }
}
