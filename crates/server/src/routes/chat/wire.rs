//! The chat API's JSON shapes: conversations, messages (assistant tool calls enriched with
//! their server, tool and recorded state), tool calls and paged results (the SSE events are
//! in `sse`). Documented in the README.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use std::collections::HashMap;
use switchboard_chat::{ConversationDetail, ToolResultPage};
use switchboard_store::{ConversationRecord, MessageRecord, ToolCallRecord};

pub fn conversation(record: &ConversationRecord) -> Value {
    json!({
        "id": record.id,
        "title": record.title,
        "bud_id": record.bud_id,
        "owner_user_id": record.owner_user_id,
        "mcp_config_overrides": record.mcp_config_overrides,
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    })
}

/// A conversation with whether an answer is being generated in it right now.
pub fn conversation_with_activity(record: &ConversationRecord, answer_in_flight: bool) -> Value {
    let mut body = conversation(record);
    body["answer_in_flight"] = json!(answer_in_flight);
    body
}

pub fn conversation_detail(detail: &ConversationDetail) -> Value {
    // Keyed by the asking message too: a provider may reuse a call id in a later answer.
    let calls: HashMap<(Option<&str>, &str), &ToolCallRecord> = detail
        .tool_calls
        .iter()
        .map(|call| {
            let message_id = call.message_id.as_ref().map(|id| id.as_str());
            ((message_id, call.llm_call_id.as_str()), call)
        })
        .collect();
    json!({
        "conversation": conversation_with_activity(&detail.conversation, detail.answer_in_flight),
        "messages": detail.messages.iter().map(|message| message_view(message, &calls)).collect::<Vec<_>>(),
        "tool_calls": detail.tool_calls.iter().map(tool_call).collect::<Vec<_>>(),
    })
}

fn message_view(
    message: &MessageRecord,
    calls: &HashMap<(Option<&str>, &str), &ToolCallRecord>,
) -> Value {
    let tool_calls: Vec<Value> = message
        .tool_calls
        .iter()
        .map(|request| {
            let mut view = json!({
                "id": request.id,
                "name": request.name,
                "arguments": request.arguments,
            });
            let record = calls
                .get(&(Some(message.id.as_str()), request.id.as_str()))
                .or_else(|| calls.get(&(None, request.id.as_str())));
            if let Some(record) = record {
                view["tool_call_id"] = json!(record.id);
                view["server"] = json!(record.server_name);
                view["tool"] = json!(record.tool_name);
                view["state"] = json!(record.state);
            }
            view
        })
        .collect();
    json!({
        "id": message.id,
        "seq": message.seq,
        "role": message.role,
        "content": message.content,
        "tool_calls": tool_calls,
        "tool_call_id": message.tool_call_id,
        "metadata": message.metadata,
        "status": message.status,
        "created_at": message.created_at,
        "updated_at": message.updated_at,
    })
}

/// A tool call without its (possibly large) result: read that through the result pages.
pub fn tool_call(record: &ToolCallRecord) -> Value {
    let millis = |from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>| match (from, to) {
        (Some(from), Some(to)) => Some((to - from).num_milliseconds()),
        _ => None,
    };
    json!({
        "id": record.id,
        "llm_call_id": record.llm_call_id,
        "message_id": record.message_id,
        "server_id": record.server_id,
        "server": record.server_name,
        "tool": record.tool_name,
        "arguments": record.arguments,
        "state": record.state,
        "error": record.error,
        "has_result": record.result.is_some(),
        "result_bytes": record.result.as_ref().and_then(|result| serde_json::to_vec(result).ok()).map(|bytes| bytes.len()),
        "created_at": record.created_at,
        "decided_at": record.decided_at,
        "dispatched_at": record.dispatched_at,
        "finished_at": record.finished_at,
        "duration_ms": millis(record.dispatched_at, record.finished_at),
    })
}

pub fn tool_result_page(page: &ToolResultPage) -> Value {
    json!({
        "tool_call": tool_call(&page.tool_call),
        "is_error": page.tool_call.result.as_ref().and_then(|result| result.get("isError")).and_then(Value::as_bool).unwrap_or(page.tool_call.result.is_none()),
        "offset": page.offset,
        "total_chars": page.total_chars,
        "text": page.text,
        "next_offset": page.next_offset,
    })
}
