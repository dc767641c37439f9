//! The `[server]` configuration section: where the HTTP listener binds and the limits and
//! timeouts every connection gets. Loaded by the binary; read by [`crate::run`] and [`crate::app`].

use serde::Deserialize;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;
use switchboard_core::InvalidSetting;

/// `[server]` in the configuration file. Every field has a documented default.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on. Loopback by default: exposing Switchboard beyond the machine is a
    /// deliberate choice (`0.0.0.0:8080`). Env: `SWITCHBOARD_BIND`.
    pub bind: SocketAddr,
    /// Largest request body accepted, in bytes; larger bodies get 413. Default 2 MiB.
    pub max_request_body_bytes: usize,
    /// A client must send a complete request head within this many seconds, and an idle
    /// keep-alive connection is closed after it (hyper restarts the same timer while it waits for
    /// the next request). Default 10.
    pub header_read_timeout_secs: u64,
    /// On SIGINT/SIGTERM, in-flight requests get this long to finish before the process exits
    /// anyway. Default 30.
    pub shutdown_grace_secs: u64,
    /// A request body must arrive whole within this many seconds of its first read; a client
    /// trickling it slower gets 408 `request_timeout`. Default 30.
    pub body_read_timeout_secs: u64,
    /// Open connections at most, from everyone; a connection beyond is closed at once, before
    /// anything is read. Keep it under the process's file-descriptor limit. Default 8192.
    pub max_connections: usize,
    /// Open connections at most from one peer IP address; beyond, closed at once. Default 1024.
    pub max_connections_per_peer: usize,
    /// When set, `GET /metrics` needs `Authorization: Bearer <this>` (401 otherwise). Unset by
    /// default: the embedded single-user setup scrapes it from loopback. A shared deployment
    /// should set it (series carry the workspaces' server names).
    pub metrics_token: Option<MetricsToken>,
    /// Whether `/readyz` also needs the MCP servers: with `true` it answers 503 when every
    /// active MCP server is in ERROR (the old behaviour). Default `false`: readiness is
    /// Switchboard's own (store answers, not draining), and the MCP servers' state is reported
    /// in the body and decides `GET /api/health`.
    pub readiness_requires_mcp: bool,
    /// Where people and authorization servers reach this Switchboard, as an absolute
    /// `http(s)` URL without query or fragment: the OAuth redirect URI
    /// (`{public_url}/oauth/callback`) and the Client ID Metadata Document
    /// (`{public_url}/oauth/client-metadata.json`) are built from it. Set it to the address
    /// behind your reverse proxy. Default `http://127.0.0.1:8080`. Env `SWITCHBOARD_PUBLIC_URL`,
    /// flag `--public-url`.
    pub public_url: PublicUrl,
    /// Where the MCP Apps sandbox listener binds: a second listener, so an app never shares
    /// the UI's origin, cookies, storage or token. Unset (the default): the address of `bind`
    /// on the next port (`8081` beside `8080`; any free port when `bind`'s is `0`).
    pub apps_bind: Option<SocketAddr>,
    /// The origin browsers load MCP Apps from (`http(s)://host[:port]`, no path), which must
    /// differ from `public_url`'s. Set it behind a reverse proxy or when binding beyond
    /// loopback. Unset (the default): `http://` and the address the apps listener bound.
    pub apps_origin: Option<crate::apps::AppsOrigin>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)),
            max_request_body_bytes: 2 * 1024 * 1024,
            header_read_timeout_secs: 10,
            shutdown_grace_secs: 30,
            body_read_timeout_secs: 30,
            max_connections: 8192,
            max_connections_per_peer: 1024,
            metrics_token: None,
            readiness_requires_mcp: false,
            public_url: PublicUrl::default(),
            apps_bind: None,
            apps_origin: None,
        }
    }
}

impl ServerConfig {
    pub fn validate(&self) -> Result<(), InvalidSetting> {
        InvalidSetting::require_positive(
            "max_request_body_bytes",
            self.max_request_body_bytes as u64,
        )?;
        InvalidSetting::require_positive(
            "header_read_timeout_secs",
            self.header_read_timeout_secs,
        )?;
        InvalidSetting::require_positive("shutdown_grace_secs", self.shutdown_grace_secs)?;
        InvalidSetting::require_positive("body_read_timeout_secs", self.body_read_timeout_secs)?;
        InvalidSetting::require_positive("max_connections", self.max_connections as u64)?;
        InvalidSetting::require_positive(
            "max_connections_per_peer",
            self.max_connections_per_peer as u64,
        )?;
        if self
            .metrics_token
            .as_ref()
            .is_some_and(|token| token.0.trim().is_empty())
        {
            return Err(InvalidSetting::new(
                "metrics_token",
                "must not be empty (leave it unset for an open /metrics)",
            ));
        }
        self.public_url.validate()?;
        if let Some(apps_origin) = &self.apps_origin {
            apps_origin.validate_against(&self.public_url)?;
        }
        Ok(())
    }

    /// Where the apps listener binds ([`ServerConfig::apps_bind`], or `bind`'s next port).
    pub fn apps_bind(&self) -> SocketAddr {
        self.apps_bind.unwrap_or_else(|| {
            let port = match self.bind.port() {
                0 => 0,
                port => port.saturating_add(1),
            };
            SocketAddr::new(self.bind.ip(), port)
        })
    }

    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs(self.header_read_timeout_secs)
    }

    pub fn body_read_timeout(&self) -> Duration {
        Duration::from_secs(self.body_read_timeout_secs)
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}

/// `server.public_url`: this Switchboard's address as others see it. Parsed when the
/// configuration is read; [`PublicUrl::validate`] refuses anything but an absolute `http(s)`
/// URL with a host and no query, fragment or credentials.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct PublicUrl(url::Url);

impl TryFrom<String> for PublicUrl {
    type Error = String;

    fn try_from(url: String) -> Result<Self, Self::Error> {
        Self::parse(&url).map_err(|invalid| invalid.reason)
    }
}

impl Default for PublicUrl {
    fn default() -> Self {
        Self(url::Url::parse("http://127.0.0.1:8080/").expect("a valid literal URL"))
    }
}

impl PublicUrl {
    /// `url` as a public URL, or why it cannot be one.
    pub fn parse(url: &str) -> Result<Self, InvalidSetting> {
        let parsed = url::Url::parse(url)
            .map_err(|error| InvalidSetting::new("public_url", format!("not a URL: {error}")))?;
        let public_url = Self(parsed);
        public_url.validate()?;
        Ok(public_url)
    }

    pub fn validate(&self) -> Result<(), InvalidSetting> {
        let url = &self.0;
        let reason = if !matches!(url.scheme(), "http" | "https") {
            Some("must be an http:// or https:// URL")
        } else if url.host_str().is_none_or(str::is_empty) {
            Some("must name a host")
        } else if url.query().is_some() || url.fragment().is_some() {
            Some("must not have a query or a fragment")
        } else if !url.username().is_empty() || url.password().is_some() {
            Some("must not carry credentials")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(InvalidSetting::new("public_url", reason)),
            None => Ok(()),
        }
    }

    /// The address of `path` (starting with `/`) under this URL, whose own path is kept as a
    /// prefix: `https://example.com/switchboard` + `/oauth/callback` →
    /// `https://example.com/switchboard/oauth/callback`.
    pub fn join(&self, path: &str) -> String {
        let base = self.0.as_str().trim_end_matches('/');
        format!("{base}{path}")
    }

    pub fn as_url(&self) -> &url::Url {
        &self.0
    }
}

/// The bearer token `/metrics` asks for; redacted in `Debug` so it never reaches a log.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct MetricsToken(String);

impl MetricsToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    /// Whether `presented` (the bearer token of a request) is this one, in constant time.
    pub fn matches(&self, presented: &str) -> bool {
        let expected = self.0.as_bytes();
        let presented = presented.as_bytes();
        expected.len() == presented.len()
            && expected
                .iter()
                .zip(presented)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

impl std::fmt::Debug for MetricsToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(switchboard_core::redact::REDACTED)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_loopback() {
        let config = ServerConfig::default();
        config.validate().unwrap();
        assert!(config.bind.ip().is_loopback());
        assert_eq!(config.bind.port(), 8080);
    }

    #[test]
    fn public_url_keeps_its_path_as_a_prefix_and_refuses_what_cannot_be_one() {
        assert_eq!(
            PublicUrl::default().join("/oauth/callback"),
            "http://127.0.0.1:8080/oauth/callback"
        );
        let proxied = PublicUrl::parse("https://chat.example.com/switchboard/").unwrap();
        assert_eq!(
            proxied.join("/oauth/client-metadata.json"),
            "https://chat.example.com/switchboard/oauth/client-metadata.json"
        );
        for bad in [
            "ftp://example.com",
            "https://example.com/?a=1",
            "https://example.com/#top",
            "https://user:pw@example.com",
            "file:///etc/passwd",
        ] {
            let error = PublicUrl::parse(bad).unwrap_err();
            assert_eq!(error.key, "public_url", "{bad}");
        }
        assert!(PublicUrl::parse("example.com").is_err());
    }

    #[test]
    fn zero_timeout_is_rejected_by_name() {
        let config = ServerConfig {
            header_read_timeout_secs: 0,
            ..ServerConfig::default()
        };
        let error = config.validate().unwrap_err();
        assert_eq!(error.key, "header_read_timeout_secs");
    }
}
