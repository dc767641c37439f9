//! Approval policies (`ALWAYS_ALLOW`, `ALWAYS_DENY`, `ASK_USER`), per tool of a registered
//! server for the workspace, and per bud. Reading needs `servers:read`, changing
//! `servers:write`. Setting a policy pins it to the tool's current definition: if the upstream
//! later changes the tool, `ALWAYS_ALLOW` falls back to asking (`pin_matches: false`).
//!
//! - `GET|PUT|DELETE /api/mcp/servers/{id}/tools/{name}/policy` (`PUT {"policy": "…"}`); a
//!   tool without a row answers the workspace default with `"source": "default"`.
//! - `GET /api/mcp/policies[?server_id=…]`: every explicit workspace policy.
//! - `GET /api/buds/{bud_id}/policies`; `PUT|DELETE
//!   /api/buds/{bud_id}/policies/{server_id}/{tool_name}`: a bud's policies override the
//!   workspace's in the bud's conversations.

use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, put};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};
use switchboard_approvals::{PolicySource, ToolPolicyView};
use switchboard_core::{ApprovalPolicy, BudId, ServerId};

pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/mcp/servers/{id}/tools/{name}/policy",
            get(get_policy).put(set_policy).delete(delete_policy),
        )
        .route("/mcp/policies", get(list_policies))
        .route("/buds/{bud_id}/policies", get(list_bud_policies))
        .route(
            "/buds/{bud_id}/policies/{server_id}/{tool_name}",
            put(set_bud_policy).delete(delete_bud_policy),
        )
}

pub fn policy_view(view: &ToolPolicyView, default_policy: ApprovalPolicy) -> Value {
    json!({
        "server_id": view.server_id,
        "server_name": view.server_name,
        "tool_name": view.tool_name,
        "bud_id": view.bud_id,
        "policy": view.policy,
        "source": match view.source {
            PolicySource::Explicit => "explicit",
            PolicySource::Default => "default",
        },
        "default_policy": default_policy,
        "pinned": view.pinned_hash.is_some(),
        "pin_matches": view.pin_matches,
        "updated_by": view.updated_by,
        "updated_at": view.updated_at,
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyRequest {
    policy: ApprovalPolicy,
}

async fn get_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path((server_id, tool_name)): Path<(ServerId, String)>,
) -> Result<Json<Value>, ApiError> {
    let view = state
        .approvals
        .tool_policy(&principal.workspace_id, &server_id, &tool_name)
        .await?;
    Ok(Json(policy_view(
        &view,
        state.approvals.config().default_policy,
    )))
}

async fn set_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((server_id, tool_name)): Path<(ServerId, String)>,
    Json(request): Json<PolicyRequest>,
) -> Result<Json<Value>, ApiError> {
    let view = state
        .approvals
        .set_tool_policy(&principal, &server_id, &tool_name, request.policy)
        .await?;
    Ok(Json(policy_view(
        &view,
        state.approvals.config().default_policy,
    )))
}

async fn delete_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((server_id, tool_name)): Path<(ServerId, String)>,
) -> Result<Json<Value>, ApiError> {
    let view = state
        .approvals
        .delete_tool_policy(&principal, &server_id, &tool_name)
        .await?;
    Ok(Json(policy_view(
        &view,
        state.approvals.config().default_policy,
    )))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PoliciesQuery {
    server_id: Option<ServerId>,
}

async fn list_policies(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Query(query): Query<PoliciesQuery>,
) -> Result<Json<Value>, ApiError> {
    let views = state
        .approvals
        .list_tool_policies(&principal.workspace_id, query.server_id.as_ref())
        .await?;
    let default_policy = state.approvals.config().default_policy;
    Ok(Json(json!({
        "default_policy": default_policy,
        "policies": views.iter().map(|view| policy_view(view, default_policy)).collect::<Vec<_>>(),
    })))
}

async fn list_bud_policies(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path(bud_id): Path<BudId>,
) -> Result<Json<Value>, ApiError> {
    let views = state
        .approvals
        .list_bud_policies(&principal.workspace_id, &bud_id)
        .await?;
    let default_policy = state.approvals.config().default_policy;
    Ok(Json(json!({
        "bud_id": bud_id,
        "policies": views.iter().map(|view| policy_view(view, default_policy)).collect::<Vec<_>>(),
    })))
}

async fn set_bud_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((bud_id, server_id, tool_name)): Path<(BudId, ServerId, String)>,
    Json(request): Json<PolicyRequest>,
) -> Result<Json<Value>, ApiError> {
    let view = state
        .approvals
        .set_bud_policy(&principal, &bud_id, &server_id, &tool_name, request.policy)
        .await?;
    Ok(Json(policy_view(
        &view,
        state.approvals.config().default_policy,
    )))
}

async fn delete_bud_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((bud_id, server_id, tool_name)): Path<(BudId, ServerId, String)>,
) -> Result<StatusCode, ApiError> {
    state
        .approvals
        .delete_bud_policy(&principal, &bud_id, &server_id, &tool_name)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
