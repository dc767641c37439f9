//! The JSON of each SSE event of an answer (one object per `data:` line, `type` first), as
//! Rust types borrowing from the chat engine's [`ChatEvent`]s. Documented in the README.
//!
//! `meta` carries the design's fields: `citations` (always `[]` — citation retrieval is off
//! and replaced by the graph's tools) and `schemaContext {version, typeCount, lastModified}`
//! when the knowledge-graph server is in the conversation. `mcp_tool` carries `intent`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use switchboard_chat::{ChatEvent, MetaEvent, SchemaContext, ToolEvent};
use switchboard_core::{
    ApprovalId, ConversationId, ElicitationId, MessageId, ToolCallId, ToolCallState,
};

/// One event, tagged with its `type`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SseEvent<'a> {
    Meta(Meta<'a>),
    Token { token: &'a str },
    McpTool(McpTool<'a>),
    ApprovalRequired(ApprovalRequired<'a>),
    ApprovalResolved(ApprovalResolved<'a>),
    ElicitationRequired(ElicitationRequired<'a>),
    ElicitationResolved(ElicitationResolved<'a>),
    Error { error: &'a str, code: &'a str },
    Done(Done<'a>),
}

/// A citation of the design's `meta`; none are made while citation retrieval is off.
#[derive(Debug, Serialize)]
pub struct Citation {}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Meta<'a> {
    pub conversation_id: &'a ConversationId,
    pub message_id: &'a MessageId,
    pub provider: &'a str,
    pub model: &'a str,
    pub tools: Vec<Offered<'a>>,
    pub unavailable_servers: Vec<Unavailable<'a>>,
    pub replay: bool,
    pub citations: Vec<Citation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_context: Option<SchemaContextWire<'a>>,
}

#[derive(Debug, Serialize)]
pub struct Offered<'a> {
    pub name: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
}

#[derive(Debug, Serialize)]
pub struct Unavailable<'a> {
    pub server: &'a str,
    pub code: &'a str,
    pub message: &'a str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaContextWire<'a> {
    pub version: &'a str,
    pub type_count: usize,
    /// RFC 3339 in whole seconds, as `schema_version` answers `created_at`.
    pub last_modified: String,
}

#[derive(Debug, Serialize)]
pub struct McpTool<'a> {
    pub call_id: &'a str,
    pub tool_call_id: &'a ToolCallId,
    pub tool: &'a str,
    pub server: &'a str,
    pub intent: &'a str,
    pub status: &'static str,
    pub state: ToolCallState,
    pub arguments: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a Value>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub result_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct ApprovalRequired<'a> {
    pub approval_id: &'a ApprovalId,
    pub tool_call_id: &'a ToolCallId,
    pub call_id: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub description: &'a str,
    pub expires_at: DateTime<Utc>,
    /// What changed since the tool was pinned (absent when nothing did).
    pub diff: Option<&'a Value>,
    pub details: &'a Value,
}

#[derive(Debug, Serialize)]
pub struct ApprovalResolved<'a> {
    pub approval_id: &'a ApprovalId,
    pub tool_call_id: &'a ToolCallId,
    pub decision: &'a str,
    pub decided_by: &'a str,
}

#[derive(Debug, Serialize)]
pub struct ElicitationRequired<'a> {
    pub elicitation_id: &'a ElicitationId,
    pub server: &'a str,
    pub message: &'a str,
    pub requested_schema: &'a Value,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Serialize)]
pub struct ElicitationResolved<'a> {
    pub elicitation_id: &'a ElicitationId,
    pub action: &'a str,
    pub expired: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Done<'a> {
    pub conversation_id: &'a ConversationId,
    pub message_id: Option<&'a MessageId>,
    pub outcome: &'static str,
}

impl<'a> From<&'a ChatEvent> for SseEvent<'a> {
    fn from(event: &'a ChatEvent) -> Self {
        match event {
            ChatEvent::Meta(meta) => SseEvent::Meta(Meta::from(meta)),
            ChatEvent::Token(token) => SseEvent::Token { token },
            ChatEvent::McpTool(tool) => SseEvent::McpTool(McpTool::from(tool)),
            ChatEvent::ApprovalRequired(approval) => SseEvent::ApprovalRequired(ApprovalRequired {
                approval_id: &approval.approval_id,
                tool_call_id: &approval.tool_call_id,
                call_id: &approval.call_id,
                server: &approval.server,
                tool: &approval.tool,
                arguments: &approval.arguments,
                description: &approval.description,
                expires_at: approval.expires_at,
                diff: approval.details.get("diff"),
                details: &approval.details,
            }),
            ChatEvent::ApprovalResolved(resolved) => SseEvent::ApprovalResolved(ApprovalResolved {
                approval_id: &resolved.approval_id,
                tool_call_id: &resolved.tool_call_id,
                decision: &resolved.decision,
                decided_by: &resolved.decided_by,
            }),
            ChatEvent::ElicitationRequired(elicitation) => {
                SseEvent::ElicitationRequired(ElicitationRequired {
                    elicitation_id: &elicitation.elicitation_id,
                    server: &elicitation.server,
                    message: &elicitation.message,
                    requested_schema: &elicitation.requested_schema,
                    expires_at: elicitation.expires_at,
                })
            }
            ChatEvent::ElicitationResolved(resolved) => {
                SseEvent::ElicitationResolved(ElicitationResolved {
                    elicitation_id: &resolved.elicitation_id,
                    action: &resolved.action,
                    expired: resolved.expired,
                })
            }
            ChatEvent::Error(error) => SseEvent::Error {
                error: &error.message,
                code: &error.code,
            },
            ChatEvent::Done(done) => SseEvent::Done(Done {
                conversation_id: &done.conversation_id,
                message_id: done.message_id.as_ref(),
                outcome: done.outcome.as_str(),
            }),
        }
    }
}

impl<'a> From<&'a MetaEvent> for Meta<'a> {
    fn from(meta: &'a MetaEvent) -> Self {
        Meta {
            conversation_id: &meta.conversation_id,
            message_id: &meta.message_id,
            provider: &meta.provider,
            model: &meta.model,
            tools: meta
                .tools
                .iter()
                .map(|tool| Offered {
                    name: &tool.name,
                    server: &tool.server,
                    tool: &tool.tool,
                })
                .collect(),
            unavailable_servers: meta
                .unavailable_servers
                .iter()
                .map(|server| Unavailable {
                    server: &server.server,
                    code: &server.code,
                    message: &server.message,
                })
                .collect(),
            replay: meta.replay,
            citations: Vec::new(),
            schema_context: meta.schema_context.as_ref().map(schema_context),
        }
    }
}

fn schema_context(context: &SchemaContext) -> SchemaContextWire<'_> {
    SchemaContextWire {
        version: &context.version,
        type_count: context.type_count,
        last_modified: context
            .last_modified
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }
}

impl<'a> From<&'a ToolEvent> for McpTool<'a> {
    fn from(tool: &'a ToolEvent) -> Self {
        McpTool {
            call_id: &tool.call_id,
            tool_call_id: &tool.tool_call_id,
            tool: &tool.tool,
            server: &tool.server,
            intent: &tool.intent,
            status: tool.status.as_str(),
            state: tool.state,
            arguments: &tool.arguments,
            result: tool.result.as_ref(),
            result_truncated: tool.result_truncated,
            error: tool.error.as_deref(),
            error_code: tool.error_code.as_deref(),
            duration_ms: tool.duration_ms,
        }
    }
}

/// One SSE event's `data:` text.
pub fn event_data(event: &ChatEvent) -> String {
    serde_json::to_string(&SseEvent::from(event)).unwrap_or_else(|error| {
        tracing::error!(%error, "an answer event could not be written as JSON");
        String::from("{}")
    })
}
