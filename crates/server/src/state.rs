//! `AppState`: what every handler can reach. Cheap to clone (handles and `Arc`s only).
//! Areas add their own handle here (chat engine, MCP registry…) with a field and a `with_…`
//! builder method, so constructing a state for tests stays one line.

use crate::config::ServerConfig;
use crate::readiness::ReadinessCheck;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService};
use switchboard_store::Store;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct AppState {
    /// Persistence; every query is scoped by the caller's workspace.
    pub store: Store,
    pub config: Arc<ServerConfig>,
    /// Renders `/metrics`; the recorder behind it is process-global.
    pub metrics: PrometheusHandle,
    /// Cancelled when shutdown starts: long-lived work (SSE streams, MCP sessions, background
    /// tasks) selects on it and winds down so in-flight requests can finish within the grace.
    pub shutdown: CancellationToken,
    /// Extra checks `/readyz` runs after pinging the store.
    pub readiness_checks: Arc<Vec<Arc<dyn ReadinessCheck>>>,
    /// The knowledge graphs, served at `/mcp` and administered under `/api/kg`.
    pub kg: KnowledgeGraphService,
}

impl AppState {
    pub fn new(store: Store, config: ServerConfig) -> Self {
        let store_for_kg = store.clone();
        Self {
            store,
            config: Arc::new(config),
            metrics: crate::metrics::prometheus_handle(),
            shutdown: CancellationToken::new(),
            readiness_checks: Arc::new(Vec::new()),
            kg: KnowledgeGraphService::for_store(store_for_kg, KgConfig::default(), None)
                .expect("the default [kg] settings are valid"),
        }
    }

    /// Uses `kg` (the `[kg]` settings and the default workspace) instead of the defaults.
    pub fn with_knowledge_graph(mut self, kg: KnowledgeGraphService) -> Self {
        self.kg = kg;
        self
    }

    /// Uses `token` as the shutdown signal, so the binary can share one token between the
    /// server and the background tasks it starts.
    pub fn with_shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    pub fn with_readiness_check(mut self, check: Arc<dyn ReadinessCheck>) -> Self {
        let mut checks = self.readiness_checks.as_ref().clone();
        checks.push(check);
        self.readiness_checks = Arc::new(checks);
        self
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.config)
            .field(
                "readiness_checks",
                &self
                    .readiness_checks
                    .iter()
                    .map(|check| check.name())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}
