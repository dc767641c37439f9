//! The JSON of each SSE event of an answer (one object per `data:` line, `type` first), as
//! Rust types borrowing from the chat engine's [`ChatEvent`]s. Documented in the README and,
//! through `ToSchema`, in the OpenAPI document as the `SseEvent` union (tagged by `type`).
//! Every field is snake_case, like the rest of the API.
//!
//! `meta` carries the design's fields: `citations` (always `[]` — citation retrieval is off
//! and replaced by the graph's tools) and `schema_context {version, type_count, last_modified}`
//! when the knowledge-graph server is in the conversation. `mcp_tool` carries `intent`.

use super::wire::AnswerUsage;
use crate::mirrors;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use switchboard_chat::{ChatEvent, ContextReport, DoneEvent, MetaEvent, SchemaContext, ToolEvent};
use switchboard_core::{
    ApprovalId, ConversationId, ElicitationId, MessageId, ServerId, ToolCallId, ToolCallState,
};
use utoipa::ToSchema;

/// One Server-Sent Event of an answer as it travels: its `data:` line holds one [`SseEvent`]
/// as JSON. Described as a string with `contentMediaType`/`contentSchema` (JSON Schema 2020-12),
/// so that clients and tools such as Schemathesis check the event inside the SSE framing.
#[derive(Debug)]
pub struct SseMessage;

impl utoipa::PartialSchema for SseMessage {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        sse_message_schema("SseEvent")
    }
}

/// The schema of one SSE message whose `data:` line holds one `event` (a schema name) as JSON.
pub fn sse_message_schema(event: &str) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let data = ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(format!("One `{event}` as JSON")))
        .content_media_type("application/json")
        .content_schema(Some(utoipa::openapi::Ref::from_schema_name(event)));
    ObjectBuilder::new()
        .description(Some(format!(
            "One event of the stream: a `data:` line holding one `{event}` as JSON (`: heartbeat` comments come between)"
        )))
        .property("data", data)
        .required("data")
        .into()
}

impl ToSchema for SseMessage {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            SseEvent::name().into_owned(),
            <SseEvent as utoipa::PartialSchema>::schema(),
        ));
        <SseEvent as ToSchema>::schemas(schemas);
    }
}

/// One event, tagged with its `type`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SseEvent<'a> {
    Meta(Meta<'a>),
    /// A piece of the answer's text.
    Token {
        token: &'a str,
    },
    McpTool(McpTool<'a>),
    ToolInputPartial(ToolInputPartial<'a>),
    ApprovalRequired(ApprovalRequired<'a>),
    ApprovalResolved(ApprovalResolved<'a>),
    ElicitationRequired(ElicitationRequired<'a>),
    ElicitationResolved(ElicitationResolved<'a>),
    AuthRequired(AuthRequired<'a>),
    /// The answer failed (a `done` with outcome `failed` follows).
    Error {
        error: &'a str,
        code: &'a str,
    },
    Done(Done<'a>),
}

/// A citation of the design's `meta`; none are made while citation retrieval is off.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CitationRef)]
pub struct Citation {}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = MetaEvent)]
pub struct Meta<'a> {
    #[schema(value_type = String)]
    pub conversation_id: &'a ConversationId,
    #[schema(value_type = String)]
    pub message_id: &'a MessageId,
    /// The provider's kind (`openai`, `anthropic`, `offline`).
    pub provider: &'a str,
    /// The named provider asked first (`default`, a configured or stored one); empty in the
    /// replay of an answer stored before names were recorded.
    pub provider_name: &'a str,
    pub model: &'a str,
    pub tools: Vec<Offered<'a>>,
    pub unavailable_servers: Vec<Unavailable<'a>>,
    pub replay: bool,
    pub citations: Vec<Citation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_context: Option<SchemaContextWire<'a>>,
    /// How the answer's first request fits the model's context window and what was left out
    /// of it (absent in replays; each stored answer step keeps its own in `metadata.context`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextWire<'a>>,
}

/// A request fitted to its model's context window, counted in the model's tokens.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ContextReport)]
pub struct ContextWire<'a> {
    /// Tokens of the model's context window.
    pub context_window: u32,
    /// True when the window is the model's own (its provider lists it); false when
    /// `chat.default_context_window` was assumed.
    pub window_known: bool,
    /// How tokens were counted: `o200k_base`, `cl100k_base` or `estimate` (UTF-8 bytes / 4).
    pub tokenizer: &'a str,
    /// Tokens set aside for the answer.
    pub answer_reserve_tokens: u32,
    /// Tokens of the tool definitions offered.
    pub tool_tokens: u32,
    /// Tokens of the request as sent (messages and tool definitions).
    pub prompt_tokens: u32,
    /// Earlier turns left out, oldest first.
    pub dropped_turns: u32,
    /// Messages of those turns.
    pub dropped_messages: u32,
    /// Tokens of those messages.
    pub dropped_tokens: u32,
    /// Tool results shortened to head and tail (each says so in its text).
    pub cut_tool_results: u32,
    /// Tokens left out of those results.
    pub cut_tokens: u32,
}

impl<'a> From<&'a ContextReport> for ContextWire<'a> {
    fn from(report: &'a ContextReport) -> Self {
        let ContextReport {
            context_window,
            window_known,
            tokenizer,
            answer_reserve_tokens,
            tool_tokens,
            prompt_tokens,
            dropped_turns,
            dropped_messages,
            dropped_tokens,
            cut_tool_results,
            cut_tokens,
        } = report;
        ContextWire {
            context_window: *context_window,
            window_known: *window_known,
            tokenizer,
            answer_reserve_tokens: *answer_reserve_tokens,
            tool_tokens: *tool_tokens,
            prompt_tokens: *prompt_tokens,
            dropped_turns: *dropped_turns,
            dropped_messages: *dropped_messages,
            dropped_tokens: *dropped_tokens,
            cut_tool_results: *cut_tool_results,
            cut_tokens: *cut_tokens,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = OfferedTool)]
pub struct Offered<'a> {
    pub name: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = UnavailableServer)]
pub struct Unavailable<'a> {
    pub server: &'a str,
    pub code: &'a str,
    pub message: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SchemaContext)]
pub struct SchemaContextWire<'a> {
    pub version: &'a str,
    pub type_count: usize,
    /// RFC 3339 in whole seconds, as `schema_version` answers `created_at`.
    pub last_modified: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = McpToolEvent)]
pub struct McpTool<'a> {
    pub call_id: &'a str,
    #[schema(value_type = String)]
    pub tool_call_id: &'a ToolCallId,
    pub tool: &'a str,
    pub server: &'a str,
    pub intent: &'a str,
    /// `started`, `progress` (the upstream reported progress; see `progress`), `completed`,
    /// `error`: what the UI shows.
    pub status: &'static str,
    #[schema(value_type = mirrors::ToolCallState)]
    pub state: ToolCallState,
    #[schema(value_type = Object)]
    pub arguments: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub result: Option<&'a Value>,
    /// Present (`true`) only when `result` was cut to fit the event.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    #[schema(required = false)]
    pub result_truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The MCP App to render under the call (its tool's `_meta.ui.resourceUri`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<ToolAppWire<'a>>,
    /// On a `progress` event: the upstream's latest `notifications/progress`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<ToolProgressWire<'a>>,
    /// On a `task` event: the upstream task the call became (MCP tasks extension) and its
    /// latest status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<ToolTaskWire<'a>>,
}

/// The upstream task a tool call became, as its server last reported it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ToolTask)]
pub struct ToolTaskWire<'a> {
    pub task_id: &'a str,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: &'static str,
    /// The server's `statusMessage`, meant for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_message: Option<&'a str>,
}

/// An upstream's progress report for a running call.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ToolProgress)]
pub struct ToolProgressWire<'a> {
    /// Increases with every report; a fraction of `total` when there is one.
    pub progress: f64,
    /// Absent when the upstream does not know how much there is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<&'a str>,
}

/// The MCP App of a tool call: which registered server's `ui://` resource, and its hash as
/// read at the sync the call's definition came from.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ToolApp)]
pub struct ToolAppWire<'a> {
    #[schema(value_type = String)]
    pub server_id: &'a ServerId,
    pub resource_uri: &'a str,
    pub resource_sha256: &'a str,
}

/// The input of a call to a tool with an MCP App as far as the model has written it, while it
/// streams (the UI passes it to the app as `ui/notifications/tool-input-partial`). At most ten
/// a second per call; the call's `mcp_tool` `started` event follows with the whole input.
impl<'a> From<&'a switchboard_core::ToolApp> for ToolAppWire<'a> {
    fn from(app: &'a switchboard_core::ToolApp) -> Self {
        ToolAppWire {
            server_id: &app.server_id,
            resource_uri: &app.resource_uri,
            resource_sha256: &app.resource_sha256,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ToolInputPartialEvent)]
pub struct ToolInputPartial<'a> {
    /// The call's position among the model's calls of this step.
    pub index: u32,
    /// The model's id for the call (empty when the provider had not sent it yet); the call's
    /// `mcp_tool` events carry the same id unless the conversation had used it already.
    pub call_id: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    /// The arguments so far: an object, any member cut short left out.
    #[schema(value_type = Object)]
    pub arguments: &'a Value,
    pub app: ToolAppWire<'a>,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ApprovalRequiredEvent)]
pub struct ApprovalRequired<'a> {
    #[schema(value_type = String)]
    pub approval_id: &'a ApprovalId,
    #[schema(value_type = String)]
    pub tool_call_id: &'a ToolCallId,
    pub call_id: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    #[schema(value_type = Object)]
    pub arguments: &'a Value,
    pub description: &'a str,
    pub expires_at: DateTime<Utc>,
    /// What changed since the tool was pinned (absent when nothing did).
    #[schema(value_type = Option<Object>)]
    pub diff: Option<&'a Value>,
    #[schema(value_type = Object)]
    pub details: &'a Value,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ApprovalResolvedEvent)]
pub struct ApprovalResolved<'a> {
    #[schema(value_type = String)]
    pub approval_id: &'a ApprovalId,
    #[schema(value_type = String)]
    pub tool_call_id: &'a ToolCallId,
    pub decision: &'a str,
    pub decided_by: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ElicitationRequiredEvent)]
pub struct ElicitationRequired<'a> {
    #[schema(value_type = String)]
    pub elicitation_id: &'a ElicitationId,
    pub server: &'a str,
    pub message: &'a str,
    #[schema(value_type = Object)]
    pub requested_schema: &'a Value,
    pub expires_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ElicitationResolvedEvent)]
pub struct ElicitationResolved<'a> {
    #[schema(value_type = String)]
    pub elicitation_id: &'a ElicitationId,
    pub action: &'a str,
    pub expired: bool,
}

/// A server of the conversation waits for the caller to connect (`needs_auth`: sign in with
/// OAuth; `needs_user_credentials`: fill in their own credentials). The answer goes on without
/// its tools. `authorization_url`, when present, is where to send the person; otherwise the UI
/// calls `POST /api/mcp/servers/{server_id}/oauth/authorize`.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = AuthRequiredEvent)]
pub struct AuthRequired<'a> {
    pub server: &'a str,
    #[schema(value_type = String)]
    pub server_id: &'a ServerId,
    /// `needs_auth` (sign in: Connect) or `needs_user_credentials` (the caller's own
    /// credentials are missing: the servers page's form).
    pub code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<&'a str>,
    pub message: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = DoneEvent)]
pub struct Done<'a> {
    #[schema(value_type = String)]
    pub conversation_id: &'a ConversationId,
    #[schema(value_type = Option<String>)]
    pub message_id: Option<&'a MessageId>,
    /// `completed`, `cancelled` or `failed`.
    pub outcome: &'static str,
    /// The kind of the provider that answered the last step (after any fallback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<&'a str>,
    /// The named provider that answered the last step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_name: Option<&'a str>,
    /// The model that answered the last step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<&'a str>,
    /// The models of the bud's fallback chain that failed before it answered, in order.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub fallback_from: Vec<FallbackAttempt<'a>>,
    /// The tokens of all the answer's LLM steps, summed; absent when no step reported usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<AnswerUsage>,
}

/// A model that failed before streaming anything, so the next of the chain was asked.
#[derive(Debug, Serialize, ToSchema)]
pub struct FallbackAttempt<'a> {
    pub provider_name: &'a str,
    pub model: &'a str,
    /// `llm_upstream_status`, `llm_timeout`, `llm_rate_limited`, `llm_unreachable`…
    pub error_code: &'a str,
    pub error: &'a str,
}

impl<'a> From<&'a ChatEvent> for SseEvent<'a> {
    fn from(event: &'a ChatEvent) -> Self {
        match event {
            ChatEvent::Meta(meta) => SseEvent::Meta(Meta::from(meta)),
            ChatEvent::Token(token) => SseEvent::Token { token },
            ChatEvent::McpTool(tool) => SseEvent::McpTool(McpTool::from(tool)),
            ChatEvent::ToolInputPartial(partial) => SseEvent::ToolInputPartial(ToolInputPartial {
                index: partial.index,
                call_id: &partial.call_id,
                server: &partial.server,
                tool: &partial.tool,
                arguments: &partial.arguments,
                app: ToolAppWire::from(&partial.app),
            }),
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
            ChatEvent::AuthRequired(auth) => SseEvent::AuthRequired(AuthRequired {
                server: &auth.server,
                server_id: &auth.server_id,
                code: &auth.code,
                authorization_url: auth.authorization_url.as_deref(),
                message: &auth.message,
            }),
            ChatEvent::Error(error) => SseEvent::Error {
                error: &error.message,
                code: &error.code,
            },
            ChatEvent::Done(done) => SseEvent::Done(done_of(done)),
        }
    }
}

fn done_of(done: &DoneEvent) -> Done<'_> {
    let answered_by = done.answered_by.as_ref();
    Done {
        conversation_id: &done.conversation_id,
        message_id: done.message_id.as_ref(),
        outcome: done.outcome.as_str(),
        provider: answered_by.map(|by| by.provider.as_str()),
        provider_name: answered_by.map(|by| by.provider_name.as_str()),
        model: answered_by.map(|by| by.model.as_str()),
        fallback_from: answered_by
            .map(|by| by.fallback_from.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|attempt| FallbackAttempt {
                provider_name: &attempt.provider_name,
                model: &attempt.model,
                error_code: &attempt.error_code,
                error: &attempt.error,
            })
            .collect(),
        usage: done.usage.map(AnswerUsage::from),
    }
}

impl<'a> From<&'a MetaEvent> for Meta<'a> {
    fn from(meta: &'a MetaEvent) -> Self {
        Meta {
            conversation_id: &meta.conversation_id,
            message_id: &meta.message_id,
            provider: &meta.provider,
            provider_name: &meta.provider_name,
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
            context: meta.context.as_ref().map(ContextWire::from),
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
            app: tool.app.as_ref().map(ToolAppWire::from),
            progress: tool.progress.as_ref().map(|progress| ToolProgressWire {
                progress: progress.progress,
                total: progress.total,
                message: progress.message.as_deref(),
            }),
            task: tool.task.as_ref().map(|task| ToolTaskWire {
                task_id: &task.task_id,
                status: task.status.as_str(),
                status_message: task.status_message.as_deref(),
            }),
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
