//! The JSON shapes of `/chat/approvals` and `/chat/elicitations`: what a person is asked
//! (approval and elicitation requests as stored, with their state) and what they answer.
//! One `From` per view, from the store's records; the store's status enums are mirrored here
//! so that the wire names are the server's (the mirrors match exhaustively, so a new state
//! cannot be missed).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_approvals::Remember;
use switchboard_core::{ApprovalId, ConversationId, ElicitationId, ServerId, ToolCallId};
use switchboard_store::{
    ApprovalRequestRecord, ApprovalStatus, ElicitationRequestRecord, ElicitationStatus,
};
use utoipa::{IntoParams, ToSchema};

/// Where an approval request stands. Only `pending` changes, once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = ApprovalStatus)]
pub enum ApprovalStatusView {
    Pending,
    Approved,
    Denied,
    /// Nobody decided in time, or the process restarted while it waited.
    Expired,
    /// The answer it belonged to ended before a decision.
    Cancelled,
}

impl From<ApprovalStatus> for ApprovalStatusView {
    fn from(status: ApprovalStatus) -> Self {
        match status {
            ApprovalStatus::Pending => Self::Pending,
            ApprovalStatus::Approved => Self::Approved,
            ApprovalStatus::Denied => Self::Denied,
            ApprovalStatus::Expired => Self::Expired,
            ApprovalStatus::Cancelled => Self::Cancelled,
        }
    }
}

/// An approval request as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApprovalView {
    /// The request's id (the same as `id`).
    #[schema(value_type = String)]
    pub approval_id: ApprovalId,
    #[schema(value_type = String)]
    pub id: ApprovalId,
    #[schema(value_type = String)]
    pub conversation_id: ConversationId,
    #[schema(value_type = String)]
    pub tool_call_id: ToolCallId,
    /// The model's id for the call (for a request an MCP App made, `app:{app_of}:{id}`).
    pub call_id: String,
    /// For a request an MCP App made (its `tools/call` or `resources/read`), the tool call the
    /// app is shown with: the chat shows the card under that app.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub app_of: Option<ToolCallId>,
    /// The server's name.
    pub server: String,
    /// `null` for a server the request brought along (not registered).
    #[schema(value_type = Option<String>)]
    pub server_id: Option<ServerId>,
    pub tool: String,
    /// The call's arguments (redacted).
    #[schema(value_type = Object)]
    pub arguments: Value,
    /// The tool's description as shown for approval (sanitised).
    pub description: String,
    /// What changed since the tool's definition was pinned, if it did.
    #[schema(value_type = Option<Object>)]
    pub diff: Option<Value>,
    pub status: ApprovalStatusView,
    /// `once` or `always`, for decisions made by a person.
    pub remember: Option<String>,
    /// A user id, or `timeout`, `restart`, `cancelled`.
    pub decided_by: Option<String>,
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
}

impl From<ApprovalRequestRecord> for ApprovalView {
    fn from(record: ApprovalRequestRecord) -> Self {
        Self {
            approval_id: record.id.clone(),
            id: record.id,
            conversation_id: record.conversation_id,
            tool_call_id: record.tool_call_id,
            app_of: switchboard_chat::app_of_request(&record.llm_call_id).map(ToolCallId::from),
            call_id: record.llm_call_id,
            server: record.server_name,
            server_id: record.server_id,
            tool: record.tool_name,
            arguments: record.arguments,
            description: record.description,
            diff: record.diff,
            status: record.status.into(),
            remember: record.remember,
            decided_by: record.decided_by,
            reason: record.reason,
            created_at: record.created_at,
            expires_at: record.expires_at,
            decided_at: record.decided_at,
        }
    }
}

/// Where an elicitation request stands. Only `pending` changes, once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = ElicitationStatus)]
pub enum ElicitationStatusView {
    Pending,
    Accepted,
    Declined,
    Cancelled,
    /// Nobody answered in time, or the process restarted while it waited.
    Expired,
}

impl From<ElicitationStatus> for ElicitationStatusView {
    fn from(status: ElicitationStatus) -> Self {
        match status {
            ElicitationStatus::Pending => Self::Pending,
            ElicitationStatus::Accepted => Self::Accepted,
            ElicitationStatus::Declined => Self::Declined,
            ElicitationStatus::Cancelled => Self::Cancelled,
            ElicitationStatus::Expired => Self::Expired,
        }
    }
}

/// A server's request for information from the person (an elicitation form).
#[derive(Debug, Serialize, ToSchema)]
pub struct ElicitationView {
    /// The request's id (the same as `id`).
    #[schema(value_type = String)]
    pub elicitation_id: ElicitationId,
    #[schema(value_type = String)]
    pub id: ElicitationId,
    #[schema(value_type = String)]
    pub conversation_id: ConversationId,
    /// The call during which the server asked, when known.
    #[schema(value_type = Option<String>)]
    pub tool_call_id: Option<ToolCallId>,
    /// The server's name.
    pub server: String,
    /// What the server asks (sanitised).
    pub message: String,
    /// The JSON Schema the answer's `content` must match.
    #[schema(value_type = Object)]
    pub requested_schema: Value,
    pub status: ElicitationStatusView,
    /// A user id, or `timeout`, `restart`, `cancelled`.
    pub responded_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub responded_at: Option<DateTime<Utc>>,
}

impl From<ElicitationRequestRecord> for ElicitationView {
    fn from(record: ElicitationRequestRecord) -> Self {
        Self {
            elicitation_id: record.id.clone(),
            id: record.id,
            conversation_id: record.conversation_id,
            tool_call_id: record.tool_call_id,
            server: record.server_name,
            message: record.message,
            requested_schema: record.requested_schema,
            status: record.status.into(),
            responded_by: record.responded_by,
            created_at: record.created_at,
            expires_at: record.expires_at,
            responded_at: record.responded_at,
        }
    }
}

/// Which approval requests to list.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ListState {
    /// Only those waiting for a decision.
    #[default]
    Pending,
    /// Decided, expired and cancelled ones too.
    All,
}

/// `GET /chat/approvals` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ApprovalsQuery {
    /// Only this conversation's requests (the caller must own it, unless admin).
    #[param(value_type = Option<String>)]
    pub conversation_id: Option<ConversationId>,
    /// `pending` (the default) or `all`.
    #[serde(default)]
    #[param(inline)]
    pub state: ListState,
    /// An admin's view of every user's requests.
    #[serde(default)]
    pub all_users: bool,
}

/// `GET /chat/approvals` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApprovalList {
    pub approvals: Vec<ApprovalView>,
}

/// The person's decision.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = ApprovalDecision)]
pub enum DecisionWord {
    Approve,
    Deny,
}

/// How long a decision holds.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = Remember)]
pub enum RememberWord {
    /// This call only (the default).
    Once,
    /// Also later calls of this tool, as currently defined, in the owner's conversations.
    Always,
}

impl From<Remember> for RememberWord {
    fn from(remember: Remember) -> Self {
        match remember {
            Remember::Once => RememberWord::Once,
            Remember::Always => RememberWord::Always,
        }
    }
}

impl From<RememberWord> for Remember {
    fn from(remember: RememberWord) -> Self {
        match remember {
            RememberWord::Once => Remember::Once,
            RememberWord::Always => Remember::Always,
        }
    }
}

/// `POST /chat/approvals/{approval_id}` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionRequest {
    pub decision: DecisionWord,
    /// `once` when absent.
    #[serde(default)]
    pub remember: Option<RememberWord>,
}

/// `POST /chat/approvals/{approval_id}` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct DecisionAnswer {
    pub approval: ApprovalView,
    /// The request's state after the decision: `approved` or `denied`.
    pub decision: ApprovalStatusView,
    pub remember: RememberWord,
    /// True when `always` was recorded as a remembered decision (a server the request
    /// brought along cannot be remembered: the decision then holds once).
    pub remembered: bool,
}

/// `GET /chat/elicitations` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ElicitationsQuery {
    /// An admin's view of every user's requests.
    #[serde(default)]
    pub all_users: bool,
}

/// `GET /chat/elicitations` answer: the pending requests.
#[derive(Debug, Serialize, ToSchema)]
pub struct ElicitationList {
    pub elicitations: Vec<ElicitationView>,
}

/// The person's answer to a form.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = ElicitationAction)]
pub enum ActionWord {
    /// Send `content` to the server.
    Accept,
    Decline,
    Cancel,
}

/// `POST /chat/elicitations/{elicitation_id}` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ElicitationAnswerRequest {
    pub action: ActionWord,
    /// With `accept`: the form's values, matching `requested_schema`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub content: Option<Value>,
}

/// `POST /chat/elicitations/{elicitation_id}` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct ElicitationAnswerView {
    pub elicitation: ElicitationView,
    pub action: ActionWord,
}
