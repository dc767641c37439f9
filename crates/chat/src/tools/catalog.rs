//! [`McpTools`]: the tools one turn offers and how their calls reach `mcp-client`.
//!
//! For each resolved server the catalog comes from the store's cached tool list (enabled tools
//! only, filtered by the conversation's configuration); a server that was never synced is
//! listed once, on demand, and the result stored. Ephemeral servers are listed live (cached per
//! URL). A server that cannot be listed is reported in `unavailable` and the turn goes on
//! without it. Names follow `mcp-client`'s [`ToolCatalog`] (`server__tool`, deterministic
//! order, reverse routing).

use super::ephemeral::EphemeralToolCache;
use super::upstream::{OwnEndpoints, UserCredential, upstream_for_record};
use crate::events::{OfferedTool, UnavailableServer};
use crate::gate::GateTarget;
use crate::mcp_config::ResolvedMcpConfig;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use switchboard_core::{Principal, ServerId, ToolDefinition};
use switchboard_mcp_client::{
    CallContext, Caller, CatalogServer, McpClient, ToolCatalog, ToolResult, ToolRoute,
    UpstreamError, UpstreamServer,
};
use switchboard_store::{ServerRecord, ServerSync, Store, SyncStatus};

/// Reaches MCP servers for the chat engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct McpTools {
    client: McpClient,
    store: Store,
    own_endpoints: OwnEndpoints,
    ephemeral_cache: Arc<EphemeralToolCache>,
}

/// Where a catalog entry's calls go.
#[derive(Clone, Debug)]
pub struct CallTarget {
    pub upstream: UpstreamServer,
    pub gate_target: GateTarget,
    /// The registered server's id (`None` for an ephemeral server).
    pub registered_server_id: Option<ServerId>,
}

/// The tools of one turn.
#[derive(Clone, Debug, Default)]
pub struct TurnTools {
    pub catalog: ToolCatalog,
    targets: HashMap<ServerId, CallTarget>,
    pub unavailable: Vec<UnavailableServer>,
}

impl TurnTools {
    /// The route and target behind a name the model used.
    pub fn lookup(&self, name: &str) -> Option<(&ToolRoute, &CallTarget)> {
        let route = self.catalog.route(name)?;
        let target = self.targets.get(&route.server_id)?;
        Some((route, target))
    }

    /// What the model is offered, in order, for the `meta` event.
    pub fn offered(&self) -> Vec<OfferedTool> {
        self.catalog
            .specs
            .iter()
            .map(|spec| {
                let route = self.catalog.route(&spec.name);
                OfferedTool {
                    name: spec.name.clone(),
                    server: route
                        .map(|route| route.server_name.clone())
                        .unwrap_or_default(),
                    tool: route
                        .map(|route| route.tool_name.clone())
                        .unwrap_or_else(|| spec.name.clone()),
                }
            })
            .collect()
    }
}

struct ServerTools {
    catalog: Option<CatalogServer>,
    target: Option<CallTarget>,
    problem: Option<UnavailableServer>,
}

impl McpTools {
    pub fn new(
        client: McpClient,
        store: Store,
        own_endpoints: OwnEndpoints,
        ephemeral_cache_ttl: std::time::Duration,
    ) -> Self {
        Self {
            client,
            store,
            own_endpoints,
            ephemeral_cache: Arc::new(EphemeralToolCache::new(ephemeral_cache_ttl)),
        }
    }

    pub fn client(&self) -> &McpClient {
        &self.client
    }

    /// Builds the turn's catalog from `resolved` servers and the request's `ephemeral` ones.
    pub async fn for_turn(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        caller: &Caller,
        resolved: &ResolvedMcpConfig,
        ephemeral: &[UpstreamServer],
    ) -> TurnTools {
        let registered = resolved.servers.iter().map(|record| {
            self.registered_server_tools(principal, credential, caller, resolved, record)
        });
        let temporary = ephemeral
            .iter()
            .map(|server| self.ephemeral_server_tools(caller, server));
        let (registered, temporary) = futures::join!(
            futures::future::join_all(registered),
            futures::future::join_all(temporary)
        );
        let mut turn = TurnTools::default();
        let mut servers = Vec::new();
        for loaded in registered.into_iter().chain(temporary) {
            if let Some(problem) = loaded.problem {
                turn.unavailable.push(problem);
            }
            if let (Some(catalog), Some(target)) = (loaded.catalog, loaded.target) {
                turn.targets.insert(catalog.server_id.clone(), target);
                servers.push(catalog);
            }
        }
        turn.catalog = ToolCatalog::build(&servers, &[]);
        turn
    }

    /// Calls `tool` on `target` (arguments are validated against its schema by `mcp-client`).
    pub async fn call(
        &self,
        target: &CallTarget,
        tool: &ToolDefinition,
        arguments: Value,
        context: &CallContext,
    ) -> Result<ToolResult, UpstreamError> {
        self.client
            .call_tool(&target.upstream, tool, arguments, context)
            .await
    }

    async fn registered_server_tools(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        caller: &Caller,
        resolved: &ResolvedMcpConfig,
        record: &ServerRecord,
    ) -> ServerTools {
        let workspace_id = &principal.workspace_id;
        let unavailable = |code: &str, message: String| ServerTools {
            catalog: None,
            target: None,
            problem: Some(UnavailableServer {
                server: record.name.clone(),
                code: code.to_owned(),
                message,
            }),
        };
        let secrets = match self.store.server_secrets(workspace_id, &record.id).await {
            Ok(secrets) => secrets,
            Err(error) => return unavailable("secrets_unreadable", error.to_string()),
        };
        let upstream = match upstream_for_record(record, secrets, &self.own_endpoints, credential) {
            Ok(upstream) => upstream,
            Err(message) => return unavailable("invalid_config", message),
        };
        let mut tools = match self.store.list_server_tools(workspace_id, &record.id).await {
            Ok(tools) => tools,
            Err(error) => return unavailable("store_error", error.to_string()),
        };
        if tools.is_empty() && record.last_synced_at.is_none() {
            match self.sync_now(record, &upstream, caller).await {
                Ok(synced) => tools = synced,
                Err(error) => return unavailable(error.code(), error.to_string()),
            }
        }
        if tools.is_empty() {
            return unavailable("empty", "the server lists no tools".to_owned());
        }
        let definitions: Vec<ToolDefinition> = tools
            .iter()
            .filter(|tool| tool.is_enabled && resolved.allows_tool(&record.id, &tool.name))
            .map(|tool| tool.definition())
            .collect();
        ServerTools {
            catalog: Some(CatalogServer {
                server_id: record.id.clone(),
                server_name: record.name.clone(),
                tools: definitions,
            }),
            target: Some(CallTarget {
                upstream,
                gate_target: GateTarget::Registered {
                    server_id: record.id.clone(),
                    server_name: record.name.clone(),
                },
                registered_server_id: Some(record.id.clone()),
            }),
            problem: None,
        }
    }

    /// Lists a never-synced server now and stores what it offers.
    async fn sync_now(
        &self,
        record: &ServerRecord,
        upstream: &UpstreamServer,
        caller: &Caller,
    ) -> Result<Vec<switchboard_store::ToolRecord>, UpstreamError> {
        let workspace_id = &record.workspace_id;
        match self.client.fetch_capabilities(upstream, caller).await {
            Ok(snapshot) => {
                let stored = self
                    .store
                    .replace_server_tools(workspace_id, &record.id, &snapshot.tools)
                    .await
                    .map_err(|error| {
                        UpstreamError::Protocol(format!("storing the tool list failed: {error}"))
                    })?;
                let sync = ServerSync {
                    sync_status: SyncStatus::Synced,
                    tools: serde_json::to_value(&snapshot.tools).ok(),
                    resources: serde_json::to_value(&snapshot.resources).ok(),
                    prompts: serde_json::to_value(&snapshot.prompts).ok(),
                    synced_at: chrono::Utc::now(),
                    error: None,
                };
                if let Err(error) = self
                    .store
                    .record_server_sync(workspace_id, &record.id, sync)
                    .await
                {
                    tracing::warn!(server = %record.name, %error, "could not record a sync");
                }
                // Approvals pin tool definitions together with the server's instructions.
                if let Err(error) = self
                    .store
                    .record_server_instructions(
                        workspace_id,
                        &record.id,
                        snapshot.server.instructions.as_deref(),
                    )
                    .await
                {
                    tracing::warn!(server = %record.name, %error, "could not record the server's instructions");
                }
                Ok(stored)
            }
            Err(error) => {
                let sync = ServerSync {
                    sync_status: SyncStatus::Failed,
                    tools: None,
                    resources: None,
                    prompts: None,
                    synced_at: chrono::Utc::now(),
                    error: Some(error.to_string()),
                };
                if let Err(store_error) = self
                    .store
                    .record_server_sync(workspace_id, &record.id, sync)
                    .await
                {
                    tracing::warn!(server = %record.name, %store_error, "could not record a failed sync");
                }
                Err(error)
            }
        }
    }

    async fn ephemeral_server_tools(
        &self,
        caller: &Caller,
        server: &UpstreamServer,
    ) -> ServerTools {
        let url = match &server.endpoint {
            switchboard_mcp_client::UpstreamEndpoint::Remote(remote) => remote.url.to_string(),
            switchboard_mcp_client::UpstreamEndpoint::Stdio(_) => String::new(),
        };
        let tools = match self.ephemeral_cache.get(&server.id) {
            Some(tools) => tools,
            None => match self.client.fetch_capabilities(server, caller).await {
                Ok(snapshot) => {
                    self.ephemeral_cache
                        .put(server.id.clone(), snapshot.tools.clone());
                    snapshot.tools
                }
                Err(error) => {
                    return ServerTools {
                        catalog: None,
                        target: None,
                        problem: Some(UnavailableServer {
                            server: server.name.clone(),
                            code: error.code().to_owned(),
                            message: error.to_string(),
                        }),
                    };
                }
            },
        };
        let problem = tools.is_empty().then(|| UnavailableServer {
            server: server.name.clone(),
            code: "empty".to_owned(),
            message: "the server lists no tools".to_owned(),
        });
        ServerTools {
            catalog: Some(CatalogServer {
                server_id: server.id.clone(),
                server_name: server.name.clone(),
                tools,
            }),
            target: Some(CallTarget {
                upstream: server.clone(),
                gate_target: GateTarget::Ephemeral {
                    server_name: server.name.clone(),
                    url,
                },
                registered_server_id: None,
            }),
            problem,
        }
    }
}
