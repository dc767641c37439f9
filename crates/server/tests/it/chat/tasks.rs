//! Tool calls that become tasks (the MCP tasks extension), against a fixture server built on
//! rmcp's server side and its `TaskManager` (`switchboard_test_support::task_server`): the
//! answer waits for a task that outlasts the call timeout and gets its result; the tool card
//! shows the task's status; cancelling the answer cancels the task upstream.

use crate::support::chat::{ChatOptions, ChatServer, of_type, remote_server};
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_core::ToolCallState;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::task_server::TaskServer;

/// A chat whose call timeout (1 s) is shorter than the fixture's task.
async fn chat_with_task_server(fake: &FakeOpenAi) -> (ChatServer, TaskServer) {
    let tasks = TaskServer::start().await;
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.tool_call_timeout_secs = 1;
    options.mcp.tool_call_max_timeout_secs = 1;
    let server = ChatServer::start(options).await;
    server
        .register_server(remote_server("reports", &tasks.url()))
        .await;
    (server, tasks)
}

fn report_call(seconds: f64) -> ScriptedReply {
    ScriptedReply::tool_calls(&[ScriptedToolCall::new(
        "c1",
        "reports__slow_report",
        json!({"topic": "tides", "seconds": seconds}),
    )])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_outlasts_the_call_timeout_answers_the_chat() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(report_call(2.5));
    fake.enqueue(ScriptedReply::text(&["the report is ready"]));
    let (server, tasks) = chat_with_task_server(&fake).await;

    let events = server
        .ask_and_wait(json!({"message": "report on tides"}))
        .await;
    let tool_events = of_type(&events, "mcp_tool");
    let task_events: Vec<&Value> = tool_events
        .iter()
        .filter(|event| event["status"] == "task")
        .copied()
        .collect();
    assert!(!task_events.is_empty(), "{tool_events:#?}");
    assert_eq!(task_events[0]["task"]["status"], "working");
    assert_eq!(
        task_events[0]["task"]["status_message"],
        "gathering sources"
    );
    let messages: Vec<&Value> = task_events
        .iter()
        .map(|event| &event["task"]["status_message"])
        .collect();
    assert!(
        messages.contains(&&json!("writing the report")),
        "the status message change is shown: {messages:?}"
    );
    let last = tool_events.last().unwrap();
    assert_eq!(last["status"], "completed", "{last:#}");
    assert!(
        last["duration_ms"].as_u64().unwrap() >= 2_000,
        "longer than the 1 s call timeout: {last:#}"
    );
    assert!(last["result"].to_string().contains("report ready: tides"));

    let conversation_id = events[0]["conversation_id"].as_str().unwrap();
    let calls = server.stored_tool_calls(conversation_id).await;
    assert_eq!(calls[0].state, ToolCallState::Completed);
    assert_eq!(
        calls[0].task_id.as_deref(),
        task_events[0]["task"]["task_id"].as_str()
    );
    let second = &fake.requests()[1].body;
    assert!(
        second.to_string().contains("report ready: tides"),
        "{second}"
    );
    assert_eq!(tasks.log.started(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_answer_cancels_its_task_upstream() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(report_call(60.0));
    let (server, tasks) = chat_with_task_server(&fake).await;

    let mut reader = server.ask(json!({"message": "report on tides"})).await;
    let mut task_id = None;
    let mut conversation_id = None;
    while task_id.is_none() {
        let event = reader.next_event().await.expect("a task event");
        if let Some(id) = event["conversation_id"].as_str() {
            conversation_id.get_or_insert_with(|| id.to_owned());
        }
        if event["type"] == "mcp_tool" && event["status"] == "task" {
            task_id = event["task"]["task_id"].as_str().map(str::to_owned);
        }
    }
    drop(reader); // the last client leaves: the answer is cancelled
    let task_id = task_id.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !tasks.log.cancelled().contains(&task_id) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "tasks/cancel never arrived"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let conversation_id = conversation_id.expect("the meta event names the conversation");
    server.wait_until_idle(&conversation_id).await;
    let calls = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(calls[0].state, ToolCallState::Unknown, "{:?}", calls[0]);
    assert_eq!(calls[0].task_id.as_deref(), Some(task_id.as_str()));
    assert_eq!(tasks.log.finished(), 0);
}
