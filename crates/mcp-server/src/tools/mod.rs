//! The knowledge-graph tools: their names, scopes and definitions (input and output schemas
//! generated from the argument and output types), and dispatch to the group that runs them.
//!
//! Scope: `schema:read` for schema questions, `data:read` for graph queries, `data:write` for
//! creating objects and relationships. Results carry `structuredContent` and the same JSON as
//! text.

pub mod arguments;
mod data_tools;
pub mod output;
pub(crate) mod schema_tools;
mod write_tools;

use crate::errors;
use crate::graphs::WorkspaceGraph;
use arguments::*;
use output::*;
use rmcp::handler::server::common::{schema_for_input, schema_for_output};
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use switchboard_core::{Scope, ScopeSet};

/// One of our tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KgTool {
    SchemaVersion,
    SchemaChangelog,
    TypeInfo,
    RelationshipInfo,
    SearchTypes,
    FindObjects,
    SearchObjects,
    GetObject,
    Traverse,
    FindPath,
    CountObjects,
    CreateObject,
    CreateRelationship,
}

impl KgTool {
    pub const ALL: [KgTool; 13] = [
        KgTool::SchemaVersion,
        KgTool::SchemaChangelog,
        KgTool::TypeInfo,
        KgTool::RelationshipInfo,
        KgTool::SearchTypes,
        KgTool::FindObjects,
        KgTool::SearchObjects,
        KgTool::GetObject,
        KgTool::Traverse,
        KgTool::FindPath,
        KgTool::CountObjects,
        KgTool::CreateObject,
        KgTool::CreateRelationship,
    ];

    pub fn name(self) -> &'static str {
        match self {
            KgTool::SchemaVersion => "schema_version",
            KgTool::SchemaChangelog => "schema_changelog",
            KgTool::TypeInfo => "type_info",
            KgTool::RelationshipInfo => "relationship_info",
            KgTool::SearchTypes => "search_types",
            KgTool::FindObjects => "find_objects",
            KgTool::SearchObjects => "search_objects",
            KgTool::GetObject => "get_object",
            KgTool::Traverse => "traverse",
            KgTool::FindPath => "find_path",
            KgTool::CountObjects => "count_objects",
            KgTool::CreateObject => "create_object",
            KgTool::CreateRelationship => "create_relationship",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }

    pub fn required_scope(self) -> Scope {
        match self {
            KgTool::SchemaVersion
            | KgTool::SchemaChangelog
            | KgTool::TypeInfo
            | KgTool::RelationshipInfo
            | KgTool::SearchTypes => Scope::SchemaRead,
            KgTool::FindObjects
            | KgTool::SearchObjects
            | KgTool::GetObject
            | KgTool::Traverse
            | KgTool::FindPath
            | KgTool::CountObjects => Scope::DataRead,
            KgTool::CreateObject | KgTool::CreateRelationship => Scope::DataWrite,
        }
    }

    fn description(self) -> &'static str {
        match self {
            KgTool::SchemaVersion => {
                "Current knowledge-graph schema version: its hash, when and why (the change message) it was created, and how many object types, relationship types and properties it has."
            }
            KgTool::SchemaChangelog => {
                "What changed in the schema (types, properties, relationships added, modified or removed), newest first, optionally since a version or an ISO date."
            }
            KgTool::TypeInfo => {
                "Object types of the schema with their properties and relationships; give type_name for one type in detail."
            }
            KgTool::RelationshipInfo => {
                "Relationship types and which object types they connect; filter by from_type and/or to_type."
            }
            KgTool::SearchTypes => {
                "Search type, relationship and property names and descriptions for words."
            }
            KgTool::FindObjects => {
                "List objects of one type, optionally filtered by property values, a page at a time."
            }
            KgTool::SearchObjects => {
                "Find objects by name or title across all types (or one type), best match first: which object is 'the product roadmap' or 'Ana Silva'? Gives ids for get_object, traverse and find_path."
            }
            KgTool::GetObject => {
                "One object by id with its properties and the relationships going out of and into it."
            }
            KgTool::Traverse => {
                "Objects reachable from a start object by following relationships (optionally of one type) in a direction, up to a depth, optionally only of a target type."
            }
            KgTool::FindPath => {
                "Shortest chain of relationships (either direction) connecting two objects: how is X related to Y?"
            }
            KgTool::CountObjects => {
                "Count objects of a type, optionally grouped by a property's values."
            }
            KgTool::CreateObject => {
                "Create an object of a type with property values checked against the schema."
            }
            KgTool::CreateRelationship => {
                "Create a relationship of a type between two existing objects, checked against the schema."
            }
        }
    }

    fn definition(self) -> Tool {
        let (input, output) = match self {
            KgTool::SchemaVersion => schemas::<SchemaVersionArguments, SchemaVersionOutput>(),
            KgTool::SchemaChangelog => schemas::<SchemaChangelogArguments, ChangelogOutput>(),
            KgTool::TypeInfo => schemas::<TypeInfoArguments, TypeInfoOutput>(),
            KgTool::RelationshipInfo => {
                schemas::<RelationshipInfoArguments, RelationshipInfoOutput>()
            }
            KgTool::SearchTypes => schemas::<SearchTypesArguments, SearchTypesOutput>(),
            KgTool::FindObjects => schemas::<FindObjectsArguments, FindObjectsOutput>(),
            KgTool::SearchObjects => schemas::<SearchObjectsArguments, SearchObjectsOutput>(),
            KgTool::GetObject => schemas::<GetObjectArguments, GetObjectOutput>(),
            KgTool::Traverse => schemas::<TraverseArguments, TraverseOutput>(),
            KgTool::FindPath => schemas::<FindPathArguments, FindPathOutput>(),
            KgTool::CountObjects => schemas::<CountObjectsArguments, CountObjectsOutput>(),
            KgTool::CreateObject => schemas::<CreateObjectArguments, CreateObjectOutput>(),
            KgTool::CreateRelationship => {
                schemas::<CreateRelationshipArguments, CreateRelationshipOutput>()
            }
        };
        let writes = self.required_scope() == Scope::DataWrite;
        let annotations = ToolAnnotations::new()
            .read_only(!writes)
            .destructive(false)
            .idempotent(!writes)
            .open_world(false);
        Tool::new(self.name(), self.description(), input)
            .with_raw_output_schema(output)
            .with_annotations(annotations)
    }
}

/// Drops schemars' Rust-specific numeric formats (`uint`, `uint64`, `int64`…): they are not
/// JSON Schema formats, and strict validators warn about them.
fn without_rust_formats(schema: &Arc<JsonObject>) -> Arc<JsonObject> {
    fn clean(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                let rust_format = map
                    .get("format")
                    .and_then(|format| format.as_str())
                    .is_some_and(|format| {
                        format.starts_with("uint")
                            || format.starts_with("int")
                            || matches!(format, "float" | "double")
                    });
                if rust_format {
                    map.remove("format");
                }
                map.values_mut().for_each(clean);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(clean),
            _ => {}
        }
    }
    let mut value = serde_json::Value::Object(schema.as_ref().clone());
    clean(&mut value);
    match value {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => unreachable!("an object stays an object"),
    }
}

fn schemas<Input: JsonSchema + 'static, Output: JsonSchema + 'static>()
-> (Arc<JsonObject>, Arc<JsonObject>) {
    let input = schema_for_input::<Input>().expect("tool arguments are JSON objects");
    (
        without_rust_formats(&input),
        without_rust_formats(&schema_for_output::<Output>()),
    )
}

/// The tool definitions, built once.
#[derive(Clone, Debug)]
pub struct ToolCatalog {
    tools: Arc<Vec<Tool>>,
    /// The scope each tool (same index) needs.
    scopes: Arc<Vec<Scope>>,
}

impl Default for ToolCatalog {
    fn default() -> Self {
        Self {
            tools: Arc::new(KgTool::ALL.into_iter().map(KgTool::definition).collect()),
            scopes: Arc::new(
                KgTool::ALL
                    .into_iter()
                    .map(KgTool::required_scope)
                    .collect(),
            ),
        }
    }
}

impl ToolCatalog {
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tools `scopes` can call, in catalog order: `tools/list` never offers a tool whose
    /// call would be refused for a missing scope.
    pub fn callable_with(&self, scopes: &ScopeSet) -> Vec<Tool> {
        self.tools
            .iter()
            .zip(self.scopes.iter())
            .filter(|(_, scope)| scopes.allows(**scope))
            .map(|(tool, _)| tool.clone())
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|tool| tool.name == name)
    }
}

/// Runs `tool` on `graph` (scope and rate limit already checked).
pub async fn run(
    tool: KgTool,
    graph: &WorkspaceGraph,
    arguments: Option<JsonObject>,
) -> Result<CallToolResult, ErrorData> {
    match tool {
        KgTool::SchemaVersion => {
            parse::<SchemaVersionArguments>(tool, arguments)?;
            Ok(schema_tools::schema_version(graph))
        }
        KgTool::SchemaChangelog => schema_tools::schema_changelog(graph, parse(tool, arguments)?),
        KgTool::TypeInfo => schema_tools::type_info(graph, parse(tool, arguments)?),
        KgTool::RelationshipInfo => schema_tools::relationship_info(graph, parse(tool, arguments)?),
        KgTool::SearchTypes => schema_tools::search_types(graph, parse(tool, arguments)?),
        KgTool::FindObjects => data_tools::find_objects(graph, parse(tool, arguments)?),
        KgTool::SearchObjects => data_tools::search_objects(graph, parse(tool, arguments)?),
        KgTool::GetObject => data_tools::get_object(graph, parse(tool, arguments)?),
        KgTool::Traverse => data_tools::traverse(graph, parse(tool, arguments)?),
        KgTool::FindPath => data_tools::find_path(graph, parse(tool, arguments)?),
        KgTool::CountObjects => data_tools::count_objects(graph, parse(tool, arguments)?),
        KgTool::CreateObject => write_tools::create_object(graph, parse(tool, arguments)?).await,
        KgTool::CreateRelationship => {
            write_tools::create_relationship(graph, parse(tool, arguments)?).await
        }
    }
}

/// The answer for a tool name we do not have: a tool error the caller can read, naming ours.
pub fn unknown_tool(name: &str) -> CallToolResult {
    let known: Vec<&str> = KgTool::ALL.into_iter().map(KgTool::name).collect();
    CallToolResult::error(vec![ContentBlock::text(format!(
        "Unknown tool '{name}'. This server's tools: {}",
        known.join(", ")
    ))])
}

fn parse<T: DeserializeOwned>(tool: KgTool, arguments: Option<JsonObject>) -> Result<T, ErrorData> {
    let value = serde_json::Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|error| errors::invalid_arguments(tool.name(), error))
}

/// A successful result: `structuredContent` plus the same JSON as text.
fn structured<T: Serialize>(output: &T) -> CallToolResult {
    let value = serde_json::to_value(output).expect("tool outputs serialize");
    CallToolResult::structured(value)
}
