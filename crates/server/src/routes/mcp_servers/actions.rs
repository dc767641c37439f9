//! Using a registered server: test the connection, sync its capabilities, read the cache,
//! switch a tool on or off, and try a tool (audited, as the caller).

use super::failure::{Failure, upstream_error_body};
use super::registry;
use super::views::{capabilities_view, test_view, tool_view};
use crate::auth::{Scoped, scopes};
use crate::error::ApiError;
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Instant;
use switchboard_approvals::ConfigurationChange;
use switchboard_core::{Principal, Scope, ServerId};
use switchboard_mcp_client::{CallContext, Caller};
use switchboard_store::{NewAuditEvent, StoreError};

pub(super) async fn test_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, Failure> {
    let registry = registry(&state)?;
    let outcome = registry
        .test(
            &principal.workspace_id,
            &ServerId::from(id),
            bearer(&headers),
        )
        .await?;
    Ok(Json(match outcome {
        Ok(report) => test_view(&report),
        Err(error) => {
            let mut answer = upstream_error_body(&error);
            answer["ok"] = json!(false);
            answer["status"] = json!("ERROR");
            answer
        }
    }))
}

pub(super) async fn sync_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, Failure> {
    let registry = registry(&state)?;
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    registry.client().reset_errors(&server_id);
    let report = registry.sync_record_as(&record, bearer(&headers)).await;
    if let Some(error) = report.error {
        return Err(error.into());
    }
    Ok(Json(json!({
        "sync_status": report.state,
        "tool_count": report.tool_count,
        "resource_count": report.resource_count,
        "prompt_count": report.prompt_count,
    })))
}

pub(super) async fn capabilities(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path(id): Path<String>,
) -> Result<Json<Value>, Failure> {
    let registry = registry(&state)?;
    let view = registry
        .capabilities(&principal.workspace_id, &ServerId::from(id))
        .await?;
    Ok(Json(capabilities_view(&view)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ToolSwitchBody {
    is_enabled: bool,
}

pub(super) async fn set_tool_enabled(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path((id, name)): Path<(String, String)>,
    Json(body): Json<ToolSwitchBody>,
) -> Result<Json<Value>, Failure> {
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
                details: json!({"server_id": tool.server_id, "is_enabled": tool.is_enabled}),
            },
        )
        .await;
    Ok(Json(tool_view(&tool)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CallBody {
    #[serde(default)]
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
        details: json!({"via": "api", "forced": body.force}),
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
