//! The OpenAPI document: the committed `docs/openapi.json` is what the code generates (a route
//! or type that changes without the spec fails here; `UPDATE_OPENAPI=1` rewrites it), every
//! documented operation is served, every route in the route modules is documented, and the
//! document and the reference page are served without a token.

use crate::support::TestServer;
use crate::support::chat::{ChatOptions, ChatServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use switchboard_test_support::interop::repo_root;

fn committed_spec_path() -> PathBuf {
    repo_root().join("docs/openapi.json")
}

fn generated_spec() -> String {
    switchboard_server::openapi::to_json(&switchboard_server::openapi_document())
}

#[test]
fn committed_spec_is_the_one_the_code_generates() {
    let generated = generated_spec();
    let path = committed_spec_path();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    let first_difference = committed
        .lines()
        .zip(generated.lines())
        .position(|(old, new)| old != new)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    let line = |text: &str| {
        text.lines()
            .nth(first_difference)
            .unwrap_or("<end>")
            .to_owned()
    };
    panic!(
        "docs/openapi.json is not the spec the code generates: first difference at line {}\n  \
         committed: {}\n  generated: {}\nIf the API change is intended, run \
         `UPDATE_OPENAPI=1 cargo nextest run -p switchboard-server -E 'test(/openapi/)'` and \
         commit docs/openapi.json with it.",
        first_difference + 1,
        line(&committed),
        line(&generated),
    );
}

/// `/x/{id}/y` with every parameter replaced by an id nothing has.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "0000-no-such-id"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_documented_operation_is_served() {
    let server = ChatServer::start(ChatOptions::default()).await;
    let document: Value = serde_json::from_str(&generated_spec()).unwrap();
    let paths = document["paths"].as_object().unwrap();
    assert!(paths.len() >= 10, "{paths:?}");
    let mut checked = 0;
    for (path, item) in paths {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let mut request = server
                .client
                .request(
                    method.to_uppercase().parse().unwrap(),
                    server.url(&concrete(path)),
                )
                .bearer_auth(&server.token);
            if matches!(method, "post" | "put" | "patch") {
                request = request.json(&serde_json::json!({}));
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            assert_ne!(status, 405, "{method} {path}: documented but not routed");
            if status == 404 {
                let body: Value = response.json().await.unwrap();
                // A handler's 404 names what is missing; a missing route says only "Not Found".
                assert_ne!(
                    body["error"]["message"], "Not Found",
                    "{method} {path}: documented but not routed"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} operations checked");
}

/// Every `.route(`/`.nest(` left in the route modules: a route added that way is served but
/// not documented (areas use `routes!`, which does both).
fn undocumented_routes(directory: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(directory).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            undocumented_routes(&path, found);
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // routes/mod.rs nests the areas' OpenApiRouters (documented through them).
        if path.ends_with("routes/mod.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // health.rs's first router holds the operational endpoints outside the API
        // (`/healthz`, `/readyz`, `/metrics`): they are not part of the documented API.
        let text = match name.as_str() {
            "health.rs" => text
                .split("pub(crate) fn api_router")
                .nth(1)
                .unwrap_or_default()
                .to_owned(),
            _ => text,
        };
        for (number, line) in text.lines().enumerate() {
            if line.contains(".route(") || line.contains(".nest(") {
                found.push(format!(
                    "{}:{}: {}",
                    path.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
}

#[test]
fn every_route_of_the_described_areas_is_documented() {
    let routes = repo_root().join("crates/server/src/routes");
    let mut found = Vec::new();
    undocumented_routes(&routes, &mut found);
    assert!(
        found.is_empty(),
        "routes added with .route()/.nest() are served but missing from the OpenAPI document; \
         annotate the handler with #[utoipa::path] and mount it with routes!():\n{}",
        found.join("\n")
    );
}

#[tokio::test]
async fn the_document_and_the_reference_page_are_served_without_a_token() {
    let server = TestServer::start().await;
    let client = switchboard_test_support::http_client::http_client();
    let response = client
        .get(server.url("/api/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.text().await.unwrap(), generated_spec());

    let page = client.get(server.url("/api/docs")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let html = page.text().await.unwrap();
    let script = html
        .split("src=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page loads its script");
    assert!(script.ends_with("/api-docs/api-docs.js"), "{html}");
    let script = client.get(server.url(script)).send().await.unwrap();
    assert_eq!(script.status(), 200);
    assert!(script.text().await.unwrap().contains("/api/openapi.json"));
}

/// Checks `instance` against the document's schema `name` (OpenAPI 3.1 schemas are JSON
/// Schema 2020-12; `$ref`s point into the same document's components).
fn assert_matches_schema(document: &Value, name: &str, instance: &Value) {
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": format!("#/components/schemas/{name}"),
        "components": document["components"],
    });
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|error| format!("{error} at {}", error.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "this {name} does not match the spec: {errors:#?}\n{instance:#}"
    );
}

async fn get_json(server: &ChatServer, path: &str) -> (u16, Value) {
    let response = server
        .client
        .get(server.url(path))
        .bearer_auth(&server.token)
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

/// The real answers of a scripted turn (with tool calls), of the conversation, server and
/// caller reads and of a refusal are what the document says they are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_answers_and_events_match_the_document() {
    let document: Value = serde_json::from_str(&generated_spec()).unwrap();
    let server = ChatServer::start(ChatOptions::default()).await;
    let events = server
        .ask_and_wait(serde_json::json!({"message": "What version of the schema am I using?"}))
        .await;
    let types: Vec<&str> = events
        .iter()
        .filter_map(|event| event["type"].as_str())
        .collect();
    assert!(types.contains(&"mcp_tool"), "{types:?}");
    for event in &events {
        assert_matches_schema(&document, "SseEvent", event);
    }
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    let replay = server.attach(&conversation_id).await.until_done().await;
    for event in &replay {
        assert_matches_schema(&document, "SseEvent", event);
    }

    let reads = [
        ("/chat/conversations", "ConversationPage"),
        (
            &*format!("/chat/conversations/{conversation_id}"),
            "ConversationDetailBody",
        ),
        ("/api/mcp/servers", "ServerList"),
        ("/api/me", "Me"),
        ("/api/health", "ChecksDocument"),
        ("/chat/conversations/no-such-id", "ErrorBody"),
    ];
    for (path, schema) in reads {
        let (_, body) = get_json(&server, path).await;
        assert_matches_schema(&document, schema, &body);
    }
    let (_, servers) = get_json(&server, "/api/mcp/servers").await;
    let kg = servers["servers"][0]["id"].as_str().unwrap().to_owned();
    let (status, capabilities) =
        get_json(&server, &format!("/api/mcp/servers/{kg}/capabilities")).await;
    assert_eq!(status, 200, "{capabilities}");
    assert_matches_schema(&document, "CapabilitiesBody", &capabilities);
}
