//! Per-tool scopes (-32001), unknown names (-32002), the rate limit (-32003), workspace
//! isolation, changelog `since`, and cached answers that follow schema changes at once.

use crate::{
    CHAT_ONLY, DATA_READER, OTHER_WORKSPACE_ADMIN, SCHEMA_READER, TestServer, WRITER, structured,
};
use serde_json::json;
use switchboard_kg::{ObjectType, PropertyDefinition, PropertyType, SchemaEdit};
use switchboard_mcp_server::KgConfig;

#[tokio::test]
async fn each_tool_needs_its_scope() {
    let server = TestServer::start().await;
    let chat = server.initialize(Some(CHAT_ONLY)).await;
    let answer = server
        .call_tool(Some(CHAT_ONLY), &chat, "schema_version", json!({}))
        .await;
    assert_eq!(answer["error"]["code"], -32001);
    assert_eq!(
        answer["error"]["message"],
        "Missing required scope: schema:read"
    );
    assert_eq!(
        answer["error"]["data"],
        json!({"required_scope": "schema:read", "user_scopes": ["chat:use"]})
    );

    let reader = server.initialize(Some(SCHEMA_READER)).await;
    let data = server
        .call_tool(
            Some(SCHEMA_READER),
            &reader,
            "get_object",
            json!({"id": "doc-q4-okrs"}),
        )
        .await;
    assert_eq!(data["error"]["data"]["required_scope"], "data:read");
    let write = server
        .call_tool(
            Some(SCHEMA_READER),
            &reader,
            "create_object",
            json!({"type": "Tag", "properties": {"name": "x"}}),
        )
        .await;
    assert_eq!(write["error"]["data"]["required_scope"], "data:write");
    let search = server
        .call_tool(
            Some(SCHEMA_READER),
            &reader,
            "search_objects",
            json!({"query": "roadmap"}),
        )
        .await;
    assert_eq!(search["error"]["data"]["required_scope"], "data:read");

    let admin = server.initialize(Some(OTHER_WORKSPACE_ADMIN)).await;
    let allowed = server
        .call_tool(
            Some(OTHER_WORKSPACE_ADMIN),
            &admin,
            "count_objects",
            json!({"type": "Tag"}),
        )
        .await;
    assert_eq!(
        allowed["error"]["code"], -32002,
        "admin passes the scope check; its workspace has no Tag type"
    );
}

/// `tools/list` over the wire, as `token`: the names offered.
async fn listed_tools(server: &TestServer, token: &str) -> Vec<String> {
    let session = server.initialize(Some(token)).await;
    let request = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let response = server
        .post(
            Some(token),
            &request,
            &[
                ("mcp-session-id", &session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
        )
        .await;
    assert_eq!(response.status(), 200);
    let answer = crate::answer_of(response).await;
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {answer}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn tools_list_offers_only_the_tools_the_callers_scopes_can_call() {
    let server = TestServer::start().await;
    let schema = [
        "schema_version",
        "schema_changelog",
        "type_info",
        "relationship_info",
        "search_types",
    ];
    let data = [
        "find_objects",
        "search_objects",
        "get_object",
        "traverse",
        "find_path",
        "count_objects",
    ];
    let write = ["create_object", "create_relationship"];
    assert_eq!(listed_tools(&server, SCHEMA_READER).await, schema);
    assert_eq!(
        listed_tools(&server, DATA_READER).await,
        [&schema[..], &data[..]].concat()
    );
    assert_eq!(
        listed_tools(&server, WRITER).await,
        [&schema[..], &data[..], &write[..]].concat()
    );
    assert!(listed_tools(&server, CHAT_ONLY).await.is_empty());
    // `admin` allows every scope.
    assert_eq!(listed_tools(&server, OTHER_WORKSPACE_ADMIN).await.len(), 13);
}

#[tokio::test]
async fn unknown_types_and_objects_list_what_exists_and_bad_arguments_are_32602() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(DATA_READER)).await;
    let answer = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "type_info",
            json!({"type_name": "Invoice"}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32002);
    assert_eq!(
        answer["error"]["message"],
        "unknown object type 'Invoice'; available types: Document, Person, Project, Tag, Team"
    );
    assert_eq!(
        answer["error"]["data"]["available_types"],
        json!(["Document", "Person", "Project", "Tag", "Team"])
    );
    let missing = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "get_object",
            json!({"id": "doc-nope"}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32002);
    let relationship = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "traverse",
            json!({"start_id": "doc-q4-okrs", "relationship": "likes"}),
        )
        .await;
    assert!(
        relationship["error"]["message"]
            .as_str()
            .unwrap()
            .contains("available relationship types: authored_by")
    );
    let extra = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "schema_version",
            json!({"verbose": true}),
        )
        .await;
    assert_eq!(extra["error"]["code"], -32602);
    assert!(
        extra["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `verbose`")
    );
    let depth = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "traverse",
            json!({"start_id": "doc-q4-okrs", "depth": 9}),
        )
        .await;
    assert_eq!(depth["error"]["code"], -32602);
    let search_type = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "search_objects",
            json!({"query": "roadmap", "type": "Alice"}),
        )
        .await;
    assert_eq!(search_type["error"]["code"], -32002);
    let empty_query = server
        .call_tool(
            Some(DATA_READER),
            &session,
            "search_objects",
            json!({"query": " ? "}),
        )
        .await;
    assert_eq!(empty_query["error"]["code"], -32602, "{empty_query}");
    let unknown_tool = server
        .call_tool(Some(DATA_READER), &session, "drop_tables", json!({}))
        .await;
    assert_eq!(unknown_tool["result"]["isError"], true);
    assert!(
        unknown_tool["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Unknown tool 'drop_tables'")
    );
}

#[tokio::test]
async fn the_rate_limit_is_per_token() {
    let config = KgConfig {
        rate_limit_per_minute: 60,
        // `initialize` takes one; three calls follow.
        rate_limit_burst: 4,
        ..KgConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let session = server.initialize(Some(DATA_READER)).await;
    for _ in 0..3 {
        let answer = server
            .call_tool(Some(DATA_READER), &session, "schema_version", json!({}))
            .await;
        structured(&answer);
    }
    let limited = server
        .call_tool(Some(DATA_READER), &session, "schema_version", json!({}))
        .await;
    assert_eq!(limited["error"]["code"], -32003);
    assert_eq!(limited["error"]["data"]["limit_per_minute"], 60);
    assert!(limited["error"]["data"]["retry_after_ms"].as_u64().unwrap() > 0);
    let other = server.initialize(Some(SCHEMA_READER)).await;
    structured(
        &server
            .call_tool(Some(SCHEMA_READER), &other, "schema_version", json!({}))
            .await,
    );
}

#[tokio::test]
async fn a_token_sees_only_its_workspace() {
    let server = TestServer::start().await;
    let other = server.initialize(Some(OTHER_WORKSPACE_ADMIN)).await;
    let version = server
        .call_tool(
            Some(OTHER_WORKSPACE_ADMIN),
            &other,
            "schema_version",
            json!({}),
        )
        .await;
    assert_eq!(
        structured(&version)["version"],
        serde_json::Value::Null,
        "the other workspace has no schema yet"
    );
    let object = server
        .call_tool(
            Some(OTHER_WORKSPACE_ADMIN),
            &other,
            "get_object",
            json!({"id": "doc-product-roadmap"}),
        )
        .await;
    assert_eq!(object["error"]["code"], -32002);

    let graph = server.graphs.workspace(&"ws-other".into()).await.unwrap();
    let mut schema = switchboard_kg::Schema::default();
    schema.object_types.push(ObjectType::new(
        "Secret",
        "",
        vec![PropertyDefinition::new("name", PropertyType::String, "")],
    ));
    graph.apply_schema(schema, None).await.unwrap();
    let created = server
        .call_tool(
            Some(OTHER_WORKSPACE_ADMIN),
            &other,
            "create_object",
            json!({"type": "Secret", "id": "s1", "properties": {"name": "x"}}),
        )
        .await;
    assert_eq!(structured(&created)["object"]["id"], "s1");
    let default = server.initialize(Some(DATA_READER)).await;
    let hidden = server
        .call_tool(
            Some(DATA_READER),
            &default,
            "get_object",
            json!({"id": "s1"}),
        )
        .await;
    assert_eq!(hidden["error"]["code"], -32002);
    let types = server
        .call_tool(
            Some(DATA_READER),
            &default,
            "type_info",
            json!({"type_name": "Secret"}),
        )
        .await;
    assert_eq!(types["error"]["code"], -32002);
}

#[tokio::test]
async fn changelog_since_version_and_date() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(SCHEMA_READER)).await;
    let all = server
        .call_tool(
            Some(SCHEMA_READER),
            &session,
            "schema_changelog",
            json!({"limit": 100}),
        )
        .await;
    let all = structured(&all).clone();
    let total = all["total_matching"].as_u64().unwrap();
    assert!(total > 10);
    let default_limit = server
        .call_tool(Some(SCHEMA_READER), &session, "schema_changelog", json!({}))
        .await;
    assert_eq!(
        structured(&default_limit)["changes"]
            .as_array()
            .unwrap()
            .len(),
        10
    );

    let graph = server.default_graph().await;
    let (third_hash, third_at) = {
        let knowledge = graph.read();
        let third = knowledge.history().versions().nth(2).unwrap().clone();
        (third.version, third.created_at)
    };
    let since_version = server
        .call_tool(
            Some(SCHEMA_READER),
            &session,
            "schema_changelog",
            json!({"since": third_hash, "limit": 100}),
        )
        .await;
    let changes = structured(&since_version)["changes"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!changes.is_empty());
    assert!(
        changes.iter().all(|change| change["sequence"] == 4),
        "only version 4's changes follow version 3"
    );
    assert!(
        changes
            .iter()
            .any(|c| c["description"] == "Removed object type Task")
    );

    let date = third_at.format("%Y-%m-%d").to_string();
    let since_date = server
        .call_tool(
            Some(SCHEMA_READER),
            &session,
            "schema_changelog",
            json!({"since": date, "limit": 100}),
        )
        .await;
    let changes = structured(&since_date)["changes"]
        .as_array()
        .unwrap()
        .clone();
    assert!(changes.iter().all(|c| c["sequence"].as_u64().unwrap() >= 3));
    assert!(changes.iter().any(|c| c["sequence"] == 3));
    let unknown = server
        .call_tool(
            Some(SCHEMA_READER),
            &session,
            "schema_changelog",
            json!({"since": "0123456789abcdef"}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32002);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("known versions, newest first")
    );
}

#[tokio::test]
async fn cached_schema_answers_follow_a_schema_change_at_once() {
    let server = TestServer::start().await;
    let session = server.initialize(Some(WRITER)).await;
    let before = structured(
        &server
            .call_tool(Some(WRITER), &session, "schema_version", json!({}))
            .await,
    )
    .clone();
    let types_before = structured(
        &server
            .call_tool(Some(WRITER), &session, "type_info", json!({}))
            .await,
    )
    .clone();
    assert_eq!(types_before["types"].as_array().unwrap().len(), 5);
    let graph = server.default_graph().await;
    let meeting = ObjectType::new("Meeting", "A scheduled conversation", vec![]);
    graph
        .edit_schema(
            SchemaEdit::UpsertObjectType {
                object_type: meeting,
            },
            Some("meetings".into()),
        )
        .await
        .unwrap();
    let after = structured(
        &server
            .call_tool(Some(WRITER), &session, "schema_version", json!({}))
            .await,
    )
    .clone();
    assert_ne!(after["version"], before["version"]);
    assert_eq!(after["sequence"], 5);
    assert_eq!(after["object_type_count"], 6);
    let types_after = structured(
        &server
            .call_tool(Some(WRITER), &session, "type_info", json!({}))
            .await,
    )
    .clone();
    assert_eq!(types_after["types"].as_array().unwrap().len(), 6);
    let changelog = structured(
        &server
            .call_tool(
                Some(WRITER),
                &session,
                "schema_changelog",
                json!({"limit": 1}),
            )
            .await,
    )
    .clone();
    assert_eq!(
        changelog["changes"][0]["description"],
        "Added object type Meeting (0 properties)"
    );
}
