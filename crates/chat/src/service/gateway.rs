//! Tool calls from outside a chat turn, for the MCP gateway (`/gateway/mcp`): a gateway client
//! is offered what a turn in a conversation of the bud (none: every active server of the
//! workspace) would offer — the same catalog, named `server__tool` and described as the chat
//! does — and each of its calls lives the life of a turn's call: recorded `proposed` in a
//! conversation of that client (one per person, bud and client name), reviewed by the approval
//! gate (policies, pins, a person through `GET /chat/approvals` — or the client's own user
//! when it can ask them, [`GatewayCall::client_approver`]), recorded `approved` and
//! `dispatched` in one commit before it leaves (a call the rules allow: recorded `dispatched`
//! in its first commit, [`crate::ApprovalGate::review_by_rules`]), sent over the MCP client's shared sessions (its
//! progress to [`GatewayCall::events`], the client's cancel to the upstream), finished with its
//! audit row in one commit (origin `gateway` and the client's name), and reported to the gate.
//!
//! It knows nothing of MCP's wire (the gateway's handler is `mcp-server`'s) nor of policies
//! (the approvals module behind the gate decides).

use super::ChatService;
use crate::call_records;
use crate::error::ChatResult;
use crate::gate::{CallOrigin, CallReport, ClientApprover, EventSink, GateDecision, GateRequest};
use crate::mcp_config::{BudMcpConfig, McpConfigOverrides, resolve_mcp_config};
use crate::tools::{TurnTools, UserCredential};
use crate::turn::call_outcome::{Settled, failure, settle};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use switchboard_core::{
    BudId, ConversationId, Principal, ToolCallId, ToolCallState, UserId, WorkspaceId,
};
use switchboard_mcp_client::{CallContext, CallEvent, Caller, ClientLink, ToolResult};
use switchboard_store::{
    BudRecord, NewConversation, NewToolCall, ServerRecord, StoreError, ToolCallOutcome,
    ToolCallRecord,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One call a gateway client made.
#[derive(Debug)]
pub struct GatewayCall<'a> {
    pub principal: &'a Principal,
    /// From [`ChatService::gateway_conversation`].
    pub conversation_id: &'a ConversationId,
    /// From [`ChatService::gateway_tools`], after the caller's filtering.
    pub tools: &'a TurnTools,
    /// The name as listed (`server__tool`).
    pub name: &'a str,
    /// The client's `arguments` (absent: `null`).
    pub arguments: Value,
    /// The JSON-RPC id of the request, recorded as the call's id.
    pub request_id: String,
    /// `clientInfo.name` of the client.
    pub client_name: String,
    /// Fires when the client cancels the request or leaves.
    pub cancellation: CancellationToken,
    /// The client, when it can have its own user approve the call (it declared elicitation).
    pub client_approver: Option<Arc<dyn ClientApprover>>,
    /// Receives the upstream's progress and log notifications while the call runs.
    pub events: Option<mpsc::Sender<CallEvent>>,
    /// The client, when it answers the upstream's own requests of this call
    /// (`elicitation/create`, `sampling/createMessage`) itself.
    pub client_link: Option<Arc<dyn ClientLink>>,
}

/// How a gateway call ended.
#[derive(Debug)]
pub enum GatewayOutcome {
    /// The upstream answered (its result may be a tool error, `isError`).
    Answered(ToolResult),
    /// No offered tool has that name.
    UnknownTool,
    /// The arguments are not an object.
    InvalidArguments(String),
    /// The gate refused it (a rule, a person, the approval timeout).
    Denied { reason: String },
    /// It was allowed but did not get an answer (unreachable, timeout, invalid arguments…).
    Failed { code: String, message: String },
}

/// The conversation of each (workspace, person, bud, client name), created at first use.
#[derive(Debug, Default)]
pub(super) struct GatewayConversations {
    by_client: tokio::sync::Mutex<HashMap<ConversationKey, ConversationId>>,
}

type ConversationKey = (WorkspaceId, UserId, Option<BudId>, String);

/// Longest client name kept in a conversation's title.
const CLIENT_NAME_MAX_CHARS: usize = 60;

impl ChatService {
    /// The bud a gateway path names, by id or by name.
    pub async fn gateway_bud(
        &self,
        principal: &Principal,
        reference: &str,
    ) -> ChatResult<BudRecord> {
        let buds = self.engine.store.list_buds(&principal.workspace_id).await?;
        buds.into_iter()
            .find(|bud| bud.id.as_str() == reference || bud.name == reference)
            .ok_or_else(|| StoreError::NotFound { entity: "bud" }.into())
    }

    /// The registered server a per-server gateway path names, by id or by name.
    pub async fn gateway_server(
        &self,
        principal: &Principal,
        reference: &str,
    ) -> ChatResult<ServerRecord> {
        let servers = self
            .engine
            .store
            .list_servers(&principal.workspace_id)
            .await?;
        servers
            .into_iter()
            .find(|server| server.id.as_str() == reference || server.name == reference)
            .ok_or_else(|| StoreError::NotFound { entity: "server" }.into())
    }

    /// What a turn in a conversation of `bud` (none: the workspace's active servers) would
    /// offer `principal`: the same catalog, names and descriptions.
    pub async fn gateway_tools(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        bud: Option<&BudRecord>,
    ) -> ChatResult<TurnTools> {
        if !self.engine.config.enable_mcp_tools {
            return Ok(TurnTools::default());
        }
        let null = Value::Null;
        let bud_config = BudMcpConfig::parse(bud.map(|bud| &bud.mcp_config).unwrap_or(&null))?;
        let servers = self
            .engine
            .store
            .list_servers(&principal.workspace_id)
            .await?;
        self.tools_of_servers(principal, credential, &bud_config, &servers)
            .await
    }

    /// What a turn would offer `principal` if `server` were the workspace's only server (the
    /// per-server gateway; nothing when it is switched off).
    pub async fn gateway_server_tools(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        server: &ServerRecord,
    ) -> ChatResult<TurnTools> {
        if !self.engine.config.enable_mcp_tools {
            return Ok(TurnTools::default());
        }
        let bud_config = BudMcpConfig::parse(&Value::Null)?;
        self.tools_of_servers(
            principal,
            credential,
            &bud_config,
            std::slice::from_ref(server),
        )
        .await
    }

    async fn tools_of_servers(
        &self,
        principal: &Principal,
        credential: Option<&UserCredential>,
        bud_config: &BudMcpConfig,
        servers: &[ServerRecord],
    ) -> ChatResult<TurnTools> {
        let resolved = resolve_mcp_config(bud_config, &McpConfigOverrides::default(), servers)?;
        let caller = Caller {
            user_id: principal.user_id.clone(),
            conversation_id: None,
        };
        Ok(self
            .engine
            .tools
            .for_turn(principal, credential, &caller, &resolved, &[])
            .await)
    }

    /// The conversation recording `client_name`'s calls for `principal` in `bud` (created
    /// at first use, titled after the client; owned by the token's user, so its approvals are
    /// theirs to decide).
    pub async fn gateway_conversation(
        &self,
        principal: &Principal,
        bud: Option<&BudId>,
        client_name: &str,
    ) -> ChatResult<ConversationId> {
        let key = (
            principal.workspace_id.clone(),
            principal.user_id.clone(),
            bud.cloned(),
            client_name.to_owned(),
        );
        let mut by_client = self.gateway_conversations.by_client.lock().await;
        if let Some(conversation_id) = by_client.get(&key) {
            return Ok(conversation_id.clone());
        }
        let shown: String = client_name.chars().take(CLIENT_NAME_MAX_CHARS).collect();
        let record = self
            .engine
            .store
            .create_conversation(
                &principal.workspace_id,
                NewConversation {
                    owner_user_id: principal.user_id.clone(),
                    bud_id: bud.cloned(),
                    title: format!("Gateway · {shown}"),
                    mcp_config_overrides: None,
                    model_choice: Default::default(),
                },
            )
            .await?;
        by_client.insert(key, record.id.clone());
        Ok(record.id)
    }

    /// Forgets the conversations of gateway clients (one was deleted: the next call makes
    /// a new one).
    async fn forget_gateway_conversation(&self, conversation_id: &ConversationId) {
        self.gateway_conversations
            .by_client
            .lock()
            .await
            .retain(|_, kept| kept != conversation_id);
    }

    /// Runs one gateway call: recorded, reviewed, dispatched, finished, reported.
    pub async fn run_gateway_call(&self, mut call: GatewayCall<'_>) -> ChatResult<GatewayOutcome> {
        let Some((route, target)) = call.tools.lookup(call.name) else {
            return Ok(GatewayOutcome::UnknownTool);
        };
        let arguments = match object_arguments(std::mem::take(&mut call.arguments)) {
            Ok(arguments) => arguments,
            Err(message) => return Ok(GatewayOutcome::InvalidArguments(message)),
        };
        let outcome = self
            .run_call_outside_turn(OutsideCall {
                principal: call.principal,
                conversation_id: call.conversation_id,
                server_name: &route.server_name,
                tool: &route.tool,
                target,
                arguments,
                request_id: call.request_id.clone(),
                origin: CallOrigin::Gateway {
                    client_name: call.client_name.clone(),
                },
                cancellation: call.cancellation.clone(),
                request: OutsideRequest::CallTool,
                client_approver: call.client_approver.take(),
                events: call.events.take(),
                client_link: call.client_link.take(),
            })
            .await;
        if outcome.is_err() {
            self.forget_gateway_conversation(call.conversation_id).await;
        }
        outcome
    }

    /// A call made outside a chat turn (a gateway client's, an app's): reviewed by the gate
    /// under `call.origin`, recorded, dispatched, finished and reported. A call the rules allow
    /// is recorded `dispatched` in its first commit (two commits in all); any other is recorded
    /// `proposed` first and reviewed in full (a person may be asked).
    pub(super) async fn run_call_outside_turn(
        &self,
        call: OutsideCall<'_>,
    ) -> ChatResult<GatewayOutcome> {
        let store = &self.engine.store;
        let workspace_id = &call.principal.workspace_id;
        let tool_call_id = ToolCallId::generate();
        let new_call = NewToolCall {
            conversation_id: call.conversation_id.clone(),
            message_id: None,
            llm_call_id: call.request_id.clone(),
            server_id: call.target.registered_server_id.clone(),
            server_name: call.server_name.to_owned(),
            tool_name: call.tool.name.clone(),
            arguments: call.arguments.to_string(),
        };
        let request = GateRequest {
            principal: call.principal.clone(),
            conversation_id: call.conversation_id.clone(),
            conversation_owner: call.principal.user_id.clone(),
            tool_call_id: tool_call_id.clone(),
            llm_call_id: call.request_id.clone(),
            target: call.target.gate_target.clone(),
            tool: call.tool.clone(),
            arguments: call.arguments.clone(),
            cancellation: call.cancellation.clone(),
            origin: call.origin.clone(),
            client_approver: call.client_approver.clone(),
        };
        let by_rules = self.engine.gate.review_by_rules(&request).await;
        if let Some(decision @ GateDecision::Allow { .. }) = &by_rules
            && !call.cancellation.is_cancelled()
        {
            let record = store
                .create_dispatched_tool_call(workspace_id, tool_call_id, new_call)
                .await?;
            let settled = self.send_outside_call(&call).await;
            return self
                .finish_gateway_call(&record, request, decision.clone(), settled)
                .await;
        }
        let record = store
            .create_tool_call_with_id(workspace_id, tool_call_id, new_call)
            .await?;
        let decision = match by_rules {
            Some(decision) => decision,
            None => {
                self.engine
                    .gate
                    .review(&request, &EventSink::discard())
                    .await
            }
        };
        let settled = match &decision {
            GateDecision::Deny { reason, .. } => {
                let outcome = ToolCallOutcome {
                    result: None,
                    error: Some(reason.clone()),
                };
                self.gateway_transition(&record, ToolCallState::Denied, outcome)
                    .await?;
                failure(ToolCallState::Denied, "denied", reason.clone())
            }
            GateDecision::Allow { .. } => self.dispatch_gateway_call(&record, &call).await?,
        };
        self.finish_gateway_call(&record, request, decision, settled)
            .await
    }

    /// Approved and dispatched (one commit, before the request leaves) → sent.
    async fn dispatch_gateway_call(
        &self,
        record: &ToolCallRecord,
        call: &OutsideCall<'_>,
    ) -> ChatResult<Settled> {
        if call.cancellation.is_cancelled() {
            self.gateway_transition(record, ToolCallState::Approved, ToolCallOutcome::default())
                .await?;
            return Ok(failure(
                ToolCallState::Failed,
                "cancelled",
                "the request was cancelled before the call was sent".to_owned(),
            ));
        }
        call_records::dispatch(&self.engine.store, record).await?;
        Ok(self.send_outside_call(call).await)
    }

    /// Sends a dispatched call upstream and settles its answer.
    async fn send_outside_call(&self, call: &OutsideCall<'_>) -> Settled {
        let context = CallContext {
            caller: Caller {
                user_id: call.principal.user_id.clone(),
                conversation_id: Some(call.conversation_id.clone()),
            },
            cancellation: call.cancellation.child_token(),
            events: call.events.clone(),
            client_link: call.client_link.clone(),
            detach: None,
        };
        let started = Instant::now();
        let outcome = match &call.request {
            OutsideRequest::CallTool => {
                self.engine
                    .tools
                    .call(call.target, call.tool, call.arguments.clone(), &context)
                    .await
            }
            OutsideRequest::ReadResource { uri } => self
                .engine
                .tools
                .client()
                .read_resource_json(&call.target.upstream, uri, &context)
                .await
                .map(resource_read_result),
        };
        settle(outcome, started.elapsed())
    }

    /// The final record with its audit row (one commit), the gate's report, and what the
    /// client gets.
    async fn finish_gateway_call(
        &self,
        record: &ToolCallRecord,
        request: GateRequest,
        decision: GateDecision,
        settled: Settled,
    ) -> ChatResult<GatewayOutcome> {
        let result_json = settled
            .result
            .as_ref()
            .and_then(|result| serde_json::to_value(result).ok());
        let report = CallReport {
            request,
            decision: decision.clone(),
            final_state: settled.state,
            duration: settled.duration,
            result_bytes: result_json.as_ref().and_then(crate::gate::json_byte_len),
            error: settled.error.as_ref().map(|(_, message)| message.clone()),
        };
        let outcome = ToolCallOutcome {
            result: result_json,
            error: settled.error.as_ref().map(|(_, message)| message.clone()),
        };
        let audit = self.engine.gate.audit_event(&report);
        call_records::finish(&self.engine.store, record, settled.state, outcome, audit).await?;
        crate::metrics::tool_call_finished(settled.state);
        self.engine.gate.call_finished(&report).await;
        Ok(match (decision, settled.result, settled.error) {
            (GateDecision::Deny { reason, .. }, _, _) => GatewayOutcome::Denied { reason },
            (_, Some(result), _) => GatewayOutcome::Answered(result),
            (_, None, Some((code, message))) => GatewayOutcome::Failed { code, message },
            (_, None, None) => GatewayOutcome::Failed {
                code: "no_result".to_owned(),
                message: "the call returned nothing".to_owned(),
            },
        })
    }

    /// Moves a gateway call on; a conflict (someone else moved it) is logged, not fatal.
    async fn gateway_transition(
        &self,
        record: &ToolCallRecord,
        next: ToolCallState,
        outcome: ToolCallOutcome,
    ) -> ChatResult<()> {
        call_records::advance(&self.engine.store, record, &[next], outcome, None).await
    }
}

/// A call from outside a turn, routed to its server and tool.
pub(super) struct OutsideCall<'a> {
    pub principal: &'a Principal,
    pub conversation_id: &'a ConversationId,
    pub server_name: &'a str,
    pub tool: &'a switchboard_core::ToolDefinition,
    pub target: &'a crate::tools::CallTarget,
    /// An object.
    pub arguments: Value,
    /// Recorded as the call's id (`llm_call_id`).
    pub request_id: String,
    pub origin: CallOrigin,
    pub cancellation: CancellationToken,
    pub request: OutsideRequest,
    /// See [`GatewayCall::client_approver`].
    pub client_approver: Option<Arc<dyn ClientApprover>>,
    /// See [`GatewayCall::events`].
    pub events: Option<mpsc::Sender<CallEvent>>,
    /// See [`GatewayCall::client_link`].
    pub client_link: Option<Arc<dyn ClientLink>>,
}

/// What a call from outside a turn asks of its server.
pub(super) enum OutsideRequest {
    /// `tools/call` of the call's tool.
    CallTool,
    /// `resources/read` of `uri` (an MCP App's), reviewed and recorded like a call of the
    /// host's own pseudo-tool [`super::apps::RESOURCE_READ_TOOL`].
    ReadResource { uri: String },
}

/// A `resources/read` answer recorded as a call's result: the whole `ReadResourceResult` as its
/// structured content (no text for a model: no model sees an app's reads).
fn resource_read_result(read: Value) -> ToolResult {
    ToolResult {
        content: Vec::new(),
        structured_content: Some(read),
        is_error: false,
    }
}

/// `arguments` as an object (absent: `{}`), or why not.
pub(super) fn object_arguments(arguments: Value) -> Result<Value, String> {
    match arguments {
        Value::Null => Ok(Value::Object(Default::default())),
        Value::Object(map) => Ok(Value::Object(map)),
        other => Err(format!(
            "arguments must be an object, not {}",
            switchboard_mcp_client::json_kind(&other)
        )),
    }
}
