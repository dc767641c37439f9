//! The chat API's JSON shapes: conversations, messages (assistant tool calls enriched with
//! their server, tool and recorded state), tool calls, paged results, and the SSE events (one
//! JSON object per `data:` line, with a `type` field). Documented in the README.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use switchboard_chat::{ChatEvent, ConversationDetail, ToolEvent, ToolResultPage};
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

/// One SSE event's JSON.
pub fn event(event: &ChatEvent) -> Value {
    let mut body = match event {
        ChatEvent::Meta(meta) => json!({
            "conversationId": meta.conversation_id,
            "messageId": meta.message_id,
            "provider": meta.provider,
            "model": meta.model,
            "tools": meta.tools.iter().map(|tool| json!({"name": tool.name, "server": tool.server, "tool": tool.tool})).collect::<Vec<_>>(),
            "unavailableServers": meta.unavailable_servers.iter().map(|server| json!({"server": server.server, "code": server.code, "message": server.message})).collect::<Vec<_>>(),
            "replay": meta.replay,
        }),
        ChatEvent::Token(token) => json!({"token": token}),
        ChatEvent::McpTool(tool) => tool_event(tool),
        ChatEvent::ApprovalRequired(approval) => json!({
            "approval_id": approval.approval_id,
            "tool_call_id": approval.tool_call_id,
            "call_id": approval.call_id,
            "server": approval.server,
            "tool": approval.tool,
            "arguments": approval.arguments,
            "description": approval.description,
            "expires_at": approval.expires_at,
            // What changed since the tool was pinned (absent when nothing did).
            "diff": approval.details.get("diff"),
            "details": approval.details,
        }),
        ChatEvent::ApprovalResolved(resolved) => json!({
            "approval_id": resolved.approval_id,
            "tool_call_id": resolved.tool_call_id,
            "decision": resolved.decision,
            "decided_by": resolved.decided_by,
        }),
        ChatEvent::ElicitationRequired(elicitation) => json!({
            "elicitation_id": elicitation.elicitation_id,
            "server": elicitation.server,
            "message": elicitation.message,
            "requested_schema": elicitation.requested_schema,
            "expires_at": elicitation.expires_at,
        }),
        ChatEvent::ElicitationResolved(resolved) => json!({
            "elicitation_id": resolved.elicitation_id,
            "action": resolved.action,
            "expired": resolved.expired,
        }),
        ChatEvent::Error(error) => json!({"error": error.message, "code": error.code}),
        ChatEvent::Done(done) => json!({
            "conversationId": done.conversation_id,
            "messageId": done.message_id,
            "outcome": done.outcome.as_str(),
        }),
    };
    if let Value::Object(map) = &mut body {
        let mut ordered = Map::with_capacity(map.len() + 1);
        ordered.insert("type".to_owned(), json!(event.kind()));
        ordered.append(map);
        return Value::Object(ordered);
    }
    body
}

fn tool_event(tool: &ToolEvent) -> Value {
    let mut body = json!({
        "call_id": tool.call_id,
        "tool_call_id": tool.tool_call_id,
        "tool": tool.tool,
        "server": tool.server,
        "status": tool.status.as_str(),
        "state": tool.state,
        "arguments": tool.arguments,
    });
    if let Some(result) = &tool.result {
        body["result"] = result.clone();
        if tool.result_truncated {
            body["result_truncated"] = json!(true);
        }
    }
    if let Some(error) = &tool.error {
        body["error"] = json!(error);
    }
    if let Some(code) = &tool.error_code {
        body["error_code"] = json!(code);
    }
    if let Some(duration_ms) = tool.duration_ms {
        body["duration_ms"] = json!(duration_ms);
    }
    body
}
