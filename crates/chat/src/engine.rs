//! The parts of the chat engine every turn uses (store, configuration, tools, approval gate,
//! providers, in-flight turns, shutdown token), shared behind one `Arc`. One struct rather than
//! one `Arc` each so that a turn's task, which must own what it uses, clones a single pointer,
//! and so that `ChatService` and the turn runner see the same state.

use crate::config::ChatConfig;
use crate::gate::ApprovalGate;
use crate::providers::ProviderSet;
use crate::schema_context::SchemaContextSource;
use crate::sign_in::AuthorizationStarter;
use crate::tools::McpTools;
use crate::turn::handle::TurnRegistry;
use std::sync::Arc;
use switchboard_store::Store;
use tokio_util::sync::CancellationToken;

#[derive(Debug)]
pub(crate) struct Engine {
    pub store: Store,
    pub config: ChatConfig,
    pub tools: McpTools,
    pub gate: Arc<dyn ApprovalGate>,
    pub providers: ProviderSet,
    pub turns: TurnRegistry,
    /// Cancelled at shutdown: every turn winds down and saves what it has.
    pub shutdown: CancellationToken,
    /// Fills `meta.schemaContext` when the kg server is in the conversation.
    pub schema_context: Option<Arc<dyn SchemaContextSource>>,
    /// Starts a sign-in for `auth_required` events (their URL is absent without one).
    pub authorization: Option<Arc<dyn AuthorizationStarter>>,
    /// Followers here of answers running on other replicas (`relay`).
    pub answer_notices: Arc<crate::relay::notices::AnswerNotices>,
    /// Tool calls followed here as tasks, each cancellable by itself.
    pub task_calls: Arc<crate::task_calls::TaskCalls>,
}
