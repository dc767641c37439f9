//! What the MCP client side last observed about each registered upstream, beyond the status
//! and sync columns of `mcp_servers`: the negotiated protocol version (a restart connects
//! without probing again), the server's own name and version, and the stable code of its last
//! failure (`needs_auth`, `timeout`…), so the API can show why a server is unusable after a
//! restart too. One row per server, replaced by each observation; gone with the server.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreResult, insert_error};
use crate::storable::storable_optional_text;
use crate::store::Store;
use chrono::{DateTime, Utc};
use switchboard_core::{ServerId, WorkspaceId};

/// One observation. `None` fields are stored as absent (an observation replaces the last one
/// whole; callers carry over what they want to keep).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpObservation {
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    /// `UpstreamError::code()` of the last failure; `None` after a success.
    pub error_code: Option<String>,
}

/// An observation as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpObservationRecord {
    pub server_id: ServerId,
    pub observation: McpObservation,
    pub observed_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct ObservationRow {
    server_id: String,
    protocol_version: Option<String>,
    server_name: Option<String>,
    server_version: Option<String>,
    error_code: Option<String>,
    observed_at: DateTime<Utc>,
}

impl From<ObservationRow> for McpObservationRecord {
    fn from(row: ObservationRow) -> Self {
        McpObservationRecord {
            server_id: ServerId::from_string(row.server_id),
            observation: McpObservation {
                protocol_version: row.protocol_version,
                server_name: row.server_name,
                server_version: row.server_version,
                error_code: row.error_code,
            },
            observed_at: row.observed_at,
        }
    }
}

impl Store {
    /// Replaces the server's observation. `NotFound { entity: "server" }` when the server is not
    /// in the workspace.
    pub async fn record_mcp_observation(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        observation: &McpObservation,
    ) -> StoreResult<()> {
        // All four come from the upstream (or describe its failure): stored as every backend
        // can hold them.
        let [protocol_version, server_name, server_version, error_code] = [
            &observation.protocol_version,
            &observation.server_name,
            &observation.server_version,
            &observation.error_code,
        ]
        .map(|text| storable_optional_text(text.as_deref()));
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO mcp_server_observations (workspace_id, server_id, protocol_version, \
             server_name, server_version, error_code, observed_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (workspace_id, server_id) DO UPDATE SET \
             protocol_version = excluded.protocol_version, server_name = excluded.server_name, \
             server_version = excluded.server_version, error_code = excluded.error_code, \
             observed_at = excluded.observed_at"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(protocol_version.as_deref())
        .bind(server_name.as_deref())
        .bind(server_version.as_deref())
        .bind(error_code.as_deref())
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("MCP observation", "server_id", "server"))
    }

    /// The server's last observation, `None` before the first one.
    pub async fn get_mcp_observation(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<Option<McpObservationRecord>> {
        let row: Option<ObservationRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT server_id, protocol_version, server_name, server_version, error_code, observed_at \
             FROM mcp_server_observations WHERE workspace_id = $1 AND server_id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .fetch_optional(pool)
        .await
        })?;
        Ok(row.map(Into::into))
    }

    /// Every observation of the workspace's servers, by server id.
    pub async fn list_mcp_observations(
        &self,
        workspace_id: &WorkspaceId,
    ) -> StoreResult<Vec<McpObservationRecord>> {
        let rows: Vec<ObservationRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT server_id, protocol_version, server_name, server_version, error_code, observed_at \
             FROM mcp_server_observations WHERE workspace_id = $1 ORDER BY server_id"
        )
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await
        })?;
        Ok(rows.into_iter().map(Into::into).collect())
    }
}
