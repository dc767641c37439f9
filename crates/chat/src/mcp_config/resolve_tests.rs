//! The merge rules of `resolve_mcp_config`, one rule per test.

use super::*;
use crate::mcp_config::model::{BudMcpConfig, McpConfigOverrides};
use crate::test_fixtures::server_record;
use serde_json::json;

fn server(id: &str, name: &str, is_active: bool) -> ServerRecord {
    server_record(id, name, &format!("http://127.0.0.1:9/{name}"), is_active)
}

fn workspace() -> Vec<ServerRecord> {
    vec![
        server("id-kg", "kg", true),
        server("id-files", "files", true),
        server("id-web", "web", true),
        server("id-old", "old", false),
    ]
}

fn bud(value: serde_json::Value) -> BudMcpConfig {
    BudMcpConfig::parse(&value).unwrap()
}

fn overrides(value: serde_json::Value) -> McpConfigOverrides {
    McpConfigOverrides::parse(&value).unwrap()
}

fn names(resolved: &ResolvedMcpConfig) -> Vec<&str> {
    resolved
        .servers
        .iter()
        .map(|server| server.name.as_str())
        .collect()
}

#[test]
fn without_a_bud_every_active_server_is_used() {
    let resolved = resolve_mcp_config(
        &BudMcpConfig::default(),
        &McpConfigOverrides::default(),
        &workspace(),
    )
    .unwrap();
    assert_eq!(names(&resolved), ["files", "kg", "web"]);
    assert_eq!(resolved.inactive_servers, ["old"]);
    assert_eq!(resolved.tool_choice, ToolChoice::Auto);
    assert!(resolved.allows_tool(&ServerId::from("id-kg"), "anything"));
}

#[test]
fn servers_are_the_union_of_bud_servers_and_additional_servers() {
    let resolved = resolve_mcp_config(
        &bud(json!({"servers": ["kg"]})),
        &overrides(json!({"additional_servers": ["id-files", "kg"]})),
        &workspace(),
    )
    .unwrap();
    assert_eq!(names(&resolved), ["files", "kg"]);
    let none = resolve_mcp_config(
        &bud(json!({"servers": []})),
        &McpConfigOverrides::default(),
        &workspace(),
    )
    .unwrap();
    assert!(none.servers.is_empty());
}

#[test]
fn inactive_servers_never_take_part() {
    let resolved = resolve_mcp_config(
        &bud(json!({"servers": ["old", "kg"]})),
        &McpConfigOverrides::default(),
        &workspace(),
    )
    .unwrap();
    assert_eq!(names(&resolved), ["kg"]);
    assert_eq!(resolved.inactive_servers, ["old"]);
}

#[test]
fn disabled_tools_are_the_union_and_available_tools_restrict() {
    let resolved = resolve_mcp_config(
        &bud(json!({
            "disabled_tools": ["kg.find_objects"],
            "available_tools": ["kg.schema_version", "kg.find_objects", "files.read_file"]
        })),
        &overrides(json!({"disabled_tools": ["id-files.read_file"]})),
        &workspace(),
    )
    .unwrap();
    let kg = ServerId::from("id-kg");
    let files = ServerId::from("id-files");
    assert!(resolved.allows_tool(&kg, "schema_version"));
    assert!(
        !resolved.allows_tool(&kg, "find_objects"),
        "disabled by the bud"
    );
    assert!(
        !resolved.allows_tool(&files, "read_file"),
        "disabled by the override"
    );
    assert!(
        !resolved.allows_tool(&kg, "traverse"),
        "not among available_tools"
    );
}

#[test]
fn the_overrides_tool_choice_wins() {
    let both = resolve_mcp_config(
        &bud(json!({"tool_choice": "required"})),
        &overrides(json!({"tool_choice": "none"})),
        &workspace(),
    )
    .unwrap();
    assert_eq!(both.tool_choice, ToolChoice::None);
    let bud_only = resolve_mcp_config(
        &bud(json!({"tool_choice": {"function": "kg.schema_version"}})),
        &McpConfigOverrides::default(),
        &workspace(),
    )
    .unwrap();
    assert_eq!(
        bud_only.tool_choice,
        ToolChoice::Function {
            name: "kg.schema_version".into()
        }
    );
}

#[test]
fn unknown_server_ids_are_refused_naming_the_field() {
    let error = resolve_mcp_config(
        &bud(json!({"servers": ["kg", "0190f5a2-0000-7000-8000-000000000000"]})),
        &McpConfigOverrides::default(),
        &workspace(),
    )
    .unwrap_err();
    assert_eq!(error.field, "mcp_config.servers[1]");
    assert!(
        error.message.contains("is not a server of this workspace"),
        "{error}"
    );
    let error = resolve_mcp_config(
        &BudMcpConfig::default(),
        &overrides(json!({"disabled_tools": ["nope.tool"]})),
        &workspace(),
    )
    .unwrap_err();
    assert_eq!(error.field, "mcp_config_overrides.disabled_tools[0]");
    let error = resolve_mcp_config(
        &bud(json!({"disabled_tools": ["kg"]})),
        &McpConfigOverrides::default(),
        &workspace(),
    )
    .unwrap_err();
    assert!(
        error.message.contains("must be '<server>.<tool>'"),
        "{error}"
    );
}

#[test]
fn another_workspaces_server_is_refused_like_an_unknown_one() {
    // The caller passes only its own workspace's servers, so a foreign id finds nothing and the
    // message is the same as for an id that exists nowhere: nothing leaks across tenants.
    let foreign = server("id-foreign", "foreign", true);
    let error = resolve_mcp_config(
        &BudMcpConfig::default(),
        &overrides(json!({"additional_servers": [foreign.id.as_str()]})),
        &workspace(),
    )
    .unwrap_err();
    assert_eq!(error.field, "mcp_config_overrides.additional_servers[0]");
    assert_eq!(
        error.message,
        "'id-foreign' is not a server of this workspace (no server has this id or name)"
    );
}
