//! A memory bomb through a chat turn (issue 18, target 7): the model calls a tool whose
//! legacy HTTP+SSE upstream answers with a 1 GiB event. The call fails with a clear
//! `response_too_large` error that goes back to the model, the answer completes, peak memory
//! grows by at most 2 × the cap plus a fixed slack, and the next turn calls the same server
//! successfully. (Each bomb's own bound is measured in `mcp-client`'s `bombs` tests.)

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type, remote_server};
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use switchboard_core::TransportKind;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::upstream_bombs::{BOMB, legacy_bomb_server};

const CAP: usize = 4 * 1024 * 1024;
const SLACK: u64 = 8 * 1024 * 1024;

/// `VmHWM` (peak resident set) of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kilobytes: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap();
    kilobytes * 1024
}

fn tool_event<'a>(events: &'a [Value], call_id: &str, status: &str) -> Option<&'a Value> {
    of_type(events, "mcp_tool")
        .into_iter()
        .find(|event| event["call_id"] == call_id && event["status"] == status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_tool_answer_fails_the_call_and_the_chat_goes_on() {
    let bomb = legacy_bomb_server().await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_warm",
        "bomb__work",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Warm."]));
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_big",
        "bomb__big",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["That was too big."]));
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_after",
        "bomb__work",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Done."]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.max_tool_response_bytes = CAP;
    let server = ChatServer::start(options).await;
    let mut upstream = remote_server("bomb", &bomb.url);
    upstream.transport = TransportKind::Sse;
    server.register_server(upstream).await;

    // A first turn opens the session, so what is measured next is the bomb alone.
    let events = server.ask_and_wait(json!({"message": "warm up"})).await;
    assert!(
        tool_event(&events, "call_warm", "completed").is_some(),
        "{events:#?}"
    );
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();

    let before = peak_rss();
    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "the big one"}))
        .await;
    let grown = peak_rss().saturating_sub(before);
    let sent = bomb.sent.load(Ordering::Relaxed);
    eprintln!(
        "chat bomb: sent {} KiB, peak RSS grew {} KiB (cap {} KiB)",
        sent / 1024,
        grown / 1024,
        CAP / 1024
    );
    let error = tool_event(&events, "call_big", "error").unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(error["error_code"], "response_too_large", "{error:#?}");
    assert_eq!(events.last().unwrap()["outcome"], "completed");
    assert_eq!(answer_text(&events), "That was too big.");
    assert!(
        grown <= 2 * CAP as u64 + SLACK,
        "peak RSS grew {grown} bytes"
    );
    assert!(sent < BOMB / 4, "the client read {sent} bytes");

    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "once more"}))
        .await;
    assert!(
        tool_event(&events, "call_after", "completed").is_some(),
        "{events:#?}"
    );
    assert_eq!(answer_text(&events), "Done.");
}
