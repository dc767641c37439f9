//! The chat through the real binary: the six example questions from a fresh start with no key
//! (the embedded defaults), and a `kill -9` in the middle of a tool call — after the restart
//! the question, the call (now `unknown`) and everything before it are there, the call is not
//! run again, and the conversation goes on.

use crate::process::{ADMIN_TOKEN, Service, command};
use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
pub(crate) use switchboard_test_support::interop::everything_js;

/// Reads SSE events until `done` (or until `stop_at` returns true); returns them.
async fn events_until(response: reqwest::Response, stop_at: impl Fn(&Value) -> bool) -> Vec<Value> {
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut buffer = String::new();
    let mut events = Vec::new();
    while let Some(chunk) = stream.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|line| line.strip_prefix("data: ")) {
                let event: Value = serde_json::from_str(data).unwrap();
                let last = event["type"] == "done" || stop_at(&event);
                events.push(event);
                if last {
                    return events;
                }
            }
        }
    }
    panic!("the answer stream ended early: {events:#?}");
}

pub(crate) fn ask(
    client: &reqwest::Client,
    service: &Service,
    body: Value,
) -> reqwest::RequestBuilder {
    client
        .post(service.url("/chat/stream"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&body)
}

fn text_of(events: &[Value]) -> String {
    events
        .iter()
        .filter_map(|event| event["token"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_questions_work_from_a_fresh_start_without_a_key() {
    let data_dir = tempfile::tempdir().unwrap();
    let service = Service::start(data_dir.path());
    let client = switchboard_test_support::http_client::http_client();
    for (question, tool) in [
        (
            "What types of objects are in my knowledge base?",
            "type_info",
        ),
        ("What's the schema version?", "schema_version"),
        (
            "Show me the recent changes to the schema",
            "schema_changelog",
        ),
        ("Tell me about the Document type", "type_info"),
        (
            "What relationships can I create between Documents and Projects?",
            "relationship_info",
        ),
        (
            "Show me Projects related to the Product Roadmap document",
            "traverse",
        ),
    ] {
        let response = ask(&client, &service, json!({"message": question}))
            .send()
            .await
            .unwrap();
        let events = events_until(response, |_| false).await;
        assert_eq!(events[0]["provider"], "offline", "{question}");
        let completed: Vec<&Value> = events
            .iter()
            .filter(|event| event["type"] == "mcp_tool" && event["status"] == "completed")
            .collect();
        assert!(
            completed
                .iter()
                .any(|event| event["server"] == "kg" && event["tool"] == tool),
            "{question}: {events:#?}"
        );
        assert!(
            events.iter().all(|event| event["type"] != "error"),
            "{question}: {events:#?}"
        );
        assert!(!text_of(&events).trim().is_empty(), "{question}");
    }
}

pub(crate) fn with_model(data_dir: &std::path::Path, fake: &FakeOpenAi) -> std::process::Command {
    let mut command = command(data_dir);
    command
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("SWITCHBOARD_LLM_PROVIDER", "openai")
        .env("SWITCHBOARD_LLM_BASE_URL", fake.base_url())
        .env("SWITCHBOARD_LLM_MODEL", "fake-model")
        .env("SWITCHBOARD_APPROVAL_DEFAULT_POLICY", "ALWAYS_ALLOW");
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_9_mid_call_loses_nothing_and_the_call_is_never_run_again() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_slow",
        "everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    )]));
    fake.enqueue(ScriptedReply::text(&[
        "It may or may not have run; I did not run it again.",
    ]));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let service = Service::start_command(with_model(data_dir.path(), &fake));
    let registered = client
        .post(service.url("/api/mcp/servers"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "everything", "transport": "stdio", "command": "node", "args": [everything_js(), "stdio"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        registered.status(),
        201,
        "{}",
        registered.text().await.unwrap()
    );

    let response = ask(
        &client,
        &service,
        json!({"message": "run the long operation"}),
    )
    .send()
    .await
    .unwrap();
    let events = events_until(response, |event| {
        event["type"] == "mcp_tool" && event["status"] == "started"
    })
    .await;
    let conversation_id = events[0]["conversation_id"].as_str().unwrap().to_owned();
    service.kill_9();

    let service = Service::start_command(with_model(data_dir.path(), &fake));
    let detail: Value = client
        .get(service.url(&format!("/chat/conversations/{conversation_id}")))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let roles: Vec<&str> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant"],
        "the question and the call were saved before the crash: {detail:#}"
    );
    assert_eq!(
        detail["messages"][1]["tool_calls"][0]["state"], "unknown",
        "{detail:#}"
    );
    assert_eq!(detail["tool_calls"][0]["state"], "unknown");

    let response = ask(
        &client,
        &service,
        json!({"conversation_id": conversation_id, "message": "did it finish?"}),
    )
    .send()
    .await
    .unwrap();
    let events = events_until(response, |_| false).await;
    assert!(
        events.iter().all(|event| event["type"] != "mcp_tool"),
        "nothing is run again: {events:#?}"
    );
    assert_eq!(
        text_of(&events),
        "It may or may not have run; I did not run it again."
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let tool_message = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_message["tool_call_id"], "call_slow");
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("outcome_unknown"),
        "{tool_message}"
    );
}
