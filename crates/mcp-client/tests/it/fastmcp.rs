//! A Python FastMCP server (MCP Python SDK 1.x, tests/fixtures/fastmcp_server.py) over legacy
//! SSE and Streamable HTTP: paginated lists, calls, progress, log messages, list-changed
//! notifications, and transparent re-initialization after `404 Session not found`.

use crate::support::{caller, client, context, eventually, fastmcp, free_port, remote_server};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::{ServerId, TransportKind};
use switchboard_mcp_client::{CallEvent, ListChangeKind, McpClient, UpstreamServer};
use tokio::sync::mpsc;

async fn exercise(client: &McpClient, server: &UpstreamServer) {
    let snapshot = client
        .fetch_capabilities(server, &caller("bob"))
        .await
        .unwrap();
    // 7 hand-written tools + 25 generated, served 10 per page.
    assert_eq!(
        snapshot.tools.len(),
        32,
        "{:?}",
        snapshot
            .tools
            .iter()
            .map(|tool| &tool.name)
            .collect::<Vec<_>>()
    );
    assert!(
        snapshot
            .tools
            .iter()
            .any(|tool| tool.name == "generated_24")
    );
    assert_eq!(snapshot.resources.len(), 15);
    assert_eq!(snapshot.prompts.len(), 13);
    let find = |name: &str| {
        snapshot
            .tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap()
            .clone()
    };

    let sum = client
        .call_tool(
            server,
            &find("add"),
            json!({"a": 1.5, "b": 2}),
            &context("bob"),
        )
        .await
        .unwrap();
    assert_eq!(sum.text_for_model(), "3.5");

    let (events, mut received) = mpsc::channel(64);
    let mut with_events = context("bob");
    with_events.events = Some(events);
    let slow = client
        .call_tool(server, &find("slow"), json!({"seconds": 0.6}), &with_events)
        .await
        .unwrap();
    assert!(slow.text_for_model().contains("slept"));
    // What the server sent before its answer is in before the call returns, on every run:
    // nothing is waited for here.
    let progress = arrived(&mut received);
    assert_eq!(progress.len(), 3, "{progress:?}");
    for event in progress {
        let CallEvent::Progress { message, .. } = event else {
            panic!("only progress was sent: {event:?}");
        };
        assert!(message.unwrap_or_default().starts_with("step"));
    }
    let logged = client
        .call_tool(server, &find("log_and_answer"), json!({}), &with_events)
        .await
        .unwrap();
    assert_eq!(logged.text_for_model(), "logged");
    assert_eq!(
        arrived(&mut received),
        vec![CallEvent::Log {
            level: "info".to_owned(),
            logger: None,
            data: json!("the fixture is working"),
        }]
    );

    // A burst right before the answer: all of it is in before the call returns, in the order
    // the server sent it (a log message, then a progress report, 150 times).
    let (burst, mut burst_received) = mpsc::channel(512);
    let mut with_burst = context("bob");
    with_burst.events = Some(burst);
    let chatty = client
        .call_tool(server, &find("chatty"), json!({"count": 150}), &with_burst)
        .await
        .unwrap();
    assert_eq!(chatty.text_for_model(), "sent 150");
    let received: Vec<String> = arrived(&mut burst_received)
        .into_iter()
        .map(|event| match event {
            CallEvent::Log { data, .. } => data.as_str().unwrap().to_owned(),
            CallEvent::Progress {
                progress, total, ..
            } => format!("progress {progress}/{}", total.unwrap_or_default()),
            other => panic!("only log messages and progress were sent: {other:?}"),
        })
        .collect();
    let sent: Vec<String> = (0..150)
        .flat_map(|index| {
            [
                format!("message {index}"),
                format!("progress {}/150", index + 1),
            ]
        })
        .collect();
    assert_eq!(received, sent);

    let item = client
        .read_resource(server, "fixture://item/7", &context("bob"))
        .await
        .unwrap();
    assert_eq!(item[0].text.as_deref(), Some("contents of item 7"));
    let prompt = client
        .get_prompt(
            server,
            "greet",
            json!({"name": "Ada"}).as_object().unwrap().clone(),
            &context("bob"),
        )
        .await
        .unwrap();
    assert!(serde_json::to_string(&prompt).unwrap().contains("Ada"));
}

/// The events already in the channel, without waiting.
fn arrived(received: &mut mpsc::Receiver<CallEvent>) -> Vec<CallEvent> {
    std::iter::from_fn(|| received.try_recv().ok()).collect()
}

async fn list_changed_is_reported(client: &McpClient, server: &UpstreamServer) {
    let changes: Arc<Mutex<Vec<(ServerId, ListChangeKind)>>> = Arc::default();
    let recorded = changes.clone();
    client.on_list_changed(Arc::new(move |server_id, kind| {
        recorded.lock().unwrap().push((server_id.clone(), kind))
    }));
    // The handler applies to sessions started after it was set.
    client.close_server(&server.id).await;
    let snapshot = client
        .fetch_capabilities(server, &caller("bob"))
        .await
        .unwrap();
    let add_tool = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "add_tool")
        .unwrap();
    client
        .call_tool(
            server,
            add_tool,
            json!({"name": "fresh_tool"}),
            &context("bob"),
        )
        .await
        .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || !changes
            .lock()
            .unwrap()
            .is_empty())
        .await
    );
    assert_eq!(
        changes.lock().unwrap()[0],
        (server.id.clone(), ListChangeKind::Tools)
    );
    let resynced = client
        .fetch_capabilities(server, &caller("bob"))
        .await
        .unwrap();
    assert!(resynced.tools.iter().any(|tool| tool.name == "fresh_tool"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_streamable_http() {
    let peer = fastmcp("streamable-http", free_port());
    let client = client();
    let server = remote_server(
        "py_http",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{}/mcp", peer.port),
    );
    exercise(&client, &server).await;
    list_changed_is_reported(&client, &server).await;
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_legacy_sse() {
    let peer = fastmcp("sse", free_port());
    let client = client();
    let server = remote_server(
        "py_sse",
        TransportKind::Sse,
        &format!("http://127.0.0.1:{}/sse", peer.port),
    );
    exercise(&client, &server).await;
    list_changed_is_reported(&client, &server).await;
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_upstream_is_reinitialized_transparently() {
    let port = free_port();
    let mut peer = fastmcp("streamable-http", port);
    let client = client();
    let server = remote_server(
        "py_restart",
        TransportKind::StreamableHttp,
        &format!("http://127.0.0.1:{port}/mcp"),
    );
    let snapshot = client
        .fetch_capabilities(&server, &caller("bob"))
        .await
        .unwrap();
    let add = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "add")
        .unwrap()
        .clone();
    client
        .call_tool(&server, &add, json!({"a": 1, "b": 1}), &context("bob"))
        .await
        .unwrap();
    let session_before = client.session_statuses(&server.id);

    // A new server process knows nothing of our session: it answers 404 Session not found.
    peer.kill();
    let _restarted = fastmcp("streamable-http", port);
    let answer = client
        .call_tool(&server, &add, json!({"a": 2, "b": 2}), &context("bob"))
        .await
        .unwrap();
    assert_eq!(answer.text_for_model(), "4.0");
    // The same session carried on: rmcp re-initialized underneath, our slot did not restart.
    assert_eq!(client.session_statuses(&server.id), session_before);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_answers_are_refused_over_http_transports() {
    let config = switchboard_mcp_client::McpClientConfig {
        max_tool_response_bytes: 1024 * 1024,
        ..crate::support::quick_config()
    };
    for (transport, kind, path) in [
        ("streamable-http", TransportKind::StreamableHttp, "mcp"),
        ("sse", TransportKind::Sse, "sse"),
    ] {
        let peer = fastmcp(transport, free_port());
        let client = McpClient::new(config.clone()).unwrap();
        let server = remote_server(
            "py_big",
            kind,
            &format!("http://127.0.0.1:{}/{path}", peer.port),
        );
        let snapshot = client
            .fetch_capabilities(&server, &caller("bob"))
            .await
            .unwrap();
        let big = snapshot
            .tools
            .iter()
            .find(|tool| tool.name == "big")
            .unwrap();
        let started = std::time::Instant::now();
        let error = client
            .call_tool(&server, big, json!({"size": 3_000_000}), &context("bob"))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "response_too_large", "{transport}: {error}");
        assert!(started.elapsed() < Duration::from_secs(10), "{transport}");
        let fits = client
            .call_tool(&server, big, json!({"size": 1000}), &context("bob"))
            .await
            .unwrap();
        assert_eq!(
            fits.text_for_model().len(),
            1000,
            "{transport}: the server is still usable"
        );
        client.shutdown().await;
    }
}
