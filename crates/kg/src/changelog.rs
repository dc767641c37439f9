//! What changed between two schemas: one entry per added, modified or removed object type,
//! property or relationship type, each with a sentence a person can read.
//!
//! [`diff_schemas`] is pure; `history` stamps the entries with a version and a time.

use crate::schema::{ObjectType, PropertyDefinition, RelationshipType, Schema};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
        }
    }
}

/// What a change is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeSubject {
    /// An object type as a whole.
    Type,
    /// One property of an object type or of a relationship type.
    Property,
    /// A relationship type as a whole.
    Relationship,
}

impl ChangeSubject {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeSubject::Type => "type",
            ChangeSubject::Property => "property",
            ChangeSubject::Relationship => "relationship",
        }
    }
}

/// One change, before it is stamped with a version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaChange {
    pub change: ChangeKind,
    pub subject: ChangeSubject,
    /// The object type concerned (the owner, for a property of an object type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The relationship type concerned (the owner, for a property of a relationship type).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relationship_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property_name: Option<String>,
    /// A sentence such as "Added property status (enum: draft, published) to Document".
    pub description: String,
}

/// A change as recorded in a graph's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangelogEntry {
    /// The schema version this change produced.
    pub version: String,
    /// That version's sequence number.
    pub sequence: u64,
    pub at: DateTime<Utc>,
    #[serde(flatten)]
    pub change: SchemaChange,
}

/// Every change that turns `old` into `new`, in a stable order: object types, then
/// relationship types; within each, by name.
pub fn diff_schemas(old: &Schema, new: &Schema) -> Vec<SchemaChange> {
    let mut changes = Vec::new();
    let old_types: BTreeMap<_, _> = old
        .object_types
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let new_types: BTreeMap<_, _> = new
        .object_types
        .iter()
        .map(|t| (t.name.as_str(), t))
        .collect();
    for (name, new_type) in &new_types {
        match old_types.get(name) {
            None => changes.push(type_change(
                ChangeKind::Added,
                new_type,
                format!(
                    "Added object type {name} ({})",
                    count_noun(new_type.properties.len(), "property", "properties")
                ),
            )),
            Some(old_type) => diff_object_type(old_type, new_type, &mut changes),
        }
    }
    for (name, old_type) in &old_types {
        if !new_types.contains_key(name) {
            changes.push(type_change(
                ChangeKind::Removed,
                old_type,
                format!("Removed object type {name}"),
            ));
        }
    }

    let old_relationships: BTreeMap<_, _> = old
        .relationship_types
        .iter()
        .map(|r| (r.name.as_str(), r))
        .collect();
    let new_relationships: BTreeMap<_, _> = new
        .relationship_types
        .iter()
        .map(|r| (r.name.as_str(), r))
        .collect();
    for (name, new_relationship) in &new_relationships {
        match old_relationships.get(name) {
            None => changes.push(relationship_change(
                ChangeKind::Added,
                new_relationship,
                format!(
                    "Added relationship {name} ({})",
                    endpoints(new_relationship)
                ),
            )),
            Some(old_relationship) => {
                diff_relationship_type(old_relationship, new_relationship, &mut changes)
            }
        }
    }
    for (name, old_relationship) in &old_relationships {
        if !new_relationships.contains_key(name) {
            changes.push(relationship_change(
                ChangeKind::Removed,
                old_relationship,
                format!(
                    "Removed relationship {name} ({})",
                    endpoints(old_relationship)
                ),
            ));
        }
    }
    changes
}

fn endpoints(relationship: &RelationshipType) -> String {
    format!(
        "{} -> {}",
        relationship.from_types.join("|"),
        relationship.to_types.join("|")
    )
}

fn type_change(change: ChangeKind, object_type: &ObjectType, description: String) -> SchemaChange {
    SchemaChange {
        change,
        subject: ChangeSubject::Type,
        type_name: Some(object_type.name.clone()),
        relationship_name: None,
        property_name: None,
        description,
    }
}

fn relationship_change(
    change: ChangeKind,
    relationship: &RelationshipType,
    description: String,
) -> SchemaChange {
    SchemaChange {
        change,
        subject: ChangeSubject::Relationship,
        type_name: None,
        relationship_name: Some(relationship.name.clone()),
        property_name: None,
        description,
    }
}

fn diff_object_type(old: &ObjectType, new: &ObjectType, changes: &mut Vec<SchemaChange>) {
    if old.description != new.description {
        changes.push(type_change(
            ChangeKind::Modified,
            new,
            format!("Changed the description of object type {}", new.name),
        ));
    }
    let owner = PropertyOwner::ObjectType(&new.name);
    diff_properties(&owner, &old.properties, &new.properties, changes);
}

fn diff_relationship_type(
    old: &RelationshipType,
    new: &RelationshipType,
    changes: &mut Vec<SchemaChange>,
) {
    let mut differences = Vec::new();
    if old.from_types != new.from_types || old.to_types != new.to_types {
        differences.push(format!(
            "endpoints {} became {}",
            endpoints(old),
            endpoints(new)
        ));
    }
    if old.description != new.description {
        differences.push(new_description(&new.description));
    }
    if !differences.is_empty() {
        changes.push(relationship_change(
            ChangeKind::Modified,
            new,
            format!(
                "Modified relationship {}: {}",
                new.name,
                differences.join("; ")
            ),
        ));
    }
    let owner = PropertyOwner::RelationshipType(&new.name);
    diff_properties(&owner, &old.properties, &new.properties, changes);
}

enum PropertyOwner<'a> {
    ObjectType(&'a str),
    RelationshipType(&'a str),
}

impl PropertyOwner<'_> {
    fn label(&self) -> String {
        match self {
            PropertyOwner::ObjectType(name) => (*name).to_owned(),
            PropertyOwner::RelationshipType(name) => format!("relationship {name}"),
        }
    }

    fn change(&self, change: ChangeKind, property: &str, description: String) -> SchemaChange {
        let (type_name, relationship_name) = match self {
            PropertyOwner::ObjectType(name) => (Some((*name).to_owned()), None),
            PropertyOwner::RelationshipType(name) => (None, Some((*name).to_owned())),
        };
        SchemaChange {
            change,
            subject: ChangeSubject::Property,
            type_name,
            relationship_name,
            property_name: Some(property.to_owned()),
            description,
        }
    }
}

fn diff_properties(
    owner: &PropertyOwner<'_>,
    old: &[PropertyDefinition],
    new: &[PropertyDefinition],
    changes: &mut Vec<SchemaChange>,
) {
    let old_by_name: BTreeMap<_, _> = old.iter().map(|p| (p.name.as_str(), p)).collect();
    let new_by_name: BTreeMap<_, _> = new.iter().map(|p| (p.name.as_str(), p)).collect();
    let label = owner.label();
    for (name, new_property) in &new_by_name {
        match old_by_name.get(name) {
            None => changes.push(owner.change(
                ChangeKind::Added,
                name,
                format!("Added property {} to {label}", new_property.summary()),
            )),
            Some(old_property) if old_property != new_property => {
                let detail = property_difference(old_property, new_property);
                changes.push(owner.change(
                    ChangeKind::Modified,
                    name,
                    format!("Modified property {name} of {label}: {detail}"),
                ));
            }
            Some(_) => {}
        }
    }
    for (name, old_property) in &old_by_name {
        if !new_by_name.contains_key(name) {
            changes.push(owner.change(
                ChangeKind::Removed,
                name,
                format!("Removed property {} from {label}", old_property.summary()),
            ));
        }
    }
}

fn property_difference(old: &PropertyDefinition, new: &PropertyDefinition) -> String {
    let mut parts = Vec::new();
    if old.property_type != new.property_type {
        parts.push(format!(
            "type {} became {}",
            old.property_type, new.property_type
        ));
    }
    if old.required != new.required {
        parts.push(
            if new.required {
                "now required"
            } else {
                "now optional"
            }
            .to_owned(),
        );
    }
    if old.enum_values != new.enum_values {
        parts.push(format!(
            "values [{}] became [{}]",
            old.enum_values.join(", "),
            new.enum_values.join(", ")
        ));
    }
    if old.description != new.description {
        parts.push(new_description(&new.description));
    }
    parts.join("; ")
}

/// Longest description quoted in a change sentence.
const MAX_QUOTED_DESCRIPTION: usize = 80;

/// What a description became, quoted (not "description changed", which repeats the sentence's
/// own subject and says nothing new).
fn new_description(description: &str) -> String {
    let description = description.trim();
    if description.is_empty() {
        return "description removed".to_owned();
    }
    let quoted: String = description.chars().take(MAX_QUOTED_DESCRIPTION).collect();
    let ellipsis = if quoted.len() < description.len() {
        "…"
    } else {
        ""
    };
    format!("new description \"{quoted}{ellipsis}\"")
}

/// "1 property", "0 properties", "3 properties".
fn count_noun(count: usize, singular: &str, plural: &str) -> String {
    format!("{count} {}", if count == 1 { singular } else { plural })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::PropertyType;

    #[test]
    fn diff_names_each_change_precisely() {
        let old = Schema {
            object_types: vec![
                ObjectType::new(
                    "Document",
                    "A file",
                    vec![PropertyDefinition::new("title", PropertyType::String, "")],
                ),
                ObjectType::new("Task", "Legacy", vec![]),
            ],
            relationship_types: vec![],
        };
        let mut new = old.clone();
        new.object_types.retain(|t| t.name != "Task");
        new.object_types[0]
            .properties
            .push(PropertyDefinition::enumeration(
                "status",
                &["draft", "published"],
                "",
            ));
        new.object_types[0].properties[0].required = true;
        new.object_types.push(ObjectType::new("Team", "", vec![]));
        new.relationship_types.push(RelationshipType::new(
            "owned_by",
            "",
            &["Document"],
            &["Team"],
        ));
        let changes = diff_schemas(&old, &new);
        let descriptions: Vec<_> = changes.iter().map(|c| c.description.as_str()).collect();
        assert_eq!(
            descriptions,
            vec![
                "Added property status (enum: draft, published) to Document",
                "Modified property title of Document: now required",
                "Added object type Team (0 properties)",
                "Removed object type Task",
                "Added relationship owned_by (Document -> Team)",
            ]
        );
        assert_eq!(changes[0].subject, ChangeSubject::Property);
        assert_eq!(changes[0].type_name.as_deref(), Some("Document"));
        assert_eq!(changes[3].change, ChangeKind::Removed);
        assert!(diff_schemas(&new, &new).is_empty());
    }

    #[test]
    fn sentences_agree_in_number_and_do_not_repeat_themselves() {
        let old = Schema {
            object_types: vec![ObjectType::new(
                "Project",
                "Work",
                vec![PropertyDefinition::new(
                    "description",
                    PropertyType::Text,
                    "What the project is about",
                )],
            )],
            relationship_types: vec![RelationshipType::new(
                "owned_by",
                "Owner",
                &["Project"],
                &["Project"],
            )],
        };
        let mut new = old.clone();
        new.object_types[0].properties[0].description =
            "Goal, scope and non-goals of the project".into();
        new.relationship_types[0].description = "The team accountable".into();
        new.object_types.push(ObjectType::new(
            "Tag",
            "",
            vec![PropertyDefinition::new("name", PropertyType::String, "")],
        ));
        let descriptions: Vec<String> = diff_schemas(&old, &new)
            .into_iter()
            .map(|change| change.description)
            .collect();
        assert_eq!(
            descriptions,
            [
                "Modified property description of Project: new description \"Goal, scope and non-goals of the project\"",
                "Added object type Tag (1 property)",
                "Modified relationship owned_by: new description \"The team accountable\"",
            ]
        );
    }
}
