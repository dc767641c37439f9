//! Switchboard's own knowledge-graph server as upstream `kg` in `/api/mcp/servers`, with the
//! real kg endpoint mounted at `/mcp`: the registry lists it with a listing-only service token of
//! its own (so it shows synced with its tools, and pins are re-checked on those syncs); no
//! request may set or remove the own-endpoint marker or change what Switchboard manages; and
//! deleting it revokes the token.

use crate::support::{TestServer, test_config};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_approvals::{ApprovalConfig, Approvals};
use switchboard_core::{ApprovalPolicy, WorkspaceId};
use switchboard_mcp_client::{McpClient, McpClientConfig, Url};
use switchboard_mcp_server::{KgConfig, KgTool, KnowledgeGraphService, register_kg_upstream};
use switchboard_registry::OWN_ENDPOINT_SYNC_TOKEN;
use switchboard_registry::ServerRegistry;
use switchboard_store::{DEFAULT_WORKSPACE_NAME, NewToolPolicy, ServerRecord};

struct KgHarness {
    server: TestServer,
    registry: ServerRegistry,
    workspace: WorkspaceId,
    kg: ServerRecord,
    own_url: Url,
}

async fn start() -> KgHarness {
    let parts: Arc<Mutex<Option<(ServerRegistry, Approvals)>>> = Arc::default();
    let captured = parts.clone();
    let server = TestServer::start_with(
        test_config(),
        |router| router,
        move |state| {
            let registry = ServerRegistry::new(
                McpClient::new(McpClientConfig {
                    session_init_backoff_ms: 50,
                    session_error_retry_secs: 1,
                    ..McpClientConfig::default()
                })
                .unwrap(),
                state.store.clone(),
            );
            let approvals = Approvals::new(state.store.clone(), ApprovalConfig::default()).unwrap();
            registry.on_synced(approvals.synced_handler());
            // No default workspace: nothing here needs the sample dataset or anonymous access.
            // A revoked token is noticed after a second (see the renewal below).
            let config = KgConfig {
                token_cache_secs: 1,
                ..KgConfig::default()
            };
            let kg = KnowledgeGraphService::for_store(state.store.clone(), config, None).unwrap();
            *captured.lock().unwrap() = Some((registry.clone(), approvals.clone()));
            state
                .with_mcp_registry(registry)
                .with_approvals(approvals)
                .with_knowledge_graph(kg)
        },
    )
    .await;
    let (registry, _approvals) = parts.lock().unwrap().take().unwrap();
    let workspace = server
        .store
        .find_workspace_by_name(DEFAULT_WORKSPACE_NAME)
        .await
        .unwrap()
        .unwrap()
        .id;
    // Registered as the binary does at its first start — here with a port that is not ours
    // any more, as after a restart on another port.
    register_kg_upstream(&server.store, &workspace, "http://127.0.0.1:9/mcp")
        .await
        .unwrap();
    let kg = server
        .store
        .find_server_by_name(&workspace, "kg")
        .await
        .unwrap()
        .unwrap();
    registry.set_own_listener(server.address);
    let own_url = Url::parse(&format!("http://{}/mcp", server.address)).unwrap();
    KgHarness {
        server,
        registry,
        workspace,
        kg,
        own_url,
    }
}

async fn send(server: &TestServer, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let request = server
        .client
        .request(method.parse().unwrap(), server.url(path))
        .bearer_auth(&server.owner_token);
    let request = match body {
        Some(body) => request.json(&body),
        None => request,
    };
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// `kg` as `GET /api/mcp/servers` lists it, once `condition` holds (or after 30 s).
async fn listed_kg(server: &TestServer, condition: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, listed) = send(server, "GET", "/api/mcp/servers", None).await;
        assert_eq!(status, 200, "{listed}");
        let kg = listed["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|server| server["name"] == "kg")
            .cloned()
            .unwrap();
        if condition(&kg) || Instant::now() > deadline {
            return kg;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The registry's usable service tokens.
async fn sync_tokens_now(server: &TestServer) -> Vec<Value> {
    let (_, tokens) = send(server, "GET", "/api/tokens", None).await;
    tokens
        .as_array()
        .unwrap_or_else(|| panic!("{tokens}"))
        .iter()
        .filter(|token| token["name"] == OWN_ENDPOINT_SYNC_TOKEN && token["revoked_at"].is_null())
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_syncs_our_own_kg_server_with_a_listing_token_of_its_own() {
    let harness = start().await;
    let server = &harness.server;
    // A rule pinned to a definition the kg tool does not have (any more): the next sync of kg
    // must report it.
    server
        .store
        .set_tool_policy(
            &harness.workspace,
            NewToolPolicy {
                server_id: harness.kg.id.clone(),
                tool_name: "schema_version".into(),
                policy: ApprovalPolicy::AlwaysAllow,
                pinned_definition_hash: Some("a-definition-from-long-ago".into()),
                updated_by: None,
            },
        )
        .await
        .unwrap();
    let before = listed_kg(server, |_| true).await;
    assert_eq!(before["has_api_key"], false);

    let prepared = harness
        .registry
        .prepare_own_endpoints(&harness.own_url)
        .await
        .unwrap();
    assert_eq!(prepared, 1);
    let kg = listed_kg(server, |kg| kg["sync_status"] == "synced").await;
    assert_eq!(kg["sync_status"], "synced", "{kg}");
    assert_eq!(kg["url"], harness.own_url.as_str(), "{kg}");
    assert_eq!(kg["tool_count"], KgTool::ALL.len(), "{kg}");
    assert_eq!(kg["has_api_key"], true);
    assert_eq!(kg["error_code"], Value::Null, "{kg}");
    assert_eq!(kg["managed_by_switchboard"], true);
    let (_, capabilities) = send(
        server,
        "GET",
        &format!("/api/mcp/servers/{}/capabilities", harness.kg.id),
        None,
    )
    .await;
    assert!(
        capabilities["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["name"] == "schema_version"),
        "{capabilities}"
    );

    // The token: the scopes of kg's tools, listed like any other, and the same one at the next
    // start.
    let (_, tokens) = send(server, "GET", "/api/tokens", None).await;
    let sync_tokens: Vec<&Value> = tokens
        .as_array()
        .unwrap_or_else(|| panic!("{tokens}"))
        .iter()
        .filter(|token| token["name"] == OWN_ENDPOINT_SYNC_TOKEN)
        .collect();
    assert_eq!(sync_tokens.len(), 1, "{tokens}");
    assert_eq!(
        sync_tokens[0]["scopes"],
        json!(["schema:read", "data:read", "data:write"])
    );
    // The user it acts as is listed, but as Switchboard's own, not as a person; and its name
    // cannot be given to a new user.
    let (_, users) = send(server, "GET", "/api/users", None).await;
    let listed: Vec<(&str, &Value)> = users
        .as_array()
        .unwrap_or_else(|| panic!("{users}"))
        .iter()
        .map(|user| (user["name"].as_str().unwrap(), &user["internal"]))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("owner", &json!(false)),
            ("switchboard-capability-sync", &json!(true))
        ],
        "{users}"
    );
    let service_user = &users.as_array().unwrap()[1];
    assert_eq!(sync_tokens[0]["user_id"], service_user["id"]);
    let (status, refused) = send(
        server,
        "POST",
        "/api/users",
        Some(json!({"name": "switchboard-capability-sync"})),
    )
    .await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(
        refused["error"]["message"],
        "name: 'switchboard-capability-sync' is reserved for Switchboard's own service user"
    );
    harness
        .registry
        .prepare_own_endpoints(&harness.own_url)
        .await
        .unwrap();
    assert_eq!(sync_tokens_now(server).await.len(), 1);

    // A revoked token is replaced on the next sync, which succeeds.
    let old_token = sync_tokens_now(server).await;
    assert_eq!(old_token.len(), 1);
    let (status, _) = send(
        server,
        "DELETE",
        &format!("/api/tokens/{}", old_token[0]["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let (status, synced) = send(
        server,
        "POST",
        &format!("/api/mcp/servers/{}/sync", harness.kg.id),
        None,
    )
    .await;
    assert_eq!(status, 200, "{synced}");
    assert_eq!(synced["sync_status"], "synced", "{synced}");
    let renewed = sync_tokens_now(server).await;
    assert_eq!(renewed.len(), 1, "{renewed:?}");
    assert_ne!(renewed[0]["id"], old_token[0]["id"]);

    // Pins were re-checked on that sync.
    let deadline = Instant::now() + Duration::from_secs(10);
    let drift = loop {
        let (_, audit) = send(
            server,
            "GET",
            "/api/audit?action=tool_definition.changed",
            None,
        )
        .await;
        let found = audit["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|entry| entry["target"] == "kg/schema_version")
            .cloned();
        if found.is_some() || Instant::now() > deadline {
            break found;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(drift.is_some(), "no tool_definition.changed for kg");
    harness.registry.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_own_endpoint_marker_and_what_switchboard_manages_cannot_be_changed() {
    let harness = start().await;
    let server = &harness.server;
    harness
        .registry
        .prepare_own_endpoints(&harness.own_url)
        .await
        .unwrap();
    let kg_path = format!("/api/mcp/servers/{}", harness.kg.id);

    // Nobody may mark a server of theirs as our own endpoint…
    let (status, body) = send(
        server,
        "POST",
        "/api/mcp/servers",
        Some(json!({
            "name": "impostor",
            "transport": "streamable_http",
            "url": "http://127.0.0.1:9/mcp",
            "switchboard_own_kg_endpoint": true
        })),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("switchboard_own_kg_endpoint:"),
        "{message}"
    );
    let (status, body) = send(server, "GET", "/api/mcp/servers", None).await;
    assert_eq!(status, 200);
    assert!(!body.to_string().contains("impostor"));

    // …nor unmark, re-point or re-key ours.
    let (status, current) = send(server, "GET", &kg_path, None).await;
    assert_eq!(status, 200, "{current}");
    let version = current["version"].as_i64().unwrap();
    // Another replica starts meanwhile and stores its own listener: no conflict for the edit
    // below, made with the version read before, which keeps that stored URL (the API shows
    // this replica's own `/mcp`).
    let other_replica = Url::parse("http://127.0.0.1:9/mcp").unwrap();
    harness
        .registry
        .prepare_own_endpoints(&other_replica)
        .await
        .unwrap();
    for (mut change, field) in [
        (
            json!({"switchboard_own_kg_endpoint": false}),
            "switchboard_own_kg_endpoint",
        ),
        (json!({"url": "http://evil.example/mcp"}), "url"),
        (json!({"api_key": "sb_mine"}), "api_key"),
        (json!({"headers": {"X-Api-Key": "x"}}), "headers"),
        (json!({"name": "graph"}), "name"),
    ] {
        change["version"] = json!(version);
        let (status, body) = send(server, "PATCH", &kg_path, Some(change.clone())).await;
        assert_eq!(status, 422, "{change}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("{field}:")), "{message}");
    }
    // What stays editable, and the marker survives it.
    let (status, body) = send(
        server,
        "PATCH",
        &kg_path,
        Some(
            json!({"version": version, "is_active": false, "timeout_ms": 20000, "init_timeout_ms": 4000}),
        ),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["managed_by_switchboard"], true);
    assert_eq!(body["init_timeout_ms"], 4000);
    assert_eq!(body["url"], harness.own_url.as_str());
    let stored = server
        .store
        .get_server(&harness.workspace, &harness.kg.id)
        .await
        .unwrap();
    assert!(ServerRegistry::is_marked_own_endpoint(&stored));
    assert_eq!(stored.url.as_deref(), Some(other_replica.as_str()));

    // An invalid init timeout is named.
    let (status, body) = send(
        server,
        "PATCH",
        &kg_path,
        Some(json!({"version": body["version"], "init_timeout_ms": 5})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("init_timeout_ms:"),
        "{body}"
    );

    // Deleting it revokes the registry's token.
    let token = server
        .store
        .server_secrets(&harness.workspace, &harness.kg.id)
        .await
        .unwrap()
        .api_key
        .unwrap();
    assert!(server.store.authenticate(&token).await.unwrap().is_some());
    let (status, _) = send(server, "DELETE", &kg_path, None).await;
    assert_eq!(status, 204);
    assert!(server.store.authenticate(&token).await.unwrap().is_none());
    harness.registry.shutdown().await;
}
