//! What a person reads when an upstream fails: plain sentences saying what failed, where and
//! why — never an SDK's type names. Each common failure is produced through the real wire.

use crate::faults::{misbehaving, tool};
use crate::support::{client, context, free_port, quick_config, remote_server, stdio_server};
use axum::http::StatusCode;
use serde_json::json;
use switchboard_core::TransportKind;
use switchboard_mcp_client::{McpClient, McpClientConfig, UpstreamError, UpstreamServer};

/// No Rust paths, generics or SDK names in a message meant for people.
fn assert_plain(message: &str) {
    for leak in [
        "::",
        "rmcp",
        "Transport [",
        "<",
        "Error {",
        "Some(",
        "reqwest",
        "hyper",
    ] {
        assert!(
            !message.contains(leak),
            "the message leaks `{leak}`: {message}"
        );
    }
}

async fn start_error(client: &McpClient, server: &UpstreamServer) -> UpstreamError {
    client
        .call_tool(server, &tool("anything"), json!({}), &context("ada"))
        .await
        .unwrap_err()
}

/// An HTTP server answering every request with `status`.
async fn answering(status: StatusCode) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(move || async move { (status, "no") });
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_refused_names_the_url() {
    let client = client();
    for (transport, path) in [
        (TransportKind::StreamableHttp, "/mcp"),
        (TransportKind::Sse, "/sse"),
    ] {
        let url = format!("http://127.0.0.1:{}{path}", free_port());
        let server = remote_server("closed", transport, &url);
        let error = start_error(&client, &server).await;
        let message = error.to_string();
        assert_eq!(error.code(), "connect_failed", "{message}");
        assert!(message.contains(&url), "{message}");
        assert!(message.contains("connection refused"), "{message}");
        assert_plain(&message);
    }
    let url = format!("ws://127.0.0.1:{}/ws", free_port());
    let server = remote_server("closed_ws", TransportKind::Websocket, &url);
    let message = start_error(&client, &server).await.to_string();
    assert!(
        message.contains(&url) && message.contains("connection refused"),
        "{message}"
    );
    assert_plain(&message);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_statuses_are_named_with_the_url() {
    let client = client();
    for transport in [TransportKind::StreamableHttp, TransportKind::Sse] {
        let address = answering(StatusCode::UNAUTHORIZED).await;
        let url = format!("http://{address}/mcp");
        let server = remote_server("locked", transport, &url);
        let error = start_error(&client, &server).await;
        let message = error.to_string();
        assert_eq!(error.code(), "needs_auth", "{message}");
        assert!(message.contains("HTTP 401"), "{message}");
        assert!(message.contains(&url), "{message}");
        assert_plain(&message);

        let address = answering(StatusCode::NOT_FOUND).await;
        let url = format!("http://{address}/mcp");
        let server = remote_server("missing", transport, &url);
        let error = start_error(&client, &server).await;
        let message = error.to_string();
        assert!(message.contains("HTTP 404"), "{message}");
        assert!(message.contains(&url), "{message}");
        assert_plain(&message);
    }
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_init_timeout_says_how_long_was_waited() {
    let client = McpClient::new(McpClientConfig {
        session_init_timeout_secs: 1,
        session_init_retries: 0,
        ..quick_config()
    })
    .unwrap();
    // Accepts connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let url = format!("http://{address}/mcp");
    let server = remote_server("silent", TransportKind::StreamableHttp, &url);
    let error = start_error(&client, &server).await;
    let message = error.to_string();
    assert_eq!(error.code(), "init_timeout", "{message}");
    assert!(message.contains("within 1 s"), "{message}");
    assert!(message.contains(&url), "{message}");
    assert_plain(&message);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_child_gives_its_exit_status_and_last_stderr_line() {
    let client = client();
    let server = misbehaving("dies", "exit_on_start", &[]);
    let error = start_error(&client, &server).await;
    let message = error.to_string();
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(
        message.contains("fatal: the API key is missing"),
        "{message}"
    );
    assert_plain(&message);

    let missing = stdio_server("missing", "/nonexistent/mcp-server-binary", &[]);
    let error = start_error(&client, &missing).await;
    let message = error.to_string();
    assert_eq!(error.code(), "spawn_failed", "{message}");
    assert!(
        message.contains("/nonexistent/mcp-server-binary"),
        "{message}"
    );
    assert_plain(&message);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_timeout_says_how_long_was_waited() {
    let client = client();
    let mut server = misbehaving("hangs", "hang", &[]);
    server.timeout_ms = Some(700);
    let error = client
        .call_tool(&server, &tool("work"), json!({}), &context("ada"))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert_eq!(error.code(), "timeout", "{message}");
    assert!(message.contains("700 ms"), "{message}");
    assert_plain(&message);
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_does_not_resolve_is_said_so_not_called_a_policy_refusal() {
    use std::collections::HashMap;
    use std::sync::Arc;
    use switchboard_mcp_client::url_policy::StaticHostLookup;
    use switchboard_mcp_client::{UrlPolicy, UrlPolicyConfig};

    // A resolver that knows no names (the system resolver is not asked).
    let policy = UrlPolicy::with_lookup(
        UrlPolicyConfig::default(),
        Arc::new(StaticHostLookup {
            hosts: HashMap::new(),
        }),
    );
    let client = McpClient::builder(quick_config())
        .url_policy(policy)
        .build()
        .unwrap();
    for (transport, url) in [
        (TransportKind::StreamableHttp, "http://mcp.nowhere.test/mcp"),
        (TransportKind::Sse, "http://mcp.nowhere.test/sse"),
        (TransportKind::Websocket, "ws://mcp.nowhere.test/ws"),
    ] {
        let server = remote_server("nowhere", transport, url);
        let error = start_error(&client, &server).await;
        let message = error.to_string();
        assert_eq!(error.code(), "connect_failed", "{message}");
        assert!(
            message.contains(url)
                && message.contains("the host name 'mcp.nowhere.test' could not be resolved"),
            "{message}"
        );
        assert_plain(&message);
    }
    client.shutdown().await;
}

/// A legacy SSE server that compresses its event stream (we decode no content encoding, and
/// advertise none) is told so by name, not refused for what its bytes look like.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compressed_legacy_event_stream_names_its_content_encoding() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(|| async {
        (
            [
                (axum::http::header::CONTENT_TYPE, "text/event-stream"),
                (axum::http::header::CONTENT_ENCODING, "br"),
            ],
            vec![0x1b_u8, 0x2f, 0x00, 0xf8],
        )
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{address}/sse");
    let server = remote_server("compressed", TransportKind::Sse, &url);
    let error = start_error(&client(), &server).await;
    let message = error.to_string();
    assert!(
        message.contains("the server answered with Content-Encoding: br; compressed answers")
            && message.contains("configure the server to answer uncompressed"),
        "{message}"
    );
    assert_plain(&message);
}
