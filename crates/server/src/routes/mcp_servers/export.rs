//! `GET /api/mcp/servers/export?format=…`: the workspace's servers as an MCP client's
//! configuration file (Claude Desktop, Claude Code, Cursor, VS Code), the reverse of the
//! import. No secret leaves: nothing is decrypted, and every env value, header and API key is
//! written as a placeholder the client understands — `${NAME}` (Claude Code), `${env:NAME}`
//! (Cursor), a VS Code input (`${input:ID}`, asked with `password: true`), `<NAME>` text for
//! Claude Desktop, which has no references. Switchboard's own knowledge-graph server is left
//! out (its address and token belong to this instance).

use super::import::field_name;
use super::import::wire::ConfigFormat;
use crate::auth::{Scoped, scopes};
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Query, State};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use switchboard_core::TransportKind;
use switchboard_registry::ServerRegistry;
use switchboard_store::ServerRecord;
use utoipa::{IntoParams, ToSchema};

/// `GET /api/mcp/servers/export` query.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct ExportQuery {
    /// `claude_desktop`, `claude_code`, `cursor` or `vscode`.
    #[param(value_type = ConfigFormat)]
    format: ConfigFormat,
}

/// A configuration file: `mcpServers` (Claude Desktop, Claude Code, Cursor) or VS Code's
/// `inputs` and `servers`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ExportedFile {
    McpServers(McpServersFile),
    Vscode(VscodeFile),
}

#[derive(Debug, Serialize, ToSchema)]
pub struct McpServersFile {
    #[serde(rename = "mcpServers")]
    pub mcp_servers: BTreeMap<String, ExportedServer>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct VscodeFile {
    pub inputs: Vec<VscodeInput>,
    pub servers: BTreeMap<String, ExportedServer>,
}

/// A VS Code input: asked once, stored by the editor.
#[derive(Debug, Serialize, ToSchema)]
pub struct VscodeInput {
    /// Always `promptString`.
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub description: String,
    pub password: bool,
}

/// One server entry.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExportedServer {
    /// `stdio`, `http`, `sse` or `ws` (left out for a Claude Desktop or Cursor stdio entry).
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// The workspace's servers as a client's configuration file, secrets as placeholders.
#[utoipa::path(
    get,
    path = "/mcp/servers/export",
    tag = "mcp_servers",
    security(("bearer" = [])),
    params(ExportQuery),
    responses(
        (status = 200, description = "The configuration file", body = ExportedFile),
        (status = 400, description = "No format, or an unknown one", body = ErrorBody),
        (status = 401, description = "No valid bearer token", body = ErrorBody),
        (status = 403, description = "The token lacks `servers:read`", body = ErrorBody),
    )
)]
pub(super) async fn export_servers(
    State(state): State<AppState>,
    Scoped(principal, _): Scoped<scopes::ServersRead>,
    Query(query): Query<ExportQuery>,
) -> Result<Json<ExportedFile>, ApiError> {
    if query.format == ConfigFormat::Windsurf {
        return Err(ApiError::BadRequest(
            "format: export writes claude_desktop, claude_code, cursor or vscode".into(),
        ));
    }
    let records = state.store.list_servers(&principal.workspace_id).await?;
    let mut inputs = Vec::new();
    let servers: BTreeMap<String, ExportedServer> = records
        .iter()
        .filter(|record| !ServerRegistry::is_marked_own_endpoint(record))
        .map(|record| {
            let entry = exported(record, query.format, &mut inputs);
            (record.name.clone(), entry)
        })
        .collect();
    Ok(Json(match query.format {
        ConfigFormat::Vscode => ExportedFile::Vscode(VscodeFile { inputs, servers }),
        _ => ExportedFile::McpServers(McpServersFile {
            mcp_servers: servers,
        }),
    }))
}

fn exported(
    record: &ServerRecord,
    format: ConfigFormat,
    inputs: &mut Vec<VscodeInput>,
) -> ExportedServer {
    let mut placeholder = |what: &str| -> String {
        let name = field_name(what).unwrap_or_else(|| "VALUE".into());
        match format {
            ConfigFormat::ClaudeCode => format!("${{{name}}}"),
            ConfigFormat::Cursor => format!("${{env:{name}}}"),
            ConfigFormat::Vscode => {
                let id = format!("{}-{}", record.name, what).to_lowercase();
                inputs.push(VscodeInput {
                    kind: "promptString".into(),
                    id: id.clone(),
                    description: format!("{what} of the {} server", record.name),
                    password: true,
                });
                format!("${{input:{id}}}")
            }
            _ => format!("<{name}>"),
        }
    };
    let env = record
        .secrets
        .env_names
        .iter()
        .map(|name| (name.clone(), placeholder(name)))
        .collect();
    let mut headers: BTreeMap<String, String> = record
        .secrets
        .header_names
        .iter()
        .map(|name| (name.clone(), placeholder(name)))
        .collect();
    if record.secrets.has_api_key {
        let key = placeholder("API_KEY");
        headers.insert("Authorization".into(), format!("Bearer {key}"));
    }
    let stdio = record.transport == TransportKind::Stdio;
    let kind = match record.transport {
        TransportKind::Stdio => {
            matches!(format, ConfigFormat::ClaudeCode | ConfigFormat::Vscode).then_some("stdio")
        }
        TransportKind::StreamableHttp => Some("http"),
        TransportKind::Sse => Some("sse"),
        TransportKind::Websocket => Some("ws"),
    };
    ExportedServer {
        kind: kind.map(str::to_owned),
        command: record.command.clone().filter(|_| stdio),
        args: if stdio {
            record.args.clone()
        } else {
            Vec::new()
        },
        env,
        cwd: record
            .connection
            .extra
            .get("working_dir")
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        url: record.url.clone().filter(|_| !stdio),
        headers,
    }
}
