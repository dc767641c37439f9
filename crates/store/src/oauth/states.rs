//! Authorization requests in flight. The `state` sent to the authorization server is a bearer
//! secret of the flow, so only its SHA-256 is stored (the key); the flow's own data (PKCE
//! verifier, issuer, redirect…) is an opaque payload sealed to that key.
//!
//! [`Store::take_oauth_state`] deletes the row and returns it in one statement
//! (`DELETE … RETURNING`): of two callbacks carrying the same state, exactly one gets it, and a
//! reused state is [`OAuthStateTake::Unknown`]. Saving a state purges the expired ones.

use super::REDACTED;
use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::store::Store;
use crate::tokens::hash_token;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::fmt;
use switchboard_core::{ServerId, UserId, WorkspaceId};

/// An authorization request to remember until its callback.
#[derive(Clone, PartialEq)]
pub struct NewOAuthState {
    /// The `state` parameter as sent (only its SHA-256 is stored).
    pub state_key: String,
    pub server_id: ServerId,
    /// Who started the flow.
    pub user_id: UserId,
    /// `true` when the flow connects the workspace's shared connection, not `user_id`'s own.
    pub shared: bool,
    /// Opaque flow data (sealed).
    pub payload: Value,
    pub expires_at: DateTime<Utc>,
}

/// A taken authorization request.
#[derive(Clone, PartialEq)]
pub struct OAuthStateRecord {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    pub user_id: UserId,
    pub shared: bool,
    pub payload: Value,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// What [`Store::take_oauth_state`] found. Either way the state is gone afterwards.
#[derive(Clone, Debug, PartialEq)]
pub enum OAuthStateTake {
    Valid(OAuthStateRecord),
    /// It existed but its time ran out.
    Expired,
    /// Never issued, already taken, or purged.
    Unknown,
}

impl fmt::Debug for NewOAuthState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewOAuthState")
            .field("state_key", &REDACTED)
            .field("server_id", &self.server_id)
            .field("user_id", &self.user_id)
            .field("shared", &self.shared)
            .field("payload", &REDACTED)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

impl fmt::Debug for OAuthStateRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthStateRecord")
            .field("workspace_id", &self.workspace_id)
            .field("server_id", &self.server_id)
            .field("user_id", &self.user_id)
            .field("shared", &self.shared)
            .field("payload", &REDACTED)
            .field("created_at", &self.created_at)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

#[derive(sqlx::FromRow)]
struct StateRow {
    workspace_id: String,
    server_id: String,
    user_id: String,
    shared: bool,
    payload_ciphertext: Vec<u8>,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
}

/// Binds a flow's payload to every column the callback trusts.
fn associated_data(
    digest: &str,
    workspace_id: &str,
    server_id: &str,
    user_id: &str,
    shared: bool,
) -> String {
    format!("mcp_oauth_states/{digest}/{workspace_id}/{server_id}/{user_id}/{shared}")
}

impl Store {
    /// Remembers an authorization request until `expires_at` and purges expired ones.
    /// `NotFound` when the server or user is not in the workspace; `UniqueViolation` when the
    /// state was already issued.
    pub async fn save_oauth_state(
        &self,
        workspace_id: &WorkspaceId,
        state: NewOAuthState,
    ) -> StoreResult<()> {
        if state.state_key.is_empty() {
            return Err(StoreError::invalid("state_key", "must not be empty"));
        }
        let digest = hash_token(&state.state_key);
        let sealed = self.seal_json(
            &state.payload,
            &associated_data(
                &digest,
                workspace_id.as_str(),
                state.server_id.as_str(),
                state.user_id.as_str(),
                state.shared,
            ),
        )?;
        let now = clock::now();
        self.purge_expired_oauth_states(now).await?;
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO mcp_oauth_states (state_digest, workspace_id, server_id, user_id, shared, \
             payload_ciphertext, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        )
        .bind(&digest)
        .bind(workspace_id.as_str())
        .bind(state.server_id.as_str())
        .bind(state.user_id.as_str())
        .bind(state.shared)
        .bind(&sealed)
        .bind(now)
        .bind(clock::truncate_to_micros(state.expires_at))
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("oauth state", "state", "server or user"))
    }

    /// Consumes the request `state_key` names, in one statement: `Valid` once, then `Unknown`.
    /// Unscoped (the callback arrives without a workspace): the state is the credential.
    pub async fn take_oauth_state(&self, state_key: &str) -> StoreResult<OAuthStateTake> {
        let digest = hash_token(state_key);
        let row: Option<StateRow> = on_backend!(self, |pool| sqlx::query_as(
            "DELETE FROM mcp_oauth_states WHERE state_digest = $1 RETURNING workspace_id, \
             server_id, user_id, shared, payload_ciphertext, created_at, expires_at"
        )
        .bind(&digest)
        .fetch_optional(pool)
        .await)?;
        let Some(row) = row else {
            return Ok(OAuthStateTake::Unknown);
        };
        if row.expires_at <= clock::now() {
            return Ok(OAuthStateTake::Expired);
        }
        let payload = self.open_json(
            &row.payload_ciphertext,
            &associated_data(
                &digest,
                &row.workspace_id,
                &row.server_id,
                &row.user_id,
                row.shared,
            ),
        )?;
        Ok(OAuthStateTake::Valid(OAuthStateRecord {
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            server_id: ServerId::from_string(row.server_id),
            user_id: UserId::from_string(row.user_id),
            shared: row.shared,
            payload,
            created_at: row.created_at,
            expires_at: row.expires_at,
        }))
    }

    /// Deletes every request whose time ran out before `now` (any workspace: they are dead).
    async fn purge_expired_oauth_states(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        Ok(on_backend!(self, |pool| sqlx::query(
            "DELETE FROM mcp_oauth_states WHERE expires_at <= $1"
        )
        .bind(now)
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?)
    }
}
