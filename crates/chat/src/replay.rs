//! Replaying the last finished answer of a conversation from the store, as the events a live
//! client would have seen: `meta` (with `replay: true`), each tool call's final `mcp_tool`
//! event, the answer's text as one `token`, an `error` if the answer was cut short, `done`.
//!
//! Built from what was stored, so it works after a restart too.

use crate::error::{ChatError, ChatResult};
use crate::events::{
    ChatEvent, DoneEvent, ErrorEvent, MetaEvent, ToolEvent, ToolEventStatus, TurnOutcome,
};
use crate::tools::event_result;
use serde_json::Value;
use std::collections::HashMap;
use switchboard_core::{ChatRole, ToolCallState};
use switchboard_mcp_client::ToolResult;
use switchboard_store::{ConversationRecord, MessageStatus, Store, ToolCallRecord};

pub(crate) async fn replay_last_answer(
    store: &Store,
    conversation: &ConversationRecord,
    max_chars: usize,
) -> ChatResult<Vec<ChatEvent>> {
    let (messages, calls) = futures::try_join!(
        store.list_messages(&conversation.workspace_id, &conversation.id),
        store.list_tool_calls(&conversation.workspace_id, &conversation.id),
    )?;
    let Some(question_index) = messages
        .iter()
        .rposition(|message| message.role == ChatRole::User)
    else {
        return Err(ChatError::NotFound(
            "answer (this conversation has no question yet)",
        ));
    };
    let answer = &messages[question_index + 1..];
    // Keyed by the asking message too: a provider may reuse a call id in a later answer.
    let calls_by_llm_id: HashMap<(Option<&str>, &str), &ToolCallRecord> = calls
        .iter()
        .map(|call| {
            let message_id = call.message_id.as_ref().map(|id| id.as_str());
            ((message_id, call.llm_call_id.as_str()), call)
        })
        .collect();
    let last_assistant = answer
        .iter()
        .rev()
        .find(|message| message.role == ChatRole::Assistant);
    let metadata_text = |key: &str| {
        last_assistant
            .and_then(|message| message.metadata.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let mut events = vec![ChatEvent::Meta(MetaEvent {
        conversation_id: conversation.id.clone(),
        message_id: messages[question_index].id.clone(),
        provider: metadata_text("provider"),
        model: metadata_text("model"),
        tools: Vec::new(),
        unavailable_servers: Vec::new(),
        replay: true,
        schema_context: None,
    })];
    let mut text = String::new();
    for message in answer
        .iter()
        .filter(|message| message.role == ChatRole::Assistant)
    {
        for call in &message.tool_calls {
            let record = calls_by_llm_id
                .get(&(Some(message.id.as_str()), call.id.as_str()))
                .or_else(|| calls_by_llm_id.get(&(None, call.id.as_str())));
            if let Some(record) = record {
                events.push(ChatEvent::McpTool(final_tool_event(
                    record,
                    max_chars,
                    &metadata_text("provider"),
                )));
            }
        }
        text.push_str(&message.content);
    }
    if !text.is_empty() {
        events.push(ChatEvent::Token(text));
    }
    // The answer is finished when it ends with a complete assistant message that asked for no
    // further tool; ending on tool calls or their results means it was cut short.
    let ended_on_tools = answer
        .last()
        .is_some_and(|message| message.role == ChatRole::Tool || !message.tool_calls.is_empty());
    let outcome = match last_assistant.map(|message| message.status) {
        Some(MessageStatus::Complete) if !ended_on_tools => TurnOutcome::Completed,
        Some(MessageStatus::Complete) => {
            events.push(ChatEvent::Error(ErrorEvent {
                code: "interrupted".to_owned(),
                message: "the answer stopped after its tool calls (the client left or the \
                          service stopped before the model could answer)"
                    .to_owned(),
            }));
            TurnOutcome::Cancelled
        }
        Some(status) => {
            let metadata = &last_assistant
                .map(|message| message.metadata.clone())
                .unwrap_or_default();
            let code = metadata
                .get("error_code")
                .and_then(Value::as_str)
                .unwrap_or("interrupted");
            let message = metadata
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| {
                    "the answer was cut short (the client left, the service stopped, or it is \
                     still being written)"
                        .to_owned()
                });
            events.push(ChatEvent::Error(ErrorEvent {
                code: code.to_owned(),
                message,
            }));
            if status == MessageStatus::Failed {
                TurnOutcome::Failed
            } else {
                TurnOutcome::Cancelled
            }
        }
        None => TurnOutcome::Cancelled,
    };
    events.push(ChatEvent::Done(DoneEvent {
        conversation_id: conversation.id.clone(),
        message_id: last_assistant.map(|message| message.id.clone()),
        outcome,
    }));
    Ok(events)
}

/// The `mcp_tool` event a call's final recorded state corresponds to.
/// `provider` is the answer's (for the call's `intent`).
pub(crate) fn final_tool_event(
    record: &ToolCallRecord,
    max_chars: usize,
    provider: &str,
) -> ToolEvent {
    let arguments = serde_json::from_str(&record.arguments)
        .unwrap_or_else(|_| Value::String(record.arguments.clone()));
    let result: Option<ToolResult> = record
        .result
        .as_ref()
        .and_then(|value| serde_json::from_value(value.clone()).ok());
    let (shown, truncated) = match &result {
        Some(result) => {
            let (shown, truncated) = event_result(result, max_chars);
            (Some(shown), truncated)
        }
        None => (None, false),
    };
    let status = match record.state {
        ToolCallState::Completed => ToolEventStatus::Completed,
        ToolCallState::Proposed | ToolCallState::Approved | ToolCallState::Dispatched => {
            ToolEventStatus::Started
        }
        ToolCallState::Denied | ToolCallState::Failed | ToolCallState::Unknown => {
            ToolEventStatus::Error
        }
    };
    let duration_ms = match (record.dispatched_at, record.finished_at) {
        (Some(dispatched), Some(finished)) => {
            u64::try_from((finished - dispatched).num_milliseconds()).ok()
        }
        _ => None,
    };
    ToolEvent {
        call_id: record.llm_call_id.clone(),
        tool_call_id: record.id.clone(),
        tool: record.tool_name.clone(),
        server: record.server_name.clone(),
        intent: crate::events::tool_intent(provider, &record.tool_name),
        status,
        state: record.state,
        arguments,
        result: shown,
        result_truncated: truncated,
        error: record.error.clone(),
        error_code: match record.state {
            ToolCallState::Denied => Some("denied".to_owned()),
            ToolCallState::Unknown => Some("outcome_unknown".to_owned()),
            _ => None,
        },
        duration_ms,
    }
}
