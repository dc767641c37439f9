//! Servers that cannot be reached, through the chat stream: a call whose connection could not
//! be opened was never sent, so it is `failed` (not `unknown`) with a message saying the server
//! is unreachable, and the next turn's `meta.unavailable_servers` names the server whose session
//! died. Against `server-everything` over Streamable HTTP, killed between turns.

use crate::support::chat::{ChatOptions, ChatServer, Peer, answer_text, of_type, remote_server};
use serde_json::{Value, json};
use switchboard_core::ToolCallState;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

fn echo_call(id: &str) -> ScriptedToolCall {
    ScriptedToolCall::new(id, "everything__echo", json!({"message": "hello"}))
}

fn tool_errors(events: &[Value]) -> Vec<&Value> {
    of_type(events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == "error")
        .collect()
}

fn unavailable(events: &[Value]) -> Vec<Value> {
    of_type(events, "meta")[0]["unavailable_servers"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_between_turns_is_unreachable_not_unknown_and_then_listed_unavailable() {
    let mut peer = Peer::everything_http();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_first")]));
    fake.enqueue(ScriptedReply::text(&["It echoed."]));
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call("call_second")]));
    fake.enqueue(ScriptedReply::text(&["The server is gone."]));
    fake.enqueue(ScriptedReply::text(&["Still gone."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server
        .register_server(remote_server("everything", &peer.url()))
        .await;

    let first = server.ask_and_wait(json!({"message": "echo hello"})).await;
    assert!(tool_errors(&first).is_empty(), "{first:#?}");
    assert!(unavailable(&first).is_empty(), "{first:#?}");
    let conversation_id = first[0]["conversation_id"].as_str().unwrap().to_owned();

    // Killed between turns: its session still looks alive until a request cannot be sent.
    peer.kill();
    let second = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "again"}))
        .await;
    let errors = tool_errors(&second);
    assert_eq!(errors.len(), 1, "{second:#?}");
    assert_eq!(errors[0]["state"], "failed", "{}", errors[0]);
    assert_eq!(errors[0]["error_code"], "connect_failed", "{}", errors[0]);
    let message = errors[0]["error"].as_str().unwrap_or_default().to_owned()
        + errors[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("unreachable") && !message.contains("may have run"),
        "{}",
        errors[0]
    );
    assert_eq!(answer_text(&second), "The server is gone.");
    let states: Vec<ToolCallState> = server
        .stored_tool_calls(&conversation_id)
        .await
        .iter()
        .map(|record| record.state)
        .collect();
    assert_eq!(
        states,
        [ToolCallState::Completed, ToolCallState::Failed],
        "the first call ran, the second never left"
    );

    // The next turn is told the server is unavailable, and its tools are not offered.
    let third = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "and now?"}))
        .await;
    let listed = unavailable(&third);
    assert_eq!(listed.len(), 1, "{third:#?}");
    assert_eq!(listed[0]["server"], "everything");
    assert!(
        of_type(&third, "meta")[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|tool| tool["server"] != "everything"),
        "{third:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_on_a_closed_port_is_listed_unavailable_and_never_called() {
    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text(&["Nothing to call."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server
        .register_server(remote_server(
            "nowhere",
            &format!("http://127.0.0.1:{closed_port}/mcp"),
        ))
        .await;
    let events = server.ask_and_wait(json!({"message": "anything"})).await;
    let listed = unavailable(&events);
    let nowhere = listed
        .iter()
        .find(|server| server["server"] == "nowhere")
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert!(
        nowhere["message"]
            .as_str()
            .unwrap()
            .contains("connection refused"),
        "{nowhere}"
    );
    assert!(tool_errors(&events).is_empty());
}
