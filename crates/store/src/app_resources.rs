//! The MCP App resources (`ui://` HTML, issue 12) of each registered server, as read at its
//! last sync: replaced whole by every sync, like the tool catalog, and served to the browser's
//! sandbox from here (never fetched from the upstream on the request path). The sandbox origin
//! holds no bearer token: what lets it serve one resource is an [`AppSandboxTicket`], sealed
//! with the store's key (so any replica can open it) and bound to this use.

use crate::backend::{on_backend, write_transaction};
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::storable::{clean_json, storable_text};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::types::Json;
use switchboard_core::{AppResource, ServerId, WorkspaceId};

#[derive(sqlx::FromRow)]
struct AppResourceRow {
    uri: String,
    mime_type: String,
    html: String,
    meta: Option<Json<Value>>,
    sha256: String,
}

impl From<AppResourceRow> for AppResource {
    fn from(row: AppResourceRow) -> Self {
        AppResource {
            uri: row.uri,
            mime_type: row.mime_type,
            html: row.html,
            meta: row.meta.map(|json| json.0),
            sha256: row.sha256,
        }
    }
}

/// What a sandbox URL on the apps origin grants: reading one app resource of one workspace, as
/// hashed when the call was made, until `expires_at` (Unix seconds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppSandboxTicket {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    pub uri: String,
    pub sha256: String,
    pub expires_at: i64,
}

/// Binds a sealed ticket to its use: no other sealed payload of the store opens as one.
const TICKET_ASSOCIATED_DATA: &str = "mcp-app-sandbox-ticket/v1";

impl Store {
    /// Seals `ticket` (authenticated encryption under the store's key).
    pub fn seal_app_ticket(&self, ticket: &AppSandboxTicket) -> StoreResult<Vec<u8>> {
        let payload = serde_json::to_value(ticket)
            .map_err(|error| StoreError::Crypto(format!("cannot serialise a ticket: {error}")))?;
        self.seal_json(&payload, TICKET_ASSOCIATED_DATA)
    }

    /// Opens what [`Store::seal_app_ticket`] sealed; any other bytes are a `Crypto` error.
    /// The caller checks `expires_at`.
    pub fn open_app_ticket(&self, sealed: &[u8]) -> StoreResult<AppSandboxTicket> {
        let payload = self.open_json(sealed, TICKET_ASSOCIATED_DATA)?;
        serde_json::from_value(payload)
            .map_err(|error| StoreError::Crypto(format!("not an app ticket: {error}")))
    }

    /// Makes the server's app resources exactly `resources` (after a sync). The hash is kept
    /// as computed from the upstream's text, so it matches the tools' `resourceSha256`.
    pub async fn replace_server_app_resources(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        resources: &[AppResource],
    ) -> StoreResult<()> {
        let now = clock::now();
        write_transaction!(self, |tx| {
            sqlx::query("DELETE FROM mcp_app_resources WHERE workspace_id = $1 AND server_id = $2")
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .execute(&mut *tx)
                .await?;
            for resource in resources {
                sqlx::query(
                    "INSERT INTO mcp_app_resources (workspace_id, server_id, uri, mime_type, \
                     html, meta, sha256, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (server_id, uri) DO NOTHING",
                )
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .bind(&*storable_text(&resource.uri))
                .bind(&*storable_text(&resource.mime_type))
                .bind(&*storable_text(&resource.html))
                .bind(resource.meta.clone().map(|mut meta| {
                    clean_json(&mut meta);
                    Json(meta)
                }))
                .bind(&resource.sha256)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
        });
        Ok(())
    }

    /// One app resource of a server in the workspace (`NotFound` otherwise).
    pub async fn get_app_resource(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        uri: &str,
    ) -> StoreResult<AppResource> {
        let uri = storable_text(uri);
        let row: Option<AppResourceRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT uri, mime_type, html, meta, sha256 FROM mcp_app_resources \
             WHERE workspace_id = $1 AND server_id = $2 AND uri = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(&*uri)
        .fetch_optional(pool)
        .await)?;
        row.map(AppResource::from)
            .ok_or_else(|| StoreError::not_found("app resource"))
    }
}
