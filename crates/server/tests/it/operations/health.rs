//! `/readyz` is Switchboard's own readiness: every MCP server failing leaves it 200 (with the
//! summary in the body), makes `GET /api/health` DOWN, and makes `/readyz` 503 only with
//! `server.readiness_requires_mcp`.

use crate::support::{TestServer, json_of, send, start_with_registry, test_config};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use switchboard_server::ServerConfig;

/// Registers a stdio server that exits at once and waits until `/api/health` sees it failed.
async fn only_server_failing(server: &TestServer) -> Value {
    let token = server.owner_token.clone();
    json_of(
        send(
            server,
            "POST",
            "/api/mcp/servers",
            &token,
            Some(
                json!({"name": "broken", "transport": "stdio", "command": "sh",
                        "args": ["-c", "exit 3"]}),
            ),
        )
        .await,
        201,
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let response = send(server, "GET", "/api/health", &token, None).await;
        let status = response.status().as_u16();
        let health: Value = response.json().await.unwrap();
        if health["checks"]["mcp_servers"]["status"] == "DOWN" || Instant::now() > deadline {
            assert_eq!(status, 503, "{health}");
            return health;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn readyz(server: &TestServer) -> (u16, Value) {
    let response = server
        .client
        .get(server.url("/readyz"))
        .send()
        .await
        .unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_mcp_servers_leave_readyz_up_and_api_health_down() {
    let server = start_with_registry(test_config()).await;
    let health = only_server_failing(&server).await;
    assert_eq!(health["status"], "DOWN", "{health}");
    assert_eq!(health["checks"]["mcp_servers"]["detail"]["in_error"], 1);
    assert_eq!(health["checks"]["store"]["status"], "UP");

    let (status, ready) = readyz(&server).await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["status"], "UP");
    assert_eq!(ready["checks"]["mcp_servers"]["status"], "DOWN", "{ready}");

    let anonymous = server
        .client
        .get(server.url("/api/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_can_opt_into_requiring_mcp_servers() {
    let config = ServerConfig {
        readiness_requires_mcp: true,
        ..test_config()
    };
    let server = start_with_registry(config).await;
    only_server_failing(&server).await;
    let (status, ready) = readyz(&server).await;
    assert_eq!(status, 503, "{ready}");
    assert_eq!(ready["status"], "DOWN");
}
