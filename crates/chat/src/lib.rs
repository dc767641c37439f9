//! Switchboard's chat engine: conversations, the agent loop, tool routing through the approval
//! gate to `mcp-client`, the events of an answer, and the persistence of every turn.
//!
//! # Public API
//! - [`ChatService`] (built with [`ChatService::builder`]`(store, mcp_client, chat_config,
//!   llm_config)`, then `.approval_gate(…)`, `.own_endpoints(…)`, `.provider(…)`,
//!   `.shutdown_token(…)`): conversations (`create_conversation`, `list_conversations`,
//!   `conversation_detail`, `update_conversation`, `delete_conversation`, `tool_result_page`),
//!   answers (`start_turn` → [`TurnStream`], `attach`), buds (`create_bud`, `list_buds`,
//!   `get_bud`, `update_bud`, `delete_bud`), `recover_interrupted_calls` (start-up), and
//!   the two shutdown phases: `refuse_new_answers` + `answers_finished` (drain: running
//!   answers finish) then `shutdown(grace)` (cancel what is left; it is saved).
//! - [`ChatEvent`] and its payloads: what an answer streams (the HTTP layer owns the JSON).
//! - [`ApprovalGate`] (the seam the approvals module implements), [`GateRequest`],
//!   [`GateDecision`], [`CallReport`], [`EventSink`]; without a gate every call is refused.
//! - Tool calls from outside a turn (the MCP gateway): `ChatService::gateway_tools` (or
//!   `gateway_server_tools`, one server under [`GatewayNaming::Original`]),
//!   `gateway_conversation`, `run_gateway_call` ([`GatewayCall`] → [`GatewayOutcome`]) — the
//!   same catalog, gate, records and audit as a turn's calls.
//! - [`mcp_config`]: bud `mcp_config` / conversation overrides and [`resolve_mcp_config`].
//! - [`ChatConfig`] (`[chat]`), [`ChatError`].
//!
//! # Invariants
//! - Every tool call passes the gate and is recorded `dispatched` before it leaves.
//! - The question is stored before generation; what was produced is stored even when the
//!   client leaves or the model fails.
//! - The user's token is forwarded only to this process's own MCP endpoint.
//! - No rmcp type and no HTTP wire shape appears here.

mod call_records;
pub mod config;
pub mod context;
mod engine;
pub mod error;
pub mod events;
pub mod gate;
pub mod mcp_config;
mod metrics;
mod providers;
mod relay;
mod replay;
pub mod schema_context;
mod service;
pub mod sign_in;
mod task_calls;
#[cfg(test)]
mod test_fixtures;
pub mod tools;
mod turn;

pub use config::ChatConfig;
pub use context::ContextReport;
pub use error::{ChatError, ChatResult};
pub use events::{
    AnsweredBy, ApprovalRequiredEvent, ApprovalResolvedEvent, AuthRequiredEvent, ChatEvent,
    DoneEvent, ElicitationRequiredEvent, ElicitationResolvedEvent, ErrorEvent, FailedAttempt,
    MetaEvent, OfferedTool, SchemaContext, ToolEvent, ToolEventStatus, ToolInputPartialEvent,
    ToolProgress, TurnOutcome, UnavailableServer, tool_intent,
};
pub use gate::{
    ApprovalGate, CallOrigin, CallReport, ClientApprover, EventSink, GateDecision, GateRequest,
    GateTarget,
};
pub use mcp_config::{
    BudMcpConfig, McpConfigError, McpConfigOverrides, ResolvedMcpConfig, resolve_mcp_config,
};
pub use providers::{MAX_FALLBACKS, ProviderEntry, ProviderSource};
/// The LLM types the provider API speaks (so `server` needs no `llm` dependency).
pub use replay::message_usage;
pub use schema_context::SchemaContextSource;
pub use service::{
    APP_MODEL_CONTEXT_MAX_BYTES, AppCall, AppContextUpdate, AppResourceRead, AttachmentRequest,
    AttachmentUpdate, AttachmentWatch, BudInput, BudUpdate, BudgetExceeded, BudgetScope,
    ChatService, ChatServiceBuilder, CompletionRequest, ContextItems, ConversationDetail,
    ConversationPage, ConversationUpdate, GATEWAY_URI_PREFIX, GatewayCall, GatewayListing,
    GatewayNaming, GatewayOutcome, GatewayResourceWatch, GatewaySubscription, LlmProviderInput,
    LlmProviderUpdate, MAX_ATTACHMENTS, MAX_WATCHED_ATTACHMENTS, ModelEntry, ModelListing,
    NewConversationInput, PromptRequest, RESOURCE_READ_TOOL, RemoteListing, ServerContextItems,
    ToolCallApp, ToolResultPage, TurnRequest, TurnStream, UsageReport, UsageScope, app_of_request,
    gateway_uri, only_target, upstream_uri,
};
pub use sign_in::AuthorizationStarter;
pub use switchboard_llm::{ApiKey, ModelInfo, ProviderKind, TokenUsage};
pub use tools::{EphemeralServer, OwnEndpoints, UserCredential};
