//! What the registry API and the chat engine ask of a registered server: its overview (session
//! state, capability state, identity, latency and whether it is slow), its cached capabilities (refreshed when stale), the
//! tools that may be offered to an LLM, a connection test, a tool call, and the readiness
//! summary.

use super::state::{CapabilityState, capability_state};
use super::sync::cache_len;
use super::{RegistryError, ServerRegistry};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::time::Duration;
use switchboard_core::{ServerId, SessionState, UserId, WorkspaceId};
use switchboard_mcp_client::UpstreamError;
use switchboard_mcp_client::result::ToolResult;
use switchboard_mcp_client::session::SessionStatus;
use switchboard_mcp_client::{CallContext, ConnectionTestReport};
use switchboard_mcp_client::{ServerLatency, Slowness};
use switchboard_store::{
    McpObservation, McpObservationRecord, ServerRecord, ServerStatus, StoreError, ToolRecord,
};

/// A server's state as the API shows it, beside its stored configuration.
#[derive(Clone, Debug)]
pub struct ServerOverview {
    /// The most advanced state of its sessions; without sessions, the last recorded outcome.
    pub state: SessionState,
    pub capability_state: CapabilityState,
    pub observation: McpObservation,
    pub tool_count: usize,
    pub sessions: Vec<SessionStatus>,
    /// When the sync running now began, if one runs.
    pub sync_started_at: Option<DateTime<Utc>>,
    /// Its recent request latencies and last start.
    pub latency: ServerLatency,
    /// `Some(why)` when those figures pass the configured limits (`slow_call_ms`, or a start
    /// longer than half the server's init timeout).
    pub slowness: Option<Slowness>,
    /// Our own knowledge-graph endpoint only: the URL this process reaches it at (its own
    /// `/mcp`), which is what it is on this replica — the stored URL names the replica that
    /// started last. `None` for every other server (its stored URL is where it is reached).
    pub own_endpoint_url: Option<String>,
}

/// Cached capabilities and what is known about their freshness.
#[derive(Clone, Debug)]
pub struct CapabilitiesView {
    pub state: CapabilityState,
    /// The cache is older than its lifetime or the last sync failed.
    pub stale: bool,
    pub last_synced_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub error_code: Option<String>,
    pub tools: Vec<ToolRecord>,
    pub resources: Value,
    pub prompts: Value,
}

/// Why a server's tools are not offered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unusable {
    pub state: CapabilityState,
    /// `needs_auth`, `empty`, `inactive`, or the last failure's code.
    pub code: String,
    pub message: String,
}

/// For `/readyz`: UP unless every server is in ERROR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ReadinessSummary {
    pub servers: usize,
    pub in_error: usize,
    pub usable: usize,
}

impl ReadinessSummary {
    pub fn is_up(&self) -> bool {
        self.servers == 0 || self.in_error < self.servers
    }
}

fn session_rank(state: SessionState) -> u8 {
    match state {
        SessionState::Active => 4,
        SessionState::Initializing => 3,
        SessionState::Error => 2,
        SessionState::Idle => 1,
        SessionState::Closed => 0,
    }
}

impl ServerRegistry {
    fn state_of(&self, record: &ServerRecord, error_code: Option<&str>) -> CapabilityState {
        capability_state(
            record,
            error_code,
            self.is_syncing(&record.id),
            Utc::now(),
            self.client().config().capability_cache_ttl(),
        )
    }

    /// Overviews of `records` (one store query for all observations).
    pub async fn overviews(
        &self,
        workspace_id: &WorkspaceId,
        records: &[ServerRecord],
    ) -> Result<Vec<ServerOverview>, RegistryError> {
        let observations: HashMap<ServerId, McpObservationRecord> = self
            .store()
            .list_mcp_observations(workspace_id)
            .await?
            .into_iter()
            .map(|record| (record.server_id.clone(), record))
            .collect();
        Ok(records
            .iter()
            .map(|record| {
                self.overview_with(
                    record,
                    observations
                        .get(&record.id)
                        .map(|stored| stored.observation.clone()),
                )
            })
            .collect())
    }

    pub async fn overview(&self, record: &ServerRecord) -> Result<ServerOverview, RegistryError> {
        let observation = self
            .store()
            .get_mcp_observation(&record.workspace_id, &record.id)
            .await?
            .map(|stored| stored.observation);
        Ok(self.overview_with(record, observation))
    }

    fn overview_with(
        &self,
        record: &ServerRecord,
        observation: Option<McpObservation>,
    ) -> ServerOverview {
        let observation = observation.unwrap_or_default();
        let sessions = self.client().session_statuses(&record.id);
        let state = sessions
            .iter()
            .map(|session| session.state)
            .max_by_key(|state| session_rank(*state))
            .unwrap_or(match record.status {
                ServerStatus::Error => SessionState::Error,
                _ => SessionState::Idle,
            });
        let config = self.client().config();
        let latency = self.client().latency(&record.id);
        let init_timeout = record
            .connection
            .init_timeout_ms
            .map(Duration::from_millis)
            .unwrap_or_else(|| config.session_init_timeout());
        ServerOverview {
            state,
            capability_state: self.state_of(record, observation.error_code.as_deref()),
            observation,
            tool_count: cache_len(&record.tools_cache),
            sessions,
            sync_started_at: self.syncing_since(&record.id),
            latency,
            slowness: latency.slowness(config.slow_call(), init_timeout),
            own_endpoint_url: Self::is_marked_own_endpoint(record)
                .then(|| self.connection_url(record))
                .flatten()
                .map(String::from),
        }
    }

    /// The cached capabilities; a stale or never-synced active server is refreshed in the
    /// background (the answer says `syncing`).
    pub async fn capabilities(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> Result<CapabilitiesView, RegistryError> {
        let record = self.store().get_server(workspace_id, server_id).await?;
        let error_code = self.error_code(&record).await;
        let mut state = self.state_of(&record, error_code.as_deref());
        if record.is_active && state.wants_refresh() {
            crate::metrics::cache_lookup("stale");
            let registry = self.clone();
            let stale_record = record.clone();
            self.mark_syncing(&record.id, true);
            state = CapabilityState::Syncing;
            tokio::spawn(async move {
                registry.sync_record(&stale_record).await;
            });
        } else {
            crate::metrics::cache_lookup("hit");
        }
        let tools = self
            .store()
            .list_server_tools(workspace_id, server_id)
            .await?;
        Ok(CapabilitiesView {
            stale: !matches!(state, CapabilityState::Synced | CapabilityState::Empty),
            state,
            last_synced_at: record.last_synced_at,
            last_error: record.last_error.clone(),
            error_code,
            tools,
            resources: record
                .resources_cache
                .clone()
                .unwrap_or(Value::Array(vec![])),
            prompts: record.prompts_cache.clone().unwrap_or(Value::Array(vec![])),
        })
    }

    /// The enabled tools to offer an LLM for `record`, refreshing a stale cache first. `Err`
    /// says why nothing may be offered (inactive, needs credentials, lists nothing, failing).
    pub async fn usable_tools(&self, record: &ServerRecord) -> Result<Vec<ToolRecord>, Unusable> {
        if !record.is_active {
            return Err(Unusable {
                state: CapabilityState::Error,
                code: "inactive".into(),
                message: format!("the server '{}' is switched off", record.name),
            });
        }
        let mut record = record.clone();
        let failure = self.last_failure(&record).await;
        let mut error_code = failure.as_ref().map(|(code, _)| code.clone());
        // A server whose session just died (or failed to start again) is checked now rather
        // than offered from its cache: a model should not be given tools that cannot run.
        // One already recorded as failing is reported as it is until `session_error_retry`
        // has passed since the failure, then tried again: an upstream that was down for a
        // moment comes back on the next use, not at the next background refresh.
        let state = self.state_of(&record, error_code.as_deref());
        let retry_due = state == CapabilityState::Error
            && failure.is_some_and(|(_, seen)| {
                (Utc::now() - seen).to_std().unwrap_or_default()
                    >= self.client().config().session_error_retry()
            });
        if state.wants_refresh()
            || retry_due
            || (state.is_usable() && self.client().sessions_failed(&record.id))
        {
            crate::metrics::cache_lookup("miss");
            let report = self.sync_record(&record).await;
            if let Some(error) = report.error {
                return Err(unusable(report.state, &error));
            }
            record = self
                .store()
                .get_server(&record.workspace_id, &record.id)
                .await
                .map_err(store_unusable)?;
            error_code = None;
        } else {
            crate::metrics::cache_lookup("hit");
        }
        let state = self.state_of(&record, error_code.as_deref());
        if !state.is_usable() {
            let message = match state {
                CapabilityState::Empty => "the server lists no tools".to_owned(),
                _ => record
                    .last_error
                    .clone()
                    .unwrap_or_else(|| format!("capabilities are {}", state.as_str())),
            };
            return Err(Unusable {
                state,
                code: match state {
                    CapabilityState::Empty | CapabilityState::NeedsAuth => {
                        state.as_str().to_owned()
                    }
                    _ => error_code.unwrap_or_else(|| state.as_str().to_owned()),
                },
                message,
            });
        }
        let tools = self
            .store()
            .list_server_tools(&record.workspace_id, &record.id)
            .await
            .map_err(store_unusable)?;
        Ok(tools.into_iter().filter(|tool| tool.is_enabled).collect())
    }

    /// `POST …/test`: a fresh connection, initialize, list tools. The outcome is recorded
    /// (status, observation), and the inner `Err` is the upstream's precise failure.
    /// `credential` (the caller's token) reaches only our own endpoint. An OAuth token the
    /// upstream refuses gets one refresh and one retry, as a call's does; when the person must
    /// sign in again the answer is [`RegistryError::NeedsAuth`], recorded for no one else.
    pub async fn test(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        credential: Option<&str>,
        user: Option<&UserId>,
    ) -> Result<Result<ConnectionTestReport, UpstreamError>, RegistryError> {
        let record = self.store().get_server(workspace_id, server_id).await?;
        let upstream = self.upstream_as(&record, credential, user).await?;
        let outcome = self
            .retrying_refused_token(&record, &upstream, user, |upstream| async move {
                self.client().test_connection(&upstream).await
            })
            .await
            .or_renewal_error()?;
        if matches!(outcome, Err(UpstreamError::AuthRequired { .. }))
            && crate::is_per_caller(&record)
        {
            // One person's refused token says nothing about the server for others.
            return Err(RegistryError::NeedsAuth {
                server: record.name.clone(),
            });
        }
        self.record_test_outcome(&record, &outcome).await?;
        Ok(outcome)
    }

    /// Records what `POST …/test` found: the status and the MCP observation (protocol
    /// version, server name, or the failure's code).
    async fn record_test_outcome(
        &self,
        record: &ServerRecord,
        outcome: &Result<ConnectionTestReport, UpstreamError>,
    ) -> Result<(), RegistryError> {
        let (workspace_id, server_id) = (&record.workspace_id, &record.id);
        match outcome {
            Ok(report) => {
                let observation = McpObservation {
                    protocol_version: Some(report.server.protocol_version.clone())
                        .filter(|version| !version.is_empty()),
                    server_name: report.server.name.clone(),
                    server_version: report.server.version.clone(),
                    error_code: None,
                };
                self.store()
                    .record_mcp_observation(workspace_id, server_id, &observation)
                    .await?;
                self.store()
                    .record_server_status(workspace_id, server_id, ServerStatus::Connected, None)
                    .await?;
            }
            Err(error) => {
                let mut observation = self
                    .store()
                    .get_mcp_observation(workspace_id, server_id)
                    .await?
                    .map(|stored| stored.observation)
                    .unwrap_or_default();
                observation.error_code = Some(error.code().to_owned());
                self.store()
                    .record_mcp_observation(workspace_id, server_id, &observation)
                    .await?;
                self.store()
                    .record_server_status(
                        workspace_id,
                        server_id,
                        ServerStatus::Error,
                        Some(&error.to_string()),
                    )
                    .await?;
            }
        }
        Ok(())
    }

    /// `POST …/tools/{name}/call`: calls a cached tool of an active server (arguments are
    /// validated against its schema first). A tool-level failure is `Ok` with `is_error`.
    /// `credential` (the caller's token) reaches only our own endpoint.
    pub async fn call_tool(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        tool_name: &str,
        arguments: Value,
        context: &CallContext,
        credential: Option<&str>,
    ) -> Result<ToolResult, RegistryError> {
        let record = self.store().get_server(workspace_id, server_id).await?;
        if !record.is_active {
            return Err(RegistryError::Inactive(record.name));
        }
        let tool = match self
            .store()
            .get_tool(workspace_id, server_id, tool_name)
            .await
        {
            Ok(tool) => tool,
            Err(StoreError::NotFound { .. }) => {
                return Err(UpstreamError::UnknownTool(tool_name.to_owned()).into());
            }
            Err(error) => return Err(error.into()),
        };
        let user = Some(&context.caller.user_id);
        let upstream = self.upstream_as(&record, credential, user).await?;
        let definition = tool.definition();
        let outcome = self
            .retrying_refused_token(&record, &upstream, user, |upstream| {
                let (definition, arguments) = (&definition, arguments.clone());
                async move {
                    self.client()
                        .call_tool(&upstream, definition, arguments, context)
                        .await
                }
            })
            .await
            .or_renewal_error()?;
        Ok(outcome?)
    }

    /// Counts for `/readyz` over every workspace's active servers.
    pub async fn readiness(&self) -> Result<ReadinessSummary, RegistryError> {
        let mut summary = ReadinessSummary {
            servers: 0,
            in_error: 0,
            usable: 0,
        };
        for workspace in self.store().list_workspaces().await? {
            let records: Vec<ServerRecord> = self
                .store()
                .list_servers(&workspace.id)
                .await?
                .into_iter()
                .filter(|record| record.is_active)
                .collect();
            for overview in self.overviews(&workspace.id, &records).await? {
                summary.servers += 1;
                if overview.state == SessionState::Error
                    || matches!(
                        overview.capability_state,
                        CapabilityState::Error | CapabilityState::NeedsAuth
                    )
                {
                    summary.in_error += 1;
                } else if overview.capability_state.is_usable() {
                    summary.usable += 1;
                }
            }
        }
        Ok(summary)
    }
}

fn unusable(state: CapabilityState, error: &UpstreamError) -> Unusable {
    Unusable {
        state,
        code: error.code().to_owned(),
        message: error.to_string(),
    }
}

fn store_unusable(error: StoreError) -> Unusable {
    Unusable {
        state: CapabilityState::Error,
        code: "store_error".into(),
        message: error.to_string(),
    }
}
