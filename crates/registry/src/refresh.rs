//! Keeping caches fresh without anyone asking: shortly after start-up and then periodically,
//! each active server whose cache will be out of date before the pass after next (or was
//! never filled, or whose last sync failed for a reason that may pass) is synced again, a few
//! at a time. Servers that refused credentials wait for a configuration change; inactive
//! servers are left alone.
//!
//! The refresh runs ahead of expiry: a healthy server must never show "out of date" between
//! two passes. The period is `capability_refresh_interval_secs`, at most a third of the cache
//! lifetime, and a cache is refreshed once it is older than the lifetime minus two periods (and
//! than a third of the lifetime) — so the pass that refreshes it starts at least one period
//! before it would expire, leaving that period for the sync itself.

use super::ServerRegistry;
use super::state::{CapabilityState, capability_state};
use futures::StreamExt;
use std::time::Duration;
use switchboard_store::ServerRecord;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const PARALLEL_SYNCS: usize = 4;
const STARTUP_DELAY: Duration = Duration::from_secs(2);

impl ServerRegistry {
    /// Starts the periodic refresh; it stops on `shutdown` or [`ServerRegistry::shutdown`].
    pub fn spawn_background_refresh(&self, shutdown: CancellationToken) -> JoinHandle<()> {
        let registry = self.clone();
        let stop = self.inner.background.clone();
        tokio::spawn(async move {
            let period = refresh_period(registry.client().config());
            // A first pass soon after start-up: caches left stale by downtime, servers
            // registered while stopped, and errors that may have passed.
            let first = tokio::time::Instant::now() + period.min(STARTUP_DELAY);
            let mut ticker = tokio::time::interval_at(first, period);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = ticker.tick() => {
                        registry.refresh_stale().await;
                    }
                    () = shutdown.cancelled() => return,
                    () = stop.cancelled() => return,
                }
            }
        })
    }

    /// One pass: syncs every active server that needs it. Returns how many were synced.
    pub async fn refresh_stale(&self) -> usize {
        let workspaces = match self.store().list_workspaces().await {
            Ok(workspaces) => workspaces,
            Err(error) => {
                tracing::warn!(%error, "background refresh: listing workspaces failed");
                return 0;
            }
        };
        let mut due: Vec<ServerRecord> = Vec::new();
        for workspace in workspaces {
            let Ok(servers) = self.store().list_servers(&workspace.id).await else {
                continue;
            };
            let candidates = servers.into_iter().filter(|record| record.is_active);
            for record in candidates {
                if self.needs_background_refresh(&record).await {
                    due.push(record);
                }
            }
        }
        let count = due.len();
        futures::stream::iter(due)
            .for_each_concurrent(PARALLEL_SYNCS, |record| async move {
                self.sync_record(&record).await;
            })
            .await;
        count
    }

    async fn needs_background_refresh(&self, record: &ServerRecord) -> bool {
        let code = self.error_code(record).await;
        let config = self.client().config();
        let ttl = config.capability_cache_ttl();
        let now = chrono::Utc::now();
        let state = capability_state(
            record,
            code.as_deref(),
            self.is_syncing(&record.id),
            now,
            ttl,
        );
        match state {
            CapabilityState::Stale | CapabilityState::Error | CapabilityState::NeverSynced => true,
            CapabilityState::Synced => {
                let refresh_after = ttl.saturating_sub(refresh_period(config) * 2).max(ttl / 3);
                record.last_synced_at.is_none_or(|synced_at| {
                    now.signed_duration_since(synced_at)
                        .to_std()
                        .unwrap_or_default()
                        >= refresh_after
                })
            }
            _ => false,
        }
    }
}

/// The background pass's period: the configured interval, at most a third of the cache
/// lifetime (and at least a second), so a cache is refreshed before it expires.
pub(crate) fn refresh_period(config: &switchboard_mcp_client::McpClientConfig) -> Duration {
    config
        .capability_refresh_interval()
        .min(config.capability_cache_ttl() / 3)
        .max(Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_period_leaves_room_to_refresh_before_expiry() {
        let config = |ttl, interval| switchboard_mcp_client::McpClientConfig {
            capability_cache_ttl_secs: ttl,
            capability_refresh_interval_secs: interval,
            ..switchboard_mcp_client::McpClientConfig::default()
        };
        assert_eq!(refresh_period(&config(300, 300)), Duration::from_secs(100));
        assert_eq!(refresh_period(&config(300, 60)), Duration::from_secs(60));
        assert_eq!(refresh_period(&config(1, 1)), Duration::from_secs(1));
    }
}
