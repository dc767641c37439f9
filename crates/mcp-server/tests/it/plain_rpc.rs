//! `POST /mcp/rpc` as the design documents' simple client sends it: `Content-Type:
//! application/json` only (no `Accept` pair), `initialize` optional, no session header, one
//! `application/json` answer per request. `/mcp` keeps the strict Streamable HTTP rules.
//! Errors keep their JSON-RPC codes.

use crate::{CHAT_ONLY, DATA_READER, SCHEMA_READER, TestServer, initialize_request};
use serde_json::{Value, json};
use switchboard_mcp_server::KgConfig;

/// POSTs `body` the way a plain `fetch` does: only `Content-Type` (and the token).
async fn plain_post(
    server: &TestServer,
    path: &str,
    token: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = server
        .http
        .post(format!("{}{path}", server.base))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

/// Asserts a plain JSON answer without a session and returns it.
async fn json_answer(response: reqwest::Response) -> Value {
    let status = response.status();
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        response.headers().get("mcp-session-id").is_none(),
        "a session was made"
    );
    let text = response.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}: {text}"
    );
    serde_json::from_str(&text).unwrap()
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn a_plain_client_is_answered_with_json_without_accept_pair_or_session() {
    let server = TestServer::start().await;
    let listed = plain_post(
        &server,
        "/mcp/rpc",
        Some(SCHEMA_READER),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .await;
    let listed = json_answer(listed).await;
    assert_eq!(listed["id"], 1);
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"schema_version"), "{names:?}");

    let initialized = plain_post(
        &server,
        "/mcp/rpc",
        Some(SCHEMA_READER),
        &initialize_request("2025-06-18"),
    )
    .await;
    let initialized = json_answer(initialized).await;
    assert_eq!(
        initialized["result"]["serverInfo"]["name"],
        "switchboard-kg"
    );
    let notified = plain_post(
        &server,
        "/mcp/rpc",
        Some(SCHEMA_READER),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(notified.status(), 202);

    let version = plain_post(
        &server,
        "/mcp/rpc",
        Some(SCHEMA_READER),
        &call(3, "schema_version", json!({})),
    )
    .await;
    let version = json_answer(version).await;
    assert_eq!(version["id"], 3);
    let text = version["result"]["content"][0]["text"].as_str().unwrap();
    let parsed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(parsed["sequence"], 4);

    let strict = plain_post(
        &server,
        "/mcp",
        Some(SCHEMA_READER),
        &call(4, "schema_version", json!({})),
    )
    .await;
    assert_eq!(strict.status(), 406, "/mcp keeps the Streamable HTTP rules");
}

#[tokio::test]
async fn plain_json_rpc_errors_keep_their_codes() {
    let server = TestServer::start_with(KgConfig {
        rate_limit_per_minute: 1,
        rate_limit_burst: 1,
        ..KgConfig::default()
    })
    .await;
    let unknown_method = plain_post(
        &server,
        "/mcp/rpc",
        Some(DATA_READER),
        &json!({"jsonrpc": "2.0", "id": 1, "method": "foo/bar", "params": {}}),
    )
    .await;
    let unknown_method = json_answer(unknown_method).await;
    assert_eq!(unknown_method["error"]["code"], -32601);
    assert_eq!(
        unknown_method["error"]["message"],
        "method not found: foo/bar"
    );

    let missing_scope = plain_post(
        &server,
        "/mcp/rpc",
        Some(CHAT_ONLY),
        &call(2, "schema_version", json!({})),
    )
    .await;
    let missing_scope = json_answer(missing_scope).await;
    assert_eq!(missing_scope["error"]["code"], -32001, "{missing_scope}");
    assert_eq!(
        missing_scope["error"]["data"]["required_scope"],
        "schema:read"
    );

    let not_found = plain_post(
        &server,
        "/mcp/rpc",
        Some(DATA_READER),
        &call(3, "type_info", json!({"type_name": "Invoice"})),
    )
    .await;
    let not_found = json_answer(not_found).await;
    assert_eq!(not_found["error"]["code"], -32002, "{not_found}");

    let limited = plain_post(
        &server,
        "/mcp/rpc",
        Some(DATA_READER),
        &call(4, "schema_version", json!({})),
    )
    .await;
    let limited = json_answer(limited).await;
    assert_eq!(limited["error"]["code"], -32003, "{limited}");

    let anonymous = plain_post(
        &server,
        "/mcp/rpc",
        None,
        &call(5, "schema_version", json!({})),
    )
    .await;
    assert_eq!(anonymous.status(), 401);
    let anonymous: Value = anonymous.json().await.unwrap();
    assert_eq!(anonymous["error"]["code"], -32001);
}
