//! The conversation list says which conversations have an answer being generated right now
//! (`answer_in_flight`), so a client can show it and attach with `GET /chat/{id}/stream`.

use crate::support::chat::{ChatOptions, ChatServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

/// `answer_in_flight` of each listed conversation, by id.
async fn listed_in_flight(server: &ChatServer) -> HashMap<String, Value> {
    let response = server
        .send(reqwest::Method::GET, "/chat/conversations", None)
        .await;
    assert_eq!(response.status(), 200);
    let page: Value = response.json().await.unwrap();
    page["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|conversation| {
            (
                conversation["id"].as_str().unwrap().to_owned(),
                conversation["answer_in_flight"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversation_list_marks_the_conversations_with_an_answer_in_flight() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["thinking"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    let idle: Value = server
        .send(
            reqwest::Method::POST,
            "/chat/conversations",
            Some(json!({"title": "idle"})),
        )
        .await
        .json()
        .await
        .unwrap();
    let idle_id = idle["id"].as_str().unwrap().to_owned();

    let mut reader = server.ask(json!({"message": "think hard"})).await;
    let events = reader.until("token").await;
    let busy_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let listed = listed_in_flight(&server).await;
    assert_eq!(listed[&busy_id], json!(true), "{listed:?}");
    assert_eq!(listed[&idle_id], json!(false), "{listed:?}");

    // The client leaves, the answer is cancelled and saved: nothing is in flight any more.
    drop(reader);
    server.wait_until_idle(&busy_id).await;
    let listed = listed_in_flight(&server).await;
    assert_eq!(listed[&busy_id], json!(false), "{listed:?}");
    assert_eq!(listed[&idle_id], json!(false), "{listed:?}");
}
