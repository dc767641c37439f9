//! [`KnowledgeGraphService`]: what the application holds to serve and administer the knowledge
//! graph — the workspace graphs (stored in the store), the `[kg]` settings, the token verifier —
//! plus the start-up steps: loading the sample dataset and registering the endpoint as the
//! default workspace's upstream `kg`.

use crate::auth::TokenVerifier;
use crate::config::KgConfig;
use crate::endpoint::KgEndpoint;
use crate::graphs::{GraphError, KnowledgeGraphs};
use crate::store_adapter::{StoreGraphPersistence, StoreTokenVerifier};
use axum::Router;
use chrono::Utc;
use serde_json::Value;
use std::sync::Arc;
use switchboard_core::{InvalidSetting, SessionScope, TransportKind, WorkspaceId};
use switchboard_store::{NewServer, ServerConnectionConfig, Store, StoreError};
use tokio_util::sync::CancellationToken;

/// Name of the upstream under which the chat reaches our own endpoint.
pub const KG_UPSTREAM_NAME: &str = "kg";
/// Key set to `true` in the `kg` upstream's connection config: the server is Switchboard's own
/// knowledge-graph endpoint, the only upstream a user's token may be forwarded to.
pub const OWN_KG_ENDPOINT_MARKER: &str = "switchboard_own_kg_endpoint";

#[derive(Clone)]
pub struct KnowledgeGraphService {
    graphs: KnowledgeGraphs,
    config: Arc<KgConfig>,
    verifier: Arc<dyn TokenVerifier>,
    /// Where the sample dataset goes, and what requests without a token see when anonymous
    /// scopes are configured.
    default_workspace: Option<WorkspaceId>,
}

impl std::fmt::Debug for KnowledgeGraphService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeGraphService")
            .field("config", &self.config)
            .field("default_workspace", &self.default_workspace)
            .finish_non_exhaustive()
    }
}

impl KnowledgeGraphService {
    /// Graphs and tokens from `store`; checks `config`.
    pub fn for_store(
        store: Store,
        config: KgConfig,
        default_workspace: Option<WorkspaceId>,
    ) -> Result<Self, InvalidSetting> {
        let graphs = KnowledgeGraphs::new(
            Arc::new(StoreGraphPersistence(store.clone())),
            config.cache_lifetimes(),
        );
        // Replicas on PostgreSQL: another one's revocation reaches this endpoint's token cache.
        if tokio::runtime::Handle::try_current().is_ok() {
            store.follow_revocations();
        }
        Self::new(
            graphs,
            Arc::new(StoreTokenVerifier(store)),
            config,
            default_workspace,
        )
    }

    /// `default_workspace` receives the sample dataset and serves requests without a token
    /// when anonymous scopes are configured (which then require it).
    pub fn new(
        graphs: KnowledgeGraphs,
        verifier: Arc<dyn TokenVerifier>,
        config: KgConfig,
        default_workspace: Option<WorkspaceId>,
    ) -> Result<Self, InvalidSetting> {
        // Building the endpoint once checks everything serving will need.
        KgEndpoint::new(
            &config,
            verifier.clone(),
            graphs.clone(),
            default_workspace.clone(),
            CancellationToken::new(),
        )?;
        Ok(Self {
            graphs,
            config: Arc::new(config),
            verifier,
            default_workspace,
        })
    }

    pub fn graphs(&self) -> &KnowledgeGraphs {
        &self.graphs
    }

    pub fn config(&self) -> &KgConfig {
        &self.config
    }

    pub fn default_workspace(&self) -> Option<&WorkspaceId> {
        self.default_workspace.as_ref()
    }

    /// The `/mcp` and `/mcp/rpc` routes. Call inside the Tokio runtime.
    pub fn router<S: Clone + Send + Sync + 'static>(
        &self,
        shutdown: CancellationToken,
    ) -> Router<S> {
        KgEndpoint::new(
            &self.config,
            self.verifier.clone(),
            self.graphs.clone(),
            self.default_workspace.clone(),
            shutdown,
        )
        .expect("the [kg] settings were checked when the service was built")
        .into_router()
    }

    /// The gateway's routes (`/gateway/mcp`, `/gateway/buds/{bud}/mcp`, `/gateway/servers/{server}/mcp`) over `backend`, with
    /// `/mcp`'s hosts, origins, token verification and limits. Call inside the Tokio runtime.
    pub fn gateway_router<S: Clone + Send + Sync + 'static>(
        &self,
        backend: Arc<dyn crate::gateway::GatewayBackend>,
        shutdown: CancellationToken,
    ) -> Router<S> {
        let settings =
            crate::endpoint::gateway_http_settings(&self.config, self.verifier.clone(), shutdown)
                .expect("the [kg] settings were checked when the service was built");
        crate::gateway::gateway_router(backend, settings, self.config.gateway_page_size)
    }

    /// First start: loads the sample dataset into the default workspace when
    /// `load_sample_dataset` is on and that workspace has no graph. Returns whether it did.
    pub async fn load_sample_if_configured(&self) -> Result<bool, GraphError> {
        match &self.default_workspace {
            Some(workspace) if self.config.load_sample_dataset => {
                self.graphs
                    .load_sample_if_empty(workspace, Utc::now())
                    .await
            }
            _ => Ok(false),
        }
    }
}

/// Registers our own endpoint (`url`, e.g. `http://127.0.0.1:8080/mcp`) as upstream
/// [`KG_UPSTREAM_NAME`] of `workspace_id`, with per-user sessions (a session is bound to the
/// token that opened it) and the [`OWN_KG_ENDPOINT_MARKER`]. Does nothing when the workspace
/// already has an upstream of that name. Returns whether it registered one.
pub async fn register_kg_upstream(
    store: &Store,
    workspace_id: &WorkspaceId,
    url: &str,
) -> Result<bool, StoreError> {
    if store
        .find_server_by_name(workspace_id, KG_UPSTREAM_NAME)
        .await?
        .is_some()
    {
        return Ok(false);
    }
    let mut connection = ServerConnectionConfig {
        session_scope: SessionScope::PerUser,
        ..ServerConnectionConfig::default()
    };
    connection
        .extra
        .insert(OWN_KG_ENDPOINT_MARKER.to_owned(), Value::Bool(true));
    let server = NewServer {
        connection,
        ..NewServer::remote(KG_UPSTREAM_NAME, TransportKind::StreamableHttp, url)
    };
    match store.create_server(workspace_id, server).await {
        Ok(_) => Ok(true),
        Err(StoreError::UniqueViolation { .. }) => Ok(false),
        Err(error) => Err(error),
    }
}
