//! Which hosts memoria may dial: its own team's siblings, by hostname label, and nothing else (§6.3).
//!
//! Team identity is the hostname label (home ruling 16):
//! `<team>.<app>.oficina.works`. A [`SiblingUrl`] exists only for a URL whose
//! team label is memoria's own, so a client holding one cannot dial across
//! teams. The check is on the URL as written: no percent-decoding, no
//! userinfo, no IP literals, no other suffix. Redirects are never followed
//! ([`super::transport`]), so a sibling cannot send memoria across either.

use std::fmt;

/// The domain every sibling host sits under (§6.3, home ruling 16).
pub const SIBLING_DOMAIN: &str = "oficina.works";
/// The port dialled when an `http://` sibling URL names none.
pub const SIBLING_PORT_DEFAULT: u16 = 80;
/// The port dialled when an `https://` sibling URL names none.
pub const SIBLING_TLS_PORT_DEFAULT: u16 = 443;
/// The longest DNS label, in bytes (RFC 1035).
pub const DNS_LABEL_BYTES_MAX: usize = 63;

/// Why a sibling URL was refused before any connection was opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostRefusal {
    /// Not an absolute `http://host[:port]` or `https://host[:port]` URL
    /// with nothing else in it.
    #[error("not a sibling URL of the form http(s)://<team>.<app>.oficina.works[:port]")]
    Malformed,
    /// The host is not `<team>.<app>.oficina.works`.
    #[error("the host is not under {SIBLING_DOMAIN} as <team>.<app>")]
    NotASiblingHost,
    /// The host's team label is another team's (§6.3).
    #[error("the host belongs to another team")]
    OtherTeam,
}

/// How a sibling URL is dialled: its scheme (§6.1).
///
/// `https://` is TLS over the dialer's stream, verified against Mozilla's
/// roots and the team's private CA ([`super::tls`]); `http://` is plain
/// HTTP. Where plain HTTP may be used is where it always could: the same
/// same-team hosts, over whatever [`super::transport::Dialer`] the instance
/// was given. The simulator's turmoil dialer and the demo's loopback dialer
/// serve `http://` only; a deployment names `https://`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SiblingScheme {
    /// `http://`: plain HTTP/1.1.
    Http,
    /// `https://`: HTTP/1.1 over TLS.
    Https,
}

impl SiblingScheme {
    /// `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            SiblingScheme::Http => "http",
            SiblingScheme::Https => "https",
        }
    }

    /// The port dialled when the URL names none:
    /// [`SIBLING_PORT_DEFAULT`] or [`SIBLING_TLS_PORT_DEFAULT`].
    pub fn default_port(self) -> u16 {
        match self {
            SiblingScheme::Http => SIBLING_PORT_DEFAULT,
            SiblingScheme::Https => SIBLING_TLS_PORT_DEFAULT,
        }
    }
}

/// A sibling's base URL that has passed the same-team check (§6.3).
#[derive(Clone, PartialEq, Eq)]
pub struct SiblingUrl {
    host: String,
    app: String,
    port: u16,
    scheme: SiblingScheme,
}

impl fmt::Debug for SiblingUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SiblingUrl({}://{}:{})",
            self.scheme.as_str(),
            self.host,
            self.port
        )
    }
}

impl SiblingUrl {
    /// Parses `url` and accepts it only if its team label is `team`.
    ///
    /// Accepted: `http://acme.sheets.oficina.works` or
    /// `https://acme.sheets.oficina.works`, with an optional port (default
    /// 80 or 443 by scheme), an optional trailing `/`, any letter case and
    /// one trailing dot on the host. Everything else is refused, including
    /// another scheme, userinfo, paths, queries, fragments, IP literals,
    /// percent-escapes and punycode team labels that are not literally
    /// `team`. The check is the same for both schemes, and it is made here,
    /// before any connection is opened.
    ///
    /// # Errors
    /// A [`HostRefusal`] naming why.
    pub fn parse(url: &str, team: &str) -> Result<SiblingUrl, HostRefusal> {
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (SiblingScheme::Https, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (SiblingScheme::Http, rest)
        } else {
            return Err(HostRefusal::Malformed);
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.is_empty()
            || !authority
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b':')
        {
            return Err(HostRefusal::Malformed);
        }
        let (host, port) = match authority.split_once(':') {
            Some((h, p)) => {
                let port: u16 = p.parse().map_err(|_| HostRefusal::Malformed)?;
                if port == 0 {
                    return Err(HostRefusal::Malformed);
                }
                (h, port)
            }
            None => (authority, scheme.default_port()),
        };
        let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        let labels: Vec<&str> = host.split('.').collect();
        let domain: Vec<&str> = SIBLING_DOMAIN.split('.').collect();
        if labels.len() != 2 + domain.len()
            || labels[2..] != domain[..]
            || labels.iter().any(|l| {
                l.is_empty()
                    || l.len() > DNS_LABEL_BYTES_MAX
                    || l.starts_with('-')
                    || l.ends_with('-')
            })
        {
            return Err(HostRefusal::NotASiblingHost);
        }
        if labels[0] != team.to_ascii_lowercase() {
            return Err(HostRefusal::OtherTeam);
        }
        Ok(SiblingUrl {
            app: labels[1].to_string(),
            host,
            port,
            scheme,
        })
    }

    /// The host to dial, lowercased, e.g. `acme.sheets.oficina.works`.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The app label, e.g. `sheets`.
    pub fn app(&self) -> &str {
        &self.app
    }

    /// The port to dial.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The scheme: whether the host is dialled with TLS (§6.1).
    pub fn scheme(&self) -> SiblingScheme {
        self.scheme
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_same_team_url_is_accepted_with_its_app_and_port() {
        let u = SiblingUrl::parse("http://ACME.Sheets.oficina.works.:8443/", "acme").unwrap();
        assert_eq!(
            (u.host(), u.app(), u.port()),
            ("acme.sheets.oficina.works", "sheets", 8443)
        );
    }

    #[test]
    fn an_https_url_is_accepted_with_443_by_default_and_its_scheme_kept() {
        let rows = [
            (
                "https://acme.sheets.oficina.works",
                SiblingScheme::Https,
                443,
            ),
            (
                "https://acme.sheets.oficina.works:8443/",
                SiblingScheme::Https,
                8443,
            ),
            ("http://acme.sheets.oficina.works", SiblingScheme::Http, 80),
        ];
        for (url, scheme, port) in rows {
            let u = SiblingUrl::parse(url, "acme").unwrap();
            assert_eq!((u.scheme(), u.port()), (scheme, port), "{url}");
        }
    }

    #[test]
    fn an_https_url_of_another_team_is_refused_as_another_team() {
        assert_eq!(
            SiblingUrl::parse("https://beta.sheets.oficina.works", "acme"),
            Err(HostRefusal::OtherTeam)
        );
    }

    #[test]
    fn another_teams_url_is_refused_as_another_team() {
        assert_eq!(
            SiblingUrl::parse("http://beta.sheets.oficina.works", "acme"),
            Err(HostRefusal::OtherTeam)
        );
    }
}
