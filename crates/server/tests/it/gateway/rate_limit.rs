//! The gateway's per-token rate limit through the wire: past a token's burst a call is
//! refused with JSON-RPC -32003 and a retry delay while its session keeps working, another
//! token keeps its own budget, a new session over the budget is refused with HTTP 429 and
//! `Retry-After`, and every refusal is counted on `/metrics`.

use super::wire::{connect, echo, listed_names, text_of};
use crate::support::approvals::*;
use crate::support::metric_lines;
use serde_json::json;
use switchboard_approvals::ApprovalConfig;
use switchboard_mcp_server::KgConfig;
use switchboard_store::DatabaseConfig;
use switchboard_test_support::fake_openai::FakeOpenAi;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_past_a_tokens_budget_are_refused_with_a_delay_and_counted() {
    let fake = FakeOpenAi::start().await;
    // One request a minute after a burst of three: nothing refills while the test runs.
    let kg = KgConfig {
        gateway_rate_limit_per_minute: 1,
        gateway_rate_limit_burst: 3,
        ..KgConfig::default()
    };
    let server = ApprovalServer::start_with_kg(
        ApprovalConfig::default(),
        &fake.base_url(),
        &DatabaseConfig::default(),
        kg,
    )
    .await;
    let everything = server.register_everything().await;
    server.set_policy(&everything, "echo", "ALWAYS_ALLOW").await;
    let carol = server
        .person_via_api("carol", "member", &["gateway:use"])
        .await;
    let dave = server
        .person_via_api("dave", "member", &["gateway:use"])
        .await;

    // `initialize` takes one request of the budget, then two calls fit.
    let client = connect(&server, "/gateway/mcp", &carol.token).await;
    for round in 0..2 {
        let result = client.call_tool(echo(&format!("n{round}"))).await.unwrap();
        assert_eq!(text_of(&result), format!("Echo: n{round}"));
    }
    let refused = client
        .call_tool(echo("one too many"))
        .await
        .expect_err("the budget is spent");
    let rmcp::ServiceError::McpError(error) = refused else {
        panic!("a JSON-RPC error, not {refused:?}");
    };
    assert_eq!(error.code.0, -32003, "{error:?}");
    let data = error.data.expect("the error says when to retry");
    assert!(data["retry_after_ms"].as_u64().unwrap() > 1_000, "{data}");
    assert_eq!(data["limit_per_minute"], 1);
    // The session is intact: lists are not counted.
    assert!(
        listed_names(&client)
            .await
            .contains(&"everything__echo".to_owned())
    );

    // Another token has its own budget.
    let other = connect(&server, "/gateway/mcp", &dave.token).await;
    let result = other.call_tool(echo("dave")).await.unwrap();
    assert_eq!(text_of(&result), "Echo: dave");

    // A new session over the budget has no session to keep: 429 with Retry-After.
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "over-budget", "version": "1.0.0"}
        }
    });
    let answer = server
        .client
        .post(server.url("/gateway/mcp"))
        .bearer_auth(&carol.token)
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 429);
    assert!(answer.headers().contains_key("retry-after"));

    let counted = metric_lines(
        &server,
        "gateway_rate_limited_total",
        &["method=\"tools/call\""],
    )
    .await;
    assert_eq!(counted.len(), 1, "{counted:?}");
    assert!(counted[0].ends_with(" 1"), "{counted:?}");
    client.cancel().await.unwrap();
    other.cancel().await.unwrap();
}
