//! The knowledge graph of each workspace: schema versions (content hash + full schema JSON),
//! their changelog entries, objects and relationships. The graph is validated and versioned by
//! `switchboard-kg` before it gets here; this module stores what it is given and loads it back
//! in order. Free text in it — property values, schema descriptions, version messages,
//! changelog descriptions — comes from people and models and is stored with U+0000 as U+FFFD
//! (see `storable`); names and ids are already restricted by `switchboard-kg` (no control
//! characters), so references between the parts stay intact.

use crate::backend::{on_backend, write_transaction};
use crate::error::{StoreError, StoreResult, insert_error};
use crate::storable::{clean_json, storable_object, storable_optional_text, storable_text};
use crate::store::Store;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use sqlx::types::Json;
use switchboard_core::WorkspaceId;
use switchboard_kg::{
    ChangelogEntry, ObjectRecord, RelationshipRecord, SchemaChange, SchemaUpdate, SchemaVersion,
    VersionedSchema,
};

/// Everything stored for one workspace's graph, in history order (objects and relationships
/// in creation order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredKnowledgeGraph {
    /// The graph's generation when it was read (see [`Store::kg_generation`]); the data may be
    /// newer, never older. Ignored by [`Store::kg_save_new_graph`].
    pub generation: u64,
    pub versions: Vec<VersionedSchema>,
    pub changelog: Vec<ChangelogEntry>,
    pub objects: Vec<ObjectRecord>,
    pub relationships: Vec<RelationshipRecord>,
}

#[derive(sqlx::FromRow)]
struct VersionRow {
    sequence: i64,
    version: String,
    message: Option<String>,
    schema: Json<switchboard_kg::Schema>,
    object_type_count: i64,
    relationship_type_count: i64,
    property_count: i64,
    change_count: i64,
    created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct ChangeRow {
    sequence: i64,
    version: String,
    change: String,
    subject: String,
    type_name: Option<String>,
    relationship_name: Option<String>,
    property_name: Option<String>,
    description: String,
    at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct ObjectRow {
    id: String,
    object_type: String,
    properties: Json<Map<String, Value>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct RelationshipRow {
    id: String,
    relationship_type: String,
    from_id: String,
    to_id: String,
    properties: Json<Map<String, Value>>,
    created_at: DateTime<Utc>,
}

fn corrupt(what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Conflict(format!(
        "stored knowledge graph is inconsistent: {what}: {detail}"
    ))
}

fn enum_from_text<T: serde::de::DeserializeOwned>(field: &str, text: &str) -> StoreResult<T> {
    serde_json::from_value(Value::String(text.to_owned())).map_err(|error| corrupt(field, error))
}

fn enum_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|value| value.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn count(value: i64) -> usize {
    usize::try_from(value).unwrap_or_default()
}

/// The schema as stored (its descriptions and allowed values are people's text).
fn storable_schema(schema: &switchboard_kg::Schema) -> StoreResult<Value> {
    let mut value = serde_json::to_value(schema)
        .map_err(|error| StoreError::invalid("schema", error.to_string()))?;
    clean_json(&mut value);
    Ok(value)
}

/// Inserts one version row and its changelog rows inside transaction `$tx`.
macro_rules! insert_version {
    ($tx:ident, $ws:expr, $versioned:expr, $entries:expr) => {{
        let version: &VersionedSchema = $versioned;
        let schema = storable_schema(&version.schema)?;
        let sequence = i64::try_from(version.version.sequence).unwrap_or(i64::MAX);
        sqlx::query(
            "INSERT INTO kg_schema_versions (workspace_id, sequence, version, message, schema, object_type_count, \
             relationship_type_count, property_count, change_count, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        )
        .bind($ws)
        .bind(sequence)
        .bind(&version.version.version)
        .bind(storable_optional_text(version.version.message.as_deref()))
        .bind(Json(&schema))
        .bind(version.version.object_type_count as i64)
        .bind(version.version.relationship_type_count as i64)
        .bind(version.version.property_count as i64)
        .bind(version.version.change_count as i64)
        .bind(version.version.created_at)
        .execute(&mut *$tx)
        .await
        .map_err(insert_error("schema version", "sequence", "workspace"))?;
        for (position, entry) in $entries.iter().enumerate() {
            sqlx::query(
                "INSERT INTO kg_changelog (workspace_id, sequence, position, version, change, subject, type_name, \
                 relationship_name, property_name, description, at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            )
            .bind($ws)
            .bind(sequence)
            .bind(position as i64)
            .bind(&entry.version)
            .bind(enum_text(&entry.change.change))
            .bind(enum_text(&entry.change.subject))
            .bind(&entry.change.type_name)
            .bind(&entry.change.relationship_name)
            .bind(&entry.change.property_name)
            .bind(storable_text(&entry.change.description))
            .bind(entry.at)
            .execute(&mut *$tx)
            .await?;
        }
    }};
}

/// Moves the workspace's graph generation on by one, from `$expected` only: `Conflict` when
/// another writer moved it first (nothing this transaction wrote is then committed).
macro_rules! advance_generation {
    ($tx:ident, $ws:expr, $expected:expr) => {{
        let expected: u64 = $expected;
        let moved = if expected == 0 {
            sqlx::query(
                "INSERT INTO kg_generations (workspace_id, generation) VALUES ($1, 1) \
                 ON CONFLICT (workspace_id) DO NOTHING",
            )
            .bind($ws)
            .execute(&mut *$tx)
            .await?
        } else {
            sqlx::query(
                "UPDATE kg_generations SET generation = generation + 1 \
                 WHERE workspace_id = $1 AND generation = $2",
            )
            .bind($ws)
            .bind(generation_value(expected)?)
            .execute(&mut *$tx)
            .await?
        };
        if moved.rows_affected() == 0 {
            return Err(StoreError::Conflict(format!(
                "the knowledge graph changed after generation {expected}"
            )));
        }
    }};
}

fn generation_value(generation: u64) -> StoreResult<i64> {
    i64::try_from(generation).map_err(|_| StoreError::invalid("generation", "out of range"))
}

macro_rules! insert_object {
    ($tx:ident, $ws:expr, $object:expr) => {{
        let object: &ObjectRecord = $object;
        sqlx::query(
            "INSERT INTO kg_objects (workspace_id, id, object_type, properties, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind($ws)
        .bind(&object.id)
        .bind(&object.object_type)
        .bind(Json(storable_object(&object.properties)))
        .bind(object.created_at)
        .bind(object.updated_at)
        .execute(&mut *$tx)
        .await
        .map_err(insert_error("knowledge-graph object", "id", "workspace"))?;
    }};
}

macro_rules! insert_relationship {
    ($tx:ident, $ws:expr, $relationship:expr) => {{
        let relationship: &RelationshipRecord = $relationship;
        sqlx::query(
            "INSERT INTO kg_relationships (workspace_id, id, relationship_type, from_id, to_id, properties, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind($ws)
        .bind(&relationship.id)
        .bind(&relationship.relationship_type)
        .bind(&relationship.from_id)
        .bind(&relationship.to_id)
        .bind(Json(storable_object(&relationship.properties)))
        .bind(relationship.created_at)
        .execute(&mut *$tx)
        .await
        .map_err(insert_error("knowledge-graph relationship", "id", "object"))?;
    }};
}

impl Store {
    /// The stored graph of `workspace_id`; `None` when it never stored a schema version.
    pub async fn kg_load(
        &self,
        workspace_id: &WorkspaceId,
    ) -> StoreResult<Option<StoredKnowledgeGraph>> {
        let ws = workspace_id.as_str();
        // Read first: what follows is at least as new.
        let generation = self.kg_generation(workspace_id).await?;
        let versions: Vec<VersionRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT sequence, version, message, schema, object_type_count, relationship_type_count, \
             property_count, change_count, created_at FROM kg_schema_versions \
             WHERE workspace_id = $1 ORDER BY sequence"
        )
        .bind(ws)
        .fetch_all(pool)
        .await
        })?;
        if versions.is_empty() {
            return Ok(None);
        }
        let changes: Vec<ChangeRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT sequence, version, change, subject, type_name, relationship_name, property_name, \
             description, at FROM kg_changelog WHERE workspace_id = $1 ORDER BY sequence, position"
        )
        .bind(ws)
        .fetch_all(pool)
        .await
        })?;
        let objects: Vec<ObjectRow> = on_backend!(self, |pool| sqlx::query_as(
            "SELECT id, object_type, properties, created_at, updated_at FROM kg_objects \
             WHERE workspace_id = $1 ORDER BY created_at, id"
        )
        .bind(ws)
        .fetch_all(pool)
        .await)?;
        let relationships: Vec<RelationshipRow> = on_backend!(self, |pool| {
            sqlx::query_as(
            "SELECT id, relationship_type, from_id, to_id, properties, created_at FROM kg_relationships \
             WHERE workspace_id = $1 ORDER BY created_at, id"
        )
        .bind(ws)
        .fetch_all(pool)
        .await
        })?;
        Ok(Some(StoredKnowledgeGraph {
            generation,
            versions: versions.into_iter().map(versioned_schema).collect(),
            changelog: changes
                .into_iter()
                .map(changelog_entry)
                .collect::<StoreResult<_>>()?,
            objects: objects.into_iter().map(object_record).collect(),
            relationships: relationships.into_iter().map(relationship_record).collect(),
        }))
    }

    /// The generation of `workspace_id`'s stored graph: moved on by every change, in the
    /// change's own transaction, so a process whose graph in memory is of an older generation
    /// knows another one (a replica) changed it. 0 before the first change.
    pub async fn kg_generation(&self, workspace_id: &WorkspaceId) -> StoreResult<u64> {
        let generation: Option<i64> = on_backend!(self, |pool| sqlx::query_scalar(
            "SELECT generation FROM kg_generations WHERE workspace_id = $1"
        )
        .bind(workspace_id.as_str())
        .fetch_optional(pool)
        .await)?;
        Ok(generation.map_or(0, |generation| generation.max(0) as u64))
    }

    /// Stores a whole graph for a workspace that has none yet (the sample dataset), in one
    /// transaction. Returns the graph's generation, or `None`, storing nothing, when the
    /// workspace already has a schema.
    pub async fn kg_save_new_graph(
        &self,
        workspace_id: &WorkspaceId,
        graph: &StoredKnowledgeGraph,
    ) -> StoreResult<Option<u64>> {
        let ws = workspace_id.as_str();
        let stored = write_transaction!(self, |tx| {
            let existing: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM kg_schema_versions WHERE workspace_id = $1",
            )
            .bind(ws)
            .fetch_one(&mut *tx)
            .await?;
            if existing > 0 {
                None
            } else {
                let generation: i64 = sqlx::query_scalar(
                    "INSERT INTO kg_generations (workspace_id, generation) VALUES ($1, 1) \
                     ON CONFLICT (workspace_id) DO UPDATE \
                     SET generation = kg_generations.generation + 1 RETURNING generation",
                )
                .bind(ws)
                .fetch_one(&mut *tx)
                .await?;
                for versioned in &graph.versions {
                    let entries: Vec<&ChangelogEntry> = graph
                        .changelog
                        .iter()
                        .filter(|entry| entry.sequence == versioned.version.sequence)
                        .collect();
                    insert_version!(tx, ws, versioned, entries);
                }
                for object in &graph.objects {
                    insert_object!(tx, ws, object);
                }
                for relationship in &graph.relationships {
                    insert_relationship!(tx, ws, relationship);
                }
                Some(generation.max(0) as u64)
            }
        });
        Ok(stored)
    }

    /// Appends one schema version and its changelog entries, moving the generation on from
    /// `expected_generation` (`Conflict`, nothing stored, when another writer moved it first;
    /// so for the writes below).
    pub async fn kg_save_schema_update(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        update: &SchemaUpdate,
    ) -> StoreResult<()> {
        let ws = workspace_id.as_str();
        let versioned = VersionedSchema {
            version: update.version.clone(),
            schema: update.schema.clone(),
        };
        let entries: Vec<&ChangelogEntry> = update.changes.iter().collect();
        write_transaction!(self, |tx| {
            advance_generation!(tx, ws, expected_generation);
            insert_version!(tx, ws, &versioned, entries);
        });
        Ok(())
    }

    /// Inserts new objects, then new relationships, atomically.
    pub async fn kg_insert_records(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        objects: &[ObjectRecord],
        relationships: &[RelationshipRecord],
    ) -> StoreResult<()> {
        let ws = workspace_id.as_str();
        write_transaction!(self, |tx| {
            advance_generation!(tx, ws, expected_generation);
            for object in objects {
                insert_object!(tx, ws, object);
            }
            for relationship in relationships {
                insert_relationship!(tx, ws, relationship);
            }
        });
        Ok(())
    }

    /// Deletes relationships, then objects (with any relationship still touching them),
    /// atomically. Unknown ids are ignored.
    pub async fn kg_delete_records(
        &self,
        workspace_id: &WorkspaceId,
        expected_generation: u64,
        object_ids: &[String],
        relationship_ids: &[String],
    ) -> StoreResult<()> {
        let ws = workspace_id.as_str();
        write_transaction!(self, |tx| {
            advance_generation!(tx, ws, expected_generation);
            for id in relationship_ids {
                sqlx::query("DELETE FROM kg_relationships WHERE workspace_id = $1 AND id = $2")
                    .bind(ws)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
            for id in object_ids {
                sqlx::query("DELETE FROM kg_relationships WHERE workspace_id = $1 AND (from_id = $2 OR to_id = $2)")
                    .bind(ws)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                sqlx::query("DELETE FROM kg_objects WHERE workspace_id = $1 AND id = $2")
                    .bind(ws)
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
            }
        });
        Ok(())
    }
}

fn versioned_schema(row: VersionRow) -> VersionedSchema {
    VersionedSchema {
        version: SchemaVersion {
            version: row.version,
            sequence: u64::try_from(row.sequence).unwrap_or_default(),
            created_at: row.created_at,
            message: row.message,
            object_type_count: count(row.object_type_count),
            relationship_type_count: count(row.relationship_type_count),
            property_count: count(row.property_count),
            change_count: count(row.change_count),
        },
        schema: row.schema.0,
    }
}

fn changelog_entry(row: ChangeRow) -> StoreResult<ChangelogEntry> {
    Ok(ChangelogEntry {
        version: row.version,
        sequence: u64::try_from(row.sequence)
            .map_err(|error| corrupt("changelog sequence", error))?,
        at: row.at,
        change: SchemaChange {
            change: enum_from_text("change", &row.change)?,
            subject: enum_from_text("subject", &row.subject)?,
            type_name: row.type_name,
            relationship_name: row.relationship_name,
            property_name: row.property_name,
            description: row.description,
        },
    })
}

fn object_record(row: ObjectRow) -> ObjectRecord {
    ObjectRecord {
        id: row.id,
        object_type: row.object_type,
        properties: row.properties.0,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

fn relationship_record(row: RelationshipRow) -> RelationshipRecord {
    RelationshipRecord {
        id: row.id,
        relationship_type: row.relationship_type,
        from_id: row.from_id,
        to_id: row.to_id,
        properties: row.properties.0,
        created_at: row.created_at,
    }
}
