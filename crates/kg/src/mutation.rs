//! Every way a [`KnowledgeGraph`] changes: schema updates (which create versions and changelog
//! entries), object and relationship creation and deletion, and atomic bulk import.
//!
//! Each method validates first and changes nothing on error; each returns exactly what was
//! added or removed so the caller can persist it.

use crate::changelog::{ChangelogEntry, diff_schemas};
use crate::data::{
    NewObject, NewRelationship, ObjectRecord, RelationshipRecord, validate_id, validate_properties,
    validate_relationship,
};
use crate::error::KgError;
use crate::graph::KnowledgeGraph;
use crate::history::SchemaVersion;
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

/// How many records an import added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSummary {
    pub objects_created: usize,
    pub relationships_created: usize,
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
        let new_schema = new_schema.normalized();
        new_schema.validate()?;
        let changes = diff_schemas(&self.schema, &new_schema);
        if changes.is_empty() {
            return Ok(None);
        }
        self.check_data_fits(&new_schema)?;
        let (version, entries) = self.history.record(&new_schema, changes, at, message);
        self.schema = new_schema.clone();
        Ok(Some(SchemaUpdate {
            version,
            schema: new_schema,
            changes: entries,
        }))
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

    /// Validates and adds one object.
    pub fn create_object(
        &mut self,
        new_object: NewObject,
        at: DateTime<Utc>,
    ) -> Result<ObjectRecord, KgError> {
        let NewObject {
            id,
            object_type,
            mut properties,
        } = new_object;
        let definition = self.schema.require_object_type(&object_type)?;
        let id = match id {
            Some(id) => {
                validate_id(&id)?;
                if self.objects.contains_key(&id) {
                    return Err(KgError::AlreadyExists {
                        what: format!("object '{id}'"),
                    });
                }
                id
            }
            None => uuid::Uuid::now_v7().to_string(),
        };
        validate_properties(&object_type, &definition.properties, &mut properties)?;
        let object = ObjectRecord {
            id,
            object_type,
            properties,
            created_at: at,
            updated_at: at,
        };
        self.index_object(object.clone());
        Ok(object)
    }

    /// Validates and adds one relationship between existing objects. A second relationship of
    /// the same type between the same two objects is rejected.
    pub fn create_relationship(
        &mut self,
        new_relationship: NewRelationship,
        at: DateTime<Utc>,
    ) -> Result<RelationshipRecord, KgError> {
        let NewRelationship {
            id,
            relationship_type,
            from_id,
            to_id,
            mut properties,
        } = new_relationship;
        self.schema.require_relationship_type(&relationship_type)?;
        let from_type = self.require_object(&from_id)?.object_type.clone();
        let to_type = self.require_object(&to_id)?.object_type.clone();
        validate_relationship(
            &self.schema,
            &relationship_type,
            &from_type,
            &to_type,
            &mut properties,
        )?;
        let duplicate = self
            .outgoing
            .get(&from_id)
            .into_iter()
            .flatten()
            .map(|existing| &self.relationships[existing])
            .any(|existing| {
                existing.to_id == to_id && existing.relationship_type == relationship_type
            });
        if duplicate {
            return Err(KgError::AlreadyExists {
                what: format!("relationship {from_id} -{relationship_type}-> {to_id}"),
            });
        }
        let id = match id {
            Some(id) => {
                validate_id(&id)?;
                if self.relationships.contains_key(&id) {
                    return Err(KgError::AlreadyExists {
                        what: format!("relationship '{id}'"),
                    });
                }
                id
            }
            None => uuid::Uuid::now_v7().to_string(),
        };
        let relationship = RelationshipRecord {
            id,
            relationship_type,
            from_id,
            to_id,
            properties,
            created_at: at,
        };
        self.index_relationship(relationship.clone());
        Ok(relationship)
    }

    /// Removes an object and every relationship touching it; returns them all.
    pub fn delete_object(
        &mut self,
        id: &str,
    ) -> Result<(ObjectRecord, Vec<RelationshipRecord>), KgError> {
        self.require_object(id)?;
        let mut touching: Vec<String> = self.outgoing.remove(id).unwrap_or_default();
        touching.extend(self.incoming.remove(id).unwrap_or_default());
        touching.sort();
        touching.dedup();
        let removed_relationships = touching
            .iter()
            .filter_map(|relationship_id| self.unindex_relationship(relationship_id))
            .collect();
        let object = self.objects.remove(id).expect("checked above");
        if let Some(ids) = self.objects_by_type.get_mut(&object.object_type) {
            ids.remove(id);
        }
        Ok((object, removed_relationships))
    }

    pub fn delete_relationship(&mut self, id: &str) -> Result<RelationshipRecord, KgError> {
        self.unindex_relationship(id)
            .ok_or_else(|| KgError::InvalidArgument {
                message: format!("relationship '{id}' does not exist"),
            })
    }

    /// Adds all objects, then all relationships, or nothing: the first problems found are
    /// reported with the position of the offending record.
    pub fn import(
        &mut self,
        objects: Vec<NewObject>,
        relationships: Vec<NewRelationship>,
        at: DateTime<Utc>,
    ) -> Result<(ImportSummary, Vec<ObjectRecord>, Vec<RelationshipRecord>), KgError> {
        let mut scratch = self.clone();
        let mut created_objects = Vec::with_capacity(objects.len());
        for (index, object) in objects.into_iter().enumerate() {
            let created = scratch
                .create_object(object, at)
                .map_err(|error| prefix_error(&format!("objects[{index}]"), error))?;
            created_objects.push(created);
        }
        let mut created_relationships = Vec::with_capacity(relationships.len());
        for (index, relationship) in relationships.into_iter().enumerate() {
            let created = scratch
                .create_relationship(relationship, at)
                .map_err(|error| prefix_error(&format!("relationships[{index}]"), error))?;
            created_relationships.push(created);
        }
        *self = scratch;
        let summary = ImportSummary {
            objects_created: created_objects.len(),
            relationships_created: created_relationships.len(),
        };
        Ok((summary, created_objects, created_relationships))
    }
}

fn prefix_error(position: &str, error: KgError) -> KgError {
    match error {
        KgError::InvalidData { problems } => KgError::InvalidData {
            problems: problems
                .into_iter()
                .map(|problem| format!("{position}: {problem}"))
                .collect(),
        },
        KgError::AlreadyExists { what } => KgError::AlreadyExists {
            what: format!("{position}: {what}"),
        },
        other => KgError::InvalidData {
            problems: vec![format!("{position}: {other}")],
        },
    }
}
