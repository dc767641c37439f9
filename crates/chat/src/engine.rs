//! The parts of the chat engine every turn uses, shared behind one `Arc`.

use crate::config::ChatConfig;
use crate::gate::ApprovalGate;
use crate::providers::ProviderSet;
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
}
