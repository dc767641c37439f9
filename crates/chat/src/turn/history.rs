//! The conversation as the model sees it on the next turn: stored messages in OpenAI message
//! order, repaired where a crash or a disconnect left a gap, and trimmed to a budget.
//!
//! Repairs: every tool call of an assistant message gets exactly one tool message right after
//! that assistant message (a call whose result was never stored gets an error result saying
//! what its recorded state was — an `unknown` call is described as such and never re-run);
//! tool messages answering no call are dropped; failed answers with no text are skipped.
//! Trimming keeps whole turns (a user message and what followed it), newest first, and always
//! keeps the latest question.

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

/// Keeps the newest whole turns whose content fits in `budget_chars` (the latest turn is
/// always kept, even when larger).
pub fn trim_history(history: Vec<ChatMessage>, budget_chars: usize) -> Vec<ChatMessage> {
    let mut turns: Vec<Vec<ChatMessage>> = Vec::new();
    for message in history {
        if message.role == ChatRole::User || turns.is_empty() {
            turns.push(Vec::new());
        }
        if let Some(turn) = turns.last_mut() {
            turn.push(message);
        }
    }
    let size = |turn: &Vec<ChatMessage>| -> usize {
        turn.iter()
            .map(|message| {
                message.content.chars().count()
                    + message
                        .tool_calls
                        .iter()
                        .map(|call| call.name.len() + call.arguments.len())
                        .sum::<usize>()
            })
            .sum()
    };
    let mut kept: Vec<Vec<ChatMessage>> = Vec::new();
    let mut used = 0;
    for turn in turns.into_iter().rev() {
        let turn_size = size(&turn);
        if !kept.is_empty() && used + turn_size > budget_chars {
            break;
        }
        used += turn_size;
        kept.push(turn);
    }
    // A leading fragment that is not a user's turn (history that starts mid-turn) is dropped.
    let mut trimmed: Vec<ChatMessage> = kept.into_iter().rev().flatten().collect();
    while trimmed
        .first()
        .is_some_and(|message| message.role == ChatRole::Tool)
    {
        trimmed.remove(0);
    }
    trimmed
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
