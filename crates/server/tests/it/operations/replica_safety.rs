//! Replicas on one PostgreSQL database (fresh schema) do not break each other's work: a replica
//! starting up recovers only the work of dead instances (an approval waiting on A stays
//! pending and A's answer completes after it is approved), one answer at a time per
//! conversation holds across replicas (B refuses a question while A answers there, and
//! accepts it once A's answer ended), and a replica that stops beating without cleaning up has
//! its work recovered by the next start (approval and form expired, dispatched call unknown),
//! while a call of its that became a task is adopted by exactly one live replica's sweep.
//! Each replica is a real `AppState` + `serve_router` with its own store pool, wired as the
//! binary wires it (instance registered, start-up recovery, heartbeats).

use crate::support::approvals::*;
use crate::support::chat::{PostgresSchema, remote_server};
use crate::support::sse::SseReader;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_approvals::{ApprovalConfig, RecoveredRequests};
use switchboard_core::{ApprovalPolicy, ConversationId, ToolCallState};
use switchboard_store::DatabaseConfig;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::task_server::TaskServer;

fn on_postgres(schema: &PostgresSchema) -> DatabaseConfig {
    DatabaseConfig {
        url: Some(schema.url()),
        max_connections: 4,
        ..DatabaseConfig::default()
    }
}

async fn replica_a(schema: &PostgresSchema) -> (FakeOpenAi, ApprovalServer) {
    let fake = FakeOpenAi::start().await;
    let a = ApprovalServer::start_on(
        ApprovalConfig::default(),
        &fake.base_url(),
        &on_postgres(schema),
    )
    .await;
    (fake, a)
}

/// `POST /chat/stream` in an existing conversation.
async fn ask_in(
    server: &ApprovalServer,
    who: &Person,
    conversation_id: &str,
    message: &str,
) -> reqwest::Response {
    server
        .client
        .post(server.url("/chat/stream"))
        .bearer_auth(&who.token)
        .json(&json!({"conversation_id": conversation_id, "message": message}))
        .send()
        .await
        .unwrap()
}

/// `answer_in_flight` of the conversation as `server` reports it (detail and list agree).
async fn in_flight_on(server: &ApprovalServer, conversation_id: &str) -> bool {
    let (status, detail) = server
        .send(
            &server.alice,
            Method::GET,
            &format!("/chat/conversations/{conversation_id}"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{detail}");
    let (status, list) = server
        .send(&server.alice, Method::GET, "/chat/conversations", None)
        .await;
    assert_eq!(status, 200, "{list}");
    let listed = list["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|conversation| conversation["id"] == conversation_id)
        .unwrap_or_else(|| panic!("{conversation_id} listed: {list}"));
    assert_eq!(
        detail["conversation"]["answer_in_flight"], listed["answer_in_flight"],
        "detail and list agree"
    );
    detail["conversation"]["answer_in_flight"] == json!(true)
}

/// An answer on A that waits for approval of an echo call; returns its stream, the
/// `approval_required` event and the conversation id.
async fn waiting_for_approval(
    fake: &FakeOpenAi,
    a: &ApprovalServer,
    call_id: &str,
) -> (SseReader, Value, String) {
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call(call_id, "replicas")]));
    let mut stream = a.ask(&a.alice, "echo across replicas").await;
    let (asked, events) = until_approval(&mut stream).await;
    let meta = events
        .iter()
        .find(|event| event["type"] == "meta")
        .expect("meta first");
    let conversation_id = meta["conversation_id"].as_str().unwrap().to_owned();
    (stream, asked, conversation_id)
}

async fn approval_status(server: &ApprovalServer, approval_id: &Value) -> Value {
    let (status, history) = server
        .send(
            &server.alice,
            Method::GET,
            "/chat/approvals?state=all",
            None,
        )
        .await;
    assert_eq!(status, 200, "{history}");
    history["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|approval| approval["id"] == *approval_id)
        .unwrap_or_else(|| panic!("{approval_id} in {history}"))["status"]
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_starting_up_leaves_the_approvals_waiting_on_others_alone() {
    let schema = PostgresSchema::create();
    let (fake, a) = replica_a(&schema).await;
    let b = a.replica(ApprovalConfig::default(), &fake.base_url()).await;
    a.register_everything().await;
    let (mut stream, asked, _) = waiting_for_approval(&fake, &a, "call_1").await;

    // A third replica starts (scale-up, rolling deploy): its start-up recovery finds nothing
    // dead, and leaves A's approval and tool call waiting.
    let c = a.replica(ApprovalConfig::default(), &fake.base_url()).await;
    assert_eq!(c.recovered_at_start, (0, RecoveredRequests::default()));
    // A few of everyone's sweeps later, still waiting.
    tokio::time::sleep(TEST_HEARTBEAT * 4).await;
    assert_eq!(approval_status(&c, &asked["approval_id"]).await, "pending");

    // Approved through the newcomer: A's answer goes on and completes.
    fake.enqueue(ScriptedReply::text(&["echoed"]));
    let (status, body) = c
        .decide(&c.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{body}");
    let events = stream.until_done().await;
    assert_eq!(tool_events(&events, "completed").len(), 1, "{events:#?}");
    let done = events.last().unwrap();
    assert_eq!(done["outcome"], "completed", "{done}");
    assert_eq!(approval_status(&b, &asked["approval_id"]).await, "approved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_answer_at_a_time_per_conversation_holds_across_replicas() {
    let schema = PostgresSchema::create();
    let (fake, a) = replica_a(&schema).await;
    let b = a.replica(ApprovalConfig::default(), &fake.base_url()).await;
    a.register_everything().await;
    let (mut stream, asked, conversation_id) = waiting_for_approval(&fake, &a, "call_1").await;

    // While A answers, B refuses a second answer in the same conversation and says so.
    let response = ask_in(&b, &b.alice, &conversation_id, "and another thing").await;
    assert_eq!(response.status(), 409);
    let body: Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("already being generated") && message.contains("another Switchboard"),
        "{message}"
    );
    assert!(
        in_flight_on(&b, &conversation_id).await,
        "B reports A's answer"
    );
    assert!(in_flight_on(&a, &conversation_id).await);
    // The refused question was not stored.
    let (_, detail) = b
        .send(
            &b.alice,
            Method::GET,
            &format!("/chat/conversations/{conversation_id}"),
            None,
        )
        .await;
    assert!(
        !detail.to_string().contains("and another thing"),
        "{detail}"
    );

    // A's answer ends; then B answers there.
    fake.enqueue(ScriptedReply::text(&["echoed"]));
    let (status, body) = a
        .decide(&a.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{body}");
    stream.until_done().await;
    // `done` comes after the claim is released: B takes the next question at once.
    assert!(!in_flight_on(&b, &conversation_id).await);
    fake.enqueue(ScriptedReply::text(&["answered on B"]));
    let response = ask_in(&b, &b.alice, &conversation_id, "and another thing").await;
    assert_eq!(response.status(), 200);
    let events = SseReader::new(response).until_done().await;
    assert_eq!(
        events.last().unwrap()["outcome"],
        "completed",
        "{events:#?}"
    );
    // And back on A right after B's `done`.
    fake.enqueue(ScriptedReply::text(&["answered on A again"]));
    let response = ask_in(&a, &a.alice, &conversation_id, "one more").await;
    assert_eq!(response.status(), 200);
    SseReader::new(response).until_done().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_dies_has_its_work_recovered_by_the_next_start() {
    let schema = PostgresSchema::create();
    let (fake, mut a) = replica_a(&schema).await;
    let everything = a.register_everything().await;
    // On A: one answer waits for approval, another for a form (its call dispatched).
    let (_approval_stream, asked, approval_conversation) =
        waiting_for_approval(&fake, &a, "call_1").await;
    a.set_policy(&everything, "trigger-elicitation-request", "ALWAYS_ALLOW")
        .await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_form",
        "everything__trigger-elicitation-request",
        json!({}),
    )]));
    let mut form_stream = a.ask(&a.alice, "ask me things").await;
    let events = form_stream.until("elicitation_required").await;
    let form_conversation =
        events.iter().find(|event| event["type"] == "meta").unwrap()["conversation_id"]
            .as_str()
            .unwrap()
            .to_owned();
    // What A does after it is presumed dead does not matter; let its answers end quietly.
    for _ in 0..4 {
        fake.enqueue(ScriptedReply::text(&["after the crash"]));
    }

    // A stops beating without cleaning up (a crash). A replica starting within three beats
    // still sees A alive...
    a.crash_heartbeat();
    let early = a.replica(ApprovalConfig::default(), &fake.base_url()).await;
    assert_eq!(early.recovered_at_start, (0, RecoveredRequests::default()));
    drop(early);
    // ...one starting later recovers A's work.
    tokio::time::sleep(TEST_HEARTBEAT * 4).await;
    let next = a.replica(ApprovalConfig::default(), &fake.base_url()).await;
    assert_eq!(
        next.recovered_at_start,
        (
            2,
            RecoveredRequests {
                approvals_expired: 1,
                elicitations_expired: 1,
            }
        ),
        "the proposed echo call failed and the dispatched form call unknown; the approval \
         and the form expired"
    );
    assert_eq!(
        approval_status(&next, &asked["approval_id"]).await,
        "expired"
    );
    let calls = |conversation: &str| {
        let store = next.store.clone();
        let workspace_id = next.workspace_id.clone();
        let conversation_id = ConversationId::from_string(conversation);
        async move {
            store
                .list_tool_calls(&workspace_id, &conversation_id)
                .await
                .unwrap()
        }
    };
    let form_calls = calls(&form_conversation).await;
    assert_eq!(form_calls.len(), 1);
    assert_eq!(
        form_calls[0].state,
        ToolCallState::Unknown,
        "{form_calls:?}"
    );
    let approval_calls = calls(&approval_conversation).await;
    assert_eq!(approval_calls[0].state, ToolCallState::Failed);
    let (status, pending) = next
        .send(&next.alice, Method::GET, "/chat/elicitations", None)
        .await;
    assert_eq!(status, 200, "{pending}");
    assert!(
        !pending
            .to_string()
            .contains(events.last().unwrap()["elicitation_id"].as_str().unwrap()),
        "the form is no longer pending: {pending}"
    );
    // A dead instance's answers are not in flight: the conversations answer again through
    // `next` (A's stale claims are taken over).
    assert!(!in_flight_on(&next, &approval_conversation).await);
    let response = ask_in(&next, &next.alice, &approval_conversation, "still there?").await;
    assert_eq!(response.status(), 200);
    let events = SseReader::new(response).until_done().await;
    assert_eq!(
        events.last().unwrap()["outcome"],
        "completed",
        "{events:#?}"
    );
}

/// A tool call that became a task on a replica that then dies (its heartbeat stops and its
/// process goes, as a crash would) is adopted by the survivors' periodic sweep — not only by a
/// replica starting up — and by exactly one of them: the task is followed to its end, its
/// result stored once (one final state, one tool message, one audit row), the tool ran once
/// and the dead replica's stop did not cancel the task upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_replicas_task_call_is_adopted_by_exactly_one_live_replica() {
    let schema = PostgresSchema::create();
    let fake = FakeOpenAi::start().await;
    let allow = ApprovalConfig {
        default_policy: ApprovalPolicy::AlwaysAllow,
        ..ApprovalConfig::default()
    };
    let mut a =
        ApprovalServer::start_on(allow.clone(), &fake.base_url(), &on_postgres(&schema)).await;
    let tasks = TaskServer::start().await;
    a.store
        .create_server(&a.workspace_id, remote_server("reports", &tasks.url()))
        .await
        .unwrap();
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_report",
        "reports__slow_report",
        json!({"topic": "tides", "seconds": 6}),
    )]));
    let mut stream = a.ask(&a.alice, "report on tides").await;
    let mut conversation_id = None;
    loop {
        let event = stream.next_event().await.expect("the call becomes a task");
        if let Some(id) = event["conversation_id"].as_str() {
            conversation_id.get_or_insert_with(|| ConversationId::from_string(id));
        }
        if event["type"] == "mcp_tool" && event["status"] == "task" {
            break;
        }
    }
    let conversation_id = conversation_id.expect("meta names the conversation");
    // Two live replicas, started while A is alive: their start-up claims nothing of A's.
    let b = a.replica(allow.clone(), &fake.base_url()).await;
    let c = a.replica(allow, &fake.base_url()).await;
    for _ in 0..4 {
        fake.enqueue(ScriptedReply::text(&["after the crash"]));
    }
    // A dies: no more heartbeats, and its process goes (its engine stops following, as its
    // shutdown does; only then does the answer's client go, too late to cancel anything).
    a.crash_heartbeat();
    drop(a);
    drop(stream);

    let calls = || async {
        b.store
            .list_tool_calls(&b.workspace_id, &conversation_id)
            .await
            .unwrap()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(40);
    let call = loop {
        let listed = calls().await;
        if listed[0].state != ToolCallState::Dispatched {
            break listed[0].clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no replica adopted the task: {listed:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(call.state, ToolCallState::Completed, "{call:?}");
    assert_eq!(tasks.log.started(), 1, "the tool ran once");
    assert_eq!(tasks.log.finished(), 1);
    assert!(
        tasks.log.cancelled().is_empty(),
        "a dying replica leaves its task working: {:?}",
        tasks.log.cancelled()
    );
    // Stored once: give a second follower, if there were one, time to store too.
    tokio::time::sleep(TEST_HEARTBEAT * 3).await;
    let messages = b
        .store
        .list_messages(&b.workspace_id, &conversation_id)
        .await
        .unwrap();
    let results: Vec<_> = messages
        .iter()
        .filter(|message| message.tool_call_id.as_deref() == Some("call_report"))
        .collect();
    assert_eq!(results.len(), 1, "one tool message: {results:?}");
    assert!(results[0].content.contains("report ready: tides"));
    let audited = c.audit("action=tool_call.completed").await;
    let rows: Vec<&Value> = audited
        .iter()
        .filter(|row| row["details"]["tool_call_id"] == call.id.as_str())
        .collect();
    assert_eq!(rows.len(), 1, "one audit row: {audited:#?}");
}
