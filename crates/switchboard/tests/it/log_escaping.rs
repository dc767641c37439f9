//! Text from the wire cannot forge or flood log lines: a JSON-RPC id holding a newline and an
//! ANSI escape, and a 2 MB argument, sent to our own `/mcp` with a log filter that lets rmcp
//! log every request, leave short lines with the id escaped.

use crate::process::{ADMIN_TOKEN, Service, command};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;

/// The binary's own cap on a log line (`telemetry::MAX_LOG_LINE_BYTES`) and room for the
/// `…(N bytes)` suffix.
const LONGEST_LOG_LINE: usize = 8 * 1024 + 64;
const FORGED_ID: &str = "7\nERROR forged line \u{1b}[31mred";

async fn post(
    client: &reqwest::Client,
    service: &Service,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = client
        .post(service.url("/mcp"))
        .bearer_auth(ADMIN_TOKEN)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_id_and_a_huge_argument_leave_short_escaped_log_lines() {
    let data_dir = tempfile::tempdir().unwrap();
    let log_path = data_dir.path().join("stderr.log");
    let log_file = std::fs::File::create(&log_path).unwrap();
    let mut serve = command(data_dir.path());
    serve
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("SWITCHBOARD_LOG_FILTER", "info,rmcp=debug");
    let service = Service::start_command_with_stderr(serve, Stdio::from(log_file));
    let client = switchboard_test_support::http_client::http_client();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "log-test", "version": "1"}}});
    let response = post(&client, &service, None, &initialize).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&client, &service, Some(&session), &initialized).await;
    let call = json!({"jsonrpc": "2.0", "id": FORGED_ID, "method": "tools/call", "params": {
        "name": "search_objects", "arguments": {"query": "x".repeat(2_000_000)}}});
    let answer = post(&client, &service, Some(&session), &call).await;
    assert!(answer.status().is_success(), "{}", answer.status());
    let _ = answer.text().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    service.terminate(Duration::from_secs(30));

    let log = std::fs::read(&log_path).unwrap();
    let log = String::from_utf8_lossy(&log);
    assert!(!log.contains('\u{1b}'), "an ANSI escape reached the log");
    assert!(
        !log.lines().any(|line| line.starts_with("ERROR forged")),
        "the id forged a log line"
    );
    assert!(
        log.contains(r"7\nERROR forged line \u{1b}[31mred"),
        "the id is logged escaped, on its request's line"
    );
    let longest = log.lines().map(str::len).max().unwrap_or(0);
    assert!(longest <= LONGEST_LOG_LINE, "a log line of {longest} bytes");
    assert!(log.len() < 512 * 1024, "{} bytes of log", log.len());
}
