//! U+0000 in what reaches a conversation — the question, the model's text, a tool's answer —
//! never breaks the chat. PostgreSQL refuses NUL in text and JSONB; the store keeps such text
//! with U+FFFD in its place on both backends, so both answer the same. Names people type are
//! refused with a clear error instead.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type};
use serde_json::json;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_characters_in_a_turn_are_stored_on_sqlite() {
    nul_characters_story(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_characters_in_a_turn_are_stored_on_postgresql() {
    nul_characters_story(true).await;
}

async fn nul_characters_story(postgres: bool) {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_nul",
        "kg__type_info",
        json!({"type_name": "Doc\u{0}ument"}),
    )]));
    fake.enqueue(ScriptedReply::text(&["no such\u{0} type"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.postgres = postgres;
    let server = ChatServer::start(options).await;

    let events = server
        .ask_and_wait(json!({"message": "what is Doc\u{0}ument?"}))
        .await;
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done", "{events:#?}");
    assert_eq!(done["outcome"], "completed", "{events:#?}");
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    assert_eq!(answer_text(&events), "no such\u{0} type");

    let conversation_id = done["conversation_id"].as_str().unwrap();
    let detail = server.conversation(conversation_id).await;
    let contents: Vec<&str> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents[0], "what is Doc\u{FFFD}ument?", "{detail:#}");
    assert_eq!(
        contents.last().unwrap(),
        &"no such\u{FFFD} type",
        "{detail:#}"
    );
    assert_eq!(detail["tool_calls"][0]["state"], "failed", "{detail:#}");

    // A name typed with a NUL in it is refused, naming the field.
    let response = server
        .send(
            reqwest::Method::POST,
            "/api/buds",
            Some(json!({"name": "bad\u{0}name"})),
        )
        .await;
    assert_eq!(response.status(), 422);
    let body: serde_json::Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("name"), "{message}");
    assert!(message.contains("U+0000"), "{message}");
}
