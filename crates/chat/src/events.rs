//! What a chat turn tells its watchers, in order: one `Meta`, then `Token`s and `McpTool`
//! updates (and, from the approvals module, approval and elicitation events), at most one
//! `Error`, and always one final `Done`.
//!
//! These are plain Rust values: the JSON shape on the wire (one object per SSE `data:` line
//! with a `type` field) is the HTTP layer's business (`server::routes::chat`), so this crate
//! stays free of our API's wire format. Their serde form (the derives) is only the relay's
//! encoding between replicas of one deployment (`relay`), never shown to clients.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_core::{
    ApprovalId, ConversationId, ElicitationId, MessageId, ServerId, ToolApp, ToolCallId,
    ToolCallState,
};
use switchboard_llm::TokenUsage;

/// One event of a turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ChatEvent {
    Meta(MetaEvent),
    /// A piece of the answer text, to append to what came before.
    Token(String),
    McpTool(ToolEvent),
    /// The input of a call to a tool with an MCP App, as far as the model has written it
    /// (the call's `mcp_tool` `started` follows with the whole input).
    ToolInputPartial(ToolInputPartialEvent),
    /// A call waits for the user's decision (emitted by an [`crate::ApprovalGate`]).
    ApprovalRequired(ApprovalRequiredEvent),
    ApprovalResolved(ApprovalResolvedEvent),
    /// An upstream asks the user to fill in a form during a call.
    ElicitationRequired(ElicitationRequiredEvent),
    /// The form was answered, or nobody answered in time.
    ElicitationResolved(ElicitationResolvedEvent),
    /// A server of the conversation needs the caller to connect (sign in, or fill in their
    /// credentials); the answer goes on without its tools.
    AuthRequired(AuthRequiredEvent),
    Error(ErrorEvent),
    Done(DoneEvent),
}

impl ChatEvent {
    /// The event's `type` on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            ChatEvent::Meta(_) => "meta",
            ChatEvent::Token(_) => "token",
            ChatEvent::McpTool(_) => "mcp_tool",
            ChatEvent::ToolInputPartial(_) => "tool_input_partial",
            ChatEvent::ApprovalRequired(_) => "approval_required",
            ChatEvent::ApprovalResolved(_) => "approval_resolved",
            ChatEvent::ElicitationRequired(_) => "elicitation_required",
            ChatEvent::ElicitationResolved(_) => "elicitation_resolved",
            ChatEvent::AuthRequired(_) => "auth_required",
            ChatEvent::Error(_) => "error",
            ChatEvent::Done(_) => "done",
        }
    }

    pub fn is_done(&self) -> bool {
        matches!(self, ChatEvent::Done(_))
    }
}

/// The first event of every turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetaEvent {
    pub conversation_id: ConversationId,
    /// The stored user message this turn answers.
    pub message_id: MessageId,
    /// `offline`, `openai`, `anthropic`…
    pub provider: String,
    /// The named provider asked first (`default`, a configured or stored one).
    pub provider_name: String,
    pub model: String,
    /// The tools offered to the model this turn, in the order offered.
    pub tools: Vec<OfferedTool>,
    /// Servers of the resolved configuration that offered no tools, with the reason.
    pub unavailable_servers: Vec<UnavailableServer>,
    /// True when this is a replay of a finished answer (`GET /chat/{id}/stream`).
    pub replay: bool,
    /// The knowledge graph's schema as the answer starts, when our own kg server is in the
    /// conversation (and a [`crate::SchemaContextSource`] is configured); `None` otherwise and
    /// in replays.
    pub schema_context: Option<SchemaContext>,
    /// How the answer's first request fits the model's context window and what was left out
    /// of it; `None` in replays (each stored answer step keeps its own in `metadata.context`).
    pub context: Option<crate::context::ContextReport>,
}

/// `meta.schemaContext` of the design: the schema the answer works with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaContext {
    /// The current schema version (content hash).
    pub version: String,
    /// How many object types the schema has.
    pub type_count: usize,
    /// When the current version was made.
    pub last_modified: DateTime<Utc>,
}

/// What a call was for, as the `mcp_tool` event's `intent`. The offline planner is the
/// design's intent detector: its calls of the knowledge graph's schema tools carry the
/// design's intent names (`schema-version`, `schema-changes`, `type-info`,
/// `relationship-info`), its other calls the tool's name. A model's call carries the tool's
/// name: a model has no intent of its own to report.
pub fn tool_intent(provider: &str, tool: &str) -> String {
    if provider == "offline" {
        let design_intent = match tool {
            "schema_version" => Some("schema-version"),
            "schema_changelog" => Some("schema-changes"),
            "type_info" => Some("type-info"),
            "relationship_info" => Some("relationship-info"),
            _ => None,
        };
        if let Some(intent) = design_intent {
            return intent.to_owned();
        }
    }
    tool.to_owned()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OfferedTool {
    /// The name the model sees (`server__tool`).
    pub name: String,
    pub server: String,
    pub tool: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UnavailableServer {
    pub server: String,
    /// The registered server's id; `None` for a server the request brought.
    pub server_id: Option<ServerId>,
    /// Stable code (`connect_failed`, `needs_auth`, `empty`…).
    pub code: String,
    pub message: String,
}

/// Where a tool call stands, as the `mcp_tool` event's `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ToolEventStatus {
    Started,
    /// The upstream reported progress (`notifications/progress`) while the call runs.
    Progress,
    /// The call became a task (the upstream answered with one), or its task's status or
    /// status message changed (see `task`).
    Task,
    Completed,
    Error,
}

impl ToolEventStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolEventStatus::Started => "started",
            ToolEventStatus::Progress => "progress",
            ToolEventStatus::Task => "task",
            ToolEventStatus::Completed => "completed",
            ToolEventStatus::Error => "error",
        }
    }
}

/// An `mcp_tool` event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolEvent {
    /// The model's id for the call.
    pub call_id: String,
    /// Our record of the call (`GET …/tool-calls/{id}/result` pages its full result).
    pub tool_call_id: ToolCallId,
    /// The upstream's own tool name.
    pub tool: String,
    /// The server's name (empty when the model named a tool that does not exist).
    pub server: String,
    /// What the call was for ([`tool_intent`]).
    pub intent: String,
    pub status: ToolEventStatus,
    /// The recorded state (`dispatched`, `completed`, `failed`, `denied`, `unknown`).
    pub state: ToolCallState,
    /// Parsed arguments (the raw text as a JSON string when it was not valid JSON).
    pub arguments: Value,
    /// The MCP result (`content`, `structuredContent`, `isError`), possibly shortened.
    pub result: Option<Value>,
    /// True when `result` was shortened for the event (the full result is stored).
    pub result_truncated: bool,
    pub error: Option<String>,
    /// Stable code of the failure (`denied`, `timeout`, `connection_lost`, `tool_error`…).
    pub error_code: Option<String>,
    pub duration_ms: Option<u64>,
    /// The MCP App the UI renders under the call (absent: the tool has none).
    pub app: Option<ToolApp>,
    /// On a `progress` event: what the upstream reported.
    pub progress: Option<ToolProgress>,
    /// On a `task` event: the upstream task the call became, with its latest status.
    pub task: Option<Box<switchboard_core::ToolTask>>,
}

/// What the model has written so far of a call's arguments, for the tool's app to preview.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolInputPartialEvent {
    /// The call's position among the model's calls of this step.
    pub index: u32,
    /// The model's id for the call, when the provider has sent it yet (else empty). The
    /// call's `mcp_tool` events carry the same id unless the conversation had used it already.
    pub call_id: String,
    pub server: String,
    /// The upstream's own tool name.
    pub tool: String,
    /// The arguments so far: an object, with any member cut short left out.
    pub arguments: Value,
    pub app: ToolApp,
}

/// An upstream's `notifications/progress` for a running call, as its `progress` event says it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    /// Increases with every report; a fraction of `total` when there is one.
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequiredEvent {
    pub approval_id: ApprovalId,
    pub tool_call_id: ToolCallId,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    /// The tool's description, sanitised by the gate.
    pub description: String,
    pub expires_at: DateTime<Utc>,
    /// Anything else the gate wants the UI to show (e.g. a definition diff).
    pub details: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalResolvedEvent {
    pub approval_id: ApprovalId,
    pub tool_call_id: ToolCallId,
    /// `approved`, `denied`, `expired`.
    pub decision: String,
    /// Who decided (a user id, `policy`, `timeout`).
    pub decided_by: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitationRequiredEvent {
    pub elicitation_id: ElicitationId,
    pub server: String,
    pub message: String,
    pub requested_schema: Value,
    pub expires_at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitationResolvedEvent {
    pub elicitation_id: ElicitationId,
    /// `accept`, `decline`, `cancel` (also when nobody answered in time: `expired` is true).
    pub action: String,
    pub expired: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuthRequiredEvent {
    pub server: String,
    pub server_id: ServerId,
    /// `needs_auth` (sign in with OAuth) or `needs_user_credentials` (fill in their own
    /// credentials).
    pub code: String,
    /// Where to send the person to sign in, when the flow could be started for this answer;
    /// otherwise the UI asks the authorize API (or shows the credentials form).
    pub authorization_url: Option<String>,
    /// What is needed, for people.
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// Stable code (`llm_rate_limited`, `llm_stream_interrupted`, `max_steps_reached`…).
    pub code: String,
    pub message: String,
}

/// How the answer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TurnOutcome {
    /// The model finished its answer.
    Completed,
    /// Every watcher left, or the service is shutting down: what was produced is saved,
    /// marked partial.
    Cancelled,
    /// The model (or the store) failed; what was produced is saved, marked partial.
    Failed,
}

impl TurnOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnOutcome::Completed => "completed",
            TurnOutcome::Cancelled => "cancelled",
            TurnOutcome::Failed => "failed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DoneEvent {
    pub conversation_id: ConversationId,
    /// The last assistant message of the turn, if one was stored.
    pub message_id: Option<MessageId>,
    pub outcome: TurnOutcome,
    /// The provider and model of the last LLM step (the one that answered, after any
    /// fallback); `None` in a replay of an answer that stored no assistant message.
    pub answered_by: Option<AnsweredBy>,
    /// The tokens of all the answer's LLM steps (summed), as the providers reported them;
    /// `None` when no step reported usage.
    pub usage: Option<TokenUsage>,
}

/// Which provider and model produced an answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnsweredBy {
    /// The provider's kind (`openai`, `anthropic`…).
    pub provider: String,
    /// The named provider.
    pub provider_name: String,
    pub model: String,
    /// The models tried first that failed before answering, in order.
    pub fallback_from: Vec<FailedAttempt>,
}

/// A model of the fallback chain that failed before streaming anything.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FailedAttempt {
    pub provider_name: String,
    pub model: String,
    /// The error's code (`llm_upstream_status`, `llm_timeout`, `llm_rate_limited`…).
    pub error_code: String,
    pub error: String,
}
