//! Schema changes, object and relationship writes, deletes and import: validation, atomicity
//! and the records each mutation reports.

use crate::fixed_now;
use serde_json::{Map, Value, json};
use switchboard_kg::{
    KgError, KgErrorKind, NewObject, NewRelationship, ObjectType, PropertyDefinition, PropertyType,
    SchemaEdit, sample_graph,
};

fn props(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn new_document(id: Option<&str>, properties: Value) -> NewObject {
    NewObject {
        id: id.map(str::to_owned),
        object_type: "Document".into(),
        properties: props(properties),
    }
}

#[test]
fn creating_an_object_validates_and_indexes_it() {
    let mut graph = sample_graph(fixed_now());
    let created = graph
        .create_object(
            new_document(None, json!({"title": "Hiring Plan", "status": "draft"})),
            fixed_now(),
        )
        .unwrap();
    assert_eq!(created.object_type, "Document");
    assert_eq!(created.id.len(), 36, "generated ids are UUIDs");
    assert_eq!(graph.object_count_of_type("Document"), 13);
    let error = graph
        .create_object(
            new_document(None, json!({"status": "shipped"})),
            fixed_now(),
        )
        .unwrap_err();
    assert_eq!(error.kind(), KgErrorKind::Invalid);
    let message = error.to_string();
    assert!(
        message.contains("Document.status: expected one of draft, in_review, published, archived"),
        "{message}"
    );
    assert!(message.contains("Document.title is required"), "{message}");
    let unknown = graph
        .create_object(
            NewObject {
                id: None,
                object_type: "Invoice".into(),
                properties: Map::new(),
            },
            fixed_now(),
        )
        .unwrap_err();
    assert_eq!(unknown.kind(), KgErrorKind::NotFound);
    assert_eq!(
        unknown.to_string(),
        "unknown object type 'Invoice'; available types: Document, Person, Project, Tag, Team"
    );
    let duplicate = graph
        .create_object(
            new_document(Some("doc-product-roadmap"), json!({"title": "x"})),
            fixed_now(),
        )
        .unwrap_err();
    assert_eq!(
        duplicate.to_string(),
        "object 'doc-product-roadmap' already exists"
    );
}

#[test]
fn relationships_check_endpoint_types_and_duplicates() {
    let mut graph = sample_graph(fixed_now());
    let relationship = |from: &str, to: &str, kind: &str| NewRelationship {
        id: None,
        relationship_type: kind.into(),
        from_id: from.into(),
        to_id: to.into(),
        properties: Map::new(),
    };
    let wrong_end = graph
        .create_relationship(
            relationship("team-platform", "project-q4-planning", "authored_by"),
            fixed_now(),
        )
        .unwrap_err();
    assert_eq!(
        wrong_end.to_string(),
        "invalid data: authored_by cannot start at a Team (allowed: Document); authored_by cannot end at a Project (allowed: Person)"
    );
    let missing = graph
        .create_relationship(
            relationship("doc-nope", "person-ana-silva", "authored_by"),
            fixed_now(),
        )
        .unwrap_err();
    assert!(matches!(missing, KgError::UnknownObject { .. }));
    assert!(
        missing
            .to_string()
            .contains("the graph holds objects of types: Document, Person, Project, Tag, Team")
    );
    let duplicate = graph
        .create_relationship(
            relationship("doc-product-roadmap", "person-ana-silva", "authored_by"),
            fixed_now(),
        )
        .unwrap_err();
    assert_eq!(duplicate.kind(), KgErrorKind::Conflict);
    graph
        .create_relationship(
            relationship("doc-product-roadmap", "person-ben-okafor", "authored_by"),
            fixed_now(),
        )
        .unwrap();
}

#[test]
fn schema_changes_create_versions_and_refuse_to_break_data() {
    let mut graph = sample_graph(fixed_now());
    let before = graph.history().current().unwrap().clone();
    let mut person = graph.schema().object_type("Person").unwrap().clone();
    person.properties.push(PropertyDefinition::new(
        "phone",
        PropertyType::String,
        "Desk phone",
    ));
    let update = graph
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: person.clone(),
            },
            fixed_now(),
            Some("phones".into()),
        )
        .unwrap()
        .expect("a change");
    assert_eq!(update.version.sequence, before.sequence + 1);
    assert_ne!(update.version.version, before.version);
    assert_eq!(update.changes.len(), 1);
    assert_eq!(
        update.changes[0].change.description,
        "Added property phone (string) to Person"
    );
    // The same schema again is not a new version.
    let again = graph
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: person.clone(),
            },
            fixed_now(),
            None,
        )
        .unwrap();
    assert!(again.is_none());

    let mut required_phone = person;
    required_phone.properties.last_mut().unwrap().required = true;
    let breaking = graph
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: required_phone,
            },
            fixed_now(),
            None,
        )
        .unwrap_err();
    assert_eq!(breaking.kind(), KgErrorKind::Conflict);
    assert!(
        breaking
            .to_string()
            .contains("object person-ana-silva: Person.phone is required"),
        "{breaking}"
    );
    let remove_team = graph
        .edit_schema(
            SchemaEdit::RemoveObjectType {
                name: "Team".into(),
            },
            fixed_now(),
            None,
        )
        .unwrap_err();
    assert!(
        remove_team
            .to_string()
            .contains("to_types names unknown object type 'Team'"),
        "{remove_team}"
    );
    assert_eq!(
        graph.history().versions().count(),
        5,
        "failed edits leave history alone"
    );
}

#[test]
fn removing_an_unused_type_works_and_in_use_type_is_refused() {
    let mut graph = sample_graph(fixed_now());
    graph
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: ObjectType::new("Meeting", "", vec![]),
            },
            fixed_now(),
            None,
        )
        .unwrap();
    let update = graph
        .edit_schema(
            SchemaEdit::RemoveObjectType {
                name: "Meeting".into(),
            },
            fixed_now(),
            None,
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        update.changes[0].change.description,
        "Removed object type Meeting"
    );
    let mut schema = graph.schema().clone();
    schema.relationship_types.retain(|r| !r.involves("Tag"));
    schema.object_types.retain(|t| t.name != "Tag");
    let error = graph.apply_schema(schema, fixed_now(), None).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("6 objects of type Tag exist; delete them first"),
        "{error}"
    );
}

#[test]
fn planning_changes_nothing_until_committed() {
    let mut graph = sample_graph(fixed_now());
    let planned = graph
        .plan_object(
            new_document(Some("doc-planned"), json!({"title": "Planned"})),
            fixed_now(),
        )
        .unwrap();
    assert!(graph.object("doc-planned").is_none());
    graph.insert_object(planned);
    assert!(graph.object("doc-planned").is_some());
    let mut schema = graph.schema().clone();
    schema
        .object_types
        .push(ObjectType::new("Meeting", "", vec![]));
    let versions = graph.history().versions().count();
    let update = graph
        .plan_schema(schema, fixed_now(), None)
        .unwrap()
        .unwrap();
    assert_eq!(graph.history().versions().count(), versions);
    assert!(graph.schema().object_type("Meeting").is_none());
    graph.commit_schema(update);
    assert_eq!(graph.history().versions().count(), versions + 1);
    assert!(graph.schema().object_type("Meeting").is_some());
}

#[test]
fn delete_object_removes_its_relationships() {
    let mut graph = sample_graph(fixed_now());
    let before = graph.relationship_count();
    let deletion = graph.delete_object("person-dana-kowalski").unwrap();
    let (object, relationships) = (deletion.object, deletion.relationships);
    assert_eq!(object.id, "person-dana-kowalski");
    assert_eq!(graph.relationship_count(), before - relationships.len());
    assert!(
        relationships
            .iter()
            .all(|r| r.from_id == object.id || r.to_id == object.id)
    );
    assert!(graph.object("person-dana-kowalski").is_none());
    assert!(
        graph
            .find_path("doc-launch-checklist", "team-design", 4)
            .unwrap()
            .is_some()
    );
}

#[test]
fn import_is_all_or_nothing_and_names_the_bad_record() {
    let mut graph = sample_graph(fixed_now());
    let objects = vec![
        NewObject {
            id: Some("tag-ops".into()),
            object_type: "Tag".into(),
            properties: props(json!({"name": "ops"})),
        },
        NewObject {
            id: Some("tag-bad".into()),
            object_type: "Tag".into(),
            properties: props(json!({"label": "x"})),
        },
    ];
    let error = graph
        .import(objects.clone(), vec![], fixed_now())
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("invalid data: objects[1]: Tag has no property 'label'"),
        "{error}"
    );
    assert!(graph.object("tag-ops").is_none(), "nothing was imported");
    let good = vec![objects[0].clone()];
    let links = vec![NewRelationship {
        id: None,
        relationship_type: "tagged_with".into(),
        from_id: "doc-pipeline-architecture".into(),
        to_id: "tag-ops".into(),
        properties: Map::new(),
    }];
    let plan = graph.import(good, links, fixed_now()).unwrap();
    let summary = plan.summary();
    assert_eq!(
        (summary.objects_created, summary.relationships_created),
        (1, 1)
    );
    assert_eq!(plan.relationships[0].to_id, "tag-ops");
    assert_eq!(graph.object("tag-ops").unwrap().label(), "ops");
}
