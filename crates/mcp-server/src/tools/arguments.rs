//! The arguments of each tool, as Rust types: serde reads them (unknown fields are refused with
//! the list of known ones) and schemars turns them into each tool's `inputSchema`, so the
//! advertised schema and the accepted input cannot drift apart.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use switchboard_kg::Direction;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaVersionArguments {}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaChangelogArguments {
    /// Only changes after this schema version (its hash such as `57c52257693ae983`, or its
    /// sequence number such as `2`) or at/after this ISO date (`2026-10-15`) or timestamp.
    pub since: Option<String>,
    /// Most changes to return, newest first (1-100, default 10).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeInfoArguments {
    /// One object type to describe in detail; omit to list every type.
    pub type_name: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RelationshipInfoArguments {
    /// Only relationship types that may start at this object type.
    pub from_type: Option<String>,
    /// Only relationship types that may end at this object type.
    pub to_type: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTypesArguments {
    /// Words to look for in type, relationship and property names and descriptions.
    pub query: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindObjectsArguments {
    /// The object type to list, e.g. `Document`.
    #[serde(rename = "type")]
    pub object_type: String,
    /// Property conditions, all of which must hold: `{"status": "draft"}` for equality, or an
    /// operator object such as `{"title": {"contains": "roadmap"}}`. Operators: eq, ne,
    /// contains, in, gt, gte, lt, lte, exists.
    pub filter: Option<Map<String, Value>>,
    /// Page size (1-100, default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchObjectsArguments {
    /// The name (or title) to look for, e.g. `product roadmap`; case-insensitive, whole words.
    pub query: String,
    /// Only objects of this type, e.g. `Team`; omit to search every type.
    #[serde(rename = "type")]
    pub object_type: Option<String>,
    /// Most matches to return, best first (1-100, default 10).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetObjectArguments {
    /// The object's id.
    pub id: String,
}

/// Which way to follow relationships.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DirectionArgument {
    /// Relationships that start at the object.
    #[default]
    Out,
    /// Relationships that end at the object.
    In,
    Both,
}

impl From<DirectionArgument> for Direction {
    fn from(direction: DirectionArgument) -> Self {
        match direction {
            DirectionArgument::Out => Direction::Out,
            DirectionArgument::In => Direction::In,
            DirectionArgument::Both => Direction::Both,
        }
    }
}

fn default_depth() -> u32 {
    1
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraverseArguments {
    /// The object to start from.
    pub start_id: String,
    /// Follow only relationships of this type, e.g. `belongs_to`.
    pub relationship: Option<String>,
    /// `out` (default), `in` or `both`.
    #[serde(default)]
    pub direction: DirectionArgument,
    /// Report only objects of this type (traversal still passes through other types).
    pub target_type: Option<String>,
    /// How many relationships away to go (1-5, default 1).
    #[serde(default = "default_depth")]
    #[schemars(range(min = 1, max = 5))]
    pub depth: u32,
}

fn default_max_depth() -> u32 {
    4
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindPathArguments {
    pub from_id: String,
    pub to_id: String,
    /// Longest path to consider, in relationships (1-6, default 4).
    #[serde(default = "default_max_depth")]
    #[schemars(range(min = 1, max = 6))]
    pub max_depth: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountObjectsArguments {
    /// The object type to count.
    #[serde(rename = "type")]
    pub object_type: String,
    /// A property to group the count by, e.g. `status`.
    pub group_by: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateObjectArguments {
    /// The object type, e.g. `Document`.
    #[serde(rename = "type")]
    pub object_type: String,
    /// Property values, checked against the type's schema.
    #[serde(default)]
    pub properties: Map<String, Value>,
    /// An id of your choosing (1-128 characters, no spaces); generated when omitted.
    pub id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRelationshipArguments {
    /// The relationship type, e.g. `authored_by`.
    #[serde(rename = "type")]
    pub relationship_type: String,
    pub from_id: String,
    pub to_id: String,
    /// Property values, checked against the relationship type's schema.
    #[serde(default)]
    pub properties: Map<String, Value>,
}
