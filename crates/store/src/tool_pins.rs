//! What approvals are pinned to. A pin hash (computed by the approval gate from a tool's
//! canonical definition and its server's instructions) names a snapshot kept here, so when the
//! upstream later changes either, the gate can show exactly what changed. Also the server
//! instructions last observed by a capability sync (the gate's "current" side of the check).
//! Both are upstream text, stored with U+0000 as U+FFFD (see `storable`); the pin hash counts
//! U+0000 as U+FFFD too, so a snapshot still matches the hash that names it.

use crate::backend::on_backend;
use crate::clock;
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_tool_definition, storable_optional_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use switchboard_core::{ServerId, ToolDefinition, WorkspaceId};

/// The definition and instructions a pin hash stands for.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolPinSnapshot {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    pub pin_hash: String,
    pub definition: ToolDefinition,
    pub instructions: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A server's instructions as last observed (`None` when it sent none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedInstructions {
    pub instructions: Option<String>,
    pub observed_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct SnapshotRow {
    workspace_id: String,
    server_id: String,
    pin_hash: String,
    definition: Json<ToolDefinition>,
    instructions: Option<String>,
    created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct InstructionsRow {
    instructions: Option<String>,
    observed_at: DateTime<Utc>,
}

impl Store {
    /// Keeps the snapshot `pin_hash` stands for (a no-op when it is already kept: the hash
    /// names its content). `NotFound { entity: "server" }` outside the workspace.
    pub async fn save_tool_pin_snapshot(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        pin_hash: &str,
        definition: &ToolDefinition,
        instructions: Option<&str>,
    ) -> StoreResult<()> {
        if pin_hash.is_empty() {
            return Err(StoreError::invalid("pin_hash", "must not be empty"));
        }
        let mut definition = definition.clone();
        clean_tool_definition(&mut definition);
        let instructions = storable_optional_text(instructions);
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO tool_pin_snapshots (workspace_id, server_id, pin_hash, tool_name, \
             definition, instructions, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (workspace_id, server_id, pin_hash) DO NOTHING"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(pin_hash)
        .bind(&definition.name)
        .bind(Json(&definition))
        .bind(instructions.as_deref())
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("tool pin snapshot", "pin_hash", "server"))
    }

    pub async fn get_tool_pin_snapshot(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        pin_hash: &str,
    ) -> StoreResult<Option<ToolPinSnapshot>> {
        let row: Option<SnapshotRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT workspace_id, server_id, pin_hash, definition, instructions, created_at \
             FROM tool_pin_snapshots WHERE workspace_id = $1 AND server_id = $2 AND pin_hash = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(pin_hash)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|row| ToolPinSnapshot {
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            server_id: ServerId::from_string(row.server_id),
            pin_hash: row.pin_hash,
            definition: row.definition.0,
            instructions: row.instructions,
            created_at: row.created_at,
        }))
    }

    /// Records the instructions a sync just saw (replacing the previous observation).
    pub async fn record_server_instructions(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        instructions: Option<&str>,
    ) -> StoreResult<()> {
        let instructions = storable_optional_text(instructions);
        let now = clock::now();
        on_backend!(self, |pool| sqlx::query(
            "INSERT INTO server_instructions (workspace_id, server_id, instructions, observed_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (workspace_id, server_id) DO UPDATE SET \
             instructions = excluded.instructions, observed_at = excluded.observed_at"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(instructions.as_deref())
        .bind(now)
        .execute(pool)
        .await
        .map(|_| ()))
        .map_err(insert_error("server instructions", "server_id", "server"))
    }

    /// The instructions last observed, `None` when no sync reported any yet.
    pub async fn get_server_instructions(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<Option<ObservedInstructions>> {
        let row: Option<InstructionsRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT instructions, observed_at FROM server_instructions \
             WHERE workspace_id = $1 AND server_id = $2"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|row| ObservedInstructions {
            instructions: row.instructions,
            observed_at: row.observed_at,
        }))
    }
}
