//! An answer cut short because the service is stopping says so to the clients following it
//! (an `error` event before `done`), and what it produced is kept.

use crate::chat_support::{ChatOptions, ChatServer, answer_text, of_type};
use serde_json::json;
use switchboard_store::MessageStatus;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_stopped_by_shutdown_tells_its_clients_why() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::text_then_hang(&["half an ", "answer"]));
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;

    let mut reader = server.ask(json!({"message": "a long one"})).await;
    let mut events = reader.until("token").await;
    let conversation_id = events[0]["conversationId"].as_str().unwrap().to_owned();
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
