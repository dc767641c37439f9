//! Each server's latency window through the real client and the misbehaving stdio server:
//! calls, list pages and session starts are measured, a timeout counts as its whole wait, a
//! quick cancellation does not count, and closing the server forgets the figures.

use crate::faults::{misbehaving, tool};
use crate::support::{caller, client, context};
use serde_json::json;
use std::time::Duration;
use switchboard_mcp_client::{ServerLatency, Slowness, UpstreamError};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_list_pages_and_starts_are_measured_per_server() {
    let client = client();
    let slow = misbehaving("latency-slow", "progress", &[]);
    let fast = misbehaving("latency-fast", "normal", &[]);
    assert_eq!(client.latency(&slow.id), ServerLatency::default());

    for _ in 0..3 {
        let result = client
            .call_tool(
                &slow,
                &tool("work"),
                json!({"seconds": 0.4}),
                &context("ida"),
            )
            .await
            .unwrap();
        assert!(!result.is_error);
    }
    client
        .call_tool(&fast, &tool("work"), json!({}), &context("ida"))
        .await
        .unwrap();
    let slow_figures = client.latency(&slow.id);
    assert_eq!(slow_figures.samples, 3, "{slow_figures:?}");
    assert!(
        slow_figures.recent_p50_ms.unwrap() >= 400,
        "{slow_figures:?}"
    );
    assert!(slow_figures.recent_max_ms >= slow_figures.recent_p50_ms);
    assert!(
        slow_figures.last_start_ms.is_some(),
        "the session start is measured"
    );
    let fast_figures = client.latency(&fast.id);
    assert_eq!(fast_figures.samples, 1, "servers have windows of their own");
    assert!(
        fast_figures.recent_p50_ms.unwrap() < 400,
        "{fast_figures:?}"
    );

    // A list page is a request like a call.
    client
        .fetch_capabilities(&fast, &caller("ida"))
        .await
        .unwrap();
    assert_eq!(client.latency(&fast.id).samples, 2);

    let verdict = |figures: ServerLatency| {
        figures.slowness(Duration::from_millis(300), Duration::from_secs(60))
    };
    assert_eq!(verdict(client.latency(&slow.id)), Some(Slowness::Calls));
    assert_eq!(verdict(client.latency(&fast.id)), None);

    // A change or delete closes the server: its figures go with it.
    client.close_server(&slow.id).await;
    assert_eq!(client.latency(&slow.id), ServerLatency::default());
    client.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_counts_its_whole_wait_and_a_quick_cancellation_nothing() {
    let client = client();
    let mut hanging = misbehaving("latency-hang", "hang", &[]);
    hanging.timeout_ms = Some(300);
    let error = client
        .call_tool(&hanging, &tool("work"), json!({}), &context("ida"))
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Timeout(_)), "{error:?}");
    let figures = client.latency(&hanging.id);
    assert_eq!(figures.samples, 1);
    assert!(figures.recent_p50_ms.unwrap() >= 300, "{figures:?}");

    // Given up by the caller after 50 ms (far below slow_call_ms): says nothing about the
    // server, so nothing is recorded.
    let quick = context("ida");
    let cancellation = quick.cancellation.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancellation.cancel();
    });
    let error = client
        .call_tool(&hanging, &tool("work"), json!({}), &quick)
        .await
        .unwrap_err();
    assert!(matches!(error, UpstreamError::Cancelled), "{error:?}");
    assert_eq!(client.latency(&hanging.id).samples, 1);
    client.shutdown().await;
}
