//! The recorded life of each tool call (`core::ToolCallState`): proposed by the model,
//! approved or denied, dispatched, then completed, failed or unknown. Every transition is
//! checked against the state machine and applied only if the row is still in the state it was
//! read in, so two tasks can never both dispatch one call.

use crate::audit_events::{NewAuditEvent, StorableAuditEvent, insert_audit_event};
use crate::backend::{on_backend, write_transaction};
use crate::clock;
use crate::commit_queue::grouped_write;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::instances::orphaned;
use crate::messages::{MessageRecord, NewMessage, insert_message, new_message_record};
use crate::storable::{clean_optional_json, clean_optional_text, clean_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::{
    ConversationId, MessageId, ServerId, ToolCallId, ToolCallState, WorkspaceId,
};

/// A tool call the model asked for, recorded before anything else happens to it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewToolCall {
    pub conversation_id: ConversationId,
    /// The assistant message that carried the request.
    pub message_id: Option<MessageId>,
    /// The model's id for the call (answers refer to it).
    pub llm_call_id: String,
    /// `None` when the name matched no registered server.
    pub server_id: Option<ServerId>,
    /// The server's name at the time (kept if the server is deleted later).
    pub server_name: String,
    pub tool_name: String,
    /// The arguments text exactly as the model produced it (may be invalid JSON).
    pub arguments: String,
}

/// What a transition records besides the new state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolCallOutcome {
    pub result: Option<Value>,
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ToolCallRecord {
    pub id: ToolCallId,
    pub workspace_id: WorkspaceId,
    pub conversation_id: ConversationId,
    pub message_id: Option<MessageId>,
    pub llm_call_id: String,
    /// `None` once the server is deleted (see `server_name`).
    pub server_id: Option<ServerId>,
    pub server_name: String,
    pub tool_name: String,
    pub arguments: String,
    pub state: ToolCallState,
    pub result: Option<Value>,
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    /// When it was approved or denied.
    pub decided_at: Option<DateTime<Utc>>,
    pub dispatched_at: Option<DateTime<Utc>>,
    /// When it completed, failed or became unknown.
    pub finished_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
    /// The upstream's task, when the call became one (migration 0018): a `dispatched` call
    /// with a task is followed again after a restart, never marked `unknown`.
    pub task_id: Option<String>,
    /// What the task's server last said of it (migration 0023); `None` before its first
    /// report and for calls that are not tasks.
    pub task_status: Option<TaskStatusRecord>,
}

#[derive(sqlx::FromRow)]
struct ToolCallRow {
    id: String,
    workspace_id: String,
    conversation_id: String,
    message_id: Option<String>,
    llm_call_id: String,
    server_id: Option<String>,
    server_name: String,
    tool_name: String,
    arguments: String,
    state: String,
    result: Option<Json<Value>>,
    error: Option<String>,
    created_at: DateTime<Utc>,
    decided_at: Option<DateTime<Utc>>,
    dispatched_at: Option<DateTime<Utc>>,
    finished_at: Option<DateTime<Utc>>,
    updated_at: DateTime<Utc>,
    task_id: Option<String>,
    task_status: Option<String>,
    task_status_message: Option<String>,
    task_updated_at: Option<DateTime<Utc>>,
}

impl TryFrom<ToolCallRow> for ToolCallRecord {
    type Error = StoreError;

    fn try_from(row: ToolCallRow) -> Result<Self, Self::Error> {
        let task_status = match (row.task_status, row.task_updated_at) {
            (Some(status), Some(updated_at)) => Some(TaskStatusRecord {
                status: status.parse().map_err(StoreError::corrupt)?,
                status_message: row.task_status_message,
                updated_at,
            }),
            _ => None,
        };
        Ok(ToolCallRecord {
            id: ToolCallId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            conversation_id: ConversationId::from_string(row.conversation_id),
            message_id: row.message_id.map(MessageId::from_string),
            llm_call_id: row.llm_call_id,
            server_id: row.server_id.map(ServerId::from_string),
            server_name: row.server_name,
            tool_name: row.tool_name,
            arguments: row.arguments,
            state: row.state.parse().map_err(StoreError::corrupt)?,
            result: row.result.map(|json| json.0),
            error: row.error,
            created_at: row.created_at,
            decided_at: row.decided_at,
            dispatched_at: row.dispatched_at,
            finished_at: row.finished_at,
            updated_at: row.updated_at,
            task_id: row.task_id,
            task_status,
        })
    }
}

/// The columns of a [`ToolCallRow`], for `SELECT` and `RETURNING`.
macro_rules! tool_call_columns {
    () => {
        concat!(
            "id, workspace_id, conversation_id, message_id, llm_call_id, server_id, ",
            "server_name, tool_name, arguments, state, result, error, created_at, decided_at, ",
            "dispatched_at, finished_at, updated_at, task_id, task_status, ",
            "task_status_message, task_updated_at"
        )
    };
}

macro_rules! select_tool_calls {
    ($tail:literal) => {
        concat!("SELECT ", tool_call_columns!(), " FROM tool_calls ", $tail)
    };
}

mod tasks;

pub use tasks::TaskStatusRecord;

/// Writes `$call`'s state, outcome and times if the row is still in `$previous`; evaluates to
/// the `sqlx` result (`rows_affected` 0: someone moved it first).
macro_rules! update_tool_call {
    ($executor:expr, $call:expr, $previous:expr) => {{
        let call: &ToolCallRecord = $call;
        let previous: ToolCallState = $previous;
        sqlx::query(
            "UPDATE tool_calls SET state = $4, result = $5, error = $6, decided_at = $7, \
             dispatched_at = $8, finished_at = $9, updated_at = $10 \
             WHERE workspace_id = $1 AND id = $2 AND state = $3",
        )
        .bind(call.workspace_id.as_str())
        .bind(call.id.as_str())
        .bind(previous.as_str())
        .bind(call.state.as_str())
        .bind(call.result.as_ref().map(Json))
        .bind(&call.error)
        .bind(call.decided_at)
        .bind(call.dispatched_at)
        .bind(call.finished_at)
        .bind(call.updated_at)
        .execute($executor)
        .await
    }};
}

/// A call's row after its next steps, with the audit row that goes with them
/// ([`Store::next_step`]).
struct NextStep {
    call: ToolCallRecord,
    /// The state the row must still be in (else someone moved it first: a conflict).
    previous: ToolCallState,
    /// Whether there were steps (none: only the audit row is written).
    moved: bool,
    audit: Option<StorableAuditEvent>,
}

/// The row `call` has after `steps` (each checked against the state machine, each step's time
/// recorded) and the audit row that goes with it, ready to be written; `Conflict` when the
/// state machine refuses a step.
fn next_step_of(
    mut call: ToolCallRecord,
    steps: &[ToolCallState],
    outcome: ToolCallOutcome,
    audit: Option<NewAuditEvent>,
) -> StoreResult<NextStep> {
    let previous = call.state;
    let now = clock::now();
    for &next in steps {
        call.state
            .transition(next)
            .map_err(|error| StoreError::Conflict(error.to_string()))?;
        call.state = next;
        match next {
            ToolCallState::Approved | ToolCallState::Denied => call.decided_at = Some(now),
            ToolCallState::Dispatched => call.dispatched_at = Some(now),
            ToolCallState::Completed | ToolCallState::Failed | ToolCallState::Unknown => {
                call.finished_at = Some(now)
            }
            ToolCallState::Proposed => {}
        }
    }
    let moved = !steps.is_empty();
    if moved {
        call.updated_at = now;
    }
    if outcome.result.is_some() {
        call.result = outcome.result;
    }
    if outcome.error.is_some() {
        call.error = outcome.error;
    }
    clean_optional_json(&mut call.result);
    clean_optional_text(&mut call.error);
    let audit = audit.map(StorableAuditEvent::new).transpose()?;
    Ok(NextStep {
        call,
        previous,
        moved,
        audit,
    })
}

/// Writes a [`NextStep`] inside the caller's transaction: the row if it is still in its
/// previous state (none moved: nothing to write but the audit row), then the audit row.
/// Evaluates to `StoreResult<()>`; `Conflict` when someone moved the call first.
macro_rules! write_next_step {
    ($executor:expr, $workspace_id:expr, $step:expr) => {{
        let step: &NextStep = $step;
        let workspace_id: &WorkspaceId = $workspace_id;
        async {
            if step.moved {
                let affected =
                    update_tool_call!(&mut *$executor, &step.call, step.previous)?.rows_affected();
                if affected == 0 {
                    return Err(StoreError::Conflict(format!(
                        "tool call {} left state {} before it could move to {}",
                        step.call.id, step.previous, step.call.state
                    )));
                }
            }
            if let Some(audit) = &step.audit {
                insert_audit_event!(&mut *$executor, workspace_id, audit).map_err(insert_error(
                    "audit event",
                    "id",
                    "workspace",
                ))?;
            }
            Ok::<(), StoreError>(())
        }
        .await
    }};
}

impl Store {
    /// Records a call in state `proposed`. The conversation, message and server must all be
    /// in the workspace (`NotFound` naming the one that is not).
    pub async fn create_tool_call(
        &self,
        workspace_id: &WorkspaceId,
        new_call: NewToolCall,
    ) -> StoreResult<ToolCallRecord> {
        self.create_tool_call_with_id(workspace_id, ToolCallId::generate(), new_call)
            .await
    }

    /// [`Store::create_tool_call`] under an id chosen by the caller (the one its review used).
    pub async fn create_tool_call_with_id(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: ToolCallId,
        new_call: NewToolCall,
    ) -> StoreResult<ToolCallRecord> {
        let record = proposed_record(workspace_id, tool_call_id, new_call, clock::now());
        self.insert_tool_call(record).await
    }

    /// Records a call a rule allowed before its row existed directly as `dispatched` (approved
    /// and dispatched at once), in one commit: call it last before the request leaves, like
    /// the `dispatched` step of [`Store::advance_tool_call`]. `tool_call_id` is the id the gate
    /// reviewed it under. Parents are checked as in [`Store::create_tool_call`].
    pub async fn create_dispatched_tool_call(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: ToolCallId,
        new_call: NewToolCall,
    ) -> StoreResult<ToolCallRecord> {
        let now = clock::now();
        let mut record = proposed_record(workspace_id, tool_call_id, new_call, now);
        record.state = ToolCallState::Dispatched;
        record.decided_at = Some(now);
        record.dispatched_at = Some(now);
        self.insert_tool_call(record).await
    }

    /// Inserts `record` (its parents checked) in one grouped commit.
    async fn insert_tool_call(&self, record: ToolCallRecord) -> StoreResult<ToolCallRecord> {
        let row = record.clone();
        let instance_id = self.owning_instance().map(str::to_owned);
        grouped_write!(self, |tx| {
            let workspace_id = row.workspace_id.as_str();
            // The parents are checked in one statement (each is a round trip on SQLite).
            let (conversations, messages, servers): (i64, i64, i64) = sqlx::query_as(
                "SELECT \
                 (SELECT COUNT(*) FROM conversations WHERE workspace_id = $1 AND id = $2), \
                 CASE WHEN $3 IS NULL THEN 1 ELSE \
                 (SELECT COUNT(*) FROM messages WHERE workspace_id = $1 AND id = $3) END, \
                 CASE WHEN $4 IS NULL THEN 1 ELSE \
                 (SELECT COUNT(*) FROM mcp_servers WHERE workspace_id = $1 AND id = $4) END",
            )
            .bind(workspace_id)
            .bind(row.conversation_id.as_str())
            .bind(row.message_id.as_ref().map(MessageId::as_str))
            .bind(row.server_id.as_ref().map(ServerId::as_str))
            .fetch_one(&mut *tx)
            .await?;
            let missing = [
                ("conversation", conversations),
                ("message", messages),
                ("server", servers),
            ];
            if let Some((entity, _)) = missing.into_iter().find(|(_, found)| *found == 0) {
                return Err(StoreError::not_found(entity));
            }
            sqlx::query(
                "INSERT INTO tool_calls (id, workspace_id, conversation_id, message_id, llm_call_id, \
                 server_id, server_name, tool_name, arguments, state, created_at, updated_at, \
                 instance_id, decided_at, dispatched_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $14)",
            )
            .bind(row.id.as_str())
            .bind(workspace_id)
            .bind(row.conversation_id.as_str())
            .bind(row.message_id.as_ref().map(MessageId::as_str))
            .bind(&row.llm_call_id)
            .bind(row.server_id.as_ref().map(ServerId::as_str))
            .bind(&row.server_name)
            .bind(&row.tool_name)
            .bind(&row.arguments)
            .bind(row.state.as_str())
            .bind(row.created_at)
            .bind(instance_id.as_deref())
            .bind(row.decided_at)
            .bind(row.dispatched_at)
            .execute(&mut *tx)
            .await?;
        });
        Ok(record)
    }

    /// Moves a call to `next` if the state machine allows it from its current state, recording
    /// the outcome and the time of the step. `Conflict` when the move is not allowed or another
    /// task moved the call first.
    pub async fn transition_tool_call(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
        next: ToolCallState,
        outcome: ToolCallOutcome,
    ) -> StoreResult<ToolCallRecord> {
        self.advance_tool_call(workspace_id, tool_call_id, &[next], outcome, None)
            .await
    }

    /// Moves a call through `steps` in one commit (each step checked against the state
    /// machine, each step's time recorded), with `audit` appended in the same transaction when
    /// given: `approved` and `dispatched` of a call a rule allowed are one commit, and so are
    /// a call's final state and its audit row. What matters for durability is unchanged: the
    /// commit that says `dispatched` is acknowledged before the request leaves, and a final
    /// state is never committed without its audit row. `Conflict` (nothing written, the audit
    /// row neither) when a step is not allowed or another task moved the call first.
    pub async fn advance_tool_call(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
        steps: &[ToolCallState],
        outcome: ToolCallOutcome,
        audit: Option<NewAuditEvent>,
    ) -> StoreResult<ToolCallRecord> {
        let step = self
            .next_step(workspace_id, tool_call_id, steps, outcome, audit)
            .await?;
        let call = step.call.clone();
        self.write_step(workspace_id, step).await?;
        Ok(call)
    }

    /// Writes `step` in the next group commit ([`write_next_step!`]).
    async fn write_step(&self, workspace_id: &WorkspaceId, step: NextStep) -> StoreResult<()> {
        let workspace = workspace_id.clone();
        grouped_write!(self, |tx| {
            write_next_step!(&mut *tx, &workspace, &step)?;
        });
        Ok(())
    }

    /// [`Store::advance_tool_call`] from `known`, the caller's copy of the call, without reading
    /// it first when `known` is still current: the write is the same compare-and-set on the
    /// state, so a copy someone else has moved on (or one the steps cannot follow) falls back
    /// to reading the call and moving that — the outcome is exactly
    /// [`Store::advance_tool_call`]'s, one read fewer in the common case (the gateway's
    /// finished call, whose row is the one it just created).
    pub async fn advance_tool_call_from(
        &self,
        known: &ToolCallRecord,
        steps: &[ToolCallState],
        outcome: ToolCallOutcome,
        audit: Option<NewAuditEvent>,
    ) -> StoreResult<ToolCallRecord> {
        let followable = steps
            .iter()
            .try_fold(known.state, |state, &next| state.transition(next))
            .is_ok();
        if !followable {
            return self
                .advance_tool_call(&known.workspace_id, &known.id, steps, outcome, audit)
                .await;
        }
        // The audit row is small: kept for the fallback (the step moves into the write).
        let fallback_audit = audit.clone();
        let step = next_step_of(known.clone(), steps, outcome, audit)?;
        let call = step.call.clone();
        match self.write_step(&known.workspace_id, step).await {
            Err(StoreError::Conflict(_)) => {
                // Moved by someone else since `known` was read: decide on the stored row. The
                // outcome is the one merged into `call` (nothing of `known` besides it).
                let outcome = ToolCallOutcome {
                    result: call.result,
                    error: call.error,
                };
                self.advance_tool_call(
                    &known.workspace_id,
                    &known.id,
                    steps,
                    outcome,
                    fallback_audit,
                )
                .await
            }
            written => written.map(|()| call),
        }
    }

    /// A call's last step and its tool message in one commit: the final state (none: the state
    /// is already final, a denial recorded when it was decided), `audit`, and `message`
    /// appended to the call's conversation. A restart can then never find a finished call
    /// without the message that tells the model its outcome, nor a message without the state.
    /// `Conflict` (nothing written) as for [`Store::advance_tool_call`].
    pub async fn finish_tool_call_with_message(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
        state: Option<ToolCallState>,
        outcome: ToolCallOutcome,
        audit: Option<NewAuditEvent>,
        message: NewMessage,
    ) -> StoreResult<(ToolCallRecord, MessageRecord)> {
        let steps: Vec<ToolCallState> = state.into_iter().collect();
        let step = self
            .next_step(workspace_id, tool_call_id, &steps, outcome, audit)
            .await?;
        let mut message = new_message_record(workspace_id, &step.call.conversation_id, message)?;
        message.seq = write_transaction!(self, |tx| {
            write_next_step!(&mut *tx, workspace_id, &step)?;
            insert_message!(&mut *tx, &message)?
        });
        Ok((step.call, message))
    }

    /// The call as stored now, moved through `steps` ([`next_step_of`]).
    async fn next_step(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
        steps: &[ToolCallState],
        outcome: ToolCallOutcome,
        audit: Option<NewAuditEvent>,
    ) -> StoreResult<NextStep> {
        let call = self.get_tool_call(workspace_id, tool_call_id).await?;
        next_step_of(call, steps, outcome, audit)
    }

    pub async fn get_tool_call(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
    ) -> StoreResult<ToolCallRecord> {
        let row: Option<ToolCallRow> = on_backend!(self, |pool| sqlx::query_as(
            select_tool_calls!("WHERE workspace_id = $1 AND id = $2")
        )
        .bind(workspace_id.as_str())
        .bind(tool_call_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.ok_or_else(|| StoreError::not_found("tool call"))?
            .try_into()
    }

    /// The conversation's tool calls, oldest first.
    pub async fn list_tool_calls(
        &self,
        workspace_id: &WorkspaceId,
        conversation_id: &ConversationId,
    ) -> StoreResult<Vec<ToolCallRecord>> {
        let rows: Vec<ToolCallRow> = on_backend!(self, |pool| sqlx::query_as(select_tool_calls!(
            "WHERE workspace_id = $1 AND conversation_id = $2 ORDER BY created_at, id"
        ))
        .bind(workspace_id.as_str())
        .bind(conversation_id.as_str())
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(ToolCallRecord::try_from).collect()
    }

    /// Recovery of dead instances' calls (at start-up and in each sweep), across all
    /// workspaces: calls that were `dispatched` when their process died become `unknown` (they
    /// may have run upstream; never re-run them silently) unless they became a task (those
    /// are claimed and followed, [`Store::claim_orphaned_task_calls`]), and calls that never left
    /// (`proposed`, `approved`) become `failed`. Calls of live instances (other replicas, and
    /// this one) are left alone; see `instances`. Returns how many changed.
    pub async fn recover_interrupted_tool_calls(&self) -> StoreResult<u64> {
        let now = clock::now();
        let me = self.me_for_recovery();
        let changed = on_backend!(self, |pool| {
            let unknown = sqlx::query(concat!(
                "UPDATE tool_calls SET state = 'unknown', finished_at = $1, updated_at = $1, \
                 error = COALESCE(error, 'interrupted by a restart after dispatch; outcome unknown') \
                 WHERE state = 'dispatched' AND task_id IS NULL AND ",
                orphaned!("$2", "$1")
            ))
            .bind(now)
            .bind(me)
            .execute(pool)
            .await?
            .rows_affected();
            let failed = sqlx::query(concat!(
                "UPDATE tool_calls SET state = 'failed', finished_at = $1, updated_at = $1, \
                 error = COALESCE(error, 'interrupted by a restart before dispatch') \
                 WHERE state IN ('proposed', 'approved') AND ",
                orphaned!("$2", "$1")
            ))
            .bind(now)
            .bind(me)
            .execute(pool)
            .await?
            .rows_affected();
            Ok::<u64, sqlx::Error>(unknown + failed)
        })?;
        if changed > 0 {
            tracing::warn!(changed, "recovered tool calls interrupted by a restart");
        }
        Ok(changed)
    }
}

/// The record of a new call, in state `proposed`, its texts storable on every backend.
fn proposed_record(
    workspace_id: &WorkspaceId,
    id: ToolCallId,
    new_call: NewToolCall,
    now: DateTime<Utc>,
) -> ToolCallRecord {
    let mut record = ToolCallRecord {
        id,
        workspace_id: workspace_id.clone(),
        conversation_id: new_call.conversation_id,
        message_id: new_call.message_id,
        llm_call_id: new_call.llm_call_id,
        server_id: new_call.server_id,
        server_name: new_call.server_name,
        tool_name: new_call.tool_name,
        arguments: new_call.arguments,
        state: ToolCallState::Proposed,
        result: None,
        error: None,
        created_at: now,
        decided_at: None,
        dispatched_at: None,
        finished_at: None,
        updated_at: now,
        task_id: None,
        task_status: None,
    };
    for text in [
        &mut record.llm_call_id,
        &mut record.server_name,
        &mut record.tool_name,
        &mut record.arguments,
    ] {
        clean_text(text);
    }
    record
}
