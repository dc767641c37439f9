//! DNS-rebinding protection for `/mcp`: the `Host` header must name an allowed host and a
//! present `Origin` header must be an allowed origin; otherwise the request is refused with 403
//! before anything else (authentication included) looks at it.
//!
//! Lists are parsed once at start-up so a request costs a few string comparisons.

use axum::http::HeaderMap;
use axum::http::header::{HOST, ORIGIN};

/// An `allowed_hosts` or `allowed_origins` entry that cannot be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OriginPolicyError {
    #[error("'{entry}' is not a host name, IP address or host:port")]
    MalformedHost { entry: String },
    #[error("'{entry}' has no host")]
    MissingHost { entry: String },
    #[error("'{entry}' is not an origin such as https://app.example.com or http://localhost:*")]
    MalformedOrigin { entry: String },
}

impl OriginPolicyError {
    /// The `[kg]` setting the bad entry belongs to.
    pub fn setting_key(&self) -> &'static str {
        match self {
            Self::MalformedHost { .. } | Self::MissingHost { .. } => "allowed_hosts",
            Self::MalformedOrigin { .. } => "allowed_origins",
        }
    }
}

/// One `allowed_hosts` entry: a host name or IP, optionally with a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedHost {
    host: String,
    port: Option<u16>,
}

impl AllowedHost {
    pub fn parse(entry: &str) -> Result<Self, OriginPolicyError> {
        let (host, port) =
            split_host_port(entry.trim()).ok_or_else(|| OriginPolicyError::MalformedHost {
                entry: entry.to_owned(),
            })?;
        if host.is_empty() {
            return Err(OriginPolicyError::MissingHost {
                entry: entry.to_owned(),
            });
        }
        Ok(Self {
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(host)
            && self.port.is_none_or(|allowed| Some(allowed) == port)
    }
}

/// The port part of an allowed origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginPort {
    /// `:*`
    Any,
    /// An explicit port, or the scheme's default when none was written.
    Exact(u16),
}

/// One `allowed_origins` entry: `scheme://host`, `scheme://host:port`, `scheme://host:*`, or
/// `null`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowedOrigin {
    Null,
    Tuple {
        scheme: String,
        host: String,
        port: OriginPort,
    },
}

impl AllowedOrigin {
    pub fn parse(entry: &str) -> Result<Self, OriginPolicyError> {
        let entry = entry.trim();
        if entry.eq_ignore_ascii_case("null") {
            return Ok(AllowedOrigin::Null);
        }
        let malformed = || OriginPolicyError::MalformedOrigin {
            entry: entry.to_owned(),
        };
        let (scheme, rest) = entry.split_once("://").ok_or_else(malformed)?;
        let (authority, any_port) = match rest.strip_suffix(":*") {
            Some(authority) => (authority, true),
            None => (rest, false),
        };
        let (host, port) = split_host_port(authority).ok_or_else(malformed)?;
        if scheme.is_empty() || host.is_empty() || (any_port && port.is_some()) {
            return Err(malformed());
        }
        let scheme = scheme.to_ascii_lowercase();
        let port = if any_port {
            OriginPort::Any
        } else {
            OriginPort::Exact(
                port.or_else(|| default_port(&scheme))
                    .ok_or_else(malformed)?,
            )
        };
        Ok(AllowedOrigin::Tuple {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    fn matches(&self, origin: &str) -> bool {
        if origin.eq_ignore_ascii_case("null") {
            return matches!(self, AllowedOrigin::Null);
        }
        let AllowedOrigin::Tuple { scheme, host, port } = self else {
            return false;
        };
        let Some((origin_scheme, authority)) = origin.split_once("://") else {
            return false;
        };
        let Some((origin_host, origin_port)) = split_host_port(authority.trim_end_matches('/'))
        else {
            return false;
        };
        let origin_port = origin_port.or_else(|| default_port(&origin_scheme.to_ascii_lowercase()));
        scheme.eq_ignore_ascii_case(origin_scheme)
            && host.eq_ignore_ascii_case(origin_host)
            && match port {
                OriginPort::Any => true,
                OriginPort::Exact(allowed) => origin_port == Some(*allowed),
            }
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    }
}

/// Splits `host[:port]`, `[v6]`, `[v6]:port` or a bare IPv6 address. Brackets are removed.
fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after {
            "" => Some((host, None)),
            port => Some((host, Some(port.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match authority.matches(':').count() {
        0 => Some((authority, None)),
        1 => {
            let (host, port) = authority.split_once(':')?;
            Some((host, Some(port.parse().ok()?)))
        }
        _ => Some((authority, None)),
    }
}

/// Why a request was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OriginRejection {
    MissingHost,
    HostNotAllowed,
    OriginNotAllowed,
}

impl OriginRejection {
    pub fn message(self) -> &'static str {
        match self {
            OriginRejection::MissingHost => "the request has no Host header",
            OriginRejection::HostNotAllowed => {
                "the Host header is not an allowed host of this MCP endpoint"
            }
            OriginRejection::OriginNotAllowed => {
                "the Origin header is not an allowed origin of this MCP endpoint"
            }
        }
    }
}

/// The parsed allow-lists.
#[derive(Clone, Debug, Default)]
pub struct OriginPolicy {
    hosts: Vec<AllowedHost>,
    origins: Vec<AllowedOrigin>,
}

impl OriginPolicy {
    pub fn new(
        allowed_hosts: &[String],
        allowed_origins: &[String],
    ) -> Result<Self, OriginPolicyError> {
        Ok(Self {
            hosts: allowed_hosts
                .iter()
                .map(|host| AllowedHost::parse(host))
                .collect::<Result<_, _>>()?,
            origins: allowed_origins
                .iter()
                .map(|origin| AllowedOrigin::parse(origin))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Accepts any host and any origin (only for tests and loopback-only tools).
    pub fn permissive() -> Self {
        Self::default()
    }

    /// Checks `Host` (or the URI authority, for HTTP/2) and `Origin`.
    pub fn check(
        &self,
        uri_authority: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<(), OriginRejection> {
        if !self.hosts.is_empty() {
            let host = headers
                .get(HOST)
                .and_then(|value| value.to_str().ok())
                .or(uri_authority)
                .ok_or(OriginRejection::MissingHost)?;
            let (name, port) = split_host_port(host).ok_or(OriginRejection::HostNotAllowed)?;
            if !self.hosts.iter().any(|allowed| allowed.matches(name, port)) {
                return Err(OriginRejection::HostNotAllowed);
            }
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin
                .to_str()
                .map_err(|_| OriginRejection::OriginNotAllowed)?;
            if !self.origins.is_empty()
                && !self.origins.iter().any(|allowed| allowed.matches(origin))
            {
                return Err(OriginRejection::OriginNotAllowed);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(HOST, HeaderValue::from_str(host).unwrap());
        if let Some(origin) = origin {
            headers.insert(ORIGIN, HeaderValue::from_str(origin).unwrap());
        }
        headers
    }

    fn loopback_policy() -> OriginPolicy {
        let config = crate::KgConfig::default();
        OriginPolicy::new(&config.allowed_hosts, &config.allowed_origins).unwrap()
    }

    #[test]
    fn loopback_hosts_and_origins_pass_any_port() {
        let policy = loopback_policy();
        assert!(
            policy
                .check(
                    None,
                    &headers("127.0.0.1:8080", Some("http://127.0.0.1:8080"))
                )
                .is_ok()
        );
        assert!(
            policy
                .check(None, &headers("localhost", Some("http://localhost")))
                .is_ok()
        );
        assert!(policy.check(None, &headers("[::1]:9000", None)).is_ok());
    }

    #[test]
    fn rebinding_attempts_are_refused() {
        let policy = loopback_policy();
        assert_eq!(
            policy.check(None, &headers("evil.example.com", None)),
            Err(OriginRejection::HostNotAllowed)
        );
        assert_eq!(
            policy.check(
                None,
                &headers("127.0.0.1:8080", Some("http://evil.example.com"))
            ),
            Err(OriginRejection::OriginNotAllowed)
        );
        assert_eq!(
            policy.check(
                None,
                &headers("127.0.0.1:8080", Some("https://127.0.0.1:8080"))
            ),
            Err(OriginRejection::OriginNotAllowed),
            "scheme must match"
        );
    }

    #[test]
    fn explicit_ports_and_default_ports_are_compared() {
        let policy = OriginPolicy::new(
            &["app.example.com:443".into()],
            &["https://app.example.com".into()],
        )
        .unwrap();
        assert!(
            policy
                .check(
                    None,
                    &headers("app.example.com:443", Some("https://app.example.com"))
                )
                .is_ok()
        );
        assert!(
            policy
                .check(None, &headers("app.example.com:8443", None))
                .is_err()
        );
        assert!(
            policy
                .check(
                    None,
                    &headers("app.example.com:443", Some("https://app.example.com:8443"))
                )
                .is_err()
        );
        assert!(AllowedOrigin::parse("app.example.com").is_err());
        assert!(AllowedOrigin::parse("http://x:80:*").is_err());
    }

    #[test]
    fn a_bad_entry_names_the_setting_it_belongs_to() {
        let host = OriginPolicy::new(&["app.example.com:port".into()], &[]).unwrap_err();
        assert_eq!(host.setting_key(), "allowed_hosts");
        assert_eq!(
            host.to_string(),
            "'app.example.com:port' is not a host name, IP address or host:port"
        );
        let origin = OriginPolicy::new(&[], &["app.example.com".into()]).unwrap_err();
        assert_eq!(origin.setting_key(), "allowed_origins");
        assert_eq!(
            origin.to_string(),
            "'app.example.com' is not an origin such as https://app.example.com or http://localhost:*"
        );
    }
}
