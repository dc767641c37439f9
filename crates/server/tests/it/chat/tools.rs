//! Tool calls through the agent loop, driven by the scripted fake OpenAI server against
//! `server-everything` (software we did not write): parallel calls with streamed argument
//! deltas, failures that go back to the model, denials, an upstream dying mid-call, crash
//! recovery, tools switched off, the step limit, oversized results, ephemeral servers.

use crate::support::chat::{
    ChatOptions, ChatServer, Peer, answer_text, everything_stdio, of_type, remote_server,
};
use async_trait::async_trait;
use serde_json::{Value, json};
use std::sync::Arc;
use switchboard_chat::{ApprovalGate, EventSink, GateDecision, GateRequest};
use switchboard_core::{ChatMessage, ConversationId, ToolCallRequest, ToolCallState};
use switchboard_store::{NewMessage, NewToolCall, ToolCallOutcome};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

fn call(id: &str, name: &str, arguments: Value) -> ScriptedToolCall {
    ScriptedToolCall::new(id, name, arguments)
}

/// The `tool` messages of a recorded LLM request, by `tool_call_id`.
fn tool_messages(request: &Value) -> Vec<(String, String)> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            (
                message["tool_call_id"].as_str().unwrap().to_owned(),
                message["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn tool_events<'a>(events: &'a [Value], status: &str) -> Vec<&'a Value> {
    of_type(events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == status)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_run_feed_the_next_step_and_are_replayed_as_history() {
    parallel_calls_story(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_story_on_postgresql() {
    parallel_calls_story(true).await;
}

async fn parallel_calls_story(postgres: bool) {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        call("call_echo", "everything__echo", json!({"message": "hi"})),
        call("call_sum", "everything__get-sum", json!({"a": 2, "b": 3})),
    ]));
    fake.enqueue(ScriptedReply::text(&["Echoed and ", "summed."]));
    fake.enqueue(ScriptedReply::text(&["Still 5."]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.postgres = postgres;
    let server = ChatServer::start(options).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server
        .ask_and_wait(json!({"message": "echo hi and add 2 and 3"}))
        .await;
    let offered: Vec<&str> = events[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert!(
        offered.contains(&"everything__echo") && offered.contains(&"everything__get-sum"),
        "{offered:?}"
    );
    assert_eq!(tool_events(&events, "started").len(), 2, "{events:#?}");
    let completed = tool_events(&events, "completed");
    assert_eq!(completed.len(), 2, "{events:#?}");
    let echo = completed
        .iter()
        .find(|event| event["tool"] == "echo")
        .unwrap();
    assert_eq!(echo["server"], "everything");
    assert_eq!(echo["call_id"], "call_echo");
    assert_eq!(echo["arguments"], json!({"message": "hi"}));
    assert_eq!(echo["result"]["content"][0]["text"], "Echo: hi");
    assert!(echo["duration_ms"].is_u64());
    assert_eq!(answer_text(&events), "Echoed and summed.");
    // `done` names who answered and sums the tokens of the answer's two steps (40 + 11 in,
    // 12 + 2 out, as the fake reported them).
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["provider_name"], "default");
    assert_eq!(
        done["usage"],
        json!({"input_tokens": 51, "output_tokens": 14, "cache_read_tokens": 0, "cache_write_tokens": 0})
    );

    let second = &fake.requests()[1].body;
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(
        tool_messages(second),
        [
            ("call_echo".to_owned(), "Echo: hi".to_owned()),
            ("call_sum".to_owned(), "The sum of 2 and 3 is 5.".to_owned())
        ]
    );

    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    // A replay of the finished answer sums its stored steps the same way.
    let replay = server.attach(&conversation_id).await.until_done().await;
    assert_eq!(replay[0]["replay"], true);
    assert_eq!(
        replay.last().unwrap()["usage"],
        done["usage"],
        "{replay:#?}"
    );
    assert_eq!(replay.last().unwrap()["provider_name"], "default");
    let stored = server.stored_messages(&conversation_id).await;
    let roles: Vec<&str> = stored.iter().map(|message| message.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "assistant"]);
    for record in server.stored_tool_calls(&conversation_id).await {
        assert_eq!(record.state, ToolCallState::Completed, "{record:?}");
        assert!(record.dispatched_at.is_some() && record.finished_at.is_some());
        assert_eq!(record.message_id.as_ref(), Some(&stored[1].id));
    }
    let detail = server.conversation(&conversation_id).await;
    let listed_call = &detail["messages"][1]["tool_calls"][0];
    assert_eq!(listed_call["server"], "everything");
    assert_eq!(listed_call["state"], "completed");
    // Each assistant message carries its own step's tokens and who wrote it, as typed fields.
    let step = &detail["messages"][1];
    assert_eq!(
        step["usage"],
        json!({"input_tokens": 40, "output_tokens": 12, "cache_read_tokens": 0, "cache_write_tokens": 0})
    );
    assert_eq!(step["provider_name"], "default");
    assert_eq!(step["model"], "fake-model");
    assert_eq!(detail["messages"][4]["usage"]["output_tokens"], 2);
    assert_eq!(detail["messages"][0]["usage"], Value::Null, "{detail}");
    assert_eq!(detail["messages"][0]["provider_name"], Value::Null);

    // The next turn replays the earlier calls and results in OpenAI format.
    server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "and the sum again?"}))
        .await;
    let third = &fake.requests()[2].body;
    assert_eq!(tool_messages(third).len(), 2);
    assert_eq!(
        third["messages"].as_array().unwrap().last().unwrap()["content"],
        "and the sum again?"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_calls_go_back_to_the_model_as_errors_and_the_answer_continues() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        call("call_unknown", "nowhere__nothing", json!({})),
        call(
            "call_types",
            "everything__get-sum",
            json!({"a": "two", "b": 3}),
        ),
        call("call_missing", "everything__echo", json!({})),
    ]));
    fake.enqueue(ScriptedReply::text(&["I could not do that."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server.ask_and_wait(json!({"message": "try things"})).await;
    let errors = tool_events(&events, "error");
    assert_eq!(errors.len(), 3, "{events:#?}");
    let code_of = |call_id: &str| {
        errors
            .iter()
            .find(|event| event["call_id"] == call_id)
            .unwrap()["error_code"]
            .clone()
    };
    assert_eq!(code_of("call_unknown"), "unknown_tool");
    assert_eq!(code_of("call_types"), "invalid_arguments");
    assert_eq!(code_of("call_missing"), "invalid_arguments");
    assert_eq!(events.last().unwrap()["outcome"], "completed");
    assert_eq!(answer_text(&events), "I could not do that.");
    for (_, content) in tool_messages(&fake.requests()[1].body) {
        let value: Value = serde_json::from_str(&content).unwrap();
        assert!(value["error"]["message"].is_string(), "{content}");
    }
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    for record in server.stored_tool_calls(conversation_id).await {
        assert_eq!(record.state, ToolCallState::Failed, "{record:?}");
    }
}

/// Denies `echo`, allows the rest; counts what it saw.
#[derive(Debug, Default)]
struct DenyEcho {
    reports: std::sync::Mutex<Vec<ToolCallState>>,
}

#[async_trait]
impl ApprovalGate for DenyEcho {
    async fn review(&self, request: &GateRequest, _events: &EventSink) -> GateDecision {
        if request.tool.name == "echo" {
            GateDecision::Deny {
                reason: "echo is not allowed here".to_owned(),
                decided_by: "test".to_owned(),
            }
        } else {
            GateDecision::Allow {
                decided_by: "test".to_owned(),
            }
        }
    }

    async fn call_finished(&self, report: &switchboard_chat::CallReport) {
        self.reports.lock().unwrap().push(report.final_state);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_passes_the_gate_and_a_denial_reaches_the_model() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        call("call_echo", "everything__echo", json!({"message": "hi"})),
        call("call_sum", "everything__get-sum", json!({"a": 1, "b": 1})),
    ]));
    fake.enqueue(ScriptedReply::text(&["Echo was denied; 1 + 1 = 2."]));
    let gate = Arc::new(DenyEcho::default());
    let mut options = ChatOptions::openai(&fake.base_url());
    options.gate = Some(gate.clone());
    let server = ChatServer::start(options).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server
        .ask_and_wait(json!({"message": "echo and add"}))
        .await;
    let denied = tool_events(&events, "error");
    assert_eq!(denied.len(), 1, "{events:#?}");
    assert_eq!(denied[0]["error_code"], "denied");
    assert_eq!(denied[0]["state"], "denied");
    assert!(
        tool_events(&events, "started")
            .iter()
            .all(|event| event["tool"] != "echo"),
        "a denied call never starts"
    );
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let records = server.stored_tool_calls(conversation_id).await;
    let echo = records
        .iter()
        .find(|record| record.tool_name == "echo")
        .unwrap();
    assert_eq!(echo.state, ToolCallState::Denied);
    assert!(echo.dispatched_at.is_none());
    assert!(
        tool_messages(&fake.requests()[1].body)[0]
            .1
            .contains("echo is not allowed here")
    );
    let mut reports = gate.reports.lock().unwrap().clone();
    reports.sort_by_key(|state| state.as_str());
    assert_eq!(reports, [ToolCallState::Completed, ToolCallState::Denied]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_engine_built_without_a_gate_refuses_every_call() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[call(
        "call_sum",
        "everything__get-sum",
        json!({"a": 1, "b": 1}),
    )]));
    fake.enqueue(ScriptedReply::text(&["The call was refused."]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.gate = None;
    let server = ChatServer::start(options).await;
    server.register_server(everything_stdio("everything")).await;

    let events = server.ask_and_wait(json!({"message": "add 1 and 1"})).await;
    let denied = tool_events(&events, "error");
    assert_eq!(denied.len(), 1, "{events:#?}");
    assert_eq!(denied[0]["error_code"], "denied");
    assert!(tool_events(&events, "started").is_empty(), "{events:#?}");
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let records = server.stored_tool_calls(conversation_id).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].state, ToolCallState::Denied);
    assert!(records[0].dispatched_at.is_none());
    assert!(
        tool_messages(&fake.requests()[1].body)[0]
            .1
            .contains("no approval gate is configured")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_dying_mid_call_leaves_the_call_unknown_and_nothing_is_lost() {
    let mut peer = Peer::everything_http();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[call(
        "call_slow",
        "slow__trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
    )]));
    fake.enqueue(ScriptedReply::text(&[
        "The operation's outcome is unknown.",
    ]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    // A dead peer is noticed when its stream's silence outlasts the call timeout (rmcp tries
    // to resume the stream): 4 s here; progress comes every second until the kill.
    let mut slow = remote_server("slow", &peer.url());
    slow.connection.timeout_ms = Some(4_000);
    server.register_server(slow).await;

    let mut reader = server
        .ask(json!({"message": "run the long operation"}))
        .await;
    let mut before = reader.until("mcp_tool").await;
    assert_eq!(before.last().unwrap()["status"], "started");
    // `started` is sent as the call leaves, maybe before its request is on the wire; the
    // first progress report proves the upstream has it (killed earlier, the call was never
    // sent and is `failed`, not `unknown`).
    while before.last().unwrap()["status"] != "progress" {
        before.extend(reader.until("mcp_tool").await);
    }
    peer.kill();
    let mut events = before;
    events.extend(reader.until_done().await);

    let failed = tool_events(&events, "error");
    assert_eq!(failed.len(), 1, "{events:#?}");
    assert_eq!(failed[0]["state"], "unknown", "{}", failed[0]);
    assert_eq!(events.last().unwrap()["outcome"], "completed");
    assert_eq!(answer_text(&events), "The operation's outcome is unknown.");

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let records = server.stored_tool_calls(conversation_id).await;
    assert_eq!(records[0].state, ToolCallState::Unknown);
    assert!(records[0].dispatched_at.is_some());
    let roles: Vec<String> = server
        .stored_messages(conversation_id)
        .await
        .iter()
        .map(|message| message.role.to_string())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert!(
        tool_messages(&fake.requests()[1].body)[0]
            .1
            .contains("not retried")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_left_dispatched_by_a_crash_become_unknown_and_are_never_run_again() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text(&["I cannot tell whether it ran."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("everything")).await;
    // What a process killed mid-call leaves behind: the call committed as dispatched, no result.
    let store = &server.store;
    let workspace = &server.workspace_id;
    let created = server
        .send(
            reqwest::Method::POST,
            "/chat/conversations",
            Some(json!({"title": "crash"})),
        )
        .await;
    let conversation: Value = created.json().await.unwrap();
    let conversation_id = ConversationId::from(conversation["id"].as_str().unwrap());
    store
        .append_message(
            workspace,
            &conversation_id,
            NewMessage::from_chat(ChatMessage::user("echo hi")),
        )
        .await
        .unwrap();
    let request = ToolCallRequest {
        id: "call_lost".into(),
        name: "everything__echo".into(),
        arguments: "{\"message\":\"hi\"}".into(),
    };
    let assistant = store
        .append_message(
            workspace,
            &conversation_id,
            NewMessage::from_chat(ChatMessage::assistant("", vec![request.clone()])),
        )
        .await
        .unwrap();
    let record = store
        .create_tool_call(
            workspace,
            NewToolCall {
                conversation_id: conversation_id.clone(),
                message_id: Some(assistant.id.clone()),
                llm_call_id: request.id.clone(),
                server_id: None,
                server_name: "everything".into(),
                tool_name: "echo".into(),
                arguments: request.arguments.clone(),
            },
        )
        .await
        .unwrap();
    for state in [ToolCallState::Approved, ToolCallState::Dispatched] {
        store
            .transition_tool_call(workspace, &record.id, state, ToolCallOutcome::default())
            .await
            .unwrap();
    }

    assert_eq!(server.chat.recover_interrupted_calls().await.unwrap(), 1);
    let detail = server.conversation(conversation_id.as_str()).await;
    assert_eq!(detail["tool_calls"][0]["state"], "unknown");

    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "did it work?"}))
        .await;
    assert!(
        tool_events(&events, "started").is_empty(),
        "nothing is re-run"
    );
    assert_eq!(
        server
            .stored_tool_calls(conversation_id.as_str())
            .await
            .len(),
        1
    );
    let results = tool_messages(&fake.requests()[0].body);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_lost");
    assert!(results[0].1.contains("outcome_unknown"), "{}", results[0].1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_mid_call_cancels_the_call_and_keeps_its_record() {
    let peer = Peer::everything_http();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[call(
        "call_slow",
        "slow__trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
    )]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    // A dead peer is noticed when its stream's silence outlasts the call timeout (rmcp tries
    // to resume the stream): 4 s here; progress comes every second until the kill.
    let mut slow = remote_server("slow", &peer.url());
    slow.connection.timeout_ms = Some(4_000);
    server.register_server(slow).await;

    let mut reader = server
        .ask(json!({"message": "run the long operation"}))
        .await;
    let events = reader.until("mcp_tool").await;
    assert_eq!(events.last().unwrap()["status"], "started");
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let started = std::time::Instant::now();
    drop(reader);

    server.wait_until_idle(&conversation_id).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the 30 s call was abandoned, not awaited"
    );
    let records = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0].state,
        ToolCallState::Unknown,
        "sent, then cancelled: its outcome is unknown"
    );
    assert!(
        records[0].error.as_deref().unwrap().contains("cancelled"),
        "{records:?}"
    );
    let roles: Vec<String> = server
        .stored_messages(&conversation_id)
        .await
        .iter()
        .map(|message| message.role.to_string())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool"],
        "the call's record and result are kept"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "the model is not asked again after the client left"
    );
    let replay = server.attach(&conversation_id).await.until_done().await;
    assert_eq!(replay.last().unwrap()["outcome"], "cancelled");
}
