//! The binary's logs under its default filter: ordinary upstream events — a refused
//! connection, a name that does not resolve, JSON-RPC error answers of our own MCP server, a
//! shutdown with sessions open — give one line each at the right level in Switchboard's own
//! words, never an rmcp ERROR or one WARN per answer.

use crate::process::{ADMIN_TOKEN, Service};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

async fn api(service: &Service, method: reqwest::Method, path: &str, body: Value) -> Value {
    let response = switchboard_test_support::http_client::http_client()
        .request(method, service.url(path))
        .bearer_auth(ADMIN_TOKEN)
        .json(&body)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap_or(Value::Null)
}

/// The server named `name` once `condition` holds (or after 60 s).
async fn server_when(service: &Service, name: &str, condition: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = api(
            service,
            reqwest::Method::GET,
            "/api/mcp/servers",
            Value::Null,
        )
        .await;
        let found = listed["servers"]
            .as_array()
            .and_then(|servers| servers.iter().find(|server| server["name"] == name))
            .cloned()
            .unwrap_or(Value::Null);
        if condition(&found) || Instant::now() > deadline {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_upstream_failures_log_one_line_each_and_no_rmcp_errors() {
    let data_dir = tempfile::tempdir().unwrap();
    let log_path = data_dir.path().join("stderr.log");
    let mut command = crate::process::command(data_dir.path());
    command
        .env_remove("SWITCHBOARD_LOG_FILTER")
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN);
    let log_file = std::fs::File::create(&log_path).unwrap();
    let service = Service::start_command_with_stderr(command, log_file.into());

    let closed_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for (name, url) in [
        ("refused", format!("http://127.0.0.1:{closed_port}/mcp")),
        ("nowhere", "http://no-such-host.invalid/mcp".to_owned()),
    ] {
        api(
            &service,
            reqwest::Method::POST,
            "/api/mcp/servers",
            json!({"name": name, "transport": "streamable_http", "url": url}),
        )
        .await;
        let server = server_when(&service, name, |server| server["sync_status"] == "error").await;
        assert_eq!(server["sync_status"], "error", "{server}");
    }

    // Our own MCP server answering JSON-RPC errors (an unknown type), through the built-in kg.
    let kg = server_when(&service, "kg", |server| server["sync_status"] == "synced").await;
    let kg_id = kg["id"].as_str().unwrap().to_owned();
    for _ in 0..5 {
        let answer = api(
            &service,
            reqwest::Method::POST,
            &format!("/api/mcp/servers/{kg_id}/tools/type_info/call"),
            json!({"arguments": {"type_name": "NoSuchType"}}),
        )
        .await;
        assert!(answer.to_string().contains("NoSuchType"), "{answer}");
    }
    service.terminate(Duration::from_secs(30));

    let logs = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<&str> = logs.lines().collect();
    let errors: Vec<&&str> = lines.iter().filter(|line| line.contains("ERROR")).collect();
    assert!(errors.is_empty(), "ERROR lines:\n{logs}");
    let from_rmcp: Vec<&&str> = lines.iter().filter(|line| line.contains(" rmcp")).collect();
    assert!(from_rmcp.is_empty(), "rmcp lines:\n{logs}");
    for name in ["refused", "nowhere"] {
        let warnings = lines
            .iter()
            .filter(|line| line.contains(" WARN ") && line.contains(name))
            .count();
        // One line for the failed sync at registration; the start-up pass that finds the
        // server still in its retry delay attempts nothing and says nothing at `warn`.
        assert_eq!(warnings, 1, "{name}:\n{logs}");
    }
}
