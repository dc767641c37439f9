//! Registered upstream MCP servers: configuration with optimistic locking, connection status,
//! capability caches, and encrypted credentials. What upstreams report (caches, errors) is
//! stored with U+0000 as U+FFFD (see `storable`). What is recorded outside configuration edits
//! (status, syncs, the URL Switchboard maintains for its own endpoint) is in `reports.rs` and
//! never moves the version.
//!
//! Reads return [`ServerRecord`], which carries only a summary of the secrets. The decrypted
//! [`ServerSecrets`] come from [`Store::server_secrets`], meant for the MCP client when it
//! connects, never for an API answer.

mod auth;
mod model;
mod reports;

pub use auth::{
    AuthMode, CredentialScope, OAuthClientConfig, ServerAuthConfig, TokenEndpointAuthMethod,
    UserField, is_user_field_name, substitute_user_fields, user_field_references, validate_auth,
};

pub use model::{
    NewServer, ServerConnectionConfig, ServerPatch, ServerRecord, ServerSecrets,
    ServerSecretsSummary, ServerStatus, ServerSync, SyncStatus,
};

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error, unique_violation};
use crate::store::Store;
use crate::validate;
use chrono::{DateTime, Utc};
use model::validate_configuration;
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::{ServerId, WorkspaceId};

#[derive(sqlx::FromRow)]
struct ServerRow {
    id: String,
    workspace_id: String,
    name: String,
    transport: String,
    url: Option<String>,
    command: Option<String>,
    args: Json<Vec<String>>,
    connection_config: Json<ServerConnectionConfig>,
    secrets_summary: Json<ServerSecretsSummary>,
    status: String,
    last_error: Option<String>,
    tools_cache: Option<Json<Value>>,
    resources_cache: Option<Json<Value>>,
    prompts_cache: Option<Json<Value>>,
    last_synced_at: Option<DateTime<Utc>>,
    sync_status: String,
    version: i64,
    is_active: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<ServerRow> for ServerRecord {
    type Error = StoreError;

    fn try_from(row: ServerRow) -> Result<Self, Self::Error> {
        Ok(ServerRecord {
            id: ServerId::from_string(row.id),
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            name: row.name,
            transport: row.transport.parse().map_err(StoreError::corrupt)?,
            url: row.url,
            command: row.command,
            args: row.args.0,
            connection: row.connection_config.0,
            secrets: row.secrets_summary.0,
            status: row.status.parse().map_err(StoreError::corrupt)?,
            last_error: row.last_error,
            tools_cache: row.tools_cache.map(|json| json.0),
            resources_cache: row.resources_cache.map(|json| json.0),
            prompts_cache: row.prompts_cache.map(|json| json.0),
            last_synced_at: row.last_synced_at,
            sync_status: row.sync_status.parse().map_err(StoreError::corrupt)?,
            version: row.version,
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

macro_rules! select_servers {
    ($tail:literal) => {
        concat!(
            "SELECT id, workspace_id, name, transport, url, command, args, connection_config, ",
            "secrets_summary, status, last_error, tools_cache, resources_cache, prompts_cache, ",
            "last_synced_at, sync_status, version, is_active, created_at, updated_at ",
            "FROM mcp_servers ",
            $tail
        )
    };
}

/// Binds a server's secrets to its row: a ciphertext moved to another row does not open.
fn secrets_associated_data(workspace_id: &WorkspaceId, server_id: &ServerId) -> Vec<u8> {
    format!("mcp_servers/{workspace_id}/{server_id}").into_bytes()
}

impl Store {
    fn seal_server_secrets(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        secrets: &ServerSecrets,
    ) -> StoreResult<Option<Vec<u8>>> {
        if secrets.is_empty() {
            return Ok(None);
        }
        let plaintext = serde_json::to_vec(secrets)
            .map_err(|error| StoreError::Crypto(format!("cannot serialise secrets: {error}")))?;
        self.cipher
            .encrypt(
                &plaintext,
                &secrets_associated_data(workspace_id, server_id),
            )
            .map(Some)
    }

    /// Registers a server (status `DISCONNECTED`, never synced, version 1).
    pub async fn create_server(
        &self,
        workspace_id: &WorkspaceId,
        new_server: NewServer,
    ) -> StoreResult<ServerRecord> {
        validate::identifier_name("name", &new_server.name)?;
        validate_configuration(
            new_server.transport,
            new_server.url.as_deref(),
            new_server.command.as_deref(),
            &new_server.args,
            &new_server.connection,
            Some(&new_server.secrets),
        )?;
        let id = ServerId::generate();
        let sealed = self.seal_server_secrets(workspace_id, &id, &new_server.secrets)?;
        let now = clock::now();
        let record = ServerRecord {
            id,
            workspace_id: workspace_id.clone(),
            name: new_server.name,
            transport: new_server.transport,
            url: new_server.url,
            command: new_server.command,
            args: new_server.args,
            connection: new_server.connection,
            secrets: new_server.secrets.summary(),
            status: ServerStatus::Disconnected,
            last_error: None,
            tools_cache: None,
            resources_cache: None,
            prompts_cache: None,
            last_synced_at: None,
            sync_status: SyncStatus::NeverSynced,
            version: 1,
            is_active: new_server.is_active,
            created_at: now,
            updated_at: now,
        };
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO mcp_servers (id, workspace_id, name, transport, url, command, args, \
             connection_config, secrets_ciphertext, secrets_summary, status, sync_status, version, \
             is_active, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)"
        )
        .bind(record.id.as_str())
        .bind(record.workspace_id.as_str())
        .bind(&record.name)
        .bind(record.transport.as_str())
        .bind(&record.url)
        .bind(&record.command)
        .bind(Json(&record.args))
        .bind(Json(&record.connection))
        .bind(&sealed)
        .bind(Json(&record.secrets))
        .bind(record.status.as_str())
        .bind(record.sync_status.as_str())
        .bind(record.version)
        .bind(record.is_active)
        .bind(record.created_at)
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("server", "name", "workspace"))?;
        Ok(record)
    }

    pub async fn get_server(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<ServerRecord> {
        let row: Option<ServerRow> = on_backend!(self, |pool| sqlx::query_as(select_servers!(
            "WHERE workspace_id = $1 AND id = $2"
        ))
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .fetch_optional(pool)
        .await)?;
        row.ok_or_else(|| StoreError::not_found("server"))?
            .try_into()
    }

    pub async fn find_server_by_name(
        &self,
        workspace_id: &WorkspaceId,
        name: &str,
    ) -> StoreResult<Option<ServerRecord>> {
        let row: Option<ServerRow> = on_backend!(self, |pool| sqlx::query_as(select_servers!(
            "WHERE workspace_id = $1 AND name = $2"
        ))
        .bind(workspace_id.as_str())
        .bind(name)
        .fetch_optional(pool)
        .await)?;
        row.map(ServerRecord::try_from).transpose()
    }

    /// The workspace's servers, active or not, by name.
    pub async fn list_servers(&self, workspace_id: &WorkspaceId) -> StoreResult<Vec<ServerRecord>> {
        let rows: Vec<ServerRow> = on_backend!(self, |pool| sqlx::query_as(select_servers!(
            "WHERE workspace_id = $1 ORDER BY name"
        ))
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await)?;
        rows.into_iter().map(ServerRecord::try_from).collect()
    }

    /// Applies `patch` if the server is still at `expected_version`; otherwise
    /// `VersionConflict` carrying the current version (re-read, re-apply, retry).
    pub async fn update_server(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        expected_version: i64,
        patch: ServerPatch,
    ) -> StoreResult<ServerRecord> {
        let current = self.get_server(workspace_id, server_id).await?;
        if current.version != expected_version {
            return Err(StoreError::VersionConflict {
                entity: "server",
                expected: expected_version,
                current: current.version,
            });
        }
        let read_url = current.url.clone();
        let mut updated = current;
        let secrets = apply_server_patch(&mut updated, patch)?;
        let replace_secrets = secrets.is_some();
        // Only a patch that changes the URL writes it: one written meanwhile by
        // `record_server_url` (unversioned) is kept.
        let replace_url = updated.url != read_url;
        let sealed = match &secrets {
            Some(secrets) => {
                updated.secrets = secrets.summary();
                self.seal_server_secrets(workspace_id, server_id, secrets)?
            }
            None => None,
        };
        updated.version = expected_version + 1;
        updated.updated_at = clock::now();
        let affected = on_backend!(self, |pool| {
            sqlx::query(
                "UPDATE mcp_servers SET name = $4, transport = $5, \
             url = CASE WHEN $15 THEN $6 ELSE url END, command = $7, args = $8, \
             connection_config = $9, is_active = $10, \
             secrets_ciphertext = CASE WHEN $11 THEN $12 ELSE secrets_ciphertext END, \
             secrets_summary = CASE WHEN $11 THEN $13 ELSE secrets_summary END, \
             version = version + 1, updated_at = $14 \
             WHERE workspace_id = $1 AND id = $2 AND version = $3",
            )
            .bind(workspace_id.as_str())
            .bind(server_id.as_str())
            .bind(expected_version)
            .bind(&updated.name)
            .bind(updated.transport.as_str())
            .bind(&updated.url)
            .bind(&updated.command)
            .bind(Json(&updated.args))
            .bind(Json(&updated.connection))
            .bind(updated.is_active)
            .bind(replace_secrets)
            .bind(&sealed)
            .bind(Json(&updated.secrets))
            .bind(updated.updated_at)
            .bind(replace_url)
            .execute(pool)
            .await
            .map(|result| result.rows_affected())
        })
        .map_err(unique_violation("server", "name"))?;
        if affected == 0 {
            // Someone else changed (or deleted) it between our read and our write.
            let current = self.get_server(workspace_id, server_id).await?;
            return Err(StoreError::VersionConflict {
                entity: "server",
                expected: expected_version,
                current: current.version,
            });
        }
        Ok(updated)
    }

    /// Deletes a server with its tools and policies (tool-call history keeps its name).
    pub async fn delete_server(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<()> {
        let affected = on_backend!(self, |pool| sqlx::query(
            "DELETE FROM mcp_servers WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("server"));
        }
        Ok(())
    }

    /// The decrypted credentials, for connecting to the upstream. Never put them in an answer.
    pub async fn server_secrets(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<ServerSecrets> {
        let row: Option<(Option<Vec<u8>>,)> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT secrets_ciphertext FROM mcp_servers WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .fetch_optional(pool)
        .await)?;
        let (sealed,) = row.ok_or_else(|| StoreError::not_found("server"))?;
        let Some(sealed) = sealed else {
            return Ok(ServerSecrets::default());
        };
        let plaintext = self
            .cipher
            .decrypt(&sealed, &secrets_associated_data(workspace_id, server_id))?;
        serde_json::from_slice(&plaintext)
            .map_err(|error| StoreError::corrupt(format!("server secrets: {error}")))
    }
}

/// Applies the fields `patch` sets to `updated` and checks the result; returns the secrets
/// to replace, if the patch sets them.
fn apply_server_patch(
    updated: &mut ServerRecord,
    patch: ServerPatch,
) -> StoreResult<Option<ServerSecrets>> {
    if let Some(name) = patch.name {
        validate::identifier_name("name", &name)?;
        updated.name = name;
    }
    if let Some(transport) = patch.transport {
        updated.transport = transport;
    }
    if let Some(url) = patch.url {
        updated.url = url;
    }
    if let Some(command) = patch.command {
        updated.command = command;
    }
    if let Some(args) = patch.args {
        updated.args = args;
    }
    if let Some(connection) = patch.connection {
        updated.connection = connection;
    }
    if let Some(is_active) = patch.is_active {
        updated.is_active = is_active;
    }
    validate_configuration(
        updated.transport,
        updated.url.as_deref(),
        updated.command.as_deref(),
        &updated.args,
        &updated.connection,
        patch.secrets.as_ref(),
    )?;
    Ok(patch.secrets)
}
