//! The home's client: suite call 8, the roster pull, with memoria's consumer token and no asker (§4.3, §6.5).
//!
//! The home's host passes the same team-label check as a sibling's
//! (`<team>.home.oficina.works`, §6.3, [`crate::net::host`]); memoria
//! dials it through the same [`Dialer`] (with TLS for an `https://` home,
//! trusting what the siblings do, §6.1), never follows a redirect, and
//! bounds each pull by [`ROSTER_DEADLINE_MS`]. The answer is decoded by
//! [`decode_roster`], totally. The wire format is
//! `fixtures/contract/README.md`'s "Suite call 8", this project's choice.
//! Nothing here logs a member's address or the token.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;

use crate::access::roster::{
    PulledRoster, ROSTER_BODY_BYTES_MAX, ROSTER_DEADLINE_MS, RosterFault, decode_roster,
};
use crate::error::{Error, ErrorKind};
use crate::net::host::SiblingUrl;
use crate::net::tls::{TlsTrust, dialer_for};
use crate::net::token::SiblingToken;
use crate::net::transport::{Dialer, TransportError, exchange_within};

/// The environment variable naming the home's base URL (suite shape, §4.3).
pub const HOME_ENV: &str = "MEMORIA_HOME";
/// The environment variable holding memoria's consumer token at the home.
pub const HOME_TOKEN_ENV: &str = "MEMORIA_HOME_TOKEN";
/// The environment variable naming a file that holds that token.
pub const HOME_TOKEN_FILE_ENV: &str = "MEMORIA_HOME_TOKEN_FILE";
/// The app label of the home's host: `<team>.home.oficina.works`.
pub const HOME_APP_LABEL: &str = "home";
/// The roster's path at the home (suite call 8, this project's contract).
pub const ROSTER_PATH: &str = "/roster";

/// memoria's client of its team's home: the roster pull (suite call 8).
#[derive(Clone)]
pub struct HomeClient {
    team: String,
    url: SiblingUrl,
    token: SiblingToken,
    dialer: Arc<dyn Dialer>,
    trust: TlsTrust,
}

impl std::fmt::Debug for HomeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HomeClient")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl HomeClient {
    /// A client of the home at `url` for team `team`, with memoria's
    /// consumer `token`, dialling through `dialer`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] if `url` is not `http(s)://<team>.home.oficina.works[:port]`
    /// for this team (the [`crate::HostRefusal`] is its source), or the
    /// token is empty or not a header value.
    pub fn new(
        team: &str,
        url: &str,
        token: &str,
        dialer: Arc<dyn Dialer>,
    ) -> Result<HomeClient, Error> {
        HomeClient::with_token(team, url, SiblingToken::Fixed(token.to_owned()), dialer)
    }

    /// As [`HomeClient::new`], with the token from `token`: a token file
    /// (`MEMORIA_HOME_TOKEN_FILE`) is read again on every pull, as a
    /// sibling's is (§6.2), so a rotated token is sent without a restart.
    ///
    /// # Errors
    /// As [`HomeClient::new`]; the token must be usable now.
    pub fn with_token(
        team: &str,
        url: &str,
        token: SiblingToken,
        dialer: Arc<dyn Dialer>,
    ) -> Result<HomeClient, Error> {
        let parsed = SiblingUrl::parse(url, team).map_err(|r| {
            Error::with_source(ErrorKind::Config, format!("{HOME_ENV} is refused"), r)
        })?;
        if parsed.app() != HOME_APP_LABEL {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{HOME_ENV} must name <team>.{HOME_APP_LABEL}.oficina.works"),
            ));
        }
        if token.current().is_err() {
            return Err(Error::new(
                ErrorKind::Config,
                format!("{HOME_TOKEN_ENV} is empty or not a header value"),
            ));
        }
        Ok(HomeClient {
            team: team.to_ascii_lowercase(),
            url: parsed,
            token,
            dialer,
            trust: TlsTrust::public(),
        })
    }

    /// The same client, an `https://` home verified against `trust`
    /// (Mozilla's roots plus the team's private CA, as the siblings', §6.1).
    #[must_use]
    pub fn with_trust(mut self, trust: TlsTrust) -> HomeClient {
        self.trust = trust;
        self
    }

    /// The team label the home's roster must be for.
    pub fn team(&self) -> &str {
        &self.team
    }

    /// The home's host, e.g. `acme.home.oficina.works`.
    pub fn host(&self) -> &str {
        self.url.host()
    }

    /// Pulls the roster once (suite call 8): `GET /roster` with the
    /// consumer token, within [`ROSTER_DEADLINE_MS`], decoded whole.
    ///
    /// # Errors
    /// The [`RosterFault`]: unreachable, past the deadline, a status other
    /// than 200, over the cap, or a body that is not this team's roster.
    pub async fn pull(&self) -> Result<PulledRoster, RosterFault> {
        // Read now, for this pull: a token file replaced since is the
        // token this pull carries.
        let token = self.token.current().map_err(RosterFault::NoToken)?;
        let request = http::Request::builder()
            .method("GET")
            .uri(ROSTER_PATH)
            .header(http::header::HOST, self.url.host())
            .header(http::header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Full::new(Bytes::new()))
            .map_err(|_| RosterFault::Unreachable)?;
        let answer = tokio::time::timeout(
            Duration::from_millis(ROSTER_DEADLINE_MS),
            exchange_within(
                dialer_for(self.url.scheme(), &self.dialer, &self.trust).as_ref(),
                self.url.host(),
                self.url.port(),
                request,
                ROSTER_BODY_BYTES_MAX,
            ),
        )
        .await;
        match answer {
            Err(_) => Err(RosterFault::Deadline),
            Ok(Err(TransportError::TooLarge)) => Err(RosterFault::TooLarge),
            Ok(Err(_)) => Err(RosterFault::Unreachable),
            Ok(Ok(r)) => decode_roster(r.status, &r.body, &self.team),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_token_file_is_the_token_source_and_is_read_again_after_a_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home-token");
        std::fs::write(&path, "old-token\n").unwrap();
        let client = HomeClient::with_token(
            "acme",
            "http://acme.home.oficina.works",
            SiblingToken::File(path.clone()),
            Arc::new(crate::net::transport::TcpDialer),
        )
        .unwrap();
        assert_eq!(client.token.current().unwrap(), "old-token");
        let next = dir.path().join("home-token.next");
        std::fs::write(&next, "new-token\n").unwrap();
        std::fs::rename(&next, &path).unwrap();
        assert_eq!(client.token.current().unwrap(), "new-token");
        std::fs::remove_file(&path).unwrap();
        assert!(
            client.token.current().is_err(),
            "a token file gone is no token: fail closed"
        );
    }

    #[test]
    fn a_home_token_file_that_cannot_be_used_at_start_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let refused = HomeClient::with_token(
            "acme",
            "http://acme.home.oficina.works",
            SiblingToken::File(dir.path().join("missing")),
            Arc::new(crate::net::transport::TcpDialer),
        );
        assert!(refused.is_err());
    }
}
