//! `/chat/approvals` and `/chat/elicitations` (scope `chat:use`): the person in the loop
//! answers what a paused tool call asks — approve or deny (`once` or `always`), fill in or
//! refuse a server's form — and lists what waits for them. Only the conversation's owner or an
//! admin may answer (403); requests of another workspace are 404.
//!
//! - `GET /chat/approvals[?conversation_id=…][&state=pending|all][&all_users=true]` →
//!   `{"approvals": [approval…]}` (pending ones of the caller's conversations by default).
//! - `POST /chat/approvals/{approval_id}` `{"decision": "approve"|"deny", "remember":
//!   "once"|"always"}` → `{"approval": approval, "decision": "approved"|"denied", "remember",
//!   "remembered"}`; 409 when it was already decided or expired.
//! - `GET /chat/elicitations[?all_users=true]` → `{"elicitations": [elicitation…]}` (pending).
//! - `POST /chat/elicitations/{elicitation_id}` `{"action": "accept"|"decline"|"cancel",
//!   "content": {…}}` → `{"elicitation": elicitation, "action"}`; 422 listing what does not
//!   match the requested schema (the form stays open).

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_approvals::{
    ApprovalChoice, ApprovalError, ApprovalListing, ElicitationAnswer, Remember,
};
use switchboard_core::{ApprovalId, ConversationId, ElicitationId};
use switchboard_store::{ApprovalRequestRecord, ElicitationRequestRecord};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/chat/approvals", get(list_approvals))
        .route("/chat/approvals/{approval_id}", post(decide))
        .route("/chat/elicitations", get(list_elicitations))
        .route(
            "/chat/elicitations/{elicitation_id}",
            post(answer_elicitation),
        )
}

/// The one place this crate's approval errors become HTTP answers.
impl From<ApprovalError> for ApiError {
    fn from(error: ApprovalError) -> Self {
        match error {
            ApprovalError::NotFound(what) => ApiError::NotFound(format!("{what} not found")),
            ApprovalError::Forbidden(message) => ApiError::Forbidden(message),
            ApprovalError::AlreadySettled(message) => ApiError::Conflict(message),
            ApprovalError::InvalidInput { field, message } => {
                ApiError::Unprocessable(format!("{field}: {message}"))
            }
            ApprovalError::Store(store) => ApiError::from(store),
        }
    }
}

/// An approval request as the API shows it (also the shape `approval_required` carries).
pub fn approval_view(record: &ApprovalRequestRecord) -> Value {
    json!({
        "approval_id": record.id,
        "id": record.id,
        "conversation_id": record.conversation_id,
        "tool_call_id": record.tool_call_id,
        "call_id": record.llm_call_id,
        "server": record.server_name,
        "server_id": record.server_id,
        "tool": record.tool_name,
        "arguments": record.arguments,
        "description": record.description,
        "diff": record.diff,
        "status": record.status.as_str(),
        "remember": record.remember,
        "decided_by": record.decided_by,
        "reason": record.reason,
        "created_at": record.created_at,
        "expires_at": record.expires_at,
        "decided_at": record.decided_at,
    })
}

pub fn elicitation_view(record: &ElicitationRequestRecord) -> Value {
    json!({
        "elicitation_id": record.id,
        "id": record.id,
        "conversation_id": record.conversation_id,
        "tool_call_id": record.tool_call_id,
        "server": record.server_name,
        "message": record.message,
        "requested_schema": record.requested_schema,
        "status": record.status.as_str(),
        "responded_by": record.responded_by,
        "created_at": record.created_at,
        "expires_at": record.expires_at,
        "responded_at": record.responded_at,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ListState {
    #[default]
    Pending,
    All,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalsQuery {
    conversation_id: Option<ConversationId>,
    #[serde(default)]
    state: ListState,
    #[serde(default)]
    all_users: bool,
}

async fn list_approvals(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Query(query): Query<ApprovalsQuery>,
) -> Result<Json<Value>, ApiError> {
    let approvals = state
        .approvals
        .list_approvals(
            &principal,
            ApprovalListing {
                conversation_id: query.conversation_id,
                include_settled: matches!(query.state, ListState::All),
                all_users: query.all_users,
            },
        )
        .await?;
    Ok(Json(json!({
        "approvals": approvals.iter().map(approval_view).collect::<Vec<_>>(),
    })))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum DecisionWord {
    Approve,
    Deny,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum RememberWord {
    Once,
    Always,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionRequest {
    decision: DecisionWord,
    #[serde(default)]
    remember: Option<RememberWord>,
}

async fn decide(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(approval_id): Path<ApprovalId>,
    Json(request): Json<DecisionRequest>,
) -> Result<Json<Value>, ApiError> {
    let choice = match request.decision {
        DecisionWord::Approve => ApprovalChoice::Approve,
        DecisionWord::Deny => ApprovalChoice::Deny,
    };
    let remember = match request.remember {
        Some(RememberWord::Always) => Remember::Always,
        Some(RememberWord::Once) | None => Remember::Once,
    };
    let outcome = state
        .approvals
        .decide(&principal, &approval_id, choice, remember)
        .await?;
    Ok(Json(json!({
        "approval": approval_view(&outcome.request),
        "decision": outcome.request.status.as_str(),
        "remember": remember.as_str(),
        "remembered": outcome.remembered,
    })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ElicitationsQuery {
    #[serde(default)]
    all_users: bool,
}

async fn list_elicitations(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Query(query): Query<ElicitationsQuery>,
) -> Result<Json<Value>, ApiError> {
    let pending = state
        .approvals
        .pending_elicitations(&principal, query.all_users)
        .await?;
    Ok(Json(json!({
        "elicitations": pending.iter().map(elicitation_view).collect::<Vec<_>>(),
    })))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ActionWord {
    Accept,
    Decline,
    Cancel,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ElicitationAnswerRequest {
    action: ActionWord,
    #[serde(default)]
    content: Option<Value>,
}

async fn answer_elicitation(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(elicitation_id): Path<ElicitationId>,
    Json(request): Json<ElicitationAnswerRequest>,
) -> Result<Json<Value>, ApiError> {
    let (answer, action) = match request.action {
        ActionWord::Accept => (ElicitationAnswer::Accept(request.content), "accept"),
        ActionWord::Decline => (ElicitationAnswer::Decline, "decline"),
        ActionWord::Cancel => (ElicitationAnswer::Cancel, "cancel"),
    };
    let record = state
        .approvals
        .answer_elicitation(&principal, &elicitation_id, answer)
        .await?;
    Ok(Json(json!({
        "elicitation": elicitation_view(&record),
        "action": action,
    })))
}
