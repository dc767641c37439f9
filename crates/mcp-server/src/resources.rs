//! The graph as MCP resources: `kg://schema` (the whole schema with its version),
//! `kg://changelog` (recent changes), `kg://types/{name}` (one type with its relationships),
//! and `kg://objects/{id}` (one object, `data:read`). All are JSON documents.

use crate::errors;
use crate::graphs::WorkspaceGraph;
use crate::tools::output::{ChangeOutput, ObjectOutput, RelationshipOutput};
use rmcp::model::{ErrorData, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;
use switchboard_core::Scope;

pub const SCHEMA_URI: &str = "kg://schema";
pub const CHANGELOG_URI: &str = "kg://changelog";
pub const TYPE_URI_PREFIX: &str = "kg://types/";
pub const OBJECT_URI_PREFIX: &str = "kg://objects/";
const JSON_MIME: &str = "application/json";
const CHANGELOG_RESOURCE_LIMIT: usize = 50;

/// A resource URI we serve, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KgResource {
    Schema,
    Changelog,
    Type(String),
    Object(String),
}

impl KgResource {
    pub fn parse(uri: &str) -> Option<Self> {
        match uri {
            SCHEMA_URI => Some(KgResource::Schema),
            CHANGELOG_URI => Some(KgResource::Changelog),
            _ => {
                if let Some(name) = uri.strip_prefix(TYPE_URI_PREFIX).filter(|n| !n.is_empty()) {
                    Some(KgResource::Type(name.to_owned()))
                } else {
                    uri.strip_prefix(OBJECT_URI_PREFIX)
                        .filter(|id| !id.is_empty())
                        .map(|id| KgResource::Object(id.to_owned()))
                }
            }
        }
    }

    pub fn required_scope(&self) -> Scope {
        match self {
            KgResource::Object(_) => Scope::DataRead,
            _ => Scope::SchemaRead,
        }
    }
}

/// The resources of one workspace: the schema, the changelog and one per object type.
pub fn list(graph: &WorkspaceGraph) -> Vec<Resource> {
    let knowledge = graph.read();
    let mut resources = vec![
        Resource::new(SCHEMA_URI, "schema")
            .with_title("Knowledge-graph schema")
            .with_description(
                "Every object type and relationship type, with the current schema version",
            )
            .with_mime_type(JSON_MIME),
        Resource::new(CHANGELOG_URI, "changelog")
            .with_title("Schema changelog")
            .with_description("The most recent schema changes, newest first")
            .with_mime_type(JSON_MIME),
    ];
    resources.extend(knowledge.schema().object_types.iter().map(|object_type| {
        Resource::new(
            format!("{TYPE_URI_PREFIX}{}", object_type.name),
            object_type.name.clone(),
        )
        .with_title(format!("Object type {}", object_type.name))
        .with_description(object_type.description.clone())
        .with_mime_type(JSON_MIME)
    }));
    resources
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{TYPE_URI_PREFIX}{{type_name}}"), "object-type")
            .with_title("Object type")
            .with_description("One object type with its properties and relationships")
            .with_mime_type(JSON_MIME),
        ResourceTemplate::new(format!("{OBJECT_URI_PREFIX}{{id}}"), "object")
            .with_title("Object")
            .with_description("One object with its properties (needs data:read)")
            .with_mime_type(JSON_MIME),
    ]
}

/// Reads `resource` as a JSON document.
pub fn read(
    graph: &WorkspaceGraph,
    uri: &str,
    resource: &KgResource,
) -> Result<ReadResourceResult, ErrorData> {
    let knowledge = graph.read();
    let schema = knowledge.schema();
    let current = knowledge.history().current();
    let document = match resource {
        KgResource::Schema => json!({
            "version": current.map(|v| v.version.clone()),
            "sequence": current.map_or(0, |v| v.sequence),
            "created_at": current.map(|v| v.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
            "schema": schema,
        }),
        KgResource::Changelog => {
            let (entries, total) = knowledge
                .history()
                .changes_since(None, CHANGELOG_RESOURCE_LIMIT)
                .map_err(|error| errors::from_kg(&error))?;
            let changes: Vec<ChangeOutput> = entries.into_iter().map(ChangeOutput::from).collect();
            json!({ "total": total, "changes": changes })
        }
        KgResource::Type(name) => {
            let details = schema
                .type_details(name)
                .map_err(|error| not_found(uri, &error))?;
            let relationships: Vec<RelationshipOutput> = details
                .outgoing
                .iter()
                .chain(
                    details
                        .incoming
                        .iter()
                        .filter(|r| !details.outgoing.contains(r)),
                )
                .map(|r| RelationshipOutput::from(*r))
                .collect();
            json!({
                "schema_version": current.map(|v| v.version.clone()),
                "type": details.object_type,
                "relationships": relationships,
            })
        }
        KgResource::Object(id) => {
            let object = knowledge
                .require_object(id)
                .map_err(|error| not_found(uri, &error))?;
            json!(ObjectOutput::from(object))
        }
    };
    let text = serde_json::to_string_pretty(&document).expect("resource documents serialize");
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type(JSON_MIME),
    ]))
}

fn not_found(uri: &str, error: &switchboard_kg::KgError) -> ErrorData {
    ErrorData::resource_not_found(
        format!("Resource {uri} not found: {error}"),
        errors::from_kg(error).data,
    )
}

/// The error for a URI that is none of ours, listing what exists.
pub fn unknown_uri(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!(
            "Resource {uri} not found; this server serves {SCHEMA_URI}, {CHANGELOG_URI}, {TYPE_URI_PREFIX}{{type_name}} and {OBJECT_URI_PREFIX}{{id}}"
        ),
        Some(json!({ "uri": uri })),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_parse_to_resources_with_scopes() {
        assert_eq!(KgResource::parse("kg://schema"), Some(KgResource::Schema));
        assert_eq!(
            KgResource::parse("kg://types/Document"),
            Some(KgResource::Type("Document".into()))
        );
        assert_eq!(
            KgResource::parse("kg://objects/doc-1")
                .unwrap()
                .required_scope(),
            Scope::DataRead
        );
        assert_eq!(KgResource::parse("kg://types/"), None);
        assert_eq!(KgResource::parse("test://static-text"), None);
    }
}
