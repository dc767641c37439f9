//! The store writes of a tool call's life after its `proposed` row, shared by a turn's calls
//! and calls from outside a turn (the gateway's, an app's), in as few commits as durability
//! allows: `approved` and `dispatched` are one commit, acknowledged before the request leaves;
//! the final state and the gate's audit row ([`crate::ApprovalGate::audit_event`]) are one
//! commit, so no final state is ever stored without its audit row — nor, for a turn's call,
//! without the tool message that tells the model its outcome ([`finish_with_message`]). A denial is recorded when
//! it is decided (its row says `denied` while the person's answer is shown), so only its audit
//! row is left for the end.
//!
//! A conflict (someone else moved the call: a sweep found it orphaned) is logged, not fatal,
//! and the audit row is then written alone; an audit row that cannot be written alone is
//! logged, never returned (the audit never fails what it records).

use crate::error::{ChatError, ChatResult};
use switchboard_core::{ToolCallState, ToolTask};
use switchboard_store::{
    NewAuditEvent, NewMessage, Store, StoreError, ToolCallOutcome, ToolCallRecord,
};

/// `approved` → `dispatched` in one commit: call it last before the request leaves.
pub(crate) async fn dispatch(store: &Store, record: &ToolCallRecord) -> ChatResult<()> {
    advance(
        store,
        record,
        &[ToolCallState::Approved, ToolCallState::Dispatched],
        ToolCallOutcome::default(),
        None,
    )
    .await
}

/// Keeps the task a `dispatched` call became and its latest status, before anything else is
/// heard of it: a host that restarts from here on follows the task instead of marking the
/// call `unknown`, and a page opened later shows the task as its server last reported it.
/// Called at the task's creation and at every change of its status.
pub(crate) async fn keep_task(
    store: &Store,
    record: &ToolCallRecord,
    task: &ToolTask,
) -> ChatResult<()> {
    match store
        .set_tool_call_task(&record.workspace_id, &record.id, task)
        .await
    {
        Ok(()) => Ok(()),
        Err(StoreError::Conflict(message)) => {
            tracing::warn!(tool_call_id = %record.id, %message, "could not keep the call's task");
            Ok(())
        }
        Err(error) => Err(ChatError::from(error)),
    }
}

/// The call's final state (`completed`, `failed`, `unknown`, or `denied` already recorded)
/// with its audit row, if the gate gave one.
pub(crate) async fn finish(
    store: &Store,
    record: &ToolCallRecord,
    state: ToolCallState,
    outcome: ToolCallOutcome,
    audit: Option<NewAuditEvent>,
) -> ChatResult<()> {
    if state == ToolCallState::Denied {
        if let Some(audit) = audit {
            append_audit(store, record, audit).await;
        }
        return Ok(());
    }
    advance(store, record, &[state], outcome, audit).await
}

/// The call's final state, its audit row and its tool message in one commit (a denial's state
/// is already recorded: its audit row and message). After a conflict (someone else finished
/// the call: a sweep) the audit row and the message are still written, each alone: the
/// conversation keeps what the model was told.
pub(crate) async fn finish_with_message(
    store: &Store,
    record: &ToolCallRecord,
    state: ToolCallState,
    outcome: ToolCallOutcome,
    audit: Option<NewAuditEvent>,
    message: NewMessage,
) -> ChatResult<()> {
    let step = (state != ToolCallState::Denied).then_some(state);
    match store
        .finish_tool_call_with_message(
            &record.workspace_id,
            &record.id,
            step,
            outcome,
            audit.clone(),
            message.clone(),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(StoreError::Conflict(conflict)) => {
            tracing::warn!(tool_call_id = %record.id, message = %conflict, "tool call state conflict");
            if let Some(audit) = audit {
                append_audit(store, record, audit).await;
            }
            store
                .append_message(&record.workspace_id, &record.conversation_id, message)
                .await?;
            Ok(())
        }
        Err(error) => Err(ChatError::from(error)),
    }
}

/// Moves the call through `steps` (with `audit` in the same commit).
pub(crate) async fn advance(
    store: &Store,
    record: &ToolCallRecord,
    steps: &[ToolCallState],
    outcome: ToolCallOutcome,
    audit: Option<NewAuditEvent>,
) -> ChatResult<()> {
    match store
        .advance_tool_call_from(record, steps, outcome, audit.clone())
        .await
    {
        Ok(_) => Ok(()),
        Err(StoreError::Conflict(message)) => {
            tracing::warn!(tool_call_id = %record.id, %message, "tool call state conflict");
            if let Some(audit) = audit {
                append_audit(store, record, audit).await;
            }
            Ok(())
        }
        Err(error) => Err(ChatError::from(error)),
    }
}

async fn append_audit(store: &Store, record: &ToolCallRecord, audit: NewAuditEvent) {
    let action = audit.action.clone();
    if let Err(error) = store.append_audit_event(&record.workspace_id, audit).await {
        tracing::error!(%error, %action, tool_call_id = %record.id, "could not write an audit event");
    }
}
