//! One workspace's knowledge graph in memory: the current schema, its history, the objects and
//! relationships, and the indexes queries need (objects by type, edges by endpoint).
//!
//! Reads are plain accessors; every mutation lives in `mutation` and keeps the indexes in step.
//! Nothing here does IO: persistence is the caller's job (it receives every accepted change).

use crate::data::{ObjectRecord, RelationshipRecord};
use crate::error::KgError;
use crate::history::SchemaHistory;
use crate::schema::Schema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

#[derive(Clone, Debug, Default)]
pub struct KnowledgeGraph {
    pub(crate) schema: Schema,
    pub(crate) history: SchemaHistory,
    pub(crate) objects: HashMap<String, ObjectRecord>,
    /// Object ids per type, ordered so pagination is stable.
    pub(crate) objects_by_type: HashMap<String, BTreeSet<String>>,
    pub(crate) relationships: HashMap<String, RelationshipRecord>,
    /// Relationship ids leaving each object, in creation order.
    pub(crate) outgoing: HashMap<String, Vec<String>>,
    /// Relationship ids arriving at each object, in creation order.
    pub(crate) incoming: HashMap<String, Vec<String>>,
}

/// Objects and relationships as exchanged by import and export.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphData {
    #[serde(default)]
    pub objects: Vec<ObjectRecord>,
    #[serde(default)]
    pub relationships: Vec<RelationshipRecord>,
}

/// Which way to follow relationships from an object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Relationships that start at the object.
    #[default]
    Out,
    /// Relationships that end at the object.
    In,
    Both,
}

impl KnowledgeGraph {
    /// An empty graph with an empty schema and no history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rebuilds a graph from persisted history and data, checking that every object has a
    /// known type and every relationship joins existing objects.
    pub fn restore(
        history: SchemaHistory,
        objects: Vec<ObjectRecord>,
        relationships: Vec<RelationshipRecord>,
    ) -> Result<Self, KgError> {
        let schema = history
            .versioned_schemas()
            .last()
            .map(|versioned| versioned.schema.clone())
            .unwrap_or_default();
        let mut graph = Self {
            schema,
            history,
            ..Self::default()
        };
        for object in objects {
            graph.schema.require_object_type(&object.object_type)?;
            graph.index_object(object);
        }
        for relationship in relationships {
            graph
                .schema
                .require_relationship_type(&relationship.relationship_type)?;
            for end in [&relationship.from_id, &relationship.to_id] {
                graph.require_object(end)?;
            }
            graph.index_relationship(relationship);
        }
        Ok(graph)
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn history(&self) -> &SchemaHistory {
        &self.history
    }

    pub fn object(&self, id: &str) -> Option<&ObjectRecord> {
        self.objects.get(id)
    }

    /// The object, or [`KgError::UnknownObject`] naming the types that do have objects.
    pub fn require_object(&self, id: &str) -> Result<&ObjectRecord, KgError> {
        self.objects.get(id).ok_or_else(|| KgError::UnknownObject {
            id: id.to_owned(),
            available_types: self.populated_type_names(),
        })
    }

    pub fn relationship(&self, id: &str) -> Option<&RelationshipRecord> {
        self.relationships.get(id)
    }

    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    pub fn relationship_count(&self) -> usize {
        self.relationships.len()
    }

    /// Number of objects of one type.
    pub fn object_count_of_type(&self, type_name: &str) -> usize {
        self.objects_by_type.get(type_name).map_or(0, BTreeSet::len)
    }

    /// Object types that currently have at least one object, sorted.
    pub fn populated_type_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .objects_by_type
            .iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }

    /// Ids of the objects of one type, in id order.
    pub fn object_ids_of_type<'a>(
        &'a self,
        type_name: &str,
    ) -> impl Iterator<Item = &'a String> + 'a {
        self.objects_by_type.get(type_name).into_iter().flatten()
    }

    /// Relationships touching `object_id` in `direction`, each with the id of the object at
    /// the other end.
    pub fn neighbours<'a>(
        &'a self,
        object_id: &str,
        direction: Direction,
    ) -> impl Iterator<Item = (&'a RelationshipRecord, &'a str)> + 'a {
        let outgoing = self.edges(
            &self.outgoing,
            object_id,
            matches!(direction, Direction::Out | Direction::Both),
            |relationship| &relationship.to_id,
        );
        let incoming = self.edges(
            &self.incoming,
            object_id,
            matches!(direction, Direction::In | Direction::Both),
            |relationship| &relationship.from_id,
        );
        outgoing.chain(incoming)
    }

    /// The relationships `index` lists for `object_id` (none unless `wanted`), each with the id
    /// `other_end` reads from it.
    fn edges<'a>(
        &'a self,
        index: &'a HashMap<String, Vec<String>>,
        object_id: &str,
        wanted: bool,
        other_end: fn(&RelationshipRecord) -> &String,
    ) -> impl Iterator<Item = (&'a RelationshipRecord, &'a str)> + 'a {
        wanted
            .then(|| index.get(object_id))
            .flatten()
            .into_iter()
            .flatten()
            .map(move |id| {
                let relationship = &self.relationships[id];
                (relationship, other_end(relationship).as_str())
            })
    }

    /// Every object and relationship, sorted by id (a stable export).
    pub fn export(&self) -> GraphData {
        let mut objects: Vec<ObjectRecord> = self.objects.values().cloned().collect();
        objects.sort_by(|a, b| a.id.cmp(&b.id));
        let mut relationships: Vec<RelationshipRecord> =
            self.relationships.values().cloned().collect();
        relationships.sort_by(|a, b| a.id.cmp(&b.id));
        GraphData {
            objects,
            relationships,
        }
    }

    pub(crate) fn index_object(&mut self, object: ObjectRecord) {
        self.objects_by_type
            .entry(object.object_type.clone())
            .or_default()
            .insert(object.id.clone());
        self.objects.insert(object.id.clone(), object);
    }

    pub(crate) fn index_relationship(&mut self, relationship: RelationshipRecord) {
        self.outgoing
            .entry(relationship.from_id.clone())
            .or_default()
            .push(relationship.id.clone());
        self.incoming
            .entry(relationship.to_id.clone())
            .or_default()
            .push(relationship.id.clone());
        self.relationships
            .insert(relationship.id.clone(), relationship);
    }

    pub(crate) fn unindex_relationship(&mut self, id: &str) -> Option<RelationshipRecord> {
        let relationship = self.relationships.remove(id)?;
        if let Some(ids) = self.outgoing.get_mut(&relationship.from_id) {
            ids.retain(|other| other != id);
        }
        if let Some(ids) = self.incoming.get_mut(&relationship.to_id) {
            ids.retain(|other| other != id);
        }
        Some(relationship)
    }
}
