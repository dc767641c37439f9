//! The gateway builds a caller's offer once: calls after the first listing reuse it (the
//! `gateway_catalog_builds_total` series moves again only after
//! `gateway_catalog_invalidations_total` does), and a tool switched off through the
//! API is gone from the next listing and refused as unknown at once. Every call is counted
//! and timed per server and tool on `/metrics`.

use super::wire::{connect, echo, listed_names, text_of};
use crate::support::approvals::*;
use crate::support::{metric_lines, metrics_text};
use reqwest::Method;
use rmcp::model::CallToolRequestParams;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;

/// The value of an unlabelled counter on `/metrics` (0 when absent).
async fn counter(server: &ApprovalServer, name: &str) -> f64 {
    metrics_text(server)
        .await
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name} ")))
        .map(|value| value.trim().parse().unwrap())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_reuse_the_offer_until_a_switch_changes_it() {
    let (_fake, server, everything) = start(ApprovalConfig::default()).await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    let invalidated = counter(&server, "gateway_catalog_invalidations_total").await;
    let client = connect(&server, "/gateway/mcp", &carol.token).await;
    let names = listed_names(&client).await;
    assert!(
        names.contains(&"everything__get-sum".to_owned()),
        "{names:?}"
    );

    let built = counter(&server, "gateway_catalog_builds_total").await;
    assert!(built >= 1.0, "the listing built the offer");
    for round in 0..5 {
        let result = client.call_tool(echo(&format!("n{round}"))).await.unwrap();
        assert_eq!(text_of(&result), format!("Echo: n{round}"));
    }
    // server-everything announces a list change soon after a session starts, which the
    // registry resyncs, which invalidates the offer meanwhile: after the listing's build(s)
    // (the session's start and the listing may both have built, around such a change), the
    // offer is built again only after a change, never per call.
    let builds = counter(&server, "gateway_catalog_builds_total").await - built;
    let changes = counter(&server, "gateway_catalog_invalidations_total").await - invalidated;
    assert!(
        builds <= changes,
        "calls reuse the listed offer: {builds} builds after the listing, {changes} changes since the client connected"
    );

    // Switched off through the API: gone from the next listing and unknown, at once.
    let (status, body) = server
        .send(
            &server.admin,
            Method::PATCH,
            &format!("/api/mcp/servers/{everything}/tools/get-sum"),
            Some(json!({"is_enabled": false})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let names = listed_names(&client).await;
    assert!(
        !names.contains(&"everything__get-sum".to_owned()),
        "{names:?}"
    );
    let arguments = json!({"a": 1, "b": 2}).as_object().unwrap().clone();
    let refused = client
        .call_tool(CallToolRequestParams::new("everything__get-sum").with_arguments(arguments))
        .await
        .expect_err("a switched-off tool is unknown");
    assert!(refused.to_string().contains("unknown tool"), "{refused}");
    assert!(counter(&server, "gateway_catalog_builds_total").await > built);

    // Per server and tool: five answered calls, each timed.
    let answered = metric_lines(
        &server,
        "gateway_tool_calls_total",
        &["server=\"everything\"", "tool=\"echo\"", "outcome=\"ok\""],
    )
    .await;
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert!(answered[0].ends_with(" 5"), "{answered:?}");
    let timed = metrics_text(&server)
        .await
        .lines()
        .find(|line| {
            line.starts_with("gateway_tool_call_duration_seconds_count{")
                && line.contains("tool=\"echo\"")
        })
        .map(str::to_owned);
    assert!(timed.is_some_and(|line| line.ends_with(" 5")));
    assert_eq!(
        counter(&server, "gateway_unknown_tool_calls_total").await,
        1.0
    );
    client.cancel().await.unwrap();
}
