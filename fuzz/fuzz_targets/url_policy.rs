//! The outbound URL policy (SSRF guard) with loopback, private, link-local and metadata
//! addresses refused: no panic, and a URL it lets through never names a guarded literal address
//! (decimal, octal, hex, IPv6-mapped and other spellings are all parsed by `url` first).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::net::IpAddr;
use switchboard_mcp_client::url_policy::{AddressClass, classify};
use switchboard_mcp_client::{Url, UrlPolicy, UrlPolicyConfig};

fuzz_target!(|text: &str| {
    let Ok(url) = Url::parse(text) else {
        return;
    };
    let policy = UrlPolicy::new(UrlPolicyConfig {
        allow_loopback: false,
        allow_private: false,
        allow_link_local: false,
        allow_metadata: false,
        ..UrlPolicyConfig::default()
    });
    if policy
        .check_url(&url, &["http", "https", "ws", "wss"])
        .is_err()
    {
        return;
    }
    let address: Option<IpAddr> = match url.host() {
        Some(url::Host::Ipv4(address)) => Some(address.into()),
        Some(url::Host::Ipv6(address)) => Some(address.into()),
        _ => None,
    };
    if let Some(address) = address {
        assert_eq!(classify(address), AddressClass::Public, "{url} let through");
    }
    if let Some(url::Host::Domain(name)) = url.host() {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        assert!(
            name != "localhost" && !name.ends_with(".localhost"),
            "{url} let through"
        );
    }
});
