//! A person's own values for a server's user fields (issue 11: per-user credentials without
//! OAuth), e.g. their personal access token referenced as `{{user.GITHUB_TOKEN}}` in the
//! server's headers or env. One row per (server, user, field name); each value sealed with the
//! store's cipher and bound to that key, so a value moved to another person or field does not
//! open. Names can be listed without decrypting anything; values are read only to connect.

use crate::backend::{on_backend, write_transaction};
use crate::clock;
use crate::error::{StoreResult, insert_error};
use crate::store::Store;
use crate::validate;
use std::collections::{BTreeMap, BTreeSet};
use switchboard_core::{ServerId, UserId, WorkspaceId};

fn associated_data(
    workspace_id: &WorkspaceId,
    server_id: &ServerId,
    user_id: &UserId,
    name: &str,
) -> Vec<u8> {
    format!("mcp_user_credentials/{workspace_id}/{server_id}/{user_id}/{name}").into_bytes()
}

impl Store {
    /// Sets (`Some`) or clears (`None`) the user's values for the named fields, in one
    /// transaction; fields not named stay as they are. The store does not know the server's
    /// declared fields: the caller checks names against them. `NotFound` when the server or
    /// user is not in the workspace.
    pub async fn set_user_credentials(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: &UserId,
        values: &BTreeMap<String, Option<String>>,
    ) -> StoreResult<()> {
        let mut sealed = Vec::with_capacity(values.len());
        for (name, value) in values {
            validate::no_nul("user credential name", name)?;
            let value = value
                .as_deref()
                .map(|value| {
                    self.cipher.encrypt(
                        value.as_bytes(),
                        &associated_data(workspace_id, server_id, user_id, name),
                    )
                })
                .transpose()?;
            sealed.push((name, value));
        }
        let now = clock::now();
        write_transaction!(self, |tx| {
            for (name, value) in &sealed {
                match value {
                    Some(value) => sqlx::query(
                        "INSERT INTO mcp_user_credentials (workspace_id, server_id, user_id, name, \
                         value_ciphertext, updated_at) VALUES ($1, $2, $3, $4, $5, $6) \
                         ON CONFLICT (workspace_id, server_id, user_id, name) DO UPDATE SET \
                         value_ciphertext = excluded.value_ciphertext, updated_at = excluded.updated_at",
                    )
                    .bind(workspace_id.as_str())
                    .bind(server_id.as_str())
                    .bind(user_id.as_str())
                    .bind(name.as_str())
                    .bind(value)
                    .bind(now)
                    .execute(&mut *tx)
                    .await
                    .map_err(insert_error("user credential", "name", "server or user"))?,
                    None => sqlx::query(
                        "DELETE FROM mcp_user_credentials \
                         WHERE workspace_id = $1 AND server_id = $2 AND user_id = $3 AND name = $4",
                    )
                    .bind(workspace_id.as_str())
                    .bind(server_id.as_str())
                    .bind(user_id.as_str())
                    .bind(name.as_str())
                    .execute(&mut *tx)
                    .await?,
                };
            }
        });
        Ok(())
    }

    /// Deletes all of the user's values for the server; how many there were.
    pub async fn clear_user_credentials(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: &UserId,
    ) -> StoreResult<u64> {
        Ok(on_backend!(self, |pool| {
            sqlx::query(
            "DELETE FROM mcp_user_credentials WHERE workspace_id = $1 AND server_id = $2 AND user_id = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(user_id.as_str())
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?)
    }

    /// The user's values for the server, decrypted, by field name: for connecting only, never
    /// for an answer or a log.
    pub async fn user_credentials(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: &UserId,
    ) -> StoreResult<BTreeMap<String, String>> {
        let rows: Vec<(String, Vec<u8>)> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT name, value_ciphertext FROM mcp_user_credentials \
             WHERE workspace_id = $1 AND server_id = $2 AND user_id = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(user_id.as_str())
        .fetch_all(pool)
        .await)?;
        rows.into_iter()
            .map(|(name, sealed)| {
                let plaintext = self.cipher.decrypt(
                    &sealed,
                    &associated_data(workspace_id, server_id, user_id, &name),
                )?;
                let value = String::from_utf8(plaintext).map_err(|_| {
                    crate::error::StoreError::corrupt("a user credential is not UTF-8")
                })?;
                Ok((name, value))
            })
            .collect()
    }

    /// The names of the fields the user has set for the server (no value is read).
    pub async fn user_credential_names(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        user_id: &UserId,
    ) -> StoreResult<BTreeSet<String>> {
        let names: Vec<String> = on_backend!(self, |pool| sqlx::query_scalar(
            "SELECT name FROM mcp_user_credentials \
             WHERE workspace_id = $1 AND server_id = $2 AND user_id = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(user_id.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(names.into_iter().collect())
    }
}
