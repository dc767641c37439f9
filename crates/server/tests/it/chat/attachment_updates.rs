//! Resource subscriptions keep an attached resource current (issue 12), through the HTTP API
//! against a FastMCP server we did not write the SDK of (`fixtures/resource_updates_server.py`,
//! which declares `resources.subscribe` and changes a note when the test says so): a question
//! attaches `fixture://note/a`; while the conversation's `attachment-updates` stream is held,
//! the upstream is subscribed; a change is read again, stored with the question (`refreshed_at`)
//! and announced on the stream; the next turn's model reads the new contents; when the upstream
//! restarts (a new process that knows no subscription), the watch subscribes again on its next
//! session and reads the resource once more; closing the stream releases the subscription.

use crate::support::chat::{ChatOptions, ChatServer, remote_server};
use crate::support::sse::SseReader;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_core::MessageContext;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply};
use switchboard_test_support::interop::Peer;

const NOTE_A: &str = "fixture://note/a";
const DEADLINE: Duration = Duration::from_secs(30);

async fn control(notes: &Peer, route: &str) -> Value {
    switchboard_test_support::http_client::http_client()
        .post(notes.control_url(route))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

async fn upstream_subscriptions(notes: &Peer) -> Value {
    let answer: Value = reqwest::get(notes.control_url("subscriptions"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["subscriptions"].clone()
}

async fn open_updates(
    server: &ChatServer,
    token: &str,
    conversation_id: &str,
) -> reqwest::Response {
    server
        .client
        .get(server.url(&format!(
            "/chat/conversations/{conversation_id}/attachment-updates"
        )))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

/// Every text the model was sent in its last request.
fn last_request_text(fake: &FakeOpenAi) -> String {
    fake.requests().last().unwrap().body["messages"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_resource_follows_its_servers_updates_while_the_conversation_is_watched() {
    let mut notes = Peer::resource_updates();
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    server
        .register_server(remote_server("notes", &notes.url()))
        .await;
    fake.enqueue(ScriptedReply::text(&["Noted."]));
    let events = server
        .ask_and_wait(json!({
            "message": "keep an eye on this note",
            "attachments": [{"server": "notes", "uri": NOTE_A}],
        }))
        .await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    assert!(last_request_text(&fake).contains("note a"));

    // Someone else may not watch it.
    let member = crate::support::chat::member_token(&server, "mallory", "chat:use").await;
    assert_eq!(
        open_updates(&server, &member, &conversation_id)
            .await
            .status(),
        404
    );

    let response = open_updates(&server, &server.token, &conversation_id).await;
    assert_eq!(response.status(), 200);
    let mut updates = SseReader::new(response);
    let watching = updates.next_event().await.unwrap();
    assert_eq!(watching, json!({"type": "watching", "watched": 1}));
    assert_eq!(upstream_subscriptions(&notes).await, json!({NOTE_A: 1}));

    assert_eq!(
        control(&notes, &format!("update?uri={NOTE_A}")).await["told"],
        1
    );
    let updated = tokio::time::timeout(DEADLINE, updates.next_event())
        .await
        .expect("the update was announced")
        .unwrap();
    assert_eq!(updated["type"], "attachment_updated", "{updated}");
    assert_eq!(updated["server"], "notes");
    assert_eq!(updated["uri"], NOTE_A);
    let question_id = updated["message_ids"][0].as_str().unwrap().to_owned();

    // Stored with the question: the new contents, and when they were read.
    let stored = server.stored_messages(&conversation_id).await;
    let question = stored
        .iter()
        .find(|message| message.id.as_str() == question_id)
        .unwrap();
    let context = MessageContext::from_metadata(&question.metadata).unwrap();
    assert!(context.attachments[0].refreshed_at.is_some(), "{context:?}");
    let contents = serde_json::to_string(&context.blocks).unwrap();
    assert!(contents.contains("note a (revision 1)"), "{contents}");

    // The next turn's model reads the new contents.
    fake.enqueue(ScriptedReply::text(&["It changed."]));
    server
        .ask_and_wait(json!({"conversation_id": conversation_id, "message": "and now?"}))
        .await;
    assert!(last_request_text(&fake).contains("note a (revision 1)"));

    // The upstream restarts, forgetting its subscriptions and the note's revisions: the watch
    // subscribes again on the next session and reads the note once more.
    let port = notes.port;
    notes.kill();
    let restarted = Peer::resource_updates_at(port);
    let renewed = tokio::time::timeout(DEADLINE, updates.next_event())
        .await
        .expect("the renewal read the note again")
        .unwrap();
    assert_eq!(renewed["type"], "attachment_updated", "{renewed}");
    until_subscriptions(&restarted, json!({NOTE_A: 1})).await;
    let stored = server.stored_messages(&conversation_id).await;
    let question = stored
        .iter()
        .find(|message| message.id.as_str() == question_id)
        .unwrap();
    let contents = serde_json::to_string(&question.metadata).unwrap();
    assert!(
        contents.contains("note a") && !contents.contains("revision"),
        "{contents}"
    );

    // Closing the stream releases the upstream's subscription.
    drop(updates);
    until_subscriptions(&restarted, json!({})).await;
}

async fn until_subscriptions(notes: &Peer, expected: Value) {
    let started = Instant::now();
    while upstream_subscriptions(notes).await != expected {
        assert!(
            started.elapsed() < DEADLINE,
            "the upstream's subscriptions stayed {}, not {expected}",
            upstream_subscriptions(notes).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_without_attachments_watches_nothing_and_the_stream_ends() {
    let fake = FakeOpenAi::start().await;
    let server = ChatServer::start(ChatOptions::openai(&fake.base_url())).await;
    fake.enqueue(ScriptedReply::text(&["Hi."]));
    let events = server.ask_and_wait(json!({"message": "hello"})).await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let response = open_updates(&server, &server.token, conversation_id).await;
    assert_eq!(response.status(), 200);
    let mut updates = SseReader::new(response);
    assert_eq!(
        updates.next_event().await.unwrap(),
        json!({"type": "watching", "watched": 0})
    );
    let end = tokio::time::timeout(DEADLINE, updates.next_event()).await;
    assert_eq!(end.expect("the stream ends"), None);
}
