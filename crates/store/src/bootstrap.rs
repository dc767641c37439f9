//! First start: an empty store gets workspace `default`, an owner user and an all-scopes token,
//! in one transaction, so a crash can never leave a workspace nobody can log into.

use crate::backend::write_transaction;
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::store::Store;
use crate::tokens::{
    self, INSERT_TOKEN_SQL, NewToken, TokenPlaintext, TokenRecord, hash_token,
    validate_imported_plaintext,
};
use crate::users::{INSERT_USER_SQL, UserRecord, UserRole};
use crate::workspaces::{INSERT_WORKSPACE_SQL, WorkspaceRecord};
use switchboard_core::{ScopeSet, UserId, WorkspaceId};

/// Name of the workspace created on first start.
pub const DEFAULT_WORKSPACE_NAME: &str = "default";
/// Name of the owner user created on first start.
pub const OWNER_USER_NAME: &str = "owner";
/// Name of the token created on first start.
pub const BOOTSTRAP_TOKEN_NAME: &str = "bootstrap admin";

/// What first start created. `plaintext` is the owner token: print it once (unless the
/// operator supplied it).
#[derive(Debug)]
pub struct Bootstrapped {
    pub workspace: WorkspaceRecord,
    pub owner: UserRecord,
    pub token: TokenRecord,
    pub plaintext: TokenPlaintext,
}

impl Store {
    /// On an empty store (no workspace at all) creates workspace `default`, its owner user and
    /// an all-scopes token — `admin_token` when given (e.g. from `SWITCHBOARD_ADMIN_TOKEN`),
    /// else a fresh random one. Returns `None`, changing nothing, when any workspace exists.
    /// Safe against concurrent first starts: exactly one of them bootstraps.
    pub async fn bootstrap_default(
        &self,
        admin_token: Option<String>,
    ) -> StoreResult<Option<Bootstrapped>> {
        let plaintext = match admin_token {
            Some(token) => {
                validate_imported_plaintext(&token)?;
                token
            }
            None => tokens::generate_plaintext(),
        };
        match self.bootstrap_in_transaction(plaintext).await {
            // A concurrent first start won the race on the unique workspace name.
            Err(StoreError::UniqueViolation { .. }) => Ok(None),
            other => other,
        }
    }

    async fn bootstrap_in_transaction(
        &self,
        plaintext: String,
    ) -> StoreResult<Option<Bootstrapped>> {
        let workspace = WorkspaceRecord {
            id: WorkspaceId::generate(),
            name: DEFAULT_WORKSPACE_NAME.to_owned(),
            created_at: clock::now(),
        };
        let owner = UserRecord {
            id: UserId::generate(),
            workspace_id: workspace.id.clone(),
            name: OWNER_USER_NAME.to_owned(),
            role: UserRole::Owner,
            active: true,
            created_at: workspace.created_at,
        };
        let token = tokens::prepare_token(
            &workspace.id,
            NewToken {
                user_id: owner.id.clone(),
                name: BOOTSTRAP_TOKEN_NAME.to_owned(),
                scopes: ScopeSet::all(),
                expires_at: None,
            },
            &plaintext,
        )?;
        let token_hash = hash_token(&plaintext);
        let created = write_transaction!(self, |tx| {
            let existing: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM workspaces")
                .fetch_one(&mut *tx)
                .await?;
            if existing > 0 {
                false
            } else {
                sqlx::query(INSERT_WORKSPACE_SQL)
                    .bind(workspace.id.as_str())
                    .bind(&workspace.name)
                    .bind(workspace.created_at)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(INSERT_USER_SQL)
                    .bind(owner.id.as_str())
                    .bind(owner.workspace_id.as_str())
                    .bind(&owner.name)
                    .bind(owner.role.as_str())
                    .bind(owner.created_at)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query(INSERT_TOKEN_SQL)
                    .bind(token.id.as_str())
                    .bind(token.workspace_id.as_str())
                    .bind(token.user_id.as_str())
                    .bind(&token.name)
                    .bind(&token_hash)
                    .bind(&token.display_prefix)
                    .bind(token.scopes.to_string())
                    .bind(token.created_at)
                    .bind(token.expires_at)
                    .execute(&mut *tx)
                    .await?;
                true
            }
        });
        if !created {
            return Ok(None);
        }
        tracing::info!(workspace_id = %workspace.id, "bootstrapped workspace 'default' with an owner token");
        Ok(Some(Bootstrapped {
            workspace,
            owner,
            token,
            plaintext: TokenPlaintext::from_secret(plaintext),
        }))
    }
}
