//! Using a registered server: test the connection, sync its capabilities, read the cache,
//! switch a tool on or off, and try a tool (audited, as the caller).

use super::failure::{Failure, upstream_error_body};
use super::registry;
use super::views::{
    CapabilitiesBody, SyncBody, TestFailed, TestOutcome, ToolView, capabilities_view, test_view,
    tool_view,
};
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Instant;
use switchboard_approvals::ConfigurationChange;
use switchboard_core::{Principal, Scope, ServerId};
use switchboard_mcp_client::{CallContext, Caller};
use switchboard_store::{NewAuditEvent, StoreError};
use utoipa::ToSchema;

/// Tests the connection: starts a session and lists the tools (the outcome is 200 either way).
#[utoipa::path(
    post,
    path = "/mcp/servers/{id}/test",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "`ok: true` with what the server said, or `ok: false` with why", body = TestOutcome),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "The server is switched off, or needs the caller's own values for its user fields (`needs_user_credentials`) or OAuth sign-in (`needs_auth`)", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn test_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<TestOutcome>, Failure> {
    let registry = registry(&state)?;
    let outcome = registry
        .test(
            &principal.workspace_id,
            &ServerId::from(id),
            bearer(&headers),
            Some(&principal.user_id),
        )
        .await?;
    Ok(Json(match outcome {
        Ok(report) => TestOutcome::Passed(test_view(&report)),
        Err(error) => TestOutcome::Failed(TestFailed {
            error: upstream_error_body(&error).error,
            ok: false,
            status: "ERROR",
        }),
    }))
}

/// Lists the server's tools, resources and prompts again and caches them.
#[utoipa::path(
    post,
    path = "/mcp/servers/{id}/sync",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "Synced", body = SyncBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "The server needs the caller's own values for its user fields (`needs_user_credentials`) or OAuth sign-in (`needs_auth`)", body = ErrorBody),
        (status = 422, description = "The server's configuration is refused", body = ErrorBody),
        (status = 502, description = "The upstream failed (its code, e.g. `needs_auth`)", body = ErrorBody),
        (status = 503, description = "The MCP client is not running, or the upstream is busy", body = ErrorBody),
        (status = 504, description = "The upstream timed out", body = ErrorBody),
    )
)]
pub(super) async fn sync_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<SyncBody>, Failure> {
    let registry = registry(&state)?;
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    // A server with user fields is listed as the caller: without their values, say so —
    // before the errors are reset, so no view shows a reset session that is not syncing yet.
    registry
        .upstream_as(&record, bearer(&headers), Some(&principal.user_id))
        .await?;
    registry.client().reset_errors(&server_id);
    let report = registry
        .sync_record_as(&record, bearer(&headers), Some(&principal.user_id))
        .await;
    if let Some(error) = report.error {
        return Err(error.into());
    }
    Ok(Json(SyncBody {
        sync_status: report.state,
        tool_count: report.tool_count,
        resource_count: report.resource_count,
        prompt_count: report.prompt_count,
    }))
}

/// The cached capabilities (tools with their switch, resources, prompts) and their freshness.
#[utoipa::path(
    get,
    path = "/mcp/servers/{id}/capabilities",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "The cache", body = CapabilitiesBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn capabilities(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path(id): Path<String>,
) -> Result<Json<CapabilitiesBody>, Failure> {
    let registry = registry(&state)?;
    let view = registry
        .capabilities(&principal.workspace_id, &ServerId::from(id))
        .await?;
    Ok(Json(capabilities_view(&view)))
}

/// Switches a tool on or off (off: not offered to the model).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSwitchBody {
    is_enabled: bool,
}

/// `details` of the audit event of a tool switch.
#[derive(Debug, Serialize)]
struct ToolSwitchAudit<'a> {
    server_id: &'a ServerId,
    is_enabled: bool,
}

/// `details` of the audit event of a tried tool call.
#[derive(Debug, Serialize)]
struct TriedCallAudit {
    via: &'static str,
    forced: bool,
}

/// Switches one of the server's tools on or off.
#[utoipa::path(
    patch,
    path = "/mcp/servers/{id}/tools/{name}",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The server"),
        ("name" = String, Path, description = "The tool"),
    ),
    request_body = ToolSwitchBody,
    responses(
        (status = 200, description = "The tool as switched", body = ToolView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such server or tool", body = ErrorBody),
        (status = 422, description = "Invalid input", body = ErrorBody),
    )
)]
pub(super) async fn set_tool_enabled(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((id, name)): Path<(String, String)>,
    Json(body): Json<ToolSwitchBody>,
) -> Result<Json<ToolView>, Failure> {
    let tool = state
        .store
        .set_tool_enabled(
            &principal.workspace_id,
            &ServerId::from(id),
            &name,
            body.is_enabled,
        )
        .await?;
    let target = format!("{}/{}", tool.server_id, tool.name);
    state
        .approvals
        .audit()
        .configuration_change(
            &principal,
            ConfigurationChange {
                action: if tool.is_enabled {
                    "tool.enabled"
                } else {
                    "tool.disabled"
                },
                target: &target,
                server_name: None,
                tool_name: Some(&tool.name),
                details: serde_json::to_value(ToolSwitchAudit {
                    server_id: &tool.server_id,
                    is_enabled: tool.is_enabled,
                })
                .unwrap_or_default(),
            },
        )
        .await;
    Ok(Json(tool_view(&tool)))
}

/// A tool call tried through the API.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CallBody {
    /// The tool's arguments (an object matching its input schema).
    #[serde(default)]
    #[schema(value_type = Object)]
    arguments: Value,
    /// Run the tool even though it is switched off (`is_enabled: false`). Only an admin may
    /// ask; anyone else gets 403.
    #[serde(default)]
    force: bool,
}

/// A switched-off tool is not run by "try a tool" (409 naming the switch) unless an admin asks
/// with `force: true`. A tool the store does not know is left to the registry (404
/// `unknown_tool`), as is a tool that is on.
async fn refuse_switched_off_tool(
    state: &AppState,
    principal: &Principal,
    server_id: &ServerId,
    name: &str,
    force: bool,
) -> Result<(), ApiError> {
    if force && !principal.allows(Scope::Admin) {
        return Err(ApiError::Forbidden(
            "only an admin may run a switched-off tool (`force: true`)".into(),
        ));
    }
    let tool = match state
        .store
        .get_tool(&principal.workspace_id, server_id, name)
        .await
    {
        Ok(tool) => tool,
        Err(StoreError::NotFound { .. }) => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    if tool.is_enabled || force {
        return Ok(());
    }
    Err(ApiError::Conflict(format!(
        "tool `{name}` is switched off (`is_enabled: false`): switch it on with PATCH \
         /api/mcp/servers/{server_id}/tools/{name} {{\"is_enabled\": true}}, or as an admin send \
         `\"force\": true` to try it anyway"
    )))
}

/// Calls the tool now, on the caller's behalf. Tool-level failures are 200 with `isError`;
/// invalid arguments are 422 with `details`; upstream failures carry their code.
#[utoipa::path(
    post,
    path = "/mcp/servers/{id}/tools/{name}/call",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(
        ("id" = String, Path, description = "The server"),
        ("name" = String, Path, description = "The tool"),
    ),
    request_body = CallBody,
    responses(
        (status = 200, description = "The tool's result as MCP returns it (`content`, `structuredContent`, `isError`)", body = Object),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`, or `force` without `admin`", body = ErrorBody),
        (status = 404, description = "No such server or tool (`unknown_tool`)", body = ErrorBody),
        (status = 409, description = "The tool is switched off, or the server is, or it needs the caller's own values for its user fields (`needs_user_credentials`) or OAuth sign-in (`needs_auth`)", body = ErrorBody),
        (status = 422, description = "Invalid arguments (`invalid_arguments`, with `details`)", body = ErrorBody),
        (status = 502, description = "The upstream failed", body = ErrorBody),
        (status = 503, description = "The MCP client is not running, or the upstream is busy", body = ErrorBody),
        (status = 504, description = "The upstream timed out", body = ErrorBody),
    )
)]
pub(super) async fn call_tool(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((id, name)): Path<(String, String)>,
    headers: HeaderMap,
    Json(body): Json<CallBody>,
) -> Result<(StatusCode, Json<Value>), Failure> {
    let registry = registry(&state)?;
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    refuse_switched_off_tool(&state, &principal, &server_id, &name, body.force).await?;
    let context = CallContext::new(Caller {
        user_id: principal.user_id.clone(),
        conversation_id: None,
    });
    let started = Instant::now();
    let outcome = registry
        .call_tool(
            &principal.workspace_id,
            &server_id,
            &name,
            body.arguments,
            &context,
            bearer(&headers),
        )
        .await;
    let status = match &outcome {
        Ok(result) if result.is_error => "tool_error".to_owned(),
        Ok(_) => "completed".to_owned(),
        Err(switchboard_registry::RegistryError::Upstream(error)) => error.code().to_owned(),
        Err(switchboard_registry::RegistryError::NeedsUserCredentials { .. }) => {
            switchboard_registry::NEEDS_USER_CREDENTIALS.to_owned()
        }
        Err(switchboard_registry::RegistryError::NeedsAuth { .. }) => {
            switchboard_registry::NEEDS_AUTH.to_owned()
        }
        Err(_) => "failed".to_owned(),
    };
    let event = NewAuditEvent {
        actor: principal.user_id.to_string(),
        action: "tool_call.tried".into(),
        target: Some(format!("{}/{}", record.name, name)),
        user_id: Some(principal.user_id.clone()),
        conversation_id: None,
        server_name: Some(record.name.clone()),
        tool_name: Some(name.clone()),
        status: Some(status),
        duration_ms: Some(started.elapsed().as_millis() as i64),
        details: serde_json::to_value(TriedCallAudit {
            via: "api",
            forced: body.force,
        })
        .unwrap_or_default(),
    };
    if let Err(error) = state
        .store
        .append_audit_event(&principal.workspace_id, event)
        .await
    {
        tracing::warn!(%error, "auditing a tried tool call failed");
    }
    match outcome {
        Ok(result) => Ok((
            StatusCode::OK,
            Json(serde_json::to_value(&result).unwrap_or(Value::Null)),
        )),
        Err(error) => Err(error.into()),
    }
}

/// The caller's own bearer token: forwarded only to our own knowledge-graph endpoint (the
/// registry checks that), so its tools apply the caller's scopes.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|token| !token.is_empty())
}
