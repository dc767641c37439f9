//! The JSON shapes of the registry API: a server (configuration without secret values, plus
//! its live state), a tool, cached capabilities, a session, a test outcome.

use serde_json::{Value, json};
use switchboard_mcp_client::{
    CapabilitiesView, ConnectionTestReport, McpRegistry, ServerOverview, SessionStatus,
};
use switchboard_store::{ServerRecord, ToolRecord};

pub(super) fn server_view(record: &ServerRecord, overview: &ServerOverview) -> Value {
    let observation = &overview.observation;
    json!({
        "id": record.id,
        "name": record.name,
        "transport": record.transport,
        "url": record.url,
        "command": record.command,
        "args": record.args,
        "working_dir": record.connection.extra.get("working_dir"),
        "env_names": record.secrets.env_names,
        "header_names": record.secrets.header_names,
        "has_api_key": record.secrets.has_api_key,
        "session_scope": record.connection.session_scope,
        "timeout_ms": record.connection.timeout_ms,
        "init_timeout_ms": record.connection.init_timeout_ms,
        "managed_by_switchboard": McpRegistry::is_marked_own_endpoint(record),
        "is_active": record.is_active,
        "version": record.version,
        "status": overview.state,
        "sync_status": overview.capability_state,
        "last_error": record.last_error,
        "error_code": observation.error_code,
        "last_synced_at": record.last_synced_at,
        "tool_count": overview.tool_count,
        "protocol_version": observation.protocol_version,
        "server_info": (observation.server_name.is_some() || observation.server_version.is_some())
            .then(|| json!({"name": observation.server_name, "version": observation.server_version})),
        "sessions": overview.sessions.iter().map(session_view).collect::<Vec<_>>(),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    })
}

pub(super) fn session_view(session: &SessionStatus) -> Value {
    json!({
        "scope": session.scope,
        "state": session.state,
        "since": session.since,
        "protocol_version": session.protocol_version,
        "in_flight": session.in_flight,
        "last_error": session.last_error,
        "pid": session.process_id,
    })
}

pub(super) fn tool_view(tool: &ToolRecord) -> Value {
    json!({
        "name": tool.name,
        "title": tool.title,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "annotations": tool.annotations,
        "is_enabled": tool.is_enabled,
        "definition_hash": tool.definition_hash,
        "updated_at": tool.updated_at,
    })
}

pub(super) fn capabilities_view(view: &CapabilitiesView) -> Value {
    json!({
        "tools": view.tools.iter().map(tool_view).collect::<Vec<_>>(),
        "resources": view.resources,
        "prompts": view.prompts,
        "last_synced_at": view.last_synced_at,
        "sync_status": view.state,
        "stale": view.stale,
        "last_error": view.last_error,
        "error_code": view.error_code,
    })
}

pub(super) fn test_view(report: &ConnectionTestReport) -> Value {
    json!({
        "ok": true,
        "status": "ACTIVE",
        "latency_ms": report.latency_ms,
        "protocol_version": report.server.protocol_version,
        "server_info": {"name": report.server.name, "version": report.server.version},
        "instructions": report.server.instructions,
        "tool_count": report.tool_count,
    })
}
