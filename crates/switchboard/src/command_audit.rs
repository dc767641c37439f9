//! The audit rows of the admin subcommands that change the store directly (`token create`
//! and `revoke`, `users add`, `set-role`, `deactivate`, `reactivate`, `delete`): the same
//! actions and details the API writes for the same change, with the actor `cli`
//! (`AuditLog::command_line_change`), so the audit log holds every change to who may do what,
//! whichever way it was made. As everywhere, a failed audit write is logged and does not undo
//! the change.

use switchboard_approvals::audit_details::{
    PersonChanged, PersonRemoved, TokenCreated, TokenRevoked, UserCreated, to_details,
};
use switchboard_approvals::{AuditLog, ConfigurationChange};
use switchboard_core::WorkspaceId;
use switchboard_store::{RemovedUser, Store, TokenRecord, UserRecord};

/// Writes the audit rows of one command's changes to `store`.
pub struct CommandAudit {
    log: AuditLog,
}

impl CommandAudit {
    pub fn new(store: &Store) -> Self {
        Self {
            log: AuditLog::new(store.clone()),
        }
    }

    async fn record(
        &self,
        workspace_id: &WorkspaceId,
        action: &str,
        target: &str,
        details: serde_json::Value,
    ) {
        self.log
            .command_line_change(
                workspace_id,
                ConfigurationChange::new(action, target, details),
            )
            .await;
    }

    pub async fn user_created(&self, user: &UserRecord) {
        let details = to_details(&UserCreated {
            name: &user.name,
            role: user.role,
        });
        self.record(
            &user.workspace_id,
            "user.created",
            user.id.as_str(),
            details,
        )
        .await;
    }

    pub async fn user_changed(&self, user: &UserRecord) {
        let details = to_details(&PersonChanged {
            name: &user.name,
            role: user.role,
            active: user.active,
        });
        self.record(
            &user.workspace_id,
            "user.updated",
            user.id.as_str(),
            details,
        )
        .await;
    }

    /// `heir`: who received the conversations (`None`: deleted with the person).
    pub async fn user_removed(&self, removed: &RemovedUser, heir: Option<&str>) {
        let details = to_details(&PersonRemoved {
            name: &removed.user.name,
            role: removed.user.role,
            conversations: if heir.is_some() { "keep" } else { "delete" },
            transferred_conversations: removed.transferred_conversations,
            conversations_owner: heir,
        });
        let user = &removed.user;
        self.record(
            &user.workspace_id,
            "user.deleted",
            user.id.as_str(),
            details,
        )
        .await;
    }

    pub async fn token_created(&self, token: &TokenRecord) {
        let details = to_details(&TokenCreated {
            user_id: &token.user_id,
            name: &token.name,
            scopes: &token.scopes,
            expires_at: token.expires_at,
        });
        self.record(
            &token.workspace_id,
            "token.created",
            token.id.as_str(),
            details,
        )
        .await;
    }

    pub async fn token_revoked(&self, token: &TokenRecord) {
        let details = to_details(&TokenRevoked { name: &token.name });
        self.record(
            &token.workspace_id,
            "token.revoked",
            token.id.as_str(),
            details,
        )
        .await;
    }
}
