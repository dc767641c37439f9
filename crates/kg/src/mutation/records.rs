//! Object and relationship changes: create, delete, and atomic bulk import.
//!
//! As for schema changes, each has a read-only `plan_*` that validates and returns exactly the
//! records that would be added or removed, and a commit that applies them; the one-step
//! methods (`create_object`…) do both, for callers without persistence.

use crate::data::{
    NewObject, NewRelationship, ObjectRecord, RelationshipRecord, validate_id, validate_properties,
    validate_relationship,
};
use crate::error::KgError;
use crate::graph::KnowledgeGraph;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// How many records an import added.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportSummary {
    pub objects_created: usize,
    pub relationships_created: usize,
}

/// Validated records ready to be committed by [`KnowledgeGraph::commit_import`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ImportPlan {
    pub objects: Vec<ObjectRecord>,
    pub relationships: Vec<RelationshipRecord>,
}

impl ImportPlan {
    pub fn summary(&self) -> ImportSummary {
        ImportSummary {
            objects_created: self.objects.len(),
            relationships_created: self.relationships.len(),
        }
    }
}

/// An object and the relationships that go with it when it is deleted.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectDeletion {
    pub object: ObjectRecord,
    pub relationships: Vec<RelationshipRecord>,
}

impl KnowledgeGraph {
    /// Validates one new object and returns the record it would become.
    pub fn plan_object(
        &self,
        new_object: NewObject,
        at: DateTime<Utc>,
    ) -> Result<ObjectRecord, KgError> {
        let NewObject {
            id,
            object_type,
            mut properties,
        } = new_object;
        let definition = self.schema.require_object_type(&object_type)?;
        let id = chosen_or_new_id(id, "object", |id| self.objects.contains_key(id))?;
        validate_properties(&object_type, &definition.properties, &mut properties)?;
        Ok(ObjectRecord {
            id,
            object_type,
            properties,
            created_at: at,
            updated_at: at,
        })
    }

    /// Adds a record returned by [`Self::plan_object`].
    pub fn insert_object(&mut self, object: ObjectRecord) {
        self.index_object(object);
    }

    /// Validates and adds one object.
    pub fn create_object(
        &mut self,
        new_object: NewObject,
        at: DateTime<Utc>,
    ) -> Result<ObjectRecord, KgError> {
        let object = self.plan_object(new_object, at)?;
        self.insert_object(object.clone());
        Ok(object)
    }

    /// Validates one new relationship between existing objects. A second relationship of the
    /// same type between the same two objects is refused.
    pub fn plan_relationship(
        &self,
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
        let from_type = &self.require_object(&from_id)?.object_type;
        let to_type = &self.require_object(&to_id)?.object_type;
        validate_relationship(
            &self.schema,
            &relationship_type,
            from_type,
            to_type,
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
        let id = chosen_or_new_id(id, "relationship", |id| self.relationships.contains_key(id))?;
        Ok(RelationshipRecord {
            id,
            relationship_type,
            from_id,
            to_id,
            properties,
            created_at: at,
        })
    }

    /// Adds a record returned by [`Self::plan_relationship`].
    pub fn insert_relationship(&mut self, relationship: RelationshipRecord) {
        self.index_relationship(relationship);
    }

    /// Validates and adds one relationship.
    pub fn create_relationship(
        &mut self,
        new_relationship: NewRelationship,
        at: DateTime<Utc>,
    ) -> Result<RelationshipRecord, KgError> {
        let relationship = self.plan_relationship(new_relationship, at)?;
        self.insert_relationship(relationship.clone());
        Ok(relationship)
    }

    /// What deleting `id` would remove: the object and every relationship touching it.
    pub fn plan_delete_object(&self, id: &str) -> Result<ObjectDeletion, KgError> {
        let object = self.require_object(id)?.clone();
        let mut relationship_ids: Vec<&String> = self
            .outgoing
            .get(id)
            .into_iter()
            .chain(self.incoming.get(id))
            .flatten()
            .collect();
        relationship_ids.sort();
        relationship_ids.dedup();
        let relationships = relationship_ids
            .into_iter()
            .map(|rid| self.relationships[rid].clone())
            .collect();
        Ok(ObjectDeletion {
            object,
            relationships,
        })
    }

    /// Removes an object and every relationship touching it; returns them all.
    pub fn delete_object(&mut self, id: &str) -> Result<ObjectDeletion, KgError> {
        let deletion = self.plan_delete_object(id)?;
        for relationship in &deletion.relationships {
            self.unindex_relationship(&relationship.id);
        }
        self.outgoing.remove(id);
        self.incoming.remove(id);
        self.objects.remove(id);
        if let Some(ids) = self.objects_by_type.get_mut(&deletion.object.object_type) {
            ids.remove(id);
        }
        Ok(deletion)
    }

    /// The relationship with this id, or an error naming it.
    pub fn plan_delete_relationship(&self, id: &str) -> Result<RelationshipRecord, KgError> {
        self.relationship(id)
            .cloned()
            .ok_or_else(|| KgError::invalid_argument(format!("relationship '{id}' does not exist")))
    }

    pub fn delete_relationship(&mut self, id: &str) -> Result<RelationshipRecord, KgError> {
        let relationship = self.plan_delete_relationship(id)?;
        self.unindex_relationship(id);
        Ok(relationship)
    }

    /// Validates all objects, then all relationships (which may refer to the new objects). The
    /// first failure is reported with the position of the offending record.
    pub fn plan_import(
        &self,
        objects: Vec<NewObject>,
        relationships: Vec<NewRelationship>,
        at: DateTime<Utc>,
    ) -> Result<ImportPlan, KgError> {
        let mut scratch = self.clone();
        let mut plan = ImportPlan::default();
        for (index, object) in objects.into_iter().enumerate() {
            let created = scratch
                .create_object(object, at)
                .map_err(|error| prefix_error(&format!("objects[{index}]"), error))?;
            plan.objects.push(created);
        }
        for (index, relationship) in relationships.into_iter().enumerate() {
            let created = scratch
                .create_relationship(relationship, at)
                .map_err(|error| prefix_error(&format!("relationships[{index}]"), error))?;
            plan.relationships.push(created);
        }
        Ok(plan)
    }

    /// Adds every record of a plan returned by [`Self::plan_import`].
    pub fn commit_import(&mut self, plan: ImportPlan) -> ImportSummary {
        let summary = plan.summary();
        for object in plan.objects {
            self.index_object(object);
        }
        for relationship in plan.relationships {
            self.index_relationship(relationship);
        }
        summary
    }

    /// Adds all records or none.
    pub fn import(
        &mut self,
        objects: Vec<NewObject>,
        relationships: Vec<NewRelationship>,
        at: DateTime<Utc>,
    ) -> Result<ImportPlan, KgError> {
        let plan = self.plan_import(objects, relationships, at)?;
        self.commit_import(plan.clone());
        Ok(plan)
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

/// The caller's id when it is valid and not `taken` yet (`kind` names the record in the
/// error), else a new UUIDv7 when none was chosen.
fn chosen_or_new_id(
    id: Option<String>,
    kind: &str,
    taken: impl Fn(&str) -> bool,
) -> Result<String, KgError> {
    let Some(id) = id else {
        return Ok(uuid::Uuid::now_v7().to_string());
    };
    validate_id(&id)?;
    if taken(&id) {
        return Err(KgError::AlreadyExists {
            what: format!("{kind} '{id}'"),
        });
    }
    Ok(id)
}
