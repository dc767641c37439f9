//! `/api/mcp/servers` end to end: a real server on 127.0.0.1:0 with a real store and MCP
//! client, driven over HTTP, with `server-everything` (stdio) as the upstream.

use crate::support::{
    TestServer, error_of, json_of, other_workspace, send, start_with_registry, test_config,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_core::ScopeSet;
use switchboard_test_support::interop::everything_js;

/// Polls the server until `condition` holds on its JSON.
async fn wait_for(
    server: &TestServer,
    id: &str,
    token: &str,
    condition: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let view = json_of(
            send(
                server,
                "GET",
                &format!("/api/mcp/servers/{id}"),
                token,
                None,
            )
            .await,
            200,
        )
        .await;
        if condition(&view) || Instant::now() > deadline {
            return view;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_sync_use_and_remove_a_stdio_server() {
    let server = start_with_registry(test_config()).await;
    let token = server.owner_token.clone();
    let created = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/servers",
            &token,
            Some(json!({
                "name": "everything",
                "transport": "stdio",
                "command": "node",
                "args": [everything_js(), "stdio"],
                "env": {"EVERYTHING_NOTE": "secret-value"}
            })),
        )
        .await,
        201,
    )
    .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["version"], 1);
    assert_eq!(created["env_names"], json!(["EVERYTHING_NOTE"]));
    assert!(!created.to_string().contains("secret-value"));

    // Created servers are synced in the background.
    let view = wait_for(&server, &id, &token, |view| view["sync_status"] == "synced").await;
    assert_eq!(view["sync_status"], "synced", "{view}");
    assert!(view["tool_count"].as_u64().unwrap() >= 10);
    assert_eq!(view["server_info"]["name"], "mcp-servers/everything");
    let listed = json_of(
        send(&server, "GET", "/api/mcp/servers", &token, None).await,
        200,
    )
    .await;
    assert_eq!(listed["servers"][0]["name"], "everything");

    let capabilities = json_of(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}/capabilities"),
            &token,
            None,
        )
        .await,
        200,
    )
    .await;
    let tools = capabilities["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|tool| tool["name"] == "echo" && tool["is_enabled"] == true)
    );
    assert!(!capabilities["prompts"].as_array().unwrap().is_empty());
    assert_eq!(capabilities["sync_status"], "synced");

    let switched = json_of(
        send(
            &server,
            "PATCH",
            &format!("/api/mcp/servers/{id}/tools/echo"),
            &token,
            Some(json!({"is_enabled": false})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(switched["is_enabled"], false);

    let called = json_of(
        send(
            &server,
            "POST",
            &format!("/api/mcp/servers/{id}/tools/get-sum/call"),
            &token,
            Some(json!({"arguments": {"a": 20, "b": 22}})),
        )
        .await,
        200,
    )
    .await;
    assert!(
        called["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("42"),
        "{called}"
    );
    let invalid = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/tools/get-sum/call"),
        &token,
        Some(json!({"arguments": {"a": "x"}})),
    )
    .await;
    assert_eq!(invalid.status(), 422);
    let body: Value = invalid.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_arguments");
    assert!(!body["error"]["details"].as_array().unwrap().is_empty());
    let unknown = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/tools/nope/call"),
        &token,
        Some(json!({})),
    )
    .await;
    assert_eq!(error_of(unknown).await.0, "unknown_tool");

    let tested = json_of(
        send(
            &server,
            "POST",
            &format!("/api/mcp/servers/{id}/test"),
            &token,
            Some(json!({})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(tested["ok"], true, "{tested}");
    assert!(tested["latency_ms"].is_u64() && tested["tool_count"].as_u64().unwrap() >= 10);
    let synced = json_of(
        send(
            &server,
            "POST",
            &format!("/api/mcp/servers/{id}/sync"),
            &token,
            Some(json!({})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(synced["sync_status"], "synced");

    // Optimistic locking.
    let stale = send(
        &server,
        "PATCH",
        &format!("/api/mcp/servers/{id}"),
        &token,
        Some(json!({"version": 0, "timeout_ms": 5000})),
    )
    .await;
    assert_eq!(stale.status(), 409);
    let updated = json_of(
        send(
            &server,
            "PATCH",
            &format!("/api/mcp/servers/{id}"),
            &token,
            Some(json!({"version": 1, "timeout_ms": 5000})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        (updated["version"].as_i64(), updated["timeout_ms"].as_u64()),
        (Some(2), Some(5000))
    );
    assert_eq!(
        updated["env_names"],
        json!(["EVERYTHING_NOTE"]),
        "secrets kept when not sent"
    );

    // A session for a tool call, then delete: the child process goes with the server.
    send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/tools/get-sum/call"),
        &token,
        Some(json!({"arguments": {"a": 1, "b": 1}})),
    )
    .await;
    let view = json_of(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &token,
            None,
        )
        .await,
        200,
    )
    .await;
    let pid = view["sessions"][0]["pid"]
        .as_i64()
        .expect("a stdio session with a pid") as i32;
    let deleted = send(
        &server,
        "DELETE",
        &format!("/api/mcp/servers/{id}"),
        &token,
        None,
    )
    .await;
    assert_eq!(deleted.status(), 204);
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err(),
        "the stdio child is gone"
    );
    assert_eq!(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &token,
            None
        )
        .await
        .status(),
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_are_validated_and_scoped() {
    let server = start_with_registry(test_config()).await;
    let token = server.owner_token.clone();
    let refused = |body: Value| {
        let server = &server;
        let token = token.clone();
        async move {
            let response = send(server, "POST", "/api/mcp/servers", &token, Some(body)).await;
            let status = response.status().as_u16();
            let (code, message) = error_of(response).await;
            (status, code, message)
        }
    };
    let (status, _, message) =
        refused(json!({"name": "bad name", "transport": "stdio", "command": "node"})).await;
    assert_eq!(status, 422);
    assert!(message.starts_with("name:"), "{message}");
    let (status, _, message) = refused(json!({"name": "meta", "transport": "streamable_http", "url": "http://169.254.169.254/latest"})).await;
    assert_eq!(status, 422);
    assert!(
        message.contains("url") && message.contains("metadata"),
        "{message}"
    );
    let (_, _, message) =
        refused(json!({"name": "ws", "transport": "websocket", "url": "https://example.com/"}))
            .await;
    assert!(message.contains("url"), "{message}");
    let (_, _, message) = refused(json!({"name": "inject", "transport": "stdio", "command": "node", "env": {"LD_PRELOAD": "/tmp/x.so"}})).await;
    assert!(
        message.starts_with("env:") && message.contains("LD_PRELOAD"),
        "{message}"
    );
    let (_, _, message) = refused(json!({"name": "mixed", "transport": "stdio", "command": "node", "url": "http://example.com/"})).await;
    assert!(message.starts_with("url:"), "{message}");

    let ok = json!({"name": "remote", "transport": "streamable_http", "url": "https://mcp.example.com/mcp", "api_key": "sk-123"});
    let created = json_of(
        send(
            &server,
            "POST",
            "/api/mcp/servers",
            &token,
            Some(ok.clone()),
        )
        .await,
        201,
    )
    .await;
    assert_eq!(created["has_api_key"], true);
    assert!(!created.to_string().contains("sk-123"));
    let (status, code, _) = refused(ok).await;
    assert_eq!((status, code.as_str()), (409, "conflict"));

    // servers:write without admin may register remote servers but not commands.
    let (_, writer) = other_workspace(
        &server.store,
        "team",
        ScopeSet::parse_list("servers:read servers:write").unwrap(),
    )
    .await;
    let response = send(
        &server,
        "POST",
        "/api/mcp/servers",
        &writer,
        Some(json!({"name": "local", "transport": "stdio", "command": "node"})),
    )
    .await;
    assert_eq!(response.status(), 403);
    assert!(error_of(response).await.1.contains("admin"));
    json_of(
        send(
            &server,
            "POST",
            "/api/mcp/servers",
            &writer,
            Some(
                json!({"name": "remote", "transport": "sse", "url": "https://n8n.example.com/sse"}),
            ),
        )
        .await,
        201,
    )
    .await;
    // Workspaces do not see each other's servers; servers:read cannot change anything.
    let id = created["id"].as_str().unwrap();
    assert_eq!(
        send(
            &server,
            "GET",
            &format!("/api/mcp/servers/{id}"),
            &writer,
            None
        )
        .await
        .status(),
        404
    );
    let (_, reader) = other_workspace(
        &server.store,
        "readers",
        ScopeSet::parse_list("servers:read").unwrap(),
    )
    .await;
    assert_eq!(
        send(&server, "GET", "/api/mcp/servers", &reader, None)
            .await
            .status(),
        200
    );
    let response = send(
        &server,
        "POST",
        "/api/mcp/servers",
        &reader,
        Some(json!({"name": "x", "transport": "sse", "url": "https://a.example/sse"})),
    )
    .await;
    assert_eq!(error_of(response).await.0, "insufficient_scope");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_refuses_credentials_shows_needs_auth_and_readiness_reports_it() {
    let server = start_with_registry(test_config()).await;
    let token = server.owner_token.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let refusing = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            [("www-authenticate", "Bearer realm=\"upstream\"")],
            "no",
        )
    });
    tokio::spawn(async move { axum::serve(listener, refusing).await.unwrap() });
    let created = json_of(
        send(&server, "POST", "/api/mcp/servers", &token, Some(json!({
            "name": "locked", "transport": "streamable_http", "url": format!("http://127.0.0.1:{port}/mcp"),
            "session_scope": "per_user"
        })))
        .await,
        201,
    )
    .await;
    let id = created["id"].as_str().unwrap();
    let response = send(
        &server,
        "POST",
        &format!("/api/mcp/servers/{id}/sync"),
        &token,
        Some(json!({})),
    )
    .await;
    assert_eq!(response.status(), 502, "{:?}", response.text().await);
    assert_eq!(error_of(response).await.0, "needs_auth");
    let view = wait_for(&server, id, &token, |view| {
        view["sync_status"] == "needs_auth"
    })
    .await;
    assert_eq!(view["sync_status"], "needs_auth", "{view}");
    assert_eq!(view["status"], "ERROR");
    let tested = json_of(
        send(
            &server,
            "POST",
            &format!("/api/mcp/servers/{id}/test"),
            &token,
            Some(json!({})),
        )
        .await,
        200,
    )
    .await;
    assert_eq!(
        (tested["ok"].as_bool(), tested["error"]["code"].as_str()),
        (Some(false), Some("needs_auth"))
    );

    let ready = server
        .client
        .get(server.url("/readyz"))
        .send()
        .await
        .unwrap();
    let body: Value = ready.json().await.unwrap();
    assert_eq!(body["checks"]["mcp_servers"]["status"], "DOWN", "{body}");
    assert_eq!(body["checks"]["mcp_servers"]["detail"]["in_error"], 1);
}
