//! The SSRF battery (issue 18, target 4), on the policy of servers a request brings along
//! (`mcp.request_url_policy`, defaults): every way of writing a guarded address
//! (`switchboard_test_support::ssrf_forms`) in every URL shape, names that resolve to guarded
//! addresses, metadata and `localhost` names, other schemes — all refused, while the same
//! encodings of a public address pass (so the battery cannot pass by refusing everything).
//! Then DNS rebinding through the shared HTTP client: a resolver that alternates between an
//! allowed and a guarded answer, 1,000 connections, none reaching the guarded listener.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_mcp_client::url_policy::{HostLookup, StaticHostLookup};
use switchboard_mcp_client::{RequestUrlPolicyConfig, Url, UrlPolicy, UrlPolicyError};
use switchboard_test_support::ssrf_forms::{
    GUARDED_V4, GUARDED_V6, LOCALHOST_NAMES, METADATA_NAMES, OTHER_SCHEMES, urls_for_host, v4_hosts,
};
use url::Host;

const PUBLIC: [u8; 4] = [93, 184, 216, 34];

/// How the policy treated one URL.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum Outcome {
    /// Refused on the URL (a literal address, a name, the scheme).
    RefusedOnUrl,
    /// The URL passed; refused on the resolved address.
    RefusedOnAnswer,
    /// Not a URL at all (nothing to connect to; the chat API answers 422 "not a URL").
    NotAUrl,
    /// The name did not resolve (nothing to connect to).
    Unresolved,
    /// Allowed: a connection would be made.
    Allowed,
}

/// Resolvers' answers for the names of the battery: guarded addresses behind innocent names.
fn table() -> StaticHostLookup {
    let mut hosts: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for (index, (address, _)) in GUARDED_V4.iter().enumerate() {
        hosts.insert(format!("v4-{index}.example"), vec![IpAddr::from(*address)]);
        // Mixed answers: a public address first, a guarded one after it.
        hosts.insert(
            format!("mixed-v4-{index}.example"),
            vec![IpAddr::from(PUBLIC), IpAddr::from(*address)],
        );
    }
    for (index, (address, _)) in GUARDED_V6.iter().enumerate() {
        hosts.insert(
            format!("v6-{index}.example"),
            vec![address.parse().unwrap()],
        );
    }
    hosts.insert(
        "127.0.0.1.nip.io".into(),
        vec![IpAddr::from([127, 0, 0, 1])],
    );
    hosts.insert(
        "localhost.localdomain".into(),
        vec![IpAddr::from([127, 0, 0, 1])],
    );
    hosts.insert("public.example".into(), vec![IpAddr::from(PUBLIC)]);
    // What a cloud's resolver answers for its metadata names, for the names the URL check
    // lets through.
    for name in METADATA_NAMES {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        hosts.insert(name, vec![IpAddr::from([169, 254, 169, 254])]);
    }
    StaticHostLookup { hosts }
}

async fn outcome(policy: &UrlPolicy, text: &str, schemes: &[&str]) -> (Outcome, String) {
    let Ok(url) = Url::parse(text) else {
        return (Outcome::NotAUrl, String::new());
    };
    if let Err(refused) = policy.check_url(&url, schemes) {
        return (Outcome::RefusedOnUrl, refused.to_string());
    }
    // A literal address reaches no resolver: passing the URL check means a connection.
    let Some(Host::Domain(host)) = url.host() else {
        return (Outcome::Allowed, url.to_string());
    };
    match policy
        .resolve_checked(host, url.port_or_known_default().unwrap_or(80))
        .await
    {
        Ok(_) => (Outcome::Allowed, url.to_string()),
        Err(UrlPolicyError::Unresolved { .. }) => (Outcome::Unresolved, String::new()),
        Err(refused) => (Outcome::RefusedOnAnswer, refused.to_string()),
    }
}

/// Every guarded case of the battery: (URL, allowed schemes, what it tries).
fn guarded_cases() -> Vec<(String, &'static [&'static str], String)> {
    const HTTP: &[&str] = &["http", "https"];
    const WS: &[&str] = &["ws", "wss"];
    let mut cases = Vec::new();
    let mut add_host = |host: &str, what: &str| {
        for (scheme, schemes, port) in [
            ("http", HTTP, None),
            ("https", HTTP, Some(8443)),
            ("ws", WS, Some(80)),
        ] {
            for (url, shape) in urls_for_host(host, scheme, port) {
                cases.push((url, schemes, format!("{what}, {shape}")));
            }
        }
    };
    for (address, range) in GUARDED_V4 {
        for (host, form) in v4_hosts(address) {
            add_host(&host, &format!("{range} {address:?} as {form}"));
        }
    }
    for (address, range) in GUARDED_V6 {
        add_host(&format!("[{address}]"), &format!("{range} [{address}]"));
    }
    for (index, (_, range)) in GUARDED_V4.iter().enumerate() {
        add_host(
            &format!("v4-{index}.example"),
            &format!("name resolving to {range}"),
        );
        add_host(
            &format!("mixed-v4-{index}.example"),
            &format!("name resolving to a public address and {range}"),
        );
    }
    for (index, (_, range)) in GUARDED_V6.iter().enumerate() {
        add_host(
            &format!("v6-{index}.example"),
            &format!("name resolving to {range}"),
        );
    }
    for name in METADATA_NAMES {
        add_host(name, "metadata name");
    }
    for name in LOCALHOST_NAMES
        .iter()
        .chain(&["127.0.0.1.nip.io", "localhost.localdomain"])
    {
        add_host(name, "name of this machine");
    }
    for url in OTHER_SCHEMES {
        cases.push((url.to_owned(), HTTP, "another scheme".to_owned()));
    }
    for url in ["http://public.example/mcp", "https://public.example/mcp"] {
        cases.push((url.to_owned(), WS, "http for a WebSocket server".to_owned()));
    }
    cases
}

#[tokio::test]
async fn every_form_of_a_guarded_address_is_refused_for_request_servers() {
    let policy = UrlPolicy::for_requests(&RequestUrlPolicyConfig::default(), Arc::new(table()));
    let cases = guarded_cases();
    let mut tally: BTreeMap<Outcome, usize> = BTreeMap::new();
    let mut holes = Vec::new();
    for (url, schemes, what) in &cases {
        let (outcome, detail) = outcome(&policy, url, schemes).await;
        *tally.entry(outcome).or_default() += 1;
        if matches!(outcome, Outcome::Allowed | Outcome::Unresolved) {
            holes.push(format!("{what}: {url} -> {outcome:?} {detail}"));
        }
    }

    // The controls: the same forms of a public address, through the same policy, pass.
    let mut controls = 0;
    for (host, form) in v4_hosts(PUBLIC) {
        if form.contains("SIIT") || form.contains("NAT64") || form.contains("6to4") {
            continue; // translation prefixes are not the address itself
        }
        for (url, shape) in urls_for_host(&host, "http", None) {
            let (outcome, detail) = outcome(&policy, &url, &["http", "https"]).await;
            assert_eq!(outcome, Outcome::Allowed, "{form}, {shape}: {url} {detail}");
            controls += 1;
        }
    }
    for url in ["https://public.example/mcp", "http://[2606:4700::1111]/mcp"] {
        assert_eq!(
            outcome(&policy, url, &["http", "https"]).await.0,
            Outcome::Allowed
        );
        controls += 1;
    }
    assert_eq!(
        outcome(&policy, "wss://public.example/mcp", &["ws", "wss"])
            .await
            .0,
        Outcome::Allowed
    );

    println!(
        "SSRF battery (URL policy, request servers): {} guarded cases, {} refused on the URL, \
         {} refused on the resolved address, {} not a URL, {} holes; {} public controls allowed",
        cases.len(),
        tally.get(&Outcome::RefusedOnUrl).unwrap_or(&0),
        tally.get(&Outcome::RefusedOnAnswer).unwrap_or(&0),
        tally.get(&Outcome::NotAUrl).unwrap_or(&0),
        holes.len(),
        controls + 1,
    );
    assert!(
        holes.is_empty(),
        "{} holes:\n{}",
        holes.len(),
        holes.join("\n")
    );
    // Nearly everything is refused by the policy itself, not by failing to parse.
    assert!(tally.get(&Outcome::NotAUrl).copied().unwrap_or(0) * 20 < cases.len());
}

/// Answers an allowed address and a guarded one in turn, counting its lookups.
#[derive(Debug)]
struct Rebinding {
    lookups: AtomicUsize,
    allowed: IpAddr,
    guarded: IpAddr,
}

impl HostLookup for Rebinding {
    fn lookup(
        &self,
        _host: &str,
        port: u16,
    ) -> futures::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let turn = self.lookups.fetch_add(1, Ordering::SeqCst);
        let address = if turn.is_multiple_of(2) {
            self.allowed
        } else {
            self.guarded
        };
        Box::pin(std::future::ready(Ok(vec![SocketAddr::new(address, port)])))
    }
}

/// Answers every request with an empty 200 and closes (so each request needs a new connection,
/// hence a new lookup); counts the connections.
async fn listener(address: SocketAddr) -> Arc<AtomicUsize> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut buffer = [0u8; 2048];
                let _ = socket.read(&mut buffer).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    hits
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_between_check_and_connect_never_reaches_the_guarded_address() {
    // 127.0.0.1 stands for a public address (opened by `allow_networks`); 127.0.0.2, on the
    // same port, for the internal one the rebinding answer points at.
    let allowed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = allowed.local_addr().unwrap().port();
    drop(allowed);
    let public_hits = listener(SocketAddr::from(([127, 0, 0, 1], port))).await;
    let canary_hits = listener(SocketAddr::from(([127, 0, 0, 2], port))).await;
    let lookup = Arc::new(Rebinding {
        lookups: AtomicUsize::new(0),
        allowed: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1)),
        guarded: IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
    });
    let policy = UrlPolicy::for_requests(
        &RequestUrlPolicyConfig {
            allow_networks: vec!["127.0.0.1/32".into()],
            ..RequestUrlPolicyConfig::default()
        },
        lookup.clone(),
    );
    let client =
        switchboard_mcp_client::transport::http_client::build_shared_http_client(&policy).unwrap();
    let url = format!("http://rebind.example:{port}/mcp");
    let (mut answered, mut refused) = (0, 0);
    for _ in 0..1_000 {
        match client.get(&url).send().await {
            Ok(response) if response.status() == 200 => answered += 1,
            Ok(response) => panic!("unexpected {}", response.status()),
            Err(error) => {
                let chain = format!("{error:?}");
                assert!(chain.contains("loopback"), "{chain}");
                refused += 1;
            }
        }
    }
    let lookups = lookup.lookups.load(Ordering::SeqCst);
    println!(
        "DNS rebinding: {lookups} lookups alternating allowed/guarded, {answered} requests \
         answered by the allowed address, {refused} refused, {} connections to the guarded one",
        canary_hits.load(Ordering::SeqCst)
    );
    assert_eq!(
        canary_hits.load(Ordering::SeqCst),
        0,
        "the guarded address was reached"
    );
    assert_eq!(lookups, 1_000, "one lookup per connection");
    assert_eq!((answered, refused), (500, 500));
    assert_eq!(public_hits.load(Ordering::SeqCst), 500);
}
