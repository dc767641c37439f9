//! History replay repairs: every tool call gets a result (a missing one is described, never
//! re-run) and failed empty answers are skipped — the guarantees a provider relies on to
//! accept the history.

use super::*;
use chrono::Utc;
use serde_json::json;
use switchboard_core::{ConversationId, MessageId, ToolCallId, ToolCallRequest, WorkspaceId};

fn message(seq: i64, role: ChatRole, content: &str) -> MessageRecord {
    MessageRecord {
        id: MessageId::from(format!("m{seq}")),
        workspace_id: WorkspaceId::from("w"),
        conversation_id: ConversationId::from("c"),
        seq,
        role,
        content: content.to_owned(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        metadata: json!({}),
        status: MessageStatus::Complete,
        created_at: Utc::now(),
        updated_at: Utc::now(),
    }
}

fn call(id: &str) -> ToolCallRequest {
    ToolCallRequest {
        id: id.to_owned(),
        name: "kg__schema_version".to_owned(),
        arguments: "{}".to_owned(),
    }
}

fn record(llm_call_id: &str, state: ToolCallState) -> ToolCallRecord {
    ToolCallRecord {
        id: ToolCallId::from(format!("t-{llm_call_id}")),
        workspace_id: WorkspaceId::from("w"),
        conversation_id: ConversationId::from("c"),
        message_id: None,
        llm_call_id: llm_call_id.to_owned(),
        server_id: None,
        server_name: "kg".to_owned(),
        tool_name: "schema_version".to_owned(),
        arguments: "{}".to_owned(),
        state,
        result: None,
        error: Some("interrupted by a restart after dispatch; outcome unknown".to_owned()),
        created_at: Utc::now(),
        decided_at: None,
        dispatched_at: None,
        finished_at: None,
        updated_at: Utc::now(),
        task_id: None,
        task_status: None,
    }
}

#[test]
fn results_follow_their_call_and_missing_ones_are_described() {
    let mut assistant = message(2, ChatRole::Assistant, "");
    assistant.tool_calls = vec![call("a"), call("b")];
    let mut result_b = message(3, ChatRole::Tool, "{\"version\":\"v2\"}");
    result_b.tool_call_id = Some("b".to_owned());
    let mut orphan = message(4, ChatRole::Tool, "stray");
    orphan.tool_call_id = Some("zzz".to_owned());
    let messages = vec![
        message(1, ChatRole::User, "version?"),
        assistant,
        result_b,
        orphan,
    ];
    let history = replay_history(&messages, &[record("a", ToolCallState::Unknown)]);
    let roles: Vec<ChatRole> = history.iter().map(|message| message.role).collect();
    assert_eq!(
        roles,
        [
            ChatRole::User,
            ChatRole::Assistant,
            ChatRole::Tool,
            ChatRole::Tool
        ]
    );
    assert_eq!(history[2].tool_call_id.as_deref(), Some("a"));
    assert!(
        history[2].content.contains("outcome_unknown"),
        "{}",
        history[2].content
    );
    assert!(history[2].content.contains("not run again"));
    assert_eq!(history[3].tool_call_id.as_deref(), Some("b"));
    assert_eq!(history[3].content, "{\"version\":\"v2\"}");
}

#[test]
fn failed_empty_answers_are_skipped_and_partial_text_is_kept() {
    let mut failed = message(2, ChatRole::Assistant, "");
    failed.status = MessageStatus::Failed;
    let mut partial = message(4, ChatRole::Assistant, "half an ans");
    partial.status = MessageStatus::Partial;
    let history = replay_history(
        &[
            message(1, ChatRole::User, "q1"),
            failed,
            message(3, ChatRole::User, "q2"),
            partial,
        ],
        &[],
    );
    let contents: Vec<&str> = history
        .iter()
        .map(|message| message.content.as_str())
        .collect();
    assert_eq!(contents, ["q1", "q2", "half an ans"]);
}
