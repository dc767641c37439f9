//! Tool calls that became upstream tasks (the MCP tasks extension): the task's id and what
//! its server last said of it, kept with the call's row while it is `dispatched`
//! (migrations 0018 and 0023), the claim by which exactly one live process follows the task
//! of a call whose process died, and cancels asked of a task another process follows (stored
//! here for that process to act on: it looks for them on the calls it follows).
//!
//! Why the status is stored and not only shown: a task may run for hours, and the page that
//! watched it live may be closed, reloaded or served by a restarted process; what it shows
//! then comes from this row.

use super::{ToolCallRecord, ToolCallRow};
use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::instances::orphaned;
use crate::storable::{clean_optional_text, clean_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ConversationId, ToolCallId, ToolTask, ToolTaskStatus, WorkspaceId};

/// A task's latest status as its server reported it (`tasks/get` or `notifications/tasks`).
#[derive(Clone, Debug, PartialEq)]
pub struct TaskStatusRecord {
    pub status: ToolTaskStatus,
    /// The server's `statusMessage`, meant for people.
    pub status_message: Option<String>,
    /// When this process heard it.
    pub updated_at: DateTime<Utc>,
}

impl Store {
    /// Keeps the task a `dispatched` call became (its upstream answered with one) and the
    /// task's latest status: the first report stores the task's id, so a restarted host
    /// follows it, and every later one its status. `Conflict` when the call is no longer
    /// `dispatched` or is another task's.
    pub async fn set_tool_call_task(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
        task: &ToolTask,
    ) -> StoreResult<()> {
        let now = clock::now();
        let mut task_id = task.task_id.clone();
        clean_text(&mut task_id);
        let mut status_message = task.status_message.clone();
        clean_optional_text(&mut status_message);
        let affected = on_backend!(self, |pool| sqlx::query(
            "UPDATE tool_calls SET task_id = $3, task_status = $4, task_status_message = $5, \
             task_updated_at = $6, updated_at = $6 \
             WHERE workspace_id = $1 AND id = $2 AND state = 'dispatched' \
             AND (task_id IS NULL OR task_id = $3)"
        )
        .bind(workspace_id.as_str())
        .bind(tool_call_id.as_str())
        .bind(&task_id)
        .bind(task.status.as_str())
        .bind(&status_message)
        .bind(now)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::Conflict(format!(
                "tool call {tool_call_id} is no longer dispatched with task {task_id}"
            )));
        }
        Ok(())
    }

    /// Takes over the task calls dead instances left `dispatched` (across all workspaces):
    /// each becomes this instance's, so exactly one live process follows it (a live
    /// replica's are left alone). Returns them for following.
    pub async fn claim_orphaned_task_calls(&self) -> StoreResult<Vec<ToolCallRecord>> {
        let now = clock::now();
        let me = self.me_for_recovery();
        let rows: Vec<ToolCallRow> = on_backend!(self, |pool| sqlx::query_as(concat!(
            "UPDATE tool_calls SET instance_id = $2, updated_at = $1 \
             WHERE state = 'dispatched' AND task_id IS NOT NULL AND ",
            orphaned!("$2", "$1"),
            " RETURNING ",
            tool_call_columns!()
        ))
        .bind(now)
        .bind(me)
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(ToolCallRecord::try_from).collect()
    }

    /// Asks whichever process follows the call's task to cancel it (it finds the request with
    /// [`Store::task_cancels_asked_here`]). `false` when the call is not a `dispatched` task
    /// (ended, or never one). Asking twice keeps the first time.
    pub async fn request_tool_call_task_cancel(
        &self,
        workspace_id: &WorkspaceId,
        tool_call_id: &ToolCallId,
    ) -> StoreResult<bool> {
        let now = clock::now();
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "UPDATE tool_calls SET task_cancel_requested_at = COALESCE(task_cancel_requested_at, $3) \
             WHERE workspace_id = $1 AND id = $2 AND state = 'dispatched' AND task_id IS NOT NULL"
        )
        .bind(workspace_id.as_str())
        .bind(tool_call_id.as_str())
        .bind(now)
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        Ok(affected > 0)
    }

    /// The task calls of this instance (its own, and those it claimed) still `dispatched`
    /// whose cancel was asked elsewhere, with their conversations (across all workspaces).
    pub async fn task_cancels_asked_here(&self) -> StoreResult<Vec<(ToolCallId, ConversationId)>> {
        let me = self.me_for_recovery();
        let rows: Vec<(String, String)> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT id, conversation_id FROM tool_calls \
             WHERE state = 'dispatched' AND task_cancel_requested_at IS NOT NULL \
             AND COALESCE(instance_id, '') = $1"
        )
        .bind(me)
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(id, conversation_id)| {
                (
                    ToolCallId::from_string(id),
                    ConversationId::from_string(conversation_id),
                )
            })
            .collect())
    }
}
