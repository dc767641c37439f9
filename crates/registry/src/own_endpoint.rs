//! Our own knowledge-graph endpoint, registered as an upstream like any other (marked by the
//! mcp-server crate with `switchboard_own_kg_endpoint` in its connection config, which no API
//! request may set or remove). It is the same service on every replica, so a marked server is
//! reached at **this process's own** `/mcp` whatever its stored URL says: the stored URL is
//! the listener of the replica that started last (each start writes its own, see
//! [`super::own_credential`]), which another replica must not depend on — that replica may be
//! gone. It applies the *caller's* scopes: a caller's token is forwarded to it — only when the
//! server is marked **and** the URL it is reached at is one this process serves (set by the
//! binary), so a re-pointed registration never receives a user's token. For background syncs
//! it has a service token of its own ([`super::own_credential`]), which likewise goes only to
//! our own URLs.

use super::ServerRegistry;
use switchboard_core::SessionScope;
use switchboard_mcp_client::server::{UpstreamEndpoint, UpstreamServer};
use switchboard_store::ServerRecord;
use url::Url;

/// The connection-config key the mcp-server crate sets on its own registration.
pub const OWN_ENDPOINT_MARKER: &str = "switchboard_own_kg_endpoint";

impl ServerRegistry {
    /// The URLs at which this process serves its own MCP endpoint; the first is where a
    /// marked server is reached ([`Self::connection_url`]).
    pub fn set_own_endpoints(&self, urls: Vec<Url>) {
        if let Ok(mut own) = self.inner.own_endpoints.lock() {
            *own = urls;
        }
    }

    /// `http://<address>/mcp` and `/mcp/rpc` for the listener address (loopback when bound to
    /// every interface), as the binary registers its own endpoint.
    pub fn set_own_listener(&self, address: std::net::SocketAddr) {
        let host = if address.ip().is_unspecified() {
            std::net::IpAddr::from([127, 0, 0, 1])
        } else {
            address.ip()
        };
        let base = std::net::SocketAddr::new(host, address.port());
        let urls = ["/mcp", "/mcp/rpc"]
            .iter()
            .filter_map(|path| Url::parse(&format!("http://{base}{path}")).ok())
            .collect();
        self.set_own_endpoints(urls);
    }

    /// Marked as our own endpoint (whether or not its URL still is).
    pub fn is_marked_own_endpoint(record: &ServerRecord) -> bool {
        record
            .connection
            .extra
            .get(OWN_ENDPOINT_MARKER)
            .and_then(|value| value.as_bool())
            == Some(true)
    }

    /// Where this process reaches `record`: a marked server at this process's own endpoint
    /// (once the binary said where that is), any other at its stored URL.
    pub fn connection_url(&self, record: &ServerRecord) -> Option<Url> {
        if Self::is_marked_own_endpoint(record)
            && let Some(own) = self.own_endpoint_url()
        {
            return Some(own);
        }
        record.url.as_deref().and_then(|text| Url::parse(text).ok())
    }

    /// The first of this process's own endpoint URLs (`/mcp`), when known.
    fn own_endpoint_url(&self) -> Option<Url> {
        self.inner
            .own_endpoints
            .lock()
            .ok()
            .and_then(|own| own.first().cloned())
    }

    pub(super) fn points_at_own_endpoint(&self, record: &ServerRecord) -> bool {
        self.connection_url(record)
            .is_some_and(|url| self.is_own_endpoint_url(&url))
    }

    /// Whether `url` is one at which this process serves its own MCP endpoint (such a
    /// server is exempt from the URL policy: it is recognised by identity, not address).
    pub fn is_own_endpoint_url(&self, url: &Url) -> bool {
        let own = self
            .inner
            .own_endpoints
            .lock()
            .map(|own| own.clone())
            .unwrap_or_default();
        own.iter().any(|candidate| is_same_endpoint(candidate, url))
    }

    /// The upstream to list `record`'s capabilities with: for our own endpoint its service
    /// token when it has one (so the cache does not depend on who asked), else as
    /// [`Self::upstream_as`].
    pub(super) async fn listing_upstream(
        &self,
        record: &ServerRecord,
        credential: Option<&str>,
        user: Option<&switchboard_core::UserId>,
    ) -> Result<UpstreamServer, super::RegistryError> {
        if Self::is_marked_own_endpoint(record)
            && self.points_at_own_endpoint(record)
            && record.secrets.has_api_key
        {
            return self.stored_upstream(record).await;
        }
        self.upstream_as(record, credential, user).await
    }

    /// The upstream for `record`, carrying `credential` when (and only when) the record is our
    /// own endpoint at one of our own URLs; such sessions are per user. A server with user
    /// fields gets `user`'s own values (and per-user sessions), or fails with
    /// [`super::RegistryError::NeedsUserCredentials`]; a server using OAuth carries the token of
    /// `user`'s connection (per-user, with per-user sessions) or of the shared one, or fails
    /// with [`super::RegistryError::NeedsAuth`].
    pub async fn upstream_as(
        &self,
        record: &ServerRecord,
        credential: Option<&str>,
        user: Option<&switchboard_core::UserId>,
    ) -> Result<UpstreamServer, super::RegistryError> {
        let upstream = self.upstream(record).await?;
        let upstream = self.with_user_fields(record, upstream, user).await?;
        let mut upstream = self.with_oauth_token(record, upstream, user).await?;
        if let Some(credential) = credential
            && Self::is_marked_own_endpoint(record)
            && self.points_at_own_endpoint(record)
            && let UpstreamEndpoint::Remote(remote) = &mut upstream.endpoint
        {
            remote
                .headers
                .retain(|name, _| !name.eq_ignore_ascii_case("authorization"));
            remote.api_key = Some(credential.to_owned());
            upstream.session_scope = SessionScope::PerUser;
        }
        Ok(upstream)
    }
}

/// Whether two URLs name the same endpoint: same scheme, host (any case), port and path (a
/// trailing `/`, the query and the fragment aside).
pub fn is_same_endpoint(left: &Url, right: &Url) -> bool {
    left.scheme() == right.scheme()
        && left.host_str().map(str::to_ascii_lowercase)
            == right.host_str().map(str::to_ascii_lowercase)
        && left.port_or_known_default() == right.port_or_known_default()
        && left.path().trim_end_matches('/') == right.path().trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_match_on_scheme_host_port_and_path() {
        let own = Url::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert!(is_same_endpoint(
            &own,
            &Url::parse("http://127.0.0.1:8080/mcp/").unwrap()
        ));
        for other in [
            "http://127.0.0.1:8081/mcp",
            "https://127.0.0.1:8080/mcp",
            "http://127.0.0.1:8080/other",
            "http://evil.example/mcp",
        ] {
            assert!(
                !is_same_endpoint(&own, &Url::parse(other).unwrap()),
                "{other}"
            );
        }
    }
}
