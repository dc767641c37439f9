//! The REST reads of the first design document: `GET /mcp/schema/version`,
//! `GET /mcp/schema/changelog?since=`, `GET /mcp/types/{name}/schema`, with the kg tools' scopes.

use crate::{CHAT_ONLY, SCHEMA_READER, TestServer};
use serde_json::Value;

async fn get(server: &TestServer, path: &str, token: Option<&str>) -> (u16, Value) {
    let mut request = server.http.get(format!("{}{path}", server.base));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn schema_version_and_changelog_are_read_with_schema_read() {
    let server = TestServer::start().await;
    let (status, version) = get(&server, "/mcp/schema/version", Some(SCHEMA_READER)).await;
    assert_eq!(status, 200, "{version}");
    let expected = server.default_graph().await.read().schema().content_hash();
    assert_eq!(version["version"], expected);
    assert_eq!(version["sequence"], 4);
    assert_eq!(version["object_type_count"], 5);

    let (status, all) = get(
        &server,
        "/mcp/schema/changelog?limit=100",
        Some(SCHEMA_READER),
    )
    .await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["current_version"], expected);
    let total = all["total_matching"].as_u64().unwrap();
    assert!(total > 0, "{all}");
    let (status, since_second) = get(
        &server,
        "/mcp/schema/changelog?since=2&limit=100",
        Some(SCHEMA_READER),
    )
    .await;
    assert_eq!(status, 200, "{since_second}");
    let later = since_second["total_matching"].as_u64().unwrap();
    assert!(later > 0 && later < total, "{since_second}");
    assert_eq!(since_second["since"], "2");

    let (status, bad) = get(
        &server,
        "/mcp/schema/changelog?since=not%20a%20date!",
        Some(SCHEMA_READER),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    let (status, _) = get(
        &server,
        "/mcp/schema/changelog?limit=0",
        Some(SCHEMA_READER),
    )
    .await;
    assert_eq!(status, 400);

    let (status, refused) = get(&server, "/mcp/schema/version", Some(CHAT_ONLY)).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(refused["error"]["required_scope"], "schema:read");
    let (status, _) = get(&server, "/mcp/schema/version", None).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_type_schema_is_read_and_an_unknown_type_lists_the_known_ones() {
    let server = TestServer::start().await;
    let (status, document) = get(&server, "/mcp/types/Document/schema", Some(SCHEMA_READER)).await;
    assert_eq!(status, 200, "{document}");
    assert_eq!(document["type"]["name"], "Document");
    assert!(
        !document["type"]["properties"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(!document["relationships"].as_array().unwrap().is_empty());
    assert!(document["schema_version"].is_string());

    let (status, unknown) = get(
        &server,
        "/mcp/types/InvalidType/schema",
        Some(SCHEMA_READER),
    )
    .await;
    assert_eq!(status, 404, "{unknown}");
    assert_eq!(unknown["error"]["code"], "not_found");
    let available: Vec<&str> = unknown["error"]["available_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    assert!(
        available.contains(&"Document") && available.contains(&"Project"),
        "{unknown}"
    );
    let message = unknown["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("InvalidType") && message.contains("Document"),
        "{message}"
    );

    let (status, _) = get(&server, "/mcp/types/Document/schema", Some(CHAT_ONLY)).await;
    assert_eq!(status, 403);
}
