//! The JSON shapes of `/api/kg`. They mirror `switchboard-kg`'s own types field for field —
//! same names, same serde attributes, so the wire and its error messages are unchanged — and
//! exist so the server owns its wire and its OpenAPI description without pulling `utoipa`
//! into `kg`. The conversions (`convert`) are exhaustive destructurings, struct literals and
//! matches: a field or variant added in `kg` fails to compile there until the wire says what
//! to do with it.
//!
//! Schema names carry a `Kg` prefix (`KgSchema`…) so they cannot clash with other areas'.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// The value type of one property.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = KgPropertyType)]
pub enum PropertyType {
    /// A short single-line string (titles, names).
    String,
    /// Long free text (bodies, summaries).
    Text,
    Integer,
    Number,
    Boolean,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An RFC 3339 timestamp.
    Datetime,
    /// One of the property's `enum_values`.
    Enum,
}

/// One property of an object type or relationship type.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = KgPropertyDefinition)]
pub struct PropertyDefinition {
    pub name: String,
    #[serde(rename = "type")]
    pub property_type: PropertyType,
    #[serde(default)]
    pub required: bool,
    /// The allowed values; non-empty exactly when `type` is `enum` (absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enum_values: Vec<String>,
    #[serde(default)]
    pub description: String,
}

/// A kind of object (`Document`, `Person`…).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = KgObjectType)]
pub struct ObjectType {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub properties: Vec<PropertyDefinition>,
}

/// A kind of directed link between objects (`Document -authored_by-> Person`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = KgRelationshipType)]
pub struct RelationshipType {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Object types allowed at the source end.
    pub from_types: Vec<String>,
    /// Object types allowed at the target end.
    pub to_types: Vec<String>,
    #[serde(default)]
    pub properties: Vec<PropertyDefinition>,
}

/// A whole knowledge-graph schema, in canonical order (sorted by name).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = KgSchema)]
pub struct Schema {
    #[serde(default)]
    pub object_types: Vec<ObjectType>,
    #[serde(default)]
    pub relationship_types: Vec<RelationshipType>,
}

/// One targeted edit of the schema, tagged by `op`.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
#[schema(as = KgSchemaEdit)]
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

/// One version of the schema.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = KgSchemaVersion)]
pub struct SchemaVersion {
    /// The schema's content hash, e.g. `57c52257693ae983`.
    pub version: String,
    /// 1 for the first version, then +1 per change.
    pub sequence: u64,
    pub created_at: DateTime<Utc>,
    /// Why the schema changed (absent when nobody said).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    pub object_type_count: usize,
    pub relationship_type_count: usize,
    pub property_count: usize,
    /// Number of changelog entries this version introduced.
    pub change_count: usize,
}

/// Whether a change added, modified or removed its subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = KgChangeKind)]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
}

/// What a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = KgChangeSubject)]
pub enum ChangeSubject {
    /// An object type as a whole.
    Type,
    /// One property of an object type or of a relationship type.
    Property,
    /// A relationship type as a whole.
    Relationship,
}

/// A change as recorded in the schema's history.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = KgChangelogEntry)]
pub struct ChangelogEntry {
    /// The schema version this change produced.
    pub version: String,
    /// That version's sequence number.
    pub sequence: u64,
    pub at: DateTime<Utc>,
    pub change: ChangeKind,
    pub subject: ChangeSubject,
    /// The object type concerned (the owner, for a property of an object type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_name: Option<String>,
    /// The relationship type concerned (the owner, for a property of a relationship type).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relationship_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub property_name: Option<String>,
    /// A sentence such as "Added property status (enum: draft, published) to Document".
    pub description: String,
}

/// One object of the graph.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = KgObject)]
pub struct ObjectRecord {
    pub id: String,
    /// Its object type.
    #[serde(rename = "type")]
    pub object_type: String,
    #[schema(value_type = Object)]
    pub properties: Map<String, Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One directed, typed link between two objects.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(as = KgRelationship)]
pub struct RelationshipRecord {
    pub id: String,
    /// Its relationship type.
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    #[schema(value_type = Object)]
    pub properties: Map<String, Value>,
    pub created_at: DateTime<Utc>,
}

/// An object to create (the id is generated when absent).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = KgNewObject)]
pub struct NewObject {
    #[serde(default)]
    pub id: Option<String>,
    /// Its object type.
    #[serde(rename = "type")]
    pub object_type: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub properties: Map<String, Value>,
}

/// A relationship to create (the id is generated when absent).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = KgNewRelationship)]
pub struct NewRelationship {
    #[serde(default)]
    pub id: Option<String>,
    /// Its relationship type.
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    #[serde(default)]
    #[schema(value_type = Object)]
    pub properties: Map<String, Value>,
}

/// How many records an import added.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[schema(as = KgImportSummary)]
pub struct ImportSummary {
    pub objects_created: usize,
    pub relationships_created: usize,
}
