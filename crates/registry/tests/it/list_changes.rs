//! A stateless 2026-07-28 upstream (an MCP Python SDK 2.x server, mcp-client's
//! tests/fixtures/mcp2_server.py) announces a list change on its `subscriptions/listen` stream;
//! the registry resyncs the server and the store holds the new tool — also when the session
//! that heard it was not opened through the registry (a chat turn or the gateway builds its
//! upstreams itself) and nothing synced the server in this process.

use crate::support::{free_port, mcp2_server, quick_config, registry_with, store};
use serde_json::json;
use std::time::Duration;
use switchboard_core::TransportKind;
use switchboard_core::WorkspaceId;
use switchboard_mcp_client::{CallContext, Caller};
use switchboard_registry::CapabilityState;
use switchboard_store::{NewServer, ServerRecord, Store};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_resyncs_a_stateless_server_after_a_list_change() {
    let peer = mcp2_server(free_port());
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(&store, quick_config());
    let record = create_py2(&store, &workspace, peer.port).await;
    let report = registry.sync_record(&record).await;
    assert_eq!(report.state, CapabilityState::Synced, "{:?}", report.error);
    let context = CallContext::new(Caller {
        user_id: "ada".into(),
        conversation_id: None,
    });
    registry
        .call_tool(
            &workspace,
            &record.id,
            "add_tool",
            json!({"name": "announced_tool"}),
            &context,
            None,
        )
        .await
        .unwrap();
    until_stored(&store, &workspace, &record, "announced_tool").await;
    registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_on_a_session_opened_outside_the_registry_resyncs_the_server() {
    let peer = mcp2_server(free_port());
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(&store, quick_config());
    let record = create_py2(&store, &workspace, peer.port).await;
    // As a chat turn or the gateway does: the upstream built from the record, the call made
    // on the client's shared session; the registry has never synced or built this server.
    let upstream = switchboard_registry::upstream::upstream_for_record(
        &record,
        store.server_secrets(&workspace, &record.id).await.unwrap(),
    )
    .unwrap();
    let client = registry.client();
    let caller = Caller {
        user_id: "ada".into(),
        conversation_id: None,
    };
    let snapshot = client.fetch_capabilities(&upstream, &caller).await.unwrap();
    let add_tool = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "add_tool")
        .unwrap();
    client
        .call_tool(
            &upstream,
            add_tool,
            json!({"name": "heard_elsewhere"}),
            &CallContext::new(caller),
        )
        .await
        .unwrap();
    until_stored(&store, &workspace, &record, "heard_elsewhere").await;
    registry.shutdown().await;
}

async fn create_py2(store: &Store, workspace: &WorkspaceId, port: u16) -> ServerRecord {
    store
        .create_server(
            workspace,
            NewServer::remote(
                "py2",
                TransportKind::StreamableHttp,
                format!("http://127.0.0.1:{port}/mcp"),
            ),
        )
        .await
        .unwrap()
}

/// Waits (10 s at most) until the store holds `tool` among the server's tools.
async fn until_stored(store: &Store, workspace: &WorkspaceId, record: &ServerRecord, tool: &str) {
    let mut stored = Vec::new();
    for _ in 0..100 {
        stored = store
            .list_server_tools(workspace, &record.id)
            .await
            .unwrap();
        if stored.iter().any(|stored| stored.name == tool) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "the registry did not resync: {:?}",
        stored.iter().map(|tool| &tool.name).collect::<Vec<_>>()
    );
}
