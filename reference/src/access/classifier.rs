//! The sign-in classifier: what the suite's sign-in does with a submitted address before it sends a link, run only for an address admission let in (§3.2, gate 33).
//!
//! rastrillo's classifier resolves and fetches the submitted address's
//! domain when a sign-in begins (its `_keymail` TXT record's `host=`, taken
//! verbatim and fetched by a client that follows redirects, §3.2): a dial
//! whose destination the submitter chooses. memoria's half of the fix is the
//! order: `POST /auth/begin` asks [`crate::Admission::admit`] first, and
//! hands the classifier the admitted owner's address only, so an address
//! that is not an owner's causes no DNS query and no fetch. What the
//! classifier does with an owner's address is upstream's to harden (§13).
//!
//! Slice 0 sends its links to `memoria serve`'s terminal and classifies
//! nothing: [`NoClassifier`], which touches no network. A classifier that
//! does dial is plugged in with `AppState::with_sign_in_classifier`; the
//! simulator's stand-in for rastrillo's dials through memoria's one
//! `Dialer`, so the network guard hears it (gate 33).

use futures::future::BoxFuture;

use crate::access::admission::Owner;

/// What the suite's sign-in does with an admitted owner's address before
/// the link is sent (§3.2). memoria never calls it for an address that is
/// not an owner's now.
pub trait SignInClassifier: Send + Sync {
    /// Classifies `owner`'s address: whatever the suite's sign-in reads
    /// about it (rastrillo's: its domain's keymail host). Its outcome does
    /// not decide admission; a failure is the classifier's to report.
    fn classify<'a>(&'a self, owner: &'a Owner) -> BoxFuture<'a, ()>;
}

/// Slice 0's classifier: classifies nothing and touches no network (links
/// go to the terminal, [`crate::TerminalDelivery`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoClassifier;

impl SignInClassifier for NoClassifier {
    fn classify<'a>(&'a self, _owner: &'a Owner) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
