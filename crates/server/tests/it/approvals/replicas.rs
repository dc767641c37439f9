//! Two replicas on one PostgreSQL database (fresh schema): an answer runs on replica A and
//! waits for approval (or for a form); the person's decision is POSTed to replica B. With the
//! poll set to 30 s, only B's notice (`NOTIFY switchboard_decisions`) can explain A waking in
//! well under a second; with A's listener off, the decision still lands at A's next poll. A
//! form's content cannot cross replicas (never stored): B refuses to accept A's form, and
//! declining through B works.

use crate::support::approvals::*;
use crate::support::chat::PostgresSchema;
use crate::support::sse::SseReader;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_approvals::ApprovalConfig;
use switchboard_store::DatabaseConfig;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};

fn on_postgres(schema: &PostgresSchema) -> DatabaseConfig {
    DatabaseConfig {
        url: Some(schema.url()),
        max_connections: 4,
        ..DatabaseConfig::default()
    }
}

fn polling_every(milliseconds: u64, listen: bool) -> ApprovalConfig {
    ApprovalConfig {
        decision_poll_ms: milliseconds,
        listen_for_decisions: listen,
        ..ApprovalConfig::default()
    }
}

/// Two replicas, A (where answers run) and B (where decisions arrive), and the model.
async fn two_replicas(
    schema: &PostgresSchema,
    a: ApprovalConfig,
    b: ApprovalConfig,
) -> (FakeOpenAi, ApprovalServer, ApprovalServer) {
    let fake = FakeOpenAi::start().await;
    let replica_a = ApprovalServer::start_on(a, &fake.base_url(), &on_postgres(schema)).await;
    let replica_b = replica_a.replica(b, &fake.base_url()).await;
    (fake, replica_a, replica_b)
}

/// Reads until `wanted` matches; returns the time it took from `since` and the events read.
async fn until_matching(
    stream: &mut SseReader,
    since: Instant,
    wanted: impl Fn(&Value) -> bool,
) -> (Duration, Vec<Value>) {
    let mut events = Vec::new();
    while let Some(event) = stream.next_event().await {
        let found = wanted(&event);
        events.push(event);
        if found {
            return (since.elapsed(), events);
        }
    }
    panic!("the stream ended first: {events:#?}");
}

fn is_started(event: &Value) -> bool {
    event["type"] == "mcp_tool" && event["status"] == "started"
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// One approval on A decided on B: (decision → `approval_resolved` on A, → tool started on A).
async fn approve_on_b(
    fake: &FakeOpenAi,
    a: &ApprovalServer,
    b: &ApprovalServer,
    round: usize,
) -> (Duration, Duration) {
    fake.enqueue(ScriptedReply::tool_calls(&[echo_call(
        &format!("call_{round}"),
        "across replicas",
    )]));
    fake.enqueue(ScriptedReply::text(&["echoed"]));
    let mut stream = a.ask(&a.alice, "echo across replicas").await;
    let (asked, _) = until_approval(&mut stream).await;
    let decided_at = Instant::now();
    let (status, body) = b
        .decide(&b.alice, &asked["approval_id"], "approve", "once")
        .await;
    assert_eq!(status, 200, "{body}");
    let (resolved_after, events) = until_matching(&mut stream, decided_at, |event| {
        event["type"] == "approval_resolved"
    })
    .await;
    let resolved = events.last().unwrap();
    assert_eq!(resolved["decision"], "approved");
    assert_eq!(resolved["decided_by"], a.alice.id.as_str());
    let (started_after, _) = until_matching(&mut stream, decided_at, is_started).await;
    let rest = stream.until_done().await;
    assert_eq!(tool_events(&rest, "completed").len(), 1, "{rest:#?}");
    (resolved_after, started_after)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_posted_to_another_replica_wakes_the_waiting_call_at_once() {
    let schema = PostgresSchema::create();
    let (fake, a, b) = two_replicas(
        &schema,
        polling_every(30_000, true),
        polling_every(30_000, true),
    )
    .await;
    assert!(a.decision_listener.is_some(), "PostgreSQL replicas listen");
    let everything = a.register_everything().await;

    // Decision on B → tool started on A, over 20 answers.
    let mut started = Vec::new();
    for round in 0..20 {
        let (resolved_after, started_after) = approve_on_b(&fake, &a, &b, round).await;
        assert!(
            resolved_after < Duration::from_secs(5),
            "round {round}: A saw the decision after {resolved_after:?} (the poll is 30 s)"
        );
        started.push(started_after);
    }
    started.sort();
    let p50 = started[started.len() / 2];
    println!(
        "decision on replica B → tool started on replica A (PostgreSQL NOTIFY, poll 30 s): \
         p50 {:.1} ms, max {:.1} ms over {} runs",
        millis(p50),
        millis(*started.last().unwrap()),
        started.len()
    );
    assert!(
        p50 < Duration::from_secs(1),
        "p50 {p50:?}: only a notice explains less than the 30 s poll"
    );

    // A form on A answered through B.
    a.set_policy(&everything, "trigger-elicitation-request", "ALWAYS_ALLOW")
        .await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_form",
        "everything__trigger-elicitation-request",
        json!({}),
    )]));
    fake.enqueue(ScriptedReply::text(&["no form then"]));
    let mut stream = a.ask(&a.alice, "ask me things").await;
    let form = stream.until("elicitation_required").await.pop().unwrap();
    let path = format!(
        "/chat/elicitations/{}",
        form["elicitation_id"].as_str().unwrap()
    );
    // B cannot pass a form's content to A (it is never stored): it refuses to accept, and the
    // form stays open.
    let (status, body) = b
        .send(
            &b.alice,
            Method::POST,
            &path,
            Some(json!({"action": "accept", "content": {"name": "Ada"}})),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("another Switchboard replica"), "{message}");
    let (status, pending) = b
        .send(&b.alice, Method::GET, "/chat/elicitations", None)
        .await;
    assert_eq!(status, 200, "{pending}");
    assert!(
        pending
            .to_string()
            .contains(form["elicitation_id"].as_str().unwrap()),
        "{pending}"
    );
    // Declining needs no content: it works from B, and A goes on at once.
    let answered_at = Instant::now();
    let (status, body) = b
        .send(
            &b.alice,
            Method::POST,
            &path,
            Some(json!({"action": "decline"})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (resolved_after, events) = until_matching(&mut stream, answered_at, |event| {
        event["type"] == "elicitation_resolved"
    })
    .await;
    let resolved = events.last().unwrap();
    assert_eq!(resolved["action"], "decline", "{resolved}");
    assert_eq!(resolved["expired"], false);
    assert!(
        resolved_after < Duration::from_secs(1),
        "A saw B's answer after {resolved_after:?} (the poll is 30 s)"
    );
    let events = stream.until_done().await;
    let completed = tool_events(&events, "completed");
    assert_eq!(completed.len(), 1, "{events:#?}");
    assert!(
        completed[0]["result"].to_string().contains("decline"),
        "{}",
        completed[0]["result"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_notices_a_decision_on_another_replica_lands_at_the_next_poll() {
    let schema = PostgresSchema::create();
    // A does not listen (as behind a proxy that cannot hold LISTEN); it polls every 700 ms.
    let (fake, a, b) = two_replicas(
        &schema,
        polling_every(700, false),
        polling_every(30_000, true),
    )
    .await;
    assert!(a.decision_listener.is_none(), "listening is off on A");
    a.register_everything().await;
    let (resolved_after, started_after) = approve_on_b(&fake, &a, &b, 0).await;
    assert!(
        resolved_after < Duration::from_secs(5),
        "the poll found the decision after {resolved_after:?}"
    );
    assert!(started_after >= resolved_after);
    // The history agrees: approved by Alice, through B.
    let (status, history) = b
        .send(&b.alice, Method::GET, "/chat/approvals?state=all", None)
        .await;
    assert_eq!(status, 200, "{history}");
    let approvals = history["approvals"].as_array().unwrap();
    assert_eq!(approvals.len(), 1, "{history}");
    assert_eq!(approvals[0]["status"], "approved");
}
