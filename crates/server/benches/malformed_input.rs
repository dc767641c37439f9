//! Figures for malformed input (issue 18, target 3).
//!
//! `cargo bench -p switchboard-server --bench malformed_input [-- COUNT [ROUNDS]]` starts the real server
//! (every engine running, chat on the offline model, request bodies capped at 64 KiB) on
//! 127.0.0.1 and sends, from a seeded generator shared with the CI test
//! (`tests/it/support/malformed.rs`): COUNT (default 100,000) malformed JSON-RPC requests to
//! `/mcp` and `/mcp/rpc`, COUNT / 5 malformed REST requests, and COUNT / 50 calls of a stdio
//! upstream that answers malformed (`tests/fixtures/malformed_upstream.py`). It prints the
//! requests sent per class, the status histogram, the 5xx and transport failures, the panics
//! counted by a panic hook, and the process's RSS after a warm-up and 5 s after each round
//! (client and server share the process, so the figures include the client's share).
//! `-- COUNT ROUNDS` repeats the whole series ROUNDS times (default 2): memory that a leak holds
//! grows round after round, while what the allocator keeps after the first burst does not
//! (glibc keeps freed memory in its per-thread arenas; `MALLOC_ARENA_MAX=2` in the environment
//! shows how much of the growth is that).

#[path = "../tests/it/support/malformed.rs"]
mod malformed_support;

use malformed_support::{
    CLOSED_BEFORE_BODY, PANICS, Probe, Rng, Tally, count_panics, malformed_upstream_script,
    mcp_probe, rest_probe, run, upstream_probe,
};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use switchboard_chat::{ChatConfig, ChatService, OwnEndpoints};
use switchboard_llm::LlmConfig;
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_registry::ServerRegistry;
use switchboard_server::{AppState, ServerConfig, run as serve};
use switchboard_store::{DatabaseConfig, SecretCipher, Store};
use tokio::net::TcpListener;

const SEED: u64 = 0x5eed_b3c4;
const CONCURRENCY: usize = 16;

fn status_kilobytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|line| line.starts_with(field))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kilobytes| kilobytes.parse().ok())
        .unwrap_or(0)
}

fn mib(kilobytes: u64) -> String {
    format!("{:.1} MiB", kilobytes as f64 / 1024.0)
}

/// Starts the server; returns its base URL, the owner's token and the store's directory.
async fn start() -> (String, String, tempfile::TempDir) {
    let data_dir = tempfile::tempdir().unwrap();
    let store = Store::open(
        &DatabaseConfig::default(),
        data_dir.path(),
        SecretCipher::generate(),
    )
    .await
    .unwrap();
    let token = store.bootstrap_default(None).await.unwrap().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let mcp = McpClient::new(McpClientConfig {
        tool_call_timeout_secs: 5,
        ..McpClientConfig::default()
    })
    .unwrap();
    let registry = ServerRegistry::new(mcp.clone(), store.clone());
    let chat = ChatService::builder(
        store.clone(),
        mcp,
        ChatConfig::default(),
        LlmConfig::default(),
    )
    .registry(registry.clone())
    .own_endpoints(OwnEndpoints::for_listener(address))
    .build()
    .unwrap();
    let config = ServerConfig {
        bind: address,
        max_request_body_bytes: malformed_support::BODY_LIMIT,
        body_read_timeout_secs: 2,
        ..ServerConfig::default()
    };
    let state = AppState::new(store, config)
        .with_mcp_registry(registry)
        .with_chat(chat);
    tokio::spawn(serve(listener, state, std::future::pending::<()>()));
    (
        format!("http://{address}"),
        token.plaintext.expose().to_owned(),
        data_dir,
    )
}

async fn register_upstream(client: &reqwest::Client, base: &str, token: &str) -> String {
    let body = format!(
        r#"{{"name":"malformed","transport":"stdio","command":"python3","args":[{:?}]}}"#,
        malformed_upstream_script()
    );
    let response = client
        .post(format!("{base}/api/mcp/servers"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201, "registering the stdio fixture");
    let created: serde_json::Value = response.json().await.unwrap();
    created["id"].as_str().unwrap().to_owned()
}

fn report(name: &str, tally: &Tally, took: Duration) {
    let sent: usize = tally.sent.values().sum();
    println!("{name}: {sent} requests in {:.1} s", took.as_secs_f64());
    println!("  per class: {:?}", tally.sent);
    let statuses: Vec<String> = tally
        .statuses
        .iter()
        .map(|(status, count)| match *status {
            0 => format!("no answer: {count}"),
            CLOSED_BEFORE_BODY => format!("oversized, closed while sending: {count}"),
            status => format!("{status}: {count}"),
        })
        .collect();
    println!("  statuses: {}", statuses.join(", "));
    let no_answer = tally.statuses.get(&0).copied().unwrap_or(0);
    println!(
        "  5xx: {}, transport failures: {no_answer}, sent again by hand after a transport error: {}",
        tally.server_errors() - no_answer,
        tally.resent
    );
    for failure in &tally.failures {
        println!("    {failure}");
    }
}

async fn phase(
    name: &str,
    client: &reqwest::Client,
    base: &str,
    token: &str,
    probes: impl Iterator<Item = Probe>,
    concurrency: usize,
) {
    let started = Instant::now();
    let tally = run(client, base, token, probes, concurrency).await;
    report(name, &tally, started.elapsed());
}

/// One round: COUNT malformed requests to `/mcp`, COUNT / 5 to the REST API, COUNT / 50 calls of
/// the malformed stdio upstream, each class from its own seed (the same in every round).
async fn round(count: usize, client: &reqwest::Client, base: &str, token: &str, upstream: &str) {
    let mut rng = Rng::new(SEED);
    let mcp = (0..count).map(move |_| mcp_probe(&mut rng));
    phase("/mcp and /mcp/rpc", client, base, token, mcp, CONCURRENCY).await;
    let mut rng = Rng::new(SEED + 1);
    let id = upstream.to_owned();
    let rest = (0..count / 5).map(move |_| rest_probe(&mut rng, &id));
    phase("REST API", client, base, token, rest, CONCURRENCY).await;
    let mut rng = Rng::new(SEED + 2);
    let id = upstream.to_owned();
    let stdio = (0..count / 50).map(move |_| upstream_probe(&mut rng, &id));
    let name = "stdio upstream (502 = malformed answer refused)";
    phase(name, client, base, token, stdio, 4).await;
}

fn growth(after: u64, before: u64) -> String {
    format!("{:+.1}%", (after as f64 / before as f64 - 1.0) * 100.0)
}

#[tokio::main]
async fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|argument| argument.parse().ok())
        .collect();
    let count = numbers.first().copied().unwrap_or(100_000);
    let rounds = numbers.get(1).copied().unwrap_or(2).max(1);
    count_panics();
    let (base, token, _data_dir) = start().await;
    let client = reqwest::Client::new();
    let upstream = register_upstream(&client, &base, &token).await;

    // Warm-up with another seed, so lazily built state is in the baseline.
    let mut warm = Rng::new(SEED ^ 1);
    let warm_up = (0..2_000)
        .map(|index| match index % 4 {
            0 => rest_probe(&mut warm, &upstream),
            1 if index % 40 == 1 => upstream_probe(&mut warm, &upstream),
            _ => mcp_probe(&mut warm),
        })
        .collect::<Vec<_>>();
    let _ = run(&client, &base, &token, warm_up.into_iter(), CONCURRENCY).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = status_kilobytes("VmRSS:");
    let mut previous = before;

    for number in 1..=rounds {
        println!("round {number} of {rounds}");
        round(count, &client, &base, &token, &upstream).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let after = status_kilobytes("VmRSS:");
        println!(
            "RSS 5 s after round {number}: {} ({} against the warm-up's {}, {} against the round before)",
            mib(after),
            growth(after, before),
            mib(before),
            growth(after, previous),
        );
        previous = after;
    }
    println!("panics: {}", PANICS.load(Ordering::SeqCst));
    println!("peak RSS: {}", mib(status_kilobytes("VmHWM:")));
}
