//! Replaying the last finished answer of a conversation from the store, as the events a live
//! client would have seen: `meta` (with `replay: true`), each tool call's final `mcp_tool`
//! event, the answer's text as one `token`, an `error` if the answer was cut short, `done`.
//!
//! Built from what was stored, so it works after a restart too.

use crate::error::{ChatError, ChatResult};
use crate::events::{
    AnsweredBy, ChatEvent, DoneEvent, ErrorEvent, MetaEvent, ToolEvent, ToolEventStatus,
    TurnOutcome,
};
use crate::tools::event_result;
use serde_json::Value;
use std::collections::HashMap;
use switchboard_core::{ChatRole, ToolCallState};
use switchboard_llm::TokenUsage;
use switchboard_mcp_client::ToolResult;
use switchboard_store::{ConversationRecord, MessageRecord, MessageStatus, Store, ToolCallRecord};

/// Steps: load the conversation, cut out its last answer, then `meta`, the calls and text,
/// how it ended, `done`.
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
    let last_assistant = answer
        .iter()
        .rev()
        .find(|message| message.role == ChatRole::Assistant);
    let provider = metadata_text(last_assistant, "provider");
    let mut events = vec![ChatEvent::Meta(MetaEvent {
        conversation_id: conversation.id.clone(),
        message_id: messages[question_index].id.clone(),
        provider: provider.clone(),
        provider_name: metadata_text(last_assistant, "provider_name"),
        model: metadata_text(last_assistant, "model"),
        tools: Vec::new(),
        unavailable_servers: Vec::new(),
        replay: true,
        schema_context: None,
        context: None,
    })];
    let text = replay_calls_and_text(answer, &calls, max_chars, &provider, &mut events);
    if !text.is_empty() {
        events.push(ChatEvent::Token(text));
    }
    let (error, outcome) = how_it_ended(answer, last_assistant);
    events.extend(error.map(ChatEvent::Error));
    events.push(ChatEvent::Done(DoneEvent {
        conversation_id: conversation.id.clone(),
        message_id: last_assistant.map(|message| message.id.clone()),
        outcome,
        answered_by: last_assistant.map(stored_answered_by),
        usage: stored_usage(answer),
    }));
    Ok(events)
}

/// Who answered, as the assistant message's metadata records it.
fn stored_answered_by(message: &MessageRecord) -> AnsweredBy {
    AnsweredBy {
        provider: metadata_text(Some(message), "provider"),
        provider_name: metadata_text(Some(message), "provider_name"),
        model: metadata_text(Some(message), "model"),
        fallback_from: message
            .metadata
            .get("fallback_from")
            .and_then(|value| serde_json::from_value(value.clone()).ok())
            .unwrap_or_default(),
    }
}

/// The tokens of an answer's assistant messages, summed from their stored `usage`; `None`
/// when none recorded any.
fn stored_usage<'a>(messages: impl IntoIterator<Item = &'a MessageRecord>) -> Option<TokenUsage> {
    messages
        .into_iter()
        .filter(|message| message.role == ChatRole::Assistant)
        .filter_map(message_usage)
        .reduce(|mut total, usage| {
            total += usage;
            total
        })
}

/// The usage one assistant message stored (`metadata.usage`), if any.
pub fn message_usage(message: &MessageRecord) -> Option<TokenUsage> {
    serde_json::from_value(message.metadata.get("usage")?.clone()).ok()
}

/// A text entry of a message's metadata.
fn metadata_str<'a>(message: Option<&'a MessageRecord>, key: &str) -> Option<&'a str> {
    message
        .and_then(|message| message.metadata.get(key))
        .and_then(Value::as_str)
}

/// A text entry of a message's metadata (empty when absent).
fn metadata_text(message: Option<&MessageRecord>, key: &str) -> String {
    metadata_str(message, key).unwrap_or_default().to_owned()
}

/// Pushes each call's final `mcp_tool` event, in the order the model made them, and returns
/// the answer's text (all its assistant messages).
fn replay_calls_and_text(
    answer: &[MessageRecord],
    calls: &[ToolCallRecord],
    max_chars: usize,
    provider: &str,
    events: &mut Vec<ChatEvent>,
) -> String {
    // Keyed by the asking message too: a provider may reuse a call id in a later answer.
    let calls_by_llm_id: HashMap<(Option<&str>, &str), &ToolCallRecord> = calls
        .iter()
        .map(|call| {
            let message_id = call.message_id.as_ref().map(|id| id.as_str());
            ((message_id, call.llm_call_id.as_str()), call)
        })
        .collect();
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
                    record, max_chars, provider,
                )));
            }
        }
        text.push_str(&message.content);
    }
    text
}

/// The answer is finished when it ends with a complete assistant message that asked for no
/// further tool; ending on tool calls or their results means it was cut short. Returns the
/// `error` event to replay (if any) and the outcome.
fn how_it_ended(
    answer: &[MessageRecord],
    last_assistant: Option<&MessageRecord>,
) -> (Option<ErrorEvent>, TurnOutcome) {
    let ended_on_tools = answer
        .last()
        .is_some_and(|message| message.role == ChatRole::Tool || !message.tool_calls.is_empty());
    match last_assistant.map(|message| message.status) {
        Some(MessageStatus::Complete) if !ended_on_tools => (None, TurnOutcome::Completed),
        Some(MessageStatus::Complete) => (
            Some(ErrorEvent {
                code: "interrupted".to_owned(),
                message: "the answer stopped after its tool calls (the client left or the \
                          service stopped before the model could answer)"
                    .to_owned(),
            }),
            TurnOutcome::Cancelled,
        ),
        Some(status) => {
            let error = ErrorEvent {
                code: metadata_str(last_assistant, "error_code")
                    .unwrap_or("interrupted")
                    .to_owned(),
                message: metadata_str(last_assistant, "error")
                    .unwrap_or(
                        "the answer was cut short (the client left, the service stopped, or \
                         it is still being written)",
                    )
                    .to_owned(),
            };
            let outcome = if status == MessageStatus::Failed {
                TurnOutcome::Failed
            } else {
                TurnOutcome::Cancelled
            };
            (Some(error), outcome)
        }
        None => (None, TurnOutcome::Cancelled),
    }
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
        // The stored tool message carries it (`ToolMessageMetadata::app`); a replayed
        // event is rebuilt from the call's record alone.
        app: None,
        progress: None,
        task: None,
    }
}
