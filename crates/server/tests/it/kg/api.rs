//! The knowledge graph through the application: `/api/kg` administration (scopes, schema
//! versions, import/export, deletes, refusals that change nothing) and `/mcp` (and its
//! `/mcp/rpc` alias) answering from the same graphs.

use crate::support::{TestServer, call, error_of, other_workspace};
use serde_json::{Value, json};
use switchboard_core::ScopeSet;

fn schema_v1() -> Value {
    json!({
        "object_types": [
            {"name": "Person", "description": "Someone", "properties": [{"name": "name", "type": "string", "required": true}]},
            {"name": "Team", "properties": [{"name": "name", "type": "string", "required": true}]}
        ],
        "relationship_types": [{"name": "member_of", "from_types": ["Person"], "to_types": ["Team"]}]
    })
}

async fn send(
    server: &TestServer,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> reqwest::Response {
    call(server, token, method, path, body).await
}

/// One 2026-07-28 tools/call through `path`; returns the JSON-RPC answer.
async fn mcp_tool(
    server: &TestServer,
    path: &str,
    token: &str,
    name: &str,
    arguments: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let response = server
        .client
        .post(server.url(path))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.json().await.unwrap()
}

#[tokio::test]
async fn schema_versions_import_export_and_mcp_share_one_graph() {
    let server = TestServer::start().await;
    let owner = server.owner_token.clone();
    let empty: Value = send(
        &server,
        reqwest::Method::GET,
        "/api/kg/schema",
        &owner,
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(empty["version"], Value::Null);

    let first = send(
        &server,
        reqwest::Method::PUT,
        "/api/kg/schema",
        &owner,
        Some(json!({"schema": schema_v1(), "message": "people"})),
    )
    .await;
    assert_eq!(first.status(), 200);
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["changed"], true);
    assert_eq!(first["version"]["sequence"], 1);
    assert_eq!(first["version"]["message"], "people");
    let again: Value = send(
        &server,
        reqwest::Method::PUT,
        "/api/kg/schema",
        &owner,
        Some(json!({"schema": schema_v1()})),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(again["changed"], false);

    let edit = json!({"edit": {"op": "upsert_object_type", "object_type": {"name": "Team",
        "properties": [{"name": "name", "type": "string", "required": true},
                       {"name": "kind", "type": "enum", "enum_values": ["product", "platform"]}]}}});
    let edited: Value = send(
        &server,
        reqwest::Method::POST,
        "/api/kg/schema/edits",
        &owner,
        Some(edit),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(edited["version"]["sequence"], 2);
    assert_eq!(
        edited["changes"][0]["description"],
        "Added property kind (enum: product, platform) to Team"
    );

    let import = json!({
        "objects": [
            {"id": "ana", "type": "Person", "properties": {"name": "Ana"}},
            {"id": "core", "type": "Team", "properties": {"name": "Core", "kind": "platform"}}
        ],
        "relationships": [{"type": "member_of", "from_id": "ana", "to_id": "core"}]
    });
    let imported = send(
        &server,
        reqwest::Method::POST,
        "/api/kg/import",
        &owner,
        Some(import),
    )
    .await;
    assert_eq!(imported.status(), 201);
    assert_eq!(
        imported.json::<Value>().await.unwrap(),
        json!({"objects_created": 2, "relationships_created": 1})
    );

    let bad = json!({"objects": [{"id": "bo", "type": "Person", "properties": {"name": "Bo"}},
                                 {"id": "x", "type": "Team", "properties": {"kind": "sales"}}]});
    let refused = send(
        &server,
        reqwest::Method::POST,
        "/api/kg/import",
        &owner,
        Some(bad),
    )
    .await;
    assert_eq!(refused.status(), 422);
    let (code, message) = error_of(refused).await;
    assert_eq!(code, "invalid_request");
    assert!(
        message.contains("objects[1]: Team.kind: expected one of product, platform"),
        "{message}"
    );
    let export: Value = send(
        &server,
        reqwest::Method::GET,
        "/api/kg/export",
        &owner,
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        export["objects"].as_array().unwrap().len(),
        2,
        "the refused import added nothing"
    );
    assert_eq!(export["relationships"].as_array().unwrap().len(), 1);
    assert_eq!(export["schema_version"], edited["version"]["version"]);

    for path in ["/mcp", "/mcp/rpc"] {
        let answer = mcp_tool(&server, path, &owner, "schema_version", json!({})).await;
        assert_eq!(
            answer["result"]["structuredContent"]["sequence"], 2,
            "{path}: {answer}"
        );
    }
    let members = mcp_tool(
        &server,
        "/mcp",
        &owner,
        "traverse",
        json!({"start_id": "core", "direction": "in"}),
    )
    .await;
    assert_eq!(
        members["result"]["structuredContent"]["results"][0]["object"]["id"],
        "ana"
    );

    let breaking = json!({"schema": {"object_types": [{"name": "Team", "properties": []}], "relationship_types": []}});
    let conflict = send(
        &server,
        reqwest::Method::PUT,
        "/api/kg/schema",
        &owner,
        Some(breaking),
    )
    .await;
    assert_eq!(conflict.status(), 409);
    let (_, message) = error_of(conflict).await;
    assert!(
        message.contains("1 objects of type Person exist; delete them first"),
        "{message}"
    );

    let deleted: Value = send(
        &server,
        reqwest::Method::DELETE,
        "/api/kg/objects/ana",
        &owner,
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        deleted,
        json!({"deleted_object": "ana", "deleted_relationships": 1})
    );
    let missing = send(
        &server,
        reqwest::Method::DELETE,
        "/api/kg/objects/ana",
        &owner,
        None,
    )
    .await;
    assert_eq!(missing.status(), 404);
    let missing = send(
        &server,
        reqwest::Method::DELETE,
        "/api/kg/relationships/nope",
        &owner,
        None,
    )
    .await;
    assert_eq!(missing.status(), 404);
    let versions: Value = send(
        &server,
        reqwest::Method::GET,
        "/api/kg/versions",
        &owner,
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(versions["versions"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn administration_needs_data_write_and_stays_in_the_workspace() {
    let server = TestServer::start().await;
    let reader_scopes = ScopeSet::parse_list("schema:read").unwrap();
    let workspace = server
        .store
        .find_workspace_by_name("default")
        .await
        .unwrap()
        .unwrap();
    let owner = server
        .store
        .list_users(&workspace.id)
        .await
        .unwrap()
        .remove(0);
    let reader = server
        .store
        .create_token(
            &workspace.id,
            switchboard_store::NewToken {
                user_id: owner.id,
                name: "reader".into(),
                scopes: reader_scopes,
                expires_at: None,
            },
        )
        .await
        .unwrap();
    let reader = reader.plaintext.expose().to_owned();
    let put = send(
        &server,
        reqwest::Method::PUT,
        "/api/kg/schema",
        &reader,
        Some(json!({"schema": schema_v1()})),
    )
    .await;
    assert_eq!(put.status(), 403);
    assert_eq!(error_of(put).await.0, "insufficient_scope");
    assert_eq!(
        send(
            &server,
            reqwest::Method::GET,
            "/api/kg/export",
            &reader,
            None
        )
        .await
        .status(),
        403
    );
    assert_eq!(
        send(
            &server,
            reqwest::Method::GET,
            "/api/kg/schema",
            &reader,
            None
        )
        .await
        .status(),
        200
    );
    assert_eq!(
        send(
            &server,
            reqwest::Method::GET,
            "/api/kg/schema",
            "nope",
            None
        )
        .await
        .status(),
        401
    );

    let owner_token = server.owner_token.clone();
    send(
        &server,
        reqwest::Method::PUT,
        "/api/kg/schema",
        &owner_token,
        Some(json!({"schema": schema_v1()})),
    )
    .await;
    let (_, other_token) = other_workspace(
        &server.store,
        "globex",
        ScopeSet::parse_list("admin").unwrap(),
    )
    .await;
    let other: Value = send(
        &server,
        reqwest::Method::GET,
        "/api/kg/schema",
        &other_token,
        None,
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(
        other["version"],
        Value::Null,
        "another workspace does not see this schema"
    );
    let unknown = json!({"schema": {"object_types": [{"name": "A", "properties": [{"name": "id", "type": "string"}]}]}});
    let invalid = send(
        &server,
        reqwest::Method::PUT,
        "/api/kg/schema",
        &other_token,
        Some(unknown),
    )
    .await;
    assert_eq!(invalid.status(), 422);
    assert!(
        error_of(invalid)
            .await
            .1
            .contains("property name 'id' is reserved")
    );
}
