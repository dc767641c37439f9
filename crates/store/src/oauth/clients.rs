//! OAuth clients this host registered at an authorization server (RFC 7591 dynamic client
//! registration), per server and issuer: the registration answer (client id, secret…) as an
//! opaque payload sealed to its row, so the next authorization reuses it.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreResult, insert_error};
use crate::store::Store;
use crate::validate;
use serde_json::Value;
use switchboard_core::{ServerId, WorkspaceId};

fn associated_data(workspace_id: &WorkspaceId, server_id: &ServerId, issuer: &str) -> String {
    format!("mcp_oauth_clients/{workspace_id}/{server_id}/{issuer}")
}

impl Store {
    /// Saves (replaces) the client registered for the server at `issuer`. `NotFound` when the
    /// server is not in the workspace.
    pub async fn save_oauth_client(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        issuer: &str,
        payload: &Value,
    ) -> StoreResult<()> {
        validate::no_nul("issuer", issuer)?;
        let sealed = self.seal_json(payload, &associated_data(workspace_id, server_id, issuer))?;
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO mcp_oauth_clients (workspace_id, server_id, issuer, payload_ciphertext, \
             updated_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (workspace_id, server_id, issuer) DO UPDATE SET \
             payload_ciphertext = excluded.payload_ciphertext, updated_at = excluded.updated_at"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(issuer)
        .bind(&sealed)
        .bind(clock::now())
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("oauth client", "issuer", "server"))
    }

    /// The client registered for the server at `issuer` (decrypted), if any.
    pub async fn load_oauth_client(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        issuer: &str,
    ) -> StoreResult<Option<Value>> {
        let sealed: Option<Vec<u8>> = on_backend!(self, |pool| sqlx::query_scalar(
            "SELECT payload_ciphertext FROM mcp_oauth_clients \
             WHERE workspace_id = $1 AND server_id = $2 AND issuer = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(issuer)
        .fetch_optional(pool)
        .await)?;
        sealed
            .map(|sealed| {
                self.open_json(&sealed, &associated_data(workspace_id, server_id, issuer))
            })
            .transpose()
    }

    /// Forgets the client registered at `issuer`; `true` when there was one.
    pub async fn delete_oauth_client(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        issuer: &str,
    ) -> StoreResult<bool> {
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "DELETE FROM mcp_oauth_clients WHERE workspace_id = $1 AND server_id = $2 AND issuer = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(issuer)
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        Ok(affected > 0)
    }
}
