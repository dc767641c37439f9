//! The audit log: an append-only record of who did what in a workspace (server changes, tool
//! approvals and calls, token management). Details are redacted before they are stored, so
//! the log can be shown to admins without leaking credentials.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_json, clean_optional_text, clean_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::WorkspaceId;
use switchboard_core::redact::redact_json;

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

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: i64,
    workspace_id: String,
    at: DateTime<Utc>,
    actor: String,
    action: String,
    target: Option<String>,
    details: Json<Value>,
}

impl From<AuditRow> for AuditEntry {
    fn from(row: AuditRow) -> Self {
        AuditEntry {
            id: row.id,
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            at: row.at,
            actor: row.actor,
            action: row.action,
            target: row.target,
            details: row.details.0,
        }
    }
}

impl Store {
    /// Appends an entry (details redacted) and returns it as stored.
    pub async fn append_audit(
        &self,
        workspace_id: &WorkspaceId,
        mut entry: NewAuditEntry,
    ) -> StoreResult<AuditEntry> {
        if entry.action.trim().is_empty() {
            return Err(StoreError::invalid("action", "must not be empty"));
        }
        if entry.actor.trim().is_empty() {
            return Err(StoreError::invalid("actor", "must not be empty"));
        }
        let mut details = redact_json(&entry.details);
        clean_json(&mut details);
        clean_text(&mut entry.actor);
        clean_text(&mut entry.action);
        clean_optional_text(&mut entry.target);
        let at = clock::now();
        let id: i64 = on_backend!(self, |pool| sqlx::query_scalar(
            "INSERT INTO audit_log (workspace_id, at, actor, action, target, details) \
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING id"
        )
        .bind(workspace_id.as_str())
        .bind(at)
        .bind(&entry.actor)
        .bind(&entry.action)
        .bind(&entry.target)
        .bind(Json(&details))
        .fetch_one(pool)
        .await)
        .map_err(insert_error("audit entry", "id", "workspace"))?;
        Ok(AuditEntry {
            id,
            workspace_id: workspace_id.clone(),
            at,
            actor: entry.actor,
            action: entry.action,
            target: entry.target,
            details,
        })
    }

    /// The workspace's entries, newest first (at most [`MAX_AUDIT_PAGE`]).
    pub async fn list_audit(
        &self,
        workspace_id: &WorkspaceId,
        query: AuditQuery,
    ) -> StoreResult<Vec<AuditEntry>> {
        if query.limit < 1 || query.limit > MAX_AUDIT_PAGE {
            return Err(StoreError::invalid(
                "limit",
                format!("must be between 1 and {MAX_AUDIT_PAGE}"),
            ));
        }
        let rows: Vec<AuditRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT id, workspace_id, at, actor, action, target, details FROM audit_log \
             WHERE workspace_id = $1 AND ($2 IS NULL OR id < $2) AND ($3 IS NULL OR action = $3) \
             ORDER BY id DESC LIMIT $4"
        )
        .bind(workspace_id.as_str())
        .bind(query.before_id)
        .bind(&query.action)
        .bind(query.limit)
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(AuditEntry::from).collect())
    }
}
