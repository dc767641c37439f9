//! The product wiring on a real (SQLite) store: tokens verified by the store, the sample graph
//! loaded once and surviving a restart, changes made through MCP persisted, and the `kg`
//! upstream registered once.

use crate::answer_of;
use axum::Router;
use serde_json::json;
use switchboard_core::{ScopeSet, WorkspaceId};
use switchboard_mcp_server::{
    KG_UPSTREAM_NAME, KgConfig, KnowledgeGraphService, OWN_KG_ENDPOINT_MARKER, register_kg_upstream,
};
use switchboard_store::{DatabaseConfig, NewToken, SecretCipher, Store};
use tokio_util::sync::CancellationToken;

async fn open(data_dir: &std::path::Path, cipher: SecretCipher) -> Store {
    Store::open(&DatabaseConfig::default(), data_dir, cipher)
        .await
        .expect("open SQLite store")
}

async fn serve(service: &KnowledgeGraphService, shutdown: CancellationToken) -> String {
    let router: Router = service.router(shutdown.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .unwrap();
    });
    format!("http://{address}/mcp")
}

/// A 2026-07-28 (stateless) request with its routing headers.
async fn call(url: &str, token: &str, body: serde_json::Value) -> serde_json::Value {
    let name = body["params"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let response = switchboard_test_support::http_client::http_client()
        .post(url)
        .header("mcp-method", body["method"].as_str().unwrap())
        .header("mcp-name", name)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    answer_of(response).await
}

fn tool_call(name: &str, arguments: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

#[tokio::test]
async fn store_backed_graphs_survive_a_restart_and_tokens_come_from_the_store() {
    let data_dir = tempfile::tempdir().unwrap();
    let key = [7u8; 32];
    let store = open(data_dir.path(), SecretCipher::from_key_bytes(key)).await;
    let bootstrapped = store
        .bootstrap_default(None)
        .await
        .unwrap()
        .expect("empty store");
    let workspace: WorkspaceId = bootstrapped.workspace.id.clone();
    let reader = store
        .create_token(
            &workspace,
            NewToken {
                user_id: bootstrapped.owner.id.clone(),
                name: "reader".into(),
                scopes: ScopeSet::parse_list("schema:read data:read").unwrap(),
                expires_at: None,
            },
        )
        .await
        .unwrap();
    let owner_token = bootstrapped.plaintext.expose().to_owned();

    let service = KnowledgeGraphService::for_store(
        store.clone(),
        KgConfig::default(),
        Some(workspace.clone()),
    )
    .unwrap();
    assert!(service.load_sample_if_configured().await.unwrap());
    assert!(
        !service.load_sample_if_configured().await.unwrap(),
        "only on first start"
    );
    let shutdown = CancellationToken::new();
    let url = serve(&service, shutdown.clone()).await;

    let version = call(
        &url,
        reader.plaintext.expose(),
        tool_call("schema_version", json!({})),
    )
    .await;
    assert_eq!(version["result"]["structuredContent"]["sequence"], 4);
    let denied = call(
        &url,
        reader.plaintext.expose(),
        tool_call(
            "create_object",
            json!({"type": "Tag", "properties": {"name": "x"}}),
        ),
    )
    .await;
    assert_eq!(denied["error"]["code"], -32001);
    let created = call(
        &url,
        &owner_token,
        tool_call(
            "create_object",
            json!({"type": "Tag", "id": "tag-durable", "properties": {"name": "durable"}}),
        ),
    )
    .await;
    assert_eq!(
        created["result"]["structuredContent"]["object"]["id"],
        "tag-durable"
    );
    store
        .revoke_token(&workspace, &reader.record.id)
        .await
        .unwrap();
    shutdown.cancel();
    store.close().await;

    // Restart: a new store handle and a new service see the same graph.
    let store = open(data_dir.path(), SecretCipher::from_key_bytes(key)).await;
    let service = KnowledgeGraphService::for_store(
        store.clone(),
        KgConfig::default(),
        Some(workspace.clone()),
    )
    .unwrap();
    assert!(!service.load_sample_if_configured().await.unwrap());
    let graph = service.graphs().workspace(&workspace).await.unwrap();
    assert_eq!(
        graph.read().object("tag-durable").unwrap().label(),
        "durable"
    );
    assert_eq!(graph.read().history().versions().count(), 4);
    let shutdown = CancellationToken::new();
    let url = serve(&service, shutdown.clone()).await;
    let revoked = switchboard_test_support::http_client::http_client()
        .post(&url)
        .bearer_auth(reader.plaintext.expose())
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "schema_version")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(tool_call("schema_version", json!({})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), 401, "revoked tokens are refused");
    shutdown.cancel();

    assert!(
        register_kg_upstream(&store, &workspace, "http://127.0.0.1:8080/mcp")
            .await
            .unwrap()
    );
    assert!(
        !register_kg_upstream(&store, &workspace, "http://127.0.0.1:8080/mcp")
            .await
            .unwrap()
    );
    let upstream = store
        .find_server_by_name(&workspace, KG_UPSTREAM_NAME)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(upstream.url.as_deref(), Some("http://127.0.0.1:8080/mcp"));
    assert_eq!(upstream.connection.extra[OWN_KG_ENDPOINT_MARKER], true);
    store.close().await;
}
