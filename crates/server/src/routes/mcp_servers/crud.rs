//! Create, read, update and delete registered servers. Changes reach the MCP client at once:
//! a new or edited active server is synced in the background, an edit closes sessions made
//! with the old configuration, and a delete stops the server's sessions (and stdio children)
//! before the row goes.

use super::auth::auth_view;
use super::bodies::{Candidate, CreateServerBody, UpdateServerBody, patch_for};
use super::failure::Failure;
use super::registry;
use super::views::{ServerList, ServerView, server_view};
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use switchboard_core::{Principal, Scope, ServerId, TransportKind};
use switchboard_registry::ServerRegistry;
use switchboard_store::{ServerRecord, StoreError};

pub(super) fn require_admin_for_stdio(
    principal: &Principal,
    is_stdio_command: bool,
) -> Result<(), ApiError> {
    if is_stdio_command && !principal.is_admin() {
        return Err(ApiError::MissingScope {
            missing: Scope::Admin,
        });
    }
    Ok(())
}

/// The workspace's registered servers with their live state.
#[utoipa::path(
    get,
    path = "/mcp/servers",
    tag = "mcp_servers",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Every server", body = ServerList),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn list_servers(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
) -> Result<Json<ServerList>, Failure> {
    let registry = registry(&state)?;
    let records = state.store.list_servers(&principal.workspace_id).await?;
    let overviews = registry
        .overviews(&principal.workspace_id, &records)
        .await?;
    let errors_recorded_at: HashMap<ServerId, DateTime<Utc>> = state
        .store
        .list_mcp_observations(&principal.workspace_id)
        .await?
        .into_iter()
        .filter(|stored| stored.observation.error_code.is_some())
        .map(|stored| (stored.server_id, stored.observed_at))
        .collect();
    let mut servers: Vec<ServerView> = Vec::with_capacity(records.len());
    for (record, overview) in records.iter().zip(&overviews) {
        let auth = auth_view(&state.store, &principal, record).await?;
        servers.push(server_view(
            record,
            overview,
            errors_recorded_at.get(&record.id).copied(),
            auth,
            &principal,
        ));
    }
    Ok(Json(ServerList { servers }))
}

/// One server with its live state.
#[utoipa::path(
    get,
    path = "/mcp/servers/{id}",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 200, description = "The server", body = ServerView),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn get_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Path(id): Path<String>,
) -> Result<Json<ServerView>, Failure> {
    let registry = registry(&state)?;
    let record = state
        .store
        .get_server(&principal.workspace_id, &ServerId::from(id))
        .await?;
    Ok(Json(
        current_view(&state, &principal, registry, &record).await?,
    ))
}

/// Registers a server (a stdio server also needs `admin`); an active one is synced in the
/// background.
#[utoipa::path(
    post,
    path = "/mcp/servers",
    tag = "mcp_servers",
    security(("bearer" = [])),
    request_body = CreateServerBody,
    responses(
        (status = 201, description = "Registered", body = ServerView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write` (or `admin` for stdio)", body = ErrorBody),
        (status = 409, description = "A server with this name exists", body = ErrorBody),
        (status = 422, description = "Invalid configuration (the message names the field)", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn create_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Json(body): Json<CreateServerBody>,
) -> Result<(StatusCode, Json<ServerView>), Failure> {
    let registry = registry(&state)?;
    body.check_reserved()?;
    let candidate = body.candidate();
    require_admin_for_stdio(&principal, candidate.transport == TransportKind::Stdio)?;
    candidate.validate(registration_policy(registry, &candidate))?;
    let record = register(&state, &principal, registry, candidate).await?;
    Ok((
        StatusCode::CREATED,
        Json(current_view(&state, &principal, registry, &record).await?),
    ))
}

/// Changes a server, against the `version` read with GET (missing: 422, stale: 409).
#[utoipa::path(
    patch,
    path = "/mcp/servers/{id}",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    request_body = UpdateServerBody,
    responses(
        (status = 200, description = "The server as changed", body = ServerView),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write` (or `admin` for stdio)", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 409, description = "A stale version, or a duplicate name", body = ErrorBody),
        (status = 422, description = "Invalid configuration, or no version", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn update_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path(id): Path<String>,
    Json(body): Json<UpdateServerBody>,
) -> Result<Json<ServerView>, Failure> {
    let registry = registry(&state)?;
    let version = body.required_version()?;
    body.check_reserved()?;
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    if ServerRegistry::is_marked_own_endpoint(&record) {
        body.check_own_endpoint_change()?;
    }
    if version != record.version {
        return Err(ApiError::Conflict(format!(
            "the server was changed since version {version} (it is at version {}); reload it and apply your change again",
            record.version
        ))
        .into());
    }
    let secrets = state
        .store
        .server_secrets(&principal.workspace_id, &server_id)
        .await?;
    let candidate = body.candidate(&record, &secrets);
    require_admin_for_stdio(&principal, body.touches_stdio_command(&record, &candidate))?;
    candidate.validate(registration_policy(registry, &candidate))?;
    let updated = store_change(&state, &principal, registry, &record, version, candidate).await?;
    Ok(Json(
        current_view(&state, &principal, registry, &updated).await?,
    ))
}

/// Deletes a server after stopping its sessions (and stdio children).
#[utoipa::path(
    delete,
    path = "/mcp/servers/{id}",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(("id" = String, Path, description = "The server")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write`", body = ErrorBody),
        (status = 404, description = "No such server", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn delete_server(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Path(id): Path<String>,
) -> Result<StatusCode, Failure> {
    let registry = registry(&state)?;
    let server_id = ServerId::from(id);
    let record = state
        .store
        .get_server(&principal.workspace_id, &server_id)
        .await?;
    registry.server_removed(&record.id).await;
    registry.own_endpoint_removed(&record).await?;
    state
        .store
        .delete_server(&principal.workspace_id, &server_id)
        .await?;
    state
        .approvals
        .audit()
        .server_change(&principal, "server.deleted", &record)
        .await;
    Ok(StatusCode::NO_CONTENT)
}

/// Stores a new server that passed [`require_admin_for_stdio`] and [`Candidate::validate`],
/// tells the registry (an active one is synced in the background) and audits it. The one way
/// a server is created (`POST /mcp/servers` and the import).
pub(super) async fn register(
    state: &AppState,
    principal: &Principal,
    registry: &ServerRegistry,
    candidate: Candidate,
) -> Result<ServerRecord, Failure> {
    let record = state
        .store
        .create_server(&principal.workspace_id, candidate.into_new_server())
        .await
        .map_err(name_conflict)?;
    registry.server_changed(&record).await;
    state
        .approvals
        .audit()
        .server_change(principal, "server.created", &record)
        .await;
    Ok(record)
}

/// Stores `candidate` (checked like [`register`]'s) over `record` at `version`, tells the
/// registry (sessions made with the old configuration close) and audits it. The one way a
/// server is changed (`PATCH /mcp/servers/{id}` and the import's `replace`).
pub(super) async fn store_change(
    state: &AppState,
    principal: &Principal,
    registry: &ServerRegistry,
    record: &ServerRecord,
    version: i64,
    candidate: Candidate,
) -> Result<ServerRecord, Failure> {
    let updated = state
        .store
        .update_server(
            &principal.workspace_id,
            &record.id,
            version,
            patch_for(record, candidate),
        )
        .await
        .map_err(name_conflict)?;
    registry.server_changed(&updated).await;
    state
        .approvals
        .audit()
        .server_change(principal, "server.updated", &updated)
        .await;
    Ok(updated)
}

/// The view of one server with its live state and when its last failure was recorded.
pub(super) async fn current_view(
    state: &AppState,
    principal: &Principal,
    registry: &ServerRegistry,
    record: &ServerRecord,
) -> Result<ServerView, Failure> {
    let overview = registry.overview(record).await?;
    let error_recorded_at = state
        .store
        .get_mcp_observation(&record.workspace_id, &record.id)
        .await?
        .filter(|stored| stored.observation.error_code.is_some())
        .map(|stored| stored.observed_at);
    let auth = auth_view(&state.store, principal, record).await?;
    Ok(server_view(
        record,
        &overview,
        error_recorded_at,
        auth,
        principal,
    ))
}

/// A duplicate name is the caller's conflict, said in words they can act on.
fn name_conflict(error: StoreError) -> Failure {
    match error {
        StoreError::UniqueViolation { .. } => {
            ApiError::Conflict("a server with this name already exists in the workspace".into())
                .into()
        }
        other => other.into(),
    }
}

/// The URL policy a registration is checked against: `mcp.url_policy`, except for a URL of
/// this process's own endpoint (e.g. editing `kg` while loopback is closed), which is ours.
pub(super) fn registration_policy<'a>(
    registry: &'a ServerRegistry,
    candidate: &Candidate,
) -> &'a switchboard_mcp_client::UrlPolicy {
    let own = candidate
        .url
        .as_deref()
        .and_then(|text| switchboard_mcp_client::Url::parse(text).ok())
        .is_some_and(|url| registry.is_own_endpoint_url(&url));
    registry.client().url_policy_for(if own {
        switchboard_mcp_client::ServerOrigin::OwnEndpoint
    } else {
        switchboard_mcp_client::ServerOrigin::Registered
    })
}
