//! The audit log: an append-only record of who did what in a workspace (server changes, tool
//! approvals and calls, token management). Details are redacted before they are stored, so
//! the log can be shown to admins without leaking credentials.

use crate::audit_events::{AuditEventRecord, AuditEventRow, NewAuditEvent, select_audit_events};
use crate::backend::on_backend;
use crate::error::StoreResult;
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde_json::Value;
use switchboard_core::WorkspaceId;

/// Most entries one `list_audit` call returns.
pub const MAX_AUDIT_PAGE: i64 = 500;

/// An event to record.
#[derive(Clone, Debug, PartialEq)]
pub struct NewAuditEntry {
    /// Who: a user id, `system`, or `token:<id>`.
    pub actor: String,
    /// What, as `area.verb` (`server.created`, `tool_call.approved`).
    pub action: String,
    /// The object acted on (an id or name), if any.
    pub target: Option<String>,
    /// Anything else; secret-looking keys are replaced by `[REDACTED]` before storage.
    pub details: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AuditEntry {
    /// Increasing: later entries have larger ids.
    pub id: i64,
    pub workspace_id: WorkspaceId,
    pub at: DateTime<Utc>,
    pub actor: String,
    pub action: String,
    pub target: Option<String>,
    pub details: Value,
}

/// Which entries to list: newest first, `before` an id for the next page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditQuery {
    pub limit: i64,
    pub before_id: Option<i64>,
    pub action: Option<String>,
}

impl Default for AuditQuery {
    fn default() -> Self {
        Self {
            limit: 100,
            before_id: None,
            action: None,
        }
    }
}

impl From<AuditEventRecord> for AuditEntry {
    fn from(event: AuditEventRecord) -> Self {
        AuditEntry {
            id: event.id,
            workspace_id: event.workspace_id,
            at: event.at,
            actor: event.actor,
            action: event.action,
            target: event.target,
            details: event.details,
        }
    }
}

impl Store {
    /// Appends an entry (details redacted, text cleaned as for every audit event) and returns
    /// it as stored: an audit event without the structured columns.
    pub async fn append_audit(
        &self,
        workspace_id: &WorkspaceId,
        entry: NewAuditEntry,
    ) -> StoreResult<AuditEntry> {
        self.append_audit_event(
            workspace_id,
            NewAuditEvent {
                actor: entry.actor,
                action: entry.action,
                target: entry.target,
                details: entry.details,
                ..NewAuditEvent::default()
            },
        )
        .await
        .map(AuditEntry::from)
    }

    /// The workspace's entries, newest first (at most [`MAX_AUDIT_PAGE`]).
    pub async fn list_audit(
        &self,
        workspace_id: &WorkspaceId,
        query: AuditQuery,
    ) -> StoreResult<Vec<AuditEntry>> {
        validate::page_limit(query.limit, MAX_AUDIT_PAGE)?;
        let rows: Vec<AuditEventRow> = on_backend!(self, |pool| {
            sqlx::query_as(concat!(
            select_audit_events!(),
            "WHERE workspace_id = $1 AND ($2 IS NULL OR id < $2) AND ($3 IS NULL OR action = $3) \
             ORDER BY id DESC LIMIT $4"
        ))
        .bind(workspace_id.as_str())
        .bind(query.before_id)
        .bind(&query.action)
        .bind(query.limit)
        .fetch_all(pool)
        .await
        })?;
        Ok(rows
            .into_iter()
            .map(|row| AuditEntry::from(AuditEventRecord::from(row)))
            .collect())
    }
}
