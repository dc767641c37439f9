//! Kill the host (issue 18, target 10): `kill -9` of Switchboard at random points of turns
//! whose one tool call writes (our knowledge graph's `create_object`, a Tag named after the
//! turn), again and again on one data directory. After every kill SQLite's `integrity_check`
//! says `ok`; at the end, through the API of the restarted service:
//! - every question the server acknowledged (its `meta` event arrived) is stored;
//! - no call is left between `proposed` and a final state (the restart marks in-flight ones
//!   `unknown`), and no call id is recorded twice;
//! - every call ran at most once: its Tag exists once if the call `completed`, at most once if
//!   it is `unknown`, and a Tag of a turn whose call was never recorded does not exist at all.
//!
//! The same on PostgreSQL with two replicas of one database, one of them killed: a survivor
//! runs throughout while the other is started, asked and killed again and again. No restart
//! recovers a killed replica's work there: the survivor's heartbeat sweep does, once the dead
//! replica has missed three heartbeats, and the same checks then hold through the survivor.
//!
//! CI runs [`DEFAULT_KILLS`] and [`DEFAULT_REPLICA_KILLS`]; `SWITCHBOARD_KILLS=1000` and
//! `SWITCHBOARD_REPLICA_KILLS=100` run the long versions (the notes' figures).

use crate::chat::with_model;
use crate::process::{ADMIN_TOKEN, Service};
use crate::replicas::replica;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::postgres::PostgresSchema;
use tokio::sync::oneshot;

const DEFAULT_KILLS: usize = 12;
const DEFAULT_REPLICA_KILLS: usize = 5;
/// How long the survivor may take to recover the last killed replica's work: it is presumed
/// dead three heartbeats (15 s) after its last one, and swept at the survivor's next; a loaded
/// machine gets room beyond that.
const RECOVERY_DEADLINE: Duration = Duration::from_secs(90);
/// The longest wait between sending a question and the kill: a turn here takes ~30–80 ms.
const MAX_DELAY_MS: u64 = 150;
/// The same for a replica on PostgreSQL, where a turn takes longer (each commit is a round
/// trip to the database server).
const MAX_REPLICA_DELAY_MS: u64 = 600;

/// What one killed turn asked, and what the server acknowledged.
struct KilledTurn {
    question: String,
    /// From the `meta` event, when it arrived before the kill.
    conversation_id: Option<String>,
}

/// `variable`'s number, else `default`.
fn kills_from_env(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// The next pseudo-random wait before a kill, in `0..max_ms` ms.
fn next_delay(seed: &mut u64, max_ms: u64) -> Duration {
    *seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    Duration::from_millis((*seed >> 33) % max_ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_random_points_of_turns_loses_nothing_and_runs_no_call_twice() {
    let kills = kills_from_env("SWITCHBOARD_KILLS", DEFAULT_KILLS);
    let fake = FakeOpenAi::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let mut markers = Vec::new();
    let mut turns = Vec::new();
    let mut seed = 0x5eed_u64;
    for kill in 0..kills {
        if fake.pending_replies() == 0 {
            markers.push(script_turn(&fake, kill));
        }
        let service = Service::start_command(with_model(data_dir.path(), &fake));
        let delay = next_delay(&mut seed, MAX_DELAY_MS);
        turns.push(ask_then_kill(&client, service, kill, delay).await);
        assert_eq!(
            integrity_check(data_dir.path()).await,
            "ok",
            "after kill {kill}"
        );
    }
    let service = Service::start_command(with_model(data_dir.path(), &fake));
    let calls = check_acknowledged_turns(&client, &service, &turns).await;
    check_each_call_ran_at_most_once(&client, &service, &calls, &markers).await;
    println!(
        "{kills} kills: {}; calls by state after restart {:?}",
        acknowledged_summary(&turns),
        calls_by_state(&calls),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_one_of_two_replicas_at_random_points_loses_nothing_and_runs_no_call_twice() {
    let kills = kills_from_env("SWITCHBOARD_REPLICA_KILLS", DEFAULT_REPLICA_KILLS);
    let schema = PostgresSchema::create();
    let fake = FakeOpenAi::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let survivor = Service::start_command(replica(data_dir.path(), &fake, &schema));
    let mut markers = Vec::new();
    let mut turns = Vec::new();
    let mut seed = 0x7e9_u64;
    for kill in 0..kills {
        if fake.pending_replies() == 0 {
            markers.push(script_turn(&fake, kill));
        }
        let doomed = Service::start_command(replica(data_dir.path(), &fake, &schema));
        let delay = next_delay(&mut seed, MAX_REPLICA_DELAY_MS);
        turns.push(ask_then_kill(&client, doomed, kill, delay).await);
    }
    let recovering = Instant::now();
    wait_until_every_call_is_final(&client, &survivor).await;
    let recovered_in = recovering.elapsed();
    let calls = check_acknowledged_turns(&client, &survivor, &turns).await;
    check_each_call_ran_at_most_once(&client, &survivor, &calls, &markers).await;
    println!(
        "{kills} kills of one of two replicas: {}; calls by state once the survivor recovered \
         them ({:.1} s after the last kill) {:?}",
        acknowledged_summary(&turns),
        recovered_in.as_secs_f64(),
        calls_by_state(&calls),
    );
}

/// Asks `service` kill `kill`'s question and `kill -9`s it `delay` later: the question, and
/// its conversation when the answer was acknowledged before the kill.
async fn ask_then_kill(
    client: &reqwest::Client,
    service: Service,
    kill: usize,
    delay: Duration,
) -> KilledTurn {
    let question = format!("Tag this turn ({kill})");
    let acknowledged = ask_in_background(client, &service, &question);
    tokio::time::sleep(delay).await;
    service.kill_9();
    let conversation_id = tokio::time::timeout(Duration::from_secs(5), acknowledged)
        .await
        .ok()
        .and_then(Result::ok)
        .flatten();
    KilledTurn {
        question,
        conversation_id,
    }
}

/// Waits until no call of any conversation is between `proposed` and a final state (the
/// survivor's sweep has recovered the killed replicas' calls); panics after
/// [`RECOVERY_DEADLINE`].
async fn wait_until_every_call_is_final(client: &reqwest::Client, service: &Service) {
    let deadline = Instant::now() + RECOVERY_DEADLINE;
    loop {
        let mut unfinished = Vec::new();
        for id in conversation_ids(client, service).await {
            let detail = service
                .get_json(client, &format!("/chat/conversations/{id}"))
                .await;
            unfinished.extend(
                detail["tool_calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|call| !FINAL_STATES.contains(&call["state"].as_str().unwrap()))
                    .cloned(),
            );
        }
        if unfinished.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "calls still unfinished {RECOVERY_DEADLINE:?} after the last kill: {unfinished:#?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A call's states once nothing more can happen to it.
const FINAL_STATES: [&str; 4] = ["completed", "failed", "denied", "unknown"];

fn acknowledged_summary(turns: &[KilledTurn]) -> String {
    let acknowledged = turns
        .iter()
        .filter(|turn| turn.conversation_id.is_some())
        .count();
    format!("{acknowledged} questions acknowledged and kept")
}

fn calls_by_state(calls: &[Value]) -> HashMap<&str, usize> {
    let mut states: HashMap<&str, usize> = HashMap::new();
    for call in calls {
        *states.entry(call["state"].as_str().unwrap()).or_default() += 1;
    }
    states
}

/// The model's script for one turn: `kg__create_object` of a Tag named after it, then a line.
/// Returns the Tag's name.
fn script_turn(fake: &FakeOpenAi, kill: usize) -> String {
    let marker = format!("killed-turn-{kill}");
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        &format!("call_{kill}"),
        "kg__create_object",
        json!({"type": "Tag", "properties": {"name": marker}}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Tagged."]));
    marker
}

/// Sends `question` and reads its answer in a task that outlives the kill; the receiver gets
/// the conversation id once the `meta` event (the acknowledgement) arrives.
fn ask_in_background(
    client: &reqwest::Client,
    service: &Service,
    question: &str,
) -> oneshot::Receiver<Option<String>> {
    let (acknowledged, receiver) = oneshot::channel();
    let request = client
        .post(service.url("/chat/stream"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"message": question}));
    tokio::spawn(async move {
        let Ok(response) = request.send().await else {
            let _ = acknowledged.send(None);
            return;
        };
        let mut stream = response.bytes_stream();
        let mut buffer = String::new();
        while let Some(Ok(chunk)) = stream.next().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            let meta = buffer
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str::<Value>(data).ok())
                .find(|event| event["type"] == "meta");
            if let Some(meta) = meta {
                let id = meta["conversation_id"].as_str().map(str::to_owned);
                let _ = acknowledged.send(id);
                // Keep reading until the kill cuts the stream.
                while let Some(Ok(_)) = stream.next().await {}
                return;
            }
        }
        let _ = acknowledged.send(None);
    });
    receiver
}

/// SQLite's own check of the database file, with no process holding it.
async fn integrity_check(data_dir: &Path) -> String {
    use sqlx::ConnectOptions;
    let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("switchboard.db"))
        .connect()
        .await
        .unwrap();
    let verdict: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut connection)
        .await
        .unwrap();
    verdict
}

/// Every conversation's id, page by page.
async fn conversation_ids(client: &reqwest::Client, service: &Service) -> Vec<String> {
    let mut ids = Vec::new();
    let mut path = "/chat/conversations?limit=100".to_owned();
    loop {
        let page = service.get_json(client, &path).await;
        for conversation in page["conversations"].as_array().unwrap() {
            ids.push(conversation["id"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/chat/conversations?limit=100&cursor={cursor}"),
            None => return ids,
        }
    }
}

/// Every acknowledged question is stored; every recorded call is final and recorded once.
/// Returns every call of every conversation.
async fn check_acknowledged_turns(
    client: &reqwest::Client,
    service: &Service,
    turns: &[KilledTurn],
) -> Vec<Value> {
    let mut calls = Vec::new();
    let mut stored_questions = HashSet::new();
    for id in conversation_ids(client, service).await {
        let id = id.as_str();
        let detail = service
            .get_json(client, &format!("/chat/conversations/{id}"))
            .await;
        for message in detail["messages"].as_array().unwrap() {
            if message["role"] == "user" {
                stored_questions.insert((id.to_owned(), message["content"].clone()));
            }
        }
        calls.extend(detail["tool_calls"].as_array().unwrap().iter().cloned());
    }
    for turn in turns {
        if let Some(id) = &turn.conversation_id {
            let key = (id.clone(), Value::String(turn.question.clone()));
            assert!(
                stored_questions.contains(&key),
                "acknowledged question lost: {}",
                turn.question
            );
        }
    }
    let mut seen = HashSet::new();
    for call in &calls {
        let state = call["state"].as_str().unwrap();
        assert!(
            FINAL_STATES.contains(&state),
            "a call left {state} after the restart: {call}"
        );
        let id = call["llm_call_id"].as_str().unwrap();
        assert!(seen.insert(id.to_owned()), "call {id} recorded twice");
    }
    calls
}

/// Each Tag exists once for a completed call, at most once for an unknown one, and not at all
/// for a turn whose call was never recorded or never left.
async fn check_each_call_ran_at_most_once(
    client: &reqwest::Client,
    service: &Service,
    calls: &[Value],
    markers: &[String],
) {
    let export = service.get_json(client, "/api/kg/export").await;
    let mut tags: HashMap<String, usize> = HashMap::new();
    for object in export["objects"].as_array().unwrap() {
        if let Some(name) = object["properties"]["name"].as_str() {
            *tags.entry(name.to_owned()).or_default() += 1;
        }
    }
    let mut recorded = HashSet::new();
    for call in calls {
        let arguments: Value = serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
        let marker = arguments["properties"]["name"].as_str().unwrap().to_owned();
        let created = tags.get(&marker).copied().unwrap_or(0);
        match call["state"].as_str().unwrap() {
            "completed" => assert_eq!(created, 1, "{marker}: completed once, {call}"),
            "unknown" => assert!(created <= 1, "{marker} ran {created} times: {call}"),
            _ => assert_eq!(created, 0, "{marker} ran though its call {call}"),
        }
        recorded.insert(marker);
    }
    for marker in markers.iter().filter(|marker| !recorded.contains(*marker)) {
        assert_eq!(
            tags.get(marker),
            None,
            "{marker} ran without a recorded call"
        );
    }
}
