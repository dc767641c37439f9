//! The registry's metrics as a Prometheus exporter renders them, recorded while a registry over
//! a real store finds its capability cache missing, fresh and stale.

use crate::support::{fixture, python, quick_config, registry_with, store};
use metrics_exporter_prometheus::PrometheusBuilder;
use std::time::Duration;
use switchboard_core::TransportKind;
use switchboard_mcp_client::McpClientConfig;
use switchboard_store::{NewServer, ServerConnectionConfig, ServerSecrets};

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
fn capability_cache_hits_misses_and_refreshes_are_counted() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let (store, workspace) = store(&dir).await;
            let registry = registry_with(
                &store,
                McpClientConfig {
                    capability_cache_ttl_secs: 1,
                    ..quick_config()
                },
            );
            let record = store
                .create_server(
                    &workspace,
                    NewServer {
                        name: "cached".into(),
                        transport: TransportKind::Stdio,
                        url: None,
                        command: Some(python().to_str().unwrap().into()),
                        args: vec![
                            fixture("misbehaving_server.py").to_str().unwrap().into(),
                            "normal".into(),
                        ],
                        connection: ServerConnectionConfig::default(),
                        secrets: ServerSecrets::default(),
                        is_active: true,
                    },
                )
                .await
                .unwrap();
            // Never synced: a miss, refreshed; then a hit; stale after the TTL: a miss again.
            registry.usable_tools(&record).await.unwrap();
            let record = store.get_server(&workspace, &record.id).await.unwrap();
            registry.usable_tools(&record).await.unwrap();
            tokio::time::sleep(Duration::from_millis(1100)).await;
            registry.usable_tools(&record).await.unwrap();
            registry.shutdown().await;
        })
    });
    let rendered = handle.render();
    let expected = [
        (
            "mcp_capability_cache_lookups_total",
            ("result", "miss"),
            2.0,
        ),
        ("mcp_capability_cache_lookups_total", ("result", "hit"), 1.0),
        (
            "mcp_capability_refreshes_total",
            ("outcome", "success"),
            2.0,
        ),
    ];
    for (metric, label, wanted) in expected {
        assert_eq!(
            value(&rendered, metric, &[label]),
            Some(wanted),
            "{metric} {label:?} in\n{rendered}"
        );
    }
}
