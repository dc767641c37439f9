//! Session lifecycle through real stdio children: no orphan processes after shutdown or after a
//! server is removed (even a child that ignores stdin EOF and SIGTERM and has a grandchild),
//! idle timeout, restart of a dead session on next use, session scopes, the environment a
//! child gets, and a failing start explained with the child's stderr.

use crate::faults::{lines, misbehaving, tool};
use crate::support::{
    caller, client, context, eventually, everything_stdio, processes_in_group, quick_config,
};
use serde_json::json;
use std::time::{Duration, Instant};
use switchboard_core::{ConversationId, SessionScope, SessionState};
use switchboard_mcp_client::{
    CallContext, Caller, McpClient, McpClientConfig, StdioConfig, UpstreamEndpoint,
};

fn fast_exit_config() -> McpClientConfig {
    McpClientConfig {
        stdio: StdioConfig {
            graceful_exit_secs: 1,
            ..StdioConfig::default()
        },
        ..quick_config()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_leaves_no_orphans_even_from_a_stubborn_child() {
    let client = McpClient::new(fast_exit_config()).unwrap();
    let server = misbehaving("stubborn", "stubborn", &[]);
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    let group = client.session_statuses(&server.id)[0].process_id.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || processes_in_group(group).len()
            >= 2)
        .await,
        "the child and its grandchild run in the session's process group"
    );

    let started = Instant::now();
    client.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "shutdown took {:?}",
        started.elapsed()
    );
    assert!(
        eventually(Duration::from_secs(2), || processes_in_group(group)
            .is_empty())
        .await,
        "left behind: {:?}",
        processes_in_group(group)
    );
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "shutting_down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_a_server_stops_its_children() {
    let client = McpClient::new(fast_exit_config()).unwrap();
    let mut server = misbehaving("per_user", "stubborn", &[]);
    server.session_scope = SessionScope::PerUser;
    for user in ["fay", "gus"] {
        client
            .call_tool(&server, &tool("work"), json!({}), &context(user))
            .await
            .unwrap();
    }
    let groups: Vec<i32> = client
        .session_statuses(&server.id)
        .iter()
        .filter_map(|status| status.process_id)
        .collect();
    assert_eq!(groups.len(), 2, "one session per user");
    assert_ne!(groups[0], groups[1]);
    client.close_server(&server.id).await;
    for group in groups {
        assert!(
            eventually(Duration::from_secs(2), || processes_in_group(group)
                .is_empty())
            .await
        );
    }
    assert!(client.session_statuses(&server.id).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_close_and_dead_ones_restart_on_next_use() {
    let config = McpClientConfig {
        session_idle_timeout_secs: 1,
        ..fast_exit_config()
    };
    let client = McpClient::new(config).unwrap();
    let server = misbehaving("idle", "normal", &[]);
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    let group = client.session_statuses(&server.id)[0].process_id.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || client
            .session_statuses(&server.id)
            .is_empty()
            || client.session_statuses(&server.id)[0].state
                == SessionState::Closed)
        .await,
        "idle session closed"
    );
    assert!(
        eventually(Duration::from_secs(3), || processes_in_group(group)
            .is_empty())
        .await
    );

    // Restarted on demand; then killed from outside; the next call notices and restarts.
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    let group = client.session_statuses(&server.id)[0].process_id.unwrap();
    nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(group),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    assert!(
        eventually(Duration::from_secs(3), || client
            .session_statuses(&server.id)[0]
            .state
            == SessionState::Error)
        .await
    );
    let result = client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    assert!(result.text_for_model().starts_with("worked"));
    assert_ne!(
        client.session_statuses(&server.id)[0].process_id,
        Some(group)
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_conversation_sessions_do_not_share_state() {
    let client = McpClient::new(fast_exit_config()).unwrap();
    let mut server = misbehaving("browser", "normal", &[]);
    server.session_scope = SessionScope::PerConversation;
    let in_conversation = |conversation: &str| {
        CallContext::new(Caller {
            user_id: "fay".into(),
            conversation_id: Some(ConversationId::from(conversation)),
        })
    };
    let first = client
        .call_tool(&server, &tool("work"), json!({}), &in_conversation("c1"))
        .await
        .unwrap();
    let second = client
        .call_tool(&server, &tool("work"), json!({}), &in_conversation("c2"))
        .await
        .unwrap();
    let again = client
        .call_tool(&server, &tool("work"), json!({}), &in_conversation("c1"))
        .await
        .unwrap();
    assert_ne!(
        first.text_for_model(),
        second.text_for_model(),
        "different processes"
    );
    assert_eq!(
        first.text_for_model(),
        again.text_for_model(),
        "same conversation, same process"
    );
    assert_eq!(client.session_statuses(&server.id).len(), 2);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_get_only_allowlisted_and_configured_environment() {
    let client = client();
    let mut server = everything_stdio("envcheck");
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command
            .env
            .insert("SWITCHBOARD_CONFIGURED".into(), "yes".into());
    }
    let snapshot = client
        .fetch_capabilities(&server, &caller("fay"))
        .await
        .unwrap();
    let get_env = snapshot
        .tools
        .iter()
        .find(|tool| tool.name == "get-env")
        .unwrap();
    let result = client
        .call_tool(&server, get_env, json!({}), &context("fay"))
        .await
        .unwrap();
    let environment: serde_json::Value = serde_json::from_str(&result.text_for_model()).unwrap();
    assert_eq!(environment["SWITCHBOARD_CONFIGURED"], "yes");
    assert!(environment.get("PATH").is_some());
    // Cargo sets these for the test process; they must not leak into the child.
    assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
    assert!(environment.get("CARGO_PKG_NAME").is_none(), "{environment}");
    assert!(environment.get("CARGO_MANIFEST_DIR").is_none());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_that_exits_at_start_is_explained_and_not_hammered() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let config = McpClientConfig {
        session_init_retries: 2,
        session_error_retry_secs: 1,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let server = misbehaving("broken", "exit_on_start", &[("START_LOG", &starts)]);
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("the API key is missing") && message.contains("exited with status 3"),
        "{message}"
    );
    assert_eq!(lines(&starts).len(), 3, "first attempt and two retries");

    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "server_unavailable");
    assert_eq!(lines(&starts).len(), 3);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap_err();
    assert_eq!(lines(&starts).len(), 6, "tried again after the retry delay");

    let missing = crate::support::stdio_server("missing", "/nonexistent/program", &[]);
    let error = client
        .call_tool(&missing, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "spawn_failed");
    assert!(error.to_string().contains("no such program"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remembered_protocol_version_skips_the_probe_on_later_starts() {
    let dir = tempfile::tempdir().unwrap();
    let methods = dir.path().join("methods");
    let client = McpClient::new(fast_exit_config()).unwrap();
    let server = misbehaving("remembers", "normal", &[("METHOD_LOG", &methods)]);
    let count = |method: &str| {
        lines(&methods)
            .iter()
            .filter(|line| line.as_str() == method)
            .count()
    };
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    // First contact: the 2026-07-28 probe, refused with -32601, then `initialize`.
    assert_eq!(
        (count("server/discover"), count("initialize")),
        (1, 1),
        "{:?}",
        lines(&methods)
    );
    assert_eq!(
        client.remembered_protocol_version(&server).as_deref(),
        Some("2025-11-25")
    );

    // A new session (the old one closed) goes straight to `initialize` with that version.
    client.close_server(&server.id).await;
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    assert_eq!(
        (count("server/discover"), count("initialize")),
        (1, 2),
        "{:?}",
        lines(&methods)
    );
    assert_eq!(
        client.session_statuses(&server.id)[0]
            .protocol_version
            .as_deref(),
        Some("2025-11-25")
    );

    // A changed configuration is a new upstream: it is probed again.
    let mut changed = server.clone();
    if let UpstreamEndpoint::Stdio(command) = &mut changed.endpoint {
        command.env.insert("CHANGED".into(), "yes".into());
    }
    assert_eq!(client.remembered_protocol_version(&changed), None);
    client
        .call_tool(&changed, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    assert_eq!(count("server/discover"), 2, "{:?}", lines(&methods));
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_starts_are_retried_three_times_with_doubling_delays_from_100_ms() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let client = McpClient::new(McpClientConfig {
        session_init_retries: 3,
        session_init_backoff_ms: 100,
        ..quick_config()
    })
    .unwrap();
    let server = misbehaving("flaky", "exit_on_start", &[("START_LOG", &starts)]);
    client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap_err();
    // Each line: the child's pid and the time it started.
    let times: Vec<f64> = lines(&starts)
        .iter()
        .map(|line| line.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), 4, "the first attempt and three retries");
    let gaps: Vec<f64> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
    for (gap, backoff) in gaps.iter().zip([0.1, 0.2, 0.4]) {
        // The delay, plus the time the child takes to start and fail (well under a second).
        assert!(
            *gap >= backoff && *gap < backoff + 1.0,
            "gaps between attempts {gaps:?}, expected delays of 0.1, 0.2 and 0.4 s"
        );
    }
    assert!(
        gaps[2] - gaps[0] >= 0.15,
        "the delay doubles: gaps {gaps:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_its_caller_abandons_leaves_no_child_and_no_initializing_slot() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let client = McpClient::new(fast_exit_config()).unwrap();
    let mut server = misbehaving("abandoned", "slow_init", &[("START_LOG", &starts)]);
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command.env.insert("SLOW_INIT_SECS".into(), "1.5".into());
    }
    // The caller goes away half-way (as an HTTP client that disconnects drops its request).
    let gave_up = tokio::time::timeout(
        Duration::from_millis(400),
        client.call_tool(&server, &tool("work"), json!({}), &context("fay")),
    )
    .await;
    assert!(gave_up.is_err(), "the start takes 1.5 s");
    let started = lines(&starts);
    assert_eq!(started.len(), 1, "{started:?}");
    let child: i32 = started[0]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        eventually(Duration::from_secs(3), || processes_in_group(child)
            .is_empty())
        .await,
        "the half-started child is gone"
    );
    let statuses = client.session_statuses(&server.id);
    assert_eq!(statuses.len(), 1);
    assert_eq!(statuses[0].state, SessionState::Idle, "{statuses:?}");

    // The next caller who waits gets a session.
    let result = client
        .call_tool(&server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    assert!(result.text_for_model().starts_with("worked"));
    assert_eq!(lines(&starts).len(), 2);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_who_cancels_during_a_slow_start_is_answered_at_once_and_others_still_connect() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let client = McpClient::new(fast_exit_config()).unwrap();
    let mut server = misbehaving("slow_start", "slow_init", &[("START_LOG", &starts)]);
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command.env.insert("SLOW_INIT_SECS".into(), "2".into());
    }
    // The person who pressed stop starts the session; someone else waits on the same start.
    let stopping = context("fay");
    let cancellation = stopping.cancellation.clone();
    let patient = {
        let client = client.clone();
        let server = server.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            client
                .call_tool(&server, &tool("work"), json!({}), &context("gus"))
                .await
        })
    };
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        cancellation.cancel();
    });
    let started = Instant::now();
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &stopping)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "cancelled", "{error}");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "answered after {:?}, the start takes 2 s",
        started.elapsed()
    );
    let result = patient.await.unwrap().unwrap();
    assert!(result.text_for_model().starts_with("worked"));
    let children = lines(&starts);
    assert_eq!(children.len(), 2, "the abandoned start and a fresh one");
    let abandoned: i32 = children[0]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(processes_in_group(abandoned).is_empty());
    assert_eq!(
        client.session_statuses(&server.id)[0].state,
        SessionState::Active
    );
    client.shutdown().await;
}
