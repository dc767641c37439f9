//! Cancelling one tool call that became an MCP task (issue 12), for the web UI's Cancel
//! button on the call's card:
//!
//! - `POST /chat/conversations/{id}/tool-calls/{tool_call_id}/cancel` → 202: the task is being
//!   cancelled (`tasks/cancel` goes upstream; the call then ends, with error code
//!   `cancelled`, and an answer still running goes on with that error result). Authorised like
//!   the conversation (someone else's conversation, or another workspace's ids → 404); a call
//!   that is not a task, or whose task already ended → 409. A task another replica follows (or
//!   that a restarting process has not claimed yet) is cancelled by that process: the request
//!   is stored with the call and it acts on it within a second (`chat`'s `task_cancels`).
//!
//! Why not only "stop the answer": a task may outlive its answer (after a restart it is
//! followed with no answer at all), and stopping an answer stops all of it.

use super::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use switchboard_core::{ConversationId, ToolCallId};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(cancel_tool_task))
}

/// Cancels the task a tool call became.
#[utoipa::path(
    post,
    path = "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/cancel",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        ("tool_call_id" = String, Path, description = "The tool call (`tool_call_id` of the events)"),
    ),
    responses(
        (status = 202, description = "The task is being cancelled (by the process that follows it, here or on another replica); the call's end arrives as its `mcp_tool` event and in the stored call"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's, or no such call in it", body = ErrorBody),
        (status = 409, description = "The call is not a task, or its task already ended", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn cancel_tool_task(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path((conversation_id, tool_call_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    chat_service(&state)?
        .cancel_task_call(
            &principal,
            &ConversationId::from(conversation_id),
            &ToolCallId::from(tool_call_id),
        )
        .await?;
    Ok(StatusCode::ACCEPTED)
}
