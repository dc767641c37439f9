//! MCP Apps of tool calls (issue 12), for the web UI:
//!
//! - `GET /chat/conversations/{id}/tool-calls/{tool_call_id}/app` → the call's app (server,
//!   `ui://` URI, hash) and a short-lived `sandbox_url` on the apps origin serving its HTML
//!   under the policy its resource declares. Authorised like the conversation: someone else's
//!   conversation, a call without an app, or another workspace's ids answer 404.
//! - `POST /chat/conversations/{id}/tool-calls/{tool_call_id}/app/tool-calls` `{name,
//!   arguments}` → `{result}`: the app's own `tools/call`, to a tool of its own server only
//!   (another server's, or one not visible to apps → 403), through the approval gate (denied
//!   → 403) and audited with origin `app`.
//! - `POST …/app/resources/read` `{uri}` → `{result}`: the app's own `resources/read`, to its own
//!   server only (the URI goes nowhere else), through the approval gate as the host's
//!   pseudo-tool `resources/read` (denied → 403), audited with origin `app`.

use super::chat_service;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::mirrors;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};
use switchboard_chat::{AppCall, AppResourceRead, GatewayOutcome};
use switchboard_core::{ConversationId, ToolCallId};
use tokio_util::sync::CancellationToken;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(tool_call_app))
        .routes(routes!(app_tool_call))
        .routes(routes!(app_resource_read))
}

/// The MCP App to show under a tool call, and where to load it from.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolCallAppBody {
    pub tool_call_id: String,
    /// The server's name and the upstream's tool name.
    pub server: String,
    pub tool: String,
    /// The call's arguments and its state.
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
    #[schema(value_type = mirrors::ToolCallState)]
    pub state: switchboard_core::ToolCallState,
    /// The MCP result (`content`, `structuredContent`, `isError`) once the call completed:
    /// what the app is given as its tool result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub result: Option<serde_json::Value>,
    /// The `ui://` resource, its hash as read at the sync the call was made under, and where
    /// and how to load it.
    #[serde(flatten)]
    pub page: AppPageBody,
}

/// An MCP App's page: which `ui://` resource, and where and how to load it.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppPageBody {
    pub server_id: String,
    pub resource_uri: String,
    pub resource_sha256: String,
    /// Load it in `<iframe sandbox="allow-scripts">`; valid until `expires_at`.
    pub sandbox_url: String,
    /// The apps origin (messages from the app come from an opaque origin, `null`).
    pub sandbox_origin: String,
    /// Unix seconds.
    pub expires_at: i64,
    /// The policy the page is served with (from the resource's `_meta.ui.csp`).
    pub content_security_policy: String,
    /// The browser permissions the resource declares (`_meta.ui.permissions`, the spec's names:
    /// `camera`, `microphone`, `geolocation`, `clipboardWrite`): the UI asks the person and
    /// sets the frame's `allow` to the ones allowed; the page's policy leaves only these on.
    pub permissions: Vec<String>,
    /// The resource's `_meta.ui.prefersBorder`, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
}

impl AppPageBody {
    /// The page of `app` (whose stored resource is `resource`), with a fresh sandbox URL.
    pub fn of(
        state: &AppState,
        workspace_id: &switchboard_core::WorkspaceId,
        app: &switchboard_core::ToolApp,
        resource: &switchboard_core::AppResource,
    ) -> Result<Self, ApiError> {
        let apps_origin = state.apps_origin.as_deref().ok_or_else(|| {
            ApiError::Unavailable("MCP Apps are not served by this process (no apps origin)".into())
        })?;
        let (sandbox_url, expires_at) =
            crate::apps::sandbox_url(&state.store, apps_origin, workspace_id, app)?;
        let meta = resource.meta.as_ref();
        Ok(AppPageBody {
            server_id: app.server_id.as_str().to_owned(),
            resource_uri: app.resource_uri.clone(),
            resource_sha256: app.resource_sha256.clone(),
            sandbox_url,
            sandbox_origin: apps_origin.to_owned(),
            expires_at,
            content_security_policy: crate::apps::content_security_policy(meta),
            permissions: crate::apps::declared_permissions(meta),
            prefers_border: meta
                .and_then(|meta| meta.pointer("/ui/prefersBorder"))
                .and_then(serde_json::Value::as_bool),
        })
    }
}

/// The MCP App of a tool call, with a sandbox URL to load it from.
#[utoipa::path(
    get,
    path = "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/app",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        ("tool_call_id" = String, Path, description = "The tool call (`tool_call_id` of the events)"),
    ),
    responses(
        (status = 200, description = "The call's app", body = ToolCallAppBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's, tool call, or app", body = ErrorBody),
        (status = 409, description = "The app changed since the call was made", body = ErrorBody),
        (status = 503, description = "The chat engine or the apps origin is not running", body = ErrorBody),
    )
)]
async fn tool_call_app(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path((conversation_id, tool_call_id)): Path<(String, String)>,
) -> Result<Json<ToolCallAppBody>, ApiError> {
    let found = chat_service(&state)?
        .tool_call_app(
            &principal,
            &ConversationId::from(conversation_id),
            &ToolCallId::from(tool_call_id),
        )
        .await?;
    let page = AppPageBody::of(&state, &principal.workspace_id, &found.app, &found.resource)?;
    Ok(Json(ToolCallAppBody {
        tool_call_id: found.tool_call.id.as_str().to_owned(),
        server: found.tool_call.server_name.clone(),
        tool: found.tool_call.tool_name.clone(),
        arguments: serde_json::from_str(&found.tool_call.arguments).unwrap_or_default(),
        state: found.tool_call.state,
        result: found.tool_call.result.clone(),
        page,
    }))
}

/// An app's `tools/call`: a tool of its own server, by the server's own name for it.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppToolCallRequest {
    pub name: String,
    /// An object (absent: `{}`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub arguments: serde_json::Value,
}

/// The upstream's answer to an app's call.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppToolCallBody {
    /// The MCP `CallToolResult` (`content`, `structuredContent`, `isError`).
    #[schema(value_type = Object)]
    pub result: serde_json::Value,
}

/// An MCP App calls a tool of its own server.
#[utoipa::path(
    post,
    path = "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/app/tool-calls",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        ("tool_call_id" = String, Path, description = "The tool call the app is shown with"),
    ),
    request_body = AppToolCallRequest,
    responses(
        (status = 200, description = "The server answered (possibly with a tool error)", body = AppToolCallBody),
        (status = 400, description = "A body that is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`; the tool is not one of the app's own server that apps may call; or the call was denied", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's, tool call, or app", body = ErrorBody),
        (status = 409, description = "The app changed since the call was made", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "A body of the wrong shape, or arguments that are not an object", body = ErrorBody),
        (status = 502, description = "The call failed (unreachable, timeout…)", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn app_tool_call(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path((conversation_id, tool_call_id)): Path<(String, String)>,
    Json(body): Json<AppToolCallRequest>,
) -> Result<Json<AppToolCallBody>, ApiError> {
    let conversation_id = ConversationId::from(conversation_id);
    let tool_call_id = ToolCallId::from(tool_call_id);
    // Dropped with the request: a call still waiting (for a person, for the server) stops.
    let cancellation = CancellationToken::new();
    let _cancel_on_drop = cancellation.clone().drop_guard();
    let outcome = chat_service(&state)?
        .run_app_call(AppCall {
            principal: &principal,
            conversation_id: &conversation_id,
            tool_call_id: &tool_call_id,
            name: &body.name,
            arguments: body.arguments,
            cancellation,
        })
        .await?;
    if let GatewayOutcome::UnknownTool = outcome {
        return Err(ApiError::Forbidden(format!(
            "an app may call only the tools of its own server that apps may see; `{}` is not one",
            switchboard_core::log_text(&body.name)
        )));
    }
    Ok(Json(AppToolCallBody {
        result: serde_json::to_value(answered(outcome, "call")?).map_err(ApiError::internal)?,
    }))
}

/// The upstream's result of an app's call or read, or the API's refusal.
fn answered(
    outcome: GatewayOutcome,
    what: &str,
) -> Result<switchboard_mcp_client::ToolResult, ApiError> {
    match outcome {
        GatewayOutcome::Answered(result) => Ok(result),
        GatewayOutcome::UnknownTool => Err(ApiError::Forbidden(format!(
            "an app may reach only its own server; this {what} is not one of it"
        ))),
        GatewayOutcome::InvalidArguments(message) => Err(ApiError::Unprocessable(message)),
        GatewayOutcome::Denied { reason } => Err(ApiError::Forbidden(format!(
            "the {what} was denied: {reason}"
        ))),
        GatewayOutcome::Failed { code, message } => Err(ApiError::BadGateway(format!(
            "the {what} failed ({code}): {message}"
        ))),
    }
}

/// An app's `resources/read`: a resource of its own server, by its own URI.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppResourceReadRequest {
    pub uri: String,
}

/// The upstream's answer to an app's read.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppResourceReadBody {
    /// The MCP `ReadResourceResult` (`contents`).
    #[schema(value_type = Object)]
    pub result: serde_json::Value,
}

/// An MCP App reads a resource of its own server.
#[utoipa::path(
    post,
    path = "/chat/conversations/{conversation_id}/tool-calls/{tool_call_id}/app/resources/read",
    tag = "chat",
    security(("bearer" = [])),
    params(
        ("conversation_id" = String, Path, description = "The conversation"),
        ("tool_call_id" = String, Path, description = "The tool call the app is shown with"),
    ),
    request_body = AppResourceReadRequest,
    responses(
        (status = 200, description = "The app's server answered", body = AppResourceReadBody),
        (status = 400, description = "A body that is not JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `chat:use`, or the read was denied", body = ErrorBody),
        (status = 404, description = "No such conversation of the caller's, tool call, or app", body = ErrorBody),
        (status = 409, description = "The app changed since the call was made", body = ErrorBody),
        (status = 415, description = "The body is not `application/json`", body = ErrorBody),
        (status = 422, description = "A body of the wrong shape, or an empty URI", body = ErrorBody),
        (status = 502, description = "The read failed (no such resource, unreachable, timeout…)", body = ErrorBody),
        (status = 503, description = "The chat engine is not running", body = ErrorBody),
    )
)]
async fn app_resource_read(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ChatUse>,
    Path((conversation_id, tool_call_id)): Path<(String, String)>,
    Json(body): Json<AppResourceReadRequest>,
) -> Result<Json<AppResourceReadBody>, ApiError> {
    // Dropped with the request: a read still waiting (for a person, for the server) stops.
    let cancellation = CancellationToken::new();
    let _cancel_on_drop = cancellation.clone().drop_guard();
    let outcome = chat_service(&state)?
        .run_app_resource_read(AppResourceRead {
            principal: &principal,
            conversation_id: &ConversationId::from(conversation_id),
            tool_call_id: &ToolCallId::from(tool_call_id),
            uri: &body.uri,
            cancellation,
        })
        .await?;
    let result = answered(outcome, "read")?;
    Ok(Json(AppResourceReadBody {
        result: result.structured_content.unwrap_or_default(),
    }))
}
