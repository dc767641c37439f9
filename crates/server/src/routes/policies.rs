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
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use switchboard_approvals::{PolicySource, ToolPolicyView};
use switchboard_core::{ApprovalPolicy, BudId, ServerId, UserId};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_policy, set_policy, delete_policy))
        .routes(routes!(list_policies))
        .routes(routes!(list_bud_policies))
        .routes(routes!(set_bud_policy, delete_bud_policy))
}

/// What happens when the assistant wants to call a tool (`core::ApprovalPolicy` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schema(as = ApprovalPolicy)]
pub enum PolicyWord {
    AlwaysAllow,
    AlwaysDeny,
    /// Pause the call and ask the conversation's owner.
    AskUser,
}

impl From<ApprovalPolicy> for PolicyWord {
    fn from(policy: ApprovalPolicy) -> Self {
        match policy {
            ApprovalPolicy::AlwaysAllow => PolicyWord::AlwaysAllow,
            ApprovalPolicy::AlwaysDeny => PolicyWord::AlwaysDeny,
            ApprovalPolicy::AskUser => PolicyWord::AskUser,
        }
    }
}

impl From<PolicyWord> for ApprovalPolicy {
    fn from(policy: PolicyWord) -> Self {
        match policy {
            PolicyWord::AlwaysAllow => ApprovalPolicy::AlwaysAllow,
            PolicyWord::AlwaysDeny => ApprovalPolicy::AlwaysDeny,
            PolicyWord::AskUser => ApprovalPolicy::AskUser,
        }
    }
}

/// Where a tool's policy comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = PolicySource)]
pub enum PolicySourceWord {
    /// An explicit row for this tool.
    Explicit,
    /// No row: the configured default applies.
    Default,
}

impl From<PolicySource> for PolicySourceWord {
    fn from(source: PolicySource) -> Self {
        match source {
            PolicySource::Explicit => PolicySourceWord::Explicit,
            PolicySource::Default => PolicySourceWord::Default,
        }
    }
}

/// A tool's policy, for the workspace or for a bud.
#[derive(Debug, Serialize, ToSchema)]
pub struct PolicyView {
    #[schema(value_type = String)]
    pub server_id: ServerId,
    pub server_name: String,
    pub tool_name: String,
    /// The bud whose policy this is (`null`: the workspace's).
    #[schema(value_type = Option<String>)]
    pub bud_id: Option<BudId>,
    pub policy: PolicyWord,
    pub source: PolicySourceWord,
    /// The configured default, which applies where there is no explicit policy.
    pub default_policy: PolicyWord,
    /// Whether the policy is pinned to a definition of the tool.
    pub pinned: bool,
    /// Whether the tool as currently synced still matches the pin (`null` when either is
    /// unknown); `ALWAYS_ALLOW` asks again when it does not.
    pub pin_matches: Option<bool>,
    #[schema(value_type = Option<String>)]
    pub updated_by: Option<UserId>,
    pub updated_at: Option<DateTime<Utc>>,
}

impl PolicyView {
    pub fn new(view: ToolPolicyView, default_policy: ApprovalPolicy) -> Self {
        Self {
            pinned: view.pinned_hash.is_some(),
            server_id: view.server_id,
            server_name: view.server_name,
            tool_name: view.tool_name,
            bud_id: view.bud_id,
            policy: view.policy.into(),
            source: view.source.into(),
            default_policy: default_policy.into(),
            pin_matches: view.pin_matches,
            updated_by: view.updated_by,
            updated_at: view.updated_at,
        }
    }
}

/// `GET /api/mcp/policies` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct PolicyList {
    pub default_policy: PolicyWord,
    pub policies: Vec<PolicyView>,
}

/// `GET /api/buds/{bud_id}/policies` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct BudPolicyList {
    #[schema(value_type = String)]
    pub bud_id: BudId,
    pub policies: Vec<PolicyView>,
}

/// `PUT` body of a workspace or bud policy.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyRequest {
    pub policy: PolicyWord,
}

/// `GET /api/mcp/policies` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct PoliciesQuery {
    /// Only this server's policies.
    #[param(value_type = Option<String>)]
    server_id: Option<ServerId>,
}

fn answer(state: &AppState, view: ToolPolicyView) -> Json<PolicyView> {
    Json(PolicyView::new(
        view,
        state.approvals.config().default_policy,
    ))
}

/// Read a tool's workspace policy (the default when it has none).
#[utoipa::path(
    get,
    path = "/mcp/servers/{id}/tools/{name}/policy",
    tag = "policies",
    params(
        ("id" = String, Path, description = "The server's id"),
        ("name" = String, Path, description = "The tool's name"),
    ),
    responses(
        (status = 200, description = "The tool's policy", body = PolicyView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 404, description = "No such server in this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn get_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path((server_id, tool_name)): Path<(ServerId, String)>,
) -> Result<Json<PolicyView>, ApiError> {
    let view = state
        .approvals
        .tool_policy(&principal.workspace_id, &server_id, &tool_name)
        .await?;
    Ok(answer(&state, view))
}

/// Set a tool's workspace policy, pinned to the tool's current definition.
#[utoipa::path(
    put,
    path = "/mcp/servers/{id}/tools/{name}/policy",
    tag = "policies",
    params(
        ("id" = String, Path, description = "The server's id"),
        ("name" = String, Path, description = "The tool's name"),
    ),
    request_body = PolicyRequest,
    responses(
        (status = 200, description = "The tool's policy as it is now", body = PolicyView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such server in this workspace", body = ErrorBody),
        (status = 422, description = "An unknown policy, or invalid input", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn set_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((server_id, tool_name)): Path<(ServerId, String)>,
    Json(request): Json<PolicyRequest>,
) -> Result<Json<PolicyView>, ApiError> {
    let view = state
        .approvals
        .set_tool_policy(&principal, &server_id, &tool_name, request.policy.into())
        .await?;
    Ok(answer(&state, view))
}

/// Remove a tool's workspace policy; the default applies again.
#[utoipa::path(
    delete,
    path = "/mcp/servers/{id}/tools/{name}/policy",
    tag = "policies",
    params(
        ("id" = String, Path, description = "The server's id"),
        ("name" = String, Path, description = "The tool's name"),
    ),
    responses(
        (status = 200, description = "The tool's policy as it is now (the default)", body = PolicyView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such server in this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn delete_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((server_id, tool_name)): Path<(ServerId, String)>,
) -> Result<Json<PolicyView>, ApiError> {
    let view = state
        .approvals
        .delete_tool_policy(&principal, &server_id, &tool_name)
        .await?;
    Ok(answer(&state, view))
}

/// List the workspace's explicit policies.
#[utoipa::path(
    get,
    path = "/mcp/policies",
    tag = "policies",
    params(PoliciesQuery),
    responses(
        (status = 200, description = "Every explicit workspace policy, with the default", body = PolicyList),
        (status = 400, description = "An unknown query parameter", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 404, description = "`server_id` names no server of this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_policies(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Query(query): Query<PoliciesQuery>,
) -> Result<Json<PolicyList>, ApiError> {
    let views = state
        .approvals
        .list_tool_policies(&principal.workspace_id, query.server_id.as_ref())
        .await?;
    let default_policy = state.approvals.config().default_policy;
    Ok(Json(PolicyList {
        default_policy: default_policy.into(),
        policies: views
            .into_iter()
            .map(|view| PolicyView::new(view, default_policy))
            .collect(),
    }))
}

/// List a bud's policies (they override the workspace's in the bud's conversations).
#[utoipa::path(
    get,
    path = "/buds/{bud_id}/policies",
    tag = "policies",
    params(("bud_id" = String, Path, description = "The bud's id")),
    responses(
        (status = 200, description = "The bud's policies", body = BudPolicyList),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 404, description = "No such bud in this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn list_bud_policies(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path(bud_id): Path<BudId>,
) -> Result<Json<BudPolicyList>, ApiError> {
    let views = state
        .approvals
        .list_bud_policies(&principal.workspace_id, &bud_id)
        .await?;
    let default_policy = state.approvals.config().default_policy;
    Ok(Json(BudPolicyList {
        bud_id,
        policies: views
            .into_iter()
            .map(|view| PolicyView::new(view, default_policy))
            .collect(),
    }))
}

/// Set a bud's policy for one tool, pinned to the tool's current definition.
#[utoipa::path(
    put,
    path = "/buds/{bud_id}/policies/{server_id}/{tool_name}",
    tag = "policies",
    params(
        ("bud_id" = String, Path, description = "The bud's id"),
        ("server_id" = String, Path, description = "The server's id"),
        ("tool_name" = String, Path, description = "The tool's name"),
    ),
    request_body = PolicyRequest,
    responses(
        (status = 200, description = "The bud's policy for the tool", body = PolicyView),
        (status = 400, description = "The body is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such bud or server in this workspace", body = ErrorBody),
        (status = 422, description = "An unknown policy, or invalid input", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
async fn set_bud_policy(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((bud_id, server_id, tool_name)): Path<(BudId, ServerId, String)>,
    Json(request): Json<PolicyRequest>,
) -> Result<Json<PolicyView>, ApiError> {
    let view = state
        .approvals
        .set_bud_policy(
            &principal,
            &bud_id,
            &server_id,
            &tool_name,
            request.policy.into(),
        )
        .await?;
    Ok(answer(&state, view))
}

/// Remove a bud's policy for one tool; the workspace's applies again.
#[utoipa::path(
    delete,
    path = "/buds/{bud_id}/policies/{server_id}/{tool_name}",
    tag = "policies",
    params(
        ("bud_id" = String, Path, description = "The bud's id"),
        ("server_id" = String, Path, description = "The server's id"),
        ("tool_name" = String, Path, description = "The tool's name"),
    ),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such bud, server or policy in this workspace", body = ErrorBody),
    ),
    security(("bearer" = [])),
)]
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
