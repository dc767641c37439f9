//! One answer ("turn"): from the stored question to the final `done` event. The agent loop
//! ([`runner`]) alternates LLM steps ([`llm_step`]) and tool steps ([`tool_step`]), persisting
//! as it goes; [`handle`] fans the events out to every watching client; [`history`] rebuilds
//! what the model is shown.

mod call_ids;
pub(crate) mod call_outcome;
pub(crate) mod handle;
pub(crate) mod history;
mod llm_step;
mod partial_input;
mod partial_json;
mod progress_throttle;
pub(crate) mod runner;
mod search_call;
pub(crate) mod tool_step;

use crate::engine::Engine;
use crate::events::FailedAttempt;
use crate::mcp_config::ResolvedMcpConfig;
use crate::providers::{ChosenModel, ModelChain};
use crate::tools::{ToolOffer, TurnTools, UserCredential};
use handle::TurnHandle;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use switchboard_core::Principal;
use switchboard_llm::TokenUsage;
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
    /// The model that answers first, then the fallbacks.
    pub models: ModelChain,
}

/// What the steps of a running turn share.
pub(crate) struct TurnRun<'a> {
    pub engine: &'a Arc<Engine>,
    pub plan: &'a TurnPlan,
    pub handle: &'a Arc<TurnHandle>,
    pub tools: TurnTools,
    /// Which of `tools` the model is offered (all, or a budget and `search_tools`).
    pub offer: ToolOffer,
    pub caller: Caller,
    /// Which model of `plan.models` answered the last step (0: the primary); the next step
    /// starts there, so a turn that fell back does not wait on a failing provider again.
    pub answering: AtomicUsize,
    /// The models that failed before the current one answered (the latest fallback's).
    pub fallback_from: Mutex<Vec<FailedAttempt>>,
    /// The tokens of the answer's steps so far (`None` until a step reports usage).
    pub usage: Mutex<Option<TokenUsage>>,
}

impl TurnRun<'_> {
    /// The model that answered the last step (or will answer the first).
    pub fn answering_model(&self) -> &ChosenModel {
        let index = self.answering.load(Ordering::Relaxed);
        self.plan
            .models
            .get(index)
            .unwrap_or(&self.plan.models.primary)
    }
}
