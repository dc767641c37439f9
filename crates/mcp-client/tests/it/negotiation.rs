//! Protocol-version negotiation with servers whose `server/discover` answer names versions
//! without 2026-07-28 (tests/fixtures/misbehaving_server.py, modes `discover_lists` and
//! `discover_refuses`): the client falls back at once to `initialize` with the newest version
//! of the `initialize` generation the server listed that it knows, and remembers it; a server
//! listing only versions it does not know fails with a sentence naming them. The fixture
//! accepts `initialize` only with a version it listed, so offering our default (2025-11-25)
//! to it fails.

use crate::faults::{lines, misbehaving, tool};
use crate::support::{context, quick_config};
use serde_json::json;
use std::path::Path;
use switchboard_mcp_client::{McpClient, UpstreamEndpoint, UpstreamServer};

/// The fixture in `mode`, listing `versions`, logging every method it receives to `methods`.
fn listing(name: &str, mode: &str, versions: &[&str], methods: &Path) -> UpstreamServer {
    let mut server = misbehaving(name, mode, &[("METHOD_LOG", methods)]);
    if let UpstreamEndpoint::Stdio(command) = &mut server.endpoint {
        command
            .env
            .insert("DISCOVER_VERSIONS".into(), versions.join(","));
    }
    server
}

fn count(methods: &Path, method: &str) -> usize {
    lines(methods)
        .iter()
        .filter(|line| line.as_str() == method)
        .count()
}

/// Calls the fixture's tool and returns the version its session agreed.
async fn agreed_version(client: &McpClient, server: &UpstreamServer) -> Option<String> {
    let result = client
        .call_tool(server, &tool("work"), json!({}), &context("fay"))
        .await
        .unwrap();
    assert!(!result.is_error, "{result:?}");
    client.session_statuses(&server.id)[0]
        .protocol_version
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discover_result_without_2026_07_28_falls_back_to_the_newest_listed_initialize_version() {
    let dir = tempfile::tempdir().unwrap();
    let methods = dir.path().join("methods");
    let client = McpClient::new(quick_config()).unwrap();
    // Not in order, and with a version nobody knows yet: the newest one we know is chosen.
    let server = listing(
        "lists",
        "discover_lists",
        &["2025-03-26", "2031-01-01", "2025-06-18"],
        &methods,
    );
    assert_eq!(
        agreed_version(&client, &server).await.as_deref(),
        Some("2025-06-18")
    );
    assert_handshakes(&methods, 1, 1);
    // Remembered like any agreed version: the next session skips the probe.
    assert_eq!(
        client.remembered_protocol_version(&server).as_deref(),
        Some("2025-06-18")
    );
    client.close_server(&server.id).await;
    assert_eq!(
        agreed_version(&client, &server).await.as_deref(),
        Some("2025-06-18")
    );
    assert_handshakes(&methods, 1, 2);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsupported_protocol_version_error_naming_initialize_versions_falls_back_too() {
    let dir = tempfile::tempdir().unwrap();
    let methods = dir.path().join("methods");
    let client = McpClient::new(quick_config()).unwrap();
    let server = listing(
        "refuses",
        "discover_refuses",
        &["2024-11-05", "2025-03-26"],
        &methods,
    );
    assert_eq!(
        agreed_version(&client, &server).await.as_deref(),
        Some("2025-03-26")
    );
    assert_handshakes(&methods, 1, 1);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_spoke_2026_07_28_and_now_lists_only_older_versions_is_initialized() {
    let dir = tempfile::tempdir().unwrap();
    let methods = dir.path().join("methods");
    let client = McpClient::new(quick_config()).unwrap();
    let server = listing("downgraded", "discover_lists", &["2025-11-25"], &methods);
    client.remember_protocol_version(&server, "2026-07-28");
    assert_eq!(
        agreed_version(&client, &server).await.as_deref(),
        Some("2025-11-25")
    );
    assert_handshakes(&methods, 1, 1);
    assert_eq!(
        client.remembered_protocol_version(&server).as_deref(),
        Some("2025-11-25")
    );
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_listing_only_versions_we_do_not_know_fails_with_a_sentence_naming_them() {
    for mode in ["discover_lists", "discover_refuses"] {
        let dir = tempfile::tempdir().unwrap();
        let methods = dir.path().join("methods");
        let client = McpClient::new(quick_config()).unwrap();
        let server = listing("unknown", mode, &["2031-01-01", "2024-01-01"], &methods);
        let error = client
            .call_tool(&server, &tool("work"), json!({}), &context("fay"))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "init_failed", "{mode}: {error}");
        assert!(
            error.to_string().contains(
                "it speaks no protocol version this client knows (it offers 2031-01-01, 2024-01-01)"
            ),
            "{mode}: {error}"
        );
        assert!(count(&methods, "server/discover") >= 1, "{mode}");
        assert_eq!(
            count(&methods, "initialize"),
            0,
            "{mode}: nothing it listed is ours to offer: {:?}",
            lines(&methods)
        );
        assert_eq!(client.remembered_protocol_version(&server), None, "{mode}");
        client.shutdown().await;
    }
}

/// The server was sent `discover` probes and `initialize` requests this many times in all.
fn assert_handshakes(methods: &Path, discover: usize, initialize: usize) {
    assert_eq!(
        (
            count(methods, "server/discover"),
            count(methods, "initialize")
        ),
        (discover, initialize),
        "{:?}",
        lines(methods)
    );
}
