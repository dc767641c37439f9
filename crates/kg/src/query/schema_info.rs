//! Questions about the schema itself: which relationships a type takes part in, which
//! relationship types connect two types, and a keyword search over names and descriptions.

use crate::error::KgError;
use crate::schema::{ObjectType, RelationshipType, Schema};

/// One object type with the relationship types it can take part in.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeDetails<'a> {
    pub object_type: &'a ObjectType,
    /// Relationship types whose source may be this type.
    pub outgoing: Vec<&'a RelationshipType>,
    /// Relationship types whose target may be this type.
    pub incoming: Vec<&'a RelationshipType>,
}

/// Where a search term was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchHitKind {
    ObjectType,
    RelationshipType,
    Property,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    pub kind: SearchHitKind,
    /// The object or relationship type concerned (the owner, for a property).
    pub type_name: String,
    pub property_name: Option<String>,
    /// The matching text (a name or a description).
    pub matched: String,
    /// Higher is better: exact name 3, name contains 2, description contains 1.
    pub score: u8,
}

impl Schema {
    pub fn type_details(&self, name: &str) -> Result<TypeDetails<'_>, KgError> {
        let object_type = self.require_object_type(name)?;
        let outgoing = self
            .relationship_types
            .iter()
            .filter(|r| r.from_types.iter().any(|t| t == name))
            .collect();
        let incoming = self
            .relationship_types
            .iter()
            .filter(|r| r.to_types.iter().any(|t| t == name))
            .collect();
        Ok(TypeDetails {
            object_type,
            outgoing,
            incoming,
        })
    }

    /// Relationship types that may start at `from_type` and/or end at `to_type`.
    pub fn relationships_between(
        &self,
        from_type: Option<&str>,
        to_type: Option<&str>,
    ) -> Result<Vec<&RelationshipType>, KgError> {
        for name in [from_type, to_type].into_iter().flatten() {
            self.require_object_type(name)?;
        }
        Ok(self
            .relationship_types
            .iter()
            .filter(|r| from_type.is_none_or(|from| r.from_types.iter().any(|t| t == from)))
            .filter(|r| to_type.is_none_or(|to| r.to_types.iter().any(|t| t == to)))
            .collect())
    }

    /// Case-insensitive search of type, relationship and property names and descriptions;
    /// best matches first.
    pub fn search(&self, query: &str) -> Result<Vec<SearchHit>, KgError> {
        let needle = query.trim().to_lowercase();
        if needle.is_empty() {
            return Err(KgError::invalid_argument("query must not be empty"));
        }
        let mut hits = Vec::new();
        let mut consider =
            |kind, type_name: &str, property_name: Option<&str>, name: &str, description: &str| {
                let score = if name.to_lowercase() == needle {
                    3
                } else if name.to_lowercase().contains(&needle) {
                    2
                } else if description.to_lowercase().contains(&needle) {
                    1
                } else {
                    return;
                };
                hits.push(SearchHit {
                    kind,
                    type_name: type_name.to_owned(),
                    property_name: property_name.map(str::to_owned),
                    matched: if score == 1 {
                        description.to_owned()
                    } else {
                        name.to_owned()
                    },
                    score,
                });
            };
        for object_type in &self.object_types {
            consider(
                SearchHitKind::ObjectType,
                &object_type.name,
                None,
                &object_type.name,
                &object_type.description,
            );
            for property in &object_type.properties {
                consider(
                    SearchHitKind::Property,
                    &object_type.name,
                    Some(&property.name),
                    &property.name,
                    &property.description,
                );
            }
        }
        for relationship in &self.relationship_types {
            consider(
                SearchHitKind::RelationshipType,
                &relationship.name,
                None,
                &relationship.name,
                &relationship.description,
            );
            for property in &relationship.properties {
                consider(
                    SearchHitKind::Property,
                    &relationship.name,
                    Some(&property.name),
                    &property.name,
                    &property.description,
                );
            }
        }
        hits.sort_by(|a, b| {
            b.score
                .cmp(&a.score)
                .then_with(|| a.type_name.cmp(&b.type_name))
        });
        Ok(hits)
    }
}
