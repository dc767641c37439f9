//! [`ChatGateway`]: the gateway's backend (`mcp-server`'s `GatewayBackend` seam) over the chat
//! engine and the approvals module, so a gateway client gets exactly what a chat turn gets and
//! nothing else: the turn's catalog (`chat`: registry, per-user sessions and credentials,
//! `server__tool` names, descriptions), minus the tools an admin rule sets to `ALWAYS_DENY`
//! (`approvals::Approvals::admin_policy`, the gate's own rule lookup), and each call through
//! `ChatService::run_gateway_call` (recorded, the approval gate, dispatched over the shared
//! sessions, audited with origin `gateway`).
//!
//! A call's client takes part in it ([`client_link`]): its user approves an `ASK_USER` call
//! through elicitation when it declared that capability (else a person does, in Switchboard's
//! approvals), and it hears the upstream's progress under its own `progressToken`.
//!
//! What a caller is offered is built once and cached ([`offers`]) until [`changes`] says it
//! may have changed; each call is counted and timed per server and tool ([`metrics`]); whether
//! offers can be built is check `gateway` of `/readyz` ([`health`]).
//!
//! At `/gateway/servers/{server}/mcp` the offer is that one server's, as if it were the
//! workspace's only server, under its own tool names, URIs and prompt names
//! ([`GatewayNaming::Original`]); everything else (rules, approvals, audit, limits) is the same.
//!
//! Mounted by [`crate::app`] at `/gateway/mcp`, `/gateway/buds/{bud}/mcp` and
//! `/gateway/servers/{server}/mcp` when the chat engine is configured.

pub mod changes;
mod client_link;
pub mod health;
mod items;
pub(crate) mod metrics;
mod offers;
mod resource_watch;

use async_trait::async_trait;
use changes::GatewayChanges;
use health::GatewayHealth;
use offers::{Offer, OfferCache, OfferKey};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;
use switchboard_approvals::Approvals;
use switchboard_chat::tools::TurnTools;
use switchboard_chat::{
    ChatError, ChatService, ClientApprover, GatewayCall, GatewayNaming, GatewayOutcome,
    UserCredential,
};
use switchboard_core::{ApprovalPolicy, ToolSpec};
use switchboard_mcp_client::{ClientLink, ToolResult};
use switchboard_mcp_server::gateway::{
    GatewayBackend, GatewayError, GatewayList, GatewayRequest, GatewayToolCall, ResourceUpdates,
};
use switchboard_store::BudRecord;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

#[derive(Clone, Debug)]
pub struct ChatGateway {
    chat: ChatService,
    approvals: Approvals,
    changes: GatewayChanges,
    offers: Arc<OfferCache>,
    health: GatewayHealth,
}

impl ChatGateway {
    pub fn new(
        chat: ChatService,
        approvals: Approvals,
        changes: GatewayChanges,
        health: GatewayHealth,
    ) -> Self {
        Self {
            chat,
            approvals,
            changes,
            offers: Arc::default(),
            health,
        }
    }

    /// What `request`'s caller is offered: cached, or built now.
    async fn offer(&self, request: &GatewayRequest) -> Result<Arc<Offer>, GatewayError> {
        let principal = &request.caller.principal;
        let key = OfferKey {
            workspace_id: principal.workspace_id.clone(),
            user_id: principal.user_id.clone(),
            bearer_token: request.bearer_token.clone(),
            bud: request.bud.clone(),
            server: request.server.clone(),
        };
        if let Some(offer) = self.offers.get(&key, &self.changes) {
            return Ok(offer);
        }
        let generation = self.changes.generation();
        let offer = match self.build_offer(request).await {
            Ok(offer) => Arc::new(offer),
            Err(error) => {
                if let GatewayError::Internal(reason) = &error {
                    self.health.build_failed(reason);
                }
                return Err(error);
            }
        };
        metrics::catalog_built();
        let cached = self.offers.put(key, generation, offer.clone());
        self.health.built(cached);
        Ok(offer)
    }

    /// The turn's catalog for the caller and bud (or the one server of the path), and which
    /// of its tools rules refuse.
    async fn build_offer(&self, request: &GatewayRequest) -> Result<Offer, GatewayError> {
        let principal = &request.caller.principal;
        let bud = match &request.bud {
            Some(reference) => match self.chat.gateway_bud(principal, reference).await {
                Ok(bud) => Some(bud),
                Err(ChatError::NotFound(_)) => {
                    return Err(GatewayError::UnknownBud(reference.clone()));
                }
                Err(error) => return Err(internal(error)),
            },
            None => None,
        };
        let (tools, naming) = self.offered_tools(request, bud.as_ref()).await?;
        let mut listed = Vec::with_capacity(tools.catalog.specs.len());
        let mut denied = HashSet::new();
        let mut catalog_names = HashMap::new();
        for spec in &tools.catalog.specs {
            let Some((route, target)) = tools.lookup(&spec.name) else {
                continue;
            };
            // Ephemeral servers have no rules; registered ones may be refused outright.
            let policy = match &target.registered_server_id {
                Some(server_id) => self
                    .approvals
                    .admin_policy(
                        &principal.workspace_id,
                        bud.as_ref().map(|bud| &bud.id),
                        server_id,
                        &route.tool_name,
                    )
                    .await
                    .map_err(internal)?,
                None => ApprovalPolicy::AskUser,
            };
            if policy == ApprovalPolicy::AlwaysDeny {
                denied.insert(spec.name.clone());
            } else if naming == GatewayNaming::Original {
                catalog_names.insert(route.tool_name.clone(), spec.name.clone());
                listed.push(ToolSpec {
                    name: route.tool_name.clone(),
                    ..spec.clone()
                });
            } else {
                listed.push(spec.clone());
            }
        }
        Ok(Offer {
            tools,
            bud,
            naming,
            listed,
            denied,
            catalog_names,
            resources: Default::default(),
            resource_templates: Default::default(),
            prompts: Default::default(),
        })
    }

    /// The tools of the bud (or the workspace), or of the one server the path names.
    async fn offered_tools(
        &self,
        request: &GatewayRequest,
        bud: Option<&BudRecord>,
    ) -> Result<(TurnTools, GatewayNaming), GatewayError> {
        let principal = &request.caller.principal;
        let credential = request.bearer_token.as_deref().map(UserCredential::new);
        let Some(reference) = &request.server else {
            let tools = self
                .chat
                .gateway_tools(principal, credential.as_ref(), bud)
                .await
                .map_err(internal)?;
            return Ok((tools, GatewayNaming::PerServer));
        };
        let server = match self.chat.gateway_server(principal, reference).await {
            Ok(server) => server,
            Err(ChatError::NotFound(_)) => {
                return Err(GatewayError::UnknownServer(reference.clone()));
            }
            Err(error) => return Err(internal(error)),
        };
        let tools = self
            .chat
            .gateway_server_tools(principal, credential.as_ref(), &server)
            .await
            .map_err(internal)?;
        Ok((tools, GatewayNaming::Original))
    }

    /// Runs an offered call and turns its outcome into an MCP result.
    async fn run_call(
        &self,
        request: &GatewayRequest,
        offer: &Offer,
        call: GatewayToolCall,
    ) -> Result<ToolResult, GatewayError> {
        let principal = &request.caller.principal;
        let server_name = offer
            .tools
            .lookup(&call.name)
            .map(|(route, _)| route.server_name.clone())
            .unwrap_or_default();
        let relay = (call.progress.is_some() || call.client_link.is_some()).then(|| {
            client_link::CallRelay::start(client_link::RelayTargets {
                progress: call.progress,
                link: call.client_link.clone(),
                server_name,
            })
        });
        let forwarding = call.client_link.map(|link| {
            Arc::new(client_link::ForwardingClient {
                link,
                audit: self.approvals.audit().clone(),
                principal: principal.clone(),
                client_name: request.client_name.clone(),
            }) as Arc<dyn ClientLink>
        });
        let conversation_id = self
            .chat
            .gateway_conversation(
                principal,
                offer.bud.as_ref().map(|bud| &bud.id),
                &request.client_name,
            )
            .await
            .map_err(internal)?;
        let outcome = self
            .chat
            .run_gateway_call(GatewayCall {
                principal,
                conversation_id: &conversation_id,
                tools: &offer.tools,
                name: &call.name,
                arguments: call.arguments,
                request_id: call.request_id,
                client_name: request.client_name.clone(),
                cancellation: call.cancellation,
                client_approver: call.asker.map(|asker| {
                    Arc::new(client_link::ElicitingClient(asker)) as Arc<dyn ClientApprover>
                }),
                events: relay.as_ref().map(|relay| relay.events.clone()),
                client_link: forwarding,
            })
            .await;
        if let Some(relay) = relay {
            relay.finish().await;
        }
        match outcome.map_err(internal)? {
            GatewayOutcome::Answered(result) => Ok(result),
            GatewayOutcome::UnknownTool => Err(GatewayError::UnknownTool(call.name)),
            GatewayOutcome::InvalidArguments(message) => {
                Err(GatewayError::InvalidArguments(message))
            }
            GatewayOutcome::Denied { reason } => Ok(ToolResult::error_text(format!(
                "the call was not allowed: {reason}"
            ))),
            GatewayOutcome::Failed { code, message } => {
                Ok(ToolResult::error_text(format!("{code}: {message}")))
            }
        }
    }
}

#[async_trait]
impl GatewayBackend for ChatGateway {
    async fn list_tools(&self, request: &GatewayRequest) -> Result<Vec<ToolSpec>, GatewayError> {
        Ok(self.offer(request).await?.listed.clone())
    }

    async fn call_tool(
        &self,
        request: &GatewayRequest,
        call: GatewayToolCall,
    ) -> Result<Value, GatewayError> {
        let offer = self.offer(request).await?;
        let Some(catalog_name) = offer.catalog_name(&call.name) else {
            metrics::unknown_tool_called();
            return Err(GatewayError::UnknownTool(call.name));
        };
        let call = GatewayToolCall {
            name: catalog_name,
            ..call
        };
        let called = offer
            .tools
            .lookup(&call.name)
            .map(|(route, _)| (route.server_name.clone(), route.tool_name.clone()))
            .unwrap_or_default();
        let started = Instant::now();
        let result = self.run_call(request, &offer, call).await;
        metrics::call_finished(&called.0, &called.1, &result, started.elapsed());
        serde_json::to_value(result?).map_err(internal)
    }

    fn serves_resources_and_prompts(&self) -> bool {
        true
    }

    async fn list_items(
        &self,
        request: &GatewayRequest,
        list: GatewayList,
    ) -> Result<Vec<Value>, GatewayError> {
        let offer = self.offer(request).await?;
        Ok(self.listing(request, &offer, list).await.items.clone())
    }

    async fn read_resource(
        &self,
        request: &GatewayRequest,
        uri: String,
        cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        self.read(request, uri, cancellation).await
    }

    async fn get_prompt(
        &self,
        request: &GatewayRequest,
        name: String,
        arguments: Option<serde_json::Map<String, Value>>,
        cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        self.prompt(request, name, arguments, cancellation).await
    }

    async fn complete(
        &self,
        request: &GatewayRequest,
        params: Value,
        cancellation: CancellationToken,
    ) -> Result<Value, GatewayError> {
        self.completion(request, params, cancellation).await
    }

    async fn set_log_level(
        &self,
        request: &GatewayRequest,
        level: &str,
    ) -> Result<(), GatewayError> {
        let offer = self.offer(request).await?;
        let applied = self
            .chat
            .gateway_set_log_level(&request.caller.principal, &offer.tools, level)
            .await
            .map_err(items::upstream_error)?;
        tracing::debug!(?applied, level, "gateway logging/setLevel applied upstream");
        Ok(())
    }

    async fn watch_resource(
        &self,
        request: &GatewayRequest,
        uri: String,
    ) -> Result<ResourceUpdates, GatewayError> {
        let watch = self.subscribe_resource(request, &uri).await?;
        Ok(resource_watch::renewed_updates(
            self.clone(),
            request.clone(),
            uri,
            watch,
        ))
    }

    fn changes(&self) -> Option<watch::Receiver<u64>> {
        Some(self.changes.subscribe())
    }
}

fn internal(error: impl std::fmt::Display) -> GatewayError {
    GatewayError::Internal(error.to_string())
}
