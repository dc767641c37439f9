//! Following a live answer from another replica (PostgreSQL, fresh schema): the answer runs on
//! replica A with a slow scripted model; a client of replica B follows the conversation
//! (`GET /chat/{id}/stream`) and must get every event A's own client gets, in the same order,
//! live (before the answer ends), ending with `done` — also when no notice of A's reaches B
//! (B reads on its timer). When A's client leaves, the answer is cancelled and B's follower
//! sees its end too. (A replica killed mid-answer, whose followers get `answer_lost`, is the
//! binary's test: `crates/switchboard/tests/it/replicas.rs`.)

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

fn database_at(url: String) -> DatabaseConfig {
    DatabaseConfig {
        url: Some(url),
        max_connections: 4,
        ..DatabaseConfig::default()
    }
}

async fn two_replicas(schema: &PostgresSchema) -> (FakeOpenAi, ApprovalServer, ApprovalServer) {
    let fake = FakeOpenAi::start().await;
    let database = database_at(schema.url());
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

/// How many notices replica A sent into the void (see the test below).
fn swallowed_notices(schema: &PostgresSchema) -> usize {
    schema
        .execute(&format!(
            "SELECT count(*) FROM \"{}\".swallowed_notices WHERE channel = '{}'",
            schema.name(),
            switchboard_store::ANSWER_STREAMS_CHANNEL
        ))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_that_hears_no_notice_reads_every_event_in_order_on_its_timer() {
    let schema = PostgresSchema::create();
    // Replica A's connections find this schema's `pg_notify` before `pg_catalog`'s: its
    // notices are counted and go nowhere, so B's listener never hears of A's answer.
    let name = schema.name();
    schema.execute(&format!(
        "CREATE TABLE \"{name}\".swallowed_notices (channel text, payload text); \
         CREATE FUNCTION \"{name}\".pg_notify(channel text, payload text) RETURNS void \
         LANGUAGE sql AS $$ INSERT INTO \"{name}\".swallowed_notices VALUES (channel, payload) $$"
    ));
    let fake = FakeOpenAi::start().await;
    let silent = database_at(schema.url_with_search_path(&format!("{name},pg_catalog")));
    let a = ApprovalServer::start_on(ApprovalConfig::default(), &fake.base_url(), &silent).await;
    let b = a
        .replica_on(
            ApprovalConfig::default(),
            &fake.base_url(),
            &database_at(schema.url()),
        )
        .await;
    // Long enough for several of B's reads (one a second) while the answer runs.
    fake.enqueue(slow_text(40, Duration::from_millis(100)));
    let mut asker = a.ask(&a.alice, "tell me slowly").await;
    let meta = asker.next_event().await.unwrap();
    assert_eq!(meta["type"], "meta");
    let conversation_id = meta["conversation_id"].as_str().unwrap().to_owned();
    let prefix = asker.until("token").await;
    let mut follower = follow(&b, &conversation_id).await;

    let (asked, followed) = tokio::join!(
        timed_until_done(&mut asker),
        timed_until_done(&mut follower)
    );
    let followed_events: Vec<Value> = followed.iter().map(|(_, event)| event.clone()).collect();
    let asked_events: Vec<Value> = std::iter::once(meta)
        .chain(prefix)
        .chain(asked.iter().map(|(_, event)| event.clone()))
        .collect();
    assert_eq!(
        followed_events, asked_events,
        "B's client gets exactly what A's client got, in the same order"
    );
    assert_eq!(followed_events.last().unwrap()["outcome"], "completed");
    // Read while the answer ran (on B's timer), not only once it was over.
    let asker_done_at = asked.last().unwrap().0;
    let followed_before_end = followed
        .iter()
        .filter(|(at, event)| event["type"] == "token" && *at < asker_done_at)
        .count();
    assert!(
        followed_before_end >= 5,
        "only {followed_before_end} tokens came before the end"
    );
    assert!(
        swallowed_notices(&schema) > 0,
        "A's notices went into the void, none reached B"
    );
}
