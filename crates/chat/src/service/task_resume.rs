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
//! engine shuts down; it never sends `tasks/cancel` then. The person may cancel the call
//! meanwhile (`ChatService::cancel_task_call`): then `tasks/cancel` goes and the call ends
//! like a cancelled one. Start-up is not the only time calls are claimed: every live
//! process looks again at each heartbeat ([`ChatService::keep_adopting_task_calls`]), so a
//! replica that died mid-task on a shared PostgreSQL database has its tasks followed by a
//! survivor — exactly one, the claim being one conditional `UPDATE`.

use super::ChatService;
use crate::call_records;
use crate::error::ChatResult;
use crate::gate::{CallOrigin, CallReport, GateDecision, GateRequest, GateTarget};
use crate::turn::call_outcome::{Settled, failure, settle};
use crate::turn::tool_step::store_settled_call;
use std::time::Instant;
use switchboard_core::{Principal, ScopeSet, ToolApp, ToolCallState, ToolDefinition, UserId};
use switchboard_mcp_client::{CallContext, CallEvent, Caller};
use switchboard_store::{NewAuditEvent, ToolCallRecord};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Status reports of a resumed task waiting to be stored (a report that finds them full is
/// dropped by the client; stores are quick next to a server's status changes).
const TASK_REPORT_BUFFER: usize = 8;

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

    /// Claims and follows orphaned task calls every `every` (the instance heartbeat) until
    /// the engine shuts down: dead replicas' tasks are adopted by the living, not only by the
    /// next process to start.
    pub fn keep_adopting_task_calls(&self, every: std::time::Duration) -> JoinHandle<()> {
        let service = self.clone();
        tokio::spawn(async move {
            let shutdown = service.engine.shutdown.clone();
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                if let Err(error) = service.resume_task_calls().await {
                    tracing::warn!(%error, "claiming orphaned task calls failed; trying again at the next tick");
                }
            }
        })
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
        let audit = match self.audit_request(record).await {
            Some(request) => self
                .engine
                .gate
                .audit_event(&resumed_report(request, &settled)),
            None => None,
        };
        self.store_resumed(record, &settled, app, audit).await
    }

    /// The call as the gate saw it when it was reviewed (before the restart), rebuilt from its
    /// row for the audit row of its final state: a final state is never stored without one.
    /// `None` when the conversation is gone (the call's row went with it).
    async fn audit_request(&self, record: &ToolCallRecord) -> Option<GateRequest> {
        let store = &self.engine.store;
        let conversation = store
            .get_conversation(&record.workspace_id, &record.conversation_id)
            .await
            .ok()?;
        let listed = match &record.server_id {
            Some(server_id) => store
                .list_server_tools(&record.workspace_id, server_id)
                .await
                .unwrap_or_default()
                .into_iter()
                .find(|tool| tool.name == record.tool_name)
                .map(|tool| tool.definition()),
            None => None,
        };
        let tool = listed.unwrap_or_else(|| ToolDefinition::named(&record.tool_name));
        let target = match &record.server_id {
            Some(server_id) => GateTarget::Registered {
                server_id: server_id.clone(),
                server_name: record.server_name.clone(),
            },
            None => GateTarget::Ephemeral {
                server_name: record.server_name.clone(),
                url: String::new(),
            },
        };
        Some(GateRequest {
            principal: owner_principal(record, &conversation.owner_user_id),
            conversation_id: record.conversation_id.clone(),
            conversation_owner: conversation.owner_user_id,
            tool_call_id: record.id.clone(),
            llm_call_id: record.llm_call_id.clone(),
            target,
            tool,
            arguments: serde_json::from_str(&record.arguments).unwrap_or_default(),
            cancellation: CancellationToken::new(),
            origin: CallOrigin::Chat,
            client_approver: None,
        })
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
        let principal = owner_principal(record, &conversation.owner_user_id);
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
        let (reports, mut reported) = mpsc::channel(TASK_REPORT_BUFFER);
        let context = CallContext {
            events: Some(reports),
            ..CallContext::new(Caller {
                user_id: conversation.owner_user_id,
                conversation_id: Some(record.conversation_id.clone()),
            })
        };
        // Cancellable by itself while it is followed (`ChatService::cancel_task_call`).
        let _followed = self.engine.task_calls.follow(
            &record.id,
            &record.conversation_id,
            context.cancellation.clone(),
        );
        let client = self.engine.tools.client();
        let follow = client.resume_tool_task(&target.upstream, &tool, task_id, &context);
        tokio::pin!(follow);
        // Every status change is stored as it comes, as a turn's call does: no answer shows
        // this call live, so a page learns of it from the stored row.
        let outcome = loop {
            tokio::select! {
                outcome = &mut follow => break outcome,
                Some(event) = reported.recv() => {
                    if let CallEvent::Task(task) = event
                        && let Err(error) = call_records::keep_task(store, record, &task).await
                    {
                        tracing::warn!(%error, tool_call_id = %record.id, "could not keep a resumed task's status");
                    }
                }
            }
        };
        Ok((outcome, app))
    }

    async fn store_resumed(
        &self,
        record: &ToolCallRecord,
        settled: &Settled,
        app: Option<ToolApp>,
        audit: Option<NewAuditEvent>,
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
            audit,
        )
        .await?;
        tracing::info!(tool_call_id = %record.id, state = %settled.state, "stored a resumed task's outcome");
        Ok(())
    }
}

/// The conversation's owner with no scope: who a resumed call is followed and audited as.
fn owner_principal(record: &ToolCallRecord, owner: &UserId) -> Principal {
    Principal {
        workspace_id: record.workspace_id.clone(),
        user_id: owner.clone(),
        token_id: None,
        scopes: ScopeSet::empty(),
    }
}

/// What the gate audits for a resumed call: allowed before the restart, ended as `settled`.
fn resumed_report(request: GateRequest, settled: &Settled) -> CallReport {
    CallReport {
        request,
        decision: GateDecision::Allow {
            decided_by: "reviewed before a restart; its task followed after it".to_owned(),
        },
        final_state: settled.state,
        duration: settled.duration,
        result_bytes: settled.result.as_ref().and_then(crate::gate::json_byte_len),
        error: settled.error.as_ref().map(|(_, message)| message.clone()),
    }
}
