//! The capability state of a registered server, derived from what the store recorded: whether
//! its cached lists may be offered, are out of date, or why they are missing. The same answer
//! is shown in the API, to the UI and to the chat engine — never a silently empty tool list.

use chrono::{DateTime, Utc};
use serde::Serialize;
use std::time::Duration;
use switchboard_store::{ServerRecord, SyncStatus};

/// What is known about a server's tools, resources and prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilityState {
    /// Never listed yet.
    NeverSynced,
    /// A sync is running.
    Syncing,
    /// Listed within the cache lifetime.
    Synced,
    /// Listed, but longer ago than the cache lifetime: refreshed before use.
    Stale,
    /// Listed, and the server offers nothing.
    Empty,
    /// The upstream wants credentials or refused the configured ones.
    NeedsAuth,
    /// The last sync failed; an older cache (if any) is kept and flagged stale.
    Error,
}

impl CapabilityState {
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityState::NeverSynced => "never_synced",
            CapabilityState::Syncing => "syncing",
            CapabilityState::Synced => "synced",
            CapabilityState::Stale => "stale",
            CapabilityState::Empty => "empty",
            CapabilityState::NeedsAuth => "needs_auth",
            CapabilityState::Error => "error",
        }
    }

    /// Whether the cached tools may be offered to an LLM as they are.
    pub fn is_usable(self) -> bool {
        self == CapabilityState::Synced
    }

    /// Whether a refresh should run before the cache is used.
    pub fn wants_refresh(self) -> bool {
        matches!(self, CapabilityState::NeverSynced | CapabilityState::Stale)
    }
}

/// Derives the state. `error_code` is the last failure's `UpstreamError::code()`, if known.
pub fn capability_state(
    record: &ServerRecord,
    error_code: Option<&str>,
    syncing: bool,
    now: DateTime<Utc>,
    ttl: Duration,
) -> CapabilityState {
    if syncing {
        return CapabilityState::Syncing;
    }
    match record.sync_status {
        SyncStatus::NeverSynced => CapabilityState::NeverSynced,
        SyncStatus::Syncing => CapabilityState::Syncing,
        SyncStatus::Failed if error_code == Some("needs_auth") => CapabilityState::NeedsAuth,
        SyncStatus::Failed => CapabilityState::Error,
        SyncStatus::Synced => {
            let lists_nothing = [
                &record.tools_cache,
                &record.resources_cache,
                &record.prompts_cache,
            ]
            .iter()
            .all(|cache| {
                cache
                    .as_ref()
                    .and_then(|value| value.as_array())
                    .is_none_or(Vec::is_empty)
            });
            let age = record.last_synced_at.map(|synced_at| {
                now.signed_duration_since(synced_at)
                    .to_std()
                    .unwrap_or_default()
            });
            if lists_nothing {
                CapabilityState::Empty
            } else if age.is_none_or(|age| age > ttl) {
                CapabilityState::Stale
            } else {
                CapabilityState::Synced
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::{ServerId, SessionScope, TransportKind, WorkspaceId};
    use switchboard_store::{ServerConnectionConfig, ServerSecretsSummary, ServerStatus};

    fn record(
        sync_status: SyncStatus,
        synced_minutes_ago: Option<i64>,
        tools: serde_json::Value,
    ) -> ServerRecord {
        let now = Utc::now();
        ServerRecord {
            id: ServerId::from("s"),
            workspace_id: WorkspaceId::from("w"),
            name: "files".into(),
            transport: TransportKind::Stdio,
            url: None,
            command: Some("npx".into()),
            args: vec![],
            connection: ServerConnectionConfig {
                session_scope: SessionScope::Shared,
                ..ServerConnectionConfig::default()
            },
            secrets: ServerSecretsSummary::default(),
            status: ServerStatus::Connected,
            last_error: None,
            tools_cache: Some(tools),
            resources_cache: Some(json!([])),
            prompts_cache: Some(json!([])),
            last_synced_at: synced_minutes_ago
                .map(|minutes| now - chrono::Duration::minutes(minutes)),
            sync_status,
            version: 1,
            is_active: true,
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn states_follow_the_sync_record_and_the_cache_age() {
        let ttl = Duration::from_secs(300);
        let now = Utc::now();
        let tools = json!([{"name": "read"}]);
        let state = |record: &ServerRecord, code: Option<&str>, syncing: bool| {
            capability_state(record, code, syncing, now, ttl)
        };
        assert_eq!(
            state(
                &record(SyncStatus::Synced, Some(1), tools.clone()),
                None,
                false
            ),
            CapabilityState::Synced
        );
        assert_eq!(
            state(
                &record(SyncStatus::Synced, Some(6), tools.clone()),
                None,
                false
            ),
            CapabilityState::Stale
        );
        assert_eq!(
            state(&record(SyncStatus::Synced, Some(1), json!([])), None, false),
            CapabilityState::Empty
        );
        assert_eq!(
            state(
                &record(SyncStatus::Failed, Some(1), tools.clone()),
                Some("needs_auth"),
                false
            ),
            CapabilityState::NeedsAuth
        );
        assert_eq!(
            state(
                &record(SyncStatus::Failed, Some(1), tools.clone()),
                Some("timeout"),
                false
            ),
            CapabilityState::Error
        );
        assert_eq!(
            state(
                &record(SyncStatus::NeverSynced, None, json!(null)),
                None,
                false
            ),
            CapabilityState::NeverSynced
        );
        assert_eq!(
            state(&record(SyncStatus::Synced, Some(1), tools), None, true),
            CapabilityState::Syncing
        );
        assert!(CapabilityState::Synced.is_usable());
        assert!(!CapabilityState::Stale.is_usable() && CapabilityState::Stale.wants_refresh());
        assert!(!CapabilityState::Error.wants_refresh());
    }
}
