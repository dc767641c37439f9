//! `/api/mcp/registry/*` end to end against a local MCP registry: an axum router in the test
//! speaking the official registry API (`/v0.1/servers`, `…/versions/{version}`) with
//! `server.json` documents shaped as the official schema writes them. Search goes through;
//! a remote entry pointing at our own kg endpoint is added with its secret header, syncs,
//! and its tools are callable; the same entry without the secret gets a user field; an npm
//! package becomes `npx -y pkg@version …` (admins only); a registry that is down, answers
//! 500 or answers HTML, and a server it does not have, are clear errors.

use crate::support::{
    TestServer, error_of, issue_token, json_of, person_with_token, send, test_config,
};
use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService};
use switchboard_registry::ServerRegistry;
use switchboard_server::directory::{DirectoryConfig, McpDirectory};
use switchboard_store::{DEFAULT_WORKSPACE_NAME, UserRole};
use tokio::net::TcpListener;

/// How the fake registry answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Serving,
    Failing,
    Html,
}

#[derive(Clone)]
struct Registry {
    documents: Arc<Mutex<Vec<Value>>>,
    mode: Arc<Mutex<Mode>>,
}

fn entry(document: &Value) -> Value {
    json!({
        "server": document,
        "_meta": {"io.modelcontextprotocol.registry/official": {
            "status": "active", "isLatest": true,
            "publishedAt": "2026-11-01T10:00:00Z", "updatedAt": "2026-11-01T10:00:00Z"
        }}
    })
}

fn refused(registry: &Registry) -> Option<Response> {
    match *registry.mode.lock().unwrap() {
        Mode::Serving => None,
        Mode::Failing => {
            Some((StatusCode::INTERNAL_SERVER_ERROR, "database is down").into_response())
        }
        Mode::Html => Some(
            (
                [("content-type", "text/html")],
                "<html><body>Welcome to nginx!</body></html>",
            )
                .into_response(),
        ),
    }
}

/// `GET /v0.1/servers?search=&cursor=&limit=`: substring search, the cursor the index to
/// start at.
async fn list(
    State(registry): State<Registry>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refusal) = refused(&registry) {
        return refusal;
    }
    let search = query.get("search").cloned().unwrap_or_default();
    let start: usize = query.get("cursor").map(|c| c.parse().unwrap()).unwrap_or(0);
    let limit: usize = query.get("limit").map(|l| l.parse().unwrap()).unwrap_or(30);
    let documents = registry.documents.lock().unwrap().clone();
    let matching: Vec<&Value> = documents
        .iter()
        .filter(|document| document["name"].as_str().unwrap().contains(&search))
        .collect();
    let page: Vec<Value> = matching
        .iter()
        .skip(start)
        .take(limit)
        .map(|d| entry(d))
        .collect();
    let next = (start + limit < matching.len()).then(|| (start + limit).to_string());
    let count = page.len();
    Json(json!({"servers": page, "metadata": {"nextCursor": next, "count": count}})).into_response()
}

/// `GET /v0.1/servers/{name}/versions/{version}`.
async fn detail(
    State(registry): State<Registry>,
    Path((name, version)): Path<(String, String)>,
) -> Response {
    if let Some(refusal) = refused(&registry) {
        return refusal;
    }
    let documents = registry.documents.lock().unwrap().clone();
    documents
        .iter()
        .find(|document| {
            document["name"] == name.as_str()
                && (version == "latest" || document["version"] == version.as_str())
        })
        .map(|document| Json(entry(document)).into_response())
        .unwrap_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                Json(json!({"error": "Server not found"})),
            )
                .into_response()
        })
}

async fn start_registry() -> (Registry, String) {
    let registry = Registry {
        documents: Arc::default(),
        mode: Arc::new(Mutex::new(Mode::Serving)),
    };
    let router = axum::Router::new()
        .route("/v0.1/servers", get(list))
        .route("/v0.1/servers/{name}/versions/{version}", get(detail))
        .with_state(registry.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v0.1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (registry, url)
}

fn directory(url: &str) -> McpDirectory {
    McpDirectory::new(&DirectoryConfig {
        url: url.into(),
        timeout_secs: 5,
    })
    .unwrap()
}

/// Switchboard with the server registry, our kg endpoint and the MCP registry at `url`.
async fn start(url: &str) -> TestServer {
    let parts: Arc<Mutex<Option<ServerRegistry>>> = Arc::default();
    let captured = parts.clone();
    let directory = directory(url);
    let server = TestServer::start_with(
        test_config(),
        |router| router,
        move |state| {
            let registry = ServerRegistry::new(
                McpClient::new(McpClientConfig::default()).unwrap(),
                state.store.clone(),
            );
            let kg =
                KnowledgeGraphService::for_store(state.store.clone(), KgConfig::default(), None)
                    .unwrap();
            *captured.lock().unwrap() = Some(registry.clone());
            state
                .with_mcp_registry(registry)
                .with_knowledge_graph(kg)
                .with_directory(directory)
        },
    )
    .await;
    parts
        .lock()
        .unwrap()
        .take()
        .unwrap()
        .set_own_listener(server.address);
    server
}

/// Our kg endpoint as a published remote, its bearer token a secret variable.
fn kg_document(address: std::net::SocketAddr) -> Value {
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.switchboard-tests/knowledge-graph",
        "title": "Knowledge graph",
        "description": "Schema and objects of a Switchboard knowledge graph",
        "version": "1.0.0",
        "repository": {"url": "https://github.com/switchboard-tests/kg", "source": "github"},
        "remotes": [{
            "type": "streamable-http",
            "url": format!("http://{address}/mcp"),
            "headers": [{
                "name": "Authorization",
                "description": "A Switchboard token with schema:read",
                "isRequired": true,
                "isSecret": true,
                "value": "Bearer {token}",
                "variables": {"token": {"description": "Switchboard token", "isRequired": true, "isSecret": true}}
            }]
        }]
    })
}

fn npm_document() -> Value {
    json!({
        "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
        "name": "io.github.acme/weather",
        "description": "Weather forecasts",
        "version": "1.2.0",
        "packages": [{
            "registryType": "npm",
            "registryBaseUrl": "https://registry.npmjs.org",
            "identifier": "@acme/weather-mcp",
            "version": "1.2.0",
            "runtimeHint": "npx",
            "transport": {"type": "stdio"},
            "packageArguments": [{"type": "positional", "valueHint": "region", "isRequired": true}],
            "environmentVariables": [
                {"name": "WEATHER_API_KEY", "description": "Weather API key", "isRequired": true, "isSecret": true}
            ]
        }]
    })
}

async fn wait_for_tools(server: &TestServer, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let shown = json_of(
            send(
                server,
                "GET",
                &format!("/api/mcp/servers/{id}"),
                &server.owner_token,
                None,
            )
            .await,
            200,
        )
        .await;
        if shown["tool_count"].as_u64().unwrap_or(0) > 0 {
            return shown;
        }
        assert!(
            Instant::now() < deadline,
            "the added server never synced: {shown}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_server_is_found_added_synced_and_its_tools_answer() {
    let (registry, url) = start_registry().await;
    let server = start(&url).await;
    let owner = server.owner_token.clone();
    {
        let mut documents = registry.documents.lock().unwrap();
        documents.push(kg_document(server.address));
        documents.push(npm_document());
    }

    // Search: the registry's answer, typed, paged with its cursor.
    let found = json_of(
        send(
            &server,
            "GET",
            "/api/mcp/registry/servers?search=knowledge",
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(found["servers"].as_array().unwrap().len(), 1, "{found}");
    let published = &found["servers"][0];
    assert_eq!(
        published["server"]["name"],
        "io.github.switchboard-tests/knowledge-graph"
    );
    assert_eq!(
        published["server"]["remotes"][0]["headers"][0]["isSecret"],
        true
    );
    assert_eq!(published["status"], "active");
    let first = json_of(
        send(
            &server,
            "GET",
            "/api/mcp/registry/servers?limit=1",
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(first["next_cursor"], "1", "{first}");
    let second = json_of(
        send(
            &server,
            "GET",
            "/api/mcp/registry/servers?limit=1&cursor=1",
            &owner,
            None,
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        second["servers"][0]["server"]["name"],
        "io.github.acme/weather"
    );
    assert!(second["next_cursor"].is_null(), "{second}");

    // Add the remote with its token: stored as the server's secret, never echoed.
    let canary = issue_token(
        &server,
        &owner,
        "registry kg",
        &["schema:read", "data:read"],
    )
    .await
    .plaintext;
    let response = send(
        &server,
        "POST",
        "/api/mcp/registry/add",
        &owner,
        Some(json!({
            "server": "io.github.switchboard-tests/knowledge-graph",
            "values": {"token": canary},
        })),
    )
    .await;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    assert_eq!(status, 201, "{text}");
    assert!(!text.contains(&canary), "the secret came back: {text}");
    let added: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(added["name"], "knowledge-graph");
    assert_eq!(added["transport"], "streamable_http");
    assert_eq!(added["secrets"], json!(["headers.Authorization"]));
    let id = added["server"]["id"].as_str().unwrap().to_owned();
    let synced = wait_for_tools(&server, &id).await;
    assert_eq!(synced["sync_status"], "synced", "{synced}");
    let called = json_of(
        send(
            &server,
            "POST",
            &format!("/api/mcp/servers/{id}/tools/schema_version/call"),
            &owner,
            Some(json!({"arguments": {}})),
        )
        .await,
        200,
    )
    .await;
    assert_ne!(called["isError"], true, "{called}");

    // Without the token, each person gives their own: a user field.
    let each = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/registry/add",
            &owner,
            Some(json!({
                "server": "io.github.switchboard-tests/knowledge-graph",
                "version": "1.0.0",
                "name": "kg-each",
            })),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(each["user_fields"], json!(["TOKEN"]), "{each}");
    // The name is taken now.
    let again = send(
        &server,
        "POST",
        "/api/mcp/registry/add",
        &owner,
        Some(json!({
            "server": "io.github.switchboard-tests/knowledge-graph", "name": "kg-each",
        })),
    )
    .await;
    assert_eq!(again.status(), 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_package_becomes_a_stdio_command_that_only_admins_add() {
    let (registry, url) = start_registry().await;
    let server = start(&url).await;
    let owner = server.owner_token.clone();
    registry.documents.lock().unwrap().push(npm_document());
    let body = json!({
        "server": "io.github.acme/weather",
        "values": {"region": "eu-west", "WEATHER_API_KEY": "weather-canary-key"},
        "dry_run": true,
    });
    let preview = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/registry/add",
            &owner,
            Some(body.clone()),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(preview["command"], "npx");
    assert_eq!(
        preview["args"],
        json!(["-y", "@acme/weather-mcp@1.2.0", "eu-west"])
    );
    assert_eq!(preview["secrets"], json!(["env.WEATHER_API_KEY"]));
    assert!(preview["server"].is_null());
    let listed = json_of(
        send(&server, "GET", "/api/mcp/servers", &owner, None).await,
        200,
    )
    .await;
    assert!(
        listed["servers"].as_array().unwrap().is_empty(),
        "a dry run stored: {listed}"
    );

    // A member may not add a program to run on this machine.
    let workspace = server
        .store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .unwrap()
        .unwrap()
        .id;
    let (_, member) = person_with_token(
        &server.store,
        &workspace,
        "bob",
        UserRole::Member,
        "servers:read servers:write",
    )
    .await;
    let mut stored = body.clone();
    stored["dry_run"] = json!(false);
    stored["is_active"] = json!(false);
    let refused = send(
        &server,
        "POST",
        "/api/mcp/registry/add",
        &member,
        Some(stored.clone()),
    )
    .await;
    assert_eq!(refused.status(), 403);

    let added = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/registry/add",
            &owner,
            Some(stored),
        )
        .await,
        201,
    )
    .await;
    let shown = &added["server"];
    assert_eq!(shown["command"], "npx", "{added}");
    assert_eq!(
        shown["args"],
        json!(["-y", "@acme/weather-mcp@1.2.0", "eu-west"])
    );
    assert!(!added.to_string().contains("weather-canary-key"), "{added}");

    // A missing argument and an unknown value are named.
    let (code, message) = error_of(
        send(
            &server,
            "POST",
            "/api/mcp/registry/add",
            &owner,
            Some(json!({
                "server": "io.github.acme/weather", "dry_run": true,
            })),
        )
        .await,
    )
    .await;
    assert_eq!(code, "invalid_request", "{message}");
    assert!(message.contains("argument region is required"), "{message}");
    let (_, message) = error_of(
        send(
            &server,
            "POST",
            "/api/mcp/registry/add",
            &owner,
            Some(json!({
                "server": "io.github.acme/weather", "dry_run": true,
                "values": {"region": "eu", "REGION": "x"},
            })),
        )
        .await,
    )
    .await;
    assert!(
        message.contains("values: REGION is not an input"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_that_fails_is_a_clear_error() {
    let (registry, url) = start_registry().await;
    let server = start(&url).await;
    let owner = server.owner_token.clone();

    let unknown = send(
        &server,
        "POST",
        "/api/mcp/registry/add",
        &owner,
        Some(json!({"server": "io.github.acme/absent"})),
    )
    .await;
    assert_eq!(unknown.status(), 404);
    let (_, message) = error_of(unknown).await;
    assert!(
        message.contains("no server 'io.github.acme/absent' at version 'latest'"),
        "{message}"
    );

    *registry.mode.lock().unwrap() = Mode::Failing;
    let failing = send(&server, "GET", "/api/mcp/registry/servers", &owner, None).await;
    assert_eq!(failing.status(), 502);
    let (_, message) = error_of(failing).await;
    assert!(message.contains("answered HTTP 500"), "{message}");

    *registry.mode.lock().unwrap() = Mode::Html;
    let html = send(&server, "GET", "/api/mcp/registry/servers", &owner, None).await;
    assert_eq!(html.status(), 502);
    let (_, message) = error_of(html).await;
    assert!(
        message.contains("not the registry API's server list"),
        "{message}"
    );

    let bad_limit = send(
        &server,
        "GET",
        "/api/mcp/registry/servers?limit=0",
        &owner,
        None,
    )
    .await;
    assert_eq!(bad_limit.status(), 422);

    // A registry nobody answers at.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_url = format!("http://{}/v0.1", closed.local_addr().unwrap());
    drop(closed);
    let down = start(&closed_url).await;
    let response = send(
        &down,
        "GET",
        "/api/mcp/registry/servers",
        &down.owner_token,
        None,
    )
    .await;
    assert_eq!(response.status(), 502);
    let (_, message) = error_of(response).await;
    assert!(message.contains("did not answer"), "{message}");

    // None configured.
    let plain = TestServer::start().await;
    let response = send(
        &plain,
        "GET",
        "/api/mcp/registry/servers",
        &plain.owner_token,
        None,
    )
    .await;
    assert_eq!(response.status(), 404);
}
