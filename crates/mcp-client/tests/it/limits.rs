//! The concurrency caps, through real stdio children (tests/fixtures/misbehaving_server.py):
//! calls beyond the per-conversation cap (across servers) or the per-server cap (across users)
//! wait for a place for at most their timeout and then fail `busy`, without reaching the
//! upstream; a caller who gives up while waiting leaves at once.

use crate::faults::{lines, misbehaving, tool};
use crate::support::{context, eventually, quick_config};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use switchboard_core::ConversationId;
use switchboard_mcp_client::{
    CallContext, Caller, McpClient, McpClientConfig, ToolResult, UpstreamError, UpstreamServer,
};
use tokio::task::JoinHandle;

fn in_conversation(user: &str, conversation: &str) -> CallContext {
    CallContext::new(Caller {
        user_id: user.into(),
        conversation_id: Some(ConversationId::from(conversation)),
    })
}

/// Starts a call of `work` in the background.
fn spawn_call(
    client: &McpClient,
    server: &UpstreamServer,
    context: CallContext,
) -> JoinHandle<Result<ToolResult, UpstreamError>> {
    let client = client.clone();
    let server = server.clone();
    tokio::spawn(async move {
        client
            .call_tool(&server, &tool("work"), json!({}), &context)
            .await
    })
}

async fn wait_in_flight(client: &McpClient, server: &UpstreamServer, count: usize) {
    assert!(
        eventually(Duration::from_secs(10), || client
            .session_statuses(&server.id)
            .iter()
            .map(|status| status.in_flight)
            .sum::<usize>()
            == count)
        .await,
        "expected {count} calls in flight on {}",
        server.name
    );
}

fn tool_calls_received(method_log: &Path) -> usize {
    lines(method_log)
        .iter()
        .filter(|method| *method == "tools/call")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_has_a_cap_across_servers_and_other_conversations_do_not_wait() {
    let client = McpClient::new(McpClientConfig {
        max_concurrent_calls_per_conversation: 2,
        ..quick_config()
    })
    .unwrap();
    let mut hanging = misbehaving("hanging", "hang", &[]);
    hanging.timeout_ms = Some(3000);
    let dir = tempfile::tempdir().unwrap();
    let method_log = dir.path().join("methods");
    let mut prompt = misbehaving("prompt", "normal", &[("METHOD_LOG", &method_log)]);
    prompt.timeout_ms = Some(600);
    // Start the prompt server's session first, so only calls are measured below.
    client
        .call_tool(&prompt, &tool("work"), json!({}), &context("ann"))
        .await
        .unwrap();

    let held = [
        spawn_call(&client, &hanging, in_conversation("ann", "c1")),
        spawn_call(&client, &hanging, in_conversation("ann", "c1")),
    ];
    wait_in_flight(&client, &hanging, 2).await;

    // A third call of c1, to another server: it waits its 600 ms, then is refused.
    let started = Instant::now();
    let error = client
        .call_tool(
            &prompt,
            &tool("work"),
            json!({}),
            &in_conversation("ann", "c1"),
        )
        .await
        .unwrap_err();
    let waited = started.elapsed();
    assert!(
        matches!(
            error,
            UpstreamError::Busy {
                scope: "conversation",
                limit: 2,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(error.code(), "busy");
    assert!(
        waited >= Duration::from_millis(550) && waited < Duration::from_millis(2500),
        "waited {waited:?}"
    );
    assert!(
        error.to_string().contains("the conversation limit is 2"),
        "{error}"
    );
    assert_eq!(
        tool_calls_received(&method_log),
        1,
        "the refused call never reached the upstream"
    );

    // Another conversation, and a call outside any conversation, go through meanwhile.
    for context in [in_conversation("ann", "c2"), context("bea")] {
        client
            .call_tool(&prompt, &tool("work"), json!({}), &context)
            .await
            .unwrap();
    }

    // When the held calls end (timed out), c1 has places again.
    for call in held {
        let error = call.await.unwrap().unwrap_err();
        assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    }
    client
        .call_tool(
            &prompt,
            &tool("work"),
            json!({}),
            &in_conversation("ann", "c1"),
        )
        .await
        .unwrap();
    assert_eq!(tool_calls_received(&method_log), 4);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_has_a_cap_across_users_and_a_waiting_caller_can_leave() {
    let client = McpClient::new(McpClientConfig {
        max_concurrent_calls_per_server: 2,
        ..quick_config()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let method_log = dir.path().join("methods");
    let mut hanging = misbehaving("hanging", "hang", &[("METHOD_LOG", &method_log)]);
    hanging.timeout_ms = Some(4000);
    let other = misbehaving("other", "normal", &[]);

    let held = [
        spawn_call(&client, &hanging, context("ann")),
        spawn_call(&client, &hanging, context("bea")),
    ];
    wait_in_flight(&client, &hanging, 2).await;

    // A third user waits for a place; when they give up, they leave the queue at once and
    // nothing is sent upstream.
    let waiting = context("cid");
    let cancellation = waiting.cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancellation.cancel();
    });
    let started = Instant::now();
    let error = client
        .call_tool(&hanging, &tool("work"), json!({}), &waiting)
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Cancelled), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "left the queue after {:?}",
        started.elapsed()
    );

    // With a shorter timeout (the server was changed meanwhile), a waiting call is refused
    // `busy` when it runs out.
    let mut shorter = hanging.clone();
    shorter.timeout_ms = Some(500);
    let started = Instant::now();
    let error = client
        .call_tool(&shorter, &tool("work"), json!({}), &context("dan"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            UpstreamError::Busy {
                scope: "server",
                limit: 2,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(450));

    // Other servers are not held up.
    client
        .call_tool(&other, &tool("work"), json!({}), &context("cid"))
        .await
        .unwrap();

    for call in held {
        let error = call.await.unwrap().unwrap_err();
        assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    }
    assert_eq!(
        tool_calls_received(&method_log),
        2,
        "only the two calls that had a place reached the upstream"
    );
    client.shutdown().await;
}
