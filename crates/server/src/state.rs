//! `AppState`: what every handler can reach. Cheap to clone (handles and `Arc`s only).
//! Areas add their own handle here (chat engine, server registry…) with a field and a `with_…`
//! builder method, so constructing a state for tests stays one line.

use crate::config::ServerConfig;
use crate::directory::McpDirectory;
use crate::gateway::changes::GatewayChanges;
use crate::gateway::health::{GatewayHealth, GatewayReadiness};
use crate::oidc::OidcService;
use crate::readiness::{DrainReadiness, ReadinessCheck};
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;
use switchboard_approvals::{ApprovalConfig, Approvals};
use switchboard_chat::ChatService;
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService};
use switchboard_registry::ServerRegistry;
use switchboard_registry::oauth::OAuthService;
use switchboard_store::Store;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct AppState {
    /// Persistence; every query is scoped by the caller's workspace.
    pub store: Store,
    pub config: Arc<ServerConfig>,
    /// Renders `/metrics`; the recorder behind it is process-global.
    pub metrics: PrometheusHandle,
    /// Cancelled when phase 1 of a shutdown (the drain) starts: `/readyz` reports DOWN and
    /// new answers are refused, while answers in flight, `/mcp` and MCP sessions keep working.
    pub draining: CancellationToken,
    /// Cancel to end the drain at once (the binary does on a second SIGINT/SIGTERM): what is
    /// still running is cancelled and saved as at the end of the grace.
    pub end_drain: CancellationToken,
    /// Cancelled at phase 2 of a shutdown (the drain is over or its grace ran out): long-lived
    /// work (SSE streams, `/mcp` sessions, background tasks) selects on it and winds down.
    pub shutdown: CancellationToken,
    /// Extra checks `/readyz` runs after pinging the store.
    pub readiness_checks: Arc<Vec<Arc<dyn ReadinessCheck>>>,
    /// The chat engine behind `/chat/*` and `/api/buds` (503 when absent).
    pub chat: Option<ChatService>,
    /// The knowledge graphs, served at `/mcp` and administered under `/api/kg`.
    pub kg: KnowledgeGraphService,
    /// Approvals, elicitation, policies and the audit log (`/chat/approvals`,
    /// `/chat/elicitations`, `/api/mcp/.../policy`, `/api/audit`). The chat engine's gate and
    /// the MCP client's elicitation responder must come from this same instance.
    pub approvals: Approvals,
    /// The MCP server registry behind `/api/mcp/servers` (503 when absent).
    pub mcp: Option<ServerRegistry>,
    /// OAuth connections to remote MCP servers (`…/oauth/authorize`, `/oauth/callback`; 503
    /// or an error page when absent).
    pub oauth: Option<OAuthService>,
    /// Single sign-on with the `[oidc]` provider (`/auth/oidc/*`; 404 there when absent).
    pub oidc: Option<Arc<OidcService>>,
    /// The MCP registry people browse and add servers from (`[registry]`; the
    /// `/api/mcp/registry/*` routes answer 404 when absent).
    pub directory: Option<Arc<McpDirectory>>,
    /// Moves when what a gateway client is offered may have changed (the registry's syncs,
    /// API changes to servers, buds and rules): the gateway's cache and `list_changed`.
    pub gateway_changes: GatewayChanges,
    /// Whether the gateway can build its offers: check `gateway` of `/readyz`, registered
    /// with the chat engine (the gateway is served only with one).
    pub gateway_health: GatewayHealth,
    /// The origin the MCP Apps sandbox listener is reached at (`http://127.0.0.1:8081`), once
    /// it is serving; `None`: apps are not served (the app route answers 503).
    pub apps_origin: Option<Arc<str>>,
}

impl AppState {
    pub fn new(store: Store, config: ServerConfig) -> Self {
        let store_for_kg = store.clone();
        let approvals = Approvals::new(store.clone(), ApprovalConfig::default())
            .expect("the default [approval] settings are valid");
        let draining = CancellationToken::new();
        let not_draining: Arc<dyn ReadinessCheck> = Arc::new(DrainReadiness::new(draining.clone()));
        Self {
            store,
            config: Arc::new(config),
            metrics: crate::metrics::prometheus_handle(),
            draining,
            end_drain: CancellationToken::new(),
            shutdown: CancellationToken::new(),
            readiness_checks: Arc::new(vec![not_draining]),
            mcp: None,
            oauth: None,
            oidc: None,
            directory: None,
            apps_origin: None,
            chat: None,
            kg: KnowledgeGraphService::for_store(store_for_kg, KgConfig::default(), None)
                .expect("the default [kg] settings are valid"),
            approvals,
            gateway_changes: GatewayChanges::default(),
            gateway_health: GatewayHealth::default(),
        }
    }

    /// Serves MCP Apps from `origin` (the apps listener's, see [`crate::apps`]).
    pub fn with_apps_origin(mut self, origin: impl Into<Arc<str>>) -> Self {
        self.apps_origin = Some(origin.into());
        self
    }

    /// Uses `kg` (the `[kg]` settings and the default workspace) instead of the defaults.
    pub fn with_knowledge_graph(mut self, kg: KnowledgeGraphService) -> Self {
        self.kg = kg;
        self
    }

    /// Serves the chat API and the MCP gateway with `chat` (and reports the gateway's
    /// health in `/readyz`).
    pub fn with_chat(mut self, chat: ChatService) -> Self {
        let first = self.chat.replace(chat).is_none();
        if first {
            let check = GatewayReadiness::new(self.gateway_health.clone());
            self = self.with_readiness_check(Arc::new(check));
        }
        self
    }

    /// Uses `approvals` (its `[approval]` settings; the one whose gate the chat engine uses).
    pub fn with_approvals(mut self, approvals: Approvals) -> Self {
        self.approvals = approvals;
        self
    }

    /// Serves the MCP server registry API with `registry` (whose syncs move
    /// [`Self::gateway_changes`]).
    pub fn with_mcp_registry(mut self, registry: ServerRegistry) -> Self {
        registry.on_synced(self.gateway_changes.synced_handler());
        self.mcp = Some(registry);
        self
    }

    /// Serves the OAuth connection routes with `oauth`.
    pub fn with_oauth(mut self, oauth: OAuthService) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Offers single sign-on with `oidc`.
    pub fn with_oidc(mut self, oidc: OidcService) -> Self {
        self.oidc = Some(Arc::new(oidc));
        self
    }

    /// Browses and adds servers from the MCP registry `directory`.
    pub fn with_directory(mut self, directory: McpDirectory) -> Self {
        self.directory = Some(Arc::new(directory));
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
