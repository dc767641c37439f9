//! `schema_version`, `schema_changelog`, `type_info`, `relationship_info`, `search_types`:
//! questions about the schema, answered from the workspace's answer cache when possible.

use super::arguments::*;
use super::output::*;
use super::structured;
use crate::answer_cache::AnswerKey;
use crate::errors;
use crate::graphs::WorkspaceGraph;
use rmcp::model::{CallToolResult, ErrorData};
use std::sync::Arc;
use switchboard_kg::query::SearchHitKind;
use switchboard_kg::{ChangelogSince, KnowledgeGraph, Schema};

pub const DEFAULT_CHANGELOG_LIMIT: u32 = 10;
pub const MAX_CHANGELOG_LIMIT: u32 = 100;

pub fn schema_version(graph: &WorkspaceGraph) -> CallToolResult {
    if let Some(answer) = graph.answers().schema_version() {
        return Arc::unwrap_or_clone(answer);
    }
    let (revision, answer) = {
        let knowledge = graph.read();
        let history = knowledge.history();
        let output = SchemaVersionOutput::new(history.current());
        (graph.answers().revision(), Arc::new(structured(&output)))
    };
    graph
        .answers()
        .store_schema_version(revision, answer.clone());
    Arc::unwrap_or_clone(answer)
}

/// Serves `key` from the cache, or builds it with `build` under the read lock and caches it.
fn cached(
    graph: &WorkspaceGraph,
    key: AnswerKey,
    build: impl FnOnce(&KnowledgeGraph) -> Result<CallToolResult, ErrorData>,
) -> Result<CallToolResult, ErrorData> {
    if let Some(answer) = graph.answers().get(&key) {
        return Ok(Arc::unwrap_or_clone(answer));
    }
    let (revision, answer) = {
        let knowledge = graph.read();
        (graph.answers().revision(), Arc::new(build(&knowledge)?))
    };
    graph.answers().store(key, revision, answer.clone());
    Ok(Arc::unwrap_or_clone(answer))
}

pub fn schema_changelog(
    graph: &WorkspaceGraph,
    arguments: SchemaChangelogArguments,
) -> Result<CallToolResult, ErrorData> {
    let limit = arguments.limit.unwrap_or(DEFAULT_CHANGELOG_LIMIT);
    if limit == 0 || limit > MAX_CHANGELOG_LIMIT {
        return Err(errors::invalid_arguments(
            "schema_changelog",
            format!("limit must be between 1 and {MAX_CHANGELOG_LIMIT}, got {limit}"),
        ));
    }
    let since = arguments
        .since
        .as_deref()
        .map(ChangelogSince::parse)
        .transpose()
        .map_err(|error| errors::from_kg(&error))?;
    let key = AnswerKey::Changelog(arguments.since.clone(), limit as usize);
    cached(graph, key, |knowledge| {
        let history = knowledge.history();
        let (entries, total_matching) = history
            .changes_since(since.as_ref(), limit as usize)
            .map_err(|error| errors::from_kg(&error))?;
        Ok(structured(&ChangelogOutput {
            since: arguments.since.clone(),
            current_version: history.current().map(|v| v.version.clone()),
            total_matching,
            changes: entries.into_iter().map(ChangeOutput::from).collect(),
        }))
    })
}

pub fn type_info(
    graph: &WorkspaceGraph,
    arguments: TypeInfoArguments,
) -> Result<CallToolResult, ErrorData> {
    let key = AnswerKey::TypeInfo(arguments.type_name.clone());
    cached(graph, key, |knowledge| {
        let schema = knowledge.schema();
        let names: Vec<&str> = match &arguments.type_name {
            Some(name) => vec![
                schema
                    .require_object_type(name)
                    .map_err(|e| errors::from_kg(&e))?
                    .name
                    .as_str(),
            ],
            None => schema
                .object_types
                .iter()
                .map(|t| t.name.as_str())
                .collect(),
        };
        let types = names.iter().map(|name| type_output(schema, name)).collect();
        let relationships = schema
            .relationship_types
            .iter()
            .filter(|r| names.iter().any(|name| r.involves(name)))
            .map(RelationshipOutput::from)
            .collect();
        Ok(structured(&TypeInfoOutput {
            schema_version: knowledge.history().current().map(|v| v.version.clone()),
            types,
            relationships,
        }))
    })
}

pub(crate) fn type_output(schema: &Schema, name: &str) -> TypeOutput {
    let details = schema
        .type_details(name)
        .expect("name comes from the schema");
    TypeOutput {
        name: details.object_type.name.clone(),
        description: details.object_type.description.clone(),
        properties: details
            .object_type
            .properties
            .iter()
            .map(PropertyOutput::from)
            .collect(),
        outgoing_relationships: details.outgoing.iter().map(|r| r.name.clone()).collect(),
        incoming_relationships: details.incoming.iter().map(|r| r.name.clone()).collect(),
    }
}

pub fn relationship_info(
    graph: &WorkspaceGraph,
    arguments: RelationshipInfoArguments,
) -> Result<CallToolResult, ErrorData> {
    let key = AnswerKey::RelationshipInfo(arguments.from_type.clone(), arguments.to_type.clone());
    cached(graph, key, |knowledge| {
        let relationships = knowledge
            .schema()
            .relationships_between(arguments.from_type.as_deref(), arguments.to_type.as_deref())
            .map_err(|error| errors::from_kg(&error))?;
        Ok(structured(&RelationshipInfoOutput {
            from_type: arguments.from_type.clone(),
            to_type: arguments.to_type.clone(),
            relationships: relationships
                .into_iter()
                .map(RelationshipOutput::from)
                .collect(),
        }))
    })
}

pub fn search_types(
    graph: &WorkspaceGraph,
    arguments: SearchTypesArguments,
) -> Result<CallToolResult, ErrorData> {
    let key = AnswerKey::SearchTypes(arguments.query.clone());
    cached(graph, key, |knowledge| {
        let hits = knowledge
            .schema()
            .search(&arguments.query)
            .map_err(|error| errors::from_kg(&error))?;
        let matches = hits
            .into_iter()
            .map(|hit| SearchMatchOutput {
                kind: match hit.kind {
                    SearchHitKind::ObjectType => "object_type",
                    SearchHitKind::RelationshipType => "relationship_type",
                    SearchHitKind::Property => "property",
                }
                .to_owned(),
                type_name: hit.type_name,
                property_name: hit.property_name,
                matched: hit.matched,
                score: hit.score,
            })
            .collect();
        Ok(structured(&SearchTypesOutput {
            query: arguments.query.clone(),
            matches,
        }))
    })
}
