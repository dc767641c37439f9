//! [`ChatService`]: the chat engine's public API, used by the HTTP layer — conversations,
//! turns (start, attach, replay), paged tool results, buds, token usage — and the start-up
//! recovery.
//!
//! Every method takes the caller's [`Principal`] and works inside its workspace; a
//! conversation is visible to its owner (and to admins), anyone else gets "not found".

mod app_context;
mod apps;
mod attachment_watch;
mod budgets;
mod buds;
mod context_items;
mod conversations;
mod drain;
mod gateway;
mod gateway_items;
mod llm_providers;
mod question_context;
mod reservation;
mod task_cancels;
mod task_resume;
mod turns;
mod usage;

pub(crate) use app_context::with_app_contexts;
pub use app_context::{APP_MODEL_CONTEXT_MAX_BYTES, AppContextUpdate};
pub use apps::{AppCall, AppResourceRead, RESOURCE_READ_TOOL, ToolCallApp, app_of_request};
pub use attachment_watch::{AttachmentUpdate, AttachmentWatch, MAX_WATCHED_ATTACHMENTS};
pub use budgets::{BudgetExceeded, BudgetScope};
pub use buds::{BudInput, BudUpdate};
pub use context_items::{CompletionRequest, ContextItems, ServerContextItems};
pub use conversations::{
    ConversationDetail, ConversationPage, ConversationUpdate, NewConversationInput, ToolResultPage,
};
pub use gateway::{GatewayCall, GatewayOutcome};
pub use gateway_items::{
    GATEWAY_URI_PREFIX, GatewayListing, GatewayNaming, GatewayResourceWatch, GatewaySubscription,
    gateway_uri, only_target, upstream_uri,
};
pub use llm_providers::{
    LlmProviderInput, LlmProviderUpdate, ModelEntry, ModelListing, RemoteListing,
};
pub use question_context::{AttachmentRequest, MAX_ATTACHMENTS, PromptRequest};
pub use turns::{TurnRequest, TurnStream};
pub use usage::{UsageReport, UsageScope};

use crate::config::ChatConfig;
use crate::engine::Engine;
use crate::error::{ChatError, ChatResult};
use crate::gate::{ApprovalGate, NoGateConfigured};
use crate::providers::ProviderSet;
use crate::schema_context::SchemaContextSource;
use crate::sign_in::AuthorizationStarter;
use crate::tools::{McpTools, OwnEndpoints};
use crate::turn::handle::TurnRegistry;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ConversationId, Principal};
use switchboard_llm::{LlmConfig, LlmProvider};
use switchboard_mcp_client::McpClient;
use switchboard_registry::ServerRegistry;
use switchboard_store::{ConversationRecord, Store};
use tokio_util::sync::CancellationToken;

/// The chat engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ChatService {
    engine: Arc<Engine>,
    /// Phase 1 of a shutdown: whether new answers are refused (see `drain`).
    drain: Arc<drain::Drain>,
    /// The conversations recording gateway clients' calls (see `gateway`).
    gateway_conversations: Arc<gateway::GatewayConversations>,
}

/// Builds a [`ChatService`]; everything but the store, MCP client and configurations has a
/// default — the default approval gate refuses every tool call, so give it `approval_gate`.
#[derive(Debug)]
pub struct ChatServiceBuilder {
    store: Store,
    client: McpClient,
    chat: ChatConfig,
    llm: LlmConfig,
    gate: Option<Arc<dyn ApprovalGate>>,
    provider: Option<Arc<dyn LlmProvider>>,
    registry: Option<ServerRegistry>,
    own_endpoints: OwnEndpoints,
    shutdown: CancellationToken,
    schema_context: Option<Arc<dyn SchemaContextSource>>,
    authorization: Option<Arc<dyn AuthorizationStarter>>,
}

impl ChatServiceBuilder {
    /// Lists registered servers through the process's server registry (stale caches refreshed,
    /// unusable servers reported with their state, sync hooks applied). Pass the registry
    /// built on the same client. Without one, the chat reads the store's tool lists itself.
    pub fn registry(mut self, registry: ServerRegistry) -> Self {
        self.registry = Some(registry);
        self
    }

    /// The approval gate every tool call passes (the approvals crate plugs in here). Without
    /// one, every tool call is refused.
    pub fn approval_gate(mut self, gate: Arc<dyn ApprovalGate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Uses this provider instead of building one from the `[llm]` configuration (tests,
    /// benchmarks). Buds naming another provider kind still get theirs built.
    pub fn provider(mut self, provider: Arc<dyn LlmProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Where this process serves its own MCP endpoint: calls there carry the user's token.
    pub fn own_endpoints(mut self, own_endpoints: OwnEndpoints) -> Self {
        self.own_endpoints = own_endpoints;
        self
    }

    /// Fills `meta.schemaContext` of answers whose conversation includes our own kg server.
    pub fn schema_context(mut self, source: Arc<dyn SchemaContextSource>) -> Self {
        self.schema_context = Some(source);
        self
    }

    /// Starts sign-ins for the `auth_required` events of answers, so they carry the
    /// authorization URL.
    pub fn authorization(mut self, starter: Arc<dyn AuthorizationStarter>) -> Self {
        self.authorization = Some(starter);
        self
    }

    /// Cancelling `token` winds every answer down (what was produced is saved).
    pub fn shutdown_token(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }

    pub fn build(self) -> Result<ChatService, ChatError> {
        self.chat.validate().map_err(|invalid| {
            ChatError::invalid(format!("chat.{}", invalid.key), invalid.reason)
        })?;
        let providers = match self.provider {
            Some(provider) => ProviderSet::with_default(self.llm, self.store.clone(), provider),
            None => ProviderSet::new(self.llm, self.store.clone())
                .map_err(|error| ChatError::invalid("llm", error.to_string()))?,
        };
        let gate = self.gate.unwrap_or_else(|| Arc::new(NoGateConfigured));
        let mut tools = McpTools::new(
            self.client,
            self.store.clone(),
            self.own_endpoints,
            self.chat.ephemeral_tool_cache_ttl(),
        );
        if let Some(registry) = self.registry {
            tools = tools.with_registry(registry);
        }
        Ok(ChatService {
            engine: Arc::new(Engine {
                store: self.store,
                config: self.chat,
                tools,
                gate,
                providers,
                turns: TurnRegistry::default(),
                shutdown: self.shutdown,
                schema_context: self.schema_context,
                authorization: self.authorization,
                answer_notices: Arc::default(),
                task_calls: Arc::default(),
            }),
            drain: Arc::default(),
            gateway_conversations: Arc::default(),
        })
    }
}

impl ChatService {
    pub fn builder(
        store: Store,
        client: McpClient,
        chat: ChatConfig,
        llm: LlmConfig,
    ) -> ChatServiceBuilder {
        ChatServiceBuilder {
            store,
            client,
            chat,
            llm,
            gate: None,
            provider: None,
            registry: None,
            own_endpoints: OwnEndpoints::default(),
            shutdown: CancellationToken::new(),
            schema_context: None,
            authorization: None,
        }
    }

    pub fn config(&self) -> &ChatConfig {
        &self.engine.config
    }

    /// Start-up recovery: calls left `dispatched` by a process that is no longer alive become
    /// `unknown` (never re-run), its calls that never left become `failed`. Calls of live
    /// replicas on the same database are left alone (the store's instances). Returns how many
    /// changed.
    pub async fn recover_interrupted_calls(&self) -> ChatResult<u64> {
        Ok(self.engine.store.recover_interrupted_tool_calls().await?)
    }

    /// Number of answers being generated.
    pub fn answers_in_flight(&self) -> usize {
        self.engine.turns.all().len()
    }

    /// Phase 2 of a shutdown: refuses new answers, cancels every answer still running and
    /// waits (up to `grace`) until each has saved what it produced (its clients get an `error`
    /// event with code `shutting_down`, then `done`).
    pub async fn shutdown(&self, grace: Duration) {
        self.refuse_new_answers();
        self.engine.shutdown.cancel();
        let turns = self.engine.turns.all();
        let waiting = futures::future::join_all(turns.iter().map(|turn| turn.wait_finished()));
        if tokio::time::timeout(grace, waiting).await.is_err() {
            tracing::warn!("some answers did not finish saving within the shutdown grace");
        }
    }

    /// The conversation if the caller may see it (its owner, or an admin of the workspace).
    pub(crate) async fn visible_conversation(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
    ) -> ChatResult<ConversationRecord> {
        let conversation = self
            .engine
            .store
            .get_conversation(&principal.workspace_id, conversation_id)
            .await?;
        if conversation.owner_user_id != principal.user_id && !principal.is_admin() {
            return Err(ChatError::NotFound("conversation"));
        }
        Ok(conversation)
    }
}
