//! Tool approval policies: per (server, tool) in a workspace, ALWAYS_ALLOW / ALWAYS_DENY /
//! ASK_USER, optionally pinned to the definition hash that was approved, so a tool whose
//! definition changes upstream is asked about again. Absence of a row means "use the default
//! policy from configuration" — that decision belongs to the approval gate, not to the store.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_text, storable_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ApprovalPolicy, ServerId, UserId, WorkspaceId};

/// A policy to set (insert or replace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewToolPolicy {
    pub server_id: ServerId,
    pub tool_name: String,
    pub policy: ApprovalPolicy,
    /// The `definition_hash` the decision applies to; `None` applies to any definition.
    pub pinned_definition_hash: Option<String>,
    pub updated_by: Option<UserId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolPolicyRecord {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    pub tool_name: String,
    pub policy: ApprovalPolicy,
    pub pinned_definition_hash: Option<String>,
    pub updated_by: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct ToolPolicyRow {
    workspace_id: String,
    server_id: String,
    tool_name: String,
    policy: String,
    pinned_definition_hash: Option<String>,
    updated_by: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<ToolPolicyRow> for ToolPolicyRecord {
    type Error = StoreError;

    fn try_from(row: ToolPolicyRow) -> Result<Self, Self::Error> {
        Ok(ToolPolicyRecord {
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            server_id: ServerId::from_string(row.server_id),
            tool_name: row.tool_name,
            policy: row.policy.parse().map_err(StoreError::corrupt)?,
            pinned_definition_hash: row.pinned_definition_hash,
            updated_by: row.updated_by.map(UserId::from_string),
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

macro_rules! select_policies {
    ($tail:literal) => {
        concat!(
            "SELECT workspace_id, server_id, tool_name, policy, pinned_definition_hash, updated_by, ",
            "created_at, updated_at FROM tool_approval_policies ",
            $tail
        )
    };
}

impl Store {
    /// Sets the policy for one tool of a server of the workspace (`NotFound { entity:
    /// "server" }` otherwise), replacing any previous one.
    pub async fn set_tool_policy(
        &self,
        workspace_id: &WorkspaceId,
        mut new_policy: NewToolPolicy,
    ) -> StoreResult<ToolPolicyRecord> {
        // Tool names come from upstreams: kept as the tool catalog keeps them.
        clean_text(&mut new_policy.tool_name);
        if new_policy.tool_name.is_empty() {
            return Err(StoreError::invalid("tool_name", "must not be empty"));
        }
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO tool_approval_policies (workspace_id, server_id, tool_name, policy, \
             pinned_definition_hash, updated_by, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $7) \
             ON CONFLICT (workspace_id, server_id, tool_name) DO UPDATE SET policy = excluded.policy, \
             pinned_definition_hash = excluded.pinned_definition_hash, \
             updated_by = excluded.updated_by, updated_at = excluded.updated_at"
        )
        .bind(workspace_id.as_str())
        .bind(new_policy.server_id.as_str())
        .bind(&new_policy.tool_name)
        .bind(new_policy.policy.as_str())
        .bind(&new_policy.pinned_definition_hash)
        .bind(new_policy.updated_by.as_ref().map(UserId::as_str))
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("tool policy", "tool_name", "server"))?;
        self.get_tool_policy(workspace_id, &new_policy.server_id, &new_policy.tool_name)
            .await?
            .ok_or_else(|| StoreError::not_found("tool policy"))
    }

    /// The explicit policy for a tool, if one is set.
    pub async fn get_tool_policy(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        tool_name: &str,
    ) -> StoreResult<Option<ToolPolicyRecord>> {
        let tool_name = storable_text(tool_name);
        let row: Option<ToolPolicyRow> = on_backend!(self, |pool| sqlx::query_as(
            select_policies!("WHERE workspace_id = $1 AND server_id = $2 AND tool_name = $3")
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(&*tool_name)
        .fetch_optional(pool)
        .await)?;
        row.map(ToolPolicyRecord::try_from).transpose()
    }

    /// The workspace's policies (one server's when given), by server then tool.
    pub async fn list_tool_policies(
        &self,
        workspace_id: &WorkspaceId,
        server_id: Option<&ServerId>,
    ) -> StoreResult<Vec<ToolPolicyRecord>> {
        let rows: Vec<ToolPolicyRow> = on_backend!(self, |pool| {
            sqlx::query_as(select_policies!(
            "WHERE workspace_id = $1 AND ($2 IS NULL OR server_id = $2) ORDER BY server_id, tool_name"
        ))
        .bind(workspace_id.as_str())
        .bind(server_id.map(ServerId::as_str))
        .fetch_all(pool)
        .await
        })?;
        rows.into_iter().map(ToolPolicyRecord::try_from).collect()
    }

    /// Removes an explicit policy (the default applies again).
    pub async fn delete_tool_policy(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        tool_name: &str,
    ) -> StoreResult<()> {
        let tool_name = storable_text(tool_name);
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "DELETE FROM tool_approval_policies WHERE workspace_id = $1 AND server_id = $2 AND tool_name = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(&*tool_name)
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        if affected == 0 {
            return Err(StoreError::not_found("tool policy"));
        }
        Ok(())
    }
}
