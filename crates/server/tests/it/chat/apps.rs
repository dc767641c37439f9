//! MCP Apps in a chat answer, against the official example server
//! `@modelcontextprotocol/server-basic-vanillajs` (software we did not write): the `mcp_tool`
//! events of a call to a tool with a `ui://` resource name its app (server, URI, the hash read
//! at the sync), and the stored tool message keeps the same reference for the history.

use crate::support::chat::{ChatOptions, ChatServer, of_type};
use serde_json::json;
use switchboard_core::{ToolMessageMetadata, TransportKind};
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::interop::interop;

fn basic_app_stdio() -> NewServer {
    let entry =
        interop("apps/node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js");
    NewServer {
        name: "basic-app".to_owned(),
        transport: TransportKind::Stdio,
        url: None,
        command: Some("node".to_owned()),
        args: vec![entry.to_str().unwrap().to_owned(), "--stdio".to_owned()],
        connection: ServerConnectionConfig::default(),
        secrets: ServerSecrets::default(),
        is_active: true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_an_app_tool_names_its_app_in_the_events_and_the_stored_message() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_time",
        "basic-app__get-time",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["It is now."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let server_id =
        switchboard_core::ServerId::from_string(server.register_server(basic_app_stdio()).await);

    let events = server
        .ask_and_wait(json!({"message": "what time is it"}))
        .await;
    let tool_events = of_type(&events, "mcp_tool");
    assert!(!tool_events.is_empty(), "{events:#?}");
    let tools = server
        .store
        .list_server_tools(&server.workspace_id, &server_id)
        .await
        .unwrap();
    let sha256 = tools[0]
        .meta
        .ui
        .as_ref()
        .unwrap()
        .resource_sha256
        .clone()
        .unwrap();
    for event in &tool_events {
        assert_eq!(
            event["app"],
            json!({
                "server_id": server_id.as_str(),
                "resource_uri": "ui://get-time/mcp-app.html",
                "resource_sha256": sha256,
            }),
            "{event:#}"
        );
    }
    assert_eq!(tool_events.last().unwrap()["status"], "completed");

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let messages = server.stored_messages(conversation_id).await;
    let tool_message = messages
        .iter()
        .find(|message| message.role == switchboard_core::ChatRole::Tool)
        .unwrap();
    let metadata = ToolMessageMetadata::from_stored(&tool_message.metadata).unwrap();
    let app = metadata.app.expect("the stored message names the app");
    assert_eq!(app.resource_uri, "ui://get-time/mcp-app.html");
    assert_eq!(app.server_id, server_id);
}
