//! The SSRF battery through the chat API (issue 18, target 4): a member with `chat:use` sends
//! servers in `mcp_servers` of `POST /chat/stream`. Every literal form of a guarded address
//! (`switchboard_test_support::ssrf_forms`) is refused with 422 naming the field; names that
//! resolve to guarded addresses are refused at connect, on every remote transport; redirects
//! to guarded addresses are not followed; a resolver that rebinds between answers never gets a
//! connection to the guarded one. Canary listeners count connections: none may arrive.

use crate::support::chat::{ChatOptions, ChatServer, member_token};
use crate::support::sse::SseReader;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_mcp_client::url_policy::{HostLookup, StaticHostLookup};
use switchboard_test_support::ssrf_forms::{
    GUARDED_V4, GUARDED_V6, LOCALHOST_NAMES, METADATA_NAMES, OTHER_SCHEMES, urls_for_host, v4_hosts,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A listener on `address` that counts connections and answers each with `answer` (or with
/// nothing), then closes.
async fn listener(address: SocketAddr, answer: Option<String>) -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind(address).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).await;
                if let Some(answer) = answer {
                    let _ = socket.write_all(answer.as_bytes()).await;
                }
            });
        }
    });
    (port, hits)
}

/// Canaries on 127.0.0.1 and 127.0.0.2 on one port: (port, hits on either).
async fn canaries() -> (u16, Vec<Arc<AtomicUsize>>) {
    let (port, second) = listener(SocketAddr::from(([127, 0, 0, 2], 0)), None).await;
    let (_, first) = listener(SocketAddr::from(([127, 0, 0, 1], port)), None).await;
    (port, vec![first, second])
}

fn hits(counters: &[Arc<AtomicUsize>]) -> usize {
    counters
        .iter()
        .map(|counter| counter.load(Ordering::SeqCst))
        .sum()
}

async fn post_chat(server: &ChatServer, token: &str, body: Value) -> reqwest::Response {
    server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// Sends one turn; returns its events and the request servers it reports unavailable (the
/// built-in `kg`, which a `chat:use`-only member cannot read, left out).
async fn turn(server: &ChatServer, token: &str, servers: Value) -> (Vec<Value>, Vec<Value>) {
    let response = post_chat(
        server,
        token,
        json!({"message": "hi", "mcp_servers": servers}),
    )
    .await;
    assert_eq!(response.status(), 200, "{servers}");
    let events = SseReader::new(response).until_done().await;
    let unavailable = events[0]["unavailable_servers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["server"] != "kg")
        .cloned()
        .collect();
    (events, unavailable)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn literal_guarded_addresses_in_a_chat_are_refused_before_any_connection() {
    let (port, canary) = canaries().await;
    let server = ChatServer::start(ChatOptions::default()).await;
    let token = member_token(&server, "ssrf member", "chat:use").await;
    let mut cases: Vec<(String, &str)> = Vec::new();
    for (address, _) in GUARDED_V4 {
        let port = (address[0] == 127).then_some(port);
        for (index, (host, _)) in v4_hosts(address).into_iter().enumerate() {
            for (shape, (url, _)) in urls_for_host(&host, "http", port).into_iter().enumerate() {
                // Every form plainly; every URL shape on a few forms.
                if shape == 0 || index < 3 {
                    cases.push((url, "streamable_http"));
                }
            }
        }
    }
    for (address, _) in GUARDED_V6 {
        cases.push((format!("http://[{address}]:{port}/mcp"), "streamable_http"));
        cases.push((format!("ws://[{address}]:{port}/ws"), "websocket"));
    }
    for name in METADATA_NAMES.iter().chain(&LOCALHOST_NAMES) {
        cases.push((format!("http://{name}:{port}/mcp"), "sse"));
    }
    for url in OTHER_SCHEMES {
        cases.push((url.to_owned(), "streamable_http"));
    }
    cases.push((format!("http://public.example:{port}/"), "websocket"));

    let mut refused = 0;
    for (url, transport) in &cases {
        let response = post_chat(
            &server,
            &token,
            json!({"message": "hi", "mcp_servers": [{"name": "probe", "url": url, "transport": transport}]}),
        )
        .await;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or_default();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(status, 422, "{transport} {url}: {body}");
        assert!(message.starts_with("mcp_servers[0]."), "{url}: {message}");
        refused += 1;
    }
    println!(
        "SSRF battery (chat, literal forms): {} cases from a member's chat, {refused} refused \
         with 422, {} connections to the canaries",
        cases.len(),
        hits(&canary)
    );
    assert_eq!(hits(&canary), 0, "a canary was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_resolving_to_guarded_addresses_are_refused_at_connect_on_every_transport() {
    let (port, canary) = canaries().await;
    let mut hosts: HashMap<String, Vec<IpAddr>> = HashMap::new();
    let mut names = Vec::new();
    for (index, (address, range)) in GUARDED_V4.iter().enumerate() {
        let name = format!("v4-{index}.example");
        hosts.insert(name.clone(), vec![IpAddr::from(*address)]);
        names.push((name, *range));
        let mixed = format!("mixed-{index}.example");
        hosts.insert(
            mixed.clone(),
            vec![IpAddr::from([93, 184, 216, 34]), IpAddr::from(*address)],
        );
        names.push((mixed, *range));
    }
    for (index, (address, range)) in GUARDED_V6.iter().enumerate() {
        let name = format!("v6-{index}.example");
        hosts.insert(name.clone(), vec![address.parse().unwrap()]);
        names.push((name, *range));
    }
    let server = ChatServer::start(ChatOptions {
        host_lookup: Some(Arc::new(StaticHostLookup { hosts })),
        ..ChatOptions::default()
    })
    .await;
    let token = member_token(&server, "ssrf member", "chat:use").await;
    let mut refused = 0;
    for (name, range) in &names {
        let (events, unavailable) = turn(
            &server,
            &token,
            json!([
                {"name": "http", "url": format!("http://{name}:{port}/mcp")},
                {"name": "sse", "url": format!("http://{name}:{port}/sse"), "transport": "sse"},
                {"name": "ws", "url": format!("ws://{name}:{port}/ws"), "transport": "websocket"},
            ]),
        )
        .await;
        assert_eq!(unavailable.len(), 3, "{name} ({range}): {events:#?}");
        for entry in &unavailable {
            assert_eq!(entry["code"], "url_policy", "{name} ({range}): {entry}");
            refused += 1;
        }
    }
    println!(
        "SSRF battery (chat, names): {} names x 3 transports, {refused} refused at connect, {} \
         connections to the canaries",
        names.len(),
        hits(&canary)
    );
    assert_eq!(hits(&canary), 0, "a canary was reached");
}

/// Answers an allowed address and a guarded one in turn.
#[derive(Debug)]
struct Rebinding {
    lookups: AtomicUsize,
}

impl HostLookup for Rebinding {
    fn lookup(
        &self,
        _host: &str,
        port: u16,
    ) -> futures::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let turn = self.lookups.fetch_add(1, Ordering::SeqCst);
        let last = if turn.is_multiple_of(2) { 1 } else { 2 };
        let address = SocketAddr::from(([127, 0, 0, last], port));
        Box::pin(std::future::ready(Ok(vec![address])))
    }
}

/// A server whose "public" address is 127.0.0.1 (opened for request servers), resolving
/// names with `lookup`.
async fn opened_server(lookup: Arc<dyn HostLookup>) -> ChatServer {
    let mut options = ChatOptions {
        host_lookup: Some(lookup),
        ..ChatOptions::default()
    };
    options.mcp.request_url_policy.allow_networks = vec!["127.0.0.1/32".to_owned()];
    ChatServer::start(options).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebinding_name_never_gets_a_connection_to_the_guarded_address() {
    // 127.0.0.1 answers (stands for the public address); 127.0.0.2 is the canary.
    let (port, guarded) = listener(SocketAddr::from(([127, 0, 0, 2], 0)), None).await;
    let answer = "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    let (_, allowed) = listener(
        SocketAddr::from(([127, 0, 0, 1], port)),
        Some(answer.to_owned()),
    )
    .await;
    let lookup = Arc::new(Rebinding {
        lookups: AtomicUsize::new(0),
    });
    let server = opened_server(lookup.clone()).await;
    let token = member_token(&server, "ssrf member", "chat:use").await;
    let (mut policy_refusals, mut other) = (0, 0);
    for turn_number in 0..40 {
        let (_, unavailable) = turn(
            &server,
            &token,
            json!([{"name": "rebind", "url": format!("http://rebind{turn_number}.example:{port}/mcp")}]),
        )
        .await;
        for entry in &unavailable {
            if entry["code"] == "url_policy" {
                policy_refusals += 1;
            } else {
                other += 1;
            }
        }
    }
    println!(
        "SSRF battery (chat, DNS rebinding): {} lookups alternating allowed/guarded, {} \
         connections to the allowed address, {policy_refusals} turns refused by the policy, \
         {other} failed otherwise, {} connections to the guarded address",
        lookup.lookups.load(Ordering::SeqCst),
        allowed.load(Ordering::SeqCst),
        guarded.load(Ordering::SeqCst)
    );
    assert_eq!(
        guarded.load(Ordering::SeqCst),
        0,
        "the guarded address was reached"
    );
    assert!(
        allowed.load(Ordering::SeqCst) > 0,
        "the allowed address was never used"
    );
    assert!(policy_refusals > 0, "the guarded answer was never refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_to_guarded_addresses_are_not_followed() {
    let (canary_port, canary) = canaries().await;
    let targets = [
        format!("http://127.0.0.2:{canary_port}/mcp"),
        format!("http://[::ffff:127.0.0.2]:{canary_port}/mcp"),
        format!("http://2130706434:{canary_port}/mcp"),
        format!("http://localhost:{canary_port}/mcp"),
        format!("http://127.0.0.1:{canary_port}/mcp"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://metadata.google.internal/computeMetadata/v1/".to_owned(),
        "http://10.0.0.1/mcp".to_owned(),
        "file:///etc/passwd".to_owned(),
    ];
    let server = opened_server(Arc::new(StaticHostLookup::default())).await;
    let token = member_token(&server, "ssrf member", "chat:use").await;
    let mut refused = 0;
    for target in &targets {
        for status in [
            "307 Temporary Redirect",
            "302 Found",
            "308 Permanent Redirect",
        ] {
            let answer = format!(
                "HTTP/1.1 {status}\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let (port, _) = listener(SocketAddr::from(([127, 0, 0, 1], 0)), Some(answer)).await;
            let (events, unavailable) = turn(
                &server,
                &token,
                json!([
                    {"name": "http", "url": format!("http://127.0.0.1:{port}/mcp")},
                    {"name": "sse", "url": format!("http://127.0.0.1:{port}/sse"), "transport": "sse"},
                ]),
            )
            .await;
            assert_eq!(unavailable.len(), 2, "{status} to {target}: {events:#?}");
            refused += unavailable.len();
        }
    }
    println!(
        "SSRF battery (chat, redirects): {} redirects (3 statuses x {} targets x 2 transports), \
         {refused} not followed, {} connections to the canaries",
        targets.len() * 6,
        targets.len(),
        hits(&canary)
    );
    assert_eq!(hits(&canary), 0, "a redirect was followed to a canary");
}
