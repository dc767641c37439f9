//! Approval figures (a bench binary printing numbers, not a timed test):
//!
//! 1. **decision → tool start over the wire**: the real HTTP server on loopback (SQLite with
//!    `synchronous=FULL` in a temp dir), a chat turn whose one tool call (`kg__schema_version`
//!    on our own `/mcp`) waits for approval; the clock starts when the client sends
//!    `POST /chat/approvals/{id}` and stops when the answer's SSE stream delivers
//!    `mcp_tool {status: started}` — the decision recorded, the waiting call woken, the call
//!    recorded `approved` and `dispatched` (committed) and the event streamed. The POST's own
//!    round trip is printed too.
//! 2. **in-process**: the same from `Approvals::decide` to the gate's `review` returning
//!    (store write + wake-up; no HTTP, no chat).
//! 3. **rule decisions**: `review` of a call an `ALWAYS_ALLOW` policy allows (the overhead
//!    every non-interactive call pays: policy, pin and instruction lookups).
//!
//! The model is an in-process stand-in that answers instantly, so no LLM time is counted.
//! Run: `cargo bench -p switchboard --bench approval_figures` (`-- --turns 200`).

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use support::{Gate, Stack, start};
use switchboard_approvals::{ApprovalChoice, Remember};
use switchboard_chat::{ChatEvent, EventSink, GateRequest, GateTarget};
use switchboard_core::{ApprovalPolicy, ToolCallRequest};
use switchboard_llm::{
    FinishReason, IndexedToolCall, LlmError, LlmEvent, LlmEventStream, LlmProvider, LlmRequest,
};
use switchboard_store::NewConversation;
use tokio_util::sync::CancellationToken;

#[path = "support/mod.rs"]
mod support;

/// Calls `kg__schema_version` once, then says one line.
#[derive(Debug, Default)]
struct OneToolModel {
    calls: AtomicUsize,
}

#[async_trait]
impl LlmProvider for OneToolModel {
    fn provider_name(&self) -> &str {
        "bench"
    }

    fn default_model(&self) -> &str {
        "instant"
    }

    async fn stream_chat(&self, request: LlmRequest) -> Result<LlmEventStream, LlmError> {
        let answered = request
            .messages
            .last()
            .is_some_and(|message| message.role.as_str() == "tool");
        let events = if answered {
            vec![
                LlmEvent::TextDelta("Done.".into()),
                LlmEvent::Finished(FinishReason::Stop),
            ]
        } else {
            vec![
                LlmEvent::ToolCall(IndexedToolCall {
                    index: 0,
                    call: ToolCallRequest {
                        id: format!("call_{}", self.calls.fetch_add(1, Ordering::Relaxed)),
                        name: "kg__schema_version".into(),
                        arguments: "{}".into(),
                    },
                }),
                LlmEvent::Finished(FinishReason::ToolCalls),
            ]
        };
        Ok(futures::stream::iter(events.into_iter().map(Ok)).boxed())
    }
}

/// One turn: waits for `approval_required`, approves, and times decision → `started`.
/// Returns (POST round trip, decision → tool start), in microseconds.
async fn one_approved_turn(running: &Stack) -> (u128, u128) {
    let response = running
        .client
        .post(format!("{}/chat/stream", running.base))
        .bearer_auth(&running.token)
        .json(&json!({"message": "What's the schema version?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let mut decided_at: Option<Instant> = None;
    let mut posted = None;
    let mut to_start = None;
    while let Some(chunk) = stream.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let Some(data) = block.lines().find_map(|line| line.strip_prefix("data: ")) else {
                continue;
            };
            let event: Value = serde_json::from_str(data).unwrap();
            match (event["type"].as_str().unwrap(), event["status"].as_str()) {
                ("approval_required", _) => {
                    let id = event["approval_id"].as_str().unwrap().to_owned();
                    let started = Instant::now();
                    decided_at = Some(started);
                    // The decision travels on its own connection while the stream is read.
                    let client = running.client.clone();
                    let url = format!("{}/chat/approvals/{id}", running.base);
                    let token = running.token.clone();
                    posted = Some(tokio::spawn(async move {
                        let response = client
                            .post(url)
                            .bearer_auth(token)
                            .json(&json!({"decision": "approve", "remember": "once"}))
                            .send()
                            .await
                            .unwrap();
                        assert_eq!(response.status(), 200);
                        started.elapsed().as_micros()
                    }));
                }
                ("mcp_tool", Some("started")) => {
                    to_start = decided_at.map(|at| at.elapsed().as_micros());
                }
                ("done", _) => {
                    let post_round_trip = posted.expect("asked").await.unwrap();
                    return (post_round_trip, to_start.expect("the tool started"));
                }
                ("error", _) => panic!("the turn failed: {event}"),
                _ => {}
            }
        }
    }
    panic!("the stream ended without done");
}

/// p50, p90, p99 and the maximum of samples in microseconds.
fn percentiles(samples_us: Vec<u128>) -> String {
    switchboard_test_support::figures::percentiles(samples_us, &[0.5, 0.9, 0.99, 1.0])
}

/// Decide → review returns, in process (store write and wake-up only).
async fn in_process(running: &Stack, rounds: usize) -> Vec<u128> {
    let conversation = running
        .store
        .create_conversation(
            &running.principal.workspace_id,
            NewConversation {
                owner_user_id: running.principal.user_id.clone(),
                bud_id: None,
                title: "bench".into(),
                mcp_config_overrides: None,
                model_choice: Default::default(),
            },
        )
        .await
        .unwrap();
    let (kg, definition) = kg_tool(running, "schema_version").await;
    let gate = running.approvals().gate();
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let request = gate_request(running, &conversation.id, &kg, &definition, round).await;
        let (sender, mut asked) = tokio::sync::mpsc::unbounded_channel();
        let sink = EventSink::new(move |event| {
            if let ChatEvent::ApprovalRequired(required) = event {
                let _ = sender.send(required.approval_id);
            }
        });
        let gate = gate.clone();
        let review = tokio::spawn(async move {
            let decision = gate.review(&request, &sink).await;
            (decision, Instant::now())
        });
        let approval_id = asked.recv().await.unwrap();
        let started = Instant::now();
        running
            .approvals()
            .decide(
                &running.principal,
                &approval_id,
                ApprovalChoice::Approve,
                Remember::Once,
            )
            .await
            .unwrap();
        let (_, returned_at) = review.await.unwrap();
        samples.push(returned_at.duration_since(started).as_micros());
    }
    samples
}

/// `review` of calls an `ALWAYS_ALLOW` policy allows.
async fn rule_decisions(running: &Stack, rounds: usize) -> Vec<u128> {
    let conversation = running
        .store
        .create_conversation(
            &running.principal.workspace_id,
            NewConversation {
                owner_user_id: running.principal.user_id.clone(),
                bud_id: None,
                title: "bench".into(),
                mcp_config_overrides: None,
                model_choice: Default::default(),
            },
        )
        .await
        .unwrap();
    let (kg, definition) = kg_tool(running, "type_info").await;
    running
        .approvals()
        .set_tool_policy(
            &running.principal,
            &kg,
            "type_info",
            ApprovalPolicy::AlwaysAllow,
        )
        .await
        .unwrap();
    let gate = running.approvals().gate();
    let mut samples = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let request = gate_request(running, &conversation.id, &kg, &definition, round).await;
        let started = Instant::now();
        gate.review(&request, &EventSink::discard()).await;
        samples.push(started.elapsed().as_micros());
    }
    samples
}

async fn kg_tool(
    running: &Stack,
    name: &str,
) -> (switchboard_core::ServerId, switchboard_core::ToolDefinition) {
    let server = running
        .store
        .find_server_by_name(&running.principal.workspace_id, "kg")
        .await
        .unwrap()
        .unwrap();
    let tool = running
        .store
        .get_tool(&running.principal.workspace_id, &server.id, name)
        .await
        .unwrap();
    (server.id, tool.definition())
}

async fn gate_request(
    running: &Stack,
    conversation: &switchboard_core::ConversationId,
    server_id: &switchboard_core::ServerId,
    definition: &switchboard_core::ToolDefinition,
    round: usize,
) -> GateRequest {
    let record = running
        .store
        .create_tool_call(
            &running.principal.workspace_id,
            switchboard_store::NewToolCall {
                conversation_id: conversation.clone(),
                message_id: None,
                llm_call_id: format!("bench_{round}"),
                server_id: Some(server_id.clone()),
                server_name: "kg".into(),
                tool_name: definition.name.clone(),
                arguments: "{}".into(),
            },
        )
        .await
        .unwrap();
    GateRequest {
        principal: running.principal.clone(),
        conversation_id: conversation.clone(),
        conversation_owner: running.principal.user_id.clone(),
        tool_call_id: record.id,
        llm_call_id: record.llm_call_id,
        target: GateTarget::Registered {
            server_id: server_id.clone(),
            server_name: "kg".into(),
        },
        tool: definition.clone(),
        arguments: json!({}),
        cancellation: CancellationToken::new(),
        origin: switchboard_chat::CallOrigin::Chat,
        client_approver: None,
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let turns = switchboard_test_support::figures::flag_value("--turns", 100);
    let running = start(Some(Arc::new(OneToolModel::default())), Gate::Approvals).await;
    for _ in 0..5 {
        one_approved_turn(&running).await; // warm-up: sessions, tool sync, pools
    }
    let mut round_trips = Vec::with_capacity(turns);
    let mut to_start = Vec::with_capacity(turns);
    for _ in 0..turns {
        let (post, start) = one_approved_turn(&running).await;
        round_trips.push(post);
        to_start.push(start);
    }
    println!("\nApproval figures (SQLite, synchronous=FULL, loopback, {turns} turns each)");
    println!(
        "  decision POST → mcp_tool started (SSE): {}",
        percentiles(to_start)
    );
    println!(
        "  decision POST round trip:               {}",
        percentiles(round_trips)
    );
    let samples = in_process(&running, turns).await;
    println!(
        "  decide() → gate review returns:         {}",
        percentiles(samples)
    );
    let samples = rule_decisions(&running, turns).await;
    println!(
        "  review of an ALWAYS_ALLOW call:         {}",
        percentiles(samples)
    );
    running.shutdown.cancel();
    tokio::time::sleep(Duration::from_millis(50)).await;
}
