//! Memory per idle MCP session: `count` sessions opened with bare HTTP (`initialize`, then
//! `notifications/initialized`, nothing else), so the client side holds only their ids and
//! the growth of this process's RSS is the server's (and the gateway's) for those sessions.

use crate::support::{Stack, rss_kib};
use serde_json::json;

const PROTOCOL_VERSION: &str = "2025-06-18";

/// KiB of RSS per session while `count` idle sessions are open at `url`; they are closed
/// (`DELETE`) afterwards.
pub async fn kib_per_idle_session(stack: &Stack, url: &str, count: usize) -> f64 {
    let before = rss_kib();
    let mut session_ids = Vec::with_capacity(count);
    for _ in 0..count {
        session_ids.push(open_session(stack, url).await);
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let during = rss_kib();
    for session_id in session_ids {
        let _ = stack
            .client
            .delete(url)
            .bearer_auth(&stack.token)
            .header("mcp-session-id", session_id)
            .send()
            .await;
    }
    during.saturating_sub(before) as f64 / count as f64
}

async fn open_session(stack: &Stack, url: &str) -> String {
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "idle-session", "version": "1.0.0"}
        }
    });
    let answer = post(stack, url, None, &initialize).await;
    let session_id = answer
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .expect("initialize answers with a session id")
        .to_owned();
    let _ = answer.bytes().await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(stack, url, Some(&session_id), &initialized).await;
    session_id
}

async fn post(
    stack: &Stack,
    url: &str,
    session_id: Option<&str>,
    body: &serde_json::Value,
) -> reqwest::Response {
    let mut request = stack
        .client
        .post(url)
        .bearer_auth(&stack.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL_VERSION)
        .json(body);
    if let Some(session_id) = session_id {
        request = request.header("mcp-session-id", session_id);
    }
    let answer = request.send().await.unwrap();
    assert!(answer.status().is_success(), "{}", answer.status());
    answer
}
