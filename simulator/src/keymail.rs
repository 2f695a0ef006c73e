//! A stand-in for the suite's sign-in classifier (rastrillo's, §3.2), and the mail domains it reaches: the dials gate 33 holds memoria never makes for an address that is not an owner's.
//!
//! rastrillo's classifier resolves a submitted address's domain when a
//! sign-in begins and fetches from the host it names. [`KeymailClassifier`]
//! does the same inside a world: for an address at `domain` it dials
//! `domain` and fetches [`KEYMAIL_PATH`] from it at [`KEYMAIL_PORT`],
//! through a [`GuardedDialer`](crate::GuardedDialer) on the world's
//! [`NetGuard`](crate::NetGuard), so the guard records the lookup and the
//! connection as memoria's. A [`MailDomain`] is that domain's host: it
//! answers the fetch and counts what it received, a second witness beside
//! the guard. Nothing here logs an address.
//!
//! ```
//! use memoria_simulator::MailDomain;
//! assert_eq!(MailDomain::default().fetches(), 0);
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use memoria::{Dialer, Owner, SignInClassifier};

/// The port a mail domain's keymail host answers on in a world.
pub const KEYMAIL_PORT: u16 = 80;
/// What the classifier fetches from a domain: its keymail statement.
pub const KEYMAIL_PATH: &str = "/.well-known/keymail";

/// The suite's sign-in classifier as a world runs it: resolves and fetches
/// the address's domain (§3.2), through the dialer it is given.
#[derive(Clone)]
pub struct KeymailClassifier {
    dialer: Arc<dyn Dialer>,
}

impl std::fmt::Debug for KeymailClassifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeymailClassifier").finish_non_exhaustive()
    }
}

impl KeymailClassifier {
    /// A classifier dialing through `dialer` (in a world, memoria's, behind the guard).
    pub fn new(dialer: Arc<dyn Dialer>) -> KeymailClassifier {
        KeymailClassifier { dialer }
    }
}

impl SignInClassifier for KeymailClassifier {
    fn classify<'a>(&'a self, owner: &'a Owner) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some((_, domain)) = owner.address().rsplit_once('@') else {
                return;
            };
            let Ok(request) = http::Request::get(KEYMAIL_PATH)
                .header(http::header::HOST, domain)
                .body(Full::new(Bytes::new()))
            else {
                return;
            };
            let outcome =
                memoria::exchange(self.dialer.as_ref(), domain, KEYMAIL_PORT, request).await;
            tracing::debug!(fetched = outcome.is_ok(), "keymail classified");
        })
    }
}

/// A mail domain's host in a world: answers every request with a keymail
/// statement and counts them. Cloning shares the count.
#[derive(Debug, Clone, Default)]
pub struct MailDomain {
    fetches: Arc<AtomicUsize>,
}

impl MailDomain {
    /// Every request this domain's host has received.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// The host's router: any request counts and is answered.
    pub fn router(&self) -> Router {
        let fetches = self.fetches.clone();
        Router::new().fallback(move || {
            fetches.fetch_add(1, Ordering::SeqCst);
            async { "v=keymail1; host=self" }
        })
    }
}
