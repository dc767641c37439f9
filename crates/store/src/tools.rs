//! The tool catalog of each registered server, as last synced: definitions, an enable switch
//! per tool, and a definition hash (SHA-256 of the canonical JSON) so approvals can be pinned
//! to the exact definition a person approved.

use crate::backend::{on_backend, write_transaction};
use crate::clock;
use crate::error::{StoreError, StoreResult};
use crate::storable::{clean_tool_definition, storable_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use std::collections::BTreeSet;
use switchboard_core::canonical::canonical_sha256;
use switchboard_core::{ServerId, ToolDefinition, ToolMeta, WorkspaceId};

/// A tool of a registered server.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRecord {
    pub workspace_id: WorkspaceId,
    pub server_id: ServerId,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Option<Value>,
    /// The `_meta` keys the host acts on (MCP Apps' `ui`).
    pub meta: ToolMeta,
    /// Disabled tools are not offered to the model. New tools start enabled; a sync keeps
    /// the switch.
    pub is_enabled: bool,
    /// [`definition_hash`] of the current definition.
    pub definition_hash: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ToolRecord {
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            output_schema: self.output_schema.clone(),
            annotations: self.annotations.clone(),
            meta: self.meta.clone(),
        }
    }
}

/// SHA-256 (hex) of the definition's canonical JSON ([`switchboard_core::canonical`]): the
/// same definition hashes the same whatever key order the upstream sent, and whether it is
/// hashed as the upstream sent it or as the store keeps it (U+0000 stored as U+FFFD).
pub fn definition_hash(definition: &ToolDefinition) -> String {
    canonical_sha256(&serde_json::to_value(definition).unwrap_or(Value::Null))
}

#[derive(sqlx::FromRow)]
struct ToolRow {
    workspace_id: String,
    server_id: String,
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Json<Value>,
    output_schema: Option<Json<Value>>,
    annotations: Option<Json<Value>>,
    meta: Option<Json<Value>>,
    is_enabled: bool,
    definition_hash: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<ToolRow> for ToolRecord {
    fn from(row: ToolRow) -> Self {
        ToolRecord {
            workspace_id: WorkspaceId::from_string(row.workspace_id),
            server_id: ServerId::from_string(row.server_id),
            name: row.name,
            title: row.title,
            description: row.description,
            input_schema: row.input_schema.0,
            output_schema: row.output_schema.map(|json| json.0),
            annotations: row.annotations.map(|json| json.0),
            meta: row
                .meta
                .map(|json| ToolMeta::from(json.0))
                .unwrap_or_default(),
            is_enabled: row.is_enabled,
            definition_hash: row.definition_hash,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

macro_rules! select_tools {
    ($tail:literal) => {
        concat!(
            "SELECT workspace_id, server_id, name, title, description, input_schema, output_schema, ",
            "annotations, meta, is_enabled, definition_hash, created_at, updated_at FROM mcp_tools ",
            $tail
        )
    };
}

impl Store {
    /// Makes the server's catalog exactly `definitions` (after a sync): adds new tools
    /// (enabled), updates changed ones (keeping their enable switch), removes vanished ones.
    pub async fn replace_server_tools(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        definitions: &[ToolDefinition],
    ) -> StoreResult<Vec<ToolRecord>> {
        let definitions = storable_catalog(definitions)?;
        let names: BTreeSet<&str> = definitions
            .iter()
            .map(|definition| definition.name.as_str())
            .collect();
        let now = clock::now();
        write_transaction!(self, |tx| {
            let servers: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM mcp_servers WHERE workspace_id = $1 AND id = $2",
            )
            .bind(workspace_id.as_str())
            .bind(server_id.as_str())
            .fetch_one(&mut *tx)
            .await?;
            if servers == 0 {
                return Err(StoreError::not_found("server"));
            }
            let existing: Vec<String> = sqlx::query_scalar(
                "SELECT name FROM mcp_tools WHERE workspace_id = $1 AND server_id = $2",
            )
            .bind(workspace_id.as_str())
            .bind(server_id.as_str())
            .fetch_all(&mut *tx)
            .await?;
            for vanished in existing
                .iter()
                .filter(|name| !names.contains(name.as_str()))
            {
                sqlx::query(
                    "DELETE FROM mcp_tools WHERE workspace_id = $1 AND server_id = $2 AND name = $3",
                )
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .bind(vanished)
                .execute(&mut *tx)
                .await?;
            }
            for definition in &definitions {
                sqlx::query(
                    "INSERT INTO mcp_tools (workspace_id, server_id, name, title, description, \
                     input_schema, output_schema, annotations, meta, is_enabled, \
                     definition_hash, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $12, $9, $10, $11, $11) \
                     ON CONFLICT (server_id, name) DO UPDATE SET title = excluded.title, \
                     description = excluded.description, input_schema = excluded.input_schema, \
                     output_schema = excluded.output_schema, annotations = excluded.annotations, \
                     meta = excluded.meta, \
                     definition_hash = excluded.definition_hash, updated_at = excluded.updated_at \
                     WHERE mcp_tools.definition_hash <> excluded.definition_hash",
                )
                .bind(workspace_id.as_str())
                .bind(server_id.as_str())
                .bind(&definition.name)
                .bind(&definition.title)
                .bind(&definition.description)
                .bind(Json(&definition.input_schema))
                .bind(definition.output_schema.as_ref().map(Json))
                .bind(definition.annotations.as_ref().map(Json))
                .bind(true)
                .bind(definition_hash(definition))
                .bind(now)
                .bind((!definition.meta.is_empty()).then_some(Json(&definition.meta)))
                .execute(&mut *tx)
                .await?;
            }
        });
        self.list_server_tools(workspace_id, server_id).await
    }

    /// The server's tools by name (`NotFound` only if the server is not in the workspace).
    pub async fn list_server_tools(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
    ) -> StoreResult<Vec<ToolRecord>> {
        let rows: Vec<ToolRow> = on_backend!(self, |pool| sqlx::query_as(select_tools!(
            "WHERE workspace_id = $1 AND server_id = $2 ORDER BY name"
        ))
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .fetch_all(pool)
        .await)?;
        if rows.is_empty() {
            // Distinguish "no tools yet" from "no such server here".
            self.get_server(workspace_id, server_id).await?;
        }
        Ok(rows.into_iter().map(ToolRecord::from).collect())
    }

    /// Every tool of every server in the workspace, by server then name.
    pub async fn list_workspace_tools(
        &self,
        workspace_id: &WorkspaceId,
    ) -> StoreResult<Vec<ToolRecord>> {
        let rows: Vec<ToolRow> = on_backend!(self, |pool| sqlx::query_as(select_tools!(
            "WHERE workspace_id = $1 ORDER BY server_id, name"
        ))
        .bind(workspace_id.as_str())
        .fetch_all(pool)
        .await)?;
        Ok(rows.into_iter().map(ToolRecord::from).collect())
    }

    pub async fn get_tool(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        name: &str,
    ) -> StoreResult<ToolRecord> {
        // Looked up as stored (a name from an upstream may have had U+0000).
        let name = storable_text(name);
        let row: Option<ToolRow> = on_backend!(self, |pool| sqlx::query_as(select_tools!(
            "WHERE workspace_id = $1 AND server_id = $2 AND name = $3"
        ))
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(&*name)
        .fetch_optional(pool)
        .await)?;
        row.map(ToolRecord::from)
            .ok_or_else(|| StoreError::not_found("tool"))
    }

    /// Turns a tool on or off for the model.
    pub async fn set_tool_enabled(
        &self,
        workspace_id: &WorkspaceId,
        server_id: &ServerId,
        name: &str,
        is_enabled: bool,
    ) -> StoreResult<ToolRecord> {
        let name = storable_text(name);
        let affected = on_backend!(self, |pool| sqlx::query(
            "UPDATE mcp_tools SET is_enabled = $4, updated_at = $5 \
             WHERE workspace_id = $1 AND server_id = $2 AND name = $3"
        )
        .bind(workspace_id.as_str())
        .bind(server_id.as_str())
        .bind(&*name)
        .bind(is_enabled)
        .bind(clock::now())
        .execute(pool)
        .await
        .map(|result| result.rows_affected()))?;
        if affected == 0 {
            return Err(StoreError::not_found("tool"));
        }
        self.get_tool(workspace_id, server_id, &name).await
    }
}

/// A synced catalog as the store keeps it: every name present and listed once, texts stored
/// as every backend can hold them (U+0000 → U+FFFD; the hash is the same either way, see
/// `definition_hash`, so a sync of an unchanged tool changes nothing).
fn storable_catalog(definitions: &[ToolDefinition]) -> StoreResult<Vec<ToolDefinition>> {
    let definitions: Vec<ToolDefinition> = definitions
        .iter()
        .cloned()
        .map(|mut definition| {
            clean_tool_definition(&mut definition);
            definition
        })
        .collect();
    let mut names = BTreeSet::new();
    for definition in &definitions {
        if definition.name.is_empty() {
            return Err(StoreError::invalid("tools", "a tool has an empty name"));
        }
        if !names.insert(definition.name.as_str()) {
            return Err(StoreError::invalid(
                "tools",
                format!("tool '{}' is listed twice", definition.name),
            ));
        }
    }
    Ok(definitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(input_schema: Value) -> ToolDefinition {
        ToolDefinition {
            name: "search".into(),
            title: None,
            description: "Search".into(),
            input_schema,
            output_schema: None,
            annotations: None,
            meta: Default::default(),
        }
    }

    #[test]
    fn hash_ignores_key_order_but_not_content() {
        let first: Value =
            serde_json::from_str(r#"{"type":"object","properties":{"q":{"type":"string"}}}"#)
                .unwrap();
        let reordered: Value =
            serde_json::from_str(r#"{"properties":{"q":{"type":"string"}},"type":"object"}"#)
                .unwrap();
        assert_eq!(
            definition_hash(&definition(first.clone())),
            definition_hash(&definition(reordered))
        );
        let changed = json!({"type": "object", "properties": {"q": {"type": "integer"}}});
        assert_ne!(
            definition_hash(&definition(first)),
            definition_hash(&definition(changed))
        );
    }
}
