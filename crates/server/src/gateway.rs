//! [`ChatGateway`]: the gateway's backend (`mcp-server`'s `GatewayBackend` seam) over the chat
//! engine and the approvals module, so a gateway client gets exactly what a chat turn gets and
//! nothing else: the turn's catalog (`chat`: registry, per-user sessions and credentials,
//! `server__tool` names, descriptions), minus the tools an admin rule sets to `ALWAYS_DENY`
//! (`approvals::Approvals::admin_policy`, the gate's own rule lookup), and each call through
//! `ChatService::run_gateway_call` (recorded, the approval gate, dispatched over the shared
//! sessions, audited with origin `gateway`).
//!
//! Mounted by [`crate::app`] at `/gateway/mcp` and `/gateway/buds/{bud}/mcp` when the chat
//! engine is configured.

use async_trait::async_trait;
use serde_json::Value;
use switchboard_approvals::Approvals;
use switchboard_chat::tools::TurnTools;
use switchboard_chat::{ChatError, ChatService, GatewayCall, GatewayOutcome, UserCredential};
use switchboard_core::{ApprovalPolicy, ServerId, ToolSpec};
use switchboard_mcp_client::ToolResult;
use switchboard_mcp_server::gateway::{
    GatewayBackend, GatewayError, GatewayRequest, GatewayToolCall,
};
use switchboard_store::BudRecord;

#[derive(Clone, Debug)]
pub struct ChatGateway {
    chat: ChatService,
    approvals: Approvals,
}

/// What one request is offered: the turn's catalog and the bud it came from.
struct Offer {
    tools: TurnTools,
    bud: Option<BudRecord>,
}

impl ChatGateway {
    pub fn new(chat: ChatService, approvals: Approvals) -> Self {
        Self { chat, approvals }
    }

    async fn offer(&self, request: &GatewayRequest) -> Result<Offer, GatewayError> {
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
        let credential = request.bearer_token.as_deref().map(UserCredential::new);
        let tools = self
            .chat
            .gateway_tools(principal, credential.as_ref(), bud.as_ref())
            .await
            .map_err(internal)?;
        Ok(Offer { tools, bud })
    }

    /// Whether an admin rule refuses `name` outright (`ALWAYS_DENY`): such a tool is neither
    /// listed nor callable, as if it did not exist.
    async fn denied_by_rule(
        &self,
        request: &GatewayRequest,
        offer: &Offer,
        name: &str,
    ) -> Result<bool, GatewayError> {
        let Some((route, target)) = offer.tools.lookup(name) else {
            return Ok(true);
        };
        let Some(server_id) = &target.registered_server_id else {
            return Ok(false);
        };
        let policy = self
            .policy(request, offer, server_id, &route.tool_name)
            .await?;
        Ok(policy == ApprovalPolicy::AlwaysDeny)
    }

    async fn policy(
        &self,
        request: &GatewayRequest,
        offer: &Offer,
        server_id: &ServerId,
        tool_name: &str,
    ) -> Result<ApprovalPolicy, GatewayError> {
        self.approvals
            .admin_policy(
                &request.caller.principal.workspace_id,
                offer.bud.as_ref().map(|bud| &bud.id),
                server_id,
                tool_name,
            )
            .await
            .map_err(internal)
    }
}

#[async_trait]
impl GatewayBackend for ChatGateway {
    async fn list_tools(&self, request: &GatewayRequest) -> Result<Vec<ToolSpec>, GatewayError> {
        let offer = self.offer(request).await?;
        let mut listed = Vec::with_capacity(offer.tools.catalog.specs.len());
        for spec in &offer.tools.catalog.specs {
            if !self.denied_by_rule(request, &offer, &spec.name).await? {
                listed.push(spec.clone());
            }
        }
        Ok(listed)
    }

    async fn call_tool(
        &self,
        request: &GatewayRequest,
        call: GatewayToolCall,
    ) -> Result<Value, GatewayError> {
        let offer = self.offer(request).await?;
        if self.denied_by_rule(request, &offer, &call.name).await? {
            return Err(GatewayError::UnknownTool(call.name));
        }
        let principal = &request.caller.principal;
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
            })
            .await
            .map_err(internal)?;
        let result = match outcome {
            GatewayOutcome::Answered(result) => result,
            GatewayOutcome::UnknownTool => return Err(GatewayError::UnknownTool(call.name)),
            GatewayOutcome::InvalidArguments(message) => {
                return Err(GatewayError::InvalidArguments(message));
            }
            GatewayOutcome::Denied { reason } => {
                ToolResult::error_text(format!("the call was not allowed: {reason}"))
            }
            GatewayOutcome::Failed { code, message } => {
                ToolResult::error_text(format!("{code}: {message}"))
            }
        };
        serde_json::to_value(result).map_err(internal)
    }
}

fn internal(error: impl std::fmt::Display) -> GatewayError {
    GatewayError::Internal(error.to_string())
}
