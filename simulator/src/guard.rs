//! The network guard: every name lookup and every connection memoria makes in a run, recorded by host name and port (§3.2, §8.1, gate 15).
//!
//! memoria has one way to the network, a [`Dialer`] (production: `TcpDialer`,
//! whose `connect((host, port))` is where the operating system's resolver
//! runs; gate 15 reads the reference's code to hold that it has no other).
//! In a run [`World::run`](crate::World::run) hands memoria's sibling client
//! a [`GuardedDialer`], so everything memoria sends out of its host passes
//! here first: a dial by name is a DNS query for that name
//! ([`NetEvent::Lookup`]) followed by a connection attempt
//! ([`NetEvent::Connect`]) with its outcome. The browser's requests to
//! memoria and the fakes' own listening are not memoria's egress and do not
//! pass through it.
//!
//! ```
//! use memoria_simulator::{NetEvent, NetGuard};
//! let guard = NetGuard::default();
//! assert!(guard.events().is_empty() && guard.hosts().is_empty());
//! ```

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use memoria::{DialFuture, Dialer};

/// How one connection attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DialOutcome {
    /// A stream was opened.
    Connected,
    /// The name resolved to no host in the world: the query went out and
    /// came back empty.
    Unresolved,
    /// A host answered the connection with a refusal.
    Refused,
    /// Any other I/O error.
    Failed,
}

/// One thing memoria asked of the network.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum NetEvent {
    /// A DNS query for `host` (never recorded for an IP literal).
    Lookup {
        /// The name looked up.
        host: String,
    },
    /// A TCP connection attempt to `host:port`.
    Connect {
        /// The name (or literal) dialled.
        host: String,
        /// The port.
        port: u16,
        /// How the attempt ended.
        outcome: DialOutcome,
    },
}

impl NetEvent {
    /// The host the event names.
    pub fn host(&self) -> &str {
        match self {
            NetEvent::Lookup { host } | NetEvent::Connect { host, .. } => host,
        }
    }
}

/// The record a [`GuardedDialer`] writes: shared, in order, content-free
/// (host names and ports only).
#[derive(Debug, Clone, Default)]
pub struct NetGuard {
    events: Arc<Mutex<Vec<NetEvent>>>,
}

impl NetGuard {
    fn push(&self, event: NetEvent) {
        // A poisoned lock still holds every event pushed before the panic.
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(event);
    }

    /// Every event so far, in the order memoria made them.
    pub fn events(&self) -> Vec<NetEvent> {
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Every host memoria looked up or dialled, sorted, each once.
    pub fn hosts(&self) -> BTreeSet<String> {
        self.events().iter().map(|e| e.host().to_string()).collect()
    }

    /// Every (host, port) memoria opened a stream to, sorted, each once.
    pub fn connected(&self) -> BTreeSet<(String, u16)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                NetEvent::Connect {
                    host,
                    port,
                    outcome: DialOutcome::Connected,
                } => Some((host, port)),
                _ => None,
            })
            .collect()
    }

    /// Every name memoria looked up, sorted, each once.
    pub fn looked_up(&self) -> BTreeSet<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                NetEvent::Lookup { host } => Some(host),
                NetEvent::Connect { .. } => None,
            })
            .collect()
    }
}

/// A [`Dialer`] that records every lookup and connection in a [`NetGuard`]
/// before and after handing the dial to `inner`.
#[derive(Debug, Clone)]
pub struct GuardedDialer<D> {
    inner: D,
    guard: NetGuard,
}

impl<D> GuardedDialer<D> {
    /// Wraps `inner`, recording into `guard`.
    pub fn new(inner: D, guard: NetGuard) -> GuardedDialer<D> {
        GuardedDialer { inner, guard }
    }
}

impl<D: Dialer> Dialer for GuardedDialer<D> {
    fn dial<'a>(&'a self, host: &'a str, port: u16) -> DialFuture<'a> {
        Box::pin(async move {
            if host.parse::<std::net::IpAddr>().is_err() {
                self.guard.push(NetEvent::Lookup { host: host.into() });
            }
            let result = self.inner.dial(host, port).await;
            let outcome = match &result {
                Ok(_) => DialOutcome::Connected,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => DialOutcome::Unresolved,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => DialOutcome::Refused,
                Err(_) => DialOutcome::Failed,
            };
            self.guard.push(NetEvent::Connect {
                host: host.into(),
                port,
                outcome,
            });
            result
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Refuses every name but `up`, which it "connects" over a duplex pipe.
    struct OneHost;
    impl Dialer for OneHost {
        fn dial<'a>(&'a self, host: &'a str, _port: u16) -> DialFuture<'a> {
            Box::pin(async move {
                match host {
                    "up.test" => {
                        let (a, _b) = tokio::io::duplex(8);
                        Ok(Box::new(a) as Box<dyn memoria::Connection>)
                    }
                    "refuses.test" => Err(std::io::ErrorKind::ConnectionRefused.into()),
                    _ => Err(std::io::ErrorKind::NotFound.into()),
                }
            })
        }
    }

    #[test]
    fn the_guard_records_a_lookup_and_a_connect_for_every_dial_whatever_its_outcome() {
        let guard = NetGuard::default();
        let dialer = GuardedDialer::new(OneHost, guard.clone());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(async {
            assert!(dialer.dial("up.test", 80).await.is_ok());
            assert!(dialer.dial("api.provider.test", 443).await.is_err());
            assert!(dialer.dial("refuses.test", 443).await.is_err());
            assert!(dialer.dial("10.0.0.1", 80).await.is_err());
        });
        let outcomes: Vec<_> = guard
            .events()
            .into_iter()
            .filter_map(|e| match e {
                NetEvent::Connect { host, outcome, .. } => Some((host, outcome)),
                NetEvent::Lookup { .. } => None,
            })
            .collect();
        assert_eq!(
            outcomes,
            [
                ("up.test".to_string(), DialOutcome::Connected),
                ("api.provider.test".to_string(), DialOutcome::Unresolved),
                ("refuses.test".to_string(), DialOutcome::Refused),
                ("10.0.0.1".to_string(), DialOutcome::Unresolved),
            ]
        );
        let names: Vec<&str> = ["api.provider.test", "refuses.test", "up.test"].to_vec();
        assert_eq!(
            guard
                .looked_up()
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            names,
            "an IP literal is no lookup"
        );
        assert_eq!(guard.connected(), [("up.test".to_string(), 80)].into());
    }
}
