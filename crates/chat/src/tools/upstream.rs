//! From a registered server (store record + decrypted secrets) to the `UpstreamServer`
//! `mcp-client` connects to — and the one exception to "servers use their own credentials":
//! a call to *our own* knowledge-graph endpoint carries the chatting user's bearer token, so
//! the kg server applies that user's scopes. The decision is made on the destination URL (it
//! must be one of [`OwnEndpoints`]), never on a server's name, so no other upstream can ever
//! receive a user's token. The same identity exempts our own endpoint from the URL policy
//! ([`ServerOrigin::OwnEndpoint`]). The server Switchboard registered as its own (marked, see
//! `switchboard_registry::OWN_ENDPOINT_MARKER`) is the same service on every replica, so its
//! destination is this process's own `/mcp`, never the stored URL (the listener of whichever
//! replica started last, which may be gone).

use std::fmt;
use switchboard_core::SessionScope;
use switchboard_mcp_client::{ServerConfigError, ServerOrigin, UpstreamEndpoint, UpstreamServer};
use switchboard_registry::{ServerRegistry, is_same_endpoint};
use switchboard_store::{ServerRecord, ServerSecrets};
use url::Url;

/// The bearer token the chat request came with. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct UserCredential(String);

impl UserCredential {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for UserCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UserCredential([REDACTED])")
    }
}

/// The URLs at which this process serves its own MCP endpoint (`/mcp`, `/mcp/rpc`); the first
/// is where our own registered server is reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnEndpoints {
    urls: Vec<Url>,
}

impl OwnEndpoints {
    pub fn new(urls: impl IntoIterator<Item = Url>) -> Self {
        Self {
            urls: urls.into_iter().collect(),
        }
    }

    /// `http://<address>/mcp` and `/mcp/rpc` for a listener address.
    pub fn for_listener(address: std::net::SocketAddr) -> Self {
        let base = format!("http://{address}");
        Self::new(
            ["/mcp", "/mcp/rpc"]
                .iter()
                .filter_map(|path| Url::parse(&format!("{base}{path}")).ok()),
        )
    }

    /// True when `url` is one of ours (same scheme, host, port and path; a trailing `/` and
    /// query are ignored).
    pub fn contains(&self, url: &Url) -> bool {
        self.urls.iter().any(|own| is_same_endpoint(own, url))
    }

    /// Where this process reaches `record`: our own registered server (marked) at this
    /// process's own endpoint, any other at its stored URL.
    pub fn connection_url(&self, record: &ServerRecord) -> Option<Url> {
        if ServerRegistry::is_marked_own_endpoint(record)
            && let Some(own) = self.urls.first()
        {
            return Some(own.clone());
        }
        record.url.as_deref().and_then(|text| Url::parse(text).ok())
    }

    /// Whether `record` is reached at one of this process's own endpoint URLs.
    pub fn reaches_own_endpoint(&self, record: &ServerRecord) -> bool {
        self.connection_url(record)
            .is_some_and(|url| self.contains(&url))
    }
}

/// Builds the upstream description `mcp-client` needs (its own mapping of a record, with the
/// server's credentials). For our own endpoint, `credential` (when given) replaces any
/// configured key, and sessions become per user (a session is bound to the token that opened
/// it).
pub fn upstream_for_record(
    record: &ServerRecord,
    secrets: ServerSecrets,
    own_endpoints: &OwnEndpoints,
    credential: Option<&UserCredential>,
) -> Result<UpstreamServer, ServerConfigError> {
    let mut upstream = switchboard_registry::upstream::upstream_for_record(record, secrets)?;
    if ServerRegistry::is_marked_own_endpoint(record)
        && let Some(own) = own_endpoints.connection_url(record)
        && let UpstreamEndpoint::Remote(remote) = &mut upstream.endpoint
    {
        remote.url = own;
    }
    if let UpstreamEndpoint::Remote(remote) = &upstream.endpoint
        && own_endpoints.contains(&remote.url)
    {
        // Exempt from the URL policy by identity (one of this process's own URLs), so a
        // deployment that refuses loopback still reaches its own knowledge graph.
        upstream.origin = ServerOrigin::OwnEndpoint;
    }
    if let Some(credential) = credential
        && let UpstreamEndpoint::Remote(remote) = &mut upstream.endpoint
        && own_endpoints.contains(&remote.url)
    {
        remote
            .headers
            .retain(|name, _| !name.eq_ignore_ascii_case("authorization"));
        remote.api_key = Some(credential.expose().to_owned());
        upstream.session_scope = SessionScope::PerUser;
    }
    Ok(upstream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures::server_record;
    use std::collections::BTreeMap;

    fn record(url: &str) -> ServerRecord {
        server_record("s1", "kg", url, true)
    }

    fn api_key(server: &UpstreamServer) -> Option<String> {
        match &server.endpoint {
            UpstreamEndpoint::Remote(remote) => remote.api_key.clone(),
            UpstreamEndpoint::Stdio(_) => None,
        }
    }

    #[test]
    fn the_users_token_goes_to_our_own_endpoint_only() {
        let own = OwnEndpoints::for_listener("127.0.0.1:8080".parse().unwrap());
        let credential = UserCredential::new("sb_user_token");
        let secrets = ServerSecrets {
            headers: BTreeMap::from([("Authorization".to_owned(), "Bearer configured".to_owned())]),
            api_key: None,
            env: BTreeMap::new(),
            oauth_client_secret: None,
        };
        let ours = upstream_for_record(
            &record("http://127.0.0.1:8080/mcp/"),
            secrets.clone(),
            &own,
            Some(&credential),
        )
        .unwrap();
        assert_eq!(api_key(&ours).as_deref(), Some("sb_user_token"));
        assert_eq!(ours.session_scope, SessionScope::PerUser);
        match &ours.endpoint {
            UpstreamEndpoint::Remote(remote) => assert!(remote.headers.is_empty()),
            UpstreamEndpoint::Stdio(_) => unreachable!(),
        }
        for other in [
            "http://127.0.0.1:8081/mcp",
            "http://127.0.0.1:8080/other",
            "https://127.0.0.1:8080/mcp",
            "http://evil.example/mcp",
        ] {
            let theirs =
                upstream_for_record(&record(other), secrets.clone(), &own, Some(&credential))
                    .unwrap();
            assert_eq!(api_key(&theirs), None, "{other}");
            assert_eq!(theirs.session_scope, SessionScope::Shared);
        }
    }

    #[test]
    fn our_own_registered_server_is_reached_here_whatever_replica_it_names() {
        let own = OwnEndpoints::for_listener("127.0.0.1:8080".parse().unwrap());
        let credential = UserCredential::new("sb_user_token");
        // Registered (and last pointed) by another replica, at its own listener.
        let mut marked = record("http://127.0.0.1:9090/mcp");
        marked.connection.extra.insert(
            switchboard_registry::OWN_ENDPOINT_MARKER.to_owned(),
            serde_json::Value::Bool(true),
        );
        assert!(own.reaches_own_endpoint(&marked));
        let ours = upstream_for_record(&marked, ServerSecrets::default(), &own, Some(&credential))
            .unwrap();
        match &ours.endpoint {
            UpstreamEndpoint::Remote(remote) => {
                assert_eq!(remote.url.as_str(), "http://127.0.0.1:8080/mcp");
            }
            UpstreamEndpoint::Stdio(_) => unreachable!(),
        }
        assert_eq!(api_key(&ours).as_deref(), Some("sb_user_token"));
        assert_eq!(ours.origin, ServerOrigin::OwnEndpoint);
        // The same address unmarked is someone else's server: it gets no token.
        let unmarked = record("http://127.0.0.1:9090/mcp");
        assert!(!own.reaches_own_endpoint(&unmarked));
        let theirs =
            upstream_for_record(&unmarked, ServerSecrets::default(), &own, Some(&credential))
                .unwrap();
        assert_eq!(api_key(&theirs), None);
    }

    #[test]
    fn credentials_never_print() {
        assert_eq!(
            format!("{:?}", UserCredential::new("secret")),
            "UserCredential([REDACTED])"
        );
    }
}
