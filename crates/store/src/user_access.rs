//! Changing what a user may do after it exists: its role, its active flag, its removal.
//!
//! Every change keeps at least one active owner or admin in the workspace (else nobody could
//! manage it any more): the check and the write are one transaction, which first takes the
//! workspace row's lock (a no-op update; SQLite's `BEGIN IMMEDIATE` already serialises
//! writers, PostgreSQL needs the row lock), so two admins demoting each other at once cannot
//! both succeed. After the commit the revocation epoch moves (`revocations.rs`), so the
//! caches of verified tokens (`/mcp`'s) forget this user's tokens at once, here and, on
//! PostgreSQL, in other replicas. Tokens themselves are not rewritten: what they grant is
//! bounded by the holder's current role and active flag at every authentication
//! (`tokens.rs`).

use crate::backend::write_transaction;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use crate::users::{UserRecord, UserRole};
use switchboard_core::{UserId, WorkspaceId};

/// What becomes of a removed user's conversations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemovedConversations {
    /// They go with the user (with their messages, tool calls, approval and elicitation
    /// requests: the foreign keys cascade).
    Delete,
    /// They are given to this user of the same workspace (the admin removing the person),
    /// with their approval and elicitation requests, so that what the team learnt in them
    /// stays readable and a pending request can still be decided.
    TransferTo(UserId),
}

/// What a removal did: the user as they were and how many conversations were handed over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemovedUser {
    pub user: UserRecord,
    /// Conversations given to the new owner (0 with [`RemovedConversations::Delete`]).
    pub transferred_conversations: u64,
}

/// What to change about a user; `None` leaves it as it is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserAccessChange {
    pub role: Option<UserRole>,
    pub active: Option<bool>,
}

const LOCK_WORKSPACE_SQL: &str = "UPDATE workspaces SET name = name WHERE id = $1";
const OTHER_ACTIVE_ADMINS_SQL: &str = "SELECT COUNT(*) FROM users WHERE workspace_id = $1 AND id <> $2 AND active = TRUE AND role IN ('owner', 'admin')";

impl Store {
    /// Changes a user's role and/or active flag and returns it as it now is.
    /// `NotFound { entity: "user" }` outside the workspace; `Conflict` when the change would
    /// leave the workspace without an active owner or admin.
    pub async fn update_user_access(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
        change: UserAccessChange,
    ) -> StoreResult<UserRecord> {
        let mut user = self.get_user(workspace_id, user_id).await?;
        let updated = write_transaction!(self, |tx| {
            sqlx::query(LOCK_WORKSPACE_SQL)
                .bind(workspace_id.as_str())
                .execute(&mut *tx)
                .await?;
            let current: Option<(String, bool)> = sqlx::query_as(
                "SELECT role, active FROM users WHERE workspace_id = $1 AND id = $2",
            )
            .bind(workspace_id.as_str())
            .bind(user_id.as_str())
            .fetch_optional(&mut *tx)
            .await?;
            let Some((role, active)) = current else {
                return Err(StoreError::not_found("user"));
            };
            let role: UserRole = role.parse().map_err(StoreError::corrupt)?;
            let next_role = change.role.unwrap_or(role);
            let next_active = change.active.unwrap_or(active);
            if role.is_admin() && active && !(next_role.is_admin() && next_active) {
                let others: i64 = sqlx::query_scalar(OTHER_ACTIVE_ADMINS_SQL)
                    .bind(workspace_id.as_str())
                    .bind(user_id.as_str())
                    .fetch_one(&mut *tx)
                    .await?;
                if others == 0 {
                    return Err(last_admin_conflict(&user.name, "demoted or deactivated"));
                }
            }
            sqlx::query(
                "UPDATE users SET role = $1, active = $2 WHERE workspace_id = $3 AND id = $4",
            )
            .bind(next_role.as_str())
            .bind(next_active)
            .bind(workspace_id.as_str())
            .bind(user_id.as_str())
            .execute(&mut *tx)
            .await?;
            if !next_active {
                // A deactivated person's browser sessions end with the change.
                sqlx::query("DELETE FROM web_sessions WHERE workspace_id = $1 AND user_id = $2")
                    .bind(workspace_id.as_str())
                    .bind(user_id.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
            (next_role, next_active)
        });
        (user.role, user.active) = updated;
        self.announce_revocation(user_id.as_str()).await;
        Ok(user)
    }

    /// Removes a user with everything that is only theirs (tokens, their own credentials and
    /// remembered approvals: the foreign keys cascade); their conversations are deleted or
    /// handed over as `conversations` says, in the same transaction. The audit log keeps its
    /// records. `NotFound` outside the workspace (for the user or the new owner); `Conflict`
    /// for the last active owner or admin, or a transfer to the user being removed.
    pub async fn delete_user(
        &self,
        workspace_id: &WorkspaceId,
        user_id: &UserId,
        conversations: RemovedConversations,
    ) -> StoreResult<RemovedUser> {
        let user = self.get_user(workspace_id, user_id).await?;
        if let RemovedConversations::TransferTo(heir) = &conversations {
            if heir == user_id {
                return Err(StoreError::Conflict(
                    "a removed person's conversations cannot be given to that person".into(),
                ));
            }
            self.get_user(workspace_id, heir).await?;
        }
        let transferred = write_transaction!(self, |tx| {
            sqlx::query(LOCK_WORKSPACE_SQL)
                .bind(workspace_id.as_str())
                .execute(&mut *tx)
                .await?;
            if user.role.is_admin() && user.active {
                let others: i64 = sqlx::query_scalar(OTHER_ACTIVE_ADMINS_SQL)
                    .bind(workspace_id.as_str())
                    .bind(user_id.as_str())
                    .fetch_one(&mut *tx)
                    .await?;
                if others == 0 {
                    return Err(last_admin_conflict(&user.name, "removed"));
                }
            }
            let mut transferred = 0;
            if let RemovedConversations::TransferTo(heir) = &conversations {
                for (index, sql) in TRANSFER_SQL.iter().enumerate() {
                    let changed = sqlx::query(*sql)
                        .bind(heir.as_str())
                        .bind(workspace_id.as_str())
                        .bind(user_id.as_str())
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                    if index == 0 {
                        transferred = changed;
                    }
                }
            }
            let deleted = sqlx::query("DELETE FROM users WHERE workspace_id = $1 AND id = $2")
                .bind(workspace_id.as_str())
                .bind(user_id.as_str())
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if deleted == 0 {
                return Err(StoreError::not_found("user"));
            }
            transferred
        });
        self.announce_revocation(user_id.as_str()).await;
        Ok(RemovedUser {
            user,
            transferred_conversations: transferred,
        })
    }
}

/// Hands a removed user's conversations (first: its count is the one reported) and the
/// approval and elicitation requests made in them to a new owner ($1 new owner, $2
/// workspace, $3 removed user).
const TRANSFER_SQL: [&str; 3] = [
    "UPDATE conversations SET owner_user_id = $1 WHERE workspace_id = $2 AND owner_user_id = $3",
    "UPDATE approval_requests SET owner_user_id = $1 WHERE workspace_id = $2 AND owner_user_id = $3",
    "UPDATE elicitation_requests SET owner_user_id = $1 WHERE workspace_id = $2 AND owner_user_id = $3",
];

fn last_admin_conflict(name: &str, what: &str) -> StoreError {
    StoreError::Conflict(format!(
        "'{name}' is the workspace's last active owner or admin and cannot be {what}: \
         make another person an admin first"
    ))
}
