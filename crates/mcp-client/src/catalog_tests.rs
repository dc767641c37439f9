use super::*;
use serde_json::json;

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        title: None,
        description: format!("does {name}"),
        input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

fn server(id: &str, name: &str, tools: &[&str]) -> CatalogServer {
    CatalogServer {
        server_id: ServerId::from(id),
        server_name: name.to_owned(),
        tools: tools.iter().map(|name| tool(name)).collect(),
    }
}

fn builtin(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: "built in".to_owned(),
        parameters: json!({"type": "object", "properties": {}}),
    }
}

#[test]
fn names_are_server_prefixed_valid_and_routed_back() {
    let catalog = ToolCatalog::build(
        &[
            server("s2", "files", &["read_file", "list.dir"]),
            server("s1", "everything", &["echo"]),
        ],
        &[builtin("kg_search")],
    );
    let names: Vec<&str> = catalog
        .specs
        .iter()
        .map(|spec| spec.name.as_str())
        .collect();
    assert_eq!(
        names,
        vec![
            "kg_search",
            "everything__echo",
            "files__list_dir",
            "files__read_file"
        ]
    );
    assert!(names.iter().all(|name| is_valid_tool_name(name)));
    let route = catalog.route("files__list_dir").unwrap();
    assert_eq!(
        (route.server_id.as_str(), route.tool_name.as_str()),
        ("s2", "list.dir")
    );
    assert!(catalog.is_builtin("kg_search"));
    assert!(catalog.route("kg_search").is_none());
    assert!(
        catalog.specs[1]
            .description
            .ends_with("(server: everything)")
    );
}

#[test]
fn collisions_and_long_names_are_disambiguated_deterministically() {
    let long_tool = "t".repeat(80);
    let servers = [
        server("id-a", "a_b", &["x"]),
        server("id-b", "a.b", &["x"]),
        server("id-c", "srv", &[long_tool.as_str(), "kg_search"]),
    ];
    let catalog = ToolCatalog::build(&servers, &[builtin("srv__kg_search")]);
    let names: Vec<String> = catalog.specs.iter().map(|spec| spec.name.clone()).collect();
    assert_eq!(names.len(), 5);
    assert_eq!(names.iter().collect::<HashSet<_>>().len(), 5, "{names:?}");
    assert!(
        names.iter().all(|name| is_valid_tool_name(name)),
        "{names:?}"
    );
    // The exact name keeps its plain form; the sanitized twin gets a hashed one.
    assert!(names.contains(&"a_b__x".to_owned()));
    let twin = names
        .iter()
        .find(|name| name.starts_with("a_b__x_"))
        .unwrap();
    assert_eq!(catalog.route(twin).unwrap().server_id.as_str(), "id-b");
    // Colliding with a built-in or exceeding 64 characters means a hashed name.
    let kg = catalog
        .specs
        .iter()
        .find(|spec| {
            catalog
                .route(&spec.name)
                .is_some_and(|route| route.tool_name == "kg_search")
        })
        .unwrap();
    assert_ne!(kg.name, "srv__kg_search");
    let long = catalog
        .specs
        .iter()
        .find(|spec| {
            catalog
                .route(&spec.name)
                .is_some_and(|route| route.tool_name == long_tool)
        })
        .unwrap();
    assert_eq!(long.name.len(), 64);

    // Same input, same output; order of the input does not matter.
    let mut reversed = servers.to_vec();
    reversed.reverse();
    let again = ToolCatalog::build(&reversed, &[builtin("srv__kg_search")]);
    assert_eq!(again.specs, catalog.specs);
}

#[test]
fn parameters_are_always_object_schemas() {
    let mut odd = tool("odd");
    odd.input_schema = json!(true);
    let mut bare = tool("bare");
    bare.input_schema = json!({"required": []});
    let catalog = ToolCatalog::build(
        &[CatalogServer {
            server_id: ServerId::from("s"),
            server_name: "s".into(),
            tools: vec![odd, bare],
        }],
        &[],
    );
    for spec in &catalog.specs {
        assert_eq!(spec.parameters["type"], "object");
        assert!(spec.parameters["properties"].is_object());
    }
}

#[test]
fn tools_only_their_app_may_call_are_never_offered_to_the_model() {
    let mut app_only = tool("refresh_chart");
    app_only.meta = serde_json::from_value(json!({
        "ui": {"resourceUri": "ui://charts/app.html", "visibility": ["app"]}
    }))
    .unwrap();
    let mut both = tool("show_chart");
    both.meta = serde_json::from_value(json!({
        "ui": {"resourceUri": "ui://charts/app.html", "visibility": ["model", "app"]}
    }))
    .unwrap();
    let catalog = ToolCatalog::build(
        &[CatalogServer {
            server_id: ServerId::from("s1"),
            server_name: "charts".to_owned(),
            tools: vec![app_only, both, tool("plain")],
        }],
        &[],
    );
    let names: Vec<&str> = catalog
        .specs
        .iter()
        .map(|spec| spec.name.as_str())
        .collect();
    assert_eq!(names, ["charts__plain", "charts__show_chart"]);
    assert!(catalog.route("charts__refresh_chart").is_none());
}
