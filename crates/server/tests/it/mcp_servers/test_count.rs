//! "Test connection" and the synced tool list count the same tools of `server-everything`.

use crate::support::approvals::start;
use reqwest::Method;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_test_counts_the_tools_the_sync_lists() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    let (status, synced) = server
        .send(
            &server.admin,
            Method::POST,
            &format!("/api/mcp/servers/{everything}/sync"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200, "{synced}");
    let (status, capabilities) = server
        .send(
            &server.admin,
            Method::GET,
            &format!("/api/mcp/servers/{everything}/capabilities"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{capabilities}");
    let names: Vec<&str> = capabilities["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    // A client that can answer forms is offered the form-asking tool too.
    assert!(names.contains(&"trigger-elicitation-request"), "{names:?}");
    assert_eq!(synced["tool_count"].as_u64().unwrap() as usize, names.len());
    let (status, tested) = server
        .send(
            &server.admin,
            Method::POST,
            &format!("/api/mcp/servers/{everything}/test"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200, "{tested}");
    assert_eq!(tested["ok"], true, "{tested}");
    assert_eq!(
        tested["tool_count"].as_u64().unwrap() as usize,
        names.len(),
        "test connection {tested} vs synced {names:?}"
    );
}
