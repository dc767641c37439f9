//! The endpoint through the rmcp client: handshake, tool definitions with input and output
//! schemas, results that match their output schema, resources and prompts.

use crate::{DATA_READER, TestServer, WRITER};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

async fn connect(server: &TestServer, token: &str, path: &str) -> RunningService<RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}{path}", server.base))
        .auth_header(token);
    let transport = StreamableHttpClientTransport::from_config(config);
    ().serve(transport)
        .await
        .expect("connect with the rmcp client")
}

fn arguments(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

#[tokio::test]
async fn tools_have_input_and_output_schemas_and_results_match_them() {
    let server = TestServer::start().await;
    let client = connect(&server, WRITER, "/mcp").await;
    let info = client.peer_info().expect("initialized");
    assert_eq!(info.server_info.as_ref().unwrap().name, "switchboard-kg");
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        vec![
            "schema_version",
            "schema_changelog",
            "type_info",
            "relationship_info",
            "search_types",
            "find_objects",
            "search_objects",
            "get_object",
            "traverse",
            "find_path",
            "count_objects",
            "create_object",
            "create_relationship"
        ]
    );
    let calls = [
        ("schema_version", json!({})),
        ("schema_changelog", json!({"since": "1", "limit": 5})),
        ("type_info", json!({})),
        ("type_info", json!({"type_name": "Document"})),
        ("relationship_info", json!({"from_type": "Person"})),
        ("search_types", json!({"query": "status"})),
        (
            "find_objects",
            json!({"type": "Document", "filter": {"status": "draft"}, "limit": 2}),
        ),
        ("search_objects", json!({"query": "platform team"})),
        (
            "search_objects",
            json!({"query": "design", "type": "Team", "limit": 1}),
        ),
        ("get_object", json!({"id": "doc-product-roadmap"})),
        (
            "traverse",
            json!({"start_id": "project-q4-planning", "direction": "in", "relationship": "belongs_to"}),
        ),
        (
            "find_path",
            json!({"from_id": "doc-q4-okrs", "to_id": "team-platform"}),
        ),
        (
            "find_path",
            json!({"from_id": "doc-q4-okrs", "to_id": "tag-design", "max_depth": 1}),
        ),
        (
            "count_objects",
            json!({"type": "Document", "group_by": "status"}),
        ),
        (
            "create_object",
            json!({"type": "Tag", "id": "tag-rust", "properties": {"name": "rust"}}),
        ),
        (
            "create_relationship",
            json!({"type": "tagged_with", "from_id": "doc-api-style-guide", "to_id": "tag-rust"}),
        ),
    ];
    for (name, args) in calls {
        let tool = tools.iter().find(|tool| tool.name == name).unwrap();
        assert!(tool.description.as_deref().is_some_and(|d| !d.is_empty()));
        let output_schema = Value::Object(
            tool.output_schema
                .as_deref()
                .cloned()
                .expect("output schema"),
        );
        assert!(
            !output_schema.to_string().contains("\"format\":\"uint"),
            "{name}: no Rust-only formats in the output schema"
        );
        let validator = jsonschema::validator_for(&output_schema).expect("output schema compiles");
        let input_schema = Value::Object(tool.input_schema.as_ref().clone());
        assert!(
            jsonschema::validator_for(&input_schema)
                .unwrap()
                .is_valid(&args),
            "{name} args fit its input schema"
        );
        let result = client
            .call_tool(CallToolRequestParams::new(name).with_arguments(arguments(args.clone())))
            .await
            .unwrap_or_else(|error| panic!("{name} {args}: {error}"));
        assert_ne!(result.is_error, Some(true), "{name}: {result:?}");
        let structured = result
            .structured_content
            .clone()
            .expect("structured content");
        let problems: Vec<String> = validator
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(
            problems.is_empty(),
            "{name} output breaks its schema: {problems:?}\n{structured}"
        );
        let text = result.content[0]
            .as_text()
            .expect("text block")
            .text
            .clone();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            structured,
            "{name}: text is the same JSON"
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn answers_are_about_the_real_graph() {
    let server = TestServer::start().await;
    let client = connect(&server, DATA_READER, "/mcp/rpc").await;
    let call = |name: &'static str, args: Value| {
        let client = &client;
        async move {
            client
                .call_tool(CallToolRequestParams::new(name).with_arguments(arguments(args)))
                .await
                .unwrap()
                .structured_content
                .unwrap()
        }
    };
    let version = call("schema_version", json!({})).await;
    let expected = server.default_graph().await.read().schema().content_hash();
    assert_eq!(version["version"], expected);
    assert_eq!(version["sequence"], 4);
    assert_eq!(version["object_type_count"], 5);
    assert_eq!(
        version["message"], "Retire tasks; documents can reference documents; project due dates",
        "the latest version's message"
    );
    let path = call(
        "find_path",
        json!({"from_id": "doc-q4-okrs", "to_id": "team-platform"}),
    )
    .await;
    assert_eq!(path["found"], true);
    assert_eq!(path["length"], 2);
    assert_eq!(
        path["summary"],
        "Q4 OKRs -belongs_to-> Q4 Planning -owned_by-> Platform"
    );
    let found = call("search_objects", json!({"query": "the product roadmap"})).await;
    assert_eq!(
        found["total_matching"], 0,
        "'the' is not in the title: {found}"
    );
    let found = call("search_objects", json!({"query": "Product Roadmap"})).await;
    assert_eq!(found["matches"][0]["object"]["id"], "doc-product-roadmap");
    assert_eq!(found["matches"][0]["matched"], "exact");
    assert_eq!(
        found["object_types"],
        json!(["Document", "Person", "Project", "Tag", "Team"]),
        "{found}"
    );
    let found = call("search_objects", json!({"query": "launch", "limit": 1})).await;
    assert_eq!(
        found["total_matching"], 2,
        "a document and a project: {found}"
    );
    assert_eq!(found["matches"].as_array().unwrap().len(), 1);
    let members = call(
        "traverse",
        json!({"start_id": "team-platform", "direction": "in", "relationship": "member_of", "target_type": "Person"}),
    )
    .await;
    let mut names: Vec<&str> = members["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["object"]["label"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["Ana Silva", "Ben Okafor", "Eli Haddad", "Gus Lindqvist"]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn resources_and_prompts_carry_graph_facts() {
    let server = TestServer::start().await;
    let client = connect(&server, DATA_READER, "/mcp").await;
    let resources = client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert!(
        uris.contains(&"kg://schema") && uris.contains(&"kg://types/Document"),
        "{uris:?}"
    );
    let schema = client
        .read_resource(ReadResourceRequestParams::new("kg://schema"))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &schema.contents[0] else {
        panic!("text resource")
    };
    let document: Value = serde_json::from_str(text).unwrap();
    assert_eq!(document["sequence"], 4);
    let missing = client
        .read_resource(ReadResourceRequestParams::new("kg://types/Invoice"))
        .await
        .unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("available types: Document, Person, Project, Tag, Team"),
        "{missing}"
    );
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates.len(), 2);

    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts.len(), 3);
    let mut arguments = serde_json::Map::new();
    arguments.insert("type_name".into(), json!("Project"));
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("explain_type").with_arguments(arguments))
        .await
        .unwrap();
    let text = serde_json::to_string(&prompt.messages).unwrap();
    assert!(
        text.contains("due_date") && text.contains("owned_by"),
        "{text}"
    );
    let missing_argument = client
        .get_prompt(GetPromptRequestParams::new("explore_object"))
        .await
        .unwrap_err();
    assert!(
        missing_argument
            .to_string()
            .contains("needs the argument 'id'"),
        "{missing_argument}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn find_objects_pages_through_every_match_with_its_cursor() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(DATA_READER)).await;
    let find =
        |arguments: Value| server.call_tool(Some(DATA_READER), &session, "find_objects", arguments);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut arguments = json!({"type": "Document", "limit": 2});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let answer = find(arguments).await;
        let page = crate::structured(&answer).clone();
        pages += 1;
        let objects = page["objects"].as_array().unwrap();
        assert!(objects.len() <= 2, "{page}");
        seen.extend(objects.iter().map(|o| o["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
        assert!(pages < 50, "the cursor must move forward");
    }
    let total = crate::structured(
        &server
            .call_tool(
                Some(DATA_READER),
                &session,
                "count_objects",
                json!({"type": "Document"}),
            )
            .await,
    )["total"]
        .as_u64()
        .unwrap();
    assert_eq!(seen.len() as u64, total, "every document once: {seen:?}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "no document twice: {seen:?}");
    assert!(
        pages > 2,
        "limit 2 over {total} documents takes several pages"
    );

    let filtered =
        find(json!({"type": "Document", "filter": {"status": "draft"}, "limit": 1})).await;
    let filtered = crate::structured(&filtered);
    assert_eq!(filtered["objects"].as_array().unwrap().len(), 1);
    assert!(filtered["total_matching"].as_u64().unwrap() >= 1);

    let bad = find(json!({"type": "Document", "cursor": "not-a-cursor"})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cursor is not one returned by find_objects"),
        "{bad}"
    );
}
