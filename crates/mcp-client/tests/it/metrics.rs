//! The client's metrics as a Prometheus exporter renders them, recorded while real stdio
//! children start, fail to start, die under a call and are shut down (the registry's cache
//! metrics: crates/registry's tests).

use crate::faults::{misbehaving, tool};
use crate::support::{context, quick_config};
use metrics_exporter_prometheus::PrometheusBuilder;
use serde_json::json;
use switchboard_mcp_client::McpClient;

/// The value of `metric` on the line whose labels include every one of `labels`.
fn value(rendered: &str, metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    rendered
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (name, label_text) = series.split_once('{').unwrap_or((series, ""));
            let matches = name == metric
                && labels
                    .iter()
                    .all(|(key, wanted)| label_text.contains(&format!("{key}=\"{wanted}\"")));
            matches.then(|| value.parse().ok()).flatten()
        })
}

#[test]
fn session_lifecycle_and_calls_are_counted_and_the_active_gauge_returns_to_zero() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("crashed");
    // Everything (rmcp's tasks included) runs on this thread, under the local recorder.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let client = McpClient::new(quick_config()).unwrap();
            let crashy = misbehaving("crashy", "die_mid_call", &[("MARKER", &marker)]);
            let died = client
                .call_tool(&crashy, &tool("work"), json!({}), &context("ivy"))
                .await
                .unwrap_err();
            assert_eq!(died.code(), "connection_lost", "{died}");
            client
                .call_tool(&crashy, &tool("work"), json!({}), &context("ivy"))
                .await
                .unwrap();
            let mut typed = tool("work");
            typed.input_schema =
                json!({"type": "object", "properties": {"seconds": {"type": "number"}}});
            client
                .call_tool(&crashy, &typed, json!({"seconds": "soon"}), &context("ivy"))
                .await
                .unwrap_err();
            let broken = misbehaving("broken", "exit_on_start", &[]);
            client
                .call_tool(&broken, &tool("work"), json!({}), &context("ivy"))
                .await
                .unwrap_err();
            client.shutdown().await;
        })
    });
    let rendered = handle.render();
    let crashy = ("server", "crashy");
    let expected = [
        (
            "mcp_sessions_started_total",
            vec![crashy, ("transport", "stdio")],
            2.0,
        ),
        (
            "mcp_sessions_closed_total",
            vec![crashy, ("reason", "dead")],
            1.0,
        ),
        (
            "mcp_sessions_closed_total",
            vec![crashy, ("reason", "closed")],
            1.0,
        ),
        ("mcp_sessions_active", vec![crashy], 0.0),
        (
            "mcp_tool_calls_total",
            vec![crashy, ("outcome", "connection_lost")],
            1.0,
        ),
        (
            "mcp_tool_calls_total",
            vec![crashy, ("outcome", "success")],
            1.0,
        ),
        (
            "mcp_tool_calls_total",
            vec![crashy, ("outcome", "invalid_arguments")],
            1.0,
        ),
        ("mcp_tool_call_duration_seconds_count", vec![crashy], 3.0),
        // The first attempt and quick_config's three retries.
        (
            "mcp_session_start_failures_total",
            vec![("server", "broken")],
            4.0,
        ),
    ];
    for (metric, labels, wanted) in expected {
        assert_eq!(
            value(&rendered, metric, &labels),
            Some(wanted),
            "{metric} {labels:?} in\n{rendered}"
        );
    }
    assert!(
        value(
            &rendered,
            "mcp_sessions_started_total",
            &[("server", "broken")]
        )
        .is_none(),
        "{rendered}"
    );
}
