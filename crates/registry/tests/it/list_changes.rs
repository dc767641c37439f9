//! A stateless 2026-07-28 upstream (an MCP Python SDK 2.x server, mcp-client's
//! tests/fixtures/mcp2_server.py) announces a list change on its `subscriptions/listen` stream;
//! the registry resyncs the server and the store holds the new tool.

use crate::support::{free_port, mcp2_server, quick_config, registry_with, store};
use serde_json::json;
use std::time::Duration;
use switchboard_core::TransportKind;
use switchboard_mcp_client::{CallContext, Caller};
use switchboard_registry::CapabilityState;
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_resyncs_a_stateless_server_after_a_list_change() {
    let peer = mcp2_server(free_port());
    let dir = tempfile::tempdir().unwrap();
    let (store, workspace) = store(&dir).await;
    let registry = registry_with(&store, quick_config());
    let record = store
        .create_server(
            &workspace,
            NewServer {
                name: "py2".into(),
                transport: TransportKind::StreamableHttp,
                url: Some(format!("http://127.0.0.1:{}/mcp", peer.port)),
                command: None,
                args: vec![],
                connection: ServerConnectionConfig::default(),
                secrets: ServerSecrets::default(),
                is_active: true,
            },
        )
        .await
        .unwrap();
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
    let mut stored = Vec::new();
    for _ in 0..100 {
        stored = store
            .list_server_tools(&workspace, &record.id)
            .await
            .unwrap();
        if stored.iter().any(|tool| tool.name == "announced_tool") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        stored.iter().any(|tool| tool.name == "announced_tool"),
        "the registry did not resync: {:?}",
        stored.iter().map(|tool| &tool.name).collect::<Vec<_>>()
    );
    registry.shutdown().await;
}
