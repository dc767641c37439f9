//! The chat API's JSON shapes: conversations, messages (assistant tool calls enriched with
//! their server, tool and recorded state), tool calls and paged results (the SSE events are
//! in `sse`). Documented in the README and in the OpenAPI document (`ToSchema`).
//!
//! Owned types built from the store's records: the store's records are not wire shapes (they
//! carry workspace ids, raw results), so each answer picks its fields here.

use crate::mirrors;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use switchboard_chat::{ConversationDetail, TokenUsage, ToolResultPage, message_usage};
use switchboard_core::{
    BudId, ChatRole, ConversationId, MessageId, ServerId, ToolCallId, ToolCallState, UserId,
};
use switchboard_store::{ConversationRecord, MessageRecord, MessageStatus, ToolCallRecord};
use utoipa::ToSchema;

/// A conversation. `answer_in_flight` is present in lists and details: whether an answer is
/// being generated in it right now.
#[derive(Debug, Serialize, ToSchema)]
pub struct Conversation {
    #[schema(value_type = String)]
    pub id: ConversationId,
    pub title: String,
    #[schema(value_type = Option<String>)]
    pub bud_id: Option<BudId>,
    #[schema(value_type = String)]
    pub owner_user_id: UserId,
    /// Per-conversation MCP configuration (`additional_servers`, `disabled_servers`…).
    #[schema(value_type = Option<Object>)]
    pub mcp_config_overrides: Option<Value>,
    /// The provider this conversation answers with over its bud's; `null`: the bud's.
    pub provider: Option<String>,
    /// The model this conversation asks; `null`: the provider's (or the bud's) default.
    pub model: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_in_flight: Option<bool>,
}

/// One page of the caller's conversations, newest activity first.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationPage {
    pub conversations: Vec<Conversation>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// A conversation with its messages and tool calls.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConversationDetailBody {
    pub conversation: Conversation,
    pub messages: Vec<Message>,
    pub tool_calls: Vec<ToolCall>,
}

/// One stored message.
#[derive(Debug, Serialize, ToSchema)]
pub struct Message {
    #[schema(value_type = String)]
    pub id: MessageId,
    pub seq: i64,
    #[schema(value_type = mirrors::ChatRole)]
    pub role: ChatRole,
    pub content: String,
    pub tool_calls: Vec<MessageToolCall>,
    pub tool_call_id: Option<String>,
    /// What the engine recorded about the message (tool latency, errors, the answer's
    /// provider…), as stored.
    #[schema(value_type = Object)]
    pub metadata: Value,
    /// Assistant messages: the named provider that wrote it (`null` for other roles and for
    /// answers stored before providers had names).
    pub provider_name: Option<String>,
    /// Assistant messages: the model that wrote it.
    pub model: Option<String>,
    /// Assistant messages: the tokens of this LLM step, when the provider reported them.
    pub usage: Option<AnswerUsage>,
    #[schema(value_type = mirrors::MessageStatus)]
    pub status: MessageStatus,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The tokens of an LLM step, or of an answer (summed over its steps), as the provider
/// reported them.
#[derive(Clone, Copy, Debug, Serialize, ToSchema)]
pub struct AnswerUsage {
    /// Every prompt token, cached or not.
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Of `input_tokens`, those read from the provider's prompt cache (0: none or not
    /// reported).
    pub cache_read_tokens: u32,
    /// Of `input_tokens`, those written to the provider's prompt cache (0: none or not
    /// reported).
    pub cache_write_tokens: u32,
}

impl From<TokenUsage> for AnswerUsage {
    fn from(usage: TokenUsage) -> Self {
        Self {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_creation_tokens,
        }
    }
}

/// A tool call an assistant message asked for, with what became of it when it was recorded.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessageToolCall {
    /// The model's call id.
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (JSON text).
    pub arguments: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub tool_call_id: Option<ToolCallId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<mirrors::ToolCallState>)]
    pub state: Option<ToolCallState>,
}

/// A tool call without its (possibly large) result: read that through the result pages.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCall {
    #[schema(value_type = String)]
    pub id: ToolCallId,
    pub llm_call_id: String,
    #[schema(value_type = Option<String>)]
    pub message_id: Option<MessageId>,
    /// `null` once the server is deleted (`server` keeps its name).
    #[schema(value_type = Option<String>)]
    pub server_id: Option<ServerId>,
    pub server: String,
    pub tool: String,
    /// The arguments as JSON text.
    pub arguments: String,
    #[schema(value_type = mirrors::ToolCallState)]
    pub state: ToolCallState,
    pub error: Option<String>,
    pub has_result: bool,
    pub result_bytes: Option<usize>,
    pub created_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
    pub dispatched_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub duration_ms: Option<i64>,
    /// The MCP task the call became (its upstream answered with one), else `null`. A
    /// `dispatched` call with a task id is a task still working: this or the next process
    /// follows it (and `POST …/cancel` stops it).
    pub task_id: Option<String>,
    /// What the task's server last said of it (`tasks/get` or `notifications/tasks`), as
    /// stored when it was heard; `null` for a call that is not a task, or before the first
    /// report.
    pub task: Option<ToolCallTaskStatus>,
}

/// A tool call's task as its server last reported it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCallTaskStatus {
    #[schema(value_type = mirrors::ToolTaskStatus)]
    pub status: switchboard_core::ToolTaskStatus,
    /// The server's `statusMessage`, meant for people.
    pub status_message: Option<String>,
    /// When Switchboard heard it.
    pub updated_at: DateTime<Utc>,
}

/// A page of a tool call's full result text.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolResultPageBody {
    pub tool_call: ToolCall,
    pub is_error: bool,
    pub offset: usize,
    pub total_chars: usize,
    pub text: String,
    /// Where the next page starts; `null` on the last one.
    pub next_offset: Option<usize>,
}

pub fn conversation(record: &ConversationRecord) -> Conversation {
    Conversation {
        id: record.id.clone(),
        title: record.title.clone(),
        bud_id: record.bud_id.clone(),
        owner_user_id: record.owner_user_id.clone(),
        mcp_config_overrides: record.mcp_config_overrides.clone(),
        provider: record.model_choice.provider.clone(),
        model: record.model_choice.model.clone(),
        created_at: record.created_at,
        updated_at: record.updated_at,
        answer_in_flight: None,
    }
}

/// A conversation with whether an answer is being generated in it right now.
pub fn conversation_with_activity(
    record: &ConversationRecord,
    answer_in_flight: bool,
) -> Conversation {
    Conversation {
        answer_in_flight: Some(answer_in_flight),
        ..conversation(record)
    }
}

pub fn conversation_detail(detail: &ConversationDetail) -> ConversationDetailBody {
    // Keyed by the asking message too: a provider may reuse a call id in a later answer.
    let calls: HashMap<(Option<&str>, &str), &ToolCallRecord> = detail
        .tool_calls
        .iter()
        .map(|call| {
            let message_id = call.message_id.as_ref().map(|id| id.as_str());
            ((message_id, call.llm_call_id.as_str()), call)
        })
        .collect();
    ConversationDetailBody {
        conversation: conversation_with_activity(&detail.conversation, detail.answer_in_flight),
        messages: detail
            .messages
            .iter()
            .map(|message| message_view(message, &calls))
            .collect(),
        tool_calls: detail.tool_calls.iter().map(tool_call).collect(),
    }
}

fn message_view(
    message: &MessageRecord,
    calls: &HashMap<(Option<&str>, &str), &ToolCallRecord>,
) -> Message {
    let tool_calls = message
        .tool_calls
        .iter()
        .map(|request| {
            let record = calls
                .get(&(Some(message.id.as_str()), request.id.as_str()))
                .or_else(|| calls.get(&(None, request.id.as_str())));
            MessageToolCall {
                id: request.id.clone(),
                name: request.name.clone(),
                arguments: request.arguments.clone(),
                tool_call_id: record.map(|record| record.id.clone()),
                server: record.map(|record| record.server_name.clone()),
                tool: record.map(|record| record.tool_name.clone()),
                state: record.map(|record| record.state),
            }
        })
        .collect();
    Message {
        id: message.id.clone(),
        seq: message.seq,
        role: message.role,
        content: message.content.clone(),
        tool_calls,
        tool_call_id: message.tool_call_id.clone(),
        // Through serde: the metadata is stored as it is (its own type lives in `core`).
        metadata: serde_json::to_value(&message.metadata).unwrap_or_default(),
        provider_name: assistant_text(message, "provider_name"),
        model: assistant_text(message, "model"),
        usage: (message.role == ChatRole::Assistant)
            .then(|| message_usage(message).map(AnswerUsage::from))
            .flatten(),
        status: message.status,
        created_at: message.created_at,
        updated_at: message.updated_at,
    }
}

/// A text the engine recorded in an assistant message's metadata.
fn assistant_text(message: &MessageRecord, key: &str) -> Option<String> {
    if message.role != ChatRole::Assistant {
        return None;
    }
    message
        .metadata
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// A tool call without its (possibly large) result: read that through the result pages.
pub fn tool_call(record: &ToolCallRecord) -> ToolCall {
    let millis = |from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>| match (from, to) {
        (Some(from), Some(to)) => Some((to - from).num_milliseconds()),
        _ => None,
    };
    ToolCall {
        id: record.id.clone(),
        llm_call_id: record.llm_call_id.clone(),
        message_id: record.message_id.clone(),
        server_id: record.server_id.clone(),
        server: record.server_name.clone(),
        tool: record.tool_name.clone(),
        arguments: record.arguments.clone(),
        state: record.state,
        error: record.error.clone(),
        has_result: record.result.is_some(),
        result_bytes: record
            .result
            .as_ref()
            .and_then(|result| serde_json::to_vec(result).ok())
            .map(|bytes| bytes.len()),
        created_at: record.created_at,
        decided_at: record.decided_at,
        dispatched_at: record.dispatched_at,
        finished_at: record.finished_at,
        duration_ms: millis(record.dispatched_at, record.finished_at),
        task_id: record.task_id.clone(),
        task: record
            .task_status
            .as_ref()
            .map(|reported| ToolCallTaskStatus {
                status: reported.status,
                status_message: reported.status_message.clone(),
                updated_at: reported.updated_at,
            }),
    }
}

pub fn tool_result_page(page: &ToolResultPage) -> ToolResultPageBody {
    let result = page.tool_call.result.as_ref();
    ToolResultPageBody {
        tool_call: tool_call(&page.tool_call),
        is_error: result
            .and_then(|result| result.get("isError"))
            .and_then(Value::as_bool)
            .unwrap_or(result.is_none()),
        offset: page.offset,
        total_chars: page.total_chars,
        text: page.text.clone(),
        next_offset: page.next_offset,
    }
}
