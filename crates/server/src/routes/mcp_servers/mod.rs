//! `/api/mcp/servers` — the workspace's registered MCP servers (`servers:read` to look,
//! `servers:write` to change or use; stdio servers also need `admin`, since they run a program
//! on this machine):
//!
//! - `GET /mcp/servers` → `{servers: [server]}`; `POST /mcp/servers` → 201 server
//! - `GET|PATCH|DELETE /mcp/servers/{id}` (PATCH requires the `version` read
//!   with GET: missing is 422, stale is 409)
//!   A server's `status`, `sync_status` and `last_error` agree: once a start has failed it
//!   is ERROR with a failed sync (`views::shown_state`), while a later attempt shows again.
//!   `latency` `{recent_p50_ms, recent_max_ms, samples, last_start_ms}` covers its last 20
//!   requests and last session start in this process; `slow` (with `slow_reason` `calls` or
//!   `start`) says they passed `mcp.slow_call_ms` or half the init timeout.
//! - `POST /mcp/servers/{id}/test` → `{ok, status, latency_ms, server_info, tool_count}` or
//!   `{ok: false, status: "ERROR", error: {code, message}}`
//! - `POST /mcp/servers/{id}/sync` → `{sync_status, tool_count, resource_count, prompt_count}`
//!   (a failed sync is 502 with the upstream's error code, e.g. `needs_auth`)
//! - `GET /mcp/servers/{id}/capabilities` → cached tools (with `is_enabled`), resources,
//!   prompts, `last_synced_at`, `sync_status`, `stale`
//! - `PATCH /mcp/servers/{id}/tools/{name}` `{is_enabled}`
//! - `POST /mcp/servers/{id}/tools/{name}/call` `{arguments, force?}` → the tool result
//!   (audited); a switched-off tool is 409 unless an admin sends `force: true` (others: 403)
//!
//! - `POST /mcp/servers/import` `{content, format?, dry_run?, on_conflict?}` registers the
//!   servers of a Claude Desktop, Claude Code, Cursor, VS Code or Windsurf configuration file
//!   through the same checks as `POST /mcp/servers` → per entry create, change or skip with
//!   the reason (`import/`)
//! - `GET /mcp/servers/export?format=claude_desktop|claude_code|cursor|vscode` → that
//!   client's configuration file of the workspace's servers, secrets as placeholders
//!   (`export.rs`)
//! - `GET /mcp/registry/servers?search=&cursor=&limit=` searches the MCP registry of
//!   `[registry] url`; `POST /mcp/registry/add` `{server, version?, package? | remote?, name?,
//!   values?, dry_run?}` registers one of its servers through the same checks (`directory/`)
//! - `PUT /mcp/servers/{id}/user-credentials` `{values: {NAME: value|null}}` sets or clears
//!   the caller's own values for the server's user fields (unknown names: 422 naming them;
//!   values are never returned) → the server's `auth` view; `DELETE` clears them all (`chat:use`:
//!   whoever may use the server in a chat).
//! - `POST /mcp/servers/{id}/oauth/authorize` → `{authorization_url}`; `DELETE
//!   /mcp/servers/{id}/oauth` → `{revocation}` (`chat:use`; a shared connection: admins only)
//!
//! A server is JSON like `{"name", "transport": "stdio", "command", "args", "env"}` or
//! `{"name", "transport": "streamable_http"|"sse"|"websocket", "url", "headers", "api_key"}`,
//! plus `session_scope`, `timeout_ms`, `init_timeout_ms`, `is_active` and `auth` (`auth.rs`:
//! mode, credential scope, user fields, the pre-registered OAuth client; each view carries it
//! as it stands for the caller). Secret values are write-only. Switchboard's own
//! knowledge-graph server (`managed_by_switchboard: true`) keeps its name, address and
//! credentials as Switchboard set them, and no request may set or remove the
//! `switchboard_own_kg_endpoint` marker (422 naming the field).

mod actions;
mod auth;
mod bodies;
mod crud;
mod directory;
mod export;
mod failure;
mod import;
mod oauth;
mod user_credentials;
mod views;

use crate::error::ApiError;
use crate::readiness::{CheckKind, CheckReport, CheckStatus, ReadinessCheck};
use crate::state::AppState;
use serde::Serialize;
use switchboard_registry::ServerRegistry;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(crud::list_servers, crud::create_server))
        .routes(routes!(import::import_servers))
        .routes(routes!(export::export_servers))
        .routes(routes!(directory::search_registry))
        .routes(routes!(directory::add_from_registry))
        .routes(routes!(
            crud::get_server,
            crud::update_server,
            crud::delete_server
        ))
        .routes(routes!(actions::test_server))
        .routes(routes!(actions::sync_server))
        .routes(routes!(actions::capabilities))
        .routes(routes!(actions::set_tool_enabled))
        .routes(routes!(actions::call_tool))
        .routes(routes!(
            user_credentials::set_user_credentials,
            user_credentials::clear_user_credentials
        ))
        .routes(routes!(oauth::authorize_server))
        .routes(routes!(oauth::disconnect_server))
}

/// `checks.mcp_servers.detail`: how many active servers there are and how they fare.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpServersDetail {
    pub servers: usize,
    pub usable: usize,
    pub in_error: usize,
}

/// `checks.mcp_servers.detail` when the registry could not be read.
#[derive(Debug, Serialize, ToSchema)]
pub struct McpServersFailure {
    pub error: String,
}

/// The registry, or 503 when this process runs without one.
pub(crate) fn registry(state: &AppState) -> Result<&ServerRegistry, ApiError> {
    state.mcp.as_ref().ok_or_else(|| {
        ApiError::Unavailable("the MCP client is not running in this process".into())
    })
}

/// Check `mcp_servers` (of `/api/health`, shown by `/readyz`): UP unless every active server
/// is in ERROR. About upstreams, so it gates `/readyz` only with
/// `server.readiness_requires_mcp`.
#[derive(Debug)]
pub struct McpServersReadiness {
    registry: ServerRegistry,
}

impl McpServersReadiness {
    pub fn new(registry: ServerRegistry) -> Self {
        Self { registry }
    }
}

#[async_trait::async_trait]
impl ReadinessCheck for McpServersReadiness {
    fn name(&self) -> &'static str {
        "mcp_servers"
    }

    fn kind(&self) -> CheckKind {
        CheckKind::Upstreams
    }

    async fn check(&self) -> CheckReport {
        match self.registry.readiness().await {
            Ok(summary) => CheckReport::with_detail(
                if summary.is_up() {
                    CheckStatus::Up
                } else {
                    CheckStatus::Down
                },
                &McpServersDetail {
                    servers: summary.servers,
                    usable: summary.usable,
                    in_error: summary.in_error,
                },
            ),
            Err(error) => CheckReport::with_detail(
                CheckStatus::Down,
                &McpServersFailure {
                    error: error.to_string(),
                },
            ),
        }
    }
}
