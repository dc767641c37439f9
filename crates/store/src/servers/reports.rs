//! What Switchboard records about a registered server outside configuration edits: the MCP
//! client's observations (connection status, a sync's caches and outcome) and the one URL it
//! maintains itself (its own endpoint's). None of these moves `version` or `updated_at`: they
//! must never make a concurrent configuration edit fail.

use super::{ServerStatus, ServerSync, SyncStatus};
use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::storable::{clean_optional_json, clean_optional_text, storable_optional_text};
use crate::store::Store;
use sqlx::types::Json;
use switchboard_core::{ServerId, WorkspaceId};

impl Store {
    /// Points a server at `url` without changing `version` or `updated_at`: for a URL that
    /// Switchboard maintains itself, not one a person chose — our own knowledge-graph
    /// endpoint's, which each start points at its own listener and no API request may change
    /// — so that a start never makes a concurrent configuration edit fail. An
    /// [`Self::update_server`] whose patch leaves the URL as it read it keeps this one, even
    /// when written between its read and its write.
    pub async fn record_server_url(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        url: &str,
    ) -> StoreResult<()> {
        let affected = on_backend!(self, |pool| {
            sqlx::query("UPDATE mcp_servers SET url = $3 WHERE workspace_id = $1 AND id = $2")
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .bind(url)
                .execute(pool)
                .await
                .map(|result| result.rows_affected())
        })?;
        one_server_updated(affected)
    }

    /// Records what the MCP client observed. Does not change `version` (a status report must
    /// never make a concurrent configuration edit fail).
    pub async fn record_server_status(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        status: ServerStatus,
        last_error: Option<&str>,
    ) -> StoreResult<()> {
        let last_error = storable_optional_text(last_error);
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "UPDATE mcp_servers SET status = $3, last_error = $4 WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(status.as_str())
        .bind(last_error.as_deref())
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        one_server_updated(affected)
    }

    /// Stores a sync's outcome: the capability caches it returned (a `None` list keeps the
    /// old cache), its status and error. `last_synced_at` moves only on `Synced`. Does not
    /// change `version`.
    pub async fn record_server_sync(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        mut sync: ServerSync,
    ) -> StoreResult<()> {
        for cache in [&mut sync.tools, &mut sync.resources, &mut sync.prompts] {
            clean_optional_json(cache);
        }
        clean_optional_text(&mut sync.error);
        let synced_at = (sync.sync_status == SyncStatus::Synced)
            .then(|| clock::truncate_to_micros(sync.synced_at));
        let affected = on_backend!(self, |pool| {
            sqlx::query(
            "UPDATE mcp_servers SET sync_status = $3, tools_cache = COALESCE($4, tools_cache), \
             resources_cache = COALESCE($5, resources_cache), prompts_cache = COALESCE($6, prompts_cache), \
             last_synced_at = COALESCE($7, last_synced_at), last_error = $8 \
             WHERE workspace_id = $1 AND id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(sync.sync_status.as_str())
        .bind(sync.tools.as_ref().map(Json))
        .bind(sync.resources.as_ref().map(Json))
        .bind(sync.prompts.as_ref().map(Json))
        .bind(synced_at)
        .bind(&sync.error)
        .execute(pool)
        .await
        .map(|result| result.rows_affected())
        })?;
        one_server_updated(affected)
    }
}

/// `NotFound` when an update of one server's row touched none (no such server here).
fn one_server_updated(affected: u64) -> StoreResult<()> {
    if affected == 0 {
        return Err(StoreError::not_found("server"));
    }
    Ok(())
}
