//! `/api/mcp/registry/*`: browse an MCP registry (`[registry] url`, see
//! [`crate::directory`]) and register one of its servers in one step. The search is the
//! registry's, proxied and typed; the add reads the chosen version's `server.json` from the
//! registry itself (never from the caller), builds the server (`install.rs`) and registers it
//! through the same checks and store path as `POST /mcp/servers` (stdio needs `admin`, the URL
//! policy, the name rules, secrets sealed, an active server synced in the background).

mod install;
pub(super) mod wire;

use super::crud::{current_view, register, registration_policy, require_admin_for_stdio};
use super::failure::Failure;
use super::import::server_name;
use super::registry;
use crate::auth::{Scoped, scopes};
use crate::directory::{DirectoryError, McpDirectory, SearchQuery};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use install::InstallError;
use switchboard_core::TransportKind;
use wire::RegistryServer;
use wire::{AddFromRegistryBody, AddFromRegistryReport, RegistrySearch, RegistrySearchQuery};

impl From<DirectoryError> for ApiError {
    fn from(error: DirectoryError) -> Self {
        match error {
            DirectoryError::NotFound { .. } => ApiError::NotFound(error.to_string()),
            _ => ApiError::BadGateway(error.to_string()),
        }
    }
}

impl From<InstallError> for ApiError {
    fn from(error: InstallError) -> Self {
        ApiError::Unprocessable(error.to_string())
    }
}

fn directory(state: &AppState) -> Result<&McpDirectory, ApiError> {
    state.directory.as_deref().ok_or_else(|| {
        ApiError::NotFound("no MCP registry is configured (set [registry] url)".into())
    })
}

/// Searches the MCP registry (latest versions).
#[utoipa::path(
    get,
    path = "/mcp/registry/servers",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(RegistrySearchQuery),
    responses(
        (status = 200, description = "A page of published servers", body = RegistrySearch),
        (status = 400, description = "A query that cannot be read", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
        (status = 404, description = "No MCP registry is configured", body = ErrorBody),
        (status = 422, description = "`limit` outside 1 to 100, or a search longer than 200 characters", body = ErrorBody),
        (status = 502, description = "The registry did not answer, or not with the registry API", body = ErrorBody),
    )
)]
pub(super) async fn search_registry(
    State(state): State<AppState>,
    Scoped(_caller, _): Scoped<scopes::ServersRead>,
    Query(query): Query<RegistrySearchQuery>,
) -> Result<Json<RegistrySearch>, Failure> {
    let directory = directory(&state)?;
    if query.limit.is_some_and(|limit| !(1..=100).contains(&limit)) {
        return Err(ApiError::Unprocessable("limit: must be 1 to 100".into()).into());
    }
    if query
        .search
        .as_ref()
        .is_some_and(|text| text.chars().count() > 200)
    {
        return Err(ApiError::Unprocessable("search: at most 200 characters".into()).into());
    }
    let page = directory
        .search(&SearchQuery {
            search: query.search.as_deref(),
            cursor: query.cursor.as_deref(),
            limit: query.limit,
        })
        .await
        .map_err(ApiError::from)?;
    let servers = page
        .servers
        .into_iter()
        .map(|entry| {
            let official = entry.meta.official.unwrap_or_default();
            RegistryServer {
                server: entry.server,
                status: official.status,
                is_latest: official.is_latest,
                published_at: official.published_at,
            }
        })
        .collect();
    Ok(Json(RegistrySearch {
        registry_url: directory.url().to_owned(),
        servers,
        next_cursor: page
            .metadata
            .next_cursor
            .filter(|cursor| !cursor.is_empty()),
    }))
}

/// Registers a server published in the MCP registry (or, with `dry_run`, shows it).
#[utoipa::path(
    post,
    path = "/mcp/registry/add",
    tag = "mcp_servers",
    security(("bearer" = [])),
    request_body = AddFromRegistryBody,
    responses(
        (status = 200, description = "Dry run: what would be registered", body = AddFromRegistryReport),
        (status = 201, description = "Registered", body = AddFromRegistryReport),
        (status = 400, description = "Malformed JSON", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:write` (or `admin` for a package, which runs a program here)", body = ErrorBody),
        (status = 404, description = "No MCP registry is configured, or it has no such server or version", body = ErrorBody),
        (status = 409, description = "A server with this name exists", body = ErrorBody),
        (status = 422, description = "No choice among several ways, a missing or unknown value, an unsupported package or transport, an invalid configuration (the message names it)", body = ErrorBody),
        (status = 502, description = "The registry did not answer, or not with the registry API", body = ErrorBody),
        (status = 503, description = "The MCP client is not running", body = ErrorBody),
    )
)]
pub(super) async fn add_from_registry(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersWrite>,
    Json(body): Json<AddFromRegistryBody>,
) -> Result<(StatusCode, Json<AddFromRegistryReport>), Failure> {
    let registry = registry(&state)?;
    let directory = directory(&state)?;
    let published = directory
        .server(&body.server, &body.version)
        .await
        .map_err(ApiError::from)?
        .server;
    let choice = install::choose(&published, body.package, body.remote).map_err(ApiError::from)?;
    let name = body.name.clone().unwrap_or_else(|| {
        server_name(published.name.rsplit('/').next().unwrap_or(&published.name))
    });
    let mut installed =
        install::install(&published, choice, name, &body.values).map_err(ApiError::from)?;
    installed.candidate.is_active = body.is_active;
    let candidate = &installed.candidate;
    require_admin_for_stdio(&principal, candidate.transport == TransportKind::Stdio)?;
    candidate.validate(registration_policy(registry, candidate))?;
    let mut report = AddFromRegistryReport {
        dry_run: body.dry_run,
        registry_server: published.name.clone(),
        version: published.version.clone(),
        name: candidate.name.clone(),
        transport: candidate.transport,
        command: candidate.command.clone(),
        args: candidate.args.clone(),
        url: candidate.url.clone(),
        secrets: installed.secrets,
        user_fields: installed.user_fields,
        server: None,
    };
    if body.dry_run {
        return Ok((StatusCode::OK, Json(report)));
    }
    let record = register(&state, &principal, registry, installed.candidate).await?;
    report.server = Some(current_view(&state, &principal, registry, &record).await?);
    Ok((StatusCode::CREATED, Json(report)))
}
