//! One answer ("turn"): from the stored question to the final `done` event. The agent loop
//! ([`runner`]) alternates LLM steps ([`llm_step`]) and tool steps ([`tool_step`]), persisting
//! as it goes; [`handle`] fans the events out to every watching client; [`history`] rebuilds
//! what the model is shown.

mod call_ids;
pub(crate) mod call_outcome;
pub(crate) mod handle;
pub(crate) mod history;
mod llm_step;
pub(crate) mod runner;
mod tool_step;

use crate::engine::Engine;
use crate::mcp_config::ResolvedMcpConfig;
use crate::providers::ChosenModel;
use crate::tools::{TurnTools, UserCredential};
use handle::TurnHandle;
use std::sync::Arc;
use switchboard_core::Principal;
use switchboard_mcp_client::{Caller, UpstreamServer};
use switchboard_store::{BudRecord, ConversationRecord, MessageRecord};

/// Everything decided before the answer starts (validated by the service before it answers
/// the HTTP request).
#[derive(Debug)]
pub(crate) struct TurnPlan {
    pub principal: Principal,
    pub credential: Option<UserCredential>,
    pub conversation: ConversationRecord,
    pub bud: Option<BudRecord>,
    pub resolved: ResolvedMcpConfig,
    pub ephemeral: Vec<UpstreamServer>,
    /// The stored question.
    pub user_message: MessageRecord,
    pub chosen: ChosenModel,
}

/// What the steps of a running turn share.
pub(crate) struct TurnRun<'a> {
    pub engine: &'a Arc<Engine>,
    pub plan: &'a TurnPlan,
    pub handle: &'a Arc<TurnHandle>,
    pub tools: TurnTools,
    pub caller: Caller,
}
