//! A tool call that became a task survives a `kill -9` of Switchboard, and a SIGTERM (a
//! graceful shutdown whose 1 s grace ends while the task works: the task is left working, not
//! cancelled, and the call is not marked `unknown`): the task's id is kept with the call, the
//! restarted process polls the same task (on a fixture server built on rmcp's server side and
//! `TaskManager`, running in this test so it outlives the host) and stores its result as the
//! call's outcome, tool message and audit row; the tool ran exactly once. The call timeout
//! (1 s) is shorter than the task.

use crate::chat::{ask, with_model};
use crate::process::{ADMIN_TOKEN, Service};
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::task_server::TaskServer;

fn with_short_call_timeout(data_dir: &std::path::Path, fake: &FakeOpenAi) -> std::process::Command {
    let mut command = with_model(data_dir, fake);
    command
        .env("SWITCHBOARD_MCP_TOOL_CALL_TIMEOUT_SECS", "1")
        .env("SWITCHBOARD_MCP_TOOL_CALL_MAX_TIMEOUT_SECS", "1")
        .env("SWITCHBOARD_SERVER_SHUTDOWN_GRACE_SECS", "1");
    command
}

/// The conversation's call as stored (state, task id), read with no process running.
async fn stored_call(
    data_dir: &std::path::Path,
    conversation_id: &str,
) -> (String, Option<String>) {
    use sqlx::ConnectOptions;
    let mut connection = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(data_dir.join("switchboard.db"))
        .connect()
        .await
        .unwrap();
    sqlx::query_as("SELECT state, task_id FROM tool_calls WHERE conversation_id = ?1")
        .bind(conversation_id)
        .fetch_one(&mut connection)
        .await
        .unwrap()
}

/// How the first process ends while the task works.
#[derive(Clone, Copy, Debug)]
enum Stop {
    Kill9,
    Sigterm,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_call_survives_a_kill_9_and_its_result_is_stored_after_the_restart() {
    survives(Stop::Kill9, 4).await;
}

/// The drain waits for answers in flight at most the 1 s grace; the task takes 8 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_call_survives_a_sigterm_uncancelled_and_its_result_is_stored_after_the_restart() {
    survives(Stop::Sigterm, 8).await;
}

async fn survives(stop: Stop, seconds: u64) {
    let tasks = TaskServer::start().await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "call_report",
        "reports__slow_report",
        json!({"topic": "tides", "seconds": seconds}),
    )]));
    let data_dir = tempfile::tempdir().unwrap();
    let client = switchboard_test_support::http_client::http_client();
    let service = Service::start_command(with_short_call_timeout(data_dir.path(), &fake));
    let registered = client
        .post(service.url("/api/mcp/servers"))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({"name": "reports", "transport": "streamable_http", "url": tasks.url()}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        registered.status(),
        201,
        "{}",
        registered.text().await.unwrap()
    );

    // The answer's stream stays open until the kill (a client that leaves cancels the answer,
    // and with it the task): it is read in a task of its own, which tells when the call became
    // a task.
    let request = ask(&client, &service, json!({"message": "report on tides"}));
    let (became_task, task_event) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut stream = request.send().await.unwrap().bytes_stream();
        let mut buffer = String::new();
        let mut became_task = Some(became_task);
        while let Some(Ok(chunk)) = stream.next().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            let task = buffer
                .lines()
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str::<Value>(data).ok())
                .find(|event| event["type"] == "mcp_tool" && event["status"] == "task");
            if let Some(event) = task
                && let Some(sender) = became_task.take()
            {
                let _ = sender.send(event);
            }
        }
    });
    let task_event = tokio::time::timeout(Duration::from_secs(15), task_event)
        .await
        .expect("the call became a task")
        .unwrap();
    let listed = service.get_json(&client, "/chat/conversations").await;
    let conversation_id = listed["conversations"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(task_event["task"]["task_id"].is_string(), "{task_event:#}");
    match stop {
        Stop::Kill9 => service.kill_9(),
        Stop::Sigterm => {
            let status = service.terminate(Duration::from_secs(30));
            assert!(status.success(), "{status:?}");
            assert!(
                tasks.log.cancelled().is_empty(),
                "a graceful stop leaves the task working: {:?}",
                tasks.log.cancelled()
            );
            let (state, task_id) = stored_call(data_dir.path(), &conversation_id).await;
            assert_eq!(state, "dispatched", "not unknown");
            assert_eq!(task_id.as_deref(), task_event["task"]["task_id"].as_str());
        }
    }
    assert_eq!(tasks.log.finished(), 0, "stopped while the task works");

    let service = Service::start_command(with_short_call_timeout(data_dir.path(), &fake));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let detail = loop {
        let detail = service
            .get_json(&client, &format!("/chat/conversations/{conversation_id}"))
            .await;
        // The final state and the tool message are one commit, but the page reads messages and
        // calls in two queries: wait until both show it.
        let has_tool_message = detail["messages"]
            .as_array()
            .is_some_and(|messages| messages.iter().any(|message| message["role"] == "tool"));
        if detail["tool_calls"][0]["state"] != "dispatched" && has_tool_message {
            break detail;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never finished: {detail:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(detail["tool_calls"][0]["state"], "completed", "{detail:#}");
    let tool_message = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap_or_else(|| panic!("the result is stored as a tool message: {detail:#}"));
    assert!(
        tool_message["content"]
            .as_str()
            .unwrap()
            .contains("report ready: tides"),
        "{tool_message:#}"
    );
    // Its final state has its audit row, as a turn's call would.
    let audit = service
        .get_json(&client, "/api/audit?action=tool_call.completed")
        .await;
    let call_id = detail["tool_calls"][0]["id"].clone();
    let rows: Vec<&Value> = audit["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("no audit entries: {audit:#}"))
        .iter()
        .filter(|entry| entry["details"]["tool_call_id"] == call_id)
        .collect();
    assert_eq!(rows.len(), 1, "{audit:#}");
    assert_eq!(rows[0]["tool_name"], "slow_report", "{:#}", rows[0]);
    assert_eq!(tasks.log.started(), 1, "the tool ran exactly once");
    assert_eq!(tasks.log.finished(), 1);
    assert!(tasks.log.cancelled().is_empty());
    drop(service);
}
