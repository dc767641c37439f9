//! Capability sync: list a registered server's tools, resources and prompts and persist them —
//! the tool catalog (keeping each tool's enable switch), the raw caches with `last_synced_at`,
//! the server's status, instructions and the observation (protocol version, identity, error
//! code). A failure marks the server ERROR with its message and keeps the last good cache.
//! One sync per server at a time: concurrent requests wait for the running one.

use super::ServerRegistry;
use super::state::{CapabilityState, capability_state};
use crate::metrics;
use serde::Serialize;
use switchboard_core::LockUnpoisoned;
use switchboard_core::{ServerId, SessionScope, UserId};
use switchboard_mcp_client::Caller;
use switchboard_mcp_client::UpstreamError;
use switchboard_mcp_client::capabilities::CapabilitySnapshot;
use switchboard_store::{McpObservation, ServerRecord, ServerStatus, ServerSync, SyncStatus};

/// What a successful sync stored, for [`ServerRegistry::on_synced`] observers.
#[derive(Clone, Debug, PartialEq)]
pub struct SyncedCapabilities {
    pub workspace_id: switchboard_core::WorkspaceId,
    pub server_id: ServerId,
    pub instructions: Option<String>,
    pub tools: Vec<switchboard_core::ToolDefinition>,
}

/// Told after every successful sync; runs inline, so it must return quickly (spawn any IO).
pub type SyncedHandler = std::sync::Arc<dyn Fn(SyncedCapabilities) + Send + Sync>;

/// The session user of syncs through a shared session.
pub const SYNC_USER: &str = "system:capability-sync";

/// What a sync found.
#[derive(Clone, Debug, Serialize)]
pub struct SyncReport {
    pub state: CapabilityState,
    pub tool_count: usize,
    pub resource_count: usize,
    pub prompt_count: usize,
    /// Why the sync failed (the previous cache, if any, is kept).
    #[serde(skip)]
    pub error: Option<UpstreamError>,
}

impl ServerRegistry {
    /// Syncs `record` now (or waits for the sync already running and reports its outcome).
    /// A server with user fields or per-user OAuth is not synced without a caller (nothing is
    /// sent, the current state is reported): it lists its capabilities only as someone whose
    /// values (or token) it takes.
    pub async fn sync_record(&self, record: &ServerRecord) -> SyncReport {
        self.sync_record_as(record, None, None).await
    }

    /// [`Self::sync_record`] on behalf of a caller: their token may reach our own endpoint,
    /// and a server with user fields is listed with `user`'s own values.
    pub async fn sync_record_as(
        &self,
        record: &ServerRecord,
        credential: Option<&str>,
        user: Option<&UserId>,
    ) -> SyncReport {
        if user.is_none() && crate::is_per_caller(record) {
            self.mark_syncing(&record.id, false);
            return self.report_current(record).await;
        }
        let lock = self.sync_lock(&record.id);
        let already_running = lock.try_lock().is_err();
        let _guard = lock.lock().await;
        if already_running {
            return self.report_current(record).await;
        }
        self.mark_syncing(&record.id, true);
        let mut report = self.sync_unlocked(record, credential, user).await;
        if report.state == CapabilityState::NeedsAuth
            && let Some(renewed) = self.renew_own_endpoint_token(record).await
        {
            // Our own endpoint refused its service token (revoked): a new one, once.
            report = self.sync_unlocked(&renewed, credential, user).await;
        }
        self.mark_syncing(&record.id, false);
        report
    }

    async fn report_current(&self, record: &ServerRecord) -> SyncReport {
        let fresh = self
            .store()
            .get_server(&record.workspace_id, &record.id)
            .await
            .unwrap_or_else(|_| record.clone());
        let code = self.error_code(&fresh).await;
        let ttl = self.client().config().capability_cache_ttl();
        let state = capability_state(&fresh, code.as_deref(), false, chrono::Utc::now(), ttl);
        let failed = matches!(state, CapabilityState::Error | CapabilityState::NeedsAuth);
        let error = if failed {
            self.inner
                .last_failures
                .lock()
                .ok()
                .and_then(|failures| failures.get(&record.id).cloned())
        } else {
            None
        };
        SyncReport {
            state,
            tool_count: cache_len(&fresh.tools_cache),
            resource_count: cache_len(&fresh.resources_cache),
            prompt_count: cache_len(&fresh.prompts_cache),
            error,
        }
    }

    async fn sync_unlocked(
        &self,
        record: &ServerRecord,
        credential: Option<&str>,
        user: Option<&UserId>,
    ) -> SyncReport {
        let upstream = match self.listing_upstream(record, credential, user).await {
            Ok(upstream) => upstream,
            Err(
                super::RegistryError::NeedsUserCredentials { .. }
                | super::RegistryError::NeedsAuth { .. },
            ) if crate::is_per_caller(record) => {
                // This caller's values (or connection) are missing: nothing to record for
                // everyone else.
                return self.report_current(record).await;
            }
            Err(error) => {
                let error = match error {
                    super::RegistryError::Upstream(error) => error,
                    super::RegistryError::Config(error) => UpstreamError::Config(error),
                    super::RegistryError::NeedsAuth { .. } => UpstreamError::AuthRequired {
                        target: record.url.clone().unwrap_or_default(),
                        reason: "no OAuth connection (an administrator must connect it)".into(),
                        challenge: None,
                    },
                    other => UpstreamError::Protocol(other.to_string()),
                };
                return self.record_failure(record, error).await;
            }
        };
        // When no new token can be had, the refusal is what is recorded.
        let outcome = self
            .retrying_refused_token(record, &upstream, user, |upstream| async move {
                self.fetch(&upstream).await
            })
            .await
            .outcome;
        match outcome {
            Ok(snapshot) => self.record_success(record, snapshot).await,
            Err(error @ UpstreamError::AuthRequired { .. }) if crate::is_per_caller(record) => {
                // One person's refused token says nothing about the server for others.
                let mut report = self.report_current(record).await;
                report.state = CapabilityState::NeedsAuth;
                report.error = Some(error);
                report
            }
            Err(error) => self.record_failure(record, error).await,
        }
    }

    /// Lists `upstream`'s capabilities: through the shared session, or a one-off one for a
    /// per-user upstream.
    async fn fetch(
        &self,
        upstream: &switchboard_mcp_client::server::UpstreamServer,
    ) -> Result<CapabilitySnapshot, UpstreamError> {
        if upstream.session_scope == SessionScope::Shared {
            let caller = Caller {
                user_id: UserId::from(SYNC_USER),
                conversation_id: None,
            };
            self.client().fetch_capabilities(upstream, &caller).await
        } else {
            self.client().fetch_capabilities_once(upstream).await
        }
    }

    async fn record_success(
        &self,
        record: &ServerRecord,
        snapshot: CapabilitySnapshot,
    ) -> SyncReport {
        // The apps first: a stored tool naming an app always finds it.
        if let Err(error) = self
            .store()
            .replace_server_app_resources(&record.workspace_id, &record.id, &snapshot.apps)
            .await
        {
            return self
                .record_failure(
                    record,
                    UpstreamError::Protocol(format!("storing the app resources failed: {error}")),
                )
                .await;
        }
        if let Err(error) = self
            .store()
            .replace_server_tools(&record.workspace_id, &record.id, &snapshot.tools)
            .await
        {
            return self
                .record_failure(
                    record,
                    UpstreamError::Protocol(format!("storing the tool list failed: {error}")),
                )
                .await;
        }
        self.persist_synced_state(record, &snapshot).await;
        metrics::cache_refresh(&record.name, "success");
        self.announce_synced(record, &snapshot);
        if let Ok(mut failures) = self.inner.last_failures.lock() {
            failures.remove(&record.id);
        }
        success_report(&snapshot)
    }

    /// Stores the raw caches, the CONNECTED status, the observation and the instructions.
    /// The tool catalog is already stored; a failure here is logged, not reported.
    async fn persist_synced_state(&self, record: &ServerRecord, snapshot: &CapabilitySnapshot) {
        let store = self.store();
        let workspace_id = &record.workspace_id;
        let sync = ServerSync {
            sync_status: SyncStatus::Synced,
            tools: serde_json::to_value(&snapshot.tools).ok(),
            resources: serde_json::to_value(&snapshot.resources).ok(),
            prompts: serde_json::to_value(&snapshot.prompts).ok(),
            synced_at: chrono::Utc::now(),
            error: None,
        };
        let observation = McpObservation {
            protocol_version: Some(snapshot.server.protocol_version.clone())
                .filter(|version| !version.is_empty()),
            server_name: snapshot.server.name.clone(),
            server_version: snapshot.server.version.clone(),
            error_code: None,
        };
        let results = [
            store
                .record_server_sync(workspace_id, &record.id, sync)
                .await,
            store
                .record_server_status(workspace_id, &record.id, ServerStatus::Connected, None)
                .await,
            store
                .record_mcp_observation(workspace_id, &record.id, &observation)
                .await,
            store
                .record_server_instructions(
                    workspace_id,
                    &record.id,
                    snapshot.server.instructions.as_deref(),
                )
                .await,
        ];
        for error in results.into_iter().filter_map(Result::err) {
            tracing::warn!(server = %record.name, %error, "recording a sync failed");
        }
    }

    /// Tells the synced handlers the server's new tools and instructions.
    fn announce_synced(&self, record: &ServerRecord, snapshot: &CapabilitySnapshot) {
        let handlers = self
            .inner
            .synced
            .lock()
            .map(|handlers| handlers.clone())
            .unwrap_or_default();
        for handler in handlers {
            handler(SyncedCapabilities {
                workspace_id: record.workspace_id.clone(),
                server_id: record.id.clone(),
                instructions: snapshot.server.instructions.clone(),
                tools: snapshot.tools.clone(),
            });
        }
    }

    /// Records a failure of a sync or test (status ERROR, message, error code).
    pub(crate) async fn record_failure(
        &self,
        record: &ServerRecord,
        error: UpstreamError,
    ) -> SyncReport {
        let store = self.store();
        let workspace_id = &record.workspace_id;
        let message = error.to_string();
        let sync = ServerSync {
            sync_status: SyncStatus::Failed,
            tools: None,
            resources: None,
            prompts: None,
            synced_at: chrono::Utc::now(),
            error: Some(message.clone()),
        };
        let mut observation = store
            .get_mcp_observation(workspace_id, &record.id)
            .await
            .ok()
            .flatten()
            .map(|stored| stored.observation)
            .unwrap_or_default();
        observation.error_code = Some(error.code().to_owned());
        let results = [
            store
                .record_server_sync(workspace_id, &record.id, sync)
                .await,
            store
                .record_server_status(
                    workspace_id,
                    &record.id,
                    ServerStatus::Error,
                    Some(&message),
                )
                .await,
            store
                .record_mcp_observation(workspace_id, &record.id, &observation)
                .await,
        ];
        for store_error in results.into_iter().filter_map(Result::err) {
            tracing::warn!(server = %record.name, %store_error, "recording a failed sync failed");
        }
        metrics::cache_refresh(&record.name, error.code());
        if let Ok(mut failures) = self.inner.last_failures.lock() {
            failures.insert(record.id.clone(), error.clone());
        }
        if matches!(error, UpstreamError::SessionUnavailable { .. }) {
            // Nothing was attempted (the server's last start failed moments ago, and that
            // failure was logged): not a new event.
            tracing::debug!(server = %record.name, code = error.code(), message = %switchboard_core::log_text(&message), "capability sync skipped: the server is in error");
        } else {
            tracing::warn!(server = %record.name, code = error.code(), message = %switchboard_core::log_text(&message), "capability sync failed");
        }
        SyncReport {
            state: if error.code() == "needs_auth" {
                CapabilityState::NeedsAuth
            } else {
                CapabilityState::Error
            },
            tool_count: cache_len(&record.tools_cache),
            resource_count: cache_len(&record.resources_cache),
            prompt_count: cache_len(&record.prompts_cache),
            error: Some(error),
        }
    }

    /// The stored error code of the server's last failure.
    pub(crate) async fn error_code(&self, record: &ServerRecord) -> Option<String> {
        self.last_failure(record).await.map(|(code, _)| code)
    }

    /// The stored error code of the server's last failure, and when it was seen.
    pub(crate) async fn last_failure(
        &self,
        record: &ServerRecord,
    ) -> Option<(String, chrono::DateTime<chrono::Utc>)> {
        let stored = self
            .store()
            .get_mcp_observation(&record.workspace_id, &record.id)
            .await
            .ok()
            .flatten()?;
        Some((stored.observation.error_code?, stored.observed_at))
    }

    fn sync_lock(&self, server_id: &ServerId) -> std::sync::Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.inner.sync_locks.lock_unpoisoned();
        locks.entry(server_id.clone()).or_default().clone()
    }

    pub(crate) fn mark_syncing(&self, server_id: &ServerId, syncing: bool) {
        let mut running = self.inner.syncing.lock_unpoisoned();
        if syncing {
            running
                .entry(server_id.clone())
                .or_insert_with(chrono::Utc::now);
        } else {
            running.remove(server_id);
        }
    }

    pub(crate) fn is_syncing(&self, server_id: &ServerId) -> bool {
        self.syncing_since(server_id).is_some()
    }

    /// When the sync running for `server_id` began, if one runs.
    pub(crate) fn syncing_since(
        &self,
        server_id: &ServerId,
    ) -> Option<chrono::DateTime<chrono::Utc>> {
        self.inner.syncing.lock_unpoisoned().get(server_id).copied()
    }
}

pub(crate) fn cache_len(cache: &Option<serde_json::Value>) -> usize {
    cache
        .as_ref()
        .and_then(|value| value.as_array())
        .map_or(0, Vec::len)
}

/// The report of a successful sync: EMPTY when the server offers nothing at all.
fn success_report(snapshot: &CapabilitySnapshot) -> SyncReport {
    let nothing =
        snapshot.tools.is_empty() && snapshot.resources.is_empty() && snapshot.prompts.is_empty();
    SyncReport {
        state: if nothing {
            CapabilityState::Empty
        } else {
            CapabilityState::Synced
        },
        tool_count: snapshot.tools.len(),
        resource_count: snapshot.resources.len(),
        prompt_count: snapshot.prompts.len(),
        error: None,
    }
}
