//! Approval rules narrower than the workspace's policies (`policies`): per bud (set by whoever
//! manages the bud, applying to its conversations) and per user (a person's remembered
//! "always" decision). Each rule may be pinned to the definition it was made for (`pin_hash`,
//! see `tool_pins`). How rules combine is the approval gate's business, not the store's.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_text, storable_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ApprovalPolicy, BudId, ServerId, UserId, WorkspaceId};

/// Whom a rule applies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ToolRuleScope {
    /// Conversations started from this bud.
    Bud(BudId),
    /// This user's own calls (a remembered decision).
    User(UserId),
}

impl ToolRuleScope {
    fn id(&self) -> &str {
        match self {
            ToolRuleScope::Bud(bud_id) => bud_id.as_str(),
            ToolRuleScope::User(user_id) => user_id.as_str(),
        }
    }

    fn parent(&self) -> &'static str {
        match self {
            ToolRuleScope::Bud(_) => "bud or server",
            ToolRuleScope::User(_) => "user or server",
        }
    }
}

/// A rule to set (insert or replace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewToolRule {
    pub server_id: ServerId,
    pub tool_name: String,
    pub policy: ApprovalPolicy,
    /// The pin (definition + server instructions) the rule was made for; `None` for any.
    pub pin_hash: Option<String>,
    pub updated_by: Option<UserId>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRuleRecord {
    pub workspace_id: WorkspaceId,
    pub scope: ToolRuleScope,
    pub server_id: ServerId,
    pub tool_name: String,
    pub policy: ApprovalPolicy,
    pub pin_hash: Option<String>,
    pub updated_by: Option<UserId>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct ToolRuleRow {
    workspace_id: String,
    scope_id: String,
    server_id: String,
    tool_name: String,
    policy: String,
    pin_hash: Option<String>,
    updated_by: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl ToolRuleRow {
    fn into_record(self, bud: bool) -> StoreResult<ToolRuleRecord> {
        Ok(ToolRuleRecord {
            workspace_id: WorkspaceId::from_string(self.workspace_id),
            scope: if bud {
                ToolRuleScope::Bud(BudId::from_string(self.scope_id))
            } else {
                ToolRuleScope::User(UserId::from_string(self.scope_id))
            },
            server_id: ServerId::from_string(self.server_id),
            tool_name: self.tool_name,
            policy: self.policy.parse().map_err(StoreError::corrupt)?,
            pin_hash: self.pin_hash,
            updated_by: self.updated_by.map(UserId::from_string),
            created_at: self.created_at,
            updated_at: self.updated_at,
        })
    }
}

/// The SQL of one operation for both tables (bud rules, user decisions).
struct RuleSql {
    upsert: &'static str,
    select_one: &'static str,
    select_all: &'static str,
    delete: &'static str,
}

const BUD_SQL: RuleSql = RuleSql {
    upsert: "INSERT INTO bud_tool_policies (workspace_id, bud_id, server_id, tool_name, policy, \
             pin_hash, updated_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
             ON CONFLICT (workspace_id, bud_id, server_id, tool_name) DO UPDATE SET \
             policy = excluded.policy, pin_hash = excluded.pin_hash, \
             updated_by = excluded.updated_by, updated_at = excluded.updated_at",
    select_one: "SELECT workspace_id, bud_id AS scope_id, server_id, tool_name, policy, pin_hash, \
                 updated_by, created_at, updated_at FROM bud_tool_policies \
                 WHERE workspace_id = $1 AND bud_id = $2 AND server_id = $3 AND tool_name = $4",
    select_all: "SELECT workspace_id, bud_id AS scope_id, server_id, tool_name, policy, pin_hash, \
                 updated_by, created_at, updated_at FROM bud_tool_policies \
                 WHERE workspace_id = $1 AND bud_id = $2 ORDER BY server_id, tool_name",
    delete: "DELETE FROM bud_tool_policies \
             WHERE workspace_id = $1 AND bud_id = $2 AND server_id = $3 AND tool_name = $4",
};

// A user's own decisions have no separate author: `updated_by` reads back as the user.
const USER_SQL: RuleSql = RuleSql {
    upsert: "INSERT INTO user_tool_decisions (workspace_id, user_id, server_id, tool_name, policy, \
             pin_hash, created_at, updated_at) \
             SELECT $1, $2, $3, $4, $5, $6, $8, $8 WHERE $7 IS NULL OR $7 = $2 \
             ON CONFLICT (workspace_id, user_id, server_id, tool_name) DO UPDATE SET \
             policy = excluded.policy, pin_hash = excluded.pin_hash, updated_at = excluded.updated_at",
    select_one: "SELECT workspace_id, user_id AS scope_id, server_id, tool_name, policy, pin_hash, \
                 user_id AS updated_by, created_at, updated_at FROM user_tool_decisions \
                 WHERE workspace_id = $1 AND user_id = $2 AND server_id = $3 AND tool_name = $4",
    select_all: "SELECT workspace_id, user_id AS scope_id, server_id, tool_name, policy, pin_hash, \
                 user_id AS updated_by, created_at, updated_at FROM user_tool_decisions \
                 WHERE workspace_id = $1 AND user_id = $2 ORDER BY server_id, tool_name",
    delete: "DELETE FROM user_tool_decisions \
             WHERE workspace_id = $1 AND user_id = $2 AND server_id = $3 AND tool_name = $4",
};

fn sql_for(scope: &ToolRuleScope) -> (&'static RuleSql, bool) {
    match scope {
        ToolRuleScope::Bud(_) => (&BUD_SQL, true),
        ToolRuleScope::User(_) => (&USER_SQL, false),
    }
}

impl Store {
    /// Sets the rule for one tool of a server, replacing any previous one. `NotFound` when the
    /// bud, user or server is not in the workspace. A user's decision is always their own:
    /// `updated_by` must be `None` or that user.
    pub async fn set_tool_rule(
        &self,
        workspace_id: &WorkspaceId,
        scope: &ToolRuleScope,
        mut rule: NewToolRule,
    ) -> StoreResult<ToolRuleRecord> {
        // Tool names come from upstreams: kept as the tool catalog keeps them.
        clean_text(&mut rule.tool_name);
        if rule.tool_name.is_empty() {
            return Err(StoreError::invalid("tool_name", "must not be empty"));
        }
        if let (ToolRuleScope::User(user_id), Some(updated_by)) = (scope, &rule.updated_by)
            && user_id != updated_by
        {
            return Err(StoreError::invalid(
                "updated_by",
                "a user's remembered decision can only be made by that user",
            ));
        }
        let (sql, _) = sql_for(scope);
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(sql.upsert)
            .bind(workspace_id.as_str())
            .bind(scope.id())
            .bind(rule.server_id.as_str())
            .bind(&rule.tool_name)
            .bind(rule.policy.as_str())
            .bind(&rule.pin_hash)
            .bind(rule.updated_by.as_ref().map(UserId::as_str))
            .bind(now)
            .execute(pool)
            .await
            .map(|_| ()))
        .map_err(insert_error("tool rule", "tool_name", scope.parent()))?;
        self.get_tool_rule(workspace_id, scope, &rule.server_id, &rule.tool_name)
            .await?
            .ok_or_else(|| StoreError::not_found("tool rule"))
    }

    /// The rule for a tool in `scope`, if one is set.
    pub async fn get_tool_rule(
        &self,
        workspace_id: &WorkspaceId,
        scope: &ToolRuleScope,
        server_id: &ServerId,
        tool_name: &str,
    ) -> StoreResult<Option<ToolRuleRecord>> {
        let tool_name = storable_text(tool_name);
        let (sql, bud) = sql_for(scope);
        let row: Option<ToolRuleRow> = on_backend!(self, |pool| sqlx::query_as(sql.select_one)
            .bind(workspace_id.as_str())
            .bind(scope.id())
            .bind(server_id.as_str())
            .bind(&*tool_name)
            .fetch_optional(pool)
            .await)?;
        row.map(|row| row.into_record(bud)).transpose()
    }

    /// Every rule of `scope`, by server then tool.
    pub async fn list_tool_rules(
        &self,
        workspace_id: &WorkspaceId,
        scope: &ToolRuleScope,
    ) -> StoreResult<Vec<ToolRuleRecord>> {
        let (sql, bud) = sql_for(scope);
        let rows: Vec<ToolRuleRow> = on_backend!(self, |pool| sqlx::query_as(sql.select_all)
            .bind(workspace_id.as_str())
            .bind(scope.id())
            .fetch_all(pool)
            .await)?;
        rows.into_iter().map(|row| row.into_record(bud)).collect()
    }

    /// Every rule (bud and user) about one server's tools, buds' first.
    pub async fn list_server_tool_rules(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<Vec<ToolRuleRecord>> {
        let (bud_rows, user_rows): (Vec<ToolRuleRow>, Vec<ToolRuleRow>) =
            on_backend!(self, |pool| {
                let buds = sqlx::query_as(
                    "SELECT workspace_id, bud_id AS scope_id, server_id, tool_name, policy, \
                     pin_hash, updated_by, created_at, updated_at FROM bud_tool_policies \
                     WHERE workspace_id = $1 AND server_id = $2 ORDER BY bud_id, tool_name",
                )
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .fetch_all(pool)
                .await?;
                let users = sqlx::query_as(
                    "SELECT workspace_id, user_id AS scope_id, server_id, tool_name, policy, \
                     pin_hash, user_id AS updated_by, created_at, updated_at \
                     FROM user_tool_decisions WHERE workspace_id = $1 AND server_id = $2 \
                     ORDER BY user_id, tool_name",
                )
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .fetch_all(pool)
                .await?;
                Ok::<_, sqlx::Error>((buds, users))
            })?;
        bud_rows
            .into_iter()
            .map(|row| row.into_record(true))
            .chain(user_rows.into_iter().map(|row| row.into_record(false)))
            .collect()
    }

    /// Removes a rule (`NotFound` when there is none).
    pub async fn delete_tool_rule(
        &self,
        workspace_id: &WorkspaceId,
        scope: &ToolRuleScope,
        server_id: &ServerId,
        tool_name: &str,
    ) -> StoreResult<()> {
        let tool_name = storable_text(tool_name);
        let (sql, _) = sql_for(scope);
        let affected = on_backend!(self, |pool| sqlx::query(sql.delete)
            .bind(workspace_id.as_str())
            .bind(scope.id())
            .bind(server_id.as_str())
            .bind(&*tool_name)
            .execute(pool)
            .await
            .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("tool rule"));
        }
        Ok(())
    }
}
