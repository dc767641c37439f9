//! The admin areas — users, tokens, audit, kg — driven through the real server (successes and
//! the usual refusals) answer what the OpenAPI spec says: a listed status and a body matching
//! the declared schema (`openapi_contract::Contract`). A view that changes shape, or a status
//! the spec does not list, fails here.

use super::openapi_contract::{same, server};
use crate::support::approvals::Person;
use reqwest::Method;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn users_and_tokens() {
    let (server, _, contract) = server().await;
    let (admin, alice) = (&server.admin, &server.alice);
    let nobody = Person {
        id: admin.id.clone(),
        token: "not-a-token".to_owned(),
    };
    let users = same("/api/users");
    let user = contract
        .expect(
            &server,
            admin,
            Method::POST,
            users,
            Some(json!({"name": "dana"})),
            201,
        )
        .await;
    for (body, status) in [
        (json!({"name": "dana"}), 409),
        (json!({"role": "admin"}), 422),
        (json!({"name": "eve", "role": "owner"}), 422),
    ] {
        contract
            .expect(&server, admin, Method::POST, users, Some(body), status)
            .await;
    }
    contract
        .expect(&server, admin, Method::GET, users, None, 200)
        .await;
    contract
        .expect(&server, &nobody, Method::GET, users, None, 401)
        .await;
    contract
        .expect(&server, alice, Method::GET, users, None, 403)
        .await;

    let tokens = same("/api/tokens");
    let issue = json!({"name": "ci", "scopes": ["chat:use", "schema:read"], "user_id": user["id"],
        "expires_at": "2099-01-01T00:00:00Z"});
    let issued = contract
        .expect(&server, admin, Method::POST, tokens, Some(issue), 201)
        .await;
    for body in [
        json!({"name": "ci", "scopes": []}),
        json!({"name": "ci", "scopes": ["root"]}),
        json!({"name": "ci", "scopes": ["admin"], "user_id": user["id"]}),
    ] {
        contract
            .expect(&server, admin, Method::POST, tokens, Some(body), 422)
            .await;
    }
    let listed = contract
        .expect(&server, admin, Method::GET, tokens, None, 200)
        .await;
    assert!(listed.as_array().unwrap().len() > 1);
    let template = "/api/tokens/{token_id}";
    let revoke = format!("/api/tokens/{}", issued["token"]["id"].as_str().unwrap());
    let revoked = contract
        .expect(
            &server,
            admin,
            Method::DELETE,
            (template, &revoke),
            None,
            200,
        )
        .await;
    assert!(revoked["revoked_at"].is_string());
    let missing = (template, "/api/tokens/tok_missing");
    contract
        .expect(&server, admin, Method::DELETE, missing, None, 404)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit() {
    let (server, _, contract) = server().await;
    let admin = &server.admin;
    for name in ["one", "two", "three"] {
        let body = Some(json!({"name": name}));
        contract
            .expect(&server, admin, Method::POST, same("/api/users"), body, 201)
            .await;
    }
    let page = contract
        .expect(
            &server,
            admin,
            Method::GET,
            ("/api/audit", "/api/audit?limit=2"),
            None,
            200,
        )
        .await;
    assert!(page["next_cursor"].is_string(), "{page}");
    for (path, status) in [
        ("/api/audit?action=user.&limit=500", 200),
        ("/api/audit?from=yesterday", 422),
        ("/api/audit?cursor=nope", 422),
        ("/api/audit?limit=0", 422),
        ("/api/audit?colour=blue", 400),
    ] {
        contract
            .expect(
                &server,
                admin,
                Method::GET,
                ("/api/audit", path),
                None,
                status,
            )
            .await;
    }
    let alice = &server.alice;
    contract
        .expect(&server, alice, Method::GET, same("/api/audit"), None, 403)
        .await;
}

fn schema_v1() -> Value {
    json!({
        "object_types": [
            {"name": "Person", "description": "Someone", "properties": [{"name": "name", "type": "string", "required": true}]},
            {"name": "Team", "properties": [{"name": "name", "type": "string", "required": true},
                {"name": "kind", "type": "enum", "enum_values": ["product", "platform"]}]}
        ],
        "relationship_types": [{"name": "member_of", "from_types": ["Person"], "to_types": ["Team"]}]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kg_schema() {
    let (server, _, contract) = server().await;
    let admin = &server.admin;
    let schema = same("/api/kg/schema");
    contract
        .expect(&server, admin, Method::GET, schema, None, 200)
        .await;
    let replace = json!({"schema": schema_v1(), "message": "people"});
    let changed = contract
        .expect(&server, admin, Method::PUT, schema, Some(replace), 200)
        .await;
    assert_eq!(changed["changed"], true);
    let inconsistent = json!({"schema": {"relationship_types":
        [{"name": "r", "from_types": ["Ghost"], "to_types": ["Ghost"]}]}});
    contract
        .expect(&server, admin, Method::PUT, schema, Some(inconsistent), 422)
        .await;
    let edits = same("/api/kg/schema/edits");
    let edit = json!({"edit": {"op": "upsert_object_type", "object_type": {"name": "Project"}}});
    contract
        .expect(&server, admin, Method::POST, edits, Some(edit), 200)
        .await;
    let remove = json!({"edit": {"op": "remove_object_type", "name": "Ghost"}});
    contract
        .expect(&server, admin, Method::POST, edits, Some(remove), 404)
        .await;
    let versions = contract
        .expect(
            &server,
            admin,
            Method::GET,
            same("/api/kg/versions"),
            None,
            200,
        )
        .await;
    assert_eq!(versions["versions"].as_array().unwrap().len(), 2);
    let changelog = contract
        .expect(
            &server,
            admin,
            Method::GET,
            ("/api/kg/changelog", "/api/kg/changelog?limit=10"),
            None,
            200,
        )
        .await;
    assert!(!changelog["changes"].as_array().unwrap().is_empty());
    contract
        .expect(
            &server,
            admin,
            Method::GET,
            ("/api/kg/changelog", "/api/kg/changelog?limit=0"),
            None,
            422,
        )
        .await;
    let alice = &server.alice;
    contract
        .expect(&server, alice, Method::PUT, schema, Some(json!({})), 403)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kg_data() {
    let (server, _, contract) = server().await;
    let admin = &server.admin;
    let replace = json!({"schema": schema_v1()});
    contract
        .expect(
            &server,
            admin,
            Method::PUT,
            same("/api/kg/schema"),
            Some(replace),
            200,
        )
        .await;
    let import = json!({
        "objects": [
            {"id": "ana", "type": "Person", "properties": {"name": "Ana"}},
            {"id": "core", "type": "Team", "properties": {"name": "Core", "kind": "platform"}}
        ],
        "relationships": [{"id": "ana-core", "type": "member_of", "from_id": "ana", "to_id": "core"}]
    });
    let route = same("/api/kg/import");
    contract
        .expect(
            &server,
            admin,
            Method::POST,
            route,
            Some(import.clone()),
            201,
        )
        .await;
    contract
        .expect(&server, admin, Method::POST, route, Some(import), 409)
        .await;
    let empty = json!({"objects": []});
    contract
        .expect(&server, admin, Method::POST, route, Some(empty), 422)
        .await;
    let export = contract
        .expect(
            &server,
            admin,
            Method::GET,
            same("/api/kg/export"),
            None,
            200,
        )
        .await;
    assert_eq!(export["objects"].as_array().unwrap().len(), 2);
    let relationship = (
        "/api/kg/relationships/{relationship_id}",
        "/api/kg/relationships/ana-core",
    );
    contract
        .expect(&server, admin, Method::DELETE, relationship, None, 204)
        .await;
    contract
        .expect(&server, admin, Method::DELETE, relationship, None, 404)
        .await;
    let object = ("/api/kg/objects/{object_id}", "/api/kg/objects/ana");
    let deleted = contract
        .expect(&server, admin, Method::DELETE, object, None, 200)
        .await;
    assert_eq!(deleted["deleted_object"], "ana");
    contract
        .expect(&server, admin, Method::DELETE, object, None, 404)
        .await;
    let alice = &server.alice;
    contract
        .expect(
            &server,
            alice,
            Method::GET,
            same("/api/kg/export"),
            None,
            403,
        )
        .await;
}
