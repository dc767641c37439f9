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
//!
//! The shapes are in `wire`.

mod wire;

pub use wire::*;

use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use switchboard_approvals::{ApprovalChoice, ApprovalError, ApprovalListing, ElicitationAnswer};
use switchboard_core::{ApprovalId, ElicitationId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Mounted at the root (outside `/api`), as the web UI calls it.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_approvals))
        .routes(routes!(decide))
        .routes(routes!(list_elicitations))
        .routes(routes!(answer_elicitation))
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

/// List approval requests: by default the pending ones of the caller's conversations.
#[utoipa::path(
    get,
    path = "/chat/approvals",
    tag = "approvals",
    params(ApprovalsQuery),
    responses(
        (status = 200, description = "The requests, oldest first", body = ApprovalList),
        (status = 400, description = "An unknown or malformed query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or `all_users` without `admin`", body = ErrorBody),
        (status = 404, description = "No such conversation in this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_approvals(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Query(query): Query<ApprovalsQuery>,
) -> Result<Json<ApprovalList>, ApiError> {
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
    Ok(Json(ApprovalList {
        approvals: approvals.into_iter().map(ApprovalView::from).collect(),
    }))
}

/// Approve or deny a paused tool call, once or always.
#[utoipa::path(
    post,
    path = "/chat/approvals/{approval_id}",
    tag = "approvals",
    params(("approval_id" = String, Path, description = "The approval request's id")),
    request_body = DecisionRequest,
    responses(
        (status = 200, description = "The decision, recorded", body = DecisionAnswer),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "Neither the conversation's owner nor an admin", body = ErrorBody),
        (status = 404, description = "No such approval request in this workspace", body = ErrorBody),
        (status = 409, description = "Already decided or expired", body = ErrorBody),
        (status = 422, description = "An unknown decision or `remember` value", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn decide(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(approval_id): Path<ApprovalId>,
    Json(request): Json<DecisionRequest>,
) -> Result<Json<DecisionAnswer>, ApiError> {
    let choice = match request.decision {
        DecisionWord::Approve => ApprovalChoice::Approve,
        DecisionWord::Deny => ApprovalChoice::Deny,
    };
    let remember = request.remember.unwrap_or(RememberWord::Once);
    let outcome = state
        .approvals
        .decide(&principal, &approval_id, choice, remember.into())
        .await?;
    Ok(Json(DecisionAnswer {
        decision: outcome.request.status.into(),
        approval: outcome.request.into(),
        remember,
        remembered: outcome.remembered,
    }))
}

/// List the pending elicitation forms of the caller's conversations.
#[utoipa::path(
    get,
    path = "/chat/elicitations",
    tag = "approvals",
    params(ElicitationsQuery),
    responses(
        (status = 200, description = "The pending requests", body = ElicitationList),
        (status = 400, description = "An unknown or malformed query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or `all_users` without `admin`", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_elicitations(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Query(query): Query<ElicitationsQuery>,
) -> Result<Json<ElicitationList>, ApiError> {
    let pending = state
        .approvals
        .pending_elicitations(&principal, query.all_users)
        .await?;
    Ok(Json(ElicitationList {
        elicitations: pending.into_iter().map(ElicitationView::from).collect(),
    }))
}

/// Fill in, decline or cancel a server's form.
#[utoipa::path(
    post,
    path = "/chat/elicitations/{elicitation_id}",
    tag = "approvals",
    params(("elicitation_id" = String, Path, description = "The elicitation request's id")),
    request_body = ElicitationAnswerRequest,
    responses(
        (status = 200, description = "The answer, sent to the server", body = ElicitationAnswerView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "Neither the conversation's owner nor an admin", body = ErrorBody),
        (status = 404, description = "No such elicitation request in this workspace", body = ErrorBody),
        (status = 409, description = "Already answered or expired", body = ErrorBody),
        (status = 422, description = "`content` does not match the requested schema (the form stays open)", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn answer_elicitation(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path(elicitation_id): Path<ElicitationId>,
    Json(request): Json<ElicitationAnswerRequest>,
) -> Result<Json<ElicitationAnswerView>, ApiError> {
    let answer = match request.action {
        ActionWord::Accept => ElicitationAnswer::Accept(request.content),
        ActionWord::Decline => ElicitationAnswer::Decline,
        ActionWord::Cancel => ElicitationAnswer::Cancel,
    };
    let record = state
        .approvals
        .answer_elicitation(&principal, &elicitation_id, answer)
        .await?;
    Ok(Json(ElicitationAnswerView {
        elicitation: record.into(),
        action: request.action,
    }))
}
