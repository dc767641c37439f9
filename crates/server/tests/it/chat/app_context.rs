//! An MCP App's `ui/update-model-context` (`PUT …/tool-calls/{id}/app/model-context`): the app
//! of our hostile fixture's `probe` call stores its context through the API, and the scripted
//! model's next request carries it with that call's result, labelled as the app's; each update
//! replaces the previous one; another block type, an oversized context, someone who may not read
//! the conversation, or a call without an app are refused.

use super::apps::hostile_app_stdio;
use crate::support::chat::{ChatOptions, ChatServer, member_token, of_type};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

/// The text of the tool message answering `llm_call_id` in a recorded request.
fn tool_result_text(request: &Value, llm_call_id: &str) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool" && message["tool_call_id"] == llm_call_id)
        .unwrap_or_else(|| panic!("no result of {llm_call_id}: {request:#}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apps_model_context_reaches_the_model_on_the_next_turn_with_its_calls_result() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_probe",
        "hostile-app__probe",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Probed."]));
    fake.enqueue(ScriptedReply::text(&["You picked blue."]));
    fake.enqueue(ScriptedReply::text(&["Now green."]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(hostile_app_stdio()).await;
    let events = server.ask_and_wait(json!({"message": "probe"})).await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let probe = of_type(&events, "mcp_tool")
        .iter()
        .find(|event| event["status"] == "completed")
        .unwrap_or_else(|| panic!("{events:#?}"))["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path =
        format!("/chat/conversations/{conversation_id}/tool-calls/{probe}/app/model-context");

    let response = server
        .send(
            Method::PUT,
            &path,
            Some(json!({
                "content": [{"type": "text", "text": "The person picked the colour blue."}],
                "structured_content": {"colour": "blue"},
            })),
        )
        .await;
    assert_eq!(response.status(), 200);
    let stored: Value = response.json().await.unwrap();
    assert_eq!(stored["tool_call_id"], probe.as_str());
    assert_eq!(
        stored["content"][0]["text"],
        "The person picked the colour blue."
    );
    assert_eq!(stored["structured_content"], json!({"colour": "blue"}));

    // The next turn: the model reads the context with the probe's result, as the app's.
    server
        .ask_and_wait(json!({"message": "what did I pick?", "conversation_id": conversation_id}))
        .await;
    let requests = fake.requests();
    let before = tool_result_text(&requests[1].body, "call_probe");
    assert!(!before.contains("Context from the MCP App"), "{before}");
    let after = tool_result_text(&requests[2].body, "call_probe");
    assert!(
        after.contains("[Context from the MCP App shown with this result (hostile-app · probe)"),
        "{after}"
    );
    assert!(
        after.contains("it comes from the app, not from the person]"),
        "{after}"
    );
    assert!(
        after.contains("\nThe person picked the colour blue.\nStructured: {\"colour\":\"blue\"}"),
        "{after}"
    );

    // An update replaces the previous one.
    let response = server
        .send(
            Method::PUT,
            &path,
            Some(json!({"content": [{"type": "text", "text": "Now green."}]})),
        )
        .await;
    assert_eq!(response.status(), 200);
    server
        .ask_and_wait(json!({"message": "and now?", "conversation_id": conversation_id}))
        .await;
    let latest = tool_result_text(&fake.requests()[3].body, "call_probe");
    assert!(
        latest.contains("\nNow green.") && !latest.contains("blue"),
        "{latest}"
    );

    // Refused: another block type, an unknown field, too large, not an object.
    for (body, status) in [
        (
            json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]}),
            422,
        ),
        (json!({"content": [], "extra": 1}), 422),
        (
            json!({"content": [{"type": "text", "text": "x".repeat(17 * 1024)}]}),
            422,
        ),
        (json!({"structured_content": [1, 2]}), 422),
    ] {
        let response = server.send(Method::PUT, &path, Some(body.clone())).await;
        assert_eq!(response.status(), status, "{body:.80}");
    }
    let response = server
        .send(
            Method::PUT,
            &path,
            Some(json!({"content": [{"type": "text", "text": "x".repeat(17 * 1024)}]})),
        )
        .await;
    let refusal: Value = response.json().await.unwrap();
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the limit is 16384"),
        "{refusal}"
    );

    // Someone who may not read the conversation; a call id that is not one of it.
    let member = member_token(&server, "mallory", "chat:use").await;
    let response = server
        .client
        .put(server.url(&path))
        .bearer_auth(&member)
        .json(&json!({"content": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let response = server
        .send(
            Method::PUT,
            &format!("/chat/conversations/{conversation_id}/tool-calls/tc_none/app/model-context"),
            Some(json!({"content": []})),
        )
        .await;
    assert_eq!(response.status(), 404);
    // The refused updates left the last good one in place.
    let contexts = server
        .store
        .list_app_model_contexts(
            &server.workspace_id,
            &switchboard_core::ConversationId::from(conversation_id.clone()),
        )
        .await
        .unwrap();
    assert_eq!(contexts.len(), 1);
    assert_eq!(contexts[0].context["content"][0]["text"], "Now green.");
}
