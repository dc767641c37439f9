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

/// A resource watched on a 2026-07-28 session (no `resources/subscribe` there): the watch is a
/// listen stream naming the URI, and the server's update reaches the watcher on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_resource_hears_its_updates_on_a_listen_stream() {
    let peer = mcp2_server(free_port());
    let client = client();
    let server = remote_server(
        "py2",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{}/mcp", peer.port),
    );
    let mut watch = client
        .watch_resource(&server, "fixture://first", &context("ada"))
        .await
        .expect("the listen stream is acknowledged")
        .expect("the server declares resources.subscribe");
    call(&client, &server, "touch_resource", "other").await;
    call(&client, &server, "touch_resource", "first").await;
    let heard = tokio::time::timeout(Duration::from_secs(10), watch.next_update())
        .await
        .expect("an update within 10 s");
    assert_eq!(
        heard.as_deref(),
        Some("fixture://first"),
        "only the watched URI's update is heard"
    );
    drop(watch);
    client.shutdown().await;
}

/// Fills in every form with a fixed name, keeping what it was asked.
#[derive(Debug, Default)]
struct NamePerson {
    asked: Mutex<Vec<switchboard_mcp_client::ElicitationRequest>>,
}

impl switchboard_mcp_client::ElicitationResponder for NamePerson {
    fn respond(
        &self,
        request: switchboard_mcp_client::ElicitationRequest,
    ) -> futures::future::BoxFuture<'static, switchboard_mcp_client::ElicitationResponse> {
        self.asked.lock().unwrap().push(request);
        Box::pin(std::future::ready(
            switchboard_mcp_client::ElicitationResponse::Accept(json!({"name": "Ada"})),
        ))
    }
}

/// A 2026-07-28 tool that needs a form answers `input_required` (the SDK's `Elicit` resolver,
/// SEP-2322) instead of sending a request: the client asks the same person it would have asked
/// for a request, sends the call again with the answer, and gets the tool's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_asking_for_input_gets_it_in_a_second_round() {
    let peer = mcp2_server(free_port());
    let person = Arc::new(NamePerson::default());
    let client = switchboard_mcp_client::McpClient::builder(crate::support::quick_config())
        .elicitation(person.clone())
        .build()
        .unwrap();
    let server = remote_server(
        "py2",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{}/mcp", peer.port),
    );
    let snapshot = client
        .fetch_capabilities(&server, &caller("ada"))
        .await
        .unwrap();
    let greet = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "greet")
        .expect("the greet tool");
    let mut call_context = context("ada");
    call_context.caller.conversation_id = Some("conversation-7".into());
    let result = client
        .call_tool(&server, greet, json!({"greeting": "Hello"}), &call_context)
        .await
        .unwrap();
    assert!(!result.is_error, "{}", result.text_for_model());
    assert_eq!(result.text_for_model(), "Hello, Ada!");
    let asked = person.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].server_name, "py2");
    assert_eq!(asked[0].message, "Hello: what is your name?");
    assert_eq!(
        asked[0].conversation_id.as_ref().map(|id| id.as_str()),
        Some("conversation-7")
    );
    client.shutdown().await;
}
