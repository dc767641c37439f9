//! Test fixtures: the knowledge-graph tools as the chat offers them, and result shapes as our
//! kg server returns them.

use switchboard_core::ToolSpec;

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
