//! Workspaces: the tenants. Every other row belongs to exactly one of them.
//!
//! Listing workspaces is the one deliberately unscoped read (admin CLI, start-up); everything
//! else in the store takes a `WorkspaceId`.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, unique_violation};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use switchboard_core::WorkspaceId;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceRecord {
    pub id: WorkspaceId,
    /// Unique, identifier-like (`default`, `acme-research`).
    pub name: String,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct WorkspaceRow {
    id: String,
    name: String,
    created_at: DateTime<Utc>,
}

impl From<WorkspaceRow> for WorkspaceRecord {
    fn from(row: WorkspaceRow) -> Self {
        WorkspaceRecord {
            id: WorkspaceId::from_string(row.id),
            name: row.name,
            created_at: row.created_at,
        }
    }
}

pub(crate) const INSERT_WORKSPACE_SQL: &str =
    "INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)";

impl Store {
    /// Creates a workspace; `UniqueViolation { field: "name" }` when the name is taken.
    pub async fn create_workspace(&self, name: &str) -> StoreResult<WorkspaceRecord> {
        validate::identifier_name("name", name)?;
        let record = WorkspaceRecord {
            id: WorkspaceId::generate(),
            name: name.to_owned(),
            created_at: clock::now(),
        };
        on_backend!(self, |pool| sqlx::query(INSERT_WORKSPACE_SQL)
            .bind(record.id.as_str())
            .bind(&record.name)
            .bind(record.created_at)
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(unique_violation("workspace", "name"))?;
        Ok(record)
    }

    pub async fn get_workspace(&self, workspace_id: &WorkspaceId) -> StoreResult<WorkspaceRecord> {
        let row: Option<WorkspaceRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT id, name, created_at FROM workspaces WHERE id = $1"
        )
        .bind(workspace_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.map(WorkspaceRecord::from)
            .ok_or_else(|| StoreError::not_found("workspace"))
    }

    pub async fn find_workspace_by_name(&self, name: &str) -> StoreResult<Option<WorkspaceRecord>> {
        let row: Option<WorkspaceRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT id, name, created_at FROM workspaces WHERE name = $1"
        )
        .bind(name)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(WorkspaceRecord::from))
    }

    /// Every workspace, oldest first.
    pub async fn list_workspaces(&self) -> StoreResult<Vec<WorkspaceRecord>> {
        let rows: Vec<WorkspaceRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT id, name, created_at FROM workspaces ORDER BY created_at, id"
        )
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(WorkspaceRecord::from).collect())
    }
}
