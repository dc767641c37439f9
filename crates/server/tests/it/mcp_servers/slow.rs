//! `latency` and `slow` in `/api/mcp/servers`: servers measured through the real client, with
//! the misbehaving stdio server of mcp-client's fault tests as upstream — its `work` tool
//! sleeps for `seconds` in `progress` mode and answers at once in `normal` mode, and
//! `slow_init` delays its handshake. `mcp.slow_call_ms` is 300 here.

use crate::support::{TestServer, test_config};
use crate::support::{json_of, send};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_registry::ServerRegistry;

fn misbehaving_server() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../mcp-client/tests/fixtures/misbehaving_server.py");
    path.canonicalize().unwrap().to_string_lossy().into_owned()
}

async fn start() -> TestServer {
    TestServer::start_with(
        test_config(),
        |router| router,
        |state| {
            let config = McpClientConfig {
                slow_call_ms: 300,
                ..McpClientConfig::default()
            };
            let registry =
                ServerRegistry::new(McpClient::new(config).unwrap(), state.store.clone());
            state.with_mcp_registry(registry)
        },
    )
    .await
}

async fn add(server: &TestServer, name: &str, mode: &str, extra: Value) -> String {
    let mut body = json!({
        "name": name,
        "transport": "stdio",
        "command": "python3",
        "args": [misbehaving_server(), mode],
    });
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    let created = json_of(
        send(
            server,
            "POST",
            "/api/mcp/servers",
            &server.owner_token,
            Some(body),
        )
        .await,
        201,
    )
    .await;
    created["id"].as_str().unwrap().to_owned()
}

async fn view(server: &TestServer, id: &str) -> Value {
    json_of(
        send(
            server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &server.owner_token,
            None,
        )
        .await,
        200,
    )
    .await
}

async fn synced(server: &TestServer, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = view(server, id).await;
        if view["sync_status"] == "synced" || Instant::now() > deadline {
            assert_eq!(view["sync_status"], "synced", "{view}");
            return view;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn work(server: &TestServer, id: &str, seconds: f64) {
    let called = json_of(
        send(
            server,
            "POST",
            &format!("/api/mcp/servers/{id}/tools/work/call"),
            &server.owner_token,
            Some(json!({"arguments": {"seconds": seconds}})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(called["isError"], false, "{called}");
}

fn millis(view: &Value, figure: &str) -> u64 {
    view["latency"][figure]
        .as_u64()
        .unwrap_or_else(|| panic!("no latency.{figure} in {view}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_calls_make_a_server_slow_and_fast_ones_do_not() {
    let server = start().await;
    let slowpoke = add(&server, "slowpoke", "progress", json!({})).await;
    let quick = add(&server, "quick", "normal", json!({})).await;

    // Synced: its tools/list page and the session start are measured, both quick.
    let before = synced(&server, &slowpoke).await;
    assert_eq!(before["slow"], false, "{before}");
    assert_eq!(before["slow_reason"], Value::Null);
    assert!(millis(&before, "samples") >= 1, "{before}");
    assert!(millis(&before, "last_start_ms") < 5_000, "{before}");
    synced(&server, &quick).await;

    for _ in 0..3 {
        work(&server, &slowpoke, 0.5).await;
        work(&server, &quick, 0.5).await;
    }

    let listed = json_of(
        send(
            &server,
            "GET",
            "/api/mcp/servers",
            &server.owner_token,
            None,
        )
        .await,
        200,
    )
    .await;
    let listed_view = |id: &str| {
        listed["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|view| view["id"] == id)
            .cloned()
            .unwrap()
    };
    let slow_view = listed_view(&slowpoke);
    assert_eq!(slow_view["slow"], true, "{slow_view}");
    assert_eq!(slow_view["slow_reason"], "calls", "{slow_view}");
    // One list page and three calls of about 0.5 s: the median is a call.
    assert!(millis(&slow_view, "samples") >= 4, "{slow_view}");
    let p50 = millis(&slow_view, "recent_p50_ms");
    assert!((500..5_000).contains(&p50), "{slow_view}");
    assert!(millis(&slow_view, "recent_max_ms") >= p50, "{slow_view}");
    assert_eq!(view(&server, &slowpoke).await["slow"], true);

    let quick_view = listed_view(&quick);
    assert_eq!(quick_view["slow"], false, "{quick_view}");
    assert!(millis(&quick_view, "samples") >= 4, "{quick_view}");
    assert!(millis(&quick_view, "recent_p50_ms") < 300, "{quick_view}");

    // An edit closes the server's sessions: the old figures say nothing about the new
    // configuration and are forgotten.
    let version = slow_view["version"].as_u64().unwrap();
    json_of(
        send(
            &server,
            "PATCH",
            &format!("/api/mcp/servers/{slowpoke}"),
            &server.owner_token,
            Some(json!({"version": version, "timeout_ms": 20_000})),
        )
        .await,
        200,
    )
    .await;
    let edited = view(&server, &slowpoke).await;
    assert_eq!(edited["slow"], false, "{edited}");
    assert!(millis(&edited, "samples") <= 1, "{edited}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_longer_than_half_the_init_timeout_is_slow() {
    let server = start().await;
    // The handshake takes 1 s of the 1.6 s this server allows.
    let sluggish = add(
        &server,
        "sluggish",
        "slow_init",
        json!({"init_timeout_ms": 1600, "env": {"SLOW_INIT_SECS": "1"}}),
    )
    .await;
    let view = synced(&server, &sluggish).await;
    assert_eq!(view["slow"], true, "{view}");
    assert_eq!(view["slow_reason"], "start", "{view}");
    let started = millis(&view, "last_start_ms");
    assert!((1_000..1_600).contains(&started), "{view}");
    // Its calls are quick: the start alone makes it slow.
    assert!(millis(&view, "recent_p50_ms") < 300, "{view}");
}
