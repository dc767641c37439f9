//! Memory bombs from an upstream (issue 18, target 7): a 1 GiB SSE event and a 1 GiB JSON body
//! over Streamable HTTP, a 1 GiB event over legacy HTTP+SSE, and a gzip body that would inflate
//! to 256 MiB (64 × the cap), and over WebSocket a 1 GiB frame and a message whose continuation
//! frames never end. The stdio case (a line that never ends) is in `faults.rs`.
//!
//! The bomb servers (`switchboard_test_support::upstream_bombs`) generate their bytes lazily,
//! so the test never holds a bomb. The client hangs up once it refuses, so only about a cap's
//! worth of bytes is ever sent. What is measured: the growth of this process's peak resident set (`VmHWM`)
//! across the bomb call, which must stay within 2 × the cap plus a fixed slack; the call must
//! fail with a size or protocol error (the gzip one with an error naming the content encoding),
//! and the next call on the same server must succeed. No request may carry `Accept-Encoding`
//! (the client decodes no content encoding, so it must not advertise one).

use crate::faults::tool;
use crate::support::{context, init_tracing, quick_config, remote_server};
use serde_json::json;
use std::sync::atomic::{AtomicU64, Ordering};
use switchboard_core::TransportKind;
use switchboard_mcp_client::{McpClient, McpClientConfig, UpstreamError};
use switchboard_test_support::upstream_bombs::{
    BOMB, Bomb, WsBomb, legacy_bomb_server, streamable_bomb_server, websocket_bomb_server,
};

const CAP: usize = 4 * 1024 * 1024;
/// Allocator arenas, socket buffers and the parsing of the refusal: a fixed allowance.
const SLACK: u64 = 4 * 1024 * 1024;
/// rmcp reads a Streamable HTTP `application/json` answer whole up to this fixed ceiling
/// before it refuses it, whatever our cap (its `MAX_JSON_RESPONSE_SIZE`, not configurable):
/// below a 8 MiB cap the JSON-body bomb is bounded by this rather than by 2 × the cap.
const RMCP_JSON_CEILING: u64 = 16 * 1024 * 1024;

/// `VmHWM` (peak resident set) of this process, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kilobytes: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap();
    kilobytes * 1024
}

/// Calls `work` (warming the session), then `big`, and checks refusal, memory and recovery.
async fn survives_bomb(
    transport: TransportKind,
    url: &str,
    sent: &AtomicU64,
    label: &str,
) -> UpstreamError {
    survives_bomb_at(CAP, transport, url, sent, label).await
}

async fn survives_bomb_at(
    cap: usize,
    transport: TransportKind,
    url: &str,
    sent: &AtomicU64,
    label: &str,
) -> UpstreamError {
    init_tracing();
    let config = McpClientConfig {
        max_tool_response_bytes: cap,
        tool_call_timeout_secs: 30,
        ..quick_config()
    };
    let client = McpClient::new(config).unwrap();
    let server = remote_server(label, transport, url);
    let warm = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap();
    assert_eq!(warm.text_for_model(), "worked");
    let before = peak_rss();
    let error = client
        .call_tool(&server, &tool("big"), json!({}), &context("erin"))
        .await
        .unwrap_err();
    let grown = peak_rss().saturating_sub(before);
    let sent = sent.load(Ordering::Relaxed);
    eprintln!(
        "{label}: error {error}; sent {} KiB; peak RSS grew {} KiB (cap {} KiB)",
        sent / 1024,
        grown / 1024,
        cap / 1024
    );
    let allowed = if label.starts_with("json-body") {
        (2 * cap as u64).max(RMCP_JSON_CEILING) + SLACK
    } else {
        2 * cap as u64 + SLACK
    };
    assert!(
        matches!(
            error,
            UpstreamError::ResponseTooLarge { .. } | UpstreamError::ConnectionLost(_)
        ),
        "{label}: {error:?}"
    );
    assert!(
        grown <= allowed,
        "{label}: peak RSS grew by {} KiB for a {} KiB cap",
        grown / 1024,
        cap / 1024
    );
    assert!(sent < BOMB / 4, "{label}: the client read {sent} bytes");
    let after = client
        .call_tool(&server, &tool("work"), json!({}), &context("erin"))
        .await
        .unwrap_or_else(|error| panic!("{label}: the next call failed: {error:?}"));
    assert_eq!(after.text_for_model(), "worked");
    client.shutdown().await;
    error
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_sse_event_over_streamable_http_is_refused_at_the_cap() {
    let bomb = streamable_bomb_server(Bomb::SseEvent).await;
    survives_bomb(
        TransportKind::StreamableHttp,
        &bomb.url,
        &bomb.sent,
        "sse-event",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_json_body_over_streamable_http_is_refused_at_the_cap() {
    let bomb = streamable_bomb_server(Bomb::JsonBody).await;
    survives_bomb(
        TransportKind::StreamableHttp,
        &bomb.url,
        &bomb.sent,
        "json-body",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_body_inflating_past_the_cap_is_never_inflated() {
    let bomb = streamable_bomb_server(Bomb::GzipBody).await;
    let error = survives_bomb(
        TransportKind::StreamableHttp,
        &bomb.url,
        &bomb.sent,
        "gzip-body",
    )
    .await;
    // Refused as compressed, not as "not JSON" with escaped gzip bytes.
    let message = error.to_string();
    assert!(
        message.contains("the server answered with Content-Encoding: gzip; compressed answers")
            && message.contains("configure the server to answer uncompressed"),
        "{message}"
    );
    assert!(!message.contains('\u{fffd}'), "{message}");
    // Nothing the client sent advertised an encoding it does not decode.
    assert_eq!(bomb.accept_encodings.load(Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_event_over_legacy_sse_is_refused_at_the_cap() {
    let bomb = legacy_bomb_server().await;
    survives_bomb(TransportKind::Sse, &bomb.url, &bomb.sent, "legacy-sse").await;
    assert_eq!(bomb.accept_encodings.load(Ordering::Relaxed), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_websocket_frame_is_refused_at_the_cap() {
    let bomb = websocket_bomb_server(WsBomb::GiantFrame).await;
    let error = survives_bomb(
        TransportKind::Websocket,
        &bomb.url,
        &bomb.sent,
        "ws-giant-frame",
    )
    .await;
    assert!(
        matches!(error, UpstreamError::ResponseTooLarge { .. }),
        "{error:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_websocket_message_is_refused_at_the_cap() {
    let bomb = websocket_bomb_server(WsBomb::EndlessMessage).await;
    let error = survives_bomb(
        TransportKind::Websocket,
        &bomb.url,
        &bomb.sent,
        "ws-endless-message",
    )
    .await;
    assert!(
        matches!(error, UpstreamError::ResponseTooLarge { .. }),
        "{error:?}"
    );
}

/// The same bombs at the default cap (10 MiB), where the JSON-body ceiling of rmcp is within
/// 2 × the cap: `cargo nextest run -p switchboard-mcp-client --run-ignored only -E 'test(/bombs::/)'`.
mod at_the_default_cap {
    use super::*;

    fn default_cap() -> usize {
        McpClientConfig::default().max_tool_response_bytes
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "bench: the default cap, a few seconds"]
    async fn sse_event() {
        let bomb = streamable_bomb_server(Bomb::SseEvent).await;
        let kind = TransportKind::StreamableHttp;
        survives_bomb_at(
            default_cap(),
            kind,
            &bomb.url,
            &bomb.sent,
            "sse-event-default",
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "bench: the default cap, a few seconds"]
    async fn json_body() {
        let bomb = streamable_bomb_server(Bomb::JsonBody).await;
        let kind = TransportKind::StreamableHttp;
        survives_bomb_at(
            default_cap(),
            kind,
            &bomb.url,
            &bomb.sent,
            "json-body-default",
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "bench: the default cap, a few seconds"]
    async fn legacy_sse() {
        let bomb = legacy_bomb_server().await;
        let kind = TransportKind::Sse;
        survives_bomb_at(
            default_cap(),
            kind,
            &bomb.url,
            &bomb.sent,
            "legacy-sse-default",
        )
        .await;
    }
}
