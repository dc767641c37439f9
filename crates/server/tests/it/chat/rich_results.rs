//! Rich tool results through the chat API and its stream, against `server-everything`
//! (software we did not write) and the scripted fake OpenAI model: an image result reaches a
//! model that takes images as an `image_url` part (and only as text a model that does not),
//! and is kept with the tool message; structured output reaches the model and the stored
//! message; a long-running tool's `notifications/progress` arrive as `progress` events before
//! its result.

use crate::support::chat::{ChatOptions, ChatServer, everything_stdio, of_type};
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_core::{ResultBlock, ToolMessageMetadata};
use switchboard_llm::{ModelInfo, NamedProviderConfig, ProviderKind};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

/// The fake behind a second named provider, `vision`, whose model `fake-vision` takes images.
fn with_vision_provider(fake: &FakeOpenAi) -> ChatOptions {
    let mut options = ChatOptions::openai(&fake.base_url());
    options.llm.providers.push(NamedProviderConfig {
        name: "vision".to_owned(),
        kind: ProviderKind::Openai,
        base_url: fake.base_url(),
        api_key: Some(switchboard_llm::ApiKey::new("sk-vision")),
        model: "fake-vision".to_owned(),
        api_version: String::new(),
        models: vec![ModelInfo {
            id: "fake-vision".to_owned(),
            context_window: None,
            supports_images: true,
            supports_tools: true,
        }],
    });
    options
}

async fn new_conversation(server: &ChatServer, body: Value) -> String {
    let response = server
        .send(Method::POST, "/chat/conversations", Some(body))
        .await;
    assert_eq!(response.status(), 201);
    let created: Value = response.json().await.unwrap();
    created["id"].as_str().unwrap().to_owned()
}

fn calls_tool(fake: &FakeOpenAi, name: &str, arguments: Value) {
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_1", name, arguments,
    )]));
    fake.enqueue(ScriptedReply::text(&["Done."]));
}

/// The `image_url` parts of a recorded request's messages.
fn image_urls(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|part| part["type"] == "image_url")
        .map(|part| part["image_url"]["url"].as_str().unwrap().to_owned())
        .collect()
}

fn stored_tool_metadata(messages: &[switchboard_store::MessageRecord]) -> ToolMessageMetadata {
    let tool = messages
        .iter()
        .find(|message| message.role == switchboard_core::ChatRole::Tool)
        .expect("a tool message is stored");
    ToolMessageMetadata::from_stored(&tool.metadata).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_result_reaches_a_vision_model_as_an_image_part_and_others_as_text() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(with_vision_provider(&fake)).await;
    server.register_server(everything_stdio("everything")).await;

    let vision = new_conversation(&server, json!({"provider": "vision"})).await;
    calls_tool(&fake, "everything__get-tiny-image", json!({}));
    let events = server
        .ask_and_wait(json!({"conversation_id": vision, "message": "show me the image"}))
        .await;
    let completed = of_type(&events, "mcp_tool")
        .into_iter()
        .find(|event| event["status"] == "completed")
        .expect("the call completed")
        .clone();
    let image = completed["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|block| block["type"] == "image")
        .expect("the event carries the image")
        .clone();
    assert_eq!(image["mimeType"], "image/png");

    let second = &fake.requests()[1].body;
    assert_eq!(second["model"], "fake-vision");
    let urls = image_urls(second);
    assert_eq!(
        urls,
        [format!(
            "data:image/png;base64,{}",
            image["data"].as_str().unwrap()
        )]
    );
    let metadata = stored_tool_metadata(&server.stored_messages(&vision).await);
    assert!(
        metadata.content.iter().any(|block| matches!(block,
            ResultBlock::Image { mime_type, data } if mime_type == "image/png" && data == image["data"].as_str().unwrap())),
        "{:?}",
        metadata.content
    );

    // The next turn replays the image from the stored message.
    fake.enqueue(ScriptedReply::text(&["Still the same image."]));
    server
        .ask_and_wait(json!({"conversation_id": vision, "message": "and again?"}))
        .await;
    assert_eq!(image_urls(&fake.requests()[2].body).len(), 1);

    // The default model does not declare images: it gets the text description only.
    let plain = new_conversation(&server, json!({})).await;
    calls_tool(&fake, "everything__get-tiny-image", json!({}));
    server
        .ask_and_wait(json!({"conversation_id": plain, "message": "show me the image"}))
        .await;
    let fourth = &fake.requests()[4].body;
    assert_eq!(fourth["model"], "fake-model");
    assert!(image_urls(fourth).is_empty(), "{fourth}");
    assert!(fourth.to_string().contains("[image image/png"), "{fourth}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_output_is_validated_and_reaches_the_model_and_the_stored_message() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("everything")).await;
    calls_tool(
        &fake,
        "everything__get-structured-content",
        json!({"location": "Chicago"}),
    );
    let events = server
        .ask_and_wait(json!({"message": "weather in Chicago?"}))
        .await;
    let weather = json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82});
    let completed = of_type(&events, "mcp_tool")
        .into_iter()
        .find(|event| event["status"] == "completed")
        .unwrap_or_else(|| {
            panic!("the call completed (its output matches its schema): {events:#?}")
        })
        .clone();
    assert_eq!(completed["result"]["structuredContent"], weather);

    let tool_message = fake.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap()
        .clone();
    let seen: Value = serde_json::from_str(tool_message["content"].as_str().unwrap()).unwrap();
    assert_eq!(seen, weather);

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let metadata = stored_tool_metadata(&server.stored_messages(conversation_id).await);
    assert_eq!(metadata.structured_content, Some(weather));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_running_tool_reports_progress_events_before_its_result() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("everything")).await;
    calls_tool(
        &fake,
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 4}),
    );
    let events = server
        .ask_and_wait(json!({"message": "run the long operation"}))
        .await;
    let tool_events = of_type(&events, "mcp_tool");
    let statuses: Vec<&str> = tool_events
        .iter()
        .map(|event| event["status"].as_str().unwrap())
        .collect();
    let progress: Vec<&Value> = tool_events
        .iter()
        .copied()
        .filter(|event| event["status"] == "progress")
        .collect();
    assert!(progress.len() >= 3, "{statuses:?}");
    assert_eq!(statuses.first(), Some(&"started"), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&"completed"), "{statuses:?}");
    let reported: Vec<f64> = progress
        .iter()
        .map(|event| event["progress"]["progress"].as_f64().unwrap())
        .collect();
    assert!(
        reported.windows(2).all(|pair| pair[0] < pair[1]),
        "{reported:?}"
    );
    for event in &progress {
        assert_eq!(event["progress"]["total"], 4.0);
        assert_eq!(event["state"], "dispatched");
        assert_eq!(event["tool"], "trigger-long-running-operation");
        assert!(event["result"].is_null());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_progress_reports_is_thinned_to_ten_events_a_second() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("everything")).await;
    // 200 reports in about a second: one every 5 ms.
    calls_tool(
        &fake,
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 200}),
    );
    let events = server
        .ask_and_wait(json!({"message": "run the long operation quickly"}))
        .await;
    let tool_events = of_type(&events, "mcp_tool");
    let completed = tool_events.last().unwrap();
    assert_eq!(completed["status"], "completed");
    let duration_ms = completed["duration_ms"].as_u64().unwrap();
    let reported: Vec<f64> = tool_events
        .iter()
        .filter(|event| event["status"] == "progress")
        .map(|event| event["progress"]["progress"].as_f64().unwrap())
        .collect();
    // At most one event per 100 ms of the call (plus the first, sent at once).
    assert!(
        reported.len() as u64 <= duration_ms / 100 + 2,
        "{} progress events in {duration_ms} ms: {reported:?}",
        reported.len()
    );
    assert!(reported.len() >= 3, "{reported:?}");
    assert!(
        reported.windows(2).all(|pair| pair[0] < pair[1]),
        "{reported:?}"
    );
    // The newest report is the one shown: the last event is near the end, not the start.
    assert!(reported.last().unwrap() >= &100.0, "{reported:?}");
}
