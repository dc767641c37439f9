//! Conversions between `kg`'s types and their wire mirrors (`wire`): kg → wire for answers,
//! wire → kg for request bodies. Destructuring and exhaustive matches, so a field or variant
//! added in `kg` fails to compile here.

use super::wire::*;
use switchboard_kg as kg;

impl From<kg::PropertyType> for PropertyType {
    fn from(value: kg::PropertyType) -> Self {
        match value {
            kg::PropertyType::String => Self::String,
            kg::PropertyType::Text => Self::Text,
            kg::PropertyType::Integer => Self::Integer,
            kg::PropertyType::Number => Self::Number,
            kg::PropertyType::Boolean => Self::Boolean,
            kg::PropertyType::Date => Self::Date,
            kg::PropertyType::Datetime => Self::Datetime,
            kg::PropertyType::Enum => Self::Enum,
        }
    }
}

impl From<kg::PropertyDefinition> for PropertyDefinition {
    fn from(value: kg::PropertyDefinition) -> Self {
        let kg::PropertyDefinition {
            name,
            property_type,
            required,
            enum_values,
            description,
        } = value;
        Self {
            name,
            property_type: property_type.into(),
            required,
            enum_values,
            description,
        }
    }
}

impl From<kg::ObjectType> for ObjectType {
    fn from(value: kg::ObjectType) -> Self {
        let kg::ObjectType {
            name,
            description,
            properties,
        } = value;
        Self {
            name,
            description,
            properties: properties.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<kg::RelationshipType> for RelationshipType {
    fn from(value: kg::RelationshipType) -> Self {
        let kg::RelationshipType {
            name,
            description,
            from_types,
            to_types,
            properties,
        } = value;
        Self {
            name,
            description,
            from_types,
            to_types,
            properties: properties.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<kg::Schema> for Schema {
    fn from(value: kg::Schema) -> Self {
        let kg::Schema {
            object_types,
            relationship_types,
        } = value;
        Self {
            object_types: object_types.into_iter().map(Into::into).collect(),
            relationship_types: relationship_types.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<kg::SchemaVersion> for SchemaVersion {
    fn from(value: kg::SchemaVersion) -> Self {
        let kg::SchemaVersion {
            version,
            sequence,
            created_at,
            message,
            object_type_count,
            relationship_type_count,
            property_count,
            change_count,
        } = value;
        Self {
            version,
            sequence,
            created_at,
            message,
            object_type_count,
            relationship_type_count,
            property_count,
            change_count,
        }
    }
}

impl From<kg::ChangeKind> for ChangeKind {
    fn from(value: kg::ChangeKind) -> Self {
        match value {
            kg::ChangeKind::Added => Self::Added,
            kg::ChangeKind::Modified => Self::Modified,
            kg::ChangeKind::Removed => Self::Removed,
        }
    }
}

impl From<kg::ChangeSubject> for ChangeSubject {
    fn from(value: kg::ChangeSubject) -> Self {
        match value {
            kg::ChangeSubject::Type => Self::Type,
            kg::ChangeSubject::Property => Self::Property,
            kg::ChangeSubject::Relationship => Self::Relationship,
        }
    }
}

impl From<kg::ChangelogEntry> for ChangelogEntry {
    fn from(value: kg::ChangelogEntry) -> Self {
        let kg::ChangelogEntry {
            version,
            sequence,
            at,
            change:
                kg::SchemaChange {
                    change,
                    subject,
                    type_name,
                    relationship_name,
                    property_name,
                    description,
                },
        } = value;
        Self {
            version,
            sequence,
            at,
            change: change.into(),
            subject: subject.into(),
            type_name,
            relationship_name,
            property_name,
            description,
        }
    }
}

impl From<kg::ObjectRecord> for ObjectRecord {
    fn from(value: kg::ObjectRecord) -> Self {
        let kg::ObjectRecord {
            id,
            object_type,
            properties,
            created_at,
            updated_at,
        } = value;
        Self {
            id,
            object_type,
            properties,
            created_at,
            updated_at,
        }
    }
}

impl From<kg::RelationshipRecord> for RelationshipRecord {
    fn from(value: kg::RelationshipRecord) -> Self {
        let kg::RelationshipRecord {
            id,
            relationship_type,
            from_id,
            to_id,
            properties,
            created_at,
        } = value;
        Self {
            id,
            relationship_type,
            from_id,
            to_id,
            properties,
            created_at,
        }
    }
}

impl From<kg::ImportSummary> for ImportSummary {
    fn from(value: kg::ImportSummary) -> Self {
        let kg::ImportSummary {
            objects_created,
            relationships_created,
        } = value;
        Self {
            objects_created,
            relationships_created,
        }
    }
}

impl From<PropertyType> for kg::PropertyType {
    fn from(value: PropertyType) -> Self {
        match value {
            PropertyType::String => Self::String,
            PropertyType::Text => Self::Text,
            PropertyType::Integer => Self::Integer,
            PropertyType::Number => Self::Number,
            PropertyType::Boolean => Self::Boolean,
            PropertyType::Date => Self::Date,
            PropertyType::Datetime => Self::Datetime,
            PropertyType::Enum => Self::Enum,
        }
    }
}

impl From<PropertyDefinition> for kg::PropertyDefinition {
    fn from(value: PropertyDefinition) -> Self {
        Self {
            name: value.name,
            property_type: value.property_type.into(),
            required: value.required,
            enum_values: value.enum_values,
            description: value.description,
        }
    }
}

impl From<ObjectType> for kg::ObjectType {
    fn from(value: ObjectType) -> Self {
        Self {
            name: value.name,
            description: value.description,
            properties: value.properties.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<RelationshipType> for kg::RelationshipType {
    fn from(value: RelationshipType) -> Self {
        Self {
            name: value.name,
            description: value.description,
            from_types: value.from_types,
            to_types: value.to_types,
            properties: value.properties.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<Schema> for kg::Schema {
    fn from(value: Schema) -> Self {
        Self {
            object_types: value.object_types.into_iter().map(Into::into).collect(),
            relationship_types: value
                .relationship_types
                .into_iter()
                .map(Into::into)
                .collect(),
        }
    }
}

impl From<SchemaEdit> for kg::SchemaEdit {
    fn from(value: SchemaEdit) -> Self {
        match value {
            SchemaEdit::UpsertObjectType { object_type } => Self::UpsertObjectType {
                object_type: object_type.into(),
            },
            SchemaEdit::RemoveObjectType { name } => Self::RemoveObjectType { name },
            SchemaEdit::UpsertRelationshipType { relationship_type } => {
                Self::UpsertRelationshipType {
                    relationship_type: relationship_type.into(),
                }
            }
            SchemaEdit::RemoveRelationshipType { name } => Self::RemoveRelationshipType { name },
        }
    }
}

impl From<NewObject> for kg::NewObject {
    fn from(value: NewObject) -> Self {
        Self {
            id: value.id,
            object_type: value.object_type,
            properties: value.properties,
        }
    }
}

impl From<NewRelationship> for kg::NewRelationship {
    fn from(value: NewRelationship) -> Self {
        Self {
            id: value.id,
            relationship_type: value.relationship_type,
            from_id: value.from_id,
            to_id: value.to_id,
            properties: value.properties,
        }
    }
}
