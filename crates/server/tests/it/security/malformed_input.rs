//! Malformed input, short CI version (issue 18, target 3; the bench
//! `benches/malformed_input.rs` sends 100,000 + 20,000): seeded malformed JSON-RPC to `/mcp` and
//! `/mcp/rpc`, malformed REST requests, and malformed answers from a stdio upstream, through
//! the real accept loop. Nothing may panic and nothing may answer 5xx; an upstream that answers
//! a call wrongly fails that call as a gateway error (502) with a typed body, and the session
//! keeps serving proper calls.

use crate::support::chat::{ChatOptions, ChatServer};
use crate::support::malformed::{
    PANICS, Rng, count_panics, malformed_upstream_script, mcp_probe, rest_probe, run,
    upstream_probe,
};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use switchboard_mcp_client::McpClientConfig;

const SEED: u64 = 0x5eed_0018;

/// A server with every engine running (chat included, offline model), whose MCP client gives
/// up on an upstream call after 5 s.
pub async fn start() -> ChatServer {
    let defaults = ChatOptions::default();
    ChatServer::start(ChatOptions {
        mcp: McpClientConfig {
            tool_call_timeout_secs: 5,
            ..defaults.mcp.clone()
        },
        ..defaults
    })
    .await
}

/// Registers the malformed stdio fixture; returns its id.
pub async fn register_malformed_upstream(server: &ChatServer) -> String {
    let response = server
        .client
        .post(server.url("/api/mcp/servers"))
        .bearer_auth(&server.token)
        .json(&json!({
            "name": "malformed",
            "transport": "stdio",
            "command": "python3",
            "args": [malformed_upstream_script()],
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    created["id"].as_str().unwrap().to_owned()
}

/// Calls the fixture's proper tool: the session must still serve it.
pub async fn proper_call_works(server: &ChatServer, id: &str) -> bool {
    let response = server
        .client
        .post(server.url(&format!("/api/mcp/servers/{id}/tools/ok/call")))
        .bearer_auth(&server.token)
        .json(&json!({"arguments": {}}))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap_or_default();
    status == 200 && body.to_string().contains("\"ok\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_and_upstream_answers_never_panic_or_answer_5xx() {
    count_panics();
    let server = start().await;
    let base = server.url("");
    let upstream = register_malformed_upstream(&server).await;
    let mut rng = Rng::new(SEED);

    let probes: Vec<_> = (0..3_000).map(|_| mcp_probe(&mut rng)).collect();
    let mcp = run(&server.client, &base, &server.token, probes.into_iter(), 8).await;
    assert_eq!(
        mcp.server_errors(),
        0,
        "/mcp: {:?}\n{:#?}",
        mcp.statuses,
        mcp.failures
    );

    let probes: Vec<_> = (0..1_000)
        .map(|_| rest_probe(&mut rng, &upstream))
        .collect();
    let rest = run(&server.client, &base, &server.token, probes.into_iter(), 8).await;
    assert_eq!(
        rest.server_errors(),
        0,
        "REST: {:?}\n{:#?}",
        rest.statuses,
        rest.failures
    );

    let probes: Vec<_> = (0..120)
        .map(|_| upstream_probe(&mut rng, &upstream))
        .collect();
    let stdio = run(&server.client, &base, &server.token, probes.into_iter(), 4).await;
    let unexpected: usize = stdio
        .statuses
        .iter()
        .filter(|(status, _)| !matches!(**status, 200 | 502))
        .map(|(_, count)| count)
        .sum();
    assert_eq!(
        unexpected, 0,
        "stdio upstream: {:?}\n{:#?}",
        stdio.statuses, stdio.failures
    );
    assert!(
        proper_call_works(&server, &upstream).await,
        "the upstream session stopped serving"
    );

    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "panics in the server");
}
