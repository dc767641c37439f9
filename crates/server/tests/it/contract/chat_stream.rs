//! The SSE event stream of one scripted turn, as a client reads it: the model calls
//! `server-everything`'s `echo` (asked about, approved, run), then a tool that does not exist
//! (an error result the model gets back), then the model fails (an `error` event, then `done`).

use crate::support::approvals::{echo_call, start, until_approval};
use crate::support::snapshot::{Stable, settings};
use serde_json::json;
use switchboard_approvals::ApprovalConfig;
use switchboard_test_support::fake_openai::{ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_with_an_approved_call_a_failed_call_and_a_model_error() {
    let (fake, server, _) = start(ApprovalConfig::default()).await;
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call(
        "call_echo",
        "hello",
    )]));
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_missing",
        "everything__no_such_tool",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::error_status(400, "the model refused"));

    let mut stream = server.ask(&server.alice, "echo hello").await;
    let (asked, mut events) = until_approval(&mut stream).await;
    let (status, decided) = server
        .decide(&server.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{decided}");
    events.extend(stream.until_done().await);

    let mut stable = Stable::new();
    let transcript = stable.all(&events);
    let decision = stable.of(&decided);
    settings().bind(|| {
        insta::assert_json_snapshot!("chat_stream_approved_failed_and_error", transcript);
        insta::assert_json_snapshot!("approval_decision", decision);
    });
}
