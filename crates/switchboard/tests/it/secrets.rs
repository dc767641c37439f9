//! Secrets stay secret (security and reliability at scale, target 12): canary values for the
//! LLM key, a stdio server's environment, a remote server's header and API key, a person's own
//! value for a server's user field (sent as a header), and the caller's API token are used for a
//! whole session — registration, sync, a chat whose model calls tools on the three servers,
//! reads of every API that shows servers, conversations and the audit log — with logging at
//! `trace`.
//! Not one canary may appear in the log, an API answer, an audit row, the model's messages or
//! the plaintext of the database files.

use crate::chat::with_model;
use crate::process::{ADMIN_TOKEN, Service};
use futures::StreamExt;
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::interop::{Peer, everything_js};

const LLM_KEY: &str = "sk-canary-llm-7f3a9c1e";
const ENV_SECRET: &str = "canary-env-51d2e8f0";
const HEADER_SECRET: &str = "canary-header-a04b6f2d";
const API_KEY: &str = "canary-apikey-c93e1177";
const USER_FIELD: &str = "canary-userfield-6e0b42a9";
const CANARIES: [&str; 6] = [
    LLM_KEY,
    ENV_SECRET,
    HEADER_SECRET,
    API_KEY,
    USER_FIELD,
    ADMIN_TOKEN,
];

/// Every answer body the test read, to search for canaries at the end.
#[derive(Default)]
struct Answers(Vec<String>);

impl Answers {
    async fn send(&mut self, request: reqwest::RequestBuilder) -> (u16, Value) {
        let response = request.bearer_auth(ADMIN_TOKEN).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        self.0.push(text.clone());
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn chat(&mut self, client: &reqwest::Client, service: &Service, message: &str) {
        let response = client
            .post(service.url("/chat/stream"))
            .bearer_auth(ADMIN_TOKEN)
            .json(&json!({"message": message}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let mut body = String::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            body.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            if body.contains("\"type\":\"done\"") {
                break;
            }
        }
        assert!(body.contains("\"status\":\"completed\""), "{body}");
        self.0.push(body);
    }
}

fn assert_no_canary(place: &str, text: &str) {
    for canary in CANARIES {
        assert!(!text.contains(canary), "{canary} found in {place}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn canary_secrets_never_appear_in_logs_answers_audit_model_or_database() {
    let peer = Peer::everything_http();
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[
        ScriptedToolCall::new("call_1", "local__echo", json!({"message": "one"})),
        ScriptedToolCall::new("call_2", "remote__echo", json!({"message": "two"})),
        ScriptedToolCall::new("call_3", "personal__echo", json!({"message": "three"})),
    ]));
    fake.enqueue(ScriptedReply::text(&["Both echoed."]));
    let data_dir = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log_path = logs.path().join("stderr.log");
    let mut serve = with_model(data_dir.path(), &fake);
    serve
        .env("SWITCHBOARD_LLM_API_KEY", LLM_KEY)
        .env("SWITCHBOARD_LOG_FILTER", "trace");
    let service = Service::start_command_with_stderr(
        serve,
        Stdio::from(std::fs::File::create(&log_path).unwrap()),
    );
    let client = switchboard_test_support::http_client::http_client();
    let mut answers = Answers::default();

    let servers = service.url("/api/mcp/servers");
    let (status, local) = answers
        .send(client.post(&servers).json(&json!({
            "name": "local", "transport": "stdio", "command": "node",
            "args": [everything_js(), "stdio"], "env": {"EVERYTHING_TOKEN": ENV_SECRET}})))
        .await;
    assert_eq!(status, 201, "{local}");
    let (status, remote) = answers
        .send(client.post(&servers).json(&json!({
            "name": "remote", "transport": "streamable_http",
            "url": format!("http://127.0.0.1:{}/mcp", peer.port),
            "headers": {"X-Canary-Key": HEADER_SECRET}, "api_key": API_KEY})))
        .await;
    assert_eq!(status, 201, "{remote}");
    let (status, personal) = answers
        .send(client.post(&servers).json(&json!({
            "name": "personal", "transport": "streamable_http",
            "url": format!("http://127.0.0.1:{}/mcp", peer.port),
            "headers": {"X-Personal-Token": "{{user.PERSONAL_TOKEN}}"},
            "auth": {"user_fields": {"PERSONAL_TOKEN": {"title": "Personal token", "secret": true}}}})))
        .await;
    assert_eq!(status, 201, "{personal}");
    let personal_id = personal["id"].as_str().unwrap();
    let (status, set) = answers
        .send(
            client
                .put(service.url(&format!("/api/mcp/servers/{personal_id}/user-credentials")))
                .json(&json!({"values": {"PERSONAL_TOKEN": USER_FIELD}})),
        )
        .await;
    assert_eq!(status, 200, "{set}");
    for server in [&local, &remote, &personal] {
        let id = server["id"].as_str().unwrap();
        let (status, tested) = answers
            .send(
                client
                    .post(service.url(&format!("/api/mcp/servers/{id}/test")))
                    .json(&json!({})),
            )
            .await;
        assert_eq!(status, 200, "{tested}");
    }

    answers
        .chat(&client, &service, "echo on the three servers")
        .await;
    let turn = answers.0.last().unwrap();
    assert_eq!(
        turn.matches("\"status\":\"completed\"").count(),
        3,
        "each server's call completed, the personal one with the user field's value: {turn}"
    );
    let (_, conversations) = answers
        .send(client.get(service.url("/api/conversations")))
        .await;
    if let Some(id) = conversations["conversations"][0]["id"].as_str() {
        answers
            .send(client.get(service.url(&format!("/api/conversations/{id}"))))
            .await;
        answers
            .send(client.get(service.url(&format!("/api/conversations/{id}/messages"))))
            .await;
    }
    for path in [
        "/api/mcp/servers",
        "/api/audit?limit=500",
        "/api/me",
        "/metrics",
    ] {
        answers.send(client.get(service.url(path))).await;
    }
    for server in [&local, &remote, &personal] {
        let id = server["id"].as_str().unwrap();
        answers
            .send(client.get(service.url(&format!("/api/mcp/servers/{id}"))))
            .await;
    }

    service.terminate(Duration::from_secs(30));

    let log = String::from_utf8_lossy(&std::fs::read(&log_path).unwrap()).into_owned();
    assert!(
        log.lines().count() > 100,
        "trace logging is on: {} lines",
        log.lines().count()
    );
    assert_no_canary("the trace log", &log);
    for answer in &answers.0 {
        assert_no_canary("an API answer", answer);
    }
    for request in fake.requests() {
        assert_no_canary("the model's messages", &request.body.to_string());
    }
    for entry in std::fs::read_dir(data_dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert_no_canary(
                &path.display().to_string(),
                &String::from_utf8_lossy(&bytes),
            );
        }
    }
}
