//! Shutdown as the chat's clients see it. A shutdown first drains — `/readyz` turns DOWN, a new
//! answer is refused with 503 `shutting_down` and `Retry-After`, the answers in flight go on
//! (their tool calls still reach the MCP servers) — and only at the end of the grace cancels
//! what is left, which then says so (an `error` event before `done`) and keeps what it
//! produced.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, everything_stdio, of_type};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_core::ToolCallState;
use switchboard_store::MessageStatus;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_stopped_by_shutdown_tells_its_clients_why() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["half an ", "answer"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;

    let mut reader = server.ask(json!({"message": "a long one"})).await;
    let mut events = reader.until("token").await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    while answer_text(&events) != "half an answer" {
        events.push(reader.next_event().await.unwrap());
    }
    server.shutdown.cancel();
    events.extend(reader.until_done().await);

    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!(errors[0]["code"], "shutting_down", "{events:#?}");
    assert!(
        errors[0]["error"].as_str().unwrap().contains("saved"),
        "{events:#?}"
    );
    assert_eq!(events.last().unwrap()["outcome"], "cancelled");
    let stored = server.stored_messages(&conversation_id).await;
    assert_eq!(stored[1].content, "half an answer");
    assert_eq!(stored[1].status, MessageStatus::Partial);
}

/// `/readyz` until it answers 503 (the drain has begun); returns its document.
async fn wait_until_not_ready(server: &ChatServer) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let response = server
            .client
            .get(server.url("/readyz"))
            .send()
            .await
            .unwrap();
        if response.status() == 503 {
            return response.json().await.unwrap();
        }
        assert!(
            Instant::now() < deadline,
            "/readyz still 200 5 s into the drain"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_lets_the_answer_in_flight_finish_its_tool_call_and_refuses_new_ones() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_slow",
        "slow__trigger-long-running-operation",
        json!({"duration": 2, "steps": 2}),
    )]));
    fake.enqueue(ScriptedReply::text(&["The operation ", "finished."]));
    let mut server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server.register_server(everything_stdio("slow")).await;

    let mut reader = server
        .ask(json!({"message": "run the long operation"}))
        .await;
    let mut events = reader.until("mcp_tool").await;
    assert_eq!(events.last().unwrap()["status"], "started", "{events:#?}");
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let signalled = Instant::now();
    let serving = server.begin_shutdown();

    let ready = wait_until_not_ready(&server).await;
    assert_eq!(ready["status"], "DOWN", "{ready}");
    assert_eq!(ready["checks"]["shutdown"]["status"], "DOWN", "{ready}");
    assert_eq!(
        ready["checks"]["shutdown"]["detail"]["draining"], true,
        "{ready}"
    );
    let refused = server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(&server.token)
        .json(&json!({"message": "one more question"}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "5");
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "shutting_down", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shutting down"),
        "{body}"
    );

    events.extend(reader.until_done().await);
    let finished = of_type(&events, "mcp_tool")
        .into_iter()
        .find(|event| event["status"] != "started" && event["status"] != "progress")
        .unwrap_or_else(|| panic!("no end of the call: {events:#?}"));
    assert_eq!(finished["status"], "completed", "{events:#?}");
    assert!(of_type(&events, "error").is_empty(), "{events:#?}");
    assert_eq!(answer_text(&events), "The operation finished.");
    assert_eq!(events.last().unwrap()["outcome"], "completed");

    let stopped = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops once the answer is done")
        .unwrap();
    stopped.unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(5),
        "the drain ends with the answer, not at the 5 s grace: {:?}",
        signalled.elapsed()
    );
    let calls = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].state, ToolCallState::Completed, "{calls:?}");
    let stored = server.stored_messages(&conversation_id).await;
    let last = stored.last().unwrap();
    assert_eq!(last.content, "The operation finished.");
    assert_eq!(last.status, MessageStatus::Complete);
    assert!(
        server
            .client
            .get(server.url("/healthz"))
            .timeout(Duration::from_secs(2))
            .send()
            .await
            .is_err(),
        "no longer accepting connections once stopped"
    );
    // The conversation list no longer shows an answer in flight (nothing is left running).
    assert_eq!(server.chat.answers_in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_end_of_a_short_grace_the_answer_is_cut_and_what_it_produced_is_saved() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["the first ", "half"]));
    let mut server = ChatServer::start(ChatOptions {
        shutdown_grace_secs: 1,
        ..ChatOptions::openai(&fake.base_url())
    })
    .await;

    let mut reader = server.ask(json!({"message": "a long one"})).await;
    let mut events = reader.until("token").await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    while answer_text(&events) != "the first half" {
        events.push(reader.next_event().await.unwrap());
    }
    let signalled = Instant::now();
    let serving = server.begin_shutdown();
    events.extend(reader.until_done().await);
    let cut_after = signalled.elapsed();
    assert!(
        cut_after >= Duration::from_millis(900),
        "the answer had the whole 1 s grace: cut after {cut_after:?}"
    );
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:#?}");
    assert_eq!(errors[0]["code"], "shutting_down", "{events:#?}");
    assert_eq!(events.last().unwrap()["outcome"], "cancelled");
    assert!(
        reader.next_event().await.is_none(),
        "the stream ends after done"
    );

    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the server stops soon after the grace")
        .unwrap()
        .unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(3),
        "stopped {:?} after the signal",
        signalled.elapsed()
    );
    let stored = server.stored_messages(&conversation_id).await;
    assert_eq!(stored[1].content, "the first half");
    assert_eq!(stored[1].status, MessageStatus::Partial);
}
