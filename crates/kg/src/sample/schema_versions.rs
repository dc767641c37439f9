//! The four schema versions of the sample dataset, oldest first, each built from the one
//! before so the changelog between them is meaningful.

use crate::schema::{
    ObjectType, PropertyDefinition as Property, PropertyType, RelationshipType, Schema,
};

fn version_1() -> Schema {
    Schema {
        object_types: vec![
            ObjectType::new(
                "Document",
                "A file or page in the knowledge base",
                vec![
                    Property::new("title", PropertyType::String, "Document title").required(),
                    Property::new("content", PropertyType::Text, "Body text"),
                    Property::new(
                        "created_on",
                        PropertyType::Date,
                        "When the document was written",
                    ),
                ],
            ),
            ObjectType::new(
                "Project",
                "A piece of work with a goal",
                vec![
                    Property::new("name", PropertyType::String, "Project name").required(),
                    Property::new(
                        "description",
                        PropertyType::Text,
                        "What the project is about",
                    ),
                ],
            ),
            ObjectType::new(
                "Tag",
                "A topic label",
                vec![Property::new("name", PropertyType::String, "Tag text").required()],
            ),
            ObjectType::new(
                "Task",
                "A to-do item (legacy)",
                vec![
                    Property::new("title", PropertyType::String, "What to do").required(),
                    Property::new("done", PropertyType::Boolean, "Whether it is finished"),
                ],
            ),
        ],
        relationship_types: vec![
            RelationshipType::new(
                "belongs_to",
                "The document is part of the project",
                &["Document"],
                &["Project"],
            ),
            RelationshipType::new(
                "tagged_with",
                "Labelled with a topic",
                &["Document", "Project"],
                &["Tag"],
            ),
            RelationshipType::new(
                "part_of",
                "The task belongs to the project",
                &["Task"],
                &["Project"],
            ),
        ],
    }
}

fn version_2() -> Schema {
    let mut schema = version_1();
    schema.object_types.push(ObjectType::new(
        "Team",
        "A group of people working together",
        vec![
            Property::new("name", PropertyType::String, "Team name").required(),
            Property::new("description", PropertyType::Text, "What the team does"),
        ],
    ));
    schema.object_types.push(ObjectType::new(
        "Person",
        "Someone in the organisation",
        vec![
            Property::new("name", PropertyType::String, "Full name").required(),
            Property::new("email", PropertyType::String, "Work email"),
            Property::enumeration(
                "role",
                &["engineer", "designer", "manager", "researcher"],
                "Job family",
            ),
        ],
    ));
    schema.relationship_types.extend([
        RelationshipType::new(
            "member_of",
            "The person is on the team",
            &["Person"],
            &["Team"],
        )
        .with_properties(vec![Property::new(
            "since",
            PropertyType::Date,
            "Joined on",
        )]),
        RelationshipType::new(
            "authored_by",
            "Who wrote the document",
            &["Document"],
            &["Person"],
        ),
        RelationshipType::new(
            "owned_by",
            "The team accountable for the project",
            &["Project"],
            &["Team"],
        ),
        RelationshipType::new(
            "leads",
            "The person leads the project",
            &["Person"],
            &["Project"],
        ),
    ]);
    schema
}

fn version_3() -> Schema {
    let mut schema = version_2();
    for object_type in &mut schema.object_types {
        match object_type.name.as_str() {
            "Document" => object_type.properties.push(Property::enumeration(
                "status",
                &["draft", "in_review", "published", "archived"],
                "Where the document is in its lifecycle",
            )),
            "Project" => {
                object_type.properties.push(Property::enumeration(
                    "status",
                    &["planned", "active", "done"],
                    "Project phase",
                ));
                if let Some(description) = object_type
                    .properties
                    .iter_mut()
                    .find(|p| p.name == "description")
                {
                    description.description = "Goal, scope and non-goals of the project".into();
                }
            }
            _ => {}
        }
    }
    schema
}

fn version_4() -> Schema {
    let mut schema = version_3();
    schema.object_types.retain(|t| t.name != "Task");
    schema.relationship_types.retain(|r| r.name != "part_of");
    schema.relationship_types.push(RelationshipType::new(
        "references",
        "The document cites another document",
        &["Document"],
        &["Document"],
    ));
    if let Some(project) = schema.object_types.iter_mut().find(|t| t.name == "Project") {
        project.properties.push(Property::new(
            "due_date",
            PropertyType::Date,
            "Target completion date",
        ));
    }
    schema
}

/// The schema versions of the sample with their age in days and message, oldest first.
pub(super) fn schema_steps() -> [(i64, &'static str, Schema); 4] {
    [
        (
            60,
            "Initial schema: documents, projects, tags and tasks",
            version_1(),
        ),
        (35, "Add teams and people", version_2()),
        (14, "Track document and project status", version_3()),
        (
            5,
            "Retire tasks; documents can reference documents; project due dates",
            version_4(),
        ),
    ]
}
