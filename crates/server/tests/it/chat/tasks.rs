//! Tool calls that become tasks (the MCP tasks extension), against a fixture server built on
//! rmcp's server side and its `TaskManager` (`switchboard_test_support::task_server`): the
//! answer waits for a task that outlasts the call timeout and gets its result; the tool card
//! shows the task's status; cancelling the answer, or that one call, cancels the task upstream;
//! the server's `notifications/tasks` move the call on before any poll; a graceful shutdown
//! leaves the task working and the call to follow again.

use crate::support::chat::{ChatOptions, ChatServer, answer_text, of_type, remote_server};
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_core::ToolCallState;
use switchboard_test_support::fake_openai::{FakeOpenAi, ScriptedReply, ScriptedToolCall};
use switchboard_test_support::task_server::{TaskServer, TaskServerOptions};

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

/// Reads `reader` until its call became a task; returns the conversation, the call and the
/// task ids.
async fn until_task(reader: &mut crate::support::sse::SseReader) -> (String, String, String) {
    let mut conversation_id = None;
    loop {
        let event = reader.next_event().await.expect("a task event");
        if let Some(id) = event["conversation_id"].as_str() {
            conversation_id.get_or_insert_with(|| id.to_owned());
        }
        if event["type"] == "mcp_tool" && event["status"] == "task" {
            return (
                conversation_id.expect("meta names the conversation"),
                event["tool_call_id"].as_str().unwrap().to_owned(),
                event["task"]["task_id"].as_str().unwrap().to_owned(),
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_one_task_call_cancels_it_upstream_and_the_answer_goes_on() {
    let fake = FakeOpenAi::start().await;
    fake.enqueue(report_call(60.0));
    fake.enqueue(ScriptedReply::text(&["the report was cancelled"]));
    let (server, tasks) = chat_with_task_server(&fake).await;

    let mut reader = server.ask(json!({"message": "report on tides"})).await;
    let (conversation_id, tool_call_id, task_id) = until_task(&mut reader).await;
    let cancel = |conversation: &str, call: &str| {
        format!("/chat/conversations/{conversation}/tool-calls/{call}/cancel")
    };
    // Someone else's conversation, or a call of another, is not found.
    let other = server
        .send(
            reqwest::Method::POST,
            &cancel("conv_nobody", &tool_call_id),
            None,
        )
        .await;
    assert_eq!(other.status(), 404);
    let accepted = server
        .send(
            reqwest::Method::POST,
            &cancel(&conversation_id, &tool_call_id),
            None,
        )
        .await;
    assert_eq!(accepted.status(), 202, "{}", accepted.text().await.unwrap());
    let events = reader.until_done().await;
    assert!(
        tasks.log.cancelled().contains(&task_id),
        "tasks/cancel sent"
    );
    let ended: Vec<&Value> = of_type(&events, "mcp_tool")
        .into_iter()
        .filter(|event| event["status"] == "error")
        .collect();
    assert_eq!(ended.len(), 1, "{events:#?}");
    assert_eq!(ended[0]["error_code"], "cancelled", "{:#}", ended[0]);
    assert_eq!(
        events.last().unwrap()["outcome"],
        "completed",
        "the answer went on: {events:#?}"
    );
    assert!(answer_text(&events).contains("cancelled"));
    // Ended: a second cancel is a conflict that says why.
    let again = server
        .send(
            reqwest::Method::POST,
            &cancel(&conversation_id, &tool_call_id),
            None,
        )
        .await;
    assert_eq!(again.status(), 409);
    let body: Value = again.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already ended"),
        "{body}"
    );
    let detail = server.conversation(&conversation_id).await;
    assert_eq!(
        detail["tool_calls"][0]["task_id"],
        json!(task_id),
        "{detail:#}"
    );
    assert_eq!(tasks.log.finished(), 0);
}

/// The fixture tells each status change and the end with `notifications/tasks` and suggests a
/// 60 s poll: the status message change and the result arrive long before any poll could
/// have brought them (the first poll of a created task waits the suggested interval).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_status_notifications_move_the_call_on_without_waiting_for_a_poll() {
    let tasks = TaskServer::start_with(TaskServerOptions {
        poll_interval_ms: 60_000,
        notify: true,
    })
    .await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(report_call(2.0));
    fake.enqueue(ScriptedReply::text(&["the report is ready"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.tool_call_timeout_secs = 1;
    options.mcp.tool_call_max_timeout_secs = 1;
    let server = ChatServer::start(options).await;
    server
        .register_server(remote_server("reports", &tasks.url()))
        .await;

    let events = server
        .ask_and_wait(json!({"message": "report on tides"}))
        .await;
    let tool_events = of_type(&events, "mcp_tool");
    let messages: Vec<&Value> = tool_events
        .iter()
        .filter(|event| event["status"] == "task")
        .map(|event| &event["task"]["status_message"])
        .collect();
    assert!(
        messages.contains(&&json!("writing the report")),
        "the change was told: {messages:?} {tool_events:#?}"
    );
    let last = tool_events.last().unwrap();
    assert_eq!(last["status"], "completed", "{last:#}");
    assert!(last["result"].to_string().contains("report ready: tides"));
    assert!(
        last["duration_ms"].as_u64().unwrap() < 60_000,
        "no poll was due before 60 s: {last:#}"
    );
    assert_eq!(tasks.log.started(), 1);
}

/// The task's latest status is stored with its call as it is heard (here from the server's
/// `notifications/tasks`, no poll being due for 60 s), so the conversation read over HTTP —
/// what a page opened later shows — has the status message the live answer showed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversation_shows_the_task_status_message_last_heard() {
    let tasks = TaskServer::start_with(TaskServerOptions {
        poll_interval_ms: 60_000,
        notify: true,
    })
    .await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(report_call(3.0));
    fake.enqueue(ScriptedReply::text(&["the report is ready"]));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.tool_call_timeout_secs = 1;
    options.mcp.tool_call_max_timeout_secs = 1;
    let server = ChatServer::start(options).await;
    server
        .register_server(remote_server("reports", &tasks.url()))
        .await;

    let mut reader = server.ask(json!({"message": "report on tides"})).await;
    let (conversation_id, tool_call_id, task_id) = until_task(&mut reader).await;
    // The first report is stored before it is shown.
    let task_of = |detail: &Value| {
        let calls = detail["tool_calls"].as_array().unwrap();
        let call = calls.iter().find(|call| call["id"] == json!(tool_call_id));
        call.expect("the call is listed").clone()
    };
    let first = task_of(&server.conversation(&conversation_id).await);
    assert_eq!(first["state"], "dispatched", "{first:#}");
    assert_eq!(first["task_id"], json!(task_id));
    assert_eq!(first["task"]["status"], "working", "{first:#}");
    assert_eq!(first["task"]["status_message"], "gathering sources");
    loop {
        let event = reader
            .next_event()
            .await
            .expect("the status message changes");
        if event["type"] == "mcp_tool" && event["task"]["status_message"] == "writing the report" {
            break;
        }
    }
    let changed = task_of(&server.conversation(&conversation_id).await);
    assert_eq!(changed["state"], "dispatched", "still working: {changed:#}");
    assert_eq!(changed["task"]["status"], "working");
    assert_eq!(changed["task"]["status_message"], "writing the report");
    let heard = |call: &Value| {
        call["task"]["updated_at"]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };
    assert!(heard(&changed) > heard(&first), "{first:#} {changed:#}");
    let events = reader.until_done().await;
    let last = of_type(&events, "mcp_tool")
        .last()
        .copied()
        .unwrap()
        .clone();
    assert_eq!(last["status"], "completed", "{last:#}");
}

/// SIGTERM's path (drain, then cancel at the end of a 1 s grace) leaves a call whose task
/// works as it is: `dispatched` with its task id, for the next process to follow — no
/// `tasks/cancel`, no final state, no `unknown`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_shutdown_leaves_a_working_task_call_to_follow_again() {
    let tasks = TaskServer::start().await;
    let fake = FakeOpenAi::start().await;
    fake.enqueue(report_call(60.0));
    let mut options = ChatOptions::openai(&fake.base_url());
    options.mcp.tool_call_timeout_secs = 1;
    options.mcp.tool_call_max_timeout_secs = 1;
    options.shutdown_grace_secs = 1;
    let mut server = ChatServer::start(options).await;
    server
        .register_server(remote_server("reports", &tasks.url()))
        .await;

    let mut reader = server.ask(json!({"message": "report on tides"})).await;
    let (conversation_id, _, task_id) = until_task(&mut reader).await;
    let serving = server.begin_shutdown();
    let events = reader.until_done().await;
    serving.await.unwrap().unwrap();
    assert_eq!(of_type(&events, "error")[0]["code"], "shutting_down");
    assert!(
        of_type(&events, "mcp_tool")
            .iter()
            .all(|event| event["status"] == "started" || event["status"] == "task"),
        "the call did not end: {events:#?}"
    );
    let calls = server.stored_tool_calls(&conversation_id).await;
    assert_eq!(calls[0].state, ToolCallState::Dispatched, "{:?}", calls[0]);
    assert_eq!(calls[0].task_id.as_deref(), Some(task_id.as_str()));
    assert!(
        tasks.log.cancelled().is_empty(),
        "the task was not cancelled: {:?}",
        tasks.log.cancelled()
    );
    // The next process follows it: `switchboard`'s `task_restart` tests, through SIGTERM.
}
