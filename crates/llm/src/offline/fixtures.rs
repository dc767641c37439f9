//! Test fixtures: the knowledge-graph tools as the chat offers them, result shapes as our kg
//! server returns them, and the agent loop the chat engine runs around the planner.

use chrono::NaiveDate;
use serde_json::{Value, json};
use switchboard_core::{ChatMessage, ToolCallRequest, ToolSpec};

use super::planner::{PlannerDecision, decide};
use crate::config::OfflinePlannerConfig;
use crate::provider::{LlmRequest, ToolChoice};

pub(crate) fn kg_tools() -> Vec<ToolSpec> {
    serde_json::from_str(include_str!("../../tests/fixtures/kg_tools.json"))
        .expect("kg tools fixture")
}

/// A result fixture by name (see `tests/fixtures/kg_results.json`).
pub(crate) fn kg_result(name: &str) -> serde_json::Value {
    let all: serde_json::Value =
        serde_json::from_str(include_str!("../../tests/fixtures/kg_results.json"))
            .expect("kg results fixture");
    all.get(name)
        .cloned()
        .unwrap_or_else(|| panic!("no fixture {name}"))
}

/// A stand-in for the kg server: the fixture result for a call, as the real data would give.
pub(crate) fn fake_kg(tool: &str, arguments: &serde_json::Value) -> String {
    let argument = |key: &str| arguments.get(key).and_then(serde_json::Value::as_str);
    let name = match tool {
        "kg__schema_version" => "schema_version",
        "kg__schema_changelog" => "schema_changelog",
        "kg__type_info" if argument("type_name") == Some("Document") => "type_info_document",
        "kg__type_info" => "type_info_all",
        "kg__relationship_info"
            if argument("from_type") == Some("Document")
                && argument("to_type") == Some("Project") =>
        {
            "relationship_info_document_project"
        }
        "kg__relationship_info" => "relationship_info_empty",
        "kg__find_objects" if argument("type") == Some("Document") => "find_documents",
        "kg__traverse" if argument("start_id") == Some("doc-product-roadmap") => {
            "traverse_roadmap_projects"
        }
        other => {
            return format!(
                "{{\"error\":{{\"message\":\"fixture has no answer for {other} {arguments}\"}}}}"
            );
        }
    };
    kg_result(name).to_string()
}

pub(crate) fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

/// What a conversation turn produced: the calls made (name, arguments) and the final answer.
pub(crate) struct Transcript {
    pub calls: Vec<(String, Value)>,
    pub answer: String,
}

/// Runs the agent loop the chat engine will run: plan, execute calls against `execute`,
/// append results, plan again — up to 8 steps.
pub(crate) fn converse(
    history: Vec<ChatMessage>,
    question: &str,
    tools: &[ToolSpec],
    tool_choice: ToolChoice,
    execute: impl Fn(&str, &Value) -> String,
) -> Transcript {
    let mut messages = history;
    messages.push(ChatMessage::user(question));
    let mut calls = Vec::new();
    for step in 0..8 {
        let request = LlmRequest::new("", messages.clone())
            .with_tools(tools.to_vec())
            .with_tool_choice(if step == 0 {
                tool_choice.clone()
            } else {
                ToolChoice::Auto
            });
        match decide(&request, &OfflinePlannerConfig::default(), today()) {
            PlannerDecision::Answer(answer) => return Transcript { calls, answer },
            PlannerDecision::CallTools(planned) => {
                let requests: Vec<ToolCallRequest> = planned
                    .iter()
                    .enumerate()
                    .map(|(index, call)| ToolCallRequest {
                        id: format!("call_{step}_{index}"),
                        name: call.tool_name.clone(),
                        arguments: Value::Object(call.arguments.clone()).to_string(),
                    })
                    .collect();
                messages.push(ChatMessage::assistant("", requests.clone()));
                for request in requests {
                    let arguments: Value = serde_json::from_str(&request.arguments).unwrap();
                    let result = execute(&request.name, &arguments);
                    calls.push((request.name.clone(), arguments));
                    messages.push(ChatMessage::tool_result(request.id, result));
                }
            }
        }
    }
    panic!("no answer after 8 steps; calls: {calls:?}");
}

const TYPES: [&str; 5] = ["Document", "Person", "Project", "Tag", "Team"];

fn object(id: &str, type_name: &str, label: &str) -> Value {
    let name_key = if type_name == "Document" {
        "title"
    } else {
        "name"
    };
    json!({
        "id": id, "type": type_name, "label": label,
        "properties": {name_key: label},
        "created_at": "2026-10-28T09:00:00Z", "updated_at": "2026-10-28T09:00:00Z"
    })
}

fn roadmap() -> Value {
    object("doc-product-roadmap", "Document", "Product Roadmap")
}
fn platform() -> Value {
    object("team-platform", "Team", "Platform")
}
fn ana() -> Value {
    object("person-ana-silva", "Person", "Ana Silva")
}
fn pipeline() -> Value {
    object("project-data-pipeline", "Project", "Data Pipeline")
}

fn relationship(id: &str, kind: &str, from: &str, to: &str) -> Value {
    json!({"id": id, "type": kind, "from_id": from, "to_id": to, "properties": {}, "created_at": "2026-10-28T09:00:00Z"})
}

fn link(kind: &str, other: &Value) -> Value {
    json!({
        "relationship_id": format!("rel-{kind}"), "type": kind,
        "other_id": other["id"], "other_type": other["type"], "other_label": other["label"],
        "properties": {}
    })
}

/// The sample graph as far as the object questions reach it (the Product Roadmap, the
/// Platform team, Ana Silva, Data Pipeline); anything else as `fake_kg` answers.
pub(crate) fn fake_sample_kg(tool: &str, arguments: &Value) -> String {
    let argument = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("");
    let depth = arguments.get("depth").and_then(Value::as_u64).unwrap_or(1);
    let answer = match tool {
        "kg__search_objects" => {
            let matches: Vec<Value> = match argument("query").to_lowercase().as_str() {
                "product roadmap" => vec![roadmap()],
                "platform team" => vec![platform()],
                "ana silva" => vec![ana()],
                "data pipeline" => vec![pipeline()],
                _ => Vec::new(),
            };
            json!({
                "query": argument("query"), "type": null,
                "total_matching": matches.len(),
                "matches": matches.into_iter().map(|object| json!({"object": object, "matched": "exact"})).collect::<Vec<_>>(),
                "object_types": TYPES,
            })
        }
        "kg__get_object" if argument("id") == "doc-product-roadmap" => json!({
            "object": {
                "id": "doc-product-roadmap", "type": "Document", "label": "Product Roadmap",
                "properties": {"title": "Product Roadmap", "status": "published", "created_on": "2026-10-13"},
                "created_at": "2026-10-28T09:00:00Z", "updated_at": "2026-10-28T09:00:00Z"
            },
            "outgoing": [
                link("belongs_to", &object("project-q4-planning", "Project", "Q4 Planning")),
                link("authored_by", &ana()),
                link("tagged_with", &object("tag-strategy", "Tag", "strategy")),
            ],
            "incoming": [link("references", &object("doc-q4-okrs", "Document", "Q4 OKRs"))],
        }),
        "kg__traverse" => {
            let results: Vec<Value> = match (argument("start_id"), argument("target_type"), depth) {
                ("doc-product-roadmap", "Team", 2) => vec![json!({
                    "object": platform(), "depth": 2,
                    "via": relationship("rel-7", "owned_by", "project-q4-planning", "team-platform"),
                })],
                ("project-data-pipeline", "Person", 1) => vec![json!({
                    "object": object("person-ben-okafor", "Person", "Ben Okafor"), "depth": 1,
                    "via": relationship("rel-9", "leads", "person-ben-okafor", "project-data-pipeline"),
                })],
                ("doc-product-roadmap", "Team", 1) | ("doc-product-roadmap", "Tag", _) => {
                    Vec::new()
                }
                _ => return fake_kg(tool, arguments),
            };
            let start = if argument("start_id") == "doc-product-roadmap" {
                roadmap()
            } else {
                pipeline()
            };
            json!({
                "start": start, "direction": argument("direction"), "relationship": null,
                "target_type": argument("target_type"), "depth": depth,
                "results": results, "truncated": false,
            })
        }
        "kg__find_path"
            if argument("from_id") == "person-ana-silva"
                && argument("to_id") == "team-platform" =>
        {
            json!({
                "from_id": "person-ana-silva", "to_id": "team-platform", "found": true, "length": 1,
                "steps": [{
                    "relationship": relationship("rel-1", "member_of", "person-ana-silva", "team-platform"),
                    "forward": true, "object": platform(),
                }],
                "summary": "Ana Silva -member_of-> Platform",
            })
        }
        _ => return fake_kg(tool, arguments),
    };
    answer.to_string()
}
