//! The tokens of one OAuth connection, keyed by (workspace, server, user or none for the
//! workspace's shared connection), and the lease that serialises their refresh across replicas.
//!
//! The lease is a compare-and-set on the row's `refresh_lease_holder`/`refresh_lease_until`:
//! taken when free, expired, or already ours; released only by its holder. A holder that dies
//! loses it when its time-to-live runs out.

use super::REDACTED;
use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::store::Store;
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::Value;
use sqlx::types::Json;
use std::fmt;
use std::time::Duration;
use switchboard_core::{ServerId, UserId, WorkspaceId};

/// Credentials to save: the opaque payload (sealed) and its plain summary.
#[derive(Clone, PartialEq)]
pub struct OAuthCredentials {
    /// Opaque to the store (the host keeps rmcp's stored credentials here); sealed at rest.
    pub payload: Value,
    /// When the access token expires, if the authorization server said.
    pub expires_at: Option<DateTime<Utc>>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// Who the connection is as, for display (e.g. an account name); may be unknown.
    pub account: Option<String>,
}

/// A stored connection with its decrypted payload: for the client that calls the server only.
#[derive(Clone, PartialEq)]
pub struct OAuthCredentialsRecord {
    /// `None` for the workspace's shared connection.
    pub user_id: Option<UserId>,
    pub credentials: OAuthCredentials,
    pub updated_at: DateTime<Utc>,
}

/// What can be shown about a connection: no payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthConnectionSummary {
    pub user_id: Option<UserId>,
    pub expires_at: Option<DateTime<Utc>>,
    pub scopes: Vec<String>,
    pub account: Option<String>,
    pub updated_at: DateTime<Utc>,
}

impl fmt::Debug for OAuthCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthCredentials")
            .field("payload", &REDACTED)
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .field("account", &self.account)
            .finish()
    }
}

impl fmt::Debug for OAuthCredentialsRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthCredentialsRecord")
            .field("user_id", &self.user_id)
            .field("credentials", &self.credentials)
            .field("updated_at", &self.updated_at)
            .finish()
    }
}

#[derive(sqlx::FromRow)]
struct CredentialsRow {
    user_id: Option<String>,
    payload_ciphertext: Vec<u8>,
    expires_at: Option<DateTime<Utc>>,
    scopes: Json<Vec<String>>,
    account: Option<String>,
    updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct SummaryRow {
    user_id: Option<String>,
    expires_at: Option<DateTime<Utc>>,
    scopes: Json<Vec<String>>,
    account: Option<String>,
    updated_at: DateTime<Utc>,
}

impl From<SummaryRow> for OAuthConnectionSummary {
    fn from(row: SummaryRow) -> Self {
        OAuthConnectionSummary {
            user_id: row.user_id.map(UserId::from_string),
            expires_at: row.expires_at,
            scopes: row.scopes.0,
            account: row.account,
            updated_at: row.updated_at,
        }
    }
}

/// The key column that stands for the user: their id, or `''` for the shared connection.
fn subject(user_id: Option<&UserId>) -> &str {
    user_id.map_or("", UserId::as_str)
}

/// Binds a payload to its row's key.
fn associated_data(
    workspace_id: &WorkspaceId,
    server_id: &ServerId,
    user: Option<&UserId>,
) -> String {
    format!(
        "mcp_oauth_credentials/{workspace_id}/{server_id}/{}",
        subject(user)
    )
}

impl Store {
    /// Saves (replaces) a connection's credentials. The refresh lease, if held, stays held.
    /// `NotFound` when the server or user is not in the workspace.
    pub async fn save_oauth_credentials(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: Option<&UserId>,
        credentials: &OAuthCredentials,
    ) -> StoreResult<()> {
        let sealed = self.seal_json(
            &credentials.payload,
            &associated_data(workspace_id, server_id, user_id),
        )?;
        crate::validate::no_nul(
            "account",
            credentials.account.as_deref().unwrap_or_default(),
        )?;
        let expires_at = credentials.expires_at.map(clock::truncate_to_micros);
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO mcp_oauth_credentials (workspace_id, server_id, subject, user_id, \
             payload_ciphertext, expires_at, scopes, account, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
             ON CONFLICT (workspace_id, server_id, subject) DO UPDATE SET \
             payload_ciphertext = excluded.payload_ciphertext, expires_at = excluded.expires_at, \
             scopes = excluded.scopes, account = excluded.account, updated_at = excluded.updated_at"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(subject(user_id))
        .bind(user_id.map(UserId::as_str))
        .bind(&sealed)
        .bind(expires_at)
        .bind(Json(&credentials.scopes))
        .bind(&credentials.account)
        .bind(clock::now())
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("oauth credentials", "key", "server or user"))
    }

    /// The connection's credentials with the payload decrypted, if connected.
    pub async fn load_oauth_credentials(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: Option<&UserId>,
    ) -> StoreResult<Option<OAuthCredentialsRecord>> {
        let row: Option<CredentialsRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT user_id, payload_ciphertext, expires_at, scopes, account, updated_at \
             FROM mcp_oauth_credentials WHERE workspace_id = $1 AND server_id = $2 AND subject = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(subject(user_id))
        .fetch_optional(pool)
        .await)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let payload = self.open_json(
            &row.payload_ciphertext,
            &associated_data(workspace_id, server_id, user_id),
        )?;
        Ok(Some(OAuthCredentialsRecord {
            user_id: row.user_id.map(UserId::from_string),
            credentials: OAuthCredentials {
                payload,
                expires_at: row.expires_at,
                scopes: row.scopes.0,
                account: row.account,
            },
            updated_at: row.updated_at,
        }))
    }

    /// The connection's summary (no payload, nothing decrypted), if connected.
    pub async fn oauth_connection_summary(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: Option<&UserId>,
    ) -> StoreResult<Option<OAuthConnectionSummary>> {
        let row: Option<SummaryRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT user_id, expires_at, scopes, account, updated_at FROM mcp_oauth_credentials \
             WHERE workspace_id = $1 AND server_id = $2 AND subject = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(subject(user_id))
        .fetch_optional(pool)
        .await
        })?;
        Ok(row.map(OAuthConnectionSummary::from))
    }

    /// Deletes the connection's credentials; `true` when there were some.
    pub async fn delete_oauth_credentials(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: Option<&UserId>,
    ) -> StoreResult<bool> {
        let affected = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM mcp_oauth_credentials \
             WHERE workspace_id = $1 AND server_id = $2 AND subject = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(subject(user_id))
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        Ok(affected > 0)
    }

    /// The users who have connected their own account to the server (not the shared
    /// connection), by id.
    pub async fn list_oauth_connected_users(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<Vec<UserId>> {
        let ids: Vec<String> = on_backend!(self, |pool| sqlx::query_scalar(
            "SELECT user_id FROM mcp_oauth_credentials \
             WHERE workspace_id = $1 AND server_id = $2 AND user_id IS NOT NULL ORDER BY user_id"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(ids.into_iter().map(UserId::from_string).collect())
    }

    /// Takes the connection's refresh lease for `holder` for `ttl`: `true` when it was free,
    /// expired or already `holder`'s (then extended); `false` when someone else holds it or
    /// the connection has no credentials. One statement, so two replicas never both win.
    pub async fn try_acquire_oauth_refresh_lease(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: Option<&UserId>,
        holder: &str,
        ttl: Duration,
    ) -> StoreResult<bool> {
        let now = clock::now();
        let ttl = TimeDelta::from_std(ttl)
            .map_err(|_| StoreError::invalid("ttl", "the lease time-to-live is too long"))?;
        let until = now
            .checked_add_signed(ttl)
            .ok_or_else(|| StoreError::invalid("ttl", "the lease time-to-live is too long"))?;
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "UPDATE mcp_oauth_credentials SET refresh_lease_holder = $4, refresh_lease_until = $5 \
             WHERE workspace_id = $1 AND server_id = $2 AND subject = $3 \
             AND (refresh_lease_until IS NULL OR refresh_lease_until <= $6 \
                  OR refresh_lease_holder = $4)"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(subject(user_id))
        .bind(holder)
        .bind(until)
        .bind(now)
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        Ok(affected == 1)
    }

    /// Releases the refresh lease if `holder` holds it; `true` when it did.
    pub async fn release_oauth_refresh_lease(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: Option<&UserId>,
        holder: &str,
    ) -> StoreResult<bool> {
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "UPDATE mcp_oauth_credentials SET refresh_lease_holder = NULL, refresh_lease_until = NULL \
             WHERE workspace_id = $1 AND server_id = $2 AND subject = $3 AND refresh_lease_holder = $4"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(subject(user_id))
        .bind(holder)
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        Ok(affected == 1)
    }
}
