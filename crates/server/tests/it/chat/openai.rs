//! The OpenAI-compatible path end to end: the scripted fake OpenAI server over real HTTP
//! behind `POST /chat/stream` — streamed text, a 429 then success, a mid-stream failure, a
//! client leaving mid-answer, a second client attaching, replays and heartbeats.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type};
use crate::support::metrics_text;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_store::MessageStatus;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_text_becomes_token_events_and_a_stored_answer() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text(&["Hel", "lo ", "world"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;

    let events = server.ask_and_wait(json!({"message": "Say hello"})).await;
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["meta", "token", "token", "token", "done"]);
    assert_eq!(events[0]["provider"], "openai");
    assert_eq!(events[0]["model"], "fake-model");
    assert_eq!(answer_text(&events), "Hello world");
    assert_eq!(events[4]["outcome"], "completed");

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let stored = server.stored_messages(conversation_id).await;
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[0].content, "Say hello");
    assert_eq!(stored[1].content, "Hello world");
    assert_eq!(stored[1].status, MessageStatus::Complete);
    assert_eq!(stored[1].metadata["usage"]["completion_tokens"], 3);
    assert_eq!(events[4]["message_id"], json!(stored[1].id));

    let request = &fake.requests()[0].body;
    assert_eq!(request["messages"][0]["role"], "system");
    assert_eq!(
        request["messages"][1],
        json!({"role": "user", "content": "Say hello"})
    );
    let names: Vec<&str> = request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "the tools are offered in a stable order");
    assert!(names.contains(&"kg__type_info"), "{names:?}");

    let detail = server.conversation(conversation_id).await;
    assert_eq!(detail["conversation"]["title"], "Say hello");

    let metrics = metrics_text(&server).await;
    assert!(
        metrics.contains("chat_answers_total{outcome=\"completed\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("chat_answer_duration_seconds"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_is_retried_and_the_answer_streams_once() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::rate_limited(0));
    fake.enqueue(ScriptedReply::text(&["after ", "waiting"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;

    let events = server.ask_and_wait(json!({"message": "hi"})).await;
    assert_eq!(fake.requests().len(), 2);
    assert_eq!(of_type(&events, "meta").len(), 1);
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    assert_eq!(answer_text(&events), "after waiting");
    assert_eq!(events.last().unwrap()["outcome"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mid_stream_failure_keeps_the_partial_text_marked_and_reports_the_error() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_abort(&["Hel", "lo"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;

    let events = server.ask_and_wait(json!({"message": "hi"})).await;
    assert_eq!(answer_text(&events), "Hello");
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert!(
        errors[0]["code"].as_str().unwrap().starts_with("llm_"),
        "{}",
        errors[0]
    );
    assert_eq!(events.last().unwrap()["outcome"], "failed");
    assert_eq!(
        fake.requests().len(),
        1,
        "nothing is retried once tokens were streamed"
    );

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let stored = server.stored_messages(conversation_id).await;
    let answer = stored.last().unwrap();
    assert_eq!(answer.content, "Hello");
    assert_eq!(answer.status, MessageStatus::Partial);
    assert_eq!(answer.metadata["interrupted"], "error");
    assert!(answer.metadata["error"].as_str().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_cancels_the_llm_request_and_what_was_said_is_kept() {
    client_leaving_story(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_story_on_postgresql() {
    client_leaving_story(true).await;
}

async fn client_leaving_story(postgres: bool) {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["a partial ", "answer"]));
    fake.enqueue(ScriptedReply::text(&["second answer"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.postgres = postgres;
    let server = ChatServer::start(options).await;

    let mut reader = server.ask(json!({"message": "tell me a long story"})).await;
    let meta = reader.next_event().await.unwrap();
    let conversation_id = meta["conversation_id"].as_str().unwrap().to_owned();
    let mut text = String::new();
    while text != "a partial answer" {
        let event = reader.next_event().await.unwrap();
        text.push_str(event["token"].as_str().unwrap_or_default());
    }
    drop(reader);

    assert!(
        fake.wait_for_abandoned_streams(1, Duration::from_secs(10))
            .await,
        "the LLM request is cancelled when the client leaves"
    );
    server.wait_until_idle(&conversation_id).await;
    let stored = server.stored_messages(&conversation_id).await;
    assert_eq!(stored.len(), 2, "question and partial answer: {stored:#?}");
    assert_eq!(stored[1].content, "a partial answer");
    assert_eq!(stored[1].status, MessageStatus::Partial);
    assert_eq!(stored[1].metadata["interrupted"], "cancelled");

    // The conversation goes on; the next request sees the cut answer as history.
    let events = server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "go on"}))
        .await;
    assert_eq!(answer_text(&events), "second answer");
    let history = &fake.requests()[1].body["messages"];
    let contents: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|message| message["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        contents,
        ["tell me a long story", "a partial answer", "go on"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_client_attaches_from_the_start_keeps_the_answer_alive_and_replays_it_later() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["first words"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.chat.heartbeat_secs = 1;
    let server = ChatServer::start(options).await;

    let mut asker = server.ask(json!({"message": "hi"})).await;
    let events = asker.until("token").await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();

    let mut watcher = server.attach(&conversation_id).await;
    let seen = watcher.until("token").await;
    assert_eq!(seen[0]["type"], "meta");
    assert_eq!(seen[0]["replay"], false);
    assert_eq!(answer_text(&seen), "first words");

    // The asker leaves; the watcher keeps the answer going, and hears heartbeats meanwhile.
    drop(asker);
    let quiet = tokio::time::timeout(Duration::from_millis(2500), watcher.next_event()).await;
    assert!(
        quiet.is_err(),
        "no event was expected while the model is silent"
    );
    assert!(
        watcher
            .comments
            .iter()
            .any(|comment| comment == "heartbeat"),
        "{:?}",
        watcher.raw
    );
    assert_eq!(
        fake.streams_abandoned_by_client(),
        0,
        "one client is still watching"
    );

    // A third request on the busy conversation is refused, pointing at the attach route.
    let busy = server
        .send(
            reqwest::Method::POST,
            "/chat/stream",
            Some(json!({"conversation_id": conversation_id, "message": "again"})),
        )
        .await;
    assert_eq!(busy.status(), 409);
    let body: Value = busy.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/stream"),
        "{body}"
    );

    drop(watcher);
    assert!(
        fake.wait_for_abandoned_streams(1, Duration::from_secs(10))
            .await
    );
    server.wait_until_idle(&conversation_id).await;

    let replay = server.attach(&conversation_id).await.until_done().await;
    assert_eq!(replay[0]["replay"], true);
    assert_eq!(answer_text(&replay), "first words");
    assert_eq!(of_type(&replay, "error").len(), 1);
    assert_eq!(replay.last().unwrap()["outcome"], "cancelled");
}
