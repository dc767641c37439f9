//! The sample dataset loaded into the default workspace on first start: a small company graph
//! (Documents, Projects, Teams, People, Tags) whose schema went through four versions, so the
//! embedded default has real history and data to answer about.
//!
//! Built only through the public mutation API, so it is validated like any user data.

use crate::data::{NewObject, NewRelationship};
use crate::graph::KnowledgeGraph;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value, json};

mod records;
mod schema_versions;

use records::{
    DOCUMENTS, LEADS, MEMBERSHIPS, PEOPLE, PROJECTS, REFERENCES, SampleDocument, TAGS, TEAMS,
};
use schema_versions::schema_steps;

fn props(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

/// Builds the sample graph with its history dated relative to `now`.
pub fn sample_graph(now: DateTime<Utc>) -> KnowledgeGraph {
    let mut graph = KnowledgeGraph::new();
    for (age_days, message, schema) in schema_steps() {
        graph
            .apply_schema(
                schema,
                now - Duration::days(age_days),
                Some(message.to_owned()),
            )
            .expect("sample schema versions are valid");
    }
    let created = now - Duration::days(4);
    let mut add = |object_type: &str, id: &str, properties: Value| {
        graph
            .create_object(
                NewObject {
                    id: Some(id.to_owned()),
                    object_type: object_type.to_owned(),
                    properties: props(properties),
                },
                created,
            )
            .expect("sample objects are valid");
    };
    for (id, name, role) in PEOPLE {
        let email = format!("{}@example.com", name.to_lowercase().replace(' ', "."));
        add(
            "Person",
            id,
            json!({"name": name, "role": role, "email": email}),
        );
    }
    for (id, name, description) in TEAMS {
        add(
            "Team",
            id,
            json!({"name": name, "description": description}),
        );
    }
    for (index, (id, name, status, _)) in PROJECTS.iter().enumerate() {
        let due = (now + Duration::days(30 * (index as i64 + 1)))
            .format("%Y-%m-%d")
            .to_string();
        add(
            "Project",
            id,
            json!({"name": name, "status": status, "due_date": due, "description": format!("{name}: goals, scope and milestones")}),
        );
    }
    for tag in TAGS {
        add("Tag", &format!("tag-{tag}"), json!({"name": tag}));
    }
    for (
        index,
        SampleDocument {
            id, title, status, ..
        },
    ) in DOCUMENTS.iter().enumerate()
    {
        let written = (now - Duration::days(40 - index as i64 * 3))
            .format("%Y-%m-%d")
            .to_string();
        add(
            "Document",
            id,
            json!({"title": title, "status": status, "created_on": written, "content": format!("{title}. Summary and details for the team.")}),
        );
    }
    let mut link = |relationship_type: &str, from_id: &str, to_id: &str, properties: Value| {
        graph
            .create_relationship(
                NewRelationship {
                    id: None,
                    relationship_type: relationship_type.to_owned(),
                    from_id: from_id.to_owned(),
                    to_id: to_id.to_owned(),
                    properties: props(properties),
                },
                created,
            )
            .expect("sample relationships are valid");
    };
    for (person, team, since) in MEMBERSHIPS {
        link("member_of", person, team, json!({"since": since}));
    }
    for (id, _, _, team) in PROJECTS {
        link("owned_by", id, team, json!({}));
    }
    for (person, project) in LEADS {
        link("leads", person, project, json!({}));
    }
    for document in &DOCUMENTS {
        link("belongs_to", document.id, document.project, json!({}));
        link("authored_by", document.id, document.author, json!({}));
        for tag in document.tags {
            link("tagged_with", document.id, &format!("tag-{tag}"), json!({}));
        }
    }
    for (project, tag) in [
        ("project-q4-planning", "planning"),
        ("project-search-revamp", "research"),
        ("project-product-launch", "customer"),
    ] {
        link("tagged_with", project, &format!("tag-{tag}"), json!({}));
    }
    for (from, to) in REFERENCES {
        link("references", from, to, json!({}));
    }
    graph
}
