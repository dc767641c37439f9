//! Users: the people (or automations) of a workspace. A user acts through API tokens
//! (`tokens.rs`); the store keeps no passwords.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use switchboard_core::{UserId, WorkspaceId};

/// What a user is to its workspace. Permissions come from token scopes; the role records
/// ownership (the bootstrap user is the owner).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserRole {
    Owner,
    Member,
}

impl UserRole {
    pub fn as_str(self) -> &'static str {
        match self {
            UserRole::Owner => "owner",
            UserRole::Member => "member",
        }
    }
}

impl fmt::Display for UserRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for UserRole {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "owner" => Ok(UserRole::Owner),
            "member" => Ok(UserRole::Member),
            other => Err(format!(
                "unknown user role '{other}' (expected owner or member)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRecord {
    pub id: UserId,
    pub workspace_id: WorkspaceId,
    /// Unique within the workspace.
    pub name: String,
    pub role: UserRole,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
pub(crate) struct UserRow {
    id: String,
    workspace_id: String,
    name: String,
    role: String,
    created_at: DateTime<Utc>,
}

impl TryFrom<UserRow> for UserRecord {
    type Error = StoreError;

    fn try_from(row: UserRow) -> Result<Self, Self::Error> {
        Ok(UserRecord {
            id: UserId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            name: row.name,
            role: row.role.parse().map_err(StoreError::corrupt)?,
            created_at: row.created_at,
        })
    }
}

pub(crate) const INSERT_USER_SQL: &str =
    "INSERT INTO users (id, workspace_id, name, role, created_at) VALUES ($1, $2, $3, $4, $5)";

impl Store {
    /// Adds a user to a workspace; `UniqueViolation { field: "name" }` when the name is taken
    /// there, `NotFound { entity: "workspace" }` when the workspace does not exist.
    pub async fn create_user(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
        role: UserRole,
    ) -> StoreResult<UserRecord> {
        validate::display_text("name", name, 200)?;
        let record = UserRecord {
            id: UserId::generate(),
            workspace_id: workspace_id.clone(),
            name: name.to_owned(),
            role,
            created_at: clock::now(),
        };
        on_backend!(self, |pool| sqlx::query(INSERT_USER_SQL)
            .bind(record.id.as_str())
            .bind(record.workspace_id.as_str())
            .bind(&record.name)
            .bind(record.role.as_str())
            .bind(record.created_at)
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(insert_error("user", "name", "workspace"))?;
        Ok(record)
    }

    pub async fn get_user(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
    ) -> StoreResult<UserRecord> {
        let row: Option<UserRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT id, workspace_id, name, role, created_at FROM users WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(user_id.as_str())
        .fetch_optional(pool)
        .await
        })?;
        row.ok_or_else(|| StoreError::not_found("user"))?.try_into()
    }

    /// The workspace's users, oldest first.
    pub async fn list_users(&self, workspace_id: &WorkspaceId) -> StoreResult<Vec<UserRecord>> {
        let rows: Vec<UserRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT id, workspace_id, name, role, created_at FROM users WHERE workspace_id = $1 ORDER BY created_at, id"
        )
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await
        })?;
        rows.into_iter().map(UserRecord::try_from).collect()
    }
}
