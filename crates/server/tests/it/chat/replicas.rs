//! Following a live answer from another replica (PostgreSQL, fresh schema): the answer runs on
//! replica A with a slow scripted model; a client of replica B follows the conversation
//! (`GET /chat/{id}/stream`) and must get every event A's own client gets, in the same order,
//! live (before the answer ends), ending with `done`. When A's client leaves, the answer is
//! cancelled and B's follower sees its end too.

use crate::support::approvals::*;
use crate::support::chat::PostgresSchema;
use crate::support::sse::SseReader;
use serde_json::Value;
use std::time::{Duration, Instant};
use switchboard_approvals::ApprovalConfig;
use switchboard_store::DatabaseConfig;
use switchboard_test_support::fake_openai::{
    FakeOpenAi, ScriptedReply, ScriptedStream, StreamEnding, StreamStep, finish_chunk, role_chunk,
    text_chunk,
};

/// `parts` text chunks, `pause` apart, then a clean end.
fn slow_text(parts: usize, pause: Duration) -> ScriptedReply {
    let mut steps = vec![StreamStep::data(role_chunk())];
    for index in 0..parts {
        steps.push(StreamStep::Pause(pause));
        steps.push(StreamStep::data(text_chunk(&format!("word{index} "))));
    }
    steps.push(StreamStep::data(finish_chunk("stop")));
    ScriptedReply::Stream(ScriptedStream {
        steps,
        ending: StreamEnding::Done,
    })
}

async fn two_replicas(schema: &PostgresSchema) -> (FakeOpenAi, ApprovalServer, ApprovalServer) {
    let fake = FakeOpenAi::start().await;
    let database = DatabaseConfig {
        url: Some(schema.url()),
        max_connections: 4,
        ..DatabaseConfig::default()
    };
    let a = ApprovalServer::start_on(ApprovalConfig::default(), &fake.base_url(), &database).await;
    let b = a.replica(ApprovalConfig::default(), &fake.base_url()).await;
    (fake, a, b)
}

/// Opens `GET /chat/{id}/stream` on `replica` as Alice; the answer must be followed live.
async fn follow(replica: &ApprovalServer, conversation_id: &str) -> SseReader {
    let response = replica
        .client
        .get(replica.url(&format!("/chat/{conversation_id}/stream")))
        .bearer_auth(&replica.alice.token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["x-answer-source"], "live");
    SseReader::new(response)
}

/// Every event up to `done`, each with when it arrived.
async fn timed_until_done(stream: &mut SseReader) -> Vec<(Instant, Value)> {
    let mut events = Vec::new();
    while let Some(event) = stream.next_event().await {
        let done = event["type"] == "done";
        events.push((Instant::now(), event));
        if done {
            return events;
        }
    }
    panic!("the stream ended without `done`: {events:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_on_another_replica_gets_every_live_event_in_order() {
    let schema = PostgresSchema::create();
    let (fake, a, b) = two_replicas(&schema).await;
    fake.enqueue(slow_text(40, Duration::from_millis(25)));
    let mut asker = a.ask(&a.alice, "tell me slowly").await;
    let meta = asker.next_event().await.unwrap();
    assert_eq!(meta["type"], "meta");
    let conversation_id = meta["conversation_id"].as_str().unwrap().to_owned();
    // Let part of the answer go by before B's client comes: it must get it from the start.
    let prefix = asker.until("token").await;
    let mut follower = follow(&b, &conversation_id).await;

    let (asked, followed) = tokio::join!(
        timed_until_done(&mut asker),
        timed_until_done(&mut follower)
    );
    let followed_events: Vec<Value> = followed.iter().map(|(_, event)| event.clone()).collect();
    let asked_events: Vec<Value> = std::iter::once(meta.clone())
        .chain(prefix)
        .chain(asked.iter().map(|(_, event)| event.clone()))
        .collect();
    assert_eq!(
        followed_events, asked_events,
        "B's client gets exactly what A's client got, in the same order"
    );
    let done = followed_events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["outcome"], "completed");
    let tokens = followed_events
        .iter()
        .filter(|event| event["type"] == "token")
        .count();
    assert_eq!(tokens, 40, "{followed_events:#?}");
    // Live, not a replay after the end: B had most tokens before A's client had its `done`.
    let asker_done_at = asked.last().unwrap().0;
    let followed_before_end = followed
        .iter()
        .filter(|(at, event)| event["type"] == "token" && *at < asker_done_at)
        .count();
    assert!(
        followed_before_end >= 30,
        "only {followed_before_end} tokens came live"
    );
    assert_eq!(meta["replay"], false);
}
