//! Both protocol generations: `initialize` at every older revision, and the stateless
//! 2026-07-28 lifecycle (`server/discover`, per-request `_meta`, JSON answers, no session).

use crate::{DATA_READER, TestServer, answer_of, initialize_request};
use rmcp::model::{CallToolRequestParams, ErrorData, ProtocolVersion, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceError};
use serde_json::{Value, json};

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "switchboard-tests", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// An rmcp client that speaks only 2026-07-28 (`server/discover`, no session) as `DATA_READER`.
async fn discover_client(server: &TestServer) -> RunningService<RoleClient, ()> {
    let config =
        StreamableHttpClientTransportConfig::with_uri(server.url()).auth_header(DATA_READER);
    let transport = StreamableHttpClientTransport::from_config(config);
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    ().serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("discover")
}

/// The JSON-RPC error a tool call is answered with (panics when it succeeds).
async fn tool_error(
    client: &RunningService<RoleClient, ()>,
    name: &'static str,
    arguments: Value,
) -> ErrorData {
    let arguments = arguments.as_object().unwrap().clone();
    let outcome = client
        .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
        .await;
    match outcome {
        Err(ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error from {name}, got {other:?}"),
    }
}

#[tokio::test]
async fn initialize_negotiates_every_older_revision() {
    let server = TestServer::start().await;
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let response = server
            .post(Some(DATA_READER), &initialize_request(version), &[])
            .await;
        assert_eq!(response.status(), 200);
        assert!(response.headers().contains_key("mcp-session-id"));
        let answer = answer_of(response).await;
        assert_eq!(answer["result"]["protocolVersion"], version);
        assert_eq!(answer["result"]["serverInfo"]["name"], "switchboard-kg");
    }
}

#[tokio::test]
async fn discover_and_stateless_calls_need_no_session() {
    let server = TestServer::start().await;
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "server/discover"),
    ];
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}});
    let response = server.post(Some(DATA_READER), &discover, &headers).await;
    assert_eq!(response.status(), 200);
    assert!(!response.headers().contains_key("mcp-session-id"));
    let answer = answer_of(response).await;
    let versions = answer["result"]["supportedVersions"]
        .as_array()
        .expect("supported versions")
        .clone();
    assert!(
        versions.contains(&json!("2026-07-28")) && versions.contains(&json!("2025-11-25")),
        "{answer}"
    );

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "count_objects", "arguments": {"type": "Person"}, "_meta": meta()}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "count_objects"),
    ];
    let response = server.post(Some(DATA_READER), &call, &headers).await;
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let answer = answer_of(response).await;
    assert_eq!(answer["result"]["structuredContent"]["total"], 8);

    let mismatched = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "find_path"),
    ];
    let response = server.post(Some(DATA_READER), &call, &mismatched).await;
    assert_eq!(response.status(), 400, "Mcp-Name must match params.name");
    let unauthenticated = server.post(None, &call, &headers).await;
    assert_eq!(unauthenticated.status(), 401);
}

#[tokio::test]
async fn the_rmcp_client_works_in_discover_mode() {
    let server = TestServer::start().await;
    let client = discover_client(&server).await;
    let result = client
        .call_tool(CallToolRequestParams::new("schema_version"))
        .await
        .unwrap();
    assert_eq!(result.structured_content.unwrap()["sequence"], 4);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unknown_objects_are_32002_at_2026_07_28_while_unknown_resources_follow_the_revision() {
    let server = TestServer::start().await;
    let client = discover_client(&server).await;

    let error = tool_error(&client, "get_object", json!({"id": "no-such-object"})).await;
    assert_eq!(error.code.0, -32002, "{error:?}");
    assert!(
        error.message.contains("Person"),
        "lists the types: {}",
        error.message
    );

    let error = tool_error(&client, "count_objects", json!({"type": "Invoice"})).await;
    assert_eq!(error.code.0, -32002, "{error:?}");

    let unknown_resource = client
        .read_resource(ReadResourceRequestParams::new("kg://types/Invoice"))
        .await
        .expect_err("an unknown resource is an error");
    let ServiceError::McpError(error) = unknown_resource else {
        panic!("expected a JSON-RPC error, got {unknown_resource:?}");
    };
    assert_eq!(error.code.0, -32602, "2026-07-28 resources/read: {error:?}");
    client.cancel().await.unwrap();
}
