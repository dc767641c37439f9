//! The outbound URL policy (SSRF guard): which addresses a remote transport may connect to.
//!
//! The check that matters happens on the **resolved** address, inside the resolver the shared
//! HTTP client and the WebSocket connector use ([`PolicyResolver`]), so the address checked is
//! the address connected — a DNS answer cannot change between check and use. URL-level checks
//! ([`UrlPolicy::check_url`]) add early, precise errors for literal addresses (which never reach
//! a resolver: `http://2130706433/`, `http://0177.0.0.1/`, `http://[::ffff:127.0.0.1]/`) and
//! for `localhost` names, and guard every redirect target.
//!
//! There are three policies, by who chose the server ([`ServerOrigin`]): servers an admin
//! registers obey `mcp.url_policy` (loopback allowed by default, for a single-user machine);
//! servers a request brings along (a chat's `mcp_servers`, sent by any chatting member) obey
//! the stricter `mcp.request_url_policy` (public addresses only by default); and this
//! process's own `/mcp` — recognised by identity, its URL being one this process serves, never
//! by its address class — is exempt, so closing loopback does not cut Switchboard off from
//! its own knowledge graph.

use crate::config::{RequestUrlPolicyConfig, UrlPolicyConfig, parse_networks};
use futures::future::BoxFuture;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use url::{Host, Url};

/// Why an address is guarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressClass {
    Public,
    Loopback,
    Private,
    LinkLocal,
    Metadata,
    /// Multicast, broadcast, reserved and documentation ranges: never a server.
    NotUnicast,
}

impl AddressClass {
    fn describe(self) -> &'static str {
        match self {
            AddressClass::Public => "public",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Metadata => "cloud metadata",
            AddressClass::NotUnicast => "non-unicast or reserved",
        }
    }
}

/// A destination the policy refuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlPolicyError {
    #[error("scheme '{scheme}' is not allowed (only {allowed})")]
    Scheme { scheme: String, allowed: String },
    #[error("'{host}' is a {class} address, which the URL policy refuses{hint}")]
    Address {
        host: String,
        class: &'static str,
        hint: &'static str,
    },
    #[error("URL has no host")]
    MissingHost,
    /// The name did not resolve (not a refusal: there is nothing to connect to).
    #[error("the host name '{host}' could not be resolved")]
    Unresolved { host: String },
    #[error("{0}")]
    Other(String),
}

/// Turns a host name into addresses. The system resolver by default; tests substitute a fixed
/// table to prove that the *resolved* address is what gets checked.
pub trait HostLookup: Send + Sync + std::fmt::Debug {
    fn lookup(&self, host: &str, port: u16)
    -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>>;
}

/// The operating system's resolver (`getaddrinfo` through tokio).
#[derive(Debug)]
pub struct SystemHostLookup;

impl HostLookup for SystemHostLookup {
    fn lookup(
        &self,
        host: &str,
        port: u16,
    ) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let host = host.to_owned();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        })
    }
}

/// A fixed host table (for tests): names not in it fail to resolve.
#[derive(Debug, Default)]
pub struct StaticHostLookup {
    pub hosts: std::collections::HashMap<String, Vec<IpAddr>>,
}

impl HostLookup for StaticHostLookup {
    fn lookup(
        &self,
        host: &str,
        port: u16,
    ) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let answer = match self.hosts.get(host) {
            Some(addresses) => Ok(addresses
                .iter()
                .map(|ip| SocketAddr::new(*ip, port))
                .collect()),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no such host '{host}' in the static table"),
            )),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// Who chose a server, which decides the policy its connections obey.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ServerOrigin {
    /// Registered in the workspace (by someone with `servers:write`): `mcp.url_policy`.
    #[default]
    Registered,
    /// Sent with one request (a chat's `mcp_servers`): `mcp.request_url_policy`.
    Request,
    /// This process's own MCP endpoint. Only code that has checked the URL is one this
    /// process serves (`ServerRegistry`'s own endpoints, `chat::OwnEndpoints`) sets it; nothing
    /// a request carries can.
    OwnEndpoint,
}

/// The policy, cheap to clone and share with resolvers.
#[derive(Clone, Debug)]
pub struct UrlPolicy {
    config: Arc<UrlPolicyConfig>,
    /// `config.allow_networks`, parsed.
    networks: Arc<Vec<ipnet::IpNet>>,
    origin: ServerOrigin,
    lookup: Arc<dyn HostLookup>,
}

impl UrlPolicy {
    /// The policy of registered servers.
    pub fn new(config: UrlPolicyConfig) -> Self {
        Self::with_lookup(config, Arc::new(SystemHostLookup))
    }

    /// The policy of registered servers, resolving names with `lookup`.
    pub fn with_lookup(config: UrlPolicyConfig, lookup: Arc<dyn HostLookup>) -> Self {
        Self::build(config, ServerOrigin::Registered, lookup)
    }

    /// The policy of servers sent with a request.
    pub fn for_requests(config: &RequestUrlPolicyConfig, lookup: Arc<dyn HostLookup>) -> Self {
        Self::build(config.into(), ServerOrigin::Request, lookup)
    }

    /// No address check: only for connections to this process's own endpoint.
    pub fn for_own_endpoint() -> Self {
        Self::build(
            UrlPolicyConfig::default(),
            ServerOrigin::OwnEndpoint,
            Arc::new(SystemHostLookup),
        )
    }

    fn build(config: UrlPolicyConfig, origin: ServerOrigin, lookup: Arc<dyn HostLookup>) -> Self {
        // Validated with the configuration; an entry that still fails to parse opens nothing.
        let networks = parse_networks(&config.allow_networks).unwrap_or_default();
        Self {
            config: Arc::new(config),
            networks: Arc::new(networks),
            origin,
            lookup,
        }
    }

    /// Whose servers this policy guards.
    pub fn origin(&self) -> ServerOrigin {
        self.origin
    }

    /// Checks one IP address (after unwrapping IPv4-mapped and similar IPv6 forms).
    pub fn check_ip(&self, host_label: &str, address: IpAddr) -> Result<(), UrlPolicyError> {
        if self.origin == ServerOrigin::OwnEndpoint {
            return Ok(());
        }
        let class = classify(address);
        let listed = || {
            self.networks
                .iter()
                .any(|network| network.contains(&address))
        };
        let allowed = match class {
            AddressClass::Public => true,
            AddressClass::Loopback => self.config.allow_loopback || listed(),
            AddressClass::Private => self.config.allow_private || listed(),
            AddressClass::LinkLocal => self.config.allow_link_local || listed(),
            AddressClass::Metadata => self.config.allow_metadata,
            AddressClass::NotUnicast => false,
        };
        if allowed {
            Ok(())
        } else {
            Err(UrlPolicyError::Address {
                host: host_label.to_owned(),
                class: class.describe(),
                hint: hint_for(self.origin, class),
            })
        }
    }

    /// Checks a URL before any connection: its scheme, a literal address, `localhost` names.
    /// Host names are checked again, on their resolved addresses, by [`PolicyResolver`].
    pub fn check_url(&self, url: &Url, allowed_schemes: &[&str]) -> Result<(), UrlPolicyError> {
        if !allowed_schemes.contains(&url.scheme()) {
            return Err(UrlPolicyError::Scheme {
                scheme: url.scheme().to_owned(),
                allowed: allowed_schemes.join(", "),
            });
        }
        match url.host() {
            None => Err(UrlPolicyError::MissingHost),
            Some(Host::Ipv4(address)) => self.check_ip(&address.to_string(), IpAddr::V4(address)),
            Some(Host::Ipv6(address)) => self.check_ip(&address.to_string(), IpAddr::V6(address)),
            Some(Host::Domain(name)) => self.check_host_name(name),
        }
    }

    /// Names that always mean this machine, whatever DNS says.
    pub fn check_host_name(&self, name: &str) -> Result<(), UrlPolicyError> {
        let normalized = name.trim_end_matches('.').to_ascii_lowercase();
        if normalized == "localhost" || normalized.ends_with(".localhost") {
            return self.check_ip(name, IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        // `Url` already turned decimal, octal and hex IPv4 forms into `Host::Ipv4`; a name
        // that still parses as an address here came from another path (e.g. a resolver name).
        if let Ok(address) = normalized.parse::<IpAddr>() {
            return self.check_ip(name, address);
        }
        // Cloud metadata services by name: refused whatever the resolver answers (a resolver
        // outside the cloud, or a hosts file, may answer something else).
        if METADATA_HOST_NAMES.contains(&normalized.as_str())
            && self.origin != ServerOrigin::OwnEndpoint
            && !self.config.allow_metadata
        {
            return Err(UrlPolicyError::Address {
                host: name.to_owned(),
                class: AddressClass::Metadata.describe(),
                hint: hint_for(self.origin, AddressClass::Metadata),
            });
        }
        Ok(())
    }

    /// Resolves `host:port` and checks every answer; refuses the host if any answer is guarded
    /// (so a name that resolves to both a public and an internal address is refused).
    pub async fn resolve_checked(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, UrlPolicyError> {
        self.check_host_name(host)?;
        let addresses = self
            .lookup
            .lookup(host.trim_end_matches('.'), port)
            .await
            .map_err(|error| {
                tracing::debug!(%host, %error, "name resolution failed");
                UrlPolicyError::Unresolved {
                    host: host.to_owned(),
                }
            })?;
        if addresses.is_empty() {
            return Err(UrlPolicyError::Unresolved {
                host: host.to_owned(),
            });
        }
        for address in &addresses {
            self.check_ip(host, address.ip())?;
        }
        Ok(addresses)
    }

    /// A resolver for `reqwest::ClientBuilder::dns_resolver` enforcing this policy.
    pub fn resolver(&self) -> PolicyResolver {
        PolicyResolver {
            policy: self.clone(),
        }
    }
}

/// Names of cloud metadata services (GCP, AWS, Azure, Alibaba, Oracle, OpenStack), compared
/// lowercased and without a trailing dot.
const METADATA_HOST_NAMES: [&str; 8] = [
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
    "metadata.tencentyun.com",
    "metadata.platformequinix.com",
];

fn hint_for(origin: ServerOrigin, class: AddressClass) -> &'static str {
    match (origin, class) {
        (ServerOrigin::Request, AddressClass::Loopback) => {
            " for servers sent with a request (an admin can allow it with mcp.request_url_policy.allow_loopback)"
        }
        (ServerOrigin::Request, AddressClass::Private) => {
            " for servers sent with a request (an admin can allow it with mcp.request_url_policy.allow_private or allow_networks)"
        }
        (ServerOrigin::Request, AddressClass::LinkLocal) => {
            " for servers sent with a request (an admin can allow it with mcp.request_url_policy.allow_link_local)"
        }
        (ServerOrigin::Request, _) => " for servers sent with a request",
        (_, AddressClass::Loopback) => " (allow it with mcp.url_policy.allow_loopback)",
        (_, AddressClass::Private) => {
            " (allow it with mcp.url_policy.allow_private or allow_networks)"
        }
        (_, AddressClass::LinkLocal) => " (allow it with mcp.url_policy.allow_link_local)",
        (_, AddressClass::Metadata) => " (allow it with mcp.url_policy.allow_metadata)",
        (_, AddressClass::Public | AddressClass::NotUnicast) => "",
    }
}

/// The resolver plugged into the shared `reqwest::Client`: resolves with the system resolver,
/// then refuses guarded answers with a [`UrlPolicyError`] (found again in the error's source
/// chain by [`crate::error`]).
#[derive(Clone, Debug)]
pub struct PolicyResolver {
    policy: UrlPolicy,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses = policy
                .resolve_checked(&host, 0)
                .await
                .map_err(|error| Box::new(error) as Box<dyn std::error::Error + Send + Sync>)?;
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Classifies an address, looking through IPv6 forms that embed an IPv4 address.
pub fn classify(address: IpAddr) -> AddressClass {
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(address: Ipv4Addr) -> AddressClass {
    let [a, b, c, d] = address.octets();
    if address == Ipv4Addr::new(169, 254, 169, 254)
        || address == Ipv4Addr::new(169, 254, 170, 2)
        || address == Ipv4Addr::new(100, 100, 100, 200)
        || address == Ipv4Addr::new(192, 0, 0, 192)
    {
        return AddressClass::Metadata;
    }
    match (a, b, c, d) {
        // 0.0.0.0/8 reaches this host on Linux.
        (0, ..) | (127, ..) => AddressClass::Loopback,
        (10, ..)
        | (172, 16..=31, ..)
        | (192, 168, ..)
        | (100, 64..=127, ..)
        | (198, 18..=19, ..) => AddressClass::Private,
        (169, 254, ..) => AddressClass::LinkLocal,
        (192, 0, 0, _) | (192, 0, 2, _) | (198, 51, 100, _) | (203, 0, 113, _) => {
            AddressClass::NotUnicast
        }
        (224..=255, ..) => AddressClass::NotUnicast,
        _ => AddressClass::Public,
    }
}

fn classify_v6(address: Ipv6Addr) -> AddressClass {
    let segments = address.segments();
    // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated) and 64:ff9b::a.b.c.d (NAT64).
    if let Some(v4) = address.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    if segments[..6] == [0, 0, 0, 0, 0, 0] && !(segments[6] == 0 && segments[7] <= 1) {
        return classify_v4(embedded_v4(segments[6], segments[7]));
    }
    // NAT64 well-known prefix (64:ff9b::/96) and SIIT's IPv4-translated ::ffff:0:a.b.c.d.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || segments[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return classify_v4(embedded_v4(segments[6], segments[7]));
    }
    // NAT64 local-use prefix (64:ff9b:1::/48, RFC 8215): the operator's own translator, which
    // reaches whatever IPv4 network it sits in.
    if segments[..3] == [0x64, 0xff9b, 1] {
        return AddressClass::Private;
    }
    // Teredo (2001::/32) tunnels to an IPv4 address hidden in the address; the discard-only
    // prefix (100::/64) goes nowhere: neither is a server.
    if segments[..2] == [0x2001, 0] || segments[..4] == [0x100, 0, 0, 0] {
        return AddressClass::NotUnicast;
    }
    // 6to4: 2002:a.b.c.d::/48.
    if segments[0] == 0x2002 {
        return classify_v4(embedded_v4(segments[1], segments[2]));
    }
    if address == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        return AddressClass::Metadata;
    }
    if address.is_loopback() || address.is_unspecified() {
        return AddressClass::Loopback;
    }
    match segments[0] {
        0xfc00..=0xfdff => AddressClass::Private,
        0xfec0..=0xfeff => AddressClass::Private,
        0xfe80..=0xfebf => AddressClass::LinkLocal,
        0xff00..=0xffff => AddressClass::NotUnicast,
        0x2001 if segments[1] == 0x0db8 => AddressClass::NotUnicast,
        _ => AddressClass::Public,
    }
}

fn embedded_v4(high: u16, low: u16) -> Ipv4Addr {
    Ipv4Addr::new((high >> 8) as u8, high as u8, (low >> 8) as u8, low as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict() -> UrlPolicy {
        UrlPolicy::new(UrlPolicyConfig {
            allow_loopback: false,
            ..UrlPolicyConfig::default()
        })
    }

    fn check(policy: &UrlPolicy, url: &str) -> Result<(), UrlPolicyError> {
        policy.check_url(&Url::parse(url).unwrap(), &["http", "https"])
    }

    #[test]
    fn classifies_the_guarded_ranges() {
        let cases = [
            ("127.0.0.1", AddressClass::Loopback),
            ("0.0.0.0", AddressClass::Loopback),
            ("10.1.2.3", AddressClass::Private),
            ("172.20.0.1", AddressClass::Private),
            ("192.168.1.1", AddressClass::Private),
            ("100.64.0.1", AddressClass::Private),
            ("169.254.1.1", AddressClass::LinkLocal),
            ("169.254.169.254", AddressClass::Metadata),
            ("224.0.0.1", AddressClass::NotUnicast),
            ("8.8.8.8", AddressClass::Public),
            ("::1", AddressClass::Loopback),
            ("::", AddressClass::Loopback),
            ("::ffff:127.0.0.1", AddressClass::Loopback),
            ("::ffff:169.254.169.254", AddressClass::Metadata),
            ("::10.0.0.1", AddressClass::Private),
            ("64:ff9b::7f00:1", AddressClass::Loopback),
            ("2002:c0a8:0101::1", AddressClass::Private),
            ("fd00:ec2::254", AddressClass::Metadata),
            ("fc00::1", AddressClass::Private),
            ("fe80::1", AddressClass::LinkLocal),
            ("ff02::1", AddressClass::NotUnicast),
            ("2606:4700::1111", AddressClass::Public),
            ("::ffff:0:7f00:1", AddressClass::Loopback),
            ("::ffff:0:a9fe:a9fe", AddressClass::Metadata),
            ("64:ff9b:1::a00:1", AddressClass::Private),
            (
                "2001:0:4136:e378:8000:63bf:3fff:fdd2",
                AddressClass::NotUnicast,
            ),
            ("100::1", AddressClass::NotUnicast),
            ("2001:4860::8888", AddressClass::Public),
        ];
        for (text, expected) in cases {
            assert_eq!(classify(text.parse().unwrap()), expected, "{text}");
        }
    }

    #[test]
    fn literal_forms_of_loopback_are_refused() {
        let policy = strict();
        for url in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://127.1/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://localhost/",
            "http://localhost./",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://0.0.0.0:8080/",
        ] {
            let error = check(&policy, url).unwrap_err();
            assert!(error.to_string().contains("loopback"), "{url}: {error}");
        }
        check(&policy, "http://169.254.169.254/latest/meta-data/").unwrap_err();
        check(&policy, "https://example.com/mcp").unwrap();
    }

    #[test]
    fn configuration_opens_ranges_and_schemes_are_checked() {
        let dev = UrlPolicy::new(UrlPolicyConfig::default());
        check(&dev, "http://127.0.0.1:3000/mcp").unwrap();
        check(&dev, "http://localhost./").unwrap();
        check(&dev, "http://10.0.0.5/").unwrap_err();
        check(&dev, "http://169.254.169.254/").unwrap_err();
        let error = dev
            .check_url(
                &Url::parse("ftp://example.com/").unwrap(),
                &["http", "https"],
            )
            .unwrap_err();
        assert!(matches!(error, UrlPolicyError::Scheme { .. }));
    }

    #[test]
    fn request_policy_is_public_only_unless_opened() {
        let lookup: Arc<dyn HostLookup> = Arc::new(SystemHostLookup);
        let request = UrlPolicy::for_requests(&RequestUrlPolicyConfig::default(), lookup.clone());
        for url in [
            "http://127.0.0.1:3000/mcp",
            "http://localhost/",
            "http://10.0.0.5/",
            "http://169.254.169.254/",
        ] {
            let error = check(&request, url).unwrap_err();
            assert!(
                error.to_string().contains("servers sent with a request"),
                "{url}: {error}"
            );
        }
        check(&request, "https://example.com/mcp").unwrap();

        let opened = UrlPolicy::for_requests(
            &RequestUrlPolicyConfig {
                allow_networks: vec!["10.20.0.0/16".into(), "127.0.0.1".into()],
                ..RequestUrlPolicyConfig::default()
            },
            lookup,
        );
        check(&opened, "http://10.20.3.4/mcp").unwrap();
        check(&opened, "http://127.0.0.1:9/mcp").unwrap();
        check(&opened, "http://127.0.0.2/mcp").unwrap_err();
        check(&opened, "http://10.21.0.1/mcp").unwrap_err();
        // A listed network never opens metadata addresses.
        let metadata = UrlPolicy::new(UrlPolicyConfig {
            allow_networks: vec!["169.254.0.0/16".into()],
            ..UrlPolicyConfig::default()
        });
        check(&metadata, "http://169.254.1.1/").unwrap();
        check(&metadata, "http://169.254.169.254/").unwrap_err();

        check(&UrlPolicy::for_own_endpoint(), "http://127.0.0.1:8080/mcp").unwrap();
    }

    #[tokio::test]
    async fn resolver_checks_the_resolved_address() {
        let policy = strict();
        let error = policy.resolve_checked("localhost", 80).await.unwrap_err();
        assert!(error.to_string().contains("loopback"), "{error}");
        let dev = UrlPolicy::new(UrlPolicyConfig::default());
        let addresses = dev.resolve_checked("localhost", 80).await.unwrap();
        assert!(addresses.iter().all(|address| address.ip().is_loopback()));

        // A public-looking name whose DNS answer is internal (rebinding) is refused on the answer.
        let table = StaticHostLookup {
            hosts: [
                (
                    "rebind.example".to_owned(),
                    vec!["10.0.0.7".parse().unwrap()],
                ),
                (
                    "mixed.example".to_owned(),
                    vec![
                        "8.8.8.8".parse().unwrap(),
                        "::ffff:127.0.0.1".parse().unwrap(),
                    ],
                ),
                (
                    "public.example".to_owned(),
                    vec!["8.8.4.4".parse().unwrap()],
                ),
            ]
            .into_iter()
            .collect(),
        };
        let policy = UrlPolicy::with_lookup(
            UrlPolicyConfig {
                allow_loopback: false,
                ..UrlPolicyConfig::default()
            },
            Arc::new(table),
        );
        assert!(
            policy
                .resolve_checked("rebind.example", 443)
                .await
                .unwrap_err()
                .to_string()
                .contains("private")
        );
        assert!(
            policy
                .resolve_checked("mixed.example", 443)
                .await
                .unwrap_err()
                .to_string()
                .contains("loopback")
        );
        assert_eq!(
            policy
                .resolve_checked("public.example.", 443)
                .await
                .unwrap()
                .len(),
            1
        );
    }
}
