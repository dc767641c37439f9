//! The JSON shapes of the registry API: a server (configuration without secret values, plus
//! its live state, recent latency and whether it is slow), a tool, cached capabilities, a session, a test outcome.
//! Owned types with `ToSchema`, so the OpenAPI document describes exactly what is sent.

use super::auth::AuthView;
use crate::error::ErrorDetail;
use crate::mirrors;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use switchboard_core::{Principal, ServerId, SessionScope, SessionState, TransportKind};
use switchboard_mcp_client::{ConnectionTestReport, SessionScopeKey, SessionStatus, Slowness};
use switchboard_registry::{CapabilitiesView, CapabilityState, ServerOverview, ServerRegistry};
use switchboard_store::{ServerRecord, ServerStatus, ToolRecord};
use utoipa::ToSchema;

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
    // A sync that began before the failure was recorded runs beside it too, whether its own
    // start has begun yet or not (a connection test may fail before the add's background
    // sync reaches its start). Without sessions the state is the stored outcome already; a
    // sync that began after it (a per-user server synced over a connection of its own) is a
    // new attempt.
    let sync_beside_failure = stored_failure.is_some_and(|recorded_at| {
        overview
            .sync_started_at
            .is_some_and(|began| began <= recorded_at)
    });
    let start_failed = match overview.state {
        SessionState::Error => failed_session.is_some() || sync_beside_failure,
        SessionState::Initializing => {
            sync_beside_failure
                || stored_failure.is_some_and(|recorded_at| {
                    overview
                        .sessions
                        .iter()
                        .filter(|session| session.state == SessionState::Initializing)
                        .all(|session| session.since <= recorded_at)
                })
        }
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

/// A registered server: its configuration without secret values, its live state, recent
/// latency and whether it is slow.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerView {
    #[schema(value_type = String)]
    pub id: ServerId,
    pub name: String,
    #[schema(value_type = mirrors::TransportKind)]
    pub transport: TransportKind,
    /// Where the server is reached. For Switchboard's own knowledge-graph server
    /// (`managed_by_switchboard`): the `/mcp` of the instance answering — every replica
    /// reaches its own.
    pub url: Option<String>,
    pub command: Option<String>,
    pub args: Vec<String>,
    #[schema(value_type = Option<String>)]
    pub working_dir: Option<Value>,
    /// Names of the environment variables set (values are write-only).
    pub env_names: Vec<String>,
    /// Names of the headers set (values are write-only).
    pub header_names: Vec<String>,
    pub has_api_key: bool,
    #[schema(value_type = mirrors::SessionScope)]
    pub session_scope: SessionScope,
    pub timeout_ms: Option<u64>,
    pub init_timeout_ms: Option<u64>,
    /// Switchboard's own knowledge-graph server: name, address and credentials are managed.
    pub managed_by_switchboard: bool,
    pub is_active: bool,
    /// Send it back with PATCH (optimistic concurrency).
    pub version: i64,
    #[schema(value_type = mirrors::SessionState)]
    pub status: SessionState,
    #[schema(value_type = mirrors::CapabilityState)]
    pub sync_status: CapabilityState,
    pub last_error: Option<String>,
    pub error_code: Option<String>,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub tool_count: usize,
    pub protocol_version: Option<String>,
    pub server_info: Option<ServerInfo>,
    /// Its live sessions: the shared one and the caller's own; other people's only for admins.
    pub sessions: Vec<SessionView>,
    pub latency: LatencyView,
    pub slow: bool,
    #[schema(value_type = Option<mirrors::Slowness>)]
    pub slow_reason: Option<Slowness>,
    /// How callers authenticate, as it stands for the caller.
    pub auth: AuthView,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What the server says it is.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerInfo {
    pub name: Option<String>,
    pub version: Option<String>,
}

/// The server's last 20 requests and last session start in this process.
#[derive(Debug, Serialize, ToSchema)]
pub struct LatencyView {
    pub recent_p50_ms: Option<u64>,
    pub recent_max_ms: Option<u64>,
    pub samples: usize,
    pub last_start_ms: Option<u64>,
}

/// One live session with the server.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionView {
    /// Who shares it: `{"kind": "shared"}`, `{"kind": "user", "id"}` or
    /// `{"kind": "conversation", "id"}`.
    #[schema(value_type = SessionScopeKeyView)]
    pub scope: SessionScopeKey,
    #[schema(value_type = mirrors::SessionState)]
    pub state: SessionState,
    pub since: DateTime<Utc>,
    pub protocol_version: Option<String>,
    pub in_flight: usize,
    pub last_error: Option<String>,
    /// The stdio child's process id.
    pub pid: Option<i32>,
}

/// Schema of a session's `scope` (serialized from the client's own key).
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = SessionScopeKey)]
pub struct SessionScopeKeyView {
    /// `shared`, `user` or `conversation`.
    pub kind: String,
    /// The user or conversation id (absent for `shared`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The workspace's servers.
#[derive(Debug, Serialize, ToSchema)]
pub struct ServerList {
    pub servers: Vec<ServerView>,
}

/// A cached tool of a server.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolView {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    #[schema(value_type = Object)]
    pub input_schema: Value,
    #[schema(value_type = Option<Object>)]
    pub output_schema: Option<Value>,
    #[schema(value_type = Option<Object>)]
    pub annotations: Option<Value>,
    pub is_enabled: bool,
    pub definition_hash: String,
    pub updated_at: DateTime<Utc>,
}

/// A server's cached tools, resources and prompts and how fresh they are.
#[derive(Debug, Serialize, ToSchema)]
pub struct CapabilitiesBody {
    pub tools: Vec<ToolView>,
    /// The resources as the server listed them (MCP's shape).
    #[schema(value_type = Vec<Object>)]
    pub resources: Value,
    /// The prompts as the server listed them (MCP's shape).
    #[schema(value_type = Vec<Object>)]
    pub prompts: Value,
    pub last_synced_at: Option<DateTime<Utc>>,
    #[schema(value_type = mirrors::CapabilityState)]
    pub sync_status: CapabilityState,
    pub stale: bool,
    pub last_error: Option<String>,
    pub error_code: Option<String>,
}

/// A connection test: `ok: true` with what the server said, or `ok: false` with the error.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum TestOutcome {
    Passed(TestPassed),
    Failed(TestFailed),
}

/// The server answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct TestPassed {
    /// Always `true`.
    pub ok: bool,
    /// Always `ACTIVE`.
    pub status: &'static str,
    pub latency_ms: u64,
    pub protocol_version: String,
    pub server_info: ServerInfo,
    pub instructions: Option<String>,
    pub tool_count: usize,
}

/// The server could not be reached or refused.
#[derive(Debug, Serialize, ToSchema)]
pub struct TestFailed {
    pub error: ErrorDetail,
    /// Always `false`.
    pub ok: bool,
    /// Always `ERROR`.
    pub status: &'static str,
}

/// What a sync found.
#[derive(Debug, Serialize, ToSchema)]
pub struct SyncBody {
    #[schema(value_type = mirrors::CapabilityState)]
    pub sync_status: CapabilityState,
    pub tool_count: usize,
    pub resource_count: usize,
    pub prompt_count: usize,
}

pub(super) fn server_view(
    record: &ServerRecord,
    overview: &ServerOverview,
    error_recorded_at: Option<DateTime<Utc>>,
    auth: AuthView,
    viewer: &Principal,
) -> ServerView {
    let observation = &overview.observation;
    let mut shown = shown_state(record, overview, error_recorded_at);
    if auth.mode == switchboard_store::AuthMode::Oauth && !auth.connected {
        // Whatever it is for those who connected, this caller must sign in first.
        shown.sync_status = CapabilityState::NeedsAuth;
    }
    let latency = overview.latency;
    ServerView {
        id: record.id.clone(),
        name: record.name.clone(),
        transport: record.transport,
        url: overview
            .own_endpoint_url
            .clone()
            .or_else(|| record.url.clone()),
        command: record.command.clone(),
        args: record.args.clone(),
        working_dir: record.connection.extra.get("working_dir").cloned(),
        env_names: record.secrets.env_names.clone(),
        header_names: record.secrets.header_names.clone(),
        has_api_key: record.secrets.has_api_key,
        session_scope: record.connection.session_scope,
        timeout_ms: record.connection.timeout_ms,
        init_timeout_ms: record.connection.init_timeout_ms,
        managed_by_switchboard: ServerRegistry::is_marked_own_endpoint(record),
        is_active: record.is_active,
        version: record.version,
        status: shown.status,
        sync_status: shown.sync_status,
        last_error: shown.last_error,
        error_code: observation.error_code.clone(),
        last_synced_at: record.last_synced_at,
        tool_count: overview.tool_count,
        protocol_version: observation.protocol_version.clone(),
        server_info: (observation.server_name.is_some() || observation.server_version.is_some())
            .then(|| ServerInfo {
                name: observation.server_name.clone(),
                version: observation.server_version.clone(),
            }),
        sessions: overview
            .sessions
            .iter()
            .filter(|session| session_visible_to(&session.scope, viewer))
            .map(session_view)
            .collect(),
        latency: LatencyView {
            recent_p50_ms: latency.recent_p50_ms,
            recent_max_ms: latency.recent_max_ms,
            samples: latency.samples,
            last_start_ms: latency.last_start_ms,
        },
        slow: overview.slowness.is_some(),
        slow_reason: overview.slowness,
        auth,
        created_at: record.created_at,
        updated_at: record.updated_at,
    }
}

/// Whether `viewer` may see a session: everyone sees the shared one and their own; other
/// people's (their user ids, their conversations, their errors) only admins.
fn session_visible_to(scope: &SessionScopeKey, viewer: &Principal) -> bool {
    match scope {
        SessionScopeKey::Shared => true,
        SessionScopeKey::User(user_id) => *user_id == viewer.user_id || viewer.is_admin(),
        SessionScopeKey::Conversation(_) => viewer.is_admin(),
    }
}

pub(super) fn session_view(session: &SessionStatus) -> SessionView {
    SessionView {
        scope: session.scope.clone(),
        state: session.state,
        since: session.since,
        protocol_version: session.protocol_version.clone(),
        in_flight: session.in_flight,
        last_error: session.last_error.clone(),
        pid: session.process_id,
    }
}

pub(super) fn tool_view(tool: &ToolRecord) -> ToolView {
    ToolView {
        name: tool.name.clone(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        input_schema: tool.input_schema.clone(),
        output_schema: tool.output_schema.clone(),
        annotations: tool.annotations.clone(),
        is_enabled: tool.is_enabled,
        definition_hash: tool.definition_hash.clone(),
        updated_at: tool.updated_at,
    }
}

pub(super) fn capabilities_view(view: &CapabilitiesView) -> CapabilitiesBody {
    CapabilitiesBody {
        tools: view.tools.iter().map(tool_view).collect(),
        resources: view.resources.clone(),
        prompts: view.prompts.clone(),
        last_synced_at: view.last_synced_at,
        sync_status: view.state,
        stale: view.stale,
        last_error: view.last_error.clone(),
        error_code: view.error_code.clone(),
    }
}

pub(super) fn test_view(report: &ConnectionTestReport) -> TestPassed {
    TestPassed {
        ok: true,
        status: "ACTIVE",
        latency_ms: report.latency_ms,
        protocol_version: report.server.protocol_version.clone(),
        server_info: ServerInfo {
            name: report.server.name.clone(),
            version: report.server.version.clone(),
        },
        instructions: report.server.instructions.clone(),
        tool_count: report.tool_count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;
    use switchboard_core::{ServerId, SessionScope, TransportKind, WorkspaceId};
    use switchboard_mcp_client::{ServerLatency, SessionScopeKey};
    use switchboard_store::{
        McpObservation, ServerConnectionConfig, ServerSecretsSummary, SyncStatus,
    };

    const EXITED: &str = "could not initialize a session with `sh`: it exited with status 3";

    fn record(status: ServerStatus, last_error: Option<&str>) -> ServerRecord {
        let now = Utc::now();
        ServerRecord {
            id: ServerId::from("s"),
            workspace_id: WorkspaceId::from("w"),
            name: "broken".into(),
            transport: TransportKind::Stdio,
            url: None,
            command: Some("sh".into()),
            args: vec![],
            connection: ServerConnectionConfig {
                session_scope: SessionScope::Shared,
                ..ServerConnectionConfig::default()
            },
            secrets: ServerSecretsSummary::default(),
            status,
            last_error: last_error.map(str::to_owned),
            tools_cache: None,
            resources_cache: None,
            prompts_cache: None,
            last_synced_at: None,
            sync_status: SyncStatus::NeverSynced,
            version: 1,
            is_active: true,
            created_at: now,
            updated_at: now,
        }
    }

    fn session(state: SessionState, since: DateTime<Utc>, error: Option<&str>) -> SessionStatus {
        SessionStatus {
            server_id: ServerId::from("s"),
            scope: SessionScopeKey::Shared,
            state,
            since,
            protocol_version: None,
            in_flight: 0,
            last_error: error.map(str::to_owned),
            process_id: None,
        }
    }

    fn overview(
        state: SessionState,
        capability_state: CapabilityState,
        code: Option<&str>,
        sessions: Vec<SessionStatus>,
    ) -> ServerOverview {
        ServerOverview {
            state,
            capability_state,
            observation: McpObservation {
                error_code: code.map(str::to_owned),
                ..McpObservation::default()
            },
            tool_count: 0,
            sessions,
            sync_started_at: None,
            latency: ServerLatency::default(),
            slowness: None,
            own_endpoint_url: None,
        }
    }

    fn shown(
        status: SessionState,
        sync_status: CapabilityState,
        error: Option<&str>,
    ) -> ShownState {
        ShownState {
            status,
            sync_status,
            last_error: error.map(str::to_owned),
        }
    }

    #[test]
    fn a_failed_start_reads_as_error_and_a_later_attempt_as_starting() {
        let failed_at = Utc::now();
        let before = failed_at - Duration::milliseconds(300);
        let after = failed_at + Duration::milliseconds(300);
        let stored = record(ServerStatus::Error, Some(EXITED));
        let starting = |since| {
            overview(
                SessionState::Initializing,
                CapabilityState::Syncing,
                Some("init_failed"),
                vec![session(SessionState::Initializing, since, None)],
            )
        };
        // The start running beside the failed test (it began first): the start failed.
        assert_eq!(
            shown_state(&stored, &starting(before), Some(failed_at)),
            shown(SessionState::Error, CapabilityState::Error, Some(EXITED))
        );
        // A start that began after the failure (Sync tools) is a new attempt.
        assert_eq!(
            shown_state(&stored, &starting(after), Some(failed_at)),
            shown(
                SessionState::Initializing,
                CapabilityState::Syncing,
                Some(EXITED)
            )
        );
        // The slot failed, the store is not written yet: the session's own error is shown.
        let unrecorded = overview(
            SessionState::Error,
            CapabilityState::Syncing,
            None,
            vec![session(SessionState::Error, failed_at, Some(EXITED))],
        );
        assert_eq!(
            shown_state(&record(ServerStatus::Disconnected, None), &unrecorded, None),
            shown(SessionState::Error, CapabilityState::Error, Some(EXITED))
        );
        // Credentials refused: the sync that waited on the start needs them.
        let refused = overview(
            SessionState::Error,
            CapabilityState::Syncing,
            Some("needs_auth"),
            vec![session(SessionState::Error, failed_at, Some("HTTP 401"))],
        );
        assert_eq!(
            shown_state(
                &record(ServerStatus::Error, Some("HTTP 401")),
                &refused,
                Some(failed_at)
            )
            .sync_status,
            CapabilityState::NeedsAuth
        );
    }

    #[test]
    fn live_sessions_and_per_user_syncs_are_shown_as_they_are() {
        let failed_at = Utc::now();
        let stored = record(ServerStatus::Error, Some(EXITED));
        // A session still working when a separate connection test failed stays ACTIVE.
        let active = overview(
            SessionState::Active,
            CapabilityState::Synced,
            Some("init_failed"),
            vec![session(
                SessionState::Active,
                failed_at - Duration::seconds(60),
                None,
            )],
        );
        assert_eq!(
            shown_state(&stored, &active, Some(failed_at)),
            shown(SessionState::Active, CapabilityState::Synced, Some(EXITED))
        );
        // No sessions (a per-user server synced over its own connection): a running sync is a
        // new attempt, the stored ERROR is the state.
        let per_user = overview(
            SessionState::Error,
            CapabilityState::Syncing,
            Some("init_failed"),
            vec![],
        );
        assert_eq!(
            shown_state(&stored, &per_user, Some(failed_at)),
            shown(SessionState::Error, CapabilityState::Syncing, Some(EXITED))
        );
    }

    #[test]
    fn a_sync_that_began_before_the_failure_failed_with_it_even_before_its_own_start() {
        let failed_at = Utc::now();
        let stored = record(ServerStatus::Error, Some(EXITED));
        let syncing_since = |began, sessions| ServerOverview {
            sync_started_at: Some(began),
            ..overview(
                SessionState::Error,
                CapabilityState::Syncing,
                Some("connect_failed"),
                sessions,
            )
        };
        // The add's background sync had not reached its start when the test failed.
        let before = failed_at - Duration::milliseconds(5);
        assert_eq!(
            shown_state(&stored, &syncing_since(before, vec![]), Some(failed_at)),
            shown(SessionState::Error, CapabilityState::Error, Some(EXITED))
        );
        // Its start then begins after the recorded failure: still the same sync, still failed.
        let late_start = ServerOverview {
            state: SessionState::Initializing,
            ..syncing_since(
                before,
                vec![session(
                    SessionState::Initializing,
                    failed_at + Duration::milliseconds(50),
                    None,
                )],
            )
        };
        assert_eq!(
            shown_state(&stored, &late_start, Some(failed_at)),
            shown(SessionState::Error, CapabilityState::Error, Some(EXITED))
        );
        // A sync begun after the failure (Sync tools) is a new attempt.
        let after = failed_at + Duration::milliseconds(5);
        assert_eq!(
            shown_state(&stored, &syncing_since(after, vec![]), Some(failed_at)),
            shown(SessionState::Error, CapabilityState::Syncing, Some(EXITED))
        );
    }
}
