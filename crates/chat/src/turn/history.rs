//! The conversation as the model sees it on the next turn: stored messages in OpenAI message
//! order, repaired where a crash or a disconnect left a gap. Fitting it to the model's context
//! window is `crate::context`'s, per request.
//!
//! Repairs: every tool call of an assistant message gets exactly one tool message right after
//! that assistant message (a call whose result was never stored gets an error result saying
//! what its recorded state was — an `unknown` call is described as such and never re-run);
//! tool messages answering no call are dropped; failed answers with no text are skipped.

use crate::tools::error_text_for_model;
use std::collections::{HashMap, HashSet};
use switchboard_core::{ChatMessage, ChatRole, ToolCallState};
use switchboard_store::{MessageRecord, MessageStatus, ToolCallRecord};

/// Rebuilds the history from the store's records (messages in `seq` order).
pub fn replay_history(
    messages: &[MessageRecord],
    tool_calls: &[ToolCallRecord],
) -> Vec<ChatMessage> {
    let calls_by_llm_id: HashMap<&str, &ToolCallRecord> = tool_calls
        .iter()
        .map(|call| (call.llm_call_id.as_str(), call))
        .collect();
    let results: HashMap<&str, &MessageRecord> = messages
        .iter()
        .filter(|message| message.role == ChatRole::Tool)
        .filter_map(|message| message.tool_call_id.as_deref().map(|id| (id, message)))
        .collect();
    let mut history = Vec::with_capacity(messages.len());
    let mut answered: HashSet<&str> = HashSet::new();
    for message in messages {
        match message.role {
            ChatRole::Tool => {} // placed right after the assistant message that asked
            ChatRole::Assistant => {
                if message.tool_calls.is_empty()
                    && message.content.is_empty()
                    && message.status != MessageStatus::Complete
                {
                    continue;
                }
                history.push(message.to_chat_message());
                for call in &message.tool_calls {
                    if !answered.insert(call.id.as_str()) {
                        continue;
                    }
                    history.push(match results.get(call.id.as_str()) {
                        Some(result) => result.to_chat_message(),
                        None => ChatMessage::tool_error(
                            call.id.clone(),
                            missing_result_text(calls_by_llm_id.get(call.id.as_str()).copied()),
                        ),
                    });
                }
            }
            ChatRole::User | ChatRole::System => history.push(message.to_chat_message()),
        }
    }
    history
}

fn missing_result_text(call: Option<&ToolCallRecord>) -> String {
    match call {
        Some(call) if call.state == ToolCallState::Unknown => error_text_for_model(
            "outcome_unknown",
            &format!(
                "this call was interrupted after it was sent ({}); its outcome is unknown and it \
                 was not run again",
                call.error.as_deref().unwrap_or("no answer was recorded")
            ),
        ),
        Some(call) => error_text_for_model(
            "no_result",
            &format!(
                "no result was recorded for this call (state {}{})",
                call.state,
                call.error
                    .as_deref()
                    .map(|error| format!(": {error}"))
                    .unwrap_or_default()
            ),
        ),
        None => error_text_for_model("no_result", "no result was recorded for this call"),
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
