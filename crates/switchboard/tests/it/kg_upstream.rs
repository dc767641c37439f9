//! Our own knowledge-graph endpoint as upstream `kg`, across restarts of the real binary: the
//! registry syncs it in the background with a read-only token of its own (so the servers API
//! shows it synced with its tools), and it is reached at the listener — the URL shown — whose
//! port changes from one start to the next.

use crate::process::{ADMIN_TOKEN, Service};
use serde_json::Value;
use std::time::{Duration, Instant};

/// `kg` as `GET /api/mcp/servers` lists it, once `condition` holds (or after 60 s).
async fn listed_kg(service: &Service, condition: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = service
            .get_json(
                &switchboard_test_support::http_client::http_client(),
                "/api/mcp/servers",
            )
            .await;
        let kg = listed["servers"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .find(|server| server["name"] == "kg")
            .cloned()
            .unwrap_or_else(|| panic!("no kg upstream: {listed}"));
        if condition(&kg) || Instant::now() > deadline {
            return kg;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn usable_sync_tokens(service: &Service) -> usize {
    let tokens = service
        .get_json(
            &switchboard_test_support::http_client::http_client(),
            "/api/tokens",
        )
        .await;
    tokens
        .as_array()
        .unwrap_or_else(|| panic!("{tokens}"))
        .iter()
        .filter(|token| {
            token["name"] == switchboard_registry::OWN_ENDPOINT_SYNC_TOKEN
                && token["revoked_at"].is_null()
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kg_is_synced_in_the_background_and_follows_the_listener_across_restarts() {
    let data_dir = tempfile::tempdir().unwrap();
    let first = Service::start(data_dir.path());
    let own_url = first.url("/mcp");
    let kg = listed_kg(&first, |kg| kg["sync_status"] == "synced").await;
    assert_eq!(kg["sync_status"], "synced", "{kg}");
    assert_eq!(kg["url"], own_url.as_str(), "{kg}");
    assert!(kg["tool_count"].as_u64().unwrap() > 5, "{kg}");
    assert_eq!(kg["error_code"], Value::Null, "{kg}");
    assert_eq!(kg["managed_by_switchboard"], true);
    assert_eq!(usable_sync_tokens(&first).await, 1);
    first.terminate(Duration::from_secs(30));

    let second = Service::start(data_dir.path());
    let new_url = second.url("/mcp");
    assert_ne!(new_url, own_url, "the second start listens on another port");
    let kg = listed_kg(&second, |kg| {
        kg["url"] == new_url.as_str() && kg["sync_status"] == "synced" && kg["last_error"].is_null()
    })
    .await;
    assert_eq!(kg["url"], new_url.as_str(), "{kg}");
    assert_eq!(kg["sync_status"], "synced", "{kg}");
    assert_eq!(kg["error_code"], Value::Null, "{kg}");
    assert_eq!(usable_sync_tokens(&second).await, 1, "the token is reused");
}

/// The background refresh runs ahead of the cache lifetime: with a 3 s lifetime and a 3 s
/// refresh interval (one period for both, as the defaults are), a healthy `kg` is never shown
/// `stale` ("tool list out of date") over several lifetimes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_kg_never_shows_stale_between_background_refreshes() {
    let data_dir = tempfile::tempdir().unwrap();
    let mut command = crate::process::command(data_dir.path());
    command
        .env("SWITCHBOARD_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("SWITCHBOARD_MCP_CAPABILITY_CACHE_TTL_SECS", "3")
        .env("SWITCHBOARD_MCP_CAPABILITY_REFRESH_INTERVAL_SECS", "3");
    let service = Service::start_command(command);
    let kg = listed_kg(&service, |kg| kg["sync_status"] == "synced").await;
    assert_eq!(kg["sync_status"], "synced", "{kg}");
    let watch_until = Instant::now() + Duration::from_secs(10);
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    while Instant::now() < watch_until {
        let kg = listed_kg(&service, |_| true).await;
        let status = kg["sync_status"].as_str().unwrap_or_default().to_owned();
        *seen.entry(status).or_default() += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        seen.keys()
            .all(|status| status == "synced" || status == "syncing"),
        "statuses seen over 10 s: {seen:?}"
    );
}
