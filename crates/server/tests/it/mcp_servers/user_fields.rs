//! Per-user credentials without OAuth (issue 11) through the API: a server registered at our
//! own kg endpoint (`/mcp`, which wants a bearer token) with `Authorization: Bearer
//! {{user.KG_TOKEN}}`. The person who set their own token lists and calls its tools with it;
//! another without a value gets `needs_user_credentials` and nothing of the first person's;
//! the value is never echoed by any answer; an undeclared field is refused by name.

use crate::support::{TestServer, issue_token, test_config};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use switchboard_mcp_client::{McpClient, McpClientConfig};
use switchboard_mcp_server::{KgConfig, KnowledgeGraphService};
use switchboard_registry::ServerRegistry;
use switchboard_store::{DEFAULT_WORKSPACE_NAME, UserRole};

async fn start() -> TestServer {
    let parts: Arc<Mutex<Option<ServerRegistry>>> = Arc::default();
    let captured = parts.clone();
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
            state.with_mcp_registry(registry).with_knowledge_graph(kg)
        },
    )
    .await;
    let registry = parts.lock().unwrap().take().unwrap();
    registry.set_own_listener(server.address);
    server
}

/// Sends a request as `token`; the status and the body as text (so it can be searched).
async fn send(
    server: &TestServer,
    method: &str,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, String) {
    let request = server
        .client
        .request(method.parse().unwrap(), server.url(path))
        .bearer_auth(token);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_person_reaches_a_server_with_their_own_value_and_no_one_else_does() {
    let server = start().await;
    let owner = server.owner_token.clone();
    let workspace = server
        .store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .unwrap()
        .unwrap()
        .id;
    let (_, bob) = crate::support::person_with_token(
        &server.store,
        &workspace,
        "bob",
        UserRole::Member,
        "servers:read servers:write chat:use",
    )
    .await;
    // The owner's own value: a real token of theirs for the kg endpoint (the canary).
    let canary = issue_token(
        &server,
        &owner,
        "personal kg",
        &["schema:read", "data:read"],
    )
    .await
    .plaintext;
    let mut answers: Vec<String> = Vec::new();

    let (status, created) = send(&server, "POST", "/api/mcp/servers", &owner, Some(json!({
        "name": "kg-personal",
        "transport": "streamable_http",
        "url": format!("http://{}/mcp", server.address),
        "headers": {"Authorization": "Bearer {{user.KG_TOKEN}}"},
        "auth": {"user_fields": {"KG_TOKEN": {"title": "Personal access token", "secret": true}}},
    })))
    .await;
    assert_eq!(status, 201, "{created}");
    let id = json(&created)["id"].as_str().unwrap().to_owned();
    answers.push(created);
    let credentials = format!("/api/mcp/servers/{id}/user-credentials");

    // Nobody has a value yet: the API sync (as the owner) says what is missing, by its title.
    let (status, refused) = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/sync"),
        &owner,
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(json(&refused)["error"]["code"], "needs_user_credentials");
    assert!(refused.contains("Personal access token"), "{refused}");

    // An undeclared field is refused by name; values are never echoed.
    let (status, unknown) = send(
        &server,
        "PUT",
        &credentials,
        &owner,
        Some(json!({"values": {"OTHER": "x-secret"}})),
    )
    .await;
    assert_eq!(status, 422, "{unknown}");
    assert!(
        unknown.contains("OTHER") && !unknown.contains("x-secret"),
        "{unknown}"
    );
    let (status, set) = send(
        &server,
        "PUT",
        &credentials,
        &owner,
        Some(json!({"values": {"KG_TOKEN": canary}})),
    )
    .await;
    assert_eq!(status, 200, "{set}");
    answers.push(set);

    // Setting the values syncs the server as the owner: its tools are listed without a Sync.
    let view = format!("/api/mcp/servers/{id}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (status, shown) = send(&server, "GET", &view, &owner, None).await;
        assert_eq!(status, 200, "{shown}");
        let shown = json(&shown);
        // The sync stores the tool list first and says `synced` last (a `synced` status never
        // lacks its tools), so the tools can show a moment before the status does.
        if shown["tool_count"].as_u64().unwrap_or(0) > 0 && shown["sync_status"] == "synced" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "setting the values never synced the server: {shown}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }

    // The owner lists and calls the kg tools with their own token.
    let (status, synced) = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/sync"),
        &owner,
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{synced}");
    assert!(
        json(&synced)["tool_count"].as_u64().unwrap() > 0,
        "{synced}"
    );
    answers.push(synced);
    let (status, tested) = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/test"),
        &owner,
        Some(json!({})),
    )
    .await;
    assert_eq!(status, 200, "{tested}");
    assert_eq!(json(&tested)["ok"], true, "{tested}");
    answers.push(tested);
    let call = format!("/api/mcp/servers/{id}/tools/schema_version/call");
    let (status, called) = send(
        &server,
        "POST",
        &call,
        &owner,
        Some(json!({"arguments": {}})),
    )
    .await;
    assert_eq!(status, 200, "{called}");
    assert_ne!(json(&called)["isError"], true, "{called}");
    answers.push(called);

    // Bob has no value: the same calls are refused with the code, and the owner's session
    // (carrying the owner's token) is not lent to him.
    for (method, path) in [
        ("POST", call.clone()),
        ("POST", format!("/api/mcp/servers/{id}/test")),
        ("POST", format!("/api/mcp/servers/{id}/sync")),
    ] {
        let body = if path.ends_with("/call") {
            json!({"arguments": {}})
        } else {
            json!({})
        };
        let (status, refused) = send(&server, method, &path, &bob, Some(body)).await;
        assert_eq!(status, 409, "{path}: {refused}");
        assert_eq!(
            json(&refused)["error"]["code"],
            "needs_user_credentials",
            "{refused}"
        );
        assert!(
            refused.contains("needs your Personal access token"),
            "{refused}"
        );
        answers.push(refused);
    }

    // No answer of the scenario ever carries the value.
    for path in [
        "/api/mcp/servers".to_owned(),
        format!("/api/mcp/servers/{id}"),
        format!("/api/mcp/servers/{id}/capabilities"),
        "/api/audit".to_owned(),
    ] {
        let (status, body) = send(&server, "GET", &path, &owner, None).await;
        assert_eq!(status, 200, "{path}: {body}");
        answers.push(body);
    }
    for answer in &answers {
        assert!(!answer.contains(&canary), "the value leaked: {answer}");
    }
}
