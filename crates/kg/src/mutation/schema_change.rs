//! Schema changes: replacing the schema or applying one [`SchemaEdit`] creates a version and
//! changelog entries, and is refused when the schema is inconsistent or existing objects and
//! relationships would no longer fit it.
//!
//! Every change can be planned first (`plan_*`, read-only) and committed after the caller has
//! persisted it (`commit_*`), so nothing unpersisted is ever visible.

use crate::changelog::{ChangelogEntry, diff_schemas};
use crate::data::{validate_properties, validate_relationship};
use crate::error::KgError;
use crate::graph::KnowledgeGraph;
use crate::history::{SchemaVersion, VersionedSchema};
use crate::schema::{ObjectType, RelationshipType, Schema};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A schema change that was accepted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaUpdate {
    pub version: SchemaVersion,
    /// The full schema of the new version.
    pub schema: Schema,
    pub changes: Vec<ChangelogEntry>,
}

/// One targeted edit of the schema, for callers that do not want to send a whole schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SchemaEdit {
    /// Adds the object type, or replaces the one with the same name.
    UpsertObjectType {
        object_type: ObjectType,
    },
    RemoveObjectType {
        name: String,
    },
    /// Adds the relationship type, or replaces the one with the same name.
    UpsertRelationshipType {
        relationship_type: RelationshipType,
    },
    RemoveRelationshipType {
        name: String,
    },
}

impl SchemaEdit {
    /// The schema that results from applying this edit to `schema`.
    pub fn apply_to(self, schema: &Schema) -> Result<Schema, KgError> {
        let mut next = schema.clone();
        match self {
            SchemaEdit::UpsertObjectType { object_type } => {
                next.object_types
                    .retain(|existing| existing.name != object_type.name);
                next.object_types.push(object_type);
            }
            SchemaEdit::RemoveObjectType { name } => {
                schema.require_object_type(&name)?;
                next.object_types.retain(|existing| existing.name != name);
            }
            SchemaEdit::UpsertRelationshipType { relationship_type } => {
                next.relationship_types
                    .retain(|existing| existing.name != relationship_type.name);
                next.relationship_types.push(relationship_type);
            }
            SchemaEdit::RemoveRelationshipType { name } => {
                schema.require_relationship_type(&name)?;
                next.relationship_types
                    .retain(|existing| existing.name != name);
            }
        }
        Ok(next.normalized())
    }
}

impl KnowledgeGraph {
    /// Replaces the schema. Returns `None` when `new_schema` equals the current one (no new
    /// version). Rejected when the schema is inconsistent or existing data would break.
    pub fn apply_schema(
        &mut self,
        new_schema: Schema,
        at: DateTime<Utc>,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, KgError> {
        let update = self.plan_schema(new_schema, at, message)?;
        if let Some(update) = &update {
            self.commit_schema(update.clone());
        }
        Ok(update)
    }

    /// Checks a schema replacement and returns the version it would create, changing nothing.
    /// `None` when `new_schema` equals the current schema. Commit with [`Self::commit_schema`]
    /// before planning another change.
    pub fn plan_schema(
        &self,
        new_schema: Schema,
        at: DateTime<Utc>,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, KgError> {
        let new_schema = new_schema.normalized();
        new_schema.validate()?;
        let changes = diff_schemas(&self.schema, &new_schema);
        if changes.is_empty() {
            return Ok(None);
        }
        self.check_data_fits(&new_schema)?;
        let (version, entries) = self.history.prepare(&new_schema, changes, at, message);
        Ok(Some(SchemaUpdate {
            version,
            schema: new_schema,
            changes: entries,
        }))
    }

    /// Makes a planned schema update current.
    pub fn commit_schema(&mut self, update: SchemaUpdate) {
        let SchemaUpdate {
            version,
            schema,
            changes,
        } = update;
        self.schema = schema.clone();
        self.history
            .push(VersionedSchema { version, schema }, changes);
    }

    /// Applies one [`SchemaEdit`] (see [`Self::apply_schema`]).
    pub fn edit_schema(
        &mut self,
        edit: SchemaEdit,
        at: DateTime<Utc>,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, KgError> {
        let next = edit.apply_to(&self.schema)?;
        self.apply_schema(next, at, message)
    }

    /// Plans one [`SchemaEdit`] (see [`Self::plan_schema`]).
    pub fn plan_schema_edit(
        &self,
        edit: SchemaEdit,
        at: DateTime<Utc>,
        message: Option<String>,
    ) -> Result<Option<SchemaUpdate>, KgError> {
        let next = edit.apply_to(&self.schema)?;
        self.plan_schema(next, at, message)
    }

    fn check_data_fits(&self, schema: &Schema) -> Result<(), KgError> {
        const MAX_REPORTED: usize = 10;
        let mut problems = Vec::new();
        for (type_name, ids) in &self.objects_by_type {
            if ids.is_empty() {
                continue;
            }
            let Some(object_type) = schema.object_type(type_name) else {
                problems.push(format!(
                    "{} objects of type {type_name} exist; delete them first",
                    ids.len()
                ));
                continue;
            };
            for id in ids {
                let mut properties = self.objects[id].properties.clone();
                if let Err(KgError::InvalidData { problems: found }) =
                    validate_properties(type_name, &object_type.properties, &mut properties)
                {
                    problems.extend(
                        found
                            .into_iter()
                            .map(|problem| format!("object {id}: {problem}")),
                    );
                }
            }
        }
        for relationship in self.relationships.values() {
            let from_type = &self.objects[&relationship.from_id].object_type;
            let to_type = &self.objects[&relationship.to_id].object_type;
            let mut properties = relationship.properties.clone();
            if let Err(error) = validate_relationship(
                schema,
                &relationship.relationship_type,
                from_type,
                to_type,
                &mut properties,
            ) {
                problems.push(format!("relationship {}: {error}", relationship.id));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        problems.sort();
        let total = problems.len();
        problems.truncate(MAX_REPORTED);
        if total > MAX_REPORTED {
            problems.push(format!("and {} more", total - MAX_REPORTED));
        }
        Err(KgError::SchemaBreaksData { problems })
    }
}
