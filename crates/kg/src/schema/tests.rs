//! Tests of schema hashing, validation and lookups.

use super::*;

fn small_schema() -> Schema {
    Schema {
        object_types: vec![
            ObjectType::new(
                "Person",
                "A human",
                vec![PropertyDefinition::new("name", PropertyType::String, "").required()],
            ),
            ObjectType::new(
                "Document",
                "A file",
                vec![
                    PropertyDefinition::new("title", PropertyType::String, "").required(),
                    PropertyDefinition::enumeration("status", &["draft", "published"], ""),
                ],
            ),
        ],
        relationship_types: vec![RelationshipType::new(
            "authored_by",
            "",
            &["Document"],
            &["Person"],
        )],
    }
}

#[test]
fn content_hash_is_stable_and_order_independent() {
    let schema = small_schema();
    let mut reordered = schema.clone();
    reordered.object_types.reverse();
    reordered.object_types[1].properties.reverse();
    assert_eq!(schema.content_hash(), reordered.content_hash());
    assert_eq!(schema.content_hash().len(), 16);
    assert!(schema.content_hash().chars().all(|c| c.is_ascii_hexdigit()));
    let mut changed = schema.clone();
    changed.object_types[0].description = "Someone".into();
    assert_ne!(schema.content_hash(), changed.content_hash());
}

#[test]
fn validate_reports_every_problem_with_its_owner() {
    let mut schema = small_schema();
    schema
        .object_types
        .push(ObjectType::new("Person", "dup", vec![]));
    schema.object_types[1]
        .properties
        .push(PropertyDefinition::new("id", PropertyType::String, ""));
    schema.object_types[1]
        .properties
        .push(PropertyDefinition::new("kind", PropertyType::Enum, ""));
    schema.relationship_types.push(RelationshipType::new(
        "mentions",
        "",
        &["Document"],
        &["Ghost"],
    ));
    let KgError::InvalidSchema { problems } = schema.validate().unwrap_err() else {
        panic!("expected InvalidSchema");
    };
    let joined = problems.join("\n");
    assert!(
        joined.contains("object type 'Person' is defined twice"),
        "{joined}"
    );
    assert!(
        joined.contains("property name 'id' is reserved"),
        "{joined}"
    );
    assert!(
        joined.contains("enum property 'kind' needs at least one value"),
        "{joined}"
    );
    assert!(
        joined.contains("to_types names unknown object type 'Ghost'"),
        "{joined}"
    );
    assert!(small_schema().validate().is_ok());
}

#[test]
fn unknown_type_error_lists_what_exists() {
    let schema = small_schema();
    let error = schema.require_object_type("Invoice").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown object type 'Invoice'; available types: Person, Document"
    );
}
