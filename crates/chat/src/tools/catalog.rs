//! [`McpTools`]: the tools one turn offers and how their calls reach `mcp-client`.
//!
//! For each resolved server the enabled tools come from `mcp-client`'s [`ServerRegistry`]
//! (`usable_tools`: refreshed when stale; inactive, `needs_auth`, `empty` or failing servers are
//! reported, never silently empty), filtered by the conversation's configuration. Our own kg
//! endpoint is the exception: the registry cannot list it (it has no user token), so when the
//! chat carries the user's token it is listed with that token, once, when it was never synced.
//! Without a registry (tests of this crate) every server goes that way. Ephemeral servers are
//! listed live (cached per URL). A server that cannot be listed is reported in `unavailable`
//! and the turn goes on without it. Names follow `mcp-client`'s [`ToolCatalog`]
//! (`server__tool`, deterministic order, reverse routing); identical catalogs are shared
//! between turns ([`super::catalog_cache`]), so many open answers do not each hold a copy.

use super::catalog_cache::{CatalogCache, CatalogFingerprint};
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
use switchboard_registry::{CapabilityState, ServerRegistry};
use switchboard_store::{ServerRecord, Store};

/// Reaches MCP servers for the chat engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct McpTools {
    pub(super) client: McpClient,
    pub(super) store: Store,
    registry: Option<ServerRegistry>,
    own_endpoints: OwnEndpoints,
    pub(super) ephemeral_cache: Arc<EphemeralToolCache>,
    catalogs: Arc<CatalogCache>,
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
    /// Shared with other turns that see exactly the same tools.
    pub catalog: Arc<ToolCatalog>,
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

    /// Every server of the turn and where its requests go, ordered by server name.
    pub fn targets(&self) -> Vec<&CallTarget> {
        let mut targets: Vec<&CallTarget> = self.targets.values().collect();
        targets.sort_by(|left, right| left.upstream.name.cmp(&right.upstream.name));
        targets
    }

    /// Where calls to a tool of `server_id` go, when the server is in the turn.
    pub fn target(&self, server_id: &ServerId) -> Option<&CallTarget> {
        self.targets.get(server_id)
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

pub(super) struct ServerTools {
    pub(super) catalog: Option<CatalogServer>,
    /// (tool name, definition hash) of each offered tool, for sharing catalogs.
    pub(super) fingerprint: Vec<(String, String)>,
    pub(super) target: Option<CallTarget>,
    pub(super) problem: Option<UnavailableServer>,
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
            registry: None,
            ephemeral_cache: Arc::new(EphemeralToolCache::new(ephemeral_cache_ttl)),
            catalogs: Arc::new(CatalogCache::default()),
        }
    }

    /// Lists registered servers through `registry` (the process's one registry, so its sync
    /// hooks and state apply).
    pub fn with_registry(mut self, registry: ServerRegistry) -> Self {
        self.registry = Some(registry);
        self
    }

    pub fn client(&self) -> &McpClient {
        &self.client
    }

    /// Closes the sessions this turn's `caller` opened to the request's ephemeral servers: they
    /// live for the request only (their next use, in a later turn, starts a new one).
    pub async fn close_ephemeral_sessions(&self, caller: &Caller, ephemeral: &[UpstreamServer]) {
        futures::future::join_all(
            ephemeral
                .iter()
                .map(|server| self.client.close_session(server, caller)),
        )
        .await;
    }

    /// Whether `record` is this process's own knowledge-graph server (decided by the URL it
    /// is reached at, see [`OwnEndpoints::connection_url`]).
    pub fn is_own_server(&self, record: &ServerRecord) -> bool {
        self.own_endpoints.reaches_own_endpoint(record)
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
        let mut fingerprint = CatalogFingerprint::default();
        for loaded in registered.into_iter().chain(temporary) {
            if let Some(problem) = loaded.problem {
                turn.unavailable.push(problem);
            }
            if let (Some(catalog), Some(target)) = (loaded.catalog, loaded.target) {
                fingerprint.add_server(
                    &catalog.server_id,
                    &catalog.server_name,
                    &loaded.fingerprint,
                );
                turn.targets.insert(catalog.server_id.clone(), target);
                servers.push(catalog);
            }
        }
        turn.catalog = self
            .catalogs
            .get_or_build(fingerprint, || ToolCatalog::build(&servers, &[]));
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
        let first = self
            .client
            .call_tool(&target.upstream, tool, arguments.clone(), context)
            .await;
        if !matches!(first, Err(UpstreamError::AuthRequired { .. })) {
            return first;
        }
        // Refused: the record is read now, for an OAuth server's one refresh and one retry.
        let (Some(registry), Some(server_id)) =
            (self.registry.as_ref(), target.registered_server_id.as_ref())
        else {
            return first;
        };
        let Ok(record) = self
            .store
            .get_server(&target.upstream.workspace_id, server_id)
            .await
        else {
            return first;
        };
        let user = Some(&context.caller.user_id);
        let again = |upstream: UpstreamServer| {
            let arguments = arguments.clone();
            async move {
                self.client
                    .call_tool(&upstream, tool, arguments, context)
                    .await
            }
        };
        registry
            .retry_if_token_refused(&record, &target.upstream, user, first, again)
            .await
            .outcome
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
        let unavailable = |code: &str, message: String| unavailable_server(record, code, message);
        if switchboard_registry::is_per_caller(record) || switchboard_registry::uses_oauth(record) {
            // Built for this person with their own values or OAuth connection (or the shared
            // one), never with the literal references (nor with the chat's token in their
            // place).
            return match self.registry.as_ref() {
                Some(registry) => {
                    self.per_user_server_tools(registry, principal, resolved, record)
                        .await
                }
                None => unavailable(
                    switchboard_registry::NEEDS_USER_CREDENTIALS,
                    "per-user values need the server registry".to_owned(),
                ),
            };
        }
        let own_with_token = credential.is_some() && self.is_own_server(record);
        if let Some(registry) = self.registry.as_ref().filter(|_| !own_with_token) {
            let upstream = match registry.upstream(record).await {
                Ok(upstream) => upstream,
                Err(error) => return unavailable("invalid_config", error.to_string()),
            };
            let mut usable = registry.usable_tools(record).await;
            if let Err(unusable) = &usable
                && unusable.state == CapabilityState::Syncing
            {
                // A sync is running (the server was just added or changed): wait for it
                // rather than answering without the server.
                registry.sync_record(record).await;
                usable = match self
                    .store
                    .get_server(&record.workspace_id, &record.id)
                    .await
                {
                    Ok(fresh) => registry.usable_tools(&fresh).await,
                    Err(error) => return unavailable("store_error", error.to_string()),
                };
            }
            return match usable {
                Ok(tools) => offered_tools(record, resolved, upstream, &tools),
                Err(unusable) => unavailable(&unusable.code, unusable.message),
            };
        }
        let secrets = match self.store.server_secrets(workspace_id, &record.id).await {
            Ok(secrets) => secrets,
            Err(error) => return unavailable("secrets_unreadable", error.to_string()),
        };
        let upstream = match upstream_for_record(record, secrets, &self.own_endpoints, credential) {
            Ok(upstream) => upstream,
            Err(error) => return unavailable("invalid_config", error.to_string()),
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
        let tools: Vec<_> = tools.into_iter().filter(|tool| tool.is_enabled).collect();
        offered_tools(record, resolved, upstream, &tools)
    }
}

/// A server left out of the turn, with why.
pub(super) fn unavailable_server(
    record: &ServerRecord,
    code: &str,
    message: String,
) -> ServerTools {
    ServerTools {
        catalog: None,
        fingerprint: Vec::new(),
        target: None,
        problem: Some(UnavailableServer {
            server: record.name.clone(),
            server_id: Some(record.id.clone()),
            code: code.to_owned(),
            message,
        }),
    }
}

/// The offer of one registered server: its enabled `tools` the conversation allows.
pub(super) fn offered_tools(
    record: &ServerRecord,
    resolved: &ResolvedMcpConfig,
    upstream: UpstreamServer,
    tools: &[switchboard_store::ToolRecord],
) -> ServerTools {
    let allowed: Vec<&switchboard_store::ToolRecord> = tools
        .iter()
        .filter(|tool| resolved.allows_tool(&record.id, &tool.name))
        .collect();
    ServerTools {
        catalog: Some(CatalogServer {
            server_id: record.id.clone(),
            server_name: record.name.clone(),
            tools: allowed.iter().map(|tool| tool.definition()).collect(),
        }),
        fingerprint: allowed
            .iter()
            .map(|tool| (tool.name.clone(), tool.definition_hash.clone()))
            .collect(),
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
