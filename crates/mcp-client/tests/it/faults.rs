//! Fault tests with a misbehaving stdio server (tests/fixtures/misbehaving_server.py): an
//! upstream killed mid-call, one that hangs, garbage and oversized output, slow initialization,
//! progress extending a timeout under a hard maximum, and 100 concurrent callers.

use crate::support::{context, fixture, init_tracing, python, quick_config, stdio_server};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use switchboard_core::{SessionState, ToolDefinition};
use switchboard_mcp_client::{
    McpClient, McpClientConfig, StdioCommand, UpstreamEndpoint, UpstreamError, UpstreamServer,
};

pub fn misbehaving(name: &str, mode: &str, env: &[(&str, &Path)]) -> UpstreamServer {
    let mut server = stdio_server(
        name,
        python().to_str().unwrap(),
        &[fixture("misbehaving_server.py").to_str().unwrap(), mode],
    );
    if let UpstreamEndpoint::Stdio(StdioCommand { env: variables, .. }) = &mut server.endpoint {
        for (key, path) in env {
            variables.insert((*key).to_owned(), path.to_str().unwrap().to_owned());
        }
    }
    server
}

pub fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.to_owned(),
        title: None,
        description: String::new(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: None,
        meta: Default::default(),
    }
}

pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_killed_mid_call_fails_fast_and_the_next_call_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed");
    let starts = dir.path().join("starts");
    let client = McpClient::new(quick_config()).unwrap();
    let server = misbehaving(
        "crashy",
        "die_mid_call",
        &[("MARKER", &marker), ("START_LOG", &starts)],
    );

    let started = Instant::now();
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(error.code(), "connection_lost", "{error}");
    let message = error.to_string();
    assert!(
        message.contains("crashing on purpose") && message.contains("exited with status 1"),
        "{message}"
    );

    let result = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    assert!(result.text_for_model().starts_with("worked in process"));
    assert_eq!(
        lines(&starts).len(),
        2,
        "one new process for the second call"
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_upstream_times_out_and_is_told_to_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let cancels = dir.path().join("cancels");
    let client = McpClient::new(quick_config()).unwrap();
    let mut server = misbehaving("hangs", "hang", &[("CANCEL_LOG", &cancels)]);
    server.timeout_ms = Some(400);

    let started = Instant::now();
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(
        crate::support::eventually(Duration::from_secs(3), || !lines(&cancels).is_empty()).await
    );
    assert!(
        lines(&cancels)[0].contains("timeout"),
        "{:?}",
        lines(&cancels)
    );

    // A caller cancelling (the user stopped the chat) is forwarded too.
    server.timeout_ms = Some(30_000);
    let call_context = context("erin");
    let cancellation = call_context.cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancellation.cancel();
    });
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &call_context)
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Cancelled), "{error:?}");
    assert!(
        crate::support::eventually(Duration::from_secs(3), || lines(&cancels).len() == 2).await
    );
    assert!(lines(&cancels)[1].contains("cancelled by the caller"));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_lines_are_ignored_and_oversized_answers_refused_at_once() {
    let client = McpClient::new(quick_config()).unwrap();
    let noisy = misbehaving("noisy", "garbage", &[]);
    for _ in 0..3 {
        let result = client
            .call_tool(&noisy, &tool("work"), json!({}), &context("erin"))
            .await
            .unwrap();
        assert!(result.text_for_model().starts_with("worked"));
    }

    let config = McpClientConfig {
        max_tool_response_bytes: 1024 * 1024,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let large = misbehaving("large", "oversized", &[]);
    let started = Instant::now();
    let error = client
        .call_tool(&large, &tool("big"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, UpstreamError::ResponseTooLarge { limit: 1_048_576 }),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // The session ended with the oversized message (its process killed); the next call
    // starts a new one.
    let status = &client.session_statuses(&large.id)[0];
    assert_ne!(status.state, SessionState::Active, "{status:?}");
    client
        .call_tool(&large, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_initialize_times_out_then_answers_from_error_until_the_retry_delay() {
    init_tracing();
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let slow_secs = dir.path().join("unused");
    let config = McpClientConfig {
        session_init_timeout_secs: 1,
        session_init_retries: 1,
        session_error_retry_secs: 2,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let mut server = misbehaving(
        "slow",
        "slow_init",
        &[("START_LOG", &starts), ("UNUSED", &slow_secs)],
    );
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command.env.insert("SLOW_INIT_SECS".into(), "3".into());
    }
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, UpstreamError::InitTimeout { .. }),
        "{error:?}"
    );
    assert_eq!(lines(&starts).len(), 2, "one retry");
    let status = &client.session_statuses(&server.id)[0];
    assert_eq!(status.state, SessionState::Error);
    assert!(
        status
            .last_error
            .as_deref()
            .unwrap_or_default()
            .contains("did not finish initializing within 1 s")
    );

    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "server_unavailable", "{error}");
    assert_eq!(
        lines(&starts).len(),
        2,
        "no new attempt inside the retry delay"
    );

    // Slow but within the limit: fine.
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command.env.insert("SLOW_INIT_SECS".into(), "0.3".into());
    }
    let result = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    assert!(result.text_for_model().starts_with("worked"));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_extends_the_timeout_up_to_the_hard_maximum() {
    let client = McpClient::new(quick_config()).unwrap();
    let mut server = misbehaving("progressive", "progress", &[]);
    server.timeout_ms = Some(600);
    let result = client
        .call_tool(
            &server,
            &tool("work"),
            json!({"seconds": 1.5}),
            &context("erin"),
        )
        .await
        .unwrap();
    assert!(
        result.text_for_model().starts_with("worked"),
        "progress kept the call alive past 600 ms"
    );

    let capped = McpClient::new(McpClientConfig {
        tool_call_timeout_secs: 1,
        tool_call_max_timeout_secs: 1,
        ..quick_config()
    })
    .unwrap();
    server.timeout_ms = None;
    let started = Instant::now();
    let error = capped
        .call_tool(
            &server,
            &tool("work"),
            json!({"seconds": 5}),
            &context("erin"),
        )
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    client.shutdown().await;
    capped.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_callers_share_one_session_started_once() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let client = McpClient::new(quick_config()).unwrap();
    let mut server = misbehaving("busy", "slow_init", &[("START_LOG", &starts)]);
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command.env.insert("SLOW_INIT_SECS".into(), "0.5".into());
    }
    let calls = (0..100).map(|index| {
        let client = client.clone();
        let server = server.clone();
        tokio::spawn(async move {
            let mut call_context = context(&format!("user-{index}"));
            call_context.caller.conversation_id =
                Some(format!("conversation-{}", index % 7).into());
            client
                .call_tool(&server, &tool("work"), json!({}), &call_context)
                .await
        })
    });
    let results = futures::future::join_all(calls).await;
    for result in results {
        let result = result.unwrap().unwrap();
        assert!(result.text_for_model().starts_with("worked in process"));
    }
    assert_eq!(
        lines(&starts).len(),
        1,
        "single flight: one process for 100 first users"
    );
    assert_eq!(client.session_statuses(&server.id).len(), 1);
    client.shutdown().await;
}

/// The peak resident memory of this process (`VmHWM`), in bytes.
fn peak_memory_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .unwrap();
    let kilobytes: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|value| value.parse().ok())
        .unwrap();
    kilobytes * 1024
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_that_never_ends_is_refused_at_once_and_restarts_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let config = McpClientConfig {
        max_tool_response_bytes: 1024 * 1024,
        tool_call_timeout_secs: 20,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let mut server = misbehaving("endless", "endless", &[("ENDLESS_DONE", &done)]);
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        // A terabyte: a line that, for this test, never ends.
        command.env.insert("ENDLESS_MB".into(), "1000000".into());
    }
    client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    let first_group = client.session_statuses(&server.id)[0].process_id.unwrap();
    let before = peak_memory_bytes();

    // The caller hears at once, long before the line could end.
    let started = Instant::now();
    let error = client
        .call_tool(&server, &tool("big"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    assert!(
        matches!(error, UpstreamError::ResponseTooLarge { limit: 1_048_576 }),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    // The session is over: its process group is killed rather than drained forever.
    assert!(
        crate::support::eventually(Duration::from_secs(5), || {
            crate::support::processes_in_group(first_group).is_empty()
        })
        .await,
        "the writer of the endless line is still running"
    );
    let grown = peak_memory_bytes().saturating_sub(before);
    assert!(
        grown < 64 * 1024 * 1024,
        "peak memory grew by {} MB",
        grown / (1024 * 1024)
    );
    // The next call gets a new session at once instead of waiting its full timeout.
    let started = Instant::now();
    let result = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    assert!(result.text_for_model().starts_with("worked"));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    let status = &client.session_statuses(&server.id)[0];
    assert_eq!(status.state, SessionState::Active);
    assert_ne!(status.process_id, Some(first_group));
    client.shutdown().await;
}
