//! What each tool returns, as Rust types: serialized as `structuredContent` (and as the JSON
//! text block), and turned into each tool's `outputSchema` by schemars. Conversions from the
//! graph's records live here too.

use chrono::SecondsFormat;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};
use switchboard_kg::{
    ChangelogEntry, Direction, KnowledgeGraph, ObjectRecord, PropertyDefinition,
    RelationshipRecord, RelationshipType, SchemaVersion,
};

#[derive(Debug, Serialize, JsonSchema)]
pub struct SchemaVersionOutput {
    /// Content hash of the current schema.
    pub version: Option<String>,
    /// 1 for the first version, +1 per change (so also the number of versions); 0 when the
    /// graph has no schema yet.
    pub sequence: u64,
    /// When this version was created (RFC 3339).
    pub created_at: Option<String>,
    /// Why the schema changed, as given with the change (absent when none was given).
    pub message: Option<String>,
    pub object_type_count: usize,
    pub relationship_type_count: usize,
    pub property_count: usize,
}

impl SchemaVersionOutput {
    pub fn new(current: Option<&SchemaVersion>) -> Self {
        Self {
            version: current.map(|v| v.version.clone()),
            sequence: current.map_or(0, |v| v.sequence),
            created_at: current.map(|v| v.created_at.to_rfc3339_opts(SecondsFormat::Secs, true)),
            message: current.and_then(|v| v.message.clone()),
            object_type_count: current.map_or(0, |v| v.object_type_count),
            relationship_type_count: current.map_or(0, |v| v.relationship_type_count),
            property_count: current.map_or(0, |v| v.property_count),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangeOutput {
    pub version: String,
    pub sequence: u64,
    /// When the change was made (RFC 3339).
    pub at: String,
    /// `added`, `modified` or `removed`.
    pub change: String,
    /// `type`, `property` or `relationship`.
    pub subject: String,
    pub type_name: Option<String>,
    pub relationship_name: Option<String>,
    pub property_name: Option<String>,
    pub description: String,
}

impl From<&ChangelogEntry> for ChangeOutput {
    fn from(entry: &ChangelogEntry) -> Self {
        Self {
            version: entry.version.clone(),
            sequence: entry.sequence,
            at: entry.at.to_rfc3339_opts(SecondsFormat::Secs, true),
            change: entry.change.change.as_str().to_owned(),
            subject: entry.change.subject.as_str().to_owned(),
            type_name: entry.change.type_name.clone(),
            relationship_name: entry.change.relationship_name.clone(),
            property_name: entry.change.property_name.clone(),
            description: entry.change.description.clone(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ChangelogOutput {
    pub since: Option<String>,
    /// Current schema version.
    pub current_version: Option<String>,
    /// How many changes match `since` in all (more than returned when limited).
    pub total_matching: usize,
    /// Newest first.
    pub changes: Vec<ChangeOutput>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PropertyOutput {
    pub name: String,
    /// string, text, integer, number, boolean, date, datetime or enum.
    #[serde(rename = "type")]
    pub property_type: String,
    pub required: bool,
    /// Allowed values of an enum property.
    pub enum_values: Vec<String>,
    pub description: String,
}

impl From<&PropertyDefinition> for PropertyOutput {
    fn from(property: &PropertyDefinition) -> Self {
        Self {
            name: property.name.clone(),
            property_type: property.property_type.as_str().to_owned(),
            required: property.required,
            enum_values: property.enum_values.clone(),
            description: property.description.clone(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeOutput {
    pub name: String,
    pub description: String,
    pub properties: Vec<PropertyOutput>,
    /// Relationship types that may start at this type.
    pub outgoing_relationships: Vec<String>,
    /// Relationship types that may end at this type.
    pub incoming_relationships: Vec<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RelationshipOutput {
    pub name: String,
    pub description: String,
    pub from_types: Vec<String>,
    pub to_types: Vec<String>,
    pub properties: Vec<PropertyOutput>,
}

impl From<&RelationshipType> for RelationshipOutput {
    fn from(relationship: &RelationshipType) -> Self {
        Self {
            name: relationship.name.clone(),
            description: relationship.description.clone(),
            from_types: relationship.from_types.clone(),
            to_types: relationship.to_types.clone(),
            properties: relationship
                .properties
                .iter()
                .map(PropertyOutput::from)
                .collect(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeInfoOutput {
    pub schema_version: Option<String>,
    /// Every type, or the one asked for.
    pub types: Vec<TypeOutput>,
    /// The relationship types involving the listed types.
    pub relationships: Vec<RelationshipOutput>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RelationshipInfoOutput {
    pub from_type: Option<String>,
    pub to_type: Option<String>,
    pub relationships: Vec<RelationshipOutput>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchMatchOutput {
    /// `object_type`, `relationship_type` or `property`.
    pub kind: String,
    /// The type concerned (the owner, for a property).
    pub type_name: String,
    pub property_name: Option<String>,
    /// The name or description that matched.
    pub matched: String,
    /// 3 exact name, 2 name contains, 1 description contains.
    pub score: u8,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchTypesOutput {
    pub query: String,
    /// Best first.
    pub matches: Vec<SearchMatchOutput>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ObjectOutput {
    pub id: String,
    #[serde(rename = "type")]
    pub object_type: String,
    /// The title or name, else the id.
    pub label: String,
    pub properties: Map<String, Value>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&ObjectRecord> for ObjectOutput {
    fn from(object: &ObjectRecord) -> Self {
        Self {
            id: object.id.clone(),
            object_type: object.object_type.clone(),
            label: object.label().to_owned(),
            properties: object.properties.clone(),
            created_at: object.created_at.to_rfc3339_opts(SecondsFormat::Secs, true),
            updated_at: object.updated_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct RelationshipRecordOutput {
    pub id: String,
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    pub properties: Map<String, Value>,
    pub created_at: String,
}

impl From<&RelationshipRecord> for RelationshipRecordOutput {
    fn from(relationship: &RelationshipRecord) -> Self {
        Self {
            id: relationship.id.clone(),
            relationship_type: relationship.relationship_type.clone(),
            from_id: relationship.from_id.clone(),
            to_id: relationship.to_id.clone(),
            properties: relationship.properties.clone(),
            created_at: relationship
                .created_at
                .to_rfc3339_opts(SecondsFormat::Secs, true),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FindObjectsOutput {
    #[serde(rename = "type")]
    pub object_type: String,
    pub objects: Vec<ObjectOutput>,
    /// Objects matching the filter in all pages.
    pub total_matching: usize,
    /// Pass as `cursor` to get the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ObjectMatchOutput {
    pub object: ObjectOutput,
    /// How the name matched, best first: `exact` (the name or id is the query), `phrase` (the
    /// name contains the query's words in order) or `all_words` (every query word is in the
    /// name or names the object's type, as in `platform team`).
    pub matched: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchObjectsOutput {
    pub query: String,
    /// The type searched, when one was given.
    #[serde(rename = "type")]
    pub object_type: Option<String>,
    /// Best matches first.
    pub matches: Vec<ObjectMatchOutput>,
    /// Objects matching in all (more than `matches` holds when the limit cut them).
    pub total_matching: usize,
    /// Every object type of the schema, so a caller can tell a type word from a name.
    pub object_types: Vec<String>,
}

/// A relationship seen from one of its ends.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LinkOutput {
    pub relationship_id: String,
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub other_id: String,
    pub other_type: String,
    pub other_label: String,
    pub properties: Map<String, Value>,
}

impl LinkOutput {
    /// The relationships of `object_id` in `direction`, each with the object at its other end
    /// (type and label empty when that object is missing).
    pub fn all(knowledge: &KnowledgeGraph, object_id: &str, direction: Direction) -> Vec<Self> {
        knowledge
            .neighbours(object_id, direction)
            .map(|(relationship, other_id)| Self::new(knowledge, relationship, other_id))
            .collect()
    }

    fn new(knowledge: &KnowledgeGraph, relationship: &RelationshipRecord, other_id: &str) -> Self {
        let other = knowledge.object(other_id);
        Self {
            relationship_id: relationship.id.clone(),
            relationship_type: relationship.relationship_type.clone(),
            other_id: other_id.to_owned(),
            other_type: other.map(|o| o.object_type.clone()).unwrap_or_default(),
            other_label: other.map(|o| o.label().to_owned()).unwrap_or_default(),
            properties: relationship.properties.clone(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GetObjectOutput {
    pub object: ObjectOutput,
    /// Relationships starting at the object.
    pub outgoing: Vec<LinkOutput>,
    /// Relationships ending at the object.
    pub incoming: Vec<LinkOutput>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TraverseHitOutput {
    pub object: ObjectOutput,
    /// Relationships between the start and this object.
    pub depth: usize,
    /// The relationship it was reached through.
    pub via: RelationshipRecordOutput,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TraverseOutput {
    pub start: ObjectOutput,
    pub direction: String,
    pub relationship: Option<String>,
    pub target_type: Option<String>,
    pub depth: usize,
    /// Closest first.
    pub results: Vec<TraverseHitOutput>,
    /// True when more objects were reachable than returned.
    pub truncated: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct PathStepOutput {
    pub relationship: RelationshipRecordOutput,
    /// True when the step follows the relationship from its `from` end to its `to` end.
    pub forward: bool,
    /// The object this step arrives at.
    pub object: ObjectOutput,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FindPathOutput {
    pub from_id: String,
    pub to_id: String,
    pub found: bool,
    /// Number of relationships on the path.
    pub length: Option<usize>,
    pub steps: Vec<PathStepOutput>,
    /// The path in one line, e.g. `Roadmap -belongs_to-> Q4 Planning <-leads- Ana Silva`.
    pub summary: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct GroupOutput {
    /// The property value (null for objects without it).
    pub value: Value,
    pub count: usize,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CountObjectsOutput {
    #[serde(rename = "type")]
    pub object_type: String,
    pub total: usize,
    pub group_by: Option<String>,
    /// Largest first; empty without `group_by`.
    pub groups: Vec<GroupOutput>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CreateObjectOutput {
    pub object: ObjectOutput,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct CreateRelationshipOutput {
    pub relationship: RelationshipRecordOutput,
}
