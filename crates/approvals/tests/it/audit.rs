//! What a finished call, a decision and a policy change leave in the audit log — and that no
//! secret does.

use crate::support::{Recorder, World, tool};
use serde_json::json;
use std::time::Duration;
use switchboard_approvals::{ApprovalChoice, ApprovalConfig, ConnectionEvent, Remember};
use switchboard_chat::CallReport;
use switchboard_core::{ApprovalPolicy, ToolCallState};
use switchboard_store::{AuditSearch, ToolCallOutcome};

#[tokio::test]
async fn calls_decisions_connections_and_policy_changes_are_audited_without_secrets() {
    let world = World::new(ApprovalConfig::default()).await;
    let read = tool("read_file", "Reads");
    world.sync(std::slice::from_ref(&read), None).await;
    world
        .approvals
        .set_tool_policy(
            &world.admin,
            &world.server_id(),
            "read_file",
            ApprovalPolicy::AskUser,
        )
        .await
        .unwrap();
    let gate = world.approvals.gate();
    let recorder = Recorder::default();
    let arguments = json!({
        "path": "/etc/motd",
        "apiKey": "sk-live-SECRET1",
        "auth": {"accessToken": "SECRET2", "password": "SECRET3"},
        "headers": {"Authorization": "Bearer SECRET4"},
        "credentials": ["SECRET5"],
        "token": "SECRET6"
    });
    let request = world
        .request(&world.alice, &world.alices_conversation, &read, arguments)
        .await;
    let waiting = tokio::spawn({
        let (gate, sink, request) = (gate.clone(), recorder.sink(), request.clone());
        async move { gate.review(&request, &sink).await }
    });
    let asked = recorder.approval_required().await;
    world
        .approvals
        .decide(
            &world.alice,
            &asked.approval_id,
            ApprovalChoice::Approve,
            Remember::Once,
        )
        .await
        .unwrap();
    let decision = waiting.await.unwrap();
    let report = CallReport {
        request,
        decision,
        final_state: ToolCallState::Completed,
        duration: Some(Duration::from_millis(42)),
        result_bytes: Some(1234),
        error: None,
    };
    // As the chat does: the final state and the gate's audit row in one commit.
    world
        .store
        .advance_tool_call(
            &world.workspace.id,
            &report.request.tool_call_id,
            &[
                ToolCallState::Approved,
                ToolCallState::Dispatched,
                ToolCallState::Completed,
            ],
            ToolCallOutcome::default(),
            gate.audit_event(&report),
        )
        .await
        .unwrap();
    gate.call_finished(&report).await;
    world
        .approvals
        .audit()
        .connection_event(
            &world.workspace.id,
            "files",
            &ConnectionEvent::Error {
                code: "connect_failed".into(),
                message: "refused".into(),
            },
        )
        .await;

    let entries = world
        .store
        .search_audit(&world.workspace.id, AuditSearch::default())
        .await
        .unwrap();
    let actions: Vec<&str> = entries.iter().map(|entry| entry.action.as_str()).collect();
    assert_eq!(
        actions,
        vec![
            "server.error",
            "tool_call.completed",
            "approval.approved",
            "approval.requested",
            "policy.set"
        ]
    );
    let call = &entries[1];
    assert_eq!(call.user_id.as_ref(), Some(&world.alice.user_id));
    assert_eq!(
        call.conversation_id.as_ref(),
        Some(&world.alices_conversation)
    );
    assert_eq!(call.server_name.as_deref(), Some("files"));
    assert_eq!(call.tool_name.as_deref(), Some("read_file"));
    assert_eq!(call.status.as_deref(), Some("completed"));
    assert_eq!(call.duration_ms, Some(42));
    assert_eq!(call.details["result_bytes"], 1234);
    assert_eq!(call.details["decision"], "approved");
    assert_eq!(call.details["decided_by"], world.alice.user_id.as_str());
    assert_eq!(call.details["arguments"]["path"], "/etc/motd");
    let decided = &entries[2];
    assert_eq!(decided.actor, world.alice.user_id.as_str());
    assert_eq!(decided.details["remember"], "once");
    assert_eq!(entries[0].status.as_deref(), Some("error"));
    assert_eq!(entries[4].actor, world.admin.user_id.as_str());
    assert_eq!(entries[4].details["after"], "ASK_USER");

    let everything = serde_json::to_string(
        &entries
            .iter()
            .map(|entry| &entry.details)
            .collect::<Vec<_>>(),
    )
    .unwrap();
    for secret in [
        "SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5", "SECRET6",
    ] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked: {everything}"
        );
    }
}
