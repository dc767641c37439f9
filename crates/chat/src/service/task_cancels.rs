//! Cancelling one tool call's task (`POST …/tool-calls/{id}/cancel`), wherever it is followed.
//!
//! A task call is followed by exactly one process: the one whose answer made it (while that
//! answer runs), or the one that claimed it after its process died (`task_resume`). When the
//! person's request reaches that process, its cancellation token fires at once
//! (`crate::task_calls`) and the client sends `tasks/cancel`. When it reaches another one — a
//! replica behind the same load balancer, or a process that restarted and has not claimed
//! the call yet — the request is stored with the call (`Store::request_tool_call_task_cancel`,
//! migration 0023) and answered 202 all the same: every process with tasks to follow looks
//! for such requests on its own calls every [`CANCEL_LOOK_INTERVAL`]
//! ([`ChatService::keep_forwarding_task_cancels`]) and cancels them as if asked directly. A
//! request stored for a call that ends first is moot; one stored while nobody follows the call
//! is acted on by whoever claims it next.

use super::ChatService;
use crate::error::{ChatError, ChatResult};
use std::time::Duration;
use switchboard_core::{ConversationId, Principal, ToolCallId, ToolCallState};
use tokio::task::JoinHandle;

/// How often a process following tasks looks for cancels asked of them elsewhere.
pub const CANCEL_LOOK_INTERVAL: Duration = Duration::from_secs(1);

impl ChatService {
    /// Cancels one tool call's task (`tasks/cancel` goes upstream; the call ends as a
    /// cancelled call, its answer goes on): at once when this process follows it, else
    /// through the store for the process that does. `Conflict` when the call is not a task
    /// or its task already ended.
    pub async fn cancel_task_call(
        &self,
        principal: &Principal,
        conversation_id: &ConversationId,
        tool_call_id: &ToolCallId,
    ) -> ChatResult<()> {
        let conversation = self
            .visible_conversation(principal, conversation_id)
            .await?;
        let store = &self.engine.store;
        let call = store
            .get_tool_call(&principal.workspace_id, tool_call_id)
            .await?;
        if call.conversation_id != conversation.id {
            return Err(ChatError::NotFound("tool call"));
        }
        if self.engine.task_calls.cancel(&call.id, &conversation.id) {
            return Ok(());
        }
        if call.task_id.is_some()
            && store
                .request_tool_call_task_cancel(&principal.workspace_id, &call.id)
                .await?
        {
            tracing::info!(tool_call_id = %call.id, "asked the process following the task to cancel it");
            return Ok(());
        }
        // Not a dispatched task any more: read it again to say why.
        let call = store
            .get_tool_call(&principal.workspace_id, tool_call_id)
            .await?;
        Err(ChatError::Conflict(match (&call.task_id, call.state) {
            (None, _) => "the call is not a task".to_owned(),
            (Some(_), ToolCallState::Dispatched) => {
                "the call's task could not be cancelled: try again".to_owned()
            }
            (Some(_), state) => format!("the call's task already ended ({state})"),
        }))
    }

    /// Every [`CANCEL_LOOK_INTERVAL`] while this process follows tasks, cancels those whose
    /// cancel was asked of another process, until the engine shuts down.
    pub fn keep_forwarding_task_cancels(&self) -> JoinHandle<()> {
        let service = self.clone();
        tokio::spawn(async move {
            let shutdown = service.engine.shutdown.clone();
            let mut ticks = tokio::time::interval(CANCEL_LOOK_INTERVAL);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                if service.engine.task_calls.is_empty() {
                    continue;
                }
                if let Err(error) = service.cancel_tasks_asked_elsewhere().await {
                    tracing::warn!(%error, "looking for task cancels asked elsewhere failed; trying again");
                }
            }
        })
    }

    async fn cancel_tasks_asked_elsewhere(&self) -> ChatResult<()> {
        for (tool_call_id, conversation_id) in self.engine.store.task_cancels_asked_here().await? {
            if self
                .engine
                .task_calls
                .cancel(&tool_call_id, &conversation_id)
            {
                tracing::info!(%tool_call_id, "cancelled a task as asked through another process");
            }
        }
        Ok(())
    }
}
