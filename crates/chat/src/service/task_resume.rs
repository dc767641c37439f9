//! Tool calls that became tasks, followed again after a restart.
//!
//! A call whose upstream answered with a task keeps the task's id with its row
//! (`call_records::keep_task`). When its process dies, start-up recovery leaves such a call
//! `dispatched` (instead of `unknown`), and this module claims it for the new process
//! (`Store::claim_orphaned_task_calls`: exactly one live process follows it) and polls the
//! same task until it ends — the tool is never called again. The result is stored as the
//! call's final state and its tool message, exactly as the turn would have: the conversation
//! shows it when it is opened (the stored call and message), and the next answer's history
//! gives it to the model right after the assistant message that asked. The interrupted
//! answer itself is not continued: its turn ended with the old process, and the person
//! decides whether to ask again.
//!
//! A follower stops (leaving the call `dispatched` for the next process) when the chat
//! engine shuts down; it never sends `tasks/cancel` then.

use super::ChatService;
use crate::error::ChatResult;
use crate::turn::call_outcome::{Settled, failure, settle};
use crate::turn::tool_step::store_settled_call;
use std::time::Instant;
use switchboard_core::{Principal, ScopeSet, ToolApp, ToolCallState};
use switchboard_mcp_client::{CallContext, Caller};
use switchboard_store::ToolCallRecord;

impl ChatService {
    /// Claims the task calls dead processes left `dispatched` and follows each in the
    /// background until its task ends. Returns how many are followed.
    pub async fn resume_task_calls(&self) -> ChatResult<usize> {
        let claimed = self.engine.store.claim_orphaned_task_calls().await?;
        let count = claimed.len();
        for record in claimed {
            let service = self.clone();
            tokio::spawn(async move {
                let shutdown = service.engine.shutdown.clone();
                tokio::select! {
                    outcome = service.follow_again(&record) => {
                        if let Err(error) = outcome {
                            tracing::error!(%error, tool_call_id = %record.id, "could not store a resumed task's outcome");
                        }
                    }
                    () = shutdown.cancelled() => {
                        tracing::info!(tool_call_id = %record.id, "left a task call for the next process");
                    }
                }
            });
        }
        if count > 0 {
            tracing::info!(
                count,
                "following the tasks of tool calls interrupted by a restart"
            );
        }
        Ok(count)
    }

    /// Polls the call's task until it ends, then stores the outcome like a turn would.
    async fn follow_again(&self, record: &ToolCallRecord) -> ChatResult<()> {
        let started = Instant::now();
        let (settled, app) = match self.resumed_outcome(record).await {
            Ok((outcome, app)) => (settle(outcome, started.elapsed()), app),
            Err(message) => (
                failure(ToolCallState::Failed, "task_not_followed", message),
                None,
            ),
        };
        self.store_resumed(record, &settled, app).await
    }

    async fn resumed_outcome(
        &self,
        record: &ToolCallRecord,
    ) -> Result<
        (
            Result<switchboard_mcp_client::ToolResult, switchboard_mcp_client::UpstreamError>,
            Option<ToolApp>,
        ),
        String,
    > {
        let store = &self.engine.store;
        let (Some(server_id), Some(task_id)) = (&record.server_id, &record.task_id) else {
            return Err("the call's server or task is not recorded".to_owned());
        };
        let conversation = store
            .get_conversation(&record.workspace_id, &record.conversation_id)
            .await
            .map_err(|error| error.to_string())?;
        // The owner, with no scope: only what rebuilds the call's target (the registered
        // server as the owner's sessions see it); the call was reviewed before it left.
        let principal = Principal {
            workspace_id: record.workspace_id.clone(),
            user_id: conversation.owner_user_id.clone(),
            token_id: None,
            scopes: ScopeSet::empty(),
        };
        let tool = store
            .list_server_tools(&record.workspace_id, server_id)
            .await
            .map_err(|error| error.to_string())?
            .into_iter()
            .find(|tool| tool.name == record.tool_name)
            .map(|tool| tool.definition())
            .ok_or_else(|| format!("the tool '{}' is no longer listed", record.tool_name))?;
        let tools = self
            .conversation_tools(&principal, &record.conversation_id)
            .await
            .map_err(|error| error.to_string())?;
        let target = tools.target(server_id).ok_or_else(|| {
            "the call's server is not available in this conversation any more".to_owned()
        })?;
        let app = ToolApp::of(Some(server_id), &tool);
        let context = CallContext::new(Caller {
            user_id: conversation.owner_user_id,
            conversation_id: Some(record.conversation_id.clone()),
        });
        let outcome = self
            .engine
            .tools
            .client()
            .resume_tool_task(&target.upstream, &tool, task_id, &context)
            .await;
        Ok((outcome, app))
    }

    async fn store_resumed(
        &self,
        record: &ToolCallRecord,
        settled: &Settled,
        app: Option<ToolApp>,
    ) -> ChatResult<()> {
        let store = &self.engine.store;
        let current = store
            .get_tool_call(&record.workspace_id, &record.id)
            .await?;
        if current.state != ToolCallState::Dispatched {
            return Ok(());
        }
        store_settled_call(
            store,
            &self.engine.config,
            &current,
            &record.llm_call_id,
            settled,
            app,
            None,
        )
        .await?;
        tracing::info!(tool_call_id = %record.id, state = %settled.state, "stored a resumed task's outcome");
        Ok(())
    }
}
