//! The shape of a knowledge graph: object types with typed properties, and relationship types
//! saying which object types they may connect.
//!
//! A [`Schema`] is plain data plus its own consistency rules ([`Schema::validate`]) and a stable
//! content hash ([`Schema::content_hash`]). It knows nothing about history (see `history`) or
//! about the objects stored under it (see `graph`).

use crate::error::KgError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// The value type of one property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

impl PropertyType {
    pub const ALL: [PropertyType; 8] = [
        PropertyType::String,
        PropertyType::Text,
        PropertyType::Integer,
        PropertyType::Number,
        PropertyType::Boolean,
        PropertyType::Date,
        PropertyType::Datetime,
        PropertyType::Enum,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PropertyType::String => "string",
            PropertyType::Text => "text",
            PropertyType::Integer => "integer",
            PropertyType::Number => "number",
            PropertyType::Boolean => "boolean",
            PropertyType::Date => "date",
            PropertyType::Datetime => "datetime",
            PropertyType::Enum => "enum",
        }
    }
}

impl fmt::Display for PropertyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One property of an object type or relationship type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertyDefinition {
    pub name: String,
    #[serde(rename = "type")]
    pub property_type: PropertyType,
    #[serde(default)]
    pub required: bool,
    /// The allowed values; non-empty exactly when `property_type` is `enum`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enum_values: Vec<String>,
    #[serde(default)]
    pub description: String,
}

impl PropertyDefinition {
    pub fn new(name: &str, property_type: PropertyType, description: &str) -> Self {
        Self {
            name: name.to_owned(),
            property_type,
            required: false,
            enum_values: Vec::new(),
            description: description.to_owned(),
        }
    }

    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    pub fn enumeration(name: &str, values: &[&str], description: &str) -> Self {
        Self {
            enum_values: values.iter().map(|value| (*value).to_owned()).collect(),
            ..Self::new(name, PropertyType::Enum, description)
        }
    }

    /// A one-line human description such as `status (enum: draft, published; required)`.
    pub fn summary(&self) -> String {
        let mut text = format!("{} ({}", self.name, self.property_type);
        if !self.enum_values.is_empty() {
            text.push_str(": ");
            text.push_str(&self.enum_values.join(", "));
        }
        if self.required {
            text.push_str("; required");
        }
        text.push(')');
        text
    }
}

/// A kind of object (`Document`, `Person`…).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectType {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub properties: Vec<PropertyDefinition>,
}

impl ObjectType {
    pub fn new(name: &str, description: &str, properties: Vec<PropertyDefinition>) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            properties,
        }
    }

    pub fn property(&self, name: &str) -> Option<&PropertyDefinition> {
        self.properties
            .iter()
            .find(|property| property.name == name)
    }

    pub fn property_names(&self) -> Vec<&str> {
        self.properties
            .iter()
            .map(|property| property.name.as_str())
            .collect()
    }
}

/// A kind of directed link between objects (`Document -authored_by-> Person`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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

impl RelationshipType {
    pub fn new(name: &str, description: &str, from_types: &[&str], to_types: &[&str]) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            from_types: from_types.iter().map(|name| (*name).to_owned()).collect(),
            to_types: to_types.iter().map(|name| (*name).to_owned()).collect(),
            properties: Vec::new(),
        }
    }

    pub fn with_properties(mut self, properties: Vec<PropertyDefinition>) -> Self {
        self.properties = properties;
        self
    }

    pub fn connects(&self, from_type: &str, to_type: &str) -> bool {
        self.from_types.iter().any(|name| name == from_type)
            && self.to_types.iter().any(|name| name == to_type)
    }

    pub fn involves(&self, type_name: &str) -> bool {
        self.from_types
            .iter()
            .chain(&self.to_types)
            .any(|name| name == type_name)
    }
}

/// The whole schema. Kept in canonical order (types, properties and endpoint lists sorted by
/// name) so that equal schemas serialize — and hash — identically.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schema {
    #[serde(default)]
    pub object_types: Vec<ObjectType>,
    #[serde(default)]
    pub relationship_types: Vec<RelationshipType>,
}

/// Property names every object carries outside its `properties` map.
pub const RESERVED_PROPERTY_NAMES: [&str; 2] = ["id", "type"];

impl Schema {
    pub fn object_type(&self, name: &str) -> Option<&ObjectType> {
        self.object_types
            .iter()
            .find(|object_type| object_type.name == name)
    }

    pub fn relationship_type(&self, name: &str) -> Option<&RelationshipType> {
        self.relationship_types
            .iter()
            .find(|relationship_type| relationship_type.name == name)
    }

    pub fn object_type_names(&self) -> Vec<String> {
        self.object_types
            .iter()
            .map(|object_type| object_type.name.clone())
            .collect()
    }

    pub fn relationship_type_names(&self) -> Vec<String> {
        self.relationship_types
            .iter()
            .map(|relationship_type| relationship_type.name.clone())
            .collect()
    }

    /// The object type, or [`KgError::UnknownObjectType`] listing the types that exist.
    pub fn require_object_type(&self, name: &str) -> Result<&ObjectType, KgError> {
        self.object_type(name)
            .ok_or_else(|| KgError::UnknownObjectType {
                name: name.to_owned(),
                available: self.object_type_names(),
            })
    }

    /// The relationship type, or [`KgError::UnknownRelationshipType`] listing those that exist.
    pub fn require_relationship_type(&self, name: &str) -> Result<&RelationshipType, KgError> {
        self.relationship_type(name)
            .ok_or_else(|| KgError::UnknownRelationshipType {
                name: name.to_owned(),
                available: self.relationship_type_names(),
            })
    }

    /// Total number of properties over object and relationship types.
    pub fn property_count(&self) -> usize {
        self.object_types
            .iter()
            .map(|t| t.properties.len())
            .sum::<usize>()
            + self
                .relationship_types
                .iter()
                .map(|r| r.properties.len())
                .sum::<usize>()
    }

    /// Sorts every list into canonical order.
    pub fn normalize(&mut self) {
        self.object_types.sort_by(|a, b| a.name.cmp(&b.name));
        for object_type in &mut self.object_types {
            object_type.properties.sort_by(|a, b| a.name.cmp(&b.name));
        }
        self.relationship_types.sort_by(|a, b| a.name.cmp(&b.name));
        for relationship_type in &mut self.relationship_types {
            relationship_type
                .properties
                .sort_by(|a, b| a.name.cmp(&b.name));
            relationship_type.from_types.sort();
            relationship_type.from_types.dedup();
            relationship_type.to_types.sort();
            relationship_type.to_types.dedup();
        }
    }

    /// The schema in canonical order.
    pub fn normalized(mut self) -> Self {
        self.normalize();
        self
    }

    /// A stable 16-hex-digit content hash (the first 8 bytes of SHA-256 over the canonical
    /// JSON form). Equal schemas hash equally whatever order they were written in.
    pub fn content_hash(&self) -> String {
        let canonical = self.clone().normalized();
        let bytes = serde_json::to_vec(&canonical).expect("a schema always serializes");
        let digest = Sha256::digest(&bytes);
        hex::encode(&digest[..8])
    }
}

mod validate;

#[cfg(test)]
mod tests;
