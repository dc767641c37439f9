//! The JSON shapes of the registry API: a server (configuration without secret values, plus
//! its live state), a tool, cached capabilities, a session, a test outcome.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use switchboard_core::SessionState;
use switchboard_mcp_client::{
    CapabilitiesView, CapabilityState, ConnectionTestReport, McpRegistry, ServerOverview,
    SessionStatus,
};
use switchboard_store::{ServerRecord, ServerStatus, ToolRecord};

/// A server's state, sync state and last error as shown together. The session slots and the
/// stored outcome are written at different moments (a connection test fails at once while the
/// background sync still retries its start; a start fails a few milliseconds before its sync
/// records it), so taken apart they can say INITIALIZING and `syncing` beside an error that is
/// already known. Once a start has failed, the view says ERROR, the sync that was waiting on
/// it failed, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ShownState {
    pub status: SessionState,
    pub sync_status: CapabilityState,
    pub last_error: Option<String>,
}

/// `error_recorded_at`: when the stored failure (error code) was observed, if one is stored.
pub(super) fn shown_state(
    record: &ServerRecord,
    overview: &ServerOverview,
    error_recorded_at: Option<DateTime<Utc>>,
) -> ShownState {
    let failed_session = overview
        .sessions
        .iter()
        .find(|session| session.state == SessionState::Error);
    let stored_failure = (record.status == ServerStatus::Error)
        .then_some(error_recorded_at)
        .flatten()
        .filter(|_| record.last_error.is_some());
    // A start that began before the failure was recorded is the one that failed (or a retry
    // running beside it); one that began afterwards is a new attempt and is shown as such.
    // Without sessions the state is the stored outcome already; a sync running then (a
    // per-user server synced over a connection of its own) is a new attempt.
    let start_failed = match overview.state {
        SessionState::Error => failed_session.is_some(),
        SessionState::Initializing => stored_failure.is_some_and(|recorded_at| {
            overview
                .sessions
                .iter()
                .filter(|session| session.state == SessionState::Initializing)
                .all(|session| session.since <= recorded_at)
        }),
        _ => false,
    };
    let last_error = record
        .last_error
        .clone()
        .or_else(|| failed_session.and_then(|session| session.last_error.clone()));
    if !start_failed {
        return ShownState {
            status: overview.state,
            sync_status: overview.capability_state,
            last_error,
        };
    }
    let sync_status = match overview.capability_state {
        CapabilityState::Syncing
            if overview.observation.error_code.as_deref() == Some("needs_auth") =>
        {
            CapabilityState::NeedsAuth
        }
        CapabilityState::Syncing => CapabilityState::Error,
        other => other,
    };
    ShownState {
        status: SessionState::Error,
        sync_status,
        last_error,
    }
}

pub(super) fn server_view(
    record: &ServerRecord,
    overview: &ServerOverview,
    error_recorded_at: Option<DateTime<Utc>>,
) -> Value {
    let observation = &overview.observation;
    let shown = shown_state(record, overview, error_recorded_at);
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
        "status": shown.status,
        "sync_status": shown.sync_status,
        "last_error": shown.last_error,
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
