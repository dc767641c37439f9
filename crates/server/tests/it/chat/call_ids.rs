//! Providers that reuse tool-call ids (local OpenAI-compatible servers often number calls per
//! answer — `call_0`, `call_1` — or repeat one id within an answer): every call keeps its own
//! result in the history the model gets next (each assistant call answered once, right after
//! it, as OpenAI requires), in the conversation's detail and in the replay.

use crate::support::chat::{ChatOptions, ChatServer, of_type};
use serde_json::{Value, json};
use std::collections::HashSet;
use switchboard_core::{ChatMessage, ConversationId, ToolCallRequest, ToolCallState};
use switchboard_store::{NewMessage, NewToolCall, ToolCallOutcome};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

fn call(id: &str, name: &str, arguments: Value) -> ScriptedToolCall {
    ScriptedToolCall::new(id, name, arguments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_ids_reused_by_the_provider_keep_each_call_and_its_result_apart() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[call(
        "call_0",
        "kg__schema_version",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Version noted."]));
    // The next answer numbers its calls from 0 again, and repeats the id within the answer.
    fake.enqueue(ScriptedReply::tool_calls(&[
        call("call_0", "kg__type_info", json!({"type_name": "Document"})),
        call("call_0", "kg__type_info", json!({"type_name": "Project"})),
    ]));
    fake.enqueue(ScriptedReply::text(&["Types noted."]));
    fake.enqueue(ScriptedReply::text(&["All three."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;

    let first = server
        .ask_and_wait(json!({"message": "schema version?"}))
        .await;
    let conversation_id = first[0]["conversation_id"].as_str().unwrap().to_owned();
    let second = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "two types?"}))
        .await;
    let second_calls = of_type(&second, "mcp_tool");
    let second_call_ids: HashSet<&str> = second_calls
        .iter()
        .map(|event| event["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(second_call_ids.len(), 2, "{second_calls:#?}");
    server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "summarise"}))
        .await;

    // What the model got on the third turn: each assistant call answered by its own result.
    let history = fake.requests()[4].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let mut answered = Vec::new();
    let mut seen_ids = HashSet::new();
    for (index, message) in history.iter().enumerate() {
        let Some(calls) = message["tool_calls"].as_array() else {
            continue;
        };
        for (offset, asked) in calls.iter().enumerate() {
            let id = asked["id"].as_str().unwrap();
            assert!(
                seen_ids.insert(id.to_owned()),
                "id {id} used twice: {history:#?}"
            );
            let result = &history[index + 1 + offset];
            assert_eq!(result["role"], "tool", "{history:#?}");
            assert_eq!(result["tool_call_id"], id, "{history:#?}");
            answered.push(result["content"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(answered.len(), 3, "{history:#?}");
    assert!(answered[0].contains("object_type_count"), "{answered:#?}");
    assert!(answered[1].contains("\"Document\""), "{answered:#?}");
    assert!(answered[2].contains("\"Project\""), "{answered:#?}");

    // The conversation's detail pairs each asked call with its own record.
    let detail = server.conversation(&conversation_id).await;
    let listed: Vec<(String, String)> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["tool_calls"].as_array().unwrap().clone())
        .map(|call| {
            (
                call["tool"].as_str().unwrap_or("(none)").to_owned(),
                call["tool_call_id"].as_str().unwrap_or("(none)").to_owned(),
            )
        })
        .collect();
    let tools: Vec<&str> = listed.iter().map(|(tool, _)| tool.as_str()).collect();
    assert_eq!(
        tools,
        ["schema_version", "type_info", "type_info"],
        "{detail:#}"
    );
    let record_ids: HashSet<&str> = listed.iter().map(|(_, id)| id.as_str()).collect();
    assert_eq!(record_ids.len(), 3, "{detail:#}");
}

/// Conversations stored before call ids were made unique may hold one id twice: the detail
/// still shows each assistant message's own call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_conversation_with_a_repeated_call_id_lists_each_call_under_its_message() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let (store, workspace) = (&server.store, &server.workspace_id);
    let created: Value = server
        .send(
            reqwest::Method::POST,
            "/chat/conversations",
            Some(json!({"title": "old"})),
        )
        .await
        .json()
        .await
        .unwrap();
    let conversation_id = ConversationId::from(created["id"].as_str().unwrap());
    for (question, tool, final_state) in [
        ("version?", "schema_version", ToolCallState::Denied),
        ("types?", "type_info", ToolCallState::Approved),
    ] {
        store
            .append_message(
                workspace,
                &conversation_id,
                NewMessage::from_chat(ChatMessage::user(question)),
            )
            .await
            .unwrap();
        let request = ToolCallRequest {
            id: "call_0".into(),
            name: format!("kg__{tool}"),
            arguments: "{}".into(),
        };
        let assistant = store
            .append_message(
                workspace,
                &conversation_id,
                NewMessage::from_chat(ChatMessage::assistant("", vec![request])),
            )
            .await
            .unwrap();
        let record = store
            .create_tool_call(
                workspace,
                NewToolCall {
                    conversation_id: conversation_id.clone(),
                    message_id: Some(assistant.id.clone()),
                    llm_call_id: "call_0".into(),
                    server_id: None,
                    server_name: "kg".into(),
                    tool_name: tool.into(),
                    arguments: "{}".into(),
                },
            )
            .await
            .unwrap();
        store
            .transition_tool_call(
                workspace,
                &record.id,
                final_state,
                ToolCallOutcome::default(),
            )
            .await
            .unwrap();
    }

    let detail = server.conversation(conversation_id.as_str()).await;
    let listed: Vec<(Value, Value)> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| message["tool_calls"].as_array().unwrap().clone())
        .map(|call| (call["tool"].clone(), call["state"].clone()))
        .collect();
    assert_eq!(
        listed,
        [
            (json!("schema_version"), json!("denied")),
            (json!("type_info"), json!("approved"))
        ],
        "{detail:#}"
    );
}
