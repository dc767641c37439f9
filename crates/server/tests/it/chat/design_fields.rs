//! The chat stream carries the design's fields: `meta.citations` (`[]`, citations are off),
//! `meta.schema_context {version, type_count, last_modified}` when the knowledge-graph server is
//! in the conversation, and `intent` on `mcp_tool` events (the offline detector's intent, or
//! the tool's name for a model's call).

use crate::support::call;
use crate::support::chat::{ChatOptions, ChatServer, of_type};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

async fn current_schema_version(server: &ChatServer) -> Value {
    let response = server
        .client
        .get(server.url("/mcp/schema/version"))
        .bearer_auth(&server.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_detector_reports_its_intent_and_meta_carries_the_schema_context() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let events = server
        .ask_and_wait(json!({"message": "What version of the schema am I using?"}))
        .await;
    let meta = &events[0];
    assert_eq!(meta["type"], "meta");
    assert_eq!(meta["citations"], json!([]));
    let version = current_schema_version(&server).await;
    let context = &meta["schema_context"];
    assert_eq!(context["version"], version["version"], "{meta}");
    assert_eq!(
        context["type_count"], version["object_type_count"],
        "{meta}"
    );
    assert_eq!(context["last_modified"], version["created_at"], "{meta}");
    let version_calls: Vec<&Value> = of_type(&events, "mcp_tool")
        .into_iter()
        .filter(|event| event["tool"] == "schema_version")
        .collect();
    assert!(!version_calls.is_empty(), "{events:#?}");
    for event in version_calls {
        assert_eq!(event["intent"], "schema-version", "{event}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_call_carries_the_tool_name_and_no_kg_means_no_schema_context() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_types",
        "kg__type_info",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Five types."]));
    fake.enqueue(ScriptedReply::text(&["No tools here."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let events = server.ask_and_wait(json!({"message": "types?"})).await;
    assert!(
        events[0]["schema_context"]["type_count"].is_u64(),
        "{}",
        events[0]
    );
    let tools = of_type(&events, "mcp_tool");
    assert!(!tools.is_empty(), "{events:#?}");
    for event in tools {
        assert_eq!(event["intent"], "type_info", "{event}");
    }

    let owner = server.token.clone();
    let bud: Value = call(
        &server,
        &owner,
        Method::POST,
        "/api/buds",
        Some(json!({"name": "no tools", "mcp_config": {"servers": []}})),
    )
    .await
    .json()
    .await
    .unwrap();
    let conversation: Value = call(
        &server,
        &owner,
        Method::POST,
        "/chat/conversations",
        Some(json!({"bud_id": bud["id"]})),
    )
    .await
    .json()
    .await
    .unwrap();
    let events = server
        .ask_and_wait(json!({"conversation_id": conversation["id"], "message": "hello"}))
        .await;
    assert_eq!(events[0]["citations"], json!([]));
    assert!(events[0].get("schema_context").is_none(), "{}", events[0]);
}
