//! List changes from a stateless 2026-07-28 upstream (an MCP Python SDK 2.x server,
//! tests/fixtures/mcp2_server.py): such a server sends them only on a `subscriptions/listen`
//! stream, so the session opens one and routes what arrives like an `initialize` session's
//! `list_changed` notifications (the registry's resync on them: crates/registry's tests).

use crate::support::{caller, client, context, eventually, free_port, mcp2_server, remote_server};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::{ServerId, TransportKind};
use switchboard_mcp_client::{ListChangeKind, McpClient, UpstreamServer};

async fn call(client: &McpClient, server: &UpstreamServer, tool: &str, name: &str) {
    let snapshot = client
        .fetch_capabilities(server, &caller("ada"))
        .await
        .unwrap();
    let definition = snapshot
        .tools
        .iter()
        .find(|candidate| candidate.name == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"));
    let result = client
        .call_tool(server, definition, json!({"name": name}), &context("ada"))
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.text_for_model());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_arrive_on_a_listen_stream() {
    let peer = mcp2_server(free_port());
    let client = client();
    let changes: Arc<Mutex<Vec<(ServerId, ListChangeKind)>>> = Arc::default();
    let recorded = changes.clone();
    client.on_list_changed(Arc::new(move |server_id, kind| {
        recorded.lock().unwrap().push((server_id.clone(), kind))
    }));
    let server = remote_server(
        "py2",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{}/mcp", peer.port),
    );
    let first = client
        .fetch_capabilities(&server, &caller("ada"))
        .await
        .unwrap();
    assert_eq!(first.server.protocol_version, "2026-07-28");
    assert!(!first.tools.iter().any(|tool| tool.name == "fresh_tool"));

    let heard = |kind: ListChangeKind| {
        let changes = changes.clone();
        let server_id = server.id.clone();
        move || {
            changes
                .lock()
                .unwrap()
                .iter()
                .any(|change| change == &(server_id.clone(), kind))
        }
    };
    call(&client, &server, "add_tool", "fresh_tool").await;
    assert!(
        eventually(Duration::from_secs(10), heard(ListChangeKind::Tools)).await,
        "no tools list change heard: {:?}",
        changes.lock().unwrap()
    );
    let after = client
        .fetch_capabilities(&server, &caller("ada"))
        .await
        .unwrap();
    assert!(after.tools.iter().any(|tool| tool.name == "fresh_tool"));

    call(&client, &server, "add_prompt", "fresh_prompt").await;
    assert!(eventually(Duration::from_secs(10), heard(ListChangeKind::Prompts)).await);
    call(&client, &server, "add_resource", "fresh_resource").await;
    assert!(eventually(Duration::from_secs(10), heard(ListChangeKind::Resources)).await);
    client.shutdown().await;
}
