//! Two replicas of the real binary on one PostgreSQL database (a fresh schema per test, one
//! data directory for the shared encryption key), one of them killed with `kill -9`:
//! - the survivor still reaches our own knowledge-graph endpoint (upstream `kg`, the same
//!   service on every replica) although the replica started last — whose address a start
//!   writes into `kg`'s stored URL — is gone: a chat's write through the kg tools completes
//!   and is stored once;
//! - a client following an answer from the other replica (`GET /chat/{id}/stream`) whose
//!   answering replica is killed mid-answer gets what was relayed, then `error`
//!   `answer_lost` and `done` (failed) once that replica is known dead, instead of hanging;
//! - a tool call's task followed by one replica (its answer runs there) is cancelled through the
//!   other: the request is stored with the call, the following replica sends `tasks/cancel`,
//!   and its answer goes on with the cancelled call's error result.

use crate::chat::{ask, with_model};
use crate::process::{ADMIN_TOKEN, Service};
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::postgres::PostgresSchema;
use switchboard_test_support::task_server::TaskServer;

/// How long an event may take: a replica is presumed dead after three missed heartbeats (15
/// s); a loaded machine gets room beyond that.
const EVENT_DEADLINE: Duration = Duration::from_secs(90);

/// A replica of the real binary on `schema`, answering with `fake`, every call allowed.
pub(crate) fn replica(data_dir: &Path, fake: &FakeOpenAi, schema: &PostgresSchema) -> Command {
    let mut command = with_model(data_dir, fake);
    command.env("DATABASE_URL", schema.url());
    command
}

/// An SSE answer read event by event.
struct Events {
    stream: BoxStream<'static, reqwest::Result<String>>,
    buffer: String,
    seen: Vec<Value>,
}

impl Events {
    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        Self {
            stream: response
                .bytes_stream()
                .map(|chunk| chunk.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
                .boxed(),
            buffer: String::new(),
            seen: Vec::new(),
        }
    }

    /// The next event (panics after [`EVENT_DEADLINE`] or when the stream ends first).
    async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + EVENT_DEADLINE;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(data) = block.lines().find_map(|line| line.strip_prefix("data:")) {
                    let event: Value = serde_json::from_str(data.trim()).unwrap();
                    self.seen.push(event.clone());
                    return event;
                }
                continue;
            }
            match tokio::time::timeout_at(deadline, self.stream.next()).await {
                Ok(Some(Ok(chunk))) => self.buffer.push_str(&chunk),
                Ok(other) => panic!("the stream ended ({other:?}) after {:#?}", self.seen),
                Err(_) => panic!("no event within {EVENT_DEADLINE:?} after {:#?}", self.seen),
            }
        }
    }

    /// Events up to and including `done`.
    async fn until_done(&mut self) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next().await;
            let done = event["type"] == "done";
            events.push(event);
            if done {
                return events;
            }
        }
    }
}

/// `kg` as `service` lists it.
async fn listed_kg(client: &reqwest::Client, service: &Service) -> Value {
    let listed = service.get_json(client, "/api/mcp/servers").await;
    listed["servers"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .find(|server| server["name"] == "kg")
        .cloned()
        .unwrap_or_else(|| panic!("no kg upstream: {listed}"))
}

/// How many objects of the knowledge graph are named `name`.
async fn objects_named(client: &reqwest::Client, service: &Service, name: &str) -> usize {
    let export = service.get_json(client, "/api/kg/export").await;
    export["objects"]
        .as_array()
        .unwrap_or_else(|| panic!("{export}"))
        .iter()
        .filter(|object| object["properties"]["name"] == name)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_survivor_of_the_replica_started_last_still_writes_through_its_own_kg() {
    let schema = PostgresSchema::create();
    let fake = FakeOpenAi::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let survivor = Service::start_command(replica(data_dir.path(), &fake, &schema));
    let last_started = Service::start_command(replica(data_dir.path(), &fake, &schema));
    assert_ne!(survivor.base_url, last_started.base_url);
    last_started.kill_9();

    let marker = "written-after-the-other-replica-died";
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_write",
        "kg__create_object",
        json!({"type": "Tag", "properties": {"name": marker}}),
    )]));
    fake.enqueue(ScriptedReply::text(&["Tagged."]));
    let response = ask(&client, &survivor, json!({"message": "Tag this"}))
        .send()
        .await
        .unwrap();
    let events = Events::new(response).until_done().await;
    let finished: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "mcp_tool" && event["tool"] == "create_object")
        .filter(|event| event["status"] != "started")
        .collect();
    assert!(
        finished.len() == 1 && finished[0]["status"] == "completed",
        "the write through kg completed on the survivor: {events:#?}"
    );
    assert!(
        events.iter().all(|event| event["type"] != "error"),
        "{events:#?}"
    );
    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let detail = survivor
        .get_json(&client, &format!("/chat/conversations/{conversation_id}"))
        .await;
    assert_eq!(detail["tool_calls"][0]["state"], "completed", "{detail:#}");
    assert_eq!(
        objects_named(&client, &survivor, marker).await,
        1,
        "the write is stored, once"
    );
    // What the API shows is where the replica answering reaches its own endpoint.
    let kg = listed_kg(&client, &survivor).await;
    assert_eq!(kg["url"], survivor.url("/mcp").as_str(), "{kg:#}");
    assert_eq!(kg["managed_by_switchboard"], true, "{kg:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_whose_answering_replica_is_killed_gets_answer_lost() {
    let schema = PostgresSchema::create();
    let fake = FakeOpenAi::start().await;
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let answering = Service::start_command(replica(data_dir.path(), &fake, &schema));
    let following = Service::start_command(replica(data_dir.path(), &fake, &schema));
    // Two words, then the model says nothing more: the answer is in flight when A dies.
    fake.enqueue(ScriptedReply::text_then_hang(&["first ", "second "]));
    let response = ask(&client, &answering, json!({"message": "take your time"}))
        .send()
        .await
        .unwrap();
    let mut asked = Events::new(response);
    let meta = asked.next().await;
    assert_eq!(meta["type"], "meta", "{meta}");
    let conversation_id = meta["conversation_id"].as_str().unwrap().to_owned();
    while asked.next().await["token"] != "second " {}

    let response = client
        .get(following.url(&format!("/chat/{conversation_id}/stream")))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["x-answer-source"], "live");
    let mut followed = Events::new(response);
    let mut relayed = Vec::new();
    loop {
        let event = followed.next().await;
        let second = event["token"] == "second ";
        relayed.push(event);
        if second {
            break;
        }
    }
    assert_eq!(
        relayed, asked.seen,
        "what was relayed before the kill is what A's client got"
    );
    let killed_at = Instant::now();
    answering.kill_9();

    let ending = followed.until_done().await;
    let types: Vec<&str> = ending
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["error", "done"], "{ending:#?}");
    assert_eq!(ending[0]["code"], "answer_lost", "{ending:#?}");
    assert_eq!(ending[1]["outcome"], "failed", "{ending:#?}");
    println!(
        "the follower learnt the answer was lost {:.1} s after the kill",
        killed_at.elapsed().as_secs_f64()
    );

    // The dead replica's claim no longer holds the conversation: the survivor answers there.
    fake.enqueue(ScriptedReply::text(&["Back."]));
    let response = ask(
        &client,
        &following,
        json!({"conversation_id": conversation_id, "message": "still there?"}),
    )
    .send()
    .await
    .unwrap();
    let events = Events::new(response).until_done().await;
    assert_eq!(
        events.last().unwrap()["outcome"],
        "completed",
        "{events:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_followed_by_one_replica_is_cancelled_through_the_other() {
    let schema = PostgresSchema::create();
    let tasks = TaskServer::start().await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_report",
        "reports__slow_report",
        json!({"topic": "tides", "seconds": 60}),
    )]));
    fake.enqueue(ScriptedReply::text(&["The report was cancelled."]));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let answering = Service::start_command(replica(data_dir.path(), &fake, &schema));
    let other = Service::start_command(replica(data_dir.path(), &fake, &schema));
    let registered = client
        .post(answering.url("/api/mcp/servers"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "reports", "transport": "streamable_http", "url": tasks.url()}))
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), 201);

    let response = ask(&client, &answering, json!({"message": "report on tides"}))
        .send()
        .await
        .unwrap();
    let mut asked = Events::new(response);
    let conversation_id = asked.next().await["conversation_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (tool_call_id, task_id) = loop {
        let event = asked.next().await;
        if event["type"] == "mcp_tool" && event["status"] == "task" {
            break (
                event["tool_call_id"].as_str().unwrap().to_owned(),
                event["task"]["task_id"].as_str().unwrap().to_owned(),
            );
        }
    };
    let cancel = other.url(&format!(
        "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/cancel"
    ));
    let cancelled = client
        .post(cancel.clone())
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(
        cancelled.status(),
        202,
        "{}",
        cancelled.text().await.unwrap()
    );

    let events = asked.until_done().await;
    let ended: Vec<&Value> = events
        .iter()
        .filter(|event| event["type"] == "mcp_tool" && event["status"] == "error")
        .collect();
    assert_eq!(ended.len(), 1, "{events:#?}");
    assert_eq!(ended[0]["error_code"], "cancelled", "{:#}", ended[0]);
    assert_eq!(
        events.last().unwrap()["outcome"],
        "completed",
        "{events:#?}"
    );
    assert!(
        tasks.log.cancelled().contains(&task_id),
        "tasks/cancel reached the server: {:?}",
        tasks.log.cancelled()
    );
    assert_eq!(tasks.log.finished(), 0);
    // Ended: asked again, through either replica, it is a conflict.
    let again = client
        .post(cancel)
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 409);
}
