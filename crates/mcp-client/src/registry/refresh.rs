//! Keeping caches fresh without anyone asking: shortly after start-up and then every
//! `capability_refresh_interval_secs`, each active server whose cache is stale (or never
//! filled, or whose last sync failed for a reason that may pass) is synced again, a few at a
//! time. Servers that refused credentials wait for a configuration
//! change; inactive servers are left alone.

use super::McpRegistry;
use super::state::{CapabilityState, capability_state};
use futures::StreamExt;
use switchboard_store::ServerRecord;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const PARALLEL_SYNCS: usize = 4;
const STARTUP_DELAY: std::time::Duration = std::time::Duration::from_secs(2);

impl McpRegistry {
    /// Starts the periodic refresh; it stops on `shutdown` or [`McpRegistry::shutdown`].
    pub fn spawn_background_refresh(&self, shutdown: CancellationToken) -> JoinHandle<()> {
        let registry = self.clone();
        let stop = self.inner.background.clone();
        tokio::spawn(async move {
            let period = registry.client().config().capability_refresh_interval();
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
        let state = capability_state(
            record,
            code.as_deref(),
            self.is_syncing(&record.id),
            chrono::Utc::now(),
            self.client().config().capability_cache_ttl(),
        );
        matches!(
            state,
            CapabilityState::Stale | CapabilityState::Error | CapabilityState::NeverSynced
        )
    }
}
