//! `tool_choice` is enforced on what the model returns, not only asked of it: a model that
//! calls a tool under `none`, or another tool than the forced one, gets an error result and the
//! call never reaches the approval gate or the server. A forced tool that does not exist, and
//! an empty `bud_id`, are refused with 422 when the request is made.

use crate::support::call;
use crate::support::chat::{ChatOptions, ChatServer, of_type};
use crate::support::error_of;
use async_trait::async_trait;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use switchboard_chat::{ApprovalGate, EventSink, GateDecision, GateRequest};
use switchboard_core::ToolCallState;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

/// Allows everything and remembers which tools it was asked about.
#[derive(Debug, Default)]
struct RecordingGate {
    reviewed: Mutex<Vec<String>>,
}

#[async_trait]
impl ApprovalGate for RecordingGate {
    async fn review(&self, request: &GateRequest, _events: &EventSink) -> GateDecision {
        self.reviewed
            .lock()
            .unwrap()
            .push(request.tool.name.clone());
        GateDecision::Allow {
            decided_by: "test".to_owned(),
        }
    }
}

async fn start(fake: &FakeOpenAi) -> (ChatServer, Arc<RecordingGate>) {
    let gate = Arc::new(RecordingGate::default());
    let mut options = ChatOptions::openai(&fake.base_url());
    options.gate = Some(gate.clone());
    (ChatServer::start(options).await, gate)
}

/// A conversation of a new bud with `mcp_config`; returns the conversation id.
async fn conversation_with(server: &ChatServer, mcp_config: Value) -> String {
    let owner = server.token.clone();
    let bud = call(
        server,
        &owner,
        Method::POST,
        "/api/buds",
        Some(json!({"name": "chooser", "mcp_config": mcp_config})),
    )
    .await;
    assert_eq!(bud.status(), 201);
    let bud: Value = bud.json().await.unwrap();
    let conversation = call(
        server,
        &owner,
        Method::POST,
        "/chat/conversations",
        Some(json!({"bud_id": bud["id"]})),
    )
    .await;
    assert_eq!(conversation.status(), 201);
    let conversation: Value = conversation.json().await.unwrap();
    conversation["id"].as_str().unwrap().to_owned()
}

fn tool_events<'a>(events: &'a [Value], status: &str) -> Vec<&'a Value> {
    of_type(events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == status)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_under_tool_choice_none_is_answered_with_an_error_and_never_runs() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_disobey",
        "kg__schema_version",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["I may not use tools."]));
    let (server, gate) = start(&fake).await;
    let conversation_id = conversation_with(&server, json!({"tool_choice": "none"})).await;

    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "version?"}))
        .await;
    assert_eq!(fake.requests()[0].body["tool_choice"], "none");
    assert!(gate.reviewed.lock().unwrap().is_empty(), "reached the gate");
    assert!(tool_events(&events, "started").is_empty(), "{events:#?}");
    let refused = tool_events(&events, "error");
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(refused[0]["error_code"], "outside_tool_choice");
    let calls = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].state, ToolCallState::Failed);
    assert!(calls[0].dispatched_at.is_none(), "{:?}", calls[0]);
    let second = &fake.requests()[1].body;
    let tool_message = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap();
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("outside_tool_choice"),
        "{tool_message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_forced_tool_only_that_tool_runs() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        ScriptedToolCall::new("call_forced", "kg__schema_version", json!({})),
        ScriptedToolCall::new("call_other", "kg__type_info", json!({})),
    ]));
    fake.enqueue(ScriptedReply::text(&["Version only."]));
    let (server, gate) = start(&fake).await;
    let conversation_id = conversation_with(
        &server,
        json!({"tool_choice": {"function": "kg.schema_version"}}),
    )
    .await;

    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "version?"}))
        .await;
    assert_eq!(
        fake.requests()[0].body["tool_choice"]["function"]["name"],
        "kg__schema_version"
    );
    assert_eq!(*gate.reviewed.lock().unwrap(), ["schema_version"]);
    let completed = tool_events(&events, "completed");
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert_eq!(completed[0]["tool"], "schema_version");
    let refused = tool_events(&events, "error");
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(refused[0]["tool"], "type_info");
    assert_eq!(refused[0]["error_code"], "outside_tool_choice");
    assert!(
        refused[0]["error"]
            .as_str()
            .unwrap()
            .contains("kg__schema_version"),
        "{}",
        refused[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_forced_tool_and_an_empty_bud_id_are_refused() {
    let fake = FakeOpenAi::start().await;
    let (server, _gate) = start(&fake).await;
    let owner = server.token.clone();
    // A first answer lists the kg server's tools (with the user's token) into its cache.
    fake.enqueue(ScriptedReply::text(&["hello"]));
    server.ask_and_wait(json!({"message": "hi"})).await;
    let kg = server
        .store
        .find_server_by_name(&server.workspace_id, "kg")
        .await
        .unwrap()
        .unwrap();
    assert!(kg.tools_cache.is_some(), "the kg tools were not cached");

    let refused = [
        (
            "/api/buds",
            json!({"name": "b", "mcp_config": {"tool_choice": {"function": "kg.teleport"}}}),
            "kg.teleport",
        ),
        (
            "/api/buds",
            json!({"name": "b", "mcp_config": {"tool_choice": {"function": "nowhere.teleport"}}}),
            "nowhere.teleport",
        ),
        (
            "/chat/conversations",
            json!({"mcp_config_overrides": {"tool_choice": {"function": "kg__teleport"}}}),
            "kg__teleport",
        ),
        ("/chat/conversations", json!({"bud_id": ""}), "bud_id"),
    ];
    for (path, body, needle) in refused {
        let response = call(&server, &owner, Method::POST, path, Some(body.clone())).await;
        assert_eq!(response.status(), 422, "{body}");
        let (_, message) = error_of(response).await;
        assert!(message.contains(needle), "{body}: {message}");
    }
    let accepted = call(
        &server,
        &owner,
        Method::POST,
        "/chat/conversations",
        Some(json!({"mcp_config_overrides": {"tool_choice": {"function": "kg.schema_version"}}})),
    )
    .await;
    assert_eq!(accepted.status(), 201);
}
